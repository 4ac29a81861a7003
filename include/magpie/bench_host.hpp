// magpie::bench host backend: kernels are plain C++ functions on host memory, timed with
// CLOCK_MONOTONIC. Included by <magpie/bench.hpp>.
#pragma once

#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_detail.hpp"

namespace magpie {
namespace bench {
namespace detail {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

/// Parses sysfs cache sizes such as "32768K", "16M", "512".
inline uint64_t parse_cache_size(const std::string& s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  if (*end == 'K' || *end == 'k') v <<= 10;
  else if (*end == 'M' || *end == 'm') v <<= 20;
  else if (*end == 'G' || *end == 'g') v <<= 30;
  return v;
}

/// Size in bytes of the last-level cache of cpu0 (largest data/unified cache of the highest
/// level under /sys/devices/system/cpu/cpu0/cache), 0 when unknown.
inline uint64_t host_llc_bytes() {
  uint64_t best = 0;
  int best_level = -1;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_f(dir + "level"), size_f(dir + "size"), type_f(dir + "type");
    if (!level_f || !size_f) continue;
    int level = -1;
    std::string size, type;
    level_f >> level;
    size_f >> size;
    type_f >> type;
    if (type == "Instruction") continue;
    const uint64_t bytes = parse_cache_size(size);
    if (level > best_level || (level == best_level && bytes > best)) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

inline std::string host_cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t b = line.find_first_not_of(" \t", colon + 1);
        return b == std::string::npos ? "" : line.substr(b);
      }
    }
  }
  return "unknown cpu";
}

class host_backend {
 public:
  static constexpr const char* platform = "host";
  static constexpr const char* timer = "host_clock";

  void init() { m_llc = host_llc_bytes(); }
  std::string device_name() const { return "host " + host_cpu_model(); }
  /// LLC bytes reported as "l2_bytes" in the ready line (0 = unknown).
  uint64_t cache_bytes() const { return m_llc; }
  /// 2 x LLC, or 64 MiB when the LLC size is unknown.
  uint64_t default_flush_bytes() const { return m_llc ? 2 * m_llc : (64ull << 20); }
  bool blocking_kernel() const { return false; }
  /// CUPTI markers exist only on CUDA.
  void attach_markers() {}
  bool has_markers() const { return false; }
  /// End of the timing conversation (CUDA: final CUPTI flush).
  void finish() {}

  void* alloc(size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) throw error("out of host memory");
    return p;
  }
  void release(void* p) { std::free(p); }
  /// Host memory is the host's: inputs are generated in place.
  void* host_pointer(void* p) const { return p; }
  void upload(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  void fill(void* dst, int byte, size_t bytes) { std::memset(dst, byte, bytes); }
  /// Host launches are synchronous: nothing to check.
  void check(const char*) {}

  /// Flush buffer of `bytes` (0: no flush).
  void set_flush(uint64_t bytes) { m_flush.assign(static_cast<size_t>(bytes), 0); }
  uint64_t flush_bytes() const { return m_flush.size(); }
  /// Writes then reads the whole flush buffer, evicting the kernel's data from every cache.
  void flush() {
    if (m_flush.empty()) return;
    ++m_flush_round;
    std::memset(m_flush.data(), static_cast<int>(m_flush_round & 0xFF), m_flush.size());
    uint64_t sum = 0;
    for (size_t i = 0; i < m_flush.size(); i += 64) sum += m_flush[i];
    m_sink = m_sink + sum;
  }

  /// n launches back to back; total ns.
  uint64_t warmup(const std::function<void()>& launch, uint64_t n) {
    const uint64_t t0 = monotonic_ns();
    for (uint64_t i = 0; i < n; ++i) launch();
    return monotonic_ns() - t0;
  }
  /// One sample: [flush] -> clock -> batch launches -> clock. Returns ns of the batch.
  uint64_t sample(const std::function<void()>& launch, uint64_t batch, uint64_t /*id*/, bool cold,
                  std::string* /*warning*/) {
    if (cold) flush();
    const uint64_t t0 = monotonic_ns();
    for (uint64_t i = 0; i < batch; ++i) launch();
    return monotonic_ns() - t0;
  }

 private:
  uint64_t m_llc = 0;
  std::vector<unsigned char> m_flush;
  uint64_t m_flush_round = 0;
  volatile uint64_t m_sink = 0;
};

}  // namespace detail
}  // namespace bench
}  // namespace magpie
