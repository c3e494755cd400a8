#include "analysis/compare/compare.hpp"

#include "analysis/model/architecture.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/measure/intervals.hpp"
#include "analysis/model/architecture.hpp"
#include "profiler/error.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {
namespace {

using measure::Interval;

double seconds(TimeNs ns) {
  return static_cast<double>(ns) / 1e9;
}

// Exposed communication of one rank per part (disjoint lists, disjoint from each other).
std::array<std::vector<Interval>, kPartCount> exposed_by_part(const Profile& profile, const Rank& rank,
                                                              const measure::RankResult& rr,
                                                              const model::ParallelConfig& config) {
  std::array<std::vector<Interval>, kPartCount> comm;
  std::map<std::tuple<StringId, StringId, std::int64_t, StringId>, Part> cache;
  for (const meshscope::Collective& c : rank.collectives) {
    if (c.stream_index < 0 || c.activity >= rank.activities.size()) continue;
    const Activity& a = rank.activities[c.activity];
    auto key = std::make_tuple(c.pg_ranks, c.op, c.group_size, c.pg_desc);
    auto it = cache.find(key);
    if (it == cache.end()) {
      const std::vector<int> members = group_members(profile, c);
      const int n = c.group_size != kNull && c.group_size > 0 ? static_cast<int>(c.group_size)
                                                              : static_cast<int>(members.size());
      it =
          cache.emplace(key, group_part(members, n, profile.str(c.op), profile.str(c.pg_desc), config)).first;
    }
    comm[static_cast<int>(it->second)].push_back({a.start_ns, a.end_ns});
  }
  std::array<std::vector<Interval>, kPartCount> out;
  std::vector<Interval> assigned, merged, tmp, tmp2;
  for (Part part : {Part::kTp, Part::kCp, Part::kEp, Part::kPp, Part::kDp, Part::kCommOther}) {
    auto& list = comm[static_cast<int>(part)];
    if (list.empty()) continue;
    measure::sort_by_start(list);
    measure::union_sorted(list, merged);
    measure::intersect(merged, rr.exposed_comm, tmp);
    measure::subtract(tmp, assigned, out[static_cast<int>(part)]);
    measure::union_of(assigned, out[static_cast<int>(part)], tmp2);
    assigned.swap(tmp2);
  }
  return out;
}

void add_breakdown(MeasuredStep& s, const Breakdown& b,
                   const std::array<std::vector<Interval>, kPartCount>& exposed) {
  const double exposed_comm = seconds(b.exposed_comm_ns);
  s.dur_s += seconds(b.span_ns);
  s.compute_s += seconds(b.compute_ns);
  s.comm_s += seconds(b.comm_ns);
  s.exposed_comm_s += exposed_comm;
  s.idle_s += seconds(b.idle_ns);
  s.memory_s += seconds(b.memory_ns);
  // busy = |compute ∪ comm ∪ memory| = compute + exposed comm + memory outside both (inclusion–exclusion).
  const double memory_exposed =
      std::max(0.0, seconds(b.busy_ns) - seconds(b.compute_ns) - seconds(b.exposed_comm_ns));
  s.memory_exposed_s += memory_exposed;
  s.parts[static_cast<int>(Part::kCompute)] += seconds(b.compute_ns);
  s.parts[static_cast<int>(Part::kIdle)] += seconds(b.idle_ns);
  s.parts[static_cast<int>(Part::kMemory)] += memory_exposed;
  // Exposed communication inside the step's GPU window, split in proportion to each part's share of it.
  const Interval window{b.start_ns, b.end_ns};
  std::array<double, kPartCount> share{};
  double total = 0;
  for (int i = 0; i < kPartCount; ++i) {
    if (exposed[i].empty()) continue;
    share[i] =
        static_cast<double>(measure::intersection_length(exposed[i], std::span<const Interval>(&window, 1)));
    total += share[i];
  }
  double attributed = 0;
  if (total > 0) {
    for (int i = 0; i < kPartCount; ++i) {
      if (static_cast<Part>(i) == Part::kCommOther) continue;
      const double v = exposed_comm * share[i] / total;
      s.parts[i] += v;
      attributed += v;
    }
  }
  s.parts[static_cast<int>(Part::kCommOther)] += exposed_comm - attributed;
}

void divide(MeasuredStep& s, double k) {
  s.dur_s /= k;
  s.compute_s /= k;
  s.comm_s /= k;
  s.exposed_comm_s /= k;
  s.idle_s /= k;
  s.memory_s /= k;
  s.memory_exposed_s /= k;
  for (double& v : s.parts) v /= k;
}

std::string members_text(std::span<const int> members) {
  return members.empty() ? std::string("?") : fmt::format("[{}]", fmt::join(members, ", "));
}

}  // namespace

