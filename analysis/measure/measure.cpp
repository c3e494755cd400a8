#include "analysis/measure/measure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/measure/correlation.hpp"
#include "profiler/parallel.hpp"
#include "profiler/text_format.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

constexpr TimeNs kMaxTime = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kMinTime = std::numeric_limits<TimeNs>::min();

TimeNs floor_div(TimeNs a, TimeNs b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// The collective operation of the CPU call that launched a kernel: PyTorch records ProcessGroupNCCL's calls
// as CPU ops ("nccl:all_to_all" inside "c10d::alltoall_base_") around the launch API call, on the same
// thread.
class LaunchOps {
 public:
  void build(const Profile& profile, const Rank& r) {
    tracks_.clear();
    for (std::size_t t = 0; t < r.tracks.size(); ++t) {
      const CpuTrack& track = r.tracks[t];
      if (track.gpu) continue;
      std::vector<OpRange> list;
      for (const CpuRange& c : r.track_ranges(t)) {
        // Nsight Systems shows PyTorch's calls as NVTX ranges with their op id ("nccl:all_to_all, op_id =
        // 7").
        const std::string_view name = vocabulary::operator_name(profile.str(c.name));
        if (!vocabulary::names_process_group_call(name)) continue;
        std::string op = vocabulary::normalise_collective_op(name);
        if (vocabulary::is_collective_op(op)) list.push_back({c.start_ns, c.end_ns, std::move(op)});
      }
      if (!list.empty()) tracks_.emplace(std::make_pair(track.pid, track.tid), std::move(list));
    }
  }

  // The op of the innermost such range on thread (PID, TID) that contains T; "" when none does.
  const std::string& find(std::int64_t pid, std::int64_t tid, TimeNs t) const {
    static const std::string kNone;
    const auto it = tracks_.find({pid, tid});
    if (it == tracks_.end()) return kNone;
    const auto& list = it->second;  // by start (ranges are sorted by start within a track)
    auto at =
        std::upper_bound(list.begin(), list.end(), t, [](TimeNs v, const OpRange& r) { return v < r.start; });
    // The latest-starting range that still contains T is the innermost; a few steps back suffice.
    for (int steps = 0; at != list.begin() && steps < 16; ++steps) {
      --at;
      if (at->end > t) return at->op;
    }
    return kNone;
  }

 private:
  struct OpRange {
    TimeNs start, end;
    std::string op;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<OpRange>> tracks_;
};

struct StepRange {
  std::int64_t number;
  TimeNs start_ns, end_ns;
};

struct NameAcc {
  std::int64_t count = 0;
  TimeNs total = 0, min = 0, max = 0;
  ActivityClass cls = ActivityClass::kCompute;
  Evidence evidence = Evidence::kDefault;
  std::int32_t rule = -1;
};

// Everything one worker reuses from rank to rank.
struct Workspace {
  std::vector<std::int32_t> name_cache;
  std::vector<Verdict> verdicts;  // per activity
  std::array<std::vector<Interval>, kClassCount> runs;
  std::array<std::vector<std::size_t>, kClassCount> bounds;
  std::vector<Interval> scratch, work, busy;
  std::vector<Interval> intervals;  // per activity, after HTA rounding when asked
  std::vector<std::uint8_t>
      effective;  // class used for the figures (sync -> compute in HTA mode), 255 = dropped
  std::vector<std::uint32_t> order, all;
  std::vector<std::int32_t> step_of, api_step;
  std::vector<std::uint32_t> step_first;
  std::vector<NameAcc> names;
  std::vector<StringId> touched;
  CorrelationMap correlation;
  LaunchOps launch_ops;
};

constexpr std::uint8_t kDropped = 255;

// Step ranges from NVTX or user annotations named like steps, for ranks without ProfilerStep.
std::optional<std::int64_t> step_number(std::string_view name, bool& named) {
  const std::string lower = vocabulary::lower(name);
  static const std::string_view prefixes[] = {"profilerstep#", "training_step", "train_step", "train step",
                                              "iteration",     "step",          "iter"};
  for (std::string_view prefix : prefixes) {
    if (!std::string_view(lower).starts_with(prefix)) continue;
    std::string_view rest = std::string_view(lower).substr(prefix.size());
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '_' || rest.front() == '#' ||
                             rest.front() == ':' || rest.front() == '=' || rest.front() == '-')) {
      rest.remove_prefix(1);
    }
    if (rest.empty()) {
      named = false;
      return 0;
    }
    std::int64_t value = 0;
    for (char c : rest) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    named = true;
    return value;
  }
  return std::nullopt;
}

