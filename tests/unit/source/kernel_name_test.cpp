#include "source/kernel_name.h"

#include <gtest/gtest.h>

#include <string>

namespace magpie::source {
namespace {

TEST(KernelName, DemanglesItaniumNames) {
  EXPECT_EQ(demangle("_Z3fooPfi"), "foo(float*, int)");
  EXPECT_EQ(demangle("__Z3fooPfi"), "foo(float*, int)");
  EXPECT_EQ(demangle("_Z3fooPfi.kd"), "foo(float*, int)");
  EXPECT_EQ(demangle("_ZN5aiter10rms_norm_fEv"), "aiter::rms_norm_f()");
  EXPECT_EQ(demangle("not_mangled"), "not_mangled");
  EXPECT_EQ(demangle("_Zgarbage!"), "_Zgarbage!");  // failed demangle → unchanged
}

TEST(KernelName, StripsCloneSuffixes) {
  EXPECT_EQ(strip_clone_suffixes("void foo(int) [clone .kd]"), "void foo(int)");
  EXPECT_EQ(strip_clone_suffixes("_Z3foov.constprop.0"), "_Z3foov");
  EXPECT_EQ(strip_clone_suffixes("kernel.kd"), "kernel");
  EXPECT_EQ(strip_clone_suffixes("foo(int) [clone .isra.0]"), "foo(int)");
  EXPECT_EQ(strip_clone_suffixes("  plain  "), "plain");
}

TEST(KernelName, ParsesTensorIteratorKernelWithLambdaFunctor) {
  auto n = parse_kernel_name(
      "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::"
      "{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> "
      ">(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::"
      "operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)");
  EXPECT_TRUE(n.is_cpp_signature);
  EXPECT_EQ(n.return_type, "void");
  EXPECT_EQ(n.qualified_name, "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(n.base_name, "vectorized_elementwise_kernel");
  ASSERT_EQ(n.scopes.size(), 2u);
  EXPECT_EQ(n.scopes[1], "native");
  ASSERT_EQ(n.template_args.size(), 3u);
  EXPECT_EQ(n.template_args[0], "4");
  EXPECT_EQ(n.template_args[2], "std::array<char*, 2ul>");
  EXPECT_EQ(n.param_count, 3);
  ASSERT_EQ(n.functors.size(), 1u);
  EXPECT_EQ(n.functors[0], "at::native::rsqrt_kernel_cuda");
  EXPECT_EQ(n.normalized, "at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda("
                          "at::TensorIteratorBase&)::{lambda}::{lambda}::{lambda}, std::array<char*, 2ul>>");
}

TEST(KernelName, AnonymousNamespacesAndFunctorClasses) {
  auto n = parse_kernel_name(
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, "
      "unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, int, unsigned int)");
  EXPECT_EQ(n.base_name, "CatArrayBatchedCopy");
  ASSERT_EQ(n.scopes.size(), 3u);
  EXPECT_EQ(n.scopes[2], "(anonymous namespace)");
  EXPECT_EQ(n.param_count, 3);
  EXPECT_TRUE(n.functors.empty());

  auto m = parse_kernel_name(
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<"
      "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >("
      "at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::"
      "gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<"
      "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::"
      "{lambda(int)#1})");
  EXPECT_EQ(m.base_name, "elementwise_kernel");
  EXPECT_EQ(m.param_count, 2);
  // gpu_kernel_impl_nocast is launch plumbing and is not reported.
  ASSERT_EQ(m.functors.size(), 2u);
  EXPECT_EQ(m.functors[0], "at::native::BinaryFunctor");
  EXPECT_EQ(m.functors[1], "at::native::binary_internal::MulFunctor");
}

TEST(KernelName, GlobalAnonymousNamespaceAndNonCppNames) {
  auto n = parse_kernel_name("void (anonymous namespace)::elementwise_kernel_with_index<int, float>(int, float*)");
  EXPECT_EQ(n.base_name, "elementwise_kernel_with_index");
  ASSERT_EQ(n.scopes.size(), 1u);
  EXPECT_EQ(n.scopes[0], "(anonymous namespace)");

  auto plain = parse_kernel_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN");
  EXPECT_FALSE(plain.is_cpp_signature);
  EXPECT_EQ(plain.base_name, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN");

  auto nontemplate = parse_kernel_name("foo(float*, int)");
  EXPECT_TRUE(nontemplate.is_cpp_signature);
  EXPECT_EQ(nontemplate.base_name, "foo");
  EXPECT_EQ(nontemplate.param_count, 2);
  EXPECT_EQ(parse_kernel_name("bar()").param_count, 0);

  auto memset = parse_kernel_name("Memset (Device)");
  EXPECT_EQ(memset.demangled, "Memset (Device)");
  EXPECT_FALSE(memset.is_cpp_signature);
  EXPECT_EQ(memset.param_count, -1);
}

TEST(KernelName, HugeAndHostileInputsAreLinearAndSafe) {
  std::string deep = "void k<";
  for (int i = 0; i < 200000; ++i) deep += "a<";
  deep += ">(int)";
  auto n = parse_kernel_name(deep);  // unbalanced: must terminate without recursion blow-up
  EXPECT_EQ(n.demangled.size(), deep.size());
  std::string wide = "void k<" + std::string(1 << 20, 'x') + ">(int)";
  EXPECT_EQ(parse_kernel_name(wide).base_name, "k");
  EXPECT_TRUE(parse_kernel_name("").base_name.empty());
  EXPECT_TRUE(parse_kernel_name(")))(((<<>>").base_name.empty());
}

TEST(KernelName, SplitTopLevel) {
  auto p = split_top_level("a<b, c>, (d, e), f -> g, h", ',');
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], "a<b, c>");
  EXPECT_EQ(p[1], "(d, e)");
  EXPECT_EQ(p[2], "f -> g");
  EXPECT_TRUE(split_top_level("  ", ',').empty());
}

}  // namespace
}  // namespace magpie::source
