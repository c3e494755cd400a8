// Import speed on real traces: the whole `import` path (read, decompress, parse, write SQLite, indexes)
// through the library, as the command line runs it. docs/PERFORMANCE.md records the results and the command.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "collectors/import/import.hpp"

namespace {

std::filesystem::path trace(const char* relative) {
  return std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces" / relative;
}

void import_once(benchmark::State& state, const std::filesystem::path& input, bool streaming) {
  const auto output =
      std::filesystem::path(MESHSCOPE_TEST_TMP) / ("bench-import-" + std::to_string(::getpid()) + ".msdb");
  meshscope::ImportOptions options;
  if (streaming) options.streaming_threshold_bytes = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto summary = meshscope::import_traces({input}, output, options);
    events = 0;
    for (const auto& r : summary.ranks) events += r.gpu_events + r.cpu_events;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(output);
}

// HTA needs 1.65 s to load this trace on a 2-core machine (shared/traces/README.md); the target is a
// twentieth.
void BM_ImportNegativeQueueRank0(benchmark::State& state) {
  import_once(state, trace("hta/negative_queue_length_values_check/rank0.json.gz"), false);
}
BENCHMARK(BM_ImportNegativeQueueRank0)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ImportNegativeQueueRank0Streaming(benchmark::State& state) {
  import_once(state, trace("hta/negative_queue_length_values_check/rank0.json.gz"), true);
}
BENCHMARK(BM_ImportNegativeQueueRank0Streaming)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ImportTraceDiff(benchmark::State& state) {
  import_once(state, trace("hta/trace_diff/test/test.json.gz"), false);
}
BENCHMARK(BM_ImportTraceDiff)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ImportTwoRankJob(benchmark::State& state) {
  import_once(state, trace("hta/trace_filter"), false);
}
BENCHMARK(BM_ImportTwoRankJob)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
