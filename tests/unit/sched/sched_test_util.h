// Requests for the planning tests of tests/unit/sched (batch_test, ray_batch_test).
#pragma once

#include <string>

#include "core/fs.h"
#include "kernel/spec.h"
#include "sched/options.h"

namespace magpie::sched_test {

inline kernel::kernel_spec spec(const std::string& id, kernel::kernel_type t = kernel::kernel_type::host) {
  kernel::kernel_spec k;
  k.id = id;
  k.type = t;
  k.source_files = {"/src/" + id + ".cpp"};
  k.working_dir = "/src";
  return k;
}

/// A request with the scheduler options it is planned with (plan_kernel_batch(r, r.scheduler)).
struct test_request : kernel::eval_request {
  sched::scheduler_options scheduler;
};

/// `n` host kernels k0..k(n-1) for `mode` on `environment`, results in a fresh temp dir.
inline test_request request(const std::string& mode, int n, const std::string& environment = "slurm") {
  test_request r;
  r.mode = kernel::parse_run_mode(mode).value();  // a typo fails the test
  for (int i = 0; i < n; ++i) r.kernels.push_back(spec("k" + std::to_string(i)));
  r.output_dir = make_temp_dir("/tmp", "magpie_sched_").value();
  r.scheduler.environment = sched::parse_run_environment(environment).value();  // a typo fails the test
  r.scheduler.magpie_bin = "/opt/magpie/bin/magpie";
  if (environment == "ray") r.scheduler.ray.cluster_address = "http://127.0.0.1:8265";
  return r;
}

}  // namespace magpie::sched_test
