#include "analysis/measure/replay.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/measure/correlation.hpp"
#include "analysis/measure/intervals.hpp"
#include "analysis/measure/launches.hpp"
#include "profiler/error.hpp"
#include "profiler/parallel.hpp"
#include "profiler/text_format.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
// Marks an index into the run's added transfers where an activity index could also stand.
constexpr std::uint32_t kAddedFlag = 0x80000000u;
constexpr TimeNs kUnset = std::numeric_limits<TimeNs>::min();

// What a point of the simulation computes. At equal measured times, ends come before starts (an activity
// that starts when its predecessor ends), launch calls before the activities they launch, and the end of an
// event of no duration after its start.
enum class What : std::uint8_t { kActivityStart, kActivityEnd, kCallStart, kCallEnd };
struct Point {
  TimeNs t;
  std::uint32_t index;
  std::uint8_t phase;
  What what;
};
std::uint8_t phase_of(What what, bool zero_length) {
  switch (what) {
    case What::kActivityEnd:
      return zero_length ? 4 : 0;
    case What::kCallEnd:
      return zero_length ? 4 : 1;
    case What::kCallStart:
      return 2;
    case What::kActivityStart:
      return 3;
  }
  return 4;
}

// A point in simulation order: the activity or call index, shifted, with its What in the low two bits.
using PointCode = std::uint32_t;
constexpr std::uint32_t kMaxPointIndex = (1u << 30) - 1;

struct Occupancy {
  TimeNs span = 0, busy = 0, exposed_comm = 0;
};

struct Tally {
  std::int64_t unlinked = 0, unexplained = 0, event_waits = 0, graph_nodes = 0, sync_waits = 0;
  std::int64_t forced = 0, edited = 0;  // of the last run
  TimeNs unexplained_ns = 0;
};

// Each work activity's (name, kind, class) as a small number, once per graph: an edit's scale is then
// computed once per distinct key (the names' tests are string searches) and looked up per activity.
struct ScaleKeys {
  std::vector<std::uint32_t> of_activity;  // kNone for sync records
  std::vector<std::uint32_t> example;      // per key: an activity that has it
};

// What an activity's start and end depend on, in one record: the simulation reads them together.
struct ActivityLinks {
  std::uint32_t call = kNoIndex;    // the launch (LaunchIndex::api_of_activity)
  std::uint32_t pred = kNone;       // the activity before it on its stream
  std::uint32_t event_dep = kNone;  // work on another stream it waited for
  std::int32_t member = -1;         // into the couplings, -1
  TimeNs launch_lat = 0, queue_gap = 0, event_lag = 0;
};

// One rank's graph (built once) and its replayed times (of the last run).
struct RankGraph {
  const Rank* rank = nullptr;
  std::size_t index = 0;
  const std::vector<ActivityClass>* classes = nullptr;
  LaunchIndex launches;
  TimeNs typical_launch_ns = 0;
  // Per Rank::activities.
  std::vector<ActivityLinks> links;
  // While linking only (freed after): the recorded node before each activity in its graph launch, and
  // whether it is the first recorded node of one.
  std::vector<std::uint32_t> graph_prev;
  std::vector<std::uint8_t> graph_first;
  Occupancy measured;
  std::vector<double> scale;  // of the run: empty without edits
  ScaleKeys scale_keys;
  // Per Rank::activities: the step (RankResult::steps) whose CPU range launched it, -1; per step: the
  // measured end of the last work it launched.
  std::vector<std::int32_t> step_of;
  std::vector<TimeNs> step_gpu_end;
  std::vector<TimeNs> start, end;
  // Per Rank::api_calls.
  std::vector<std::uint32_t> prev_call, parent_call, awaited;
  std::vector<TimeNs> call_start, call_end;
  std::vector<std::vector<std::uint32_t>> top_calls;  // per LaunchIndex thread: its calls not inside another
  std::vector<PointCode> order;                       // every start and end, in simulation order
  std::size_t cursor = 0;
  TimeNs shift = 0;  // the latest replayed − measured time: what stands in for a value not yet computed
  Tally tally;
  // Of the run: the activities an edit added to the rank (null: none), their times, the step of each (-1)
  // and the one queued before it (on the added stream, or after the same activity; kNone); (activity,
  // added) for each added activity's BEFORE and AFTER, sorted.
  const std::vector<AddedActivity>* added = nullptr;
  std::vector<TimeNs> added_start, added_end;
  std::vector<std::int32_t> added_step;
  std::vector<std::uint32_t> own_prev;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gates, added_after;

  TimeNs activity_start(std::uint32_t i) const {
    return start[i] != kUnset ? start[i] : rank->activities[i].start_ns + shift;
  }
  TimeNs activity_end(std::uint32_t i) const {
    return end[i] != kUnset ? end[i] : rank->activities[i].end_ns + shift;
  }
  TimeNs call_start_at(std::uint32_t c) const {
    return call_start[c] != kUnset ? call_start[c] : rank->api_calls[c].start_ns + shift;
  }
  TimeNs call_end_at(std::uint32_t c) const {
    return call_end[c] != kUnset ? call_end[c] : rank->api_calls[c].end_ns + shift;
  }
};

// What added activity K waits for, in the graph's terms: the activity it follows, the added activity it
// follows, the one before it on the added stream (each kNone: none).
struct AddedDeps {
  std::uint32_t after, after_added, own_prev;
};
AddedDeps added_deps(const RankGraph& g, std::uint32_t k) {
  const AddedActivity& a = (*g.added)[k];
  return {a.after == AddedActivity::kNoActivity ? kNone : a.after,
          a.after_added == AddedActivity::kNoActivity ? kNone : a.after_added, g.own_prev[k]};
}

// Activity I's replayed end; before it is computed (its end point comes later in the simulation's order, as a
// zero-length activity's does), from its replayed start and scaled duration when it is not a collective
// member, else the estimate of the latest shift.
TimeNs expected_end(const RankGraph& g, std::uint32_t i) {
  if (g.end[i] != kUnset) return g.end[i];
  if (g.start[i] == kUnset || g.links[i].member >= 0) return g.activity_end(i);
  const double f = g.scale.empty() ? 1.0 : g.scale[i];
  return g.start[i] +
         std::llround(static_cast<double>(std::max<TimeNs>(0, g.rank->activities[i].duration())) * f);
}

// Added activity K's times, and first those of the added activities it waits for (an estimate from the
// latest shift for an activity whose end is not yet computed). Depth first with a stack of its own: a chain
// of all-reduces on one stream is thousands long.
void place_added(RankGraph& g, std::uint32_t k) {
  if (g.added_end[k] != kUnset) return;
  std::vector<std::uint32_t> stack{k};
  while (!stack.empty()) {
    const std::uint32_t j = stack.back();
    const AddedDeps d = added_deps(g, j);
    bool waiting = false;
    for (const std::uint32_t dep : {d.after_added, d.own_prev})
      if (dep != kNone && g.added_end[dep] == kUnset) stack.push_back(dep), waiting = true;
    if (waiting) continue;
    stack.pop_back();
    if (g.added_end[j] != kUnset) continue;
    TimeNs ready = kUnset;
    if (d.after != kNone) ready = expected_end(g, d.after);
    if (d.after_added != kNone) ready = std::max(ready, g.added_end[d.after_added]);
    if (d.own_prev != kNone) ready = std::max(ready, g.added_end[d.own_prev]);
    g.added_start[j] = ready;
    g.added_end[j] = ready + std::max<TimeNs>(0, (*g.added)[j].duration_ns);
  }
}

// The latest end of the added activities activity I waits for (kUnset: none).
TimeNs gated_until(RankGraph& g, std::uint32_t i) {
  TimeNs until = kUnset;
  if (g.gates.empty()) return until;
  auto it = std::lower_bound(g.gates.begin(), g.gates.end(), std::pair{i, 0u});
  for (; it != g.gates.end() && it->first == i; ++it) {
    place_added(g, it->second);
    until = std::max(until, g.added_end[it->second]);
  }
  return until;
}

// The added activities that follow activity I, placed now that it has ended.
void place_added_after(RankGraph& g, std::uint32_t i) {
  if (g.added_after.empty()) return;
  auto it = std::lower_bound(g.added_after.begin(), g.added_after.end(), std::pair{i, 0u});
  for (; it != g.added_after.end() && it->first == i; ++it) place_added(g, it->second);
}

// A matched collective instance, coupling its members' ends across ranks.
struct Coupling {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> members;  // (graph, activity)
  std::vector<TimeNs> after_last;  // per member: measured end − measured last arrival
  TimeNs min_duration = 0;         // the shortest member's measured duration
  std::int32_t excluded = -1;      // of the run: graph index whose arrival no longer holds the others
};

// Each instance's member of rank EXCLUDED_RANK (-1: none) no longer holds the others.
void exclude_rank(std::vector<Coupling>& couplings, const std::vector<RankGraph>& graphs,
                  std::int32_t excluded_rank) {
  for (Coupling& c : couplings) {
    c.excluded = -1;
    if (excluded_rank < 0) continue;
    for (const auto& [gi, act] : c.members)
      if (graphs[gi].rank->rank == excluded_rank) c.excluded = static_cast<std::int32_t>(gi);
  }
}

bool is_work(const Activity& a) {
  return a.kind != ActivityKind::kSync;
}

