// Benchmark of `meshscope report`: Profile::load, the measured analysis, and both together, on a generated
// job.
//
//   meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o /tmp/job64.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/job64.msdb taskset -c 0,1 meshscope_bench_report
//
// Without MESHSCOPE_BENCH_PROFILE it reads MESHSCOPE_TEST_TMP/bench_job64.msdb. The analysis uses as many
// worker threads as the process may run on (2 under taskset -c 0,1). docs/PERFORMANCE.md, "Measured
// analysis", records the results and the target (report on 64 ranks / 10 M events in under 2 s on 2 cores).
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using meshscope::Profile;
namespace measure = meshscope::measure;

std::filesystem::path input_path() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64.msdb";
}

using meshscope::bench::cores;

const Profile& loaded() {
  static std::optional<Profile> profile;
  if (!profile) profile.emplace(Profile::load(input_path(), meshscope::LoadOptions{.cpu_operators = false}));
  return *profile;
}

void add_counters(benchmark::State& state, const Profile& p) {
  const auto& n = p.counts();
  const double events = static_cast<double>(n.kernel + n.memcpy + n.memset + n.sync + n.runtime + n.driver +
                                            n.cpu_op + n.annotation + n.python_function + n.step +
                                            n.gpu_annotation + n.nvtx + n.other + n.collective + n.flow);
  state.counters["ranks"] = static_cast<double>(p.ranks().size());
  state.counters["events"] = events;
  state.counters["gpu_events"] = static_cast<double>(n.kernel + n.memcpy + n.memset + n.sync);
  state.counters["threads"] = cores();
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) {
    Profile p = Profile::load(input_path(), meshscope::LoadOptions{.cpu_operators = false});
    benchmark::DoNotOptimize(&p.ranks().front());
  }
  add_counters(state, loaded());
}

void BM_Analyze(benchmark::State& state) {
  const Profile& p = loaded();
  measure::Options options;
  options.threads = cores();
  for (auto _ : state) {
    measure::Analysis a = measure::analyze(p, options);
    benchmark::DoNotOptimize(a.ranks.data());
  }
  add_counters(state, p);
}

void BM_AnalyzeOneThread(benchmark::State& state) {
  const Profile& p = loaded();
  measure::Options options;
  options.threads = 1;
  for (auto _ : state) {
    measure::Analysis a = measure::analyze(p, options);
    benchmark::DoNotOptimize(a.ranks.data());
  }
  add_counters(state, p);
}

void BM_LoadAndAnalyze(benchmark::State& state) {
  measure::Options options;
  options.threads = cores();
  for (auto _ : state) {
    Profile p = Profile::load(input_path(), meshscope::LoadOptions{.cpu_operators = false});
    measure::Analysis a = measure::analyze(p, options);
    benchmark::DoNotOptimize(a.ranks.data());
  }
  add_counters(state, loaded());
}

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_Analyze)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeOneThread)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_LoadAndAnalyze)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_report", input_path(),
      "meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o", "MESHSCOPE_BENCH_PROFILE",
      "a profile");
}
