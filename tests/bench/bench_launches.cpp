// Benchmark of the launch and queue analysis and the pipeline detection that `meshscope report` adds, on a
// generated 64-rank, 10 M-event profile loaded as `report` loads it (no CPU operators).
//
//   meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o /tmp/job64.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/job64.msdb taskset -c 0,1 meshscope_bench_launches
//
// BM_LaunchesAndQueues times measure::analyze_launches (launch links, latency, queue length, host-bound
// launches of every rank; as many threads as the process may use), BM_PipelineSearch measure_pipeline on a
// profile without pipeline parallelism (the search for pipeline groups, all `report` does then).
// docs/PERFORMANCE.md ("diff, critical path, launches") records the results.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <benchmark/benchmark.h>

#include "analysis/measure/launch_queue.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
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
  return meshscope::bench::analysed(input_path(), meshscope::LoadOptions{.cpu_operators = false});
}

void BM_LaunchesAndQueues(benchmark::State& state) {
  const meshscope::bench::Analysed& l = loaded();
  std::int64_t linked = 0;
  for (auto _ : state) {
    const measure::LaunchAnalysis a = measure::analyze_launches(l.profile, cores());
    linked = a.latency.count;
    benchmark::DoNotOptimize(a.ranks.data());
  }
  state.counters["linked_activities"] = static_cast<double>(linked);
  state.counters["ranks"] = static_cast<double>(l.profile.ranks().size());
  state.counters["threads"] = cores();
}

void BM_PipelineSearch(benchmark::State& state) {
  const meshscope::bench::Analysed& l = loaded();
  for (auto _ : state) {
    const measure::PipelineReport p = measure::measure_pipeline(l.profile, l.analysis);
    benchmark::DoNotOptimize(p.groups.data());
  }
  state.counters["ranks"] = static_cast<double>(l.profile.ranks().size());
}

BENCHMARK(BM_LaunchesAndQueues)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PipelineSearch)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_launches", input_path(),
      "meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o", "MESHSCOPE_BENCH_PROFILE",
      "a profile");
}
