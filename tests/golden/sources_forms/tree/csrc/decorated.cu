// Fixture: __launch_bounds__ and macros between __global__ and the kernel name.
#define KERNEL_ATTRS __attribute__((visibility("default")))
#define C10_LAUNCH_BOUNDS_1(n) __launch_bounds__(n)

namespace demo {

static __global__ __launch_bounds__(256, 1) void topk_per_row_kernel(const float* logits, int* out, int n) {
  out[0] = n;
}

__global__ void __launch_bounds__(128) block_reduce_kernel(float* out, const float* in) { out[0] = in[0]; }

__global__ void C10_LAUNCH_BOUNDS_1(512) bounded_copy_kernel(float* out, const float* in, int n) {
  out[n] = in[n];
}

__global__ void KERNEL_ATTRS scale_kernel(float* x, float s) { x[0] *= s; }

__global__ void GEMV_BF16(const void* a, const void* b, void* c) {}

template <typename T,
          int BLOCK,
          bool HAS_BIAS>
__global__ void
__launch_bounds__(BLOCK)
bias_add_kernel(T* out,
                const T* in,
                const T* bias) {
  out[0] = in[0];
}

}  // namespace demo
