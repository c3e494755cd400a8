// Classification by name on real kernel names, collected from public traces and code (each line says where),
// including the names that must stay compute although they share a namespace or a verb with a communication
// library. And the --rule syntax: patterns keep "::", ambiguous rules are refused with one line.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/measure/classify.hpp"
#include "profiler/error.hpp"

namespace meshscope::measure {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Named {
  const char* name;
  const char* where;  // the public trace or code the name was taken from
};

// Communication kernels. Names from traces are as the profiler printed them; names from code are the
// demangled form of the kernel's declaration (template arguments and parameters as declared).
const std::vector<Named>& comm_names() {
  static const std::vector<Named> names = {
      // NCCL / RCCL, as in the shared traces and published profiles.
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       "hta/trace_filter"},
      {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "tracelens/mi300_resnet_act_checkpoint"},
      {"ncclDevKernel_Generic_4", "RCCL 2.2x on ROCm, vLLM profile table"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "vLLM profile table (NCCL fallback)"},
      {"ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16", "NCCL 2.27 user guide: symmetric kernels"},
      {"ncclSymkDevKernel_AllReduce_RSxLDMC_AGxSTMC", "TensorRT-LLM docs: NCCL_SYMMETRIC all-reduce"},
      // DeepEP, as SGLang and vLLM profiles print it.
      {"void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int const*, int*, int, int, int, bool "
       "const*, "
       "int*, int*, int, int, void**, int**, int)",
       "SGLang profile kernel list"},
      {"void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int, int**, int)",
       "SGLang GLM serving profile"},
      {"void deep_ep::internode::notify_dispatch<false, 4>(int const*, int*, int, int const*, int*, int "
       "const*, "
       "int*, int, bool const*, int, int, int, int, int, int, int, int*, int*, int*, int*, void*, void**, "
       "int**, "
       "int, int, int)",
       "SGLang prefill trace analysis"},
      {"void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*, int*, long*, int*, void*, "
       "int*, "
       "void*, void const*, long const*, int*, int*, int*, int, int, int, int, int, int, int, int)",
       "SGLang decode trace analysis"},
      {"void deep_ep::internode_ll::combine<3, 10, 7168, 9>(void*, void*, int*, void*, void const*, long "
       "const*, "
       "float const*, int const*, long const*, int*, int, int*, int, int, int, int, int, int, int, int, "
       "bool)",
       "SGLang decode trace analysis"},
      // DeepSeek's in-house fork (deepseek-ai/profile-data prefill.json and decode traces): DeepEP's verbs
      // and namespaces under another root namespace that no table knows.
      {"void dpsk::ep::internode::notify_dispatch<false, 4>(int const*, long*, int, int const*, int*, int "
       "const*, "
       "int*, int, bool const*, int, int, int, int, int, int, int, int*, int*, int*, int*, void*, void**, "
       "int**, "
       "int, int, int*, int)",
       "deepseek-ai/profile-data prefill"},
      {"void dpsk::ep::internode::dispatch<false, 4, false, 4>(int4*, float*, long*, float*, "
       "dpsk::ep::internode::SourceMeta*, int4 const*, float const*, long const*, float const*, int*, int*, "
       "int*, "
       "int*, int const*, int const*, int const*, int const*, int, int, int, int, int, bool const*, void*, "
       "int, "
       "int, void**, int, int, int, int, int*)",
       "deepseek-ai/profile-data prefill"},
      {"void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int const*, int "
       "const*, "
       "int*, void*, void**, int**, int, int, int, int*, bool, int)",
       "deepseek-ai/profile-data prefill"},
      {"void dpsk::ep::internode::combine<false, 4, __nv_bfloat16, 4, 4, 16, 24>(int4*, float*, bool const*, "
       "int4 "
       "const*, float const*, int4 const*, int4 const*, int const*, int const*, "
       "dpsk::ep::internode::SourceMeta "
       "const*, int const*, int const*, int const*, int, int, int, int, void*, int, int, void**, int, int, "
       "int, "
       "int, int*)",
       "deepseek-ai/profile-data prefill"},
      {"void dpsk::ep::internode::dispatch_ll<true, 3, 10, 7168>(void*, float*, int*, long*, int*, int*, "
       "void*, "
       "int*, void*, void const*, long const*, int*, int*, int*, int, int, int, int, int, int, int, int*, "
       "int)",
       "deepseek-ai/profile-data decode"},
      {"void dpsk::ep::internode::combine_ll<3, 10, 7168, 9>(void*, void*, int*, void*, void const*, long "
       "const*, "
       "float const*, int const*, long const*, int*, int, int*, int, int, int, int, int, int, int, int*, "
       "int)",
       "deepseek-ai/profile-data decode"},
      // pplx-kernels: the kernels live in an anonymous namespace (csrc/all_to_all/internode_dispatch.cu).
      {"void (anonymous namespace)::dispatchKernel<10u, true, true>(int*, unsigned long, std::byte*, "
       "unsigned "
       "long, unsigned long, float*, unsigned long, unsigned long, unsigned long, std::byte*, unsigned long, "
       "float*, unsigned long, unsigned long, unsigned int*, unsigned long, unsigned long, unsigned long, "
       "unsigned long, unsigned int, unsigned int, unsigned int, unsigned long, unsigned long, unsigned "
       "long, "
       "unsigned int*, unsigned int, unsigned int*, unsigned int*, unsigned int*, unsigned int*, unsigned "
       "int*, "
       "unsigned int*, unsigned long*, unsigned long*, unsigned int&, std::byte*, std::byte*)",
       "ppl-ai/pplx-kernels internode_dispatch.cu"},
      // MoRI (ROCm expert-parallel dispatch/combine).
      {"void mori::moe::EpDispatchIntraNodeKernel<__hip_bfloat16>(...)",
       "ROCm/mori dispatch_combine/intranode"},
      {"void mori::moe::EpCombineIntraNodeKernel<__hip_bfloat16>(...)",
       "ROCm/mori dispatch_combine/intranode"},
      // Custom all-reduce kernels.
      {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, vllm::RankSignals, "
       "vllm::Signal*, "
       "__nv_bfloat16*, int, int)",
       "vLLM profile table"},
      {"void "
       "flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<(flashinfer::trtllm_"
       "allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, false, "
       "false>(flashinfer::trtllm_allreduce_"
       "fusion::AllReduceFusionParams<__nv_bfloat16>)",
       "SGLang/vLLM profile tables"},
      {"oneShotAllReduceKernel", "TensorRT-LLM customAllReduceKernels.cu, nsys kernel summary"},
      {"lowPrecisionTwoShotAllReduceKernel", "TensorRT-LLM FP8 two-shot all-reduce, nsys kernel summary"},
      // PyTorch symmetric memory (torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu).
      {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned "
       "long, "
       "unsigned int**, unsigned long, unsigned long)",
       "pytorch CUDASymmetricMemoryOps.cu"},
      {"void (anonymous namespace)::multimem_all_gather_kernel<16>(char*, char*, unsigned long, unsigned "
       "int**, "
       "unsigned long, unsigned long)",
       "pytorch CUDASymmetricMemoryOps.cu"},
      {"void (anonymous namespace)::one_shot_all_reduce_kernel<float, 16, 8>(float**, float*, float*, "
       "unsigned "
       "long, unsigned long, unsigned int**, unsigned long, unsigned long)",
       "pytorch CUDASymmetricMemoryOps.cu"},
      // TransformerEngine userbuffers (Megatron tensor-parallel overlap).
      {"kuserbuffers_pushsend(int*, int*, int4*, int4*, int)", "NeMo/Megatron trace notes"},
      {"userbuffers_fp16_sum_inplace_gpu_rw_ag", "TransformerEngine test list"},
      // Point-to-point and peer copies of other communication libraries.
      {"flagcxP2pKernel(void const*, void*, unsigned long, flagcxDataType_t, int, int, flagcxFifo*)",
       "FlagCX nvidia_adaptor"},
      {"void peer_copy_kernel_vec_batched(CopyTask const*, int, int)",
       "uccl gpu_driven/include/peer_copy.cuh"},
  };
  return names;
}

