#include "profiler/profile_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/timing.hpp"

namespace meshscope {
namespace {

constexpr const char kSchemaText[] =
#include "schema_sql.inc"
    ;
constexpr std::string_view kIndexMarker = "-- @indexes";

constexpr std::size_t kQueueDepth = 4;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

struct Batch {
  std::vector<std::pair<StringId, std::string>> strings;
  std::vector<std::pair<std::int64_t, ActivityRecord>> activities;
  std::vector<std::pair<std::int64_t, CollectiveRecord>> collectives;
  std::vector<ApiCallRecord> api_calls;
  struct Range {
    std::int64_t id, depth, parent;
    RangeRecord record;
  };
  std::vector<Range> ranges;
  std::vector<FlowRecord> flows;
  std::vector<RankInfo> ranks;
  std::vector<DeviceInfo> devices;
  std::vector<ProcessGroupInfo> process_groups;
  std::vector<StreamInfo> streams;
  std::vector<ThreadInfo> threads;
  struct Diagnostic {
    std::int32_t rank;
    std::string severity, message;
  };
  std::vector<Diagnostic> diagnostics;
  std::vector<std::pair<std::string, std::string>> meta;

  std::size_t size() const {
    return strings.size() + activities.size() + collectives.size() + api_calls.size() + ranges.size() +
           flows.size() + ranks.size() + devices.size() + process_groups.size() + streams.size() +
           threads.size() + diagnostics.size() + meta.size();
  }
};

// Collectors (durable) write .NAME.tmp-PID-RANDOM, which `record` recovers after a crash; everything else
// writes a scratch file that an interrupted or killed process's successor may remove (output_file.hpp).
std::filesystem::path make_temp_path(const std::filesystem::path& target, bool durable) {
  if (!durable) return scratch_path_for(target);
  std::random_device device;
  const auto name = fmt::format(".{}.tmp-{}-{:08x}", target.filename().string(), ::getpid(), device());
  return target.parent_path() / name;
}

}  // namespace

std::string_view schema_tables_sql() {
  std::string_view text(kSchemaText);
  return text.substr(0, text.find(kIndexMarker));
}

std::string_view schema_indexes_sql() {
  std::string_view text(kSchemaText);
  const auto at = text.find(kIndexMarker);
  return at == std::string_view::npos ? std::string_view() : text.substr(at);
}

struct ProfileWriter::Impl {
  std::filesystem::path target;
  std::filesystem::path temp;
  WriterOptions options;
  sql::Database db;
  TempFileGuard guard;  // removes the temporary file if the process is interrupted (not for collectors)
  bool committed = false;

  // Producer side.
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> string_ids;
  std::unique_ptr<Batch> current = std::make_unique<Batch>();
  std::int64_t next_activity_id = 1;
  std::int64_t next_collective_id = 1;
  std::int64_t next_range_id = 1;
  // Nesting is computed as ranges arrive when each track's ranges come in start order (the usual case):
  // ranges with the same start wait until a later start shows up (the longest of them is the parent), then
  // take their depth from the track's stack of open ranges and go to the database. A range that arrives out
  // of order turns this off; commit() then rebuilds the nesting of every range in SQL.
  struct Track {
    struct Open {
      std::int64_t id;
      TimeNs end;
    };
    std::vector<Open> stack;
    std::vector<Batch::Range> same_start;  // ranges sharing the latest start, not yet nested
  };
  struct TrackKey {
    std::int32_t rank;
    std::int64_t pid, tid;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    std::size_t operator()(const TrackKey& k) const {
      return std::hash<std::int64_t>{}(k.pid * 1'000'003 + k.tid) ^ std::hash<std::int32_t>{}(k.rank);
    }
  };
  std::unordered_map<TrackKey, Track, TrackKeyHash> tracks;
  bool nest_online = true;

  void emit_same_start(Track& track) {
    auto& group = track.same_start;
    if (group.empty()) return;
    std::stable_sort(group.begin(), group.end(), [](const Batch::Range& a, const Batch::Range& b) {
      return a.record.end_ns > b.record.end_ns;
    });
    for (auto& range : group) {
      const TimeNs start = range.record.start_ns, end = range.record.end_ns;
      auto& stack = track.stack;
      while (!stack.empty() && stack.back().end <= start && !(stack.back().end == start && end == start)) {
        stack.pop_back();
      }
      range.depth = static_cast<std::int64_t>(stack.size());
      range.parent = stack.empty() ? kNull : stack.back().id;
      stack.push_back({range.id, end});
      current->ranges.push_back(range);
    }
    group.clear();
    maybe_flush();
  }

