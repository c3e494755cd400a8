// Synthetic training-job model for meshscope_gen_job: the random source, the job topology (tensor- and
// data-parallel process groups), the workload shapes and the kernel catalogue. Everything here is
// deterministic from the seed; no standard-library distribution is used, so the same seed gives the same job
// everywhere.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshscope::gen {

using TimeNs = std::int64_t;

// -----------------------------------------------------------------------------------------------------------
// Random numbers: splitmix64 to seed, xoshiro256** to draw.

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double range(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  // base scaled by a factor drawn from [1 - spread, 1 + spread], at least 1 ns.
  TimeNs jitter(double base_ns, double spread) {
    return std::max<TimeNs>(1,
                            static_cast<TimeNs>(std::llround(base_ns * range(1.0 - spread, 1.0 + spread))));
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t state = seed ^ (salt * 0xd1b54a32d192ed03ULL);
  return splitmix64(state);
}

// -----------------------------------------------------------------------------------------------------------
// Hardware and workload.

struct Gpu {
  const char* name = "NVIDIA H100 80GB HBM3";
  std::int64_t total_memory = 85045493760;
  int compute_major = 9, compute_minor = 0;
  int sm_count = 132;
  double peak_bf16_flops = 989e12;  // dense BF16 tensor-core peak, H100 SXM
  double hbm_bytes_per_s = 3.35e12;
  double nvlink_busbw = 360e9;  // achievable NCCL bus bandwidth inside a node
  double network_busbw = 45e9;  // achievable NCCL bus bandwidth across nodes (400 Gb/s per GPU)
};

struct Shape {
  std::int64_t hidden = 4096, ffn = 16384, heads = 32, seq = 4096, micro_batch = 1, vocab = 50304;
  std::int64_t tokens() const { return seq * micro_batch; }
};

enum class PgKind : std::uint8_t { kWorld, kTp, kDp, kPp };

struct ProcessGroup {
  PgKind kind = PgKind::kWorld;
  std::string name;  // "0", "1", ...: PyTorch's sequential group names
  const char* desc = "default_pg";
  std::vector<int> ranks;
  std::string ranks_text;  // "[0, 1]"
  bool inter_node = false;
  int stream = 0;             // NCCL stream id this group's kernels run on
  std::int64_t next_seq = 1;  // sequence number of the next collective
};

// Ranks are laid out as Megatron-LM does by default: tensor-parallel ranks fastest, then data-parallel, then
// pipeline stages (rank = tp_rank + tp * (dp_rank + dp * stage)).
struct Topology {
  int ranks = 4, tp = 1, dp = 4, pp = 1, gpus_per_node = 8;
  std::vector<ProcessGroup> groups;  // [0] = default_pg, then tp groups, then dp groups, then pp groups
  int tp_groups() const { return tp > 1 ? ranks / tp : 0; }
  int dp_groups() const { return dp > 1 ? tp * pp : 0; }
  int stage_of(int rank) const { return rank / (tp * dp); }
  int tp_group_of(int rank) const { return tp > 1 ? 1 + rank / tp : -1; }
  int dp_group_of(int rank) const { return dp > 1 ? 1 + tp_groups() + stage_of(rank) * tp + rank % tp : -1; }
  int pp_group_of(int rank) const { return pp > 1 ? 1 + tp_groups() + dp_groups() + rank % (tp * dp) : -1; }
  int world_group() const { return ranks > 1 ? 0 : -1; }
};

inline constexpr int kComputeStream = 7;
inline constexpr int kWorldStream = 15;
inline constexpr int kTpStream = 19;
inline constexpr int kDpStream = 23;
// Pipeline point-to-point: one stream per peer and direction (PyTorch keeps a communicator per peer pair).
inline constexpr int kPpSendNextStream = 27;
inline constexpr int kPpRecvPrevStream = 31;
inline constexpr int kPpSendPrevStream = 35;
inline constexpr int kPpRecvNextStream = 39;

inline std::string ranks_json(const std::vector<int>& ranks) {
  return fmt::format("[{}]", fmt::join(ranks, ", "));
}

// The tensor-parallel size chosen for RANKS ranks (per pipeline stage) when none is asked for.
inline int default_tp(int ranks) {
  if (ranks >= 32 && ranks % 8 == 0) return 8;
  if (ranks >= 16 && ranks % 4 == 0) return 4;
  if (ranks >= 4 && ranks % 2 == 0) return 2;
  return 1;
}

inline Topology make_topology(int ranks, int tp_request, int pp = 1) {
  Topology t;
  t.ranks = ranks;
  t.pp = pp;
  t.tp = tp_request > 0 ? tp_request : default_tp(ranks / pp);
  t.dp = ranks / (t.tp * pp);
  t.gpus_per_node = std::min(ranks, 8);
  ProcessGroup world;
  world.kind = PgKind::kWorld;
  world.desc = "default_pg";
  for (int r = 0; r < ranks; ++r) world.ranks.push_back(r);
  world.inter_node = ranks > t.gpus_per_node;
  world.stream = kWorldStream;
  t.groups.push_back(world);
  int next_name = 1;
  if (t.tp > 1) {
    for (int g = 0; g < ranks / t.tp; ++g) {
      ProcessGroup pg;
      pg.kind = PgKind::kTp;
      pg.desc = "tp";
      for (int i = 0; i < t.tp; ++i) pg.ranks.push_back(g * t.tp + i);
      pg.inter_node = false;
      pg.stream = kTpStream;
      t.groups.push_back(pg);
    }
  }
  const int per_stage = t.tp * t.dp;
  if (t.dp > 1) {
    for (int s = 0; s < pp; ++s) {
      for (int g = 0; g < t.tp; ++g) {
        ProcessGroup pg;
        pg.kind = PgKind::kDp;
        pg.desc = "dp";
        for (int i = 0; i < t.dp; ++i) pg.ranks.push_back(s * per_stage + g + i * t.tp);
        pg.inter_node = pg.ranks.back() / t.gpus_per_node != pg.ranks.front() / t.gpus_per_node;
        pg.stream = kDpStream;
        t.groups.push_back(pg);
      }
    }
  }
  if (pp > 1) {
    for (int c = 0; c < per_stage; ++c) {
      ProcessGroup pg;
      pg.kind = PgKind::kPp;
      pg.desc = "pp";
      for (int s = 0; s < pp; ++s) pg.ranks.push_back(c + s * per_stage);
      pg.inter_node = per_stage >= t.gpus_per_node;
      pg.stream = kPpSendNextStream;
      t.groups.push_back(pg);
    }
  }
  for (auto& pg : t.groups) {
    pg.name = pg.kind == PgKind::kWorld ? "0" : std::to_string(next_name++);
    pg.ranks_text = ranks_json(pg.ranks);
  }
  return t;
}

// -----------------------------------------------------------------------------------------------------------
// Kernels: names as PyTorch 2.x / cuBLAS / flash-attention / NCCL 2.21 print them on H100, with launch
// shapes.

struct KernelShape {
  std::int64_t grid[3] = {1, 1, 1};
  std::int64_t block[3] = {128, 1, 1};
  std::int64_t registers = 32;
  std::int64_t shared_bytes = 0;
};

struct KernelDef {
  const char* name = "";
  KernelShape shape;
};

namespace kernel_names {
inline constexpr const char* kGemmTn =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_"
    "kernel__"
    "5x_cublas";
inline constexpr const char* kGemmNn =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_"
    "kernel__"
    "5x_cublas";
inline constexpr const char* kGemmNt =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
    "kernel__"
    "5x_cublas";
inline constexpr const char* kLayerNorm =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
    "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
inline constexpr const char* kLayerNormBwdInput =
    "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>("
    "c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, "
    "c10::BFloat16*, "
    "int)";
inline constexpr const char* kLayerNormBwdGamma =
    "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, "
    "long, "
    "c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)";
inline constexpr const char* kFlashFwd =
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
    "false, "
    "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
    "true, "
    "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)";
inline constexpr const char* kFlashBwdDotDoO =
    "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<128, 64, "
    "128, 8, 2, "
    "4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, "
    "cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)";
inline constexpr const char* kFlashBwd =
    "void "
    "pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, "
    "64, "
    "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, "
    "cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_bwd_params)";
inline constexpr const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, "
    "3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
inline constexpr const char* kGelu =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
    "const::{lambda(c10::BFloat16)"
    "#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
    "const::{lambda(c10::BFloat16)"
    "#1}, std::array<char*, 2ul>)";
inline constexpr const char* kGeluBwd =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
    "const::{lambda(c10::BFloat16, "
    "c10::BFloat16)#1}, std::array<char*, 3ul> >(int, "
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
    "const::{lambda(c10::BFloat16, "
    "c10::BFloat16)#1}, std::array<char*, 3ul>)";
inline constexpr const char* kBiasSum =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<"
    "c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, "
    "c10::BFloat16>::operator()(at::TensorIterator&)::"
    "{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, "
    "at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::"
    "operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)";
inline constexpr const char* kEmbedding =
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, "
    "-2, true>("
    "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
    "const, "
    "unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
    "int, "
    "long)";
inline constexpr const char* kEmbeddingBwd =
    "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, "
    "long>(long "
    "const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)";
inline constexpr const char* kLogSoftmax =
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, "
    "int)";
inline constexpr const char* kNllLoss =
    "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, "
    "long>("
    "c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, "
    "long, long, "
    "long)";
inline constexpr const char* kNllLossBwd =
    "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, long>("
    "c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, "
    "int, int, "
    "long, long)";
inline constexpr const char* kLogSoftmaxBwd =
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, "
    "c10::BFloat16 const*, long)";
inline constexpr const char* kNorm =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, "
    "float>, "
    "unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, "
    "unsigned "
    "int, float, 4, 4>)";
inline constexpr const char* kForeachMul =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
    "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, "
    "std::multiplies<float>, float*>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::"
    "(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*)";
inline constexpr const char* kFusedAdamW =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
    "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
    "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, "
    "float*>("
    "at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous "
    "namespace)::"
    "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, "
    "double, "
    "double, bool, float*, float*)";
inline constexpr const char* kNcclAllReduceBf16 =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kNcclAllReduceF32 =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kNcclReduceScatterF32 =
    "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kNcclAllGather =
    "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kNcclSendRecv = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
}  // namespace kernel_names

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

inline KernelDef gemm_kernel(const char* name, std::int64_t m, std::int64_t n, bool wide_tile) {
  KernelDef k{name, {}};
  const std::int64_t tile_n = wide_tile ? 256 : 128;
  k.shape.grid[0] = ceil_div(m, 128);
  k.shape.grid[1] = ceil_div(n, tile_n);
  k.shape.block[0] = wide_tile ? 384 : 256;
  k.shape.registers = 168;
  k.shape.shared_bytes = wide_tile ? 213248 : 181504;
  return k;
}

inline KernelDef elementwise_kernel(const char* name, std::int64_t elements, std::int64_t per_thread = 4) {
  KernelDef k{name, {}};
  k.shape.grid[0] = std::clamp<std::int64_t>(ceil_div(elements, 128 * per_thread), 1, 1 << 20);
  k.shape.block[0] = 128;
  k.shape.registers = 28;
  return k;
}

inline KernelDef row_kernel(const char* name, std::int64_t rows, std::int64_t block, std::int64_t regs,
                            std::int64_t shared) {
  KernelDef k{name, {}};
  k.shape.grid[0] = rows;
  k.shape.block[0] = block;
  k.shape.registers = regs;
  k.shape.shared_bytes = shared;
  return k;
}

inline KernelDef nccl_kernel(const char* name, std::int64_t channels, std::int64_t threads) {
  KernelDef k{name, {}};
  k.shape.grid[0] = channels;
  k.shape.block[0] = threads;
  k.shape.registers = 96;
  k.shape.shared_bytes = 88848;
  return k;
}

}  // namespace meshscope::gen
