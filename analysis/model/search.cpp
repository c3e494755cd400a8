#include "analysis/model/search.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>

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

// An outer layout (tp, cp, pp; dp follows): a unit of work for one thread.
struct Outer {
  int tp, cp, pp, dp;
};

// Every outer layout of M on GPUS GPUs whose data parallelism divides BATCH. Every PP up to the layer count:
// stages need not divide the layers evenly (pipeline.hpp spreads them).
std::vector<Outer> outer_layouts(const ModelSpec& m, const HardwareSpec& hw, int gpus, int seq, int batch) {
  std::vector<Outer> outers;
  for (int tp = 1; tp <= std::min(hw.gpus_per_node, gpus); tp *= 2) {
    if (m.heads % tp != 0 || m.ffn % tp != 0 ||
        (m.is_moe() && (long(m.shared_experts) * m.moe_ffn) % tp != 0))
      continue;
    if (!m.is_mla() && m.kv_heads % tp != 0 && tp % m.kv_heads != 0) continue;
    for (int cp = 1; tp * cp <= gpus; cp *= 2) {
      if (seq % cp != 0) break;
      for (int pp = 1; pp <= m.layers; ++pp) {
        const long mp = long(tp) * cp * pp;
        if (mp > gpus) break;
        if (gpus % mp != 0) continue;
        const int dp = static_cast<int>(gpus / mp);
        if (batch % dp != 0) continue;
        outers.push_back({tp, cp, pp, dp});
      }
    }
  }
  return outers;
}

// Runs WORK(thread, index) for index 0..COUNT-1 on up to 16 threads, each taking the next index in turn;
// rethrows the first error a thread met.
template <typename Work>
void for_each_on_threads(std::size_t count, unsigned threads, Work&& work) {
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(threads);
  auto run = [&](unsigned t) {
    try {
      for (std::size_t i = next++; i < count; i = next++) work(t, i);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& th : pool) th.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
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
  const bool training = o.mode == Mode::kTraining;
  const std::vector<Recompute> recomputes =
      training ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
               : std::vector<Recompute>{Recompute::kNone};

  const std::vector<Outer> outers = outer_layouts(m, hw, o.gpus, result.seq, batch);

  // A kept layout and its place in the enumeration: equal predictions rank in enumeration order, so that the
  // result does not depend on how the work was split between threads.
  struct Ranked {
    Prediction prediction;
    std::size_t order = 0;
  };
  auto ranks_before = [](const Ranked& a, const Ranked& b) {
    if (better(a.prediction, b.prediction)) return true;
    if (better(b.prediction, a.prediction)) return false;
    return a.order < b.order;
  };
  struct Worker {
    std::vector<Ranked> heap;  // max-heap on ranks_before: the worst kept layout on top
    std::int64_t evaluated = 0, fitting = 0;
  };

  auto run_outer = [&](const Outer& outer, std::size_t outer_index, Worker& w, Prediction& scratch) {
    const auto [tp, cp, pp, dp] = outer;
    ParallelConfig c;
    c.gpus = o.gpus;
    c.global_batch = batch;
    c.seq = result.seq;
    c.precision = o.precision;
    c.mode = o.mode;
    c.recompute_set = c.schedule_set = true;
    // Expert layers regroup the stage's tp x cp x dp GPUs as etp x ep x expert data parallel: experts split
    // as wide as the attention (etp = tp, Megatron-Core's default) or whole (etp = 1, the Megatron-Bridge MoE
    // recipes).
    std::vector<std::pair<int, int>> expert_layouts;  // (etp, ep)
    if (!m.is_moe()) {
      expert_layouts.push_back({tp, 1});
    } else {
      for (int etp : tp > 1 ? std::vector<int>{tp, 1} : std::vector<int>{1}) {
        if (m.moe_ffn % etp != 0) continue;
        for (int ep : divisors(tp * cp * dp / etp))
          if (m.experts % ep == 0) expert_layouts.push_back({etp, ep});
      }
    }
    std::size_t order = outer_index << 32;
    for (auto [etp, ep] : expert_layouts) {
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
                c.tp = tp, c.pp = pp, c.cp = cp, c.dp = dp, c.ep = ep, c.etp = etp;
                c.micro_batch = micro_batch, c.zero = zero, c.recompute = recompute;
                c.schedule = schedule, c.virtual_stages = v;
                if (!check_moe_a2a_overlap(c, m, eff).empty()) continue;
                c.sequence_parallel = tp > 1 ? 1 : 0;
                ++w.evaluated;
                ++order;
                const MemoryBreakdown memory = memory_per_gpu(m, hw, c, eff);
                if (memory.fits()) ++w.fitting;
                if (!memory.fits() && !o.keep_not_fitting) continue;
                predict_into(m, hw, c, eff, scratch, false, &memory);
                const Ranked candidate{scratch, order};
                if (static_cast<int>(w.heap.size()) < o.top) {
                  w.heap.push_back(candidate);
                  std::push_heap(w.heap.begin(), w.heap.end(), ranks_before);
                } else if (ranks_before(candidate, w.heap.front())) {
                  std::pop_heap(w.heap.begin(), w.heap.end(), ranks_before);
                  w.heap.back() = candidate;
                  std::push_heap(w.heap.begin(), w.heap.end(), ranks_before);
                }
              }
            }
          }
        }
      }
    }
  };

  // Layouts are independent: threads take outer layouts in turn (a million layouts for a MoE model on 16,384
  // GPUs take about 1.3 s on one core).
  const unsigned threads = std::max(1u, std::min<unsigned>({std::thread::hardware_concurrency(), 16u,
                                                            static_cast<unsigned>(outers.size())}));
  std::vector<Worker> workers(threads);
  std::vector<Prediction> scratch(threads);
  for_each_on_threads(outers.size(), threads,
                      [&](unsigned t, std::size_t i) { run_outer(outers[i], i, workers[t], scratch[t]); });

  std::vector<Ranked> kept;
  for (Worker& w : workers) {
    result.evaluated += w.evaluated, result.fitting += w.fitting;
    for (Ranked& r : w.heap) kept.push_back(std::move(r));
  }
  if (result.evaluated == 0)
    throw InvalidInput(
        fmt::format("no valid layout of {} on {} GPUs for --global-batch {}: choose a batch divisible "
                    "by a data-parallel degree that the GPU count allows",
                    m.name, o.gpus, batch));
  std::sort(kept.begin(), kept.end(), ranks_before);
  if (static_cast<int>(kept.size()) > o.top) kept.resize(static_cast<std::size_t>(o.top));
  for (Ranked& r : kept) result.top.push_back(std::move(r.prediction));
  return result;
}

}  // namespace meshscope::model
