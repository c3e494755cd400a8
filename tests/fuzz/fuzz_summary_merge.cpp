// libFuzzer harness: `summarize --merge` of summary parts, the summaries read back, and the Overview's layout
// of the merged job. Three summaries-only parts (ranks 0-2 of a job of 3, each imported from a small Kineto
// trace as `summarize --summaries-only` writes it) are made at start; each input is SQL run on copies of them
// by their author, split on the byte 0x01 into one script per part. Findings: a crash, a sanitizer report, a
// timeout, an out-of-memory, an error that is not one line naming a part or the job, or a merged job whose
// summaries do not read back.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/summary.hpp"
#include "app/gui/overview_layout.hpp"
#include "collectors/import/import.hpp"
#include "job/import_job.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/summary_store.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

fuzz::fs::path make_part(std::int32_t rank) {
  const fuzz::fs::path trace = fuzz::scratch() / ("rank-" + std::to_string(rank) + ".json");
  const std::string text = fuzz::small_rank_trace(rank, 3);
  fuzz::write_file(trace, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  const fuzz::fs::path part = fuzz::scratch() / ("seed" + std::to_string(rank) + ".msdb");
  import_with_summaries({trace}, part, {}, {}, [](const fuzz::fs::path& written) { drop_events(written); });
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  static const std::vector<fuzz::fs::path> seeds = [] {
    std::vector<fuzz::fs::path> paths;
    for (std::int32_t rank = 0; rank < 3; ++rank) paths.push_back(make_part(rank));
    return paths;
  }();
  const fuzz::fs::path dir = fuzz::scratch() / "job";
  const std::vector<fuzz::fs::path> parts = fuzz::seed_copies_changed_by(
      seeds, dir, data, size, [](std::size_t i) { return "part-" + std::to_string(i) + ".msdb"; });
  // Each part alone, as `info` reads it.
  for (const auto& part : parts) {
    try {
      if (const auto summary = read_summary(part)) {
        const gui::OverviewGrid grid = gui::overview_grid(*summary);
        const auto order = gui::overview_order(*summary, gui::OverviewSort::kLateness);
        (void)gui::overview_map(grid, order, gui::OverviewMetric::kIdle, 64, 256);
      }
    } catch (const Error& e) {
      fuzz::require_one_line_naming(e, "part-");
    }
  }
  // The merge, as `summarize --merge PARTS -o job.msdb` runs it.
  const fuzz::fs::path job = dir / "job.msdb";
  try {
    WriterOptions options;
    options.background = false;
    options.before_publish = [&](const fuzz::fs::path& written, const fuzz::fs::path& shown) {
      with_output_named(written, shown, [&] { merge_summary_parts(parts, written); });
    };
    ProfileWriter writer(job, options);
    writer.set_meta("source_format", "meshscope-summaries");
    writer.commit();
  } catch (const Error& e) {
    const std::string_view message = e.what();
    if (message.find('\n') != std::string_view::npos ||
        (message.find("part-") == std::string_view::npos &&
         message.find("job.msdb") == std::string_view::npos)) {
      std::fprintf(stderr, "an error that is not one line naming a part or the job: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  // What the merge accepted and wrote reads back, and lays out.
  try {
    const auto summary = read_summary(job);
    if (!summary) {
      std::fprintf(stderr, "the merged job has no summaries\n");
      std::abort();
    }
    const gui::OverviewGrid grid = gui::overview_grid(*summary);
    const auto order = gui::overview_order(*summary, gui::OverviewSort::kExposedComm);
    (void)gui::overview_map(grid, order, gui::OverviewMetric::kExposedComm, 64, 256);
    (void)gui::slowest_step(*summary);
  } catch (const Error& e) {
    std::fprintf(stderr, "meshscope merged parts into a job it cannot read: %s\n", e.what());
    std::abort();
  }
  fuzz::must_load(job);
  return 0;
}