  void emit_all_pending() {
    for (auto& [key, track] : tracks) emit_same_start(track);
  }

  // Earliest start and latest end per rank, for ranks.first_ns/last_ns.
  std::unordered_map<std::int32_t, std::pair<TimeNs, TimeNs>> rank_extent;
  void extend(std::int32_t rank, TimeNs start, TimeNs end) {
    auto [it, inserted] = rank_extent.try_emplace(rank, start, end);
    if (!inserted) {
      it->second.first = std::min(it->second.first, start);
      it->second.second = std::max(it->second.second, end);
    }
  }

  // Consumer side.
  std::mutex mutex;
  std::condition_variable queue_changed;
  std::deque<std::unique_ptr<Batch>> queue;
  bool stopping = false;
  bool busy = false;  // the thread holds a batch it has not finished writing
  std::exception_ptr thread_error;
  std::thread thread;
  std::atomic<std::uint64_t> rows{0};

  struct CpuCollective {
    CollectiveRecord record;
    std::int64_t pid, tid;
  };
  std::vector<CpuCollective> cpu_collectives;
  struct RankRewrite {
    std::int32_t old_rank, new_rank;
    std::int64_t shift_ns;
  };
  std::vector<RankRewrite> rank_rewrites;

  sql::Statement insert_activities, insert_api_calls, insert_ranges;  // kRowsPerInsert rows at a time
  sql::Statement insert_string, insert_activity, insert_collective, insert_api_call, insert_range,
      insert_flow, insert_rank, insert_device, insert_pg, insert_stream, insert_thread, insert_diagnostic,
      insert_meta;

  void open() {
    db = sql::Database(temp, false, target);  // messages name the profile being written, not the temp file
    // Nothing longer is stored than Profile::load reads back (a longer text fails its insert, naming the
    // file).
    sqlite3_limit(db.handle(), SQLITE_LIMIT_LENGTH, sql::kMaxValueBytes);
    // The file is renamed into place only when complete, so crash safety comes from the rename, not the
    // journal. Collectors (durable) keep a WAL so that a killed process still leaves a readable file.
    if (options.durable) {
      db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    } else {
      db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;");
    }
    db.exec("PRAGMA page_size=16384; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;");
    db.exec(schema_tables_sql());
    db.exec(
        "INSERT INTO enums VALUES ('activity_kind',1,'kernel'),('activity_kind',2,'memcpy'),"
        "('activity_kind',3,'memset'),('activity_kind',4,'sync'),"
        "('range_kind',1,'cpu_op'),('range_kind',2,'annotation'),('range_kind',3,'python_function'),"
        "('range_kind',4,'step'),('range_kind',5,'gpu_annotation'),('range_kind',6,'nvtx'),('range_kind',7,'"
        "other'),"
        "('api_kind',1,'runtime'),('api_kind',2,'driver');");
    db.exec("BEGIN");
    insert_string = db.prepare("INSERT INTO strings (id, value) VALUES (?,?)");
    insert_activity = db.prepare(
        "INSERT INTO activities (id, rank, kind, device, stream, start_ns, end_ns, name, correlation, "
        "external_id,"
        " grid_x, grid_y, grid_z, block_x, block_y, block_z, registers, shared_bytes, bytes, copy_kind, "
        "graph_id)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert_collective = db.prepare(
        "INSERT INTO collectives (id, rank, activity_id, communicator, pg_desc, pg_ranks, seq, op, in_nelems,"
        " out_nelems, dtype, in_bytes, out_bytes, group_size, algorithm, protocol, channels, start_ns, "
        "end_ns, source)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert_api_call = db.prepare(
        "INSERT INTO api_calls (rank, kind, pid, tid, start_ns, end_ns, name, correlation, external_id, cbid)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)");
    insert_range = db.prepare(
        "INSERT INTO ranges (id, rank, kind, pid, tid, start_ns, end_ns, name, external_id, step, category, "
        "depth,"
        " parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert_activities = db.prepare(
        "INSERT INTO activities (id, rank, kind, device, stream, start_ns, end_ns, name, correlation, "
        "external_id,"
        " grid_x, grid_y, grid_z, block_x, block_y, block_z, registers, shared_bytes, bytes, copy_kind, "
        "graph_id)"
        " VALUES " +
        values_clause(kActivityColumns, kRowsPerInsert));
    insert_api_calls = db.prepare(
        "INSERT INTO api_calls (rank, kind, pid, tid, start_ns, end_ns, name, correlation, external_id, cbid)"
        " VALUES " +
        values_clause(kApiCallColumns, kRowsPerInsert));
    insert_ranges = db.prepare(
        "INSERT INTO ranges (id, rank, kind, pid, tid, start_ns, end_ns, name, external_id, step, category, "
        "depth,"
        " parent_id) VALUES " +
        values_clause(kRangeColumns, kRowsPerInsert));
    insert_flow = db.prepare(
        "INSERT INTO flows (rank, category, flow_id, src_ns, src_pid, src_tid, dst_ns, dst_pid, dst_tid)"
        " VALUES (?,?,?,?,?,?,?,?,?)");
    insert_rank = db.prepare(
        "INSERT OR REPLACE INTO ranks (rank, world_size, hostname, pid, source_file, rank_source, backend,"
        " comm_version, clock_base_ns, clock_offset_ns) VALUES (?,?,?,?,?,?,?,?,?,?)");
    insert_device = db.prepare(
        "INSERT OR REPLACE INTO devices (rank, device, name, total_memory_bytes, compute_major, "
        "compute_minor,"
        " sm_count, properties_json) VALUES (?,?,?,?,?,?,?,?)");
    insert_pg = db.prepare(
        "INSERT OR REPLACE INTO process_groups (rank, pg_name, pg_desc, backend, group_size, ranks_json)"
        " VALUES (?,?,?,?,?,?)");
    insert_stream =
        db.prepare("INSERT OR REPLACE INTO streams (rank, device, stream, name) VALUES (?,?,?,?)");
    insert_thread = db.prepare("INSERT OR REPLACE INTO threads (rank, pid, tid, name) VALUES (?,?,?,?)");
    insert_diagnostic = db.prepare("INSERT INTO diagnostics (rank, severity, message) VALUES (?,?,?)");
    insert_meta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)");
  }

