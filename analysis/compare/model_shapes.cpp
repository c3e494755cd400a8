#include "analysis/compare/model_shapes.hpp"

#include "analysis/measure/op_work.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace meshscope::compare {
namespace {

using Dims = std::vector<std::int64_t>;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool forward_attention(std::string_view name) {
  return !contains(name, "backward") &&
         (contains(name, "scaled_dot_product") || name == "aten::_flash_attention_forward" ||
          name == "aten::_efficient_attention_forward");
}

// The attention of one packed call; nullopt when its inputs are not the layout's.
std::optional<AttentionShape> packed_shape(const measure::PackedAttentionLayout& layout,
                                           const std::vector<std::vector<std::int64_t>>& dims) {
  if (dims.size() <= std::max(layout.q, layout.k)) return std::nullopt;
  const auto& q = dims[layout.q];
  const auto& k = dims[layout.k];
  if (q.size() != 3 || k.size() != (layout.paged ? 4u : 3u) || q[0] < 1 || q[1] < 1 || q[2] < 1)
    return std::nullopt;
  const std::int64_t kv_heads = k[k.size() - 2];
  if (k.back() != q[2] || kv_heads < 1 || q[1] % kv_heads != 0) return std::nullopt;
  AttentionShape a;
  a.packed = true;
  a.heads = q[1];
  a.kv_heads = kv_heads;
  a.head_dim = q[2];
  const std::int64_t tokens = q[0];
  std::int64_t sequences = 0;
  if (layout.offsets && *layout.offsets < dims.size() && dims[*layout.offsets].size() == 1)
    sequences = dims[*layout.offsets][0] - 1;
  if (sequences < 1 || sequences > tokens) {
    a.sequences_unknown = true;
    sequences = 1;
  }
  // Products of recorded sizes stay those of a real tensor (each size is at most 2^48): none overflows.
  constexpr std::int64_t kLargest = std::int64_t{1} << 48;
  if (a.heads > kLargest / sequences) return std::nullopt;
  a.batch = sequences;
  a.lead = a.batch * a.heads;
  a.seq = (tokens + sequences / 2) / sequences;
  // The keys' mean length: the key tokens, or the cache's pages × their size (the last pages partly filled);
  // a cache whose pages are not recorded is taken as long as the queries.
  std::int64_t key_tokens = layout.paged ? 0 : k[0];
  if (layout.paged && layout.pages && *layout.pages < dims.size() && dims[*layout.pages].size() == 1) {
    const std::int64_t pages = dims[*layout.pages][0];
    if (k[1] > 0 && pages > kLargest / k[1]) return std::nullopt;
    key_tokens = pages * k[1];
  }
  a.kv_seq = key_tokens > 0 ? (key_tokens + sequences / 2) / sequences : a.seq;
  return a;
}

bool softmax(std::string_view name) {
  return name == "aten::softmax" || name == "aten::_softmax" || name == "aten::_safe_softmax" ||
         name == "aten::_masked_softmax";
}

bool convolution(std::string_view name) {
  return name == "aten::conv1d" || name == "aten::conv2d" || name == "aten::conv3d" ||
         name == "aten::convolution" || name == "aten::_convolution";
}

std::int64_t product(const Dims& dims, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

// A batched matrix product A [lead..., m, k] × B [lead..., k, n], its leading dimensions multiplied; RANK is
// how many dimensions it was recorded over.
struct BatchedProduct {
  std::int64_t lead, m, k, n;
  std::size_t rank;
  auto operator<=>(const BatchedProduct&) const = default;
};

std::optional<BatchedProduct> batched_product(const Dims& a, const Dims& b) {
  if (a.size() < 3 || a.size() != b.size()) return std::nullopt;
  const std::size_t r = a.size();
  if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a[r - 1] != b[r - 2]) return std::nullopt;
  return BatchedProduct{product(a, 0, r - 2), a[r - 2], a[r - 1], b[r - 1], r};
}

using Thread = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

// Everything one rank's operators show, before attention is told from the products and softmaxes.
struct RawCounts {
  std::map<AttentionShape, std::int64_t> fused;
  std::map<AttentionShape, std::int64_t> qk_products;  // 4-D QK^T matmuls (no softmax needed)
  std::map<Dims, std::int64_t> softmaxes;              // input shape -> calls
  std::map<BatchedProduct, std::int64_t> products;
  // aten::mm [M, K] × [K, N] as (N, K) with its rows, and the thread it ran on: torch.compile's generated
  // code runs projections so.
  struct Product {
    Thread thread;
    std::pair<std::int64_t, std::int64_t> nk;
    std::int64_t rows;
  };
  std::vector<Product> mm;
  std::set<Thread> forward_attention_threads;  // where a forward attention operator or a softmax ran
};

// A user's attention operator over q, k and v of 4 dimensions each, [batch, heads, seq, head] (PyTorch's and
// the Triton tutorial's layout) or [batch, seq, heads, head] (flash-attn's); nullopt when its first three
// inputs are no queries, keys and values of either. Where both layouts fit, heads-first is taken unless only
// the other shows grouped key/value heads (fewer than the queries': in self-attention the sequences are
// equal).
std::optional<AttentionShape> user_attention_shape(const std::vector<Dims>& dims) {
  if (dims.size() < 3 || dims[0].size() != 4 || dims[1].size() != 4 || dims[2].size() != 4)
    return std::nullopt;
  const Dims &q = dims[0], &k = dims[1], &v = dims[2];
  if (q[0] != k[0] || k[0] != v[0] || k[1] != v[1] || k[2] != v[2] || q[3] != k[3]) return std::nullopt;
  if (std::any_of(q.begin(), q.end(), [](std::int64_t d) { return d < 1; }) || k[1] < 1 || k[2] < 1 ||
      v[3] < 1)
    return std::nullopt;
  const bool heads_first = q[1] % k[1] == 0, heads_second = q[2] % k[2] == 0;
  if (!heads_first && !heads_second) return std::nullopt;
  const bool second = !heads_first || (heads_second && q[2] != k[2] && q[1] == k[1]);
  const std::size_t h = second ? 2 : 1, l = second ? 1 : 2;
  AttentionShape a;
  a.batch = q[0];
  a.heads = q[h];
  a.kv_heads = k[h];
  a.lead = a.batch * a.heads;
  a.seq = q[l];
  a.kv_seq = k[l];
  a.head_dim = q[3];
  if (v[3] != q[3]) a.v_head_dim = v[3];
  return a;
}

// Rows summed over calls, held at 2^61 (a hostile file's millions of calls of 2^48 rows each).
void add_rows(std::int64_t& sum, std::int64_t rows) {
  constexpr std::int64_t kMost = std::int64_t{1} << 61;
  sum = std::min(kMost, sum + std::min(rows, kMost));
}

// Whether DIMS could be a real tensor's: at most 2^48 elements (so that no product of its sizes, nor of a
// size by another tensor's, overflows).
bool real_tensor(const Dims& dims) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 48;
  std::int64_t elements = 1;
  for (const std::int64_t d : dims) {
    if (d < 0) return false;
    if (d == 0) return true;
    if (elements > kLargest / d) return false;
    elements *= d;
  }
  return true;
}

