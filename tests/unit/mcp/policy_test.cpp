// The MCP trust model (mcp/policy.h): confined paths (.., absolute, symlinks, dangling links),
// client-chosen programs, benchmark arguments and environment variables.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "mcp/policy.h"
#include "mcp/policy_args_codec.h"

namespace magpie::mcp {
namespace {

class Policy : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = make_temp_dir(fs::temp_directory_path(), "magpie_policy_");
    ASSERT_TRUE(d.ok());
    base = fs::canonical(*d);
    root = base / "root";
    outside = base / "outside";
    fs::create_directories(root / "sub");
    fs::create_directories(outside);
    fs::create_symlink(outside, root / "escape");              // a directory link out of the root
    fs::create_symlink(outside / "nope.yaml", root / "dangling");  // a dangling link out of the root
    fs::create_symlink("sub", root / "inner");                 // a relative link that stays inside
    auto p = make_trust_policy(root, {}, {"true"}, false);
    ASSERT_TRUE(p.ok()) << p.get_status().message();
    policy = *p;
  }
  void TearDown() override { fs::remove_all(base); }

  std::string refused(const std::string& value) {
    auto r = confine_path(policy, "output_path", value);
    return r.ok() ? std::string() : r.get_status().message();
  }

  fs::path base, root, outside;
  trust_policy policy;
};

TEST_F(Policy, PathsInsideTheRootAreResolved) {
  auto r = confine_path(policy, "p", "sub/k.yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, root / "sub" / "k.yaml");
  EXPECT_EQ(*confine_path(policy, "p", "inner/../sub/./x"), root / "sub" / "x");
  EXPECT_EQ(*confine_path(policy, "p", (root / "sub").string()), root / "sub");
  EXPECT_EQ(*confine_path(policy, "p", "inner/new/deeper.yaml"), root / "sub" / "new" / "deeper.yaml");
  EXPECT_EQ(*confine_path(policy, "p", "."), root);
}

TEST_F(Policy, EscapesAreRefusedAndNamed) {
  for (const char* v : {"../x.yaml", "sub/../../x/../escaped.yaml", "../../file.yaml", "/etc/passwd", "escape/evil.yaml",
                        "escape", "dangling", "inner/../../outside/f", "~/f"}) {
    std::string m = refused(v);
    EXPECT_FALSE(m.empty()) << v << " was allowed";
    EXPECT_TRUE(contains(m, v)) << m;
    EXPECT_TRUE(contains(m, "output_path")) << m;
  }
  EXPECT_TRUE(contains(refused("escape/evil.yaml"), (outside / "evil.yaml").string()));
  std::string nul = refused(std::string("sub/a\0/../../b", 14));
  EXPECT_TRUE(contains(nul, "sub/a\\0/../../b")) << nul;  // the whole path, the NUL shown as \0
  EXPECT_TRUE(contains(nul, "NUL")) << nul;
}

TEST_F(Policy, SymlinkLoopIsAnError) {
  fs::create_symlink("loop_b", root / "loop_a");
  fs::create_symlink("loop_a", root / "loop_b");
  EXPECT_TRUE(contains(refused("loop_a/x"), "symbolic links"));
}

TEST_F(Policy, OperatorResultsDirIsAllowed) {
  auto p = make_trust_policy(root, outside / "results", {}, false);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(confine_path(*p, "output_dir", (outside / "results" / "x").string()).ok());
  EXPECT_FALSE(confine_path(*p, "output_dir", (outside / "other").string()).ok());
}

TEST_F(Policy, ClientProgramsNeedTheAllowlist) {
  EXPECT_TRUE(check_command(policy, "testcase_command", {"true"}, {}).ok());
  EXPECT_TRUE(check_command(policy, "testcase_command", {"/bin/true"}, {}).ok() ||
              !fs::exists("/bin/true"));  // the same file as `true` on PATH
  auto st = check_command(policy, "testcase_command", {"bash", "-c", "touch${IFS}PWNED"}, {});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "'bash'")) << st.message();
  EXPECT_TRUE(contains(st.message(), "--allow-command bash")) << st.message();
  EXPECT_TRUE(contains(st.message(), "testcase_command")) << st.message();
  trust_policy trusted = policy;
  trusted.trust_client = true;
  EXPECT_TRUE(check_command(trusted, "testcase_command", {"bash", "-c", "x"}, {}).ok());
  EXPECT_FALSE(require_trust(policy, "docker_image", "an image").ok());
  EXPECT_TRUE(require_trust(trusted, "docker_image", "an image").ok());
}

