// The extended roofline of one layout (Williams, Waterman & Patterson 2009, "Roofline", extended with network
// ceilings): per-GPU operations of one transformer layer (GEMMs, the attention core, each kind of
// communication) at their arithmetic or communication intensity, with the time each would take and which
// ceiling binds it. The front end draws these; it does not compute them.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/predict.hpp"
#include "analysis/model/specs.hpp"

namespace meshscope::model {

enum class RooflineBound { kCompute, kHbm, kNvlink, kNetwork };
const char* to_string(RooflineBound bound);

// The ceilings of one GPU: peak FLOP/s at the chosen precision and the other one, and bytes/s of HBM and
// links.
struct Roof {
  double peak = 0, peak_other = 0;
  double hbm = 0, nvlink = 0, network = 0;
};
Roof roof_of(const HardwareSpec& hw, Precision precision);

struct RooflineOperation {
  std::string name;
  bool comm = false;  // communication: x = FLOPs per byte sent on the link (the compute it can hide behind)
  bool measured = false;  // from a profile rather than the model
  double flops = 0;       // per GPU
  double bytes = 0;       // HBM bytes, or bytes on the link
  double time_s = 0;      // predicted (or measured) time
  double t_compute = 0;   // compute-limited time (for communication: the compute that could hide it)
  double t_memory = 0;    // HBM- or link-limited time
  RooflineBound bound = RooflineBound::kCompute;
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  double attained() const { return time_s > 0 ? flops / time_s : 0; }
};

// One layer's GEMMs (QKV, attention output, MLP up/down or expert MLP, logits), the attention core, and the
// layout's TP, CP, EP, PP and DP communication, per GPU.
std::vector<RooflineOperation> roofline_operations(const ModelSpec& model, const HardwareSpec& hw,
                                                   const Efficiencies& eff, const ParallelConfig& config);

// The whole predicted step as one point: model FLOPs per GPU over the step time, at the layer's weighted
// arithmetic intensity (from OPERATIONS).
RooflineOperation predicted_step_point(const std::vector<RooflineOperation>& operations,
                                       const Prediction& prediction, int gpus);

}  // namespace meshscope::model