// Compute kernels from the same traces: GEMMs and attention in a communication library's namespace or with
// its verbs (combine, dispatch, broadcast, reduce, scatter), and the layout kernel that moves no data.
const std::vector<Named>& compute_names() {
  static const std::vector<Named> names = {
      {"void dpsk::gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 5u, 128u, 128u, 2u, "
       "(dpsk::gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, unsigned int, CUtensorMap_st, "
       "CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)",
       "deepseek-ai/profile-data prefill"},
      {"void "
       "cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c_outfmt_head::GemmKernel>(dpsk::grouped_"
       "gemm::cuda::fp8_ptp128c_outfmt_head::GemmKernel::Params)",
       "deepseek-ai/profile-data prefill"},
      {"void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, "
       "int, "
       "int)",
       "deepseek-ai/profile-data prefill"},
      {"void deep_ep::internode::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, "
       "int, "
       "int, int)",
       "SGLang prefill trace analysis"},
      {"void flash::flash_fwd_splitkv_mla_combine_kernel<cutlass::bfloat16_t, float, long, 512, "
       "64>(Flash_fwd_mla_"
       "params)",
       "deepseek-ai/profile-data decode"},
      {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::"
       "CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
       "cute::tuple<cute::C<128>, "
       "cute::C<128>, cute::C<192> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, "
       "false, "
       "true, false, false, false, true, true, false, false, false>, "
       "flash::CollectiveEpilogueFwd<cute::tuple<"
       "cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
       "cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, false, false, false>, flash::"
       "VarlenDynamicPersistentTileScheduler<128, 256, 32, false, false, true> > > >(...)",
       "SGLang prefill trace analysis"},
      {"flash::prepare_varlen_num_blocks_kernel(int, int, int, int const*, int const*, int const*, int "
       "const*, int "
       "const*, int const*, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*, int*, "
       "bool)",
       "SGLang prefill trace analysis"},
      {"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 160u, 128u, 0u, 64u, 9u, 4u, 128u, 128u, 1u, "
       "true, "
       "(deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, CUtensorMap_st, CUtensorMap_st, "
       "CUtensorMap_st, CUtensorMap_st)",
       "SGLang prefill trace analysis"},
      {"void "
       "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8>(cutlass_80_"
       "tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8::Params)",
       "SGLang decode trace analysis"},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
       "kernel__5x_cublas",
       "SGLang prefill trace analysis"},
      {"nvjet_tst_192x192_64x4_1x2_h_bz_coopB_TNN", "SGLang training profile table"},
      {"_fwd_kernel_ep_scatter_2", "SGLang prefill trace analysis (Triton, local token scatter)"},
      {"_silu_and_mul_post_quant_kernel", "SGLang decode trace analysis"},
      {"fused_moe_kernel", "vLLM profile table"},
      {"expandInputRowsKernel", "TensorRT-LLM MoE kernel list"},
      {"mul_broadcast_2d_kernel", "vLLM profile table"},
      {"void per_token_group_quant_8bit_kernel<__nv_bfloat16, c10::Float8_e4m3fn, false>(__nv_bfloat16 "
       "const*, "
       "void*, float*, int, int, int, float, float, float, int, int)",
       "SGLang prefill trace analysis"},
      {"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &(silu(float "
       "const&))>(__nv_bfloat16*, "
       "__nv_bfloat16 const*, int)",
       "SGLang prefill trace analysis"},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
       "namespace)::OpaqueType<"
       "2u>, unsigned int, 3, 64, 64>(...)",
       "SGLang decode trace analysis"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, "
       "float)#1}>, "
       "unsigned int, float, 4> >(...)",
       "PyTorch reduction"},
      {"void at::native::batch_norm_collect_statistics_kernel<at::native::Var, c10::BFloat16, float, 4>(...)",
       "tracelens/mi300_resnet_act_checkpoint"},
  };
  return names;
}

