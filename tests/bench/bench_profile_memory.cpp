// Memory of a loaded profile: the bytes its events hold per event, as the GUI loads it
// (everything) and as report loads it (no CPU operators, no kernel details), with the load time.
//
//   meshscope_gen_job --ranks 1024 --events-per-rank 20000 -o /tmp/j1k/job && meshscope import /tmp/j1k/job
//   -o /tmp/j1k.msdb MESHSCOPE_BENCH_PROFILE=/tmp/j1k.msdb meshscope_bench_profile_memory
//
// Without MESHSCOPE_BENCH_PROFILE it reads MESHSCOPE_TEST_TMP/bench_job64.msdb (as meshscope_bench_report).
// Counters: events loaded, bytes_per_event (everything the events hold / events), and per kind of record the
// bytes each holds (activity, api_call, range, kernel_detail per kernel, collective). docs/PERFORMANCE.md,
// "Bytes per event", records the results.
#include <cstdlib>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "profiler/profile.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using meshscope::Profile;

std::filesystem::path input_path() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64.msdb";
}

void per(benchmark::State& state, const char* name, std::size_t bytes, std::size_t count) {
  if (count > 0) state.counters[name] = static_cast<double>(bytes) / static_cast<double>(count);
}

void load_and_count(benchmark::State& state, const meshscope::LoadOptions& options) {
  meshscope::EventMemory memory;
  std::size_t activities = 0, kernels = 0, api_calls = 0, ranges = 0, collectives = 0;
  for (auto _ : state) {
    const Profile p = Profile::load(input_path(), options);
    state.PauseTiming();
    memory = {};
    activities = kernels = api_calls = ranges = collectives = 0;
    for (const auto& r : p.ranks()) {
      memory += meshscope::event_memory(r);
      activities += r.activities.size();
      for (const auto& a : r.activities) kernels += a.kind == meshscope::ActivityKind::kKernel ? 1 : 0;
      api_calls += r.api_calls.size();
      ranges += r.ranges.size();
      collectives += r.collectives.size();
    }
    state.ResumeTiming();
  }
  state.counters["events"] = static_cast<double>(memory.events);
  state.counters["MB"] = static_cast<double>(memory.total()) / 1e6;
  per(state, "bytes_per_event", memory.total(), memory.events);
  per(state, "activity", memory.activities, activities);
  per(state, "kernel_detail", memory.kernel_details, kernels);
  per(state, "api_call", memory.api_calls, api_calls);
  per(state, "range", memory.ranges, ranges);
  per(state, "collective", memory.collectives, collectives);
}

// What `view` loads.
void BM_LoadEverything(benchmark::State& state) {
  load_and_count(state, {});
}
// What `report` loads by default.
void BM_LoadForReport(benchmark::State& state) {
  load_and_count(state, meshscope::LoadOptions{.cpu_operators = false, .kernel_details = false});
}

BENCHMARK(BM_LoadEverything)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_LoadForReport)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_profile_memory", input_path(),
      "meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o", "MESHSCOPE_BENCH_PROFILE",
      "a profile");
}
