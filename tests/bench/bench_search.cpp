// Benchmarks of the prediction engine: one predict() and a whole search() (docs/PERFORMANCE.md, Prediction).
#include <benchmark/benchmark.h>

#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"
#include "analysis/model/search.hpp"

namespace {

using namespace meshscope::model;

void BM_Predict(benchmark::State& state) {
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 16384, c.tp = 8, c.pp = 2, c.cp = 16, c.schedule_set = true, c.schedule = Schedule::kInterleaved;
  c.virtual_stages = 3;
  const ParallelConfig r = resolve(c, m, hw);
  const Efficiencies eff = defaults_for(hw);
  for (auto _ : state) benchmark::DoNotOptimize(predict(m, hw, r, eff).step_time_s);
}
BENCHMARK(BM_Predict);

void BM_Search(benchmark::State& state, const char* model, int gpus) {
  const ModelSpec m = load_model(model);
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  SearchOptions o;
  o.gpus = gpus;
  std::int64_t layouts = 0;
  for (auto _ : state) {
    const SearchResult r = search(m, hw, eff, o);
    layouts = r.evaluated;
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["layouts"] = static_cast<double>(layouts);
}
BENCHMARK_CAPTURE(BM_Search, llama3_405b_16384, "llama3-405b", 16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, gpt3_175b_16384, "gpt3-175b", 16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, deepseek_v3_16384, "deepseek-v3", 16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, mixtral_8x7b_16384, "mixtral-8x7b", 16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, gpt3_175b_1536, "gpt3-175b", 1536)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
