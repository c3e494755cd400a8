#include "analysis/measure/op_work.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <deque>
#include <initializer_list>

#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

using Dims = std::vector<std::int64_t>;

// The largest size one dimension may have (2^48 elements): beyond it the recorded shapes are not a real
// tensor's and the op is left out.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 48;

bool space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

void skip_space(std::string_view s, std::size_t& i) {
  while (i < s.size() && space(s[i])) ++i;
}

// A JSON list "[item, item, ...]" filling all of S (white space around anything): ITEM(i) parses one item
// starting at s[i] and leaves i after it, false when it does not parse.
template <typename Item>
bool parse_top_list(std::string_view s, Item item) {
  std::size_t i = 0;
  skip_space(s, i);
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  skip_space(s, i);
  if (i < s.size() && s[i] == ']') {
    ++i;
    skip_space(s, i);
    return i == s.size();
  }
  while (true) {
    skip_space(s, i);
    if (!item(i)) return false;
    skip_space(s, i);
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == ']') {
      ++i;
      skip_space(s, i);
      return i == s.size();
    }
    return false;
  }
}

bool parse_int(std::string_view s, std::size_t& i, std::int64_t& out) {
  skip_space(s, i);
  const char* begin = s.data() + i;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc() || ptr == begin) return false;
  i += static_cast<std::size_t>(ptr - begin);
  return true;
}

// Skips one JSON list (nested lists of numbers) starting at s[i] == '['.
bool skip_list(std::string_view s, std::size_t& i) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']') {
      if (--depth == 0) {
        ++i;
        return true;
      }
    } else if (s[i] == '"') {
      return false;
    }
  }
  return false;
}

double numel(const Dims& d) {
  double n = 1;
  for (std::int64_t v : d) n *= static_cast<double>(v);
  return n;
}

// Integers of a concrete-input text: "[2, 2]" -> {2, 2}, "3" -> {3}; false otherwise.
bool concrete_ints(std::string_view text, Dims& out) {
  out.clear();
  std::size_t i = 0;
  skip_space(text, i);
  if (i < text.size() && text[i] == '[') {
    ++i;
    skip_space(text, i);
    if (i < text.size() && text[i] == ']') return true;
    while (true) {
      std::int64_t v = 0;
      if (!parse_int(text, i, v)) return false;
      out.push_back(v);
      skip_space(text, i);
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      return i < text.size() && text[i] == ']';
    }
  }
  std::int64_t v = 0;
  if (!parse_int(text, i, v)) return false;
  out.push_back(v);
  skip_space(text, i);
  return i == text.size();
}

// A boolean concrete input: 1 true, 0 false, -1 not recorded or not a boolean.
int concrete_bool(const std::vector<std::string_view>& concrete, std::size_t index) {
  if (index >= concrete.size()) return -1;
  const std::string_view v = concrete[index];
  if (v == "True" || v == "true" || v == "1") return 1;
  if (v == "False" || v == "false" || v == "0") return 0;
  return -1;
}

// Everything a formula needs, parsed once; the strings view the recorded text (or STORAGE, for the rare
// value with an escape in it).
struct Parsed {
  std::vector<Dims> dims;
  std::vector<std::string_view> types;
  std::vector<std::string_view> concrete;
  std::deque<std::string> storage;
  // Bytes per element of input I (0: not a tensor or an unknown type).
  int size(std::size_t i) const { return i < types.size() ? element_bytes(types[i]) : 0; }
  bool tensor(std::size_t i) const { return i < dims.size() && size(i) > 0; }
  double tensor_bytes(std::size_t i) const { return tensor(i) ? numel(dims[i]) * size(i) : 0; }
};

std::string_view strip_namespace(std::string_view name) {
  if (name.starts_with("aten::")) return name.substr(6);
  return name;
}

// ---- GEMMs ------------------------------------------------------------------------------------------------
// A GEMM of an M×K by a K×N matrix performs M·N·K multiply-adds = 2·M·N·K FLOPs and, at the least, reads
// both operands and writes the M×N result once (NVIDIA, "Matrix Multiplication Background User's Guide",
// docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication: "M*N*K fused multiply-adds
// (FMAs) ... each FMA is 2 operations"; arithmetic intensity 2·M·N·K / (2·(M·K + N·K + M·N)) bytes in FP16).
// A batch of B such products is B times that.

WorkStatus gemm(double batch, double m, double n, double k, double a_bytes, double b_bytes, double out_size,
                double extra_bytes, OpWork& out) {
  out.category = WorkCategory::kGemm;
  out.flops = 2.0 * batch * m * n * k;
  out.bytes = a_bytes + b_bytes + batch * m * n * out_size + extra_bytes;
  return WorkStatus::kOk;
}

// mm(self [M,K], mat2 [K,N]); addmm(bias, mat1 [M,K], mat2 [K,N]); bmm(self [B,M,K], mat2 [B,K,N]);
// baddbmm(bias, batch1 [B,M,K], batch2 [B,K,N]).
WorkStatus matrix_product(const Parsed& p, std::size_t a, std::size_t b, bool batched, std::size_t bias,
                          OpWork& out) {
  if (b >= p.dims.size()) return WorkStatus::kUnparsable;
  const Dims& x = p.dims[a];
  const Dims& y = p.dims[b];
  const std::size_t rank = batched ? 3 : 2;
  if (x.size() != rank || y.size() != rank) return WorkStatus::kUnparsable;
  const double batch = batched ? static_cast<double>(x[0]) : 1.0;
  if (batched && x[0] != y[0]) return WorkStatus::kUnparsable;
  const std::int64_t m = x[rank - 2], k = x[rank - 1], k2 = y[rank - 2], n = y[rank - 1];
  if (k != k2) return WorkStatus::kUnparsable;
  if (!p.tensor(a) || !p.tensor(b)) return WorkStatus::kUndetermined;
  const double extra = bias != SIZE_MAX ? p.tensor_bytes(bias) : 0;
  return gemm(batch, static_cast<double>(m), static_cast<double>(n), static_cast<double>(k),
              p.tensor_bytes(a), p.tensor_bytes(b), p.size(a), extra, out);
}

// matmul(self, other): torch.matmul's cases (pytorch.org/docs/stable/generated/torch.matmul.html): 1-D·1-D
// a dot product, 2-D·1-D a matrix-vector product, and otherwise a batched matrix product over the broadcast
// batch dimensions.
WorkStatus matmul(const Parsed& p, OpWork& out) {
  if (p.dims.size() < 2) return WorkStatus::kUnparsable;
  Dims x = p.dims[0], y = p.dims[1];
  if (x.empty() || y.empty()) return WorkStatus::kUnparsable;
  if (x.size() == 1) x.insert(x.begin(), 1);  // a vector is a 1×K matrix on the left ...
  const bool y_vector = y.size() == 1;
  if (y_vector) y.push_back(1);  // ... and a K×1 matrix on the right
  const std::int64_t m = x[x.size() - 2], k = x.back(), k2 = y[y.size() - 2], n = y.back();
  if (k != k2) return WorkStatus::kUnparsable;
  // Broadcast batch: the larger of each pair of aligned batch dimensions (a size-1 dimension broadcasts).
  const std::size_t bx = x.size() - 2, by = y.size() - 2, nb = std::max(bx, by);
  double batch = 1;
  for (std::size_t i = 0; i < nb; ++i) {
    const std::int64_t dx = i < nb - bx ? 1 : x[i - (nb - bx)];
    const std::int64_t dy = i < nb - by ? 1 : y[i - (nb - by)];
    if (dx != dy && dx != 1 && dy != 1) return WorkStatus::kUnparsable;
    batch *= static_cast<double>(std::max(dx, dy));
  }
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  return gemm(batch, static_cast<double>(m), static_cast<double>(n), static_cast<double>(k),
              p.tensor_bytes(0), p.tensor_bytes(1), p.size(0), 0, out);
}

