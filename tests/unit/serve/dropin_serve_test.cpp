// Magpie drop-in on the serving side: env values checked with file:line:field, GPU memory and
// context length passed through without duplicates, the system profiler plan, server_lifecycle
// constraints; TargetedKernelTrace canonical JSON (Python-compatible), sampling and hashing.
#include <gtest/gtest.h>

#include <algorithm>

#include "serve/bench_config.h"
#include "serve/launcher.h"
#include "serve/server_lifecycle.h"
#include "serve/server_lifecycle_codec.h"
#include "serve/sha256.h"
#include "serve/kernel_trace_shards_codec.h"

namespace magpie::serve {
namespace {

size_t count(const std::vector<std::string>& v, const std::string& x) { return std::count(v.begin(), v.end(), x); }

TEST(dropin_envs, bad_values_are_errors_with_file_line_and_field) {
  for (const char* v : {"abc", "3.5", "1e20", "0", "\"\""}) {
    std::string yaml = std::string("benchmark:\n  model: m\n  envs:\n    TP: ") + v + "\n";
    auto c = parse_benchmark_yaml(yaml, "t.yaml");
    ASSERT_FALSE(c.ok()) << v;
    EXPECT_NE(c.get_status().message().find("t.yaml:4:"), std::string::npos) << c.get_status().message();
    EXPECT_NE(c.get_status().message().find("benchmark.envs.TP"), std::string::npos) << c.get_status().message();
  }
  EXPECT_FALSE(check_env_value("RANDOM_RANGE_RATIO", "7").empty());
  EXPECT_FALSE(check_env_value("CONC", "1.5").empty());
  EXPECT_FALSE(check_env_value("GPU_MEMORY_UTILIZATION", "0").empty());
  EXPECT_TRUE(check_env_value("GPU_MEMORY_UTILIZATION", "0.85").empty());
  EXPECT_TRUE(check_env_value("SOMETHING_ELSE", "anything").empty());
  auto both = parse_benchmark_yaml("benchmark:\n  model: m\n  envs: {GPU_MEM_UTIL: 0.8, GPU_MEMORY_UTILIZATION: 0.9}\n", "g.yaml");
  EXPECT_FALSE(both.ok());
}

benchmark_config local(const std::string& fw) {
  benchmark_config c;
  c.framework = parse_serving_framework(fw).value();  // a typo fails the test
  c.model = "org/m";
  c.envs = default_envs();
  c.profiler.torch_profiler = false;
  c.run_mode = server_run_mode::local;
  return c;
}

launch_context where() {
  launch_context x;
  x.workspace = "/ws/b";
  x.port = 9100;
  x.task_id = "t";
  x.vendor = "NVIDIA";
  return x;
}

TEST(dropin_launch, gpu_memory_and_context_length_pass_through_once) {
  benchmark_config v = local("vllm");
  v.set_env("GPU_MEMORY_UTILIZATION", "0.7");
  v.set_env("EXTRA_VLLM_ARGS", "--max-model-len 8192");
  auto p = plan_server(v, where());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(count(p->argv, "--max-model-len"), 1u);
  auto it = std::find(p->argv.begin(), p->argv.end(), "--gpu-memory-utilization");
  ASSERT_NE(it, p->argv.end());
  EXPECT_EQ(*(it + 1), "0.7");
  benchmark_config s = local("sglang");
  auto q = plan_server(s, where());
  EXPECT_EQ(count(q->argv, "--context-length"), 0u);  // the model's own length unless MAX_MODEL_LEN
  s.set_env("MAX_MODEL_LEN", "4096");
  s.set_env("GPU_MEM_UTIL", "0.6");
  q = plan_server(s, where());
  EXPECT_EQ(count(q->argv, "--context-length"), 1u);
  EXPECT_EQ(count(q->argv, "--mem-fraction-static"), 1u);
  s.set_env("EXTRA_SGLANG_ARGS", "--context-length=2048");
  q = plan_server(s, where());
  EXPECT_EQ(count(q->argv, "--context-length"), 0u);
}

TEST(dropin_launch, system_profiler_wraps_or_says_why_not) {
  benchmark_config c = local("vllm");
  c.profiler.system_profiler = true;
  c.set_env("PATH", "/nonexistent");
  auto p = plan_server(c, where());
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->system_profiler.contains("skipped"));
  EXPECT_NE(p->system_profiler["skipped"].get<std::string>().find("nsys"), std::string::npos);
  EXPECT_EQ(p->argv, p->server_argv);
  c.run_mode = server_run_mode::docker;
  auto d = plan_server(c, where());
  EXPECT_NE(d->system_profiler["skipped"].get<std::string>().find("container"), std::string::npos);
}

TEST(dropin_lifecycle, constraints) {
  auto c = parse_benchmark_yaml("benchmark:\n  framework: vllm\n  model: m\n  run_mode: local\n"
                                "  server_lifecycle: {enabled: true, pid_dir: /tmp/x}\n", "l.yaml");
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  EXPECT_TRUE(c->lifecycle.enabled);
  EXPECT_FALSE(validate_config(*c).ok());  // torch profiler on (Magpie's default) without cleanup
  c->profiler.torch_profiler = false;
  EXPECT_TRUE(validate_config(*c).ok());
  c->run_mode = server_run_mode::docker;  // Magpie keeps a detached, named container between docker runs
  EXPECT_TRUE(validate_config(*c).ok());
  c->run_mode = server_run_mode::ray;
  EXPECT_FALSE(validate_config(*c).ok());
}

TEST(dropin_lifecycle, docker_plan_is_detached_with_a_stable_name) {
  auto c = parse_benchmark_yaml("benchmark:\n  framework: sglang\n  model: m\n  run_mode: docker\n"
                                "  docker_image: img:1\n  envs: {PORT: 8888}\n"
                                "  server_lifecycle: {enabled: true, cleanup: true}\n", "d.yaml");
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  launch_context ctx = where();
  ctx.port = 8888;
  auto p = plan_server(*c, ctx);
  ASSERT_TRUE(p.ok()) << p.get_status().message();
  EXPECT_EQ(p->container_name, "magpie-server-sglang-8888");
  ASSERT_GE(p->argv.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(p->argv.begin(), p->argv.begin() + 5),
            (std::vector<std::string>{"docker", "run", "-d", "--name", "magpie-server-sglang-8888"}));
  // the reuse settings leave out the run-specific docker argv (workspace mount) but keep the image
  json meta = lifecycle_metadata(*c, *p);
  EXPECT_EQ(meta["server_command"], json(p->server_argv));
  EXPECT_EQ(meta["image"], "img:1");
  // client envs (CONC, ISL, ...) are not server settings: a run at another concurrency reuses it
  auto c2 = parse_benchmark_yaml("benchmark:\n  framework: sglang\n  model: m\n  run_mode: docker\n"
                                 "  docker_image: img:1\n  envs: {PORT: 8888, CONC: 64, ISL: 128, OSL: 8}\n"
                                 "  server_lifecycle: {enabled: true, cleanup: true}\n", "d.yaml");
  ASSERT_TRUE(c2.ok()) << c2.get_status().message();
  auto p2 = plan_server(*c2, ctx);
  ASSERT_TRUE(p2.ok()) << p2.get_status().message();
  EXPECT_EQ(lifecycle_metadata(*c2, *p2), meta);
  c2->docker_image = "img:2";  // another image is another server
  auto p3 = plan_server(*c2, ctx);
  ASSERT_TRUE(p3.ok());
  EXPECT_NE(lifecycle_metadata(*c2, *p3), meta);
}

TEST(dropin_targeted, python_float_repr) {
  using targeted::python_float_repr;
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1717171717171717.5), "1717171717171717.5");
  EXPECT_EQ(python_float_repr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_float_repr(123.456), "123.456");
  EXPECT_EQ(python_float_repr(1.2345678901234567e+200), "1.2345678901234567e+200");
}

