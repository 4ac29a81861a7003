// magpie::bench GPU backend (CUDA; HIP shares the code through the API-prefix macro and is
// unverified on hardware). Included by <magpie/bench.hpp> when compiled by nvcc / hipcc, or
// by a host compiler with MAGPIE_BENCH_CUDA defined (then without the blocking kernel).
//
// One sample: [L2 flush: a read of the flush buffer] -> [blocking kernel, spinning on a
// host-mapped flag] -> magpie_cupti_begin(id) -> start event -> batch launches -> stop event
// -> release the flag -> synchronise -> magpie_cupti_end(id). The blocking kernel holds the
// stream until every launch of the batch is queued, so launch overhead is not timed.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <string>

#if defined(__HIPCC__)
#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#define MAGPIE_BENCH_GPU_API(x) hip##x
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define MAGPIE_BENCH_GPU_API(x) cuda##x
#endif

#include "bench_detail.hpp"

namespace magpie {
namespace bench {

using gpu_stream_t = MAGPIE_BENCH_GPU_API(Stream_t);

namespace detail {
inline gpu_stream_t& stream_slot() {
  static gpu_stream_t s = nullptr;
  return s;
}
}  // namespace detail

/// The stream every launch must use: kernel<<<grid, block, 0, magpie::bench::stream()>>>.
/// It is a blocking stream, so work a candidate puts on the legacy default stream is still
/// ordered (and timed) with it.
inline gpu_stream_t stream() { return detail::stream_slot(); }

template <>
struct type_info<__half> {
  using storage = __half;
  static constexpr dtype dt = dtype::float16;
  static storage convert(double v) {
    const uint16_t bits = detail::float_to_half_bits(static_cast<float>(v));
    storage s;
    std::memcpy(static_cast<void*>(&s), &bits, 2);
    return s;
  }
};
#if defined(__HIPCC__)
using gpu_bfloat16 = __hip_bfloat16;
#else
using gpu_bfloat16 = __nv_bfloat16;
#endif
template <>
struct type_info<gpu_bfloat16> {
  using storage = gpu_bfloat16;
  static constexpr dtype dt = dtype::bfloat16;
  static storage convert(double v) {
    const uint16_t bits = detail::float_to_bf16_bits(static_cast<float>(v));
    storage s;
    std::memcpy(static_cast<void*>(&s), &bits, 2);
    return s;
  }
};

namespace detail {

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MAGPIE_BENCH_HAVE_BLOCKING_KERNEL 1
/// Spins until the host sets *release, or until `timeout_ticks` of the device's global
/// timer (CUDA: %globaltimer ns; HIP: wall_clock64 ticks) pass, then sets *timed_out.
template <int Unused>
__global__ void spin_until_released(volatile int* release, volatile int* timed_out, unsigned long long timeout_ticks) {
  auto now = []() -> unsigned long long {
#if defined(__HIPCC__)
    return wall_clock64();
#else
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#endif
  };
  const unsigned long long t0 = now();
  while (*release == 0) {
    if (now() - t0 > timeout_ticks) {
      *timed_out = 1;
      break;
    }
  }
}
/// Reads every 16-byte word of the flush buffer (grid-stride). Reading, not writing, leaves
/// the L2 holding clean lines of the flush buffer: the timed kernel then pays no write-back of
/// dirty lines, as after ncu's cache flush (a memset flush left ~60 MB dirty on an H200 and
/// made kernels ~14% slower than ncu measured them).
template <int Unused>
__global__ void read_flush_buffer(const uint4* buf, unsigned long long n, unsigned int* sink) {
  unsigned int acc = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const uint4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // practically never true; keeps the loads alive
}
#endif

inline void gpu_check(MAGPIE_BENCH_GPU_API(Error_t) e, const char* what) {
  if (e != MAGPIE_BENCH_GPU_API(Success))
    throw error(std::string(what) + ": " + MAGPIE_BENCH_GPU_API(GetErrorName)(e) + " (" +
                MAGPIE_BENCH_GPU_API(GetErrorString)(e) + ")");
}

class gpu_backend {
 public:
#if defined(__HIPCC__)
  static constexpr const char* platform = "hip";
  static constexpr const char* timer = "hip_events";
#else
  static constexpr const char* platform = "cuda";
  static constexpr const char* timer = "cuda_events";
#endif
  gpu_backend() = default;
  gpu_backend(const gpu_backend&) = delete;
  gpu_backend& operator=(const gpu_backend&) = delete;
  ~gpu_backend() {
    if (!m_ready) return;
    if (m_flush) MAGPIE_BENCH_GPU_API(Free)(m_flush);
    if (m_host_flags) free_host(m_host_flags);
    MAGPIE_BENCH_GPU_API(EventDestroy)(m_start);
    MAGPIE_BENCH_GPU_API(EventDestroy)(m_stop);
    MAGPIE_BENCH_GPU_API(StreamDestroy)(m_stream);
    stream_slot() = nullptr;
  }