const char* to_string(Part part) {
  switch (part) {
    case Part::kCompute:
      return "compute";
    case Part::kTp:
      return "tp_exposed";
    case Part::kCp:
      return "cp_exposed";
    case Part::kEp:
      return "ep_exposed";
    case Part::kPp:
      return "pp_p2p_exposed";
    case Part::kDp:
      return "dp_exposed";
    case Part::kCommOther:
      return "comm_other";
    case Part::kIdle:
      return "idle";
    case Part::kMemory:
      return "memory";
  }
  return "?";
}

const char* predicted_source(Part part) {
  switch (part) {
    case Part::kCompute:
      return "compute + recompute + optimizer";
    case Part::kIdle:
      return "pp_bubble";
    case Part::kCommOther:
    case Part::kMemory:
      return "(none)";
    default:
      return to_string(part);
  }
}

PartSeconds predicted_parts(const model::Prediction& p) {
  PartSeconds out{};
  out[static_cast<int>(Part::kCompute)] = p.time.compute + p.time.recompute + p.time.optimizer;
  out[static_cast<int>(Part::kTp)] = p.time.tp_exposed;
  out[static_cast<int>(Part::kCp)] = p.time.cp_exposed;
  out[static_cast<int>(Part::kEp)] = p.time.ep_exposed;
  out[static_cast<int>(Part::kPp)] = p.time.pp_p2p_exposed;
  out[static_cast<int>(Part::kDp)] = p.time.dp_exposed;
  out[static_cast<int>(Part::kIdle)] = p.time.pp_bubble;
  return out;
}

Part group_part(std::span<const int> members, int group_size, std::string_view op, std::string_view desc,
                const model::ParallelConfig& c) {
  model::Collective coll{};
  const bool known = collective_of(op, coll);
  const bool p2p = known && coll == model::Collective::kSendRecv;
  const bool a2a = known && coll == model::Collective::kAllToAll;
  // Megatron-LM rank order (parallel_state.py, order "tp-cp-ep-dp-pp"): consecutive members of a TP group
  // are 1 apart, of a CP group tp apart, of a DP (and EP) group tp·cp apart, of a PP group tp·cp·dp apart.
  struct Dim {
    Part part;
    int size;
    int stride;
  };
  const Dim dims[] = {{Part::kTp, c.tp, 1},
                      {Part::kCp, c.cp, c.tp},
                      {Part::kEp, c.ep, c.tp * c.cp},
                      {Part::kDp, c.dp, c.tp * c.cp},
                      {Part::kPp, c.pp, c.tp * c.cp * c.dp}};
  auto allowed = [&](Part part) {
    if (part == Part::kEp) return a2a;  // expert parallelism communicates by all-to-all
    if (part == Part::kDp) return !p2p && !a2a;
    if (part == Part::kTp) return !p2p;
    return true;  // CP (ring exchange or all-gather) and PP (send/recv) take either
  };
  if (members.size() >= 2) {
    std::vector<int> m(members.begin(), members.end());
    std::sort(m.begin(), m.end());
    const int stride = m[1] - m[0];
    bool even = stride > 0;
    for (std::size_t i = 2; i < m.size() && even; ++i) even = m[i] - m[i - 1] == stride;
    const int n = static_cast<int>(m.size());
    if (even) {
      for (const Dim& d : dims) {
        if (d.size > 1 && d.size == n && d.stride == stride && allowed(d.part)) return d.part;
      }
      // A point-to-point pair of neighbours on a dimension's stride.
      if (p2p && n == 2) {
        for (const Dim& d : dims) {
          if (d.size > 1 && d.stride == stride && (d.part == Part::kPp || d.part == Part::kCp)) return d.part;
        }
      }
    }
    return Part::kCommOther;
  }
  // No member list: a unique group size, else the group's description.
  Part found = Part::kCommOther;
  int matches = 0;
  for (const Dim& d : dims) {
    if (d.size > 1 && d.size == group_size && allowed(d.part)) {
      found = d.part;
      ++matches;
    }
  }
  if (matches == 1) return found;
  const vocabulary::ParallelDims named = vocabulary::parallel_dims_named(desc);
  if (named.tp) return Part::kTp;
  if (named.cp) return Part::kCp;
  if (named.ep) return Part::kEp;
  if (named.pp) return Part::kPp;
  if (named.dp) return Part::kDp;
  return Part::kCommOther;
}

