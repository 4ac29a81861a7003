// CUPTI-vs-ncu investigation, part 2 (issue 36): does the GPU's idle time between magpie's
// `flush` reply and its `sample` command, or CUPTI's own activity recording, explain the 2-5%
// that magpie's CUPTI median reads above ncu's gpu__time_duration for a 16M fp32 vector add?
//   cvn_idle <gap_us> <spin_us> <cupti: none|conc> [reps]
// Each repetition: read flush of 2x L2; if gap_us >= 0: synchronise and sleep gap_us on the host
// (the supervisor's round trip between `flush` and `sample`); a spin kernel of spin_us (magpie's
// blocking kernel holds the stream about that long); a 2 us kernel that measures the SM clock
// (clock64 cycles per globaltimer ns); the add between two events. With cupti=conc the add's
// duration is also read from CUPTI's concurrent-kernel records, as libmagpie_cupti does.
// Prints: gap_us spin_us cupti event_median_us cupti_median_us sm_clock_mhz_median (medians of
// reps after 5 warm-ups). Under ncu, run with reps small.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cvn_kernels.cuh"

// SM clock in MHz over ~2 us: cycles of clock64 per ns of globaltimer, times 1000.
__global__ void sm_clock(float* mhz) {
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t = t0;
  while (t - t0 < 2000) t = global_ns();
  const long long c1 = clock64();
  *mhz = 1000.0f * static_cast<float>(c1 - c0) / static_cast<float>(t - t0);
}

static std::vector<double> g_cupti_us;
static void CUPTIAPI buffer_requested(uint8_t** buf, size_t* size, size_t* max_records) {
  *size = 8u << 20;
  *buf = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    if (k->name && std::strstr(k->name, "vadd")) g_cupti_us.push_back((k->end - k->start) / 1000.0);
  }
  std::free(buf);
}

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: cvn_idle <gap_us|-1> <spin_us> <none|conc> [reps]\n");
    return 2;
  }
  const long gap_us = std::atol(argv[1]);
  const unsigned long long spin_us = std::strtoull(argv[2], nullptr, 10);
  const bool cupti = std::string(argv[3]) == "conc";
  const int reps = argc > 4 ? std::atoi(argv[4]) : 300;
  if (cupti) {
    cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
  const int n = 1 << 24;
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  const size_t fb = 2ull * static_cast<size_t>(l2);
  float *a, *b, *c, *mhz_dev;
  void* flush;
  cudaMalloc(&a, n * 4ull);
  cudaMalloc(&b, n * 4ull);
  cudaMalloc(&c, n * 4ull);
  cudaMalloc(&flush, fb);
  cudaMalloc(&mhz_dev, sizeof(float) * (reps + 5));
  cudaMemset(a, 0x3f, n * 4ull);
  cudaMemset(b, 0x40, n * 4ull);
  cudaMemset(flush, 1, fb);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> ev_us;
  for (int r = 0; r < reps + 5; ++r) {
    read_buf<<<1024, 256>>>(static_cast<const uint4*>(flush), fb / 16, static_cast<unsigned int*>(flush));
    if (gap_us >= 0) {
      cudaDeviceSynchronize();
      if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
    }
    if (spin_us > 0) spin<<<1, 1>>>(spin_us * 1000ull);
    sm_clock<<<1, 1>>>(mhz_dev + r);
    cudaEventRecord(e0);
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 5) ev_us.push_back(ms * 1000.0);
  }
  std::vector<float> mhz_host(reps + 5);
  cudaMemcpy(mhz_host.data(), mhz_dev, sizeof(float) * (reps + 5), cudaMemcpyDeviceToHost);
  std::vector<double> mhz(mhz_host.begin() + 5, mhz_host.end());
  if (cupti) {
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (g_cupti_us.size() > 5) g_cupti_us.erase(g_cupti_us.begin(), g_cupti_us.begin() + 5);
  }
  std::printf("%ld %llu %s %.2f %.2f %.0f\n", gap_us, spin_us, cupti ? "conc" : "none", median(ev_us),
              median(g_cupti_us), median(mhz));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
