// Inputs of the prediction engine: what is trained (ModelSpec), on what (HardwareSpec), how it is laid out
// (ParallelConfig) and which achievable fractions and overlaps are assumed (Efficiencies). Plain value types;
// every field is visible and overridable, and docs/MODEL.md gives the source of each default.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace meshscope::model {

// Bad input (impossible layout, unknown preset, malformed TOML): the message is one line that says what to
// change. The command line turns it into exit status 1.
class InvalidInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Recompute { kNone, kSelective, kFull };
enum class Schedule { kGPipe, k1F1B, kInterleaved };
// Number format of the linear-layer GEMMs (see precision.hpp for what each recipe keeps in BF16):
// BF16; FP8 with one scale per tensor (Transformer Engine delayed or current scaling); FP8 with one scale per
// block (MXFP8 1x32 on Blackwell, DeepSeek-V3's 1x128 / 128x128 on Hopper); NVFP4 (16-element blocks).
enum class Precision { kBF16, kFP8, kFP8Block, kNVFP4 };
// Bytes of model state per parameter with mixed precision and Adam: 16 = the memory equation of ZeRO
// (Rajbhandari et al. 2020 §3.1: 2 weights + 2 grads + 12 optimizer), 18 = Megatron-LM (fp32 gradient
// accumulation: 2 weights + 4 grads + 12 optimizer; Korthikanti et al. 2022 §5 / Megatron
// distrib_optimizer.md).
enum class StateBytes { k16, k18 };
// What a step is: a training step (forward, backward, optimizer) or an inference pass (forward only, as a
// prefill: no gradients, no optimizer state, the attention's keys and values kept as the KV cache).
enum class Mode { kTraining, kInference };
// How context parallelism exchanges keys and values (Megatron-Core --cp-comm-type; Transformer Engine's
// context-parallel attention): a ring of peer-to-peer K/V chunks overlapped with the attention of the chunk
// at hand (p2p); an all-gather of K and V before the attention and a reduce-scatter of their gradients after
// its backward, exposed (all_gather; Llama 3's); all-to-alls that trade the sequence split for a head split
// around the attention, exposed (a2a, DeepSpeed-Ulysses).
enum class CpComm { kRing, kAllGather, kAllToAll };

std::string_view to_string(Recompute value);
std::string_view to_string(Schedule value);
std::string_view to_string(Precision value);
std::string_view to_string(StateBytes value);
std::string_view to_string(Mode value);
std::string_view to_string(CpComm value);  // "ring", "all-gather", "all-to-all"
// Parse the CLI spellings ("none|selective|full", "gpipe|1f1b|interleaved", "bf16|fp8|fp8-block|nvfp4",
// "16|18"); throw InvalidInput naming the accepted values.
Recompute parse_recompute(std::string_view text);
Schedule parse_schedule(std::string_view text);
Precision parse_precision(std::string_view text);
StateBytes parse_state_bytes(std::string_view text);
Mode parse_mode(std::string_view text);       // "training|inference"
CpComm parse_cp_comm(std::string_view text);  // "ring|all-gather|all-to-all" (or p2p, all_gather, a2a)

struct ModelSpec {
  std::string name;
  std::string source;  // where the numbers come from (preset file comment or "flags")
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;           // grouped-query attention; = heads for multi-head attention
  int head_dim = 0;           // 0 means hidden / heads
  int ffn = 0;                // hidden size of the dense MLP
  double ffn_multiplier = 0;  // when > 0, ffn follows hidden (ffn = multiplier x hidden) under --hidden
  int vocab = 0;
  int seq = 2048;          // default training sequence length
  int global_batch = 0;    // default global batch in sequences (0: none)
  bool gated_mlp = false;  // SwiGLU: three weight matrices instead of two
  bool tied_embeddings = false;
  bool learned_positions = false;  // GPT-2/3 style position embedding table (seq x hidden)
  bool dropout = false;            // dropout masks are stored for backward (Korthikanti et al. 2022 §4.1)
  // Mixture of experts: experts > 1 turns the MLP of every moe_layer_freq-th layer after the first
  // dense_layers (Megatron-Core --moe-layer-freq; Llama 4 Maverick alternates dense and MoE layers) into
  // `experts` routed experts of width moe_ffn, top_k of them active per token, plus shared_experts always on.
  int experts = 1;
  int top_k = 1;
  int moe_ffn = 0;
  int shared_experts = 0;
  int dense_layers = 0;
  int moe_layer_freq = 1;
  // Multi-token prediction (DeepSeek-AI 2024, arXiv:2412.19437 §2.2; Megatron-Core --mtp-num-layers): each
  // module is one more transformer layer of the model's last kind, a projection of 2h -> h and another pass
  // through the shared output head, on the last pipeline stage. Its parameters are not in the model's count
  // (DeepSeek-V3: 671 B main model + 14 B MTP module).
  int mtp_layers = 0;
  // Multi-head latent attention (DeepSeek-V2/V3); all zero for ordinary attention.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_dim = 0;
  int qk_rope_dim = 0;
  int v_head_dim = 0;