  void finalize_statements() {
    for (sql::Statement* s :
         {&insert_activities, &insert_api_calls, &insert_ranges, &insert_string, &insert_activity,
          &insert_collective, &insert_api_call, &insert_range, &insert_flow, &insert_rank, &insert_device,
          &insert_pg, &insert_stream, &insert_thread, &insert_diagnostic, &insert_meta}) {
      *s = sql::Statement();
    }
  }

  // The three large tables are inserted kRowsPerInsert rows per statement: SQLite's per-statement cost is
  // then paid once for many rows.
  static constexpr int kRowsPerInsert = 16;
  static constexpr int kActivityColumns = 21, kApiCallColumns = 10, kRangeColumns = 13;

  static std::string values_clause(int columns, int rows) {
    std::string row = "(";
    for (int c = 0; c < columns; ++c) row += c ? ",?" : "?";
    row += ")";
    std::string out;
    for (int r = 0; r < rows; ++r) out += (r ? "," : "") + row;
    return out;
  }

  template <typename Rows, typename Bind>
  static void insert_rows(const Rows& rows, sql::Statement& one, sql::Statement& many, int columns,
                          Bind bind) {
    std::size_t i = 0;
    for (; i + kRowsPerInsert <= rows.size(); i += kRowsPerInsert) {
      for (int r = 0; r < kRowsPerInsert; ++r) bind(many, r * columns, rows[i + static_cast<std::size_t>(r)]);
      many.run();
    }
    for (; i < rows.size(); ++i) {
      bind(one, 0, rows[i]);
      one.run();
    }
  }

  static void bind_activity(sql::Statement& s, int b, const std::pair<std::int64_t, ActivityRecord>& row) {
    const auto& [id, a] = row;
    s.bind(b + 1, id);
    s.bind(b + 2, a.rank);
    s.bind(b + 3, static_cast<int>(a.kind));
    s.bind(b + 4, a.device);
    s.bind(b + 5, a.stream);
    s.bind(b + 6, a.start_ns);
    s.bind(b + 7, a.end_ns);
    s.bind_string_id(b + 8, a.name);
    s.bind(b + 9, a.correlation);
    s.bind(b + 10, a.external_id);
    for (int i = 0; i < 3; ++i) s.bind(b + 11 + i, a.grid[i]);
    for (int i = 0; i < 3; ++i) s.bind(b + 14 + i, a.block[i]);
    s.bind(b + 17, a.registers);
    s.bind(b + 18, a.shared_bytes);
    s.bind(b + 19, a.bytes);
    s.bind_string_id(b + 20, a.copy_kind);
    s.bind(b + 21, a.graph_id);
  }