std::vector<StepRange> find_steps(const Profile& profile, const Rank& r, std::string& source) {
  std::vector<StepRange> steps;
  if (!r.steps.empty()) {
    for (const Step& s : r.steps) steps.push_back({s.number, s.start_ns, s.end_ns});
    source = r.steps.front().source.empty() ? "ProfilerStep" : r.steps.front().source;
    return steps;
  }
  struct Candidate {
    TimeNs start, end;
    std::int32_t depth;
    std::int64_t number;
    bool numbered;
    RangeKind kind;
    StringId name;
  };
  std::vector<Candidate> found;
  for (std::size_t t = 0; t < r.tracks.size(); ++t) {
    if (r.tracks[t].gpu) continue;
    for (const CpuRange& c : r.track_ranges(t)) {
      if (c.kind != RangeKind::kNvtx && c.kind != RangeKind::kAnnotation) continue;
      bool numbered = false;
      auto number = step_number(profile.str(c.name), numbered);
      if (number) found.push_back({c.start_ns, c.end_ns, c.depth, *number, numbered, c.kind, c.name});
    }
  }
  if (found.empty()) return steps;
  std::int32_t min_depth = std::numeric_limits<std::int32_t>::max();
  for (const auto& c : found) min_depth = std::min(min_depth, c.depth);
  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate& a, const Candidate& b) { return a.start < b.start; });
  TimeNs last_end = kMinTime;
  std::int64_t ordinal = 0;
  for (const auto& c : found) {
    if (c.depth != min_depth || c.start < last_end) continue;
    steps.push_back({c.numbered ? c.number : ordinal, c.start, c.end});
    ++ordinal;
    last_end = c.end;
  }
  source = fmt::format("{}: {}", to_string(found.front().kind), profile.str(found.front().name));
  return steps;
}

