// What the user states a profile ran, where the trace cannot tell (no shapes recorded, a model not
// recognised, a layout no process group shows): `meshscope annotate PROFILE --model ... --hardware ...
// --layout ...`, `meshscope import ... --model ... --hardware ... --layout ...` and the Explorer's model
// picker store it in the profile's meta table; infer_workload reads it back, and a stated value takes
// precedence over an inferred one (docs/COMPARE.md "Stating what ran").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_meta.hpp"

namespace meshscope::compare {

// The meta keys a statement is stored under: the model as TOML (model::model_toml), the layout as text.
inline constexpr std::string_view kStatedModelKey = "stated_model";
inline constexpr std::string_view kStatedLayoutKey = "stated_layout";
inline constexpr std::string_view kStatedHardwareKey = "stated_hardware";  // model::hardware_toml

// The parallel layout and batch the job ran, as far as the user states it.
struct StatedLayout {
  std::optional<std::int64_t> tp, pp, dp, cp, ep, micro_batch, seq, global_batch;
  std::optional<model::Mode> mode;
  bool empty() const;
  // The values GIVEN holds replace this layout's; the others stay (`annotate --layout`).
  void update(const StatedLayout& given);
};

// "tp=2,pp=1,dp=4,cp=1,ep=1,micro_batch=2,seq=4096,global_batch=64,mode=training" (any subset, any order;
// micro-batch and global-batch also spelled with a hyphen). Throws model::InvalidInput naming the part that
// is not one of these keys with a whole number from 1 to 1,048,576 (mode: training or inference).
StatedLayout parse_layout(std::string_view text);
// LAYOUT in the form parse_layout reads, keys in the order above; "" when empty.
std::string layout_text(const StatedLayout& layout);

struct Statement {
  std::optional<model::ModelSpec> model;
  std::optional<model::HardwareSpec> hardware;
  StatedLayout layout;
  bool empty() const { return !model && !hardware && layout.empty(); }
};

// The statement stored in PROFILE (empty when none). Throws meshscope::Error naming the profile when a stored
// value is not valid (a damaged or hostile file).
Statement stated(const Profile& profile);

// The meta changes that store STATEMENT: each part given is written, each part not given removed.
std::vector<MetaChange> meta_changes(const Statement& statement);

// One line: "model llama3-8b (32 layers, hidden 4096, ...); hardware h100-sxm; layout tp=2,dp=4" ("nothing
// stated" when empty).
std::string statement_line(const Statement& statement);

}  // namespace meshscope::compare