TEST(dropin_targeted, canonical_json_matches_python) {
  json v = {{"b", 1}, {"a", {{"z", 2.0}, {"y", nullptr}}}, {"s", "q\"\\\n\x01é"}, {"l", {true, false, 0.5}}};
  // json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
  EXPECT_EQ(targeted::canonical_json(v).value(),
            "{\"a\":{\"y\":null,\"z\":2.0},\"b\":1,\"l\":[true,false,0.5],\"s\":\"q\\\"\\\\\\n\\u0001é\"}");
  EXPECT_FALSE(targeted::canonical_json(json(std::nan(""))).ok());
  // sha256("{\"occurrence\":0,\"parts\":{}}")
  EXPECT_EQ(targeted::stable_key(json::object()).value(), sha256_hex("{\"occurrence\":0,\"parts\":{}}"));
}

TEST(dropin_targeted, postprocess_result_is_the_printed_summary) {
  fs::path dir = make_temp_dir("/tmp", "magpie_tt_empty_").value();
  fs::path out = dir / "out" / "summary.json";
  auto r = targeted::postprocess_trace_dir(dir, out);
  ASSERT_TRUE(r.ok()) << r.get_status().message();
  EXPECT_FALSE(r->valid);
  ASSERT_EQ(r->issues.size(), 2u);
  EXPECT_EQ(r->issues[0], "manifest: manifest.json is missing");
  EXPECT_EQ(r->issues[1], "no trace shards found under " + dir.string());
  auto printed = parse_json(r->summary_text, "summary");  // the typed fields are the summary's
  ASSERT_TRUE(printed.ok()) << printed.get_status().message();
  EXPECT_EQ(json_strings(*printed, "issues"), r->issues);
  EXPECT_FALSE(json_bool(*printed, "valid", true));
  EXPECT_EQ(read_file(out).value(), r->summary_text + "\n");  // --output holds what is printed
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(dropin_targeted, deterministic_sampling_and_streaming_hash) {
  int kept = 0;
  for (int i = 0; i < 1000; ++i) {
    bool a = targeted::should_sample("seed", std::to_string(i), 0.3);
    EXPECT_EQ(a, targeted::should_sample("seed", std::to_string(i), 0.3));
    kept += a;
  }
  EXPECT_GT(kept, 230);
  EXPECT_LT(kept, 370);
  EXPECT_FALSE(targeted::should_sample("seed", "k", 0.0));
  EXPECT_TRUE(targeted::should_sample("seed", "k", 1.0));
  sha256_stream h;
  std::string data(1000, 'x');
  for (size_t i = 0; i < data.size(); i += 37) h.update(std::string_view(data).substr(i, 37));
  EXPECT_EQ(h.hex(), sha256_hex(data));
}

}  // namespace
}  // namespace magpie::serve
