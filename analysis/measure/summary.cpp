#include "analysis/measure/summary.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/measure/classify.hpp"
#include "analysis/measure/correlation.hpp"
#include "analysis/measure/rank_reader.hpp"
#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/parallel.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"
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

// CPU operators by name: inclusive time and self time (without the CPU ops nested in them), whole rank and
// inside steps; and whether any is a backward operator. Fed each thread's operators in load order (threads
// may take turns), from a loaded rank or streamed from the file (Profile::stream_operators), with memory
// for the operators open at once, not for the rank's: open operators of the same start, end and name (a
// trace of millions of identical nested operators) are one entry.
class OperatorTotals final : public OperatorSink {
 public:
  explicit OperatorTotals(const StepFrame& frame) : frame_(frame) {}

  void add(const OperatorRow& row) override {
    if (row.kind != RangeKind::kCpuOp) {
      if (row.kind == RangeKind::kPythonFunction) ++python_functions_;
      return;
    }
    ++cpu_ops_;
    if (!open_ || thread_ != std::make_pair(row.pid, row.tid)) {
      thread_ = {row.pid, row.tid};
      open_ = &threads_[thread_];
    }
    auto& open = *open_;
    while (!open.empty() && open.back().end <= row.start_ns) {
      close(open.back());
      open.pop_back();
    }
    const TimeNs d = row.end_ns - row.start_ns;
    if (!open.empty()) {
      Open& parent = open.back();
      parent.self_innermost -= std::min(d, parent.end - row.start_ns);
      if (parent.start == row.start_ns && parent.end == row.end_ns && parent.name == row.name) {
        // Its child's twin: the innermost of the entry now, the one it was is done but for its closing.
        parent.self_others += parent.self_innermost;
        parent.self_innermost = d;
        ++parent.count;
        return;
      }
    }
    const bool in_step = !frame_.has_steps || step_at(frame_.starts, frame_.ends, row.start_ns) >= 0;
    open.push_back({row.start_ns, row.end_ns, row.name, in_step, 1, d, 0});
  }

  void restart() override {
    threads_.clear();
    open_ = nullptr;
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
  };
  void close(const Open& o) {
    OpSummary& op = by_name_[o.name];
    const TimeNs d = (o.end - o.start) * o.count, self = o.self_innermost + o.self_others;
    op.count += o.count;
    op.total_ns += d;
    op.self_ns += self;
    if (o.in_step) {
      op.step_ns += d;
      op.self_step_ns += self;
    }
  }

  const StepFrame& frame_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Open>> threads_;
  std::pair<std::int64_t, std::int64_t> thread_{0, 0};
  std::vector<Open>* open_ = nullptr;
  std::map<StringId, OpSummary> by_name_;
  std::int64_t cpu_ops_ = 0, python_functions_ = 0;
};

void summarize_ops(const Profile& p, const Rank& r, const StepFrame& frame, RankSummary& out) {
  OperatorTotals totals(frame);
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

// The summary of RR's rank of P (its events loaded). IDENTITY: its collectives' (CollectiveReport::identity).
// The collective wait and transfer are RR's: set by measure::combine, the caller's to fill in otherwise.
// OPERATORS: the rank's CPU operators and Python functions given to an OperatorTotals of the rank's step
// frame (when the rank was loaded without them); null: summed from the rank's own ranges.
RankSummary summarize_rank(const Profile& p, const RankResult& rr,
                           const std::vector<CollectiveIdentity>* identity,
                           const std::function<void(OperatorTotals&)>& operators = {}) {
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
  if (operators) {
    OperatorTotals totals(frame);
    operators(totals);
    totals.finish(p, out);
    out.counts.cpu_op = totals.cpu_ops();
    out.counts.python_function = totals.python_functions();
  } else {
    summarize_ops(p, r, frame, out);
  }
  by_time_descending(out.kernels);
  by_time_descending(out.ops);
  by_time_descending(out.collectives);
  out.overview = overview_of(r, rr);
  return out;
}

}  // namespace

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
// Writing

