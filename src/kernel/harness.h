// Running kernel harnesses (docs/harness-protocol.md): correctness runs that write a
// manifest of npy tensors, and timing sessions driven over the control channel.
#pragma once

#include <cmath>
#include <memory>
#include <optional>

#include "core/npy.h"
#include "core/subprocess.h"
#include "kernel/cupti_records.h"
#include "kernel/exchange.h"
#include "kernel/harness_protocol.h"
#include "kernel/spec.h"

namespace magpie::kernel {

/// The clock of record of a timing result (timing_result::source): CUPTI activity timestamps read
/// by the supervisor, or the harness's own timer (its ready line's `timer`; `harness` when the
/// line names none); `none` when no process got ready (printed as "").
enum class timing_source { none, cupti, cuda_events, hip_events, torch_events, host_clock, harness };
const char* timing_source_name(timing_source s);
/// A ready line's `timer` word (cuda_events, hip_events, torch_events, host_clock, harness); nullopt for any
/// other word, `cupti` included (only the supervisor's channel makes CUPTI the timer of record).
std::optional<timing_source> parse_harness_timer(std::string_view word);
inline void to_json(json& j, timing_source s) { j = timing_source_name(s); }

/// A kernel ready to run: commands resolved (defaults filled in), environment and cwd fixed.
struct prepared_kernel {
  kernel_spec spec;
  argv_list testcase;  ///< every argv is run in order for correctness; the last one is timed
  env_list env;        ///< spec.env plus magpie's (PYTHONPATH for the python harness)
  fs::path cwd;
};

/// The sandbox (core/sandbox.h) every run of `k`'s commands gets: writable only its working
/// directory, `out_dir` (its own fresh output directory, if any), /tmp and /dev/shm (private); the supervisor's
/// correctness directories (every other kernel's outputs, the reference's among them) hidden.
sandbox_spec candidate_sandbox(const prepared_kernel& k, const fs::path& out_dir = {});
/// Adds a directory every candidate_sandbox hides (the run's correctness directory).
void hide_from_candidates(const fs::path& dir);

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
  bool check = false;  ///< a timed-size trial for a timing check seed (MAGPIE_BENCH_CHECK_SEEDS)
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

/// Runs every testcase argv with MAGPIE_BENCH_MODE=correctness and the given seeds; with
/// `check_seeds` (the reference only), extra trials at the timed size for the timing checks.
status_or<correctness_run> run_correctness(const prepared_kernel& k, const std::vector<uint64_t>& seeds,
                                           const std::vector<uint64_t>& check_seeds, const fs::path& out_dir,
                                           double timeout_s);

/// Where libmagpie_cupti.so and libcupti live (empty when not found).
struct cupti_setup {
  fs::path injection_lib;
  std::string library_path;  ///< prepended to LD_LIBRARY_PATH for the child
};
/// Looks next to the magpie binary (lib/, ../lib/) and in MAGPIE_CUPTI_LIB.
cupti_setup find_cupti();

/// One sample as the supervisor saw it.
struct sample_record {
  uint64_t id = 0;
  int round = 0;
  double harness_ns = 0;          ///< the harness's own time per launch
  double bracket_ns = 0;          ///< supervisor's clock around the `sample` command (whole batch)
  uint64_t sent_mono = 0, recv_mono = 0;  ///< CLOCK_MONOTONIC ns
  double cpu_ns = std::nan("");  ///< CPU time of the harness's process tree during the command (all threads)
  double gap_cpu_ns = 0;          ///< its CPU time outside every command since the previous sample's reply
  /// Wall time the command must have taken, by the CPU time the tree used during it (whole batch):
  /// the most one live thread gained, or the tree's gain spread over every online CPU if more
  /// (a thread cannot run longer than the wall time that passes; threads that exited meanwhile are
  /// in the tree's figure only). NaN: not read.
  double cpu_floor_ns = std::nan("");
  double inputs_extra_ns = 0;     ///< fresh: CPU time of the tree during `inputs` beyond its busiest thread
  bool fresh = false;             ///< inputs regenerated (from a secret seed) right before it
  bool checked = false;           ///< outputs read from the exchange memory and compared (decided after the reply)
  bool partner = false;           ///< issued right before the next (fresh) sample's `inputs`, on the same process
  bool has_gpu = false;           ///< CUPTI attributed GPU work to it
  sample_gpu gpu;                 ///< whole batch
  double gpu_ns = std::nan("");   ///< CUPTI span per launch (the statistic of record on CUDA)
};

/// Record-channel findings of one harness process (docs/harness-protocol.md, "Integrity").
struct channel_findings {
  size_t samples_without_gpu = 0;
  size_t marks_outside_bracket = 0;  ///< sample marks not between our send and the reply
  size_t ops_outside_window = 0;     ///< attributed GPU work running before begin / after end
  size_t unexpected_marks = 0;       ///< windows for ids we never issued, or marked twice
  /// NVML snapshots taken while the tree was stopped for a checked sample (0: no NVML here).
  size_t gpu_snapshots = 0;
  /// Distinct processes of the harness's own tree, beyond one, seen holding a GPU at any snapshot of
  /// any harness while it lived, with magpie's descendants outside every harness tree attributed to
  /// it (kernel/gpu_holders.h): only one process may (work in another one is outside every measured
  /// window: a CUDA IPC helper).
  size_t extra_gpu_holders = 0;
  std::string gpu_holders;           ///< "pid (comm), ..." of those holders
};

/// Where the supervisor's wall time went for one harness process (ns, summed over its
/// samples): the commands' round trips (write to reply), walks of /proc for the tree's CPU
/// time, reading and attributing CUPTI records, NVML snapshots, reading and judging checked
/// outputs, and one_sample's whole time (the rest of it is the measuring loop's own).
struct supervisor_cost {
  double commands_ns = 0, proc_ns = 0, cupti_ns = 0, nvml_ns = 0, outputs_ns = 0, samples_wall_ns = 0;
  size_t commands = 0, samples = 0;
};

/// MAGPIE_BENCH_INIT_SEED of a run whose correctness seeds are `seeds` (the same for every
/// implementation, for correctness and timing processes alike).
inline uint64_t model_init_seed(const std::vector<uint64_t>& seeds) { return seeds.empty() ? 0 : seeds.front() ^ 0x5eedull; }

/// One harness process in timing mode (protocol 2), alive from spawn() until finish().
class timing_session {
 public:
  /// Starts the process; await_ready() reads its `ready` line (many can start in parallel).
  /// `init_seed`: MAGPIE_BENCH_INIT_SEED, the correctness runs' (model_init_seed), so that
  /// weights drawn at construction equal those the reference's checked outputs were made with.
  static status_or<std::unique_ptr<timing_session>> spawn(const prepared_kernel& k, const timing_policy& p,
                                                          uint64_t seed, uint64_t init_seed, const cupti_setup& cupti,
                                                          int process);
  status await_ready();
  /// `n` ping round trips: the supervisor's clock for the channel alone.
  status ping(int n);
  status warmup(int launches);
  /// Regenerates the inputs in place from `seed` (and re-poisons the outputs); `bracket_ns`:
  /// our clock around it, `cpu_ns`: the process tree's CPU time during it.
  status inputs(uint64_t seed, double* bracket_ns, double* cpu_ns);
  status flush();
  /// One sample (always the same command: which samples are compared is decided after the
  /// reply). CUPTI records are read and attributed when the injection library is active.
  /// `partner`: the sample right before a fresh one's `inputs` (recorded only: the command is the same).
  status_or<sample_record> sample(uint64_t id, int round, bool check, bool fresh, bool partner);
  /// The last sample's outputs, read from the exchange memory while every process of the
  /// harness's tree is stopped.
  /// Read into outputs(), whose buffers are reused from one checked sample to the next.
  status read_outputs();
  const std::vector<tensor>& outputs() const { return m_outputs; }
  /// A process of the tree that was outside the harness's process group when the last checked
  /// sample's reply stopped the group (0: none): it could run on after the reply.
  pid_t left_group() const { return m_left_group; }
  const exchange_memory& exchange() const { return *m_exchange; }
  /// Sends "stop", waits for exit; reads late CUPTI records.
  run_result finish();