void count_operator(std::string_view name, const std::vector<Dims>& dims, Thread thread, RawCounts& raw,
                    ShapeCounts& c) {
  // A recorded shape no tensor could have is a hostile file's: its operator shows nothing of the model.
  if (!std::all_of(dims.begin(), dims.end(), real_tensor)) return;
  if (const auto layout = measure::packed_attention_layout(name)) {
    if (const auto a = packed_shape(*layout, dims)) {
      ++raw.fused[*a];
      raw.forward_attention_threads.insert(thread);
    }
  } else if (measure::user_attention_operator(name)) {
    if (const auto a = user_attention_shape(dims)) {
      ++raw.fused[*a];
      raw.forward_attention_threads.insert(thread);
      c.user_attention.emplace(name);
    }
  } else if ((forward_attention(name) || measure::batch_seq_heads_attention(name)) && dims.size() >= 3 &&
             dims[0].size() == 4 && dims[1].size() == 4) {
    // SDPA takes [batch, heads, seq, head_dim]; the flash/efficient kernels [batch, seq, heads, head_dim].
    const bool heads_first = contains(name, "scaled_dot_product");
    const std::size_t h = heads_first ? 1 : 2, l = heads_first ? 2 : 1;
    AttentionShape a;
    a.batch = dims[0][0];
    a.heads = dims[0][h];
    a.kv_heads = dims[1][h];
    a.lead = a.batch * a.heads;
    a.seq = dims[0][l];
    a.kv_seq = dims[1][l];
    a.head_dim = dims[0][3];
    if (dims[2].size() == 4 && dims[2][3] != a.head_dim) a.v_head_dim = dims[2][3];
    ++raw.fused[a];
    raw.forward_attention_threads.insert(thread);
  } else if (name == "aten::embedding" && dims.size() >= 2 && dims[0].size() == 2) {
    ++c.embeddings[{dims[0][0], dims[0][1]}];
    ++c.lookup_tokens[{dims[0][0], dims[0][1], product(dims[1], 0, dims[1].size())}];
  } else if (softmax(name) && !dims.empty() && dims[0].size() >= 3) {
    ++raw.softmaxes[dims[0]];
    raw.forward_attention_threads.insert(thread);
  } else if ((name == "aten::bmm" || name == "aten::matmul") && dims.size() >= 2) {
    if (const auto p = batched_product(dims[0], dims[1])) ++raw.products[*p];
    const Dims& q = dims[0];
    const Dims& k = dims[1];
    if (name == "aten::matmul" && q.size() == 4 && k.size() == 4 && q[0] == k[0] && q[1] == k[1] &&
        q[3] == k[2] && q[2] == k[3] && q[2] != q[3]) {
      // QK^T: [batch, heads, seq, head] × [batch, heads, head, seq] -> the [seq, seq] scores. (The product
      // with V, [seq, seq] × [seq, head], has a square left operand and is not counted.)
      ++raw.qk_products[{q[0], q[1], q[1], q[0] * q[1], q[2], q[2], q[3]}];
    }
  } else if (name == "aten::mm" && dims.size() >= 2 && dims[0].size() == 2 && dims[1].size() == 2 &&
             dims[0][1] == dims[1][0]) {
    raw.mm.push_back({thread, {dims[1][1], dims[1][0]}, dims[0][0]});
  } else if (name == "aten::baddbmm" && dims.size() >= 3) {
    if (const auto p = batched_product(dims[1], dims[2])) ++raw.products[*p];
  } else if (name == "aten::linear" && dims.size() >= 2 && dims[1].size() == 2 && !dims[0].empty()) {
    const std::pair nk{dims[1][0], dims[1][1]};
    ++c.weights[nk];
    add_rows(c.weight_rows[nk], product(dims[0], 0, dims[0].size() - 1));
  } else if ((name == "aten::addmm" || name == "aten::_addmm_activation") && dims.size() >= 3 &&
             dims[1].size() == 2 && dims[2].size() == 2 && dims[1][1] == dims[2][0]) {
    // addmm(bias, x [M, K], weight [K, N]): a projection whose weight is stored [in, out] (Hugging Face's
    // Conv1D), or nn.Linear's own GEMM where the linear was not recorded around it.
    const std::pair nk{dims[2][1], dims[2][0]};
    ++c.weights[nk];
    add_rows(c.weight_rows[nk], dims[1][0]);
  } else if (convolution(name) && dims.size() >= 2 && dims[0].size() >= 3 &&
             dims[0].size() == dims[1].size() && dims[0][1] == dims[1][1]) {
    ConvShape conv;
    conv.batch = dims[0][0];
    conv.channels_out = dims[1][0];
    conv.channels_in = dims[1][1];
    conv.input.assign(dims[0].begin() + 2, dims[0].end());
    conv.kernel.assign(dims[1].begin() + 2, dims[1].end());
    ++c.convolutions[conv];
  } else if ((name == "aten::_grouped_mm" || name == "aten::_scaled_grouped_mm") && dims.size() >= 2 &&
             dims[0].size() == 2 && dims[1].size() == 3) {
    ++c.grouped_experts[dims[1][0]];
    ++c.grouped_rows[dims[0][0]];
  }
}

