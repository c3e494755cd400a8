// libFuzzer harness: the summary tables of one profile read as untrusted input (read_summary) and laid out as
// the Overview draws them, all in memory. A summaries-only part (ranks 0-2 of a job of 3, imported from small
// Kineto traces and merged, as `summarize --summaries-only` writes it) is made once and kept as bytes; each
// input's first SQL script (the inputs are those of `summary_merge`: scripts split on the byte 0x01) is run
// on a copy of those bytes in memory by their author, and the result is read through
// sql::Database::from_image. No file is written or opened per execution, and one connection is opened for the
// author and one for the reader: an execution costs a fraction of a millisecond (docs/RELIABILITY.md), where
// the deep harnesses
// (`summary_merge`, `profile`) spend tens of milliseconds on files, threads and a dozen connections.
// Findings: a crash, a sanitizer report, a timeout, an out-of-memory, or an error that is not one line
// naming the profile.
#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/gui/overview_layout.hpp"
#include "collectors/import/import.hpp"
#include "job/import_job.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/summary_store.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

// The seed: three ranks' summaries in one summaries-only profile, as bytes.
std::vector<unsigned char> make_seed() {
  std::vector<fuzz::fs::path> traces;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string text = fuzz::small_rank_trace(rank, 3);
    traces.push_back(fuzz::scratch() / ("rank-" + std::to_string(rank) + ".json"));
    fuzz::write_file(traces.back(), reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  }
  const fuzz::fs::path seed = fuzz::scratch() / "seed.msdb";
  import_with_summaries(traces, seed, {}, {}, [](const fuzz::fs::path& written) { drop_events(written); });
  std::vector<unsigned char> bytes = fuzz::small_page_image(seed);
  if (bytes.empty()) std::abort();  // the harness cannot run without its seed
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  static const std::vector<unsigned char> seed = make_seed();
  std::string_view script(reinterpret_cast<const char*>(data), size);
  script = script.substr(0, script.find('\x01'));
  const fuzz::ChangedSeed changed(seed, script);
  if (changed.bytes().empty()) return 0;
  try {
    sql::Database db = sql::Database::from_image(changed.bytes(), "part.msdb");
    const auto summary = read_summary(db, "part.msdb");
    if (!summary) return 0;
    const gui::OverviewGrid grid = gui::overview_grid(*summary);
    for (const auto sort :
         {gui::OverviewSort::kRank, gui::OverviewSort::kLateness, gui::OverviewSort::kExposedComm}) {
      const auto order = gui::overview_order(*summary, sort);
      (void)gui::overview_map(grid, order, gui::OverviewMetric::kExposedComm, 64, 256);
    }
    (void)gui::slowest_step(*summary);
  } catch (const Error& e) {
    fuzz::require_one_line_naming(e, "part.msdb");
  }
  return 0;
}