TEST(Classify, RealCommunicationKernelsAreCommunication) {
  const Classifier classifier;
  for (const Named& n : comm_names()) {
    const ClassRule* rule = classifier.match(n.name);
    ASSERT_NE(rule, nullptr) << n.name << " (" << n.where << ")";
    EXPECT_EQ(rule->cls, ActivityClass::kComm) << n.name << " (" << n.where << ")";
    EXPECT_FALSE(rule->source.empty()) << rule->pattern;
  }
}

TEST(Classify, GemmsAttentionAndLayoutKernelsStayCompute) {
  const Classifier classifier;
  for (const Named& n : compute_names()) {
    const ClassRule* rule = classifier.match(n.name);
    const ActivityClass cls = rule ? rule->cls : ActivityClass::kCompute;
    EXPECT_EQ(cls, ActivityClass::kCompute)
        << n.name << " (" << n.where << ") matched " << (rule ? rule->pattern : std::string());
  }
}

TEST(Classify, TheForkIsCaughtByStructureNotByItsNamespace) {
  const Classifier classifier;
  // No rule names "dpsk": the fork is recognised by DeepEP's communication namespace...
  const ClassRule* dispatch = classifier.match(comm_names()[12].name);
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->match, ClassRule::Match::kTokens);
  EXPECT_EQ(dispatch->pattern, "ns=internode|intranode");
  // ...and pplx's anonymous-namespace kernels by their verb alone.
  const ClassRule* pplx = classifier.match(comm_names()[17].name);
  ASSERT_NE(pplx, nullptr);
  EXPECT_THAT(pplx->source, HasSubstr("pplx-kernels"));
  for (const ClassRule& rule : default_rules()) EXPECT_EQ(rule.pattern.find("dpsk"), std::string::npos);
}

