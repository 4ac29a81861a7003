// Pre-flight of `magpie benchmark`: what can be known to fail is checked before a workspace
// directory, a report or a results-store row exists, so a failed pre-flight writes nothing.
//   - the output directory is (or can be created) writable;
//   - the dataset file of a sharegpt / custom dataset is readable;
//   - --base-url: the server accepts a TCP connection, and answers GET /v1/models with a model
//     when no --served-model-name is given (that lookup is the run's; no second one follows);
//   - a launched server: its program is found (docker for run_mode docker; vllm, python3 and
//     the framework's Python package, or server.command locally).
// Every bound is the run's own: --request-timeout (else the limit formula's base) and what is
// left of --timeout.
#pragma once

#include <string>

#include "core/status.h"
#include "serve/orchestrator.h"

namespace magpie::serve {

struct preflight_result {
  std::string served_model;  ///< the model /v1/models listed (--base-url runs without a name)
};

/// Errors name the flag or YAML field and the file or URL: invalid_argument for settings that
/// cannot work, not_found / failed_precondition / unavailable / timeout for the environment.
status_or<preflight_result> preflight(const benchmark_config& cfg, const run_options& opts, double deadline_s);

/// The output directory check alone (exposed for tests).
status check_output_dir(const fs::path& dir);

/// The dataset file check alone (exposed for tests): random needs no file.
status check_dataset_file(const client_settings& s);

}  // namespace magpie::serve
