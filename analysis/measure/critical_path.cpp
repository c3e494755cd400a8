#include "analysis/measure/critical_path.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/measure/correlation.hpp"
#include "analysis/measure/launches.hpp"
#include "profiler/parallel.hpp"

namespace meshscope::measure {

const char* to_string(PathKind kind) {
  switch (kind) {
    case PathKind::kCpu:
      return "cpu";
    case PathKind::kRuntime:
      return "runtime";
    case PathKind::kLaunchDelay:
      return "launch_delay";
    case PathKind::kCompute:
      return "compute";
    case PathKind::kComm:
      return "comm";
    case PathKind::kMemory:
      return "memory";
    case PathKind::kCollectiveWait:
      return "collective_wait";
    case PathKind::kSync:
      return "sync";
    case PathKind::kQueue:
      return "queue";
    case PathKind::kStreamWait:
      return "stream_wait";
    case PathKind::kOther:
      return "other";
  }
  return "other";
}

namespace {

constexpr TimeNs kMinTime = std::numeric_limits<TimeNs>::min();
constexpr std::uint32_t kNone = 0xffffffffu;

class Contributors {
 public:
  void add(PathKind kind, StringId name, std::int32_t peer, TimeNs ns) {
    const std::uint64_t key = (static_cast<std::uint64_t>(kind) << 60) |
                              ((static_cast<std::uint64_t>(peer + 1) & 0xFFFFFu) << 40) | name;
    auto [it, inserted] = index_.try_emplace(key, list_.size());
    if (inserted) list_.push_back({kind, name, peer, 0, 0});
    list_[it->second].ns += ns;
    ++list_[it->second].segments;
  }
  void merge(const std::vector<PathContributor>& other) {
    for (const auto& c : other) {
      const std::uint64_t key = (static_cast<std::uint64_t>(c.kind) << 60) |
                                ((static_cast<std::uint64_t>(c.peer_rank + 1) & 0xFFFFFu) << 40) | c.name;
      auto [it, inserted] = index_.try_emplace(key, list_.size());
      if (inserted) list_.push_back({c.kind, c.name, c.peer_rank, 0, 0});
      list_[it->second].ns += c.ns;
      list_[it->second].segments += c.segments;
    }
  }
  std::vector<PathContributor> top(std::size_t n) const {
    std::vector<PathContributor> out = list_;
    std::sort(out.begin(), out.end(), [](const PathContributor& a, const PathContributor& b) {
      if (a.ns != b.ns) return a.ns > b.ns;
      if (a.kind != b.kind) return a.kind < b.kind;
      return a.name < b.name;
    });
    if (out.size() > n) out.resize(n);
    return out;
  }
  // Everything, for merging into a larger total.
  const std::vector<PathContributor>& all() const { return list_; }
  void clear() {
    index_.clear();
    list_.clear();
  }