// Per-class unions (and the rest of a Breakdown) over the activities in IDX, which ascend (stream-major,
// time-sorted within a stream, as Rank::activities is). EXPOSED, when given, receives comm − compute.
Breakdown breakdown(const Rank& r, std::span<const std::uint32_t> idx, Workspace& ws,
                    std::vector<Interval>* exposed) {
  Breakdown b;
  for (int c = 0; c < kClassCount; ++c) {
    ws.runs[c].clear();
    ws.bounds[c].assign({0});
  }
  std::size_t stream = 0;
  std::uint32_t stream_end = 0;
  bool first = true;
  TimeNs lo = kMaxTime, hi = kMinTime;
  for (const std::uint32_t i : idx) {
    const std::uint8_t cls = ws.effective[i];
    if (cls == kDropped) continue;
    if (first || i >= stream_end) {
      while (stream < r.streams.size() && r.streams[stream].first + r.streams[stream].count <= i) ++stream;
      stream_end = r.streams[stream].first + r.streams[stream].count;
      for (int c = 0; c < kClassCount; ++c) {
        if (ws.bounds[c].back() != ws.runs[c].size()) ws.bounds[c].push_back(ws.runs[c].size());
      }
      first = false;
    }
    const Interval iv = ws.intervals[i];
    ++b.activities;
    if (cls != static_cast<std::uint8_t>(ActivityClass::kSync)) {
      lo = std::min(lo, iv.start);
      hi = std::max(hi, iv.end);
    }
    if (iv.end <= iv.start) continue;
    auto& run = ws.runs[cls];
    if (run.size() > ws.bounds[cls].back() && iv.start <= run.back().end) {
      if (iv.end > run.back().end) run.back().end = iv.end;
    } else {
      run.push_back(iv);
    }
  }
  for (int c = 0; c < kClassCount; ++c) {
    if (ws.bounds[c].back() != ws.runs[c].size()) ws.bounds[c].push_back(ws.runs[c].size());
    merge_disjoint_runs(ws.runs[c], ws.bounds[c], ws.scratch);
  }
  const auto& compute = ws.runs[static_cast<int>(ActivityClass::kCompute)];
  const auto& comm = ws.runs[static_cast<int>(ActivityClass::kComm)];
  const auto& memory = ws.runs[static_cast<int>(ActivityClass::kMemory)];
  const auto& sync = ws.runs[static_cast<int>(ActivityClass::kSync)];
  b.compute_ns = total_length(compute);
  b.comm_ns = total_length(comm);
  b.memory_ns = total_length(memory);
  b.sync_ns = total_length(sync);
  union_of(compute, comm, ws.work);
  union_of(ws.work, memory, ws.busy);
  b.busy_ns = total_length(ws.busy);
  b.memory_only_ns = b.busy_ns - total_length(ws.work);
  b.overlap_ns = intersection_length(comm, compute);
  b.exposed_comm_ns = b.comm_ns - b.overlap_ns;
  if (exposed) subtract(comm, compute, *exposed);
  if (lo <= hi) {
    b.start_ns = lo;
    b.end_ns = hi;
    b.span_ns = hi - lo;
    b.idle_ns = std::max<TimeNs>(b.span_ns - b.busy_ns, 0);
  }
  return b;
}

// The activities' breakdown per step (STEPS, in order) and outside every step, into OUT: a stable counting
// sort of the activities by step keeps each bucket ascending.
void step_breakdowns(const Rank& r, const std::vector<StepRange>& steps, Workspace& ws, RankResult& out) {
  const std::size_t n = r.activities.size();
  const std::size_t buckets = steps.size() + 1;  // bucket 0 = outside every step
  ws.step_first.assign(buckets + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) ++ws.step_first[static_cast<std::size_t>(ws.step_of[i] + 1) + 1];
  for (std::size_t b = 1; b <= buckets; ++b) ws.step_first[b] += ws.step_first[b - 1];
  ws.order.resize(n);
  {
    std::vector<std::uint32_t> next(ws.step_first.begin(), ws.step_first.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) ws.order[next[static_cast<std::size_t>(ws.step_of[i] + 1)]++] = i;
  }
  auto bucket = [&](std::size_t b) {
    return std::span<const std::uint32_t>(ws.order.data() + ws.step_first[b],
                                          ws.step_first[b + 1] - ws.step_first[b]);
  };
  out.outside_steps = breakdown(r, bucket(0), ws, nullptr);
  out.steps.resize(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    StepResult& step = out.steps[s];
    step.number = steps[s].number;
    step.cpu_start_ns = steps[s].start_ns;
    step.cpu_end_ns = steps[s].end_ns;
    step.gpu = breakdown(r, bucket(s + 1), ws, nullptr);
  }
}

