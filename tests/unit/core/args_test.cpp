// arg_parser: look-ups of undeclared flags are refused (a typo never reads as "not given"), and
// numbers that do not parse are errors naming the flag, never 0.
#include <gtest/gtest.h>

#include "core/args.h"

using namespace magpie;

namespace {
arg_parser make_parser() {
  arg_parser p("prog", "test");
  p.add_value("--workers", "-w", "N", "").add_value("--scale", "", "X", "").add_bool("--json", "", "");
  p.add_multi("--tag", "", "T", "");
  return p;
}
}  // namespace

TEST(args, undeclared_lookups_abort_with_the_name) {
  arg_parser p = make_parser();
  ASSERT_TRUE(p.parse({"--workers", "3"}).ok());
  EXPECT_TRUE(p.has("--workers"));
  EXPECT_DEATH((void)p.has("--worker"), "prog looked up undeclared option '--worker'");
  EXPECT_DEATH((void)p.value("--jsn"), "undeclared option '--jsn'");
  EXPECT_DEATH((void)p.values("--tags"), "undeclared option '--tags'");
  EXPECT_DEATH((void)p.integer("-w", 1), "undeclared option '-w'");  // long names only
  EXPECT_DEATH((void)p.number_in("--scal", 1, 0, 2), "undeclared option '--scal'");
}

TEST(args, declared_but_absent_flags_take_the_default) {
  arg_parser p = make_parser();
  ASSERT_TRUE(p.parse({}).ok());
  EXPECT_FALSE(p.has("--json"));
  EXPECT_EQ(p.value("--workers", "d"), "d");
  EXPECT_TRUE(p.values("--tag").empty());
  EXPECT_EQ(p.integer("--workers", 4).value(), 4);
}

TEST(args, unparsable_numbers_are_refused) {
  arg_parser p = make_parser();
  ASSERT_TRUE(p.parse({"--workers", "abc", "--scale", "1.5x"}).ok());
  auto w = p.integer("--workers", 1);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.get_status().message().find("--workers expects an integer, got 'abc'"), std::string::npos)
      << w.get_status().message();
  EXPECT_FALSE(p.integer_in("--workers", 1, 1, 8).ok());
  auto s = p.number("--scale", 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.get_status().message().find("--scale expects a number, got '1.5x'"), std::string::npos);
  arg_parser q = make_parser();
  ASSERT_TRUE(q.parse({"--workers=2.5"}).ok());
  EXPECT_FALSE(q.integer("--workers", 1).ok());  // not truncated to 2
}

TEST(args, unknown_flag_suggests_the_nearest_declared_one) {
  arg_parser p = make_parser();
  auto st = p.parse({"--worker", "3"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown option '--worker' (did you mean '--workers'?)"), std::string::npos) << st.message();
  arg_parser q = make_parser();
  auto far = q.parse({"--frobnicate"});
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.message().find("did you mean"), std::string::npos) << far.message();
}