  void init() {
    m_device = static_cast<int>(env_u64("MAGPIE_BENCH_DEVICE", 0));
    gpu_check(MAGPIE_BENCH_GPU_API(SetDevice)(m_device), "set device");
    gpu_check(MAGPIE_BENCH_GPU_API(Free)(nullptr), "create context");
    int l2 = 0;
#if defined(__HIPCC__)
    hipDeviceProp_t prop;
    gpu_check(hipGetDeviceProperties(&prop, m_device), "device properties");
    gpu_check(hipDeviceGetAttribute(&l2, hipDeviceAttributeL2CacheSize, m_device), "L2 size");
    int khz = 0;
    gpu_check(hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, m_device), "wall clock rate");
    m_ticks_per_ms = static_cast<unsigned long long>(khz > 0 ? khz : 100000);
#else
    cudaDeviceProp prop;
    gpu_check(cudaGetDeviceProperties(&prop, m_device), "device properties");
    gpu_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, m_device), "L2 size");
    m_ticks_per_ms = 1000000ull;  // %globaltimer counts ns
#endif
    m_name = std::string(platform) + ":" + std::to_string(m_device) + " " + prop.name;
    m_l2 = static_cast<uint64_t>(l2 > 0 ? l2 : 0);
    gpu_check(MAGPIE_BENCH_GPU_API(StreamCreate)(&m_stream), "create stream");
    stream_slot() = m_stream;
    gpu_check(MAGPIE_BENCH_GPU_API(EventCreate)(&m_start), "create event");
    gpu_check(MAGPIE_BENCH_GPU_API(EventCreate)(&m_stop), "create event");
    m_timeout_ms = env_u64("MAGPIE_BENCH_BLOCK_TIMEOUT_MS", 5000);
#if defined(MAGPIE_BENCH_HAVE_BLOCKING_KERNEL)
    gpu_check(alloc_mapped(&m_host_flags, 2 * sizeof(int)), "allocate mapped flag");
    gpu_check(MAGPIE_BENCH_GPU_API(HostGetDevicePointer)(reinterpret_cast<void**>(&m_dev_flags), m_host_flags, 0),
              "map flag");
    m_blocking = env_u64("MAGPIE_BENCH_BLOCKING_KERNEL", 1) != 0;
#endif
    m_ready = true;
  }

  std::string device_name() const { return m_name; }
  uint64_t cache_bytes() const { return m_l2; }
  /// 2 x L2 (at least 64 MiB when the L2 size is unknown).
  uint64_t default_flush_bytes() const { return m_l2 ? 2 * m_l2 : (64ull << 20); }
  bool blocking_kernel() const { return m_blocking; }

