// Calibration: fit the model's inputs (alpha and beta per link class, compute efficiency) to measurements,
// e.g. the collectives and kernels of a recorded profile or nccl-tests / GEMM sweeps. Pure functions.
#pragma once

#include <span>

#include "analysis/model/collectives.hpp"
#include "analysis/model/specs.hpp"

namespace meshscope::model {

struct SizeTime {  // one measured collective: message size (nccl-tests convention) and its duration
  double bytes = 0;
  double seconds = 0;
};

struct AlphaBetaFit {
  double alpha_s = 0;       // latency of the whole collective (intercept)
  double alpha_step_s = 0;  // per ring step (alpha_s / steps of the collective at this group size)
  double busbw_Bps = 0;     // bus bandwidth (nccl-tests): per-GPU per-direction link bandwidth
  double mape = 0;          // mean |predicted/measured - 1| over the points
  int points = 0;
  Link link() const { return {alpha_step_s, busbw_Bps}; }
};

// Least-squares fit of t = alpha + bytes x busbw_factor / busbw (Hockney 1994) minimising relative error
// (each point weighted by 1/t^2, so small and large messages count alike). OP and N give the bus-bandwidth
// factor and the number of ring steps. Needs at least two points with distinct sizes.
AlphaBetaFit fit_alpha_beta(std::span<const SizeTime> points, Collective op, int n);

struct FlopsTime {  // one measured kernel: FLOPs it performs and its duration
  double flops = 0;
  double seconds = 0;
};

struct ComputeFit {
  double efficiency = 0;       // sustained fraction of PEAK (total FLOPs / total time / peak)
  double overhead_s = 0;       // per-kernel fixed cost with efficiency fixed at the best observed rate
  double best_efficiency = 0;  // best single kernel's fraction of peak
  double mape = 0;             // of t = F / (peak x best_efficiency) + overhead
};
// Compute efficiency of kernels against PEAK_FLOPS (per GPU).
ComputeFit fit_compute(std::span<const FlopsTime> kernels, double peak_flops);

// What a measured profile says about the hardware; unset (0) entries leave the defaults alone.
struct Calibration {
  AlphaBetaFit intra_node;
  AlphaBetaFit inter_node;
  double gemm_efficiency = 0;
  double gemm_overhead_s = 0;
  double attention_flops_per_s = 0;
  double hbm_efficiency = 0;
};
// EFF with every fitted value of CAL replacing its default.
Efficiencies apply_calibration(Efficiencies eff, const Calibration& cal,
                               Precision precision = Precision::kBF16);

}  // namespace meshscope::model
