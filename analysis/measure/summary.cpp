#include "analysis/measure/summary.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/measure/classify.hpp"
#include "analysis/measure/correlation.hpp"
#include "profiler/error.hpp"
#include "profiler/parallel.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {

namespace {

// The rank's steps as sorted CPU windows: work counts "inside a step" when its launch (or start) falls in
// one.
struct StepFrame {
  std::vector<TimeNs> starts, ends;
  bool has_steps = false;
};

StepFrame frame_of(const RankResult& rr) {
  StepFrame f;
  for (const StepResult& s : rr.steps) {
    f.starts.push_back(s.cpu_start_ns);
    f.ends.push_back(s.cpu_end_ns);
  }
  f.has_steps = !rr.steps.empty();
  return f;
}

bool launched_in_step(const StepFrame& frame, const CorrelationMap& map, const Rank& r,
                      std::int64_t correlation) {
  if (!frame.has_steps) return true;
  const std::int32_t api = map.find(correlation);
  if (api < 0) return false;
  return step_at(frame.starts, frame.ends, r.api_calls[static_cast<std::size_t>(api)].start_ns) >= 0;
}

// Per (name, class) of the rank's activities, and the communication kernels without a collectives row under
// the operation their name spells.
void summarize_kernels(
    const Profile& p, const Rank& r, const RankResult& rr, const StepFrame& frame, const CorrelationMap& map,
    RankSummary& out,
    std::map<std::tuple<std::string, std::int64_t, std::int64_t>, CollectiveSummary>& collectives) {
  std::map<std::pair<StringId, ActivityClass>, KernelSummary> by_name;
  for (std::size_t i = 0; i < r.activities.size(); ++i) {
    const Activity& act = r.activities[i];
    const ActivityClass cls = rr.classes[i];
    KernelSummary& k = by_name[{act.name, cls}];
    const TimeNs d = act.duration();
    const bool in_step = launched_in_step(frame, map, r, act.correlation);
    k.min_ns = k.count == 0 ? d : std::min(k.min_ns, d);
    k.max_ns = k.count == 0 ? d : std::max(k.max_ns, d);
    ++k.count;
    k.total_ns += d;
    if (in_step) k.step_ns += d;
    out.kernel_ns += d;
    if (cls == ActivityClass::kComm && act.collective < 0 && act.kind == ActivityKind::kKernel) {
      std::string op = op_from_kernel_name(p.str(act.name));
      CollectiveSummary& c = collectives[{op.empty() ? std::string("unknown") : op, 0, 0}];
      ++c.count;
      c.total_ns += d;
      if (in_step) c.step_ns += d;
    }
  }
  out.kernels.reserve(by_name.size());
  for (auto& [key, k] : by_name) {
    k.name = p.str(key.first);
    k.cls = key.second;
    out.kernels.push_back(std::move(k));
  }
}

void summarize_collectives(
    const Rank& r, const std::vector<CollectiveIdentity>& identity, const StepFrame& frame,
    const CorrelationMap& map,
    std::map<std::tuple<std::string, std::int64_t, std::int64_t>, CollectiveSummary>& collectives) {
  for (std::size_t ci = 0; ci < r.collectives.size() && ci < identity.size(); ++ci) {
    const Collective& c = r.collectives[ci];
    const CollectiveIdentity& id = identity[ci];
    CollectiveSummary& acc = collectives[{id.op, id.group_size, id.bytes}];
    const bool kernel = c.stream_index >= 0;
    const TimeNs d = kernel ? r.activities[c.activity].duration() : c.end_ns - c.start_ns;
    ++acc.count;
    acc.total_ns += d;
    const bool in_step = kernel ? launched_in_step(frame, map, r, r.activities[c.activity].correlation)
                                : (!frame.has_steps || step_at(frame.starts, frame.ends, c.start_ns) >= 0);
    if (in_step) acc.step_ns += d;
  }
}

// The GPU time of the activities each thread launched, by the launching call's start: a prefix sum per
// thread, so that what a thread launched inside any interval is two binary searches.
class LaunchedGpuTime {
 public:
  struct Thread {
    std::vector<TimeNs> call_start;  // sorted
    std::vector<TimeNs> gpu_before;  // gpu_before[k]: Σ of the GPU time of the first k launches
  };