  void* alloc(size_t bytes) {
    void* p = nullptr;
    gpu_check(MAGPIE_BENCH_GPU_API(Malloc)(&p, bytes ? bytes : 1), "device allocation");
    return p;
  }
  void release(void* p) { MAGPIE_BENCH_GPU_API(Free)(p); }
  /// Device memory: inputs are generated on the host and uploaded.
  void* host_pointer(void*) const { return nullptr; }
  void upload(void* dst, const void* src, size_t bytes) {
    gpu_check(MAGPIE_BENCH_GPU_API(Memcpy)(dst, src, bytes, MAGPIE_BENCH_GPU_API(MemcpyHostToDevice)), "upload");
  }
  void download(void* dst, const void* src, size_t bytes) {
    gpu_check(MAGPIE_BENCH_GPU_API(DeviceSynchronize)(), "synchronise before download");
    gpu_check(MAGPIE_BENCH_GPU_API(Memcpy)(dst, src, bytes, MAGPIE_BENCH_GPU_API(MemcpyDeviceToHost)), "download");
  }
  void fill(void* dst, int byte, size_t bytes) {
    gpu_check(MAGPIE_BENCH_GPU_API(MemsetAsync)(dst, byte, bytes, m_stream), "memset");
    gpu_check(MAGPIE_BENCH_GPU_API(StreamSynchronize)(m_stream), "memset");
  }
  /// After a launch: launch-configuration errors, then errors of the kernel itself.
  void check(const char* what) {
    gpu_check(MAGPIE_BENCH_GPU_API(GetLastError)(), what);
    gpu_check(MAGPIE_BENCH_GPU_API(DeviceSynchronize)(), what);
    gpu_check(MAGPIE_BENCH_GPU_API(GetLastError)(), what);
  }

  void set_flush(uint64_t bytes) {
    if (m_flush) MAGPIE_BENCH_GPU_API(Free)(m_flush);
    m_flush = nullptr;
    m_flush_bytes = bytes;
    if (bytes) m_flush = alloc(static_cast<size_t>(bytes));
  }
  uint64_t flush_bytes() const { return m_flush_bytes; }
  /// Evicts the L2 on the stream (asynchronous, ordered before the next launch): a read of
  /// the whole flush buffer when device code can be compiled here, else a memset.
  void flush() {
    if (!m_flush) return;
#if defined(MAGPIE_BENCH_HAVE_BLOCKING_KERNEL)
    const unsigned long long words = m_flush_bytes / sizeof(uint4);
    read_flush_buffer<0><<<1024, 256, 0, m_stream>>>(static_cast<const uint4*>(m_flush), words,
                                                     reinterpret_cast<unsigned int*>(static_cast<char*>(m_flush)));
    gpu_check(MAGPIE_BENCH_GPU_API(GetLastError)(), "L2 flush");
#else
    gpu_check(MAGPIE_BENCH_GPU_API(MemsetAsync)(m_flush, 0, m_flush_bytes, m_stream), "L2 flush");
#endif
  }

