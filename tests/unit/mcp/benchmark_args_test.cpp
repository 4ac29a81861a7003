// The benchmark tool's arguments (mcp/benchmark_args_codec.h): decoded once into a typed struct
// (an unknown or mistyped argument is an error naming it) and printed as the `benchmark:` YAML,
// byte for byte what the tool wrote before the struct existed (documents taken from that binary).
#include <gtest/gtest.h>

#include "core/yaml_json.h"
#include "mcp/benchmark_args_codec.h"

namespace magpie::mcp {
namespace {

std::string refused(const json& a) {
  auto r = decode_benchmark_args(a);
  return r.ok() ? std::string() : r.get_status().message();
}

std::string yaml_of(const json& a, std::vector<std::string>* warnings) {
  auto r = decode_benchmark_args(a);
  EXPECT_TRUE(r.ok()) << r.get_status().message();
  return r.ok() ? json_to_yaml(benchmark_yaml(*r, warnings)) : std::string();
}

TEST(BenchmarkArgs, UnknownAndMistypedArgumentsAreRefusedByName) {
  EXPECT_EQ(refused({{"framework", "vllm"}, {"model", "m"}, {"tensor_parallel", 2}}),
            "benchmark arguments: unknown argument 'tensor_parallel'");
  EXPECT_EQ(refused({{"framework", "vllm"}, {"model", "m"}, {"tp", "x"}}),
            "benchmark arguments: field 'tp': expected an integer, got string");
  EXPECT_EQ(refused({{"framework", "tgi"}, {"model", "m"}}),
            "benchmark arguments: field 'framework': unknown framework 'tgi' (vllm, sglang, atom)");
  EXPECT_EQ(refused({{"framework", "vllm"}, {"model", "m"}, {"run_mode", "slurm"}}),
            "benchmark arguments: field 'run_mode': unknown run mode 'slurm' (docker, local, ray)");
  EXPECT_EQ(refused({{"framework", "vllm"}, {"model", "m"}, {"extra_envs", json::array()}}),
            "benchmark arguments: field 'extra_envs': expected an object, got array");
  EXPECT_EQ(refused({{"framework", "vllm"}}), "benchmark arguments: field 'model' is missing");
  EXPECT_EQ(refused({{"framework", "vllm"}, {"model", "m"}, {"gap_analysis_categories", {"a", 1}}}),
            "benchmark arguments: field 'gap_analysis_categories[1]': expected a string, got number");
}

TEST(BenchmarkArgs, RayArgumentsMakeTheRayConfig) {
  std::vector<std::string> w;
  std::string y = yaml_of({{"framework", "atom"}, {"model", "m3"}, {"run_mode", "ray"},
                           {"ray_cluster_address", "ray://h:10001"}, {"ray_shared_storage_path", "/s"},
                           {"ray_num_gpus", 0.5}, {"ray_multi_node", true}, {"ray_total_num_gpus", 8},
                           {"ray_num_nodes", 2}, {"tracelens", false}, {"gap_analysis_enabled", true},
                           {"input_len", nullptr}, {"torch_profiler", nullptr}, {"docker_image", nullptr},
                           {"gpu_arch", ""}},
                          &w);
  EXPECT_EQ(y,
            "benchmark:\n  framework: atom\n  model: m3\n  precision: fp8\n  run_mode: ray\n  envs:\n    TP: 1\n"
            "    CONC: 32\n    ISL: 1024\n    OSL: 512\n    RANDOM_RANGE_RATIO: 0.5\n  profiler:\n    torch_profiler:\n"
            "      enabled: true\n    system_profiler:\n      enabled: false\n    tracelens:\n      enabled: false\n"
            "      export_format: csv\n      multi_rank_report_enabled: false\n  timeout_seconds: 3600\n"
            "  gap_analysis:\n    enabled: true\n    top_k: 20\n    trace_start_pct: 0\n    trace_end_pct: 100\n"
            "    min_duration_us: 0\n  ray_config:\n    cluster_address: ray://h:10001\n    shared_storage_path: /s\n"
            "    entrypoint_num_gpus: 0.5\n    multi_node: true\n    total_num_gpus: 8\n    num_nodes: 2\n");
  EXPECT_TRUE(w.empty());
}

TEST(BenchmarkArgs, ArgumentsNotActedOnAreWarnings) {
  std::vector<std::string> w;
  std::string y = yaml_of({{"framework", "vllm"}, {"model", "m4"}, {"run_mode", "local"}, {"tp", 2},
                           {"tracelens", true}, {"ray_cluster_address", "x:1"}, {"ray_num_gpus", 2},
                           {"ray_multi_node", false}, {"agentx_mode", "fast"}, {"extra_envs", {{"foo", "bar"}}},
                           {"benchmark_config", {{"model", "override"}}}},
                          &w);
  EXPECT_EQ(y,
            "benchmark:\n  framework: vllm\n  model: override\n  precision: fp8\n  run_mode: local\n  envs:\n"
            "    TP: 2\n    CONC: 32\n    ISL: 1024\n    OSL: 512\n    RANDOM_RANGE_RATIO: 0.5\n    FOO: bar\n"
            "  profiler:\n    torch_profiler:\n      enabled: true\n    system_profiler:\n      enabled: false\n"
            "    tracelens:\n      enabled: true\n      export_format: csv\n      multi_rank_report_enabled: true\n"
            "  timeout_seconds: 3600\n");
  EXPECT_EQ(w, (std::vector<std::string>{
                   "ray_cluster_address is used only with run_mode: ray (docs/ray.md); ignored for this run",
                   "ray_num_gpus is used only with run_mode: ray (docs/ray.md); ignored for this run",
                   "agentx_mode is accepted but not used (AgentX is not provided)"}));
}

}  // namespace
}  // namespace magpie::mcp