  bool is_moe() const { return experts > 1; }
  // Whether transformer layer LAYER (0-based) holds routed experts.
  bool is_moe_layer(int layer) const {
    return is_moe() && layer >= dense_layers && (layer - dense_layers) % moe_layer_freq == 0;
  }
  // MoE layers among LAYERS layers starting at FIRST.
  int moe_layers_between(int first, int layers) const;
  bool is_mla() const { return kv_lora_rank > 0; }
  int head_size() const { return head_dim > 0 ? head_dim : hidden / heads; }
};

struct HardwareSpec {
  std::string name;
  std::string source;
  std::string
      family;  // GPU generation (ampere, hopper, blackwell, ...): the group sustained_fraction is fitted on
  double peak_tflops_bf16 = 0;  // dense, per GPU
  double peak_tflops_fp8 = 0;   // dense, per GPU
  double peak_tflops_fp4 = 0;   // dense NVFP4/MXFP4, per GPU (0: no FP4 tensor cores)
  double peak_tflops_tf32 = 0;  // dense TF32 tensor peak, per GPU (0: none, or not stated)
  double peak_tflops_fp32 =
      0;             // FP32 without TF32 (CUDA cores; AMD: the matrix FP32 rate), per GPU (0: not stated)
  bool bf16 = true;  // BF16 arithmetic (a V100 has none: its 16-bit peak is FP16's)
  double hbm_capacity_gib = 0;
  double hbm_tbps = 0;  // TB/s (1e12 B/s)
  // What a profile records of the device (Kineto deviceProperties, CUPTI, Nsight), so that a GPU no preset
  // names can be described from the preset of its architecture (compare/recorded_hardware.hpp): the compute
  // capability ("8.0"; AMD: the gfx major.minor, "9.4" for gfx942) and the SMs (AMD: compute units) of one
  // device as the driver reports them. "" and 0: not stated.
  std::string compute_capability;
  int sm_count = 0;
  int gpus_per_node = 8;  // size of the scale-up domain (NVLink, Infinity Fabric, or one PCIe server)
  // The scale-up link as its vendor names it ("NVLink", "Infinity Fabric (xGMI)", "PCIe"): what outputs call
  // intra_node_gbps. The preset's intra_node_link, else by family (CDNA: Infinity Fabric; others: NVLink).
  std::string intra_node_link;
  double intra_node_gbps = 0;  // NVLink GB/s (1e9 B/s) per GPU per direction
  double inter_node_gbps = 0;  // network GB/s per GPU per direction
  // Defaults for Efficiencies, from published microbenchmarks (see the preset files).
  double gemm_efficiency_bf16 = 0.8;
  double gemm_efficiency_fp8 = 0.7;
  double gemm_efficiency_fp4 = 0.6;
  double gemm_overhead_us = 0;
  // Attention core forward rate (TFLOP/s, BF16, non-causal, head dim 128, long sequences): FlashAttention-2
  // (the kernel PyTorch SDPA and most FSDP stacks run), the fused cuDNN kernel that Transformer Engine runs
  // on Hopper and Blackwell (0: none, FlashAttention-2 is used), and unfused PyTorch attention.
  double attention_tflops_flash = 0;
  double attention_tflops_fused = 0;
  double attention_tflops_standard = 0;
  // Backward over forward rate of the fused (cuDNN) attention kernel (Shah et al. 2024 Fig. 5-6: 0.86 for
  // FlashAttention-2, FlashAttention-3 and cuDNN on H100).
  double attention_fused_backward_ratio = 0.86;
  double hbm_efficiency = 0.85;
  double intra_node_efficiency = 0.8;
  double inter_node_efficiency = 0.9;
  double intra_node_alpha_us = 3;
  double inter_node_alpha_us = 6;
  double reserved_gib = 2;
  // Fraction of the microbenchmark tensor-core rates (GEMM peak x efficiency, attention) sustained through a
  // training step: clocks under a whole node's sustained power and thermal load, and contention with the
  // communication kernels that run beside the compute. Fitted per family on published training runs
  // (tests/model/accuracy_test.cpp, leave-one-source-out; docs/ACCURACY.md).
  double sustained_fraction = 1.0;
};