// linear(input [..., K], weight [N, K], bias [N]) = input · weightᵀ + bias
// (pytorch.org/docs/stable/generated/torch.nn.functional.linear.html): M = the product of input's leading
// dimensions.
WorkStatus linear(const Parsed& p, OpWork& out) {
  if (p.dims.size() < 2) return WorkStatus::kUnparsable;
  const Dims& x = p.dims[0];
  const Dims& w = p.dims[1];
  if (x.empty() || w.empty() || w.size() > 2) return WorkStatus::kUnparsable;
  const std::int64_t k = x.back();
  const std::int64_t n = w.size() == 2 ? w[0] : 1;
  if (w.back() != k) return WorkStatus::kUnparsable;
  double m = 1;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) m *= static_cast<double>(x[i]);
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  return gemm(1, m, static_cast<double>(n), static_cast<double>(k), p.tensor_bytes(0), p.tensor_bytes(1),
              p.size(0), p.tensor_bytes(2), out);
}

// Output element size of _scaled_mm / _grouped_mm: out_dtype when the profile recorded it as a ScalarType
// code (c10/core/ScalarType.h: 5 Half, 6 Float, 15 BFloat16, 23 Float8_e4m3fn, 24 Float8_e5m2), else the
// first operand's (the default when out_dtype is None).
int out_size(const Parsed& p, std::size_t out_dtype_index) {
  Dims code;
  if (out_dtype_index < p.concrete.size() && concrete_ints(p.concrete[out_dtype_index], code) &&
      code.size() == 1) {
    switch (code[0]) {
      case 5:
      case 15:
        return 2;
      case 6:
        return 4;
      case 23:
      case 24:
        return 1;
      default:
        break;
    }
  }
  return p.size(0);
}

// _scaled_mm(self [M,K], mat2 [K,N], scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum): an FP8
// GEMM with per-tensor or per-row scales (aten/src/ATen/native/native_functions.yaml); its FLOPs are the
// GEMM's.
WorkStatus scaled_mm(const Parsed& p, OpWork& out) {
  if (p.dims.size() < 2) return WorkStatus::kUnparsable;
  const Dims& x = p.dims[0];
  const Dims& y = p.dims[1];
  if (x.size() != 2 || y.size() != 2 || x[1] != y[0]) return WorkStatus::kUnparsable;
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  const double scales = p.tensor_bytes(2) + p.tensor_bytes(3) + p.tensor_bytes(4);
  return gemm(1, static_cast<double>(x[0]), static_cast<double>(y[1]), static_cast<double>(x[1]),
              p.tensor_bytes(0), p.tensor_bytes(1), out_size(p, 6), scales, out);
}

// _grouped_mm(mat_a, mat_b, offs, bias, out_dtype) and _scaled_grouped_mm(mat_a, mat_b, scale_a, scale_b,
// offs, bias, scale_result, out_dtype, use_fast_accum) (native_functions.yaml; torch._grouped_mm docs):
// A [M_total, K] with B [G, K, N] multiplies each row of A by one group's matrix: 2·M_total·K·N FLOPs;
// A [G, M, K] with B [G, K, N] is a batch of G products; A [M, K_total] with B [K_total, N] splits K among
// the groups: 2·M·K_total·N.
WorkStatus grouped_mm(const Parsed& p, std::size_t out_dtype_index, OpWork& out) {
  if (p.dims.size() < 2) return WorkStatus::kUnparsable;
  const Dims& x = p.dims[0];
  const Dims& y = p.dims[1];
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  const int os = out_size(p, out_dtype_index);
  if (x.size() == 2 && y.size() == 3 && x[1] == y[1]) {
    return gemm(1, static_cast<double>(x[0]), static_cast<double>(y[2]), static_cast<double>(x[1]),
                p.tensor_bytes(0), p.tensor_bytes(1), os, 0, out);
  }
  if (x.size() == 3 && y.size() == 3 && x[0] == y[0] && x[2] == y[1]) {
    return gemm(static_cast<double>(x[0]), static_cast<double>(x[1]), static_cast<double>(y[2]),
                static_cast<double>(x[2]), p.tensor_bytes(0), p.tensor_bytes(1), os, 0, out);
  }
  if (x.size() == 2 && y.size() == 2 && x[1] == y[0]) {
    return gemm(1, static_cast<double>(x[0]), static_cast<double>(y[1]), static_cast<double>(x[1]),
                p.tensor_bytes(0), p.tensor_bytes(1), os, 0, out);
  }
  return WorkStatus::kUndetermined;  // A [G·M, K] with B [K, G·N] and the like: the group sizes are in offs
}

// ---- attention --------------------------------------------------------------------------------------------
// Attention of Lq queries over Lk keys per head: S = Q·Kᵀ (2·Lq·Lk·E FLOPs) and O = P·V (2·Lq·Lk·Ev), the
// softmax not counted; causal masking skips half of the score matrix; the backward pass is 2.5 times the
// forward. All three are the counts of FlashAttention-2's own benchmark (Dao 2023; github.com/Dao-AILab/
// flash-attention, benchmarks/benchmark_flash_attention.py: flops = 4·batch·seqlen²·nheads·headdim
// // (2 if causal else 1); 2.5× for "bwd"). Causal masking with Lq ≠ Lk depends on how the mask is aligned
// and is not counted. Bytes: Q, K and V read and O written once (the fused kernels never write S), and for
// the backward dO, O, Q, K, V read and dQ, dK, dV written.

struct AttentionArgs {
  std::size_t q = 0;          // index of the query among the inputs (k = q + 1, v = q + 2)
  bool heads_first = true;    // [B, H, L, E] (SDPA) or [B, L, H, E] (_flash/_efficient_attention_*)
  std::size_t causal = 0;     // index of is_causal (or of custom_mask_type) among the concrete inputs
  bool mask_type = false;     // causal is custom_mask_type (0 = none) instead of a boolean
  std::size_t attn_mask = 0;  // index of attn_mask / bias (SIZE_MAX: none); a mask makes is_causal moot
  bool backward = false;
};