double scale_of(const Activity& a, ActivityClass cls, std::string_view name, const ReplayEdits& edits) {
  for (const ScaleEdit& e : edits.scales) {
    switch (e.target) {
      case ScaleEdit::Target::kComm:
        if (cls == ActivityClass::kComm) return e.factor;
        break;
      case ScaleEdit::Target::kMemory:
        if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) return e.factor;
        break;
      case ScaleEdit::Target::kCategory:
        if (a.kind == ActivityKind::kKernel && cls == ActivityClass::kCompute &&
            kernel_work_category(name) == e.category)
          return e.factor;
        break;
      case ScaleEdit::Target::kPattern:
        if (vocabulary::lower(name).find(e.pattern) != std::string::npos) return e.factor;
        break;
    }
  }
  return 1;
}

ScaleKeys scale_keys(const Rank& r, const std::vector<ActivityClass>& classes) {
  ScaleKeys out;
  out.of_activity.assign(r.activities.size(), kNone);
  std::unordered_map<std::uint64_t, std::uint32_t> keys;
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const Activity& a = r.activities[i];
    if (!is_work(a)) continue;
    const std::uint64_t key = (static_cast<std::uint64_t>(a.name) << 16) |
                              (static_cast<std::uint64_t>(a.kind) << 8) |
                              static_cast<std::uint64_t>(classes[i]);
    auto [it, added] = keys.try_emplace(key, static_cast<std::uint32_t>(out.example.size()));
    if (added) out.example.push_back(i);
    out.of_activity[i] = it->second;
  }
  return out;
}

// The usual delay from a launch call to its activity on a stream that had run dry: the first quartile over
// those launches (0 when there are none). Some of them also waited for another stream, which only lengthens
// theirs: a low quantile is the launch alone.
TimeNs typical_launch_delay(const RankGraph& g) {
  const Rank& r = *g.rank;
  std::vector<TimeNs> samples;
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const std::uint32_t call = g.launches.api_of_activity[i];
    if (call == kNoIndex || !is_work(r.activities[i])) continue;
    const TimeNs launched = r.api_calls[call].start_ns, started = r.activities[i].start_ns;
    if (started < launched) continue;
    if (g.links[i].pred != kNone && r.activities[g.links[i].pred].end_ns > launched) continue;
    samples.push_back(started - launched);
  }
  if (samples.empty()) return 0;
  auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 4);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

// The work activity of R that ended last in (AFTER, BEFORE], on any stream but SKIP (kNone: none skipped) of
// DEVICE (-1: any device); kNone when none did. Sync records and work still running at BEFORE are passed
// over.
std::uint32_t ended_last(const Rank& r, std::size_t skip, std::int32_t device, TimeNs after, TimeNs before) {
  std::uint32_t best = kNone;
  TimeNs best_end = after;
  for (std::size_t s = 0; s < r.streams.size(); ++s) {
    if (s == skip || (device >= 0 && r.streams[s].device != device)) continue;
    const auto acts = r.stream_activities(s);
    auto it = std::upper_bound(acts.begin(), acts.end(), before,
                               [](TimeNs t, const Activity& a) { return t < a.start_ns; });
    for (int back = 0; back < 8 && it != acts.begin(); ++back) {
      --it;
      if (!is_work(*it) || it->end_ns > before) continue;
      if (it->end_ns > best_end) {
        best_end = it->end_ns;
        best = r.streams[s].first + static_cast<std::uint32_t>(it - acts.begin());
      }
      break;
    }
  }
  return best;
}

// Each stream's order (sync records are not work), and the order of the activities of one graph launch.
void link_orders(const Profile& profile, RankGraph& g) {
  const Rank& r = *g.rank;
  const std::size_t n = r.activities.size();
  g.links.assign(n, ActivityLinks{});
  for (std::uint32_t i = 0; i < n; ++i) g.links[i].call = g.launches.api_of_activity[i];
  g.graph_prev.assign(n, kNone);
  g.graph_first.assign(n, 0);
  for (std::size_t s = 0; s < r.streams.size(); ++s) {
    std::uint32_t last = kNone;
    for (std::uint32_t i = r.streams[s].first; i < r.streams[s].first + r.streams[s].count; ++i) {
      if (!is_work(r.activities[i])) continue;
      g.links[i].pred = last;
      last = i;
    }
  }
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t c = 0; c < r.api_calls.size(); ++c) {
    const auto launched = g.launches.activities_of(c);
    if (launched.empty()) continue;
    if (launched.size() == 1 && profile.str(r.api_calls[c].name).find("GraphLaunch") == std::string::npos)
      continue;
    nodes.assign(launched.begin(), launched.end());
    std::sort(nodes.begin(), nodes.end(), [&](std::uint32_t x, std::uint32_t y) {
      return r.activities[x].start_ns != r.activities[y].start_ns
                 ? r.activities[x].start_ns < r.activities[y].start_ns
                 : x < y;
    });
    g.graph_first[nodes.front()] = 1;
    for (std::size_t k = 1; k < nodes.size(); ++k) g.graph_prev[nodes[k]] = nodes[k - 1];
  }
}

// Which dependency set activity I's start, and the delay that reproduces it (docs/WHATIF.md, "The graph").
void link_start(RankGraph& g, std::size_t s, std::uint32_t i, const ReplayOptions& options) {
  const Rank& r = *g.rank;
  const Activity& a = r.activities[i];
  const std::uint32_t call = g.launches.api_of_activity[i];
  const bool has_pred = g.links[i].pred != kNone;
  const TimeNs stream_ready = has_pred ? r.activities[g.links[i].pred].end_ns : kUnset;
  if (call == kNoIndex) {
    ++g.tally.unlinked;
    g.links[i].queue_gap = has_pred ? std::max<TimeNs>(0, a.start_ns - stream_ready) : 0;
    return;
  }
  const TimeNs delay = std::max<TimeNs>(0, a.start_ns - r.api_calls[call].start_ns);
  const TimeNs usual = std::min(delay, g.typical_launch_ns);
  const TimeNs launch_ready = r.api_calls[call].start_ns + usual;
  const TimeNs ready = std::max(launch_ready, has_pred ? stream_ready : kUnset);
  const bool queued = has_pred && stream_ready >= launch_ready;
  g.links[i].launch_lat = usual;
  if (a.start_ns - ready <= options.unexplained_min_ns) {
    // Queued behind its stream, or launched onto an idle one: the small gap is the GPU's own.
    if (queued)
      g.links[i].queue_gap = std::max<TimeNs>(0, a.start_ns - stream_ready);
    else
      g.links[i].launch_lat = delay;
    return;
  }
  if (g.graph_prev[i] != kNone) {
    // A node of a graph after another: the graph's own edges are not recorded; it keeps its measured
    // distance from the node before it.
    g.links[i].event_dep = g.graph_prev[i];
    g.links[i].event_lag = a.start_ns - r.activities[g.graph_prev[i]].end_ns;
    ++g.tally.graph_nodes;
    return;
  }
  if (g.graph_first[i]) {
    // The first recorded node of a graph: the graph's nodes before it may not be recorded.
    g.links[i].launch_lat = delay;
    ++g.tally.graph_nodes;
    return;
  }
  // What it waited for: work on another stream of its device that ended just before it (an event wait).
  const std::uint32_t dep = ended_last(r, s, r.streams[s].device, ready, a.start_ns);
  if (dep != kNone && a.start_ns - r.activities[dep].end_ns <= options.event_wait_max_ns) {
    g.links[i].event_dep = dep;
    g.links[i].event_lag = a.start_ns - r.activities[dep].end_ns;
    ++g.tally.event_waits;
    return;
  }
  ++g.tally.unexplained;
  g.tally.unexplained_ns += a.start_ns - ready;
  if (!options.keep_unexplained) return;
  if (queued)
    g.links[i].queue_gap = a.start_ns - stream_ready;
  else
    g.links[i].launch_lat = delay;
}

// Each activity's dependencies: its stream predecessor, its launch, the node before it in its graph, an
// inferred event wait, and the delays that reproduce its measured start.
void link_activities(const Profile& profile, RankGraph& g, const ReplayOptions& options) {
  const Rank& r = *g.rank;
  link_orders(profile, g);
  g.typical_launch_ns = typical_launch_delay(g);
  for (std::size_t s = 0; s < r.streams.size(); ++s) {
    for (std::uint32_t i = r.streams[s].first; i < r.streams[s].first + r.streams[s].count; ++i)
      if (is_work(r.activities[i])) link_start(g, s, i, options);
  }
  g.graph_prev = {};
  g.graph_first = {};
}

// Each thread's calls: those not inside another (runtime calls around driver calls) chained in order, the
// others moved with the call around them; a synchronising call tied to the activity that ended last inside
// it.
void link_calls(const Profile& profile, RankGraph& g) {
  const Rank& r = *g.rank;
  const std::size_t n = r.api_calls.size();
  g.prev_call.assign(n, kNone);
  g.parent_call.assign(n, kNone);
  g.awaited.assign(n, kNone);
  g.top_calls.assign(g.launches.threads.size(), {});
  for (std::size_t t = 0; t < g.launches.threads.size(); ++t) {
    std::uint32_t last = kNone;
    for (const std::uint32_t c : g.launches.threads[t].calls) {
      if (last != kNone && r.api_calls[c].start_ns < r.api_calls[last].end_ns) {
        g.parent_call[c] = last;
        continue;
      }
      g.prev_call[c] = last;
      last = c;
      g.top_calls[t].push_back(c);
    }
  }
  std::vector<std::int8_t> sync_name;
  for (std::uint32_t c = 0; c < n; ++c) {
    const ApiCall& call = r.api_calls[c];
    if (g.parent_call[c] != kNone) continue;
    if (call.name >= sync_name.size()) sync_name.resize(call.name + 1, -1);
    if (sync_name[call.name] < 0) sync_name[call.name] = synchronising_call(profile.str(call.name)) ? 1 : 0;
    if (sync_name[call.name] == 0) continue;
    const std::uint32_t w = ended_last(r, kNone, -1, call.start_ns - 1, call.end_ns);
    if (w == kNone) continue;
    g.awaited[c] = w;
    ++g.tally.sync_waits;
  }
}