Measured measure_steps(const Profile& profile, const measure::Analysis& analysis,
                       const model::ParallelConfig& config) {
  Measured out;
  bool any_steps = false;
  for (const auto& rr : analysis.ranks) {
    for (const auto& s : rr.steps) any_steps |= s.gpu.activities > 0;
  }
  out.whole_profile = !any_steps;
  std::map<std::int64_t, MeasuredStep> by_number;
  for (const auto& rr : analysis.ranks) {
    const Rank& rank = profile.ranks()[rr.rank_index];
    const auto exposed = exposed_by_part(profile, rank, rr, config);
    auto add = [&](std::int64_t number, const Breakdown& b) {
      MeasuredStep& s = by_number[number];
      s.step = number;
      ++s.ranks;
      add_breakdown(s, b, exposed);
      if (seconds(b.span_ns) > s.max_dur_s) {
        s.max_dur_s = seconds(b.span_ns);
        s.slowest_rank = rr.rank;
      }
    };
    if (out.whole_profile) {
      if (rr.total.span_ns > 0) add(-1, rr.total);
      continue;
    }
    for (const auto& s : rr.steps) {
      if (s.gpu.activities > 0) add(s.number, s.gpu);
    }
  }
  out.mean.step = -1;
  for (auto& [number, s] : by_number) {
    divide(s, s.ranks);
    out.steps.push_back(s);
    out.mean.dur_s += s.dur_s;
    out.mean.compute_s += s.compute_s;
    out.mean.comm_s += s.comm_s;
    out.mean.exposed_comm_s += s.exposed_comm_s;
    out.mean.idle_s += s.idle_s;
    out.mean.memory_s += s.memory_s;
    out.mean.memory_exposed_s += s.memory_exposed_s;
    for (int i = 0; i < kPartCount; ++i) out.mean.parts[i] += s.parts[i];
    out.mean.ranks = std::max(out.mean.ranks, s.ranks);
    if (s.max_dur_s > out.mean.max_dur_s) {
      out.mean.max_dur_s = s.max_dur_s;
      out.mean.slowest_rank = s.slowest_rank;
    }
  }
  if (!out.steps.empty()) divide(out.mean, static_cast<double>(out.steps.size()));
  return out;
}

PartDifference difference(double predicted, double measured) {
  PartDifference d;
  d.predicted_s = predicted;
  d.measured_s = measured;
  d.diff_s = predicted - measured;
  d.diff_pct = measured > 0 ? 100.0 * d.diff_s / measured : std::numeric_limits<double>::quiet_NaN();
  return d;
}

std::array<PartDifference, kPartCount> difference(const PartSeconds& predicted, const PartSeconds& measured) {
  std::array<PartDifference, kPartCount> out;
  for (int i = 0; i < kPartCount; ++i) out[i] = difference(predicted[i], measured[i]);
  return out;
}

double flops_per_rank_step(const Profile& profile, const measure::Analysis& analysis,
                           const measure::ProfileWork& work, bool whole_profile,
                           const std::vector<bool>* plotted, std::int64_t* rank_steps,
                           double* bytes_per_step) {
  std::vector<std::vector<std::pair<TimeNs, std::uint32_t>>> starts(profile.ranks().size());
  for (std::uint32_t k = 0; k < work.kernels.size(); ++k) {
    const auto& share = work.kernels[k];
    if (plotted != nullptr && !(*plotted)[share.op]) continue;
    starts[share.rank_index].push_back(
        {profile.ranks()[share.rank_index].activities[share.activity].start_ns, k});
  }
  for (auto& list : starts) std::sort(list.begin(), list.end());
  double flops = 0, bytes = 0;
  std::int64_t windows = 0;
  for (const auto& rr : analysis.ranks) {
    auto add_window = [&](TimeNs begin, TimeNs end) {
      const auto& list = starts[rr.rank_index];
      auto it = std::lower_bound(list.begin(), list.end(), std::pair<TimeNs, std::uint32_t>{begin, 0});
      for (; it != list.end() && it->first <= end; ++it) {
        flops += work.kernels[it->second].flops;
        bytes += work.kernels[it->second].bytes;
      }
      ++windows;
    };
    bool any = false;
    for (const auto& s : rr.steps) {
      if (s.gpu.activities > 0 && !whole_profile) {
        add_window(s.gpu.start_ns, s.gpu.end_ns);
        any = true;
      }
    }
    if (!any && whole_profile && rr.total.span_ns > 0) add_window(rr.total.start_ns, rr.total.end_ns);
  }
  if (rank_steps != nullptr) *rank_steps = windows;
  if (bytes_per_step != nullptr) *bytes_per_step = windows > 0 ? bytes / static_cast<double>(windows) : 0;
  return windows > 0 ? flops / static_cast<double>(windows) : 0;
}

