#include "analysis/measure/pipeline_schedule.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "analysis/measure/correlation.hpp"
#include "analysis/measure/launch_ranges.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

std::vector<std::int32_t> parse_ranks(std::string_view text) {
  std::vector<std::int32_t> out;
  std::int64_t value = 0;
  bool in = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      in = true;
      if (value > kMaxRank) return {};
    } else if (in) {
      out.push_back(static_cast<std::int32_t>(value));
      value = 0;
      in = false;
    }
  }
  if (in) out.push_back(static_cast<std::int32_t>(value));
  return out;
}

// The groups of ranks that form pipelines, with how they were found.
std::vector<std::pair<std::vector<std::int32_t>, std::string>> find_groups(const Profile& p,
                                                                           const Analysis& a) {
  std::vector<std::pair<std::vector<std::int32_t>, std::string>> out;
  std::set<std::vector<std::int32_t>> seen;
  for (const Rank& r : p.ranks()) {
    for (const ProcessGroup& pg : r.process_groups) {
      if (pg.ranks.size() < 2 || !vocabulary::parallel_dims_named(pg.desc).pp) continue;
      if (!seen.insert(pg.ranks).second) continue;
      out.emplace_back(pg.ranks, fmt::format("process group {} ({})", pg.name, pg.desc));
    }
  }
  if (!out.empty()) return out;
  // Communicators used only for point-to-point operations, in the order of the ranks they list.
  struct Use {
    bool p2p_only = true;
    std::vector<std::int32_t> ranks;
    std::string name;
  };
  std::map<std::string, Use> communicators;
  for (std::size_t ri = 0; ri < p.ranks().size(); ++ri) {
    const Rank& r = p.ranks()[ri];
    for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
      const Collective& c = r.collectives[ci];
      if (c.communicator == kNoString && c.pg_ranks == kNoString) continue;
      const std::string key = p.str(c.communicator) + "|" + p.str(c.pg_ranks);
      Use& use = communicators[key];
      use.name = p.str(c.communicator);
      if (!vocabulary::is_point_to_point(a.collectives.identity[ri][ci].op)) use.p2p_only = false;
      if (use.ranks.empty()) use.ranks = parse_ranks(p.str(c.pg_ranks));
    }
  }
  for (const auto& [key, use] : communicators) {
    if (!use.p2p_only || use.ranks.size() < 2 || !seen.insert(use.ranks).second) continue;
    out.emplace_back(use.ranks, fmt::format("communicator {} used only for send/recv", use.name));
  }
  return out;
}

struct Item {
  TimeNs launch;           // start of the launching CUDA call
  std::uint32_t activity;  // kNoIndex for a pipeline send/recv marker
  bool backward;
};

constexpr std::uint32_t kMarker = 0xffffffffu;

// One rank's GPU work and pipeline send/recvs in CPU launch order, work tagged forward/backward.
std::vector<Item> launch_sequence(const Profile& p, const Analysis& a, std::size_t ri) {
  const Rank& r = p.ranks()[ri];
  CorrelationMap map;
  map.build(r.api_calls);
  const std::vector<std::uint8_t> call_backward = calls_inside_ranges(p, ri, backward_range_name);
  std::vector<Item> items;
  const auto& identity = a.collectives.identity[ri];
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const Activity& act = r.activities[i];
    if (act.kind != ActivityKind::kKernel) continue;
    const std::int32_t api = map.find(act.correlation);
    if (api < 0) continue;
    const TimeNs launch = r.api_calls[static_cast<std::size_t>(api)].start_ns;
    if (act.collective >= 0 &&
        vocabulary::is_point_to_point(identity[static_cast<std::size_t>(act.collective)].op)) {
      items.push_back({launch, kMarker, false});
      continue;
    }
    items.push_back({launch, i, call_backward[static_cast<std::size_t>(api)] == 1});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& x, const Item& y) { return x.launch < y.launch; });
  return items;
}