void add_points(RankGraph& g) {
  const Rank& r = *g.rank;
  if (r.activities.size() > kMaxPointIndex || r.api_calls.size() > kMaxPointIndex)
    fail("rank {} has too many events to replay ({} activities, {} calls)", r.rank, r.activities.size(),
         r.api_calls.size());
  std::vector<Point> points;
  points.reserve(2 * (r.activities.size() + r.api_calls.size()));
  const auto add = [&](TimeNs t, std::uint32_t i, What what, bool zero) {
    points.push_back({t, i, phase_of(what, zero), what});
  };
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const Activity& a = r.activities[i];
    if (!is_work(a)) continue;
    add(a.start_ns, i, What::kActivityStart, false);
    add(a.end_ns, i, What::kActivityEnd, a.end_ns <= a.start_ns);
  }
  for (std::uint32_t c = 0; c < r.api_calls.size(); ++c) {
    const ApiCall& call = r.api_calls[c];
    add(call.start_ns, c, What::kCallStart, false);
    add(call.end_ns, c, What::kCallEnd, call.end_ns <= call.start_ns);
  }
  std::sort(points.begin(), points.end(), [](const Point& x, const Point& y) {
    if (x.t != y.t) return x.t < y.t;
    if (x.phase != y.phase) return x.phase < y.phase;
    return x.index < y.index;
  });
  g.order.resize(points.size());
  for (std::size_t k = 0; k < points.size(); ++k)
    g.order[k] = (points[k].index << 2) | static_cast<std::uint32_t>(points[k].what);
}

Occupancy occupancy(const RankGraph& g, bool replayed);

// Each work activity's step, by the CPU range its launch call started in (none without steps).
void map_steps(const RankResult& result, RankGraph& g) {
  const Rank& r = *g.rank;
  if (result.steps.empty()) return;
  std::vector<TimeNs> starts, ends;
  for (const StepResult& step : result.steps) {
    starts.push_back(step.cpu_start_ns);
    ends.push_back(step.cpu_end_ns);
  }
  g.step_of.assign(r.activities.size(), -1);
  g.step_gpu_end.assign(starts.size(), kUnset);
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
    const std::uint32_t call = g.launches.api_of_activity[i];
    if (call == kNoIndex || !is_work(r.activities[i])) continue;
    const std::int32_t s = step_at(starts, ends, r.api_calls[call].start_ns);
    if (s < 0) continue;
    g.step_of[i] = s;
    TimeNs& end = g.step_gpu_end[static_cast<std::size_t>(s)];
    end = std::max(end, r.activities[i].end_ns);
  }
}

RankGraph build_graph(const Profile& profile, const Analysis& analysis, std::size_t index,
                      const ReplayOptions& options) {
  RankGraph g;
  g.rank = &profile.ranks()[index];
  g.index = index;
  g.classes = &analysis.ranks[index].classes;
  g.launches = index_launches(*g.rank, false);
  link_activities(profile, g, options);
  link_calls(profile, g);
  g.measured = occupancy(g, false);
  g.scale_keys = scale_keys(*g.rank, *g.classes);
  map_steps(analysis.ranks[index], g);
  add_points(g);
  return g;
}

// The activities EDITS add to G's rank, checked against its activities (an edit's planner that names one
// the rank does not hold is a bug: one line, not a crash).
void prepare_added(RankGraph& g, const ReplayEdits& edits) {
  g.added = nullptr;
  g.added_start.clear(), g.added_end.clear(), g.added_step.clear(), g.own_prev.clear();
  g.gates.clear(), g.added_after.clear();
  if (g.index >= edits.added.size() || edits.added[g.index].empty()) return;
  const std::vector<AddedActivity>& added = edits.added[g.index];
  const std::uint32_t n = static_cast<std::uint32_t>(g.rank->activities.size());
  constexpr std::uint32_t kNo = AddedActivity::kNoActivity;
  g.added = &added;
  g.added_start.assign(added.size(), kUnset);
  g.added_end.assign(added.size(), kUnset);
  g.added_step.assign(added.size(), -1);
  g.own_prev.assign(added.size(), kNone);
  std::uint32_t last_own = kNone;
  std::unordered_map<std::uint32_t, std::uint32_t> last_after;  // AFTER -> the last added on its stream
  for (std::uint32_t k = 0; k < added.size(); ++k) {
    const AddedActivity& a = added[k];
    const bool bad = (a.after != kNo && a.after >= n) || (a.before != kNo && a.before >= n) ||
                     (a.after_added != kNo && a.after_added >= k) ||
                     (a.after == kNo && a.after_added == kNo) ||
                     (a.place == AddedActivity::Place::kAfterOnStream && a.after == kNo);
    if (bad)
      throw Error(
          fmt::format("replay: added activity {} of rank {} follows nothing it can (after {}, after "
                      "added {}, before {}, of {} activities)",
                      k, g.rank->rank, a.after, a.after_added, a.before, n));
    if (a.place == AddedActivity::Place::kOwnStream) {
      g.own_prev[k] = std::exchange(last_own, k);
    } else {  // queued behind the one added last after the same activity
      auto [it, first] = last_after.try_emplace(a.after, k);
      if (!first) g.own_prev[k] = std::exchange(it->second, k);
    }
    if (a.after != kNo) {
      g.added_after.emplace_back(a.after, k);
      if (!g.step_of.empty()) g.added_step[k] = g.step_of[a.after];
    } else {
      g.added_step[k] = g.added_step[a.after_added];
    }
    if (a.before != kNo) g.gates.emplace_back(a.before, k);
  }
  std::sort(g.added_after.begin(), g.added_after.end());
  std::sort(g.gates.begin(), g.gates.end());
}

// A run's starting state: the edits' factor per activity, no time computed yet.
void prepare_run(const Profile& profile, RankGraph& g, const ReplayEdits& edits) {
  const Rank& r = *g.rank;
  const std::size_t index = g.index;
  g.tally.forced = g.tally.edited = 0;
  g.cursor = 0;
  g.shift = 0;
  g.scale.clear();
  const std::vector<double>* factors =
      index < edits.transfer_factor.size() && edits.transfer_factor[index].size() == r.activities.size()
          ? &edits.transfer_factor[index]
          : nullptr;
  if (!edits.scales.empty() || factors) {
    g.scale.assign(r.activities.size(), 1.0);
    std::vector<double> of_key(g.scale_keys.example.size(), 1.0);
    if (!edits.scales.empty()) {
      for (std::size_t k = 0; k < of_key.size(); ++k) {
        const std::uint32_t i = g.scale_keys.example[k];
        of_key[k] = scale_of(r.activities[i], (*g.classes)[i], profile.str(r.activities[i].name), edits);
      }
    }
    for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
      const std::uint32_t key = g.scale_keys.of_activity[i];
      if (key == kNone) continue;
      g.scale[i] = of_key[key];
      if (factors) g.scale[i] *= (*factors)[i];
      g.tally.edited += g.scale[i] != 1.0;
    }
  }
  g.start.assign(r.activities.size(), kUnset);
  g.end.assign(r.activities.size(), kUnset);
  g.call_start.assign(r.api_calls.size(), kUnset);
  g.call_end.assign(r.api_calls.size(), kUnset);
  prepare_added(g, edits);
}

// The complete instances of two or more members whose kernels are in the profile.
std::vector<Coupling> couple_collectives(const Analysis& analysis, std::vector<RankGraph>& graphs) {
  std::vector<Coupling> out;
  const CollectiveReport& report = analysis.collectives;
  for (const CollectiveInstance& inst : report.instances) {
    if (!inst.complete || inst.member_count < 2) continue;
    Coupling c;
    TimeNs last_arrival = kUnset;
    for (std::uint32_t m = inst.first_member; m < inst.first_member + inst.member_count; ++m) {
      const InstanceMember& mem = report.members[m];
      RankGraph& g = graphs[mem.rank_index];
      const Collective& coll = g.rank->collectives[mem.collective];
      if (coll.stream_index < 0 || g.links[coll.activity].member >= 0) continue;
      c.members.emplace_back(static_cast<std::uint32_t>(mem.rank_index), coll.activity);
      last_arrival = std::max(last_arrival, g.rank->activities[coll.activity].start_ns);
    }
    if (c.members.size() < 2) continue;
    c.min_duration = std::numeric_limits<TimeNs>::max();
    for (const auto& [gi, act] : c.members) {
      const Activity& a = graphs[gi].rank->activities[act];
      c.after_last.push_back(a.end_ns - last_arrival);
      c.min_duration = std::min(c.min_duration, std::max<TimeNs>(0, a.duration()));
    }
    const auto id = static_cast<std::int32_t>(out.size());
    for (const auto& [gi, act] : c.members) graphs[gi].links[act].member = id;
    out.push_back(std::move(c));
  }
  return out;
}

class Simulation {
 public:
  Simulation(std::vector<RankGraph>& graphs, const std::vector<Coupling>& couplings, unsigned threads)
      : graphs_(graphs), couplings_(couplings), arrived_(couplings.size()), threads_(threads) {}

