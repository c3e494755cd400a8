#include "analysis/model/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace meshscope::model {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidInput(message);
}

std::vector<std::string> list_presets(const char* folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(assets_dir() / folder, error)) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Reads a preset name or a file path into (text, origin).
std::pair<std::string, std::string> read_source(std::string_view name_or_path, const char* folder,
                                                const char* what, const std::vector<std::string>& known) {
  std::filesystem::path path;
  const bool is_path = name_or_path.find('/') != std::string_view::npos ||
                       (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".toml");
  if (is_path) {
    path = std::filesystem::path(std::string(name_or_path));
  } else {
    path = assets_dir() / folder / (std::string(name_or_path) + ".toml");
    if (known.empty())
      invalid(
          fmt::format("unknown {} preset '{}': no presets found in {} (set MESHSCOPE_ASSETS to meshscope's "
                      "assets folder, or pass a FILE.toml)",
                      what, name_or_path, (assets_dir() / folder).string()));
    if (std::find(known.begin(), known.end(), std::string(name_or_path)) == known.end())
      invalid(fmt::format("unknown {} preset '{}': use one of {} or a FILE.toml", what, name_or_path,
                          join(known)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) invalid(fmt::format("{}: cannot read the {} file", path.string(), what));
  std::ostringstream text;
  text << in.rdbuf();
  return {text.str(), path.string()};
}

class Reader {
 public:
  Reader(const toml::table& table, std::string_view origin) : table_(table), origin_(origin) {}

  template <typename T>
  std::optional<T> get(const char* key) {
    used_.insert(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<T, bool>) {
      if (auto v = node->value<bool>()) return *v;
      invalid(fmt::format("{}: '{}' must be true or false", origin_, key));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = node->value<std::string>()) return *v;
      invalid(fmt::format("{}: '{}' must be a string", origin_, key));
    } else if constexpr (std::is_integral_v<T>) {
      if (node->is_integer()) return static_cast<T>(*node->value<std::int64_t>());
      invalid(fmt::format("{}: '{}' must be an integer", origin_, key));
    } else {
      if (auto v = node->value<double>()) return static_cast<T>(*v);
      invalid(fmt::format("{}: '{}' must be a number", origin_, key));
    }
  }
  template <typename T>
  T required(const char* key) {
    auto v = get<T>(key);
    if (!v) invalid(fmt::format("{}: missing '{}'", origin_, key));
    return *v;
  }
  void reject_unknown() const {
    for (const auto& [key, node] : table_) {
      if (used_.count(std::string(key.str())) == 0)
        invalid(fmt::format("{}: unknown key '{}' (line {})", origin_, key.str(), key.source().begin.line));
    }
  }

 private:
  const toml::table& table_;
  std::string origin_;
  std::set<std::string> used_;
};

toml::table parse_table(std::string_view text, std::string_view origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    invalid(fmt::format("{}:{}: malformed TOML: {}", origin, e.source().begin.line, e.description()));
  }
}

}  // namespace

std::filesystem::path assets_dir() {
  if (const char* env = std::getenv("MESHSCOPE_ASSETS"); env != nullptr && *env != '\0') return env;
  // The nearest share/meshscope/assets at or above the executable's folder: /usr/bin/meshscope finds
  // /usr/share/meshscope/assets once installed; in a build tree, build/share/meshscope/assets (a link CMake
  // makes to the sources' assets/) serves build/meshscope and the tests and benchmarks in build/tests/...
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path relative = std::filesystem::path("share") / "meshscope" / "assets";
  if (!error) {
    std::filesystem::path dir = self.parent_path();
    for (int level = 0; level < 4 && !dir.empty(); ++level, dir = dir.parent_path()) {
      if (std::filesystem::is_directory(dir / relative, error)) return dir / relative;
      if (dir == dir.root_path()) break;
    }
    return self.parent_path().parent_path() / relative;  // where an installed program would have them
  }
  return relative;
}

