#include "job/import_job.hpp"
#include "job/summaries.hpp"

#include <optional>
#include <string>
#include <utility>

#include "analysis/measure/op_work.hpp"
#include "analysis/measure/summary.hpp"
#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/summary_store.hpp"

namespace meshscope {

ImportSummary import_with_summaries(
    const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& output,
    ImportOptions options, const std::function<void(const std::filesystem::path& written)>& before_summaries,
    const std::function<void(const std::filesystem::path& written)>& then) {
  measure::ImportSummaries summaries;
  options.operator_work = measure::operator_work_formulas();
  options.each_rank_read = [&summaries](const std::filesystem::path& file, const RankRecords& rows) {
    summaries.add(file, rows);
  };
  std::optional<Error> summaries_failed;
  ImportSummary imported = import_traces(
      inputs, output, options,
      [&](const std::filesystem::path& written, const std::filesystem::path& shown,
          const ImportSummary& read) {
        if (before_summaries) with_output_named(written, shown, [&] { before_summaries(written); });
        std::vector<std::pair<std::int32_t, std::string>> rank_files;
        for (const ImportedRank& r : read.ranks) rank_files.emplace_back(r.rank, r.source_file);
        try {
          with_output_named(written, shown, [&] { write_import_summaries(summaries, written, rank_files); });
        } catch (const Error& e) {
          // The profile is complete without them (the write is one transaction): it is
          // published.
          if (then) throw;
          summaries_failed = e;
          return;
        }
        if (then) with_output_named(written, shown, [&] { then(written); });
      });
  if (summaries_failed) throw *summaries_failed;
  return imported;
}

namespace {

std::int64_t events_of(const EventCounts& n) {
  return n.kernel + n.memcpy + n.memset + n.sync + n.runtime + n.driver + n.cpu_op + n.annotation +
         n.python_function + n.step + n.gpu_annotation + n.nvtx + n.other + n.os_runtime + n.collective +
         n.flow + n.on_cpu + n.cpu_sample;
}

}  // namespace

bool summarize_in_place(const std::filesystem::path& input) {
  // One clear line for a file that is no profile; a summary part has no events to summarise again.
  if (events_dropped(Profile::load(input, LoadOptions{.events = false}).meta())) return false;
  ProfileSummary summary = compute_summaries(input);
  std::optional<ProfileSummary> stored;
  try {
    stored = read_summary(input);
  } catch (const Error&) {  // damaged summaries are replaced by the ones computed from the events
  }
  if (stored) {
    for (RankSummary& fresh : summary.ranks) {
      const RankSummary* kept = find_rank(*stored, fresh.rank);
      if (kept && events_of(fresh.counts) == 0 && events_of(kept->counts) > 0) fresh = *kept;
    }
  }
  OutputFile output(input);
  with_output_named(output.scratch(), input, [&] {
    sql::copy_database(input, output.scratch(), input);
    write_summary(output.scratch(), summary);
  });
  output.publish();
  return true;
}

std::vector<std::int32_t> merge_summary_parts_into(const std::vector<std::filesystem::path>& parts,
                                                   const std::vector<std::filesystem::path>& event_traces,
                                                   const std::filesystem::path& output) {
  // No part and no trace is ever the output (the writer checks the traces; the parts are checked here).
  std::vector<std::filesystem::path> inputs = parts;
  for (const auto& e : expand_trace_inputs(event_traces)) inputs.push_back(e);
  refuse_output_among_inputs(resolve_output_path(output), inputs);
  std::vector<std::int32_t> copied;
  auto merge = [&](const std::filesystem::path& written) { copied = merge_summary_parts(parts, written); };
  // The ranks whose events are wanted come in whole (imported from their traces); every other rank only as
  // its summary. The output appears once everything is in it.
  if (!event_traces.empty()) {
    import_with_summaries(event_traces, output, {}, {}, merge);
    return copied;
  }
  WriterOptions options;
  options.inputs = inputs;
  options.before_publish = [&](const std::filesystem::path& written, const std::filesystem::path& shown) {
    with_output_named(written, shown, [&] { merge(written); });
  };
  ProfileWriter job(output, options);  // the schema, no rank yet: every rank comes from a part
  job.set_meta("source_format", "meshscope-summaries");
  job.commit();
  return copied;
}

}  // namespace meshscope