  // Every rank runs on until a collective waits for a member not yet arrived; the thread whose member's
  // start completes the coupling then hands the waiting members back to their threads. Ranks that wait for
  // one another run close together in time (a tensor-parallel group runs through its collectives while its
  // data is still in cache), where rounds of every rank re-read each rank's arrays cold. Each thread owns a
  // block of ranks, so a rank's data stays on one core. The result does not depend on the order: each time is
  // computed from its dependencies alone, and when every rank waits, the state is the one every order
  // reaches. A member's start is published by its coupling's count (release), read once the count is full
  // (acquire).
  void run() {
    const std::size_t n = graphs_.size();
    unsigned threads = threads_ == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads_;
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(n, 1)));
    lanes_ = std::vector<Lane>(threads);
    waits_on_ = std::vector<std::atomic<std::uint32_t>>(n);
    for (auto& w : waits_on_) w.store(kNone, std::memory_order_relaxed);
    pending_.store(static_cast<std::int64_t>(n));
    for (std::size_t r = n; r-- > 0;) lanes_[lane_of(r)].ready.push_back(static_cast<std::uint32_t>(r) << 1);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back([this, t] { work(t); });
    work(0);
    for (auto& t : pool) t.join();
    if (error_) std::rethrow_exception(error_);
    if (timing_enabled()) std::fprintf(stderr, "[timing] replay: %zu resumptions\n", resumptions_.load());
  }

 private:
  // A thread's ranks ready to run, each as rank << 1 | (its next point goes ahead on estimates).
  struct Lane {
    std::mutex mutex;
    std::vector<std::uint32_t> ready;
  };

  std::size_t lane_of(std::size_t rank) const { return rank * lanes_.size() / graphs_.size(); }

  void enqueue(std::uint32_t rank, bool forced) {
    pending_.fetch_add(1);
    Lane& lane = lanes_[lane_of(rank)];
    std::lock_guard lock(lane.mutex);
    lane.ready.push_back(rank << 1 | (forced ? 1u : 0u));
  }

  // Runs thread T's ready ranks until every rank has finished (or an error stopped the others).
  void work(std::size_t t) {
    Lane& lane = lanes_[t];
    while (!done_.load()) {
      std::uint32_t item = kNone;
      {
        std::lock_guard lock(lane.mutex);
        if (!lane.ready.empty()) {
          item = lane.ready.back();
          lane.ready.pop_back();
        }
      }
      if (item != kNone) {
        ++resumptions_;
        try {
          run_rank(item >> 1, (item & 1u) != 0);
        } catch (...) {
          std::lock_guard lock(force_mutex_);
          if (!error_) error_ = std::current_exception();
          done_.store(true);
        }
        continue;
      }
      if (pending_.load() == 0) {
        std::lock_guard lock(force_mutex_);
        if (pending_.load() == 0 && !done_.load() && !force_first_waiting()) done_.store(true);
        continue;
      }
      std::this_thread::yield();  // the other threads' ranks are running
    }
  }

  // No rank runs or is ready, and some wait: members' measured times disagree with the order of their ranks
  // (clocks not aligned). The first waiting rank goes ahead with estimates for what it waits for. False
  // when every rank has finished.
  bool force_first_waiting() {
    for (std::size_t r = 0; r < graphs_.size(); ++r) {
      RankGraph& g = graphs_[r];
      if (g.cursor >= g.order.size()) continue;
      std::uint32_t waited = waits_on_[r].load();
      if (waited == kNone || !waits_on_[r].compare_exchange_strong(waited, kNone)) continue;
      ++g.tally.forced;
      enqueue(static_cast<std::uint32_t>(r), true);
      return true;
    }
    return false;
  }

  // Runs rank R on until it waits for a coupling or finishes. While it waits, waits_on_[R] names the
  // coupling; whoever clears it (the coupling's last member, or R itself on finding it complete) runs R on.
  void run_rank(std::uint32_t r, bool force) {
    RankGraph& g = graphs_[r];
    while (g.cursor < g.order.size()) {
      const PointCode p = g.order[g.cursor];
      if (!process(g, p, force)) {
        const auto coupling = static_cast<std::uint32_t>(g.links[p >> 2].member);
        waits_on_[r].store(coupling);
        if (arrived_[coupling].load() < couplings_[coupling].members.size()) break;
        std::uint32_t waited = coupling;
        if (!waits_on_[r].compare_exchange_strong(waited, kNone)) break;  // the last member took it up
        continue;  // completed meanwhile: the point runs now
      }
      force = false;
      ++g.cursor;
    }
    pending_.fetch_sub(1);
  }

  // The last member of COUPLING has arrived: the members that wait for it go on.
  void release(std::size_t coupling) {
    for (const auto& [gi, act] : couplings_[coupling].members) {
      std::uint32_t waited = static_cast<std::uint32_t>(coupling);
      if (waits_on_[gi].compare_exchange_strong(waited, kNone)) enqueue(gi, false);
    }
  }

  bool process(RankGraph& g, PointCode p, bool force) {
    const std::uint32_t index = p >> 2;
    switch (static_cast<What>(p & 3u)) {
      case What::kActivityStart:
        start_activity(g, index);
        return true;
      case What::kActivityEnd:
        return end_activity(g, index, force);
      case What::kCallStart:
        start_call(g, index);
        return true;
      case What::kCallEnd:
        end_call(g, index);
        return true;
    }
    return true;
  }

  void start_activity(RankGraph& g, std::uint32_t i) {
    const Activity& a = g.rank->activities[i];
    TimeNs s = kUnset;
    const ActivityLinks& l = g.links[i];
    if (l.call != kNoIndex) s = std::max(s, g.call_start_at(l.call) + l.launch_lat);
    if (l.pred != kNone) s = std::max(s, g.activity_end(l.pred) + l.queue_gap);
    if (l.event_dep != kNone) s = std::max(s, g.activity_end(l.event_dep) + l.event_lag);
    if (!g.gates.empty()) s = std::max(s, gated_until(g, i));
    if (s == kUnset) s = a.start_ns + g.shift;
    g.start[i] = s;
    g.shift = s - a.start_ns;
    if (l.member >= 0) {
      const auto coupling = static_cast<std::size_t>(l.member);
      if (arrived_[coupling].fetch_add(1, std::memory_order_release) + 1 ==
          couplings_[coupling].members.size())
        release(coupling);
    }
  }

  bool end_activity(RankGraph& g, std::uint32_t i, bool force) {
    const Activity& a = g.rank->activities[i];
    if (g.start[i] == kUnset) start_activity(g, i);
    const double f = g.scale.empty() ? 1.0 : g.scale[i];
    if (g.links[i].member < 0) {
      g.end[i] = g.start[i] + std::llround(static_cast<double>(a.duration()) * f);
      g.shift = g.end[i] - a.end_ns;
      place_added_after(g, i);
      return true;
    }
    const auto coupling = static_cast<std::size_t>(g.links[i].member);
    const Coupling& c = couplings_[coupling];
    if (!force && arrived_[coupling].load(std::memory_order_acquire) < c.members.size()) return false;
    TimeNs last = kUnset;
    TimeNs after_last = 0;
    for (std::size_t m = 0; m < c.members.size(); ++m) {
      const auto [gi, act] = c.members[m];
      const RankGraph& peer = graphs_[gi];
      if (&peer == &g && act == i) after_last = c.after_last[m];
      if (static_cast<std::int32_t>(gi) == c.excluded) continue;
      last = std::max(last, peer.activity_start(act));
    }
    if (last == kUnset) last = g.start[i];
    const TimeNs own = std::min(std::max<TimeNs>(0, a.duration()), c.min_duration);
    g.end[i] = std::max(g.start[i] + std::llround(static_cast<double>(own) * f),
                        last + std::llround(static_cast<double>(after_last) * f));
    g.shift = g.end[i] - a.end_ns;
    place_added_after(g, i);
    return true;
  }

  static void start_call(RankGraph& g, std::uint32_t c) {
    const ApiCall& call = g.rank->api_calls[c];
    TimeNs s = call.start_ns;
    if (g.parent_call[c] != kNone) {
      const std::uint32_t parent = g.parent_call[c];
      s = call.start_ns + (g.call_start_at(parent) - g.rank->api_calls[parent].start_ns);
    } else if (g.prev_call[c] != kNone) {
      const std::uint32_t prev = g.prev_call[c];
      s = g.call_end_at(prev) + std::max<TimeNs>(0, call.start_ns - g.rank->api_calls[prev].end_ns);
    }
    g.call_start[c] = s;
    g.shift = s - call.start_ns;
  }

  static void end_call(RankGraph& g, std::uint32_t c) {
    const ApiCall& call = g.rank->api_calls[c];
    if (g.call_start[c] == kUnset) start_call(g, c);
    const std::uint32_t w = g.awaited[c];
    if (w == kNone) {
      g.call_end[c] = g.call_start[c] + std::max<TimeNs>(0, call.end_ns - call.start_ns);
    } else {
      // Returns once the awaited work is done, after the measured time from then to the return.
      const TimeNs measured_from = std::max(call.start_ns, g.rank->activities[w].end_ns);
      g.call_end[c] = std::max(g.call_start[c], g.activity_end(w)) + (call.end_ns - measured_from);
    }
    g.shift = g.call_end[c] - call.end_ns;
  }

  std::vector<RankGraph>& graphs_;
  const std::vector<Coupling>& couplings_;
  std::vector<std::atomic<std::uint32_t>> arrived_;  // per coupling: members whose start is computed
  unsigned threads_;
  std::vector<Lane> lanes_;                           // per thread
  std::vector<std::atomic<std::uint32_t>> waits_on_;  // per rank: the coupling it waits for, or kNone
  std::atomic<std::int64_t> pending_{0};              // ranks running or ready
  std::atomic<std::size_t> resumptions_{0};
  std::atomic<bool> done_{false};
  std::mutex force_mutex_;  // one thread at a time decides that every rank waits
  std::exception_ptr error_;
};

