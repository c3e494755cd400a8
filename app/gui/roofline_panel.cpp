// roofline_panel.cpp: the Roofline panel, an extended roofline on a log-log canvas drawn by hand. Ceilings of
// the open profile's own GPU (the Explorer's hardware without a profile, or when the profile's GPU has no
// preset): compute per precision, HBM, and the network ceilings (the scale-up link as its vendor names it:
// NVLink, Infinity Fabric, PCIe; inter-node) for communication. Predicted points: the Explorer
// configuration's operations (attention and MLP GEMMs, the attention core, each kind of communication it
// uses) at their arithmetic or communication intensity and the predicted whole step. Measured points: the
// profile's measured roofline (analysis/compare/measured.hpp, read once at load into
// LoadedProfile::roofline): every operator name and recorded shapes, every category, and the mean step (its
// kernels' FLOPs over its GPU span). Hover (or the table) names the operation, its shapes and which ceiling
// binds. Measured operators above the peak are left out and counted in a note.
//
// [SECTION] Explanations
// [SECTION] Table (numbered points, then the measured operator shapes)
// [SECTION] Points (computed by analysis/model/roofline.hpp when the Explorer re-predicts)
// [SECTION] Canvas (point labels placed by label_layout.hpp so that they never overlap)
#include "app/gui/roofline_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/compare/measured.hpp"
#include "analysis/model/roofline.hpp"
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
  if (p.comm) {
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

enum class MeasuredKind { kOp, kCategory, kStep };

// The colour of a measured operator's category (its point on the chart and its row in the table).
ImU32 category_color(measure::WorkCategory category) {
  switch (category) {
    case measure::WorkCategory::kGemm:
      return IM_COL32(90, 200, 250, 255);
    case measure::WorkCategory::kAttention:
      return IM_COL32(250, 210, 90, 255);
    case measure::WorkCategory::kConv:
      return IM_COL32(120, 220, 140, 255);
    case measure::WorkCategory::kNorm:
      return IM_COL32(240, 130, 200, 255);
    case measure::WorkCategory::kElementwise:
    case measure::WorkCategory::kOther:
      break;
  }
  return kColCpu;
}

// The peak a measured point is checked against: its operands' precision's (compare::ceilings_of).
double peak_of(const MeasuredPoint& p, const model::HardwareSpec& hw) {
  return measure::peak_for(p.precision, compare::ceilings_of(hw));
}

std::string explain(const MeasuredPoint& p, MeasuredKind kind, const model::HardwareSpec& hw) {
  char a[32], b[32], buf[768];
  const double peak = peak_of(p, hw);
  const char* of_peak_of = measure::peak_name(p.precision, compare::ceilings_of(hw));
  seconds_text(a, sizeof a, p.seconds);
  char rate[48];
  flop_rate_text(rate, sizeof rate, p.attained());
  switch (kind) {
    case MeasuredKind::kOp:
      std::snprintf(
          buf, sizeof buf,
          "%s %s (%s): %lld call(s), %lld kernel(s), %s of kernel time; %.4g FLOP, %.4g bytes: %.3g "
          "FLOP/byte at %s, %.0f%% of %s's %s peak.",
          p.name.c_str(), p.dims.c_str(), measure::to_string(p.category), static_cast<long long>(p.count),
          static_cast<long long>(p.kernels), a, p.flops, p.bytes, p.intensity(), rate,
          100.0 * p.attained() / peak, hw.name.c_str(), of_peak_of);
      break;
    case MeasuredKind::kCategory:
      std::snprintf(buf, sizeof buf,
                    "every %s operator measured together: %lld call(s), %lld kernel(s), %s of kernel time; "
                    "%.4g FLOP, %.4g bytes: %.3g FLOP/byte at %s, %.0f%% of the BF16 peak.",
                    p.name.c_str(), static_cast<long long>(p.count), static_cast<long long>(p.kernels), a,
                    p.flops, p.bytes, p.intensity(), rate, 100.0 * p.attained() / peak);
      break;
    case MeasuredKind::kStep:
      std::snprintf(
          buf, sizeof buf,
          "mean step (%lld rank-steps): the FLOPs and bytes of the kernels that started in the step "
          "(from the recorded shapes), %.4g FLOP and %.4g bytes, over its GPU span %s: %s, %.0f%% of "
          "the BF16 peak (the gap is idle time, communication and work without recorded shapes). Same "
          "step as the Explorer's measured column.",
          static_cast<long long>(p.count), p.flops, p.bytes, seconds_text(b, sizeof b, p.seconds), rate,
          100.0 * p.attained() / peak);
      break;
  }
  return buf;
}

// The measured points a chart draws: operator shapes, categories and the step, each at or under its peak.
struct Drawn {
  const MeasuredPoint* point;
  MeasuredKind kind;
  int number;  // 1-based table number, 0 for operator shapes (not numbered)
};

}  // namespace

