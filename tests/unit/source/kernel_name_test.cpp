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

TEST(KernelName, DemanglesRocmExtendedFloatTypes) {
  // clang (ROCm) mangles __bf16 as DF16b and _Float16 as DF16_; GCC 12's __cxa_demangle rejects
  // both, libiberty reads them.
  EXPECT_EQ(demangle("_Z3fooDF16b"), "foo(std::bfloat16_t)");
  EXPECT_EQ(demangle("_Z3fooDF16_"), "foo(_Float16)");
  auto n = parse_kernel_name("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_"
                             "S4_S4_diiiiiiib");
  EXPECT_EQ(n.qualified_name, "aiter::add_rmsnorm_quant_kernel");
  ASSERT_EQ(n.template_args.size(), 8u);
  EXPECT_EQ(n.template_args[0], "std::bfloat16_t");
  EXPECT_EQ(n.param_count, 15);
  ASSERT_EQ(n.params.size(), 15u);
  EXPECT_EQ(n.params[0], "std::bfloat16_t*");
  EXPECT_FALSE(n.name_only);
}

TEST(KernelName, LongComposableKernelNamesDemangle) {
  // Over 1 KiB: libiberty's default recursion guard refuses these; the adapter lifts it and
  // bounds the length instead.
  std::string args;
  for (int i = 0; i < 200; ++i) args += "Li" + std::to_string(i) + "E";
  std::string name = "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightIJ" + args + "EEEvv";
  ASSERT_GT(name.size(), 1024u);
  auto n = parse_kernel_name(name);
  EXPECT_EQ(n.qualified_name, "ck::tensor_operation::device::kernel_batched_gemm_xdlops_bwd_weight");
  EXPECT_EQ(n.template_args.size(), 200u);
  EXPECT_EQ(n.param_count, 0);
}

TEST(KernelName, UndecodableManglingKeepsItsQualifiedName) {
  // clang 17+'s `Tn` (a template parameter's type) is newer than the demangler: only the
  // <nested-name> prefix is read, template arguments and parameters stay unknown.
  const char* sgl = "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEv"
                    "PS3_PS4_i";
  EXPECT_EQ(demangle(sgl), sgl);
  EXPECT_EQ(mangled_qualified_name(sgl), "sgl_hip::activation::act_and_mul_kernel");
  auto n = parse_kernel_name(sgl);
  EXPECT_TRUE(n.name_only);
  EXPECT_TRUE(n.is_cpp_signature);
  EXPECT_EQ(n.base_name, "act_and_mul_kernel");
  ASSERT_EQ(n.scopes.size(), 2u);
  EXPECT_EQ(n.scopes[0], "sgl_hip");
  EXPECT_EQ(n.param_count, -1);
  EXPECT_TRUE(n.template_args.empty());
  EXPECT_EQ(mangled_qualified_name("_ZN12_GLOBAL__N_16kernelITnXE"), "(anonymous namespace)::kernel");
  EXPECT_EQ(mangled_qualified_name("_ZL5localITnXE"), "local");
  EXPECT_EQ(mangled_qualified_name("_ZNSt3fooITnXE"), "std::foo");
  EXPECT_EQ(mangled_qualified_name("_ZN3foo99barE"), "");  // length past the end
  EXPECT_EQ(mangled_qualified_name("_ZN3fooC1Ev"), "");    // a constructor: not a plain name
  EXPECT_EQ(mangled_qualified_name("plain"), "");
}

TEST(KernelName, LongNamesDemangleOnALargeStackAndOverlongOnesAreLeft) {
  // f<a<a<…<int>…>>>(): 500 levels, about as deep as libiberty prints (it guards its own printer
  // recursion at ~1024 calls), in a 2 KiB name: demangled on the helper thread.
  auto nested = [](int depth) {
    std::string s = "_Z1fI";
    for (int i = 0; i < depth; ++i) s += "1aI";
    s += "i";
    for (int i = 0; i < depth; ++i) s += "E";
    return s + "Evv";
  };
  auto n = parse_kernel_name(nested(500));
  EXPECT_EQ(n.qualified_name, "f");
  EXPECT_FALSE(n.name_only);
  ASSERT_EQ(n.template_args.size(), 1u);
  EXPECT_EQ(n.template_args[0].substr(0, 6), "a<a<a<");
  // A 14 KiB name (60 template arguments with 240-character names) is still demangled.
  std::string wide = "_Z1fIJ";
  for (int i = 0; i < 60; ++i) wide += "240" + std::string(237, 'a') + std::to_string(100 + i);
  wide += "EEvv";
  ASSERT_GT(wide.size(), 14000u);
  ASSERT_LE(wide.size(), 16384u);
  EXPECT_EQ(parse_kernel_name(wide).template_args.size(), 60u);
  std::string overlong = nested(5000);  // 20 KiB, over the bound: returned unchanged, never demangled
  EXPECT_EQ(demangle(overlong), overlong);
  auto o = parse_kernel_name(overlong);
  EXPECT_EQ(o.base_name, "f");
  EXPECT_TRUE(o.name_only);
}

TEST(KernelName, CkTileEntryPointRunsTheKernelClassOfItsArguments) {
  auto n = parse_kernel_name("void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<float>, "
                             "ck_tile::Default2DEpilogue<float> > >(ck_tile::Rmsnorm2dFwd<float>::Kargs)");
  ASSERT_FALSE(n.functors.empty());
  EXPECT_EQ(n.functors[0], "ck_tile::Rmsnorm2dFwd");
}

}  // namespace
}  // namespace magpie::source