  static void bind_api_call(sql::Statement& s, int b, const ApiCallRecord& a) {
    s.bind(b + 1, a.rank);
    s.bind(b + 2, static_cast<int>(a.kind));
    s.bind(b + 3, a.pid);
    s.bind(b + 4, a.tid);
    s.bind(b + 5, a.start_ns);
    s.bind(b + 6, a.end_ns);
    s.bind_string_id(b + 7, a.name);
    s.bind(b + 8, a.correlation);
    s.bind(b + 9, a.external_id);
    s.bind(b + 10, a.cbid);
  }

  static void bind_range(sql::Statement& s, int b, const Batch::Range& row) {
    const auto& [id, depth, parent, r] = row;
    s.bind(b + 1, id);
    s.bind(b + 2, r.rank);
    s.bind(b + 3, static_cast<int>(r.kind));
    s.bind(b + 4, r.pid);
    s.bind(b + 5, r.tid);
    s.bind(b + 6, r.start_ns);
    s.bind(b + 7, r.end_ns);
    s.bind_string_id(b + 8, r.name);
    s.bind(b + 9, r.external_id);
    s.bind(b + 10, r.step);
    s.bind_string_id(b + 11, r.category);
    s.bind(b + 12, depth);
    s.bind(b + 13, parent);
  }