WorkStatus attention(const Parsed& p, const AttentionArgs& a, OpWork& out) {
  if (p.dims.size() < a.q + 3) return WorkStatus::kUnparsable;
  const Dims& q = p.dims[a.q];
  const Dims& k = p.dims[a.q + 1];
  const Dims& v = p.dims[a.q + 2];
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return WorkStatus::kUndetermined;  // varlen packing
  const std::size_t h = a.heads_first ? 1 : 2, l = a.heads_first ? 2 : 1;
  const double batch = static_cast<double>(q[0]), heads = static_cast<double>(q[h]);
  const double lq = static_cast<double>(q[l]), lk = static_cast<double>(k[l]);
  const double e = static_cast<double>(q[3]), ev = static_cast<double>(v[3]);
  if (k[0] != q[0] || v[0] != q[0] || k[3] != q[3] || v[l] != k[l] || k[h] != v[h] || k[h] == 0 ||
      q[h] % k[h] != 0) {
    return WorkStatus::kUnparsable;
  }
  bool causal = false;
  const bool masked = a.attn_mask != SIZE_MAX && a.attn_mask < p.dims.size() && !p.dims[a.attn_mask].empty();
  if (!masked) {
    if (a.mask_type) {
      Dims code;
      if (a.causal >= p.concrete.size() || !concrete_ints(p.concrete[a.causal], code) || code.size() != 1)
        return WorkStatus::kUndetermined;
      causal = code[0] != 0;
    } else {
      const int c = concrete_bool(p.concrete, a.causal);
      if (c < 0) return WorkStatus::kUndetermined;
      causal = c == 1;
    }
  }
  if (causal && q[l] != k[l]) return WorkStatus::kUndetermined;
  if (!p.tensor(a.q) || !p.tensor(a.q + 1) || !p.tensor(a.q + 2)) return WorkStatus::kUndetermined;
  double flops = 2.0 * batch * heads * lq * lk * (e + ev);
  if (causal) flops /= 2;
  if (a.backward) flops *= 2.5;
  const double qb = p.tensor_bytes(a.q), kb = p.tensor_bytes(a.q + 1), vb = p.tensor_bytes(a.q + 2);
  const double ob = batch * heads * lq * ev * p.size(a.q);
  out.category = WorkCategory::kAttention;
  out.flops = flops;
  out.bytes = a.backward ? 2 * (qb + kb + vb) + 2 * ob : qb + kb + vb + ob;
  return WorkStatus::kOk;
}

// Attention over sequences packed into one dimension of tokens (PackedAttentionLayout). The shapes give only
// the sequences' count and their summed lengths, so the work is known only when each sequence has one query
// (decoding): every query attends to all of its sequence's keys (FlashAttention aligns a causal mask to the
// bottom right, FlashInfer's decode has none), 2·H·(E + Ev) FLOPs per query-key pair as above, over all the
// keys. The keys are the packed key tokens, or a paged cache's pages in use when a page holds one token
// (sglang's token pool; larger pages are partly filled at each sequence's end, by an amount not recorded).
// Bytes: the queries and the keys and values in use read, the output written.
WorkStatus packed_attention(const Parsed& p, const PackedAttentionLayout& layout, OpWork& out) {
  const std::size_t v_index = layout.k + 1;
  if (p.dims.size() <= std::max(layout.q, v_index)) return WorkStatus::kUnparsable;
  const Dims& q = p.dims[layout.q];
  const Dims& k = p.dims[layout.k];
  const Dims& v = p.dims[v_index];
  const std::size_t key_rank = layout.paged ? 4 : 3;
  if (q.size() != 3 || k.size() != key_rank || v.size() != key_rank) return WorkStatus::kUndetermined;
  const std::size_t heads_at = key_rank - 2;
  if (k.back() != q[2] || k[heads_at] < 1 || v[heads_at] != k[heads_at] || q[1] % k[heads_at] != 0)
    return WorkStatus::kUndetermined;
  if (!layout.offsets || *layout.offsets >= p.dims.size() || p.dims[*layout.offsets].size() != 1)
    return WorkStatus::kUndetermined;
  const std::int64_t sequences = p.dims[*layout.offsets][0] - 1;
  if (sequences < 1 || q[0] != sequences) return WorkStatus::kUndetermined;  // not one query each
  double keys = 0;
  if (layout.paged) {
    if (k[1] != 1 || !layout.pages || *layout.pages >= p.dims.size() || p.dims[*layout.pages].size() != 1)
      return WorkStatus::kUndetermined;
    keys = static_cast<double>(p.dims[*layout.pages][0]);
  } else {
    if (k[0] != v[0]) return WorkStatus::kUndetermined;
    keys = static_cast<double>(k[0]);
  }
  if (keys < static_cast<double>(sequences) || !p.tensor(layout.q)) return WorkStatus::kUndetermined;
  const int element = p.size(layout.q);
  const double heads = static_cast<double>(q[1]), kv_heads = static_cast<double>(k[heads_at]);
  const double e = static_cast<double>(q[2]), ev = static_cast<double>(v.back());
  out.category = WorkCategory::kAttention;
  out.flops = 2.0 * heads * keys * (e + ev);
  out.bytes = (numel(q) + keys * kv_heads * (e + ev) + static_cast<double>(q[0]) * heads * ev) * element;
  return WorkStatus::kOk;
}

// ---- convolution ------------------------------------------------------------------------------------------
// A convolution computes each output element as a dot product over (C_in / groups)·∏kernel inputs: with the
// weight [C_out, C_in/groups, k…] that is 2·N·∏out_spatial·numel(weight) FLOPs (fvcore's conv_flop_count,
// github.com/facebookresearch/fvcore, fvcore/nn/jit_handles.py: "flop = batch_size * prod(w_shape) *
// prod(conv_shape)", a multiply-add counted as 2 here). A transposed convolution scatters every input element
// instead: 2·N·∏in_spatial·numel(weight). Output size per spatial dimension
// floor((in + 2·padding − dilation·(k − 1) − 1) / stride) + 1 (pytorch.org/docs/stable/generated/
// torch.nn.Conv2d.html, "Shape"). The backward computes the input gradient and the weight gradient, each as
// many FLOPs as the forward (fvcore counts conv backward as 2× forward), as output_mask says.

struct ConvArgs {
  std::size_t stride = 3, padding = 4, dilation = 5;
  std::size_t transposed = SIZE_MAX;  // index of the transposed flag (SIZE_MAX: never transposed)
};

// The concrete list at INDEX with one value per spatial dimension ("[2, 2]", or "2" for all of them).
bool spatial_list(const Parsed& p, std::size_t index, std::size_t spatial, Dims& out) {
  if (index >= p.concrete.size() || !concrete_ints(p.concrete[index], out)) return false;
  if (out.size() == 1 && spatial > 1) out.assign(spatial, out[0]);
  return out.size() == spatial;
}