// The blocks of one rank per step (steps: the rank's analysis steps, by CPU range).
std::vector<StageStep> stage_blocks(const Profile& p, const Analysis& a, std::size_t ri) {
  const Rank& r = p.ranks()[ri];
  const RankResult& rr = a.ranks[ri];
  const std::vector<Item> items = launch_sequence(p, a, ri);
  std::vector<StageStep> out;
  std::size_t k = 0;
  for (const StepResult& s : rr.steps) {
    StageStep st;
    st.step = s.number;
    while (k < items.size() && items[k].launch < s.cpu_start_ns) ++k;
    bool open = false;
    for (; k < items.size() && items[k].launch < s.cpu_end_ns; ++k) {
      const Item& it = items[k];
      if (it.activity == kMarker) {
        open = false;
        continue;
      }
      const Activity& act = r.activities[it.activity];
      if (!open || st.blocks.back().forward == it.backward) {
        PipelineBlock b;
        b.forward = !it.backward;
        b.start_ns = act.start_ns;
        b.end_ns = act.end_ns;
        st.blocks.push_back(b);
        open = true;
      }
      PipelineBlock& b = st.blocks.back();
      b.start_ns = std::min(b.start_ns, act.start_ns);
      b.end_ns = std::max(b.end_ns, act.end_ns);
      ++b.activities;
    }
    // Forward work after the last backward block is the optimizer and gradient sync, not a micro-batch.
    std::size_t last_backward = st.blocks.size();
    for (std::size_t i = st.blocks.size(); i-- > 0;) {
      if (!st.blocks[i].forward) {
        last_backward = i;
        break;
      }
    }
    if (last_backward < st.blocks.size()) st.blocks.resize(last_backward + 1);
    bool seen_backward = false;
    for (PipelineBlock& b : st.blocks) {
      if (b.forward) {
        b.unit = st.forwards++;
        if (!seen_backward) ++st.warmup;
      } else {
        b.unit = st.backwards++;
        seen_backward = true;
      }
      b.micro_batch = b.unit;
    }
    out.push_back(std::move(st));
  }
  return out;
}

// Forward blocks a stage runs before its first backward under a schedule (m micro-batches, v chunks).
int expected_warmup(const std::string& schedule, int p, int s, int forwards, int v) {
  if (schedule == "gpipe") return forwards;
  if (schedule == "1f1b") return std::min(p - s, forwards);
  const int warmup = std::min(2 * (p - s - 1) + (v - 1) * p, forwards);
  return warmup < forwards ? warmup + 1 : forwards;
}

