#include "analysis/compare/gradient_sync.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "analysis/compare/calibrate.hpp"
#include "analysis/measure/correlation.hpp"
#include "analysis/measure/launch_ranges.hpp"
#include "analysis/model/architecture.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/predict.hpp"
#include "profiler/error.hpp"

namespace meshscope::compare {
namespace {

using measure::AddedActivity;

// A weight's gradient (or, with no parameters, work between two of them: the attention core) in the order
// the backward pass produces it, with the backward work it follows (∝ its forward FLOPs per token).
struct GradientTensor {
  double params = 0;
  double work = 0;
};

std::vector<GradientTensor> backward_order(const model::ModelSpec& m, int seq) {
  const model::ParameterCounts c = model::count_parameters(m);
  std::vector<GradientTensor> out;
  if (c.output > 0) out.push_back({c.output, model::logits_flops_per_token(m)});
  const int matrices = m.gated_mlp ? 3 : 2;
  for (int layer = m.layers - 1; layer >= 0; --layer) {
    const bool moe = m.is_moe_layer(layer);
    const double mlp_params = moe ? c.expert_per_layer + c.shared_per_layer : c.dense_mlp_per_layer;
    const double mlp_work =
        2.0 * (moe ? c.expert_active_per_layer + c.shared_per_layer : c.dense_mlp_per_layer);
    for (int k = 0; k < matrices; ++k) out.push_back({mlp_params / matrices, mlp_work / matrices});
    out.push_back({c.norms_per_layer, 0});
    // The output projection, the attention core, then the query, key and value projections.
    out.push_back({c.attention_per_layer / 4, 2.0 * c.attention_per_layer / 4});
    out.push_back({0, model::attention_flops_per_token(m, seq)});
    out.push_back({c.attention_per_layer * 3 / 4, 2.0 * c.attention_per_layer * 3 / 4});
  }
  out.push_back({c.embedding, 0});
  return out;
}

}  // namespace

GroupLinks group_links(const Profile& profile, const measure::Analysis& analysis,
                       const model::HardwareSpec& hw, const model::GroupShape& shape) {
  const model::Efficiencies eff = model::defaults_for(hw);
  GroupLinks out{model::intra_node_link(eff), model::inter_node_link(eff), {}};
  const std::vector<LinkPoint> points = collect_link_points(profile, analysis, hw);
  std::vector<std::string> parts;
  for (const LinkClass link : {LinkClass::kIntraNode, LinkClass::kInterNode}) {
    const bool used = link == LinkClass::kIntraNode ? shape.per_node > 1 : shape.nodes() > 1;
    if (!used) continue;
    model::Link& l = link == LinkClass::kIntraNode ? out.intra : out.inter;
    const LinkFit fit = fit_link(points, link);
    if (fit.fitted) l = fit.fit.link();
    parts.push_back(fmt::format("{} α {:.2f} µs per step, bus bandwidth {:.1f} GB/s ({})", to_string(link),
                                l.alpha_s * 1e6, l.bandwidth_Bps / 1e9,
                                fit.fitted
                                    ? fmt::format("the fit of the profile's {} collectives", fit.points)
                                    : fmt::format("{}'s efficiencies", hw.name)));
  }
  for (const auto& p : parts) out.note += (out.note.empty() ? "" : "; ") + p;
  return out;
}

namespace {

// STEP's passes from its kernels (each list in start order): the runs of forward and of backward kernels in
// start order, where a forward run counts only when it holds a GEMM or attention kernel (MAIN_WORK, per
// activity) and, in a step with a backward, only when a backward run follows it. So work between or after
// the passes (gradient clipping, the loss scaler's, metrics, a kernel of another thread) neither makes a pass
// of its own nor splits a backward in two.
void split_passes(const Rank& r, const std::vector<std::uint8_t>& main_work, StepKernels& step) {
  struct Run {
    bool backward = false;
    std::vector<std::uint32_t> kernels;
  };
  std::vector<Run> runs;
  std::size_t f = 0, b = 0;
  while (f < step.forward.size() || b < step.backward.size()) {
    const bool backward = f == step.forward.size() ||
                          (b < step.backward.size() &&
                           r.activities[step.backward[b]].start_ns < r.activities[step.forward[f]].start_ns);
    if (runs.empty() || runs.back().backward != backward) runs.push_back({backward, {}});
    runs.back().kernels.push_back(backward ? step.backward[b++] : step.forward[f++]);
  }
  const auto has_main_work = [&](const Run& run) {
    return std::any_of(run.kernels.begin(), run.kernels.end(),
                       [&](std::uint32_t i) { return main_work[i] != 0; });
  };
  // Forward runs without main work go; the backward runs around them join.
  std::vector<Run> kept;
  for (Run& run : runs) {
    if (!run.backward && !has_main_work(run)) continue;
    if (!kept.empty() && kept.back().backward && run.backward)
      kept.back().kernels.insert(kept.back().kernels.end(), run.kernels.begin(), run.kernels.end());
    else
      kept.push_back(std::move(run));
  }
  const bool training = !step.backward.empty();
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (kept[k].backward)
      step.backward_passes.push_back(std::move(kept[k].kernels));
    else if (!training || (k + 1 < kept.size() && kept[k + 1].backward))
      step.forward_passes.push_back(std::move(kept[k].kernels));
  }
}

}  // namespace