  LaunchedGpuTime(const Rank& r, const CorrelationMap& map) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<TimeNs, TimeNs>>> launches;
    for (const Activity& a : r.activities) {
      if (a.kind == ActivityKind::kSync) continue;
      const std::int32_t api = map.find(a.correlation);
      if (api < 0) continue;
      const ApiCall& call = r.api_calls[static_cast<std::size_t>(api)];
      const CallThread& t = r.thread_of(call);
      launches[{t.pid, t.tid}].emplace_back(call.start_ns, a.duration());
    }
    for (auto& [key, list] : launches) {
      std::sort(list.begin(), list.end());
      Thread& t = threads_[key];
      t.call_start.reserve(list.size());
      t.gpu_before.reserve(list.size() + 1);
      t.gpu_before.push_back(0);
      for (const auto& [start, gpu] : list) {
        t.call_start.push_back(start);
        t.gpu_before.push_back(t.gpu_before.back() + gpu);
      }
    }
  }

  const Thread* thread(std::int64_t pid, std::int64_t tid) const {
    const auto it = threads_.find({pid, tid});
    return it == threads_.end() ? nullptr : &it->second;
  }

  // What THREAD launched by calls starting in [START, END).
  static TimeNs within(const Thread* thread, TimeNs start, TimeNs end) {
    if (!thread || end <= start) return 0;
    const auto& s = thread->call_start;
    const auto a = std::lower_bound(s.begin(), s.end(), start) - s.begin();
    const auto b = std::lower_bound(s.begin(), s.end(), end) - s.begin();
    return thread->gpu_before[static_cast<std::size_t>(b)] - thread->gpu_before[static_cast<std::size_t>(a)];
  }

 private:
  std::map<std::pair<std::int64_t, std::int64_t>, Thread> threads_;
};

// CPU operators by name: inclusive time and self time (without the CPU ops nested in them), whole rank and
// inside steps; and whether any is a backward operator. Fed each thread's operators in load order (threads
// may take turns), from a loaded rank or streamed from the file (Profile::stream_operators), with memory
// for the operators open at once, not for the rank's: open operators of the same start, end and name (a
// trace of millions of identical nested operators) are one entry.
class OperatorTotals final : public OperatorSink {
 public:
  // GPU: the GPU time each thread launched (null: none counted).
  OperatorTotals(const StepFrame& frame, const LaunchedGpuTime* gpu) : frame_(frame), gpu_(gpu) {}

  void add(const OperatorRow& row) override {
    if (row.kind != RangeKind::kCpuOp) {
      if (row.kind == RangeKind::kPythonFunction) ++python_functions_;
      return;
    }
    ++cpu_ops_;
    if (!open_ || thread_ != std::make_pair(row.pid, row.tid)) {
      thread_ = {row.pid, row.tid};
      open_ = &threads_[thread_];
      launched_ = gpu_ ? gpu_->thread(row.pid, row.tid) : nullptr;
    }
    auto& open = *open_;
    while (!open.empty() && open.back().end <= row.start_ns) {
      close(open.back());
      open.pop_back();
    }
    const TimeNs d = row.end_ns - row.start_ns;
    const TimeNs gpu = LaunchedGpuTime::within(launched_, row.start_ns, row.end_ns);
    if (!open.empty()) {
      Open& parent = open.back();
      parent.self_innermost -= std::min(d, parent.end - row.start_ns);
      parent.gpu_self_innermost -=
          LaunchedGpuTime::within(launched_, row.start_ns, std::min(row.end_ns, parent.end));
      if (parent.start == row.start_ns && parent.end == row.end_ns && parent.name == row.name) {
        // Its child's twin: the innermost of the entry now, the one it was is done but for its closing.
        parent.self_others += parent.self_innermost;
        parent.self_innermost = d;
        parent.gpu_self_others += parent.gpu_self_innermost;
        parent.gpu_self_innermost = gpu;
        ++parent.count;
        return;
      }
    }
    const bool in_step = !frame_.has_steps || step_at(frame_.starts, frame_.ends, row.start_ns) >= 0;
    open.push_back({row.start_ns, row.end_ns, row.name, in_step, 1, d, 0, gpu, gpu, 0});
  }

  void restart() override {
    threads_.clear();
    open_ = nullptr;
    launched_ = nullptr;
    by_name_.clear();
    cpu_ops_ = python_functions_ = 0;
  }

