// View_Roofline.cpp: an extended roofline on a log-log canvas drawn by hand. Ceilings of the Explorer's
// hardware: compute per precision, HBM, and the network ceilings (NVLink, inter-node) for communication.
// Points: the Explorer configuration's operations (attention and MLP GEMMs, the attention core, each kind of
// communication it uses) at their arithmetic or communication intensity, the predicted whole step, and the
// measured step of the open profile against the model's FLOPs. Hover (or the table) says which ceiling binds.
//
// [SECTION] Explanations and table
// [SECTION] Points (computed by analysis/model/roofline.hpp when the Explorer re-predicts)
// [SECTION] Canvas (point labels placed by label_layout.hpp so that they never overlap)
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/model/roofline.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/label_layout.hpp"

namespace meshscope::gui {

namespace {

// [SECTION] Explanations
// ---------------------------------------------------------------------------------

using Bound = model::RooflineBound;
using OpPoint = model::RooflineOperation;
using Roof = model::Roof;

const char* bound_text(Bound b) {
  return model::to_string(b);
}

std::string explain(const OpPoint& p, const Roof& roof, const char* precision) {
  char buf[512], a[32], b[32];
  if (p.measured) {
    std::snprintf(
        buf, sizeof buf,
        "%s: %.1f TFLOP/s per GPU = the Explorer model's FLOPs per GPU over the profile's mean step time; "
        "%.0f%% of the %s peak (the gap is everything that is not useful math: exposed comm, idle, "
        "memory-bound kernels).",
        p.name.c_str(), p.attained() / 1e12, 100.0 * p.attained() / roof.peak, precision);
  } else if (p.comm) {
    std::snprintf(
        buf, sizeof buf, "%s: %.3g FLOP per byte on the link. %s %s vs compute to hide it %s: %s. %s",
        p.name.c_str(), p.intensity(), p.bound == Bound::kCompute ? "link time" : "link time (binding)",
        seconds_text(a, sizeof a, p.t_memory), seconds_text(b, sizeof b, p.t_compute),
        p.bound == Bound::kCompute ? "can hide behind compute" : "the link binds",
        p.bound == Bound::kCompute ? "Its point sits under the compute roof."
                                   : "Right of the link ceiling's ridge it would hide; here it cannot.");
  } else {
    const double ridge = roof.peak / roof.hbm;
    std::snprintf(
        buf, sizeof buf,
        "%s: %.3g FLOP/byte, ridge point %.0f FLOP/byte (%s peak / HBM). %s-bound: compute %s, memory %s.",
        p.name.c_str(), p.intensity(), ridge, precision, p.bound == Bound::kCompute ? "Compute" : "Memory",
        seconds_text(a, sizeof a, p.t_compute), seconds_text(b, sizeof b, p.t_memory));
  }
  return buf;
}

// [SECTION] Table
// --------------------------------------------------------------------------------------------

// Every point with its explanation (what hover shows).
void points_table(const std::vector<OpPoint>& points, const Roof& roof, const char* precision,
                  bool profile_open) {
  if (!ImGui::BeginTable("##points", 6,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                             ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, ImGui::GetContentRegionAvail().y)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("operation");
  ImGui::TableSetupColumn("intensity");
  ImGui::TableSetupColumn("attained");
  ImGui::TableSetupColumn("bound by");
  ImGui::TableSetupColumn("why", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", i + 1);
    ImGui::TableNextColumn();
    ImGui::TextColored(to_vec4(p.measured ? kColMeasured
                               : p.comm   ? kColComm
                                          : kColPredicted),
                       "%s", p.name.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.3g FLOP/B", p.intensity());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f TFLOP/s", p.attained() / 1e12);
    ImGui::TableNextColumn();
    if (p.measured || p.name.starts_with("whole step"))
      ImGui::TextDisabled("%.0f%% of peak", 100.0 * p.attained() / roof.peak);
    else
      ImGui::TextUnformatted(bound_text(p.bound));
    ImGui::TableNextColumn();
    text_ellipsis(explain(p, roof, precision));
  }
  if (profile_open) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("per-kernel measured points: the profile records no FLOP or byte counts per kernel");
  }
  ImGui::EndTable();
}

}  // namespace

// [SECTION] Points
// -------------------------------------------------------------------------------------------

// The Explorer layout's operations (computed by the model when the Explorer re-predicts, not here), the
// predicted whole step and, with a plausible profile open, the measured step.
std::vector<model::RooflineOperation> View::roofline_points(const model::Roof& roof) {
  std::vector<OpPoint> points;
  if (!ex_.valid) {
    ImGui::TextColored(to_vec4(kColExposed), "No operation points: the Explorer layout is invalid (%s)",
                       ex_.error.c_str());
    return points;
  }
  points = ex_.roofline;
  const OpPoint step = model::predicted_step_point(points, ex_.prediction, ex_.resolved.gpus);
  points.push_back(step);
  if (!loaded_) return points;
  double total = 0, n = 0;
  for (const auto& r : loaded_->analysis.ranks) {
    for (const auto& s : r.steps) total += static_cast<double>(s.cpu_end_ns - s.cpu_start_ns), n += 1;
  }
  if (n == 0 || total <= 0) return points;
  OpPoint m = step;
  m.name = "whole step (measured)";
  m.measured = true;
  m.time_s = total / n / 1e9;
  // A model that would need more than the peak in the measured step time is not the profile's job.
  if (m.attained() <= 1.2 * std::max(roof.peak, roof.peak_other)) {
    points.push_back(m);
  } else {
    char t[32];
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(
        to_vec4(kColExposed),
        "No measured step point: the Explorer model's %.3g FLOPs per GPU in the profile's %s "
        "step would need %.0f TFLOP/s, over the peak, so it is not this profile's job (set the "
        "model in the Explorer).",
        m.flops, seconds_text(t, sizeof t, m.time_s), m.attained() / 1e12);
    ImGui::PopTextWrapPos();
  }
  return points;
}

// [SECTION] Canvas
// -------------------------------------------------------------------------------------------

void View::draw_roofline() {
  if (ex_.dirty) explorer_repredict();
  if (!ex_.ready) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", ex_.spec_error.c_str());
    return;
  }
  const bool fp8 = ex_.precision == 1;
  const Roof roof = model::roof_of(ex_.hw, fp8 ? model::Precision::kFP8 : model::Precision::kBF16);
  const char* precision = fp8 ? "FP8" : "BF16";
  ImGui::Text("Extended roofline of %s", ex_.hw.name.c_str());
  ImGui::SameLine();
  char note[160];
  std::snprintf(note, sizeof note, "for %s, layout of the Explorer (change it there). Per GPU, %s.",
                ex_.model.name.c_str(), precision);
  text_ellipsis(note, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const std::vector<OpPoint> points = roofline_points(roof);
  roofline_canvas(points, roof, precision);
  points_table(points, roof, precision, loaded_ != nullptr);
}

// The log-log chart: grid, ceilings with their labels, the points and their numbers (placed so that no two
// labels overlap and none covers a point), the hover explanation and the legend.
void View::roofline_canvas(const std::vector<model::RooflineOperation>& points, const model::Roof& roof,
                           const char* precision) {
  const bool fp8 = ex_.precision == 1;
  const float table_h = px(190);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(avail.x, std::max(px(200), avail.y - table_h));
  ImGui::InvisibleButton("##roofline", size);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fh = ImGui::GetFontSize();
  const float ml = ImGui::CalcTextSize("000 TFLOP/s").x + px(12), mr = px(20), mt = px(14),
              mb = fh * 2 + px(14);
  const ImVec2 a(p0.x + ml, p0.y + mt), b(p0.x + size.x - mr, p0.y + size.y - mb);
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), IM_COL32(20, 23, 28, 255), 3.0f);
  const double x_lo = -1, x_hi = 7;  // log10 FLOP/byte
  const double y_hi = std::ceil(std::log10(std::max(roof.peak, roof.peak_other) * 2.0));
  const double y_lo = y_hi - 6;
  auto X = [&](double v) {
    return a.x + static_cast<float>((std::log10(v) - x_lo) / (x_hi - x_lo)) * (b.x - a.x);
  };
  auto Y = [&](double v) {
    return b.y - static_cast<float>((std::log10(v) - y_lo) / (y_hi - y_lo)) * (b.y - a.y);
  };
  char buf[128];
  for (int e = static_cast<int>(x_lo); e <= static_cast<int>(x_hi); ++e) {
    const float x = X(std::pow(10.0, e));
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), kColGrid);
    std::snprintf(buf, sizeof buf, e < 0 ? "%.1f" : "%.0f", std::pow(10.0, e));
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(buf).x / 2, b.y + px(4)), kColTextDim, buf);
  }
  for (int e = static_cast<int>(y_lo); e <= static_cast<int>(y_hi); ++e) {
    const float y = Y(std::pow(10.0, e));
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), kColGrid);
    const double v = std::pow(10.0, e);
    if (v >= 1e15)
      std::snprintf(buf, sizeof buf, "%.0f PFLOP/s", v / 1e15);
    else if (v >= 1e12)
      std::snprintf(buf, sizeof buf, "%.0f TFLOP/s", v / 1e12);
    else
      std::snprintf(buf, sizeof buf, "%.0f GFLOP/s", v / 1e9);
    dl->AddText(ImVec2(p0.x + px(6), y - fh / 2), kColTextDim, buf);
  }
  const char* axis =
      "arithmetic intensity (FLOP per HBM byte) / communication intensity (FLOP per byte on the link)";
  dl->AddText(ImVec2(std::max(a.x, (a.x + b.x - ImGui::CalcTextSize(axis).x) * 0.5f), b.y + fh + px(8)),
              kColTextDim, axis);
  dl->PushClipRect(a, b, true);
  // Ceilings: min(peak, bandwidth x intensity); their labels are obstacles for the point labels.
  std::vector<Box> obstacles;
  auto text_box = [&](ImVec2 at, const char* text) {
    const ImVec2 ts = ImGui::CalcTextSize(text);
    obstacles.push_back({at.x, at.y, at.x + ts.x, at.y + ts.y});
  };
  auto ceiling = [&](double bw, double peak, ImU32 col, const char* label, float thickness) {
    if (bw <= 0) return;
    const double ridge = peak / bw;
    const double x_start = std::pow(10.0, x_lo);
    dl->AddLine(ImVec2(X(x_start), Y(bw * x_start)), ImVec2(X(ridge), Y(peak)), col, thickness);
    const double lx = std::max(x_start * 2, ridge / 30);
    const ImVec2 lp(X(lx) + px(4), Y(bw * lx) - fh - px(6));
    dl->AddText(lp, col, label);
    text_box(lp, label);
  };
  auto flat = [&](double peak, ImU32 col, const char* label, float thickness) {
    dl->AddLine(ImVec2(a.x, Y(peak)), ImVec2(b.x, Y(peak)), col, thickness);
    const ImVec2 lp(b.x - ImGui::CalcTextSize(label).x - px(6), Y(peak) - fh - px(3));
    dl->AddText(lp, col, label);
    text_box(lp, label);
  };
  std::snprintf(buf, sizeof buf, "%s peak %.0f TFLOP/s", precision, roof.peak / 1e12);
  flat(roof.peak, kColText, buf, 2.0f);
  if (roof.peak_other > 0) {
    std::snprintf(buf, sizeof buf, "%s peak %.0f TFLOP/s", fp8 ? "BF16" : "FP8", roof.peak_other / 1e12);
    flat(roof.peak_other, IM_COL32(150, 150, 160, 160), buf, 1.0f);
  }
  std::snprintf(buf, sizeof buf, "HBM %.2f TB/s", roof.hbm / 1e12);
  ceiling(roof.hbm, roof.peak, kColMemory, buf, 2.0f);
  std::snprintf(buf, sizeof buf, "NVLink %.0f GB/s", roof.nvlink / 1e9);
  ceiling(roof.nvlink, roof.peak, kColComm, buf, 2.0f);
  std::snprintf(buf, sizeof buf, "inter-node %.0f GB/s", roof.network / 1e9);
  ceiling(roof.network, roof.peak, kColExposed, buf, 2.0f);
  // The legend sits in the top-left corner: an obstacle too.
  const ImVec2 legend_at(a.x + px(10), a.y + px(8));
  obstacles.push_back({legend_at.x, legend_at.y, b.x, legend_at.y + ImGui::GetFrameHeight()});
  // Points, then their numbers where they fit.
  const float r = px(6);
  std::vector<LabelRequest> labels;
  std::vector<std::size_t> label_of;
  int hover = -1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.intensity() <= 0 || p.attained() <= 0) continue;
    const ImVec2 c(X(p.intensity()), Y(p.attained()));
    const ImU32 col = p.measured ? kColMeasured : p.comm ? kColComm : kColPredicted;
    if (p.measured)
      dl->AddRectFilled(ImVec2(c.x - r + 1, c.y - r + 1), ImVec2(c.x + r - 1, c.y + r - 1), col);
    else if (p.comm)
      dl->AddTriangleFilled(ImVec2(c.x, c.y - r), ImVec2(c.x - r, c.y + r - 1), ImVec2(c.x + r, c.y + r - 1),
                            col);
    else
      dl->AddCircleFilled(c, r - 0.5f, col);
    obstacles.push_back({c.x - r, c.y - r, c.x + r, c.y + r});
    std::snprintf(buf, sizeof buf, "%zu", i + 1);
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    labels.push_back({c.x, c.y, ts.x, ts.y});
    label_of.push_back(i);
    if (hovered && std::abs(mouse.x - c.x) < r + 2 && std::abs(mouse.y - c.y) < r + 2)
      hover = static_cast<int>(i);
  }
  const auto placed = place_labels(labels, obstacles, {a.x, a.y, b.x, b.y}, r + px(2));
  for (std::size_t k = 0; k < placed.size(); ++k) {
    if (!placed[k]) continue;
    const Box& box = placed[k]->box;
    if (placed[k]->far)
      dl->AddLine(ImVec2(labels[k].x, labels[k].y), ImVec2((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2),
                  kColGrid);
    std::snprintf(buf, sizeof buf, "%zu", label_of[k] + 1);
    dl->AddText(ImVec2(box.x0, box.y0), kColText, buf);
  }
  dl->PopClipRect();
  if (hover >= 0) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::Text("%d.", hover + 1);
    ImGui::TextUnformatted(explain(points[static_cast<std::size_t>(hover)], roof, precision).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::SetCursorScreenPos(legend_at);
  legend_item(kColPredicted, "predicted operation");
  ImGui::SameLine();
  legend_item(kColComm, "predicted communication");
  ImGui::SameLine();
  legend_item(kColMeasured, "measured");
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p0.y + size.y + px(4)));
}

}  // namespace meshscope::gui