std::vector<StepKernels> step_kernels(const Profile& profile, const measure::Analysis& analysis,
                                      std::size_t ri, std::vector<std::uint8_t>& launched_in) {
  const Rank& r = profile.ranks()[ri];
  const measure::RankResult& result = analysis.ranks[ri];
  const std::vector<std::uint8_t> backward =
      measure::calls_inside_ranges(profile, ri, measure::backward_range_name);
  const std::vector<std::uint8_t> optimizer =
      measure::calls_inside_ranges(profile, ri, measure::optimizer_range_name);
  measure::CorrelationMap map;
  map.build(r.api_calls);
  std::vector<StepKernels> out(std::max<std::size_t>(1, result.steps.size()));
  launched_in.assign(r.activities.size(), 0);
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const Activity& a = r.activities[i];
    if (a.kind == ActivityKind::kSync) continue;
    const std::int32_t api = map.find(a.correlation);
    if (api < 0) continue;
    const auto call = static_cast<std::size_t>(api);
    launched_in[i] = backward[call];
    if (a.kind != ActivityKind::kKernel || result.classes[i] != ActivityClass::kCompute ||
        optimizer[call] != 0)
      continue;
    const TimeNs launch = r.api_calls[call].start_ns;
    std::size_t step = 0;
    if (!result.steps.empty()) {
      const auto it = std::find_if(
          result.steps.begin(), result.steps.end(),
          [&](const measure::StepResult& s) { return s.cpu_start_ns <= launch && launch < s.cpu_end_ns; });
      if (it == result.steps.end()) continue;
      step = static_cast<std::size_t>(it - result.steps.begin());
    }
    (backward[call] != 0 ? out[step].backward : out[step].forward).push_back(i);
  }
  // GEMM and attention kernels, by name: what a pass is made of.
  std::vector<std::uint8_t> main_work(r.activities.size(), 0);
  std::unordered_map<StringId, bool> main_name;
  for (const StepKernels& step : out)
    for (const auto* kernels : {&step.forward, &step.backward})
      for (const std::uint32_t i : *kernels) {
        auto [it, added] = main_name.try_emplace(r.activities[i].name, false);
        if (added) {
          const measure::WorkCategory c = measure::kernel_work_category(profile.str(r.activities[i].name));
          it->second = c == measure::WorkCategory::kGemm || c == measure::WorkCategory::kAttention;
        }
        main_work[i] = it->second ? 1 : 0;
      }
  for (StepKernels& step : out) {
    for (auto* kernels : {&step.forward, &step.backward})
      std::stable_sort(kernels->begin(), kernels->end(), [&](std::uint32_t x, std::uint32_t y) {
        return r.activities[x].start_ns < r.activities[y].start_ns;
      });
    split_passes(r, main_work, step);
  }
  return out;
}

namespace {

// Per kernel of KERNELS (in start order), the time they have run through it; TOTAL their sum.
std::vector<TimeNs> time_done(const Rank& r, const std::vector<std::uint32_t>& kernels, TimeNs& total) {
  std::vector<TimeNs> done(kernels.size());
  total = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) done[k] = total += r.activities[kernels[k]].duration();
  return done;
}