  /// Its ready line (empty until await_ready read one).
  const std::optional<ready_line>& ready() const { return m_ready; }
  /// The timer its ready line named (cuda_events, hip_events, torch_events, host_clock or harness).
  timing_source timer() const { return m_timer; }
  const std::vector<sample_record>& samples() const { return m_samples; }
  const std::vector<double>& rtt_ns() const { return m_rtt; }
  const cupti_log& cupti() const { return m_cupti; }
  /// CUPTI is the timer of record: the channel exists and the harness times on a GPU.
  bool cupti_active() const { return m_channel != nullptr && m_gpu_timer; }
  /// GPU operations recorded although the harness said it times on the CPU.
  size_t gpu_ops_under_host_timer() const { return m_channel && !m_gpu_timer ? m_cupti.ops().size() : 0; }
  const channel_findings& findings() const { return m_findings; }
  const supervisor_cost& cost() const { return m_cost; }
  /// one_sample's wall time for one sample, and the part of it spent reading/judging outputs.
  void add_sample_cost(double wall_ns, double outputs_ns) {
    m_cost.samples_wall_ns += wall_ns;
    m_cost.outputs_ns += outputs_ns;
    ++m_cost.samples;
  }
  const std::vector<std::string>& warnings() const { return m_warnings; }
  const kernel_spec& spec() const { return m_spec; }
  int process() const { return m_process; }
  uint64_t first_sample_ts() const { return m_first_sample_ts; }
  uint64_t harness_tid() const { return m_harness_tid; }

