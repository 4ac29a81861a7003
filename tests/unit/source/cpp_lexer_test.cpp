#include "source/cpp_lexer.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/fs.h"
#include "source/repo_index.h"

namespace magpie::source {
namespace {

std::vector<kernel_definition> scan(const char* src) {
  std::vector<kernel_definition> defs;
  scan_cpp_source(src, &defs);
  return defs;
}

TEST(CppLexer, TemplateArgumentsCountAngleBracketsOutsideParenthesesOnly) {
  std::string_view s = "<(width > 0) && conv<T>::exists> name(";
  EXPECT_EQ(skip_template_args(s, 0, 1000), s.find(" name"));
  EXPECT_EQ(skip_template_args("<a; b>", 0, 100), std::string_view::npos);  // a comparison, not a template
  EXPECT_EQ(skip_template_args("<vector<int>>", 0, 100), 13u);
}

TEST(CppLexer, DeadBranchesAreBlankedAndConditionalsListed) {
  const char* src = "#if 0\nint dead_a;\n#else\nint live_b;\n#endif\n#if 1\nint live_c;\n#else\nint dead_d;\n#endif\n";
  lexed_cpp lx = lex_cpp(src);
  EXPECT_EQ(lx.code.find("dead_a"), std::string::npos);
  EXPECT_EQ(lx.code.find("dead_d"), std::string::npos);
  EXPECT_NE(lx.code.find("live_b"), std::string::npos);
  EXPECT_NE(lx.code.find("live_c"), std::string::npos);
  ASSERT_EQ(lx.conditionals.size(), 6u);
  EXPECT_TRUE(lx.conditionals[0].dead);
  EXPECT_FALSE(lx.conditionals[1].dead);  // #else of #if 0
  EXPECT_TRUE(lx.conditionals[4].dead);   // #else of #if 1
  EXPECT_EQ(lx.code.size(), std::string_view(src).size());
}

TEST(CppLexer, KernelMacrosWithTokenPasting) {
  const char* src =
      "#define DEFINE_K(suffix, ty) \\\n  __global__ void __launch_bounds__(256) k_##suffix##_impl(ty* x) { }\n"
      "#define NAMED(name) template <typename T> __global__ void name(T* x, int n);\n"
      "#define NOT_A_KERNEL(x) static int x = 0;\n"
      "#define OBJECT_LIKE __global__ void fixed(int)\n";
  lexed_cpp lx = lex_cpp(src);
  ASSERT_EQ(lx.macros.size(), 2u);
  const kernel_macro& k = lx.macros[0];
  EXPECT_EQ(k.name, "DEFINE_K");
  EXPECT_EQ(k.line, 1);
  EXPECT_EQ(k.param_count, 1);
  EXPECT_TRUE(k.defines_body);
  EXPECT_EQ(expand_kernel_name(k, {"sum_f32", "float"}), "k_sum_f32_impl");
  EXPECT_EQ(expand_kernel_name(k, {"a+b", "float"}), "");  // not an identifier fragment
  EXPECT_EQ(expand_kernel_name(k, {}), "");
  const kernel_macro& n = lx.macros[1];
  EXPECT_EQ(n.line, 3);
  EXPECT_FALSE(n.defines_body);
  EXPECT_EQ(n.param_count, 2);
  EXPECT_EQ(expand_kernel_name(n, {"  my_kernel "}), "my_kernel");
}

TEST(CppScanner, SfinaeReturnTypesAndAllCapsNames) {
  auto defs = scan(R"(namespace vllm {
template <typename scalar_t, int width>
__global__ std::enable_if_t<(width > 0) && _typeConvert<scalar_t>::exists>
fused_add(scalar_t* in, int n) { }
template <typename T, int N>
__global__ typename std::enable_if<(N > 1), void>::type
pairwise(T* out) { }
__global__ void GEMV_BF16(const void* a) { }
__global__ void __launch_bounds__(64) LOWER_after_bounds(int) { }
}
)");
  ASSERT_EQ(defs.size(), 4u);
  EXPECT_EQ(defs[0].symbol, "fused_add");
  EXPECT_EQ(defs[0].line, 4);
  EXPECT_EQ(defs[0].return_type, "std::enable_if_t<(width > 0) && _typeConvert<scalar_t>::exists>");
  EXPECT_EQ(defs[0].scopes, std::vector<std::string>{"vllm"});
  EXPECT_EQ(defs[1].symbol, "pairwise");
  EXPECT_EQ(defs[1].return_type, "typename std::enable_if<(N > 1), void>::type");
  EXPECT_EQ(defs[2].symbol, "GEMV_BF16");
  EXPECT_EQ(defs[2].return_type, "void");
  EXPECT_EQ(defs[3].symbol, "LOWER_after_bounds");
}

TEST(CppScanner, NamespacesSurviveBracesDuplicatedUnderIfElse) {
  auto defs = scan(R"(namespace at::native {
namespace {
void launch(bool a) {
#ifdef USE_ROCM
  if (a && true) {
#elif defined(OTHER)
  if (a || false) {
#else
  if (a) {
#endif
    run();
  }
}
#ifdef USE_ROCM
__global__ void rocm_only(int) { }
#else
__global__ void cuda_only(int) { }
#endif
#if 0
namespace stale {
__global__ void never(int) { }
#endif
}  // namespace
}  // namespace at::native
namespace at::native {
__global__ void after(int) { }
}
)");
  ASSERT_EQ(defs.size(), 3u);
  std::vector<std::string> anon{"at", "native", "(anonymous namespace)"};
  EXPECT_EQ(defs[0].symbol, "rocm_only");
  EXPECT_EQ(defs[0].scopes, anon);
  EXPECT_EQ(defs[1].symbol, "cuda_only");
  EXPECT_EQ(defs[1].scopes, anon);
  EXPECT_EQ(defs[2].symbol, "after");
  EXPECT_EQ(defs[2].scopes, (std::vector<std::string>{"at", "native"}));
}

TEST(CppScanner, DeclaratorSplitByIfElseReadsAsOneDeclaration) {
  auto defs = scan(R"(namespace tensorrt_llm::kernels {
template <int T>
__global__ void
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
__launch_bounds__(512, 4) quantize_block(
#else
quantize_block(
#endif
    int rows, int cols) {
}
}
)");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].symbol, "quantize_block");
  EXPECT_EQ(defs[0].line, 5);
  EXPECT_EQ(defs[0].param_count, 2);
  EXPECT_TRUE(defs[0].is_definition);
  EXPECT_EQ(defs[0].scopes, (std::vector<std::string>{"tensorrt_llm", "kernels"}));
}

TEST(CppScanner, SameFileMacroExpansions) {
  auto defs = scan(R"(struct Args {};
#define DEFINE_DEV(suffix) \
  __global__ void devKernel_##suffix(Args const args) { }
namespace nccl {
DEFINE_DEV(AllReduce_Sum_f32)
}
obj.DEFINE_DEV(NotAnInvocation)
DEFINE_DEV(x + y)
)");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].symbol, "devKernel_AllReduce_Sum_f32");
  EXPECT_EQ(defs[0].line, 5);
  EXPECT_EQ(defs[0].macro, "DEFINE_DEV");
  EXPECT_EQ(defs[0].macro_line, 2);
  EXPECT_EQ(defs[0].param_count, 1);
  EXPECT_EQ(defs[0].scopes, std::vector<std::string>{"nccl"});
}

TEST(RepoIndex, MacrosDefinedInOneFileExpandInAnother) {
  fs::path root = fs::temp_directory_path() / ("magpie_macro_" + std::to_string(::getpid()));
  fs::create_directories(root / "src");
  std::ofstream(root / "src/macros.cuh") << "#pragma once\n#define ACT(name) __global__ void name##_act(float* x) { }\n";
  std::ofstream(root / "src/acts.cu") << "#include \"macros.cuh\"\nnamespace demo {\nACT(gelu)\nACT(relu)\n}\n";
  auto idx = repo_index::build({root});
  ASSERT_TRUE(idx.ok()) << idx.get_status().to_string();
  auto gelu = idx->lookup("gelu_act");
  ASSERT_EQ(gelu.size(), 1u);
  EXPECT_EQ(gelu[0]->rel_path, fs::path("src/acts.cu"));
  EXPECT_EQ(gelu[0]->line, 3);
  EXPECT_EQ(gelu[0]->macro, "ACT");
  EXPECT_EQ(gelu[0]->macro_rel, fs::path("src/macros.cuh"));
  EXPECT_EQ(gelu[0]->macro_line, 2);
  EXPECT_EQ(gelu[0]->scopes, std::vector<std::string>{"demo"});
  EXPECT_EQ(idx->lookup("relu_act").size(), 1u);
  EXPECT_EQ(idx->stats().kernel_macros, 1u);
  fs::remove_all(root);
}

}  // namespace
}  // namespace magpie::source
