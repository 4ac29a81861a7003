// The timing harness's ready line decoded once (kernel/harness_protocol.h): the fields the
// supervisor uses, the exchange layout with its first malformed output, and the report's echo.
#include "kernel/harness_protocol.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/json.h"
#include "kernel/timing_printer.h"

using namespace magpie;
using namespace magpie::kernel;

TEST(ready_line, decodes_the_fields_and_echoes_the_rest_in_order_without_the_layout) {
  ready_line r = parse_ready_line(
      R"({"protocol":3,"harness":"magpie_bench.cpp/7","zeta":1.5,"device":"cpu","timer":"host_clock",)"
      R"("exchange":{"bytes":128,"outputs":[{"name":"c","dtype":"float32","shape":[4,2],"offset":64}]},"alpha":true})");
  EXPECT_EQ(r.protocol, 3);
  EXPECT_EQ(r.harness, "magpie_bench.cpp/7");
  EXPECT_EQ(r.device, "cpu");
  EXPECT_EQ(r.timer, "host_clock");
  ASSERT_TRUE(r.exchange.announced);
  ASSERT_EQ(r.exchange.outputs.size(), 1u);
  EXPECT_EQ(r.exchange.outputs[0].shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(r.exchange.outputs[0].offset, 64u);
  EXPECT_EQ(r.exchange.outputs[0].bytes, 32u);
  EXPECT_TRUE(r.exchange.problem.empty());
  EXPECT_EQ(dump_compact(ready_line_json(r)),
            R"({"protocol":3,"harness":"magpie_bench.cpp/7","zeta":1.5,"device":"cpu","timer":"host_clock","alpha":true})");
  EXPECT_TRUE(ready_line_json(std::nullopt).is_null());
}

TEST(ready_line, defaults_for_a_line_that_is_not_an_object) {
  for (const char* text : {"not json", "[1,2]", "{}"}) {
    ready_line r = parse_ready_line(text);
    EXPECT_EQ(r.protocol, 1) << text;
    EXPECT_EQ(r.timer, "harness") << text;
    EXPECT_EQ(r.harness, "") << text;
    EXPECT_FALSE(r.exchange.announced) << text;
    EXPECT_EQ(dump_compact(ready_line_json(r)), "{}") << text;
  }
}

TEST(ready_line, a_malformed_output_is_reported_after_the_outputs_before_it) {
  ready_line r = parse_ready_line(
      R"({"exchange":{"outputs":[{"name":"a","dtype":"float32","shape":[2],"offset":0},)"
      R"({"name":"b","dtype":"complex999","shape":[2],"offset":64},{"name":"c","dtype":"float32","shape":[-1],"offset":128}]}})");
  ASSERT_TRUE(r.exchange.announced);
  EXPECT_EQ(r.exchange.outputs.size(), 1u);
  EXPECT_EQ(r.exchange.problem, "exchange output 'b': unknown dtype");
  exchange_memory ex;
  ASSERT_TRUE(ex.create().ok());
  ASSERT_EQ(::ftruncate(ex.fd(), 256), 0);
  status st = ex.adopt(r.exchange);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exchange output 'b': unknown dtype"), std::string::npos) << st.message();
  // An earlier output outside the memory is what is reported first, as before.
  ready_line far = parse_ready_line(
      R"({"exchange":{"outputs":[{"name":"a","dtype":"float32","shape":[2],"offset":4096},)"
      R"({"name":"b","dtype":"complex999","shape":[2],"offset":64}]}})");
  exchange_memory ex2;
  ASSERT_TRUE(ex2.create().ok());
  ASSERT_EQ(::ftruncate(ex2.fd(), 256), 0);
  status st2 = ex2.adopt(far.exchange);
  EXPECT_NE(st2.message().find("exchange output 'a': offset 4096"), std::string::npos) << st2.message();
  EXPECT_EQ(parse_ready_line(R"({"exchange":{"outputs":[{"name":"c","dtype":"float32","shape":[-1]}]}})").exchange.problem,
            "exchange output 'c': bad shape");
}