  void write_batch(const Batch& batch) {
    for (const auto& [id, text] : batch.strings) {
      insert_string.bind(1, id);
      sqlite3_bind_text(insert_string.handle(), 2, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      insert_string.run();
    }
    insert_rows(batch.activities, insert_activity, insert_activities, kActivityColumns, bind_activity);
    for (const auto& [id, c] : batch.collectives) {
      auto& s = insert_collective;
      s.bind(1, id);
      s.bind(2, c.rank);
      s.bind(3, c.activity_id);
      s.bind_string_id(4, c.communicator);
      s.bind_string_id(5, c.pg_desc);
      s.bind_string_id(6, c.pg_ranks);
      s.bind(7, c.seq);
      s.bind_string_id(8, c.op);
      s.bind(9, c.in_nelems);
      s.bind(10, c.out_nelems);
      s.bind_string_id(11, c.dtype);
      s.bind(12, c.in_bytes);
      s.bind(13, c.out_bytes);
      s.bind(14, c.group_size);
      s.bind_string_id(15, c.algorithm);
      s.bind_string_id(16, c.protocol);
      s.bind(17, c.channels);
      s.bind(18, c.start_ns);
      s.bind(19, c.end_ns);
      s.bind_text(20, c.source ? c.source : "");
      s.run();
    }
    insert_rows(batch.api_calls, insert_api_call, insert_api_calls, kApiCallColumns, bind_api_call);
    insert_rows(batch.ranges, insert_range, insert_ranges, kRangeColumns, bind_range);
    for (const auto& f : batch.flows) {
      auto& s = insert_flow;
      s.bind(1, f.rank);
      s.bind_string_id(2, f.category);
      s.bind(3, f.flow_id);
      s.bind(4, f.src_ns);
      s.bind(5, f.src_pid);
      s.bind(6, f.src_tid);
      s.bind(7, f.dst_ns);
      s.bind(8, f.dst_pid);
      s.bind(9, f.dst_tid);
      s.run();
    }
    for (const auto& r : batch.ranks) {
      auto& s = insert_rank;
      s.bind(1, r.rank);
      s.bind(2, r.world_size);
      s.bind_text(3, r.hostname);
      s.bind(4, r.pid);
      s.bind_text(5, r.source_file.empty() ? std::string_view("-") : std::string_view(r.source_file));
      s.bind_text(6, r.rank_source.empty() ? std::string_view("unknown") : std::string_view(r.rank_source));
      s.bind_text(7, r.backend);
      s.bind_text(8, r.comm_version);
      s.bind(9, r.clock_base_ns);
      s.bind(10, r.clock_offset_ns);
      s.run();
    }
    for (const auto& d : batch.devices) {
      auto& s = insert_device;
      s.bind(1, d.rank);
      s.bind(2, d.device);
      s.bind_text(3, d.name);
      s.bind(4, d.total_memory_bytes);
      s.bind(5, d.compute_major);
      s.bind(6, d.compute_minor);
      s.bind(7, d.sm_count);
      s.bind_text(8, d.properties_json);
      s.run();
    }
    for (const auto& p : batch.process_groups) {
      auto& s = insert_pg;
      s.bind(1, p.rank);
      s.bind_text(2, p.pg_name.empty() ? std::string_view("?") : std::string_view(p.pg_name));
      s.bind_text(3, p.pg_desc);
      s.bind_text(4, p.backend);
      s.bind(5, p.group_size);
      s.bind_text(6, p.ranks_json);
      s.run();
    }
    for (const auto& st : batch.streams) {
      auto& s = insert_stream;
      s.bind(1, st.rank);
      s.bind(2, st.device);
      s.bind(3, st.stream);
      s.bind_text(4, st.name);
      s.run();
    }
    for (const auto& t : batch.threads) {
      auto& s = insert_thread;
      s.bind(1, t.rank);
      s.bind(2, t.pid);
      s.bind(3, t.tid);
      s.bind_text(4, t.name);
      s.run();
    }
    for (const auto& d : batch.diagnostics) {
      auto& s = insert_diagnostic;
      s.bind(1, d.rank < 0 ? kNull : d.rank);  // a negative rank: the whole job
      s.bind_text(2, d.severity);
      s.bind_text(3, d.message);
      s.run();
    }
    for (const auto& [key, value] : batch.meta) {
      insert_meta.bind_text(1, key);
      insert_meta.bind_text(2, value);
      insert_meta.run();
    }
    rows += batch.size();
  }

  void thread_main() {
    for (;;) {
      std::unique_ptr<Batch> batch;
      {
        std::unique_lock lock(mutex);
        queue_changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        batch = std::move(queue.front());
        queue.pop_front();
        busy = true;
      }
      queue_changed.notify_all();
      std::exception_ptr error;
      try {
        write_batch(*batch);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        busy = false;
        if (error && !thread_error) thread_error = error;
      }
      queue_changed.notify_all();
    }
  }

  void rethrow_thread_error() {
    std::lock_guard lock(mutex);
    if (thread_error) std::rethrow_exception(thread_error);
  }

  // Hands the current batch over (or writes it now when there is no background thread).
  void flush() {
    if (current->size() == 0) return;
    if (!options.background) {
      write_batch(*current);
      current = std::make_unique<Batch>();
      return;
    }
    {
      std::unique_lock lock(mutex);
      queue_changed.wait(lock, [&] { return queue.size() < kQueueDepth || thread_error; });
      if (thread_error) std::rethrow_exception(thread_error);
      queue.push_back(std::move(current));
    }
    queue_changed.notify_all();
    current = std::make_unique<Batch>();
  }

  void maybe_flush() {
    if (current->size() >= options.batch_records) flush();
  }

  // Waits until every handed-over batch is in the database.
  void drain() {
    flush();
    if (!options.background) return;
    std::unique_lock lock(mutex);
    queue_changed.wait(lock, [&] { return (queue.empty() && !busy) || thread_error; });
  }

  void stop_thread() {
    if (!thread.joinable()) return;
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    queue_changed.notify_all();
    thread.join();
  }

  // Rebuilds nesting depth and parent per (rank, pid, tid) track: ranges sorted by start (longer first on
  // ties) nest inside the innermost open range that has not ended. Ranges that overlap without nesting are
  // kept, one level deeper, so nothing is hidden.
  void rebuild_nesting() {
    // Rewrites the table in track order with depth and parent filled in: sequential inserts, where updating
    // rows in place would touch pages at random (minutes for millions of ranges).
    std::string create_sql;
    {
      sql::Statement s = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'ranges'");
      if (!s.step()) return;
      create_sql = s.column_text(0);
    }
    db.exec("ALTER TABLE ranges RENAME TO ranges_unnested");
    db.exec(create_sql);
    constexpr const char* kColumns =
        "id, rank, kind, pid, tid, start_ns, end_ns, name, external_id, step, category";
    sql::Statement select = db.prepare(fmt::format(
        "SELECT {} FROM ranges_unnested ORDER BY rank, pid, tid, start_ns, end_ns DESC, id", kColumns));
    sql::Statement insert = db.prepare(fmt::format(
        "INSERT INTO ranges ({}, depth, parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", kColumns));
    struct Open {
      std::int64_t id;
      TimeNs end;
    };
    std::vector<Open> stack;
    std::int64_t track_rank = kNull, track_pid = kNull, track_tid = kNull;
    while (select.step()) {
      const std::int64_t id = select.column_int(0);
      const std::int64_t rank = select.column_int(1), pid = select.column_int(3), tid = select.column_int(4);
      const TimeNs start = select.column_int(5), end = select.column_int(6);
      if (rank != track_rank || pid != track_pid || tid != track_tid) {
        stack.clear();
        track_rank = rank;
        track_pid = pid;
        track_tid = tid;
      }
      while (!stack.empty() && stack.back().end <= start && !(stack.back().end == start && end == start)) {
        stack.pop_back();
      }
      for (int i = 0; i < 11; ++i)
        sqlite3_bind_value(insert.handle(), i + 1, sqlite3_column_value(select.handle(), i));
      insert.bind(12, static_cast<std::int64_t>(stack.size()));
      insert.bind(13, stack.empty() ? kNull : stack.back().id);
      insert.run();
      stack.push_back({id, end});
    }
    select = sql::Statement();
    db.exec("DROP TABLE ranges_unnested");
  }

  void apply_rank_rewrites() {
    for (const auto& r : rank_rewrites) {
      for (auto& c : cpu_collectives) {
        if (c.record.rank != r.old_rank) continue;
        c.record.rank = r.new_rank;
        c.record.start_ns += r.shift_ns;
        c.record.end_ns += r.shift_ns;
      }
      const std::string from = std::to_string(r.old_rank), to = std::to_string(r.new_rank),
                        shift = std::to_string(r.shift_ns);
      for (const char* table : {"activities", "collectives", "api_calls", "ranges"}) {
        db.exec(fmt::format(
            "UPDATE {} SET rank = {}, start_ns = start_ns + {}, end_ns = end_ns + {} WHERE rank = {}", table,
            to, shift, shift, from));
      }
      db.exec(fmt::format(
          "UPDATE flows SET rank = {0}, src_ns = src_ns + {1}, dst_ns = dst_ns + {1} WHERE rank = {2}", to,
          shift, from));
      for (const char* table : {"ranks", "devices", "process_groups", "streams", "threads", "diagnostics"}) {
        db.exec(fmt::format("UPDATE {} SET rank = {} WHERE rank = {}", table, to, from));
      }
    }
  }

  // Resolves CPU-side collective metadata to the kernels it launched (see add_cpu_collective). Index lookups
  // per CPU op (api_calls by thread and time, activities by correlation), so the cost grows with the number
  // of ops.
  void resolve_cpu_collectives() {
    if (cpu_collectives.empty()) return;
    db.exec("CREATE INDEX IF NOT EXISTS api_calls_by_thread ON api_calls (rank, pid, tid, start_ns)");
    // Kernels that already have a collective: those with metadata keep it; name-only rows take the CPU
    // metadata.
    std::unordered_map<std::int64_t, std::pair<std::int64_t, bool>>
        existing;  // activity -> (row id, name-only)
    {
      sql::Statement s =
          db.prepare("SELECT activity_id, id, source FROM collectives WHERE activity_id IS NOT NULL");
      while (s.step()) existing[s.column_int(0)] = {s.column_int(1), s.column_text(2) == "kernel_name"};
    }
    sql::Statement calls = db.prepare(
        "SELECT correlation FROM api_calls WHERE rank = ? AND pid = ? AND tid = ? AND start_ns BETWEEN ? AND "
        "?"
        " AND correlation IS NOT NULL");
    sql::Statement kernels = db.prepare(
        "SELECT id, start_ns, end_ns FROM activities WHERE rank = ? AND correlation = ? AND kind = 1");
    sql::Statement upgrade = db.prepare(
        "UPDATE collectives SET communicator = ?, pg_desc = ?, pg_ranks = ?, seq = ?, op = ?, in_nelems = ?,"
        " out_nelems = ?, dtype = ?, in_bytes = ?, out_bytes = ?, group_size = ?, channels = ?, source = ?"
        " WHERE id = ?");
    for (const auto& [c, pid, tid] : cpu_collectives) {
      bool launched = false;
      calls.bind(1, c.rank);
      calls.bind(2, pid);
      calls.bind(3, tid);
      calls.bind(4, c.start_ns);
      calls.bind(5, c.end_ns);
      std::vector<std::int64_t> correlations;
      while (calls.step()) correlations.push_back(calls.column_int(0));
      calls.reset();
      for (const auto correlation : correlations) {
        kernels.bind(1, c.rank);
        kernels.bind(2, correlation);
        while (kernels.step()) {
          launched = true;
          const std::int64_t activity = kernels.column_int(0);
          auto it = existing.find(activity);
          if (it != existing.end() && !it->second.second) continue;
          if (it != existing.end()) {
            upgrade.bind_string_id(1, c.communicator);
            upgrade.bind_string_id(2, c.pg_desc);
            upgrade.bind_string_id(3, c.pg_ranks);
            upgrade.bind(4, c.seq);
            upgrade.bind_string_id(5, c.op);
            upgrade.bind(6, c.in_nelems);
            upgrade.bind(7, c.out_nelems);
            upgrade.bind_string_id(8, c.dtype);
            upgrade.bind(9, c.in_bytes);
            upgrade.bind(10, c.out_bytes);
            upgrade.bind(11, c.group_size);
            upgrade.bind(12, c.channels);
            upgrade.bind_text(13, c.source ? c.source : "cpu_op");
            upgrade.bind(14, it->second.first);
            upgrade.run();
            it->second.second = false;
            continue;
          }
          CollectiveRecord on_gpu = c;
          on_gpu.activity_id = activity;
          on_gpu.start_ns = kernels.column_int(1);
          on_gpu.end_ns = kernels.column_int(2);
          write_collective(next_collective_id++, on_gpu);
          existing[activity] = {next_collective_id - 1, false};
        }
        kernels.reset();
      }
      if (!launched) write_collective(next_collective_id++, c);  // CPU-only (e.g. gloo): keep the CPU times
    }
    db.exec("DROP INDEX api_calls_by_thread");
  }

  void write_collective(std::int64_t id, const CollectiveRecord& c) {
    Batch batch;
    batch.collectives.emplace_back(id, c);
    write_batch(batch);
  }

  void finish_ranks() {
    sql::Statement update = db.prepare("UPDATE ranks SET first_ns = ?, last_ns = ? WHERE rank = ?");
    for (const auto& [rank, extent] : rank_extent) {
      std::int32_t final_rank = rank;
      std::int64_t shift = 0;
      for (const auto& r : rank_rewrites) {
        if (r.old_rank == final_rank) {
          final_rank = r.new_rank;
          shift += r.shift_ns;
        }
      }
      TimeNs first = 0, last = 0;
      if (__builtin_add_overflow(extent.first, shift, &first) ||
          __builtin_add_overflow(extent.second, shift, &last)) {
        fail("{}: a rank's times moved out of range", target.string());
      }
      update.bind(1, first);
      update.bind(2, last);
      update.bind(3, final_rank);
      update.run();
    }
  }
};

ProfileWriter::ProfileWriter(std::filesystem::path target, WriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  // A link is written through (the file it names is replaced, the link stays); a device, FIFO or directory
  // is refused before anything is written.
  impl_->target = resolve_output_path(target);
  impl_->temp = make_temp_path(impl_->target, options.durable);
  impl_->options = options;
  std::error_code ignored;
  if (!options.durable) {
    remove_stale_temp_files(impl_->target.parent_path());  // left by killed imports of this host
    impl_->guard = TempFileGuard(impl_->temp);
  }
  std::filesystem::remove(impl_->temp, ignored);
  try {
    impl_->open();
  } catch (...) {
    impl_->db.close();
    std::filesystem::remove(impl_->temp, ignored);
    throw;
  }
  if (options.background) impl_->thread = std::thread([this] { impl_->thread_main(); });
  set_meta("schema_version", std::to_string(kSchemaVersion));
  set_meta("creator", "meshscope");
  set_meta("creator_version", MESHSCOPE_VERSION);
  set_meta("created_unix_s", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()));
}

