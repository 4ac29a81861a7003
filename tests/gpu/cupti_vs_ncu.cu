// CUPTI-vs-ncu investigation (issue 19): a 16M-element fp32 vector add timed with CUDA events
// under the pre-conditions that differ between magpie's cold sample and ncu's replay.
//   cupti_vs_ncu <condition> [reps]
// conditions: warm (back to back), read_flush (magpie: read a 2xL2 buffer first),
// read_flush_idle (read flush, synchronise, 2 ms idle), write_flush (memset the buffer: dirty
// lines), read_flush_spin (read flush, 50 us spin kernel, then the add, as magpie's blocking
// kernel does), read_flush_tlb (read flush, then a kernel touching one word per 64 KiB of a, b
// and c: warms address translation and moves <0.5 MB: if this closes the gap to ncu, the gap
// is translation misses, not cache contents). Prints "condition median_us p10_us p90_us". Under ncu it runs 5 launches.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cvn_kernels.cuh"

__global__ void touch(float* a, float* b, float* c, int n) {  // one word per 64 KiB of each buffer
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 16384;
  if (i < n) {
    float x = a[i] + b[i];
    if (x == 1234.5f) c[i] = x;
    else asm volatile("" ::"f"(c[i]));
  }
}
int main(int argc, char** argv) {
  const std::string cond = argc > 1 ? argv[1] : "read_flush";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 300;
  const int n = 1 << 24;
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  const size_t fb = 2ull * static_cast<size_t>(l2);
  float *a, *b, *c;
  void* flush;
  cudaMalloc(&a, n * 4ull);
  cudaMalloc(&b, n * 4ull);
  cudaMalloc(&c, n * 4ull);
  cudaMalloc(&flush, fb);
  cudaMemset(a, 0x3f, n * 4ull);  // 0.747f, not zeros
  cudaMemset(b, 0x40, n * 4ull);  // 3.0f
  cudaMemset(flush, 1, fb);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> us;
  for (int r = 0; r < reps + 5; ++r) {
    if (cond != "warm") {
      if (cond == "write_flush") cudaMemsetAsync(flush, r & 0xFF, fb);
      else read_buf<<<1024, 256>>>(static_cast<const uint4*>(flush), fb / 16, static_cast<unsigned int*>(flush));
    }
    if (cond == "read_flush_idle") {
      cudaDeviceSynchronize();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (cond == "read_flush_spin") spin<<<1, 1>>>(50000);
    if (cond == "read_flush_tlb") touch<<<(n / 16384 + 255) / 256, 256>>>(a, b, c, n);
    cudaEventRecord(e0);
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 5) us.push_back(ms * 1000);
  }
  std::sort(us.begin(), us.end());
  std::printf("%s %.2f %.2f %.2f\n", cond.c_str(), us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