// [SECTION] Table
// --------------------------------------------------------------------------------------------

// Every numbered point with its explanation (what hover shows), then the measured operator shapes by kernel
// time.
void RooflinePanel::table(const std::vector<OpPoint>& points, const Roof& roof, const char* precision,
                          const model::HardwareSpec& hw, const MeasuredPoints* measured) {
  char rate[48];
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
    ImGui::TextColored(to_vec4(p.comm ? kColComm : kColPredicted), "%s", p.name.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.3g FLOP/B", p.intensity());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(flop_rate_text(rate, sizeof rate, p.attained()));
    ImGui::TableNextColumn();
    if (p.name.starts_with("whole step"))
      ImGui::TextDisabled("%.0f%% of peak", 100.0 * p.attained() / roof.peak);
    else
      ImGui::TextUnformatted(bound_text(p.bound));
    ImGui::TableNextColumn();
    text_ellipsis(explain(p, roof, precision));
  }
  if (measured != nullptr) {
    auto row = [&](const MeasuredPoint& p, MeasuredKind kind, int number) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (number > 0) ImGui::Text("%d", number);
      ImGui::TableNextColumn();
      const std::string name = kind == MeasuredKind::kCategory ? "measured " + p.name : p.name;
      ImGui::TextColored(to_vec4(kind == MeasuredKind::kOp ? category_color(p.category) : kColMeasured), "%s",
                         name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.3g FLOP/B", p.intensity());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(flop_rate_text(rate, sizeof rate, p.attained()));
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%.0f%% of peak", 100.0 * p.attained() / peak_of(p, hw));
      ImGui::TableNextColumn();
      text_ellipsis(explain(p, kind, hw));
    };
    int number = static_cast<int>(points.size());
    for (const auto& c : measured->categories) row(c, MeasuredKind::kCategory, ++number);
    if (measured->step) row(*measured->step, MeasuredKind::kStep, ++number);
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(measured->ops.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i)
        row(measured->ops[static_cast<std::size_t>(i)], MeasuredKind::kOp, 0);
    }
  }
  ImGui::EndTable();
}

// [SECTION] Points
// -------------------------------------------------------------------------------------------

// The Explorer layout's operations (computed by the model when the Explorer re-predicts, not here) and the
// predicted whole step; none when PREDICTED is false (ceilings of another GPU than the Explorer predicts
// for).
std::vector<model::RooflineOperation> RooflinePanel::predicted_points(const FromExplorer& explorer,
                                                                      bool predicted) {
  std::vector<OpPoint> points;
  if (!predicted) return points;
  if (explorer.prediction == nullptr) {
    ImGui::TextColored(to_vec4(kColExposed), "No predicted points: the Explorer layout is invalid (%s)",
                       explorer.layout_error.c_str());
    return points;
  }
  points = *explorer.operations;
  points.push_back(model::predicted_step_point(points, *explorer.prediction, explorer.gpus));
  return points;
}

// [SECTION] Canvas
// -------------------------------------------------------------------------------------------