TEST_F(Policy, EnvironmentThatLoadsCodeNeedsTrust) {
  for (const char* k : {"LD_PRELOAD", "ld_library_path", "PATH", "PYTHONPATH", "EXTRA_VLLM_ARGS", "BASH_ENV", "NODE_OPTIONS",
                        "MAGPIE_PROCESS_TREE"})
    EXPECT_TRUE(env_needs_trust(k)) << k;
  for (const char* k : {"TP", "CONC", "ISL", "OSL", "NUM_PROMPTS", "RANDOM_RANGE_RATIO", "MAX_MODEL_LEN", "PORT"})
    EXPECT_FALSE(env_needs_trust(k)) << k;
}

TEST_F(Policy, BenchmarkExtraArgs) {
  auto ok = check_benchmark_args(policy, "extra_args", {"--base-url", "http://127.0.0.1:9", "--num-prompts", "2",
                                                        "--dry-run", "--header", "A: b", "C: d", "--output-dir=sub/o"});
  ASSERT_TRUE(ok.ok()) << ok.get_status().message();
  EXPECT_EQ(ok->back(), "--output-dir=" + (root / "sub" / "o").string());
  EXPECT_FALSE(check_benchmark_args(policy, "extra_args", {"--server-args", "--evil"}).ok());
  EXPECT_FALSE(check_benchmark_args(policy, "extra_args", {"--docker-image", "x"}).ok());
  EXPECT_FALSE(check_benchmark_args(policy, "extra_args", {"--benchmark-config=/tmp/b.yaml"}).ok());
  EXPECT_FALSE(check_benchmark_args(policy, "extra_args", {"--no-such-flag"}).ok());
  EXPECT_FALSE(check_benchmark_args(policy, "extra_args", {"--dataset-path", "../data.json"}).ok());
  auto bool_then_word = check_benchmark_args(policy, "extra_args", {"--dry-run", "stray"});
  EXPECT_FALSE(bool_then_word.ok());  // a boolean flag takes no value: "stray" is an unknown positional
}

TEST_F(Policy, ApplyRewritesPathsAndChecksCommands) {
  json a = {{"kernel_path", "sub/k.cpp"}, {"testcase_command", "true"}, {"output_dir", "sub/results"}};
  auto r = apply_trust_policy("analyze", a, policy);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_EQ(json_string(*r, "kernel_path"), (root / "sub" / "k.cpp").string());
  EXPECT_EQ(json_string(*r, "output_dir"), (root / "sub" / "results").string());
  EXPECT_FALSE(apply_trust_policy("analyze", {{"kernel_path", "k.cpp"}, {"compile_command", "sh -c id"}}, policy).ok());
  EXPECT_FALSE(apply_trust_policy("compare", {{"kernel_paths", {"a.cpp", "b.cpp"}}, {"testcase_commands", {"true", "bash x"}}},
                                  policy).ok());
  EXPECT_FALSE(apply_trust_policy("compare", {{"kernel_paths", {"a.cpp", "../b.cpp"}}}, policy).ok());
  EXPECT_FALSE(apply_trust_policy("optimize", {{"config", "o.yaml"}, {"python", "bash"}}, policy).ok());
  EXPECT_FALSE(apply_trust_policy("benchmark", {{"extra_envs", {{"ld_preload", "x.so"}}}}, policy).ok());
  EXPECT_FALSE(apply_trust_policy("benchmark", {{"docker_image", "evil/image"}}, policy).ok());
  json batch = {{"configs", json::array({{{"framework", "vllm"}, {"extra_args", {"--server-args", "x"}}}})}};
  auto b = apply_trust_policy("benchmark_batch", batch, policy);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(contains(b.get_status().message(), "configs[0].extra_args[0]")) << b.get_status().message();
  EXPECT_FALSE(apply_trust_policy("jobs_status", {{"batch", "../../elsewhere/batch_x"}}, policy).ok());
  EXPECT_TRUE(apply_trust_policy("ray_task_status", {{"task_id", "run-3"}}, policy).ok());
}

}  // namespace
}  // namespace magpie::mcp