namespace {

constexpr std::string_view kSummaryMetaKey = "summaries";
constexpr std::string_view kSummaryVersion = "1";

// Runs WORK in one write transaction on DB: all of it lands, or (on any exception) none of it.
template <typename Work>
void in_transaction(sql::Database& db, Work&& work) {
  db.exec("BEGIN IMMEDIATE");
  try {
    work();
    db.exec("COMMIT");
  } catch (...) {
    try {
      db.exec("ROLLBACK");
    } catch (...) {  // the exception being thrown says what went wrong
    }
    throw;
  }
}

void bind_breakdown(sql::Statement& s, int first, const Breakdown& b) {
  const std::int64_t values[] = {b.start_ns,   b.end_ns,          b.span_ns,   b.busy_ns,        b.idle_ns,
                                 b.compute_ns, b.comm_ns,         b.memory_ns, b.memory_only_ns, b.sync_ns,
                                 b.overlap_ns, b.exposed_comm_ns, b.activities};
  for (std::size_t i = 0; i < std::size(values); ++i) s.bind(first + static_cast<int>(i), values[i]);
}

// The summary tables' CREATE statements of schema.sql, for profiles written before they existed. Statements
// end where SQLite says one is complete (a ';' inside a comment does not end one).
void create_missing_tables(sql::Database& db) {
  const std::string_view ddl = schema_tables_sql();
  std::string statement;
  std::size_t pos = 0;
  while (pos < ddl.size()) {
    const std::size_t eol = std::min(ddl.find('\n', pos), ddl.size());
    statement.append(ddl.substr(pos, eol - pos)).push_back('\n');
    pos = eol + 1;
    if (!sqlite3_complete(statement.c_str())) continue;
    const std::size_t create = statement.find("CREATE TABLE summary_");
    if (create != std::string::npos) {
      const std::size_t name_start = create + std::string_view("CREATE TABLE ").size();
      const std::string name =
          statement.substr(name_start, statement.find_first_of(" (", name_start) - name_start);
      if (!db.has_table(name)) db.exec(statement.substr(create));
    }
    statement.clear();
  }
}

// One row of a summary table keyed by rank and name: the rank, the name, then VALUES in the table's order.
void insert_named_row(sql::Statement& s, std::int32_t rank, std::string_view name,
                      std::initializer_list<std::int64_t> values) {
  s.bind(1, rank);
  s.bind_text(2, name);
  int column = 3;
  for (const std::int64_t v : values) s.bind(column++, v);
  s.run();
}

void write_rank(sql::Statement& ranks, sql::Statement& steps, sql::Statement& streams,
                sql::Statement& kernels, sql::Statement& ops, sql::Statement& collectives,
                sql::Statement& overview, const RankSummary& r) {
  int c = 1;
  ranks.bind(c++, r.rank);
  bind_breakdown(ranks, c, r.total);
  c += 13;
  ranks.bind(c++, r.outside_steps.span_ns);
  ranks.bind(c++, r.outside_steps.busy_ns);
  ranks.bind_text(c++, r.step_source);
  ranks.bind(c++, r.unlinked_activities);
  ranks.bind(c++, r.collective_wait_ns);
  ranks.bind(c++, r.collective_transfer_ns);
  ranks.bind(c++, r.kernel_ns);
  if (r.training) {
    ranks.bind(c++, *r.training ? 1 : 0);
  } else {
    ranks.bind_null(c++);
  }
  const EventCounts& n = r.counts;
  for (std::int64_t v : {n.kernel, n.memcpy, n.memset, n.sync, n.runtime, n.driver, n.cpu_op, n.annotation,
                         n.python_function, n.step, n.gpu_annotation, n.nvtx, n.other, n.collective, n.flow})
    ranks.bind(c++, v);
  ranks.bind(c++, r.overview.bucket_log2);
  ranks.bind(c++, r.overview.first_bucket);
  ranks.run();

  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepSummary& s = r.steps[i];
    steps.bind(1, r.rank);
    steps.bind(2, static_cast<std::int64_t>(i));
    steps.bind(3, s.number);
    steps.bind(4, s.cpu_start_ns);
    steps.bind(5, s.cpu_end_ns);
    bind_breakdown(steps, 6, s.gpu);
    steps.run();
  }
  for (const StreamSummary& s : r.streams) {
    const StreamIdle& i = s.idle;
    const std::int64_t values[] = {r.rank,     s.device,  s.stream,        i.span_ns,
                                   i.busy_ns,  i.idle_ns, i.host_bound_ns, i.kernel_gap_ns,
                                   i.other_ns, i.gaps,    i.compute_ns,    static_cast<std::int64_t>(i.work)};
    for (std::size_t k = 0; k < std::size(values); ++k) streams.bind(static_cast<int>(k) + 1, values[k]);
    streams.run();
  }
  for (const KernelSummary& k : r.kernels)
    insert_named_row(kernels, r.rank, k.name,
                     {static_cast<std::int64_t>(k.cls), k.count, k.total_ns, k.step_ns, k.min_ns, k.max_ns});
  for (const OpSummary& o : r.ops)
    insert_named_row(ops, r.rank, o.name, {o.count, o.total_ns, o.self_ns, o.step_ns, o.self_step_ns});
  for (const CollectiveSummary& o : r.collectives)
    insert_named_row(collectives, r.rank, o.op, {o.group_size, o.bytes, o.count, o.total_ns, o.step_ns});
  for (std::size_t b = 0; b < r.overview.buckets.size(); ++b) {
    const OverviewBucket& o = r.overview.buckets[b];
    const std::int64_t values[] = {r.rank,
                                   r.overview.first_bucket + static_cast<std::int64_t>(b),
                                   o.compute_ns,
                                   o.comm_ns,
                                   o.exposed_comm_ns,
                                   o.memory_only_ns,
                                   o.busy_ns,
                                   o.span_ns};
    for (std::size_t k = 0; k < std::size(values); ++k) overview.bind(static_cast<int>(k) + 1, values[k]);
    overview.run();
  }
}

}  // namespace

