#include "analysis/compare/workload.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/compare/model_shapes.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/model/presets.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {

const char* const kNotATransformer =
    "the profile is not a recognised transformer (no attention with GEMMs of its hidden size in the recorded "
    "shapes): pass --model NAME|FILE.toml (and --hardware), or store them in the profile with `meshscope "
    "annotate PROFILE --model ... --hardware ...`";

const char* to_string(Confidence confidence) {
  switch (confidence) {
    case Confidence::kLow:
      return "low";
    case Confidence::kMedium:
      return "medium";
    case Confidence::kHigh:
      return "high";
    case Confidence::kStated:
      return "stated";
  }
  return "?";
}

namespace {

using Dims = std::vector<std::int64_t>;

void rate(Workload& w, const char* field, Confidence c) {
  w.confidence[field] = c;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The most frequent value of COUNTS (the smallest key on a tie); nullopt when empty.
template <typename K>
std::optional<K> most_frequent(const std::map<K, std::int64_t>& counts) {
  std::optional<K> best;
  std::int64_t n = 0;
  for (const auto& [k, c] : counts) {
    if (c > n) best = k, n = c;
  }
  return best;
}

// The attention shape of MODEL its passes run most (its self-attention unless it has none; the smallest shape
// on a tie). A serving engine's packed passes, whose sequences are not recorded, count by their tokens: a
// prefill of many tokens rather than the one-token decoding passes after it, which share a shape only because
// they pack as many sequences.
AttentionShape main_attention(const ShapedModel& m) {
  const auto& shapes = m.self_attention.empty() ? m.cross_attention : m.self_attention;
  const AttentionShape* best = nullptr;
  double most = 0;
  for (const auto& [a, calls] : shapes) {
    const double weight =
        static_cast<double>(calls) * (a.sequences_unknown ? static_cast<double>(a.seq) : 1.0);
    if (weight > most) best = &a, most = weight;
  }
  return *best;
}

// The one parallel dimension a process group's description names, "" for none or for a description naming
// two (DATA_PARALLEL_GROUP_WITH_CP).
std::string dimension_of(std::string_view desc) {
  const vocabulary::ParallelDims named = vocabulary::parallel_dims_named(desc);
  if (named.count() != 1) return {};
  return named.tp ? "tp" : named.pp ? "pp" : named.cp ? "cp" : named.ep ? "ep" : "dp";
}

}  // namespace

std::string hardware_preset_for(std::string_view device_name, std::string* note, const GpuTraits& traits) {
  const std::string n = vocabulary::lower(device_name);
  auto has = [&](std::string_view part) { return contains(n, part); };
  const double gib =
      traits.memory_bytes > 0 ? static_cast<double>(traits.memory_bytes) / double(1ull << 30) : -1;
  auto say = [&](std::string text) {
    if (note != nullptr) *note = std::move(text);
  };
  if (has("gb300")) return "gb300";
  if (has("gb200")) return "gb200";
  if (has("b300")) return "b300";
  if (has("b200")) return "b200";
  if (has("h200")) return "h200";
  if (has("h800")) return "h800";
  if (has("h20")) return "h20";
  if (has("h100")) {
    // "H100 80GB HBM3" is the SXM5 part; "H100 PCIe" and "H100 NVL" are products of their own.
    if (has("nvl")) return "h100-nvl";
    if (has("pcie")) return "h100-pcie";
    return "h100-sxm";
  }
  if (has("a800")) return has("pcie") ? std::string() : "a800";
  if (has("a100")) {
    // The 80 GB PCIe card has a preset; the 40 GB one is described from its records.
    if (has("pcie")) return has("80gb") ? "a100-80gb-pcie" : std::string();
    if (has("80gb") || has("sxm4-80")) return "a100-80gb";
    if (has("40gb") || has("sxm4-40")) return "a100-40gb";
    return {};  // "A100-PG509-200" and other board names: not an A100 SXM4 for certain
  }
  if (has("v100s")) return {};  // the V100S: faster clocks and memory than any V100 preset states
  if (has("v100")) {
    if (has("pcie")) return has("32gb") ? "v100-pcie" : std::string();
    if (has("16gb")) return "v100-16gb";
    if (has("32gb")) return "v100";
    if (gib > 0) {
      say(fmt::format("{} with {:.1f} GiB of memory", device_name, gib));
      return gib < 24 ? "v100-16gb" : "v100";
    }
    say(fmt::format("{} names no memory size: the V100 SXM2 32GB of preset v100", device_name));
    return "v100";
  }
  if (has("l40s")) return "l40s";
  if (n == "nvidia l4" || n == "l4") return "l4";  // not the L40 nor the L40S
  if (has("mi355x")) return "mi355x";
  if (has("mi325x")) return "mi325x";
  if (has("mi300x")) return "mi300x";  // also its virtual function, "MI300X VF"
  // PyTorch shows each die (GCD) of an MI250X or MI250 as a device; some ROCm versions name both
  // "MI250X/MI250", which their compute units tell apart (110 and 104 per GCD).
  if (has("mi250")) {
    if (has("mi250x") && !has("/mi250")) return "mi250x";
    if (traits.compute_units == 110) {
      say(fmt::format("{} with 110 compute units: an MI250X die", device_name));
      return "mi250x";
    }
    if (traits.compute_units == 104) {
      say(fmt::format("{} with 104 compute units: an MI250 die", device_name));
      return "mi250";
    }
    if (!has("mi250x")) return "mi250";
    return {};
  }
  if (has("mi210")) return "mi210";
  // A generic name ("AMD Radeon Graphics") on a CDNA 2 die (gfx90a reports 9.0) of 64 GiB: its compute units
  // say which (104: an MI210, or one die of an MI250, with the same rates and memory; 110: an MI250X die).
  if (has("amd") && traits.compute_major == 9 && traits.compute_minor == 0 && gib > 60 && gib < 68) {
    if (traits.compute_units == 104) {
      say(
          fmt::format("'{}' with 104 compute units and 64 GiB on gfx9.0: a CDNA 2 die as in the MI210 (and "
                      "each die of an MI250: the same compute and memory)",
                      device_name));
      return "mi210";
    }
    if (traits.compute_units == 110) {
      say(fmt::format("'{}' with 110 compute units and 64 GiB on gfx9.0: an MI250X die", device_name));
      return "mi250x";
    }
  }
  return {};
}

ProfileGpu profile_gpu(const Profile& profile, const ProfileSummary* summary) {
  std::map<std::string, std::int64_t> gpus;
  std::map<std::string, GpuTraits> traits;       // of the first device of each name
  std::optional<measure::DeviceUse> renumbered;  // a device described under another id
  for (const Rank& r : profile.ranks()) {
    const RankSummary* rs = summary ? find_rank(*summary, r.rank) : nullptr;
    for (const auto& use : rs ? measure::devices_used(r, *rs) : measure::devices_used(r)) {
      if (!use.info || use.info->name.empty()) continue;
      if (use.described_as >= 0 && !renumbered) renumbered = use;
      if (gpus[use.info->name]++ == 0) {
        const Device& d = *use.info;
        auto known = [](std::int64_t v) { return v == kNull ? std::int64_t{-1} : v; };
        traits[d.name] = {known(d.total_memory_bytes), known(d.sm_count), known(d.compute_major),
                          known(d.compute_minor)};
      }
    }
  }
  ProfileGpu out;
  if (gpus.empty()) return out;
  out.name = *most_frequent(gpus);
  out.preset = hardware_preset_for(out.name, &out.note, traits[out.name]);
  if (out.preset.empty()) out.recorded = hardware_from_traits(out.name, traits[out.name]);
  if (renumbered && renumbered->info->name == out.name) {
    const std::string said = fmt::format(
        "the work ran on device {}, described as device {}: the only GPU model the trace describes",
        renumbered->device, renumbered->described_as);
    out.note = out.note.empty() ? said : out.note + "; " + said;
  }
  return out;
}

namespace {

// The GPU the ranks ran work on, and the hardware preset that describes it.
void infer_hardware(const Profile& profile, const ProfileSummary* summary, Workload& w) {
  const ProfileGpu gpu = profile_gpu(profile, summary);
  if (gpu.name.empty()) {
    w.evidence.push_back("hardware unknown: the profile names no GPU the ranks ran work on");
    return;
  }
  w.gpu = gpu.name;
  if (gpu.recorded) {
    const RecordedHardware& r = *gpu.recorded;
    w.hardware = r.spec.name;
    w.recorded_hardware = r.spec;
    rate(w, "hardware", r.same_size ? Confidence::kMedium : Confidence::kLow);
    w.evidence.push_back(
        fmt::format("hardware {}: no preset names the GPU '{}', so it is described from its "
                    "records ({}; pass --hardware to choose)",
                    r.spec.name, w.gpu, r.how));
    return;
  }
  if (gpu.preset.empty()) {
    w.evidence.push_back(
        fmt::format("hardware unknown: no preset describes the GPU '{}' (pass --hardware)", w.gpu));
    return;
  }
  w.hardware = gpu.preset;
  rate(w, "hardware", gpu.note.empty() ? Confidence::kHigh : Confidence::kMedium);
  w.evidence.push_back(fmt::format("hardware {} from the GPU name '{}'{}", gpu.preset, w.gpu,
                                   gpu.note.empty() ? "" : " (" + gpu.note + ")"));
}

// Training or inference: autograd's backward functions among the CPU operators (or, without the events, the
// summaries' verdict per rank).
void infer_training(const Profile& profile, const ProfileSummary* summary, Workload& w) {
  bool any_ops = false, backward = false;
  if (summary) {
    for (const RankSummary& r : summary->ranks) {
      any_ops = any_ops || r.training.has_value();
      backward = backward || r.training.value_or(false);
    }
  }
  std::vector<std::int8_t> seen;  // per string id: 0 unknown, 1 backward, 2 not
  for (const Rank& r : profile.ranks()) {
    for (const CpuRange& range : r.ranges) {
      if (range.kind != RangeKind::kCpuOp) continue;
      any_ops = true;
      if (range.name >= seen.size()) seen.resize(range.name + 1, 0);
      std::int8_t& s = seen[range.name];
      if (s == 0) s = contains(vocabulary::lower(profile.str(range.name)), "backward") ? 1 : 2;
      if (s == 1) {
        backward = true;
        break;
      }
    }
    if (backward) break;
  }
  if (!any_ops) return;
  w.training = backward;
  rate(w, "training", Confidence::kHigh);
  w.evidence.push_back(backward ? "training: backward operators recorded"
                                : "inference: forward passes only (no backward operator recorded)");
}

// The process groups whose descriptions name one parallel dimension: dimension -> the largest group size.
std::map<std::string, std::int64_t> process_group_dims(const Profile& profile, Workload& w) {
  std::map<std::string, std::int64_t> group_dims;
  std::set<std::string> described;
  for (const Rank& r : profile.ranks()) {
    for (const ProcessGroup& g : r.process_groups) {
      const std::string dim = dimension_of(g.desc);
      const std::int64_t size =
          g.group_size != kNull ? g.group_size : static_cast<std::int64_t>(g.ranks.size());
      if (dim.empty() || size < 1) continue;
      auto [it, added] = group_dims.emplace(dim, size);
      if (!added) it->second = std::max(it->second, size);
      if (described.insert(dim).second)
        w.evidence.push_back(
            fmt::format("{} {} from process group '{}' of {} ranks", dim, size, g.desc, size));
    }
  }
  return group_dims;
}

// The MLP: its down projection [hidden, F] and its up projection(s) [F, hidden] or a fused gate-and-up
// [2F, hidden] among the GEMMs of HIDDEN; not the attention's output projection [hidden, heads × value head]
// (ATT on the rank).
void infer_mlp(const ShapeCounts& shapes, std::int64_t hidden, const AttentionShape& att, std::int64_t tp,
               Workload& w) {
  std::int64_t best_f = 0, best_calls = 0;
  for (const auto& [nk, calls] : shapes.weights) {
    const auto [n, k] = nk;
    if (n != hidden || k == hidden || k == att.heads * att.head_dim || k == att.heads * att.v_dim()) continue;
    if (calls > best_calls || (calls == best_calls && k > best_f)) best_f = k, best_calls = calls;
  }
  if (best_f == 0) return;
  const std::int64_t up_calls = shapes.weight_calls(best_f, hidden);
  const std::int64_t fused_calls = shapes.weight_calls(2 * best_f, hidden);
  w.gated_mlp = up_calls >= 2 * best_calls || fused_calls >= best_calls;
  w.ffn = best_f * tp;
  rate(w, "ffn", tp > 1 ? Confidence::kMedium : Confidence::kHigh);
  w.evidence.push_back(
      fmt::format("ffn {} from the MLP's down projection [{}, {}] ({} calls) and its {} up "
                  "projection(s) ({} calls){}",
                  *w.ffn, hidden, best_f, best_calls, w.gated_mlp ? "gated" : "plain", up_calls + fused_calls,
                  tp > 1 ? fmt::format(", × tp {}", tp) : std::string()));
}

std::string attention_text(const AttentionShape& a) {
  return a.seq == a.kv_seq
             ? fmt::format("{} heads × {} over {} tokens", a.heads, a.head_dim, a.seq)
             : fmt::format("{} heads × {}, {} queries over {} keys", a.heads, a.head_dim, a.seq, a.kv_seq);
}

// How MODEL's input came in, as evidence says it.
std::string input_text(const ShapedModel& m) {
  if (m.vocabulary)
    return fmt::format("the embedding table [{}, {}]", m.vocabulary->first, m.vocabulary->second);
  if (m.patch_embedding) {
    const ConvShape& c = *m.patch_embedding;
    std::vector<std::int64_t> weight{c.channels_out, c.channels_in};
    weight.insert(weight.end(), c.kernel.begin(), c.kernel.end());
    return fmt::format("the patch embedding {} (a convolution tiling each input {} into {} patches)",
                       dims_text(weight), dims_text(c.input), c.patches());
  }
  return "the attention's heads × head size";
}

// The hidden size and TP degree of MODEL, whose attention runs ATT on the rank: its input layer's width, else
// the attention's width on each rank × the tensor-parallel group; TP_FROM_SHAPES is set when the shapes alone
// show sharding.
std::pair<std::int64_t, std::int64_t> hidden_and_tp(const ShapedModel& m, const AttentionShape& att,
                                                    std::optional<std::int64_t> tp_group,
                                                    std::optional<std::int64_t>& tp_from_shapes,
                                                    Workload& w) {
  const std::int64_t local_hidden = att.heads * att.head_dim;
  std::int64_t tp = tp_group.value_or(0);
  std::int64_t hidden = 0;
  if (m.vocabulary || m.patch_embedding) {
    hidden = m.width;
    if (m.tp > 1 && !m.own_head_size) tp_from_shapes = m.tp;
    if (tp == 0) tp = m.tp;
    rate(w, "hidden", Confidence::kHigh);
    w.evidence.push_back(fmt::format("hidden {} from {}; attention runs {} heads of {} on each rank", hidden,
                                     input_text(m), att.heads, att.head_dim));
    if (m.own_head_size) {
      w.head_dim = att.head_dim;
      rate(w, "head_dim", Confidence::kHigh);
      w.evidence.push_back(fmt::format(
          "head size {} of the model's own: {} heads × {} = {} on each rank is not the hidden size's share, "
          "and the output projection [{}, {}] brings the heads back to it{}",
          att.head_dim, att.heads, att.head_dim, local_hidden, hidden, att.heads * att.v_dim(),
          att.v_head_dim > 0 ? fmt::format(" (values of head size {})", att.v_head_dim) : std::string()));
    }
    if (att.v_head_dim > 0) {
      w.v_head_dim = att.v_head_dim;
      rate(w, "v_head_dim", Confidence::kHigh);
    }
  } else if (tp > 0) {
    hidden = local_hidden * tp;
    rate(w, "hidden", Confidence::kMedium);
    w.evidence.push_back(
        fmt::format("hidden {} = {} heads × {} per rank × tp {}", hidden, att.heads, att.head_dim, tp));
  } else {
    tp = 1;
    hidden = local_hidden;
    rate(w, "hidden", Confidence::kLow);
    w.evidence.push_back(
        fmt::format("hidden {} = {} heads × head size {} of the attention (no embedding or "
                    "tensor-parallel group recorded: tp 1 assumed)",
                    hidden, att.heads, att.head_dim));
  }
  return {hidden, std::max<std::int64_t>(tp, 1)};
}

// Sequences packed into one dimension of tokens (ATT.packed): their count from the operator's offsets; where
// it records none, from the output layer, which serving frameworks run on each sequence's last token only
// (as many rows as sequences: fewer than the tokens when prefilling, as many when decoding one token each);
// else one sequence of all the tokens, said to be assumed.
void infer_packed_sequences(const AttentionShape& att, const ShapeCounts& shapes, const ShapedModel& m,
                            Workload& w) {
  w.attention = "fused, sequences packed";
  const std::int64_t tokens = att.batch * att.seq;
  std::string how = fmt::format("{} sequence(s) from the operator's offsets", att.batch);
  if (att.sequences_unknown) {
    std::int64_t rows = 0;
    if (m.vocabulary) {
      const std::int64_t calls = shapes.weight_calls(m.vocabulary->first, m.width);
      const std::int64_t all_rows = shapes.rows_of(m.vocabulary->first, m.width);
      if (calls > 0 && all_rows % calls == 0) rows = all_rows / calls;
    }
    if (rows >= 1 && rows <= tokens && tokens % rows == 0) {
      w.micro_batch = rows;
      w.tokens_per_micro_batch = tokens;
      rate(w, "micro_batch", Confidence::kMedium);
      how = fmt::format("{} sequences from the output layer [{}, {}] run on {} rows (one per sequence)", rows,
                        m.vocabulary->first, m.width, rows);
    } else {
      rate(w, "micro_batch", Confidence::kLow);
      how = "the operator records no sequence offsets: one sequence of all the tokens assumed";
    }
  }
  w.evidence.push_back(fmt::format(
      "attention over {} packed tokens (q [{}, {} heads, {}], k and v of {} heads{}): heads {}, kv_heads {}, "
      "{}",
      tokens, tokens, att.heads, att.head_dim, att.kv_heads,
      att.kv_seq != att.seq ? fmt::format(", {} keys per sequence", att.kv_seq) : std::string(), *w.heads,
      *w.kv_heads, how));
}

// What ATT and the attention's operators say of heads, key/value heads, micro-batch and tokens.
void infer_attention(const AttentionShape& att, const ShapeCounts& shapes, const ShapedModel& m,
                     std::int64_t tp, Workload& w) {
  w.heads = att.heads * tp;
  w.kv_heads = att.kv_heads * tp;
  w.micro_batch = att.batch;
  w.tokens_per_micro_batch = att.batch * att.seq;
  const Confidence sharded = tp > 1 ? Confidence::kMedium : Confidence::kHigh;
  rate(w, "heads", shapes.attention_kind == AttentionKind::kHeadsFolded ? Confidence::kMedium : sharded);
  // Eager attention repeats grouped keys before the product: as many key/value heads as heads is assumed
  // unless the key and value projections say otherwise (below).
  rate(w, "kv_heads", shapes.attention_kind == AttentionKind::kFused ? sharded : Confidence::kLow);
  rate(w, "micro_batch",
       shapes.attention_kind == AttentionKind::kHeadsFolded ? Confidence::kMedium : Confidence::kHigh);
  rate(w, "tokens_per_micro_batch", Confidence::kHigh);
  switch (shapes.attention_kind) {
    case AttentionKind::kFused:
      w.attention = "fused";
      if (att.packed) {
        infer_packed_sequences(att, shapes, m, w);
        return;
      }
      w.evidence.push_back(fmt::format(
          "attention q [{}, {} heads, {} tokens, {}], k and v of {} heads: heads {}, "
          "kv_heads {}, {} tokens per micro-batch{}",
          att.batch, att.heads, att.seq, att.head_dim, att.kv_heads, *w.heads, *w.kv_heads,
          *w.tokens_per_micro_batch,
          shapes.user_attention.empty()
              ? std::string()
              : fmt::format(" (the first three inputs of {}, a user's attention operator, read as "
                            "q, k and v)",
                            fmt::join(shapes.user_attention, ", "))));
      return;
    case AttentionKind::kHeadsApart:
      w.attention = "eager";
      w.evidence.push_back(
          fmt::format("unfused attention (QK^T as a product over [{}, {} heads, {} tokens, {}], normalised "
                      "by a softmax): heads {}, {} tokens per micro-batch",
                      att.batch, att.heads, att.seq, att.head_dim, *w.heads, *w.tokens_per_micro_batch));
      break;
    case AttentionKind::kHeadsFolded:
      w.attention = "eager, heads folded into the batch";
      w.evidence.push_back(fmt::format(
          "unfused attention (QK^T as bmm over {} = batch × heads, {} tokens, head size {}, normalised by a "
          "softmax): heads {} = hidden {} / tp {} / head size {}, batch {}, {} tokens per micro-batch",
          att.lead, att.seq, att.head_dim, *w.heads, m.width, tp, att.head_dim, att.batch,
          *w.tokens_per_micro_batch));
      break;
  }
  // Eager attention expands grouped keys to every head before the product: their heads come from the key
  // and value projections' weight [kv_heads × head, hidden], narrower than the queries' by a whole number of
  // heads and called twice per attention (keys and values).
  const std::int64_t local_hidden = att.heads * att.head_dim;
  for (const auto& [nk, calls] : shapes.weights) {
    const auto [n, k] = nk;
    if (k != *w.hidden || n >= local_hidden || n % att.head_dim != 0 || local_hidden % n != 0) continue;
    if (calls != 2 * m.attention_calls()) continue;
    w.kv_heads = n / att.head_dim * tp;
    rate(w, "kv_heads", Confidence::kMedium);
    w.evidence.push_back(fmt::format("kv_heads {} from the key and value projections [{}, {}] ({} calls)",
                                     *w.kv_heads, n, k, calls));
  }
}

// Multi-head latent attention (DeepSeek-AI 2024, arXiv:2405.04434 §2.1): keys and values come up from one
// latent of rank R through [heads × (nope + v), R]; the latent and a rotary key of ROPE shared by every head
// come from [R + ROPE, hidden]; each query and key head is nope + ROPE wide. The queries come from [heads ×
// head, hidden] or through a low rank Q: [Q, hidden] then [heads × head, Q]. ATT runs on the rank.
void infer_latent_attention(const ShapeCounts& shapes, const AttentionShape& att, std::int64_t tp,
                            Workload& w) {
  if (!w.head_dim || !w.hidden) return;
  const std::int64_t hidden = *w.hidden, head = att.head_dim;
  for (const auto& [latent, latent_calls] : shapes.weights) {
    if (latent.second != hidden) continue;
    for (const auto& [up, up_calls] : shapes.weights) {
      const std::int64_t rank = up.second, rope = latent.first - rank;
      if (rope <= 0 || rope >= head || up_calls != latent_calls) continue;
      if (up.first != att.heads * (head - rope + att.v_dim())) continue;
      w.kv_lora_rank = rank;
      w.qk_rope_dim = rope;
      w.v_head_dim = att.v_dim();
      w.kv_heads = *w.heads;
      w.q_lora_rank = 0;
      std::string queries = fmt::format("queries from [{}, {}]", att.heads * head, hidden);
      if (shapes.weight_calls(att.heads * head, hidden) == 0) {
        for (const auto& [down, down_calls] : shapes.weights) {
          if (down.second != hidden || shapes.weight_calls(att.heads * head, down.first) == 0) continue;
          w.q_lora_rank = down.first;
          queries = fmt::format("queries through a rank of {} ([{}, {}] then [{}, {}])", down.first,
                                down.first, hidden, att.heads * head, down.first);
        }
      }
      for (const char* field : {"kv_lora_rank", "qk_rope_dim", "q_lora_rank", "v_head_dim", "kv_heads"})
        rate(w, field, tp > 1 ? Confidence::kMedium : Confidence::kHigh);
      w.evidence.push_back(fmt::format(
          "multi-head latent attention: keys and values from a latent of rank {} ([{}, {}], {} calls, with a "
          "rotary key of {} shared by the heads) through [{}, {}] = {} heads × ({} + {} value); query and "
          "key "
          "heads of {} = {} + {} rotary; {}; as many key/value heads as heads",
          rank, latent.first, hidden, latent_calls, rope, up.first, rank, att.heads, head - rope, att.v_dim(),
          head, head - rope, rope, queries));
      return;
    }
  }
}

// Look-ups of the vocabulary's table with TOKENS tokens each.
std::int64_t lookups_of(const ShapeCounts& shapes, const ShapedModel& m, std::int64_t tokens) {
  if (!m.vocabulary) return 0;
  auto it = shapes.lookup_tokens.find({m.vocabulary->first, m.vocabulary->second, tokens});
  return it == shapes.lookup_tokens.end() ? 0 : it->second;
}

// An encoder-decoder: cross-attention whose queries are as long as one self-attention (the decoder's) and
// whose keys as long as another (the encoder's). Sets its layers and returns true.
bool infer_encoder_decoder(const ShapeCounts& shapes, const ShapedModel& m, Workload& w) {
  for (const auto& [cross, cross_calls] : m.cross_attention) {
    std::int64_t encoder_calls = 0, decoder_calls = 0;
    for (const auto& [self, calls] : m.self_attention) {
      if (self.batch != cross.batch || self.heads != cross.heads || self.head_dim != cross.head_dim) continue;
      if (self.seq == cross.kv_seq) encoder_calls += calls;
      if (self.seq == cross.seq) decoder_calls += calls;
    }
    if (encoder_calls == 0 || decoder_calls == 0) continue;
    // Passes: look-ups of the shared table with each side's tokens (one per pass), else one.
    const std::int64_t encoder_passes =
        std::max<std::int64_t>(1, lookups_of(shapes, m, cross.batch * cross.kv_seq));
    const std::int64_t decoder_passes =
        std::max<std::int64_t>(1, lookups_of(shapes, m, cross.batch * cross.seq));
    if (encoder_calls % encoder_passes != 0 || cross_calls % decoder_passes != 0) continue;
    w.structure = "encoder-decoder";
    w.encoder_layers = encoder_calls / encoder_passes;
    w.decoder_layers = cross_calls / decoder_passes;
    w.layers = *w.encoder_layers + *w.decoder_layers;
    for (const char* field : {"encoder_layers", "decoder_layers", "layers"})
      rate(w, field, Confidence::kMedium);
    w.evidence.push_back(fmt::format(
        "encoder-decoder: {} encoder layers (self-attention over {} tokens, {} calls in {} pass(es)) and {} "
        "decoder layers (cross-attention of {} queries over those {} keys, {} calls in {} pass(es))",
        *w.encoder_layers, cross.kv_seq, encoder_calls, encoder_passes, *w.decoder_layers, cross.seq,
        cross.kv_seq, cross_calls, decoder_passes));
    return true;
  }
  return false;
}

// Layers (forward attention calls per forward pass: one look-up of the vocabulary's table, or one patch
// embedding, each), the vocabulary or a vision model's classes.
void infer_layers_and_vocabulary(const ShapeCounts& shapes, const ShapedModel& m, Workload& w) {
  if (infer_encoder_decoder(shapes, m, w)) {
  } else if (m.vocabulary || !m.patch_embedding) {
    const std::int64_t passes = m.vocabulary ? m.vocabulary_lookups : 1;
    // A pass that ran to its end ran the output layer [vocab (or vocab / tp), hidden] too.
    std::int64_t outputs = 0;
    if (m.vocabulary) {
      outputs = shapes.weight_calls(m.vocabulary->first, m.width);
      if (m.tp > 1 && m.vocabulary->first % m.tp == 0)
        outputs += shapes.weight_calls(m.vocabulary->first / m.tp, m.width);
    }
    // Fewer output layers than passes is a cut trace: its attention calls are not whole passes. None at all
    // is a model run without its head (a base model, an encoder) as often as a cut trace.
    const bool cut = m.vocabulary && outputs > 0 && outputs < passes;
    if (!cut && m.attention_calls() % passes == 0) {
      w.layers = m.attention_calls() / passes;
      rate(w, "layers", m.vocabulary ? Confidence::kMedium : Confidence::kLow);
      w.evidence.push_back(fmt::format("layers {}: {} forward attention calls in {} forward pass(es) ({})",
                                       *w.layers, m.attention_calls(), passes,
                                       m.vocabulary ? "one look-up of the vocabulary's embedding table each"
                                                    : "no embedding look-up recorded: one pass assumed"));
    }
    if (m.vocabulary && outputs < passes) {
      w.evidence.push_back(fmt::format(
          "{} of the {} forward pass(es) ran an output layer [{}, {}]: {}", outputs, passes,
          m.vocabulary->first, m.width,
          outputs == 0 ? "a model run without its head (a base model, an encoder), or a trace that ends "
                         "inside its pass (then the layers are those the trace holds: state the model)"
                       : "the trace ends inside a pass, so the layers are unknown (state the model)"));
    }
  } else {
    w.structure = "vision transformer";
    if (m.attention_calls() % m.patch_calls == 0) {
      w.layers = m.attention_calls() / m.patch_calls;
      rate(w, "layers", Confidence::kMedium);
      w.evidence.push_back(
          fmt::format("layers {}: {} forward attention calls in {} forward pass(es) (one patch "
                      "embedding each)",
                      *w.layers, m.attention_calls(), m.patch_calls));
    }
  }
  if (m.vocabulary) {
    const std::int64_t rows = m.vocabulary->first, tp = w.tp.value_or(1);
    const std::string tables =
        m.tables > 1
            ? fmt::format(" ({} tables of width {} looked up: the smaller are position or type tables)",
                          m.tables, m.width)
            : "";
    if (tp > 1 && shapes.weight_calls(rows, m.width) > 0) {
      // The output layer holds as many rows as the embedding on a rank of TP > 1: both vocabulary-parallel,
      // as Megatron-LM shards them.
      w.vocab = rows * tp;
      rate(w, "vocab", Confidence::kMedium);
      w.evidence.push_back(
          fmt::format("vocab {} = the {} rows of the embedding table and of the output layer [{}, {}] on "
                      "each rank × tp {} (vocabulary-parallel){}",
                      *w.vocab, rows, rows, m.width, tp, tables));
    } else {
      w.vocab = rows;
      rate(w, "vocab", tp > 1 ? Confidence::kLow : Confidence::kHigh);
      w.evidence.push_back(fmt::format(
          "vocab {} from the rows of the largest embedding table{}{}", rows, tables,
          tp > 1 ? " (per rank: a vocabulary-parallel embedding would hold vocab / tp rows)" : ""));
    }
    return;
  }
  if (!m.patch_embedding) return;
  // A vision model's classifier: a GEMM of the hidden size run on one row per image.
  for (const auto& [nk, calls] : shapes.weights) {
    if (nk.second != m.width || nk.first == m.width || calls != m.patch_calls) continue;
    if (shapes.rows_of(nk.first, nk.second) != m.patch_embedding->batch * m.patch_calls) continue;
    w.classes = nk.first;
    rate(w, "classes", Confidence::kMedium);
    w.evidence.push_back(
        fmt::format("classes {} from the classifier [{}, {}] run on one row per input ({} rows); "
                    "no vocabulary: a vision model",
                    nk.first, nk.first, nk.second, m.patch_embedding->batch));
  }
}

// Experts: grouped GEMMs over [G, K, N] (G experts on the rank), or a router [experts, hidden] run once per
// layer whose chosen experts run one by one: the experts' down projection [hidden, ffn] is called more often
// than the router, on top_k × the router's rows in all.
void infer_experts(const ShapeCounts& shapes, const ShapedModel& m, std::optional<std::int64_t> ep_group,
                   Workload& w) {
  w.experts = 1;
  w.top_k = 1;
  // No grouped GEMM or router recorded: a dense model, read from what is absent.
  rate(w, "experts", Confidence::kMedium);
  rate(w, "top_k", Confidence::kMedium);
  if (!shapes.grouped_experts.empty()) {
    const std::int64_t g = *most_frequent(shapes.grouped_experts);
    const std::int64_t ep = ep_group.value_or(1);
    w.experts = g * ep;
    rate(w, "experts", ep > 1 ? Confidence::kMedium : Confidence::kHigh);
    const std::int64_t rows = *most_frequent(shapes.grouped_rows);
    if (*w.tokens_per_micro_batch > 0 && rows % *w.tokens_per_micro_batch == 0 && ep == 1)
      w.top_k = rows / *w.tokens_per_micro_batch;
    w.evidence.push_back(fmt::format(
        "experts {} from grouped GEMMs over {} expert matrices{}", *w.experts, g,
        w.top_k ? fmt::format(", top_k {} = routed rows {} / tokens", *w.top_k, rows) : std::string()));
    return;
  }
  if (!w.ffn || !w.hidden) return;
  const std::int64_t f = *w.ffn / w.tp.value_or(1);
  const std::int64_t down_calls = shapes.weight_calls(*w.hidden, f);
  const std::int64_t down_rows = shapes.rows_of(*w.hidden, f);
  for (const auto& [nk, calls] : shapes.weights) {
    const auto [e, k] = nk;
    // A router runs at most once per attention (layer and pass) and routes to fewer experts than it is wide.
    if (k != *w.hidden || e < 2 || e >= k || calls > m.attention_calls() || down_calls <= calls) continue;
    if (down_calls > calls * e) continue;  // more experts ran per routing than it routes to
    const std::int64_t router_rows = shapes.rows_of(e, k);
    if (router_rows <= 0 || down_rows % router_rows != 0 || down_rows / router_rows > e) continue;
    w.experts = e * ep_group.value_or(1);
    w.top_k = down_rows / router_rows;
    rate(w, "experts", ep_group.value_or(1) > 1 ? Confidence::kMedium : Confidence::kHigh);
    w.evidence.push_back(fmt::format(
        "experts {} from the router [{}, {}] ({} calls); top_k {} = the experts' {} rows through their down "
        "projection [{}, {}] ({} calls) / the router's {} rows",
        *w.experts, e, k, calls, *w.top_k, down_rows, *w.hidden, f, down_calls, router_rows));
    return;
  }
}

// The models the shapes show besides MAIN, said in the evidence and kept in OTHER_MODELS.
void name_other_models(const std::vector<ShapedModel>& models, Workload& w) {
  for (std::size_t i = 1; i < models.size(); ++i) {
    const ShapedModel& m = models[i];
    const auto att = main_attention(m);
    std::string text = fmt::format("a model of hidden {} ({} attention calls of {}; input: {})", m.width,
                                   m.attention_calls(), attention_text(att), input_text(m));
    w.evidence.push_back(
        fmt::format("also in the trace, with less GEMM work ({:.3g} against {:.3g} GFLOP): {}",
                    m.gemm_flops / 1e9, models.front().gemm_flops / 1e9, text));
    w.other_models.push_back(std::move(text));
  }
}

std::optional<std::int64_t> lookup(const std::map<std::string, std::int64_t>& dims, const char* dim) {
  auto it = dims.find(dim);
  return it == dims.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

// The parallel layout: the process groups' dimensions, and for a transformer the rest from the world size.
void infer_layout(const Profile& profile, const std::map<std::string, std::int64_t>& group_dims,
                  std::optional<std::int64_t> tp_from_shapes, Workload& w) {
  const std::int64_t world = std::max<std::int64_t>(1, profile.world_size());
  if (world == 1) {
    w.tp = w.pp = w.dp = w.cp = w.ep = 1;
    for (const char* field : {"tp", "pp", "dp", "cp", "ep"}) rate(w, field, Confidence::kHigh);
    w.evidence.push_back("one process (world size 1): no parallelism");
    return;
  }
  bool only_default = true;
  for (const Rank& r : profile.ranks()) {
    for (const ProcessGroup& g : r.process_groups)
      only_default &= vocabulary::lower(g.desc) == "default_pg" || g.desc.empty();
  }
  w.pp = lookup(group_dims, "pp");
  w.cp = lookup(group_dims, "cp");
  w.ep = lookup(group_dims, "ep");
  w.dp = lookup(group_dims, "dp");
  if (const auto tp = lookup(group_dims, "tp")) w.tp = tp;
  for (const char* field : {"tp", "pp", "dp", "cp", "ep"}) {
    if (lookup(group_dims, field)) rate(w, field, Confidence::kHigh);
  }
  if (!w.transformer) {
    if (group_dims.empty()) {
      w.evidence.push_back(fmt::format(
          "{} ranks, {}: parallel layout unknown", world,
          only_default ? "only the default process group recorded" : "no process group names a dimension"));
    }
    return;
  }
  if (!lookup(group_dims, "tp")) rate(w, "tp", tp_from_shapes ? Confidence::kMedium : Confidence::kLow);
  if (tp_from_shapes && !lookup(group_dims, "tp"))
    w.evidence.push_back(
        fmt::format("tp {} from the sharded shapes (hidden / heads per rank × head size)", *tp_from_shapes));
  for (auto [field, name] : {std::pair{&w.pp, "pp"}, std::pair{&w.cp, "cp"}, std::pair{&w.ep, "ep"}}) {
    if (!*field) {
      *field = 1;
      rate(w, name, Confidence::kLow);
      w.evidence.push_back(fmt::format("{} 1: no {} process group recorded", name, name));
    }
  }
  if (!w.dp) {
    const std::int64_t model_ranks = w.tp.value_or(1) * *w.pp * *w.cp;
    if (world % model_ranks == 0) {
      w.dp = world / model_ranks;
      rate(w, "dp", only_default ? Confidence::kLow : Confidence::kMedium);
      w.evidence.push_back(fmt::format("dp {} = world size {} / (tp × pp × cp){}", *w.dp, world,
                                       only_default ? " (only the default process group is recorded)" : ""));
    }
  }
  if (*w.pp > 1 && w.layers) {
    w.layers = *w.layers * *w.pp;
    w.evidence.push_back(fmt::format("layers × pp {}: the profile's rank holds one pipeline stage", *w.pp));
  }
  if (*w.cp > 1 && w.tokens_per_micro_batch)
    w.evidence.push_back(fmt::format("cp {}: each rank attends over 1/{} of the sequence", *w.cp, *w.cp));
}

}  // namespace

namespace {

// The precision most GEMM and attention FLOPs ran in (operators whose kernels ran: what the GPU did).
void infer_precision(const measure::ProfileWork& work, Workload& w) {
  std::map<measure::WorkPrecision, double> flops;
  double all = 0;
  for (const measure::CountedOp& op : work.ops) {
    if (op.kernel_ns <= 0 || !(op.flops > 0)) continue;
    if (op.category != measure::WorkCategory::kGemm && op.category != measure::WorkCategory::kAttention)
      continue;
    flops[op.precision] += op.flops;
    all += op.flops;
  }
  if (!(all > 0)) return;
  const auto most = std::max_element(flops.begin(), flops.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  w.precision = most->first;
  w.precision_share = most->second / all;
  rate(w, "precision", w.precision_share >= 0.9 ? Confidence::kHigh : Confidence::kMedium);
  w.evidence.push_back(fmt::format("GEMMs and attention in {} ({:.0f} % of their recorded FLOPs)",
                                   measure::to_string(most->first), 100 * w.precision_share));
}

}  // namespace

void apply_statement(const Statement& statement, Workload& w) {
  if (statement.model) {
    w.stated_model = statement.model;
    w.stated.push_back(fmt::format("model {}", statement.model->name));
  }
  if (statement.hardware) {
    w.stated_hardware = statement.hardware;
    rate(w, "hardware", Confidence::kStated);
    w.stated.push_back(w.hardware && *w.hardware != statement.hardware->name
                           ? fmt::format("hardware {} (inferred: {})", statement.hardware->name, *w.hardware)
                           : fmt::format("hardware {}", statement.hardware->name));
  }
  const StatedLayout& l = statement.layout;
  w.stated_layout = l;
  auto take = [&](std::optional<std::int64_t>& field, const std::optional<std::int64_t>& value,
                  const char* name, const char* key) {
    if (!value) return;
    rate(w, key, Confidence::kStated);
    w.stated.push_back(field && *field != *value ? fmt::format("{} {} (inferred: {})", name, *value, *field)
                                                 : fmt::format("{} {}", name, *value));
    field = value;
  };
  take(w.tp, l.tp, "tp", "tp");
  take(w.pp, l.pp, "pp", "pp");
  take(w.dp, l.dp, "dp", "dp");
  take(w.cp, l.cp, "cp", "cp");
  take(w.ep, l.ep, "ep", "ep");
  take(w.micro_batch, l.micro_batch, "micro-batch", "micro_batch");
  take(w.seq, l.seq, "sequence length", "seq");
  if (l.global_batch) w.stated.push_back(fmt::format("global batch {}", *l.global_batch));
  if (l.mode) {
    const bool training = *l.mode == model::Mode::kTraining;
    w.stated.push_back(fmt::format(
        "{}{}", model::to_string(*l.mode),
        w.training && *w.training != training
            ? (training ? " (no backward operator was recorded)" : " (backward operators were recorded)")
            : ""));
    w.training = training;
    rate(w, "training", Confidence::kStated);
  }
}

Workload infer_recorded_workload(const Profile& profile, const measure::ProfileWork& work,
                                 const ProfileSummary* summary) {
  Workload w;
  infer_hardware(profile, summary, w);
  infer_training(profile, summary, w);
  w.shapes_recorded = work.shapes_recorded;
  const ShapeCounts shapes = count_shapes(work, w.training == false);
  if (shapes.weights_from_products)
    w.evidence.push_back(fmt::format(
        "projections recorded as matrix products (aten::mm of the tokens by a weight, as torch.compile's "
        "code runs them; no linear recorded): their right operands read as the weights{}",
        shapes.products_on_forward_threads
            ? ", those on the threads the forward attention ran on (the backward's ran on another thread, as "
              "PyTorch's autograd engine runs a GPU's backward)"
            : ""));
  const std::map<std::string, std::int64_t> group_dims = process_group_dims(profile, w);

  std::optional<std::int64_t> tp_from_shapes;
  // One process has no tensor parallelism to read from the shapes.
  const std::optional<std::int64_t> tp_group =
      profile.world_size() <= 1 ? std::optional<std::int64_t>(1) : lookup(group_dims, "tp");
  const std::vector<ShapedModel> models = shaped_models(shapes, tp_group);
  if (!models.empty()) {
    const ShapedModel& m = models.front();
    const AttentionShape att = main_attention(m);
    const auto [hidden, tp] = hidden_and_tp(m, att, lookup(group_dims, "tp"), tp_from_shapes, w);
    infer_mlp(shapes, hidden, att, tp, w);
    const std::int64_t hidden_size = hidden;  // a lambda cannot capture a structured binding before clang 16
    const bool gemms_of_hidden = std::any_of(shapes.weights.begin(), shapes.weights.end(),
                                             [&](const auto& e) { return e.first.second == hidden_size; });
    if (gemms_of_hidden) {
      w.transformer = true;
      w.structure = "transformer";
      w.hidden = hidden;
      w.tp = tp;
      infer_attention(att, shapes, m, tp, w);
      infer_latent_attention(shapes, att, tp, w);
      infer_layers_and_vocabulary(shapes, m, w);
      infer_experts(shapes, m, lookup(group_dims, "ep"), w);
      name_other_models(models, w);
    } else {
      w.evidence.push_back(
          fmt::format("attention of {} heads × {} found, but no GEMM with the hidden size {}: not "
                      "recognised as a transformer",
                      att.heads, att.head_dim, hidden));
      if (shapes.unread_products) {
        w.evidence.push_back(
            "the projections were recorded only as matrix products (aten::mm, as torch.compile's code runs "
            "them) in a training step, whose backward products by the same weights and by the tokens cannot "
            "be told from the forward's by their shapes, nor here by their thread (state the model)");
        w.not_recognised =
            "the profile's projections were recorded only as matrix products (aten::mm, as torch.compile's "
            "code runs them) in a training step whose backward ran on the forward's thread, so its weights "
            "cannot be told from the backward's products: pass --model NAME|FILE.toml (and --hardware), or "
            "store them in the profile with `meshscope annotate PROFILE --model ... --hardware ...`";
      }
    }
  } else if (!work.shapes_recorded) {
    w.evidence.push_back("no shapes recorded (record with record_shapes=True): the model cannot be inferred");
  } else if (!shapes.attention.empty()) {
    w.evidence.push_back(
        "attention found with its heads folded into the batch, but no embedding table or patch embedding "
        "whose width tells its heads: not recognised as a transformer");
  } else {
    std::int64_t convolutions = 0;
    for (const auto& [conv, calls] : shapes.convolutions) convolutions += calls;
    w.evidence.push_back(
        convolutions > 0
            ? fmt::format("no attention among the recorded shapes, {} convolution calls (a convolutional "
                          "network): not recognised as a transformer",
                          convolutions)
            : "no attention among the recorded shapes: not recognised as a transformer");
  }

  infer_layout(profile, group_dims, tp_from_shapes, w);
  infer_precision(work, w);
  if (w.transformer && w.tokens_per_micro_batch && w.micro_batch) {
    w.seq = *w.tokens_per_micro_batch / *w.micro_batch * w.cp.value_or(1);
    rate(w, "seq", w.cp.value_or(1) > 1 ? Confidence::kMedium : w.confidence["micro_batch"]);
  }
  return w;
}

Workload infer_workload(const Profile& profile, const measure::ProfileWork& work,
                        const ProfileSummary* summary) {
  Workload w = infer_recorded_workload(profile, work, summary);
  apply_statement(stated(profile), w);
  return w;
}

std::string model_text(const Workload& w, bool tokens) {
  if (!w.transformer) return {};
  auto v = [](const std::optional<std::int64_t>& x) { return x ? fmt::format("{}", *x) : std::string("?"); };
  const std::string layers = w.encoder_layers ? fmt::format("{} + {} layers (encoder + decoder)",
                                                            *w.encoder_layers, v(w.decoder_layers))
                                              : fmt::format("{} layers", v(w.layers));
  const std::string input =
      !w.vocab && w.classes ? fmt::format("{} classes", *w.classes) : fmt::format("vocab {}", v(w.vocab));
  std::string s = fmt::format("{}: hidden {}, {}, ffn {}, {} heads ({} kv), {}", w.structure, v(w.hidden),
                              layers, v(w.ffn), v(w.heads), v(w.kv_heads), input);
  if (w.kv_lora_rank) {
    s += fmt::format(", latent attention (kv rank {}, q rank {}, heads {} + {} rotary, values {})",
                     *w.kv_lora_rank, v(w.q_lora_rank),
                     v(w.head_dim ? std::optional(*w.head_dim - w.qk_rope_dim.value_or(0)) : std::nullopt),
                     v(w.qk_rope_dim), v(w.v_head_dim));
  } else if (w.head_dim) {
    s += fmt::format(", head size {}", *w.head_dim);
  }
  if (tokens) s += fmt::format(", {} tokens per micro-batch", v(w.tokens_per_micro_batch));
  if (w.experts && *w.experts > 1) s += fmt::format(", {} experts top-{}", *w.experts, v(w.top_k));
  if (!w.other_models.empty()) s += fmt::format(" (and {} other model(s))", w.other_models.size());
  return s;
}

std::vector<std::string> assumed_values(const Workload& w, const std::vector<std::string>* taken) {
  std::vector<std::string> out;
  for (const auto& [field, value] : {std::pair{"hidden", &w.hidden},
                                     {"layers", &w.layers},
                                     {"kv_heads", &w.kv_heads},
                                     {"vocab", &w.vocab},
                                     {"tp", &w.tp},
                                     {"pp", &w.pp},
                                     {"dp", &w.dp},
                                     {"cp", &w.cp},
                                     {"ep", &w.ep}}) {
    auto it = w.confidence.find(field);
    if (!*value || it == w.confidence.end() || it->second != Confidence::kLow) continue;
    if (taken && std::find(taken->begin(), taken->end(), field) == taken->end()) continue;
    out.push_back(fmt::format("{} {}", field, **value));
  }
  return out;
}

std::optional<model::HardwareSpec> hardware_spec(const Workload& workload) {
  if (workload.stated_hardware) return workload.stated_hardware;
  if (workload.recorded_hardware) return workload.recorded_hardware;
  if (!workload.hardware) return std::nullopt;
  return model::load_hardware(*workload.hardware);
}

bool inferred_model(const Workload& wl, model::ModelSpec& out, std::string* why) {
  if (wl.stated_model) {
    out = *wl.stated_model;
    if (wl.stated_layout.seq) out.seq = static_cast<int>(*wl.stated_layout.seq);
    return true;
  }
  auto missing = [&](const char* what) {
    if (why != nullptr)
      *why = fmt::format(
          "the profile does not show the model's {}: pass --model NAME|FILE.toml, or store it in the profile "
          "with `meshscope annotate PROFILE --model ...`",
          what);
    return false;
  };
  if (!wl.transformer) {
    if (why != nullptr) {
      *why = wl.shapes_recorded
                 ? (wl.not_recognised.empty() ? std::string(kNotATransformer) : wl.not_recognised)
                 : "no shapes recorded (record with record_shapes=True), so the model cannot be "
                   "inferred: pass --model NAME|FILE.toml (and --hardware), or store them in the profile "
                   "with `meshscope annotate PROFILE --model ... --hardware ...`";
    }
    return false;
  }
  if (wl.encoder_layers) {
    if (why != nullptr)
      *why = fmt::format(
          "the profile ran an encoder-decoder ({} encoder and {} decoder layers, with cross-attention) and "
          "the "
          "model predicts one stack of layers, so it is not compared: pass --model NAME|FILE.toml (and "
          "--hardware) to compare it as one, or store them with `meshscope annotate PROFILE --model ...`",
          *wl.encoder_layers, wl.decoder_layers.value_or(0));
    return false;
  }
  if (!wl.hidden) return missing("hidden size");
  if (!wl.layers) return missing("layer count");
  if (!wl.heads) return missing("attention heads");
  if (!wl.ffn) return missing("MLP size (ffn)");
  if (!wl.vocab && !wl.classes) return missing("vocabulary (no embedding look-up recorded)");
  model::ModelSpec m = model::load_model(wl.gated_mlp ? "llama3-8b" : "gpt");
  model::ModelOverrides o;
  o.layers = static_cast<int>(*wl.layers);
  o.hidden = static_cast<int>(*wl.hidden);
  o.heads = static_cast<int>(*wl.heads);
  o.kv_heads = static_cast<int>(wl.kv_heads.value_or(*wl.heads));
  o.ffn = static_cast<int>(*wl.ffn);
  // A vision model's classifier stands in for the output layer (its logits computed for every token: a
  // little more than the class token's).
  o.vocab = static_cast<int>(wl.vocab ? *wl.vocab : *wl.classes);
  if (wl.experts && *wl.experts > 1) o.experts = static_cast<int>(*wl.experts);
  if (wl.top_k && *wl.experts > 1) o.top_k = static_cast<int>(*wl.top_k);
  if (wl.seq) o.seq = static_cast<int>(*wl.seq);
  model::apply_overrides(m, o);
  if (wl.kv_lora_rank) {
    m.q_lora_rank = static_cast<int>(wl.q_lora_rank.value_or(0));
    m.kv_lora_rank = static_cast<int>(*wl.kv_lora_rank);
    m.qk_rope_dim = static_cast<int>(wl.qk_rope_dim.value_or(0));
    m.qk_nope_dim = static_cast<int>(wl.head_dim.value_or(0) - wl.qk_rope_dim.value_or(0));
    m.v_head_dim = static_cast<int>(wl.v_head_dim.value_or(wl.head_dim.value_or(0)));
    m.kv_heads = m.heads;
  } else if (wl.head_dim) {
    m.head_dim = static_cast<int>(*wl.head_dim);
  }
  m.name = fmt::format("inferred ({} layout)", wl.gated_mlp ? "llama3-8b" : "gpt");
  m.source = wl.vocab ? "inferred from the profile's shapes"
                      : "inferred from the profile's shapes (a vision model: its classes as the vocabulary)";
  m.global_batch = 0;
  out = m;
  return true;
}

}  // namespace meshscope::compare
