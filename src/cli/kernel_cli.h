// Shared flag set and request building for `magpie analyze` and `magpie compare`.
#pragma once

#include "cli/subcommand.h"
#include "core/args.h"
#include "kernel/spec.h"
#include "sched/options.h"

namespace magpie::cli {

/// Adds Magpie's analyze/compare flags and ours (reference, seeds, timing policy).
void add_kernel_flags(arg_parser& p, bool compare);
/// Builds the request from -k YAML or positional kernels plus CLI overrides.
/// Positional ids: analyze = file stem, compare = kernel_<i>_<stem> (Magpie's rules). Where it
/// runs (framework config, the YAML's scheduler:/ray_config:, scheduler flags) goes to `so`.
status_or<kernel::eval_request> build_request(const arg_parser& p, const global_options& g, bool compare,
                                              sched::scheduler_options* so);
/// Warnings (stderr) where a kernel's type does not fit its file or this machine: a cuda/hip
/// kernel whose source files define no __global__ function; cuda/hip kernels without a GPU.
void warn_type_mismatches(const kernel::eval_request& req);
/// Parses args, runs, prints; returns the exit code.
int run_kernel_command(const std::vector<std::string>& args, const global_options& g, bool compare);

}  // namespace magpie::cli
