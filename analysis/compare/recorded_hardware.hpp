// A GPU no hardware preset names, described from what the profile records of it (docs/COMPARE.md "Hardware
// from the profile's records"): its compute capability says its architecture, the presets of that
// architecture give the rates per SM, its SM count scales them, and its memory is taken as recorded. What a
// profile cannot show (clocks, HBM bandwidth, links, achievable fractions) is the chosen preset's, and the
// description says so. A board name such as "NVIDIA A100-PG509-200" is predicted on instead of being refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/specs.hpp"

namespace meshscope::compare {

// What a profile records of a GPU besides its name (Kineto deviceProperties, CUPTI, Nsight): -1 when unknown.
struct GpuTraits {
  std::int64_t memory_bytes = -1;
  std::int64_t compute_units = -1;  // SMs (NVIDIA), compute units (AMD)
  std::int64_t compute_major = -1, compute_minor = -1;
};

struct RecordedHardware {
  model::HardwareSpec spec;  // named after the device ("NVIDIA A100-PG509-200" -> "a100-pg509-200")
  std::string base;          // the preset whose rates, clocks, bandwidths and fractions it takes
  bool same_size = false;    // the base has the recorded SM count: the rates are the base's unscaled
  std::string how;           // one clause: what the description rests on
};

// The description of DEVICE_NAME from TRAITS and the preset of its architecture among PRESETS: the preset of
// the same compute capability nearest in SMs, then in memory (then by name); its tensor and attention rates
// scaled by the recorded SMs over its SMs (clocks assumed equal); the recorded memory; a name that says PCIe
// on a preset linked otherwise gets the PCIe generation of its architecture as its scale-up link (NVIDIA
// only). Nullopt when TRAITS lack the compute capability, SMs or memory, or no preset of that compute
// capability states its SM count.
std::optional<RecordedHardware> hardware_from_traits(std::string_view device_name, const GpuTraits& traits,
                                                     const std::vector<model::HardwareSpec>& presets);
// The same among the bundled presets (assets/hardware), read once.
std::optional<RecordedHardware> hardware_from_traits(std::string_view device_name, const GpuTraits& traits);

}  // namespace meshscope::compare