// Among the products [lead, M, k] × [lead, k, n] that FIT, the value VALUE_OF gives that was recorded most
// often over RANK dimensions, then most often over any; 0 when none fits.
template <typename Fits, typename ValueOf>
std::int64_t most_called(const RawCounts& raw, std::int64_t lead, std::int64_t m, std::size_t rank, Fits fits,
                         ValueOf value_of) {
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> tally;  // value -> (calls at RANK, calls)
  for (auto it = raw.products.lower_bound({lead, m, 0, 0, 0});
       it != raw.products.end() && it->first.lead == lead && it->first.m == m; ++it) {
    if (!fits(it->first)) continue;
    auto& t = tally[value_of(it->first)];
    if (it->first.rank == rank) t.first += it->second;
    t.second += it->second;
  }
  if (tally.empty()) return 0;
  return std::max_element(tally.begin(), tally.end(),
                          [](const auto& x, const auto& y) { return x.second < y.second; })
      ->first;
}

// Eager attention: a softmax over scores [lead..., seq, kv_seq] that a product of queries [lead, seq, head]
// by keys [lead, head, kv_seq] computed, and whose probabilities multiply values [lead, kv_seq, v_head]. Its
// calls are the softmax's (the backward pass runs products of the same shapes, never a softmax). The
// backward's products mirror the forward's with the head sizes swapped (dO·V^T has the scores' shape over the
// value head), so the forward's are told apart by the scores' own layout: Hugging Face's eager attention
// multiplies 4-D tensors, autograd's backward folds them to 3-D for bmm.
std::map<AttentionShape, std::int64_t> eager_attention(const RawCounts& raw) {
  std::map<AttentionShape, std::int64_t> out;
  for (const auto& [scores, calls] : raw.softmaxes) {
    const std::size_t r = scores.size();
    const std::int64_t lead = product(scores, 0, r - 2), seq = scores[r - 2], kv_seq = scores[r - 1];
    const std::int64_t head_dim = most_called(
        raw, lead, seq, r, [&](const BatchedProduct& p) { return p.n == kv_seq; },
        [](const BatchedProduct& p) { return p.k; });
    if (head_dim == 0) continue;
    // Not the product of queries by keys of another attention of these queries (a decoder's cross-attention
    // over the encoder's KV_SEQ tokens, when the head size equals this attention's KV_SEQ).
    auto other_keys = [&](std::int64_t n) {
      return std::any_of(raw.softmaxes.begin(), raw.softmaxes.end(), [&](const auto& other) {
        const Dims& o = other.first;
        return o.size() >= 3 && product(o, 0, o.size() - 2) == lead && o[o.size() - 2] == seq &&
               o.back() == n;
      });
    };
    std::int64_t v_dim = most_called(
        raw, lead, seq, r,
        [&](const BatchedProduct& p) { return p.k == kv_seq && p.n != kv_seq && !other_keys(p.n); },
        [](const BatchedProduct& p) { return p.n; });
    if (v_dim == 0) {
      // Values as wide as the keys are long: the product of probabilities by values is [.., kv_seq] too.
      const bool square =
          head_dim != kv_seq &&
          most_called(
              raw, lead, seq, r, [&](const BatchedProduct& p) { return p.k == kv_seq && p.n == kv_seq; },
              [](const BatchedProduct& p) { return p.n; }) != 0;
      v_dim = square ? kv_seq : head_dim;
    }
    AttentionShape a;
    a.lead = lead;
    a.seq = seq;
    a.kv_seq = kv_seq;
    a.head_dim = head_dim;
    if (v_dim != head_dim) a.v_head_dim = v_dim;
    if (r == 4) a.batch = scores[0], a.heads = a.kv_heads = scores[1];
    out[a] += calls;
  }
  return out;
}

