// Peak memory of `import` on one trace holding millions of CPU operators: a 7 MB gzip of
// 27.5 million identical operators (2.1 GB of JSON, each operator nested in the one before) took 5.9 GB.
// Each iteration imports in a child process, as the command line does (import_with_summaries: the profile
// and its summaries), and reports the child's peak resident memory (wait4's ru_maxrss) beside the time.
// Inputs are generated once into the benchmarks' tmp folder and kept:
//   identical/N   N copies of one operator at one time: N nested levels (the issue's file at N = 27.5 M)
//   sequential/N  N operators one after the other (ts 2 us apart): a long CPU-only trace
// docs/PERFORMANCE.md "Import memory" records the results and the command.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "collectors/import/import.hpp"
#include "job/import_job.hpp"
#include "profiler/error.hpp"

namespace {

namespace fs = std::filesystem;

enum class Shape { kIdentical, kSequential };

// The trace of SHAPE with N operators, made when missing (through a temporary name: an interrupted run
// leaves no partial input behind).
fs::path input(Shape shape, std::int64_t n) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP);
  fs::create_directories(dir);
  const fs::path path = dir / fmt::format("bench-operators-{}-{}.json.gz",
                                          shape == Shape::kIdentical ? "identical" : "sequential", n);
  if (fs::exists(path)) return path;
  const fs::path partial = path.string() + ".partial";
  gzFile gz = gzopen(partial.c_str(), "wb6");
  if (!gz) throw meshscope::Error("cannot write " + partial.string());
  gzbuffer(gz, 1 << 20);
  std::string block = "{\"traceEvents\":[\n";
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t ts = shape == Shape::kIdentical ? 1 : 2 * i;
    block +=
        fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":{},"dur":1}})", ts);
    block += i + 1 < n ? ",\n" : "\n";
    if (block.size() > (1 << 20)) {
      gzwrite(gz, block.data(), static_cast<unsigned>(block.size()));
      block.clear();
    }
  }
  block += "]}\n";
  gzwrite(gz, block.data(), static_cast<unsigned>(block.size()));
  if (gzclose(gz) != Z_OK) throw meshscope::Error("cannot write " + partial.string());
  fs::rename(partial, path);
  return path;
}

void import_in_child(benchmark::State& state, Shape shape) {
  const std::int64_t n = state.range(0);
  const fs::path trace = input(shape, n);
  const fs::path output =
      fs::path(MESHSCOPE_TEST_TMP) / ("bench-import-memory-" + std::to_string(::getpid()) + ".msdb");
  long peak_kb = 0;
  for (auto _ : state) {
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        meshscope::import_with_summaries({trace}, output);
        ::_exit(0);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        ::_exit(1);
      }
    }
    int status = 0;
    rusage usage{};
    if (child < 0 || ::wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      state.SkipWithError("the import failed");
      break;
    }
    peak_kb = std::max(peak_kb, usage.ru_maxrss);
  }
  state.counters["operators"] = static_cast<double>(n);
  state.counters["peak_MB"] = static_cast<double>(peak_kb) / 1024.0;
  state.counters["peak_bytes_per_operator"] = static_cast<double>(peak_kb) * 1024.0 / static_cast<double>(n);
  fs::remove(output);
}

// The issue's size and a small one, each imported once (a run is tens of seconds).
void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(1'000'000)->Arg(27'500'000)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
}

void BM_ImportIdenticalNestedOperators(benchmark::State& state) {
  import_in_child(state, Shape::kIdentical);
}
BENCHMARK(BM_ImportIdenticalNestedOperators)->Apply(sizes);

void BM_ImportSequentialOperators(benchmark::State& state) {
  import_in_child(state, Shape::kSequential);
}
BENCHMARK(BM_ImportSequentialOperators)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
