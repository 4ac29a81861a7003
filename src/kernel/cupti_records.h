// The supervisor's side of the CUPTI record channel written by libmagpie_cupti.so
// (docs/harness-protocol.md, "CUPTI records"): the channel itself (an unlinked in-memory file
// plus a bootstrap pipe with a per-run key), and the reader that authenticates each record and
// attributes every GPU operation to the sample whose window contains its launch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::kernel {

struct gpu_op {
  std::string op;    ///< kernel | memcpy | memset
  std::string name;  ///< raw (mangled) kernel name, "memcpy kind N", "memset"
  uint64_t start = 0, end = 0;  ///< ns (CUPTI clock)
  uint64_t corr = 0, bytes = 0, stream = 0;
  int device = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t sample = -1;  ///< the sample whose window holds its launch; -1 none, -2 launch unknown
  uint64_t launch_tid = 0, launch_ts = 0;
};

/// One record of the channel (docs/harness-protocol.md), as kernel/cupti_record_codec.h decodes it.
struct cupti_record {
  enum class kind { gpu, api, mark_begin, mark_end, dropped, hello, other };
  kind what = kind::other;
  gpu_op op;                                ///< gpu: the operation
  uint64_t corr = 0, ts = 0, tid = 0;       ///< api: correlation id, launch ts, thread; mark: ts, thread
  uint64_t id = 0, mono = 0;                ///< mark: sample id, monotonic clock
  uint64_t count = 0;                       ///< dropped: records lost
};

struct sample_window {
  uint64_t begin_ts = 0, end_ts = 0, begin_mono = 0, end_mono = 0, tid = 0;
  int begins = 0, ends = 0;
};

/// GPU time of one sample: every operation launched inside its window, any thread or stream.
struct sample_gpu {
  double span_ns = 0;  ///< first start → last end
  double sum_ns = 0;   ///< sum of durations
  int ops = 0;
  uint64_t first_start = 0, last_end = 0;
};

class cupti_log {
 public:
  /// Authenticated mode: every line must carry a valid SipHash-2-4 tag under `key`.
  void set_key(const unsigned char key[16]);
  /// Parses bytes appended to the channel (a partial last line is kept for later).
  void feed(std::string_view bytes);
  /// Reads what was appended to `fd` since the last call (pread at our own offset).
  void poll_fd(int fd);
  /// Reads what was appended to a plain file (unauthenticated legacy mode).
  void poll(const fs::path& path);
  /// Attributes operations to sample windows by their launch timestamp.
  void attribute();

  bool sample_time(uint64_t id, sample_gpu* out) const;
  const std::map<uint64_t, sample_window>& windows() const { return m_windows; }
  const std::vector<gpu_op>& ops() const { return m_ops; }
  bool hello() const { return m_hello; }
  uint64_t records() const { return m_records; }
  uint64_t dropped() const { return m_dropped; }
  size_t bad_lines() const { return m_bad_lines; }
  size_t bad_macs() const { return m_bad_macs; }
  size_t sequence_errors() const { return m_seq_errors; }
  /// Operations launched outside every sample window after `after_ts`, from threads other
  /// than `harness_tid` (work a kernel hides from the timed region), and their GPU time.
  size_t stray_ops(uint64_t after_ts, uint64_t harness_tid, double* gpu_ns) const;

 private:
  void parse_line(std::string_view line);
  void apply(const cupti_record& r);

  bool m_auth = false;
  unsigned char m_key[16] = {0};
  uint64_t m_offset = 0, m_next_seq = 0, m_records = 0, m_dropped = 0;
  std::string m_partial;
  bool m_hello = false;
  size_t m_bad_lines = 0, m_bad_macs = 0, m_seq_errors = 0;
  std::vector<gpu_op> m_ops;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> m_api;  ///< corr → (launch ts, tid)
  std::map<uint64_t, sample_window> m_windows;             ///< sample id → window
};

/// The supervisor's end of one harness process's record channel.
class cupti_channel {
 public:
  cupti_channel() = default;
  cupti_channel(const cupti_channel&) = delete;
  cupti_channel& operator=(const cupti_channel&) = delete;
  ~cupti_channel();
  /// Creates the in-memory record file, the key and the bootstrap pipe (already written and
  /// closed on our side). The child receives child_fds() and MAGPIE_CUPTI_BOOT.
  status open();
  /// fds to hand to the child, in order: [bootstrap read end, record write end].
  std::vector<int> child_fds() const { return {m_boot_r, m_rec_w}; }
  /// Writes the bootstrap line naming the record fd's number in the child.
  status write_bootstrap(int child_record_fd);
  /// Closes our copies of the child's ends (after spawn).
  void after_spawn();
  void poll(cupti_log* log) const { log->poll_fd(m_rec_r); }
  const unsigned char* key() const { return m_key; }

 private:
  int m_rec_r = -1, m_rec_w = -1, m_boot_r = -1, m_boot_w = -1;
  unsigned char m_key[16] = {0};
};

/// Itanium demangling (abi::__cxa_demangle); the input when it is not a mangled name.
std::string demangle(const std::string& name);

/// Upstream Magpie's per-kernel summary of a log (timing.cupti_kernels, the cupti profiler's
/// `kernels`): per kernel name, launches, duration statistics (ns), grid/block of the first launch.
struct cupti_kernel_row {
  std::string kernel_name, mangled_name;  ///< kernel_name: demangled when asked
  size_t dispatch_count = 0;
  double avg_ns = 0, min_ns = 0, max_ns = 0, total_ns = 0, median_ns = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
};
/// The rows, most total time first. `sampled_only`: only kernels inside a timed sample (drops
/// cache-flush and warm-up work).
std::vector<cupti_kernel_row> cupti_kernel_rows(const cupti_log& log, bool demangle, bool sampled_only = false);

}  // namespace magpie::kernel