// The idle time of stream S between its stretches of work, and the class it spends most time on.
StreamIdle stream_idle(const Rank& r, std::size_t s, const Workspace& ws, const RankResult& out,
                       const Options& options) {
  StreamIdle idle;
  idle.stream_index = static_cast<std::uint32_t>(s);
  const GpuStream& st = r.streams[s];
  TimeNs first_start = kMaxTime, cursor = kMinTime;
  std::array<TimeNs, kClassCount> by_class{};
  bool syncs = false;
  for (std::uint32_t i = st.first; i < st.first + st.count; ++i) {
    const std::uint8_t cls = ws.effective[i];
    syncs |= out.classes[i] == ActivityClass::kSync;
    if (cls == kDropped || cls == static_cast<std::uint8_t>(ActivityClass::kSync)) continue;
    const Interval iv = ws.intervals[i];
    by_class[cls] += std::max<TimeNs>(iv.end - iv.start, 0);
    if (cursor == kMinTime) {
      first_start = iv.start;
      cursor = iv.end;
      idle.busy_ns += std::max<TimeNs>(iv.end - iv.start, 0);
      continue;
    }
    if (iv.start > cursor) {
      const TimeNs gap = iv.start - cursor;
      const std::int32_t api = ws.correlation.find(r.activities[i].correlation);
      ++idle.gaps;
      if (api >= 0 && r.api_calls[static_cast<std::size_t>(api)].start_ns > cursor) {
        idle.host_bound_ns += gap;
      } else if (gap < options.kernel_gap_threshold_ns) {
        idle.kernel_gap_ns += gap;
      } else {
        idle.other_ns += gap;
      }
      idle.busy_ns += std::max<TimeNs>(iv.end - iv.start, 0);
      cursor = iv.end;
    } else if (iv.end > cursor) {
      idle.busy_ns += iv.end - cursor;
      cursor = iv.end;
    }
  }
  if (cursor != kMinTime) {
    idle.span_ns = cursor - first_start;
    idle.idle_ns = idle.host_bound_ns + idle.kernel_gap_ns + idle.other_ns;
  }
  for (int c = 0; c < kClassCount; ++c) {
    if (by_class[c] > by_class[static_cast<int>(idle.work)]) idle.work = static_cast<ActivityClass>(c);
  }
  if (syncs && by_class[static_cast<int>(idle.work)] == 0) idle.work = ActivityClass::kSync;
  idle.compute_ns = by_class[static_cast<int>(ActivityClass::kCompute)];
  return idle;
}

// The activity names' statistics (count, total, min, max, class and its evidence), longest total first.
void kernel_stats(const Rank& r, Workspace& ws, RankResult& out) {
  const std::size_t n = r.activities.size();
  ws.touched.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (ws.effective[i] == kDropped) continue;
    const Activity& a = r.activities[i];
    if (a.name >= ws.names.size()) ws.names.resize(std::max<std::size_t>(a.name + 1, ws.names.size() * 2));
    NameAcc& acc = ws.names[a.name];
    const TimeNs d = std::max<TimeNs>(ws.intervals[i].end - ws.intervals[i].start, 0);
    if (acc.count == 0) {
      ws.touched.push_back(a.name);
      acc.cls = out.classes[i];
      acc.evidence = ws.verdicts[i].evidence;
      acc.rule = ws.verdicts[i].rule;
      acc.min = acc.max = d;
    } else if (ws.verdicts[i].evidence == Evidence::kMetadata && acc.evidence != Evidence::kMetadata) {
      acc.evidence = Evidence::kMetadata;
      acc.rule = -1;
    }
    ++acc.count;
    acc.total += d;
    acc.min = std::min(acc.min, d);
    acc.max = std::max(acc.max, d);
  }
  out.kernels.clear();
  out.kernels.reserve(ws.touched.size());
  for (StringId name : ws.touched) {
    NameAcc& acc = ws.names[name];
    out.kernels.push_back({name, acc.cls, acc.evidence, acc.rule, acc.count, acc.total, acc.min, acc.max});
    acc = NameAcc{};
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
}

