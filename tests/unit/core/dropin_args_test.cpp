// Bounded flag values (arg_parser::number_in / integer_in) and command lookup relative to a
// child's working directory (find_executable with cwd).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/args.h"
#include "core/fs.h"
#include "core/subprocess.h"

using namespace magpie;

TEST(dropin_args, bounded_numbers_name_the_flag_and_range) {
  arg_parser p("prog", "test");
  p.add_value("--warmup", "", "N", "").add_value("--max-time", "", "S", "").add_value("--atol", "", "X", "");
  p.add_value("--absent", "", "N", "");
  ASSERT_TRUE(p.parse({"--warmup", "-1", "--max-time", "0", "--atol=nan"}).ok());
  auto w = p.integer_in("--warmup", 10, 0, 100);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.get_status().message().find("--warmup expects an integer in [0, 100], got '-1'"), std::string::npos)
      << w.get_status().message();
  auto t = p.number_in("--max-time", 15, 0, 86400, true);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.get_status().message().find("(0, 86400]"), std::string::npos) << t.get_status().message();
  EXPECT_FALSE(p.number_in("--atol", 0, 0, 1e300).ok());  // NaN is not in any range
  EXPECT_EQ(p.integer_in("--absent", 7, 0, 1).value(), 7);
}

TEST(dropin_args, relative_command_paths_resolve_in_the_working_directory) {
  fs::path dir = make_temp_dir("/tmp", "magpie_exe_").value();
  scoped_dir cleanup(dir);
  fs::create_directories(dir / "wd");
  ASSERT_TRUE(write_file_atomic(dir / "wd" / "run_test.sh", "#!/bin/sh\necho from-wd\n").ok());
  ::chmod((dir / "wd" / "run_test.sh").c_str(), 0755);
  EXPECT_EQ(find_executable("./run_test.sh", "", dir / "wd"), (dir / "wd" / "./run_test.sh").string());
  EXPECT_EQ(find_executable("./run_test.sh", "", dir), "");
  EXPECT_EQ(find_executable("wd", "", dir), "");  // a bare name is looked up on PATH only
  spawn_spec s;
  s.argv = {"./run_test.sh"};
  s.cwd = dir / "wd";
  auto r = run_command(s, 10);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(r->out, "from-wd\n");
  s.cwd = dir;
  auto missing = run_command(s, 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.get_status().message().find("looked up in the working directory"), std::string::npos);
}
