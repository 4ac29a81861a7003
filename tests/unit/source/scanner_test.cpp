#include <gtest/gtest.h>

#include "source/repo_index.h"

namespace magpie::source {
namespace {

TEST(CppScanner, FindsKernelsWithDecorationsNamespacesAndSkipsCommentsStrings) {
  const char* src = R"(// __global__ void in_comment(int);
/* __global__ void in_block_comment(int) { } */
#define DECLARE __global__ void in_macro(int)
const char* s = "__global__ void in_string(int) {}";
namespace at { namespace native {
namespace {
template <int N, typename T>
C10_LAUNCH_BOUNDS_1(128)
__global__ void first_kernel(T* out,
                             int n) {
  if (n > 0) { out[0] = T(); }
}
}  // namespace
__global__ __launch_bounds__(256, 2) void second_kernel() {}
__global__ void declared(int);
} }  // namespace at::native
extern "C" __global__ void c_kernel(float* a, float* b, int n) { }
__global__ void ns2::qualified_kernel(int) { }
)";
  std::vector<kernel_definition> defs;
  scan_cpp_source(src, &defs);
  ASSERT_EQ(defs.size(), 5u);
  EXPECT_EQ(defs[0].symbol, "first_kernel");
  EXPECT_EQ(defs[0].line, 9);
  EXPECT_EQ(defs[0].param_count, 2);
  ASSERT_EQ(defs[0].scopes.size(), 3u);
  EXPECT_EQ(defs[0].scopes[2], "(anonymous namespace)");
  EXPECT_TRUE(defs[0].is_definition);
  EXPECT_NE(defs[0].body_hash, 0u);
  EXPECT_EQ(defs[1].symbol, "second_kernel");
  EXPECT_EQ(defs[1].param_count, 0);
  EXPECT_EQ(defs[1].scopes.size(), 2u);
  EXPECT_EQ(defs[2].symbol, "declared");
  EXPECT_FALSE(defs[2].is_definition);
  EXPECT_EQ(defs[3].symbol, "c_kernel");
  EXPECT_TRUE(defs[3].scopes.empty());
  EXPECT_EQ(defs[3].line, 17);
  EXPECT_EQ(defs[4].symbol, "qualified_kernel");
  ASSERT_EQ(defs[4].scopes.size(), 1u);
  EXPECT_EQ(defs[4].scopes[0], "ns2");
}

TEST(CppScanner, NamedHostFunctionsAndClasses) {
  const char* src = R"(namespace at::native {
template <typename T>
struct MulFunctor {
  T operator()(T a, T b) const { return a * b; }
};
void neg_kernel_cuda(TensorIteratorBase& iter) {
  neg_kernel_cuda(iter);
}
void neg_kernel_cuda(TensorIteratorBase& iter);
REGISTER_DISPATCH(neg_stub, &neg_kernel_cuda);
}
)";
  std::vector<kernel_definition> defs;
  scan_cpp_named(src, {"MulFunctor", "neg_kernel_cuda"}, &defs);
  ASSERT_EQ(defs.size(), 2u);
  EXPECT_EQ(defs[0].symbol, "MulFunctor");
  EXPECT_EQ(defs[0].decorators, "class");
  EXPECT_EQ(defs[0].line, 3);
  EXPECT_EQ(defs[1].symbol, "neg_kernel_cuda");
  EXPECT_EQ(defs[1].decorators, "function");
  EXPECT_EQ(defs[1].line, 6);
  ASSERT_EQ(defs[1].scopes.size(), 2u);
}

TEST(CppScanner, UnterminatedInputsDoNotHang) {
  std::vector<kernel_definition> defs;
  scan_cpp_source("__global__ void broken(int a, ", &defs);
  scan_cpp_source("/* never closed __global__ void x() {}", &defs);
  scan_cpp_source("\"never closed __global__ void y() {}", &defs);
  scan_cpp_source(std::string(1 << 20, '{'), &defs);
  scan_cpp_source(std::string(1 << 20, '}'), &defs);
  EXPECT_TRUE(defs.empty());
}