void analyze_rank(const Profile& profile, const Rank& r, const Classifier& classifier, const Options& options,
                  Workspace& ws, RankResult& out, std::vector<NameOnlyComm>& name_only,
                  std::vector<std::string>& cpu_ops) {
  const std::size_t n = r.activities.size();
  ws.correlation.build(r.api_calls);
  ws.launch_ops.build(profile, r);
  // The CPU call behind a kernel: its launch (by correlation id), then the collective op around the launch.
  auto launched_by = [&](const Activity& a) -> const std::string& {
    static const std::string kNone;
    const std::int32_t api = ws.correlation.find(a.correlation);
    if (api < 0) return kNone;
    const ApiCall& call = r.api_calls[static_cast<std::size_t>(api)];
    const CallThread& thread = r.thread_of(call);
    const std::string& op = ws.launch_ops.find(thread.pid, thread.tid, call.start_ns);
    if (op.empty()) ++out.launches_without_op;
    return op;
  };
  cpu_ops.assign(r.collectives.size(), std::string());
  for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
    const Collective& c = r.collectives[ci];
    if (has_metadata(c) || c.stream_index < 0) continue;
    cpu_ops[ci] = launched_by(r.activities[c.activity]);
  }

  // Steps and the launch -> step map (API calls are sorted by start).
  const std::vector<StepRange> steps = find_steps(profile, r, out.step_source);
  ws.api_step.assign(r.api_calls.size(), -1);
  {
    std::size_t s = 0;
    for (std::size_t a = 0; a < r.api_calls.size() && !steps.empty(); ++a) {
      const TimeNs t = r.api_calls[a].start_ns;
      while (s + 1 < steps.size() && steps[s + 1].start_ns <= t) ++s;
      if (steps[s].start_ns <= t && t < steps[s].end_ns) ws.api_step[a] = static_cast<std::int32_t>(s);
    }
  }

  // HTA keeps GPU work only when its launch is in the trace at or before the end of the last ProfilerStep.
  TimeNs hta_last_step_end = kMaxTime;
  const bool hta_filter = options.hta_compatible && r.steps.size() >= 2;
  if (hta_filter) {
    hta_last_step_end = kMinTime;
    for (const Step& s : r.steps) hta_last_step_end = std::max(hta_last_step_end, s.end_ns);
  }
  const TimeNs origin = r.clock_base_ns + r.clock_offset_ns;

  // Classes, effective classes, intervals, steps of every activity.
  out.classes.resize(n);
  ws.verdicts.resize(n);
  ws.effective.resize(n);
  ws.intervals.resize(n);
  ws.step_of.assign(n, -1);
  ws.all.clear();
  ws.all.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Activity& a = r.activities[i];
    const Verdict verdict = classifier.classify(profile, r, a, ws.name_cache);
    const ActivityClass cls = verdict.cls;
    ws.verdicts[i] = verdict;
    out.classes[i] = cls;
    if (cls == ActivityClass::kComm && a.collective < 0 && a.kind == ActivityKind::kKernel) {
      name_only.push_back({a.name, a.end_ns - a.start_ns, launched_by(a)});
    }
    const std::int32_t api = ws.correlation.find(a.correlation);
    if (api < 0) {
      ++out.unlinked_activities;
    } else {
      ws.step_of[i] = ws.api_step[static_cast<std::size_t>(api)];
    }
    std::uint8_t effective = static_cast<std::uint8_t>(cls);
    Interval iv{a.start_ns, a.end_ns};
    if (options.hta_compatible) {
      if (cls == ActivityClass::kSync) effective = static_cast<std::uint8_t>(ActivityClass::kCompute);
      if (hta_filter &&
          (api < 0 || r.api_calls[static_cast<std::size_t>(api)].start_ns > hta_last_step_end)) {
        effective = kDropped;
        ++out.hta_dropped;
      }
      // HTA holds Kineto's µs timestamps as float64 (a 0.25 µs grid at epoch scale), computes end = ts + dur
      // in float64, then rounds ts up and end down to whole µs.
      const TimeNs local = iv.start - origin;
      const TimeNs whole_us = floor_div(local, 1000);
      const double ts = static_cast<double>(whole_us) + static_cast<double>(local - whole_us * 1000) * 1e-3;
      const double end = ts + static_cast<double>(iv.end - iv.start) * 1e-3;
      iv.start = static_cast<TimeNs>(std::ceil(ts)) * 1000 + origin;
      iv.end = static_cast<TimeNs>(std::floor(end)) * 1000 + origin;
      if (iv.end < iv.start) effective = kDropped;
    }
    ws.effective[i] = effective;
    ws.intervals[i] = iv;
    ws.all.push_back(i);
  }
  out.hta_filtered = hta_filter;

  out.total = breakdown(r, ws.all, ws, &out.exposed_comm);

  step_breakdowns(r, steps, ws, out);

  out.streams.resize(r.streams.size());
  for (std::size_t s = 0; s < r.streams.size(); ++s) out.streams[s] = stream_idle(r, s, ws, out, options);

  kernel_stats(r, ws, out);
}

