// explorer_panel.cpp: the Explorer panel, the layout explorer. Sliders and combos for model, hardware and
// layout; every change re-predicts within the frame (predict() is sub-millisecond): memory against capacity,
// step time by part, MFU and tokens/s, the measured per-step breakdown of the open profile beside the
// predicted one, the predicted pipeline timeline of one step, and the search results (click a row to load
// that layout). Invalid layouts are explained inline with resolve()'s one-line reason, never clamped. With a
// profile open, the Explorer starts on the model, hardware and layout the profile ran (inferred by
// analysis/compare, as `meshscope compare PROFILE` without flags does) and says so in one line; its measured
// column is the profile's MeasuredModel (the figures `compare` prints), shown only when the profile is a
// transformer the model can predict on hardware with a preset ("not comparable" and why otherwise).
//
// [SECTION] Inputs and prediction
// [SECTION] Bars (memory, step time, measured vs predicted)
// [SECTION] Pipeline timeline
// [SECTION] Search
#include "app/gui/explorer_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/compare.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/compare/statement.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/presets.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/label_layout.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile_meta.hpp"

namespace meshscope::gui {

namespace {

constexpr const char* kRecompute[] = {"none", "selective", "full"};
constexpr const char* kSchedule[] = {"gpipe", "1f1b", "interleaved"};
constexpr const char* kPrecision[] = {"bf16", "fp8"};
constexpr const char* kMode[] = {"training", "inference"};
constexpr const char* kCpComm[] = {"ring", "all-gather", "all-to-all"};  // model::CpComm order

struct Part {
  const char* name;
  double value;
  ImU32 color;
};

// One horizontal stacked bar of PARTS scaled so that SCALE fills WIDTH; hovering a part names it.
void stacked_bar(const char* id, const Part* parts, int count, double scale, float width, float height,
                 const char* unit_label, double marker = 0, const char* marker_label = nullptr) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const float mx = ImGui::GetIO().MousePos.x;
  dl->AddRectFilled(p, ImVec2(p.x + width, p.y + height), IM_COL32(34, 38, 46, 255), 3.0f);
  // Where the segments and their share labels go, and the marker's label clear of them (label_layout.hpp).
  std::vector<BarSegmentLabel> segments;
  std::vector<std::string> shares;
  float x = p.x;
  for (int i = 0; i < count; ++i) {
    const float w =
        parts[i].value > 0 && scale > 0 ? static_cast<float>(parts[i].value / scale * width) : 0.0f;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", scale > 0 ? 100.0 * parts[i].value / scale : 0.0);
    shares.emplace_back(buf);
    segments.push_back({x, x + w, ImGui::CalcTextSize(buf).x});
    x += w;
  }
  const bool has_marker = marker > 0 && scale > 0;
  const float xm = has_marker ? p.x + static_cast<float>(marker / scale * width) : 0.0f;
  const float marker_w = has_marker && marker_label ? ImGui::CalcTextSize(marker_label).x : 0.0f;
  const BarLabels labels = place_bar_labels(
      segments, p.x, p.x + width, has_marker ? xm : std::numeric_limits<float>::quiet_NaN(), marker_w, 4.0f);
  const float text_y = p.y + (height - ImGui::GetFontSize()) * 0.5f;
  for (int i = 0; i < count; ++i) {
    const BarSegmentLabel& seg = segments[static_cast<std::size_t>(i)];
    if (seg.x1 <= seg.x0) continue;
    dl->AddRectFilled(ImVec2(seg.x0, p.y), ImVec2(seg.x1, p.y + height), parts[i].color);
    if (labels.shown[static_cast<std::size_t>(i)])
      dl->AddText(ImVec2(seg.x0 + 4, text_y), IM_COL32(10, 12, 16, 255),
                  shares[static_cast<std::size_t>(i)].c_str());
    if (hovered && mx >= seg.x0 && mx < seg.x1) {
      ImGui::SetTooltip("%s: %.4g %s (%.1f%%)", parts[i].name, parts[i].value, unit_label,
                        100.0 * parts[i].value / scale);
    }
  }
  if (has_marker) {
    dl->AddLine(ImVec2(xm, p.y - 3), ImVec2(xm, p.y + height + 3), kColExposed, 2.5f);
    if (marker_label) {
      // On a dark plate: the label may sit over a coloured segment.
      dl->AddRectFilled(ImVec2(labels.marker_x - 2, p.y + 2),
                        ImVec2(labels.marker_x + marker_w + 2, p.y + height - 2), IM_COL32(20, 22, 28, 220),
                        2.0f);
      dl->AddText(ImVec2(labels.marker_x, text_y), kColText, marker_label);
    }
  }
}

void parts_legend(const Part* parts, int count, bool seconds) {
  bool first = true;
  for (int i = 0; i < count; ++i) {
    if (parts[i].value <= 0) continue;
    char label[96], v[32];
    if (seconds)
      std::snprintf(label, sizeof label, "%s %s", parts[i].name, seconds_text(v, sizeof v, parts[i].value));
    else
      // Values are GiB here; the size reads in its best unit ("1.2 TiB", not "1.25e+03 GiB").
      std::snprintf(label, sizeof label, "%s %s", parts[i].name,
                    bytes_text(v, sizeof v, parts[i].value * double(1ull << 30)));
    if (!first) legend_same_line(label);
    first = false;
    legend_item(parts[i].color, label);
  }
}

int index_of(const std::vector<std::string>& names, const char* name) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return 0;
}

}  // namespace

ExplorerPanel::ExplorerPanel(Host host) : host_(std::move(host)), loaded_(*host_.loaded) {}

// [SECTION] Inputs and prediction
// ----------------------------------------------------------------------------

void ExplorerPanel::init() {
  if (ex_.models.empty()) {
    try {
      ex_.models = model::model_presets();
      ex_.hardware = model::hardware_presets();
    } catch (const std::exception& e) {
      ex_.spec_error = e.what();
    }
    ex_.model_index = index_of(ex_.models, "llama3-8b");
    ex_.hardware_index = index_of(ex_.hardware, "h100-sxm");
    ex_.layout.gpus = 8;
    ex_.layout.tp = 2;
  }
  if (ex_.models.empty() || ex_.hardware.empty()) {
    if (ex_.spec_error.empty())
      ex_.spec_error = "no model or hardware presets found in " + model::assets_dir().string();
    return;
  }
  try {
    ex_.base_model = ex_.model_index == ex_.inferred_index
                         ? ex_.inferred
                         : model::load_model(ex_.models[static_cast<std::size_t>(ex_.model_index)]);
    ex_.hw = ex_.hardware_index == ex_.own_hw_index
                 ? ex_.own_hw
                 : model::load_hardware(ex_.hardware[static_cast<std::size_t>(ex_.hardware_index)]);
    ex_.eff = model::defaults_for(ex_.hw);
    ex_.spec_error.clear();
  } catch (const std::exception& e) {
    ex_.spec_error = e.what();
  }
  ex_.ready = ex_.spec_error.empty();
  apply_shape();
}

void ExplorerPanel::apply_shape() {
  ex_.dirty = true;
  ex_.search_dirty = true;
  if (!ex_.ready) return;
  ex_.model = ex_.base_model;
  model::ModelOverrides o;
  if (ex_.layers > 0) o.layers = ex_.layers;
  if (ex_.hidden > 0) o.hidden = ex_.hidden;
  if (ex_.heads > 0) o.heads = ex_.heads;
  model::apply_overrides(ex_.model, o);
}