// Sync records are not work: each moves with the work before it on its stream.
void place_sync_records(RankGraph& g) {
  const Rank& r = *g.rank;
  for (const GpuStream& s : r.streams) {
    TimeNs shift = 0;
    for (std::uint32_t i = s.first; i < s.first + s.count; ++i) {
      if (is_work(r.activities[i])) {
        shift = g.end[i] - r.activities[i].end_ns;
        continue;
      }
      g.start[i] = r.activities[i].start_ns + shift;
      g.end[i] = r.activities[i].end_ns + shift;
    }
  }
}

// A measured time T on a thread whose calls not inside another are CALLS moved as the replay moved the calls
// around it (replayed at CALL_START, CALL_END).
TimeNs map_call_time(std::span<const std::uint32_t> calls, const std::vector<ApiCall>& api,
                     const std::vector<TimeNs>& call_start, const std::vector<TimeNs>& call_end, TimeNs t) {
  auto it = std::upper_bound(calls.begin(), calls.end(), t,
                             [&](TimeNs x, std::uint32_t c) { return x < api[c].start_ns; });
  if (it == calls.begin()) return t;
  const std::uint32_t c = *std::prev(it);
  return t >= api[c].end_ns ? t + (call_end[c] - api[c].end_ns) : t + (call_start[c] - api[c].start_ns);
}

TimeNs map_thread_time(const RankGraph& g, std::size_t thread, TimeNs t) {
  return map_call_time(g.top_calls[thread], g.rank->api_calls, g.call_start, g.call_end, t);
}

// The thread whose calls move a step's bounds: the step range's own, else the one that made the most calls.
std::size_t step_thread(const RankGraph& g, std::int64_t pid, std::int64_t tid) {
  std::size_t best = kNone;
  for (std::size_t t = 0; t < g.launches.threads.size(); ++t) {
    const auto& th = g.launches.threads[t];
    if (th.pid == pid && th.tid == tid && !g.top_calls[t].empty()) return t;
    if (best == kNone || g.top_calls[t].size() > g.top_calls[best].size()) best = t;
  }
  return best;
}

// A step's critical path, walked back from its end through the dependency that set each start (the one whose
// time the replayed start equals), each stretch of time given to a PathKind; stretches before the step are
// cut.
class PathWalk {
 public:
  // LAST_ARRIVAL: per coupling, the replayed start of its last member that holds the others.
  PathWalk(const RankGraph& g, const std::vector<TimeNs>& last_arrival)
      : g_(g), last_arrival_(last_arrival) {}

  // The path of a step replayed over [FLOOR, END]: from LAST_ACTIVITY when it ends at END, else from the
  // calls of THREAD (kNone: none) around END.
  std::array<TimeNs, kPathKindCount> walk(TimeNs floor, TimeNs end, std::uint32_t last_activity,
                                          std::size_t thread) {
    parts_ = {};
    floor_ = floor;
    t_ = end;
    Node node{Node::kEndHost, 0};
    if (last_activity != kNone && (last_activity & kAddedFlag) != 0 &&
        g_.added_end[last_activity & ~kAddedFlag] >= end) {
      node = {Node::kAddedEnd, last_activity & ~kAddedFlag};
    } else if (last_activity != kNone && (last_activity & kAddedFlag) == 0 && g_.end[last_activity] >= end) {
      node = {Node::kActivityEnd, last_activity};
    } else if (const std::uint32_t c = last_call(thread, end); c != kNone) {
      // After the thread's last call: host work; a call still running at the end: inside it.
      node = {g_.call_end[c] <= end ? Node::kCallEnd : Node::kCallStart, c};
      if (node.what == Node::kCallEnd)
        move_to(PathKind::kCpu, g_.call_end[c]);
      else
        move_to(PathKind::kRuntime, g_.call_start[c]);
    }
    const std::size_t limit =
        2 * (g_.rank->activities.size() + g_.rank->api_calls.size() + g_.added_end.size()) + 2;
    for (std::size_t k = 0; k < limit && node.what < Node::kEndHost && t_ > floor_; ++k) node = next(node);
    // Before the thread's first recorded call: its own work; before an activity no known dependency started:
    // what the walk cannot explain.
    const bool host =
        node.what == Node::kEndHost || node.what == Node::kCallStart || node.what == Node::kCallEnd;
    move_to(host ? PathKind::kCpu : PathKind::kOther, floor_);
    return parts_;
  }

 private:
  struct Node {
    // kAddedEnd: the end of an added transfer (ReplayEdits::added). kEndHost, kEndWait: no dependency known
    // before; what came before is host work, or not explained.
    enum What : std::uint8_t {
      kActivityEnd,
      kActivityStart,
      kCallEnd,
      kCallStart,
      kAddedEnd,
      kEndHost,
      kEndWait
    } what;
    std::uint32_t index;
  };

  // The stretch from T to the current time goes to PART; the walk is then at T.
  void move_to(PathKind part, TimeNs t) {
    const TimeNs from = std::max(t, floor_);
    if (t_ > from) parts_[static_cast<std::size_t>(part)] += t_ - from;
    t_ = std::min(t_, std::max(t, floor_));
  }

  Node next(Node node) {
    const std::uint32_t i = node.index;
    switch (node.what) {
      case Node::kActivityEnd:
        activity_body(i);
        return {Node::kActivityStart, i};
      case Node::kActivityStart:
        return activity_cause(i);
      case Node::kCallEnd: {
        const std::uint32_t w = g_.awaited[i];
        if (w != kNone && g_.end[w] > g_.call_start[i]) {
          move_to(PathKind::kSync, g_.end[w]);  // the call returning after the work it waited for
          return {Node::kActivityEnd, w};
        }
        move_to(PathKind::kRuntime, g_.call_start[i]);
        return {Node::kCallStart, i};
      }
      case Node::kCallStart:
        if (const std::uint32_t parent = g_.parent_call[i]; parent != kNone) {
          move_to(PathKind::kRuntime, g_.call_start[parent]);
          return {Node::kCallStart, parent};
        }
        if (const std::uint32_t prev = g_.prev_call[i]; prev != kNone) {
          move_to(PathKind::kCpu, g_.call_end[prev]);
          return {Node::kCallEnd, prev};
        }
        return {Node::kEndHost, i};  // the thread's first call: nothing recorded before it
      case Node::kAddedEnd:
        return added_cause(i);
      case Node::kEndHost:
      case Node::kEndWait:
        break;
    }
    return node;
  }

  // Added activity K, from its end back to its start, then what it waited for last: the activity it
  // follows, the added activity it follows, the one before it on the added stream.
  Node added_cause(std::uint32_t k) {
    move_to((*g_.added)[k].cls == ActivityClass::kComm ? PathKind::kComm : PathKind::kCompute,
            g_.added_start[k]);
    const AddedDeps d = added_deps(g_, k);
    TimeNs best = kUnset;
    Node cause{Node::kEndWait, k};
    if (d.after != kNone) best = g_.end[d.after], cause = {Node::kActivityEnd, d.after};
    for (const std::uint32_t j : {d.after_added, d.own_prev})
      if (j != kNone && g_.added_end[j] > best) best = g_.added_end[j], cause = {Node::kAddedEnd, j};
    if (best != kUnset) move_to(PathKind::kQueue, best);
    return cause;
  }

  // The activity itself, from its end back to its start; a collective's wait for its last member apart.
  void activity_body(std::uint32_t i) {
    if (g_.links[i].member >= 0) {
      const TimeNs last = last_arrival_[static_cast<std::size_t>(g_.links[i].member)];
      if (last > g_.start[i] && last < g_.end[i]) {
        move_to(PathKind::kComm, last);
        move_to(PathKind::kCollectiveWait, g_.start[i]);
        return;
      }
    }
    move_to(kind_of(i), g_.start[i]);
  }

  // What set activity I's start: of its stream, work on another stream and its launch, the one ready last (on
  // a tie, in that order). Not always the one its replayed start equals: an activity whose measured start
  // came before the end of the one it follows (overlapping records) started from an estimate of that end.
  Node activity_cause(std::uint32_t i) {
    TimeNs best = kUnset, best_from = kUnset;
    Node cause{Node::kEndWait, i};  // no dependency known: the walk ends here
    PathKind kind = PathKind::kOther;
    const auto consider = [&](TimeNs ready, TimeNs from, Node node, PathKind k) {
      if (ready > best) best = ready, best_from = from, cause = node, kind = k;
    };
    if (const std::uint32_t p = g_.links[i].pred; p != kNone)
      consider(g_.end[p] + g_.links[i].queue_gap, g_.end[p], {Node::kActivityEnd, p}, PathKind::kQueue);
    if (const std::uint32_t d = g_.links[i].event_dep; d != kNone)
      consider(g_.end[d] + g_.links[i].event_lag, g_.end[d], {Node::kActivityEnd, d}, PathKind::kStreamWait);
    if (const std::uint32_t call = g_.launches.api_of_activity[i]; call != kNoIndex)
      consider(g_.call_start[call] + g_.links[i].launch_lat, g_.call_start[call], {Node::kCallStart, call},
               PathKind::kLaunchDelay);
    if (!g_.gates.empty()) {
      auto it = std::lower_bound(g_.gates.begin(), g_.gates.end(), std::pair{i, 0u});
      for (; it != g_.gates.end() && it->first == i; ++it)
        consider(g_.added_end[it->second], g_.added_end[it->second], {Node::kAddedEnd, it->second},
                 PathKind::kStreamWait);
    }
    if (best != kUnset) move_to(kind, best_from);
    return cause;
  }

