// Fixture: extern "C" kernels keep their plain names in traces.
extern "C" __global__ void saxpy_c(int n, float a, const float* x, float* y) { y[0] = a * x[0]; }

extern "C" {
__global__ void daxpy_c(int n, double a, const double* x, double* y) { y[0] = a * x[0]; }
}

namespace demo {
__global__ void after_extern_block_kernel(float* x) { x[0] = 0; }
}  // namespace demo
