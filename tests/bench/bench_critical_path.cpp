// Benchmark of the critical path: every step of every rank of a generated 64-rank, 10 M-event
// profile, loaded with CPU operators (the path splits CPU time by the operator open).
//
//   meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o /tmp/job64.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/job64.msdb taskset -c 0,1 meshscope_bench_critical_path
//
// BM_CriticalPath times measure::critical_paths with the segments kept (as the timeline needs them),
// BM_CriticalPathTotals without them (as `report` needs only the totals), both on a loaded and analysed
// profile. docs/PERFORMANCE.md ("diff and critical path") records the results; the target: under 3 s on 2
// cores.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>

#include "analysis/measure/critical_path.hpp"
#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "tests/bench/bench_analysed.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using meshscope::Profile;
namespace measure = meshscope::measure;

std::filesystem::path input_path() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64.msdb";
}

using meshscope::bench::cores;

const meshscope::bench::Analysed& loaded() {
  return meshscope::bench::analysed(input_path());
}

void run(benchmark::State& state, bool keep_segments) {
  const meshscope::bench::Analysed& l = loaded();
  measure::CriticalPathOptions options;
  options.keep_segments = keep_segments;
  options.threads = cores();
  std::int64_t steps = 0, segments = 0;
  for (auto _ : state) {
    const measure::CriticalPaths paths = measure::critical_paths(l.profile, l.analysis, options);
    steps = segments = 0;
    for (const auto& r : paths.ranks) {
      for (const auto& s : r.steps) {
        ++steps;
        segments += s.segment_count;
      }
    }
    benchmark::DoNotOptimize(paths.ranks.data());
  }
  const auto& n = l.profile.counts();
  state.counters["ranks"] = static_cast<double>(l.profile.ranks().size());
  state.counters["events"] = static_cast<double>(
      n.kernel + n.memcpy + n.memset + n.sync + n.runtime + n.driver + n.cpu_op + n.annotation +
      n.python_function + n.step + n.gpu_annotation + n.nvtx + n.other + n.collective + n.flow);
  state.counters["rank_steps"] = static_cast<double>(steps);
  state.counters["segments"] = static_cast<double>(segments);
  state.counters["threads"] = cores();
}

void BM_CriticalPath(benchmark::State& state) {
  run(state, true);
}
void BM_CriticalPathTotals(benchmark::State& state) {
  run(state, false);
}

BENCHMARK(BM_CriticalPath)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CriticalPathTotals)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_critical_path", input_path(),
      "meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o", "MESHSCOPE_BENCH_PROFILE",
      "a profile");
}