std::vector<std::string> model_presets() {
  return list_presets("models");
}
std::vector<std::string> hardware_presets() {
  return list_presets("hardware");
}

ModelSpec parse_model(std::string_view text, std::string_view origin) {
  const toml::table table = parse_table(text, origin);
  Reader r(table, origin);
  ModelSpec m;
  m.name = r.required<std::string>("name");
  m.source = r.get<std::string>("source").value_or(std::string(origin));
  m.layers = r.required<int>("layers");
  m.hidden = r.required<int>("hidden");
  m.heads = r.required<int>("heads");
  m.kv_heads = r.get<int>("kv_heads").value_or(m.heads);
  m.head_dim = r.get<int>("head_dim").value_or(0);
  const double multiplier = r.get<double>("ffn_multiplier").value_or(0.0);
  m.ffn = r.get<int>("ffn").value_or(static_cast<int>(multiplier * m.hidden));
  if (m.ffn == 0) invalid(fmt::format("{}: missing 'ffn' (or 'ffn_multiplier')", origin));
  m.ffn_multiplier = multiplier;
  m.vocab = r.required<int>("vocab");
  m.seq = r.get<int>("seq").value_or(2048);
  m.global_batch = r.get<int>("global_batch").value_or(0);
  m.gated_mlp = r.get<bool>("gated_mlp").value_or(false);
  m.tied_embeddings = r.get<bool>("tied_embeddings").value_or(false);
  m.learned_positions = r.get<bool>("learned_positions").value_or(false);
  m.dropout = r.get<bool>("dropout").value_or(false);
  m.experts = r.get<int>("experts").value_or(1);
  m.top_k = r.get<int>("top_k").value_or(1);
  m.moe_ffn = r.get<int>("moe_ffn").value_or(m.is_moe() ? m.ffn : 0);
  m.shared_experts = r.get<int>("shared_experts").value_or(0);
  m.dense_layers = r.get<int>("dense_layers").value_or(0);
  m.moe_layer_freq = r.get<int>("moe_layer_freq").value_or(1);
  m.mtp_layers = r.get<int>("mtp_layers").value_or(0);
  m.q_lora_rank = r.get<int>("q_lora_rank").value_or(0);
  m.kv_lora_rank = r.get<int>("kv_lora_rank").value_or(0);
  m.qk_nope_dim = r.get<int>("qk_nope_dim").value_or(0);
  m.qk_rope_dim = r.get<int>("qk_rope_dim").value_or(0);
  m.v_head_dim = r.get<int>("v_head_dim").value_or(0);
  r.reject_unknown();
  check_model(m);
  return m;
}

std::string model_toml(const ModelSpec& m) {
  toml::table t;
  t.insert("name", m.name);
  t.insert("source", m.source);
  auto whole = [&](const char* key, int value) { t.insert(key, static_cast<std::int64_t>(value)); };
  whole("layers", m.layers);
  whole("hidden", m.hidden);
  whole("heads", m.heads);
  whole("kv_heads", m.kv_heads);
  whole("head_dim", m.head_dim);
  whole("ffn", m.ffn);
  t.insert("ffn_multiplier", m.ffn_multiplier);
  whole("vocab", m.vocab);
  whole("seq", m.seq);
  whole("global_batch", m.global_batch);
  t.insert("gated_mlp", m.gated_mlp);
  t.insert("tied_embeddings", m.tied_embeddings);
  t.insert("learned_positions", m.learned_positions);
  t.insert("dropout", m.dropout);
  whole("experts", m.experts);
  whole("top_k", m.top_k);
  whole("moe_ffn", m.moe_ffn);
  whole("shared_experts", m.shared_experts);
  whole("dense_layers", m.dense_layers);
  whole("moe_layer_freq", m.moe_layer_freq);
  whole("mtp_layers", m.mtp_layers);
  whole("q_lora_rank", m.q_lora_rank);
  whole("kv_lora_rank", m.kv_lora_rank);
  whole("qk_nope_dim", m.qk_nope_dim);
  whole("qk_rope_dim", m.qk_rope_dim);
  whole("v_head_dim", m.v_head_dim);
  std::ostringstream out;
  out << t << '\n';
  return out.str();
}