WorkStatus convolution(const Parsed& p, const ConvArgs& c, OpWork& out) {
  if (p.dims.size() < 2) return WorkStatus::kUnparsable;
  const Dims& x = p.dims[0];
  const Dims& w = p.dims[1];
  if (x.size() < 3 || w.size() != x.size()) return WorkStatus::kUnparsable;
  const std::size_t spatial = x.size() - 2;
  const int transposed = c.transposed == SIZE_MAX ? 0 : concrete_bool(p.concrete, c.transposed);
  if (transposed < 0) return WorkStatus::kUndetermined;
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  double out_spatial = 1, in_spatial = 1;
  for (std::size_t i = 0; i < spatial; ++i) in_spatial *= static_cast<double>(x[2 + i]);
  const std::string_view padding_text =
      c.padding < p.concrete.size() ? p.concrete[c.padding] : std::string_view();
  Dims stride, padding, dilation, output_padding;
  if (!spatial_list(p, c.stride, spatial, stride) || !spatial_list(p, c.dilation, spatial, dilation))
    return WorkStatus::kUndetermined;
  const bool same = padding_text == "same", valid = padding_text == "valid";
  if (!same && !valid && !spatial_list(p, c.padding, spatial, padding)) return WorkStatus::kUndetermined;
  if (transposed == 1 && !spatial_list(p, c.transposed + 1, spatial, output_padding))
    return WorkStatus::kUndetermined;
  for (std::size_t i = 0; i < spatial; ++i) {
    if (stride[i] <= 0) return WorkStatus::kUnparsable;
    const std::int64_t pad = valid || same ? 0 : padding[i];
    std::int64_t o = 0;
    if (same) {
      o = x[2 + i];  // "same" keeps the input size (it requires stride 1)
    } else if (transposed == 1) {
      // ConvTranspose2d "Shape": (in − 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1
      o = (x[2 + i] - 1) * stride[i] - 2 * pad + dilation[i] * (w[2 + i] - 1) + output_padding[i] + 1;
    } else {
      const std::int64_t span = x[2 + i] + 2 * pad - dilation[i] * (w[2 + i] - 1) - 1;
      if (span < 0) return WorkStatus::kUnparsable;
      o = span / stride[i] + 1;
    }
    if (o <= 0) return WorkStatus::kUnparsable;
    out_spatial *= static_cast<double>(o);
  }
  const double n = static_cast<double>(x[0]);
  const double per_position = 2.0 * numel(w);
  out.category = WorkCategory::kConv;
  // Output channels: weight[0] for a convolution; weight[1] · groups for a transposed one, groups =
  // C_in / weight[0] (its weight is [C_in, C_out/groups, k…]).
  double c_out = static_cast<double>(w[0]);
  if (transposed == 1) {
    if (w[0] == 0 || x[1] % w[0] != 0) return WorkStatus::kUnparsable;
    c_out = static_cast<double>(w[1]) * static_cast<double>(x[1] / w[0]);
  }
  out.flops = n * (transposed == 1 ? in_spatial : out_spatial) * per_position;
  out.bytes = p.tensor_bytes(0) + p.tensor_bytes(1) + n * c_out * out_spatial * p.size(0);
  return WorkStatus::kOk;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask) and cudnn_convolution_backward(self, grad_output, weight, padding,
// stride, dilation, groups, benchmark, deterministic, allow_tf32, output_mask).
WorkStatus convolution_backward(const Parsed& p, std::size_t grad_out, std::size_t input,
                                std::size_t transposed_index, std::size_t mask_index, OpWork& out) {
  if (p.dims.size() < 3) return WorkStatus::kUnparsable;
  const Dims& dy = p.dims[grad_out];
  const Dims& x = p.dims[input];
  const Dims& w = p.dims[2];
  if (x.size() < 3 || dy.size() != x.size() || w.size() != x.size() || dy[0] != x[0])
    return WorkStatus::kUnparsable;
  if (!p.tensor(grad_out) || !p.tensor(input) || !p.tensor(2)) return WorkStatus::kUndetermined;
  const int transposed = transposed_index == SIZE_MAX ? 0 : concrete_bool(p.concrete, transposed_index);
  if (transposed < 0) return WorkStatus::kUndetermined;
  // Which gradients were computed: output_mask [input, weight, bias]. Not recorded (traces before PyTorch
  // 2.1): both, as every layer but a network's first computes them.
  int input_grad = 1, weight_grad = 1;
  Dims mask;
  if (mask_index < p.concrete.size() && !p.concrete[mask_index].empty()) {
    const std::string_view m = p.concrete[mask_index];
    // "[True, True, False]"
    std::vector<bool> flags;
    std::size_t pos = 0;
    while (pos < m.size()) {
      if (m.substr(pos, 4) == "True") {
        flags.push_back(true);
        pos += 4;
      } else if (m.substr(pos, 5) == "False") {
        flags.push_back(false);
        pos += 5;
      } else {
        ++pos;
      }
    }
    if (flags.size() < 2) return WorkStatus::kUnparsable;
    input_grad = flags[0] ? 1 : 0;
    weight_grad = flags[1] ? 1 : 0;
  }
  double spatial = 1;
  const Dims& side = transposed == 1 ? x : dy;  // the side whose every element is one weight-sized product
  for (std::size_t i = 2; i < side.size(); ++i) spatial *= static_cast<double>(side[i]);
  const double pass = 2.0 * static_cast<double>(x[0]) * spatial * numel(w);
  const double dyb = p.tensor_bytes(grad_out), xb = p.tensor_bytes(input), wb = p.tensor_bytes(2);
  out.category = WorkCategory::kConv;
  out.flops = pass * (input_grad + weight_grad);
  // Input gradient: reads dY and W, writes dX; weight gradient: reads dY and X, writes dW.
  out.bytes = input_grad * (dyb + wb + xb) + weight_grad * (dyb + xb + wb);
  return WorkStatus::kOk;
}

// ---- normalisation ----------------------------------------------------------------------------------------
// fvcore (fvcore/nn/jit_handles.py) counts a layer or group norm as 5 FLOPs per element with an affine
// weight and 4 without ("norm_flop_counter"), and a batch norm in training as 4 per element
// ("batchnorm_flop_jit"; in evaluation 2 with an affine weight, 1 without). RMSNorm (Zhang & Sennrich 2019,
// eq. 4: a / RMS(a) · g) squares, accumulates and scales each element: 3 FLOPs, 4 with the weight g. Bytes:
// the input read and the output written, plus the affine parameters.

WorkStatus norm(const Parsed& p, double per_element, std::size_t weight, std::size_t bias, OpWork& out) {
  if (p.dims.empty() || p.dims[0].empty()) return WorkStatus::kUnparsable;
  if (!p.tensor(0)) return WorkStatus::kUndetermined;
  const double n = numel(p.dims[0]);
  out.category = WorkCategory::kNorm;
  out.flops = per_element * n;
  out.bytes = 2 * p.tensor_bytes(0) + (weight != SIZE_MAX ? p.tensor_bytes(weight) : 0) +
              (bias != SIZE_MAX ? p.tensor_bytes(bias) : 0);
  return WorkStatus::kOk;
}

bool has_tensor(const Parsed& p, std::size_t i) {
  return i < p.dims.size() && p.tensor(i) && !p.dims[i].empty();
}

// Backward of a norm: reads dY and X (and the weight), writes dX (and the weight gradients): bytes only.
WorkStatus norm_backward(const Parsed& p, std::size_t grad_out, std::size_t input, std::size_t weight,
                         OpWork& out) {
  if (p.dims.size() <= input || p.dims[input].empty()) return WorkStatus::kUnparsable;
  if (!p.tensor(grad_out) || !p.tensor(input)) return WorkStatus::kUndetermined;
  out.category = WorkCategory::kNorm;
  out.flops = 0;
  const double wb = weight != SIZE_MAX && has_tensor(p, weight) ? p.tensor_bytes(weight) : 0;
  out.bytes = p.tensor_bytes(grad_out) + 2 * p.tensor_bytes(input) + 2 * wb;
  return WorkStatus::kOk;
}

// ---- element-wise operations, copies, reductions, softmax: bytes only
// -------------------------------------- Every tensor input read once and the output written once (Williams
// et al. 2009 §2, compulsory traffic); the output of an out-of-place operation has the broadcast shape of its
// tensor inputs, an in-place one (name ending in '_') writes its first input. A reduction writes far less
// than it reads: its output is not counted (the bytes are a lower bound). Softmax reads and writes each
// element once (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax": the fused form's
// minimum), its backward reads the gradient and the output and writes one tensor.

enum class Elementwise : std::uint8_t { kOutOfPlace, kInPlace, kWriteOnly, kCopy, kReduction };

WorkStatus elementwise(const Parsed& p, Elementwise kind, OpWork& out) {
  if (p.dims.empty()) return WorkStatus::kUnparsable;
  if (!p.tensor(0)) return WorkStatus::kUndetermined;
  out.category = WorkCategory::kElementwise;
  out.flops = 0;
  double read = 0;
  Dims shape;  // broadcast shape of the tensor inputs
  int largest = 0;
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    if (!p.tensor(i)) continue;
    read += p.tensor_bytes(i);
    largest = std::max(largest, p.size(i));
    const Dims& d = p.dims[i];
    if (d.size() > shape.size()) shape.insert(shape.begin(), d.size() - shape.size(), 1);
    for (std::size_t j = 0; j < d.size(); ++j) {
      std::int64_t& s = shape[shape.size() - d.size() + j];
      const std::int64_t v = d[j];
      if (s == 1) {
        s = v;
      } else if (v != 1 && v != s) {
        return WorkStatus::kUnparsable;
      }
    }
  }
  switch (kind) {
    case Elementwise::kOutOfPlace:
      out.bytes = read + numel(shape) * largest;
      break;
    case Elementwise::kInPlace:
      out.bytes = read + p.tensor_bytes(0);
      break;
    case Elementwise::kWriteOnly:
      out.bytes = p.tensor_bytes(0);
      break;
    case Elementwise::kCopy:  // copy_(self, src): reads src, writes self
      if (!p.tensor(1)) return WorkStatus::kUndetermined;
      out.bytes = p.tensor_bytes(0) + p.tensor_bytes(1);
      break;
    case Elementwise::kReduction:
      out.bytes = p.tensor_bytes(0);
      break;
  }
  return WorkStatus::kOk;
}