ProfileWriter::~ProfileWriter() {
  impl_->stop_thread();
  if (!impl_->committed) {
    impl_->db.close();
    std::error_code ignored;
    std::filesystem::remove(impl_->temp, ignored);
    std::filesystem::remove(impl_->temp.string() + "-wal", ignored);
    std::filesystem::remove(impl_->temp.string() + "-shm", ignored);
    std::filesystem::remove(impl_->temp.string() + "-journal", ignored);
  }
  impl_->guard.release();
}

StringId ProfileWriter::intern(std::string_view text) {
  if (text.empty()) return kNoString;
  auto it = impl_->string_ids.find(text);
  if (it != impl_->string_ids.end()) return it->second;
  const auto id = static_cast<StringId>(impl_->string_ids.size() + 1);
  impl_->string_ids.emplace(std::string(text), id);
  impl_->current->strings.emplace_back(id, std::string(text));
  return id;
}

std::int64_t ProfileWriter::add_activity(const ActivityRecord& record) {
  impl_->extend(record.rank, record.start_ns, record.end_ns);
  const std::int64_t id = impl_->next_activity_id++;
  impl_->current->activities.emplace_back(id, record);
  impl_->maybe_flush();
  return id;
}

void ProfileWriter::add_collective(const CollectiveRecord& record) {
  impl_->current->collectives.emplace_back(impl_->next_collective_id++, record);
  impl_->maybe_flush();
}