// Ceilings: the profile's own GPU when it has a hardware preset, else the Explorer's hardware. Predicted
// points: the Explorer's model and layout when it predicts for those same ceilings. Measured points: the
// open profile's measured roofline (LoadedProfile::roofline, built once when it was loaded).
void RooflinePanel::draw(const LoadedProfile* loaded, const FromExplorer& explorer) {
  shown_ = RooflineShown{};
  const compare::MeasuredModel* mm = loaded && loaded->measured ? &*loaded->measured : nullptr;
  const bool profile_hw = mm != nullptr && mm->hardware.has_value();
  const model::HardwareSpec& hw = profile_hw ? *mm->hardware : *explorer.hardware;
  const bool predicted = hw.name == explorer.hardware->name;
  const bool fp8 = explorer.precision == model::Precision::kFP8;
  const Roof roof = model::roof_of(hw, fp8 ? model::Precision::kFP8 : model::Precision::kBF16);
  const char* precision = fp8 ? "FP8" : hw.bf16 ? "BF16" : "FP16";  // a V100's 16-bit tensor peak is FP16's
  shown_.hardware = hw.name;
  ImGui::Text("Extended roofline of %s", hw.name.c_str());
  ImGui::SameLine();
  const std::string where =
      profile_hw ? "the profile's GPU '" + mm->workload.gpu + "'" : explorer.hardware_note;

  std::string note = "(" + where + "). Per GPU, " + precision + ".";
  text_ellipsis(note, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  // Which model the predicted points are of, and whether it is what the profile ran.
  if (predicted) {
    const model::ModelSpec& model = *explorer.model;
    const ProfileStart& start = *explorer.start;
    std::string line = "predicted points: " + model.name + " on " + std::to_string(explorer.gpus) +
                       " GPUs, the Explorer's layout (change it there)";
    if (loaded)
      line += start.comparable && start.model && model.name == start.model->name &&
                      model.layers == start.model->layers && model.hidden == start.model->hidden &&
                      model.heads == start.model->heads
                  ? "; the model the profile ran"
                  : "; not the profile's model" +
                        (start.reason.empty() ? std::string() : ": " + display_reason(start.reason));
    text_ellipsis(line, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  } else {
    text_ellipsis("predicted points left out: the Explorer predicts for " + explorer.hardware->name +
                      ", these are the ceilings of the profile's " + hw.name + " (choose it in the Explorer)",
                  0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  }
  const MeasuredPoints* measured = mm != nullptr ? &loaded->roofline : nullptr;
  if (loaded && mm == nullptr) shown_.notes.push_back("no measured points: " + loaded->measured_error);
  if (mm != nullptr) {
    shown_.notes = mm->roofline.notes;
    if (!profile_hw)
      shown_.notes.push_back("the profile's GPU has no hardware preset: measured points are drawn against " +
                             hw.name + "'s ceilings, not their own");
    if (measured->bytes_only > 0)
      shown_.notes.push_back(std::to_string(measured->bytes_only) +
                             " operator shape(s) move bytes but do no FLOPs (element-wise, copies, "
                             "reductions): not on the FLOP/s axis");
  }
  const std::vector<OpPoint> points = predicted_points(explorer, predicted);
  canvas(points, roof, precision, fp8, hw, measured);
  if (shown_.left_out > 0)
    shown_.notes.push_back(std::to_string(shown_.left_out) + " measured point(s) above the peak of " +
                           hw.name + " left out");
  for (const auto& n : shown_.notes)
    text_ellipsis("note: " + n, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  table(points, roof, precision, hw, measured);
}

// The log-log chart: grid, ceilings with their labels, the points and their numbers (placed so that no two
// labels overlap and none covers a point), the hover explanation and the legend.
namespace {

// The chart's log-log axes: decades of intensity (FLOP per byte, x) and of FLOP/s (y) on the plot rectangle
// [A, B]. Six decades under the peak, more (up to three) when measured points lie lower.
struct RooflineAxes {
  ImVec2 a, b;
  double x_lo = -1, x_hi = 7, y_lo = 0, y_hi = 0;
  float X(double v) const {
    return a.x + static_cast<float>((std::log10(v) - x_lo) / (x_hi - x_lo)) * (b.x - a.x);
  }
  float Y(double v) const {
    return b.y - static_cast<float>((std::log10(v) - y_lo) / (y_hi - y_lo)) * (b.y - a.y);
  }
};

RooflineAxes roofline_axes(ImVec2 a, ImVec2 b, const model::Roof& roof, const MeasuredPoints* measured) {
  RooflineAxes ax{a, b};
  ax.y_hi = std::ceil(std::log10(std::max(roof.peak, roof.peak_other) * 2.0));
  ax.y_lo = ax.y_hi - 6;
  if (measured != nullptr) {
    for (const auto& p : measured->ops) {
      if (p.intensity() > 0)
        ax.x_lo = std::min(ax.x_lo, std::max(-3.0, std::floor(std::log10(p.intensity()) - 0.05)));
      if (p.attained() > 0)
        ax.y_lo = std::min(ax.y_lo, std::max(ax.y_hi - 9, std::floor(std::log10(p.attained()) - 0.05)));
    }
  }
  return ax;
}

// The grid of decades with their values, and the x axis' title under it; the FLOP/s values from LEFT.
void draw_roofline_grid(ImDrawList* dl, const RooflineAxes& ax, float left) {
  const ImVec2 a = ax.a, b = ax.b;
  const float fh = ImGui::GetFontSize();
  char buf[128];
  for (int e = static_cast<int>(ax.x_lo); e <= static_cast<int>(ax.x_hi); ++e) {
    const float x = ax.X(std::pow(10.0, e));
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), kColGrid);
    std::snprintf(buf, sizeof buf, e < 0 ? "%g" : "%.0f", std::pow(10.0, e));
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(buf).x / 2, b.y + px(4)), kColTextDim, buf);
  }
  for (int e = static_cast<int>(ax.y_lo); e <= static_cast<int>(ax.y_hi); ++e) {
    const float y = ax.Y(std::pow(10.0, e));
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), kColGrid);
    const double v = std::pow(10.0, e);
    if (v >= 1e15)
      std::snprintf(buf, sizeof buf, "%.0f PFLOP/s", v / 1e15);
    else if (v >= 1e12)
      std::snprintf(buf, sizeof buf, "%.0f TFLOP/s", v / 1e12);
    else if (v >= 1e9)
      std::snprintf(buf, sizeof buf, "%.0f GFLOP/s", v / 1e9);
    else
      std::snprintf(buf, sizeof buf, "%.0f MFLOP/s", v / 1e6);
    dl->AddText(ImVec2(left, y - fh / 2), kColTextDim, buf);
  }
  const char* axis =
      "arithmetic intensity (FLOP per HBM byte) / communication intensity (FLOP per byte on the link)";
  dl->AddText(ImVec2(std::max(a.x, (a.x + b.x - ImGui::CalcTextSize(axis).x) * 0.5f), b.y + fh + px(8)),
              kColTextDim, axis);
}