void write_summary(const std::filesystem::path& path, const ProfileSummary& summary) {
  sql::Database db(path, false);
  db.harden();  // the file may be anyone's (an in-place summarize writes a copy of it): nothing of it runs
  in_transaction(db, [&] {
    create_missing_tables(db);
    for (const auto& t :
         {schema::SummaryRanks::kName, schema::SummarySteps::kName, schema::SummaryStreams::kName,
          schema::SummaryKernels::kName, schema::SummaryOps::kName, schema::SummaryCollectives::kName,
          schema::SummaryOverview::kName})
      db.exec(fmt::format("DELETE FROM {}", t));
    auto ranks = db.prepare(schema::insert_sql<schema::SummaryRanks>());
    auto steps = db.prepare(schema::insert_sql<schema::SummarySteps>());
    auto streams = db.prepare(schema::insert_sql<schema::SummaryStreams>());
    auto kernels = db.prepare(schema::insert_sql<schema::SummaryKernels>());
    auto ops = db.prepare(schema::insert_sql<schema::SummaryOps>());
    auto collectives = db.prepare(schema::insert_sql<schema::SummaryCollectives>());
    auto overview = db.prepare(schema::insert_sql<schema::SummaryOverview>());
    for (const RankSummary& r : summary.ranks)
      write_rank(ranks, steps, streams, kernels, ops, collectives, overview, r);
    auto meta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    meta.bind_text(1, kSummaryMetaKey);
    meta.bind_text(2, kSummaryVersion);
    meta.run();
  });
}

namespace {

// The tables of a profile's description and summaries: what a summary part keeps and a merge copies.
constexpr const char* kPartTables[] = {"ranks",           "devices",       "process_groups",
                                       "streams",         "threads",       "diagnostics",
                                       "summary_ranks",   "summary_steps", "summary_streams",
                                       "summary_kernels", "summary_ops",   "summary_collectives",
                                       "summary_overview"};

// The rows a merge copies from a part (for the ranks it gives): every part table but meta, enums and strings.
bool copied_by_merge(std::string_view table) {
  for (const char* t : kPartTables) {
    if (table == t) return true;
  }
  return false;
}

bool kept_in_part(std::string_view table) {
  return copied_by_merge(table) || table == "meta" || table == "enums" || table == "strings";
}

}  // namespace

void drop_events(const std::filesystem::path& path) {
  if (!read_summary(path))
    fail("{}: has no summaries: dropping its events would lose every figure", path.string());
  sql::Database db(path, false);
  in_transaction(db, [&] {
    // The event tables go (activities stays, empty: it marks the file as a profile), and the strings only
    // events named (the description and the summaries hold their names as text).
    for (const schema::TableDescription& t : schema::all_tables()) {
      if (kept_in_part(t.name) || !db.has_table(t.name)) continue;
      db.exec(std::string(std::string_view(t.name) == "activities" ? "DELETE FROM " : "DROP TABLE ") +
              t.name);
    }
    db.exec("DELETE FROM strings");
    auto meta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('events', 'none')");
    meta.run();
  });
  // Small pages: a part is mostly empty tables, one page each.
  db.exec("PRAGMA page_size = 4096");
  db.exec("VACUUM");
}

namespace {

// What a merge checks a part against: the job's world size and time window so far, the ranks and the
// part that gave each.
struct JobSoFar {
  std::optional<std::int64_t> world_size;
  std::filesystem::path world_size_from;
  std::optional<std::pair<TimeNs, TimeNs>> window;
  std::filesystem::path window_from;

  // FROM: the part (or the job) P was read from. A rank of the job that came from a trace (`--events`) is
  // named by its trace, not by the job being written.
  void check(const Profile& p, const std::filesystem::path& from, bool name_traces = false) {
    for (const Rank& r : p.ranks()) {
      const std::filesystem::path named =
          name_traces && !r.source_file.empty() ? std::filesystem::path(r.source_file) : from;
      if (r.world_size != kNull) {
        if (world_size && *world_size != r.world_size)
          fail("{}: rank {} is of a job of {} ranks, {} of {}: the parts come from different jobs",
               from.string(), r.rank, r.world_size, world_size_from.string(), *world_size);
        if (!world_size) world_size = r.world_size, world_size_from = named;
      }
      if (r.first_ns == 0 && r.last_ns == 0) continue;  // no events recorded
      // Ranks of one job overlap in time; parts hours apart were recorded by different runs (as import).
      constexpr TimeNs kHour = 3'600'000'000'000;
      if (window && (r.first_ns > window->second + kHour || window->first > r.last_ns + kHour))
        fail(
            "{}: rank {} was recorded at a different time than {} (no overlap within an hour): the parts "
            "come from different jobs",
            from.string(), r.rank, window_from.string());
      if (!window) {
        window = std::make_pair(r.first_ns, r.last_ns), window_from = named;
      } else {
        window->first = std::min(window->first, r.first_ns);
        window->second = std::max(window->second, r.last_ns);
      }
    }
  }
};

}  // namespace

