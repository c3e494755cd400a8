#include "profiler/summary_store.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {

// ---------------------------------------------------------------------------------------------------------
// Writing

namespace {

constexpr std::string_view kSummaryMetaKey = "summaries";
constexpr std::string_view kSummaryVersion = "1";
// The meta entry of a summary part (drop_events).
constexpr std::string_view kEventsMetaKey = "events";
constexpr std::string_view kNoEventsMetaValue = "none";

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

// The summary tables of schema.sql, for profiles written before they existed, and the columns added to them
// since.
void create_missing_tables(sql::Database& db) {
  for (const schema::TableDescription& t : schema::all_tables()) {
    if (t.role == schema::Role::kSummary && !db.has_table(t.name)) db.exec(t.create_sql);
  }
  // Columns added to a summary table since the profile was written (every one is optional: NULL is none).
  for (const schema::TableDescription& t : schema::all_tables()) {
    if (t.role != schema::Role::kSummary) continue;
    const auto present = db.table_columns(t.name);
    if (!present) continue;
    for (const schema::Column& c : t.columns) {
      if (present->count(c.name)) continue;
      db.exec(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", t.name, c.name,
                          c.affinity == sql::Affinity::kText   ? "TEXT"
                          : c.affinity == sql::Affinity::kReal ? "REAL"
                                                               : "INTEGER"));
    }
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
  for (std::int64_t v : {n.os_runtime, n.on_cpu, n.cpu_sample}) ranks.bind(c++, v);
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
    insert_named_row(ops, r.rank, o.name,
                     {o.count, o.total_ns, o.self_ns, o.step_ns, o.self_step_ns, o.gpu_ns, o.gpu_self_ns,
                      o.gpu_step_ns, o.gpu_self_step_ns});
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

// The per-shape operator rows, aggregated from the file's op_work (the importer's record of every operator
// recorded with shapes) for the ranks just summarised. A file's op_work is untrusted: negative times add
// nothing, and the sums saturate at 2^62 rather than fail (the reader then refuses what is out of range).
void write_op_shapes(sql::Database& db) {
  if (!db.table_columns(schema::OpWork::kName)) return;  // written before op_work existed
  // Grouped on the string ids first, the names joined to the groups (a fifth faster on a million rows).
  db.exec(fmt::format(R"(
    INSERT INTO summary_op_shapes (rank, name, input_dims, count, gpu_ns, gpu_step_ns)
    SELECT g.rank, n.value, d.value, g.calls, g.gpu, g.gpu_in_steps FROM (
      SELECT w.rank, w.name, w.input_dims, count(*) AS calls,
             CAST(min(total(max(w.kernel_ns, 0)), 4611686018427387904) AS INTEGER) AS gpu,
             CAST(min(total(CASE WHEN NOT EXISTS (SELECT 1 FROM summary_steps s WHERE s.rank = w.rank)
                                   OR EXISTS (SELECT 1 FROM summary_steps s WHERE s.rank = w.rank
                                              AND w.start_ns >= s.cpu_start_ns AND w.start_ns < s.cpu_end_ns)
                                 THEN max(w.kernel_ns, 0) ELSE 0 END), 4611686018427387904) AS INTEGER)
               AS gpu_in_steps
      FROM op_work w
      WHERE w.status = {} AND w.rank IN (SELECT rank FROM summary_ranks)
      GROUP BY w.rank, w.name, w.input_dims) g
    JOIN strings n ON n.id = g.name JOIN strings d ON d.id = g.input_dims)",
                      static_cast<int>(OpWorkStatus::kCounted)));
}

}  // namespace

void write_summary(const std::filesystem::path& path, const ProfileSummary& summary) {
  sql::Database db(path, false);
  db.harden();  // the file may be anyone's (an in-place summarize writes a copy of it): nothing of it runs
  in_transaction(db, [&] {
    create_missing_tables(db);
    for (const schema::TableDescription& t : schema::all_tables()) {
      if (t.role == schema::Role::kSummary) db.exec(fmt::format("DELETE FROM {}", t.name));
    }
    auto ranks = db.prepare(schema::insert_sql<schema::SummaryRanks>());
    auto steps = db.prepare(schema::insert_sql<schema::SummarySteps>());
    auto streams = db.prepare(schema::insert_sql<schema::SummaryStreams>());
    auto kernels = db.prepare(schema::insert_sql<schema::SummaryKernels>());
    auto ops = db.prepare(schema::insert_sql<schema::SummaryOps>());
    auto collectives = db.prepare(schema::insert_sql<schema::SummaryCollectives>());
    auto overview = db.prepare(schema::insert_sql<schema::SummaryOverview>());
    for (const RankSummary& r : summary.ranks)
      write_rank(ranks, steps, streams, kernels, ops, collectives, overview, r);
    write_op_shapes(db);
    auto meta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    meta.bind_text(1, kSummaryMetaKey);
    meta.bind_text(2, kSummaryVersion);
    meta.run();
  });
}