using RankScratch = Workspace;

}  // namespace

struct RankAnalyzer::Workspace {
  RankScratch scratch;
  // The strings scratch.name_cache was filled from: the cache holds rule results per string id, which name
  // other texts in another profile (the import summarises each file's rank with the file's own ids).
  std::shared_ptr<const std::vector<std::string>> cached_strings;
};

RankAnalyzer::RankAnalyzer(const Options& options)
    : options_(options), classifier_(options.user_rules), ws_(std::make_unique<Workspace>()) {}
RankAnalyzer::~RankAnalyzer() = default;

RankPart RankAnalyzer::analyze(const Profile& profile, std::size_t rank_index) {
  RankPart part;
  const Rank& rank = profile.ranks()[rank_index];
  part.result.rank = rank.rank;
  part.result.rank_index = rank_index;
  if (ws_->cached_strings != profile.strings()) {
    ws_->scratch.name_cache.clear();
    ws_->cached_strings = profile.strings();
  }
  analyze_rank(profile, rank, classifier_, options_, ws_->scratch, part.result, part.name_only, part.cpu_ops);
  return part;
}

Analysis analyze(const Profile& profile, const Options& options) {
  const auto& ranks = profile.ranks();
  std::vector<RankPart> parts(ranks.size());
  const Classifier classifier(options.user_rules);
  parallel_for_with(
      ranks.size(), options.threads, [] { return Workspace{}; },
      [&](Workspace& ws, std::size_t ri) {
        RankPart& part = parts[ri];
        part.result.rank = ranks[ri].rank;
        part.result.rank_index = ri;
        analyze_rank(profile, ranks[ri], classifier, options, ws, part.result, part.name_only, part.cpu_ops);
      });
  return combine(profile, std::move(parts), {}, options);
}

