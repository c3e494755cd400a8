// View_Roofline.cpp: an extended roofline on a log-log canvas drawn by hand. Ceilings of the Explorer's
// hardware: compute per precision, HBM, and the network ceilings (NVLink, inter-node) for communication.
// Points: the Explorer configuration's operations (attention and MLP GEMMs, the attention core, each kind of
// communication it uses) at their arithmetic or communication intensity, the predicted whole step, and the
// measured step of the open profile against the model's FLOPs. Hover (or the table) says which ceiling binds.
//
// [SECTION] Operation points (computed by analysis/model/roofline.hpp when the Explorer re-predicts)
// [SECTION] Canvas
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/model/roofline.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"

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

}  // namespace

// [SECTION] Canvas
// -------------------------------------------------------------------------------------------

void View::draw_roofline() {
  if (ex_.dirty) explorer_repredict();
  if (!ex_.ready) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", ex_.spec_error.c_str());
    return;
  }
  const auto& hw = ex_.hw;
  const bool fp8 = ex_.precision == 1;
  const Roof roof = model::roof_of(hw, fp8 ? model::Precision::kFP8 : model::Precision::kBF16);
  const char* precision = fp8 ? "FP8" : "BF16";

  ImGui::Text("Extended roofline of %s", hw.name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("for %s, layout of the Explorer (change it there). Per GPU, %s.",
                      ex_.model.name.c_str(), precision);
  std::vector<OpPoint> points;
  if (ex_.valid) {
    // Computed by the model when the Explorer re-predicts (explorer_repredict), not here.
    points = ex_.roofline;
    const OpPoint step = model::predicted_step_point(points, ex_.prediction, ex_.resolved.gpus);
    points.push_back(step);
    if (loaded_) {
      double total = 0, n = 0;
      for (const auto& r : loaded_->analysis.ranks) {
        for (const auto& s : r.steps) total += static_cast<double>(s.cpu_end_ns - s.cpu_start_ns), n += 1;
      }
      if (n > 0 && total > 0) {
        OpPoint m = step;
        m.name = "whole step (measured)";
        m.measured = true;
        m.time_s = total / n / 1e9;
        // A model that would need more than the peak in the measured step time is not the profile's job.
        if (m.attained() <= 1.2 * std::max(roof.peak, roof.peak_other)) {
          points.push_back(m);
        } else {
          char t[32];
          ImGui::TextColored(
              to_vec4(kColExposed),
              "No measured step point: the Explorer model's %.3g FLOPs per GPU in the profile's %s "
              "step would need %.0f TFLOP/s, over the peak, so it is not this profile's job (set the "
              "model in the Explorer).",
              m.flops, seconds_text(t, sizeof t, m.time_s), m.attained() / 1e12);
        }
      }
    }
  } else {
    ImGui::TextColored(to_vec4(kColExposed), "No operation points: the Explorer layout is invalid (%s)",
                       ex_.error.c_str());
  }

  // Canvas.
  const float table_h = 190.0f;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(avail.x, std::max(200.0f, avail.y - table_h));
  ImGui::InvisibleButton("##roofline", size);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float ml = 90, mr = 20, mt = 14, mb = 42;
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
    dl->AddText(ImVec2(x - 8, b.y + 4), kColTextDim, buf);
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
    dl->AddText(ImVec2(p0.x + 6, y - 8), kColTextDim, buf);
  }
  dl->AddText(
      ImVec2((a.x + b.x) * 0.5f - 210, b.y + 22), kColTextDim,
      "arithmetic intensity (FLOP per HBM byte) / communication intensity (FLOP per byte on the link)");
  dl->PushClipRect(a, b, true);
  // Ceilings: min(peak, bandwidth x intensity).
  auto ceiling = [&](double bw, double peak, ImU32 col, const char* label, float thickness) {
    if (bw <= 0) return;
    const double ridge = peak / bw;
    const double x_start = std::pow(10.0, x_lo);
    dl->AddLine(ImVec2(X(x_start), Y(bw * x_start)), ImVec2(X(ridge), Y(peak)), col, thickness);
    const double lx = std::max(x_start * 2, ridge / 30);
    const ImVec2 lp(X(lx) + 4, Y(bw * lx) - 20);
    dl->AddText(lp, col, label);
  };
  auto flat = [&](double peak, ImU32 col, const char* label, float thickness) {
    dl->AddLine(ImVec2(a.x, Y(peak)), ImVec2(b.x, Y(peak)), col, thickness);
    dl->AddText(ImVec2(b.x - ImGui::CalcTextSize(label).x - 6, Y(peak) - 18), col, label);
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
  // Points.
  int hover = -1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.intensity() <= 0 || p.attained() <= 0) continue;
    const ImVec2 c(X(p.intensity()), Y(p.attained()));
    const ImU32 col = p.measured ? kColMeasured : p.comm ? kColComm : kColPredicted;
    if (p.measured) {
      dl->AddRectFilled(ImVec2(c.x - 5, c.y - 5), ImVec2(c.x + 5, c.y + 5), col);
    } else if (p.comm) {
      dl->AddTriangleFilled(ImVec2(c.x, c.y - 6), ImVec2(c.x - 6, c.y + 5), ImVec2(c.x + 6, c.y + 5), col);
    } else {
      dl->AddCircleFilled(c, 5.5f, col);
    }
    std::snprintf(buf, sizeof buf, "%zu", i + 1);
    dl->AddText(ImVec2(c.x + 7, c.y - 7), kColText, buf);
    if (hovered && std::abs(mouse.x - c.x) < 8 && std::abs(mouse.y - c.y) < 8) hover = static_cast<int>(i);
  }
  dl->PopClipRect();
  if (hover >= 0) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextUnformatted(explain(points[static_cast<std::size_t>(hover)], roof, precision).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  // Legend in the canvas corner.
  ImGui::SetCursorScreenPos(ImVec2(a.x + 10, a.y + 8));
  legend_item(kColPredicted, "predicted operation");
  ImGui::SameLine();
  legend_item(kColComm, "predicted communication");
  ImGui::SameLine();
  legend_item(kColMeasured, "measured");
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p0.y + size.y + 4));

  // Table: every point with its explanation (what hover shows).
  if (ImGui::BeginTable("##points", 6,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                            ImGuiTableFlags_SizingFixedFit,
                        ImVec2(0, ImGui::GetContentRegionAvail().y))) {
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
      const std::string why = explain(p, roof, precision);
      ImGui::TextUnformatted(why.c_str());
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
        ImGui::TextUnformatted(why.c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
    }
    if (loaded_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TableNextColumn();
      ImGui::TextDisabled(
          "per-kernel measured points: the profile records no FLOP or byte counts per kernel");
    }
    ImGui::EndTable();
  }
}

}  // namespace meshscope::gui
