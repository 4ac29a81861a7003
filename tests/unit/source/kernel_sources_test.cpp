#include "source/kernel_sources.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "source/git_info.h"
#include "source/match.h"

namespace magpie::source {
namespace {

const fs::path k_fixtures = fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/fixtures/kernel_sources";

std::vector<kernel_source_info> map(const std::vector<std::string>& names, const std::vector<fs::path>& roots) {
  auto r = find_kernel_sources(names, roots);
  EXPECT_TRUE(r.ok()) << r.get_status().to_string();
  return r.ok() ? *r : std::vector<kernel_source_info>{};
}

TEST(KernelSources, ResolvesAtenKernelToFileLineWithFunctor) {
  auto r = map({"void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)"
                "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
                "std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
                "operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"},
               {k_fixtures / "pytorch"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, "aten_native");
  EXPECT_EQ(r[0].source_resolution, "resolved");
  EXPECT_EQ(r[0].source_error, "");
  EXPECT_EQ(r[0].source_repo, "pytorch");
  EXPECT_EQ(r[0].source_file, "$PYTORCH_DIR/aten/src/ATen/native/cuda/CUDALoops.cuh:14");
  EXPECT_EQ(r[0].line, 14);
  EXPECT_DOUBLE_EQ(r[0].confidence, 1.0);
  ASSERT_EQ(r[0].functor_sources.size(), 1u);
  EXPECT_EQ(r[0].functor_sources[0],
            "at::native::rsqrt_kernel_cuda=$PYTORCH_DIR/aten/src/ATen/native/cuda/UnaryOpsKernel.cu:4");
  EXPECT_TRUE(r[0].upstream_url.empty());  // no .git in the fixture root: no guessed URL
}

TEST(KernelSources, AnonymousNamespaceDuplicatesAcrossFilesAreAmbiguous) {
  auto r = map({"void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, "
                "-2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
                "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, long)"},
               {k_fixtures / "pytorch"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].source_resolution, "unresolved");
  EXPECT_EQ(r[0].source_error, "aten_native_source_ambiguous");
  EXPECT_TRUE(r[0].source_file.empty());
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.0);
  ASSERT_EQ(r[0].candidates.size(), 2u);
  // A user kernel of the same shape without ATen types is a plain CUDA kernel, still ambiguous.
  auto u = map({"void (anonymous namespace)::elementwise_kernel_with_index<int, float>(int, float, float*)"},
               {k_fixtures / "pytorch"});
  EXPECT_EQ(u[0].source_error, "cuda_cpp_source_ambiguous");
}

TEST(KernelSources, TranslationUnitEvidenceResolvesAnonymousNamespaceDuplicates) {
  auto r = map({"void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar "
                "const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::"
                "{lambda(long)#1}>(int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar "
                "const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda(long)#1}, float*)"},
               {k_fixtures / "pytorch"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].source_resolution, "resolved");
  EXPECT_EQ(r[0].source_file, "$PYTORCH_DIR/aten/src/ATen/native/cuda/RangeFactories.cu:12");
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.9);
  EXPECT_EQ(r[0].candidates.size(), 2u);
  EXPECT_NE(r[0].notes.find("translation unit"), std::string::npos) << r[0].notes;
}

TEST(KernelSources, NotFoundUnsupportedAndNoRoots) {
  auto r = map({"void at::native::missing_kernel<1>(int)", "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN", "Memset (Device)"},
               {k_fixtures / "pytorch"});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].source_resolution, "unresolved");
  EXPECT_EQ(r[0].source_error, "aten_native_source_not_found");
  EXPECT_NE(r[0].notes.find("pytorch"), std::string::npos);
  EXPECT_EQ(r[1].source_resolution, "unsupported");
  EXPECT_EQ(r[1].source_error, "closed_source_library");
  EXPECT_EQ(r[2].source_resolution, "unsupported");
  EXPECT_EQ(r[2].source_error, "runtime_operation");

  auto none = map({"void at::native::reduce_kernel<512, 1, R>(R)"}, {});
  EXPECT_EQ(none[0].source_resolution, "unresolved");
  EXPECT_EQ(none[0].source_error, "no_repo_for_kind");
  EXPECT_NE(none[0].notes.find("pass a pytorch checkout"), std::string::npos);
}

