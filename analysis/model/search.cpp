#include "analysis/model/search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/model/precision.hpp"

namespace meshscope::model {
namespace {

bool better(const Prediction& a, const Prediction& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
  return a.memory.total() < b.memory.total();
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

SearchResult search(const ModelSpec& m, const HardwareSpec& hw, const Efficiencies& eff,
                    const SearchOptions& o) {
  check_model(m);
  check_hardware(hw);
  if (o.gpus < 1) throw InvalidInput("--gpus N is required and must be at least 1");
  if (o.top < 1) throw InvalidInput(fmt::format("--top {} must be at least 1", o.top));
  if (std::string problem = check_precision(o.precision, hw); !problem.empty()) throw InvalidInput(problem);
  SearchResult result;
  result.seq = o.seq > 0 ? o.seq : m.seq;
  result.global_batch = o.global_batch > 0 ? o.global_batch : (m.global_batch > 0 ? m.global_batch : o.gpus);
  const int batch = result.global_batch;

  std::vector<Prediction> heap;  // max-heap on `better`: the worst kept layout on top
  heap.reserve(static_cast<size_t>(o.top) + 1);
  Prediction scratch;
  ParallelConfig c;
  c.gpus = o.gpus;
  c.global_batch = batch;
  c.seq = result.seq;
  c.precision = o.precision;
  c.mode = o.mode;
  c.recompute_set = c.schedule_set = true;
  const bool training = o.mode == Mode::kTraining;
  const std::vector<Recompute> recomputes =
      training ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
               : std::vector<Recompute>{Recompute::kNone};

  // Every PP up to the layer count: stages need not divide the layers evenly (pipeline.hpp spreads them).
  std::vector<int> pipeline_sizes;
  for (int pp = 1; pp <= m.layers; ++pp) pipeline_sizes.push_back(pp);
  for (int tp = 1; tp <= std::min(hw.gpus_per_node, o.gpus); tp *= 2) {
    if (m.heads % tp != 0 || m.ffn % tp != 0 || (m.is_moe() && m.moe_ffn % tp != 0)) continue;
    if (!m.is_mla() && m.kv_heads % tp != 0 && tp % m.kv_heads != 0) continue;
    for (int cp = 1; tp * cp <= o.gpus; cp *= 2) {
      if (result.seq % cp != 0) break;
      for (int pp : pipeline_sizes) {
        const long mp = long(tp) * cp * pp;
        if (mp > o.gpus) break;
        if (o.gpus % mp != 0) continue;
        const int dp = static_cast<int>(o.gpus / mp);
        if (batch % dp != 0) continue;
        const std::vector<int> eps = m.is_moe() ? divisors(dp) : std::vector<int>{1};
        for (int ep : eps) {
          if (m.is_moe() && m.experts % ep != 0) continue;
          for (int micro_batch : o.micro_batches) {
            if (batch % (dp * micro_batch) != 0) continue;
            const int micro = batch / (dp * micro_batch);
            for (int zero = 0; zero <= (dp > 1 && training ? 3 : 0); ++zero) {
              for (Recompute recompute : recomputes) {
                for (Schedule schedule : {Schedule::k1F1B, Schedule::kGPipe, Schedule::kInterleaved}) {
                  // A forward-only pipeline has one schedule (the forward passes one after the other).
                  if ((pp == 1 || !training) && schedule != Schedule::k1F1B) continue;
                  const int per_stage = m.layers / pp;  // the fewest layers a stage holds
                  const int v_max =
                      schedule == Schedule::kInterleaved ? std::min(per_stage, o.max_virtual_stages) : 1;
                  if (schedule == Schedule::kInterleaved && micro < pp) continue;
                  for (int v = schedule == Schedule::kInterleaved ? 2 : 1; v <= v_max; ++v) {
                    if (m.layers % pp == 0 && per_stage % v != 0) continue;  // prefer equal chunks
                    c.tp = tp, c.pp = pp, c.cp = cp, c.dp = dp, c.ep = ep;
                    c.micro_batch = micro_batch, c.zero = zero, c.recompute = recompute;
                    c.schedule = schedule, c.virtual_stages = v;
                    c.sequence_parallel = tp > 1 ? 1 : 0;
                    ++result.evaluated;
                    const MemoryBreakdown memory = memory_per_gpu(m, hw, c, eff);
                    if (memory.fits()) ++result.fitting;
                    if (!memory.fits() && !o.keep_not_fitting) continue;
                    predict_into(m, hw, c, eff, scratch);
                    if (static_cast<int>(heap.size()) < o.top) {
                      heap.push_back(scratch);
                      std::push_heap(heap.begin(), heap.end(), better);
                    } else if (better(scratch, heap.front())) {
                      std::pop_heap(heap.begin(), heap.end(), better);
                      heap.back() = scratch;
                      std::push_heap(heap.begin(), heap.end(), better);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (result.evaluated == 0)
    throw InvalidInput(
        fmt::format("no valid layout of {} on {} GPUs for --global-batch {}: choose a batch divisible "
                    "by a data-parallel degree that the GPU count allows",
                    m.name, o.gpus, batch));
  std::sort_heap(heap.begin(), heap.end(), better);
  result.top = std::move(heap);
  return result;
}

}  // namespace meshscope::model