  PathKind kind_of(std::uint32_t i) const {
    const Activity& a = g_.rank->activities[i];
    if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) return PathKind::kMemory;
    return (*g_.classes)[i] == ActivityClass::kComm ? PathKind::kComm : PathKind::kCompute;
  }

  // THREAD's call not inside another that started last by T.
  std::uint32_t last_call(std::size_t thread, TimeNs t) const {
    if (thread == kNone) return kNone;
    const auto& calls = g_.top_calls[thread];
    auto it = std::upper_bound(calls.begin(), calls.end(), t,
                               [&](TimeNs x, std::uint32_t c) { return x < g_.call_start[c]; });
    return it == calls.begin() ? kNone : *std::prev(it);
  }

  const RankGraph& g_;
  const std::vector<TimeNs>& last_arrival_;
  std::array<TimeNs, kPathKindCount> parts_{};
  TimeNs floor_ = 0, t_ = 0;
};

// A step lasts from its CPU range's start to its end or the end of the GPU work launched inside it,
// whichever is later (the critical path's window): measured, and with the replayed times.
void replay_steps(const RankGraph& g, const RankResult& result, PathWalk& path,
                  std::vector<ReplayedStep>& out) {
  const Rank& r = *g.rank;
  if (result.steps.empty()) {
    TimeNs m0 = std::numeric_limits<TimeNs>::max(), m1 = kUnset, r0 = m0, r1 = kUnset;
    std::uint32_t last = kNone;
    for (std::uint32_t i = 0; i < r.activities.size(); ++i) {
      if (!is_work(r.activities[i])) continue;
      m0 = std::min(m0, r.activities[i].start_ns), m1 = std::max(m1, r.activities[i].end_ns);
      r0 = std::min(r0, g.start[i]);
      if (g.end[i] > r1) r1 = g.end[i], last = i;
    }
    for (std::uint32_t c = 0; c < r.api_calls.size(); ++c) {
      m0 = std::min(m0, r.api_calls[c].start_ns), m1 = std::max(m1, r.api_calls[c].end_ns);
      r0 = std::min(r0, g.call_start[c]), r1 = std::max(r1, g.call_end[c]);
    }
    for (std::uint32_t k = 0; k < g.added_end.size(); ++k)
      if (g.added_end[k] > r1) r1 = g.added_end[k], last = k | kAddedFlag;
    if (m1 == kUnset) return;
    out.push_back({r.rank, -1, m1 - m0, r1 - r0, path.walk(r0, r1, last, step_thread(g, kNull, kNull)), r0});
    return;
  }
  const std::vector<TimeNs>& gpu_measured = g.step_gpu_end;
  std::vector<TimeNs> gpu_replayed(result.steps.size(), kUnset);
  std::vector<std::uint32_t> gpu_last(result.steps.size(), kNone);
  for (std::uint32_t i = 0; i < g.step_of.size(); ++i) {
    const std::int32_t s = g.step_of[i];
    if (s < 0) continue;
    if (g.end[i] > gpu_replayed[static_cast<std::size_t>(s)]) {
      gpu_replayed[static_cast<std::size_t>(s)] = g.end[i];
      gpu_last[static_cast<std::size_t>(s)] = i;
    }
  }
  for (std::uint32_t k = 0; k < g.added_end.size(); ++k) {
    const std::int32_t s = g.added_step[k];
    if (s >= 0 && g.added_end[k] > gpu_replayed[static_cast<std::size_t>(s)]) {
      gpu_replayed[static_cast<std::size_t>(s)] = g.added_end[k];
      gpu_last[static_cast<std::size_t>(s)] = k | kAddedFlag;
    }
  }
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    const StepResult& step = result.steps[k];
    std::int64_t pid = kNull, tid = kNull;
    for (const Step& s : r.steps)
      if (s.start_ns == step.cpu_start_ns && s.number == step.number) pid = s.pid, tid = s.tid;
    const std::size_t thread = step_thread(g, pid, tid);
    TimeNs begin = step.cpu_start_ns, finish = step.cpu_end_ns;
    if (thread != kNone) {
      begin = map_thread_time(g, thread, begin);
      finish = map_thread_time(g, thread, finish);
    }
    const TimeNs measured = std::max(step.cpu_end_ns, gpu_measured[k]) - step.cpu_start_ns;
    const TimeNs end = std::max(finish, gpu_replayed[k]);
    out.push_back(
        {r.rank, step.number, measured, end - begin, path.walk(begin, end, gpu_last[k], thread), begin});
  }
}

// The intervals of one class of a rank's activities, gathered stream by stream: a stream's activities keep
// their order in the replay, so each stream's union is one pass and the streams' unions are merged
// (O(n log streams), where sorting every activity each edit cost a tenth of a second on a large job).
struct StreamUnions {
  std::vector<Interval> runs, stream;
  std::vector<std::size_t> bounds{0};

  void end_stream() {
    if (!std::is_sorted(stream.begin(), stream.end(),
                        [](const Interval& a, const Interval& b) { return a.start < b.start; }))
      sort_by_start(stream);
    const std::size_t first = runs.size();
    for (const Interval& next : stream) {
      if (next.end <= next.start) continue;
      if (runs.size() > first && next.start <= runs.back().end)
        runs.back().end = std::max(runs.back().end, next.end);
      else
        runs.push_back(next);
    }
    if (runs.size() > first) bounds.push_back(runs.size());
    stream.clear();
  }
  // The union of every stream's (DISJOINT).
  const std::vector<Interval>& merged(std::vector<Interval>& scratch) {
    merge_disjoint_runs(runs, bounds, scratch);
    return runs;
  }
};

Occupancy occupancy(const RankGraph& g, bool replayed) {
  const Rank& r = *g.rank;
  StreamUnions all, comm, compute;
  for (const GpuStream& s : r.streams) {
    for (std::uint32_t i = s.first; i < s.first + s.count; ++i) {
      if (!is_work(r.activities[i])) continue;
      const Interval iv = replayed ? Interval{g.start[i], g.end[i]}
                                   : Interval{r.activities[i].start_ns, r.activities[i].end_ns};
      all.stream.push_back(iv);
      const ActivityClass cls = (*g.classes)[i];
      if (cls == ActivityClass::kComm) comm.stream.push_back(iv);
      if (cls == ActivityClass::kCompute) compute.stream.push_back(iv);
    }
    for (StreamUnions* set : {&all, &comm, &compute}) set->end_stream();
  }
  if (replayed && !g.added_end.empty()) {  // the added activities, as one more stream (its union merges them)
    for (std::size_t k = 0; k < g.added_end.size(); ++k) {
      const Interval iv{g.added_start[k], g.added_end[k]};
      all.stream.push_back(iv);
      ((*g.added)[k].cls == ActivityClass::kComm ? comm : compute).stream.push_back(iv);
    }
    for (StreamUnions* set : {&all, &comm, &compute}) set->end_stream();
  }
  Occupancy out;
  std::vector<Interval> scratch, exposed;
  const std::vector<Interval>& u_all = all.merged(scratch);
  if (u_all.empty()) return out;
  subtract(comm.merged(scratch), compute.merged(scratch), exposed);
  out.span = u_all.back().end - u_all.front().start;
  out.busy = total_length(u_all);
  out.exposed_comm = total_length(exposed);
  return out;
}

void add_assumptions(const std::vector<RankGraph>& graphs, std::size_t couplings,
                     const ReplayOptions& options, Replay& out) {
  Tally t;
  std::vector<TimeNs> typical;
  for (const RankGraph& g : graphs) {
    t.unlinked += g.tally.unlinked, t.unexplained += g.tally.unexplained;
    t.event_waits += g.tally.event_waits, t.sync_waits += g.tally.sync_waits;
    t.graph_nodes += g.tally.graph_nodes;
    t.forced += g.tally.forced, t.edited += g.tally.edited, t.unexplained_ns += g.tally.unexplained_ns;
    typical.push_back(g.typical_launch_ns);
  }
  auto& a = out.assumptions;
  a.push_back(
      "CPU threads depend on each other only through the GPU: the time between a thread's CUDA calls is host "
      "work, kept as measured");
  if (!typical.empty()) {
    const auto [lo, hi] = std::minmax_element(typical.begin(), typical.end());
    a.push_back(fmt::format(
        "a kernel launched onto a stream that had run dry starts after its launch call's measured delay; "
        "queued behind its stream, after the usual launch delay ({:.1f}-{:.1f} µs by rank, the first "
        "quartile "
        "of launches onto idle streams)",
        static_cast<double>(*lo) / 1e3, static_cast<double>(*hi) / 1e3));
  }
  if (t.unlinked > 0)
    a.push_back(
        fmt::format("{} activities have no launch call in the profile (no correlation id): they follow "
                    "their stream with the measured gap",
                    t.unlinked));
  if (t.event_waits > 0)
    a.push_back(
        fmt::format("{} activities started after work on another stream of their device ended, well "
                    "after their launch and stream were ready: taken as event waits on that work",
                    t.event_waits));
  if (t.graph_nodes > 0)
    a.push_back(
        fmt::format("{} nodes of CUDA graphs started well after their launch and stream were ready: "
                    "a graph's edges and unrecorded nodes are not in the trace, so each keeps its "
                    "measured distance from the node before it (the first, from its launch)",
                    t.graph_nodes));
  if (t.sync_waits > 0)
    a.push_back(
        fmt::format("{} synchronising calls are taken to have waited for the GPU activity that ended "
                    "last inside them",
                    t.sync_waits));
  if (t.unexplained > 0)
    a.push_back(fmt::format(
        "{} activities waited more than {:.0f} µs with no dependency known ({} in all): {}", t.unexplained,
        static_cast<double>(options.unexplained_min_ns) / 1e3, duration_text(t.unexplained_ns),
        options.keep_unexplained ? "kept as measured delays" : "dropped"));
  a.push_back(
      fmt::format("{} matched collective instances couple their ranks: a member ends once the last "
                  "member arrived plus its measured transfer; other communication keeps its duration",
                  couplings));
  if (t.forced > 0)
    a.push_back(
        fmt::format("{} collective ends were computed before every member's arrival was (their "
                    "ranks' clocks disagree with the order of the collective): estimated arrivals",
                    t.forced));
  out.unexplained_ns = t.unexplained_ns;
  out.edited_activities = t.edited;
}

}  // namespace