namespace {

// What a merge copies from a part (for the ranks it gives): the description of each rank and its summaries.
bool copied_by_merge(const schema::TableDescription& table) {
  return table.role == schema::Role::kDescription || table.role == schema::Role::kSummary;
}

// What a summary part keeps: all but the events.
bool kept_in_part(const schema::TableDescription& table) {
  return table.role != schema::Role::kEvents;
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
      if (kept_in_part(t) || !db.has_table(t.name)) continue;
      db.exec(std::string(std::string_view(t.name) == "activities" ? "DELETE FROM " : "DROP TABLE ") +
              t.name);
    }
    db.exec("DELETE FROM strings");
    auto meta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    meta.bind_text(1, kEventsMetaKey);
    meta.bind_text(2, kNoEventsMetaValue);
    meta.run();
  });
  // Small pages: a part is mostly empty tables, one page each.
  db.exec("PRAGMA page_size = 4096");
  db.exec("VACUUM");
}

bool events_dropped(const std::map<std::string, std::string>& meta) {
  const auto it = meta.find(std::string(kEventsMetaKey));
  return it != meta.end() && it->second == kNoEventsMetaValue;
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
        if (!copied_by_merge(t)) continue;
        const auto present = in.table_columns(t.name);
        if (!present) continue;
        // A part written before a column was added has none: it copies as NULL (none).
        std::string columns;
        for (const schema::Column& c : t.columns)
          columns +=
              fmt::format("{}{}", columns.empty() ? "" : ", ", present->count(c.name) ? c.name : "NULL");
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

// The rowids TABLE spans (max - min + 1), saturated; 0 for a table the profile lacks or an empty one.
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

std::array<std::uint64_t, kEventTableCount> event_rowid_spans(const std::filesystem::path& path) {
  sql::Database db(path, true);
  std::array<std::uint64_t, kEventTableCount> spans{};
  for (int t = 0; t < kEventTableCount; ++t)
    spans[static_cast<std::size_t>(t)] = rowid_span(db, static_cast<EventTable>(t));
  return spans;
}

std::int64_t event_rows(const std::filesystem::path& path, EventTable table) {
  sql::Database db(path, true);
  return counted_rows(db, table);
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
    std::string selected;
    for (const schema::Column& c : columns) {
      const auto found = declared->find(c.name);
      if (!selected.empty()) selected += ", ";
      if (found == declared->end() && c.optional) {
        selected += "NULL";
        continue;
      }
      if (found == declared->end() || found->second == sql::kComputedColumn ||
          sql::affinity_of(found->second) != c.affinity)
        fail("{}: {}.{} is missing or not of the declared type (a damaged file?)", path_.string(), table,
             c.name);
      selected += c.name;
    }
    statement_ = db.prepare(fmt::format("SELECT {} FROM {} ORDER BY {}", selected, table, order));
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
    // Summaries written before these counts read as none.
    int added = c + 2;
    for (std::int64_t* v : {&n.os_runtime, &n.on_cpu, &n.cpu_sample}) *v = r.count(added++);
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
      s.ops.push_back({r.text(1), r.count(2), r.duration(3), r.duration(4), r.duration(5), r.duration(6),
                       r.duration(7), r.duration(8), r.duration(9), r.duration(10)});
    }
  }
  {
    auto r = SummaryReader::of<schema::SummaryCollectives>(db, "rank, total_ns DESC, rowid", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      s.collectives.push_back({r.text(1), r.count(2), r.count(3), r.count(4), r.duration(5), r.duration(6)});
    }
  }
  // Summaries written before the per-shape rows have none.
  if (db.table_columns(schema::SummaryOpShapes::kName)) {
    auto r = SummaryReader::of<schema::SummaryOpShapes>(db, "rank, gpu_ns DESC, rowid", sums);
    while (r.step()) {
      RankSummary& s = rank_of(ranks, r);
      OpShapeSummary o{r.text(1), r.text(2), r.count(3), r.duration(4), r.duration(5)};
      if (o.gpu_step_ns > o.gpu_ns) r.bad(5, "is more than the operator's GPU time");
      s.op_shapes.push_back(std::move(o));
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

std::optional<ProfileSummary> read_summary(const std::filesystem::path& path, bool ranks_only) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such profile", path.string());
  require_regular_input(path);  // a FIFO or a device would block SQLite's first read
  sql::Database db(path, true);
  return read_summary(db, path, ranks_only);
}

std::optional<ProfileSummary> read_summary(sql::Database& db, const std::filesystem::path& path,
                                           bool ranks_only) {
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

}  // namespace meshscope