 private:
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<PathContributor> list_;
};

// Everything the walk needs about one rank, built once.
class RankIndex {
 public:
  RankIndex(const Profile& p, const Rank& r, const RankResult& rr, const CollectiveReport& cr)
      : p_(p), r_(r) {
    const std::size_t n = r.activities.size();
    stream_of.assign(n, 0);
    for (std::uint32_t s = 0; s < r.streams.size(); ++s) {
      for (std::uint32_t i = r.streams[s].first; i < r.streams[s].first + r.streams[s].count; ++i)
        stream_of[i] = s;
    }
    map.build(r.api_calls);
    api_of.assign(n, -1);
    linked = 0;
    for (std::size_t i = 0; i < n; ++i) {
      api_of[i] = map.find(r.activities[i].correlation);
      if (api_of[i] >= 0) ++linked;
    }
    classes = &rr.classes;
    // CUDA calls per thread: runtime calls, and driver calls that launched work.
    std::vector<std::uint8_t> launched(r.api_calls.size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (api_of[i] >= 0) launched[static_cast<std::size_t>(api_of[i])] = 1;
    }
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> thread_at;
    thread_of_call.assign(r.api_calls.size(), kNone);
    for (std::uint32_t c = 0; c < r.api_calls.size(); ++c) {
      const ApiCall& call = r.api_calls[c];
      if (call.kind != ApiKind::kRuntime && !launched[c]) continue;
      const CallThread& thread = r.thread_of(call);
      auto [it, inserted] =
          thread_at.try_emplace({thread.pid, thread.tid}, static_cast<std::uint32_t>(threads.size()));
      if (inserted) threads.push_back({thread.pid, thread.tid, kNone, {}});
      threads[it->second].calls.push_back(c);
      thread_of_call[c] = it->second;
    }
    for (std::uint32_t t = 0; t < r.tracks.size(); ++t) {
      const CpuTrack& track = r.tracks[t];
      if (track.gpu) continue;
      const auto it = thread_at.find({track.pid, track.tid});
      if (it != thread_at.end()) {
        threads[it->second].track = t;
      } else {
        track_only.push_back({track.pid, track.tid, t, {}});
      }
    }
    // Collective membership: wait and last arrival of each collectives row in a complete instance.
    member_of.assign(r.collectives.size(), -1);
    last_rank_of.assign(r.collectives.size(), -1);
    for (const CollectiveInstance& inst : cr.instances) {
      if (!inst.complete) continue;
      for (std::uint32_t m = inst.first_member; m < inst.first_member + inst.member_count; ++m) {
        const InstanceMember& member = cr.members[m];
        if (member.rank_index != rr.rank_index) continue;
        member_of[member.collective] = static_cast<std::int32_t>(m);
        last_rank_of[member.collective] = inst.last_rank;
      }
    }
  }

  bool sync_call(StringId name) {
    if (name >= sync_cache_.size()) sync_cache_.resize(name + 1, -1);
    if (sync_cache_[name] < 0) sync_cache_[name] = synchronising_call(p_.str(name)) ? 1 : 0;
    return sync_cache_[name] == 1;
  }

  // The innermost CPU range of track TRACK open at time T (index into Rank::ranges), or kNone; LAST receives
  // the last range of the track that starts at or before T (kNone when none does).
  std::uint32_t range_at(std::uint32_t track, TimeNs t, std::uint32_t* last = nullptr) {
    if (last) *last = kNone;
    if (track == kNone) return kNone;
    const CpuTrack& tr = r_.tracks[track];
    if (tr.count == 0) return kNone;
    if (parent_.empty()) parent_.assign(r_.ranges.size(), kNone - 1);
    if (parent_[tr.first] == kNone - 1) build_parents(track);
    const auto ranges = r_.track_ranges(track);
    const auto it = std::upper_bound(ranges.begin(), ranges.end(), t,
                                     [](TimeNs v, const CpuRange& c) { return v < c.start_ns; });
    if (it == ranges.begin()) return kNone;
    std::uint32_t i = tr.first + static_cast<std::uint32_t>(it - ranges.begin() - 1);
    if (last) *last = i;
    while (i != kNone && !(r_.ranges[i].start_ns <= t && t < r_.ranges[i].end_ns)) i = parent_[i];
    return i;
  }

  // The first index of track TRACK's ranges in Rank::ranges.
  std::uint32_t track_first(std::uint32_t track) const { return r_.tracks[track].first; }

  struct Thread {
    std::int64_t pid, tid;
    std::uint32_t track;
    std::vector<std::uint32_t> calls;  // into Rank::api_calls, by start
  };
  std::vector<std::uint32_t> stream_of;
  std::vector<std::int32_t> api_of;
  std::size_t linked = 0;
  const std::vector<ActivityClass>* classes = nullptr;
  CorrelationMap map;
  std::vector<Thread> threads;
  std::vector<Thread> track_only;  // CPU tracks with no CUDA calls (for the step's own thread)
  std::vector<std::uint32_t> thread_of_call;
  std::vector<std::int32_t> member_of;     // per Rank::collectives: index into CollectiveReport::members
  std::vector<std::int32_t> last_rank_of;  // per Rank::collectives: the rank that arrived last