// embedding(weight [V, D], indices [...]): reads the indices and the D-element rows they select, writes as
// many rows (pytorch.org/docs/stable/generated/torch.nn.functional.embedding.html).
WorkStatus embedding(const Parsed& p, OpWork& out) {
  if (p.dims.size() < 2 || p.dims[0].size() != 2) return WorkStatus::kUnparsable;
  if (!p.tensor(0) || !p.tensor(1)) return WorkStatus::kUndetermined;
  const double rows = numel(p.dims[1]);
  out.category = WorkCategory::kOther;
  out.flops = 0;
  out.bytes = p.tensor_bytes(1) + 2 * rows * static_cast<double>(p.dims[0][1]) * p.size(0);
  return WorkStatus::kOk;
}

// ---- the table of operators -------------------------------------------------------------------------------

enum class Formula : std::uint8_t {
  kMm,
  kAddmm,
  kBmm,
  kBaddbmm,
  kMatmul,
  kLinear,
  kScaledMm,
  kGroupedMm,
  kScaledGroupedMm,
  kSdpa,
  kSdpaFlash,
  kSdpaEfficient,
  kSdpaCudnn,
  kFlashForward,
  kEfficientForward,
  kSdpaFlashBackward,
  kSdpaEfficientBackward,
  kSdpaCudnnBackward,
  kFlashBackward,
  kEfficientBackward,
  kConvolution,
  kConvNd,
  kCudnnConvolution,
  kMiopenConvolution,
  kConvolutionBackward,
  kCudnnConvolutionBackward,
  kLayerNorm,
  kNativeLayerNorm,
  kGroupNorm,
  kNativeGroupNorm,
  kRmsNorm,
  kBatchNorm,
  kNativeBatchNorm,
  kLayerNormBackward,
  kGroupNormBackward,
  kBatchNormBackward,
  kRmsNormBackward,
  kSoftmax,
  kSoftmaxBackward,
  kUnary,
  kBinary,
  kInPlace,
  kWriteOnly,
  kCopy,
  kReduction,
  kEmbedding,
  kLibraryFlashForward,
  kFlash3Forward,
  kPackedAttention,
  kUserAttention,
};

struct Entry {
  std::string_view name;  // without "aten::"
  Formula formula;
};

// Sorted by name (checked once at start-up by lookup()).
constexpr std::array kTable = {
    Entry{"_addmm_activation", Formula::kAddmm},
    Entry{"_efficient_attention_backward", Formula::kEfficientBackward},
    Entry{"_efficient_attention_forward", Formula::kEfficientForward},
    Entry{"_flash_attention_backward", Formula::kFlashBackward},
    Entry{"_flash_attention_forward", Formula::kFlashForward},
    Entry{"_fused_rms_norm", Formula::kRmsNorm},
    Entry{"_fused_rms_norm_backward", Formula::kRmsNormBackward},
    Entry{"_grouped_mm", Formula::kGroupedMm},
    Entry{"_log_softmax", Formula::kSoftmax},
    Entry{"_log_softmax_backward_data", Formula::kSoftmaxBackward},
    Entry{"_scaled_dot_product_cudnn_attention", Formula::kSdpaCudnn},
    Entry{"_scaled_dot_product_cudnn_attention_backward", Formula::kSdpaCudnnBackward},
    Entry{"_scaled_dot_product_efficient_attention", Formula::kSdpaEfficient},
    Entry{"_scaled_dot_product_efficient_attention_backward", Formula::kSdpaEfficientBackward},
    Entry{"_scaled_dot_product_flash_attention", Formula::kSdpaFlash},
    Entry{"_scaled_dot_product_flash_attention_backward", Formula::kSdpaFlashBackward},
    Entry{"_scaled_grouped_mm", Formula::kScaledGroupedMm},
    Entry{"_scaled_mm", Formula::kScaledMm},
    Entry{"_softmax", Formula::kSoftmax},
    Entry{"_softmax_backward_data", Formula::kSoftmaxBackward},
    Entry{"_to_copy", Formula::kUnary},
    Entry{"abs", Formula::kUnary},
    Entry{"add", Formula::kBinary},
    Entry{"add_", Formula::kInPlace},
    Entry{"addcdiv_", Formula::kInPlace},
    Entry{"addcmul_", Formula::kInPlace},
    Entry{"addmm", Formula::kAddmm},
    Entry{"amax", Formula::kReduction},
    Entry{"baddbmm", Formula::kBaddbmm},
    Entry{"batch_norm", Formula::kBatchNorm},
    Entry{"bmm", Formula::kBmm},
    Entry{"clamp", Formula::kUnary},
    Entry{"clamp_", Formula::kInPlace},
    Entry{"clamp_min", Formula::kUnary},
    Entry{"clone", Formula::kUnary},
    Entry{"conv1d", Formula::kConvNd},
    Entry{"conv2d", Formula::kConvNd},
    Entry{"conv3d", Formula::kConvNd},
    Entry{"convolution", Formula::kConvolution},
    Entry{"convolution_backward", Formula::kConvolutionBackward},
    Entry{"copy_", Formula::kCopy},
    Entry{"cudnn_batch_norm", Formula::kNativeBatchNorm},
    Entry{"cudnn_batch_norm_backward", Formula::kBatchNormBackward},
    Entry{"cudnn_convolution", Formula::kCudnnConvolution},
    Entry{"cudnn_convolution_backward", Formula::kCudnnConvolutionBackward},
    Entry{"div", Formula::kBinary},
    Entry{"div_", Formula::kInPlace},
    Entry{"embedding", Formula::kEmbedding},
    Entry{"exp", Formula::kUnary},
    Entry{"fill_", Formula::kWriteOnly},
    Entry{"gelu", Formula::kUnary},
    Entry{"gelu_backward", Formula::kBinary},
    Entry{"group_norm", Formula::kGroupNorm},
    Entry{"layer_norm", Formula::kLayerNorm},
    Entry{"linear", Formula::kLinear},
    Entry{"log_softmax", Formula::kSoftmax},
    Entry{"matmul", Formula::kMatmul},
    Entry{"maximum", Formula::kBinary},
    Entry{"mean", Formula::kReduction},
    Entry{"minimum", Formula::kBinary},
    Entry{"miopen_batch_norm", Formula::kNativeBatchNorm},
    Entry{"miopen_batch_norm_backward", Formula::kBatchNormBackward},
    Entry{"miopen_convolution", Formula::kMiopenConvolution},
    Entry{"mm", Formula::kMm},
    Entry{"mul", Formula::kBinary},
    Entry{"mul_", Formula::kInPlace},
    Entry{"native_batch_norm", Formula::kNativeBatchNorm},
    Entry{"native_batch_norm_backward", Formula::kBatchNormBackward},
    Entry{"native_group_norm", Formula::kNativeGroupNorm},
    Entry{"native_group_norm_backward", Formula::kGroupNormBackward},
    Entry{"native_layer_norm", Formula::kNativeLayerNorm},
    Entry{"native_layer_norm_backward", Formula::kLayerNormBackward},
    Entry{"neg", Formula::kUnary},
    Entry{"pow", Formula::kUnary},
    Entry{"reciprocal", Formula::kUnary},
    Entry{"relu", Formula::kUnary},
    Entry{"relu_", Formula::kInPlace},
    Entry{"rms_norm", Formula::kRmsNorm},
    Entry{"rsqrt", Formula::kUnary},
    Entry{"scaled_dot_product_attention", Formula::kSdpa},
    Entry{"sigmoid", Formula::kUnary},
    Entry{"sigmoid_backward", Formula::kBinary},
    Entry{"silu", Formula::kUnary},
    Entry{"silu_backward", Formula::kBinary},
    Entry{"softmax", Formula::kSoftmax},
    Entry{"sqrt", Formula::kUnary},
    Entry{"sub", Formula::kBinary},
    Entry{"sub_", Formula::kInPlace},
    Entry{"sum", Formula::kReduction},
    Entry{"tanh", Formula::kUnary},
    Entry{"tanh_backward", Formula::kBinary},
    Entry{"threshold_backward", Formula::kBinary},
    Entry{"where", Formula::kBinary},
    Entry{"zero_", Formula::kWriteOnly},
};

