// pipeline_measured.cpp: the measured pipeline schedule in the Explorer, under the predicted one. One row per
// stage of a pipeline group found in the open profile (measure::measure_pipeline, computed when the profile
// was loaded): the forward and backward micro-batch blocks that stage ran in one step, on that step's window
// (first block start to last block end over the stages), the idle time between them hatched as bubble, and
// the stage's measured bubble beside the row. The header compares the mean measured bubble with the
// schedule's prediction (p - 1) / (v m + p - 1) and with the same schedule run at each stage's measured work.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "app/gui/explorer_panel.hpp"
#include "app/gui/gui_util.hpp"

namespace meshscope::gui {

namespace {

constexpr ImU32 kColBackward = IM_COL32(90, 80, 190, 255);
constexpr ImU32 kColBackward2 = IM_COL32(120, 100, 210, 255);
constexpr ImU32 kColForward2 = IM_COL32(110, 170, 250, 255);
constexpr ImU32 kColBubble = IM_COL32(60, 40, 44, 255);

void hatch(ImDrawList* dl, float x0, float y0, float x1, float y1) {
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), kColBubble);
  dl->PushClipRect(ImVec2(x0, y0), ImVec2(x1, y1), true);
  const float h = y1 - y0;
  for (float hx = x0 - h; hx < x1; hx += 6)
    dl->AddLine(ImVec2(hx, y1), ImVec2(hx + h, y0), IM_COL32(150, 70, 80, 120));
  dl->PopClipRect();
}

// Where the measured pipeline's chart lies: its origin O, the blocks' x range, the rows' height, the step's
// window mapped onto [x0, x1], and the mouse when the chart is hovered.
struct PipelineChart {
  ImVec2 o;
  float x0, x1, row_h, top;
  TimeNs start_ns, end_ns, window;
  double scale;
  bool hovered;
  ImVec2 mouse;
  float x_of(TimeNs t) const { return x0 + static_cast<float>(static_cast<double>(t - start_ns) * scale); }
};

// Stage S's row of STEP in GROUP on CHART: its label, its blocks with their micro-batch numbers, the bubble
// hatched between them, its bubble share, and the tooltips of what the mouse is on.
MeasuredPipelineRow draw_stage_row(ImDrawList* dl, const PipelineChart& chart,
                                   const measure::PipelineGroup& group, const measure::PipelineStep& step,
                                   int s) {
  const ImVec2 o = chart.o;
  const float row_h = chart.row_h, x0 = chart.x0, x1 = chart.x1, top = chart.top;
  const bool hovered = chart.hovered;
  const ImVec2 mouse = chart.mouse;
  const TimeNs window = chart.window;
  auto x_of = [&](TimeNs t) { return chart.x_of(t); };
  char buf[160], a[32];
  const measure::PipelineStage& stage = group.stages[static_cast<std::size_t>(s)];
  const float y0 = o.y + top + static_cast<float>(s) * row_h, y1 = y0 + row_h;
  std::snprintf(buf, sizeof buf, "stage %d  r%d", stage.stage, stage.rank);
  dl->AddText(ImVec2(o.x + 6, y0 + (row_h - ImGui::GetFontSize()) * 0.5f), kColTextDim, buf);
  const measure::StageStep* ss = nullptr;
  for (const auto& candidate : stage.steps) {
    if (candidate.step == step.step) ss = &candidate;
  }
  MeasuredPipelineRow row{stage.stage, stage.rank, step.step, 0, 0.0, y0, y1};
  if (!ss) {
    dl->AddText(ImVec2(x0 + 4, y0 + (row_h - ImGui::GetFontSize()) * 0.5f), kColTextDim,
                stage.rank_index < 0 ? "rank not in the profile" : "no micro-batches in this step");
    return row;
  }
  row.bubble_fraction = ss->bubble_fraction;
  // Bubble: the window less the union of the blocks (blocks in launch order; their spans may overlap).
  TimeNs covered = step.start_ns;
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  spans.reserve(ss->blocks.size());
  for (const auto& blk : ss->blocks) spans.emplace_back(blk.start_ns, blk.end_ns);
  std::sort(spans.begin(), spans.end());
  for (const auto& [bs, be] : spans) {
    if (bs > covered) hatch(dl, x_of(covered), y0 + 1, x_of(bs), y1 - 1);
    covered = std::max(covered, be);
  }
  if (covered < step.end_ns) hatch(dl, x_of(covered), y0 + 1, x_of(step.end_ns), y1 - 1);
  for (const auto& blk : ss->blocks) {
    const float bx0 = x_of(blk.start_ns), bx1 = std::max(bx0 + 1.0f, x_of(blk.end_ns));
    const ImU32 col = blk.forward ? (blk.chunk % 2 ? kColForward2 : kColCompute)
                                  : (blk.chunk % 2 ? kColBackward2 : kColBackward);
    dl->AddRectFilled(ImVec2(bx0, y0 + 1), ImVec2(bx1, y1 - 1), col);
    dl->AddRect(ImVec2(bx0, y0 + 1), ImVec2(bx1, y1 - 1), IM_COL32(12, 14, 18, 160));
    std::snprintf(buf, sizeof buf, "%d", blk.micro_batch);
    if (bx1 - bx0 > ImGui::CalcTextSize(buf).x + px(4)) {
      dl->AddText(ImVec2(bx0 + 2, y0 + (row_h - ImGui::GetFontSize()) * 0.5f), IM_COL32(10, 12, 16, 255),
                  buf);
    }
    ++row.blocks;
    if (hovered && mouse.x >= bx0 && mouse.x < bx1 && mouse.y >= y0 && mouse.y < y1) {
      char b[32];
      ImGui::SetTooltip(
          "stage %d (rank %d): %s micro-batch %d, chunk %d\nstart %s into the step, duration %s\n%lld "
          "GPU activities",
          stage.stage, stage.rank, blk.forward ? "forward" : "backward", blk.micro_batch, blk.chunk,
          duration_text(a, sizeof a, static_cast<double>(blk.start_ns - step.start_ns)),
          duration_text(b, sizeof b, static_cast<double>(blk.end_ns - blk.start_ns)),
          static_cast<long long>(blk.activities));
    }
  }
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * ss->bubble_fraction);
  dl->AddText(ImVec2(x1 + px(8), y0 + (row_h - ImGui::GetFontSize()) * 0.5f),
              ss->bubble_fraction > group.predicted_bubble * 1.25 ? kColExposed : kColText, buf);
  if (hovered && mouse.x >= x1 && mouse.y >= y0 && mouse.y < y1) {
    char b[32];
    ImGui::SetTooltip(
        "stage %d (rank %d), step %lld: idle %s of the %s window (%d forward, %d backward, "
        "%d warm-up forwards)",
        stage.stage, stage.rank, static_cast<long long>(step.step),
        duration_text(a, sizeof a, static_cast<double>(ss->bubble_ns)),
        duration_text(b, sizeof b, static_cast<double>(window)), ss->forwards, ss->backwards, ss->warmup);
  }
  return row;
}

}  // namespace