 private:
  void build_parents(std::uint32_t track) {
    const CpuTrack& tr = r_.tracks[track];
    std::vector<std::uint32_t> stack;
    for (std::uint32_t i = tr.first; i < tr.first + tr.count; ++i) {
      while (!stack.empty() && r_.ranges[stack.back()].end_ns <= r_.ranges[i].start_ns) stack.pop_back();
      parent_[i] = stack.empty() ? kNone : stack.back();
      stack.push_back(i);
    }
  }
  const Profile& p_;
  const Rank& r_;
  std::vector<std::int8_t> sync_cache_;
  std::vector<std::uint32_t> parent_;
};

// One walk over one window.
class Walker {
 public:
  Walker(const Rank& r, RankIndex& x, const CollectiveReport& cr, const CriticalPathOptions& o,
         bool per_stream)
      : r_(r), x_(x), cr_(cr), o_(o), per_stream_(per_stream) {}

  enum class StartAt { kGpu, kCpu };

  void walk(TimeNs lo, TimeNs hi, StartAt at, std::uint32_t where, StepPath& out) {
    lo_ = lo;
    hi_ = hi;
    out_ = &out;
    contributors_.clear();
    segments_.clear();
    out.start_ns = lo;
    out.end_ns = hi;
    std::uint32_t activity = where, thread = where;
    TimeNs t = hi;
    bool gpu = at == StartAt::kGpu;
    if (gpu && r_.activities[where].end_ns < hi) {  // per stream: the step's CPU range outlasts its GPU work
      emit(r_.activities[where].end_ns, hi, PathKind::kOther, PathSegment::Ref::kNone, 0);
      t = r_.activities[where].end_ns;
    }
    std::size_t budget = 4 * (r_.activities.size() + r_.api_calls.size()) + 64;
    bool done = false;
    while (!done && budget-- > 0) {
      if (gpu) {
        done = gpu_step(activity, t, gpu, thread);
      } else {
        done = cpu_step(thread, t, gpu, activity);
      }
    }
    if (!done) emit(lo_, t, PathKind::kOther, PathSegment::Ref::kNone, 0);  // the budget ran out (never seen)
    out.top = contributors_.top(o_.top);
    all_ = contributors_.all();
    out.segment_count = static_cast<std::int64_t>(segments_.size());
    if (o_.keep_segments) {
      std::reverse(segments_.begin(), segments_.end());
      out.segments = std::move(segments_);
      segments_ = {};
    }
  }

  const std::vector<PathContributor>& all_contributors() const { return all_; }

 private:
  void emit(TimeNs start, TimeNs end, PathKind kind, PathSegment::Ref ref, std::uint32_t index,
            StringId name = kNoString, std::int32_t peer = -1) {
    start = std::max(start, lo_);
    end = std::min(end, hi_);
    if (end <= start) return;
    out_->by_kind[static_cast<std::size_t>(kind)] += end - start;
    contributors_.add(kind, name, peer, end - start);
    segments_.push_back({start, end, kind, ref, index, peer});
  }

  // The latest-ending non-sync activity of this rank (on DEVICE, any device when -1; not on stream SKIP)
  // whose end lies in (after, before].
  std::uint32_t latest_end(TimeNs after, TimeNs before, std::int32_t device, std::uint32_t skip) const {
    std::uint32_t best = kNone;
    TimeNs best_end = after;
    for (std::uint32_t s = 0; s < r_.streams.size(); ++s) {
      if (s == skip || (device >= 0 && r_.streams[s].device != device)) continue;
      const auto acts = r_.stream_activities(s);
      auto it = std::partition_point(acts.begin(), acts.end(),
                                     [&](const Activity& a) { return a.start_ns < before; });
      for (int back = 0; it != acts.begin() && back < 16; ++back) {
        --it;
        if (it->kind == ActivityKind::kSync) continue;
        if (it->end_ns <= before && it->end_ns > best_end) {
          best_end = it->end_ns;
          best = r_.streams[s].first + static_cast<std::uint32_t>(it - acts.begin());
        }
      }
    }
    return best;
  }