constexpr bool table_sorted() {
  for (std::size_t i = 1; i < kTable.size(); ++i) {
    if (!(kTable[i - 1].name < kTable[i].name)) return false;
  }
  return true;
}
static_assert(table_sorted(), "kTable must be sorted by name");

// Attention libraries' operators: their arguments as the libraries' Python interfaces pass them (flash-attn's
// flash_attn_interface.py: q, k, v, dropout_p, softmax_scale, causal, ...; AITER's mha_fwd the same;
// FlashAttention 3's fwd with causal 25th, as TraceLens's perf_model.py reads it).
constexpr std::array kLibraryTable = {
    Entry{"FlashAttnFunc", Formula::kLibraryFlashForward},
    Entry{"aiter::_flash_attn_forward", Formula::kLibraryFlashForward},
    Entry{"aiter::fmha_v3_fwd", Formula::kLibraryFlashForward},
    Entry{"aiter::mha_fwd", Formula::kLibraryFlashForward},
    Entry{"flash_attn::_flash_attn_forward", Formula::kLibraryFlashForward},
    Entry{"flash_attn_3::fwd", Formula::kFlash3Forward},
};
constexpr Entry kPackedEntry{"(packed attention)", Formula::kPackedAttention};
constexpr Entry kUserAttentionEntry{"(user attention)", Formula::kUserAttention};

