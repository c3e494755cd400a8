#include "analysis/compare/pipeline_stages.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/compare/gradient_sync.hpp"
#include "analysis/measure/correlation.hpp"
#include "analysis/measure/intervals.hpp"
#include "analysis/measure/launch_ranges.hpp"
#include "analysis/model/architecture.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/pipeline.hpp"
#include "analysis/model/timeline.hpp"
#include "profiler/error.hpp"

namespace meshscope::compare {

StageShares stage_shares(const model::ModelSpec& model, int seq, int pp) {
  model::ParallelConfig config;
  config.pp = pp;
  if (const std::string why = model::check_stage_layers(model, config); !why.empty())
    fail("--pp {}: {}", pp, why);
  StageShares out;
  out.layers = model::stage_layers(model, config);
  const model::ParameterCounts c = model::count_parameters(model);
  std::vector<double> work(static_cast<std::size_t>(pp), 0), params(static_cast<std::size_t>(pp), 0);
  int layer = 0;
  for (int s = 0; s < pp; ++s) {
    for (int k = 0; k < out.layers[static_cast<std::size_t>(s)]; ++k, ++layer) {
      const bool moe = model.is_moe_layer(layer);
      const double mlp_active = moe ? c.expert_active_per_layer + c.shared_per_layer : c.dense_mlp_per_layer;
      const double mlp_held = moe ? c.expert_per_layer + c.shared_per_layer : c.dense_mlp_per_layer;
      work[static_cast<std::size_t>(s)] +=
          2.0 * (c.attention_per_layer + mlp_active) + model::attention_flops_per_token(model, seq);
      params[static_cast<std::size_t>(s)] += c.attention_per_layer + mlp_held + c.norms_per_layer;
    }
  }
  work.back() += model::logits_flops_per_token(model);
  params.front() += c.embedding;
  params.back() += c.output;
  double total_work = 0, total_params = 0;
  for (int s = 0; s < pp; ++s) total_work += work[s], total_params += params[s];
  double done = 0;
  for (int s = 0; s + 1 < pp; ++s) out.forward.push_back((done += work[s]) / total_work);
  done = 0;
  for (int s = pp - 1; s > 0; --s) out.backward.push_back((done += work[s]) / total_work);
  for (const double p : params) out.parameters.push_back(total_params > 0 ? p / total_params : 1.0 / pp);
  return out;
}

namespace {

using measure::Interval;

// A rank's replayed GPU time as disjoint intervals, with running totals, for the time busy in a window.
struct Occupied {
  std::vector<Interval> spans;
  std::vector<TimeNs> before;  // Σ lengths of spans[0..k)

