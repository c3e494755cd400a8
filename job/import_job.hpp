// The job room (docs/ARCHITECTURE.md): what the front ends call to make a profile of a job, and, in time, to
// open one (the profile, its summaries and every result derived from them, computed once). The importers
// (collectors/import) know nothing of the analyses; the job supplies what they compute while reading.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "collectors/import/import.hpp"

namespace meshscope {

// import_traces with the work formulas of analysis/measure/op_work.hpp (OPTIONS.operator_work), then the
// profile's summaries (docs/PROFILE.md "Summaries") added before the output appears:
// each rank's computed on the reading threads from the rows just read (measure::ImportSummaries, through
// OPTIONS.each_rank_read), the collectives matched once the profile is written; a profile whose ranks were
// not all summarised so (an Nsight Systems export, a file read as it was written) is summarised by
// add_summaries. BEFORE_SUMMARIES, when given, runs between the two on the written profile (what
// the user stated the job ran is stored there, kept even when the summaries fail); THEN, when given, after
// the summaries and before the output appears (a merge, events dropped). When the summaries fail the output
// appears complete without them and their meshscope::Error (naming the output) is thrown; when THEN fails
// nothing is written.
ImportSummary import_with_summaries(
    const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& output,
    ImportOptions options = {},
    const std::function<void(const std::filesystem::path& written)>& before_summaries = {},
    const std::function<void(const std::filesystem::path& written)>& then = {});

// Summarises the profile at PATH again without ever writing into it: the summaries are computed from the file
// (read-only), written into a copy beside it, and the copy replaces it at once. A rank whose summary is
// stored but whose events the file does not hold (a merged job's summaries-only ranks) keeps its summary. A
// profile that holds only summaries (a part written by `summarize --summaries-only`) has no events to
// summarise: it is left as it is and false returned. One meshscope::Error line, naming PATH, for a file that
// is no profile.
bool summarize_in_place(const std::filesystem::path& path);

// `summarize --merge`: one job profile at OUTPUT from the summaries of PARTS (profiles written by `summarize
// --summaries-only`, checked against each other as profiler/summary_store's merge_summary_parts says), with
// the events of the ranks whose traces EVENT_TRACES gives imported whole. No part and no trace may be the
// output; the output appears once everything is in it. Returns the ranks copied from the parts.
std::vector<std::int32_t> merge_summary_parts_into(const std::vector<std::filesystem::path>& parts,
                                                   const std::vector<std::filesystem::path>& event_traces,
                                                   const std::filesystem::path& output);

}  // namespace meshscope