// The model, hardware and layout the open profile ran (LoadedProfile::start, inferred when it was loaded):
// the inferred model joins the model list as its first entry, the hardware preset of its GPU is chosen, the
// layout and batch are the profile's. A profile that is not comparable keeps the chosen model, on its world
// size; its measured column says why instead.
void ExplorerPanel::open_profile() {
  // The entries the last profile added (its inferred model, its stated GPU) leave the lists; the choice that
  // pointed at one falls back to the default.
  auto drop_entry = [](std::vector<std::string>& list, int& entry, int& chosen, const char* fallback) {
    if (entry >= 0 && entry < static_cast<int>(list.size())) {
      list.erase(list.begin() + entry);
      if (chosen == entry)
        chosen = index_of(list, fallback);
      else if (chosen > entry)
        --chosen;
    }
    entry = -1;
  };
  drop_entry(ex_.models, ex_.inferred_index, ex_.model_index, "llama3-8b");
  drop_entry(ex_.hardware, ex_.own_hw_index, ex_.hardware_index, "h100-sxm");
  ex_.measured_shown = nullptr;
  ex_.start = loaded_->start;
  if (!loaded_->measured) {
    ex_.start = ProfileStart{};
    ex_.start.reason = "the profile's measured model could not be built: " + loaded_->measured_error;
    ex_.start.layout.gpus = static_cast<int>(std::max<std::int64_t>(1, loaded_->profile->world_size()));
  }
  const ProfileStart& s = ex_.start;
  if (s.model) {
    ex_.inferred = *s.model;
    ex_.models.insert(ex_.models.begin(), s.model->name);
    ex_.inferred_index = 0;
    ex_.model_index = 0;
  }
  // The profile's own hardware that no preset is (stated, or described from its records) joins the hardware
  // list as its first entry.
  const std::optional<model::HardwareSpec>& own = s.stated_hardware ? s.stated_hardware : s.recorded_hardware;
  if (own && std::find(ex_.hardware.begin(), ex_.hardware.end(), own->name) == ex_.hardware.end()) {
    ex_.own_hw = *own;
    ex_.hardware.insert(ex_.hardware.begin(), own->name);
    ex_.own_hw_index = 0;
    ex_.hardware_index = 0;
  }
  for (std::size_t i = 0; i < ex_.hardware.size(); ++i) {
    if (ex_.hardware[i] == s.hardware) ex_.hardware_index = static_cast<int>(i);
  }
  ex_.layers = ex_.hidden = ex_.heads = 0;
  ex_.layout = s.layout;
  ex_.layout.virtual_stages = 1;
  ex_.layout.recompute = model::Recompute::kNone;
  ex_.layout.schedule = model::Schedule::k1F1B;
  ex_.dirty = true;
  ex_.search_dirty = true;
  ex_.steps_dirty = true;
  ex_.spec_error.clear();
  init();
  // The bundled sample is synthetic with a documented shape (assets/sample/README.md): match it, and say so.
  std::error_code error;
  const auto sample = std::filesystem::weakly_canonical(model::assets_dir() / "sample" / "sample_job", error);
  if (!error && std::filesystem::weakly_canonical(loaded_->source, error) == sample) {
    configure("gpt", 5, 4096, 32, 4096, ex_.layout.gpus, 2, 2);
    ProfileStart& d = ex_.start;
    d.model = ex_.model;
    d.summary =
        "the bundled sample's documented model: GPT, 5 layers, hidden 4096, 32 heads, 4096 tokens, TP 2";
    d.sources = "assets/sample/README.md; the synthetic job records no shapes";
    d.reason = d.hardware.empty() ? "the sample's GPU has no hardware preset" : "";
    d.comparable = d.reason.empty();
  }
}

std::string ExplorerPanel::hardware_note() const {
  if (!loaded_) return "chosen in the Explorer";
  const std::string gpu = loaded_->measured ? loaded_->measured->workload.gpu : std::string();
  if (ex_.start.hardware.empty()) {
    return "chosen in the Explorer; the profile's GPU " +
           (gpu.empty() ? std::string("is not named") : "'" + gpu + "' has no preset");
  }
  if (ex_.hw.name == ex_.start.hardware)
    return "the profile's GPU '" + gpu + "'" +
           (ex_.start.recorded_hardware ? ", described from its records" : "");
  return "chosen in the Explorer; the profile ran on " + ex_.start.hardware;
}

void ExplorerPanel::configure(const std::string& model_name, int layers, int hidden, int heads, int seq,
                              int gpus, int tp, int global_batch) {
  ex_.model_index = index_of(ex_.models, model_name.c_str());
  ex_.layers = layers;
  ex_.hidden = hidden;
  ex_.heads = heads;
  ex_.layout.seq = seq;
  ex_.layout.gpus = gpus;
  ex_.layout.tp = tp;
  ex_.layout.pp = 1;
  ex_.layout.dp = 0;
  ex_.layout.cp = 1;
  ex_.layout.ep = 1;
  ex_.layout.etp = 0;
  ex_.layout.micro_batch = 1;
  ex_.layout.global_batch = global_batch;
  init();
}

void ExplorerPanel::set_layout(int gpus, int tp, int pp, int cp, int ep, int etp) {
  ex_.layout.gpus = gpus;
  ex_.layout.tp = tp;
  ex_.layout.pp = pp;
  ex_.layout.cp = cp;
  ex_.layout.ep = ep;
  ex_.layout.etp = etp;
  ex_.layout.dp = 0;
  ex_.dirty = true;
  ex_.search_dirty = true;
  repredict();
}

void ExplorerPanel::set_global_batch(int sequences) {
  ex_.layout.global_batch = sequences;
  ex_.dirty = true;
  ex_.search_dirty = true;
  repredict();
}

void ExplorerPanel::set_micro_batch(int sequences) {
  ex_.layout.micro_batch = sequences;
  ex_.dirty = true;
  ex_.search_dirty = true;
  repredict();
}

void ExplorerPanel::set_mode(model::Mode mode) {
  ex_.layout.mode = mode;
  ex_.dirty = true;
  ex_.search_dirty = true;
  ex_.steps_dirty = true;
  repredict();
}

void ExplorerPanel::repredict() {
  ex_.dirty = false;
  if (!ex_.ready) return;
  // The layout as the controls' steps check it (explorer_steps.hpp): one conversion for both.
  const model::ParallelConfig c = layout_request(ex_.layout);
  try {
    ex_.resolved = model::resolve(c, ex_.model, ex_.hw);
    ex_.prediction = model::predict(ex_.model, ex_.hw, ex_.resolved, ex_.eff);
    ex_.timeline = model::build_timeline(ex_.prediction);
    ex_.roofline = model::roofline_operations(ex_.model, ex_.hw, ex_.eff, ex_.resolved);
    ex_.valid = true;
    ex_.error.clear();
  } catch (const std::exception& e) {
    ex_.valid = false;
    ex_.error = e.what();
  }
}

void ExplorerPanel::apply(const model::ParallelConfig& c) {
  ex_.layout = controls_of(c);
  ex_.dirty = true;
}

