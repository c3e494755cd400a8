#include "analysis/compare/workload.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/measure/measure.hpp"
#include "analysis/model/presets.hpp"

namespace meshscope::compare {

const char* const kNotATransformer =
    "the profile is not a recognised transformer (no attention with GEMMs of its hidden size in the recorded "
    "shapes): pass --model NAME|FILE.toml (and --hardware) to compare it with a model";

namespace {

using Dims = std::vector<std::int64_t>;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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

// The parallel dimension a process group's description names ("TENSOR_MODEL_PARALLEL_GROUP", "mesh_tp",
// "dp_shard", "pipeline", ...), "" for none or for a description naming two (DATA_PARALLEL_GROUP_WITH_CP).
std::string dimension_of(std::string_view desc) {
  std::vector<std::string> tokens;
  std::string token;
  for (char c : lower(desc)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      token += c;
    } else if (!token.empty()) {
      tokens.push_back(token), token.clear();
    }
  }
  if (!token.empty()) tokens.push_back(token);
  std::set<std::string> dims;
  for (const std::string& t : tokens) {
    if (t == "tp" || t.starts_with("tensor")) dims.insert("tp");
    if (t == "pp" || t.starts_with("pipe")) dims.insert("pp");
    if (t == "cp" || t == "context") dims.insert("cp");
    if (t == "ep" || t.starts_with("expert")) dims.insert("ep");
    if (t == "dp" || t == "data" || t == "fsdp" || t == "ddp") dims.insert("dp");
  }
  return dims.size() == 1 ? *dims.begin() : std::string();
}

bool forward_attention(std::string_view name) {
  return !contains(name, "backward") &&
         (contains(name, "scaled_dot_product") || name == "aten::_flash_attention_forward" ||
          name == "aten::_efficient_attention_forward");
}

struct AttentionShape {
  std::int64_t batch, heads, kv_heads, seq, head_dim;
  auto operator<=>(const AttentionShape&) const = default;
};

}  // namespace

std::string hardware_preset_for(std::string_view device_name, std::string* note) {
  const std::string n = lower(device_name);
  auto has = [&](std::string_view part) { return contains(n, part); };
  if (has("gb300")) return "gb300";
  if (has("gb200")) return "gb200";
  if (has("b300")) return "b300";
  if (has("b200")) return "b200";
  if (has("h200")) return "h200";
  if (has("h800")) return "h800";
  if (has("h20")) return "h20";
  if (has("h100")) {
    // "H100 80GB HBM3" is the SXM5 part; "H100 PCIe" and "H100 NVL" are other products.
    if (has("pcie") || has("nvl")) return {};
    return "h100-sxm";
  }
  if (has("a800")) return has("pcie") ? std::string() : "a800";
  if (has("a100")) {
    if (has("pcie") || has("40gb")) return {};
    if (has("80gb") || has("sxm4-80")) return "a100-80gb";
    return {};  // "A100-PG509-200" and other board names: not the preset's A100 SXM4 80GB for certain
  }
  if (has("v100")) {
    if (has("pcie")) return {};
    if (note != nullptr && !has("32gb"))
      *note = fmt::format("{} is the V100 SXM2 of preset v100 but not its 32 GB of memory", device_name);
    return "v100";
  }
  if (has("l40s")) return "l40s";
  if (has("mi355x")) return "mi355x";
  if (has("mi325x")) return "mi325x";
  if (has("mi300x")) return "mi300x";
  return {};
}

