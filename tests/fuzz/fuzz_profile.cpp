// libFuzzer harness: Profile::load, then the measured analysis and the Perfetto export of what loaded, and
// the per-rank summaries as info and diff read them (read_summary). The first input byte picks the
// mode (its second bit: the large tables read whole or in three slices; its third: every rank also read alone
// as the view's lazy ranks read them, with its fourth the row runs read exactly rather than probed; its
// fifth: `report`'s analysis streamed rank by rank, analyze_for_report, and the summary pass in
// batches of ranks, summarize_in_batches):
//   even: the rest of the input is the profile file itself (damaged SQLite pages, headers, records);
//   odd:  the rest is SQL run on a copy of a small real profile (the kineto seed cut from
//         hta/nccl_parser_config, imported and summarised once at start) by the file's author: views and
//         triggers in place of tables, hostile ids, kinds, depths, times, types and sizes in a well-formed
//         file.
// Findings: a crash, a sanitizer report (the analysis and export included), a timeout, or an Error that is
// not one line naming the file.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/summary.hpp"
#include "collectors/import/import.hpp"
#include "job/report_analysis.hpp"
#include "job/summaries.hpp"
#include "profiler/perfetto_export.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/summary_store.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  if (size == 0) return 0;
  static const fuzz::fs::path seed = [] {
    const fuzz::fs::path path = fuzz::scratch() / "seed.msdb";
    import_traces({fuzz::fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fuzz/corpus/kineto/nccl_collectives.json"},
                  path);
    add_summaries(path);
    return path;
  }();
  const fuzz::fs::path input = fuzz::scratch() / "profile.msdb";
  if (data[0] % 2 == 0) {
    fuzz::write_file(input, data + 1, size - 1);
  } else {
    fuzz::fs::copy_file(seed, input, fuzz::fs::copy_options::overwrite_existing);
    fuzz::apply_sql(input, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  }
  try {
    (void)read_summary(input);
  } catch (const Error& e) {
    fuzz::require_one_line_naming(e, "profile.msdb");
  }
  if ((data[0] & 4) != 0) {
    // The third bit: the view's lazy ranks as well, each rank read alone through its row runs (found by point
    // queries on hostile rowids), composed, and analysed in parts (profiler/rank_rows.hpp,
    // app/gui/lazy_ranks).
    try {
      const Profile description = Profile::load(input, LoadOptions{.events = false});
      RankRowIndex index = index_rank_rows(input);
      if ((data[0] & 8) != 0) {
        for (int t = 0; t < kEventTableCount; ++t)
          index_table_exactly(input, static_cast<EventTable>(t), index);
      }
      std::vector<RankRows> rows;
      for (const Rank& r : description.ranks()) rows.push_back(index.rows_of(r.rank));
      const LoadedRanks got = Profile::load_ranks(description, rows);
      const Profile composed = description.with_ranks(got.ranks, got.strings);
      measure::Options options;
      options.threads = 1;
      measure::RankAnalyzer analyzer(options);
      std::vector<measure::RankPart> parts;
      for (std::size_t r = 0; r < composed.ranks().size(); ++r)
        parts.push_back(analyzer.analyze(composed, r));
      (void)measure::combine(composed, std::move(parts), {}, options);
    } catch (const Error& e) {
      fuzz::require_one_line_naming(e, "profile.msdb");
    }
  }
  if ((data[0] & 16) != 0) {
    // The fifth bit: report's analysis reading the ranks one at a time, checked against hostile summaries.
    try {
      ReportOptions options;
      options.streaming = Streaming::kAlways;
      options.batch_ranks = 1;
      options.analysis.threads = 1;
      (void)analyze_for_report(input, options);
    } catch (const Error& e) {
      fuzz::require_one_line_naming(e, "profile.msdb");
    }
    // And the summary pass in batches of ranks (the one `import` ends with on a large profile), every rank
    // taken as small (operators loaded) or, by the sixth bit, as large (operators streamed from the file).
    try {
      (void)summarize_in_batches(input, 0, 1, (data[0] & 32) != 0 ? 1 : kSummaryLargeRankRanges);
    } catch (const Error& e) {
      fuzz::require_one_line_naming(e, "profile.msdb");
    }
  }
  try {
    // The second bit picks a whole read of each large table or three rowid slices of it (profile.cpp).
    const Profile profile = Profile::load(input, LoadOptions{.table_slices = (data[0] & 2) != 0 ? 3u : 1u});
    measure::Options options;
    options.threads = 1;
    (void)measure::analyze(profile, options);
    export_perfetto(profile, fuzz::scratch() / "export.json");
  } catch (const Error& e) {
    // One line naming the file (or the export written from it).
    const std::string_view message = e.what();
    if (message.find('\n') != std::string_view::npos ||
        (message.find("profile.msdb") == std::string_view::npos &&
         message.find("export.json") == std::string_view::npos)) {
      std::fprintf(stderr, "an error that is not one line naming the file: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
