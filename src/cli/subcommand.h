// Subcommand registry. Each src/cli/<name>.cpp registers itself with MAGPIE_SUBCOMMAND;
// main.cpp parses the global options and dispatches.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"

namespace magpie::cli {

/// Options given before the subcommand (Magpie's global flags plus --quiet).
struct global_options {
  fs::path config_path;     ///< --config/-c framework config (empty: built-in defaults)
  bool verbose = false;     ///< --verbose/-v
  bool quiet = false;       ///< --quiet/-q: warnings and errors only, no progress bar
  std::string environment;  ///< --environment/-e local|container|ray|slurm ("" = from config)
  int workers = 0;          ///< --workers/-w (0 = from config)
  std::string docker_image; ///< --docker-image
};

/// Returns the process exit code. `args` excludes the subcommand name.
using subcommand_fn = int (*)(const std::vector<std::string>& args, const global_options& g);

struct subcommand {
  const char* name;
  const char* summary;
  subcommand_fn run;
};

bool register_subcommand(const subcommand& s);
const std::vector<subcommand>& subcommands();

/// Exit codes (Magpie's: 0 ok, 1 failure; 2 for usage errors as argparse does; 3 a partial
/// result: outputs written, some input or requests missing — trace and benchmark, 0 with
/// --allow-partial).
constexpr int k_exit_ok = 0;
constexpr int k_exit_failure = 1;
constexpr int k_exit_usage = 2;
constexpr int k_exit_partial = 3;

}  // namespace magpie::cli

#define MAGPIE_SUBCOMMAND(ident, name, summary, fn) \
  static const bool magpie_subcommand_##ident = ::magpie::cli::register_subcommand({name, summary, fn})
