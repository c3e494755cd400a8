// Lazy ranks: what the view pays to open a large job on its summaries and to load the
// ranks a screen shows, instead of every event.
//
//   meshscope_gen_job --ranks 1024 --events-per-rank 20000 --format kineto-gz -o /tmp/j1k/job
//   meshscope import /tmp/j1k/job -o /tmp/j1k/ji.msdb
//   MESHSCOPE_BENCH_PROFILE=/tmp/j1k/ji.msdb meshscope_bench_lazy_ranks
//
// BM_FindRankRows: where each rank's rows lie (profiler/rank_rows.hpp), confirmed by the summaries' counts.
// BM_LoadRanks/N: Profile::load_ranks of N ranks spread over the job (counters: ranks and events per second).
// BM_LazyOpen: load_profile as the view opens a large job (description, summaries, row runs, the sample's
// measured model): the first generation, with no rank's events.
// BM_ScreenOfRanks/N: from that, LazyRanks loading N ranks (a screen of rank headers zoomed in) and handing
// the view its generation. docs/PERFORMANCE.md "Lazy ranks" records the results.
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include <benchmark/benchmark.h>

#include "analysis/measure/summary.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "profiler/profile.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/summary_store.hpp"
#include "tests/bench/bench_main.hpp"

namespace {

using namespace meshscope;

std::filesystem::path input_path() {
  if (const char* env = std::getenv("MESHSCOPE_BENCH_PROFILE")) return env;
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / "bench_lazy_job.msdb";
}

ExpectedRows expected_rows(const ProfileSummary& summary) {
  ExpectedRows out;
  for (const auto& r : summary.ranks) {
    const EventCounts& n = r.counts;
    out[r.rank] = {n.kernel + n.memcpy + n.memset + n.sync, n.runtime + n.driver,
                   n.cpu_op + n.annotation + n.python_function + n.step + n.gpu_annotation + n.nvtx + n.other,
                   n.collective, n.flow};
  }
  return out;
}

void BM_FindRankRows(benchmark::State& state) {
  const auto summary = read_summary(input_path());
  const ExpectedRows expected = summary ? expected_rows(*summary) : ExpectedRows{};
  RankRowIndex index;
  for (auto _ : state) index = index_rank_rows(input_path(), summary ? &expected : nullptr);
  state.counters["ranks"] = static_cast<double>(index.ranks.size());
  state.counters["probes"] = static_cast<double>(index.probes);
}

void BM_LoadRanks(benchmark::State& state) {
  const Profile description = Profile::load(input_path(), LoadOptions{.events = false});
  const auto summary = read_summary(input_path());
  const ExpectedRows expected = summary ? expected_rows(*summary) : ExpectedRows{};
  const RankRowIndex index = index_rank_rows(input_path(), summary ? &expected : nullptr);
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<RankRows> rows;
  const auto& ranks = description.ranks();
  for (std::size_t k = 0; k < n && k < ranks.size(); ++k)
    rows.push_back(index.rows_of(ranks[k * ranks.size() / n].rank));
  std::size_t events = 0;
  for (auto _ : state) {
    const LoadedRanks got = Profile::load_ranks(description, rows);
    state.PauseTiming();
    events = 0;
    for (const auto& r : got.ranks) events += event_memory(*r).events;
    state.ResumeTiming();
  }
  state.counters["ranks_per_s"] =
      benchmark::Counter(static_cast<double>(rows.size()), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

std::unique_ptr<gui::LoadedProfile> open_lazily() {
  gui::OpenOptions options;
  options.lazy = gui::LazyMode::kAlways;
  return gui::load_profile(std::vector<std::filesystem::path>{input_path()}, {}, {}, {}, options);
}

void BM_LazyOpen(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(open_lazily());
}

void BM_ScreenOfRanks(benchmark::State& state) {
  std::shared_ptr<const gui::LoadedProfile> base = open_lazily();
  const std::size_t ranks = base->profile->ranks().size();
  const auto n =
      static_cast<std::uint32_t>(std::min<std::size_t>(static_cast<std::size_t>(state.range(0)), ranks));
  std::vector<std::uint32_t> screen(n);
  std::size_t bytes = 0;
  std::uint32_t first = 0;
  for (auto _ : state) {
    gui::LazyRanks lazy(base, std::size_t{512} << 20);
    std::iota(screen.begin(), screen.end(), first);
    first = (first + n) % static_cast<std::uint32_t>(ranks - n + 1);  // another screen each time
    lazy.want(screen);
    if (!lazy.wait_idle(600)) state.SkipWithError("ranks did not load");
    auto generation = lazy.take();
    state.PauseTiming();
    bytes = generation ? generation->lazy->bytes : 0;
    generation.reset();
    state.ResumeTiming();
  }
  state.counters["MB_held"] = static_cast<double>(bytes) / 1e6;
}

// Wall time: the loads run on their own threads.
BENCHMARK(BM_FindRankRows)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadRanks)->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LazyOpen)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScreenOfRanks)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return meshscope::bench::run_on_input(argc, argv, "meshscope_bench_lazy_ranks", input_path(),
                                        "meshscope_gen_job --ranks 256 --events-per-rank 20000 --format "
                                        "kineto-gz -o DIR && meshscope import DIR -o",
                                        "MESHSCOPE_BENCH_PROFILE",
                                        "a summarised profile imported from traces");
}
