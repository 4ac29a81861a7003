// `magpie benchmark vllm|sglang|atom`: workspace, GPU selection, server launch and readiness,
// the client run (with deliberate torch profiling), traces, server stop, reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "serve/bench_config.h"
#include "serve/client.h"
#include "serve/launcher.h"
#include "serve/report.h"

namespace magpie::serve {

struct run_options {
  fs::path output_dir = "./results";
  bool dry_run = false;                   ///< print the plan (server command, client settings) only
  std::string server_trace_dir;           ///< --base-url with profiling: where the server writes traces
  std::vector<std::string> magpie_argv;   ///< for provenance
};

/// The client settings a config implies (Magpie envs CONC/ISL/OSL/RANDOM_RANGE_RATIO/NUM_PROMPTS
/// unless the client block / vLLM-style flags say otherwise). See docs/serving.md.
status_or<client_config> make_client_config(const benchmark_config& cfg, const endpoint_url& url);

/// Runs the benchmark and writes the workspace. A status error means nothing useful could be
/// done (invalid config, workspace not creatable); a failed run (server not ready, died, every
/// request failed) is a run with success = false, its errors and partial results written.
status_or<benchmark_run> run_benchmark(const benchmark_config& cfg, const run_options& opts);

/// What a dry run shows (printed by dry_run_plan_json, serve/dry_run_printer.h).
struct dry_run_plan {
  std::optional<server_plan> server;  ///< none with --base-url (the server is not ours)
  client_config client;
  benchmark_config config;
};
/// The plan of a run without running it (validates the config; the workspace would be
/// <output_dir>/benchmark_<framework>_DRYRUN).
status_or<dry_run_plan> plan_dry_run(const benchmark_config& cfg, const run_options& opts);

}  // namespace magpie::serve