std::vector<std::int32_t> merge_summary_parts(const std::vector<std::filesystem::path>& parts,
                                              const std::filesystem::path& job) {
  std::set<std::int32_t> present;
  JobSoFar so_far;
  {
    const Profile existing = Profile::load(job, LoadOptions{.events = false});
    so_far.check(existing, job, true);
    for (const Rank& r : existing.ranks()) present.insert(r.rank);
  }
  // Every part is checked whole (its description by the profile loader, its summaries by read_summary,
  // the two against each other and against the job) before anything is copied.
  std::map<std::int32_t, std::filesystem::path> given_by;
  std::vector<std::pair<std::filesystem::path, std::set<std::int32_t>>> copies;
  std::uintmax_t part_bytes = 0;
  for (const auto& part : parts) {
    const Profile described = Profile::load(part, LoadOptions{.events = false});
    const auto summary = read_summary(part);
    if (!summary)
      fail("{}: has no summaries (summarise it first: meshscope summarize {})", part.string(), part.string());
    std::set<std::int32_t> summarised;
    for (const RankSummary& r : summary->ranks) summarised.insert(r.rank);
    for (const Rank& r : described.ranks()) {
      if (!summarised.count(r.rank))
        fail("{}: rank {} is described but has no summary (a damaged part?)", part.string(), r.rank);
    }
    so_far.check(described, part);
    std::set<std::int32_t> ranks;
    for (const RankSummary& r : summary->ranks) {
      if (present.count(r.rank)) continue;
      auto [it, added] = given_by.emplace(r.rank, part);
      if (!added)
        fail("{}: rank {} is in {} too: the parts overlap", part.string(), r.rank, it->second.string());
      ranks.insert(r.rank);
    }
    std::error_code error;
    part_bytes += std::filesystem::file_size(part, error);
    copies.emplace_back(part, std::move(ranks));
  }
  sql::Database out(job, false);
  out.harden(part_bytes);  // the copies' work is in proportion to the parts' size
  std::vector<std::int32_t> copied;
  in_transaction(out, [&] {
    create_missing_tables(out);
    for (const auto& [part, ranks] : copies) {
      if (ranks.empty()) continue;
      sql::Database in(part, true);
      for (const schema::TableDescription& t : schema::all_tables()) {
        if (!copied_by_merge(t.name) || !in.table_columns(t.name)) continue;
        const std::string columns = schema::column_list(t.columns);
        auto select = in.prepare(fmt::format("SELECT {} FROM {}", columns, t.name));
        auto insert = out.prepare(schema::insert_sql(t.name, t.columns));
        const int n = static_cast<int>(t.columns.size());
        while (select.step()) {
          // Rows of the ranks this part gives (a diagnostic of the whole job, rank NULL, stays with the job).
          if (select.column_is_null(0) || !ranks.count(static_cast<std::int32_t>(select.column_int(0))))
            continue;
          for (int c = 0; c < n; ++c) {
            if (sqlite3_bind_value(insert.handle(), c + 1, sqlite3_column_value(select.handle(), c)) !=
                SQLITE_OK)
              fail("{}: cannot copy a row of {} into {}", part.string(), t.name, job.string());
          }
          insert.run();
        }
      }
      copied.insert(copied.end(), ranks.begin(), ranks.end());
    }
    auto meta = out.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('summaries', ?)");
    meta.bind_text(1, kSummaryVersion);
    meta.run();
  });
  std::sort(copied.begin(), copied.end());
  return copied;
}

namespace {

// How the summary pass loads a profile's events: CPU operators for the operator rows, no launch
// configurations or links (the summaries read neither).
constexpr LoadOptions kSummaryLoad{.kernel_details = false, .links = false};
// A large rank (summary.hpp kSummaryLargeRankRanges) is loaded alone, without its CPU operators but for the
// process groups' calls the analysis names collectives by; its operators' totals are streamed from the file.
constexpr LoadOptions kSummaryLargeRankLoad{
    .cpu_operators = false, .kernel_details = false, .links = false, .process_group_calls = true};

// The rowids TABLE spans (max - min + 1; the writers' ids are 1..N, so its rows), saturated; 0 for a table
// the profile lacks or an empty one. Two edge lookups, no scan.
std::uint64_t rowid_span(sql::Database& db, EventTable table) {
  const char* name = table_name(table);
  if (!db.table_columns(name)) return 0;
  auto edge = [&](const char* which) -> std::optional<std::int64_t> {
    auto s = db.prepare(fmt::format("SELECT {}(rowid) FROM \"{}\"", which, name));
    if (!s.step() || s.column_is_null(0)) return std::nullopt;
    return s.column_int(0);
  };
  const auto low = edge("min"), high = edge("max");
  if (!low || !high || *high < *low) return 0;
  const std::uint64_t width = static_cast<std::uint64_t>(*high) - static_cast<std::uint64_t>(*low);
  return width == std::numeric_limits<std::uint64_t>::max() ? width : width + 1;
}

std::int64_t counted_rows(sql::Database& db, EventTable table) {
  const char* name = table_name(table);
  if (!db.table_columns(name)) return 0;
  auto s = db.prepare(fmt::format("SELECT count(*) FROM \"{}\"", name));
  return s.step() ? s.column_int(0) : 0;
}

}  // namespace