void ExplorerPanel::use_measured_pipeline() {
  if (!loaded_ || !loaded_->pipeline.found || loaded_->pipeline.groups.empty()) return;
  const auto& groups = loaded_->pipeline.groups;
  const measure::PipelineGroup& group =
      groups[static_cast<std::size_t>(std::clamp(pipeline_group_, 0, static_cast<int>(groups.size()) - 1))];
  const int p = static_cast<int>(group.stages.size());
  ex_.layout.pp = p;
  if (group.schedule == "gpipe") ex_.layout.schedule = model::Schedule::kGPipe;
  if (group.schedule == "1f1b") ex_.layout.schedule = model::Schedule::k1F1B;
  if (group.schedule == "interleaved") {
    ex_.layout.schedule = model::Schedule::kInterleaved;
    ex_.layout.virtual_stages = group.virtual_stages;
  }
  // m micro-batches per pipeline: the global batch is m x micro-batch x data-parallel replicas.
  const int dp = std::max(1, ex_.layout.gpus / std::max(1, ex_.layout.tp * p * ex_.layout.cp));
  ex_.layout.dp = 0;
  ex_.layout.global_batch = std::max(1, group.micro_batches) * std::max(1, ex_.layout.micro_batch) * dp;
  ex_.dirty = true;
  ex_.search_dirty = true;
  repredict();
}

