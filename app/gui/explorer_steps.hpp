// What the Explorer's layout controls step through: per control, the values worth offering (divisors of
// what the degree must divide, multiples of the node size, logarithmic grids where the range spans
// decades), each checked against the rest of the layout with model::resolve() so a control lands only on
// valid layouts and shows the others disabled with resolve()'s one-line reason. Plain C++ (no ImGui);
// tests/gui/explorer_steps_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/specs.hpp"

namespace meshscope::gui {

// The layout fields the Explorer edits, in CLI terms (0 = the default resolve() chooses, for dp, global
// batch and sequence).
struct LayoutInputs {
  int gpus = 8, tp = 1, pp = 1, dp = 0, cp = 1, ep = 1;
  int etp = 0;  // expert tensor parallel; 0 = as TP (Megatron-Core's default)
  int micro_batch = 1, global_batch = 0, seq = 0, zero = 1, virtual_stages = 1;
  int recompute = 0, schedule = 1, precision = 0;
  int mode = 0;  // model::Mode: 0 training, 1 inference
  friend bool operator==(const LayoutInputs&, const LayoutInputs&) = default;
};

enum class LayoutField {
  kGpus,
  kTp,
  kPp,
  kDp,
  kCp,
  kEp,
  kMicroBatch,
  kGlobalBatch,
  kSeq,
  kVirtualStages,
  kEtp
};
inline constexpr int kLayoutFieldCount = 11;
const char* to_string(LayoutField field);
int& field_of(LayoutInputs& inputs, LayoutField field);
int field_of(const LayoutInputs& inputs, LayoutField field);
// The data-parallel degree resolve() would choose for IN (its dp, else what the GPUs leave; 1 when the layout
// does not divide the GPUs).
int auto_dp(const LayoutInputs& in);

// The ParallelConfig resolve() takes for INPUTS, and the inputs that give a resolved CONFIG back (a search's
// layout applied to the controls).
model::ParallelConfig to_config(const LayoutInputs& inputs);
LayoutInputs from_config(const model::ParallelConfig& config);

// "" when INPUTS resolve to a valid layout of MODEL on HW, else resolve()'s one-line reason.
std::string layout_problem(const LayoutInputs& inputs, const model::ModelSpec& model,
                           const model::HardwareSpec& hw);

struct LayoutStep {
  int value = 0;
  std::string problem;  // "" = valid with the other fields as they are
};

// The values FIELD offers for MODEL on HW, in increasing order (0, the default, first where it has one),
// each with its problem given the other fields of INPUTS. The current value is always among them.
std::vector<LayoutStep> layout_steps(LayoutField field, const LayoutInputs& inputs,
                                     const model::ModelSpec& model, const model::HardwareSpec& hw);

// Divisors of N in increasing order.
std::vector<int> divisors(int n);
// 1, 2, 3, 4, 6, 8, 12, 16, 24, ... times UNIT, up to LIMIT (a logarithmic grid of multiples of UNIT).
std::vector<int> log_multiples(int unit, int limit);

}  // namespace meshscope::gui