TEST(KernelSources, DeclarationsLoseToDefinitionsAndDeclOnlyIsLowConfidence) {
  auto r = map({"void at::native::reduce_kernel_declared_only<R>(R)"}, {k_fixtures / "pytorch"});
  EXPECT_EQ(r[0].source_resolution, "candidate");  // below the 0.7 threshold
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.5);
  EXPECT_NE(r[0].notes.find("only declarations"), std::string::npos);
}

TEST(KernelSources, InductorCopiesCollapseAndDifferentBodiesAreAmbiguous) {
  auto r = map({"triton_poi_fused_mul_silu_0", "triton_poi_fused_add_0", "triton_poi_fused_nope_9"},
               {k_fixtures / "inductor_cache"});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].kind, "inductor");
  EXPECT_EQ(r[0].source_resolution, "resolved");
  EXPECT_EQ(r[0].source_file, "$INDUCTOR_CACHE_DIR/ab/cabx7kq2mz3.py:18");
  EXPECT_NE(r[0].notes.find("1 identical copy ignored"), std::string::npos) << r[0].notes;
  EXPECT_EQ(r[1].source_resolution, "unresolved");
  EXPECT_EQ(r[1].source_error, "inductor_source_ambiguous");
  EXPECT_EQ(r[2].source_error, "inductor_source_not_found");
}

TEST(KernelSources, TritonKernelsResolveWithTestAndBaselineRouting) {
  auto r = map({"_rms_norm_fwd_kernel", "_fwd_kernel", "_rms_norm_fwd_kernel_0d1d2d3de", "residual_scale_kernel"},
               {k_fixtures / "vllm_like", fs::path(MAGPIE_TEST_SOURCE_DIR) / "examples/traces"});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].kind, "triton_jit");
  EXPECT_EQ(r[0].source_file, "$VLLM_LIKE_DIR/vllm/ops/rms_norm_triton.py:14");
  EXPECT_EQ(r[0].test_file, "$VLLM_LIKE_DIR/tests/kernels/test_rms_norm.py");
  EXPECT_EQ(r[0].test_cmd, "cd $VLLM_LIKE_DIR && python -m pytest -q tests/kernels/test_rms_norm.py");
  EXPECT_EQ(r[0].baseline_ref_symbol, "ref_rms_norm");
  EXPECT_EQ(r[0].baseline_ref_kind, "eager_fn");
  EXPECT_EQ(r[1].source_resolution, "unresolved");
  EXPECT_EQ(r[1].source_error, "triton_source_ambiguous");
  EXPECT_EQ(r[2].source_resolution, "resolved");  // Triton's specialisation suffix removed
  EXPECT_DOUBLE_EQ(r[2].confidence, 0.95);
  EXPECT_EQ(r[3].kind, "triton_jit");
  EXPECT_EQ(r[3].source_file, "$TRACES_DIR/gen_trace.py:21");
}

const fs::path k_forms = fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/golden/sources_forms/tree";

TEST(KernelSources, OnlyTritonSuffixesMatchByPrefixWithConfidence) {
  auto r = map({"kernel_unified_attention_0d1d2c3de", "kernel_unified_attention_2d", "kernel_unified_attention_3d_x",
                "kernel_unified_attention_1d2d"},
               {k_forms});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].source_file, "$TREE_DIR/ops/unified_attention.py:7");
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.95);
  EXPECT_TRUE(r[0].alternatives.empty());
  // "_2d" is no suffix Triton adds: a low-confidence guess with what else the name could mean.
  EXPECT_EQ(r[1].source_resolution, "candidate");
  EXPECT_DOUBLE_EQ(r[1].confidence, 0.3);
  EXPECT_EQ(r[1].alternatives, std::vector<std::string>{"kernel_unified_attention_3d=$TREE_DIR/ops/unified_attention.py:12"});
  // Two indexed kernels are prefixes of the name: nothing is picked.
  EXPECT_EQ(r[2].source_error, "triton_source_ambiguous");
  EXPECT_EQ(r[2].candidates.size(), 2u);
  // A signature suffix must number the arguments from 0.
  EXPECT_DOUBLE_EQ(r[3].confidence, 0.3);
}