  // The operator rows and the training flag of OUT from what was added.
  void finish(const Profile& p, RankSummary& out) {
    for (auto& [thread, open] : threads_) {
      for (const Open& o : open) close(o);
      open.clear();
    }
    bool backward = false;
    out.ops.reserve(by_name_.size());
    for (auto& [name, op] : by_name_) {
      op.name = p.str(name);
      backward = backward || vocabulary::lower(op.name).find("backward") != std::string::npos;
      out.ops.push_back(std::move(op));
    }
    if (!out.ops.empty()) out.training = backward;
  }

  std::int64_t cpu_ops() const { return cpu_ops_; }
  std::int64_t python_functions() const { return python_functions_; }

 private:
  // COUNT nested operators of one start, end and name: each of them but the innermost has
  // self_others between them, the innermost self_innermost.
  struct Open {
    TimeNs start, end;
    StringId name;
    bool in_step;
    std::int64_t count;
    TimeNs self_innermost, self_others;
    TimeNs gpu, gpu_self_innermost, gpu_self_others;  // GPU time launched inside one of them, and as self
  };
  void close(const Open& o) {
    OpSummary& op = by_name_[o.name];
    const TimeNs d = (o.end - o.start) * o.count, self = o.self_innermost + o.self_others;
    const TimeNs gpu = o.gpu * o.count, gpu_self = o.gpu_self_innermost + o.gpu_self_others;
    op.count += o.count;
    op.total_ns += d;
    op.self_ns += self;
    op.gpu_ns += gpu;
    op.gpu_self_ns += gpu_self;
    if (o.in_step) {
      op.step_ns += d;
      op.self_step_ns += self;
      op.gpu_step_ns += gpu;
      op.gpu_self_step_ns += gpu_self;
    }
  }

  const StepFrame& frame_;
  const LaunchedGpuTime* gpu_;
  const LaunchedGpuTime::Thread* launched_ = nullptr;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Open>> threads_;
  std::pair<std::int64_t, std::int64_t> thread_{0, 0};
  std::vector<Open>* open_ = nullptr;
  std::map<StringId, OpSummary> by_name_;
  std::int64_t cpu_ops_ = 0, python_functions_ = 0;
};

void summarize_ops(const Profile& p, const Rank& r, const StepFrame& frame, const LaunchedGpuTime& gpu,
                   RankSummary& out) {
  OperatorTotals totals(frame, &gpu);
  for (std::size_t t = 0; t < r.tracks.size(); ++t) {
    const CpuTrack& track = r.tracks[t];
    if (track.gpu) continue;
    for (const CpuRange& range : r.track_ranges(t))
      totals.add({track.pid, track.tid, range.start_ns, range.end_ns, range.name, range.kind});
  }
  totals.finish(p, out);
}

// Adds the disjoint intervals LIST to the buckets through MEMBER.
void bucketize(const std::vector<Interval>& list, Overview& ov, TimeNs OverviewBucket::*member) {
  const int k = ov.bucket_log2;
  for (const Interval& iv : list) {
    TimeNs t = iv.start;
    while (t < iv.end) {
      const std::int64_t b = t >> k;
      const TimeNs bucket_end = (b + 1) << k;
      const TimeNs piece_end = std::min(iv.end, bucket_end);
      const std::int64_t slot = b - ov.first_bucket;
      if (slot >= 0 && slot < static_cast<std::int64_t>(ov.buckets.size()))
        ov.buckets[static_cast<std::size_t>(slot)].*member += piece_end - t;
      t = piece_end;
    }
  }
}