// Where no projection was recorded as a linear or addmm, the model's code ran them as matrix products
// (torch.compile's generated code: the tokens by the weight's transpose). In forward passes only, those are
// the weights. A backward pass multiplies by the same weights untransposed and by the tokens for their
// gradients, products of the same kind that shapes cannot tell apart; but PyTorch's autograd engine runs a
// GPU's backward on a thread of its own, so where the forward attention ran on threads that ran products
// while other threads ran products too, the forward threads' products are the forward's.
void read_matrix_products(const RawCounts& raw, bool forward_only, ShapeCounts& counts) {
  if (raw.mm.empty()) return;
  const auto forward_thread = [&](const RawCounts::Product& p) {
    return raw.forward_attention_threads.contains(p.thread);
  };
  const bool threads_apart = std::any_of(raw.mm.begin(), raw.mm.end(), forward_thread) &&
                             !std::all_of(raw.mm.begin(), raw.mm.end(), forward_thread);
  if (!forward_only && !threads_apart) {
    counts.unread_products = true;
    return;
  }
  for (const RawCounts::Product& p : raw.mm) {
    if (!forward_only && !forward_thread(p)) continue;
    ++counts.weights[p.nk];
    add_rows(counts.weight_rows[p.nk], p.rows);
  }
  counts.weights_from_products = true;
  counts.products_on_forward_threads = !forward_only;
}

}  // namespace