// The kernel of KERNELS by which they have run SHARE of their time (DONE: time_done's).
std::uint32_t kernel_at_share(const std::vector<std::uint32_t>& kernels, const std::vector<TimeNs>& done,
                              TimeNs total, double share) {
  const auto target = static_cast<TimeNs>(std::llround(share * static_cast<double>(total)));
  const auto at = std::min<std::size_t>(
      static_cast<std::size_t>(std::lower_bound(done.begin(), done.end(), target) - done.begin()),
      kernels.size() - 1);
  return kernels[at];
}

// The first work on LAST's stream after it that was not launched from a backward range: what waits for the
// gradients. kNoActivity when none.
std::uint32_t next_after_backward(const Rank& r, std::uint32_t last,
                                  const std::vector<std::uint8_t>& backward) {
  for (const GpuStream& s : r.streams) {
    if (last < s.first || last >= s.first + s.count) continue;
    for (std::uint32_t j = last + 1; j < s.first + s.count; ++j)
      if (r.activities[j].kind != ActivityKind::kSync && backward[j] == 0) return j;
  }
  return AddedActivity::kNoActivity;
}

// The last activity on LAST's stream from LAST on that was launched from a backward range before the first
// that was not: where the backward's work on that stream ends (the reducer's finalisation queues after it).
std::uint32_t end_of_backward(const Rank& r, std::uint32_t last, const std::vector<std::uint8_t>& backward) {
  std::uint32_t out = last;
  for (const GpuStream& s : r.streams) {
    if (last < s.first || last >= s.first + s.count) continue;
    for (std::uint32_t j = last + 1; j < s.first + s.count; ++j) {
      if (r.activities[j].kind == ActivityKind::kSync) continue;
      if (backward[j] == 0) break;
      out = j;
    }
  }
  return out;
}

// The work queued behind activity I on its stream (kNoActivity: none).
std::uint32_t next_on_stream(const Rank& r, std::uint32_t i) {
  for (const GpuStream& s : r.streams) {
    if (i < s.first || i >= s.first + s.count) continue;
    for (std::uint32_t j = i + 1; j < s.first + s.count; ++j)
      if (r.activities[j].kind != ActivityKind::kSync) return j;
  }
  return AddedActivity::kNoActivity;
}

// What the plan of one step needs besides the step's kernels.
struct StepPlan {
  const std::vector<GradientBucket>& buckets;
  const std::vector<TimeNs>& all_reduce_ns;
  const std::vector<TimeNs>& copy_ns;  // per bucket: its copy back
  const GradientSyncRequest& request;
  double hbm_Bps = 0;  // achievable: a copy reads and writes each byte
};

AddedActivity copy_activity(std::uint32_t after, std::uint32_t after_added, std::uint32_t before, TimeNs ns,
                            std::string name) {
  AddedActivity a;
  a.place = AddedActivity::Place::kAfterOnStream;
  a.after = after, a.after_added = after_added, a.before = before;
  a.duration_ns = ns;
  a.cls = ActivityClass::kCompute;
  a.name = std::move(name);
  return a;
}