struct ReplayGraph::Impl {
  const Profile* profile = nullptr;
  const Analysis* analysis = nullptr;
  ReplayOptions options;
  std::vector<RankGraph> graphs;
  std::vector<Coupling> couplings;
};

ReplayGraph::ReplayGraph(const Profile& profile, const Analysis& analysis, const ReplayOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.profile = &profile;
  m.analysis = &analysis;
  m.options = options;
  const std::size_t n = profile.ranks().size();
  m.graphs.resize(n);
  PhaseTimer timer("replay: graphs");
  parallel_for(n, options.threads,
               [&](std::size_t i) { m.graphs[i] = build_graph(profile, analysis, i, options); });
  m.couplings = couple_collectives(analysis, m.graphs);
}

ReplayGraph::~ReplayGraph() = default;
ReplayGraph::ReplayGraph(ReplayGraph&&) noexcept = default;
ReplayGraph& ReplayGraph::operator=(ReplayGraph&&) noexcept = default;

Replay ReplayGraph::run(const ReplayEdits& edits, bool keep_times) {
  Impl& m = *impl_;
  const Analysis& analysis = *m.analysis;
  const unsigned threads = m.options.threads;
  Replay out;
  const std::size_t n = m.graphs.size();
  {
    PhaseTimer timer("replay: edits");
    parallel_for(n, threads, [&](std::size_t i) { prepare_run(*m.profile, m.graphs[i], edits); });
  }
  if (edits.fix_straggler && !analysis.collectives.stragglers.empty())
    out.straggler = analysis.collectives.stragglers.front().rank;
  exclude_rank(m.couplings, m.graphs, out.straggler);
  {
    PhaseTimer timer("replay: simulation");
    Simulation(m.graphs, m.couplings, threads).run();
  }
  PhaseTimer timer("replay: steps and ranks");
  std::vector<TimeNs> last_arrival(m.couplings.size(), kUnset);
  for (std::size_t k = 0; k < m.couplings.size(); ++k) {
    const Coupling& c = m.couplings[k];
    for (const auto& [gi, act] : c.members)
      if (static_cast<std::int32_t>(gi) != c.excluded)
        last_arrival[k] = std::max(last_arrival[k], m.graphs[gi].start[act]);
  }
  std::vector<std::vector<ReplayedStep>> steps(n);
  out.ranks.resize(n);
  if (keep_times) out.times.resize(n);
  parallel_for(n, threads, [&](std::size_t i) {
    RankGraph& g = m.graphs[i];
    for (std::uint32_t k = 0; k < g.added_end.size(); ++k) place_added(g, k);
    place_sync_records(g);
    PathWalk path(g, last_arrival);
    replay_steps(g, analysis.ranks[i], path, steps[i]);
    const Occupancy r = occupancy(g, true);
    out.ranks[i] = {g.rank->rank,           r.span, r.busy, r.exposed_comm, g.measured.span, g.measured.busy,
                    g.measured.exposed_comm};
    if (keep_times) out.times[i] = {g.start, g.end, g.call_start, g.call_end, g.added_start, g.added_end};
  });
  for (const RankGraph& g : m.graphs) out.added_activities += static_cast<std::int64_t>(g.added_end.size());
  for (auto& s : steps) out.steps.insert(out.steps.end(), s.begin(), s.end());
  double sum = 0;
  std::size_t counted = 0;
  for (const ReplayedStep& s : out.steps) {
    if (s.measured_ns <= 0) continue;
    const double err = 100.0 * std::abs(static_cast<double>(s.replayed_ns - s.measured_ns)) /
                       static_cast<double>(s.measured_ns);
    sum += err;
    out.max_abs_error_pct = std::max(out.max_abs_error_pct, err);
    ++counted;
  }
  out.mean_abs_error_pct = counted > 0 ? sum / static_cast<double>(counted) : 0;
  add_assumptions(m.graphs, m.couplings.size(), m.options, out);
  return out;
}

Replay replay(const Profile& profile, const Analysis& analysis, const ReplayEdits& edits,
              const ReplayOptions& options) {
  return ReplayGraph(profile, analysis, options).run(edits, options.keep_times);
}

namespace {

// The calls of each thread of R (by Rank::call_threads) not inside another, in start order.
std::vector<std::vector<std::uint32_t>> outer_calls(const Rank& r) {
  std::vector<std::vector<std::uint32_t>> out(r.call_threads.size());
  std::vector<TimeNs> open_until(r.call_threads.size(), kUnset);
  for (std::uint32_t c = 0; c < r.api_calls.size(); ++c) {
    const ApiCall& call = r.api_calls[c];
    if (call.thread >= out.size() || call.start_ns < open_until[call.thread]) continue;
    out[call.thread].push_back(c);
    open_until[call.thread] = call.end_ns;
  }
  return out;
}

// The calls of thread (PID, TID), or none.
std::span<const std::uint32_t> calls_of(const Rank& r, const std::vector<std::vector<std::uint32_t>>& outer,
                                        std::int64_t pid, std::int64_t tid) {
  const auto it = std::lower_bound(r.call_threads.begin(), r.call_threads.end(), CallThread{pid, tid});
  if (it == r.call_threads.end() || it->pid != pid || it->tid != tid) return {};
  return outer[static_cast<std::size_t>(it - r.call_threads.begin())];
}

// Each stream's activities sorted by replayed start again; collectives pointed at their kernels' new places.
void sort_streams(Rank& r) {
  std::vector<std::uint32_t> moved_to(r.activities.size());
  std::vector<Activity> sorted;
  for (const GpuStream& s : r.streams) {
    std::vector<std::uint32_t> order(s.count);
    for (std::uint32_t k = 0; k < s.count; ++k) order[k] = s.first + k;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      return r.activities[x].start_ns < r.activities[y].start_ns;
    });
    for (std::uint32_t k = 0; k < s.count; ++k) moved_to[order[k]] = s.first + k;
  }
  sorted.resize(r.activities.size());
  for (std::uint32_t i = 0; i < r.activities.size(); ++i) sorted[moved_to[i]] = r.activities[i];
  r.activities = std::move(sorted);
  for (Collective& c : r.collectives)
    if (c.stream_index >= 0) c.activity = moved_to[c.activity];
}

std::shared_ptr<Rank> replayed_rank(const Rank& measured, const ReplayedTimes& t) {
  auto r = std::make_shared<Rank>(measured);
  const auto outer = outer_calls(measured);
  for (std::size_t i = 0; i < r->activities.size(); ++i) {
    r->activities[i].start_ns = t.start[i];
    r->activities[i].end_ns = std::max(t.start[i], t.end[i]);
  }
  for (std::size_t c = 0; c < r->api_calls.size(); ++c) {
    r->api_calls[c].start_ns = t.call_start[c];
    r->api_calls[c].end_ns = std::max(t.call_start[c], t.call_end[c]);
  }
  const auto move = [&](std::int64_t pid, std::int64_t tid, TimeNs& start, TimeNs& end) {
    const auto calls = calls_of(measured, outer, pid, tid);
    const TimeNs s = map_call_time(calls, measured.api_calls, t.call_start, t.call_end, start);
    end = std::max(s, map_call_time(calls, measured.api_calls, t.call_start, t.call_end, end));
    start = s;
  };
  for (const CpuTrack& track : r->tracks) {
    if (track.gpu) continue;
    auto first = r->ranges.begin() + track.first;
    for (auto it = first; it != first + track.count; ++it)
      move(track.pid, track.tid, it->start_ns, it->end_ns);
    std::stable_sort(first, first + track.count, [](const CpuRange& x, const CpuRange& y) {
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.depth < y.depth;
    });
  }
  for (Step& s : r->steps) move(s.pid, s.tid, s.start_ns, s.end_ns);
  for (Collective& c : r->collectives) {
    if (c.stream_index < 0) continue;
    c.start_ns = r->activities[c.activity].start_ns;
    c.end_ns = r->activities[c.activity].end_ns;
  }
  sort_streams(*r);
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = kUnset;
  for (const Activity& a : r->activities)
    first = std::min(first, a.start_ns), last = std::max(last, a.end_ns);
  r->gpu_first_ns = r->activities.empty() ? measured.gpu_first_ns : first;
  r->gpu_last_ns = r->activities.empty() ? measured.gpu_last_ns : last;
  for (const ApiCall& c : r->api_calls) first = std::min(first, c.start_ns), last = std::max(last, c.end_ns);
  for (const CpuRange& c : r->ranges) first = std::min(first, c.start_ns), last = std::max(last, c.end_ns);
  if (last != kUnset) r->first_ns = first, r->last_ns = last;
  return r;
}