Coverage coverage_of(double flops_per_rank_step, const model::Prediction& prediction,
                     const model::ModelSpec& model, const model::ParallelConfig& config) {
  Coverage c;
  c.measured_flops_per_rank_step = flops_per_rank_step;
  const double passes = config.inference() ? 1 : 3;  // forward, and backward at twice the forward
  const double logits =
      passes * model::logits_flops_per_token(model) * static_cast<double>(config.global_batch) * config.seq;
  c.predicted_flops_per_gpu_step =
      config.gpus > 0 ? std::max(0.0, prediction.model_flops - logits) / config.gpus : 0;
  c.share = c.predicted_flops_per_gpu_step > 0 ? flops_per_rank_step / c.predicted_flops_per_gpu_step : 0;
  c.partial = c.predicted_flops_per_gpu_step > 0 && c.share < kPartialStepShare;
  return c;
}

std::vector<bool> without_output_layer(const measure::ProfileWork& work, const model::ModelSpec& model,
                                       const model::ParallelConfig& config) {
  std::vector<bool> kept(work.ops.size(), true);
  if (model.vocab <= 0) return kept;
  const int tp = config.tp;
  std::vector<std::int64_t> vocab_widths{model.vocab};
  if (tp > 1 && model.vocab % tp == 0) vocab_widths.push_back(model.vocab / tp);
  // A width or token count the layers' GEMMs have too would match them: then the output layer cannot be
  // told apart.
  const std::int64_t cp = std::max(config.cp, 1), seq = config.seq / cp;
  for (const std::int64_t tokens : {seq, seq * config.micro_batch}) {
    if (std::find(vocab_widths.begin(), vocab_widths.end(), tokens) != vocab_widths.end()) return kept;
  }
  const std::int64_t head_dim = model.head_dim > 0 ? model.head_dim
                                : model.heads > 0  ? model.hidden / model.heads
                                                   : 0;
  for (const std::int64_t width :
       {std::int64_t{model.hidden}, std::int64_t{model.ffn}, std::int64_t{model.moe_ffn},
        head_dim * model.heads, head_dim * model.kv_heads}) {
    if (std::find(vocab_widths.begin(), vocab_widths.end(), width) != vocab_widths.end()) return kept;
  }
  std::vector<std::vector<std::int64_t>> dims;
  for (std::size_t i = 0; i < work.ops.size(); ++i) {
    const measure::CountedOp& op = work.ops[i];
    if (op.category != measure::WorkCategory::kGemm || !measure::parse_dims(op.input_dims, dims)) continue;
    for (const auto& tensor : dims) {
      if (tensor.size() < 2) continue;
      const std::int64_t rows = tensor[tensor.size() - 2], columns = tensor.back();
      const bool vocab_wide =
          std::find(vocab_widths.begin(), vocab_widths.end(), rows) != vocab_widths.end() ||
          std::find(vocab_widths.begin(), vocab_widths.end(), columns) != vocab_widths.end();
      if (vocab_wide) {
        kept[i] = false;
        break;
      }
    }
  }
  return kept;
}