  PathKind kind_of(std::uint32_t a) const {
    const Activity& act = r_.activities[a];
    if (act.kind == ActivityKind::kMemcpy || act.kind == ActivityKind::kMemset) return PathKind::kMemory;
    switch ((*x_.classes)[a]) {
      case ActivityClass::kComm:
        return PathKind::kComm;
      case ActivityClass::kMemory:
        return PathKind::kMemory;
      case ActivityClass::kSync:
        return PathKind::kSync;
      case ActivityClass::kCompute:
        break;
    }
    return PathKind::kCompute;
  }

  // At GPU activity A, entered at time T (≤ its end). Returns true when the walk is over.
  bool gpu_step(std::uint32_t& a, TimeNs& t, bool& gpu, std::uint32_t& thread) {
    const Activity& act = r_.activities[a];
    const TimeNs top = std::min(t, act.end_ns);
    const PathKind kind = kind_of(a);
    const auto ref = PathSegment::Ref::kActivity;
    TimeNs wait_end = act.start_ns;
    std::int32_t peer = -1;
    if (act.collective >= 0) {
      const std::int32_t m = x_.member_of[static_cast<std::size_t>(act.collective)];
      if (m >= 0) {
        const InstanceMember& member = cr_.members[static_cast<std::size_t>(m)];
        wait_end = act.start_ns + member.wait_ns;
        peer = x_.last_rank_of[static_cast<std::size_t>(act.collective)];
      }
    }
    if (wait_end > act.start_ns) {
      emit(wait_end, top, kind, ref, a, act.name);
      emit(act.start_ns, std::min(wait_end, top), PathKind::kCollectiveWait, ref, a, act.name, peer);
    } else {
      emit(act.start_ns, top, kind, ref, a, act.name);
    }
    t = act.start_ns;
    if (t <= lo_) return true;

    const std::uint32_t stream = x_.stream_of[a];
    const GpuStream& st = r_.streams[stream];
    // The previous activity on the stream (sync records are not work).
    std::uint32_t prev = kNone;
    for (std::uint32_t i = a; i > st.first;) {
      --i;
      if (r_.activities[i].kind == ActivityKind::kSync) continue;
      prev = i;
      break;
    }
    const TimeNs prev_end = prev != kNone ? r_.activities[prev].end_ns : kMinTime;
    const std::int32_t api = per_stream_ ? -1 : x_.api_of[a];
    TimeNs launch_ready = kMinTime;
    if (api >= 0) {
      const ApiCall& call = r_.api_calls[static_cast<std::size_t>(api)];
      launch_ready = call.end_ns <= act.start_ns ? call.end_ns : std::min(call.start_ns, act.start_ns);
    }
    const TimeNs ready = std::max(prev_end, launch_ready);
    if (ready == kMinTime || act.start_ns - ready > o_.stream_wait_min_ns) {
      // Neither the stream nor the launch explains the start: work on another stream that ended just before.
      const TimeNs after = ready == kMinTime ? lo_ : ready;
      const std::uint32_t other = latest_end(after, act.start_ns, st.device, stream);
      if (other != kNone) {
        emit(r_.activities[other].end_ns, act.start_ns, PathKind::kStreamWait, ref, a, act.name);
        a = other;
        t = r_.activities[other].end_ns;
        return false;
      }
      if (ready == kMinTime) {
        emit(lo_, act.start_ns, PathKind::kOther, PathSegment::Ref::kNone, 0);
        return true;
      }
    }
    if (prev_end >= launch_ready) {
      emit(prev_end, act.start_ns, PathKind::kQueue, ref, a, act.name);
      a = prev;
      t = std::min(prev_end, act.start_ns);
      return false;
    }
    const ApiCall& call = r_.api_calls[static_cast<std::size_t>(api)];
    emit(launch_ready, act.start_ns, PathKind::kLaunchDelay, ref, a, act.name);
    emit(call.start_ns, launch_ready, PathKind::kRuntime, PathSegment::Ref::kApiCall,
         static_cast<std::uint32_t>(api), call.name);
    thread = x_.thread_of_call[static_cast<std::size_t>(api)];
    t = call.start_ns;
    if (thread == kNone || t <= lo_) {
      if (t > lo_) emit(lo_, t, PathKind::kOther, PathSegment::Ref::kNone, 0);
      return true;
    }
    gpu = false;
    return false;
  }