  void build(std::vector<Interval> intervals) {
    measure::sort_by_start(intervals);
    measure::union_sorted(intervals, spans);
    before.assign(spans.size() + 1, 0);
    for (std::size_t k = 0; k < spans.size(); ++k) before[k + 1] = before[k] + spans[k].length();
  }
  // Σ over spans of their length before T.
  TimeNs until(TimeNs t) const {
    const auto it = std::upper_bound(spans.begin(), spans.end(), t,
                                     [](TimeNs x, const Interval& iv) { return x < iv.start; });
    const auto k = static_cast<std::size_t>(it - spans.begin());
    if (k == 0) return 0;
    return before[k - 1] + std::min(spans[k - 1].end, t) - spans[k - 1].start;
  }
  TimeNs within(TimeNs a, TimeNs b) const { return b > a ? until(b) - until(a) : 0; }
};

// A rank's replayed GPU work and its communication with no compute beside it.
struct RankOccupancy {
  Occupied busy, exposed, comm;
  std::vector<Interval> optimizer;  // the optimizer's CUDA calls and the GPU work they launched
};

RankOccupancy rank_occupancy(const Rank& r, const measure::RankResult& result,
                             const measure::ReplayedTimes& times,
                             const std::vector<measure::AddedActivity>* added) {
  std::vector<Interval> all, comm, compute;
  for (std::size_t i = 0; i < r.activities.size() && i < times.start.size(); ++i) {
    if (r.activities[i].kind == ActivityKind::kSync) continue;
    const Interval iv{times.start[i], times.end[i]};
    all.push_back(iv);
    if (result.classes[i] == ActivityClass::kComm) comm.push_back(iv);
    if (result.classes[i] == ActivityClass::kCompute) compute.push_back(iv);
  }
  for (std::size_t k = 0; added && k < added->size() && k < times.added_start.size(); ++k) {
    const Interval iv{times.added_start[k], times.added_end[k]};
    all.push_back(iv);
    ((*added)[k].cls == ActivityClass::kComm ? comm : compute).push_back(iv);
  }
  RankOccupancy out;
  out.busy.build(std::move(all));
  std::vector<Interval> c, k, exposed;
  measure::sort_by_start(comm), measure::sort_by_start(compute);
  measure::union_sorted(comm, c), measure::union_sorted(compute, k);
  measure::subtract(c, k, exposed);
  out.exposed.build(std::move(exposed));
  out.comm.build(std::move(comm));
  return out;
}

// One pass of a micro-batch cut into the stages' pieces: BOUNDS[0] its window's start, BOUNDS[s + 1] the end
// of the piece of the s-th stage in the pass's order (the backward's runs from the last stage).
std::vector<TimeNs> cut_pass(const std::vector<std::uint32_t>& kernels, const measure::ReplayedTimes& t,
                             TimeNs window_start, const std::vector<double>& shares) {
  std::vector<TimeNs> done(kernels.size());
  TimeNs total = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) done[k] = total += t.end[kernels[k]] - t.start[kernels[k]];
  const TimeNs window_end = std::max(window_start, t.end[kernels.back()]);
  std::vector<TimeNs> bounds{window_start};
  for (const double share : shares) {
    const auto target = static_cast<TimeNs>(std::llround(share * static_cast<double>(total)));
    // The kernel boundary nearest the share: after kernel AT, or before it (after AT - 1).
    auto at = std::min<std::size_t>(
        static_cast<std::size_t>(std::lower_bound(done.begin(), done.end(), target) - done.begin()),
        kernels.size() - 1);
    const TimeNs before_at = at > 0 ? done[at - 1] : 0;
    TimeNs cut = t.end[kernels[at]];
    if (target - before_at < done[at] - target) cut = at > 0 ? t.end[kernels[at - 1]] : window_start;
    bounds.push_back(std::clamp(cut, bounds.back(), window_end));
  }
  bounds.push_back(window_end);
  return bounds;
}

// One measured step as the stages' pieces: per stage and micro-batch, its forward's and backward's windows
// (the same rank's replayed time), and the step's time before the first pass and after the last.
struct StepPieces {
  std::int32_t micro_batches = 0;
  bool training = true;
  // [stage][micro-batch] → [start, end)
  std::vector<std::vector<Interval>> forward, backward;
  Interval before{0, 0}, after{0, 0};
  std::int32_t unpaired = 0;  // passes without their other half: their time stays where it falls
};

// STEP's passes in time order, a backward paired with the forward just before it (training), every forward a
// micro-batch (inference); a pass without its other half is not a micro-batch: before the first one its
// time falls to the step's work before, after the last to the work after, between two to the next one.
StepPieces step_pieces(const StepKernels& step, const measure::ReplayedTimes& t, TimeNs step_start,
                       TimeNs step_end, const StageShares& shares, int pp) {
  StepPieces out;
  out.training = !step.backward_passes.empty();
  struct Pass {
    bool backward;
    const std::vector<std::uint32_t>* kernels;
  };
  std::vector<Pass> passes;
  for (const auto& k : step.forward_passes) passes.push_back({false, &k});
  for (const auto& k : step.backward_passes) passes.push_back({true, &k});
  std::erase_if(passes, [](const Pass& p) { return p.kernels->empty(); });
  std::stable_sort(passes.begin(), passes.end(), [&](const Pass& a, const Pass& b) {
    return t.start[a.kernels->front()] < t.start[b.kernels->front()];
  });
  std::vector<std::pair<const Pass*, const Pass*>> pairs;  // forward, backward (null for inference)
  const Pass* pending = nullptr;
  for (const Pass& p : passes) {
    if (!out.training) {
      pairs.push_back({&p, nullptr});
    } else if (!p.backward) {
      out.unpaired += pending != nullptr;
      pending = &p;
    } else if (pending) {
      pairs.push_back({pending, &p});
      pending = nullptr;
    } else {
      ++out.unpaired;
    }
  }
  out.unpaired += pending != nullptr;
  const std::size_t m = pairs.size();
  out.micro_batches = static_cast<std::int32_t>(m);
  out.forward.assign(static_cast<std::size_t>(pp), std::vector<Interval>(m));
  out.backward.assign(static_cast<std::size_t>(pp), std::vector<Interval>(out.training ? m : 0));
  TimeNs previous_end = m == 0 ? step_start : t.start[pairs.front().first->kernels->front()];
  out.before = {step_start, std::max(step_start, previous_end)};
  for (std::size_t k = 0; k < m; ++k)
    for (const Pass* p : {pairs[k].first, pairs[k].second}) {
      if (!p) continue;
      const std::vector<TimeNs> bounds =
          cut_pass(*p->kernels, t, previous_end, p->backward ? shares.backward : shares.forward);
      for (int s = 0; s < pp; ++s) {
        const Interval piece{bounds[static_cast<std::size_t>(s)], bounds[static_cast<std::size_t>(s) + 1]};
        if (p->backward)
          out.backward[static_cast<std::size_t>(pp - 1 - s)][k] = piece;
        else
          out.forward[static_cast<std::size_t>(s)][k] = piece;
      }
      previous_end = bounds.back();
    }
  out.after = {previous_end, std::max(previous_end, step_end)};
  return out;
}

struct SendTimes {
  double intra_s = 0, inter_s = 0;
  bool intra = false, inter = false;  // whether some neighbouring stages share a node, some do not
  std::string note;
  // Between stages FROM and TO: across nodes when their first ranks sit on different nodes.
  double between(int from, int to, std::int64_t stride, int gpus_per_node) const {
    const std::int64_t g = std::max(1, gpus_per_node);
    return (from * stride) / g == (to * stride) / g ? intra_s : inter_s;
  }
};

SendTimes send_times(const Profile& profile, const measure::Analysis& analysis, const model::HardwareSpec& hw,
                     const PipelineRequest& request) {
  const int g = std::max(1, hw.gpus_per_node);
  // Which links the sends use: within a node when neighbouring stages share one, across otherwise.
  bool intra = false, inter = false;
  for (std::int64_t s = 0; s + 1 < request.pp; ++s)
    ((s * request.stride) / g == ((s + 1) * request.stride) / g ? intra : inter) = true;
  model::GroupShape shape{2, 2};  // two stages on one node
  if (inter) shape = intra ? model::GroupShape{2 * g, g} : model::GroupShape{2, 1};
  const GroupLinks links = group_links(profile, analysis, hw, shape);
  SendTimes out;
  out.intra = intra, out.inter = inter;
  out.intra_s = model::collective_time(model::Collective::kSendRecv, request.message_bytes, 2, links.intra);
  out.inter_s = model::collective_time(model::Collective::kSendRecv, request.message_bytes, 2, links.inter);
  out.note = links.note;
  return out;
}

// The most micro-batches one step's pipeline schedules (its operations are listed per stage).
constexpr std::int64_t kMostMicroBatches = 1 << 16;

TimeNs ns(double seconds) {
  return static_cast<TimeNs>(std::llround(seconds * 1e9));
}

// Each rank's replayed steps in the order the replay gives them: the order of the analysis's steps (one for
// the whole profile of a rank without steps). By position, as step numbers may repeat.
std::map<std::int32_t, std::vector<const measure::ReplayedStep*>> replayed_steps(
    const measure::Replay& replay) {
  std::map<std::int32_t, std::vector<const measure::ReplayedStep*>> out;
  for (const measure::ReplayedStep& s : replay.steps) out[s.rank].push_back(&s);
  return out;
}

// Rank RI's optimizer work in replayed time: the CUDA calls made inside its optimizer's ranges
// (measure::optimizer_range_name) and the GPU work they launched, sorted by start.
std::vector<Interval> optimizer_work(const Profile& profile, std::size_t ri,
                                     const measure::ReplayedTimes& t) {
  const Rank& r = profile.ranks()[ri];
  const std::vector<std::uint8_t> inside =
      measure::calls_inside_ranges(profile, ri, measure::optimizer_range_name);
  std::vector<Interval> out;
  for (std::size_t c = 0; c < inside.size() && c < t.call_start.size(); ++c)
    if (inside[c] != 0) out.push_back({t.call_start[c], t.call_end[c]});
  measure::CorrelationMap map;
  map.build(r.api_calls);
  for (std::size_t i = 0; i < r.activities.size() && i < t.start.size(); ++i) {
    const std::int32_t call = map.find(r.activities[i].correlation);
    if (call >= 0 && static_cast<std::size_t>(call) < inside.size() && inside[static_cast<std::size_t>(call)])
      out.push_back({t.start[i], t.end[i]});
  }
  measure::sort_by_start(out);
  return out;
}

// The part of the step's work after its passes that each stage runs for its own parameters only: from the
// first to the last optimizer call (and its GPU work) in the window, and the communication in it (the
// gradients' all-reduces); the rest (host work, metrics) every stage runs whole.
TimeNs parameter_work(const Interval& after, const std::vector<Interval>& optimizer, const Occupied& comm) {
  if (after.length() <= 0) return 0;
  TimeNs lo = after.end, hi = after.start;
  for (const Interval& iv : optimizer)
    if (iv.end > after.start && iv.start < after.end)
      lo = std::min(lo, std::max(iv.start, after.start)), hi = std::max(hi, std::min(iv.end, after.end));
  const TimeNs span = hi > lo ? hi - lo : 0;
  return span + comm.within(after.start, after.end) - (span > 0 ? comm.within(lo, hi) : 0);
}

// One step of one measured rank, pipelined: its stages' steps appended to OUT; their busy and exposed
// communication added to BUSY and EXPOSED (per stage); AFTER_SCALE: per stage, its time after the passes over
// the replay's.
model::Timeline pipeline_step(const StepPieces& pieces, const measure::ReplayedStep& replayed,
                              const RankOccupancy& occ, const StageShares& shares, const SendTimes& sends,
                              const PipelineRequest& request, int gpus_per_node, std::int32_t world,
                              std::vector<PipelinedStep>& out, std::vector<TimeNs>& busy,
                              std::vector<TimeNs>& exposed, std::vector<double>& after_scale) {
  const int pp = request.pp;
  const int split = std::max(1, request.micro_batch_split);
  const int m = pieces.micro_batches * split;  // at most kMostMicroBatches (pipeline_stages checks)
  std::vector<std::vector<model::StageOp>> orders(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    if (pieces.training)
      orders[static_cast<std::size_t>(s)] = model::stage_order(model::Schedule::k1F1B, s, pp, m, 1);
    else
      for (int k = 0; k < m; ++k) orders[static_cast<std::size_t>(s)].push_back({true, k, 0});
  }
  const auto length = [](const Interval& iv) { return static_cast<double>(iv.length()) * 1e-9; };
  model::Timeline tl = model::schedule_pipeline(
      orders, 1, m,
      [&](int s, const model::StageOp& op) {
        const auto& pieces_of = op.forward ? pieces.forward : pieces.backward;
        return length(
            pieces_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(op.micro_batch / split)]);
      },
      [&](int from, int to) { return sends.between(from, to, request.stride, gpus_per_node); });
  const TimeNs before = pieces.before.length(), drain = ns(tl.step_time_s), after = pieces.after.length();
  const TimeNs per_parameter = parameter_work(pieces.after, occ.optimizer, occ.comm);
  after_scale.clear();
  for (int s = 0; s < pp; ++s) {
    PipelinedStep p;
    p.measured_rank = replayed.rank;
    p.stage = s;
    p.rank = static_cast<std::int32_t>(s * world + replayed.rank);
    p.step = replayed.step;
    p.measured_ns = replayed.measured_ns;
    p.micro_batches = m;
    p.before_ns = before;
    const double share = shares.parameters[static_cast<std::size_t>(s)];
    p.after_ns = after - ns(static_cast<double>(per_parameter) * (1 - share) * 1e-9);
    const double scale = after > 0 ? static_cast<double>(p.after_ns) / static_cast<double>(after) : 1.0;
    after_scale.push_back(scale);
    p.predicted_ns = before + drain + p.after_ns;
    for (const model::TimelineEvent& e : tl.events) {
      if (e.stage != s) continue;
      if (e.kind == model::TimelineKind::kForward) p.forward_ns += ns(e.duration_s);
      if (e.kind == model::TimelineKind::kBackward) p.backward_ns += ns(e.duration_s);
      if (e.kind == model::TimelineKind::kSend) p.send_ns += ns(e.duration_s);
    }
    p.bubble_ns = std::max<TimeNs>(0, drain - (p.forward_ns + p.backward_ns));
    // Busy: the replay's GPU work in its pieces and before; after, in its share.
    TimeNs b = occ.busy.within(pieces.before.start, pieces.before.end),
           x = occ.exposed.within(pieces.before.start, pieces.before.end);
    // Each piece runs once per micro-batch it became.
    for (const auto* set : {&pieces.forward, &pieces.backward})
      for (const Interval& iv : (*set)[static_cast<std::size_t>(s)])
        b += split * occ.busy.within(iv.start, iv.end), x += split * occ.exposed.within(iv.start, iv.end);
    b += ns(static_cast<double>(occ.busy.within(pieces.after.start, pieces.after.end)) * scale * 1e-9);
    x += ns(static_cast<double>(occ.exposed.within(pieces.after.start, pieces.after.end)) * scale * 1e-9);
    busy[static_cast<std::size_t>(s)] += b + p.send_ns;
    exposed[static_cast<std::size_t>(s)] += x + p.send_ns;
    out.push_back(p);
  }
  return tl;
}

}  // namespace

