// What a what-if asks for, and the replay edits it makes: the one reading of `whatif`'s flags and of the
// GUI's What-if line (docs/WHATIF.md), so that the command and the view replay the same run for the same
// words. Scales and fix-straggler are measure::ReplayEdits as given; the hardware, layout and link edits
// become factors on each activity from the profile's own fits (hardware_edit.hpp, link_edits.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/link_edits.hpp"
#include "analysis/compare/pipeline_stages.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

struct WhatifRequest {
  std::vector<measure::ScaleEdit> scales;  // CLASS=F, PATTERN=F
  std::vector<LinkEdit> links;             // --link and --latency, in the order given
  std::string hardware;                    // --hardware: a preset name or TOML file; empty: none
  int tp = 0, dp = 0, pp = 0;              // --tp, --dp, --pp; 0: as measured
  int micro_batches = 1;                   // --micro-batches K (with --pp): each measured micro-batch as K
  double batch = 1;                        // --batch: each rank's sequences per step × this
  bool batch_given = false;                // --batch was given (even as 1)
  bool keep_global_batch = false;          // --keep-global-batch: with --dp M, each rank's batch × dp / M
  bool fix_straggler = false;
  // Whether anything beyond scales and fix-straggler is asked: those need the profile's workload.
  bool needs_workload() const {
    return !hardware.empty() || tp > 0 || dp > 0 || pp > 0 || !links.empty() || batch != 1 ||
           keep_global_batch || micro_batches != 1;
  }
};

// One line of edits as `whatif` takes them, separated by spaces or commas: "gemm=0.5 comm=2 fix-straggler
// --tp 4 --dp 16 --keep-global-batch --batch 2 --link inter_node=50 --latency intra_node=4 --hardware b200"
// (each flag's value after a
// space or '='; "replay" for none). False with ERROR set at the first word that is none of these.
bool parse_whatif_line(std::string_view text, WhatifRequest& out, std::string& error);

// --batch's value: a factor above 0 (at most 10^6). False with ERROR set otherwise.
bool parse_batch_scale(std::string_view value, double& out, std::string& error);

// Whether REQUEST's flags go together (--keep-global-batch needs --dp and excludes --batch; --micro-batches
// needs --pp), checked before any profile is read. False with ERROR set otherwise.
bool valid_combination(const WhatifRequest& request, std::string& error);

// --pp N: the stages compare::pipeline_stages cuts the edited replay into.
struct PipelineEdit {
  StageShares shares;
  model::HardwareSpec hw;
  PipelineRequest request;
};

struct WhatifEdits {
  measure::ReplayEdits edits;
  std::optional<PipelineEdit> pipeline;  // --pp: run the replay with its times kept, then pipeline it
  std::vector<std::string> names;        // each edit as `whatif` prints it ("scale gemm=0.5", "tp 4", ...)
  std::vector<std::string> notes;        // what the re-timed edits started from
};

// The replay edits of REQUEST on PROFILE: its scales and fix-straggler as given, and for TARGET (the hardware
// REQUEST names, loaded by the caller; null: none), the layout and the links the factors that re-time each
// kernel and collective. WORK and WORKLOAD are the profile's (read only when REQUEST.needs_workload()).
// Throws meshscope::Error naming TITLE when the profile lacks what an edit needs (the GPU it ran on, a
// degree).
WhatifEdits whatif_edits(const Profile& profile, const measure::Analysis& analysis,
                         const measure::ProfileWork& work, const Workload& workload,
                         const WhatifRequest& request, const model::HardwareSpec* target,
                         std::string_view title);

}  // namespace meshscope::compare