// Achievable fractions, latencies and overlaps the prediction assumes. defaults_for(hw) takes them from the
// hardware preset; calibration (calibration.hpp) replaces them with what a measured profile shows.
struct Efficiencies {
  double gemm_bf16 = 0.8;      // achievable fraction of peak BF16 FLOP/s for large GEMMs
  double gemm_fp8 = 0.7;       // achievable fraction of peak FP8 FLOP/s for large GEMMs
  double gemm_fp4 = 0.6;       // achievable fraction of peak FP4 FLOP/s for large GEMMs
  double gemm_overhead_s = 0;  // fixed cost per GEMM kernel (fit to the GEMM-size curve)
  // Achieved forward FLOP/s of the attention core (QK^T, softmax, AV; non-causal, head dim 128, long
  // sequences): FlashAttention-2, the cuDNN fused kernel of Transformer Engine, and unfused.
  double attention_flash_flops_per_s = 0;
  double attention_fused_flops_per_s = 0;
  double attention_standard_flops_per_s = 0;
  bool flash_attention = true;   // fused attention: no s^2 activations stored, runs at the flash rate
  bool cudnn_attention = false;  // Transformer Engine's cuDNN kernel instead of FlashAttention-2
  bool flash_v1 = false;         // the 2022 FlashAttention CUDA kernel (FlashAttention v1)
  bool flash_triton = false;     // FlashAttention in Triton (2022-2023; llm-foundry's attn_impl triton)
  bool causal = true;            // decoder masks: fused kernels skip the masked half of QK^T and AV
  // Backward rate over forward rate of flash/fused kernels (backward = 2.5 x forward FLOPs) and causal over
  // non-causal rate (Shah et al. 2024, FlashAttention-3, Fig. 5-6, H100, head dim 128, sequence 8k).
  double attention_backward_ratio = 0.86;
  double attention_fused_backward_ratio = 0.86;
  double attention_causal_ratio = 0.90;
  // Fraction of the microbenchmark tensor-core rates (GEMM, attention) that a GPU sustains inside a training
  // step (HardwareSpec::sustained_fraction, fitted per GPU family on published runs).
  double sustained_fraction = 1.0;
  double hbm = 0.85;                 // achievable fraction of HBM bandwidth (STREAM triad / peak)
  double intra_node_alpha_s = 3e-6;  // latency per ring step inside the NVLink domain
  double intra_node_Bps = 0;         // achievable bandwidth per GPU per direction inside the node
  double inter_node_alpha_s = 6e-6;
  double inter_node_Bps = 0;
  // Fraction of each kind of communication that the schedule can hide behind independent compute
  // (0 = fully exposed, 1 = hidden up to the compute available to hide it).
  double overlap_tp = 0;
  double overlap_cp = 1;
  double overlap_ep = 0;
  double overlap_pp = 0;
  double overlap_dp = 1;
  // Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): the expert all-to-alls of one
  // micro-batch's forward hide behind another's backward compute, and the other way round (predict.cpp).
  bool moe_a2a_overlap = false;
  StateBytes state_bytes = StateBytes::k16;
  double reserved_bytes = 2.0 * (1ull << 30);  // CUDA context, workspaces, communication buffers
  // Mixture of experts: tokens on the busiest expert-parallel rank over the mean (1 = perfectly balanced, as
  // the Megatron-Bridge benchmarks force; Lepikhin et al. 2021 §2.2 capacity factor bounds it).
  double moe_imbalance = 1.0;
  // NVFP4 recipe: transformer layers kept in BF16 (the last ones; NVIDIA 2025, arXiv:2509.25149, "selective
  // high-precision layers").
  int nvfp4_bf16_layers = 0;
  // FP8 recipes that keep the weights only in FP8 between optimizer steps and all-gather them in FP8
  // (Megatron-Core --fp8-param-gather; Megatron-Bridge's MXFP8 recipe sets it): 1 B per weight, not 2.
  bool fp8_param_gather = false;
};