namespace {

// What a control shows for VALUE: 0 is "auto" for DP and "model default" for batch and sequence, with the
// value resolve() chose.
void step_text(char* buf, int size, LayoutField field, int value, const model::ParallelConfig& resolved,
               bool valid) {
  if (value != 0) {
    std::snprintf(buf, size, "%d", value);
    return;
  }
  const char* name = field == LayoutField::kDp    ? "auto"
                     : field == LayoutField::kEtp ? "as TP"
                                                  : "model default";
  const int chosen = field == LayoutField::kDp            ? resolved.dp
                     : field == LayoutField::kGlobalBatch ? resolved.global_batch
                     : field == LayoutField::kEtp         ? resolved.expert_tp()
                                                          : resolved.seq;
  if (valid)
    std::snprintf(buf, size, "%s (%d)", name, chosen);
  else
    std::snprintf(buf, size, "%s", name);
}

}  // namespace

// One layout control: a slider over the values FIELD steps through that give a valid layout with the rest as
// it is (so a drag always lands on a valid layout), a list of every value with the invalid ones disabled
// and their reason on hover, and Ctrl+click to type any value (an invalid one is explained, not clamped).
bool ExplorerPanel::step_control(LayoutField field, const char* help) {
  const int f = static_cast<int>(field);
  int& value = field_of(ex_.layout, field);
  const auto& steps = ex_.steps[f];
  const ImGuiIO& io = ImGui::GetIO();
  const float label_w = px(110);
  const float arrow_w = ImGui::GetFrameHeight();
  const float w = std::max(px(60), ImGui::GetContentRegionAvail().x - label_w - arrow_w - 2);
  bool changed = false;
  ImGui::PushID(f);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool ctrl_click = io.KeyCtrl && ImGui::IsMouseClicked(0) && ImGui::IsWindowHovered() &&
                          ImGui::IsMouseHoveringRect(p, ImVec2(p.x + w, p.y + ImGui::GetFrameHeight()));
  if (ctrl_click && ex_.typing != f) {
    ex_.typing = f;
    ex_.typed = value;
    ex_.typing_focus = true;
  }
  char text[64];
  if (ex_.typing == f) {
    ImGui::SetNextItemWidth(w + arrow_w + 2);
    if (ex_.typing_focus) ImGui::SetKeyboardFocusHere();
    if (ImGui::InputInt("##type", &ex_.typed, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
      value = ex_.typed;
      changed = true;
      ex_.typing = -1;
    } else if (!ex_.typing_focus && !ImGui::IsItemActive()) {
      ex_.typing = -1;  // Escape, or a click elsewhere
    }
    ex_.typing_focus = false;
  } else {
    std::vector<int>& positions = ex_.positions;
    positions.clear();
    int pos = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].problem.empty() && steps[i].value != value) continue;
      if (steps[i].value == value) pos = static_cast<int>(positions.size());
      positions.push_back(static_cast<int>(i));
    }
    step_text(text, sizeof text, field, value, ex_.resolved, ex_.valid);
    ImGui::SetNextItemWidth(w);
    if (ImGui::SliderInt("##step", &pos, 0, std::max(0, static_cast<int>(positions.size()) - 1), text,
                         ImGuiSliderFlags_NoInput) &&
        !positions.empty()) {
      const int next = steps[static_cast<std::size_t>(positions[static_cast<std::size_t>(pos)])].value;
      changed = next != value;
      value = next;
    }
    ex_.control_rects[f] = ImVec4(ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y,
                                  ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(
          "%s\nsteps through the %zu values that give a valid layout with the rest as it is;\n"
          "the list on the right shows the others and why they do not fit.\nCtrl+click to type any value.",
          help, positions.size());
    }
    ImGui::SameLine(0, 2);
    if (ImGui::ArrowButton("##all", ImGuiDir_Down)) ImGui::OpenPopup("##steps");
    if (ImGui::BeginPopup("##steps")) {
      for (const LayoutStep& s : steps) {
        step_text(text, sizeof text, field, s.value, ex_.resolved, false);
        ImGui::BeginDisabled(!s.problem.empty());
        if (ImGui::Selectable(text, s.value == value)) {
          changed = s.value != value;
          value = s.value;
        }
        ImGui::EndDisabled();
        if (!s.problem.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
          ImGui::SetTooltip("%s", s.problem.c_str());
      }
      ImGui::EndPopup();
    }
  }
  ImGui::SameLine();
  const bool ok = std::any_of(steps.begin(), steps.end(),
                              [&](const LayoutStep& s) { return s.value == value && s.problem.empty(); });
  ImGui::TextColored(to_vec4(ok ? kColText : kColExposed), "%s", to_string(field));
  ImGui::PopID();
  return changed;
}

namespace {

// A combo over an enum's first COUNT values (the model's enums count from 0).
template <typename Enum>
bool enum_combo(const char* label, Enum& value, const char* const items[], int count) {
  int index = static_cast<int>(value);
  if (!ImGui::Combo(label, &index, items, count)) return false;
  value = static_cast<Enum>(index);
  return true;
}

}  // namespace

