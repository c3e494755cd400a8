// Planner: checkpoint interval (Young 1974 / Daly 2006) and the compute-optimal scaling-law budget
// (Kaplan et al. 2020 C = 6ND; Hoffmann et al. 2022 ~20 tokens per parameter).
#pragma once

namespace meshscope::model {

struct CheckpointPlan {
  double mtbf_s = 0;             // mean time between failures of the whole job
  double checkpoint_s = 0;       // time to write one checkpoint
  double restart_s = 0;          // time to restart after a failure (reload, warm-up)
  double young_interval_s = 0;   // sqrt(2 delta M) (Young 1974)
  double daly_interval_s = 0;    // Daly 2006 eq. 20 higher-order estimate
  double overhead_fraction = 0;  // expected fraction of wall-clock lost at the Young interval
};
// Job MTBF from a per-GPU MTBF: failures are independent, so rates add (MTBF / gpus).
double job_mtbf_s(double gpu_mtbf_s, int gpus);
CheckpointPlan plan_checkpoints(double mtbf_s, double checkpoint_s, double restart_s = 0);

struct ScalingBudget {
  double compute_flops = 0;  // C
  double params = 0;         // N
  double tokens = 0;         // D
  double gpu_seconds = 0;    // C / (peak x MFU), all GPUs together
};
// Compute-optimal N and D for a budget of C FLOPs: C = 6ND with D = tokens_per_param x N
// => N = sqrt(C / (6 x tokens_per_param)).
ScalingBudget budget_from_compute(double compute_flops, double tokens_per_param = 20.0);
// Budget for a model of N parameters trained on tokens_per_param x N tokens.
ScalingBudget budget_from_params(double params, double tokens_per_param = 20.0);
// Compute C of GPUS at PEAK_FLOPS each running at MFU for SECONDS.
double compute_of(int gpus, double peak_flops, double mfu, double seconds);

}  // namespace meshscope::model