TEST(CppScanner, SignatureShapesOfKernels) {
  const char* src = R"(
namespace vllm {
struct Params { int n; };
template <typename scalar_t, typename cache_t, bool IS_NEOX>
__global__ void rope(const int64_t* __restrict__ pos, scalar_t* q, const int rot_dim, const bool inverse) {}
template <int nt, int vt, typename func_t>
C10_LAUNCH_BOUNDS_2(nt, 4)
__global__ void loop(int N, func_t f) { f(N); }
template <typename T, typename std::enable_if<(sizeof(T) > 2), int>::type = 0>
#if defined(USE_ROCM)
__launch_bounds__(256)
#endif
__global__ void wide(T* out, float eps, unsigned long long n) {}
template <> __global__ void spec<float, 4>(float* x) {}
__global__ void plain(double d, Params p) {}
template <typename... Ts> __global__ void variadic(int n, Ts... args) {}
__global__ void from_macro(KERNEL_ARGS) {}
}  // namespace vllm
)";
  std::vector<kernel_definition> defs;
  scan_cpp_source(src, &defs);
  ASSERT_EQ(defs.size(), 7u);
  auto shape = [&](size_t i) { return defs[i].template_shape + "|" + defs[i].param_shape; };
  EXPECT_EQ(defs[0].symbol, "rope");
  EXPECT_TRUE(defs[0].shape_known);
  EXPECT_EQ(shape(0), "TTV|ppib");
  EXPECT_EQ(shape(1), "VVT|i?");  // the template head before a launch-bounds macro
  EXPECT_EQ(shape(2), "TV|pfi");  // enable_if parameter is a value; #if lines between head and __global__
  EXPECT_EQ(defs[3].symbol, "spec");
  EXPECT_EQ(shape(3), "?V|p");  // explicit specialisation arguments, not the empty template <>
  EXPECT_EQ(shape(4), "|f?");
  EXPECT_EQ(shape(5), ".|i.");
  EXPECT_FALSE(defs[6].shape_known);  // a macro may stand for several parameters
  EXPECT_TRUE(defs[5].shape_known);
}

TEST(PythonScanner, TritonDecoratorsAcrossLinesAndStrings) {
  const char* src = R"(import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"B": 1})],
    key=["n"],
)
@triton.jit
def tuned_kernel(x_ptr, n,
                 B: tl.constexpr):
    pass

@jit
def bare_jit(x):
    pass

def not_a_kernel(x):
    pass

@functools.lru_cache
def cached():
    pass

code = async_compile.triton('k', '''
@triton.jit
def embedded(in_ptr0, xnumel, XBLOCK : tl.constexpr):
    x = 1
''')
)";
  std::vector<kernel_definition> defs;
  scan_python_source(src, &defs);
  ASSERT_EQ(defs.size(), 3u);
  EXPECT_EQ(defs[0].symbol, "tuned_kernel");
  EXPECT_EQ(defs[0].line, 9);
  EXPECT_EQ(defs[0].decorators, "triton.autotune,triton.jit");
  EXPECT_EQ(defs[0].param_count, 3);
  EXPECT_FALSE(defs[0].in_string);
  EXPECT_EQ(defs[1].symbol, "bare_jit");
  EXPECT_EQ(defs[2].symbol, "embedded");
  EXPECT_TRUE(defs[2].in_string);
  EXPECT_EQ(defs[2].line, 26);
}

TEST(RootVariable, UpperCasedDirectoryName) {
  EXPECT_EQ(root_variable_for("/src/pytorch"), "$PYTORCH_DIR");
  EXPECT_EQ(root_variable_for("/src/flash-attention/"), "$FLASH_ATTENTION_DIR");
  EXPECT_EQ(root_variable_for("rocm-libraries"), "$ROCM_LIBRARIES_DIR");
}

}  // namespace
}  // namespace magpie::source