// The layout, batch and schedule controls; re-predicts on any change.
void ExplorerPanel::layout_controls() {
  const model::ParallelConfig& inputs = ex_.layout;
  char key[160];
  std::snprintf(key, sizeof key, "%s/%d/%d/%d/%d/%s", ex_.model.name.c_str(), ex_.model.layers,
                ex_.model.hidden, ex_.model.heads, ex_.model.experts, ex_.hw.name.c_str());
  if (ex_.steps_dirty || !(inputs == ex_.steps_for) || ex_.steps_key != key) {
    for (int f = 0; f < kLayoutFieldCount; ++f)
      ex_.steps[f] = layout_steps(static_cast<LayoutField>(f), inputs, ex_.model, ex_.hw);
    ex_.steps_for = inputs;
    ex_.steps_key = key;
    ex_.steps_dirty = false;
  }
  bool changed = false;
  ImGui::Spacing();
  ImGui::TextDisabled("LAYOUT");
  ImGui::SameLine();
  ImGui::TextDisabled("(Ctrl+click a slider to type)");
  changed |= step_control(LayoutField::kGpus, "total GPUs of the job (multiples of the node size)");
  changed |= step_control(
      LayoutField::kTp,
      "tensor parallel degree (divides the heads; best inside one scale-up domain: NVLink, Infinity Fabric)");
  changed |= step_control(LayoutField::kPp, "pipeline stages (layer-compatible counts)");
  changed |= step_control(LayoutField::kDp, "data parallel degree; auto = GPUs / (TP x PP x CP)");
  changed |= step_control(LayoutField::kCp, "context parallel degree (splits the sequence)");
  ex_.cp_comm_rect = ImVec4(0, 0, 0, 0);
  if (ex_.layout.cp > 1) {
    ImGui::SetNextItemWidth(-px(110));
    changed |= enum_combo("CP exchange", ex_.layout.cp_comm, kCpComm, 3);
    const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    ex_.cp_comm_rect = ImVec4(lo.x, lo.y, hi.x, hi.y);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "how context parallelism exchanges keys and values (Megatron-Core --cp-comm-type): ring (p2p, "
          "overlapped with the attention), all-gather (Llama 3's, exposed) or all-to-all (Ulysses, exposed; "
          "the heads must split CP ways)");
  }
  changed |= step_control(LayoutField::kEp, "expert parallel degree (divides the experts; MoE models)");
  changed |= step_control(LayoutField::kEtp,
                          "expert tensor parallel degree: each expert split over ETP GPUs (MoE models; "
                          "as TP is Megatron-Core's default, 1 its MoE recipes'); EP x ETP divides TP x "
                          "CP x DP");
  ImGui::Spacing();
  ImGui::TextDisabled("BATCH");
  changed |= step_control(LayoutField::kMicroBatch, "sequences per micro-batch");
  changed |= step_control(LayoutField::kGlobalBatch,
                          "sequences per step (multiples of DP x micro-batch); model default = the preset's");
  changed |= step_control(LayoutField::kSeq, "tokens per sequence");
  ImGui::Spacing();
  ImGui::TextDisabled("MEMORY AND SCHEDULE");
  ImGui::SetNextItemWidth(-px(110));
  changed |= enum_combo("step", ex_.layout.mode, kMode, 2);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("training: forward, backward, optimizer; inference: forward passes only (a prefill)");
  // Inference holds no optimizer state and keeps no activations for a backward pass.
  const bool inference = ex_.layout.inference();
  if (inference) ImGui::BeginDisabled();
  ImGui::SetNextItemWidth(-px(110));
  changed |= ImGui::SliderInt("ZeRO stage", &ex_.layout.zero, 0, 3, "%d", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("0 none, 1 optimizer, 2 + gradients, 3 + weights (FSDP)");
  ImGui::SetNextItemWidth(-px(110));
  changed |= enum_combo("recompute", ex_.layout.recompute, kRecompute, 3);
  if (inference) ImGui::EndDisabled();
  ImGui::SetNextItemWidth(-px(110));
  changed |= enum_combo("schedule", ex_.layout.schedule, kSchedule, 3);
  if (ex_.layout.schedule == model::Schedule::kInterleaved)
    changed |= step_control(LayoutField::kVirtualStages, "model chunks per stage");
  ImGui::SetNextItemWidth(-px(110));
  // A GPU without BF16 (a V100) runs the 16-bit GEMMs in FP16, at the same tensor peak: named so.
  const char* precisions[] = {ex_.hw.bf16 ? kPrecision[0] : "fp16", kPrecision[1]};
  changed |= enum_combo("precision", ex_.layout.precision, precisions, 2);
  if (changed) {
    ex_.dirty = true;
    ex_.search_dirty = true;
    ex_.steps_dirty = true;
    repredict();
  }
}

