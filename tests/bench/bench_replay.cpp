// Benchmark of the replay (`whatif`) on a loaded and analysed generated job: the dependency graph of every
// rank built and replayed as measured (`measure::replay`), and an edit (GEMMs twice as fast, communication
// half as fast) simulated on a graph already built (`ReplayGraph::run`, what a second edit costs).
//
//   meshscope_gen_job --ranks 1024 --events-per-rank 20000 --format msdb -o /tmp/job1k.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/job1k.msdb taskset -c 0,1 meshscope_bench_replay
//
// docs/PERFORMANCE.md ("whatif") records the results; the targets: the replay of the 1,024-rank job (20 M
// events) under 2 s, an edit under 0.5 s.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>

#include "analysis/compare/whatif_request.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "profiler/profile.hpp"
#include "tests/bench/bench_analysed.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using meshscope::Profile;
namespace compare = meshscope::compare;
namespace measure = meshscope::measure;

std::filesystem::path input_path() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job1k.msdb";
}

using meshscope::bench::cores;

// The replay reads GPU activities and CUDA calls, not the operators.
const meshscope::bench::Analysed& loaded() {
  return meshscope::bench::analysed(input_path(), meshscope::LoadOptions{.cpu_operators = false});
}

// Each iteration: the whole replay (graph and simulation), or with KEPT_GRAPH a run of one graph built
// before.
void run(benchmark::State& state, const char* edits_text, bool kept_graph) {
  const meshscope::bench::Analysed& l = loaded();
  compare::WhatifRequest request;
  std::string error;
  if (!compare::parse_whatif_line(edits_text, request, error)) state.SkipWithError(error.c_str());
  measure::ReplayEdits edits;
  edits.scales = request.scales;
  edits.fix_straggler = request.fix_straggler;
  measure::ReplayOptions options;
  options.threads = cores();
  std::optional<measure::ReplayGraph> graph;
  if (kept_graph) graph.emplace(l.profile, l.analysis, options);
  double error_pct = 0;
  for (auto _ : state) {
    const measure::Replay r =
        graph ? graph->run(edits) : measure::replay(l.profile, l.analysis, edits, options);
    error_pct = r.mean_abs_error_pct;
    benchmark::DoNotOptimize(r.steps.data());
  }
  const auto& n = l.profile.counts();
  state.counters["ranks"] = static_cast<double>(l.profile.ranks().size());
  state.counters["events"] =
      static_cast<double>(n.kernel + n.memcpy + n.memset + n.sync + n.runtime + n.driver);
  // Without edits: the replay's mean |error| against the measured steps; with: the mean change of the steps.
  state.counters[edits.empty() ? "error_pct" : "change_pct"] = error_pct;
  state.counters["threads"] = cores();
}

void BM_Replay(benchmark::State& state) {
  run(state, "replay", false);
}
void BM_Edit(benchmark::State& state) {
  run(state, "gemm=0.5 comm=2", true);
}

BENCHMARK(BM_Replay)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Edit)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_replay", input_path(),
      "meshscope_gen_job --ranks 1024 --events-per-rank 20000 --format msdb -o", "MESHSCOPE_BENCH_PROFILE",
      "a profile");
}