std::string hardware_toml(const HardwareSpec& h) {
  toml::table t;
  t.insert("name", h.name);
  t.insert("source", h.source);
  t.insert("family", h.family);
  t.insert("peak_tflops_bf16", h.peak_tflops_bf16);
  t.insert("peak_tflops_fp8", h.peak_tflops_fp8);
  t.insert("peak_tflops_fp4", h.peak_tflops_fp4);
  t.insert("peak_tflops_tf32", h.peak_tflops_tf32);
  t.insert("peak_tflops_fp32", h.peak_tflops_fp32);
  t.insert("bf16", h.bf16);
  t.insert("hbm_capacity_gib", h.hbm_capacity_gib);
  t.insert("hbm_tbps", h.hbm_tbps);
  if (!h.compute_capability.empty()) t.insert("compute_capability", h.compute_capability);
  if (h.sm_count > 0) t.insert("sm_count", static_cast<std::int64_t>(h.sm_count));
  t.insert("gpus_per_node", static_cast<std::int64_t>(h.gpus_per_node));
  t.insert("intra_node_link", h.intra_node_link);
  t.insert("intra_node_gbps", h.intra_node_gbps);
  t.insert("inter_node_gbps", h.inter_node_gbps);
  t.insert("gemm_efficiency_bf16", h.gemm_efficiency_bf16);
  t.insert("gemm_efficiency_fp8", h.gemm_efficiency_fp8);
  t.insert("gemm_efficiency_fp4", h.gemm_efficiency_fp4);
  t.insert("gemm_overhead_us", h.gemm_overhead_us);
  t.insert("attention_tflops_flash", h.attention_tflops_flash);
  t.insert("attention_tflops_fused", h.attention_tflops_fused);
  t.insert("attention_tflops_standard", h.attention_tflops_standard);
  t.insert("attention_fused_backward_ratio", h.attention_fused_backward_ratio);
  t.insert("hbm_efficiency", h.hbm_efficiency);
  t.insert("intra_node_efficiency", h.intra_node_efficiency);
  t.insert("inter_node_efficiency", h.inter_node_efficiency);
  t.insert("intra_node_alpha_us", h.intra_node_alpha_us);
  t.insert("inter_node_alpha_us", h.inter_node_alpha_us);
  t.insert("reserved_gib", h.reserved_gib);
  t.insert("sustained_fraction", h.sustained_fraction);
  std::ostringstream out;
  out << t << '\n';
  return out.str();
}