void ExplorerPanel::draw() {
  if (!ex_.spec_error.empty()) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", ex_.spec_error.c_str());
    if (ex_.models.empty()) return;
  }
  if (ex_.dirty) repredict();
  const float inputs_w = px(350);
  ImGui::BeginChild("##inputs", ImVec2(inputs_w, 0), true);
  ImGui::TextDisabled("MODEL AND HARDWARE");
  bool spec_changed = false;
  auto combo = [&](const char* label, int& index, const std::vector<std::string>& names) {
    ImGui::SetNextItemWidth(-px(110));
    if (ImGui::BeginCombo(label, names.empty() ? "" : names[static_cast<std::size_t>(index)].c_str())) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == index)) {
          index = static_cast<int>(i);
          spec_changed = true;
        }
      }
      ImGui::EndCombo();
    }
  };
  combo("model", ex_.model_index, ex_.models);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s: %d layers, hidden %d, %d heads (%d KV), FFN %d, vocab %d%s\n%s",
                      ex_.model.name.c_str(), ex_.model.layers, ex_.model.hidden, ex_.model.heads,
                      ex_.model.kv_heads, ex_.model.ffn, ex_.model.vocab, ex_.model.is_moe() ? ", MoE" : "",
                      ex_.model.source.c_str());
  }
  combo("hardware", ex_.hardware_index, ex_.hardware);
  if (ImGui::IsItemHovered()) {
    char bf16[48], fp8[48], capacity[48], hbm[48], link[48], network[48];
    ImGui::SetTooltip(
        "%s: %s BF16, %s FP8, %s HBM at %s\n%s %s, network %s per GPU, %d GPUs per node", ex_.hw.name.c_str(),
        flop_rate_text(bf16, sizeof bf16, ex_.hw.peak_tflops_bf16 * 1e12),
        ex_.hw.peak_tflops_fp8 > 0 ? flop_rate_text(fp8, sizeof fp8, ex_.hw.peak_tflops_fp8 * 1e12) : "no",
        bytes_text(capacity, sizeof capacity, ex_.hw.hbm_capacity_gib * 1073741824.0),
        bandwidth_text(hbm, sizeof hbm, ex_.hw.hbm_tbps * 1e12), ex_.hw.intra_node_link.c_str(),
        bandwidth_text(link, sizeof link, ex_.hw.intra_node_gbps * 1e9),
        bandwidth_text(network, sizeof network, ex_.hw.inter_node_gbps * 1e9), ex_.hw.gpus_per_node);
  }
  if (spec_changed) init();
  bool shape_changed = false;
  auto shape = [&](const char* label, int& v, int hi, int preset) {
    char format[48];
    std::snprintf(format, sizeof format, v == 0 ? "preset (%d)" : "%%d", preset);
    ImGui::SetNextItemWidth(-px(110));
    shape_changed |= ImGui::SliderInt(label, &v, 0, hi, format, ImGuiSliderFlags_Logarithmic);
  };
  shape("layers", ex_.layers, 256, ex_.base_model.layers);
  shape("hidden", ex_.hidden, 32768, ex_.base_model.hidden);
  shape("heads", ex_.heads, 256, ex_.base_model.heads);
  if (shape_changed) apply_shape();
  layout_controls();
  ImGui::Spacing();
  if (!ex_.valid) {
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.35f, 0.08f, 0.08f, 1.0f));
    ImGui::BeginChild("##invalid", ImVec2(0, px(90)), true);
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.7f, 1.0f), "Invalid layout: %s", ex_.error.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  } else if (!ex_.resolved.defaulted.empty()) {
    std::string chosen;
    for (const auto& d : ex_.resolved.defaulted) chosen += (chosen.empty() ? "" : ", ") + d;
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("defaults chosen: %s", chosen.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::EndChild();
  ImGui::SameLine();

  ImGui::BeginChild("##results", ImVec2(0, 0), false);
  inferred_line();
  if (!ex_.valid) {
    ImGui::TextColored(to_vec4(kColExposed), "No prediction: %s", ex_.error.c_str());
    ImGui::TextDisabled("Change the layout on the left; the prediction follows every change.");
  } else {
    draw_bars();
    draw_measured();
    ImGui::Spacing();
    ImGui::TextDisabled("PREDICTED PIPELINE OF ONE STEP (slowest stage's costs; stages x micro-batches)");
    draw_pipeline(std::clamp(static_cast<float>(ex_.timeline.stages) * 22.0f + 30.0f, 90.0f, 260.0f));
  }
  ImGui::Spacing();
  run_search();
  ImGui::EndChild();
}

// [SECTION] Bars
// ---------------------------------------------------------------------------------------------

void ExplorerPanel::draw_bars() {
  const auto& p = ex_.prediction;
  const auto& c = ex_.resolved;
  char a[32], b[32];
  ImGui::Text("%s on %d x %s", ex_.model.name.c_str(), c.gpus, ex_.hw.name.c_str());
  ImGui::SameLine();
  // Cut with an ellipsis where the panel is narrow (the whole line on hover).
  const std::string layout_line = fmt::format(
      "tp {}  pp {}  dp {}  cp {}{}  ep {}  mb {}  batch {} x {} tokens  ZeRO {}  {}  {}{}  {}  {}", c.tp,
      c.pp, c.dp, c.cp,
      c.cp > 1 && c.cp_comm != model::CpComm::kRing ? fmt::format(" ({})", model::to_string(c.cp_comm))
                                                    : std::string(),
      c.ep, c.micro_batch, c.global_batch, c.seq, c.zero, model::to_string(c.recompute),
      model::to_string(c.schedule),
      c.schedule == model::Schedule::kInterleaved ? " v" + std::to_string(c.virtual_stages) : std::string(),
      c.precision == model::Precision::kBF16 && !ex_.hw.bf16 ? std::string_view("fp16")
                                                             : model::to_string(c.precision),
      model::to_string(c.mode));
  text_ellipsis(layout_line, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  // Headline figures.
  if (ImGui::BeginTable("##headline", 5, ImGuiTableFlags_BordersInnerV)) {
    // A narrow column cuts its label and value with an ellipsis; hovering shows them whole.
    auto cell = [](const char* label, const char* value, ImU32 color = kColText) {
      ImGui::TableNextColumn();
      text_ellipsis(label, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
      text_ellipsis(value, 0, color);
    };
    char v[64];
    cell("step time", seconds_text(a, sizeof a, p.step_time_s));
    std::snprintf(v, sizeof v, "%.1f %%", 100.0 * p.mfu);
    cell("MFU", v);
    std::snprintf(v, sizeof v, "%.0f", p.tokens_per_s);
    cell("tokens / s", v);
    flop_rate_text(v, sizeof v, p.model_tflops_per_gpu * 1e12);
    cell("model FLOP/s per GPU", v);
    std::snprintf(v, sizeof v, "%s (%.1f / %.0f GiB)", p.fits ? "fits" : "DOES NOT FIT",
                  p.memory.total() / 1073741824.0, p.memory.capacity / 1073741824.0);
    cell("memory", v, p.fits ? kColMemory : kColExposed);
    ImGui::EndTable();
  }
  const float w = ImGui::GetContentRegionAvail().x - 10;
  ImGui::Spacing();
  ImGui::TextDisabled("MEMORY PER GPU (most loaded stage %d) against capacity", p.memory.stage);
  const double gib = 1073741824.0;
  const Part mem[] = {{"weights", p.memory.params / gib, IM_COL32(76, 139, 245, 255)},
                      {"gradients", p.memory.grads / gib, IM_COL32(110, 170, 250, 255)},
                      {"optimizer", p.memory.optimizer / gib, IM_COL32(150, 120, 230, 255)},
                      {"activations", p.memory.activations / gib, IM_COL32(242, 158, 76, 255)},
                      {"other", p.memory.other / gib, IM_COL32(120, 130, 150, 255)}};
  std::snprintf(a, sizeof a, "capacity %.0f GiB", p.memory.capacity / gib);
  stacked_bar("##mem", mem, 5, std::max(p.memory.total(), p.memory.capacity) / gib * 1.04, w, 22, "GiB",
              p.memory.capacity / gib, a);
  parts_legend(mem, 5, false);
  ImGui::Spacing();
  ImGui::TextDisabled("PREDICTED STEP TIME BY PART (%s)", seconds_text(b, sizeof b, p.step_time_s));
  const auto& t = p.time;
  const Part parts[] = {{"compute", t.compute, kColCompute},
                        {"recompute", t.recompute, IM_COL32(120, 170, 250, 255)},
                        {"TP exposed", t.tp_exposed, IM_COL32(242, 158, 76, 255)},
                        {"CP exposed", t.cp_exposed, IM_COL32(250, 190, 90, 255)},
                        {"EP exposed", t.ep_exposed, IM_COL32(230, 120, 60, 255)},
                        {"PP p2p", t.pp_p2p_exposed, IM_COL32(210, 100, 120, 255)},
                        {"PP bubble", t.pp_bubble, kColIdle},
                        {"DP exposed", t.dp_exposed, kColExposed},
                        {"optimizer", t.optimizer, kColMemory}};
  stacked_bar("##time", parts, 9, t.total(), w, 22, "s");
  parts_legend(parts, 9, true);
}

// One line: what the Explorer opened the profile on and from what; hover lists every piece of evidence.
void ExplorerPanel::inferred_line() {
  ex_.measured_shown = nullptr;
  if (!loaded_) return;
  const ProfileStart& s = ex_.start;
  const std::string from = s.sources.empty() ? std::string() : " (from " + s.sources + ")";
  std::string line = s.model ? "Opened on what the profile ran" + from + ": " + s.summary
                             : "The profile ran" + from + ": " + s.summary;
  // A large job opened with lazy ranks is measured on a sample of its ranks (lazy_ranks.hpp).
  if (loaded_->lazy) line += "; measured on " + loaded_->lazy->sample;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(to_vec4(s.comparable ? kColMemory : kColExposed), "%s", line.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered() && loaded_->measured) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 44);
    ImGui::TextUnformatted(line.c_str());
    for (const auto& e : loaded_->measured->workload.evidence) ImGui::BulletText("%s", e.c_str());
    if (!s.comparable)
      ImGui::TextColored(to_vec4(kColExposed), "not comparable: %s", display_reason(s.reason).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  if (s.comparable) save_button();
}

void ExplorerPanel::save_button() {
  if (ImGui::SmallButton("Save as what the profile ran")) save_statement();
  const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
  ex_.save_button_rect = ImVec4(lo.x, lo.y, hi.x, hi.y);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Stores the model, hardware and layout chosen here in the profile (as `meshscope annotate` does): "
        "compare, info and the Explorer then take them in place of what they would infer.");
  }
  if (!ex_.save_message.empty()) {
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(to_vec4(ex_.save_failed ? kColExposed : kColMemory), "%s", ex_.save_message.c_str());
    ImGui::PopTextWrapPos();
  }
}

void ExplorerPanel::save_statement() {
  if (!loaded_) return;
  compare::Statement statement;
  statement.model = ex_.model;
  statement.hardware = ex_.hw;
  compare::StatedLayout& l = statement.layout;
  l.tp = ex_.layout.tp;
  l.pp = ex_.layout.pp;
  l.cp = ex_.layout.cp;
  l.ep = ex_.layout.ep;
  if (ex_.valid) {  // the layout as the prediction resolved it: no default left open
    l.dp = ex_.resolved.dp;
    l.micro_batch = ex_.resolved.micro_batch;
    l.seq = ex_.resolved.seq;
    l.global_batch = ex_.resolved.global_batch;
  } else {
    if (ex_.layout.dp > 0) l.dp = ex_.layout.dp;
    l.micro_batch = ex_.layout.micro_batch;
    if (ex_.layout.seq > 0) l.seq = ex_.layout.seq;
    if (ex_.layout.global_batch > 0) l.global_batch = ex_.layout.global_batch;
  }
  l.mode = ex_.layout.mode;
  try {
    update_meta(loaded_->msdb, compare::meta_changes(statement));
  } catch (const std::exception& e) {
    ex_.save_failed = true;
    ex_.save_message = std::string("not saved: ") + e.what();
    return;
  }
  host_.saved(statement);
  ex_.save_failed = false;
  ex_.save_message = "saved in " + loaded_->msdb.filename().string();
  if (loaded_->msdb != loaded_->source)
    ex_.save_message +=
        " (the traces' import in the cache, made again when they are opened again: keep it "
        "with meshscope import -o JOB.msdb --model ... or annotate)";
}

namespace {

ImU32 part_color(compare::Part part) {
  switch (part) {
    case compare::Part::kCompute:
      return kColCompute;
    case compare::Part::kTp:
      return IM_COL32(242, 158, 76, 255);
    case compare::Part::kCp:
      return IM_COL32(250, 190, 90, 255);
    case compare::Part::kEp:
      return IM_COL32(230, 120, 60, 255);
    case compare::Part::kPp:
      return IM_COL32(210, 100, 120, 255);
    case compare::Part::kDp:
      return kColExposed;
    case compare::Part::kCommOther:
      return IM_COL32(190, 90, 150, 255);
    case compare::Part::kIdle:
      return kColIdle;
    case compare::Part::kMemory:
      return kColMemory;
  }
  return kColCpu;
}

}  // namespace

// The profile's measured step (its MeasuredModel: the mean step as `meshscope compare` defines and prints it,
// GPU span split into compute, exposed communication per parallel dimension, idle and exposed memory
// traffic) beside the prediction split into the same rows (compare::predicted_parts). Not comparable
// profiles show why instead of a measured column.
void ExplorerPanel::draw_measured() {
  if (!loaded_) return;
  ImGui::Spacing();
  ImGui::TextDisabled(
      "MEASURED (open profile) BESIDE PREDICTED, per step: the figures of `meshscope compare`");
  if (!ex_.start.comparable) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(to_vec4(kColExposed), "Not comparable: %s.", display_reason(ex_.start.reason).c_str());
    ImGui::TextDisabled(
        "The prediction above is of the model chosen here, not of what the profile ran, so no measured "
        "column is shown beside it. If you know what it ran, choose its model, hardware and layout above and "
        "save them in the profile: the measured column then appears beside the prediction.");
    ImGui::PopTextWrapPos();
    save_button();
    if (loaded_->measured) draw_replay();  // the run's own layout can be replayed without its model
    return;
  }
  const compare::MeasuredModel& mm = *loaded_->measured;
  const compare::MeasuredStep& m = mm.steps.mean;
  if (m.dur_s <= 0) {
    ImGui::TextDisabled("The open profile ran no GPU work, so there is no measured step to compare.");
    return;
  }
  if (mm.workload.training && *mm.workload.training != !ex_.layout.inference()) {
    // An inference trace is never compared with a training step, nor the reverse.
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(to_vec4(kColExposed), "Not comparable: the profile ran %s, the prediction is of %s.",
                       *mm.workload.training ? "training steps" : "inference (forward passes only)",
                       *mm.workload.training ? "inference" : "a training step");
    ImGui::TextDisabled("Choose step = %s to see the measured column beside it.",
                        *mm.workload.training ? "training" : "inference");
    ImGui::PopTextWrapPos();
    return;
  }
  ex_.measured_shown = &m;
  const compare::PartSeconds predicted = compare::predicted_parts(ex_.prediction);
  Part measured_bar[compare::kPartCount], predicted_bar[compare::kPartCount];
  for (compare::Part part : compare::kParts) {
    const auto i = static_cast<std::size_t>(part);
    measured_bar[i] = {compare::to_string(part), m.parts[i], part_color(part)};
    predicted_bar[i] = {compare::to_string(part), predicted[i], part_color(part)};
  }
  const double p_step = ex_.prediction.step_time_s;
  const double scale = std::max(m.dur_s, p_step) * 1.04;
  const float w = ImGui::GetContentRegionAvail().x - 10 - px(90);
  ImGui::TextUnformatted("measured ");
  ImGui::SameLine(px(90));
  stacked_bar("##measured", measured_bar, compare::kPartCount, scale, w, 20, "s");
  ImGui::TextUnformatted("predicted");
  ImGui::SameLine(px(90));
  stacked_bar("##predicted", predicted_bar, compare::kPartCount, scale, w, 20, "s");
  char a[32], b[32], c[32], d[32], e[32], f[32];
  const auto step = compare::difference(p_step, m.dur_s);
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(to_vec4(std::abs(step.diff_pct) > 20 ? kColExposed : kColMemory),
                     "measured GPU span %s per step (mean of %lld rank-steps%s), predicted %s: prediction %s "
                     "by %s (%+.0f %%)",
                     seconds_text(a, sizeof a, m.dur_s), static_cast<long long>(mm.rank_steps),
                     mm.steps.whole_profile ? ", no step markers: whole profile per rank" : "",
                     seconds_text(b, sizeof b, p_step), step.diff_s < 0 ? "faster" : "slower",
                     seconds_text(c, sizeof c, std::abs(step.diff_s)), step.diff_pct);
  ImGui::TextDisabled(
      "measured: compute %s, communication %s (exposed %s), memory copies %s (exposed %s), idle %s",
      seconds_text(a, sizeof a, m.compute_s), seconds_text(b, sizeof b, m.comm_s),
      seconds_text(c, sizeof c, m.exposed_comm_s), seconds_text(d, sizeof d, m.memory_s),
      seconds_text(e, sizeof e, m.memory_exposed_s), seconds_text(f, sizeof f, m.idle_s));
  // How much of a step the measurement holds, as `compare` says it (compare::Coverage).
  if (ex_.valid && mm.work.shapes_recorded && mm.work_flops_per_step > 0) {
    const compare::Coverage cov =
        compare::coverage_of(mm.work_flops_per_step, ex_.prediction, ex_.model, ex_.resolved);
    if (cov.partial) {
      ImGui::TextColored(
          to_vec4(kColExposed),
          "The measured step did %.0f %% of the predicted step's work (%.3g of %.3g TFLOP per GPU "
          "without the logits): the profile holds part of a step, so its times are of that part.",
          100 * cov.share, cov.measured_flops_per_rank_step / 1e12, cov.predicted_flops_per_gpu_step / 1e12);
    } else {
      ImGui::TextDisabled(
          "the measured step did %.0f %% of the predicted step's work (%.3g of %.3g TFLOP per GPU "
          "without the logits)",
          100 * cov.share, cov.measured_flops_per_rank_step / 1e12, cov.predicted_flops_per_gpu_step / 1e12);
    }
  }
  ImGui::PopTextWrapPos();
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("##parts", 6, flags)) {
    for (const char* h : {"part", "predicted from", "predicted", "measured", "diff", "diff %"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    auto row = [&](const char* name, const char* from, double p, double meas) {
      const auto diff = compare::difference(p, meas);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(name);
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", from);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(seconds_text(a, sizeof a, p));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(seconds_text(b, sizeof b, meas));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(seconds_text(c, sizeof c, diff.diff_s));
      ImGui::TableNextColumn();
      if (std::isfinite(diff.diff_pct))
        ImGui::Text("%+.0f %%", diff.diff_pct);
      else
        ImGui::TextDisabled("-");
    };
    for (compare::Part part : compare::kParts) {
      const auto i = static_cast<std::size_t>(part);
      if (predicted[i] > 0 || m.parts[i] > 0)
        row(compare::to_string(part), compare::predicted_source(part), predicted[i], m.parts[i]);
    }
    row("step time", "sum", p_step, m.dur_s);
    ImGui::EndTable();
  }
  draw_replay();
}

// [SECTION] Pipeline timeline
// --------------------------------------------------------------------------------

void ExplorerPanel::draw_pipeline(float height) {
  const auto& tl = ex_.timeline;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x - 10;
  ImGui::InvisibleButton("##pipeline", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float label_w = 70, top = 16;
  const float x0 = p.x + label_w, x1 = p.x + width;
  dl->AddRectFilled(p, ImVec2(x1, p.y + height), IM_COL32(20, 23, 28, 255), 3.0f);
  const int stages = std::max(1, tl.stages);
  const float row_h = std::min(22.0f, (height - top - 4) / static_cast<float>(stages));
  const double scale = tl.step_time_s > 0 ? (x1 - x0 - 4) / tl.step_time_s : 1.0;
  // Time ticks.
  char buf[48];
  const TimeNs step_ns = ruler_step(tl.step_time_s * 1e9 / std::max(1.0f, x1 - x0), 100.0);
  for (TimeNs t = 0; static_cast<double>(t) <= tl.step_time_s * 1e9; t += step_ns) {
    const float x = x0 + static_cast<float>(static_cast<double>(t) / 1e9 * scale);
    dl->AddLine(ImVec2(x, p.y + top - 3), ImVec2(x, p.y + height), kColGrid);
    format_time(buf, sizeof buf, t, step_ns);
    dl->AddText(ImVec2(x + 2, p.y), kColTextDim, buf);
  }
  for (int s = 0; s < stages; ++s) {
    if (row_h >= 10) {
      std::snprintf(buf, sizeof buf, "stage %d", s);
      dl->AddText(ImVec2(p.x + 6, p.y + top + static_cast<float>(s) * row_h + (row_h - 14) * 0.5f),
                  kColTextDim, buf);
    }
  }
  for (const auto& e : tl.events) {
    const float y0 = p.y + top + static_cast<float>(e.stage) * row_h;
    const float ex0 = x0 + static_cast<float>(e.start_s * scale);
    const float ex1 = std::max(ex0 + 1.0f, x0 + static_cast<float>((e.start_s + e.duration_s) * scale));
    ImU32 col;
    switch (e.kind) {
      case model::TimelineKind::kForward:
        col = e.chunk % 2 ? IM_COL32(110, 170, 250, 255) : kColCompute;
        break;
      case model::TimelineKind::kBackward:
        col = e.chunk % 2 ? IM_COL32(120, 100, 210, 255) : IM_COL32(90, 80, 190, 255);
        break;
      case model::TimelineKind::kSend:
        col = kColComm;
        break;
      case model::TimelineKind::kBubble:
        col = IM_COL32(60, 40, 44, 255);
        break;
      case model::TimelineKind::kDataParallel:
        col = kColExposed;
        break;
      case model::TimelineKind::kOptimizer:
        col = kColMemory;
        break;
      default:
        col = kColCpu;
    }
    const bool bubble = e.kind == model::TimelineKind::kBubble;
    dl->AddRectFilled(ImVec2(ex0, y0 + 1), ImVec2(ex1, y0 + row_h - 1), col);
    if (bubble) {
      dl->PushClipRect(ImVec2(ex0, y0 + 1), ImVec2(ex1, y0 + row_h - 1), true);
      for (float hx = ex0 - row_h; hx < ex1; hx += 6) {
        dl->AddLine(ImVec2(hx, y0 + row_h), ImVec2(hx + row_h, y0), IM_COL32(150, 70, 80, 120));
      }
      dl->PopClipRect();
    }
    if (e.micro_batch >= 0 && ex1 - ex0 > 14 && row_h >= 12 && !bubble) {
      std::snprintf(buf, sizeof buf, "%d", e.micro_batch);
      dl->AddText(ImVec2(ex0 + 2, y0 + (row_h - 14) * 0.5f), IM_COL32(10, 12, 16, 255), buf);
    }
    if (hovered && mouse.x >= ex0 && mouse.x < ex1 && mouse.y >= y0 && mouse.y < y0 + row_h) {
      char a[32], b[32];
      ImGui::SetTooltip("stage %d: %s%s, micro-batch %d, chunk %d\nstart %s, duration %s", e.stage,
                        std::string(model::to_string(e.kind)).c_str(),
                        bubble ? " (idle: pipeline fill/drain)" : "", e.micro_batch, e.chunk,
                        seconds_text(a, sizeof a, e.start_s), seconds_text(b, sizeof b, e.duration_s));
    }
  }
  legend_item(kColCompute, "forward");
  legend_same_line("backward");
  legend_item(IM_COL32(90, 80, 190, 255), "backward");
  legend_same_line("send/recv");
  legend_item(kColComm, "send/recv");
  legend_same_line("bubble");
  legend_item(IM_COL32(60, 40, 44, 255), "bubble");
  legend_same_line("data-parallel comm");
  legend_item(kColExposed, "data-parallel comm");
  legend_same_line("optimizer");
  legend_item(kColMemory, "optimizer");
  char fraction[48];
  std::snprintf(fraction, sizeof fraction, "  bubble fraction %.1f %%",
                100.0 * ex_.prediction.bubble_fraction);
  same_line_if_fits(ImGui::CalcTextSize(fraction).x);
  ImGui::TextDisabled("%s", fraction);
  draw_measured_pipeline();  // the open profile's measured schedule under it (pipeline_measured.cpp)
}

// [SECTION] Search
// -------------------------------------------------------------------------------------------

void ExplorerPanel::run_search() {
  if (!ex_.ready) return;
  using namespace std::chrono_literals;
  if (ex_.search_dirty) {
    ex_.search_dirty = false;
    ex_.search_selected = -1;
    model::SearchOptions o;
    o.gpus = ex_.layout.gpus;
    // The batch of the layout shown: the table ranks layouts at the global batch the headline predicts.
    o.global_batch = ex_.valid ? ex_.resolved.global_batch : ex_.layout.global_batch;
    o.seq = ex_.valid ? ex_.resolved.seq : ex_.layout.seq;
    o.precision = ex_.layout.precision;
    o.mode = ex_.layout.mode;
    if (ex_.search_job.valid()) ex_.search_abandoned.push_back(std::move(ex_.search_job));
    ex_.search_job = std::async(std::launch::async, run_explorer_search, ex_.model, ex_.hw, ex_.eff, o, 12);
  }
  std::erase_if(ex_.search_abandoned,
                [](std::future<ExplorerSearch>& f) { return f.wait_for(0s) == std::future_status::ready; });
  if (ex_.search_job.valid() && ex_.search_job.wait_for(0s) == std::future_status::ready)
    ex_.search = ex_.search_job.get();
  if (ex_.search_job.valid()) {
    ImGui::TextDisabled("BEST LAYOUTS ON %d GPUs", ex_.layout.gpus);
    ImGui::TextColored(to_vec4(kColSelect), "%s searching the layouts of %s on %d GPUs...", spinner(),
                       ex_.model.name.c_str(), ex_.layout.gpus);
    return;
  }
  const model::SearchResult& result = ex_.search.result;
  ImGui::TextDisabled(
      "BEST LAYOUTS ON %d GPUs at a global batch of %d x %d tokens (search: %lld valid layouts, %lld fit; "
      "equal "
      "step times merged; click a row to load it)",
      ex_.layout.gpus, result.global_batch, result.seq, static_cast<long long>(result.evaluated),
      static_cast<long long>(result.fitting));
  if (!ex_.search.error.empty()) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", ex_.search.error.c_str());
    return;
  }
  char a[32], b[32], t[32];
  if (result.fitting == 0 && result.evaluated > 0) {
    ImGui::PushTextWrapPos(0);
    if (ex_.search.fits_from_gpus > 0) {
      const model::Prediction& best = ex_.search.fits_from_best;
      const model::ParallelConfig& c = best.config;
      ImGui::TextColored(to_vec4(kColExposed),
                         "No layout fits in %s per GPU on %d GPUs, whatever its ZeRO stage or recompute. "
                         "From %d GPUs one does: "
                         "TP %d PP %d DP %d CP %d EP %d, ZeRO %d, recompute %s, %s per GPU, step %s.",
                         bytes_text(a, sizeof a, ex_.hw.hbm_capacity_gib * 1073741824.0), ex_.layout.gpus,
                         ex_.search.fits_from_gpus, c.tp, c.pp, c.dp, c.cp, c.ep, c.zero,
                         std::string(model::to_string(c.recompute)).c_str(),
                         bytes_text(b, sizeof b, best.memory.total()),
                         seconds_text(t, sizeof t, best.step_time_s));
    } else {
      ImGui::TextColored(to_vec4(kColExposed),
                         "No layout fits in %s per GPU on %d GPUs, nor on up to %d at this global batch: a "
                         "smaller model, sequence or batch, or GPUs with more memory.",
                         bytes_text(a, sizeof a, ex_.hw.hbm_capacity_gib * 1073741824.0), ex_.layout.gpus,
                         ex_.search.tried_up_to_gpus);
    }
    ImGui::PopTextWrapPos();
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("##search", 13, flags,
                        ImVec2(0, std::max(120.0f, ImGui::GetContentRegionAvail().y)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"#", "TP", "PP", "DP", "CP", "EP", "micro-batch", "ZeRO", "recompute", "schedule",
                          "step time", "MFU / tokens/s / memory", "equal layouts"}) {
      ImGui::TableSetupColumn(h);
    }
    ImGui::TableHeadersRow();
    for (std::size_t g = 0; g < ex_.search.groups.size(); ++g) {
      const LayoutGroup& group = ex_.search.groups[g];
      const auto& pr = result.top[group.first];
      const auto& c = pr.config;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(static_cast<int>(g));
      const bool current = ex_.valid && c.tp == ex_.resolved.tp && c.pp == ex_.resolved.pp &&
                           c.dp == ex_.resolved.dp && c.cp == ex_.resolved.cp && c.ep == ex_.resolved.ep &&
                           c.micro_batch == ex_.resolved.micro_batch && c.zero == ex_.resolved.zero &&
                           c.recompute == ex_.resolved.recompute && c.schedule == ex_.resolved.schedule &&
                           c.virtual_stages == ex_.resolved.virtual_stages;
      std::snprintf(a, sizeof a, "%zu", g + 1);
      if (ImGui::Selectable(a, current, ImGuiSelectableFlags_SpanAllColumns)) {
        apply(c);
        ex_.search_selected = static_cast<int>(g);
      }
      ImGui::PopID();
      for (int v : {c.tp, c.pp, c.dp, c.cp, c.ep, c.micro_batch, c.zero}) {
        ImGui::TableNextColumn();
        ImGui::Text("%d", v);
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(model::to_string(c.recompute)).c_str());
      ImGui::TableNextColumn();
      if (c.schedule == model::Schedule::kInterleaved)
        ImGui::Text("interleaved v%d", c.virtual_stages);
      else
        ImGui::TextUnformatted(std::string(model::to_string(c.schedule)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(seconds_text(a, sizeof a, pr.step_time_s));
      ImGui::TableNextColumn();
      ImGui::Text("%.1f %%  %.0f tok/s  %s%s", 100.0 * pr.mfu, pr.tokens_per_s,
                  bytes_text(b, sizeof b, pr.memory.total()), pr.fits ? "" : " (no fit)");
      ImGui::TableNextColumn();
      if (group.count > 1) ImGui::Text("+%zu more: %s", group.count - 1, group.varies.c_str());
    }
    ImGui::EndTable();
  }
}

// The state dump's "explorer": the layout fields, the start, the save button and the measured pipeline's
// rows, the controls' rectangles.
void ExplorerPanel::dump_state(JsonWriter& j) const {
  j.key("explorer").begin_object();
  for (int f = 0; f < kLayoutFieldCount; ++f) {
    j.field(to_string(static_cast<LayoutField>(f)), field_of(ex_.layout, static_cast<LayoutField>(f)));
  }
  j.field("cp_comm", model::to_string(ex_.layout.cp_comm));
  j.key("cp_comm_combo").begin_array();
  for (float v : {ex_.cp_comm_rect.x, ex_.cp_comm_rect.y, ex_.cp_comm_rect.z, ex_.cp_comm_rect.w})
    j.value(static_cast<double>(v));
  j.end_array();
  j.field("cp_exposed_s", ex_.valid ? ex_.prediction.time.cp_exposed : 0.0);
  j.field("valid", ex_.valid);
  j.field("error", ex_.error);
  j.field("typing", ex_.typing);
  j.field("comparable", ex_.start.comparable).field("start", ex_.start.summary);
  j.field("model", ex_.model.name).field("hardware", ex_.hw.name);
  j.field("save_message", ex_.save_message);
  j.key("save_button").begin_array();
  for (float v :
       {ex_.save_button_rect.x, ex_.save_button_rect.y, ex_.save_button_rect.z, ex_.save_button_rect.w})
    j.value(static_cast<double>(v));
  j.end_array();
  j.key("pipeline_measured").begin_object();
  j.key("button").begin_array();
  for (float v : {pipeline_button_.x, pipeline_button_.y, pipeline_button_.z, pipeline_button_.w})
    j.value(static_cast<double>(v));
  j.end_array();
  j.key("rows").begin_array();
  for (const auto& row : pipeline_rows_) {
    j.begin_object().field("stage", row.stage).field("rank", row.rank).field("step", row.step);
    j.field("bubble_fraction", row.bubble_fraction).field("blocks", row.blocks);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.key("controls").begin_object();
  for (int f = 0; f < kLayoutFieldCount; ++f) {
    const ImVec4& r = ex_.control_rects[f];
    j.key(to_string(static_cast<LayoutField>(f))).begin_array();
    for (float v : {r.x, r.y, r.z, r.w}) j.value(static_cast<double>(v));
    j.end_array();
  }
  j.end_object();
  j.end_object();
}

}  // namespace meshscope::gui