Workload infer_workload(const Profile& profile, const measure::ProfileWork& work) {
  Workload w;
  const auto& ranks = profile.ranks();

  // ---- hardware: the GPU the ranks ran work on ----
  std::map<std::string, std::int64_t> gpus;
  for (const Rank& r : ranks) {
    for (const auto& use : measure::devices_used(r)) {
      if (use.info && !use.info->name.empty()) ++gpus[use.info->name];
    }
  }
  if (gpus.empty()) {
    w.evidence.push_back("hardware unknown: the profile names no GPU the ranks ran work on");
  } else {
    w.gpu = *most_frequent(gpus);
    std::string note;
    const std::string preset = hardware_preset_for(w.gpu, &note);
    if (preset.empty()) {
      w.evidence.push_back(
          fmt::format("hardware unknown: no preset describes the GPU '{}' (pass --hardware)", w.gpu));
    } else {
      w.hardware = preset;
      w.evidence.push_back(fmt::format("hardware {} from the GPU name '{}'{}", preset, w.gpu,
                                       note.empty() ? "" : " (" + note + ")"));
    }
  }

  // ---- training or inference: autograd's backward functions among the CPU operators ----
  {
    bool any_ops = false, backward = false;
    std::vector<std::int8_t> seen;  // per string id: 0 unknown, 1 backward, 2 not
    for (const Rank& r : ranks) {
      for (const CpuRange& range : r.ranges) {
        if (range.kind != RangeKind::kCpuOp) continue;
        any_ops = true;
        if (range.name >= seen.size()) seen.resize(range.name + 1, 0);
        std::int8_t& s = seen[range.name];
        if (s == 0) s = contains(lower(profile.str(range.name)), "backward") ? 1 : 2;
        if (s == 1) {
          backward = true;
          break;
        }
      }
      if (backward) break;
    }
    if (any_ops) {
      w.training = backward;
      w.evidence.push_back(backward ? "training: backward operators recorded"
                                    : "inference: forward passes only (no backward operator recorded)");
    }
  }
  w.shapes_recorded = work.shapes_recorded;

  // ---- shapes of one rank (the first with counted operators) ----
  std::optional<std::size_t> rank_index;
  for (const auto& op : work.ops) {
    if (!rank_index || op.rank_index < *rank_index) rank_index = op.rank_index;
  }
  std::map<AttentionShape, std::int64_t> attention;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> embeddings;  // (V, D) -> calls
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> weights;     // (N, K) of linear layers
  std::map<std::int64_t, std::int64_t> tokens_of_linear;                     // M -> calls
  std::int64_t attention_calls = 0, embedding_calls = 0;
  std::map<std::int64_t, std::int64_t> grouped_experts;  // G of grouped GEMMs
  std::map<std::int64_t, std::int64_t> grouped_rows;     // A's rows of grouped GEMMs
  std::vector<std::vector<std::int64_t>> dims;
  if (rank_index) {
    for (const auto& op : work.ops) {
      if (op.rank_index != *rank_index || !measure::parse_dims(op.input_dims, dims)) continue;
      if (op.category == measure::WorkCategory::kAttention && forward_attention(op.name) &&
          dims.size() >= 3 && dims[0].size() == 4 && dims[1].size() == 4) {
        const bool heads_first = contains(op.name, "scaled_dot_product");
        const std::size_t h = heads_first ? 1 : 2, l = heads_first ? 2 : 1;
        ++attention[{dims[0][0], dims[0][h], dims[1][h], dims[0][l], dims[0][3]}];
        ++attention_calls;
      } else if (op.name == "aten::embedding" && !dims.empty() && dims[0].size() == 2) {
        ++embeddings[{dims[0][0], dims[0][1]}];
        ++embedding_calls;
      } else if (op.name == "aten::linear" && dims.size() >= 2 && dims[1].size() == 2 && !dims[0].empty()) {
        ++weights[{dims[1][0], dims[1][1]}];
        std::int64_t m = 1;
        for (std::size_t i = 0; i + 1 < dims[0].size(); ++i) m *= dims[0][i];
        ++tokens_of_linear[m];
      } else if ((op.name == "aten::_grouped_mm" || op.name == "aten::_scaled_grouped_mm") &&
                 dims.size() >= 2 && dims[0].size() == 2 && dims[1].size() == 3) {
        ++grouped_experts[dims[1][0]];
        ++grouped_rows[dims[0][0]];
      }
    }
  }

  // ---- process groups: the parallel dimensions their descriptions name ----
  std::map<std::string, std::int64_t> group_dims;  // dimension -> group size
  std::set<std::string> described;
  for (const Rank& r : ranks) {
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
  const std::int64_t world = std::max<std::int64_t>(1, profile.world_size());
  bool only_default = true;
  for (const Rank& r : ranks) {
    for (const ProcessGroup& g : r.process_groups)
      only_default &= lower(g.desc) == "default_pg" || g.desc.empty();
  }

  // ---- the transformer's sizes ----
  const auto att = most_frequent(attention);
  std::optional<std::int64_t> tp_from_shapes;
  if (att) {
    const std::int64_t local_hidden = att->heads * att->head_dim;
    std::int64_t tp = group_dims.contains("tp") ? group_dims["tp"] : 0;
    const auto emb = most_frequent(embeddings);
    std::int64_t hidden = 0;
    if (emb && emb->second % local_hidden == 0) {
      hidden = emb->second;
      if (hidden / local_hidden > 1) tp_from_shapes = hidden / local_hidden;
      if (tp == 0) tp = hidden / local_hidden;
      w.evidence.push_back(fmt::format(
          "hidden {} from the embedding table [{}, {}]; attention runs {} heads of {} on each rank", hidden,
          emb->first, emb->second, att->heads, att->head_dim));
    } else if (tp > 0) {
      hidden = local_hidden * tp;
      w.evidence.push_back(
          fmt::format("hidden {} = {} heads × {} per rank × tp {}", hidden, att->heads, att->head_dim, tp));
    } else {
      tp = 1;
      hidden = local_hidden;
      w.evidence.push_back(
          fmt::format("hidden {} = {} heads × head size {} of the attention (no embedding "
                      "or tensor-parallel group recorded: tp 1 assumed)",
                      hidden, att->heads, att->head_dim));
    }
    if (tp < 1) tp = 1;
    // GEMMs of that hidden size: the MLP's down projection [hidden, F] and its up projection(s) [F, hidden]
    // or a fused gate-and-up [2F, hidden].
    std::int64_t best_f = 0, best_calls = 0, up_calls = 0, fused_calls = 0;
    for (const auto& [nk, calls] : weights) {
      const auto [n, k] = nk;
      if (n != hidden || k == hidden || k == local_hidden) continue;
      if (calls > best_calls || (calls == best_calls && k > best_f)) best_f = k, best_calls = calls;
    }
    if (best_f > 0) {
      auto find = [&](std::int64_t n, std::int64_t k) {
        auto it = weights.find({n, k});
        return it == weights.end() ? std::int64_t{0} : it->second;
      };
      up_calls = find(best_f, hidden);
      fused_calls = find(2 * best_f, hidden);
      w.gated_mlp = up_calls >= 2 * best_calls || fused_calls >= best_calls;
      w.ffn = best_f * tp;
      w.evidence.push_back(
          fmt::format("ffn {} from the MLP's down projection [{}, {}] ({} calls) and its {} up projection(s) "
                      "({} calls){}",
                      *w.ffn, hidden, best_f, best_calls, w.gated_mlp ? "gated" : "plain",
                      up_calls + fused_calls, tp > 1 ? fmt::format(", × tp {}", tp) : std::string()));
    }
    const bool gemms_of_hidden =
        std::any_of(weights.begin(), weights.end(), [&](const auto& e) { return e.first.second == hidden; });
    if (gemms_of_hidden) {
      w.transformer = true;
      w.hidden = hidden;
      w.heads = att->heads * tp;
      w.kv_heads = att->kv_heads * tp;
      w.micro_batch = att->batch;
      w.tokens_per_micro_batch = att->batch * att->seq;
      w.evidence.push_back(
          fmt::format("attention q [{}, {} heads, {} tokens, {}], k and v of {} heads: heads {}, kv_heads "
                      "{}, {} tokens per "
                      "micro-batch",
                      att->batch, att->heads, att->seq, att->head_dim, att->kv_heads, *w.heads, *w.kv_heads,
                      *w.tokens_per_micro_batch));
      // Layers: forward attention calls per forward pass (one embedding look-up each).
      const std::int64_t passes = embedding_calls > 0 ? embedding_calls : 1;
      if (attention_calls % passes == 0) {
        w.layers = attention_calls / passes;
        w.evidence.push_back(fmt::format("layers {}: {} forward attention calls in {} forward pass(es) ({})",
                                         *w.layers, attention_calls, passes,
                                         embedding_calls > 0
                                             ? "one embedding look-up each"
                                             : "no embedding look-up recorded: one pass assumed"));
      }
      if (emb) {
        w.vocab = emb->first;
        w.evidence.push_back(fmt::format("vocab {} from the embedding table's rows{}", emb->first,
                                         tp > 1 ? " (per rank: a vocabulary-parallel embedding would hold "
                                                  "vocab / tp rows)"
                                                : ""));
      }
      w.tp = tp;
      if (!grouped_experts.empty()) {
        const std::int64_t g = *most_frequent(grouped_experts);
        const std::int64_t ep = group_dims.contains("ep") ? group_dims["ep"] : 1;
        w.experts = g * ep;
        const std::int64_t rows = *most_frequent(grouped_rows);
        if (*w.tokens_per_micro_batch > 0 && rows % *w.tokens_per_micro_batch == 0 && ep == 1)
          w.top_k = rows / *w.tokens_per_micro_batch;
        w.evidence.push_back(fmt::format(
            "experts {} from grouped GEMMs over {} expert matrices{}", *w.experts, g,
            w.top_k ? fmt::format(", top_k {} = routed rows {} / tokens", *w.top_k, rows) : std::string()));
      } else {
        w.experts = 1;
        w.top_k = 1;
      }
    } else {
      w.evidence.push_back(fmt::format(
          "attention of {} heads × {} found, but no GEMM with the hidden size {}: not recognised as a "
          "transformer",
          att->heads, att->head_dim, hidden));
    }
  } else if (!work.shapes_recorded) {
    w.evidence.push_back("no shapes recorded (record with record_shapes=True): the model cannot be inferred");
  } else {
    w.evidence.push_back("no attention operator among the recorded shapes: not recognised as a transformer");
  }

  // ---- layout ----
  auto from_groups = [&](const char* dim) -> std::optional<std::int64_t> {
    auto it = group_dims.find(dim);
    return it == group_dims.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
  };
  if (world == 1) {
    w.tp = w.pp = w.dp = w.cp = w.ep = 1;
    w.evidence.push_back("one process (world size 1): no parallelism");
  } else {
    w.pp = from_groups("pp");
    w.cp = from_groups("cp");
    w.ep = from_groups("ep");
    w.dp = from_groups("dp");
    if (const auto tp = from_groups("tp")) w.tp = tp;
    if (w.transformer) {
      if (tp_from_shapes && !from_groups("tp"))
        w.evidence.push_back(fmt::format(
            "tp {} from the sharded shapes (hidden / heads per rank × head size)", *tp_from_shapes));
      for (auto [field, name] : {std::pair{&w.pp, "pp"}, std::pair{&w.cp, "cp"}, std::pair{&w.ep, "ep"}}) {
        if (!*field) {
          *field = 1;
          w.evidence.push_back(fmt::format("{} 1: no {} process group recorded", name, name));
        }
      }
      if (!w.dp) {
        const std::int64_t model_ranks = w.tp.value_or(1) * *w.pp * *w.cp;
        if (world % model_ranks == 0) {
          w.dp = world / model_ranks;
          w.evidence.push_back(
              fmt::format("dp {} = world size {} / (tp × pp × cp){}", *w.dp, world,
                          only_default ? " (only the default process group is recorded)" : ""));
        }
      }
      if (*w.pp > 1 && w.layers) {
        w.layers = *w.layers * *w.pp;
        w.evidence.push_back(
            fmt::format("layers × pp {}: the profile's rank holds one pipeline stage", *w.pp));
      }
      if (*w.cp > 1 && w.tokens_per_micro_batch)
        w.evidence.push_back(fmt::format("cp {}: each rank attends over 1/{} of the sequence", *w.cp, *w.cp));
    } else if (group_dims.empty()) {
      w.evidence.push_back(fmt::format(
          "{} ranks, {}: parallel layout unknown", world,
          only_default ? "only the default process group recorded" : "no process group names a dimension"));
    }
  }
  if (w.transformer && w.tokens_per_micro_batch && w.micro_batch) {
    w.seq = *w.tokens_per_micro_batch / *w.micro_batch * w.cp.value_or(1);
  }
  return w;
}

bool inferred_model(const Workload& wl, model::ModelSpec& out, std::string* why) {
  auto missing = [&](const char* what) {
    if (why != nullptr) *why = fmt::format("the profile does not show the model's {}", what);
    return false;
  };
  if (!wl.transformer) {
    if (why != nullptr) {
      *why = wl.shapes_recorded
                 ? kNotATransformer
                 : "no shapes recorded (record with record_shapes=True), so the model cannot be "
                   "inferred: pass --model NAME|FILE.toml (and --hardware) to compare it with a model";
    }
    return false;
  }
  if (!wl.hidden) return missing("hidden size");
  if (!wl.layers) return missing("layer count");
  if (!wl.heads) return missing("attention heads");
  if (!wl.ffn) return missing("MLP size (ffn)");
  if (!wl.vocab) return missing("vocabulary (no embedding look-up recorded)");
  model::ModelSpec m = model::load_model(wl.gated_mlp ? "llama3-8b" : "gpt");
  model::ModelOverrides o;
  o.layers = static_cast<int>(*wl.layers);
  o.hidden = static_cast<int>(*wl.hidden);
  o.heads = static_cast<int>(*wl.heads);
  o.kv_heads = static_cast<int>(wl.kv_heads.value_or(*wl.heads));
  o.ffn = static_cast<int>(*wl.ffn);
  o.vocab = static_cast<int>(*wl.vocab);
  if (wl.experts && *wl.experts > 1) o.experts = static_cast<int>(*wl.experts);
  if (wl.top_k && *wl.experts > 1) o.top_k = static_cast<int>(*wl.top_k);
  if (wl.seq) o.seq = static_cast<int>(*wl.seq);
  model::apply_overrides(m, o);
  m.name = fmt::format("inferred ({} layout)", wl.gated_mlp ? "llama3-8b" : "gpt");
  m.source = "inferred from the profile's shapes";
  m.global_batch = 0;
  out = m;
  return true;
}

}  // namespace meshscope::compare
