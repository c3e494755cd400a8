// libFuzzer harness: the `profile` harness's inputs read in memory. A profile's file held as bytes is read
// through SQLite's deserialize (Profile::load_image, sql::Database::from_image): its summaries as info and
// diff read them (read_summary), then the whole profile (in one slice or three, each slice's thread with its
// own copy) and the measured analysis of what loaded. No file is written or opened per execution: a
// fraction of a millisecond where the `profile` harness, which also reads ranks alone, streams and exports
// through files, spends tens (docs/RELIABILITY.md). The first input byte picks the mode, as in `profile`, so
// the two share their corpus:
//   even: the rest of the input is the profile file itself (damaged SQLite pages, headers, records);
//   odd:  the rest is SQL run by the file's author on a copy in memory of a small real profile (the kineto
//         seed cut from hta/nccl_parser_config, imported and summarised once at start).
// Its second bit: the large tables read in three slices. Findings: a crash, a sanitizer report, a timeout,
// or an Error that is not one line naming the profile.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/summary.hpp"
#include "collectors/import/import.hpp"
#include "job/summaries.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/summary_store.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

std::vector<unsigned char> make_seed() {
  const fuzz::fs::path path = fuzz::scratch() / "seed.msdb";
  import_traces({fuzz::fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fuzz/corpus/kineto/nccl_collectives.json"},
                path);
  add_summaries(path);
  std::vector<unsigned char> bytes = fuzz::small_page_image(path);
  if (bytes.empty()) std::abort();  // the harness cannot run without its seed
  return bytes;
}

void read_image(std::span<const unsigned char> image, bool sliced) {
  try {
    sql::Database db = sql::Database::from_image(image, "profile.msdb");
    (void)read_summary(db, "profile.msdb");
  } catch (const Error& e) {
    fuzz::require_one_line_naming(e, "profile.msdb");
  }
  try {
    const Profile profile =
        Profile::load_image(image, "profile.msdb", LoadOptions{.table_slices = sliced ? 3u : 1u});
    measure::Options options;
    options.threads = 1;
    (void)measure::analyze(profile, options);
  } catch (const Error& e) {
    fuzz::require_one_line_naming(e, "profile.msdb");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  if (size == 0) return 0;
  static const std::vector<unsigned char> seed = make_seed();
  const bool sliced = (data[0] & 2) != 0;
  if (data[0] % 2 == 0) {
    read_image({data + 1, size - 1}, sliced);
    return 0;
  }
  const fuzz::ChangedSeed changed(seed, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  if (!changed.bytes().empty()) read_image(changed.bytes(), sliced);
  return 0;
}
