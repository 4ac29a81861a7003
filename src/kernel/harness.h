// Running kernel harnesses (docs/harness-protocol.md): correctness runs that write a
// manifest of npy tensors, and timing sessions driven over the control channel.
#pragma once

#include <cmath>
#include <memory>
#include <optional>

#include "core/npy.h"
#include "core/subprocess.h"
#include "kernel/cupti_records.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// A kernel ready to run: commands resolved (defaults filled in), environment and cwd fixed.
struct prepared_kernel {
  kernel_spec spec;
  argv_list testcase;  ///< every argv is run in order for correctness; the last one is timed
  env_list env;        ///< spec.env plus magpie's (PYTHONPATH for the python harness)
  fs::path cwd;
};

struct manifest_tensor {
  std::string name;
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  fs::path file, pre, post;  ///< outputs use `file`; inputs use pre/post
};

struct manifest_trial {
  int index = 0;
  uint64_t seed = 0;
  int size_index = 0;
  std::string size;
  bool ok = true;
  std::string error;
  std::vector<manifest_tensor> inputs, outputs;
};

struct manifest {
  std::string harness, kernel, device;
  int n_sizes = 1, timed_size = 0;
  std::vector<manifest_trial> trials;
};

/// Parses <dir>/manifest.json; paths become absolute.
status_or<manifest> read_manifest(const fs::path& dir);

struct correctness_run {
  std::vector<run_result> runs;    ///< one per testcase argv that ran
  std::optional<manifest> result;  ///< present when the harness spoke the protocol
  fs::path dir;                    ///< MAGPIE_BENCH_OUT_DIR
  bool exit_ok = false;            ///< every command exited 0 in time
  std::string error;               ///< first failure, Magpie-style message
};

/// Runs every testcase argv with MAGPIE_BENCH_MODE=correctness and the given seeds.
status_or<correctness_run> run_correctness(const prepared_kernel& k, const std::vector<uint64_t>& seeds,
                                           const fs::path& out_dir, double timeout_s);

/// Where libmagpie_cupti.so and libcupti live (empty when not found).
struct cupti_setup {
  fs::path injection_lib;
  std::string library_path;  ///< prepended to LD_LIBRARY_PATH for the child
};
/// Looks next to the magpie binary (lib/, ../lib/) and in MAGPIE_CUPTI_LIB.
cupti_setup find_cupti();

struct sample_record {
  uint64_t id = 0;
  double harness_ns = 0;                    ///< the harness's own time for one launch
  double cupti_span_ns = std::nan("");     ///< first start → last end of the sample's kernels
  double cupti_sum_ns = std::nan("");
  int cupti_kernels = 0;
};

/// One harness process in timing mode, alive from start() until finish().
class timing_session {
 public:
  static status_or<std::unique_ptr<timing_session>> start(const prepared_kernel& k, const timing_policy& p,
                                                          uint64_t seed, const cupti_setup& cupti,
                                                          const fs::path& work_dir);
  status warmup(int launches);
  /// One sample; its CUPTI records are joined when the injection library is active.
  status_or<sample_record> sample(uint64_t id);
  /// Sends "stop", waits for exit; joins late CUPTI records into the samples.
  run_result finish();

  const json& ready() const { return m_ready; }
  const std::vector<sample_record>& samples() const { return m_samples; }
  const cupti_log& cupti() const { return m_cupti; }
  bool cupti_active() const { return !m_cupti_path.empty(); }
  const std::string& stderr_tail() const { return m_stderr; }
  /// Distinct warnings the harness attached to its sample replies.
  const std::vector<std::string>& warnings() const { return m_warnings; }
  const kernel_spec& spec() const { return m_spec; }

 private:
  status expect(const std::string& cmd, const std::string& want, double timeout, std::string* rest);
  void join_cupti();

  kernel_spec m_spec;
  timing_policy m_policy;
  std::unique_ptr<child_process> m_child;
  json m_ready;
  std::vector<sample_record> m_samples;
  fs::path m_cupti_path;
  cupti_log m_cupti;
  std::string m_stderr;
  std::vector<std::string> m_warnings;
};

}  // namespace magpie::kernel