TEST(KernelSources, SfinaeOverloadsMacroExpansionsAndGlobalNamespace) {
  auto r = map({"std::enable_if<(((0)==(0)))||(!demo::_typeConvert<float>::exists), void>::type "
                "demo::fused_add_rms_norm_kernel<float, 0>(float*, long, float*, float const*, float, int, int)",
                "void demo::gelu_act_kernel(float*, float const*, int)",
                "void scale_kernel(float*, float)"},
               {k_forms});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].source_file, "$TREE_DIR/csrc/sfinae_norm.cu:23");
  EXPECT_DOUBLE_EQ(r[0].confidence, 1.0);
  EXPECT_EQ(r[0].definition_kind, "definition");
  EXPECT_EQ(r[1].definition_kind, "macro_expansion");
  EXPECT_EQ(r[1].macro_definition, "DEFINE_ACT_KERNEL=$TREE_DIR/csrc/act_macros.cuh:4");
  // The demangled name says the global namespace; the only definition is in demo::.
  EXPECT_EQ(r[2].source_file, "$TREE_DIR/csrc/decorated.cu:17");
  EXPECT_DOUBLE_EQ(r[2].confidence, 0.6);
  EXPECT_NE(r[2].notes.find("namespace (global) not matched"), std::string::npos) << r[2].notes;
}

TEST(KernelSources, BadRootsAreErrors) {
  EXPECT_FALSE(find_kernel_sources({"x"}, {k_fixtures / "does-not-exist"}).ok());
  EXPECT_FALSE(find_kernel_sources({"x"}, {k_fixtures / "README.md"}).ok());
}

TEST(KernelSources, CsvColumnsAndPreamble) {
  ASSERT_EQ(kernel_source_csv_columns().size(), 15u);
  EXPECT_EQ(kernel_source_csv_columns().front(), "kind");
  EXPECT_EQ(kernel_source_csv_columns().back(), "source_error");
  kernel_source_info i;
  i.kind = "k";
  i.source_error = "e";
  auto row = kernel_source_csv_row(i);
  ASSERT_EQ(row.size(), 15u);
  EXPECT_EQ(row.front(), "k");
  EXPECT_EQ(row.back(), "e");
  auto pre = kernel_source_csv_preamble({k_fixtures / "pytorch", k_fixtures / "vllm_like"}, "G", "U");
  ASSERT_EQ(pre.size(), 6u);
  EXPECT_EQ(pre[0], "# Repository Path Mappings:");
  EXPECT_EQ(pre[1], "# Base directory: " + k_fixtures.lexically_normal().generic_string());
  EXPECT_EQ(pre[2], "# $PYTORCH_DIR=./pytorch");
  EXPECT_EQ(pre[5], "# Warning: columns G-U from find_kernel_sources are experimental.");
}

TEST(GitInfo, RemoteUrlForms) {
  EXPECT_EQ(normalize_remote_url("git@github.com:pytorch/pytorch.git"), "https://github.com/pytorch/pytorch");
  EXPECT_EQ(normalize_remote_url("https://github.com/vllm-project/vllm.git/"), "https://github.com/vllm-project/vllm");
  EXPECT_EQ(normalize_remote_url("ssh://git@github.com:22/org/repo.git"), "https://github.com/org/repo");
  EXPECT_EQ(normalize_remote_url("/local/path"), "");
}

