// ATen-like TensorIterator loop (look-alike): the primary definition.
#pragma once

namespace at {
namespace native {

template <int nt, int vt, typename func_t>
C10_LAUNCH_BOUNDS_2(nt, 4)
__global__ void elementwise_kernel(int N, func_t f) {
  int idx = nt * vt * blockIdx.x + threadIdx.x;
#pragma unroll
  for (int i = 0; i < vt; i++) {
    if (idx < N) f(idx);
    idx += nt;
  }
}

}  // namespace native
}  // namespace at