  /// Finds magpie_cupti_begin/end in the injection library if the driver loaded it.
  void attach_markers() {
    const char* lib = env_str("MAGPIE_CUPTI_LIB");
    if (!lib) return;
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
      std::fprintf(stderr, "magpie-bench: warning: MAGPIE_CUPTI_LIB=%s is not loaded in this process "
                           "(is CUDA_INJECTION64_PATH set?); no CUPTI sample marks\n", lib);
      return;
    }
    m_begin = reinterpret_cast<void (*)(uint64_t)>(::dlsym(h, "magpie_cupti_begin"));
    m_end = reinterpret_cast<void (*)(uint64_t)>(::dlsym(h, "magpie_cupti_end"));
    m_flush_all = reinterpret_cast<void (*)()>(::dlsym(h, "magpie_cupti_flush"));
    if (!m_begin || !m_end) m_begin = nullptr, m_end = nullptr;
  }
  bool has_markers() const { return m_begin != nullptr; }
  void finish() {
    MAGPIE_BENCH_GPU_API(DeviceSynchronize)();
    if (m_flush_all) m_flush_all();
  }

  /// n launches between two events; total ns.
  uint64_t warmup(const std::function<void()>& launch, uint64_t n) {
    gpu_check(MAGPIE_BENCH_GPU_API(EventRecord)(m_start, m_stream), "record event");
    for (uint64_t i = 0; i < n; ++i) launch();
    gpu_check(MAGPIE_BENCH_GPU_API(EventRecord)(m_stop, m_stream), "record event");
    check("warm-up launch");
    return elapsed_ns();
  }

  uint64_t sample(const std::function<void()>& launch, uint64_t batch, uint64_t id, bool cold, std::string* warning) {
    if (cold) flush();
    const bool blocking = start_blocking();
    if (m_begin) m_begin(id);
    gpu_check(MAGPIE_BENCH_GPU_API(EventRecord)(m_start, m_stream), "record event");
    try {
      for (uint64_t i = 0; i < batch; ++i) launch();
      gpu_check(MAGPIE_BENCH_GPU_API(EventRecord)(m_stop, m_stream), "record event");
    } catch (...) {
      if (blocking) release_blocking();
      throw;
    }
    if (blocking) release_blocking();
    check("launch");
    if (m_end) m_end(id);
    if (blocking && reinterpret_cast<volatile int*>(m_host_flags)[1] != 0) {
      *warning = "blocking_kernel timeout after " + std::to_string(m_timeout_ms) +
                 " ms (the launch synchronised, or the batch overflowed the launch queue): this sample "
                 "includes launch overhead; blocking kernel disabled for the remaining samples";
      m_blocking = false;
    }
    return elapsed_ns();
  }

 private:
  static MAGPIE_BENCH_GPU_API(Error_t) alloc_mapped(int** p, size_t bytes) {
#if defined(__HIPCC__)
    return hipHostMalloc(reinterpret_cast<void**>(p), bytes, hipHostMallocMapped);
#else
    return cudaHostAlloc(reinterpret_cast<void**>(p), bytes, cudaHostAllocMapped);
#endif
  }
  static void free_host(void* p) {
#if defined(__HIPCC__)
    hipHostFree(p);
#else
    cudaFreeHost(p);
#endif
  }

  bool start_blocking() {
#if defined(MAGPIE_BENCH_HAVE_BLOCKING_KERNEL)
    if (!m_blocking) return false;
    reinterpret_cast<volatile int*>(m_host_flags)[0] = 0;
    reinterpret_cast<volatile int*>(m_host_flags)[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    detail::spin_until_released<0><<<1, 1, 0, m_stream>>>(m_dev_flags, m_dev_flags + 1, m_timeout_ms * m_ticks_per_ms);
    gpu_check(MAGPIE_BENCH_GPU_API(GetLastError)(), "blocking kernel launch");
    return true;
#else
    return false;
#endif
  }
  void release_blocking() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    reinterpret_cast<volatile int*>(m_host_flags)[0] = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  uint64_t elapsed_ns() {
    gpu_check(MAGPIE_BENCH_GPU_API(EventSynchronize)(m_stop), "event synchronise");
    float ms = 0;
    gpu_check(MAGPIE_BENCH_GPU_API(EventElapsedTime)(&ms, m_start, m_stop), "event elapsed time");
    return static_cast<uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
  }

  bool m_ready = false;
  int m_device = 0;
  std::string m_name;
  uint64_t m_l2 = 0;
  gpu_stream_t m_stream = nullptr;
  MAGPIE_BENCH_GPU_API(Event_t) m_start = nullptr;
  MAGPIE_BENCH_GPU_API(Event_t) m_stop = nullptr;
  void* m_flush = nullptr;
  uint64_t m_flush_bytes = 0;
  int* m_host_flags = nullptr;
  int* m_dev_flags = nullptr;
  bool m_blocking = false;
  uint64_t m_timeout_ms = 5000;
  unsigned long long m_ticks_per_ms = 1000000ull;
  void (*m_begin)(uint64_t) = nullptr;
  void (*m_end)(uint64_t) = nullptr;
  void (*m_flush_all)() = nullptr;
};

}  // namespace detail
}  // namespace bench
}  // namespace magpie

#undef MAGPIE_BENCH_GPU_API