// The DDP work of one step whose backward ran KERNELS (compute kernels in start order) on rank R.
void plan_step(const Rank& r, const std::vector<std::uint32_t>& kernels,
               const std::vector<std::uint8_t>& backward, const StepPlan& plan,
               std::vector<AddedActivity>& out) {
  TimeNs total = 0;
  const std::vector<TimeNs> done = time_done(r, kernels, total);
  const std::uint32_t last = *std::max_element(
      kernels.begin(), kernels.end(),
      [&](std::uint32_t x, std::uint32_t y) { return r.activities[x].end_ns < r.activities[y].end_ns; });
  const std::uint32_t waits = next_after_backward(r, last, backward);
  const std::size_t n = plan.buckets.size();
  const int dp = plan.request.dp;
  std::vector<std::uint32_t> reduced(n);
  std::uint32_t previous = kernels.front();
  for (std::size_t b = 0; b < n; ++b) {
    const GradientBucket& bucket = plan.buckets[b];
    // Each gradient scaled into the bucket once ready, after the kernel that made it (in order of ends).
    std::uint32_t after = previous, copied = AddedActivity::kNoActivity;
    for (const auto& [bytes, share] : bucket.gradients) {
      after = kernel_at_share(kernels, done, total, share);
      if (r.activities[after].end_ns < r.activities[previous].end_ns) after = previous;
      previous = after;
      const auto ns =
          static_cast<TimeNs>(plan.hbm_Bps > 0 ? std::llround(2 * bytes / plan.hbm_Bps * 1e9) : 0);
      copied = static_cast<std::uint32_t>(out.size());
      out.push_back(copy_activity(
          after, AddedActivity::kNoActivity, next_on_stream(r, after), ns,
          fmt::format("DDP: a gradient x 1/{} into bucket {} of {} ({:.2f} MB)", dp, b + 1, n, bytes / 1e6)));
    }
    AddedActivity all_reduce;
    all_reduce.after = after;
    all_reduce.after_added = copied;
    all_reduce.duration_ns = plan.all_reduce_ns[b];
    all_reduce.bytes = bucket.bytes;
    all_reduce.group_size = dp;
    all_reduce.name = fmt::format("ncclDevKernel_AllReduce_Sum (added: dp {}, bucket {} of {}, {:.1f} MB)",
                                  dp, b + 1, n, bucket.bytes / 1e6);
    reduced[b] = static_cast<std::uint32_t>(out.size());
    out.push_back(std::move(all_reduce));
  }
  // The end of the backward (after its last work on that stream): the backward's stream waits for each
  // bucket's all-reduce (and copies it back).
  const std::uint32_t tail = end_of_backward(r, last, backward);
  for (std::size_t b = 0; b < n; ++b)
    out.push_back(
        copy_activity(tail, reduced[b], waits, plan.request.gradient_as_bucket_view ? 0 : plan.copy_ns[b],
                      plan.request.gradient_as_bucket_view
                          ? fmt::format("DDP: wait for bucket {} of {}", b + 1, n)
                          : fmt::format("DDP: bucket {} of {} copied back to the gradients", b + 1, n)));
}

// The second entry of a recorded list of input types ("[\"c10::BFloat16\", \"float\", \"float\"]"):
// a linear's or convolution's weight.
std::string_view second_type(std::string_view types) {
  const std::size_t comma = types.find(',');
  if (comma == std::string_view::npos) return {};
  const std::size_t end = types.find(',', comma + 1);
  return types.substr(comma + 1, end == std::string_view::npos ? std::string_view::npos : end - comma - 1);
}

}  // namespace

ParameterPrecision parameter_precision(const measure::ProfileWork& work) {
  std::int64_t fp32 = 0, sixteen = 0;
  for (const measure::CountedOp& op : work.ops) {
    if (op.name != "aten::linear" && op.name != "aten::convolution" && !op.name.starts_with("aten::conv"))
      continue;
    switch (measure::precision_of_types(second_type(op.input_types))) {
      case measure::WorkPrecision::kFP32:
        ++fp32;
        break;
      case measure::WorkPrecision::kBF16:
      case measure::WorkPrecision::kFP16:
        ++sixteen;
        break;
      default:
        break;
    }
  }
  if (fp32 > 0)
    return {4, fmt::format("{} linear and convolution operators took an FP32 weight: FP32 parameters{}", fp32,
                           sixteen > 0 ? fmt::format(" ({} more took it cast to 16 bits: autocast)", sixteen)
                                       : std::string())};
  if (sixteen > 0)
    return {2, fmt::format("{} linear and convolution operators took a 16-bit weight and none an FP32 one: a "
                           "model held in 16 bits",
                           sixteen)};
  return {4, "no linear or convolution operator recorded its weight's type: FP32 parameters assumed"};
}

std::vector<GradientBucket> gradient_buckets(const model::ModelSpec& model, int seq,
                                             const GradientSyncRequest& request) {
  const std::vector<GradientTensor> tensors = backward_order(model, seq);
  double total_work = 0;
  for (const GradientTensor& t : tensors) total_work += t.work;
  const double per_param = request.bytes_per_gradient / std::max(1, request.tp);
  std::vector<GradientBucket> out;
  GradientBucket open;
  double done = 0;
  for (const GradientTensor& t : tensors) {
    done += t.work;
    if (!(t.params > 0)) continue;
    open.bytes += t.params * per_param;
    open.ready_share = total_work > 0 ? std::min(1.0, done / total_work) : 1.0;
    open.gradients.emplace_back(t.params * per_param, open.ready_share);
    // A bucket closes once it holds its cap (a tensor is never split: a large one fills a bucket alone).
    if (open.bytes >= (out.empty() ? request.first_bucket_bytes : request.bucket_bytes)) {
      out.push_back(open);
      open = {};
    }
  }
  if (open.bytes > 0) out.push_back(open);
  return out;
}