// The ceilings, each min(peak, bandwidth × intensity), with their labels, which are added to OBSTACLES for
// the point labels: the peak of PRECISION and the other 16-/8-bit peak, the FP32 operands' peak when measured
// points run in FP32, HBM, the scale-up link and the inter-node network of HW. A label goes where it covers
// neither another label nor one of MARKERS (the points), when such a spot exists along its line.
void draw_ceilings(ImDrawList* dl, const RooflineAxes& ax, const model::Roof& roof,
                   const model::HardwareSpec& hw, const char* precision, bool fp8,
                   const MeasuredPoints* measured, const std::vector<Box>& markers,
                   std::vector<Box>& obstacles) {
  const ImVec2 a = ax.a, b = ax.b;
  const float fh = ImGui::GetFontSize();
  char buf[128];
  // The labels are drawn after every line, each on a plate of the chart's colour, so that no line runs
  // through a label's text.
  struct Label {
    ImVec2 at;
    ImU32 col;
    std::string text;
  };
  std::vector<Label> texts;
  auto text_box = [&](ImVec2 at, const char* text) {
    const ImVec2 ts = ImGui::CalcTextSize(text);
    obstacles.push_back({at.x, at.y, at.x + ts.x, at.y + ts.y});
  };
  auto covered = [&](const Box& box) {
    auto hit = [&](const Box& o) { return o.overlaps(box); };
    return std::any_of(obstacles.begin(), obstacles.end(), hit) ||
           std::any_of(markers.begin(), markers.end(), hit);
  };
  auto ceiling = [&](double bw, double peak, ImU32 col, const char* label, float thickness) {
    if (bw <= 0) return;
    const double ridge = peak / bw;
    const double x_start = std::pow(10.0, ax.x_lo);
    dl->AddLine(ImVec2(ax.X(x_start), ax.Y(bw * x_start)), ImVec2(ax.X(ridge), ax.Y(peak)), col, thickness);
    // Along its line, at the first of a few spots below the ridge whose box is free of the labels drawn
    // before (the lines are parallel: at one fixed spot their labels would sit on one level and run
    // together).
    const ImVec2 ts = ImGui::CalcTextSize(label);
    // Spots from 3x to 1000x below the ridge, a sixth of a decade apart, nearest 30x first; above the line,
    // then under it (the measured points crowd along the lines).
    auto spot = [&](double below_ridge, bool under) {
      const double lx = std::max(x_start * 2, ridge / below_ridge);
      return ImVec2(ax.X(lx) + px(4), ax.Y(bw * lx) + (under ? px(6) : -fh - px(6)));
    };
    std::vector<double> factors;
    for (int k = 3; k <= 18; ++k) factors.push_back(std::pow(10.0, k / 6.0));
    std::stable_sort(factors.begin(), factors.end(), [](double l, double r) {
      return std::abs(std::log10(l / 30)) < std::abs(std::log10(r / 30));
    });
    ImVec2 lp = spot(30, false);
    bool found = false;
    for (const bool under : {false, true}) {
      for (std::size_t i = 0; i < factors.size() && !found; ++i) {
        const ImVec2 at = spot(factors[i], under);
        const Box box{at.x - px(10), at.y, at.x + ts.x + px(10), at.y + ts.y};  // a word's gap either side
        const bool inside = box.x0 >= a.x && box.x1 <= b.x && box.y0 >= a.y && box.y1 <= b.y;
        if (inside && !covered(box)) {
          lp = at;
          found = true;
        }
      }
    }
    texts.push_back({lp, col, label});
    text_box(lp, label);
  };
  auto flat = [&](double peak, ImU32 col, const char* label, float thickness) {
    dl->AddLine(ImVec2(a.x, ax.Y(peak)), ImVec2(b.x, ax.Y(peak)), col, thickness);
    // Above its line at the right; when a label or a point is there, left of it, as far as the chart goes;
    // then the same under the line; where the line is crowded all along, above it at the right.
    const float w = ImGui::CalcTextSize(label).x;
    const ImVec2 first(b.x - w - px(6), ax.Y(peak) - fh - px(3));
    ImVec2 lp = first;
    bool placed = false;
    for (const float y : {first.y, ax.Y(peak) + px(3)}) {
      for (float x = first.x; !placed && x >= a.x + px(4);) {
        const Box box{x - px(6), y, x + w + px(6), y + fh};
        if (box.y0 < a.y || box.y1 > b.y) break;
        float left_of = x;  // the leftmost start of what this spot would cover
        for (const std::vector<Box>* boxes : {static_cast<const std::vector<Box>*>(&obstacles), &markers}) {
          for (const Box& o : *boxes) {
            if (o.overlaps(box)) left_of = std::min(left_of, o.x0 - w - px(8));
          }
        }
        if (left_of == x) {
          lp = ImVec2(x, y);
          placed = true;
        }
        x = left_of;
      }
      if (placed) break;
    }
    texts.push_back({lp, col, label});
    text_box(lp, label);
  };
  char rate[48];
  std::snprintf(buf, sizeof buf, "%s peak %s", precision, flop_rate_text(rate, sizeof rate, roof.peak));
  flat(roof.peak, kColText, buf, 2.0f);
  if (roof.peak_other > 0) {
    std::snprintf(buf, sizeof buf, "%s peak %s", fp8 ? (hw.bf16 ? "BF16" : "FP16") : "FP8",
                  flop_rate_text(rate, sizeof rate, roof.peak_other));
    flat(roof.peak_other, IM_COL32(150, 150, 160, 160), buf, 1.0f);
  }
  // The FP32 operands' ceiling (TF32 where the GPU has it), drawn when measured points run in FP32.
  const bool fp32_points =
      measured != nullptr &&
      std::any_of(measured->ops.begin(), measured->ops.end(),
                  [](const MeasuredPoint& p) { return p.precision == measure::WorkPrecision::kFP32; });
  const measure::WorkCeilings work_ceilings = compare::ceilings_of(hw);
  if (fp32_points && work_ceilings.peak_fp32_flops > 0) {
    std::snprintf(buf, sizeof buf, "%s peak %s (FP32 operands)", work_ceilings.fp32_is_tf32 ? "TF32" : "FP32",
                  flop_rate_text(rate, sizeof rate, work_ceilings.peak_fp32_flops));
    flat(work_ceilings.peak_fp32_flops, IM_COL32(200, 170, 90, 200), buf, 1.5f);
  }
  std::snprintf(buf, sizeof buf, "HBM %s", bandwidth_text(rate, sizeof rate, roof.hbm));
  ceiling(roof.hbm, roof.peak, kColMemory, buf, 2.0f);
  std::snprintf(buf, sizeof buf, "%s %s", hw.intra_node_link.c_str(),
                bandwidth_text(rate, sizeof rate, roof.nvlink));
  ceiling(roof.nvlink, roof.peak, kColComm, buf, 2.0f);
  std::snprintf(buf, sizeof buf, "inter-node %s", bandwidth_text(rate, sizeof rate, roof.network));
  ceiling(roof.network, roof.peak, kColExposed, buf, 2.0f);
  for (const Label& l : texts) {
    const ImVec2 ts = ImGui::CalcTextSize(l.text.c_str());
    dl->AddRectFilled(ImVec2(l.at.x - px(2), l.at.y), ImVec2(l.at.x + ts.x + px(2), l.at.y + ts.y),
                      IM_COL32(20, 23, 28, 215), 2.0f);
    dl->AddText(l.at, l.col, l.text.c_str());
  }
}