  // Host work on THREAD over [START, END), split by the innermost CPU range open in each part (from the end
  // backwards; after 64 parts the rest goes to the range open at its end).
  void cpu_segment(std::uint32_t thread, TimeNs start, TimeNs end) {
    start = std::max(start, lo_);
    end = std::min(end, hi_);
    const std::uint32_t track = x_.threads[thread].track;
    for (int parts = 0; end > start; ++parts) {
      std::uint32_t last = kNone;
      const std::uint32_t range = x_.range_at(track, end - 1, &last);
      TimeNs lower = start;
      if (range != kNone) lower = std::max(lower, r_.ranges[range].start_ns);
      if (parts < 64 && last != kNone) {
        // A range nested in RANGE (or, with none open, any range) that ended inside (lower, end): the part
        // after it belongs to RANGE, the part before to whatever was open then.
        const std::uint32_t stop = range != kNone ? range : x_.track_first(track);
        int scanned = 0;
        for (std::uint32_t k = last + 1; k-- > stop && scanned < 64; ++scanned) {
          if (k == range) break;
          const TimeNs e = r_.ranges[k].end_ns;
          if (e < end && e > lower) lower = e;
        }
      } else if (parts >= 64) {
        lower = start;
      }
      StringId name = kNoString;
      if (range != kNone && r_.ranges[range].kind != RangeKind::kStep) name = r_.ranges[range].name;
      emit(lower, end, PathKind::kCpu, range != kNone ? PathSegment::Ref::kRange : PathSegment::Ref::kNone,
           range != kNone ? range : 0, name);
      end = lower;
    }
  }

  // On CPU thread THREAD at time T. Returns true when the walk is over.
  bool cpu_step(std::uint32_t& thread, TimeNs& t, bool& gpu, std::uint32_t& a) {
    const auto& calls = x_.threads[thread].calls;
    const auto it = std::partition_point(calls.begin(), calls.end(),
                                         [&](std::uint32_t c) { return r_.api_calls[c].start_ns < t; });
    if (it == calls.begin()) {
      if (switch_thread(thread, kMinTime, t)) return false;
      cpu_segment(thread, lo_, t);
      return true;
    }
    const std::uint32_t c = *(it - 1);
    const ApiCall& call = r_.api_calls[c];
    if (call.end_ns > t) {  // inside the call (nested calls)
      emit(call.start_ns, t, PathKind::kRuntime, PathSegment::Ref::kApiCall, c, call.name);
      t = call.start_ns;
      return t <= lo_;
    }
    if (t - call.end_ns > o_.thread_wait_min_ns && switch_thread(thread, call.end_ns, t)) return false;
    cpu_segment(thread, call.end_ns, t);
    t = call.end_ns;
    if (t <= lo_) return true;
    if (x_.sync_call(call.name)) {
      const std::uint32_t g = latest_end(call.start_ns, call.end_ns, -1, kNone);
      if (g != kNone) {
        emit(r_.activities[g].end_ns, call.end_ns, PathKind::kSync, PathSegment::Ref::kApiCall, c, call.name);
        a = g;
        t = r_.activities[g].end_ns;
        gpu = true;
        return false;
      }
    }
    emit(call.start_ns, call.end_ns, PathKind::kRuntime, PathSegment::Ref::kApiCall, c, call.name);
    t = call.start_ns;
    return t <= lo_;
  }