GradientSync plan_gradient_sync(const Profile& profile, const measure::Analysis& analysis,
                                const std::vector<GradientBucket>& buckets, const model::HardwareSpec& hw,
                                const GradientSyncRequest& request, std::string_view title) {
  GradientSync out;
  const auto& ranks = profile.ranks();
  out.added.resize(ranks.size());
  const model::GroupShape shape = model::group_shape(
      request.dp, std::max(1, request.tp) * std::max(1, request.cp), std::max(1, hw.gpus_per_node));
  const GroupLinks links = group_links(profile, analysis, hw, shape);
  const model::Efficiencies eff = model::defaults_for(hw);
  const double hbm_Bps = hw.hbm_tbps * 1e12 * eff.hbm;
  std::vector<TimeNs> all_reduce_ns, copy_ns;
  double bytes = 0, copy_seconds = 0;
  for (const GradientBucket& b : buckets) {
    const double s =
        model::hierarchical_time(model::Collective::kAllReduce, b.bytes, shape, links.intra, links.inter);
    all_reduce_ns.push_back(static_cast<TimeNs>(std::llround(s * 1e9)));
    const double copy = hbm_Bps > 0 ? 2 * b.bytes / hbm_Bps : 0;  // read and write each byte
    copy_ns.push_back(static_cast<TimeNs>(std::llround(copy * 1e9)));
    copy_seconds += copy * (request.gradient_as_bucket_view ? 1 : 2);
    out.bucket_seconds += s;
    bytes += b.bytes;
  }
  out.buckets = static_cast<int>(buckets.size());
  const StepPlan plan{buckets, all_reduce_ns, copy_ns, request, hbm_Bps};
  std::int64_t planned_steps = 0, steps_without = 0, accumulated = 0;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    std::vector<std::uint8_t> launched_in;
    for (const StepKernels& step : step_kernels(profile, analysis, ri, launched_in)) {
      if (step.backward.empty()) {
        ++steps_without;
        continue;
      }
      ++planned_steps;
      // With gradient accumulation DDP all-reduces after the last micro-batch's backward only (no_sync).
      accumulated += step.backward_passes.size() > 1;
      plan_step(ranks[ri], step.backward_passes.back(), launched_in, plan, out.added[ri]);
    }
  }
  if (planned_steps == 0)
    fail(
        "{}: --dp {}: no compute kernel was launched from a backward range (autograd's evaluate_function, "
        "*Backward*), so there are no gradients to all-reduce: the profile holds no training step with its "
        "CPU "
        "operators",
        title, request.dp);
  out.notes.push_back(fmt::format(
      "dp 1 -> {}: the gradients' all-reduces added as PyTorch DDP buckets them: {:.1f} MB per step ({} "
      "bytes "
      "per parameter{}) in {} buckets ({:.0f} MiB first, {:.0f} MiB after, in the order the backward pass "
      "produces them), each ready once the backward's kernels have run its share of their time (GEMM and "
      "attention work through its layer), all-reduced on a stream of its own, the backward's stream waiting "
      "for "
      "each at its end; {:.2f} ms of all-reduce per step over {} GPUs ({} per node): {}",
      request.dp, bytes / 1e6, request.bytes_per_gradient,
      request.tp > 1 ? fmt::format(", a 1/{} shard", request.tp) : std::string(), buckets.size(),
      request.first_bucket_bytes / (1 << 20), request.bucket_bytes / (1 << 20), out.bucket_seconds * 1e3,
      request.dp, shape.per_node, links.note));
  out.notes.push_back(
      fmt::format("each gradient scaled by 1/{} into its bucket{} on the backward's stream: {:.2f} ms per "
                  "step (each byte read "
                  "and written at {:.0f} % of {}'s {:.2f} TB/s)",
                  request.dp, request.gradient_as_bucket_view ? "" : " and copied back after its all-reduce",
                  copy_seconds * 1e3, eff.hbm * 100, hw.name, hw.hbm_tbps));
  out.notes.push_back(
      "compute running beside the added all-reduces keeps its measured speed: the SMs and memory bandwidth "
      "NCCL's kernels take from it are not charged");
  std::int64_t whole = 0;
  for (const measure::RankResult& rr : analysis.ranks) whole += rr.steps.empty();
  if (whole > 0)
    out.notes.push_back(fmt::format(
        "{} ranks have no steps: each one's whole profile is taken as one step, one set of buckets", whole));
  if (accumulated > 0)
    out.notes.push_back(fmt::format(
        "{} rank-steps ran several backward passes (gradient accumulation): the buckets follow the "
        "last one, as DDP "
        "under no_sync all-reduces after the last micro-batch only",
        accumulated));
  if (steps_without > 0)
    out.notes.push_back(fmt::format(
        "{} rank-steps launched no backward compute kernel: nothing added to them", steps_without));
  return out;
}

