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

// The Explorer's controls are a model::ParallelConfig, the one layout type of the model, the command line and
// the view, holding the values the controls show: every degree explicit (1 where resolve() would default it),
// 0 only where the control offers resolve()'s default (dp, global batch, sequence; etp 0 = as TP).
// The controls' first values: 8 GPUs, every degree 1, micro-batch 1, ZeRO 1, no recompute, 1F1B, BF16,
// training.
model::ParallelConfig explorer_layout();

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
int& field_of(model::ParallelConfig& layout, LayoutField field);
int field_of(const model::ParallelConfig& layout, LayoutField field);
// The data-parallel degree resolve() would choose for IN (its dp, else what the GPUs leave; 1 when the layout
// does not divide the GPUs).
int auto_dp(const model::ParallelConfig& layout);

// The config resolve() takes for the controls LAYOUT (virtual stages only with the interleaved schedule;
// inference shards and recomputes nothing; recompute and schedule as chosen), and the controls that give a
// resolved CONFIG back (a search's layout applied: the fields the controls edit, etp equal to tp as "as TP").
model::ParallelConfig layout_request(const model::ParallelConfig& layout);
model::ParallelConfig controls_of(const model::ParallelConfig& config);

// "" when the controls LAYOUT resolve to a valid layout of MODEL on HW, else resolve()'s one-line reason.
std::string layout_problem(const model::ParallelConfig& layout, const model::ModelSpec& model,
                           const model::HardwareSpec& hw);

struct LayoutStep {
  int value = 0;
  std::string problem;  // "" = valid with the other fields as they are
};

// The values FIELD offers for MODEL on HW, in increasing order (0, the default, first where it has one),
// each with its problem given the other fields of LAYOUT. The current value is always among them.
std::vector<LayoutStep> layout_steps(LayoutField field, const model::ParallelConfig& layout,
                                     const model::ModelSpec& model, const model::HardwareSpec& hw);

// Divisors of N in increasing order.
std::vector<int> divisors(int n);
// 1, 2, 3, 4, 6, 8, 12, 16, 24, ... times UNIT, up to LIMIT (a logarithmic grid of multiples of UNIT).
std::vector<int> log_multiples(int unit, int limit);

}  // namespace meshscope::gui
