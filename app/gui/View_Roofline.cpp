// View_Roofline.cpp: an extended roofline on a log-log canvas drawn by hand. Ceilings of the Explorer's
// hardware: compute per precision, HBM, and the network ceilings (NVLink, inter-node) for communication.
// Points: the Explorer configuration's operations (attention and MLP GEMMs, the attention core, each kind of
// communication it uses) at their arithmetic or communication intensity, the predicted whole step, and the
// measured step of the open profile against the model's FLOPs. Hover (or the table) says which ceiling binds.
//
// [SECTION] Operation points (from the model specs; see the note in docs/GUI.md on where they belong)
// [SECTION] Canvas
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/model/architecture.hpp"
#include "analysis/model/collectives.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"

namespace meshscope::gui {

namespace {

// [SECTION] Operation points
// ---------------------------------------------------------------------------------

enum class Bound { kCompute, kHbm, kNvlink, kNetwork };

struct OpPoint {
  std::string name;
  bool comm = false;      // communication point (x = FLOPs per byte sent on the link)
  bool measured = false;  // from the open profile
  double flops = 0;       // per GPU
  double bytes = 0;       // HBM bytes, or bytes on the link
  double time_s = 0;      // predicted (or measured) time
  double t_compute = 0;   // the compute it could hide behind (comm) / compute-limited time
  double t_memory = 0;    // memory- or link-limited time
  Bound bound = Bound::kCompute;
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  double attained() const { return time_s > 0 ? flops / time_s : 0; }
};

struct Roof {
  double peak = 0, peak_other = 0;          // FLOP/s at the chosen precision and the other one
  double hbm = 0, nvlink = 0, network = 0;  // bytes/s
};

std::vector<OpPoint> operation_points(const model::ModelSpec& m, const model::HardwareSpec& hw,
                                      const model::Efficiencies& eff, const model::ParallelConfig& c,
                                      const Roof& roof) {
  std::vector<OpPoint> out;
  const bool fp8 = c.precision == model::Precision::kFP8;
  const double bpe = fp8 ? 1.0 : 2.0;  // bytes per element of weights and activations
  const double gemm_rate = roof.peak * (fp8 ? eff.gemm_fp8 : eff.gemm_bf16);
  const double hbm_rate = roof.hbm * eff.hbm;
  const double tokens = static_cast<double>(c.micro_batch) * c.seq / std::max(1, c.cp);
  const double tp = std::max(1, c.tp);
  const double d = m.head_size();
  const double q_dim = m.heads * d, kv_dim = m.kv_heads * d;
  auto gemm = [&](const char* name, double M, double K, double N) {
    OpPoint p;
    p.name = name;
    p.flops = 2 * M * K * N;
    p.bytes = bpe * (M * K + K * N + M * N);
    p.t_compute = p.flops / gemm_rate;
    p.t_memory = p.bytes / hbm_rate;
    p.time_s = std::max(p.t_compute, p.t_memory) + eff.gemm_overhead_s;
    p.bound = p.t_compute >= p.t_memory ? Bound::kCompute : Bound::kHbm;
    out.push_back(p);
  };
  gemm("attention QKV GEMM", tokens, m.hidden, (q_dim + 2 * kv_dim) / tp);
  gemm("attention output GEMM", tokens, q_dim / tp, m.hidden);
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  if (m.is_moe()) {
    const double ep = std::max(1, c.ep);
    const double per_expert = std::max(1.0, tokens * ep * m.top_k / m.experts);
    gemm("expert MLP up GEMM", per_expert, m.hidden, gate * m.moe_ffn / tp);
    gemm("expert MLP down GEMM", per_expert, m.moe_ffn / tp, m.hidden);
  } else {
    gemm("MLP up GEMM", tokens, m.hidden, gate * m.ffn / tp);
    gemm("MLP down GEMM", tokens, m.ffn / tp, m.hidden);
  }
  gemm("logits GEMM", tokens, m.hidden, m.vocab / tp);
  {
    OpPoint p;
    p.name = "attention core (fused)";
    p.flops = model::attention_flops_per_token(m, c.seq) * tokens / tp;
    p.bytes = bpe * tokens * (2 * q_dim + 2 * kv_dim) / tp;
    const double rate = eff.attention_flash_flops_per_s > 0 ? eff.attention_flash_flops_per_s : gemm_rate;
    p.t_compute = p.flops / rate;
    p.t_memory = p.bytes / hbm_rate;
    p.time_s = std::max(p.t_compute, p.t_memory);
    p.bound = p.t_compute >= p.t_memory ? Bound::kCompute : Bound::kHbm;
    out.push_back(p);
  }
  // One layer's forward compute on this GPU: what the layer's communication can hide behind.
  double layer_flops = 0, layer_time = 0, attn_flops = 0, attn_time = 0;
  for (const auto& p : out) {
    if (p.name == "logits GEMM") continue;
    layer_flops += p.flops;
    layer_time += p.time_s;
    if (p.name == "attention core (fused)") attn_flops = p.flops, attn_time = p.time_s;
  }
  const model::Link intra = model::intra_node_link(eff), inter = model::inter_node_link(eff);
  auto comm = [&](const char* name, model::Collective op, double bytes, int n, int stride, double flops,
                  double t_compute, int times) {
    if (n < 2) return;
    const auto shape = model::group_shape(n, stride, hw.gpus_per_node);
    OpPoint p;
    p.name = name;
    p.comm = true;
    p.flops = flops;
    p.bytes = bytes * times;
    p.t_compute = t_compute;
    p.t_memory = times * model::hierarchical_time(op, bytes, shape, intra, inter);
    p.time_s = std::max(p.t_compute, p.t_memory);
    p.bound = p.t_memory <= p.t_compute ? Bound::kCompute
              : shape.nodes() > 1       ? Bound::kNetwork
                                        : Bound::kNvlink;
    out.push_back(p);
  };
  const double act_bytes = tokens * m.hidden * bpe;
  comm("TP all-reduce (per layer, forward)", model::Collective::kAllReduce, act_bytes, c.tp, 1, layer_flops,
       layer_time, 2);
  comm("CP KV all-gather (per layer)", model::Collective::kAllGather, 2 * tokens * kv_dim / tp * bpe * c.cp,
       c.cp, c.tp, attn_flops, attn_time, 1);
  if (m.is_moe()) {
    comm("EP all-to-all (dispatch + combine)", model::Collective::kAllToAll, act_bytes * m.top_k, c.ep,
         c.tp * c.cp, layer_flops, layer_time, 2);
  }
  const double stage_layers = static_cast<double>(m.layers) / std::max(1, c.pp);
  comm("PP send/recv (per micro-batch)", model::Collective::kSendRecv, act_bytes / (c.sp() ? tp : 1.0), c.pp,
       c.tp * c.cp * c.dp, layer_flops * stage_layers, layer_time * stage_layers, 1);
  {
    const auto counts = model::count_parameters(m);
    const double params_per_gpu = counts.total() / (tp * std::max(1, c.pp));
    const double step_flops = 3.0 * layer_flops * stage_layers * c.micro_batches();
    const double step_time = 3.0 * layer_time * stage_layers * c.micro_batches();
    comm(c.zero >= 2 ? "DP gradient reduce-scatter (per step)" : "DP gradient all-reduce (per step)",
         c.zero >= 2 ? model::Collective::kReduceScatter : model::Collective::kAllReduce,
         params_per_gpu * 2.0, c.dp, c.tp * c.cp, step_flops, step_time, 1);
  }
  return out;
}

const char* bound_text(Bound b) {
  switch (b) {
    case Bound::kCompute:
      return "compute";
    case Bound::kHbm:
      return "HBM bandwidth";
    case Bound::kNvlink:
      return "NVLink";
    case Bound::kNetwork:
      return "inter-node network";
  }
  return "?";
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
  Roof roof;
  roof.peak = (fp8 ? hw.peak_tflops_fp8 : hw.peak_tflops_bf16) * 1e12;
  roof.peak_other = (fp8 ? hw.peak_tflops_bf16 : hw.peak_tflops_fp8) * 1e12;
  roof.hbm = hw.hbm_tbps * 1e12;
  roof.nvlink = hw.intra_node_gbps * 1e9;
  roof.network = hw.inter_node_gbps * 1e9;
  const char* precision = fp8 ? "FP8" : "BF16";

  ImGui::Text("Extended roofline of %s", hw.name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("for %s, layout of the Explorer (change it there). Per GPU, %s.",
                      ex_.model.name.c_str(), precision);
  std::vector<OpPoint> points;
  if (ex_.valid) {
    points = operation_points(ex_.model, hw, ex_.eff, ex_.resolved, roof);
    // Whole step, predicted and measured, at the layer's weighted arithmetic intensity.
    double f = 0, b = 0;
    for (const auto& p : points) {
      if (!p.comm && p.name != "logits GEMM") f += p.flops, b += p.bytes;
    }
    const double flops_per_gpu = ex_.prediction.model_flops / std::max(1, ex_.resolved.gpus);
    OpPoint step;
    step.name = "whole step (predicted)";
    step.flops = flops_per_gpu;
    step.bytes = b > 0 ? flops_per_gpu / (f / b) : 0;
    step.time_s = ex_.prediction.step_time_s;
    step.t_compute = ex_.prediction.time.compute;
    step.t_memory = step.time_s - step.t_compute;
    step.bound = Bound::kCompute;
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