Overview overview_of(const Rank& r, const RankResult& rr) {
  Overview ov;
  const TimeNs start = rr.total.start_ns, end = rr.total.end_ns;
  if (end <= start || r.activities.empty()) return ov;
  const TimeNs span = end - start;
  // The narrowest power-of-two width that covers the span in kOverviewBuckets buckets.
  const auto per_bucket = static_cast<std::uint64_t>((span + kOverviewBuckets - 1) / kOverviewBuckets);
  ov.bucket_log2 = static_cast<int>(std::bit_width(per_bucket > 1 ? per_bucket - 1 : 0));
  ov.first_bucket = start >> ov.bucket_log2;
  const std::int64_t last_bucket = (end - 1) >> ov.bucket_log2;
  ov.buckets.resize(static_cast<std::size_t>(last_bucket - ov.first_bucket + 1));

  std::vector<Interval> compute, comm, memory;
  for (std::size_t i = 0; i < r.activities.size(); ++i) {
    const Activity& a = r.activities[i];
    switch (rr.classes[i]) {
      case ActivityClass::kCompute:
        compute.push_back({a.start_ns, a.end_ns});
        break;
      case ActivityClass::kComm:
        comm.push_back({a.start_ns, a.end_ns});
        break;
      case ActivityClass::kMemory:
        memory.push_back({a.start_ns, a.end_ns});
        break;
      case ActivityClass::kSync:
        break;  // waits: idle, as in the breakdown
    }
  }
  std::vector<Interval> u_compute, u_comm, u_memory, compute_comm, busy, memory_only;
  for (auto [in, out] :
       {std::pair{&compute, &u_compute}, std::pair{&comm, &u_comm}, std::pair{&memory, &u_memory}}) {
    sort_by_start(*in);
    union_sorted(*in, *out);
  }
  union_of(u_compute, u_comm, compute_comm);
  union_of(compute_comm, u_memory, busy);
  subtract(u_memory, compute_comm, memory_only);
  bucketize(u_compute, ov, &OverviewBucket::compute_ns);
  bucketize(u_comm, ov, &OverviewBucket::comm_ns);
  bucketize(rr.exposed_comm, ov, &OverviewBucket::exposed_comm_ns);
  bucketize(memory_only, ov, &OverviewBucket::memory_only_ns);
  bucketize(busy, ov, &OverviewBucket::busy_ns);
  bucketize({{start, end}}, ov, &OverviewBucket::span_ns);
  return ov;
}

template <typename Row>
void by_time_descending(std::vector<Row>& rows) {
  // Ties go by name, whatever the ids of the names: the import summarises each rank with its file's own
  // string ids (ImportSummaries), the pass with the profile's.
  auto name = [](const Row& row) -> const std::string& {
    if constexpr (std::is_same_v<Row, CollectiveSummary>) {
      return row.op;
    } else {
      return row.name;
    }
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : name(a) < name(b);
  });
}

}  // namespace

RankSummary summarize_rank(const Profile& p, const RankResult& rr,
                           const std::vector<CollectiveIdentity>* identity,
                           const std::function<void(OperatorSink&)>& operators) {
  const Rank& r = p.ranks()[rr.rank_index];
  RankSummary out;
  out.rank = r.rank;
  out.total = rr.total;
  out.outside_steps = rr.outside_steps;
  out.step_source = rr.step_source;
  out.unlinked_activities = rr.unlinked_activities;
  out.collective_wait_ns = rr.collective_wait_ns;
  out.collective_transfer_ns = rr.collective_transfer_ns;
  out.counts = count_events(r);
  for (const StepResult& s : rr.steps) out.steps.push_back({s.number, s.cpu_start_ns, s.cpu_end_ns, s.gpu});
  for (std::size_t i = 0; i < r.streams.size() && i < rr.streams.size(); ++i)
    out.streams.push_back({r.streams[i].device, r.streams[i].stream, rr.streams[i]});

  const StepFrame frame = frame_of(rr);
  CorrelationMap map;
  map.build(r.api_calls);
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, CollectiveSummary> collectives;
  summarize_kernels(p, r, rr, frame, map, out, collectives);
  if (identity) summarize_collectives(r, *identity, frame, map, collectives);
  for (auto& [key, c] : collectives) {
    std::tie(c.op, c.group_size, c.bytes) = key;
    out.collectives.push_back(std::move(c));
  }
  const LaunchedGpuTime gpu(r, map);
  if (operators) {
    OperatorTotals totals(frame, &gpu);
    operators(totals);
    totals.finish(p, out);
    out.counts.cpu_op = totals.cpu_ops();
    out.counts.python_function = totals.python_functions();
  } else {
    summarize_ops(p, r, frame, gpu, out);
  }
  by_time_descending(out.kernels);
  by_time_descending(out.ops);
  by_time_descending(out.collectives);
  out.overview = overview_of(r, rr);
  return out;
}

