// Benchmark of `meshscope diff`: two generated 64-rank, 10 M-event profiles of the same job
// (other seeds), loaded with CPU operators as `diff` loads them, analysed and compared.
//
//   meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o /tmp/job64.msdb
//   meshscope_gen_job --ranks 64 --events-per-rank 156250 --seed 2 --format msdb -o /tmp/job64b.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/job64.msdb MESHSCOPE_BENCH_PROFILE_B=/tmp/job64b.msdb (continued:)
//     taskset -c 0,1 meshscope_bench_diff
//
// BM_Diff times measure::diff_profiles alone (both profiles loaded and analysed beforehand),
// BM_AnalyzeAndDiff the two analyses and the comparison, BM_LoadAnalyzeDiff everything `meshscope diff` does
// but the output. docs/PERFORMANCE.md ("diff and critical path") records the results; the target: under 5 s
// on 2 cores.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>

#include "analysis/measure/diff.hpp"
#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using meshscope::Profile;
namespace measure = meshscope::measure;

std::filesystem::path path_a() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64.msdb";
}
std::filesystem::path path_b() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE_B")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64b.msdb";
}

using meshscope::bench::cores;

measure::Options options() {
  measure::Options o;
  o.threads = cores();
  return o;
}

struct Loaded {
  Profile a, b;
  measure::Analysis analysis_a, analysis_b;
};

const Loaded& loaded() {
  static std::optional<Loaded> l;
  if (!l) {
    l.emplace(Loaded{Profile::load(path_a()), Profile::load(path_b()), {}, {}});
    l->analysis_a = measure::analyze(l->a, options());
    l->analysis_b = measure::analyze(l->b, options());
  }
  return *l;
}

void add_counters(benchmark::State& state) {
  const Loaded& l = loaded();
  state.counters["ranks"] = static_cast<double>(l.a.ranks().size());
  auto events = [](const Profile& p) {
    const auto& n = p.counts();
    return static_cast<double>(n.kernel + n.memcpy + n.memset + n.sync + n.runtime + n.driver + n.cpu_op +
                               n.annotation + n.python_function + n.step + n.gpu_annotation + n.nvtx +
                               n.other + n.collective + n.flow);
  };
  state.counters["events_a"] = events(l.a);
  state.counters["events_b"] = events(l.b);
  state.counters["threads"] = cores();
}

void BM_Diff(benchmark::State& state) {
  const Loaded& l = loaded();
  for (auto _ : state) {
    measure::Diff d = measure::diff_profiles(l.a, l.analysis_a, l.b, l.analysis_b);
    benchmark::DoNotOptimize(d.kernels.data());
  }
  add_counters(state);
}

void BM_AnalyzeAndDiff(benchmark::State& state) {
  const Loaded& l = loaded();
  for (auto _ : state) {
    const measure::Analysis a = measure::analyze(l.a, options());
    const measure::Analysis b = measure::analyze(l.b, options());
    measure::Diff d = measure::diff_profiles(l.a, a, l.b, b);
    benchmark::DoNotOptimize(d.kernels.data());
  }
  add_counters(state);
}

void BM_LoadAnalyzeDiff(benchmark::State& state) {
  for (auto _ : state) {
    const Profile a = Profile::load(path_a());
    const Profile b = Profile::load(path_b());
    const measure::Analysis analysis_a = measure::analyze(a, options());
    const measure::Analysis analysis_b = measure::analyze(b, options());
    measure::Diff d = measure::diff_profiles(a, analysis_a, b, analysis_b);
    benchmark::DoNotOptimize(d.kernels.data());
  }
  add_counters(state);
}

BENCHMARK(BM_Diff)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeAndDiff)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_LoadAnalyzeDiff)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  for (const auto& path : {path_a(), path_b()}) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      std::fprintf(stderr,
                   "meshscope_bench_diff: %s does not exist; generate the two profiles with\n"
                   "  meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o %s\n"
                   "  meshscope_gen_job --ranks 64 --events-per-rank 156250 --seed 2 --format msdb -o %s\n"
                   "or point MESHSCOPE_BENCH_PROFILE and MESHSCOPE_BENCH_PROFILE_B at two profiles\n",
                   path.c_str(), path_a().c_str(), path_b().c_str());
      return 1;
    }
  }
  return meshscope::bench::run_benchmarks(argc, argv);
}
