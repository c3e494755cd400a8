#include "analysis/model/planner.hpp"

#include <cmath>

#include "analysis/model/specs.hpp"

namespace meshscope::model {

double job_mtbf_s(double gpu_mtbf_s, int gpus) {
  if (!(gpu_mtbf_s > 0) || gpus < 1) throw InvalidInput("--gpu-mtbf-hours and --gpus must be positive");
  return gpu_mtbf_s / gpus;  // independent exponential failures: rates add
}

CheckpointPlan plan_checkpoints(double mtbf_s, double checkpoint_s, double restart_s) {
  if (!(mtbf_s > 0)) throw InvalidInput("the MTBF must be positive");
  if (!(checkpoint_s > 0)) throw InvalidInput("the checkpoint time must be positive");
  if (restart_s < 0) throw InvalidInput("the restart time must not be negative");
  CheckpointPlan p;
  p.mtbf_s = mtbf_s;
  p.checkpoint_s = checkpoint_s;
  p.restart_s = restart_s;
  // Young 1974 eq. (5): T_opt = sqrt(2 delta M).
  p.young_interval_s = std::sqrt(2.0 * checkpoint_s * mtbf_s);
  // Daly 2006 eq. (20): T = sqrt(2 delta M) [1 + 1/3 sqrt(delta/(2M)) + delta/(18M)] - delta for delta < 2M,
  // else M.
  if (checkpoint_s < 2.0 * mtbf_s) {
    const double x = checkpoint_s / (2.0 * mtbf_s);
    p.daly_interval_s = p.young_interval_s * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - checkpoint_s;
  } else {
    p.daly_interval_s = mtbf_s;
  }
  // First-order waste (Young 1974 / Daly 2006 §3): delta/T for writing, (T/2 + R)/M for rework and restart.
  const double t = p.young_interval_s;
  p.overhead_fraction = checkpoint_s / t + (t / 2.0 + restart_s) / mtbf_s;
  return p;
}

ScalingBudget budget_from_compute(double compute_flops, double tokens_per_param) {
  if (!(compute_flops > 0) || !(tokens_per_param > 0))
    throw InvalidInput("the compute budget must be positive");
  ScalingBudget b;
  b.compute_flops = compute_flops;
  // Kaplan et al. 2020 §2.1: C ~ 6ND; Hoffmann et al. 2022 Table 3: D ~ 20 N at the compute-optimal point.
  b.params = std::sqrt(compute_flops / (6.0 * tokens_per_param));
  b.tokens = tokens_per_param * b.params;
  return b;
}

ScalingBudget budget_from_params(double params, double tokens_per_param) {
  if (!(params > 0) || !(tokens_per_param > 0)) throw InvalidInput("--params must be positive");
  ScalingBudget b;
  b.params = params;
  b.tokens = tokens_per_param * params;
  b.compute_flops = 6.0 * b.params * b.tokens;  // Kaplan et al. 2020 §2.1
  return b;
}

double compute_of(int gpus, double peak_flops, double mfu, double seconds) {
  return double(gpus) * peak_flops * mfu * seconds;
}

}  // namespace meshscope::model
