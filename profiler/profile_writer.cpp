#include "profiler/profile_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/timing.hpp"
#include "profiler/writer/cpu_collectives.hpp"
#include "profiler/writer/range_nesting.hpp"
#include "profiler/writer/rank_rewrites.hpp"

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
  std::vector<writer::NestedRange> ranges;
  std::vector<FlowRecord> flows;
  std::vector<ThreadActivityRecord> thread_activity;
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
  std::vector<OpWorkRecord> op_work;
  std::vector<KernelWorkRecord> kernel_work;

  std::size_t size() const {
    return strings.size() + activities.size() + collectives.size() + api_calls.size() + ranges.size() +
           flows.size() + thread_activity.size() + ranks.size() + devices.size() + process_groups.size() +
           streams.size() + threads.size() + diagnostics.size() + meta.size() + op_work.size() +
           kernel_work.size();
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
  // Where a non-durable profile is built and published (removed if the process is interrupted); collectors
  // write their own durable temporary file, which `record` recovers.
  std::optional<OutputFile> output;
  bool committed = false;

  // Producer side.
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> string_ids;
  std::unique_ptr<Batch> current = std::make_unique<Batch>();
  std::int64_t next_activity_id = 1;
  std::int64_t next_op_work_id = 1;
  std::int64_t next_collective_id = 1;
  std::int64_t next_range_id = 1;
  // Ranges go to the batch nested (depth, parent): as they arrive while every track comes in start order,
  // else held back until their track is closed; a track that comes out of order is nested again in SQL at
  // commit (writer/range_nesting.hpp).
  writer::OnlineNesting nesting{
      [this](const writer::NestedRange& range) { current->ranges.push_back(range); }};

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

  std::vector<writer::CpuCollective> cpu_collectives;
  std::vector<writer::RankRewrite> rank_rewrites;

  // kRowsPerInsert rows at a time
  sql::Statement insert_activities, insert_api_calls, insert_ranges, insert_op_works, insert_kernel_works,
      insert_thread_activities;
  sql::Statement insert_thread_activity, insert_string, insert_activity, insert_collective, insert_api_call,
      insert_range, insert_flow, insert_rank, insert_device, insert_pg, insert_stream, insert_thread,
      insert_diagnostic, insert_meta, insert_op_work, insert_kernel_work;

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
    db.exec(schema::enums_insert_sql());
    db.exec("BEGIN");
    using namespace schema;
    insert_string = db.prepare(insert_sql<Strings>());
    insert_activity = db.prepare(insert_sql<Activities>());
    insert_collective = db.prepare(insert_sql<Collectives>());
    insert_api_call = db.prepare(insert_sql<ApiCalls>());
    insert_range = db.prepare(insert_sql<Ranges>());
    insert_activities = db.prepare(insert_sql<Activities>(kRowsPerInsert));
    insert_api_calls = db.prepare(insert_sql<ApiCalls>(kRowsPerInsert));
    insert_ranges = db.prepare(insert_sql<Ranges>(kRowsPerInsert));
    insert_op_works = db.prepare(insert_sql<OpWork>(kRowsPerInsert));
    insert_kernel_works = db.prepare(insert_sql<KernelWork>(kRowsPerInsert));
    insert_flow = db.prepare(insert_sql<Flows>());
    insert_thread_activity = db.prepare(insert_sql<ThreadActivity>());
    insert_thread_activities = db.prepare(insert_sql<ThreadActivity>(kRowsPerInsert));
    insert_rank = db.prepare(insert_sql<Ranks>(1, "INSERT OR REPLACE"));
    insert_device = db.prepare(insert_sql<Devices>(1, "INSERT OR REPLACE"));
    insert_pg = db.prepare(insert_sql<ProcessGroups>(1, "INSERT OR REPLACE"));
    insert_stream = db.prepare(insert_sql<Streams>(1, "INSERT OR REPLACE"));
    insert_thread = db.prepare(insert_sql<Threads>(1, "INSERT OR REPLACE"));
    insert_diagnostic = db.prepare(insert_sql<Diagnostics>());
    insert_meta = db.prepare(insert_sql<Meta>(1, "INSERT OR REPLACE"));
    insert_op_work = db.prepare(insert_sql<OpWork>());
    insert_kernel_work = db.prepare(insert_sql<KernelWork>());
  }

  void finalize_statements() {
    for (sql::Statement* s : {&insert_activities,
                              &insert_api_calls,
                              &insert_ranges,
                              &insert_op_works,
                              &insert_kernel_works,
                              &insert_string,
                              &insert_activity,
                              &insert_collective,
                              &insert_api_call,
                              &insert_range,
                              &insert_flow,
                              &insert_rank,
                              &insert_device,
                              &insert_pg,
                              &insert_stream,
                              &insert_thread,
                              &insert_diagnostic,
                              &insert_meta,
                              &insert_op_work,
                              &insert_kernel_work,
                              &insert_thread_activity,
                              &insert_thread_activities}) {
      *s = sql::Statement();
    }
  }

  // The large tables (and the work tables, written all at once at the end of a file) are inserted
  // kRowsPerInsert rows per statement: SQLite's per-statement cost is
  // then paid once for many rows.
  static constexpr int kRowsPerInsert = 16;

  // Binds ROW's columns from FIRST on (1-based), for insert_rows.
  template <typename Table, typename Row>
  static void bind_row(sql::Statement& s, int first, const Row& row) {
    if constexpr (std::is_same_v<Table, schema::Activities>) {
      schema::Activities::bind(s, first, row.first, row.second);
    } else if constexpr (std::is_same_v<Table, schema::Ranges>) {
      schema::Ranges::bind(s, first, row.id, row.depth, row.parent, row.record);
    } else {
      Table::bind(s, first, row);
    }
  }

  template <typename Table, typename Rows>
  static void insert_rows(const Rows& rows, sql::Statement& one, sql::Statement& many) {
    constexpr int columns = Table::kCount;
    std::size_t i = 0;
    for (; i + kRowsPerInsert <= rows.size(); i += kRowsPerInsert) {
      for (int r = 0; r < kRowsPerInsert; ++r)
        bind_row<Table>(many, 1 + r * columns, rows[i + static_cast<std::size_t>(r)]);
      many.run();
    }
    for (; i < rows.size(); ++i) {
      bind_row<Table>(one, 1, rows[i]);
      one.run();
    }
  }

  void write_batch(const Batch& batch) {
    using namespace schema;
    for (const auto& [id, text] : batch.strings) {
      insert_string.bind(1 + Strings::id, id);
      sqlite3_bind_text(insert_string.handle(), 1 + Strings::value, text.data(),
                        static_cast<int>(text.size()), SQLITE_STATIC);
      insert_string.run();
    }
    insert_rows<Activities>(batch.activities, insert_activity, insert_activities);
    for (const auto& [id, c] : batch.collectives) {
      Collectives::bind(insert_collective, 1, id, c);
      insert_collective.run();
    }
    insert_rows<ApiCalls>(batch.api_calls, insert_api_call, insert_api_calls);
    insert_rows<Ranges>(batch.ranges, insert_range, insert_ranges);
    insert_rows<OpWork>(batch.op_work, insert_op_work, insert_op_works);
    insert_rows<KernelWork>(batch.kernel_work, insert_kernel_work, insert_kernel_works);
    insert_rows<ThreadActivity>(batch.thread_activity, insert_thread_activity, insert_thread_activities);
    for (const auto& f : batch.flows) {
      Flows::bind(insert_flow, 1, f);
      insert_flow.run();
    }
    for (const auto& r : batch.ranks) {
      Ranks::bind(insert_rank, 1, r);
      insert_rank.run();
    }
    for (const auto& d : batch.devices) {
      Devices::bind(insert_device, 1, d);
      insert_device.run();
    }
    for (const auto& p : batch.process_groups) {
      ProcessGroups::bind(insert_pg, 1, p);
      insert_pg.run();
    }
    for (const auto& st : batch.streams) {
      Streams::bind(insert_stream, 1, st);
      insert_stream.run();
    }
    for (const auto& t : batch.threads) {
      Threads::bind(insert_thread, 1, t);
      insert_thread.run();
    }
    for (const auto& d : batch.diagnostics) {
      auto& s = insert_diagnostic;
      s.bind(1 + Diagnostics::rank, d.rank < 0 ? kNull : d.rank);  // a negative rank: the whole job
      s.bind_text(1 + Diagnostics::severity, d.severity);
      s.bind_text(1 + Diagnostics::message, d.message);
      s.run();
    }
    for (const auto& [key, value] : batch.meta) {
      insert_meta.bind_text(1 + Meta::key, key);
      insert_meta.bind_text(1 + Meta::value, value);
      insert_meta.run();
    }
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

  void write_collective(std::int64_t id, const CollectiveRecord& c) {
    Batch batch;
    batch.collectives.emplace_back(id, c);
    write_batch(batch);
  }

  void finish_ranks() {
    sql::Statement update = db.prepare("UPDATE ranks SET first_ns = ?, last_ns = ? WHERE rank = ?");
    for (const auto& [rank, extent] : rank_extent) {
      const auto [final_rank, shift] = writer::rewritten(rank, rank_rewrites);
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
  // A link is written through (the file it names is replaced, the link stays); a device, FIFO or directory,
  // an input and a folder that cannot be written are refused before anything is written (OutputFile).
  impl_->options = std::move(options);
  std::error_code ignored;
  if (impl_->options.durable) {
    impl_->target = resolve_output_path(target);
    impl_->temp = make_temp_path(impl_->target, true);
  } else {
    impl_->output.emplace(target, impl_->options.inputs);
    impl_->target = impl_->output->target();
    impl_->temp = impl_->output->scratch();
  }
  std::filesystem::remove(impl_->temp, ignored);
  try {
    impl_->open();
  } catch (...) {
    impl_->db.close();
    std::filesystem::remove(impl_->temp, ignored);
    throw;
  }
  if (impl_->options.background) impl_->thread = std::thread([this] { impl_->thread_main(); });
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
  const writer::NestedRange range{impl.next_range_id++, 0, kNull, record};
  if (!impl.nesting.add(range)) impl.current->ranges.push_back(range);
  impl.maybe_flush();
}

void ProfileWriter::add_nested_ranges(const std::vector<RangeRecord>& ranges,
                                      const std::vector<std::int32_t>& depth,
                                      const std::vector<std::int64_t>& parent) {
  auto& impl = *impl_;
  const std::int64_t base = impl.next_range_id;  // RANGES[i] gets id BASE + i
  impl.next_range_id += static_cast<std::int64_t>(ranges.size());
  std::map<writer::TrackKey, std::size_t> tracks;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const RangeRecord& r = ranges[i];
    impl.extend(r.rank, r.start_ns, r.end_ns);
    const auto index = static_cast<std::int64_t>(i);
    impl.current->ranges.push_back({base + index, depth[i], parent[i] < 0 ? kNull : base + parent[i], r});
    ++tracks[{r.rank, r.pid, r.tid}];
    impl.maybe_flush();
  }
  for (const auto& [key, count] : tracks) impl.nesting.add_nested_track(key, count);
}

std::int64_t ProfileWriter::add_op_work(const OpWorkRecord& record) {
  OpWorkRecord r = record;
  r.id = impl_->next_op_work_id++;
  impl_->current->op_work.push_back(r);
  impl_->maybe_flush();
  return r.id;
}

void ProfileWriter::add_kernel_work(const KernelWorkRecord& record) {
  impl_->current->kernel_work.push_back(record);
  impl_->maybe_flush();
}

void ProfileWriter::add_flow(const FlowRecord& record) {
  impl_->current->flows.push_back(record);
  impl_->maybe_flush();
}

void ProfileWriter::add_thread_activity(const ThreadActivityRecord& record) {
  impl_->current->thread_activity.push_back(record);
  impl_->maybe_flush();
}

void ProfileWriter::add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) {
  impl_->cpu_collectives.push_back({record, pid, tid, false});
}

