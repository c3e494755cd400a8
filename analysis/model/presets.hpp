// Hardware and model presets: TOML files in assets/hardware and assets/models (a user can copy and edit one
// and pass its path), and the command-line overrides applied on top of them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/specs.hpp"

namespace meshscope::model {

// Folder holding hardware/, models/ and sample/: $MESHSCOPE_ASSETS if set, else the nearest
// share/meshscope/assets at or above the executable's folder (installed: PREFIX/share/meshscope/assets; build
// tree: a link to assets/).
std::filesystem::path assets_dir();

std::vector<std::string> model_presets();     // sorted names of assets/models/*.toml
std::vector<std::string> hardware_presets();  // sorted names of assets/hardware/*.toml

// NAME of a preset, or a path to a .toml file. Throws InvalidInput for an unknown preset (listing the known
// ones), an unreadable file, malformed TOML, an unknown key or a missing field.
ModelSpec load_model(std::string_view name_or_path);
HardwareSpec load_hardware(std::string_view name_or_path);

// Parse TOML text; ORIGIN names it in error messages.
ModelSpec parse_model(std::string_view toml_text, std::string_view origin);
HardwareSpec parse_hardware(std::string_view toml_text, std::string_view origin);

// MODEL as the TOML parse_model reads back to the same spec (every field written, ffn_multiplier included):
// what a profile stores when the user states its model (docs/COMPARE.md "Stating what ran").
std::string model_toml(const ModelSpec& model);
// HARDWARE likewise (parse_hardware reads it back to the same spec).
std::string hardware_toml(const HardwareSpec& hardware);

// Command-line overrides (--layers --hidden --heads --kv-heads --ffn --vocab --experts --top-k --seq).
struct ModelOverrides {
  std::optional<int> layers, hidden, heads, kv_heads, ffn, vocab, experts, top_k, seq;
};
// Applies OVERRIDES. A preset whose MLP is 4 x hidden (ffn_multiplier) keeps that ratio when only --hidden
// changes, and one with kv_heads == heads keeps multi-head attention when only --heads changes.
void apply_overrides(ModelSpec& model, const ModelOverrides& overrides);

struct HardwareOverrides {
  std::optional<int> gpus_per_node;
  std::optional<double> intra_node_gbps, inter_node_gbps;
};
void apply_overrides(HardwareSpec& hw, const HardwareOverrides& overrides);

}  // namespace meshscope::model