TEST(GitInfo, UpstreamUrlFromGitDirectory) {
  auto tmp = make_temp_dir(fs::temp_directory_path(), "magpie_git_");
  ASSERT_TRUE(tmp.ok());
  scoped_dir cleanup(*tmp);
  fs::create_directories(*tmp / ".git/refs/heads");
  ASSERT_TRUE(write_file_atomic(*tmp / ".git/HEAD", "ref: refs/heads/main\n").ok());
  std::string head(40, 'a');  // built by append: GCC 12 -Warray-bounds misfires on string + literal here
  head += '\n';
  ASSERT_TRUE(write_file_atomic(*tmp / ".git/refs/heads/main", head).ok());
  ASSERT_TRUE(write_file_atomic(*tmp / ".git/config", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:org/repo.git\n").ok());
  std::string want = "https://github.com/org/repo/blob/";
  want.append(40, 'a').append("/src/k.cu#L12");
  EXPECT_EQ(upstream_url(*tmp, "src/k.cu", 12), want);
}

const fs::path k_lookalikes = fs::path(MAGPIE_TEST_SOURCE_DIR) / "tests/golden/sources_lookalikes/tree";

const char* k_aiter_qkv =
    "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, "
    "128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >(__hip_bfloat16 const*, __hip_bfloat16 const*, "
    "__hip_bfloat16 const*, float, int const*, int const*, int const*, float const*, int, int, int, int, float*, float*, "
    "__hip_bfloat16*, float, float, float const*, float const*, float const*, ck_tile::ComposedAttention<0u, false> "
    "const*)";
const char* k_rope_args =
    "<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, "
    "int, int, int)";
const char* k_rms_norm_args =
    "<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long, long, long, long, long, c10::BFloat16 const*, "
    "float, int, int)";

TEST(KernelSources, SignatureMismatchIsOnlyACandidate) {
  auto r = map({k_aiter_qkv}, {k_lookalikes / "vllm"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, "aiter");
  EXPECT_EQ(r[0].source_resolution, "candidate");
  EXPECT_EQ(r[0].source_error, "below_confidence_threshold");
  EXPECT_EQ(r[0].source_file, "$VLLM_DIR/csrc/rocm/attention.cu:6");
  EXPECT_LT(r[0].confidence, k_min_resolved_confidence);
  EXPECT_NE(r[0].notes.find("signature does not match"), std::string::npos) << r[0].notes;
  // With aiter's tree the exact signature wins over vLLM's look-alike.
  auto both = map({k_aiter_qkv}, {k_lookalikes / "vllm", k_lookalikes / "aiter"});
  EXPECT_EQ(both[0].source_resolution, "resolved");
  EXPECT_EQ(both[0].source_file, "$AITER_DIR/csrc/cpp_itfs/pa/pa_ragged.cuh:8");
  EXPECT_DOUBLE_EQ(both[0].confidence, 1.0);
}

TEST(KernelSources, NamespaceAndSignatureMismatchRefusesTheMatch) {
  auto r = map({std::string("void rotary_embedding_kernel") + k_rope_args}, {k_lookalikes / "vllm"});
  EXPECT_EQ(r[0].source_resolution, "unresolved");
  EXPECT_EQ(r[0].source_error, "cuda_cpp_source_not_found");
  EXPECT_TRUE(r[0].source_file.empty());
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.0);
  EXPECT_NE(r[0].notes.find("not reported as a match: $VLLM_DIR/csrc/pos_encoding_kernels.cu:6"), std::string::npos)
      << r[0].notes;
  // The same trace signature in vllm:: is the kernel, which gained parameters since: resolved.
  auto v = map({std::string("void vllm::rotary_embedding_kernel") + k_rope_args}, {k_lookalikes / "vllm"});
  EXPECT_EQ(v[0].source_resolution, "resolved");
  EXPECT_DOUBLE_EQ(v[0].confidence, 0.85);
  EXPECT_NE(v[0].notes.find("extends the traced signature"), std::string::npos) << v[0].notes;
}

TEST(KernelSources, NamespaceMismatchAloneIsACandidate) {
  // Exact signature, but the trace's kernel is in the global namespace and the definition in vllm::.
  auto r = map({std::string("void rms_norm_kernel") + k_rms_norm_args}, {k_lookalikes / "vllm"});
  EXPECT_EQ(r[0].source_resolution, "candidate");
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.6);
  EXPECT_EQ(r[0].source_file, "$VLLM_DIR/csrc/layernorm_kernels.cu:5");
}

TEST(KernelSources, PrimaryDefinitionPreferredOverCopies) {
  auto r = map({std::string("void vllm::rms_norm_kernel") + k_rms_norm_args}, {k_lookalikes / "refs", k_lookalikes / "vllm"});
  EXPECT_EQ(r[0].source_resolution, "resolved");
  EXPECT_EQ(r[0].source_file, "$VLLM_DIR/csrc/layernorm_kernels.cu:5");
  EXPECT_DOUBLE_EQ(r[0].confidence, 0.9);
  ASSERT_EQ(r[0].alternatives.size(), 1u);
  EXPECT_EQ(r[0].alternatives[0], "rms_norm_kernel=$REFS_DIR/tests/kernels/rms_norm_reference.cu:5");
  EXPECT_TRUE(is_secondary_copy_path("aten/src/ATen/native/cuda/maca_kernels/CUDALoops_copy.cuh"));
  EXPECT_TRUE(is_secondary_copy_path("benchmarks/kernels/bench_rope.cu"));
  EXPECT_TRUE(is_secondary_copy_path("csrc/old_copy/attention.cu"));
  EXPECT_TRUE(is_secondary_copy_path("csrc/attention.orig.cu"));
  EXPECT_FALSE(is_secondary_copy_path("aten/src/ATen/native/cuda/Copy.cu"));
  EXPECT_FALSE(is_secondary_copy_path("csrc/attention_kernels.cu"));
  EXPECT_FALSE(is_secondary_copy_path("tests.cu"));
}

TEST(KernelSources, TritonModuleEvidence) {
  auto tmp = make_temp_dir(fs::temp_directory_path(), "magpie_module_");
  ASSERT_TRUE(tmp.ok());
  scoped_dir cleanup(*tmp);
  auto defs = [](const char* project, std::initializer_list<const char*> names) {  // bodies differ per project
    std::string text;
    for (const char* n : names) text += std::string("@triton.jit\ndef ") + n + "(x):\n    return '" + project + "'\n\n";
    return text;
  };
  ASSERT_TRUE(write_file_atomic(*tmp / "vllm/ops/unified.py", defs("vllm", {"reduce_segments", "kernel_unified_attention"})).ok());
  ASSERT_TRUE(write_file_atomic(*tmp / "aiter/ops/unified.py",
                                defs("aiter", {"reduce_segments", "kernel_unified_attention_2d", "kernel_unified_attention_3d"}))
                  .ok());
  std::vector<std::string> trace = {"reduce_segments", "kernel_unified_attention_2d", "kernel_unified_attention_3d"};
  // Both modules define reduce_segments; two other kernels of the trace resolved in aiter's.
  auto both = map(trace, {*tmp / "vllm", *tmp / "aiter"});
  EXPECT_EQ(both[0].source_resolution, "resolved");
  EXPECT_EQ(both[0].source_file, "$AITER_DIR/ops/unified.py:2");
  EXPECT_DOUBLE_EQ(both[0].confidence, 0.85);
  // One neighbour is not enough evidence.
  EXPECT_EQ(map({"reduce_segments", "kernel_unified_attention_2d"}, {*tmp / "vllm", *tmp / "aiter"})[0].source_error,
            "triton_source_ambiguous");
  // Only vLLM's module: kernel_unified_attention_2d matches it by prefix only, so the module that
  // ran is another one and vLLM's reduce_segments is a candidate.
  auto vllm = map(trace, {*tmp / "vllm"});
  EXPECT_EQ(vllm[1].source_resolution, "candidate");
  EXPECT_EQ(vllm[0].source_resolution, "candidate");
  EXPECT_DOUBLE_EQ(vllm[0].confidence, 0.6);
  // Alone it is vLLM's.
  EXPECT_EQ(map({"reduce_segments"}, {*tmp / "vllm"})[0].source_resolution, "resolved");
}

TEST(KernelSources, SharedLibraryNamesOutsideTheLibraryAreCandidates) {
  auto tmp = make_temp_dir(fs::temp_directory_path(), "magpie_shared_");
  ASSERT_TRUE(tmp.ok());
  scoped_dir cleanup(*tmp);
  const char* def = "@triton.jit\ndef attn_fwd(x):\n    pass\n";
  ASSERT_TRUE(write_file_atomic(*tmp / "aiter/flash/fwd.py", def).ok());
  ASSERT_TRUE(write_file_atomic(*tmp / "aotriton/tritonsrc/fwd_kernel.py", def).ok());
  auto elsewhere = map({"attn_fwd"}, {*tmp / "aiter"});
  EXPECT_EQ(elsewhere[0].source_resolution, "candidate");
  EXPECT_DOUBLE_EQ(elsewhere[0].confidence, 0.6);
  auto aot = map({"attn_fwd"}, {*tmp / "aotriton"});
  EXPECT_EQ(aot[0].source_resolution, "resolved");
  EXPECT_EQ(aot[0].kind, "triton_jit");
}

}  // namespace
}  // namespace magpie::source
