// Config parsing, server command lines (per framework, local and docker), SHA-256, client setup.
#include <gtest/gtest.h>

#include <algorithm>

#include "serve/bench_config.h"
#include "serve/bench_config_codec.h"
#include "serve/dry_run_printer.h"
#include "serve/launcher.h"
#include "serve/orchestrator.h"
#include "serve/sha256.h"
#include "serve/server_plan_printer.h"

namespace magpie::serve {
namespace {

bool has_seq(const std::vector<std::string>& v, std::vector<std::string> seq) {
  return std::search(v.begin(), v.end(), seq.begin(), seq.end()) != v.end();
}

TEST(sha256, known_vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(bench_config, magpie_yaml_with_our_blocks) {
  std::string yaml = R"(benchmark:
  framework: vllm
  model: Qwen/Qwen3-8B
  precision: bf16
  run_mode: local
  envs:
    tp: 2
    CONC: 8
    ISL: 256
    OSL: 64
    EXTRA_VLLM_ARGS: --enforce-eager --max-num-seqs 64
  profiler:
    torch_profiler:
      enabled: false
  gap_analysis:
    enabled: true
    top_k: 5
  gpu_selection:
    min_free_memory_gb: 40
    candidates: [1, 3]
  inferencex_path: /opt/InferenceX
  client:
    request_rate: 4
    burstiness: 0.5
    goodput: [ttft:500, tpot:50]
  server:
    ready_timeout_s: 600
)";
  auto c = parse_benchmark_yaml(yaml, "bench.yaml");
  ASSERT_TRUE(c.ok()) << c.get_status().message();
  EXPECT_EQ(c->framework, serving_framework::vllm);
  EXPECT_EQ(c->tp(), 2);  // keys are upper-cased
  EXPECT_EQ(c->precision, "bf16");
  EXPECT_FALSE(c->profiler.torch_profiler);
  EXPECT_TRUE(c->gap_analysis_enabled);
  EXPECT_EQ(c->gap_analysis["top_k"], 5);
  EXPECT_EQ(c->gpu_selection.candidates, (std::vector<int>{1, 3}));
  EXPECT_EQ(c->client.request_rate, 4);
  EXPECT_EQ(c->server.ready_timeout_s, 600);
  EXPECT_EQ(c->input_config_sha256, sha256_hex(yaml));
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_NE(c->warnings[0].find("inferencex_path"), std::string::npos);
  EXPECT_EQ(c->effective_run_kind(), run_kind::diagnostic);  // gap analysis on
  EXPECT_TRUE(validate_config(*c).ok());
}

TEST(bench_config, errors_name_file_line_and_field) {
  auto bad = parse_benchmark_yaml("benchmark:\n  framework: vllm\n  modle: x\n", "b.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.get_status().message().find("b.yaml"), std::string::npos) << bad.get_status().message();
  EXPECT_NE(bad.get_status().message().find("modle"), std::string::npos);
  auto empty = parse_benchmark_yaml("other: 1\n", "e.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.get_status().message().find("benchmark:"), std::string::npos);
  // The system profiler is Nsight Systems around a local server (skipped with a reason elsewhere).
  auto sys = parse_benchmark_yaml("benchmark:\n  model: m\n  profiler:\n    system_profiler:\n      enabled: true\n", "s.yaml");
  ASSERT_TRUE(sys.ok()) << sys.get_status().message();
  EXPECT_TRUE(sys->profiler.system_profiler);
}

TEST(bench_config, vllm_profiler_args_is_a_word_of_its_codec) {
  auto yaml = [](const std::string& word) {
    return "benchmark:\n  model: m\n  profiler:\n    torch_profiler:\n      vllm_profiler_args: " + word + "\n";
  };
  for (auto [word, d] : {std::pair{"auto", profiler_delivery::automatic}, {"flags", profiler_delivery::flags},
                         {"env", profiler_delivery::env}}) {
    auto c = parse_benchmark_yaml(yaml(word), "p.yaml");
    ASSERT_TRUE(c.ok()) << c.get_status().message();
    EXPECT_EQ(c->profiler.vllm_profiler_args, d);
    EXPECT_EQ(benchmark_config_json(*c)["profiler"]["torch_profiler"]["vllm_profiler_args"], word);
  }
  // "none" is the plan's word (no profiling), not a config's; an unknown word names file:line and field.
  for (const char* word : {"none", "flag"}) {
    auto bad = parse_benchmark_yaml(yaml(word), "p.yaml");
    ASSERT_FALSE(bad.ok()) << word;
    const std::string m = bad.get_status().message();
    EXPECT_NE(m.find("p.yaml:5"), std::string::npos) << m;
    EXPECT_NE(m.find("benchmark.profiler.torch_profiler.vllm_profiler_args"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("'") + word + "' is not one of auto, flags, env"), std::string::npos) << m;
  }
}

TEST(bench_config, magpie_defaults_and_run_kind_policy) {
  auto c = parse_benchmark_yaml("benchmark:\n  model: m\n", "d.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->framework, serving_framework::sglang);           // Magpie's from_dict default
  EXPECT_TRUE(c->profiler.torch_profiler);     // Magpie's dataclass default
  EXPECT_EQ(c->env_int("CONC", 0), 32);
  EXPECT_EQ(c->env("RANDOM_RANGE_RATIO"), "0.5");
  EXPECT_EQ(c->run_mode, server_run_mode::docker);
  c->run_kind = run_kind::measurement;
  EXPECT_FALSE(validate_config(*c).ok());
  c->profiler.torch_profiler = false;
  EXPECT_TRUE(validate_config(*c).ok());
  c->framework.reset();  // no framework and no --base-url
  EXPECT_FALSE(validate_config(*c).ok());
  auto xdit = framework_from_word("xdit");
  ASSERT_FALSE(xdit.ok());
  EXPECT_EQ(xdit.get_status().message(), "framework 'xdit' is not supported (vllm, sglang, atom; xdit is not)");
  EXPECT_FALSE(parse_serving_framework("VLLM").has_value());  // exact words; YAML values are lower-cased first
  for (auto k : {run_kind::automatic, run_kind::measurement, run_kind::diagnostic})
    EXPECT_EQ(parse_run_kind(run_kind_name(k)), k);
  for (auto m : {server_run_mode::docker, server_run_mode::local, server_run_mode::ray})
    EXPECT_EQ(parse_server_run_mode(server_run_mode_name(m)), m);
}

benchmark_config base(const std::string& fw) {
  benchmark_config c;
  c.framework = parse_serving_framework(fw).value();  // a typo fails the test
  c.model = "org/model";
  c.envs = default_envs();
  c.profiler.torch_profiler = false;
  c.run_mode = server_run_mode::local;
  return c;
}

launch_context ctx() {
  launch_context x;
  x.workspace = "/ws/benchmark_x";
  x.port = 9001;
  x.task_id = "t1";
  return x;
}

TEST(plan_server, vllm_local_with_profiler_flags_or_env) {
  benchmark_config c = base("vllm");
  c.precision = "bf16";
  c.set_env("TP", "4");
  c.set_env("EXTRA_VLLM_ARGS", "--enforce-eager");
  c.profiler.torch_profiler = true;
  launch_context x = ctx();
  x.vllm_version = "0.19.1";
  auto p = plan_server(c, x);
  ASSERT_TRUE(p.ok());
  const auto& a = p->argv;
  EXPECT_EQ(a, p->server_argv);
  EXPECT_TRUE(has_seq(a, {"vllm", "serve", "org/model", "--host", "127.0.0.1", "--port", "9001"}));
  EXPECT_TRUE(has_seq(a, {"--tensor-parallel-size", "4"}));
  EXPECT_TRUE(has_seq(a, {"--dtype", "bfloat16"}));
  EXPECT_TRUE(has_seq(a, {"--enforce-eager"}));
  EXPECT_TRUE(has_seq(a, {"--profiler-config.torch_profiler_dir", "/ws/benchmark_x/torch_trace"}));
  EXPECT_EQ(p->profiler_args, profiler_delivery::flags);
  EXPECT_NE(std::find(p->env.begin(), p->env.end(), std::pair<std::string, std::string>{"VLLM_TORCH_PROFILER_DIR", "/ws/benchmark_x/torch_trace"}),
            p->env.end());
  x.vllm_version = "0.10.2";
  auto old = plan_server(c, x);
  EXPECT_EQ(old->profiler_args, profiler_delivery::env);
  EXPECT_FALSE(has_seq(old->argv, {"--profiler-config.profiler"}));
}

TEST(plan_server, sglang_and_atom_local) {
  auto s = plan_server(base("sglang"), ctx());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(has_seq(s->argv, {"python3", "-m", "sglang.launch_server", "--model-path", "org/model", "--host", "127.0.0.1",
                                "--port", "9001", "--tp-size", "1"}));
  benchmark_config a = base("atom");
  a.profiler.torch_profiler = true;
  auto t = plan_server(a, ctx());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(has_seq(t->argv, {"python3", "-m", "atom.entrypoints.openai_server", "--model", "org/model"}));
  EXPECT_TRUE(has_seq(t->argv, {"--server-port", "9001", "-tp", "1"}));
  EXPECT_TRUE(has_seq(t->argv, {"--torch-profiler-dir", "/ws/benchmark_x/torch_trace"}));
}

TEST(plan_server, docker_nvidia_and_amd) {
  benchmark_config c = base("vllm");
  c.run_mode = server_run_mode::docker;
  c.profiler.torch_profiler = true;
  launch_context x = ctx();
  x.vendor = "NVIDIA";
  x.gpu_env = {{"CUDA_VISIBLE_DEVICES", "2"}};
  auto p = plan_server(c, x);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->image, "vllm/vllm-openai:v0.19.1");
  EXPECT_EQ(p->profiler_args, profiler_delivery::flags);  // version from the image tag
  EXPECT_TRUE(has_seq(p->argv, {"docker", "run", "--rm", "--name", "magpie-benchmark-t1"}));
  EXPECT_TRUE(has_seq(p->argv, {"--gpus", "all"}));
  EXPECT_TRUE(has_seq(p->argv, {"-v", "/ws/benchmark_x:/workspace"}));
  EXPECT_TRUE(has_seq(p->argv, {"-e", "CUDA_VISIBLE_DEVICES=2"}));
  EXPECT_TRUE(has_seq(p->argv, {"-e", "VLLM_TORCH_PROFILER_DIR=/workspace/torch_trace"}));
  EXPECT_TRUE(has_seq(p->argv, {"--entrypoint", "vllm", "vllm/vllm-openai:v0.19.1", "serve", "org/model"}));
  x.vendor = "AMD";
  c.framework = serving_framework::sglang;
  c.gpu_arch = "gfx950";
  auto amd = plan_server(c, x);
  ASSERT_TRUE(amd.ok());
  EXPECT_EQ(amd->image, "lmsysorg/sglang:v0.5.12-rocm720-mi35x");
  EXPECT_TRUE(has_seq(amd->argv, {"--device=/dev/kfd", "--device=/dev/dri"}));
  c.framework = serving_framework::atom;
  c.gpu_arch = "sm_90";
  x.vendor = "NVIDIA";
  EXPECT_FALSE(plan_server(c, x).ok());  // ROCm only
  c.docker_image = "my/atom:1";
  EXPECT_TRUE(plan_server(c, x).ok());
}

TEST(plan_server, secrets_are_redacted_in_the_report) {
  benchmark_config c = base("vllm");
  c.run_mode = server_run_mode::docker;
  c.docker_image = "img";
  c.set_env("HF_TOKEN", "hf_secret");
  auto p = plan_server(c, ctx());
  ASSERT_TRUE(p.ok());
  std::string j = dump_compact(server_plan_json(*p));
  EXPECT_EQ(j.find("hf_secret"), std::string::npos);
  EXPECT_NE(j.find("HF_TOKEN=<redacted>"), std::string::npos);
}

TEST(dry_run, plan_with_our_server_or_at_a_base_url) {
  benchmark_config c = base("vllm");
  run_options o;
  o.output_dir = "/tmp/magpie_dry_run_unit";
  auto p = plan_dry_run(c, o);
  ASSERT_TRUE(p.ok()) << p.get_status().message();
  ASSERT_TRUE(p->server.has_value());
  EXPECT_EQ(p->client.url.to_string(), p->server->url.to_string());  // the client talks to the server we plan
  json j = dry_run_plan_json(*p);
  EXPECT_EQ(j["server"], server_plan_json(*p->server));
  EXPECT_EQ(j["client"]["url"], p->server->url.to_string());
  EXPECT_EQ(j["client"]["max_concurrency"], 32);  // upstream Magpie's CONC default
  EXPECT_EQ(j["client"]["request_rate"], "inf");
  EXPECT_EQ(j["config"], benchmark_config_json(c));
  EXPECT_EQ(j["run_kind"], run_kind_name(c.effective_run_kind()));
  c.base_url = "http://127.0.0.1:8123";
  auto q = plan_dry_run(c, o);
  ASSERT_TRUE(q.ok()) << q.get_status().message();
  EXPECT_FALSE(q->server.has_value());  // not our server: nothing to launch
  json k = dry_run_plan_json(*q);
  EXPECT_FALSE(k.contains("server"));
  EXPECT_EQ(k["client"]["url"], "http://127.0.0.1:8123");
  c.base_url.clear();
  c.model.clear();
  EXPECT_FALSE(plan_dry_run(c, o).ok());  // an invalid config (no model to launch) is refused, as by run_benchmark
}

TEST(versions, parse_and_compare) {
  EXPECT_EQ(parse_version("vllm/vllm-openai:v0.19.1"), "0.19.1");
  EXPECT_EQ(parse_version("INFO 0.15.0rc1\n"), "0.15.0");
  EXPECT_EQ(parse_version("latest"), "");
  EXPECT_TRUE(version_at_least("0.15", "0.15"));
  EXPECT_TRUE(version_at_least("0.19.1", "0.15"));
  EXPECT_FALSE(version_at_least("0.9.2", "0.15"));
}

TEST(client_setup, magpie_envs_and_vllm_style_flags) {
  benchmark_config c = base("vllm");
  c.set_env("CONC", "8");
  c.set_env("ISL", "1000");
  c.set_env("OSL", "100");
  endpoint_url u;
  auto cc = make_client_config(c, u);
  ASSERT_TRUE(cc.ok());
  EXPECT_EQ(cc->max_concurrency, 8);
  EXPECT_EQ(cc->dataset.num_prompts, 80u);  // Magpie: NUM_PROMPTS default CONC * 10
  EXPECT_EQ(cc->dataset.input_len, 1000);
  EXPECT_EQ(cc->dataset.style, range_style::lower_bound);
  EXPECT_DOUBLE_EQ(cc->dataset.range_ratio, 0.5);
  c.client.random_input_len = 128;
  c.client.max_concurrency = 0;
  c.client.num_prompts = 5;
  c.client.endpoint = "/v1/chat/completions";
  c.client.headers = {"Authorization: Bearer x"};
  auto v = make_client_config(c, u);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->dataset.style, range_style::symmetric);
  EXPECT_DOUBLE_EQ(v->dataset.range_ratio, 0.0);
  EXPECT_EQ(v->max_concurrency, 0);
  EXPECT_FALSE(v->dataset.token_ids);
  EXPECT_EQ(v->headers[0].second, "Bearer x");
  c.client.headers = {"bad"};
  EXPECT_FALSE(make_client_config(c, u).ok());
}

TEST(client_setup, vllm_defaults) {
  benchmark_config c;  // a --base-url invocation: no Magpie envs, vLLM's defaults
  c.base_url = "http://127.0.0.1:8000";
  c.client.vllm_defaults = true;
  endpoint_url u;
  auto v = make_client_config(c, u);
  ASSERT_TRUE(v.ok()) << v.get_status().message();
  EXPECT_EQ(v->max_concurrency, 0);              // no cap
  EXPECT_EQ(v->dataset.num_prompts, 1000u);
  EXPECT_EQ(v->dataset.input_len, 1024);
  EXPECT_EQ(v->dataset.output_len, 128);
  EXPECT_EQ(v->dataset.style, range_style::symmetric);
  EXPECT_DOUBLE_EQ(v->dataset.range_ratio, 0.0);
  EXPECT_TRUE(v->ignore_eos);                    // random dataset
  EXPECT_FALSE(v->temperature.has_value());      // left to the server
  c.client.dataset_name = "sharegpt";
  c.client.temperature = 0.7;
  c.set_env("CONC", "4");                        // --concurrency given explicitly
  auto s = make_client_config(c, u);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->ignore_eos);
  EXPECT_DOUBLE_EQ(*s->temperature, 0.7);
  EXPECT_EQ(s->max_concurrency, 4);
  EXPECT_EQ(s->dataset.num_prompts, 1000u);
  // Magpie's defaults for the same (empty) settings
  benchmark_config m = base("vllm");
  auto mm = make_client_config(m, u);
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm->max_concurrency, 32);
  EXPECT_EQ(mm->dataset.num_prompts, 320u);
  EXPECT_EQ(mm->dataset.output_len, 512);
  EXPECT_FALSE(mm->ignore_eos);
  EXPECT_DOUBLE_EQ(*mm->temperature, 0.0);
}

TEST(client_setup, request_bodies) {
  client_config c;
  prompt_spec p;
  p.token_ids = {5, 6};
  p.output_len = 3;
  json b = json::parse(request_body(c, "m", p));
  EXPECT_EQ(b["prompt"], json::array({5, 6}));
  EXPECT_EQ(b["max_tokens"], 3);
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["stream_options"]["continuous_usage_stats"], true);
  EXPECT_FALSE(b.contains("ignore_eos"));
  EXPECT_EQ(b["temperature"], 0.0);
  c.temperature.reset();
  EXPECT_FALSE(json::parse(request_body(c, "m", p)).contains("temperature"));  // vLLM: the server decides
  c.endpoint = "/v1/chat/completions";
  c.ignore_eos = true;
  p.token_ids.clear();
  p.text = "hello";
  json chat = json::parse(request_body(c, "m", p));
  EXPECT_EQ(chat["messages"][0]["content"], "hello");
  EXPECT_EQ(chat["ignore_eos"], true);
}

}  // namespace
}  // namespace magpie::serve
