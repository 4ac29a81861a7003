#include "source/classify.h"

#include <gtest/gtest.h>

namespace magpie::source {
namespace {

kernel_class cls(const std::string& name) { return classify_kernel(parse_kernel_name(name)); }

TEST(Classify, NvidiaLibrariesAreUnsupportedClosedSource) {
  auto nvjet = cls("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT");
  EXPECT_EQ(nvjet.kind, "nvjet");
  EXPECT_EQ(nvjet.category, "gemm");
  EXPECT_EQ(nvjet.mode, lookup_mode::none);
  EXPECT_EQ(nvjet.unsupported_error, "closed_source_library");
  EXPECT_EQ(cls("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_execute_kernel__5x_cublas").kind, "cublas");
  EXPECT_EQ(cls("ampere_sgemm_128x64_tn").kind, "cublas");
  auto split = cls("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float>(cublasLt::cublasSplitKParams<float>, float const*)");
  EXPECT_EQ(split.kind, "cublas");
  auto cutlass = cls("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_tn_align1>(cutlass_80_simt_sgemm_128x32_8x5_tn_align1::Params)");
  EXPECT_EQ(cutlass.kind, "cutlass");
  EXPECT_EQ(cutlass.mode, lookup_mode::none);
  auto cudnn = cls("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0");
  EXPECT_EQ(cudnn.kind, "cudnn");
  EXPECT_EQ(cudnn.category, "attention");
  EXPECT_EQ(cls("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc").kind, "cudnn");
}

TEST(Classify, NotesCarryTileLayoutAndDtype) {
  auto c = cls("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn");
  std::string notes;
  for (auto& n : c.notes) notes += n + ";";
  EXPECT_NE(notes.find("dtype: bf16"), std::string::npos) << notes;
  EXPECT_NE(notes.find("tile: 128x64"), std::string::npos) << notes;
  EXPECT_NE(notes.find("layout: tn"), std::string::npos) << notes;
}

TEST(Classify, OpenSourceKindsAndCategories) {
  auto aten = cls("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>)");
  EXPECT_EQ(aten.kind, "aten_native");
  EXPECT_EQ(aten.category, "reduce");
  EXPECT_EQ(aten.mode, lookup_mode::cpp);
  EXPECT_EQ(aten.symbol, "reduce_kernel");
  EXPECT_EQ(aten.param_count, 1);
  EXPECT_EQ(cls("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)").category, "softmax");
  EXPECT_EQ(cls("void at::native::(anonymous namespace)::CatArrayBatchedCopy<int, unsigned int, 4, 64, 64>(int*, int, unsigned int)").category, "copy");
  auto ind = cls("triton_poi_fused_mul_silu_0");
  EXPECT_EQ(ind.kind, "inductor");
  EXPECT_EQ(ind.mode, lookup_mode::python);
  EXPECT_EQ(ind.category, "elementwise");
  EXPECT_EQ(cls("triton_red_fused__to_copy_mean_pow_1").category, "copy");  // Magpie's order: copy before reduce
  EXPECT_EQ(cls("triton_per_fused_sum_2").category, "reduce");
  auto plain = cls("residual_scale_kernel");
  EXPECT_EQ(plain.kind, "unknown");
  EXPECT_EQ(plain.mode, lookup_mode::any);
  EXPECT_EQ(cls("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::half_t>, false, true>(Flash_fwd_params)").kind, "flash_attn");
  EXPECT_EQ(cls("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)").category, "attention");
  auto nccl = cls("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(nccl.kind, "nccl");
  EXPECT_EQ(nccl.category, "communication");
  EXPECT_EQ(cls("void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16 const*, float, int, int)").kind, "vllm");
  EXPECT_EQ(cls("void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, int)").category, "layernorm");
  EXPECT_EQ(cls("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0").kind, "tensile_gemm");
  EXPECT_EQ(cls("void ck_tile::kentry<64, 1, ck_tile::Rmsnorm2dFwd<float>>(int)").kind, "ck_tile");
  EXPECT_EQ(cls("_ZN5aiter10rms_norm_fEv").kind, "aiter");
  EXPECT_EQ(cls("void my_project::saxpy<float>(float*, float const*, int)").kind, "cuda_cpp");
}

TEST(Classify, LibrariesOfServingStacks) {
  auto gen = cls("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
                 "schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f");
  EXPECT_EQ(gen.kind, "trtllm_gen");
  EXPECT_EQ(gen.unsupported_error, "closed_source_library");
  EXPECT_EQ(cls("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext").kind, "trtllm_gen");
  EXPECT_EQ(cls("gemm_Bfloat16_E4m3E4m3_Fp32_t128x8x128u2_s6_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_schedS_sm100a").kind,
            "trtllm_gen");
  EXPECT_NE(cls("bmm_kernel").kind, "trtllm_gen");  // no sm suffix: an ordinary kernel name
  auto trt = cls("void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, "
                 "__nv_bfloat16, 32, true>(int, int, __nv_bfloat16 const*, flashinfer::QuantizationSFLayout)");
  EXPECT_EQ(trt.kind, "tensorrt_llm");  // not "sglang" because a flashinfer type is in the signature
  EXPECT_EQ(trt.mode, lookup_mode::cpp);
  EXPECT_NE(trt.repo_hint.find("csrc/nv_internal"), std::string::npos);
  EXPECT_EQ(cls("void moe::dev::routing::routingIndicesOffsetsKernel<moe::dev::routing::KernelParams<int> >(int)").kind,
            "tensorrt_llm");
  EXPECT_EQ(cls("void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, unsigned int)").kind, "flashinfer");
  auto symm = cls("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)");
  EXPECT_EQ(symm.kind, "pytorch_symm_mem");
  EXPECT_NE(symm.repo_hint.find("c10d"), std::string::npos);
  EXPECT_NE(cls("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)").repo_hint.find("DEFINE_ncclDevKernel"),
            std::string::npos);
  EXPECT_EQ(cls("void cub::CUB_200200_800_NS::DeviceScanKernel<int>(int*)").kind, "cub");
  EXPECT_EQ(cls("void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<int>(long)").kind, "rocprim");
  EXPECT_EQ(cls("void deep_gemm::sm90_fp8_gemm_1d2d_impl<128u>(float*)").kind, "deep_gemm");
  EXPECT_EQ(cls("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int> >(int)").kind, "cutlass");
  EXPECT_EQ(cls("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int> >(int)").mode, lookup_mode::cpp);
  EXPECT_NE(cls("_topk_forward").repo_hint.find("triton_kernels"), std::string::npos);
  EXPECT_EQ(cls("triton_tem_fused_mm_0").kind, "inductor");
  EXPECT_EQ(cls("create_flashinfer_kv_indices_triton").kind, "sglang");
}

TEST(Classify, NonKernels) {
  EXPECT_EQ(cls("Memset (Device)").kind, "runtime");
  EXPECT_EQ(cls("Memcpy HtoD (Pageable -> Device)").unsupported_error, "runtime_operation");
  auto a = cls("execute_context_0(1)_generation_0(0)");
  EXPECT_EQ(a.kind, "annotation");
  EXPECT_EQ(a.category, "annotation");
  EXPECT_EQ(cls("").unsupported_error, "name_not_parseable");
}

TEST(Classify, ErrorPrefix) {
  EXPECT_EQ(error_prefix("triton_jit"), "triton");
  EXPECT_EQ(error_prefix("unknown"), "");
  EXPECT_EQ(error_prefix("aten_native"), "aten_native");
}

std::string joined_notes(const kernel_class& c) {
  std::string out;
  for (const auto& n : c.notes) out += n + "; ";
  return out;
}

TEST(Classify, MiopenKernelsGetMiopenAdvice) {
  for (const char* name : {"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64",
                           "batched_transpose_32x32_half", "SubTensorOpWithScalar1d",
                           "transpose_CNHW2NCHW_V2_2D_WG_off64", "MIOpenBatchNormFwdTrainSpatial"}) {
    auto c = cls(name);
    EXPECT_EQ(c.kind, "miopen") << name;
    EXPECT_EQ(c.mode, lookup_mode::none) << name;
    EXPECT_EQ(c.unsupported_error, "miopen_library_kernel") << name;
    EXPECT_NE(joined_notes(c).find("MIOPEN_FIND_MODE"), std::string::npos) << name;
  }
  EXPECT_NE(joined_notes(cls("batched_transpose_32x32_half")).find("channels_last"), std::string::npos);
  EXPECT_NE(joined_notes(cls("igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8_gkgs")).find("iGEMMgen"),
            std::string::npos);
  // dtype from the name, and "f16" inside "bf16" is not fp16.
  auto notes = joined_notes(cls("igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_mh_gkgs"));
  EXPECT_NE(notes.find("dtype: bf16;"), std::string::npos) << notes;
  // A user's C++ kernel that happens to start like a MIOpen name is not MIOpen.
  EXPECT_NE(cls("void batched_transpose_kernel<float>(float*, int)").kind, "miopen");
}

TEST(Classify, AiterKernels) {
  auto cpp = cls("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib");
  EXPECT_EQ(cpp.kind, "aiter");
  EXPECT_EQ(cpp.mode, lookup_mode::cpp);
  EXPECT_EQ(cpp.symbol, "add_rmsnorm_quant_kernel");
  EXPECT_EQ(cpp.category, "layernorm");
  std::string notes = joined_notes(cpp);
  EXPECT_NE(notes.find("dtype: bf16;"), std::string::npos) << notes;  // DF16b is bf16, not fp16
  EXPECT_EQ(notes.find("fp16"), std::string::npos) << notes;
  EXPECT_NE(cpp.repo_hint.find("github.com/ROCm/aiter"), std::string::npos);
  auto half = cls("_ZN5aiter9my_kernelIDF16_EEvPT_");
  EXPECT_NE(joined_notes(half).find("dtype: fp16"), std::string::npos) << joined_notes(half);
  // Assembly kernels are symbols of prebuilt code objects: no C++ source.
  auto asm_kernel = cls("_ZN5aiter43bf16gemm_fp32bf16_tn_128x64_bshuffle_splitkE");
  EXPECT_EQ(asm_kernel.kind, "aiter");
  EXPECT_EQ(asm_kernel.mode, lookup_mode::none);
  EXPECT_EQ(asm_kernel.unsupported_error, "prebuilt_code_object");
  EXPECT_NE(joined_notes(asm_kernel).find("hsa/"), std::string::npos);
  // A global-namespace kernel instantiated with ck_tile types is aiter's paged attention, not
  // vLLM's look-alike (which takes no ck_tile type).
  auto pa = cls("void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, "
                "(vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >("
                "__hip_bfloat16 const*, float, ck_tile::ComposedAttention<0u, false> const*)");
  EXPECT_EQ(pa.kind, "aiter");
  EXPECT_EQ(cls("void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, "
                "(vllm::Fp8KVCacheDataType)0, __hip_bfloat16, 16, 128, 256, false, 4, (MFMAType)0>(float)")
                .kind,
            "vllm");
}

TEST(Classify, ComposableKernelAndCkTile) {
  auto ck = cls("_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffleINS_"
                "34GridwiseGemmMultipleD_xdl_cshuffleIDF16bDF16bDF16bfDF16bNS_5TupleIJEEEDF16bEEEEvv");
  EXPECT_EQ(ck.kind, "ck");
  EXPECT_EQ(ck.mode, lookup_mode::cpp);
  EXPECT_EQ(ck.symbol, "kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle");
  ASSERT_EQ(ck.scopes.size(), 4u);
  EXPECT_EQ(ck.scopes[3], "(anonymous namespace)");
  EXPECT_NE(ck.repo_hint.find("MIOpen"), std::string::npos);
  EXPECT_NE(ck.repo_hint.find("composable_kernel"), std::string::npos);
  EXPECT_NE(joined_notes(ck).find("dtype: bf16"), std::string::npos) << joined_notes(ck);
  auto tile = cls("void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<float> >(ck_tile::Rmsnorm2dFwd<float>::Kargs)");
  EXPECT_EQ(tile.kind, "ck_tile");
  EXPECT_NE(joined_notes(tile).find("functor: ck_tile::Rmsnorm2dFwd"), std::string::npos);
}

TEST(Classify, CublasGemvIsClosedSource) {
  auto g = cls("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, "
               "__nv_bfloat16, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, "
               "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 "
               "const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, "
               "cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 "
               "const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>)");
  EXPECT_EQ(g.kind, "cublas");
  EXPECT_EQ(g.mode, lookup_mode::none);
  EXPECT_EQ(g.unsupported_error, "closed_source_library");
  EXPECT_EQ(g.category, "gemm");
  EXPECT_NE(joined_notes(g).find("GEMV"), std::string::npos);
  EXPECT_EQ(cls("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
                "cublasGemvParamsEx<int, float, float, float> >(float)")
                .kind,
            "cublas");
}

TEST(Classify, RuntimeOperationsAndSharedNames) {
  EXPECT_TRUE(is_runtime_operation("Memcpy DtoD (Device -> Device)"));
  EXPECT_TRUE(is_runtime_operation("Memset (Device)"));
  EXPECT_TRUE(is_runtime_operation("__amd_rocclr_copyBuffer"));
  EXPECT_FALSE(is_runtime_operation("void at::native::copy_kernel<float>(float*)"));
  auto aot = cls("attn_fwd");
  EXPECT_EQ(aot.shared_with, "aotriton");
  EXPECT_NE(aot.repo_hint.find("aotriton"), std::string::npos);
  EXPECT_TRUE(cls("my_attn_fwd").shared_with.empty());
}

}  // namespace
}  // namespace magpie::source
