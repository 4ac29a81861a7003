// The compare tool's output schema comes from the compare builder (kernel/compare.h): a result
// it writes validates, and a verdict word outside verdict_kind does not.
#include <gtest/gtest.h>

#include "kernel/compare_printer.h"
#include "core/json_schema.h"
#include "mcp/tool_protocol.h"

using namespace magpie;
using namespace magpie::mcp;
using namespace magpie::schema;

TEST(compare_schema, a_written_compare_result_validates) {
  const tool_def* t = find_tool("compare");
  ASSERT_NE(t, nullptr);
  std::vector<kernel::compare_kernel> ks(2);
  for (int i = 0; i < 2; ++i) {
    ks[static_cast<size_t>(i)].id = "k" + std::to_string(i);
    ks[static_cast<size_t>(i)].correct = true;
    ks[static_cast<size_t>(i)].v.index = i;
  }
  ks[0].v.verdict = kernel::verdict_kind::baseline;
  ks[0].v.speedup = 1.0;
  ks[1].v.verdict = kernel::verdict_kind::faster;
  ks[1].v.speedup = 2.0;
  ks[1].median_ns = 50;
  json out = {{"workspace", "/w"}, {"report_path", "/w/compare_report.json"}, {"kernels", json::array()},
              {"kernel_configs", json::array()}, {"warnings", json::array()}};
  kernel::compare_result r = kernel::build_compare_result(ks, 0);
  kernel::write_compare_result(r, 0.95, out);
  out["summary"] = r.summary();
  EXPECT_EQ(validate(t->output_schema, out), "");
  out["verdicts"][1]["verdict"] = "quicker";
  EXPECT_NE(validate(t->output_schema, out), "");
  out["verdicts"][1]["verdict"] = "same";
  out["winner"] = nullptr;  // no correct kernel
  EXPECT_EQ(validate(t->output_schema, out), "");
}