// A string's id in STRINGS, added at the end when new.
StringId intern(std::vector<std::string>& strings, std::unordered_map<std::string, StringId>& ids,
                const std::string& text) {
  if (text.empty()) return kNoString;
  if (ids.empty())
    for (std::size_t k = 0; k < strings.size(); ++k) ids.try_emplace(strings[k], static_cast<StringId>(k));
  auto [it, added] = ids.try_emplace(text, static_cast<StringId>(strings.size()));
  if (added) strings.push_back(text);
  return it->second;
}

// Added activity X drawn at [START, END] as an activity of R (ID), its collective record when it is one.
Activity added_record(const AddedActivity& x, TimeNs start, TimeNs end, std::int64_t id,
                      std::vector<std::string>& strings, std::unordered_map<std::string, StringId>& ids) {
  Activity a{};
  a.start_ns = start;
  a.end_ns = std::max(start, end);
  a.id = id;
  a.correlation = kNull;
  a.name = intern(strings, ids, x.name);
  a.collective = -1;
  a.detail = kNoDetail;
  a.kind = ActivityKind::kKernel;
  return a;
}

Collective added_collective(const AddedActivity& x, const Activity& a, std::int64_t id, std::int32_t stream,
                            std::uint32_t index, std::vector<std::string>& strings,
                            std::unordered_map<std::string, StringId>& ids) {
  Collective c{};
  c.id = id;
  c.activity_id = a.id;
  c.seq = kNull;
  c.in_nelems = c.out_nelems = kNull;
  c.in_bytes = c.out_bytes = static_cast<std::int64_t>(std::llround(x.bytes));
  c.group_size = x.group_size > 0 ? x.group_size : kNull;
  c.channels = kNull;
  c.start_ns = a.start_ns, c.end_ns = a.end_ns;
  c.stream_index = stream;
  c.activity = index;
  c.op = intern(strings, ids, x.op);
  c.source = intern(strings, ids, "what-if");
  c.metadata = true;
  return c;
}

// R with the activities ADDED at their replayed times T: each on its AFTER's stream, or on a new stream after
// the streams of R's last device (so the streams stay sorted); a communication one with its collective.
// Every stream is then sorted by start again and the collectives by start.
void add_activities(Rank& r, const std::vector<AddedActivity>& added, const ReplayedTimes& t,
                    std::vector<std::string>& strings, std::unordered_map<std::string, StringId>& ids) {
  std::int64_t next_id = 1;
  for (const Activity& a : r.activities) next_id = std::max(next_id, a.id + 1);
  for (const Collective& c : r.collectives) next_id = std::max(next_id, c.id + 1);
  const std::size_t old_streams = r.streams.size();
  const auto stream_of = [&](std::uint32_t i) {
    const auto it =
        std::upper_bound(r.streams.begin(), r.streams.begin() + static_cast<std::ptrdiff_t>(old_streams), i,
                         [](std::uint32_t x, const GpuStream& s) { return x < s.first; });
    return static_cast<std::size_t>(it - r.streams.begin()) - 1;
  };
  std::vector<std::vector<std::uint32_t>> on_stream(old_streams + 1);  // added, per stream; the last: new
  for (std::uint32_t k = 0; k < added.size(); ++k)
    on_stream[added[k].place == AddedActivity::Place::kAfterOnStream && old_streams > 0
                  ? stream_of(added[k].after)
                  : old_streams]
        .push_back(k);
  if (!on_stream.back().empty()) {
    const std::int32_t device = r.streams.empty() ? 0 : r.streams.back().device;
    std::int64_t stream = 0;
    for (const GpuStream& s : r.streams)
      if (s.device == device) stream = std::max(stream, s.stream + 1);
    r.streams.push_back({device, stream, "added by the what-if", 0, 0});
  }
  std::vector<Activity> activities;
  std::vector<std::uint32_t> moved_to(r.activities.size());
  std::vector<Collective> new_collectives;
  for (std::size_t s = 0; s < r.streams.size(); ++s) {
    GpuStream& stream = r.streams[s];
    const auto first = static_cast<std::uint32_t>(activities.size());
    for (std::uint32_t i = stream.first; s < old_streams && i < stream.first + stream.count; ++i) {
      moved_to[i] = static_cast<std::uint32_t>(activities.size());
      activities.push_back(r.activities[i]);
    }
    for (const std::uint32_t k : on_stream[std::min(s, old_streams)]) {
      Activity a = added_record(added[k], t.added_start[k], t.added_end[k], next_id++, strings, ids);
      if (added[k].cls == ActivityClass::kComm) {
        a.collective = static_cast<std::int32_t>(r.collectives.size() + new_collectives.size());
        new_collectives.push_back(added_collective(added[k], a, next_id++, static_cast<std::int32_t>(s),
                                                   static_cast<std::uint32_t>(activities.size()), strings,
                                                   ids));
      }
      activities.push_back(a);
    }
    stream.first = first;
    stream.count = static_cast<std::uint32_t>(activities.size()) - first;
  }
  r.activities = std::move(activities);
  for (Collective& c : r.collectives)
    if (c.stream_index >= 0) c.activity = moved_to[c.activity];
  r.collectives.insert(r.collectives.end(), new_collectives.begin(), new_collectives.end());
  sort_streams(r);
  std::vector<std::uint32_t> order(r.collectives.size());
  for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return r.collectives[x].start_ns < r.collectives[y].start_ns;
  });
  std::vector<Collective> sorted;
  std::vector<std::int32_t> collective_at(order.size());
  for (std::uint32_t k = 0; k < order.size(); ++k) {
    collective_at[order[k]] = static_cast<std::int32_t>(k);
    sorted.push_back(r.collectives[order[k]]);
  }
  r.collectives = std::move(sorted);
  for (Activity& a : r.activities)
    if (a.collective >= 0) a.collective = collective_at[static_cast<std::size_t>(a.collective)];
  for (const TimeNs end : t.added_end) r.gpu_last_ns = std::max(r.gpu_last_ns, end);
  r.last_ns = std::max(r.last_ns, r.gpu_last_ns);
}

}  // namespace

Profile replayed_profile(const Profile& profile, const Replay& replay, const ReplayEdits& edits) {
  if (replay.times.size() != profile.ranks().size())
    throw Error(fmt::format("{}: the replay kept no times to draw", profile.path().string()));
  std::vector<std::shared_ptr<const Rank>> ranks;
  std::shared_ptr<std::vector<std::string>> strings;
  std::unordered_map<std::string, StringId> ids;
  for (std::size_t i = 0; i < profile.ranks().size(); ++i) {
    std::shared_ptr<Rank> r = replayed_rank(profile.ranks()[i], replay.times[i]);
    const ReplayedTimes& t = replay.times[i];
    if (i < edits.added.size() && !edits.added[i].empty() && t.added_end.size() == edits.added[i].size()) {
      if (!strings)
        strings = std::make_shared<std::vector<std::string>>(profile.strings() ? *profile.strings()
                                                                               : std::vector<std::string>{});
      add_activities(*r, edits.added[i], t, *strings, ids);
    }
    ranks.push_back(std::move(r));
  }
  return profile.with_ranks(ranks, strings);
}

std::string critical_path_text(const ReplayedStep& step, double min_share_pct) {
  TimeNs total = 0;
  for (const TimeNs t : step.critical_path) total += t;
  if (total <= 0) return "";
  std::array<std::size_t, kPathKindCount> order{};
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return step.critical_path[x] > step.critical_path[y];
  });
  std::string out;
  for (const std::size_t p : order) {
    const double share = 100.0 * static_cast<double>(step.critical_path[p]) / static_cast<double>(total);
    if (step.critical_path[p] == 0 || share < min_share_pct) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {:.0f} %", to_string(static_cast<PathKind>(p)), share);
  }
  return out;
}

bool parse_scale_edit(std::string_view text, ScaleEdit& out, std::string& error) {
  const auto eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    error = fmt::format("--scale {}: expected CLASS=FACTOR or PATTERN=FACTOR (gemm=0.5)", text);
    return false;
  }
  const std::string_view what = text.substr(0, eq), number = text.substr(eq + 1);
  double factor = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), factor);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(factor) || factor <= 0) {
    error = fmt::format("--scale {}: the factor must be a positive number", text);
    return false;
  }
  out = {};
  out.factor = factor;
  out.text = std::string(text);
  const std::string name = vocabulary::lower(what);
  if (name == "comm") {
    out.target = ScaleEdit::Target::kComm;
  } else if (name == "memcpy" || name == "memory") {
    out.target = ScaleEdit::Target::kMemory;
  } else if (parse_work_category(name, out.category) && out.category != WorkCategory::kOther) {
    out.target = ScaleEdit::Target::kCategory;
  } else {
    out.target = ScaleEdit::Target::kPattern;
    out.pattern = name;
  }
  return true;
}

}  // namespace meshscope::measure