namespace {

// The tensors of a recorded "Input Dims" list ("[[4, 20, 1024, 1024], [], [1280]]"): each one's sizes.
std::vector<std::vector<std::int64_t>> tensors_of(std::string_view dims) {
  std::vector<std::vector<std::int64_t>> out;
  int depth = 0;
  std::int64_t value = 0;
  bool in_number = false;
  for (const char c : dims) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      in_number = true;
      continue;
    }
    if (in_number && depth == 2 && !out.empty()) out.back().push_back(value);
    in_number = false;
    value = 0;
    if (c == '[' && ++depth == 2) out.emplace_back();
    if (c == ']') --depth;
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::uint8_t>> tensor_sharded_kernels(const Profile& profile,
                                                              const measure::ProfileWork& work,
                                                              const model::ModelSpec& m, int tp) {
  const auto& ranks = profile.ranks();
  std::vector<std::vector<std::uint8_t>> out(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) out[r].assign(ranks[r].activities.size(), 0);
  tp = std::max(1, tp);
  const std::int64_t heads = m.heads / tp, kv_heads = m.kv_heads / tp;
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  std::set<std::int64_t> widths = {
      static_cast<std::int64_t>(m.ffn) / tp,
      static_cast<std::int64_t>(m.heads + 2 * kv) * m.head_size() / tp,  // fused query, key and value
      static_cast<std::int64_t>(m.vocab) / tp};
  // A width that equals the hidden size (an MLP of 4 × hidden over tp 4) cannot tell a sharded tensor from a
  // replicated one: left out.
  std::erase_if(widths, [&](std::int64_t w) { return w == m.hidden || w <= 1; });
  std::vector<std::int8_t> sharded_op(work.ops.size(), -1);  // -1: not worked out yet
  for (const measure::KernelShare& k : work.kernels) {
    if (k.rank_index >= out.size() || k.activity >= out[k.rank_index].size() || k.op >= work.ops.size())
      continue;
    std::int8_t& s = sharded_op[k.op];
    if (s < 0) {
      s = 0;
      for (const std::vector<std::int64_t>& t : tensors_of(work.ops[k.op].input_dims)) {
        if (t.size() == 4 && (t[1] == heads || t[1] == kv_heads) && t[1] > 1) s = 1;
        if (!t.empty() && t.back() > 1 && widths.count(t.back()) > 0) s = 1;
      }
    }
    out[k.rank_index][k.activity] = static_cast<std::uint8_t>(s);
  }
  return out;
}

TensorSyncPoints tensor_sync_points(const model::ModelSpec& m, int seq) {
  const model::ParameterCounts c = model::count_parameters(m);
  // Per layer: the attention block's work (its projections and the attention core), then the MLP's.
  std::vector<std::pair<double, double>> layers;
  for (int layer = 0; layer < m.layers; ++layer) {
    const bool moe = m.is_moe_layer(layer);
    layers.emplace_back(2.0 * c.attention_per_layer + model::attention_flops_per_token(m, seq),
                        2.0 * (moe ? c.expert_active_per_layer + c.shared_per_layer : c.dense_mlp_per_layer));
  }
  const double logits = model::logits_flops_per_token(m);
  double total = logits;
  for (const auto& [attention, mlp] : layers) total += attention + mlp;
  TensorSyncPoints out;
  if (!(total > 0)) return out;
  double done = 0;
  out.forward.push_back(0);  // the embedding's, before any GEMM work
  for (const auto& [attention, mlp] : layers) {
    out.forward.push_back((done += attention) / total);
    out.forward.push_back((done += mlp) / total);
  }
  done = logits;
  out.backward.push_back(done / total);  // the output layer's input gradient
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    out.backward.push_back((done += it->second) / total);
    out.backward.push_back((done += it->first) / total);
  }
  return out;
}