ProfileSummary summarize(const Profile& profile, const Analysis& analysis) {
  ProfileSummary s;
  s.path = profile.path();
  s.world_size = profile.world_size();
  s.ranks.resize(analysis.ranks.size());
  // Ranks are independent: summarise them on all cores.
  parallel_for(analysis.ranks.size(), 0, [&](std::size_t i) {
    const RankResult& rr = analysis.ranks[i];
    const auto& identity = analysis.collectives.identity;
    s.ranks[i] =
        summarize_rank(profile, rr, rr.rank_index < identity.size() ? &identity[rr.rank_index] : nullptr);
  });
  std::sort(s.ranks.begin(), s.ranks.end(),
            [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// Summaries computed while importing

struct ImportSummaries::State {
  // What one file's rank gave: its summary (but for the collective waits), and what the matching of the
  // collectives across ranks reads of it, its string ids those of `strings` below.
  struct Summarised {
    RankSummary summary;
    Rank thin;  // streams, tracks, steps, collectives (without_event_lists)
    std::vector<NameOnlyComm> name_only;
    std::vector<std::string> cpu_ops;
    EventCounts counts;
  };
  std::mutex mutex;
  // A file read again (an import started over) replaces; one that could not be summarised is absent.
  std::map<std::string, Summarised> by_file;
  std::vector<std::string> strings{std::string()};
  std::unordered_map<std::string, StringId> string_ids;

  StringId intern(const std::string& text) {
    if (text.empty()) return kNoString;
    const auto [it, added] = string_ids.try_emplace(text, static_cast<StringId>(strings.size()));
    if (added) strings.push_back(text);
    return it->second;
  }
};

ImportSummaries::ImportSummaries() : state_(std::make_unique<State>()) {}
ImportSummaries::~ImportSummaries() = default;

void ImportSummaries::add(const std::filesystem::path& file, const RankRecords& rows) noexcept {
  const std::string key = file.string();
  try {
    const Profile p = Profile::of_records(file, rows, kSummaryLoad);
    // One analyzer per reading thread (its classifier's rules are built once).
    thread_local RankAnalyzer analyzer;
    RankPart part = analyzer.analyze(p, 0);
    const Rank& rank = p.ranks()[0];
    const std::vector<CollectiveIdentity> identity = identify_collectives(p, rank, part.cpu_ops);
    State::Summarised s;
    s.summary = summarize_rank(p, part.result, &identity);
    s.thin = without_event_lists(rank);
    s.name_only = std::move(part.name_only);
    s.cpu_ops = std::move(part.cpu_ops);
    s.counts = p.counts();
    std::lock_guard lock(state_->mutex);
    auto id = [&](StringId local) { return state_->intern(p.str(local)); };
    for (Collective& c : s.thin.collectives) {
      for (StringId* field :
           {&c.communicator, &c.pg_desc, &c.pg_ranks, &c.op, &c.dtype, &c.algorithm, &c.protocol, &c.source})
        *field = id(*field);
    }
    for (NameOnlyComm& n : s.name_only) n.name = id(n.name);
    state_->by_file.insert_or_assign(key, std::move(s));
  } catch (...) {
    std::lock_guard lock(state_->mutex);
    state_->by_file.erase(key);
  }
}

std::optional<ProfileSummary> ImportSummaries::combined(
    const Profile& description, const std::vector<std::pair<std::int32_t, std::string>>& rank_files) {
  std::lock_guard lock(state_->mutex);
  if (rank_files.empty()) return std::nullopt;
  const auto& ranks = description.ranks();
  if (ranks.size() != rank_files.size()) return std::nullopt;
  std::map<std::int32_t, State::Summarised*> of_rank;
  for (const auto& [rank, file] : rank_files) {
    auto it = state_->by_file.find(file);
    if (it == state_->by_file.end() || it->second.summary.rank != rank) return std::nullopt;
    if (!of_rank.emplace(rank, &it->second).second) return std::nullopt;
  }
  const std::size_t n = ranks.size();
  std::vector<std::shared_ptr<const Rank>> thin(n);
  std::vector<RankPart> parts(n);
  EventCounts counts;
  ProfileSummary out;
  out.ranks.resize(n);
  for (std::size_t ri = 0; ri < n; ++ri) {
    auto it = of_rank.find(ranks[ri].rank);
    if (it == of_rank.end()) return std::nullopt;
    State::Summarised& s = *it->second;
    // The rank as the file describes it, with what its events gave.
    Rank r = ranks[ri];
    r.events_loaded = true;
    r.streams = s.thin.streams;
    r.tracks = s.thin.tracks;
    r.steps = s.thin.steps;
    r.collectives = s.thin.collectives;
    r.gpu_first_ns = s.thin.gpu_first_ns;
    r.gpu_last_ns = s.thin.gpu_last_ns;
    thin[ri] = std::make_shared<const Rank>(std::move(r));
    // What combine reads of a rank's part for the matching across ranks (the rest of its analysis is in
    // its summary already).
    parts[ri].result.rank = ranks[ri].rank;
    parts[ri].result.rank_index = ri;
    parts[ri].cpu_ops = s.cpu_ops;
    parts[ri].name_only = s.name_only;
    counts += s.counts;
    out.ranks[ri] = s.summary;
  }
  const Profile profile = description.with_ranks(
      thin, std::make_shared<const std::vector<std::string>>(state_->strings), &counts);
  // The collective wait and transfer, matched across ranks, as summarize_in_batches ends.
  const Analysis matched = combine(profile, std::move(parts));
  for (std::size_t ri = 0; ri < n; ++ri) {
    out.ranks[ri].collective_wait_ns = matched.ranks[ri].collective_wait_ns;
    out.ranks[ri].collective_transfer_ns = matched.ranks[ri].collective_transfer_ns;
  }
  out.path = profile.path();
  out.world_size = profile.world_size();
  std::sort(out.ranks.begin(), out.ranks.end(),
            [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  return out;
}

std::vector<DeviceUse> devices_used(const Rank& rank, const RankSummary& summary) {
  std::vector<std::int32_t> devices;
  for (const StreamSummary& s : summary.streams) devices.push_back(s.device);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  std::vector<DeviceUse> out;
  for (const std::int32_t d : devices) {
    DeviceUse use{d, nullptr};
    describe_device_use(rank, use);
    out.push_back(use);
  }
  return out;
}

Analysis analysis_of_summary(const Profile& profile, const ProfileSummary& summary) {
  Analysis out;
  const auto& ranks = profile.ranks();
  out.ranks.resize(ranks.size());
  // Summaries name kernels by text; the analysis by the profile's string ids (the same strings).
  std::unordered_map<std::string_view, StringId> id_of;
  if (const auto& strings = profile.strings()) {
    for (std::size_t i = 1; i < strings->size(); ++i) id_of.emplace((*strings)[i], static_cast<StringId>(i));
  }
  struct Key {
    std::string op;
    std::int64_t group_size, bytes;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, CollectiveStats> collectives;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    RankResult& rr = out.ranks[ri];
    rr.rank = ranks[ri].rank;
    rr.rank_index = ri;
    const RankSummary* s = find_rank(summary, rr.rank);
    if (!s) continue;
    rr.total = s->total;
    rr.outside_steps = s->outside_steps;
    rr.step_source = s->step_source;
    rr.unlinked_activities = s->unlinked_activities;
    rr.collective_wait_ns = s->collective_wait_ns;
    rr.collective_transfer_ns = s->collective_transfer_ns;
    for (const StepSummary& step : s->steps)
      rr.steps.push_back({step.number, step.cpu_start_ns, step.cpu_end_ns, step.gpu});
    for (const StreamSummary& stream : s->streams) rr.streams.push_back(stream.idle);
    for (const KernelSummary& k : s->kernels) {
      auto id = id_of.find(k.name);
      if (id == id_of.end()) continue;
      rr.kernels.push_back(
          {id->second, k.cls, Evidence::kDefault, -1, k.count, k.total_ns, k.min_ns, k.max_ns});
    }
    for (const CollectiveSummary& c : s->collectives) {
      CollectiveStats& stats = collectives[{c.op, c.group_size, c.bytes}];
      stats.count += c.count;
      stats.total_ns += c.total_ns;
    }
  }
  for (auto& [key, stats] : collectives) {
    stats.op = key.op;
    stats.group_size = key.group_size;
    stats.bytes = key.bytes;
    // Rows without metadata are summarised with group size and bytes 0 (summary.hpp).
    stats.from_metadata = key.bytes > 0 || key.group_size > 0;
    stats.op_source = stats.from_metadata ? OpSource::kMetadata : OpSource::kKernelName;
    stats.mean_ns = stats.count > 0 ? stats.total_ns / stats.count : 0;
    set_bandwidth(stats);
    out.collectives.stats.push_back(std::move(stats));
  }
  std::stable_sort(
      out.collectives.stats.begin(), out.collectives.stats.end(),
      [](const CollectiveStats& a, const CollectiveStats& b) { return a.total_ns > b.total_ns; });
  out.notes.push_back(fmt::format(
      "the whole job's figures come from the profile's summaries ({} ranks); the timeline loads each rank's "
      "events as it is shown",
      summary.ranks.size()));
  return out;
}

}  // namespace meshscope::measure
