// `info --json` "workload" and `compare --json` "workload" (docs/CLI.md): what the profile
// ran, inferred by analysis/compare/workload.hpp; null where the profile does not show it. Header-only.
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>

#include "analysis/compare/workload.hpp"
#include "profiler/json_writer.hpp"

namespace meshscope::app {

inline void write_workload_json(JsonWriter& j, const compare::Workload& w) {
  auto number = [&](const char* key, const std::optional<std::int64_t>& v) {
    j.key(key);
    if (v) {
      j.value(*v);
    } else {
      j.null();
    }
  };
  j.begin_object();
  j.field("kind", w.kind());
  j.key("structure");
  if (w.structure.empty()) {
    j.null();
  } else {
    j.value(w.structure);
  }
  j.key("attention");
  if (w.attention.empty()) {
    j.null();
  } else {
    j.value(w.attention);
  }
  number("hidden", w.hidden);
  number("layers", w.layers);
  number("encoder_layers", w.encoder_layers);
  number("decoder_layers", w.decoder_layers);
  number("ffn", w.ffn);
  number("heads", w.heads);
  number("kv_heads", w.kv_heads);
  number("head_dim", w.head_dim);
  number("v_head_dim", w.v_head_dim);
  number("q_lora_rank", w.q_lora_rank);
  number("kv_lora_rank", w.kv_lora_rank);
  number("qk_rope_dim", w.qk_rope_dim);
  number("vocab", w.vocab);
  number("classes", w.classes);
  number("experts", w.experts);
  number("top_k", w.top_k);
  number("tokens_per_micro_batch", w.tokens_per_micro_batch);
  number("micro_batch", w.micro_batch);
  number("seq", w.seq);
  number("tp", w.tp);
  number("pp", w.pp);
  number("dp", w.dp);
  number("cp", w.cp);
  number("ep", w.ep);
  j.key("training");
  if (w.training) {
    j.value(*w.training);
  } else {
    j.null();
  }
  j.key("hardware");
  if (w.hardware) {
    j.value(*w.hardware);
  } else {
    j.null();
  }
  j.key("precision");
  if (w.precision) {
    j.value(measure::to_string(*w.precision));
  } else {
    j.null();
  }
  j.key("gpu");
  if (w.gpu.empty()) {
    j.null();
  } else {
    j.value(w.gpu);
  }
  j.key("other_models").begin_array();
  for (const auto& m : w.other_models) j.value(m);
  j.end_array();
  // How sure each value is (high: read from a recorded shape; medium: derived by a rule; low: assumed;
  // stated: stored by the user).
  j.key("confidence").begin_object();
  for (const auto& [field, c] : w.confidence) j.field(field.c_str(), compare::to_string(c));
  j.end_object();
  j.key("evidence").begin_array();
  for (const auto& e : w.evidence) j.value(e);
  j.end_array();
  // What the user stated in the profile (meshscope annotate): the model's name and the layout as stored.
  j.key("stated").begin_object();
  j.key("model");
  if (w.stated_model) {
    j.value(w.stated_model->name);
  } else {
    j.null();
  }
  j.key("layout");
  if (w.stated_layout.empty()) {
    j.null();
  } else {
    j.value(compare::layout_text(w.stated_layout));
  }
  j.end_object();
  j.end_object();
}

// One line: "transformer: hidden 1024, 24 layers, ffn 2816, 16 heads (16 kv), vocab 151936; tp 1 pp 1 dp 1
// cp 1 ep 1; h100-sxm".
inline std::string workload_line(const compare::Workload& w) {
  auto v = [](const std::optional<std::int64_t>& x) { return x ? fmt::format("{}", *x) : std::string("?"); };
  std::string s;
  if (w.transformer) {
    s = compare::model_text(w, true);
  } else {
    s = "unknown (not a recognised transformer)";
  }
  s +=
      fmt::format("; tp {} pp {} dp {} cp {} ep {}; hardware {}", v(w.tp), v(w.pp), v(w.dp), v(w.cp), v(w.ep),
                  !w.hardware           ? std::string("unknown")
                  : w.recorded_hardware ? *w.hardware + " (described from its records)"
                                        : *w.hardware);
  return s;
}

}  // namespace meshscope::app