TEST(Classify, NameStructure) {
  const NameTokens fork = tokenize_kernel_name(
      "void dpsk::ep::internode::cached_notify<false>(int, int, dpsk::ep::internode::SourceMeta*)");
  EXPECT_THAT(fork.namespaces, ElementsAre("dpsk", "ep", "internode"));
  EXPECT_THAT(fork.function_words, ElementsAre("cached", "notify"));
  const NameTokens mori =
      tokenize_kernel_name("void mori::moe::EpDispatchIntraNodeKernel<__hip_bfloat16>(...)");
  EXPECT_THAT(mori.function_words, ElementsAre("ep", "dispatch", "intranode", "kernel"));
  const NameTokens trt = tokenize_kernel_name("oneShotAllReduceKernel");
  EXPECT_THAT(trt.function_words, ElementsAre("one", "shot", "allreduce", "kernel"));
  const NameTokens a2a = tokenize_kernel_name("moeA2ADispatchKernel");
  EXPECT_THAT(a2a.function_words, ElementsAre("moe", "a2a", "dispatch", "kernel"));
  const NameTokens anon = tokenize_kernel_name(
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
      "namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(int)");
  EXPECT_THAT(anon.namespaces, ElementsAre("at", "native"));
  EXPECT_THAT(anon.function_words, ElementsAre("cat", "array", "batched", "copy"));
  const NameTokens v = tokenize_kernel_name("all_to_all_vdev_2d");
  EXPECT_THAT(v.function_words, ElementsAre("alltoall", "vdev", "2d"));
}

TEST(Classify, OperationsFromKernelNames) {
  EXPECT_EQ(op_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"), "allreduce");
  EXPECT_EQ(op_from_kernel_name("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), "sendrecv");
  EXPECT_EQ(op_from_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), "");
  EXPECT_EQ(op_from_kernel_name("ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16"), "allreduce");
  EXPECT_EQ(op_from_kernel_name(comm_names()[12].name), "dispatch");
  EXPECT_EQ(op_from_kernel_name(comm_names()[13].name), "");           // cached_notify: a barrier, no data op
  EXPECT_EQ(op_from_kernel_name(comm_names()[20].name), "allreduce");  // vllm::cross_device_reduce_1stage
  EXPECT_EQ(op_from_kernel_name(comm_names()[25].name), "allgather");  // multimem_all_gather_kernel
}

TEST(Classify, RulesKeepDoubleColonsInPatterns) {
  const ClassRule fork = parse_rule("comm:contains:foo::ep::");
  EXPECT_EQ(fork.pattern, "foo::ep::");
  EXPECT_EQ(fork.library, "user");
  EXPECT_EQ(fork.source, "--rule");
  const ClassRule with_library = parse_rule("comm:contains:foo::ep::internode::dispatch:fooep");
  EXPECT_EQ(with_library.pattern, "foo::ep::internode::dispatch");
  EXPECT_EQ(with_library.library, "fooep");
  const ClassRule prefix = parse_rule("compute:prefix:void foo::ep::grouped_gemm");
  EXPECT_EQ(prefix.match, ClassRule::Match::kPrefix);
  EXPECT_EQ(prefix.pattern, "void foo::ep::grouped_gemm");
  const ClassRule tokens = parse_rule("comm:tokens:fn=dispatch|combine ns=fooep:fooep");
  EXPECT_EQ(tokens.match, ClassRule::Match::kTokens);
  EXPECT_EQ(tokens.pattern, "fn=dispatch|combine ns=fooep");

  // A user's "foo::ep::" rule takes the fork's communication, not its GEMMs in "foo::gemm::".
  const Classifier classifier({parse_rule("comm:contains:dpsk::ep::")});
  EXPECT_EQ(classifier.match_index(comm_names()[13].name), 0);
  const ClassRule* gemm = classifier.match(compute_names()[0].name);
  EXPECT_TRUE(gemm == nullptr || gemm->cls == ActivityClass::kCompute);
}

TEST(Classify, AmbiguousOrMalformedRulesAreRefusedInOneLine) {
  for (const char* bad : {"comm:contains:foo::ep:::mylib", "comm:contains:a:b:c", "comm::contains:x",
                          "comm:contains:", "comm:contains:x:", "comm:prefix", "network:prefix:x",
                          "comm:regex:x", "comm:tokens:fn=", "comm:tokens:where=x", "comm:tokens:fn=a||b"}) {
    try {
      parse_rule(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_THAT(message, HasSubstr(bad)) << message;
    }
  }
}

TEST(Classify, UserRulesComeFirst) {
  const Classifier classifier({parse_rule("compute:prefix:ncclDevKernel_Generic:mine")});
  const ClassRule* rule = classifier.match("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->cls, ActivityClass::kCompute);
  EXPECT_EQ(rule->library, "mine");
}

}  // namespace
}  // namespace meshscope::measure