std::int64_t ConvShape::patches() const {
  if (input.empty() || input.size() != kernel.size()) return 0;
  std::int64_t p = 1;
  bool one_pixel = true;
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (kernel[i] < 1 || input[i] % kernel[i] != 0) return 0;
    one_pixel = one_pixel && kernel[i] == 1;
    p *= input[i] / kernel[i];
  }
  return one_pixel ? 0 : p;
}

std::int64_t ShapeCounts::weight_calls(std::int64_t n, std::int64_t k) const {
  auto it = weights.find({n, k});
  return it == weights.end() ? 0 : it->second;
}

std::int64_t ShapeCounts::rows_of(std::int64_t n, std::int64_t k) const {
  auto it = weight_rows.find({n, k});
  return it == weight_rows.end() ? 0 : it->second;
}

ShapeCounts count_shapes(const measure::ProfileWork& work, bool forward_only) {
  ShapeCounts counts;
  std::optional<std::size_t> rank_index;
  for (const auto& op : work.ops) {
    if (!rank_index || op.rank_index < *rank_index) rank_index = op.rank_index;
  }
  for (const auto& op : work.uncounted) {
    if (!rank_index || op.rank_index < *rank_index) rank_index = op.rank_index;
  }
  if (!rank_index) return counts;
  RawCounts raw;
  std::vector<Dims> dims;
  auto visit = [&](const auto& op) {
    if (op.rank_index == *rank_index && measure::parse_dims(op.input_dims, dims))
      count_operator(op.name, dims, {op.pid, op.tid}, raw, counts);
  };
  for (const auto& op : work.ops) visit(op);
  for (const auto& op : work.uncounted) visit(op);
  if (counts.weights.empty()) read_matrix_products(raw, forward_only, counts);

  if (!raw.fused.empty()) {
    counts.attention = std::move(raw.fused);
    counts.attention_kind = AttentionKind::kFused;
    return counts;
  }
  counts.attention = eager_attention(raw);
  if (counts.attention.empty()) counts.attention = std::move(raw.qk_products);
  const bool any_folded = std::any_of(counts.attention.begin(), counts.attention.end(),
                                      [](const auto& a) { return a.first.folded(); });
  counts.attention_kind = any_folded ? AttentionKind::kHeadsFolded : AttentionKind::kHeadsApart;
  return counts;
}

std::int64_t ShapedModel::self_calls() const {
  std::int64_t n = 0;
  for (const auto& [a, calls] : self_attention) n += calls;
  return n;
}

std::int64_t ShapedModel::cross_calls() const {
  std::int64_t n = 0;
  for (const auto& [a, calls] : cross_attention) n += calls;
  return n;
}

std::int64_t ShapedModel::attention_calls() const {
  return self_calls() + cross_calls();
}

namespace {

// How attention shape A belongs to a model of WIDTH: its heads resolved when folded, the TP degree, and
// whether its heads × head size differ from the width's share (a head size of the model's own).
struct WidthAttention {
  AttentionShape attention;
  std::int64_t tp = 1;
  bool own_head_size = false;
};

// Attention shape A as a model of WIDTH runs it; nullopt when A cannot belong to that width. A width that is
// itself another candidate's never takes A as a tensor-parallel shard of its own. Attention whose heads ×
// head size is not a whole share of the width (or, in a single process, not the width) belongs to it when an
// output projection [width, heads × value head size] brings the heads back to the width.
std::optional<WidthAttention> attention_of_width(AttentionShape a, std::int64_t width,
                                                 std::optional<std::int64_t> tp_group,
                                                 const std::set<std::int64_t>& widths,
                                                 const ShapeCounts& shapes) {
  if (a.head_dim <= 0) return std::nullopt;
  std::int64_t tp = 1;
  bool own_head_size = false;
  if (a.folded()) {
    tp = tp_group.value_or(1);
    if (tp < 1 || width % tp != 0 || (width / tp) % a.head_dim != 0) return std::nullopt;
    const std::int64_t heads = width / tp / a.head_dim;
    if (heads < 1 || a.lead % heads != 0) return std::nullopt;
    a.heads = a.kv_heads = heads;
    a.batch = a.lead / heads;
  } else {
    const std::int64_t local = a.heads * a.head_dim;
    if (local <= 0) return std::nullopt;
    const bool out_projection = shapes.weight_calls(width, a.heads * a.v_dim()) > 0;
    const bool unsharded = tp_group == 1 && width != local;
    if (width % local == 0 && !(unsharded && out_projection)) {
      tp = width / local;
      if (tp > 1 && widths.contains(local)) return std::nullopt;
    } else if (out_projection && !widths.contains(local)) {
      tp = tp_group.value_or(1);
      own_head_size = true;
    } else {
      return std::nullopt;
    }
  }
  return WidthAttention{a, tp, own_head_size};
}

}  // namespace