// The legend at the cursor: predicted operations and communication, measured points, and the colours of the
// measured operators' categories when some are drawn.
void draw_roofline_legend(bool any_measured) {
  legend_item(kColPredicted, "predicted operation");
  legend_same_line("predicted communication");
  legend_item(kColComm, "predicted communication");
  legend_same_line("measured: category, step");
  legend_item(kColMeasured, "measured: category, step");
  for (int c = 1; c <= measure::kWorkCategoryCount && any_measured; ++c) {
    const auto category = static_cast<measure::WorkCategory>(c);
    if (category == measure::WorkCategory::kElementwise || category == measure::WorkCategory::kOther)
      continue;
    legend_same_line(measure::to_string(category));
    legend_item(category_color(category), measure::to_string(category));
  }
}

}  // namespace

void RooflinePanel::canvas(const std::vector<model::RooflineOperation>& points, const model::Roof& roof,
                           const char* precision, bool fp8, const model::HardwareSpec& hw,
                           const MeasuredPoints* measured) {
  // The legend above the chart, wrapping at the window's edge: inside it, it covered the peaks' labels.
  const bool any_measured = measured != nullptr && (!measured->ops.empty() || !measured->categories.empty() ||
                                                    measured->step.has_value());
  draw_roofline_legend(any_measured);
  const float table_h = px(190);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(avail.x, std::max(px(200), avail.y - table_h));
  ImGui::InvisibleButton("##roofline", size);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fh = ImGui::GetFontSize();
  const float ml = ImGui::CalcTextSize("000 TFLOP/s").x + px(12), mr = px(20), mt = px(10),
              mb = fh * 2 + px(14);
  const ImVec2 a(p0.x + ml, p0.y + mt), b(p0.x + size.x - mr, p0.y + size.y - mb);
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), IM_COL32(20, 23, 28, 255), 3.0f);
  const RooflineAxes ax = roofline_axes(a, b, roof, measured);
  char buf[128];
  draw_roofline_grid(dl, ax, p0.x + px(6));
  dl->PushClipRect(a, b, true);
  // Measured points (operator shapes small and unnumbered, then the categories and the step, numbered after
  // the predicted points), each at or under the peak of its precision: one above it is left out and counted.
  // HW: the ceilings' hardware (the profile's when it has one, as draw() chose).
  std::vector<Drawn> drawn;
  if (measured != nullptr) {
    int number = static_cast<int>(points.size());
    for (const auto& c : measured->categories) drawn.push_back({&c, MeasuredKind::kCategory, ++number});
    if (measured->step) drawn.push_back({&*measured->step, MeasuredKind::kStep, ++number});
    for (const auto& o : measured->ops) drawn.push_back({&o, MeasuredKind::kOp, 0});
  }
  const float r = px(6);
  // Where every point will be drawn, for the ceilings' labels to keep clear of.
  std::vector<Box> markers;
  for (const Drawn& d : drawn) {
    const MeasuredPoint& p = *d.point;
    if (p.intensity() <= 0 || p.attained() <= 0 ||
        (d.kind == MeasuredKind::kOp && p.attained() > peak_of(p, hw)))
      continue;
    const float s = d.kind == MeasuredKind::kOp ? px(3) : r;
    const ImVec2 c(ax.X(p.intensity()), ax.Y(p.attained()));
    markers.push_back({c.x - s, c.y - s, c.x + s, c.y + s});
  }
  for (const auto& p : points) {
    if (p.intensity() <= 0 || p.attained() <= 0) continue;
    const ImVec2 c(ax.X(p.intensity()), ax.Y(p.attained()));
    markers.push_back({c.x - r, c.y - r, c.x + r, c.y + r});
  }
  std::vector<Box> obstacles;
  draw_ceilings(dl, ax, roof, hw, precision, fp8, measured, markers, obstacles);
  shown_.ceiling_labels.clear();
  for (const Box& box : obstacles) shown_.ceiling_labels.push_back({box.x0, box.y0, box.x1, box.y1});
  shown_.markers.clear();
  for (const Box& box : markers) shown_.markers.push_back({box.x0, box.y0, box.x1, box.y1});
  std::vector<LabelRequest> labels;
  std::vector<int> label_of;  // the number each label shows
  int hover = -1, hover_measured = -1;
  for (std::size_t k = drawn.size(); k-- > 0;) {  // operator shapes first, under the numbered points
    const MeasuredPoint& p = *drawn[k].point;
    if (p.intensity() <= 0 || p.attained() <= 0) continue;
    if (drawn[k].kind == MeasuredKind::kOp && p.attained() > peak_of(p, hw)) {
      ++shown_.left_out;
      continue;
    }
    const ImVec2 c(ax.X(p.intensity()), ax.Y(p.attained()));
    const float s = drawn[k].kind == MeasuredKind::kOp ? px(3) : r - 1;
    if (drawn[k].kind == MeasuredKind::kOp) {
      dl->AddRectFilled(ImVec2(c.x - s, c.y - s), ImVec2(c.x + s, c.y + s), category_color(p.category));
    } else if (drawn[k].kind == MeasuredKind::kCategory) {
      dl->AddRectFilled(ImVec2(c.x - s, c.y - s), ImVec2(c.x + s, c.y + s), kColMeasured);
      dl->AddRect(ImVec2(c.x - s, c.y - s), ImVec2(c.x + s, c.y + s), category_color(p.category), 0, 0, 2.0f);
    } else {
      dl->AddQuadFilled(ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r),
                        ImVec2(c.x - r, c.y), kColMeasured);
    }
    ++shown_.measured;
    if (drawn[k].number > 0) {
      obstacles.push_back({c.x - r, c.y - r, c.x + r, c.y + r});
      std::snprintf(buf, sizeof buf, "%d", drawn[k].number);
      const ImVec2 ts = ImGui::CalcTextSize(buf);
      labels.push_back({c.x, c.y, ts.x, ts.y});
      label_of.push_back(drawn[k].number);
    }
    if (hovered && std::abs(mouse.x - c.x) < s + 2 && std::abs(mouse.y - c.y) < s + 2 &&
        (hover_measured < 0 || drawn[static_cast<std::size_t>(hover_measured)].kind == MeasuredKind::kOp))
      hover_measured = static_cast<int>(k);
  }
  // Predicted points, then the numbers of every numbered point where they fit.
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.intensity() <= 0 || p.attained() <= 0) continue;
    const ImVec2 c(ax.X(p.intensity()), ax.Y(p.attained()));
    const ImU32 col = p.comm ? kColComm : kColPredicted;
    if (p.comm)
      dl->AddTriangleFilled(ImVec2(c.x, c.y - r), ImVec2(c.x - r, c.y + r - 1), ImVec2(c.x + r, c.y + r - 1),
                            col);
    else
      dl->AddCircleFilled(c, r - 0.5f, col);
    ++shown_.predicted;
    obstacles.push_back({c.x - r, c.y - r, c.x + r, c.y + r});
    std::snprintf(buf, sizeof buf, "%zu", i + 1);
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    labels.push_back({c.x, c.y, ts.x, ts.y});
    label_of.push_back(static_cast<int>(i) + 1);
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
    std::snprintf(buf, sizeof buf, "%d", label_of[k]);
    dl->AddText(ImVec2(box.x0, box.y0), kColText, buf);
  }
  dl->PopClipRect();
  if (hover >= 0 || hover_measured >= 0) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    if (hover >= 0) {
      ImGui::Text("%d. predicted", hover + 1);
      ImGui::TextUnformatted(explain(points[static_cast<std::size_t>(hover)], roof, precision).c_str());
    } else {
      const Drawn& d = drawn[static_cast<std::size_t>(hover_measured)];
      if (d.number > 0)
        ImGui::Text("%d. measured", d.number);
      else
        ImGui::TextUnformatted("measured operator");
      ImGui::TextUnformatted(explain(*d.point, d.kind, hw).c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::SetCursorScreenPos(ImVec2(p0.x, p0.y + size.y + px(4)));
}

}  // namespace meshscope::gui