// The longest activity names of each class over the whole profile (OPTIONS.top_kernels each), and per class
// what classified its time (evidence and rule: the time, the names, the largest).
void top_kernels(Analysis& result, const Options& options) {
  std::vector<NameAcc> names;
  std::vector<StringId> touched;
  for (const RankResult& rr : result.ranks) {
    for (const KernelStat& k : rr.kernels) {
      if (k.name >= names.size()) names.resize(std::max<std::size_t>(k.name + 1, names.size() * 2));
      NameAcc& acc = names[k.name];
      if (acc.count == 0) {
        touched.push_back(k.name);
        acc.cls = k.cls;
        acc.evidence = k.evidence;
        acc.rule = k.rule;
        acc.min = k.min_ns;
        acc.max = k.max_ns;
      } else if (k.evidence == Evidence::kMetadata && acc.evidence != Evidence::kMetadata) {
        acc.evidence = Evidence::kMetadata;
        acc.rule = -1;
      }
      acc.count += k.count;
      acc.total += k.total_ns;
      acc.min = std::min(acc.min, k.min_ns);
      acc.max = std::max(acc.max, k.max_ns);
    }
  }
  for (StringId name : touched) {
    const NameAcc& acc = names[name];
    result.top_kernels[static_cast<int>(acc.cls)].push_back(
        {name, acc.cls, acc.evidence, acc.rule, acc.count, acc.total, acc.min, acc.max});
    // Why: per class, per piece of evidence, the time and the largest kernel.
    auto& reasons = result.reasons[static_cast<int>(acc.cls)];
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const ClassReason& r) {
      return r.evidence == acc.evidence && r.rule == acc.rule;
    });
    if (it == reasons.end()) {
      reasons.push_back({acc.evidence, acc.rule});
      it = reasons.end() - 1;
    }
    ++it->names;
    it->total_ns += acc.total;
    if (it->largest == kNoString || acc.total > it->largest_ns ||
        (acc.total == it->largest_ns && name < it->largest)) {
      it->largest = name;
      it->largest_ns = acc.total;
    }
  }
  for (auto& reasons : result.reasons) {
    std::sort(reasons.begin(), reasons.end(), [](const ClassReason& a, const ClassReason& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.largest < b.largest;
    });
  }
  for (auto& list : result.top_kernels) {
    std::sort(list.begin(), list.end(), [](const KernelStat& a, const KernelStat& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
    if (list.size() > options.top_kernels) list.resize(options.top_kernels);
  }
}

// What could not be measured, in plain words: ranks without GPU work or steps, work outside the steps,
// collectives whose peers are missing or unmatched.
std::vector<std::string> measurement_notes(const Profile& profile, const Analysis& result,
                                           const std::vector<std::uint8_t>& analysed) {
  const auto& ranks = profile.ranks();
  auto is_analysed = [&](std::size_t ri) { return analysed.empty() || analysed[ri] != 0; };
  std::vector<std::string> notes;
  if (ranks.empty()) notes.push_back("the profile holds no ranks: there is nothing to measure");
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    if (!is_analysed(ri)) continue;
    const Rank& r = ranks[ri];
    const RankResult& rr = result.ranks[ri];
    // Its classes, one per activity, tell (the rank may have given its events back since: report's streamed
    // ranks).
    if (rr.classes.empty()) {
      notes.push_back(
          fmt::format("rank {} has no GPU activity (CPU-only, or its GPU events were not recorded); "
                      "its GPU figures are zero",
                      r.rank));
      continue;
    }
    if (rr.steps.empty()) {
      notes.push_back(
          fmt::format("rank {} has no ProfilerStep or NVTX step ranges: no per-step breakdown", r.rank));
    } else {
      std::string empty;
      std::size_t count = 0;
      for (const StepResult& s : rr.steps) {
        if (s.gpu.activities > 0) continue;
        if (count < 8) empty += fmt::format("{}{}", count ? ", " : "", s.number);
        ++count;
      }
      if (count > 0) {
        notes.push_back(fmt::format("rank {}: {} step(s) launched no GPU work (step {}{})", r.rank, count,
                                    empty, count > 8 ? ", ..." : ""));
      }
      if (rr.outside_steps.activities > 0) {
        notes.push_back(
            fmt::format("rank {}: {} GPU activities ({} busy) were not launched from inside a step{}", r.rank,
                        rr.outside_steps.activities, ms_text(rr.outside_steps.busy_ns),
                        rr.unlinked_activities > 0
                            ? fmt::format(" ({} have no launch in the profile)", rr.unlinked_activities)
                            : std::string()));
      }
    }
    if (rr.hta_dropped > 0) {
      notes.push_back(
          fmt::format("rank {}: HTA-compatible mode left out {} GPU activities launched outside the "
                      "traced steps",
                      r.rank, rr.hta_dropped));
    }
  }
  const CollectiveReport& cr = result.collectives;
  if (cr.incomplete > 0) {
    std::int64_t known = 0, unknown = 0, expected = 0;
    std::uint32_t found = 0, found_unknown = 0;
    for (const CollectiveInstance& inst : cr.instances) {
      if (inst.complete) continue;
      if (inst.expected > 0) {
        ++known;
        expected = std::max(expected, inst.expected);
        found = std::max(found, inst.member_count);
      } else {
        ++unknown;
        found_unknown = std::max(found_unknown, inst.member_count);
      }
    }
    if (known > 0) {
      notes.push_back(fmt::format(
          "{} collective instance(s) have peers missing from the profile (groups of up to {} ranks, at most "
          "{} present): their wait/transfer split and stragglers are not measured",
          known, expected, found));
    }
    if (unknown > 0 && static_cast<std::int64_t>(ranks.size()) < profile.world_size()) {
      notes.push_back(
          fmt::format("{} collective instance(s) may have peers outside the profile: the trace states no "
                      "group size and the profile holds {} of the job's {} ranks (at most {} member(s) "
                      "found); their wait/transfer split and stragglers are not measured",
                      unknown, ranks.size(), profile.world_size(), found_unknown));
    } else if (unknown > 0) {
      notes.push_back(
          fmt::format("{} collective instance(s) lack a member on some rank that runs such operations (at "
                      "most {} member(s) found): their wait/transfer split and stragglers are not measured",
                      unknown, found_unknown));
    }
  }
  if (cr.unmatched_ops > 0) {
    notes.push_back(fmt::format(
        "{} communication operation(s) were not matched across ranks: point-to-point (nothing names the "
        "peer), or no GPU kernel to order them by",
        cr.unmatched_ops));
  }
  if (cr.unpaired_ops > 0) {
    notes.push_back(
        fmt::format("{} operation(s) matched by order on their stream found no peer whose end time agreed "
                    "(within 50 µs or a tenth of the duration): sampled or cut traces lose operations, and "
                    "the clocks of different hosts may differ",
                    cr.unpaired_ops));
  }
  return notes;
}

