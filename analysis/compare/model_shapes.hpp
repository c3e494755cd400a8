// What the recorded shapes of one rank show of the model(s) it ran (docs/COMPARE.md "What the profile ran"),
// read from structure rather than names: attention from whichever operators computed it (a fused attention
// operator; or eagerly, a product of queries by keys whose scores a softmax normalises, over [batch, heads]
// or over batch × heads folded into one dimension), the input layer (the largest embedding table of a width,
// or a convolution whose kernel tiles the image into the attention's tokens), the GEMM weights with the rows
// they ran on, and the experts (grouped GEMMs, or a router whose top-k picks experts run one by one). A trace
// holding several models (a text encoder beside a decoder) gives one ShapedModel per width, the one doing the
// most GEMM work first. workload.cpp turns the first into a Workload.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/measure/work.hpp"

namespace meshscope::compare {

// How the profile's attention was computed.
enum class AttentionKind : std::uint8_t {
  kFused,        // scaled_dot_product_attention, flash, memory-efficient or cuDNN attention; the attention
                 // operators of FlashAttention, AITER, vLLM, FlashInfer and sglang
  kHeadsApart,   // eager: QK^T as a product over [batch, heads, seq, head]
  kHeadsFolded,  // eager: QK^T as bmm over [batch × heads, seq, head] (nn.MultiheadAttention)
};

// One shape of forward attention. BATCH and HEADS are 0 where the operators folded them into LEAD (batch ×
// heads): the model's width resolves them (resolve()). SEQ is the queries' length, KV_SEQ the keys' (they
// differ in cross-attention and when decoding with a cache). HEAD_DIM is the queries' and keys' head size,
// V_HEAD_DIM the values' where it differs (multi-head latent attention), else 0.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, kv_heads = 0;
  std::int64_t lead = 0;
  std::int64_t seq = 0, kv_seq = 0, head_dim = 0, v_head_dim = 0;
  // The sequences were packed into one dimension of tokens (serving and variable-length attention): SEQ is
  // their mean length, BATCH their count, or, when the operator does not record it (SEQUENCES_UNKNOWN),
  // BATCH is 1 and SEQ all the tokens.
  bool packed = false, sequences_unknown = false;
  auto operator<=>(const AttentionShape&) const = default;
  bool folded() const { return heads == 0; }
  std::int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
};

// A convolution over a batch of images (or frames, or clips) [batch, channels, spatial...] with a weight
// [channels_out, channels_in, kernel...]: a patch embedding when its kernel tiles the input into the
// attention's tokens.
struct ConvShape {
  std::int64_t batch = 0, channels_out = 0, channels_in = 0;
  std::vector<std::int64_t> input, kernel;  // spatial extents
  auto operator<=>(const ConvShape&) const = default;
  // Tiles of the kernel's size per input (stride = kernel, as a patch embedding runs); 0 when the kernel
  // does not tile the input.
  std::int64_t patches() const;
};

struct ShapeCounts {
  AttentionKind attention_kind = AttentionKind::kFused;
  std::map<AttentionShape, std::int64_t> attention;                          // forward calls per shape
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> embeddings;  // (V, D) -> look-ups
  // (V, D, tokens looked up) -> look-ups: an encoder-decoder looks up its shared table for both sequences.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> lookup_tokens;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> weights;      // (N, K) -> calls
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> weight_rows;  // (N, K) -> rows, summed
  std::map<ConvShape, std::int64_t> convolutions;
  std::map<std::int64_t, std::int64_t> grouped_experts;  // G of grouped GEMMs
  std::map<std::int64_t, std::int64_t> grouped_rows;     // A's rows of grouped GEMMs
  // The weights are aten::mm's right operands (no linear or addmm recorded: torch.compile's code), or such
  // products were recorded in a training step, where they are not read (UNREAD_PRODUCTS).
  bool weights_from_products = false, unread_products = false;
  // In a training step: the products read are those of the threads the forward attention ran on (the
  // backward ran on another, as PyTorch's autograd engine runs a GPU's backward).
  bool products_on_forward_threads = false;
  // Users' own attention operators read as attention (measure::user_attention_operator), by name.
  std::set<std::string> user_attention;

  std::int64_t weight_calls(std::int64_t n, std::int64_t k) const;
  std::int64_t rows_of(std::int64_t n, std::int64_t k) const;
};

// The shapes of the lowest rank with any operator recorded with shapes (its counted and uncounted
// operators: ProfileWork::ops and ::uncounted). FORWARD_ONLY: the profile holds no backward pass, so matrix
// products by weights (aten::mm) are read as projections where no linear was recorded (in a training step,
// those on the forward attention's threads, where the backward ran on others).
ShapeCounts count_shapes(const measure::ProfileWork& work, bool forward_only);

// One model the shapes show: its width (hidden size), how its input came in, and the attention of that width
// (heads resolved for folded shapes).
struct ShapedModel {
  std::int64_t width = 0;
  std::int64_t tp = 1;  // width / (heads × head size) on the rank: tensor-parallel sharding
  // The attention's heads × head size is not the width, and an output projection [width, heads × value head
  // size] ties it to this model: a head size of its own (Qwen3, Gemma) or latent attention (DeepSeek).
  bool own_head_size = false;
  // The input layer: the largest embedding table of this width (V, D) and its look-ups, or a patch
  // embedding and its calls; neither when the width came from the attention alone.
  std::optional<std::pair<std::int64_t, std::int64_t>> vocabulary;
  std::int64_t vocabulary_lookups = 0;
  std::int64_t tables = 0;  // embedding tables of this width (position and token-type tables besides)
  std::optional<ConvShape> patch_embedding;
  std::int64_t patch_calls = 0;
  std::map<AttentionShape, std::int64_t> self_attention, cross_attention;
  double gemm_flops = 0;  // 2 × rows × N × K over the GEMMs whose weights have this width
  std::int64_t attention_calls() const;
  std::int64_t self_calls() const;
  std::int64_t cross_calls() const;
};

// The models the shapes show, the one of most GEMM work first (ties: most attention calls). TP_GROUP is the
// tensor-parallel group's size when the profile records one, 1 for a single process (folded attention is
// resolved with it; without it an attention as wide as a whole fraction of the width is taken as sharded).
std::vector<ShapedModel> shaped_models(const ShapeCounts& shapes, std::optional<std::int64_t> tp_group);

// "[a, b, c]".
std::string dims_text(const std::vector<std::int64_t>& dims);

}  // namespace meshscope::compare
