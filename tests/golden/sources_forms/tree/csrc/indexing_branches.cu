// Fixture: code duplicated under #if/#else opens a brace in each branch; #if 0 hides code.
namespace at::native {
namespace {

void launch_index(bool accumulate, int n) {
#ifdef USE_ROCM
  if (accumulate && n > 0) {
#else
  if (accumulate) {
#endif
    n += 1;
  }
#if 0
  namespace stale {
  __global__ void stale_kernel(float* x) {
#endif
}

}  // namespace
}  // namespace at::native

namespace at::native {
namespace {

template <typename T, typename IndexType, int DstDim>
__global__ void indexSelectSmallIndex(T* dst, const T* src, const long* indices, IndexType n) {
  dst[0] = src[indices[0]];
}

}  // namespace
}  // namespace at::native
