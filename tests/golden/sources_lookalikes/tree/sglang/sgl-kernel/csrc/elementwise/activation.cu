// SGLang-like HIP activation (look-alike). Its trace name uses clang's `Tn` mangling for the
// ACT_FN template parameter, which no available demangler reads.
namespace sgl_hip {
namespace activation {

template <typename T, T (*ACT_FN)(const T&)>
__global__ void act_and_mul_kernel(T* __restrict__ out, const T* __restrict__ input, const int d) {
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[blockIdx.x * d + i] = ACT_FN(input[i]) * input[d + i];
}

}  // namespace activation
}  // namespace sgl_hip