void ProfileWriter::add_api_call(const ApiCallRecord& record) {
  impl_->extend(record.rank, record.start_ns, record.end_ns);
  impl_->current->api_calls.push_back(record);
  impl_->maybe_flush();
}

void ProfileWriter::add_range(const RangeRecord& record) {
  auto& impl = *impl_;
  impl.extend(record.rank, record.start_ns, record.end_ns);
  Batch::Range range{impl.next_range_id++, 0, kNull, record};
  if (impl.nest_online) {
    auto& track = impl.tracks[Impl::TrackKey{record.rank, record.pid, record.tid}];
    const TimeNs group_start =
        track.same_start.empty() ? record.start_ns : track.same_start.front().record.start_ns;
    if (record.start_ns >= group_start) {
      if (record.start_ns > group_start) impl.emit_same_start(track);
      track.same_start.push_back(range);
      return;
    }
    // Out of order: write everything as it comes and rebuild the nesting in SQL at commit.
    impl.nest_online = false;
    impl.emit_all_pending();
    impl.tracks.clear();
  }
  impl.current->ranges.push_back(range);
  impl.maybe_flush();
}

void ProfileWriter::add_flow(const FlowRecord& record) {
  impl_->current->flows.push_back(record);
  impl_->maybe_flush();
}

void ProfileWriter::add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) {
  impl_->cpu_collectives.push_back({record, pid, tid});
}