Efficiencies defaults_for(const HardwareSpec& hw);

// A parallel layout. Zero in an integer field (or the *_set flags false) means "choose the default";
// resolve() fills every field and records which ones it chose.
struct ParallelConfig {
  int gpus = 0;
  int tp = 0;
  int pp = 0;
  int dp = 0;
  int cp = 0;
  int ep = 0;
  // Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size): the width of each expert is
  // split over etp GPUs. The expert layers fold their own grid out of the same tp x cp x dp GPUs of a stage:
  // etp x ep x expert data parallel (Liu et al. 2025, "MoE Parallel Folding", arXiv:2504.14960; Megatron-Core
  // parallel_state.initialize_model_parallel). 0 = tp (Megatron-Core's default).
  int etp = 0;
  int micro_batch = 0;
  int global_batch = 0;  // sequences per step
  int seq = 0;
  int zero = -1;  // ZeRO stage 0..3 (3 = FSDP full sharding)
  int virtual_stages = 0;
  // Uneven pipelines (Megatron-Core --decoder-first-pipeline-num-layers /
  // --decoder-last-pipeline-num-layers): transformer layers on the first and last stage; -1 = balanced (the
  // remainder taken from the ends).
  int first_stage_layers = -1;
  int last_stage_layers = -1;
  // Interleaved 1F1B: micro-batches run per virtual stage before switching chunk (Megatron-Core
  // microbatch_group_size_per_vp_stage); 0 = pp, or all micro-batches when they are not a multiple of pp.
  int microbatch_group = 0;
  // Activation offloading to host memory (Megatron-Core --cpu-offloading-num-layers): the activations of this
  // many transformer layers per stage leave HBM between their forward and backward passes.
  int offload_layers = 0;
  bool recompute_set = false;
  Recompute recompute = Recompute::kNone;
  bool schedule_set = false;
  Schedule schedule = Schedule::k1F1B;
  Precision precision = Precision::kBF16;
  CpComm cp_comm = CpComm::kRing;
  Mode mode = Mode::kTraining;
  bool mode_set = false;               // given by the user (compare: else the profile's)
  int sequence_parallel = -1;          // -1 default (on when tp > 1), 0 off, 1 on
  std::vector<std::string> defaulted;  // names of the fields resolve() chose

  int model_parallel() const { return tp * pp * cp; }
  // etp, or its default (tp) before resolve().
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // Replicas of each expert shard within a pipeline stage: tp x cp x dp / (etp x ep).
  int expert_data_parallel() const { return std::max(1, tp * cp * dp / std::max(1, expert_tp() * ep)); }
  int micro_batches() const { return global_batch / (dp * micro_batch); }  // per pipeline, per step
  bool sp() const { return sequence_parallel == 1; }
  bool inference() const { return mode == Mode::kInference; }
  friend bool operator==(const ParallelConfig&, const ParallelConfig&) = default;
};

// Token assignments one routed expert's shard processes per micro-batch (the rows of its GEMMs), balanced,
// for TOKENS tokens per GPU of the dense layers (micro_batch x seq / cp): an expert-data-parallel replica
// holds tokens x ep x etp / tp of the stage's tokens, and each of its experts gets top_k / experts of them.
double expert_rows_per_expert(const ModelSpec& model, const ParallelConfig& config, double tokens);

// Fills the defaults of CONFIG for MODEL on HW and validates the layout. Throws InvalidInput with one line
// that says what to change (TP not dividing heads, a stage without layers, product != GPUs, batch not
// divisible by DP x micro-batch, ...).
ParallelConfig resolve(ParallelConfig config, const ModelSpec& model, const HardwareSpec& hw);
// Validates an already resolved config; returns an empty string when valid, else the one-line reason.
std::string check_layout(const ParallelConfig& config, const ModelSpec& model, const HardwareSpec& hw);
// Validates the architecture itself (positive sizes, heads dividing hidden, ...).
void check_model(const ModelSpec& model);
void check_hardware(const HardwareSpec& hw);

}  // namespace meshscope::model