const Entry* lookup(std::string_view name) {
  if (!name.starts_with("aten::")) {
    for (const Entry& e : kLibraryTable) {
      if (e.name == name) return &e;
    }
    if (packed_attention_layout(name)) return &kPackedEntry;
    return user_attention_operator(name) ? &kUserAttentionEntry : nullptr;
  }
  name = strip_namespace(name);
  auto it = std::lower_bound(kTable.begin(), kTable.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != kTable.end() && it->name == name ? &*it : nullptr;
}

WorkStatus evaluate(Formula f, const Parsed& p, OpWork& out) {
  constexpr std::size_t kNone = SIZE_MAX;
  switch (f) {
    case Formula::kMm:
      return matrix_product(p, 0, 1, false, kNone, out);
    case Formula::kAddmm:
      return matrix_product(p, 1, 2, false, 0, out);
    case Formula::kBmm:
      return matrix_product(p, 0, 1, true, kNone, out);
    case Formula::kBaddbmm:
      return matrix_product(p, 1, 2, true, 0, out);
    case Formula::kMatmul:
      return matmul(p, out);
    case Formula::kLinear:
      return linear(p, out);
    case Formula::kScaledMm:
      return scaled_mm(p, out);
    case Formula::kGroupedMm:
      return grouped_mm(p, 4, out);
    case Formula::kScaledGroupedMm:
      return grouped_mm(p, 7, out);
    // Argument positions from aten/src/ATen/native/native_functions.yaml.
    case Formula::kSdpa:  // (query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
      return attention(p, {0, true, 5, false, 3, false}, out);
    case Formula::kSdpaFlash:  // (query, key, value, dropout_p, is_causal, return_debug_mask, scale)
      return attention(p, {0, true, 4, false, kNone, false}, out);
    case Formula::kSdpaEfficient:  // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal,
                                   // ..)
    case Formula::kSdpaCudnn:  // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, ..)
      return attention(p, {0, true, 6, false, 3, false}, out);
    case Formula::kFlashForward:  // (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                                  // is_causal)
      return attention(p, {0, false, 8, false, kNone, false}, out);
    case Formula::kEfficientForward:  // (query, key, value, bias, cu_q, cu_k, max_q, max_k, dropout_p,
                                      // mask_type)
      return attention(p, {0, false, 9, true, 3, false}, out);
    case Formula::kSdpaFlashBackward:  // (grad_out, query, key, value, out, logsumexp, cum_q, cum_k, max_q,
                                       //  max_k, dropout_p, is_causal, ...)
      return attention(p, {1, true, 11, false, kNone, true}, out);
    case Formula::kSdpaEfficientBackward:  // (grad_out, query, key, value, attn_bias, out, logsumexp,
                                           //  philox_seed, philox_offset, dropout_p, grad_input_mask,
                                           //  is_causal)
      return attention(p, {1, true, 11, false, 4, true}, out);
    case Formula::kSdpaCudnnBackward:  // (grad_out, query, key, value, out, logsumexp, philox_seed,
                                       //  philox_offset, attn_bias, cum_q, cum_k, max_q, max_k, dropout_p,
                                       //  is_causal, ...)
      return attention(p, {1, true, 14, false, 8, true}, out);
    case Formula::kFlashBackward:  // (grad_out, query, key, value, out, logsumexp, cum_q, cum_k, max_q,
                                   // max_k,
                                   //  dropout_p, is_causal, ...)
      return attention(p, {1, false, 11, false, kNone, true}, out);
    case Formula::kEfficientBackward:  // (grad_out, query, key, value, bias, out, cu_q, cu_k, max_q, max_k,
                                       //  logsumexp, dropout_p, philox_seed, philox_offset, mask_type, ...)
      return attention(p, {1, false, 14, true, 4, true}, out);
    case Formula::kConvolution:  // (input, weight, bias, stride, padding, dilation, transposed, ...)
      return convolution(p, {3, 4, 5, 6}, out);
    case Formula::kConvNd:  // (input, weight, bias, stride, padding, dilation, groups)
      return convolution(p, {3, 4, 5, kNone}, out);
    case Formula::kCudnnConvolution:  // (self, weight, padding, stride, dilation, groups, ...)
      return convolution(p, {3, 2, 4, kNone}, out);
    case Formula::kMiopenConvolution:  // (self, weight, bias, padding, stride, dilation, groups, ...)
      return convolution(p, {4, 3, 5, kNone}, out);
    case Formula::kConvolutionBackward:  // (grad_output, input, weight, bias_sizes, stride, padding,
                                         //  dilation, transposed, output_padding, groups, output_mask)
      return convolution_backward(p, 0, 1, 7, 10, out);
    case Formula::kCudnnConvolutionBackward:  // (self, grad_output, weight, padding, stride, dilation,
                                              // groups,
                                              //  benchmark, deterministic, allow_tf32, output_mask)
      return convolution_backward(p, 1, 0, kNone, 10, out);
    case Formula::kLayerNorm:        // (input, normalized_shape, weight, bias, eps, cudnn_enable)
    case Formula::kNativeLayerNorm:  // (input, normalized_shape, weight, bias, eps)
      return norm(p, has_tensor(p, 2) ? 5 : 4, 2, 3, out);
    case Formula::kGroupNorm:  // (input, num_groups, weight, bias, eps, cudnn_enabled)
      return norm(p, has_tensor(p, 2) ? 5 : 4, 2, 3, out);
    case Formula::kNativeGroupNorm:  // (input, weight, bias, N, C, HxW, group, eps)
      return norm(p, has_tensor(p, 1) ? 5 : 4, 1, 2, out);
    case Formula::kRmsNorm:  // (input, normalized_shape, weight, eps)
      return norm(p, has_tensor(p, 2) ? 4 : 3, 2, kNone, out);
    case Formula::kBatchNorm:  // (input, weight, bias, running_mean, running_var, training, ...)
    case Formula::kNativeBatchNorm: {
      const int training = concrete_bool(p.concrete, 5);
      if (training < 0) return WorkStatus::kUndetermined;
      const double per = training == 1 ? 4 : (has_tensor(p, 1) ? 2 : 1);
      return norm(p, per, 1, 2, out);
    }
    case Formula::kLayerNormBackward:  // (grad_out, input, normalized_shape, mean, rstd, weight, bias, mask)
      return norm_backward(p, 0, 1, 5, out);
    case Formula::kGroupNormBackward:  // (grad_out, input, mean, rstd, weight, N, C, HxW, group, mask)
      return norm_backward(p, 0, 1, 4, out);
    case Formula::kBatchNormBackward:  // (grad_out, input, weight, running_mean, running_var, save_mean, ...)
      return norm_backward(p, 0, 1, 2, out);
    case Formula::kRmsNormBackward:  // (grad_out, input, normalized_shape, rstd, weight, output_mask)
      return norm_backward(p, 0, 1, 4, out);
    case Formula::kSoftmax: {  // (self, dim, ...): one read, one write
      const WorkStatus s = elementwise(p, Elementwise::kReduction, out);
      if (s == WorkStatus::kOk) out.bytes *= 2;
      return s;
    }
    case Formula::kSoftmaxBackward: {  // (grad_output, output, dim, input_dtype): two reads, one write
      const WorkStatus s = elementwise(p, Elementwise::kReduction, out);
      if (s == WorkStatus::kOk) out.bytes *= 3;
      return s;
    }
    case Formula::kUnary: {  // (self, scalars...): the first tensor read, one as large written
      const WorkStatus s = elementwise(p, Elementwise::kReduction, out);
      if (s == WorkStatus::kOk) out.bytes *= 2;
      return s;
    }
    case Formula::kBinary:
      return elementwise(p, Elementwise::kOutOfPlace, out);
    case Formula::kInPlace:
      return elementwise(p, Elementwise::kInPlace, out);
    case Formula::kWriteOnly:
      return elementwise(p, Elementwise::kWriteOnly, out);
    case Formula::kCopy:
      return elementwise(p, Elementwise::kCopy, out);
    case Formula::kReduction:
      return elementwise(p, Elementwise::kReduction, out);
    case Formula::kEmbedding:
      return embedding(p, out);
    case Formula::kLibraryFlashForward:
      return attention(p, {0, false, 5, false, kNone, false}, out);
    case Formula::kFlash3Forward:
      return attention(p, {0, false, 24, false, kNone, false}, out);
    case Formula::kPackedAttention:  // op_work() reads its layout from its name
    case Formula::kUserAttention:
      // Neither its layout nor its mask is known for certain: kept, uncounted, for its shapes.
      return p.dims.empty() ? WorkStatus::kUnparsable : WorkStatus::kUndetermined;
  }
  return WorkStatus::kNoFormula;
}

}  // namespace

WorkCategory kernel_work_category(std::string_view kernel_name) {
  const std::string name = vocabulary::lower(kernel_name);
  const auto has = [&](std::initializer_list<std::string_view> words) {
    for (const std::string_view w : words)
      if (name.find(w) != std::string::npos) return true;
    return false;
  };
  // Convolutions first: cuDNN names its implicit-GEMM convolutions "..._gemm".
  if (has({"conv", "fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "implicit_convolve"}))
    return WorkCategory::kConv;
  if (has({"flash", "fmha", "attn", "attention", "mha_fwd", "mha_bwd"})) return WorkCategory::kAttention;
  if (has({"gemm", "gemv", "cutlass", "xmma", "nvjet", "cijk_", "matmul", "cublas", "wgmma", "hgmma"}))
    return WorkCategory::kGemm;
  if (has({"norm", "welford", "bn_fw", "bn_bw"})) return WorkCategory::kNorm;
  if (has({"elementwise", "reduce_kernel", "triton_poi", "triton_red", "triton_per", "pointwise", "softmax",
           "vectorized", "unrolled", "catarray", "fill_kernel", "copy_kernel"}))
    return WorkCategory::kElementwise;
  return WorkCategory::kOther;
}

const char* to_string(WorkCategory category) {
  switch (category) {
    case WorkCategory::kGemm:
      return "gemm";
    case WorkCategory::kAttention:
      return "attention";
    case WorkCategory::kConv:
      return "conv";
    case WorkCategory::kNorm:
      return "norm";
    case WorkCategory::kElementwise:
      return "elementwise";
    case WorkCategory::kOther:
      return "other";
  }
  return "other";
}

bool parse_work_category(std::string_view name, WorkCategory& out) {
  for (int i = 1; i <= kWorkCategoryCount; ++i) {
    const auto c = static_cast<WorkCategory>(i);
    if (name == to_string(c)) {
      out = c;
      return true;
    }
  }
  return false;
}

bool parse_dims(std::string_view s, std::vector<std::vector<std::int64_t>>& out) {
  out.clear();
  return parse_top_list(s, [&](std::size_t& i) {
    if (i >= s.size() || s[i] != '[') return false;
    // One input: a list of sizes, or a nested list (a TensorList's shapes: not a tensor, kept as []).
    std::size_t look = i + 1;
    skip_space(s, look);
    Dims dims;
    if (look < s.size() && s[look] == '[') {
      if (!skip_list(s, i)) return false;
    } else {
      i = look;
      if (i < s.size() && s[i] == ']') {
        ++i;
      } else {
        while (true) {
          std::int64_t v = 0;
          if (!parse_int(s, i, v) || v < 0 || v > kMaxDim) return false;
          dims.push_back(v);
          skip_space(s, i);
          if (i < s.size() && s[i] == ',') {
            ++i;
            continue;
          }
          if (i < s.size() && s[i] == ']') {
            ++i;
            break;
          }
          return false;
        }
      }
    }
    out.push_back(std::move(dims));
    return true;
  });
}

namespace {

// "[\"a\", \"\", \"b\"]" -> views of a, "" and b in S (values with an escape are unescaped into STORAGE).
bool parse_string_views(std::string_view s, std::vector<std::string_view>& out,
                        std::deque<std::string>& storage) {
  out.clear();
  return parse_top_list(s, [&](std::size_t& i) {
    if (i >= s.size() || s[i] != '"') return false;
    const std::size_t begin = ++i;
    bool escaped = false;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i, escaped = true;
      ++i;
    }
    if (i >= s.size()) return false;
    if (escaped) {
      std::string value;
      for (std::size_t j = begin; j < i; ++j) {
        if (s[j] == '\\' && j + 1 < i) ++j;
        value += s[j];
      }
      storage.push_back(std::move(value));
      out.push_back(storage.back());
    } else {
      out.push_back(s.substr(begin, i - begin));
    }
    ++i;
    return true;
  });
}

}  // namespace

bool parse_string_list(std::string_view s, std::vector<std::string>& out) {
  out.clear();
  std::size_t i = 0;
  skip_space(s, i);
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  skip_space(s, i);
  if (i < s.size() && s[i] == ']') {
    ++i;
    skip_space(s, i);
    return i == s.size();
  }
  while (true) {
    skip_space(s, i);
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    std::string value;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      value += s[i++];
    }
    if (i >= s.size()) return false;
    ++i;
    out.push_back(std::move(value));
    skip_space(s, i);
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == ']') {
      ++i;
      skip_space(s, i);
      return i == s.size();
    }
    return false;
  }
}