void ProfileWriter::add_resolved_collective(const CollectiveRecord& record) {
  impl_->cpu_collectives.push_back({record, 0, 0, true});
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

void ProfileWriter::close_tracks() {
  impl_->nesting.close_tracks();
  impl_->maybe_flush();
}

void ProfileWriter::checkpoint() {
  impl_->nesting.close_tracks();  // a killed process must leave every range handed over in the file
  impl_->drain();
  impl_->rethrow_thread_error();
  std::lock_guard lock(impl_->mutex);  // the background thread is idle once drained; keep it that way
  impl_->db.exec("COMMIT; BEGIN");
}

void ProfileWriter::commit() {
  {
    PhaseTimer timer("writer: drain batches");
    impl_->nesting.close_tracks();
    impl_->drain();
    impl_->stop_thread();
  }
  impl_->rethrow_thread_error();
  auto& db = impl_->db;
  writer::rewrite_ranks(impl_->cpu_collectives, impl_->rank_rewrites);
  writer::apply_rank_rewrites(db, impl_->rank_rewrites);
  {
    PhaseTimer timer("writer: create indexes");
    // The sorts behind CREATE INDEX run on several threads (SQLite's sorter helpers): the rows are all in,
    // the importing threads are done.
    const unsigned helpers = std::clamp(std::thread::hardware_concurrency(), 1u, 4u) - 1;
    db.exec(fmt::format("PRAGMA threads={}", helpers));
    db.exec(schema_indexes_sql());
  }
  {
    PhaseTimer timer("writer: resolve collectives");
    writer::resolve_cpu_collectives(
        db, impl_->cpu_collectives, impl_->next_collective_id,
        [this](std::int64_t id, const CollectiveRecord& c) { impl_->write_collective(id, c); });
  }
  if (const auto repair = impl_->nesting.tracks_to_repair(); !repair.empty()) {
    PhaseTimer timer("writer: repair nesting");
    // In place for a few tracks; a table rewrite in track order when they hold much of it (updates in place
    // touch pages at random).
    if (impl_->nesting.ranges_to_repair() * 4 <= impl_->nesting.total_ranges()) {
      std::vector<writer::TrackKey> stored;
      for (const auto& t : repair)
        stored.push_back({writer::rewritten(t.rank, impl_->rank_rewrites).rank, t.pid, t.tid});
      writer::repair_range_nesting(db, stored);
    } else {
      db.exec("PRAGMA temp_store=FILE");  // the sort of millions of ranges spills to disk, not memory
      writer::rebuild_range_nesting(db);
    }
  }
  {
    PhaseTimer timer("writer: finish");
    impl_->finish_ranks();
    db.exec("COMMIT");
  }
  if (impl_->options.durable) db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  impl_->finalize_statements();  // an unfinalized statement would keep the connection (and its lock) alive
  db.close();
  if (impl_->output) {
    if (impl_->options.before_publish) impl_->options.before_publish(impl_->temp, impl_->target);
    impl_->output->publish();
  } else {
    std::error_code error;
    std::filesystem::rename(impl_->temp, impl_->target, error);
    if (error) fail("{}: cannot write profile: {}", impl_->target.string(), error.message());
  }
  impl_->committed = true;
}

std::optional<std::pair<TimeNs, TimeNs>> ProfileWriter::rank_extent(std::int32_t rank) const {
  const auto it = impl_->rank_extent.find(rank);
  if (it == impl_->rank_extent.end()) return std::nullopt;
  return it->second;
}

const std::filesystem::path& ProfileWriter::target() const {
  return impl_->target;
}
const std::filesystem::path& ProfileWriter::temp_path() const {
  return impl_->temp;
}

}  // namespace meshscope
