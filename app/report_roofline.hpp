// `report --json` "roofline" (docs/CLI.md): the measured roofline of a profile's kernels
// from the work its operators' shapes determine (analysis/measure/work.hpp), checked against the peak of the
// profile's own GPU (analysis/compare/workload.hpp hardware_preset_for). Header-only: report's one caller.
#pragma once

#include <map>
#include <string>

#include "analysis/compare/measured.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile.hpp"

namespace meshscope::app {

// The ceilings of the GPU the user stated in the profile, else of the GPU most ranks ran work on: its preset,
// or its description from the profile's records (compare::ceilings_of: each operator against its precision's
// peak).
inline measure::WorkCeilings profile_ceilings(const Profile& profile) {
  if (const auto stated = compare::stated(profile).hardware) return compare::ceilings_of(*stated);
  const compare::ProfileGpu gpu = compare::profile_gpu(profile);
  if (gpu.recorded) return compare::ceilings_of(gpu.recorded->spec);
  const std::string& preset = gpu.preset;
  if (preset.empty()) return {};
  try {
    return compare::ceilings_of(model::load_hardware(preset));
  } catch (const model::InvalidInput&) {
    // The assets folder lacks the preset: no ceiling to check against (the notes say so).
  }
  return {};
}

// "roofline": {"kernels", "flops", "bytes", "kernel_us", "hardware", "ops": [{"op", "category", "count",
// "precision", "ceiling", "flops", "bytes", "kernel_us"}], "left_out", "notes": [...]}.
inline void write_roofline_json(JsonWriter& j, const Profile& profile) {
  // The roofline reads the operators alone (each kernel's share is for the views): a streamed profile no
  // longer holds its activities.
  const measure::ProfileWork work = load_work(profile, {.kernel_shares = false});
  const measure::WorkCeilings ceilings = profile_ceilings(profile);
  measure::MeasuredRoofline r = measure::measured_roofline(work, ceilings);
  // Only Kineto traces carry operator shapes: from another source the note says so instead of asking for
  // record_shapes.
  const auto source = profile.meta().find("source_format");
  if (!r.shapes_recorded && source != profile.meta().end() && source->second != "kineto") {
    for (auto& note : r.notes) {
      if (note == measure::kNoShapesNote)
        note = "no operator shapes: " + source->second +
               " profiles do not record them (a Kineto trace recorded "
               "with record_shapes=True does)";
    }
  }
  j.begin_object();
  j.field("kernels", r.kernels).field("flops", r.flops).field("bytes", r.bytes);
  j.field("kernel_us", r.kernel_s * 1e6);
  j.key("hardware");
  if (ceilings.hardware.empty()) {
    j.null();
  } else {
    j.value(ceilings.hardware);
  }
  j.key("ops").begin_array();
  for (const auto& op : r.ops) {
    j.begin_object();
    j.field("op", op.op).field("category", measure::to_string(op.category)).field("count", op.count);
    j.field("precision", measure::to_string(op.precision))
        .field("ceiling", measure::peak_name(op.precision, ceilings));
    j.field("flops", op.flops).field("bytes", op.bytes).field("kernel_us", op.kernel_s * 1e6);
    j.end_object();
  }
  j.end_array();
  j.field("left_out", r.left_out);
  j.key("notes").begin_array();
  for (const auto& n : r.notes) j.value(n);
  j.end_array();
  j.end_object();
}

}  // namespace meshscope::app
