// Benchmark of importing a job of many files: a generated 64-rank job, one gzipped Kineto
// file per rank, imported as `meshscope import DIR` does (the reading threads, the writer, the indexes).
//
//   meshscope_gen_job --ranks 64 --events-per-rank 20000 --format kineto-gz -o /tmp/job64-kineto
//   MESHSCOPE_BENCH_JOB=/tmp/job64-kineto taskset -c 0,1 meshscope_bench_import_job
//
// BM_ImportJob/N reads the files on N threads (0: one per core, as the command line does);
// BM_ImportJobStreamed streams each file into the profile as it is read, one after the other, on the
// importing thread (the path of files too large to hold), for comparison. docs/PERFORMANCE.md ("Import of
// many files") records the results.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "analysis/measure/op_work.hpp"
#include "collectors/import/import.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

std::filesystem::path job_dir() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_JOB")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_job64_kineto";
}

void import_job(benchmark::State& state, const meshscope::ImportOptions& options) {
  const auto output = std::filesystem::path(MESHSCOPE_TEST_TMP) /
                      ("bench-import-job-" + std::to_string(::getpid()) + ".msdb");
  std::uint64_t events = 0, files = 0;
  for (auto _ : state) {
    const auto summary = meshscope::import_traces({job_dir()}, output, options);
    events = 0;
    for (const auto& r : summary.ranks) events += r.gpu_events + r.cpu_events;
    files = summary.ranks.size();
  }
  state.counters["files"] = static_cast<double>(files);
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(output);
}

void BM_ImportJob(benchmark::State& state) {
  meshscope::ImportOptions options;
  options.operator_work = meshscope::measure::operator_work_formulas();  // as the job imports
  options.threads = static_cast<unsigned>(state.range(0));
  import_job(state, options);
}
BENCHMARK(BM_ImportJob)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_ImportJobStreamed(benchmark::State& state) {
  meshscope::ImportOptions options;
  options.operator_work = meshscope::measure::operator_work_formulas();  // as the job imports
  options.streaming_threshold_bytes = 0;
  import_job(state, options);
}
BENCHMARK(BM_ImportJobStreamed)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(
      argc, argv, "meshscope_bench_import_job", job_dir(),
      "meshscope_gen_job --ranks 64 --events-per-rank 20000 --format kineto-gz -o", "MESHSCOPE_BENCH_JOB",
      "a folder of traces of one job");
}