  // The thread was idle in (AFTER, T): if another thread issued a call that ended in that gap, the walk
  // continues on that thread at the end of its call (the one that ended last), after a CPU segment for the
  // hand-over on this thread.
  bool switch_thread(std::uint32_t& thread, TimeNs after, TimeNs& t) {
    std::uint32_t best = kNone;
    TimeNs best_end = std::max(after, lo_);
    for (std::uint32_t o = 0; o < x_.threads.size(); ++o) {
      if (o == thread) continue;
      const auto& calls = x_.threads[o].calls;
      const auto it = std::partition_point(calls.begin(), calls.end(),
                                           [&](std::uint32_t c) { return r_.api_calls[c].start_ns < t; });
      if (it == calls.begin()) continue;
      const ApiCall& call = r_.api_calls[*(it - 1)];
      if (call.end_ns <= t && call.end_ns > best_end) {
        best_end = call.end_ns;
        best = o;
      }
    }
    if (best == kNone) return false;
    cpu_segment(thread, best_end, t);
    thread = best;
    t = best_end;
    return true;
  }

  const Rank& r_;
  RankIndex& x_;
  const CollectiveReport& cr_;
  const CriticalPathOptions& o_;
  bool per_stream_;
  TimeNs lo_ = 0, hi_ = 0;
  StepPath* out_ = nullptr;
  Contributors contributors_;
  std::vector<PathSegment> segments_;
  std::vector<PathContributor> all_;
};

void rank_paths(const Profile& p, const Analysis& analysis, std::size_t ri, const CriticalPathOptions& o,
                RankPaths& out, std::vector<std::string>& notes, std::vector<PathContributor>& everything) {
  const Rank& r = p.ranks()[ri];
  const RankResult& rr = analysis.ranks[ri];
  out.rank = r.rank;
  out.rank_index = ri;
  if (r.activities.empty()) return;
  RankIndex x(p, r, rr, analysis.collectives);
  out.per_stream = x.linked == 0;
  Walker walker(r, x, analysis.collectives, o, out.per_stream);
  Contributors rank_contributors;

  // Windows: the steps (CPU range to the end of the GPU work they launched), or the whole rank.
  std::vector<TimeNs> starts, ends;
  for (const StepResult& s : rr.steps) {
    starts.push_back(s.cpu_start_ns);
    ends.push_back(s.cpu_end_ns);
  }
  struct Window {
    std::int64_t number;
    TimeNs lo, hi, cpu_end;
    std::uint32_t last;  // the latest-ending activity it launched (or overlaps, per stream)
  };
  std::vector<Window> windows;
  if (rr.steps.empty()) {
    windows.push_back({-1, r.gpu_first_ns, r.gpu_last_ns, kMinTime, kNone});
  } else {
    for (const StepResult& s : rr.steps)
      windows.push_back({s.number, s.cpu_start_ns, s.cpu_end_ns, s.cpu_end_ns, kNone});
  }
  // The latest-ending activity of each window: by launch, or (per stream) by time.
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const Activity& act = r.activities[i];
    if (act.kind == ActivityKind::kSync) continue;
    std::int32_t w = 0;
    if (!rr.steps.empty()) {
      if (out.per_stream) {
        w = step_at(starts, ends, act.start_ns);
      } else {
        const std::int32_t api = x.api_of[i];
        w = api < 0 ? -1 : step_at(starts, ends, r.api_calls[static_cast<std::size_t>(api)].start_ns);
      }
    }
    if (w < 0) continue;
    Window& win = windows[static_cast<std::size_t>(w)];
    if (win.last == kNone || act.end_ns > r.activities[win.last].end_ns) win.last = i;
  }