Comparison compare(const Profile& profile, const measure::Analysis& analysis, const model::ModelSpec& model,
                   const model::HardwareSpec& hw, const model::ParallelConfig& config,
                   const model::Efficiencies& eff, bool calibrate_first, const measure::ProfileWork& work) {
  Comparison out;
  out.profile_ranks = static_cast<std::int64_t>(profile.ranks().size());
  out.world_size = profile.world_size();
  out.config = config;
  out.efficiencies = eff;
  out.predicted = model::predict(model, hw, config, eff);
  out.measured = measure_steps(profile, analysis, config);
  if (out.measured.steps.empty())
    fail(
        "{}: no GPU activity to compare with a prediction (a CPU-only trace has no measured GPU step): "
        "`meshscope predict` with the same model flags predicts without one",
        profile.path().string());

  const std::int64_t layout = std::int64_t{config.tp} * config.pp * config.dp * config.cp;
  if (layout != out.world_size) {
    out.warnings.push_back(fmt::format(
        "CONFIG has tp {} x pp {} x dp {} x cp {} = {} GPUs but the profile's world size is {}: the "
        "prediction is for another scale than the measurement",
        config.tp, config.pp, config.dp, config.cp, layout, out.world_size));
  }
  if (out.profile_ranks < out.world_size) {
    out.notes.push_back(
        fmt::format("the profile holds {} of the job's {} ranks: measured figures are means over those",
                    out.profile_ranks, out.world_size));
  }
  if (out.measured.whole_profile) {
    out.notes.push_back(
        "no step markers (ProfilerStep or NVTX steps) in the profile: each rank's whole GPU span is taken as "
        "one step, which overstates the step time if several iterations were traced");
  }
  if (work.shapes_recorded && !work.kernels.empty()) {
    // The prediction's work is without the logits (a generating pass computes them for its last token
    // only), so the measured is too.
    const std::vector<bool> layers_work = without_output_layer(work, model, config);
    out.coverage =
        coverage_of(flops_per_rank_step(profile, analysis, work, out.measured.whole_profile, &layers_work),
                    out.predicted, model, config);
    const Coverage& c = *out.coverage;
    if (c.partial) {
      out.warnings.push_back(fmt::format(
          "the measured step did {:.0f} % of the predicted step's work ({:.3g} of {:.3g} TFLOP per GPU "
          "without "
          "the logits, from the recorded shapes): the profile holds part of a step, so its times are of that "
          "part",
          100 * c.share, c.measured_flops_per_rank_step / 1e12, c.predicted_flops_per_gpu_step / 1e12));
    } else {
      out.notes.push_back(fmt::format(
          "the measured step did {:.0f} % of the predicted step's work ({:.3g} of {:.3g} TFLOP per GPU "
          "without "
          "the logits, from the recorded shapes)",
          100 * c.share, c.measured_flops_per_rank_step / 1e12, c.predicted_flops_per_gpu_step / 1e12));
    }
  }
  if (config.inference()) {
    out.notes.push_back(
        "an inference step: the prediction is of the forward passes alone (no backward, no optimizer), at "
        "the "
        "measured batch and sequence");
  } else {
    out.notes.push_back(
        "measured compute holds the recomputed forward and the optimizer kernels too: the prediction's "
        "compute, recompute and optimizer are compared as one row");
  }
  out.notes.push_back(
      "measured idle includes data loading, host overhead and synchronisation waits, not only the pipeline "
      "bubble it is compared with");
  // Which process groups went where.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const Rank& r : profile.ranks()) {
    for (const meshscope::Collective& c : r.collectives) {
      const std::vector<int> members = group_members(profile, c);
      const int n = c.group_size != kNull && c.group_size > 0 ? static_cast<int>(c.group_size)
                                                              : static_cast<int>(members.size());
      const Part part = group_part(members, n, profile.str(c.op), profile.str(c.pg_desc), config);
      std::string desc = profile.str(c.pg_desc);
      if (desc.empty()) desc = profile.str(c.communicator);
      seen.insert({to_string(part), desc.empty() ? "?" : desc, members_text(members)});
      if (seen.size() > 64) break;
    }
  }
  std::map<std::string, std::vector<std::string>> groups_of_part;
  for (const auto& [part, desc, members] : seen) {
    auto& list = groups_of_part[part];
    if (list.size() < 6) list.push_back(fmt::format("{} {}", desc, members));
  }
  for (const auto& [part, list] : groups_of_part) {
    out.notes.push_back(fmt::format("exposed communication of process group(s) {} counted as {}",
                                    fmt::join(list, ", "), part));
  }

  if (calibrate_first) {
    out.calibration = calibrate(profile, analysis, model, hw, config, eff, work);
    out.calibrated = model::predict(model, hw, config, out.calibration->efficiencies);
  }
  return out;
}

}  // namespace meshscope::compare