Analysis combine(const Profile& profile, std::vector<RankPart> parts,
                 const std::vector<std::uint8_t>& analysed, const Options& options) {
  Analysis result;
  const auto& ranks = profile.ranks();
  if (parts.size() != ranks.size()) throw std::invalid_argument("measure::combine: one part per rank");
  auto is_analysed = [&](std::size_t ri) { return analysed.empty() || analysed[ri] != 0; };
  result.rules = Classifier(options.user_rules).rules();
  result.ranks.resize(ranks.size());
  std::vector<std::vector<NameOnlyComm>> name_only(ranks.size());
  std::vector<std::vector<std::string>> cpu_ops(ranks.size());
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    if (!is_analysed(ri)) {
      // A rank left out must hold no events: its collectives would be matched without their launch ops.
      if (!ranks[ri].collectives.empty() || !ranks[ri].activities.empty())
        throw std::invalid_argument("measure::combine: a rank left out holds events");
      result.ranks[ri].rank = ranks[ri].rank;
      result.ranks[ri].rank_index = ri;
      continue;
    }
    result.ranks[ri] = std::move(parts[ri].result);
    name_only[ri] = std::move(parts[ri].name_only);
    cpu_ops[ri] = std::move(parts[ri].cpu_ops);
  }

  result.collectives = analyze_collectives(profile, cpu_ops, name_only);
  for (const RankResult& rr : result.ranks) result.collectives.launches_without_op += rr.launches_without_op;
  for (const CollectiveInstance& inst : result.collectives.instances) {
    if (!inst.complete) continue;
    for (std::uint32_t m = inst.first_member; m < inst.first_member + inst.member_count; ++m) {
      const InstanceMember& member = result.collectives.members[m];
      result.ranks[member.rank_index].collective_wait_ns += member.wait_ns;
      result.ranks[member.rank_index].collective_transfer_ns += member.transfer_ns;
    }
  }

  top_kernels(result, options);
  result.notes = measurement_notes(profile, result, analysed);
  return result;
}

void describe_device_use(const Rank& rank, DeviceUse& use) {
  use.info = nullptr;
  use.described_as = -1;
  for (const Device& d : rank.devices) {
    if (d.device == use.device) use.info = &d;
  }
  if (use.info) return;
  const Device* only = nullptr;
  for (const Device& d : rank.devices) {
    if (d.name.empty()) continue;
    if (only && only->name != d.name) return;  // two models: which one ran is not known
    if (!only) only = &d;
  }
  if (!only) return;
  use.info = only;
  use.described_as = only->device;
}

std::vector<DeviceUse> devices_used(const Rank& rank) {
  std::vector<DeviceUse> out;
  for (const GpuStream& s : rank.streams) {
    if (s.count == 0) continue;
    if (!out.empty() && out.back().device == s.device) continue;  // streams are sorted by (device, stream)
    DeviceUse use{s.device, nullptr};
    describe_device_use(rank, use);
    out.push_back(use);
  }
  return out;
}

}  // namespace meshscope::measure
