// Kernels shared by the CUPTI-vs-ncu investigation programs (cupti_vs_ncu.cu, cvn_idle.cu).
#pragma once
#include <cuda_runtime.h>

/// The timed kernel: c = a + b over n fp32 elements.
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
/// magpie's cold flush: reads every 16-byte word of buf (n words) with 1024x256 threads.
__global__ void read_buf(const uint4* buf, unsigned long long n, unsigned int* sink) {
  unsigned int acc = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 1024ull * 256)
    acc ^= buf[i].x ^ buf[i].y ^ buf[i].z ^ buf[i].w;
  if (acc == 0x9e3779b9u) *sink = acc;
}
/// The GPU's global timer, ns.
__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// Holds one SM for ns nanoseconds (as magpie's blocking kernel holds the stream).
__global__ void spin(unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}