 private:
  /// Sends `cmd`, reads the reply; accounts the tree's CPU time (m_cmd_cpu, m_gap_cpu) and
  /// takes our clock right around the write and the read (m_sent, m_recv).
  /// `stop_after`: the kernel stops the harness's group in the write of the reply, then the rest of
  /// the tree is stopped (a checked sample; read_outputs resumes it).
  /// `floor`: also read every live thread's CPU time around it, for m_cpu_floor (a `sample`).
  status_or<std::string> command(const std::string& cmd, const std::string& want, double timeout, bool stop_after = false,
                                 bool floor = false);
  void read_cupti(sample_record* r);
  /// With the tree stopped (m_stopped): which processes hold a GPU (NVML), tallied for every live
  /// harness (kernel/gpu_holders.h); this one's tally into m_findings (note_holder_tally).
  void note_gpu_holders();
  void note_holder_tally();

  kernel_spec m_spec;
  timing_policy m_policy;
  int m_process = 0;
  std::unique_ptr<child_process> m_child;
  std::unique_ptr<cupti_channel> m_channel;
  std::unique_ptr<exchange_memory> m_exchange;
  bool m_accounting = false;     ///< CPU accounting on (from the first inputs / sample)
  uint64_t m_cpu_mark = 0;       ///< tree CPU at the last reply
  double m_gap_cpu = 0;          ///< tree CPU outside commands since the last sample
  double m_cmd_cpu = 0;          ///< tree CPU during the last command
  double m_cpu_floor = std::nan("");  ///< the last `floor` command's sample_record::cpu_floor_ns
  size_t m_threads_seen = 0;          ///< live threads of the tree at the last floor read
  static constexpr size_t k_floor_threads = 64;  ///< above: the floor only on partners and fresh samples
  double m_inputs_extra = 0;     ///< tree CPU during the last `inputs` beyond its busiest thread
  std::vector<tensor> m_outputs;  ///< the last checked sample's outputs (read_outputs)
  std::vector<pid_t> m_stopped;  ///< stopped after a checked sample's reply, until read_outputs
  bool m_held = false;
  pid_t m_left_group = 0;  ///< at the last checked sample's stop: a process of the tree outside the harness's group
  uint64_t m_sent = 0, m_recv = 0;
  std::optional<ready_line> m_ready;
  std::vector<sample_record> m_samples;
  std::vector<double> m_rtt;
  cupti_log m_cupti;
  channel_findings m_findings;
  supervisor_cost m_cost;
  std::vector<std::string> m_warnings;
  uint64_t m_first_sample_ts = 0, m_harness_tid = 0;
  timing_source m_timer = timing_source::harness;  ///< the ready line's timer
  bool m_gpu_timer = true;  ///< the ready line's timer is not host_clock
};

}  // namespace magpie::kernel