namespace {

// The all-reduces of one pass (KERNELS in start order) at SHARES of its time, each queued after its kernel.
void plan_pass(const Rank& r, const std::vector<std::uint32_t>& kernels, const std::vector<double>& shares,
               TimeNs ns, const TensorSyncRequest& request, const char* pass,
               std::vector<AddedActivity>& out) {
  if (kernels.empty()) return;
  TimeNs total = 0;
  const std::vector<TimeNs> done = time_done(r, kernels, total);
  std::uint32_t previous = kernels.front();
  for (std::size_t k = 0; k < shares.size(); ++k) {
    std::uint32_t after = kernel_at_share(kernels, done, total, shares[k]);
    if (r.activities[after].end_ns < r.activities[previous].end_ns) after = previous;
    previous = after;
    AddedActivity a;
    a.place = AddedActivity::Place::kAfterOnStream;
    a.after = after;
    a.before = next_on_stream(r, after);
    a.duration_ns = ns;
    a.bytes = request.message_bytes;
    a.group_size = request.tp;
    a.name = fmt::format("ncclDevKernel_AllReduce_Sum (added: tp {}, {} {} of {}, {:.2f} MB)", request.tp,
                         pass, k + 1, shares.size(), request.message_bytes / 1e6);
    out.push_back(std::move(a));
  }
}

}  // namespace

GradientSync plan_tensor_sync(const Profile& profile, const measure::Analysis& analysis,
                              const TensorSyncPoints& points, const model::HardwareSpec& hw,
                              const TensorSyncRequest& request, std::string_view title) {
  GradientSync out;
  const auto& ranks = profile.ranks();
  out.added.resize(ranks.size());
  const model::GroupShape shape = model::group_shape(request.tp, 1, std::max(1, hw.gpus_per_node));
  const GroupLinks links = group_links(profile, analysis, hw, shape);
  const double seconds = model::hierarchical_time(model::Collective::kAllReduce, request.message_bytes, shape,
                                                  links.intra, links.inter);
  const auto ns = static_cast<TimeNs>(std::llround(seconds * 1e9));
  std::int64_t steps = 0;
  std::size_t passes = 0, most = 0;  // the most passes of a step, the most all-reduces of one
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    std::vector<std::uint8_t> launched_in;
    for (const StepKernels& step : step_kernels(profile, analysis, ri, launched_in)) {
      if (step.forward_passes.empty() && step.backward_passes.empty()) continue;
      ++steps;
      for (const auto& pass : step.forward_passes)
        plan_pass(ranks[ri], pass, points.forward, ns, request, "forward", out.added[ri]);
      for (const auto& pass : step.backward_passes)
        plan_pass(ranks[ri], pass, points.backward, ns, request, "backward", out.added[ri]);
      passes = std::max({passes, step.forward_passes.size(), step.backward_passes.size()});
      most = std::max(most, step.forward_passes.size() * points.forward.size() +
                                step.backward_passes.size() * points.backward.size());
    }
  }
  if (steps == 0)
    fail(
        "{}: --tp {}: no GEMM or attention kernel was launched in a step, so there is no pass to split: the "
        "profile holds no step with its CPU operators",
        title, request.tp);
  out.buckets = static_cast<int>(most);
  out.bucket_seconds = seconds * static_cast<double>(most);
  out.notes.push_back(fmt::format(
      "tp 1 -> {}: Megatron-LM's tensor-parallel all-reduces added, each of {:.2f} MB (a micro-batch's "
      "activations): {} per forward pass (the embedding's, then after each layer's attention and MLP) and {} "
      "per "
      "backward pass (the output layer's input gradient, then each layer's MLP and attention), each queued "
      "on "
      "the compute stream after the kernel by which the pass has run its share of the GEMM and attention "
      "work, "
      "the work behind it waiting; {:.1f} µs each over {} GPUs ({} per node): {}",
      request.tp, request.message_bytes / 1e6, points.forward.size(), points.backward.size(), seconds * 1e6,
      request.tp, shape.per_node, links.note));
  out.notes.push_back(
      fmt::format("the passes of each step read from its kernels (a run of forward kernels, a run of "
                  "backward ones: up to {} "
                  "of each per step), each with its all-reduces; the vocabulary-parallel cross-entropy's "
                  "small all-reduces "
                  "are left out",
                  passes));
  return out;
}

}  // namespace meshscope::compare