  for (const Window& win : windows) {
    StepPath path;
    path.step = win.number;
    TimeNs hi = win.hi;
    if (win.last != kNone) hi = std::max(hi, r.activities[win.last].end_ns);
    if (hi <= win.lo) continue;
    // Start where the step ends: its last GPU work, or the CPU thread of the step range.
    std::uint32_t thread = kNone;
    if (win.cpu_end != kMinTime && (win.last == kNone || win.cpu_end >= r.activities[win.last].end_ns) &&
        !out.per_stream) {
      for (const Step& s : r.steps) {
        if (s.start_ns != win.lo) continue;
        for (std::uint32_t t = 0; t < x.threads.size(); ++t) {
          if (x.threads[t].pid == s.pid && x.threads[t].tid == s.tid) thread = t;
        }
      }
      if (thread == kNone && !x.threads.empty()) {
        // NVTX steps, or a step thread with no CUDA calls: the thread whose last call before the end is
        // latest.
        TimeNs best = kMinTime;
        for (std::uint32_t t = 0; t < x.threads.size(); ++t) {
          for (auto it = x.threads[t].calls.rbegin(); it != x.threads[t].calls.rend(); ++it) {
            if (r.api_calls[*it].end_ns > win.hi) continue;
            if (r.api_calls[*it].end_ns > best) {
              best = r.api_calls[*it].end_ns;
              thread = t;
            }
            break;
          }
        }
      }
    }
    if (thread != kNone) {
      walker.walk(win.lo, hi, Walker::StartAt::kCpu, thread, path);
    } else if (win.last != kNone) {
      walker.walk(win.lo, hi, Walker::StartAt::kGpu, win.last, path);
    } else {
      continue;
    }
    for (int k = 0; k < kPathKindCount; ++k)
      out.by_kind[static_cast<std::size_t>(k)] += path.by_kind[static_cast<std::size_t>(k)];
    rank_contributors.merge(walker.all_contributors());
    out.steps.push_back(std::move(path));
  }
  out.top = rank_contributors.top(o.top);
  everything = rank_contributors.all();
  if (out.per_stream) {
    notes.push_back(fmt::format(
        "rank {}: no GPU activity carries a correlation id that leads to a CPU launch: its critical path "
        "follows the GPU streams only (stream order and waits on other streams); CPU time shows as gaps",
        r.rank));
  }
}

}  // namespace

CriticalPaths critical_paths(const Profile& profile, const Analysis& analysis,
                             const CriticalPathOptions& options) {
  CriticalPaths result;
  const auto& ranks = profile.ranks();
  result.ranks.resize(ranks.size());
  std::vector<std::vector<std::string>> notes(ranks.size());
  std::vector<std::vector<PathContributor>> everything(ranks.size());
  parallel_for(ranks.size(), options.threads, [&](std::size_t ri) {
    if (!options.ranks.empty() && (ri >= options.ranks.size() || !options.ranks[ri])) {
      result.ranks[ri].rank = ranks[ri].rank;
      result.ranks[ri].rank_index = ri;
      return;
    }
    rank_paths(profile, analysis, ri, options, result.ranks[ri], notes[ri], everything[ri]);
  });
  Contributors all;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const RankPaths& rp = result.ranks[ri];
    for (int k = 0; k < kPathKindCount; ++k)
      result.by_kind[static_cast<std::size_t>(k)] += rp.by_kind[static_cast<std::size_t>(k)];
    all.merge(everything[ri]);
    result.notes.insert(result.notes.end(), notes[ri].begin(), notes[ri].end());
  }
  result.top = all.top(options.top);
  return result;
}

}  // namespace meshscope::measure
