// Magpie's path rules for kernel entries and kernel-type inference (kernel/spec_paths.h).
#include "kernel/spec_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace magpie;
using namespace magpie::kernel;

namespace {

/// A temp "repository": <root>/examples/k/{k.cpp,run.sh} and <root>/cfg/ (YAML dir); the current
/// directory is <root> while the test runs.
struct repo {
  fs::path root, old_cwd;
  repo() {
    root = make_temp_dir("/tmp", "magpie_paths_").value();
    old_cwd = fs::current_path();
    fs::create_directories(root / "examples" / "k");
    fs::create_directories(root / "cfg" / "examples" / "only_yaml");
    (void)write_file_atomic(root / "examples" / "k" / "k.cpp", "int main() { return 0; }\n");
    fs::current_path(root);
  }
  ~repo() {
    fs::current_path(old_cwd);
    scoped_dir gone(root);
  }
  status load(const std::string& yaml, eval_request* req) {
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(root / "cfg" / "k.yaml", yaml));
    return load_kernel_config(root / "cfg" / "k.yaml", req);
  }
};

}  // namespace

TEST(spec_paths, working_dir_is_relative_to_the_current_directory) {
  repo r;
  eval_request req;
  auto st = r.load("kernel:\n  id: k\n  type: host\n  working_dir: examples/k\n  source_files: [./k.cpp]\n"
                   "  testcase_command: ./run.sh\n", &req);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(req.kernels[0].working_dir, r.root / "examples" / "k");
  EXPECT_EQ(req.kernels[0].source_files[0], (r.root / "examples" / "k" / "k.cpp").string());
}

TEST(spec_paths, working_dir_only_under_the_yaml_file_is_used_with_a_warning) {
  repo r;
  eval_request req;
  auto st = r.load("kernel: {id: k, type: host, working_dir: examples/only_yaml, testcase_command: 'true'}\n", &req);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(req.kernels[0].working_dir, r.root / "cfg" / "examples" / "only_yaml");
}

TEST(spec_paths, missing_working_dir_names_file_line_and_field) {
  repo r;
  eval_request req;
  auto st = r.load("kernel:\n  id: k\n  type: host\n  working_dir: nowhere/at/all\n", &req);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("k.yaml:4:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("kernel.working_dir"), std::string::npos) << st.message();
}

TEST(spec_paths, unset_working_dir_is_the_current_directory_unless_sources_live_by_the_yaml) {
  repo r;
  eval_request req;
  ASSERT_TRUE(r.load("kernel: {id: k, type: host, source_files: [examples/k/k.cpp]}\n", &req).ok());
  EXPECT_EQ(req.kernels[0].working_dir, r.root);
  (void)write_file_atomic(r.root / "cfg" / "near.cpp", "int main() {}\n");
  eval_request req2;
  ASSERT_TRUE(r.load("kernel: {id: k, type: host, source_files: [near.cpp]}\n", &req2).ok());
  EXPECT_EQ(req2.kernels[0].working_dir, r.root / "cfg");
}

TEST(spec_paths, type_inferred_from_the_first_source_when_absent) {
  repo r;
  (void)write_file_atomic(r.root / "examples" / "k" / "v.cu", "__global__ void f() {}\n");
  eval_request req;
  ASSERT_TRUE(r.load("kernels:\n  - {id: a, working_dir: examples/k, source_files: [v.cu]}\n"
                     "  - {id: b, working_dir: examples/k, source_files: [k.cpp]}\n"
                     "  - {id: c, working_dir: examples/k}\n", &req).ok());
  EXPECT_EQ(req.kernels[0].type, kernel_type::cuda);
  EXPECT_EQ(req.kernels[1].type, kernel_type::host);
  EXPECT_EQ(req.kernels[2].type, kernel_type::hip);  // nothing to infer from: Magpie's default
}

TEST(spec_paths, infer_kernel_type_by_extension_and_content) {
  repo r;
  auto put = [&](const char* name, const char* text) {
    (void)write_file_atomic(r.root / name, text);
    kernel_type t = kernel_type::hip;
    EXPECT_TRUE(infer_kernel_type(r.root / name, &t)) << name;
    return t;
  };
  EXPECT_EQ(put("a.hip", ""), kernel_type::hip);
  EXPECT_EQ(put("a.cuh", ""), kernel_type::cuda);
  EXPECT_EQ(put("t.py", "import triton\n@triton.jit\ndef k(): pass\n"), kernel_type::triton);
  EXPECT_EQ(put("m.py", "import torch\n"), kernel_type::pytorch);
  EXPECT_EQ(put("h.cpp", "#include <hip/hip_runtime.h>\n"), kernel_type::hip);
  EXPECT_EQ(put("c.cpp", "k<<<1, 1>>>();\n"), kernel_type::cuda);
  EXPECT_EQ(put("p.cpp", "int main() {}\n"), kernel_type::host);
  kernel_type t = kernel_type::host;
  EXPECT_FALSE(infer_kernel_type(r.root / "x.txt", &t));
  EXPECT_EQ(t, kernel_type::host);
}

TEST(spec_paths, accordo_backend_is_accepted_and_its_tolerances_apply) {
  repo r;
  eval_request req;
  auto st = r.load("kernel: {id: k, type: host, working_dir: examples/k}\n"
                   "correctness:\n  backend: accordo\n  accordo: {atol: 0.5, rtol: 0.25, timeout_seconds: 12, kernel_name: f}\n",
                   &req);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_DOUBLE_EQ(req.correctness.fp32.atol, 0.5);
  EXPECT_DOUBLE_EQ(req.correctness.bf16.rtol, 0.25);
  EXPECT_DOUBLE_EQ(req.correctness.timeout_s, 12);
  eval_request bad;
  EXPECT_FALSE(r.load("kernel: {id: k, type: host, working_dir: examples/k}\ncorrectness: {atol: -1}\n", &bad).ok());
}
