#include "app/gui/planner_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/model/architecture.hpp"
#include "analysis/model/planner.hpp"
#include "app/gui/gui_util.hpp"

namespace meshscope::gui {

namespace {

// S seconds as every duration of the GUI reads (profiler/text_format).
const char* seconds_duration(char* buf, std::size_t size, double s) {
  return duration_text(buf, size, s * 1e9);
}

const char* count_text(char* buf, int size, double v) {
  const char* units[] = {"", "K", "M", "B", "T", "Q"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 5) v /= 1000, ++u;
  std::snprintf(buf, size, "%.2f%s", v, units[u]);
  return buf;
}

// One of the panel's two columns: a bordered child window WIDTH wide (0: the rest), its TITLE and the SOURCES
// its numbers follow. Closed by ImGui::EndChild().
void begin_column(const char* id, float width, const char* title, const char* sources) {
  ImGui::BeginChild(id, ImVec2(width, 0), true);
  ImGui::TextUnformatted(title);
  text_wrapped_disabled(sources);
  ImGui::Spacing();
}

// A row of a two-column table: NAME dimmed, VALUE in COLOR.
void row(const char* name, const char* value, ImU32 color = kColText) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", name);
  ImGui::TableNextColumn();
  ImGui::TextColored(to_vec4(color), "%s", value);
}

}  // namespace

void PlannerPanel::draw(const FromExplorer& explorer) {
  draw_checkpoints(explorer, ImGui::GetContentRegionAvail().x * 0.5f - 8);
  ImGui::SameLine();
  draw_budget(explorer);
}

// Checkpoint interval: Young's and Daly's, the time lost, and one job MTBF at the Daly interval to scale.
void PlannerPanel::draw_checkpoints(const FromExplorer& explorer, float col_w) {
  const int gpus = std::max(1, explorer.gpus);
  char a[48], b[48], c[48];
  begin_column("##ckpt", col_w, "Checkpoint interval",
               "Young 1974: sqrt(2 x checkpoint time x MTBF); Daly 2006 adds the higher-order terms.");
  ImGui::SetNextItemWidth(-170);
  ImGui::SliderFloat("GPU MTBF (hours)", &gpu_mtbf_hours_, 1000.0f, 1000000.0f, "%.0f h",
                     ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Mean time between failures of one GPU (with its share of host, network, software).\nLlama 3 "
        "405B: 419 interruptions in 54 days on 16,384 GPUs = about 50,000 h per GPU.");
  }
  ImGui::SetNextItemWidth(-170);
  ImGui::SliderFloat("checkpoint write (s)", &checkpoint_s_, 1.0f, 3600.0f, "%.0f s",
                     ImGuiSliderFlags_Logarithmic);
  ImGui::SetNextItemWidth(-170);
  ImGui::SliderFloat("restart (s)", &restart_s_, 0.0f, 7200.0f, "%.0f s");
  ImGui::TextDisabled("GPUs: %d (from the Explorer)", gpus);
  const double mtbf = model::job_mtbf_s(static_cast<double>(gpu_mtbf_hours_) * 3600.0, gpus);
  const auto plan = model::plan_checkpoints(mtbf, checkpoint_s_, restart_s_);
  ImGui::Separator();
  if (ImGui::BeginTable("##ckpt_t", 2, ImGuiTableFlags_SizingStretchProp)) {
    row("job MTBF", seconds_duration(a, sizeof a, plan.mtbf_s));
    row("Young interval", seconds_duration(a, sizeof a, plan.young_interval_s), kColSelect);
    row("Daly interval", seconds_duration(a, sizeof a, plan.daly_interval_s), kColSelect);
    std::snprintf(b, sizeof b, "%.2f %%", 100.0 * plan.overhead_fraction);
    row("expected time lost (checkpoints + rework)", b,
        plan.overhead_fraction > 0.1 ? kColExposed : kColMemory);
    if (explorer.prediction && explorer.prediction->step_time_s > 0) {
      std::snprintf(c, sizeof c, "every %.0f steps", plan.daly_interval_s / explorer.prediction->step_time_s);
      row("at the Explorer's step time", c);
    }
    ImGui::EndTable();
  }
  // One MTBF of wall-clock, drawn to scale: work between checkpoints, the checkpoint writes.
  ImGui::Spacing();
  ImGui::TextDisabled("One job MTBF (%s) at the Daly interval, to scale:",
                      seconds_duration(a, sizeof a, plan.mtbf_s));
  {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x, h = 26;
    ImGui::Dummy(ImVec2(w, h));
    dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(34, 38, 46, 255));
    const double period = plan.daly_interval_s + checkpoint_s_;
    const double span = plan.mtbf_s;
    if (period > 0 && span > 0) {
      const int n = static_cast<int>(std::min(5000.0, std::ceil(span / period)));
      for (int i = 0; i <= n; ++i) {
        const double t = i * period;
        const float x0 = p.x + static_cast<float>(t / span * w);
        const float x1 = p.x + static_cast<float>(std::min(span, t + plan.daly_interval_s) / span * w);
        const float x2 = p.x + static_cast<float>(std::min(span, t + period) / span * w);
        dl->AddRectFilled(ImVec2(x0, p.y), ImVec2(x1, p.y + h), kColCompute);
        dl->AddRectFilled(ImVec2(x1, p.y), ImVec2(std::max(x1 + 1, x2), p.y + h), kColSelect);
      }
    }
    legend_item(kColCompute, "training");
    legend_same_line("checkpoint write");
    legend_item(kColSelect, "checkpoint write");
  }
  ImGui::EndChild();
}