int element_bytes(std::string_view t) {
  if (t.starts_with("c10::")) t.remove_prefix(5);
  if (t == "float" || t == "int" || t == "unsigned int") return 4;
  if (t == "double" || t == "long int" || t == "long" || t == "long long" || t == "int64_t" ||
      t == "complex<float>" || t == "unsigned long")
    return 8;
  if (t == "BFloat16" || t == "Half" || t == "short" || t == "short int" || t == "unsigned short") return 2;
  if (t == "bool" || t == "unsigned char" || t == "signed char" || t == "char" || t.starts_with("Float8_"))
    return 1;
  if (t == "complex<double>") return 16;
  return 0;
}

bool has_work_formula(std::string_view name) {
  return lookup(name) != nullptr;
}

bool user_attention_operator(std::string_view name) {
  const std::size_t colons = name.find("::");
  if (colons == std::string_view::npos || colons == 0 || name.starts_with("aten::") ||
      name.find(' ') != std::string_view::npos)
    return false;
  // The attention libraries' own operators are read by their signatures.
  if (std::any_of(kLibraryTable.begin(), kLibraryTable.end(),
                  [&](const Entry& e) { return e.name == name; }) ||
      packed_attention_layout(name))
    return false;
  const auto has = [&](std::string_view word) {
    return std::search(name.begin(), name.end(), word.begin(), word.end(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           }) != name.end();
  };
  return (has("attn") || has("attention") || has("mha") || has("sdpa")) && !has("backward") && !has("bwd") &&
         !has("grad");
}

bool batch_seq_heads_attention(std::string_view name) {
  const Entry* e = lookup(name);
  return e != nullptr &&
         (e->formula == Formula::kLibraryFlashForward || e->formula == Formula::kFlash3Forward);
}

// Each layout follows its library's operator signature: flash-attn's flash_attn_interface.py
// (_flash_attn_varlen_forward: q, k, v, cu_seqlens_q, ...) and AITER's mha_varlen_fwd in the same order;
// vLLM's unified_attention(_with_output) (query, key, value[, output], layer_name); FlashInfer's prefill.py
// and decode.py (ragged_run, paged_run and the decode run: float and int workspaces, plan, q, k or the paged
// k cache, v, qo_indptr or kv_indptr, ...); sglang's paged_attention_ragged as its profiler names it (AITER's
// inputs: ..., q third, the paged caches after it; AMD-AGI/TraceLens attention_perf_model_extensions.py).
std::optional<PackedAttentionLayout> packed_attention_layout(std::string_view name) {
  using L = PackedAttentionLayout;
  constexpr auto none = std::nullopt;
  if (name == "flash_attn::_flash_attn_varlen_forward" || name == "aiter::mha_varlen_fwd" ||
      name == "aiter::fmha_v3_varlen_fwd")
    return L{.q = 0, .k = 1, .offsets = 3, .pages = none, .paged = false};
  if (name == "vllm::unified_attention_with_output" || name == "vllm::unified_attention")
    return L{.q = 0, .k = 1, .offsets = none, .pages = none, .paged = false};
  if (name.starts_with("flashinfer::")) {
    if (name.ends_with("_ragged_run")) return L{.q = 3, .k = 4, .offsets = 6, .pages = none, .paged = false};
    if (name.ends_with("_paged_run")) return L{.q = 3, .k = 4, .offsets = 6, .pages = 8, .paged = true};
    if (name.find("batch_decode") != std::string_view::npos && name.ends_with("_run"))
      return L{.q = 3, .k = 4, .offsets = 6, .pages = 7, .paged = true};
  }
  if (name.starts_with("sglang_profiler::attention_paged_attention_ragged"))
    return L{.q = 2, .k = 3, .offsets = none, .pages = none, .paged = true};
  return std::nullopt;
}

WorkStatus op_work(std::string_view name, const OpArgs& args, OpWork& out) {
  const Entry* e = lookup(name);
  if (e == nullptr) return WorkStatus::kNoFormula;
  thread_local Parsed p;  // its vectors keep their capacity from one operator to the next
  p.storage.clear();
  p.types.clear();
  p.concrete.clear();
  if (!parse_dims(args.input_dims, p.dims)) return WorkStatus::kUnparsable;
  if (!args.input_types.empty() && !parse_string_views(args.input_types, p.types, p.storage))
    return WorkStatus::kUnparsable;
  if (!args.concrete_inputs.empty() && !parse_string_views(args.concrete_inputs, p.concrete, p.storage))
    return WorkStatus::kUnparsable;
  out = OpWork{};
  // Packed attention's layout comes with its name (a decoding pass's work is known, a prefill's depends on
  // each sequence's length, which the shapes do not record: kept, uncounted, for what they say of the model).
  const WorkStatus s = e->formula == Formula::kPackedAttention
                           ? (p.dims.empty() ? WorkStatus::kUnparsable
                                             : packed_attention(p, *packed_attention_layout(name), out))
                           : evaluate(e->formula, p, out);
  if (s == WorkStatus::kOk && !(out.flops >= 0 && out.bytes >= 0 && out.flops < 1e30 && out.bytes < 1e30))
    return WorkStatus::kUnparsable;
  return s;
}

namespace {

OpWorkStatus stored_work(std::string_view name, std::string_view dims, std::string_view types,
                         std::string_view concrete, std::int64_t& category, double& flops, double& bytes) {
  OpWork w;
  switch (op_work(name, {dims, types, concrete}, w)) {
    case WorkStatus::kOk:
      category = static_cast<std::int64_t>(w.category);
      flops = w.flops;
      bytes = w.bytes;
      return OpWorkStatus::kCounted;
    case WorkStatus::kUndetermined:
      return OpWorkStatus::kUndetermined;
    default:
      return OpWorkStatus::kUnparsable;
  }
}

}  // namespace

OperatorWorkFormulas operator_work_formulas() {
  return {.has_formula = has_work_formula, .work = stored_work};
}

}  // namespace meshscope::measure