std::vector<ShapedModel> shaped_models(const ShapeCounts& shapes, std::optional<std::int64_t> tp_group) {
  std::map<std::int64_t, ShapedModel> by_width;
  for (const auto& [table, calls] : shapes.embeddings) {
    ShapedModel& m = by_width[table.second];
    m.width = table.second;
    ++m.tables;
    if (!m.vocabulary || table.first > m.vocabulary->first ||
        (table.first == m.vocabulary->first && calls > m.vocabulary_lookups)) {
      m.vocabulary = table;
      m.vocabulary_lookups = calls;
    }
  }
  // A patch embedding: a convolution tiling its input into as many tokens as an attention's queries, give or
  // take the few a vision transformer adds (a class token, registers).
  for (const auto& [conv, calls] : shapes.convolutions) {
    const std::int64_t patches = conv.patches();
    const bool tokens =
        patches > 0 && std::any_of(shapes.attention.begin(), shapes.attention.end(), [&](const auto& a) {
          return a.first.seq >= patches && a.first.seq - patches <= 16;
        });
    if (!tokens) continue;
    ShapedModel& m = by_width[conv.channels_out];
    m.width = conv.channels_out;
    if (!m.patch_embedding || calls > m.patch_calls) m.patch_embedding = conv, m.patch_calls = calls;
  }
  if (by_width.empty()) {
    for (const auto& [a, calls] : shapes.attention) {
      if (!a.folded()) by_width[a.heads * a.head_dim].width = a.heads * a.head_dim;
    }
  }
  std::set<std::int64_t> widths;
  for (const auto& [w, m] : by_width) widths.insert(w);

  std::vector<ShapedModel> out;
  for (auto& [width, m] : by_width) {
    std::map<std::pair<std::int64_t, bool>, std::int64_t> tp_calls;  // (tp, own head size) -> calls
    for (const auto& [a, calls] : shapes.attention) {
      const auto resolved = attention_of_width(a, width, tp_group, widths, shapes);
      if (!resolved) continue;
      const AttentionShape& r = resolved->attention;
      (r.seq == r.kv_seq ? m.self_attention : m.cross_attention)[r] += calls;
      tp_calls[{resolved->tp, resolved->own_head_size}] += calls;
    }
    if (tp_calls.empty()) continue;
    std::tie(m.tp, m.own_head_size) =
        std::max_element(tp_calls.begin(), tp_calls.end(), [](const auto& x, const auto& y) {
          return x.second < y.second;
        })->first;
    std::set<std::int64_t> own{width};
    for (const auto* attention : {&m.self_attention, &m.cross_attention}) {
      for (const auto& [a, calls] : *attention) own.insert({a.heads * a.head_dim, a.heads * a.v_dim()});
    }
    for (const auto& [nk, calls] : shapes.weights) {
      if (own.contains(nk.first) || own.contains(nk.second))
        m.gemm_flops += 2.0 * static_cast<double>(shapes.rows_of(nk.first, nk.second)) *
                        static_cast<double>(nk.first) * static_cast<double>(nk.second);
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(), [](const ShapedModel& a, const ShapedModel& b) {
    if (a.gemm_flops != b.gemm_flops) return a.gemm_flops > b.gemm_flops;
    return a.attention_calls() > b.attention_calls();
  });
  return out;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

}  // namespace meshscope::compare
