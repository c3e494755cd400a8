// What the GUI shows of the measured model (analysis/compare/measured.hpp), prepared
// once when a profile is loaded: the Explorer's start (the model, hardware and layout the profile ran, the
// same choices `meshscope compare PROFILE` makes without flags, or why the profile cannot be compared with a
// prediction) and the Roofline's measured points (the measured roofline's operators grouped by name and
// recorded shapes, per category, and the mean step). No measurement is made here: every figure comes from
// the MeasuredModel. Plain C++ (no ImGui); tests/gui/measured_view_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/measured.hpp"
#include "app/gui/explorer_steps.hpp"

namespace meshscope::gui {

struct ProfileStart {
  // The profile's workload is a transformer the model can predict and its GPU has a hardware preset: the
  // Explorer's measured column is shown beside the prediction.
  bool comparable = false;
  std::string reason;                     // why not comparable ("" when comparable)
  std::optional<model::ModelSpec> model;  // the inferred model (compare::inferred_model)
  std::string hardware;                   // the hardware's name (a preset's, or the stated one's), "" unknown
  std::optional<model::HardwareSpec> stated_hardware;  // stated in the profile (it may be no preset)
  // The GPU described from the profile's records (compare::hardware_from_traits) when no preset names it and
  // the user stated none.
  std::optional<model::HardwareSpec> recorded_hardware;
  bool layout_known = false;                         // the layout and batch below are the profile's
  model::ParallelConfig layout = explorer_layout();  // the Explorer's controls (explorer_steps.hpp)
  // One line: what was inferred ("transformer: hidden 1024, 24 layers, ..., inference; h100-sxm; tp 1 pp 1
  // ...").
  std::string summary;
  std::string sources;  // from what (the kinds of evidence), "" when the profile showed nothing
};

// The Explorer's start for MEASURED (of a profile of WORLD_SIZE ranks). The layout is `compare`'s without
// flags (compare::profile_layout: what the profile states, then what it shows, one micro-batch per step and
// data-parallel rank, the world size as GPU count when the data-parallel degree is unknown), with resolve()'s
// defaults in the fields it leaves open (1; ZeRO 1 only with data parallelism).
ProfileStart profile_start(const compare::MeasuredModel& measured, std::int64_t world_size);

// REASON without the command-line advice `compare` gives after it (": pass --model ...").
std::string display_reason(const std::string& reason);

// One line on GPU (the product the profile's ranks ran work on, compare::Workload::gpu), from what PROFILE
// records of it: how many ranks describe it, its memory, compute capability (NVIDIA) or architecture, and SMs
// or compute units; then HARDWARE: the hardware preset that describes it ("" when none does), the hardware
// the user stated in the profile, or its description from these records (ORIGIN). Unknown facts are left
// out; "the profile names no GPU" when GPU is empty.
enum class HardwareOrigin : std::uint8_t { kPreset, kStated, kRecorded };
std::string profile_gpu_line(const Profile& profile, const std::string& gpu, const std::string& hardware,
                             HardwareOrigin origin = HardwareOrigin::kPreset);

// A point of the measured roofline: operators of one name and recorded shapes together (their FLOPs, bytes
// and kernel time summed), or a whole category, or the mean step.
struct MeasuredPoint {
  std::string name;  // operator name; the category's name; "mean step"
  std::string dims;  // recorded input shapes ("" for a category or the step)
  measure::WorkCategory category = measure::WorkCategory::kOther;
  std::int64_t count = 0;    // operator instances (rank-steps for the step)
  std::int64_t kernels = 0;  // kernels they launched
  double flops = 0, bytes = 0, seconds = 0;
  bool fp8 = false;  // an operand is an 8-bit float: its ceiling is the FP8 peak
  measure::WorkPrecision precision = measure::WorkPrecision::kOther;  // its ceiling: measure::peak_for
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  double attained() const { return seconds > 0 ? flops / seconds : 0; }
};

struct MeasuredPoints {
  std::vector<MeasuredPoint> ops;         // by kernel time, longest first
  std::vector<MeasuredPoint> categories;  // categories with FLOPs, by kernel time
  std::optional<MeasuredPoint> step;      // measured FLOPs and bytes per step over the step's GPU span
  std::int64_t bytes_only = 0;            // operator shapes that move bytes but do no FLOPs (no y value)
};

// The points of MEASURED's roofline (its plotted operators only: those above the peak are left out there).
MeasuredPoints measured_points(const compare::MeasuredModel& measured);

}  // namespace meshscope::gui