std::optional<ProfileSummary> summarize_in_batches(const std::filesystem::path& path,
                                                   std::int64_t stream_rows, unsigned threads,
                                                   std::int64_t large_rank_ranges) {
  // The size first (a small profile, the usual import of a few traces, pays two lookups a table); a file
  // that cannot be read that way is left to the whole load, whose errors name the problem.
  std::array<std::uint64_t, kEventTableCount> spans{};
  try {
    sql::Database db(path, true);
    std::uint64_t rows = 0;
    for (int t = 0; t < kEventTableCount; ++t) {
      spans[static_cast<std::size_t>(t)] = rowid_span(db, static_cast<EventTable>(t));
      rows = std::max(rows, rows + spans[static_cast<std::size_t>(t)]);  // saturated
    }
    if (rows < static_cast<std::uint64_t>(std::max<std::int64_t>(stream_rows, 0))) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  const RankRowIndex index = index_rank_rows(path);
  if (interleaved(index)) return std::nullopt;

  const std::size_t n = description.ranks().size();
  std::vector<RankSummary> summaries(n);
  std::vector<std::shared_ptr<const Rank>> thin(n);
  std::vector<TableRows> loaded(n);
  const ProfileSummary nothing_to_check;
  Options analysis;
  analysis.threads = threads;
  const RankBatches read{.description = description,
                         .summary = nothing_to_check,
                         .index = index,
                         .load = kSummaryLoad,
                         .large_rank_ranges = large_rank_ranges,
                         .large_load = kSummaryLargeRankLoad,
                         .analysis = analysis};
  RankStream stream = stream_ranks(read, [&](const Profile& composed, std::size_t ri, RankPart& part,
                                             const RankRows& rows, const LoadOptions& load) {
    const Rank& rank = composed.ranks()[ri];
    const std::vector<CollectiveIdentity> identity = identify_collectives(composed, rank, part.cpu_ops);
    std::function<void(OperatorTotals&)> streamed;
    if (!load.cpu_operators)
      streamed = [&](OperatorTotals& totals) { composed.stream_operators(rows, totals); };
    summaries[ri] = summarize_rank(composed, part.result, &identity, streamed);
    // The ranges read: those loaded but for the operators, which were streamed.
    loaded[ri] = loaded_rows(rank);
    auto& ranges = loaded[ri][static_cast<std::size_t>(EventTable::kRanges)];
    const EventCounts held = count_events(rank);
    ranges += summaries[ri].counts.cpu_op + summaries[ri].counts.python_function - held.cpu_op -
              held.python_function;
    thin[ri] = std::make_shared<const Rank>(without_event_lists(rank));
  });
  // A row is read by its own rank alone: when the ranks read as many rows as each table holds, the runs held
  // them all (rowids dense: their span is the count; else the table is counted).
  {
    sql::Database db(path, true);
    for (int t = 0; t < kEventTableCount; ++t) {
      std::int64_t sum = 0;
      for (const TableRows& rows : loaded) sum += rows[static_cast<std::size_t>(t)];
      if (spans[static_cast<std::size_t>(t)] == static_cast<std::uint64_t>(sum)) continue;
      if (counted_rows(db, static_cast<EventTable>(t)) != sum) return std::nullopt;
    }
  }
  ::malloc_trim(0);
  const Profile profile = description.with_ranks(thin, stream.strings, &stream.counts);
  const Analysis combined = combine(profile, std::move(stream.parts), {}, analysis);
  ProfileSummary out;
  out.path = profile.path();
  out.world_size = profile.world_size();
  for (std::size_t ri = 0; ri < n; ++ri) {
    summaries[ri].collective_wait_ns = combined.ranks[ri].collective_wait_ns;
    summaries[ri].collective_transfer_ns = combined.ranks[ri].collective_transfer_ns;
  }
  out.ranks = std::move(summaries);
  std::sort(out.ranks.begin(), out.ranks.end(),
            [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  return out;
}

ProfileSummary compute_summaries(const std::filesystem::path& path, std::int64_t stream_rows) {
  std::optional<ProfileSummary> summary;
  {
    PhaseTimer timer("summaries: in batches of ranks");
    summary = summarize_in_batches(path, stream_rows);
  }
  if (!summary) {
    PhaseTimer timer("summaries: from the whole profile");
    const Profile profile = Profile::load(path, kSummaryLoad);
    summary = summarize(profile, analyze(profile));
  }
  return std::move(*summary);
}

void add_summaries(const std::filesystem::path& path, std::int64_t stream_rows) {
  const ProfileSummary summary = compute_summaries(path, stream_rows);
  PhaseTimer timer("summaries: write");
  write_summary(path, summary);
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
    const std::filesystem::path& path, const std::vector<std::pair<std::int32_t, std::string>>& rank_files) {
  std::lock_guard lock(state_->mutex);
  if (rank_files.empty()) return std::nullopt;
  const Profile description = Profile::load(path, LoadOptions{.events = false});
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

void ImportSummaries::write(const std::filesystem::path& path,
                            const std::vector<std::pair<std::int32_t, std::string>>& rank_files,
                            std::int64_t stream_rows) {
  std::optional<ProfileSummary> summary;
  {
    PhaseTimer timer("summaries: from the rows read");
    summary = combined(path, rank_files);
  }
  if (!summary) {
    add_summaries(path, stream_rows);
    return;
  }
  PhaseTimer timer("summaries: write");
  write_summary(path, *summary);
}

// ---------------------------------------------------------------------------------------------------------
// Reading

namespace {

constexpr TimeNs kTimeLimit = TimeNs{1} << 62;

// The durations and counts of one file's summary tables added up so far.
struct FileSums {
  std::int64_t durations = 0, counts = 0;
};

// One summary table read with its declared columns checked (the file may be anyone's).
class SummaryReader {
 public:
  template <typename Table>
  static SummaryReader of(sql::Database& db, std::string_view order, FileSums& sums) {
    return SummaryReader(db, Table::kName, Table::kColumns, order, sums);
  }

  SummaryReader(sql::Database& db, const char* table, std::span<const schema::Column> columns,
                std::string_view order, FileSums& sums)
      : path_(db.path()), table_(table), columns_(columns), sums_(&sums) {
    const auto declared = db.table_columns(table);
    if (!declared) fail("{}: summaries recorded but no {} table", path_.string(), table);
    for (const schema::Column& c : columns) {
      const auto found = declared->find(c.name);
      if (found == declared->end() || found->second == sql::kComputedColumn ||
          sql::affinity_of(found->second) != c.affinity)
        fail("{}: {}.{} is missing or not of the declared type (a damaged file?)", path_.string(), table,
             c.name);
    }
    statement_ =
        db.prepare(fmt::format("SELECT {} FROM {} ORDER BY {}", schema::column_list(columns), table, order));
  }

  bool step() {
    if (!statement_.step()) return false;
    ++row_;
    return true;
  }
  // Integer column I; NULL reads as FALLBACK. Anything else is a damaged file.
  std::int64_t integer(int i, std::int64_t fallback = 0) const {
    std::int64_t v = 0;
    const int type = statement_.column_type_and_int(i, v);
    if (type == SQLITE_INTEGER) return v;
    if (type == SQLITE_NULL) return fallback;
    bad(i, "is not an integer");
  }
  std::optional<std::int64_t> optional_integer(int i) const {
    if (statement_.column_is_null(i)) return std::nullopt;
    return integer(i);
  }
  // The file is anyone's: a time lies within ±2^62 ns, as the event tables' do. Durations and counts are
  // never negative, and those of the whole file add up to at most 2^62 each, so that no sum a reader forms of
  // them (per rank, per step, over the job) can wrap.
  TimeNs time(int i) const {
    const std::int64_t v = integer(i);
    if (v < -kTimeLimit || v > kTimeLimit) bad(i, "is out of range (beyond ±2^62 ns)");
    return v;
  }
  TimeNs duration(int i) const { return add_up(i, sums_->durations, "durations"); }
  std::int64_t count(int i) const { return add_up(i, sums_->counts, "counts"); }

  std::string text(int i) const {
    const int type = statement_.column_type(i);
    if (type != SQLITE_TEXT && type != SQLITE_NULL) bad(i, "is not text");
    return statement_.column_text(i);
  }
  [[noreturn]] void bad(int i, std::string_view problem) const {
    fail("{}: {} row {}: {} {}", path_.string(), table_, row_, columns_[static_cast<std::size_t>(i)].name,
         problem);
  }
  [[noreturn]] void bad_row(std::string_view problem) const {
    fail("{}: {} row {}: {}", path_.string(), table_, row_, problem);
  }

 private:
  std::int64_t add_up(int i, std::int64_t& sum, std::string_view what) const {
    const std::int64_t v = integer(i);
    if (v < 0) bad(i, "is negative");
    if (__builtin_add_overflow(sum, v, &sum) || sum > kTimeLimit)
      bad(i, fmt::format("brings the file's {} beyond 2^62 (a damaged file?)", what));
    return v;
  }

  std::filesystem::path path_;
  const char* table_;
  std::span<const schema::Column> columns_;
  FileSums* sums_;
  sql::Statement statement_;
  std::int64_t row_ = 0;
};

Breakdown read_breakdown(const SummaryReader& r, int first) {
  Breakdown b;
  b.start_ns = r.time(first);
  b.end_ns = r.time(first + 1);
  if (b.end_ns < b.start_ns) r.bad(first + 1, "ends before the start");
  TimeNs* durations[] = {&b.span_ns,   &b.busy_ns,        &b.idle_ns, &b.compute_ns, &b.comm_ns,
                         &b.memory_ns, &b.memory_only_ns, &b.sync_ns, &b.overlap_ns, &b.exposed_comm_ns};
  for (std::size_t i = 0; i < std::size(durations); ++i)
    *durations[i] = r.duration(first + 2 + static_cast<int>(i));
  b.activities = r.count(first + 12);
  return b;
}

ActivityClass class_of(const SummaryReader& r, int i) {
  const std::int64_t v = r.integer(i);
  if (v < 0 || v >= kClassCount) r.bad(i, "is not a class (0..3)");
  return static_cast<ActivityClass>(v);
}

// The summary of RANK; a row for a rank without a summary_ranks row is a damaged file.
RankSummary& rank_of(std::vector<RankSummary>& ranks, const SummaryReader& r) {
  const std::int64_t rank = r.integer(0);
  auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                             [](const RankSummary& s, std::int64_t v) { return s.rank < v; });
  if (it == ranks.end() || it->rank != rank) r.bad_row(fmt::format("rank {} has no summary_ranks row", rank));
  return *it;
}

void read_ranks(sql::Database& db, ProfileSummary& out, FileSums& sums) {
  auto r = SummaryReader::of<schema::SummaryRanks>(db, "rank", sums);
  while (r.step()) {
    RankSummary s;
    int c = 0;
    const std::int64_t rank = r.integer(c++);
    if (rank < 0 || rank > std::numeric_limits<std::int32_t>::max()) r.bad(0, "is not a rank");
    if (!out.ranks.empty() && out.ranks.back().rank == rank) r.bad(0, "repeats a rank");
    s.rank = static_cast<std::int32_t>(rank);
    s.total = read_breakdown(r, c);
    c += 13;
    s.outside_steps.span_ns = r.duration(c++);
    s.outside_steps.busy_ns = r.duration(c++);
    s.step_source = r.text(c++);
    s.unlinked_activities = r.count(c++);
    s.collective_wait_ns = r.duration(c++);
    s.collective_transfer_ns = r.duration(c++);
    s.kernel_ns = r.duration(c++);
    if (const auto t = r.optional_integer(c++)) s.training = *t != 0;
    EventCounts& n = s.counts;
    for (std::int64_t* v :
         {&n.kernel, &n.memcpy, &n.memset, &n.sync, &n.runtime, &n.driver, &n.cpu_op, &n.annotation,
          &n.python_function, &n.step, &n.gpu_annotation, &n.nvtx, &n.other, &n.collective, &n.flow})
      *v = r.count(c++);
    const std::int64_t log2 = r.integer(c);
    if (log2 < 0 || log2 > 62) r.bad(c, "is not a bucket width (0..62)");
    s.overview.bucket_log2 = static_cast<int>(log2);
    // The first bucket starts at first_bucket << bucket_log2, a time within ±2^62 ns.
    const std::int64_t first = r.integer(c + 1);
    const std::int64_t reach = kTimeLimit >> log2;
    if (first < -reach || first > reach) r.bad(c + 1, "starts out of range (beyond ±2^62 ns)");
    s.overview.first_bucket = first;
    out.ranks.push_back(std::move(s));
  }
}

void read_rows(sql::Database& db, ProfileSummary& out, FileSums& sums) {
  auto& ranks = out.ranks;
  {
    auto r = SummaryReader::of<schema::SummarySteps>(db, "rank, ordinal", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      StepSummary step;
      step.number = r.integer(2);
      step.cpu_start_ns = r.time(3);
      step.cpu_end_ns = r.time(4);
      if (step.cpu_end_ns < step.cpu_start_ns) r.bad(4, "ends before the start");
      step.gpu = read_breakdown(r, 5);
      s.steps.push_back(step);
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryStreams>(db, "rank, device, stream", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      StreamSummary st;
      const std::int64_t device = r.integer(1);
      if (device < 0 || device > std::numeric_limits<std::int32_t>::max()) r.bad(1, "is not a device");
      st.device = static_cast<std::int32_t>(device);
      st.stream = r.integer(2);
      StreamIdle& i = st.idle;
      i.stream_index = static_cast<std::uint32_t>(s.streams.size());
      TimeNs* durations[] = {&i.span_ns,       &i.busy_ns,       &i.idle_ns,
                             &i.host_bound_ns, &i.kernel_gap_ns, &i.other_ns};
      for (std::size_t k = 0; k < std::size(durations); ++k)
        *durations[k] = r.duration(3 + static_cast<int>(k));
      i.gaps = r.count(9);
      i.compute_ns = r.duration(10);
      i.work = class_of(r, 11);
      s.streams.push_back(st);
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryKernels>(db, "rank, total_ns DESC, rowid", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      s.kernels.push_back({r.text(1), class_of(r, 2), r.count(3), r.duration(4), r.duration(5), r.duration(6),
                           r.duration(7)});
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryOps>(db, "rank, total_ns DESC, rowid", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      s.ops.push_back({r.text(1), r.count(2), r.duration(3), r.duration(4), r.duration(5), r.duration(6)});
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryCollectives>(db, "rank, total_ns DESC, rowid", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      s.collectives.push_back({r.text(1), r.count(2), r.count(3), r.count(4), r.duration(5), r.duration(6)});
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryOverview>(db, "rank, bucket", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      const std::int64_t bucket = r.integer(1);
      const std::int64_t slot = bucket - s.overview.first_bucket;
      // Buckets are written contiguously from the first, at most kOverviewBuckets + 1 of them, each within
      // its width; anything else is a damaged file (and would size memory by what it claims).
      if (slot != static_cast<std::int64_t>(s.overview.buckets.size()))
        r.bad(1, fmt::format("is not the rank's next bucket ({})",
                             s.overview.first_bucket + static_cast<std::int64_t>(s.overview.buckets.size())));
      if (slot > kOverviewBuckets)
        r.bad(1, fmt::format("is beyond the {} buckets a rank has", kOverviewBuckets + 1));
      OverviewBucket b;
      b.compute_ns = r.duration(2);
      b.comm_ns = r.duration(3);
      b.exposed_comm_ns = r.duration(4);
      b.memory_only_ns = r.duration(5);
      b.busy_ns = r.duration(6);
      b.span_ns = r.duration(7);
      const TimeNs width = s.overview.bucket_ns();
      for (int k = 2; k <= 7; ++k) {
        if (r.integer(k) > width) r.bad(k, fmt::format("is more than the bucket's width ({} ns)", width));
      }
      if (b.busy_ns > b.span_ns) r.bad(6, "is more than the bucket's span");
      s.overview.buckets.push_back(b);
    }
  }
}

}  // namespace

const RankSummary* find_rank(const ProfileSummary& summary, std::int32_t rank) {
  auto it = std::lower_bound(summary.ranks.begin(), summary.ranks.end(), rank,
                             [](const RankSummary& s, std::int32_t v) { return s.rank < v; });
  return it != summary.ranks.end() && it->rank == rank ? &*it : nullptr;
}

std::vector<DeviceUse> devices_used(const Rank& rank, const RankSummary& summary) {
  std::vector<std::int32_t> devices;
  for (const StreamSummary& s : summary.streams) devices.push_back(s.device);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  std::vector<DeviceUse> out;
  for (const std::int32_t d : devices) {
    DeviceUse use{d, nullptr};
    for (const Device& info : rank.devices) {
      if (info.device == d) use.info = &info;
    }
    out.push_back(use);
  }
  return out;
}

std::optional<ProfileSummary> read_summary(const std::filesystem::path& path, bool ranks_only) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such profile", path.string());
  require_regular_input(path);  // a FIFO or a device would block SQLite's first read
  sql::Database db(path, true);
  if (!db.table_columns("meta")) fail("{}: not a meshscope profile (no meta table)", path.string());
  {
    auto s = db.prepare("SELECT value FROM meta WHERE key = 'summaries'");
    if (!s.step() || s.column_text(0) != kSummaryVersion) return std::nullopt;
  }
  ProfileSummary out;
  out.path = path;
  out.from_tables = true;
  FileSums sums;
  read_ranks(db, out, sums);
  if (!ranks_only) read_rows(db, out, sums);
  // A summary of a rank the profile does not describe would add a phantom rank to every total.
  {
    std::set<std::int64_t> described;
    if (db.table_columns("ranks")) {
      auto s = db.prepare("SELECT rank FROM ranks");
      while (s.step()) described.insert(s.column_int(0));
    }
    for (const RankSummary& r : out.ranks) {
      if (!described.count(r.rank))
        fail("{}: summary_ranks: rank {} is not described in the ranks table (a damaged file?)",
             path.string(), r.rank);
    }
  }
  {
    auto s = db.prepare("SELECT max(world_size), count(*) FROM ranks");
    if (s.step()) out.world_size = std::max(s.column_int_or(0, 0), s.column_int_or(1, 0));
  }
  return out;
}

}  // namespace meshscope::measure

namespace meshscope::measure {

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