void ExplorerPanel::draw_measured_pipeline() {
  pipeline_rows_.clear();
  pipeline_button_ = {};
  if (!loaded_) return;
  const measure::PipelineReport& report = loaded_->pipeline;
  ImGui::Spacing();
  if (!report.found || report.groups.empty()) {
    ImGui::TextDisabled("MEASURED PIPELINE (open profile)");
    ImGui::TextDisabled(
        "%s", report.notes.empty() ? "no pipeline parallelism found" : report.notes.front().c_str());
    return;
  }
  pipeline_group_ = std::clamp(pipeline_group_, 0, static_cast<int>(report.groups.size()) - 1);
  const measure::PipelineGroup& group = report.groups[static_cast<std::size_t>(pipeline_group_)];
  if (group.steps.empty()) {
    ImGui::TextDisabled("MEASURED PIPELINE (open profile): %s has no step with micro-batches",
                        group.source.c_str());
    return;
  }
  pipeline_step_ = std::clamp(pipeline_step_, 0, static_cast<int>(group.steps.size()) - 1);
  const measure::PipelineStep& step = group.steps[static_cast<std::size_t>(pipeline_step_)];
  const int p = static_cast<int>(group.stages.size());
  char buf[160];
  ImGui::TextDisabled("MEASURED PIPELINE OF STEP %lld (open profile; %d stages from %s)",
                      static_cast<long long>(step.step), p, group.source.c_str());
  ImGui::TextWrapped(
      "%s schedule, %d micro-batches%s: bubble measured %.1f %% (mean over stages and steps), "
      "predicted %.1f %%, with each stage's measured work %.1f %%",
      group.schedule.c_str(), group.micro_batches,
      group.virtual_stages > 1 ? (", " + std::to_string(group.virtual_stages) + " chunks").c_str() : "",
      100.0 * group.measured_bubble, 100.0 * group.predicted_bubble, 100.0 * group.imbalanced_bubble);
  if (group.slowest_stage >= 0) {
    ImGui::TextDisabled(
        "slowest stage %d: %.2fx the mean stage's work%s", group.slowest_stage, group.imbalance,
        group.stages_matching < p ? " (some stages' warm-up does not match the schedule)" : "");
  }
  if (ImGui::SmallButton("Predict this pipeline")) use_measured_pipeline();
  pipeline_button_ = ImVec4(ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x,
                            ImGui::GetItemRectMax().y);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Set the Explorer to %d pipeline stages, the %s schedule and %d micro-batches per step, so that "
        "the predicted pipeline above has the measured one's shape",
        p, group.schedule.c_str(), group.micro_batches);
  }
  ImGui::SameLine();
  if (report.groups.size() > 1) {
    ImGui::SetNextItemWidth(px(220));
    std::snprintf(buf, sizeof buf, "pipeline %d of %zu", pipeline_group_ + 1, report.groups.size());
    if (ImGui::BeginCombo("##ppgroup", buf)) {
      for (std::size_t g = 0; g < report.groups.size(); ++g) {
        std::string ranks;
        for (std::int32_t r : report.groups[g].ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
        std::snprintf(buf, sizeof buf, "pipeline %zu: ranks %s", g + 1, ranks.c_str());
        if (ImGui::Selectable(buf, static_cast<int>(g) == pipeline_group_))
          pipeline_group_ = static_cast<int>(g);
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  }
  if (group.steps.size() > 1) {
    ImGui::SetNextItemWidth(px(220));
    ImGui::SliderInt("step##ppstep", &pipeline_step_, 0, static_cast<int>(group.steps.size()) - 1,
                     ("step " + std::to_string(step.step)).c_str());
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float row_h = px(20), top = px(16), label_w = px(110), bubble_w = px(90);
  const float height = top + static_cast<float>(p) * row_h + px(4);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x - 10;
  ImGui::InvisibleButton("##ppmeasured", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float x0 = o.x + label_w, x1 = o.x + width - bubble_w;
  dl->AddRectFilled(o, ImVec2(o.x + width, o.y + height), IM_COL32(20, 23, 28, 255), 3.0f);
  const TimeNs window = std::max<TimeNs>(1, step.end_ns - step.start_ns);
  const double scale = (x1 - x0 - 4) / static_cast<double>(window);
  auto x_of = [&](TimeNs t) {
    return x0 + static_cast<float>(static_cast<double>(t - step.start_ns) * scale);
  };
  const TimeNs tick = ruler_step(static_cast<double>(window) / std::max(1.0f, x1 - x0), 100.0 * ui_scale());
  for (TimeNs t = 0; t <= window; t += tick) {
    const float x = x_of(step.start_ns + t);
    dl->AddLine(ImVec2(x, o.y + top - 3), ImVec2(x, o.y + height), kColGrid);
    format_time(buf, sizeof buf, t, tick);
    if (x + 2 + ImGui::CalcTextSize(buf).x < x1) dl->AddText(ImVec2(x + 2, o.y), kColTextDim, buf);
  }
  dl->AddText(ImVec2(x1 + px(8), o.y), kColTextDim, "bubble");
  const PipelineChart chart{o, x0, x1, row_h, top, step.start_ns, step.end_ns, window, scale, hovered, mouse};
  for (int s = 0; s < p; ++s) pipeline_rows_.push_back(draw_stage_row(dl, chart, group, step, s));
  legend_item(kColCompute, "forward");
  legend_same_line("backward");
  legend_item(kColBackward, "backward");
  legend_same_line("bubble (waiting for a neighbour)");
  legend_item(kColBubble, "bubble (waiting for a neighbour)");
}

}  // namespace meshscope::gui