Pipelined pipeline_stages(const Profile& profile, const measure::Analysis& analysis,
                          const measure::ReplayEdits& edits, const measure::Replay& replay,
                          const StageShares& shares, const model::HardwareSpec& hw,
                          const PipelineRequest& request, std::string_view title) {
  const auto& ranks = profile.ranks();
  const int pp = request.pp;
  if (replay.times.size() != ranks.size())
    fail("{}: --pp {}: the replay kept no times to cut into stages", title, pp);
  const SendTimes sends = send_times(profile, analysis, hw, request);
  Pipelined out;
  out.stages = pp;
  std::int64_t world = 0;
  for (const Rank& r : ranks) world = std::max<std::int64_t>(world, std::int64_t{r.rank} + 1);
  if (world * pp > std::numeric_limits<std::int32_t>::max())
    fail("{}: --pp {}: the stages of ranks up to {} would need rank numbers past {}", title, pp, world - 1,
         std::numeric_limits<std::int32_t>::max());
  out.world = static_cast<std::int32_t>(world);
  out.micro_batch_split = std::max(1, request.micro_batch_split);
  std::vector<std::vector<TimeNs>> busy(ranks.size(), std::vector<TimeNs>(static_cast<std::size_t>(pp), 0)),
      exposed = busy, predicted = busy;
  std::int32_t most = 0, unpaired = 0, skipped = 0;
  const auto replayed_of = replayed_steps(replay);
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    std::vector<std::uint8_t> launched_in;
    const std::vector<StepKernels> steps = step_kernels(profile, analysis, ri, launched_in);
    const measure::RankResult& result = analysis.ranks[ri];
    RankOccupancy occ = rank_occupancy(ranks[ri], result, replay.times[ri],
                                       ri < edits.added.size() ? &edits.added[ri] : nullptr);
    occ.optimizer = optimizer_work(profile, ri, replay.times[ri]);
    const auto found = replayed_of.find(ranks[ri].rank);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      if (steps[k].forward_passes.empty() || found == replayed_of.end() || k >= found->second.size()) {
        ++skipped;
        continue;
      }
      const std::int64_t number = result.steps.empty() ? -1 : result.steps[k].number;
      const measure::ReplayedStep* replayed = found->second[k];
      StepPieces pieces = step_pieces(steps[k], replay.times[ri], replayed->replayed_start_ns,
                                      replayed->replayed_start_ns + replayed->replayed_ns, shares, pp);
      if (std::int64_t{pieces.micro_batches} * std::max(1, request.micro_batch_split) > kMostMicroBatches)
        fail(
            "{}: --pp {}: a step of {} micro-batches, each run as {}, is more than the {} one pipeline "
            "schedules",
            title, pp, pieces.micro_batches, request.micro_batch_split, kMostMicroBatches);
      most = std::max(most, pieces.micro_batches);
      unpaired += pieces.unpaired;
      const std::size_t first = out.steps.size();
      PipelinedSchedule schedule;
      schedule.rank_index = ri;
      schedule.step = number;
      schedule.replayed_start_ns = replayed->replayed_start_ns;
      schedule.replayed_ns = replayed->replayed_ns;
      schedule.before = pieces.before;
      schedule.after = pieces.after;
      schedule.forward = pieces.forward;
      schedule.backward = pieces.backward;
      schedule.timeline = pipeline_step(pieces, *replayed, occ, shares, sends, request, hw.gpus_per_node,
                                        world, out.steps, busy[ri], exposed[ri], schedule.after_scale);
      for (std::size_t j = first; j < out.steps.size(); ++j)
        schedule.predicted_ns.push_back(out.steps[j].predicted_ns);
      out.schedules.push_back(std::move(schedule));
      for (std::size_t j = first; j < out.steps.size(); ++j)
        predicted[ri][static_cast<std::size_t>(out.steps[j].stage)] +=
            out.steps[j].predicted_ns - replayed->replayed_ns;
    }
  }
  if (out.steps.empty())
    fail(
        "{}: --pp {}: no step holds a forward pass (a run of kernels with GEMM or attention work) "
        "to cut into stages",
        title, pp);
  for (int s = 0; s < pp; ++s)
    for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
      const measure::ReplayedRank& r = replay.ranks[ri];
      PipelinedRank p;
      p.measured_rank = r.rank;
      p.stage = s;
      p.rank = static_cast<std::int32_t>(s * world + r.rank);
      // The replayed span, each step's change from the replay's step to the stage's.
      p.span_ns = std::max<TimeNs>(0, r.span_ns + predicted[ri][static_cast<std::size_t>(s)]);
      p.busy_ns = busy[ri][static_cast<std::size_t>(s)];
      p.exposed_comm_ns = exposed[ri][static_cast<std::size_t>(s)];
      out.ranks.push_back(p);
    }
  std::string layers;
  for (const int l : shares.layers) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
  out.notes.push_back(fmt::format(
      "pp 1 -> {}: the layers cut {} over the stages (the embedding with the first, the output layer and the "
      "loss with the last); each micro-batch's forward and backward pass of the replay split where the "
      "stages' share of its GEMM and attention work ends, scheduled 1F1B (up to {} micro-batch{} per step "
      "read from the kernels){}",
      pp, layers, most, most == 1 ? "" : "es",
      unpaired > 0 ? fmt::format("; {} pass{} without its other half (a backward with no forward before it, "
                                 "a forward with no backward after it) left where {} fell, not cut",
                                 unpaired, unpaired == 1 ? "" : "es", unpaired == 1 ? "it" : "they")
                   : ""));
  if (skipped > 0)
    out.notes.push_back(fmt::format(
        "{} step{} with no forward pass (a run of kernels with GEMM or attention work) not pipelined: the "
        "stages' steps leave {} out",
        skipped, skipped == 1 ? "" : "s", skipped == 1 ? "it" : "them"));
  std::vector<std::string> sends_text;
  if (sends.intra) sends_text.push_back(fmt::format("{:.1f} µs within a node", sends.intra_s * 1e6));
  if (sends.inter) sends_text.push_back(fmt::format("{:.1f} µs across nodes", sends.inter_s * 1e6));
  out.notes.push_back(
      fmt::format("each send between stages {:.2f} MB: {} (stages {} rank{} apart, {} GPUs "
                  "per node): {}",
                  request.message_bytes / 1e6, fmt::join(sends_text, ", "), request.stride,
                  request.stride == 1 ? "" : "s", hw.gpus_per_node, sends.note));
  out.notes.push_back(
      "before the first pass every stage runs the step's work as replayed; after the pipeline has drained "
      "(its gradient-norm all-reduce joins the stages) each stage runs the optimizer's span and the "
      "communication of the work after the last pass for its share of the parameters, the rest of that work "
      "whole");
  return out;
}

}  // namespace meshscope::compare