// Scaling-law budget: what the Explorer's GPUs train in the days given, what a budget buys, and the
// Explorer's own model's compute-optimal run.
void PlannerPanel::draw_budget(const FromExplorer& explorer) {
  const int gpus = std::max(1, explorer.gpus);
  char a[48], b[48], c[48];
  begin_column("##budget", 0, "Compute-optimal budget",
               "Kaplan et al. 2020: C = 6 N D; Hoffmann et al. 2022: about 20 tokens per parameter.");
  ImGui::SetNextItemWidth(-190);
  ImGui::SliderFloat("tokens per parameter", &tokens_per_param_, 1.0f, 200.0f, "%.0f",
                     ImGuiSliderFlags_Logarithmic);
  ImGui::SetNextItemWidth(-190);
  ImGui::SliderFloat("training days", &days_, 1.0f, 365.0f, "%.0f days", ImGuiSliderFlags_Logarithmic);
  const double peak =
      explorer.prediction ? explorer.prediction->peak_flops : explorer.hardware->peak_tflops_bf16 * 1e12;
  const double mfu = explorer.prediction ? explorer.prediction->mfu : 0.4;
  char rate[48];
  ImGui::TextDisabled("%d GPUs at %s peak and %.1f %% MFU (from the Explorer)", gpus,
                      flop_rate_text(rate, sizeof rate, peak), 100.0 * mfu);
  const double compute = model::compute_of(gpus, peak, mfu, static_cast<double>(days_) * 86400.0);
  const auto fit = model::budget_from_compute(compute, tokens_per_param_);
  ImGui::Separator();
  auto budget_table = [&](const char* id, const model::ScalingBudget& s) {
    if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return;
    std::snprintf(a, sizeof a, "%.3g FLOPs", s.compute_flops);
    row("compute C", a);
    row("parameters N", count_text(b, sizeof b, s.params), kColSelect);
    row("tokens D", count_text(c, sizeof c, s.tokens), kColSelect);
    ImGui::EndTable();
  };
  ImGui::TextUnformatted("What these GPUs can train in that time:");
  budget_table("##fit", fit);
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::SetNextItemWidth(-190);
  ImGui::SliderFloat("budget (log10 FLOPs)", &budget_log10_, 20.0f, 27.0f, "1e%.1f");
  const auto from_c =
      model::budget_from_compute(std::pow(10.0, static_cast<double>(budget_log10_)), tokens_per_param_);
  ImGui::TextUnformatted("A fixed compute budget:");
  budget_table("##budget_c", from_c);
  if (explorer.prediction && from_c.compute_flops > 0) {
    seconds_duration(a, sizeof a,
                     from_c.compute_flops / (static_cast<double>(gpus) * peak * std::max(mfu, 1e-9)));
    ImGui::TextDisabled("on the Explorer's %d GPUs: %s", gpus, a);
  }
  ImGui::Spacing();
  ImGui::Separator();
  if (explorer.prediction) {
    ImGui::Text("The Explorer's model (%s)", explorer.model->name.c_str());
    const auto opt =
        model::budget_from_params(model::count_parameters(*explorer.model).total(), tokens_per_param_);
    budget_table("##model", opt);
    if (explorer.prediction->tokens_per_s > 0) {
      char rate[32];
      ImGui::TextDisabled("at the predicted %s tokens/s: %s to train on %s tokens",
                          count_text(rate, sizeof rate, explorer.prediction->tokens_per_s),
                          seconds_duration(a, sizeof a, opt.tokens / explorer.prediction->tokens_per_s),
                          count_text(b, sizeof b, opt.tokens));
    }
    ImGui::TextDisabled("(N = all parameters of the model, embeddings included)");
  }
  ImGui::EndChild();
}

}  // namespace meshscope::gui
