// Fixture: kernels defined by macro expansion (token pasting), used from another file.
#pragma once

#define DEFINE_ACT_KERNEL(name, expr)                                       \
  __global__ void name##_act_kernel(float* out, const float* in, int n) {  \
    int i = threadIdx.x;                                                    \
    if (i < n) out[i] = (expr);                                             \
  }