void ProfileWriter::rewrite_rank(std::int32_t old_rank, std::int32_t new_rank, std::int64_t shift_ns) {
  impl_->rank_rewrites.push_back({old_rank, new_rank, shift_ns});
}

void ProfileWriter::set_rank(const RankInfo& info) {
  impl_->current->ranks.push_back(info);
}
void ProfileWriter::add_device(const DeviceInfo& info) {
  impl_->current->devices.push_back(info);
}
void ProfileWriter::add_process_group(const ProcessGroupInfo& info) {
  impl_->current->process_groups.push_back(info);
}
void ProfileWriter::add_stream(const StreamInfo& info) {
  impl_->current->streams.push_back(info);
}
void ProfileWriter::add_thread(const ThreadInfo& info) {
  impl_->current->threads.push_back(info);
}
void ProfileWriter::add_diagnostic(std::int32_t rank, std::string_view severity, std::string_view message) {
  impl_->current->diagnostics.push_back({rank, std::string(severity), std::string(message)});
}
void ProfileWriter::set_meta(std::string_view key, std::string_view value) {
  impl_->current->meta.emplace_back(std::string(key), std::string(value));
}

std::uint64_t ProfileWriter::rows_written() const {
  return impl_->rows.load();
}

void ProfileWriter::checkpoint() {
  impl_->drain();
  impl_->rethrow_thread_error();
  std::lock_guard lock(impl_->mutex);  // the background thread is idle once drained; keep it that way
  impl_->db.exec("COMMIT; BEGIN");
}

void ProfileWriter::commit() {
  {
    PhaseTimer timer("writer: drain batches");
    impl_->emit_all_pending();
    impl_->drain();
    impl_->stop_thread();
  }
  impl_->rethrow_thread_error();
  auto& db = impl_->db;
  impl_->apply_rank_rewrites();
  {
    PhaseTimer timer("writer: create indexes");
    db.exec(schema_indexes_sql());
  }
  {
    PhaseTimer timer("writer: resolve collectives");
    impl_->resolve_cpu_collectives();
  }
  if (!impl_->nest_online) {
    PhaseTimer timer("writer: rebuild nesting");
    db.exec("PRAGMA temp_store=FILE");  // the sort of millions of ranges spills to disk, not memory
    impl_->rebuild_nesting();
  }
  {
    PhaseTimer timer("writer: finish");
    impl_->finish_ranks();
    db.exec("COMMIT");
  }
  if (impl_->options.durable) db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  impl_->finalize_statements();  // an unfinalized statement would keep the connection (and its lock) alive
  db.close();
  std::error_code error;
  std::filesystem::rename(impl_->temp, impl_->target, error);
  if (error) fail("{}: cannot write profile: {}", impl_->target.string(), error.message());
  impl_->committed = true;
  impl_->guard.release();
}

const std::filesystem::path& ProfileWriter::target() const {
  return impl_->target;
}
const std::filesystem::path& ProfileWriter::temp_path() const {
  return impl_->temp;
}

}  // namespace meshscope