// Σ length of the union of [start, end) spans.
TimeNs union_length(std::vector<std::pair<TimeNs, TimeNs>>& spans) {
  std::sort(spans.begin(), spans.end());
  TimeNs total = 0, cur_start = 0, cur_end = 0;
  bool any = false;
  for (const auto& [s, e] : spans) {
    if (e <= s) continue;
    if (!any || s > cur_end) {
      if (any) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      any = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (any) total += cur_end - cur_start;
  return total;
}

// The schedule of G: the candidate (1F1B, GPipe, interleaved with v chunks) whose warm-ups match the most of
// its PRESENT stages, in the first step with blocks; its micro-batches and predicted bubble. False when no
// stage shows forward and backward micro-batches (the schedule is then "unknown").
bool detect_schedule(PipelineGroup& g, std::int32_t present, std::vector<std::string>& notes) {
  const int stages = static_cast<int>(g.stages.size());
  // The schedule: the candidate whose warm-ups match the most stages (first step with blocks).
  const PipelineStage* reference = nullptr;
  for (const auto& st : g.stages) {
    if (st.rank_index >= 0 && !st.steps.empty() && st.steps.front().forwards > 0) {
      reference = &st;
      break;
    }
  }
  if (reference == nullptr) {
    g.schedule = "unknown";
    notes.push_back(
        fmt::format("pipeline {}: no forward/backward micro-batches found (the CPU ranges that tell "
                    "forward from backward, or the launches, are missing)",
                    g.source));
    return false;
  }
  const int forwards = reference->steps.front().forwards;
  struct Candidate {
    std::string schedule;
    int v;
  };
  std::vector<Candidate> candidates = {{"1f1b", 1}, {"gpipe", 1}};
  for (int v = 2; v <= 8; ++v) {
    if (forwards % v == 0) candidates.push_back({"interleaved", v});
  }
  int best_matches = -1;
  for (const Candidate& c : candidates) {
    int matches = 0;
    for (const auto& st : g.stages) {
      if (st.rank_index < 0 || st.steps.empty()) continue;
      const StageStep& first = st.steps.front();
      if (first.forwards == forwards && first.backwards == forwards &&
          first.warmup == expected_warmup(c.schedule, stages, st.stage, forwards, c.v))
        ++matches;
    }
    if (matches > best_matches) {
      best_matches = matches;
      g.schedule = c.schedule;
      g.virtual_stages = c.v;
    }
  }
  g.stages_matching = best_matches;
  if (best_matches < present) {
    notes.push_back(
        fmt::format("pipeline {}: the warm-up of {} of {} stages matches the {} schedule; the bubble "
                    "is compared with that schedule's",
                    g.source, best_matches, present, g.schedule));
  }
  if (best_matches == 0) g.schedule = "unknown";
  g.micro_batches = forwards / std::max(1, g.virtual_stages);
  const double pv = static_cast<double>(stages - 1);
  g.predicted_bubble = pv / (static_cast<double>(g.virtual_stages) * g.micro_batches + pv);

  return true;
}

// Each stage's bubble per step: the step's window spans every stage's blocks, and a stage's bubble is the
// window minus the union of its blocks; the mean per stage, per step and over the group.
void measure_bubbles(PipelineGroup& g) {
  std::map<std::int64_t, PipelineStep> windows;
  for (const auto& st : g.stages) {
    for (const auto& step : st.steps) {
      if (step.blocks.empty()) continue;
      auto [it, inserted] = windows.try_emplace(step.step);
      PipelineStep& w = it->second;
      w.step = step.step;
      TimeNs lo = step.blocks.front().start_ns, hi = step.blocks.front().end_ns;
      for (const auto& b : step.blocks) {
        lo = std::min(lo, b.start_ns);
        hi = std::max(hi, b.end_ns);
      }
      if (inserted) {
        w.start_ns = lo;
        w.end_ns = hi;
      } else {
        w.start_ns = std::min(w.start_ns, lo);
        w.end_ns = std::max(w.end_ns, hi);
      }
    }
  }
  std::map<std::int64_t, std::pair<double, int>> step_sums;
  double total = 0;
  int counted = 0;
  for (auto& st : g.stages) {
    double sum = 0;
    int n = 0;
    for (auto& step : st.steps) {
      const auto it = windows.find(step.step);
      if (it == windows.end() || step.blocks.empty()) continue;
      const TimeNs window = it->second.end_ns - it->second.start_ns;
      std::vector<std::pair<TimeNs, TimeNs>> spans;
      for (const auto& b : step.blocks) spans.emplace_back(b.start_ns, b.end_ns);
      step.busy_ns = union_length(spans);
      step.bubble_ns = std::max<TimeNs>(window - step.busy_ns, 0);
      step.bubble_fraction =
          window > 0 ? static_cast<double>(step.bubble_ns) / static_cast<double>(window) : 0.0;
      sum += step.bubble_fraction;
      ++n;
      auto& ss = step_sums[step.step];
      ss.first += step.bubble_fraction;
      ++ss.second;
    }
    st.mean_bubble_fraction = n > 0 ? sum / n : 0.0;
    total += sum;
    counted += n;
  }
  for (auto& [number, w] : windows) {
    const auto& ss = step_sums[number];
    w.mean_bubble_fraction = ss.second > 0 ? ss.first / ss.second : 0.0;
    g.steps.push_back(w);
  }
  g.measured_bubble = counted > 0 ? total / counted : 0.0;
}

// The schedule with the stages' measured work (per stage the mean busy time per step): the bubble an
// imbalance between stages adds, and the slowest stage.
void measure_imbalance(PipelineGroup& g) {
  std::vector<double> work;
  for (const auto& st : g.stages) {
    double sum = 0;
    int n = 0;
    for (const auto& step : st.steps) {
      if (step.blocks.empty()) continue;
      sum += static_cast<double>(step.busy_ns);
      ++n;
    }
    work.push_back(n > 0 ? sum / n : 0.0);
  }
  double sum = 0, most = 0;
  int n = 0;
  for (std::size_t s = 0; s < work.size(); ++s) {
    if (g.stages[s].rank_index < 0 || work[s] <= 0) continue;
    sum += work[s];
    ++n;
    if (work[s] > most) {
      most = work[s];
      g.slowest_stage = static_cast<std::int32_t>(s);
    }
  }
  if (n > 0 && g.micro_batches > 0) {
    const double v = g.virtual_stages, m = g.micro_batches;
    // Each stage's work per micro-batch is t_s = work / m; the step: Σ t_s / v + (v m − 1) max t / v.
    const double step = (sum / m) / v + (v * m - 1) * (most / m) / v;
    double idle = 0;
    for (std::size_t s = 0; s < work.size(); ++s) {
      if (g.stages[s].rank_index < 0 || work[s] <= 0) continue;
      idle += 1.0 - work[s] / step;
    }
    g.imbalanced_bubble = idle / n;
    g.imbalance = most / (sum / n);
  }
}

void measure_group(const Profile& p, const Analysis& a, const StageEvents* stage_events, PipelineGroup& g,
                   std::vector<std::string>& notes) {
  const int stages = static_cast<int>(g.ranks.size());
  std::int32_t present = 0;
  for (int s = 0; s < stages; ++s) {
    PipelineStage st;
    st.stage = s;
    st.rank = g.ranks[static_cast<std::size_t>(s)];
    for (std::size_t ri = 0; ri < p.ranks().size(); ++ri) {
      if (p.ranks()[ri].rank == st.rank) st.rank_index = static_cast<std::int64_t>(ri);
    }
    if (st.rank_index >= 0) {
      const auto ri = static_cast<std::size_t>(st.rank_index);
      st.steps = stage_events ? stage_blocks((*stage_events)(ri), a, ri) : stage_blocks(p, a, ri);
      ++present;
    }
    g.stages.push_back(std::move(st));
  }
  if (present < stages) {
    notes.push_back(
        fmt::format("pipeline {}: {} of its {} stages are in the profile; the others' bubbles are not "
                    "measured",
                    g.source, present, stages));
  }
  if (!detect_schedule(g, present, notes)) return;
  // Chunks and micro-batches of interleaved units (Megatron-LM: chunk (k mod pv) / p, reversed backwards).
  if (g.schedule == "interleaved") {
    const int v = g.virtual_stages;
    for (auto& st : g.stages) {
      for (auto& step : st.steps) {
        for (auto& b : step.blocks) {
          const int in_group = b.unit % (stages * v);
          b.chunk = b.forward ? in_group / stages : v - 1 - in_group / stages;
          b.micro_batch = (b.unit / (stages * v)) * stages + b.unit % stages;
        }
      }
    }
  }

  measure_bubbles(g);
  measure_imbalance(g);
}

PipelineReport measure_groups(const Profile& profile, const Analysis& analysis,
                              const StageEvents* stage_events) {
  PipelineReport report;
  const auto groups = find_groups(profile, analysis);
  if (groups.empty()) {
    report.notes.push_back(
        "no pipeline parallelism found: no process group is described as a pipeline group and no "
        "communicator is used only for send/recv");
    return report;
  }
  for (const auto& [ranks, source] : groups) {
    PipelineGroup g;
    g.ranks = ranks;
    g.source = source;
    measure_group(profile, analysis, stage_events, g, report.notes);
    report.groups.push_back(std::move(g));
  }
  report.found = true;
  return report;
}

}  // namespace

bool has_pipeline(const Profile& profile, const Analysis& analysis) {
  return !find_groups(profile, analysis).empty();
}

PipelineReport measure_pipeline(const Profile& profile, const Analysis& analysis) {
  return measure_groups(profile, analysis, nullptr);
}

PipelineReport measure_pipeline(const Profile& profile, const Analysis& analysis,
                                const StageEvents& stage_events) {
  return measure_groups(profile, analysis, &stage_events);
}

}  // namespace meshscope::measure
