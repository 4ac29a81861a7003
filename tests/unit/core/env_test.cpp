#include "core/env.h"

#include <gtest/gtest.h>

using namespace magpie;

TEST(env, path_like_keys_are_prepended) {
  std::map<std::string, std::string> base = {{"PATH", "/usr/bin"}, {"CC", "gcc"}, {"PYTHONPATH", ""}};
  merge_env(base, {{"PATH", "/opt/rocm/bin"}, {"CC", "clang"}, {"PYTHONPATH", "/x"}, {"NEW", "1"}});
  EXPECT_EQ(base["PATH"], "/opt/rocm/bin:/usr/bin");
  EXPECT_EQ(base["CC"], "clang");
  EXPECT_EQ(base["PYTHONPATH"], "/x");  // empty existing value: no dangling ':'
  EXPECT_EQ(base["NEW"], "1");
}

TEST(env, expand_vars_both_forms_and_unknown_kept) {
  std::map<std::string, std::string> vars = {{"HOME", "/home/u"}, {"ARCH", "gfx942"}};
  EXPECT_EQ(expand_vars("$HOME/k/${ARCH}.out", vars), "/home/u/k/gfx942.out");
  EXPECT_EQ(expand_vars("$UNKNOWN and ${ALSO}", vars), "$UNKNOWN and ${ALSO}");
  EXPECT_EQ(expand_vars("cost $5 or $", vars), "cost $5 or $");
}