HardwareSpec parse_hardware(std::string_view text, std::string_view origin) {
  const toml::table table = parse_table(text, origin);
  Reader r(table, origin);
  HardwareSpec h;
  h.name = r.required<std::string>("name");
  h.source = r.get<std::string>("source").value_or(std::string(origin));
  h.family = r.get<std::string>("family").value_or("");
  h.peak_tflops_bf16 = r.required<double>("peak_tflops_bf16");
  h.peak_tflops_fp8 = r.get<double>("peak_tflops_fp8").value_or(0.0);
  h.peak_tflops_fp4 = r.get<double>("peak_tflops_fp4").value_or(0.0);
  h.peak_tflops_tf32 = r.get<double>("peak_tflops_tf32").value_or(0.0);
  h.peak_tflops_fp32 = r.get<double>("peak_tflops_fp32").value_or(0.0);
  h.bf16 = r.get<bool>("bf16").value_or(true);
  h.hbm_capacity_gib = r.required<double>("hbm_capacity_gib");
  h.hbm_tbps = r.required<double>("hbm_tbps");
  h.compute_capability = r.get<std::string>("compute_capability").value_or("");
  h.sm_count = r.get<int>("sm_count").value_or(0);
  h.gpus_per_node = r.required<int>("gpus_per_node");
  h.intra_node_link = r.get<std::string>("intra_node_link")
                          .value_or(h.family.rfind("cdna", 0) == 0 ? "Infinity Fabric (xGMI)" : "NVLink");
  h.intra_node_gbps = r.required<double>("intra_node_gbps");
  h.inter_node_gbps = r.required<double>("inter_node_gbps");
  h.gemm_efficiency_bf16 = r.required<double>("gemm_efficiency_bf16");
  h.gemm_efficiency_fp8 = r.get<double>("gemm_efficiency_fp8").value_or(h.gemm_efficiency_bf16);
  h.gemm_efficiency_fp4 = r.get<double>("gemm_efficiency_fp4").value_or(h.gemm_efficiency_fp8);
  h.gemm_overhead_us = r.get<double>("gemm_overhead_us").value_or(0.0);
  h.attention_tflops_flash = r.required<double>("attention_tflops_flash");
  h.attention_tflops_fused = r.get<double>("attention_tflops_fused").value_or(0.0);
  h.attention_tflops_standard = r.required<double>("attention_tflops_standard");
  h.attention_fused_backward_ratio = r.get<double>("attention_fused_backward_ratio").value_or(0.86);
  h.hbm_efficiency = r.required<double>("hbm_efficiency");
  h.intra_node_efficiency = r.required<double>("intra_node_efficiency");
  h.inter_node_efficiency = r.required<double>("inter_node_efficiency");
  h.intra_node_alpha_us = r.required<double>("intra_node_alpha_us");
  h.inter_node_alpha_us = r.required<double>("inter_node_alpha_us");
  h.reserved_gib = r.get<double>("reserved_gib").value_or(2.0);
  h.sustained_fraction = r.get<double>("sustained_fraction").value_or(1.0);
  r.reject_unknown();
  check_hardware(h);
  return h;
}

ModelSpec load_model(std::string_view name_or_path) {
  const auto [text, origin] = read_source(name_or_path, "models", "model", model_presets());
  return parse_model(text, origin);
}

HardwareSpec load_hardware(std::string_view name_or_path) {
  const auto [text, origin] = read_source(name_or_path, "hardware", "hardware", hardware_presets());
  return parse_hardware(text, origin);
}

void apply_overrides(ModelSpec& m, const ModelOverrides& o) {
  const bool mha = m.kv_heads == m.heads;
  if (o.layers) m.layers = *o.layers;
  if (o.hidden) m.hidden = *o.hidden;
  if (o.heads) m.heads = *o.heads;
  if (o.kv_heads) {
    m.kv_heads = *o.kv_heads;
  } else if (o.heads && mha) {
    m.kv_heads = m.heads;
  }
  if (o.ffn) {
    m.ffn = *o.ffn;
  } else if (o.hidden && m.ffn_multiplier > 0) {
    m.ffn = static_cast<int>(m.ffn_multiplier * m.hidden);
  }
  if (o.vocab) m.vocab = *o.vocab;
  if (o.experts) {
    m.experts = *o.experts;
    if (m.is_moe() && m.moe_ffn == 0) m.moe_ffn = m.ffn;
  }
  if (o.top_k) m.top_k = *o.top_k;
  if (o.seq) m.seq = *o.seq;
  if (o.layers || o.hidden || o.heads || o.kv_heads || o.ffn || o.vocab || o.experts || o.top_k || o.seq)
    m.source += " with command-line overrides";
  check_model(m);
}

void apply_overrides(HardwareSpec& h, const HardwareOverrides& o) {
  if (o.gpus_per_node) h.gpus_per_node = *o.gpus_per_node;
  if (o.intra_node_gbps) h.intra_node_gbps = *o.intra_node_gbps;
  if (o.inter_node_gbps) h.inter_node_gbps = *o.inter_node_gbps;
  check_hardware(h);
}

}  // namespace meshscope::model
