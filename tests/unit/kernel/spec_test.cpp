#include "kernel/spec.h"
#include "kernel/policy_printer.h"

#include <gtest/gtest.h>

using namespace magpie;
using namespace magpie::kernel;

namespace {
status load(const std::string& yaml, eval_request* req, fs::path* dir_out = nullptr) {
  auto dir = make_temp_dir("/tmp", "magpie_spec_").value();
  if (dir_out) *dir_out = dir;
  auto st = write_file_atomic(dir / "k.yaml", yaml);
  if (!st.ok()) return st;
  return load_kernel_config(dir / "k.yaml", req);
}
}  // namespace

TEST(spec, magpie_schema_with_aliases_and_grammar) {
  setenv("MAGPIE_T_ARCH", "gfx942", 1);
  eval_request req;
  fs::path dir;
  auto st = load(
      "kernel:\n  id: one\n  type: TORCH\n  source_files: [m.py]\n"
      "kernels:\n  - id: two\n    type: hip\n    compile_command: hipcc --offload-arch=$MAGPIE_T_ARCH a.hip\n"
      "    testcase_command: [[./a.out, --check], [./a.out]]\n    env: {PATH: /opt/rocm/bin, X: '1'}\n"
      "correctness: {trials: 7, atol: 0.001, tolerances: {bfloat16: {atol: 0.05, rtol: 0.02}}}\n"
      "performance: {backend: ncu, timeout_seconds: 30, timing: {max_time_s: 2, cold: false}}\n"
      "compare: {same_tolerance: 0.03}\n",
      &req, &dir);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(req.kernels.size(), 2u);
  EXPECT_EQ(req.kernels[0].type, kernel_type::pytorch);
  // No working_dir and m.py exists nowhere: Magpie's base, the current directory.
  EXPECT_EQ(req.kernels[0].source_files[0], (fs::current_path() / "m.py").string());
  EXPECT_EQ(req.kernels[1].compile_command[0][1], "--offload-arch=gfx942");
  ASSERT_EQ(req.kernels[1].testcase_command.size(), 2u);
  EXPECT_EQ(req.kernels[1].env[0].first, "PATH");
  EXPECT_EQ(req.correctness.trials, 7);
  EXPECT_DOUBLE_EQ(req.correctness.fp32.atol, 0.001);
  EXPECT_DOUBLE_EQ(req.correctness.bf16.atol, 0.05);
  EXPECT_EQ(req.performance.backend, profiler_backend::ncu);
  EXPECT_DOUBLE_EQ(req.timing.max_time_s, 2);
  EXPECT_FALSE(req.timing.cold);
  EXPECT_DOUBLE_EQ(req.compare.same_tolerance, 0.03);
  scoped_dir cleanup(dir);
}

TEST(spec, unknown_field_names_file_line_and_field) {
  eval_request req;
  fs::path dir;
  auto st = load("kernels:\n  - id: a\n    type: cuda\n    testcase_comand: ./a\n", &req, &dir);
  scoped_dir cleanup(dir);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("k.yaml:4:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("kernels[0].testcase_comand: unknown field"), std::string::npos) << st.message();
}

TEST(spec, bad_type_and_bad_values) {
  eval_request req;
  fs::path dir;
  auto st = load("kernel: {id: a, type: opencl}\n", &req, &dir);
  scoped_dir c1(dir);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unsupported kernel type 'opencl'"), std::string::npos) << st.message();
  eval_request r2;
  fs::path d2;
  st = load("kernel: {id: a, type: host}\ncorrectness: {trials: many}\n", &r2, &d2);
  scoped_dir c2(d2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("correctness.trials: expected an integer"), std::string::npos) << st.message();
}

TEST(spec, reference_entry_and_type_names) {
  eval_request req;
  fs::path dir;
  auto st = load("reference: {type: host, source_files: [r.cpp]}\nkernel: {id: k, type: host, source_files: [k.cpp]}\n", &req, &dir);
  scoped_dir c(dir);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(req.reference.has_value());
  EXPECT_EQ(req.reference->id, "reference");
  EXPECT_STREQ(kernel_type_name(kernel_type::host), "HOST");
  kernel_type t;
  EXPECT_TRUE(parse_kernel_type("py", &t));
  EXPECT_EQ(t, kernel_type::pytorch);
}

TEST(spec, method_and_mode_words) {
  EXPECT_EQ(parse_correctness_method("testcase"), correctness_method::exit_code);  // Magpie's word
  EXPECT_STREQ(correctness_method_name(correctness_method::exit_code), "exit_code");
  EXPECT_STREQ(correctness_method_name(correctness_method::auto_select), "auto");
  EXPECT_FALSE(parse_correctness_method("reference").has_value());
  for (auto m : {run_mode::analyze, run_mode::compare, run_mode::reference}) EXPECT_EQ(parse_run_mode(run_mode_name(m)), m);
  EXPECT_EQ(json(run_mode::compare), json("compare"));
  EXPECT_FALSE(parse_run_mode("command").has_value());  // a batch's mode, not a run's
  eval_request req;
  fs::path dir;
  auto st = load("kernel: {id: k, type: host}\ncorrectness: {method: testcase}\n", &req, &dir);
  scoped_dir c(dir);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(req.correctness.method, correctness_method::exit_code);
  EXPECT_EQ(correctness_policy_json(req.correctness)["method"], "exit_code");
  eval_request r2;
  fs::path d2;
  st = load("kernel: {id: k, type: host}\ncorrectness: {method: maybe}\n", &r2, &d2);
  scoped_dir c2(d2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("correctness.method"), std::string::npos) << st.message();
}
