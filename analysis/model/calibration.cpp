#include "analysis/model/calibration.hpp"

#include <algorithm>
#include <cmath>

namespace meshscope::model {
namespace {

double ring_steps(Collective op, int n) {
  switch (op) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1);
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kBroadcast:
      return n - 1.0;
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace

AlphaBetaFit fit_alpha_beta(std::span<const SizeTime> points, Collective op, int n) {
  AlphaBetaFit fit;
  // Weighted linear least squares of t = a + b S with weights 1/t^2 (minimises sum of (pred/t - 1)^2).
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (const auto& p : points) {
    if (!(p.seconds > 0) || !(p.bytes > 0)) continue;
    const double w = 1.0 / (p.seconds * p.seconds);
    s11 += w;
    s12 += w * p.bytes;
    s22 += w * p.bytes * p.bytes;
    r1 += w * p.seconds;
    r2 += w * p.bytes * p.seconds;
    ++fit.points;
  }
  const double det = s11 * s22 - s12 * s12;
  if (fit.points < 2 || !(std::abs(det) > 0))
    throw InvalidInput("alpha-beta fit needs two or more distinct sizes");
  double a = (r1 * s22 - r2 * s12) / det;
  double b = (s11 * r2 - s12 * r1) / det;
  if (b <= 0) throw InvalidInput("alpha-beta fit: time does not grow with size; cannot fit a bandwidth");
  if (a < 0) {  // latency cannot be negative: refit the slope alone through the origin
    a = 0;
    b = r2 / s22;
  }
  fit.alpha_s = a;
  fit.alpha_step_s = a / ring_steps(op, std::max(2, n));
  // busbw = algbw x factor (nccl-tests doc/PERFORMANCE.md), algbw = S / (t - alpha) = 1 / b.
  fit.busbw_Bps = busbw_factor(op, std::max(2, n)) / b;
  double err = 0;
  for (const auto& p : points) {
    if (!(p.seconds > 0) || !(p.bytes > 0)) continue;
    err += std::abs((a + b * p.bytes) / p.seconds - 1.0);
  }
  fit.mape = err / fit.points;
  return fit;
}

ComputeFit fit_compute(std::span<const FlopsTime> kernels, double peak_flops) {
  ComputeFit fit;
  double flops = 0, seconds = 0, best = 0;
  int count = 0;
  for (const auto& k : kernels) {
    if (!(k.seconds > 0) || !(k.flops > 0)) continue;
    flops += k.flops;
    seconds += k.seconds;
    best = std::max(best, k.flops / k.seconds);
    ++count;
  }
  if (count == 0 || !(peak_flops > 0))
    throw InvalidInput("compute fit needs kernels with FLOPs and durations");
  fit.efficiency = flops / seconds / peak_flops;
  fit.best_efficiency = best / peak_flops;
  // With the rate fixed at the best kernel's, least squares (relative) for one per-kernel overhead t0:
  // minimise sum ((F/R + t0)/t - 1)^2  =>  t0 = sum((1 - F/(R t))/t) / sum(1/t^2).
  double num = 0, den = 0;
  for (const auto& k : kernels) {
    if (!(k.seconds > 0) || !(k.flops > 0)) continue;
    num += (1.0 - k.flops / (best * k.seconds)) / k.seconds;
    den += 1.0 / (k.seconds * k.seconds);
  }
  fit.overhead_s = std::max(0.0, num / den);
  double err = 0;
  for (const auto& k : kernels) {
    if (!(k.seconds > 0) || !(k.flops > 0)) continue;
    err += std::abs((k.flops / best + fit.overhead_s) / k.seconds - 1.0);
  }
  fit.mape = err / count;
  return fit;
}

Efficiencies apply_calibration(Efficiencies eff, const Calibration& cal, Precision precision) {
  if (cal.intra_node.busbw_Bps > 0) {
    eff.intra_node_Bps = cal.intra_node.busbw_Bps;
    eff.intra_node_alpha_s = cal.intra_node.alpha_step_s;
  }
  if (cal.inter_node.busbw_Bps > 0) {
    eff.inter_node_Bps = cal.inter_node.busbw_Bps;
    eff.inter_node_alpha_s = cal.inter_node.alpha_step_s;
  }
  if (cal.gemm_efficiency > 0)
    (precision == Precision::kFP8 ? eff.gemm_fp8 : eff.gemm_bf16) = cal.gemm_efficiency;
  if (cal.gemm_overhead_s > 0) eff.gemm_overhead_s = cal.gemm_overhead_s;
  if (cal.attention_flops_per_s > 0) {
    (eff.flash_attention ? eff.attention_flash_flops_per_s : eff.attention_standard_flops_per_s) =
        cal.attention_flops_per_s;
  }
  if (cal.hbm_efficiency > 0) eff.hbm = cal.hbm_efficiency;
  return eff;
}

}  // namespace meshscope::model
