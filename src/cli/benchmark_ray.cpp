// `magpie -e ray benchmark ...` and benchmark YAMLs with `run_mode: ray` (Magpie's way to send a
// serving benchmark to a Ray cluster): the benchmark runs as one Ray job, `magpie benchmark
// <same arguments> --run-mode local` on whichever node Ray gives it (Magpie's worker rewrites
// run_mode ray → local too); its workspace is registered in the store when it ends (src/sched).
#include <cstdio>

#include "cli/batch_cli.h"
#include "cli/benchmark_hooks.h"
#include "core/log.h"
#include "core/strings.h"
#include "serve/bench_config.h"
#include "sched/options.h"

namespace magpie::cli {
namespace {

// The -b YAML's benchmark block, when there is one (errors are left to the local path).
const config_node* benchmark_block(const config_node& root) {
  const config_node* b = root.get("benchmark");
  return b && b->is_map() ? b : nullptr;
}

int64_t tp_of(const arg_parser& p, const config_node* block) {
  if (p.has("--tp")) {
    auto v = p.integer("--tp", 1);
    return v.ok() && *v > 0 ? *v : 1;
  }
  const config_node* envs = block ? block->get("envs") : nullptr;
  const config_node* tp = envs ? envs->get("TP") : nullptr;
  auto v = tp && tp->is_scalar() ? parse_int(tp->text) : std::nullopt;
  return v && *v > 0 ? *v : 1;
}

// The subcommand arguments the job runs: the user's, less -o (the job writes into its own
// directory; the store of -o registers it) and --run-mode, plus --run-mode local.
std::vector<std::string> job_args(const std::vector<std::string>& args) {
  std::vector<std::string> out = {"benchmark"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--output-dir" || a == "--run-mode" || a == "--ray-address") {
      ++i;
      continue;
    }
    if (starts_with(a, "--output-dir=") || starts_with(a, "--run-mode=") || starts_with(a, "--ray-address=")) continue;
    out.push_back(a);
  }
  out.insert(out.end(), {"--run-mode", "local"});
  return out;
}

}  // namespace

void add_benchmark_ray_flags(arg_parser& p) {
  p.add_value("--ray-address", "", "URL",
              "with -e ray or run_mode: ray: the Ray dashboard, e.g. http://head:8265 (default: benchmark.ray_config."
              "cluster_address, $RAY_API_SERVER_ADDRESS, else http://127.0.0.1:8265)", {}, "ray (docs/ray.md)");
}

bool benchmark_wants_ray(const arg_parser& p, const global_options& g) {
  if (p.has("--dry-run")) return false;  // the plan is the local one in every case
  auto env = sched::environment_from_flag(g.environment);  // a bad word is reported by the local path
  if (env.ok() && *env == sched::run_environment::ray) return true;
  if (!p.has("--benchmark-config") || p.has("--run-mode")) return false;
  auto root = load_yaml_file(p.value("--benchmark-config"));
  if (!root.ok()) return false;
  const config_node* block = benchmark_block(*root);
  const config_node* mode = block ? block->get("run_mode") : nullptr;
  return mode && mode->is_scalar() && serve::parse_server_run_mode(to_lower(mode->text)) == serve::server_run_mode::ray;
}

int run_benchmark_on_ray(const arg_parser& p, const std::vector<std::string>& args, const global_options& g) {
  sched::scheduler_options so;
  so.environment = sched::run_environment::ray;
  so.time_limit = "UNLIMITED";  // the benchmark's own timeout_seconds bounds it
  const config_node* block = nullptr;
  status_or<config_node> root = config_node{};
  if (p.has("--benchmark-config")) {
    root = load_yaml_file(p.value("--benchmark-config"));
    if (!root.ok()) {
      std::fprintf(stderr, "Error: %s\n", root.get_status().message().c_str());
      return k_exit_failure;
    }
    block = benchmark_block(*root);
  }
  if (const config_node* rc = block ? block->get("ray_config") : nullptr) {
    if (auto st = sched::parse_ray_config(*rc, "benchmark.ray_config", &so); !st.ok()) {
      std::fprintf(stderr, "Error: %s\n", st.message().c_str());
      return k_exit_failure;
    }
  }
  if (p.has("--ray-address")) so.ray.cluster_address = p.value("--ray-address");
  bool client_only = p.has("--base-url") || (block && block->get("base_url"));
  if (so.ray.entrypoint_num_gpus < 0) so.ray.entrypoint_num_gpus = static_cast<double>(tp_of(p, block));
  MAGPIE_LOG_INFO("benchmark on Ray: one job running 'magpie benchmark ... --run-mode local' (%g GPU(s))",
                  client_only ? 0.0 : so.ray.entrypoint_num_gpus);
  (void)g;
  return print_batch_run(sched::run_command_batch(job_args(args), so, p.value("--output-dir", "./results"), !client_only),
                         false);
}

}  // namespace magpie::cli
