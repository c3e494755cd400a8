// Reading a profile's tables: the description, and the event tables scanned in slices on their own threads
// (profile_load.hpp); each row checked by TableReader.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "profiler/error.hpp"
#include "profiler/event_rows.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile_load.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/table_reader.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::load {

// The three large tables are read on their own connections and threads (a profile can hold tens of millions
// of rows).
// CLAUSES: the WHERE clauses the table is read with, one after the other on one connection (one slice of a
// whole load, or the row runs of the ranks load_ranks reads; "" reads the whole table).
namespace {

// The rows of the event tables as the scanners of event_rows.hpp take them: each field read and checked by
// TableReader when asked for.
struct ActivityTableRow {
  using A = schema::Activities;
  const TableReader& s;
  std::int64_t string_bound;
  std::int32_t rank() const { return s.rank(A::rank); }
  std::int32_t device() const { return s.int32(A::device); }
  std::int64_t stream() const { return s.integer(A::stream); }
  ActivityKind kind() const {
    return static_cast<ActivityKind>(s.in_range(A::kind, 1, kActivityKindCount, "an activity kind (1-4)"));
  }
  std::pair<TimeNs, TimeNs> interval() const { return s.interval(A::start_ns, A::end_ns); }
  std::int64_t id() const { return s.integer(A::id); }
  std::int64_t correlation() const { return s.integer_or_null(A::correlation); }
  StringId name() const { return s.string_id(A::name, string_bound); }
  KernelDetail kernel_detail() const {
    KernelDetail k{};
    for (int i = 0; i < 3; ++i) k.grid[i] = to_i32(s.integer_or_null(A::grid_x + i));
    for (int i = 0; i < 3; ++i) k.block[i] = to_i32(s.integer_or_null(A::block_x + i));
    k.registers = to_i32(s.integer_or_null(A::registers));
    k.shared_bytes = to_i32(s.integer_or_null(A::shared_bytes));
    k.graph_id = s.integer_or_null(A::graph_id);
    return k;
  }
  CopyDetail copy_detail() const {
    return {s.integer_or_null(A::bytes), s.string_id(A::copy_kind, string_bound)};
  }
};

struct ApiCallTableRow {
  using C = schema::ApiCalls;
  const TableReader& s;
  std::int64_t string_bound;
  std::int32_t rank() const { return s.rank(C::rank); }
  ApiKind kind() const {
    return static_cast<ApiKind>(s.in_range(C::kind, 1, kApiKindCount, "an API kind (1-2)"));
  }
  std::int64_t pid() const { return s.integer(C::pid); }
  std::int64_t tid() const { return s.integer(C::tid); }
  std::pair<TimeNs, TimeNs> interval() const { return s.interval(C::start_ns, C::end_ns); }
  StringId name() const { return s.string_id(C::name, string_bound); }
  std::int64_t correlation() const { return s.integer_or_null(C::correlation); }
  std::int64_t external_id() const { return s.integer_or_null(C::external_id); }
};

struct RangeTableRow {
  using R = schema::Ranges;
  const TableReader& s;
  std::int64_t string_bound;
  RangeKind kind() const {
    return static_cast<RangeKind>(s.in_range(R::kind, 1, kRangeKindCount, "a range kind (1-8)"));
  }
  std::int32_t rank() const { return s.rank(R::rank); }
  std::int64_t pid() const { return s.integer(R::pid); }
  std::int64_t tid() const { return s.integer(R::tid); }
  std::pair<TimeNs, TimeNs> interval() const { return s.interval(R::start_ns, R::end_ns); }
  std::int64_t id() const { return s.integer(R::id); }
  std::int64_t external_id() const { return s.integer_or_null(R::external_id); }
  std::int64_t step() const { return s.integer_or_null(R::step); }
  StringId name() const { return s.string_id(R::name, string_bound); }
  StringId category() const { return s.string_id(R::category, string_bound); }
  std::int32_t depth() const {
    return static_cast<std::int32_t>(s.in_range(R::depth, 0, INT32_MAX, "a depth"));
  }
};

struct CollectiveTableRow {
  using C = schema::Collectives;
  const TableReader& s;
  std::int64_t string_bound;
  std::int64_t id() const { return s.integer(C::id); }
  std::int64_t activity_id() const { return s.integer_or_null(C::activity_id); }
  StringId communicator() const { return s.string_id(C::communicator, string_bound); }
  StringId pg_desc() const { return s.string_id(C::pg_desc, string_bound); }
  StringId pg_ranks() const { return s.string_id(C::pg_ranks, string_bound); }
  std::int64_t seq() const { return s.integer_or_null(C::seq); }
  StringId op() const { return s.string_id(C::op, string_bound); }
  std::int64_t in_nelems() const { return s.integer_or_null(C::in_nelems); }
  std::int64_t out_nelems() const { return s.integer_or_null(C::out_nelems); }
  StringId dtype() const { return s.string_id(C::dtype, string_bound); }
  std::int64_t in_bytes() const { return s.integer_or_null(C::in_bytes); }
  std::int64_t out_bytes() const { return s.integer_or_null(C::out_bytes); }
  std::int64_t group_size() const { return s.integer_or_null(C::group_size); }
  StringId algorithm() const { return s.string_id(C::algorithm, string_bound); }
  StringId protocol() const { return s.string_id(C::protocol, string_bound); }
  std::int64_t channels() const { return s.integer_or_null(C::channels); }
  std::pair<TimeNs, TimeNs> interval() const { return s.interval(C::start_ns, C::end_ns); }
};

}  // namespace

ActivityScan scan_activities(const ProfileSource& source, std::int64_t string_bound, bool kernel_details,
                             std::span<const std::string> clauses) {
  sql::Database db = source.connect();
  using A = schema::Activities;
  static constexpr int kKernelDetailColumns[] = {A::grid_x,    A::grid_y,       A::grid_z,
                                                 A::block_x,   A::block_y,      A::block_z,
                                                 A::registers, A::shared_bytes, A::graph_id};
  ActivityScanner scanner(kernel_details);
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<A>(
        db, true, "id", clause,
        kernel_details ? std::span<const int>() : std::span<const int>(kKernelDetailColumns));
    while (s.step()) scanner.add(ActivityTableRow{s, string_bound});
  }
  return scanner.finish();
}

ApiCallScan scan_api_calls(const ProfileSource& source, std::int64_t string_bound, bool links,
                           std::span<const std::string> clauses) {
  sql::Database db = source.connect();
  using C = schema::ApiCalls;
  static constexpr int kLinkColumns[] = {C::external_id};
  ApiCallScanner scanner;
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<C>(db, false, "id", clause,
                                links ? std::span<const int>() : std::span<const int>(kLinkColumns));
    while (s.step()) scanner.add(ApiCallTableRow{s, string_bound});
  }
  return scanner.finish();
}

// The rows a load without CPU operators reads (LoadOptions::cpu_operators off); a NULL kind is read to be
// refused. PROCESS_GROUP_CALLS: LoadOptions::process_group_calls.
constexpr int kCpuOpKind = static_cast<int>(RangeKind::kCpuOp);
constexpr int kPythonKind = static_cast<int>(RangeKind::kPythonFunction);
std::string process_group_call_names() {
  return "name IN (SELECT id FROM strings WHERE " + vocabulary::process_group_call_sql("value") + ")";
}
std::string loaded_without_operators(bool process_group_calls) {
  const std::string operators = fmt::format("kind NOT IN ({}, {}) OR kind IS NULL", kCpuOpKind, kPythonKind);
  return process_group_calls
             ? fmt::format("({} OR (kind = {} AND {}))", operators, kCpuOpKind, process_group_call_names())
             : "(" + operators + ")";
}
// The CPU operators such a load leaves out.
std::string left_out_operators(bool process_group_calls) {
  const std::string operators = fmt::format("kind = {}", kCpuOpKind);
  return process_group_calls ? operators + " AND NOT " + process_group_call_names() : operators;
}

RangeScan scan_ranges(const ProfileSource& source, const LoadOptions& options, std::int64_t string_bound,
                      std::span<const std::string> clauses) {
  const bool cpu_operators = options.cpu_operators, links = options.links;
  const bool count_left_out = !options.operators_left_out;
  sql::Database db = source.connect();
  RangeScanner scanner;
  RangeScan& scan = scanner.scan();
  using R = schema::Ranges;
  // parent_id is never decoded: a range's parent is found from the nesting (Rank::parent_range).
  static constexpr int kLinkColumns[] = {R::parent_id, R::external_id, R::category, R::input_dims,
                                         R::input_types};
  static constexpr int kUnheld[] = {R::parent_id, R::input_dims, R::input_types};
  for (const std::string& slice : clauses) {
    // Without CPU operators SQLite leaves their rows out (they are most of the table: decoding them would be
    // most of the load) and counts them apart.
    std::string where = slice;
    if (!cpu_operators)
      where += (where.empty() ? "WHERE " : " AND ") + loaded_without_operators(options.process_group_calls);
    auto s = TableReader::of<R>(db, false, "id", where,
                                links ? std::span<const int>(kUnheld) : std::span<const int>(kLinkColumns));
    if (!cpu_operators && count_left_out && s.present()) {
      // Counted with FILTER, not GROUP BY kind: grouping would feed every operator row through a sorter
      // (about four times as slow on a profile of millions of operators).
      auto count = db.prepare(
          fmt::format("SELECT count(*) FILTER (WHERE {}), count(*) FILTER (WHERE kind = {}) FROM ranges {}",
                      left_out_operators(options.process_group_calls),
                      static_cast<int>(RangeKind::kPythonFunction), slice));
      if (count.step()) {
        scan.skipped_cpu_ops += count.column_int(0);
        scan.skipped_python += count.column_int(1);
      }
    }
    while (s.step()) scanner.add(RangeTableRow{s, string_bound});
  }
  return scanner.finish();
}

// Nesting cannot be deeper than the track has ranges: a deeper one would size the timeline's rows. Checked
// once the whole table is read (its slices were read apart).
void check_range_depths(const std::filesystem::path& path, RangeScan& scan) {
  // The CPU operators left out are counted only over the table: any track may hold them all.
  const auto skipped = static_cast<std::size_t>(scan.skipped_cpu_ops + scan.skipped_python);
  for (const auto& [key, list_of_track] : scan.tracks) {
    const std::size_t on_track =
        scan.rows_per_track[{std::get<0>(key), std::get<2>(key), std::get<3>(key)}] + skipped;
    for (const auto& c : list_of_track) {
      if (static_cast<std::size_t>(c.depth) >= on_track) {
        fail("{}: ranges id={}: depth {} is deeper than the {} range(s) of its track", path.string(), c.id,
             c.depth, on_track);
      }
    }
  }
}

// Large tables are read in slices of their rowids, each on its own connection and thread; a slice's lists
// are sorted as they are read, and the slices' lists merged in rowid order, so the result is what one
// stable sort over the whole table gives. SQLite reads a slice of a rowid table by seeking, not scanning.
// SLICES: LoadOptions::table_slices (0: one per hardware thread, for tables of a million rows or more).
std::vector<std::string> rowid_slices(sql::Database& db, const char* table, std::size_t slices_wanted) {
  constexpr std::uint64_t kRowsPerSlice = 1'000'000;  // below this a table is read whole
  const auto columns = db.table_columns(table);
  // A column named like the rowid hides it: such a table (never one meshscope wrote) is read whole.
  if (!columns) return {std::string()};
  for (const auto& [name, type] : *columns) {
    if (name.size() == 5 &&
        std::equal(name.begin(), name.end(), "rowid", [](char a, char b) { return (a | 0x20) == b; }))
      return {std::string()};
  }
  std::int64_t lo = 0, hi = 0;
  try {
    // Two queries: SQLite reads min() or max() of the rowid alone from the b-tree's edge, but both in one
    // query from every row.
    auto edge = [&](const char* which, std::int64_t& out) {
      auto s = db.prepare(fmt::format("SELECT {}(rowid) FROM \"{}\"", which, table));
      if (!s.step() || s.column_type(0) != SQLITE_INTEGER) return false;
      out = s.column_int(0);
      return true;
    };
    if (!edge("min", lo) || !edge("max", hi)) return {std::string()};
  } catch (const Error&) {
    return {std::string()};  // a WITHOUT ROWID table: read whole (TableReader then says what is wrong)
  }
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const auto threads = static_cast<std::uint64_t>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  const std::uint64_t parts = slices_wanted > 0 ? std::min<std::uint64_t>(slices_wanted, span / 2 + 1)
                                                : std::min<std::uint64_t>(threads, span / kRowsPerSlice + 1);
  if (parts <= 1) return {std::string()};
  std::vector<std::string> slices;
  std::int64_t from = lo;
  for (std::uint64_t i = 1; i <= parts; ++i) {
    if (i == parts) {
      slices.push_back(fmt::format("WHERE rowid >= {}", from));
    } else {
      const auto to = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + span / parts * i);
      slices.push_back(i == 1 ? fmt::format("WHERE rowid < {}", to)
                              : fmt::format("WHERE rowid >= {} AND rowid < {}", from, to));
      from = to;
    }
  }
  return slices;
}

// Appends FROM's list to INTO's (both sorted by BEFORE) and merges them, INTO's first on a tie.
template <typename T, typename Before>
void merge_sorted(std::vector<T>& into, std::vector<T>& from, Before before) {
  if (from.empty()) return;
  if (into.empty()) {
    into = std::move(from);
    return;
  }
  const auto middle = static_cast<std::ptrdiff_t>(into.size());
  into.reserve(into.size() + from.size());  // exactly: insert alone may double it
  into.insert(into.end(), from.begin(), from.end());
  std::vector<T>().swap(from);
  // Already in order when FROM's first comes after INTO's last (slices of a table sorted by time).
  if (before(into[static_cast<std::size_t>(middle)], into[static_cast<std::size_t>(middle - 1)]))
    std::inplace_merge(into.begin(), into.begin() + middle, into.end(), before);
}

ActivityScan merge_scans(std::vector<ActivityScan>& parts) {
  ActivityScan out = std::move(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    ActivityScan& part = parts[i];
    // Kernel and copy details are numbered per rank: the part's copies move past what came before, and its
    // kernel configurations map to the rank's distinct ones (added when new).
    std::map<std::int32_t, std::vector<std::uint32_t>> kernel_index;  // rank -> part's number -> merged
    for (auto& [rank, list] : part.kernels) {
      auto& into = out.kernels[rank];
      std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash> distinct;
      for (std::uint32_t k = 0; k < into.size(); ++k) distinct.try_emplace(into[k], k);
      auto& index = kernel_index[rank];
      for (const KernelDetail& k : list) {
        const auto [it, added] = distinct.try_emplace(k, static_cast<std::uint32_t>(into.size()));
        if (added) into.push_back(k);
        index.push_back(it->second);
      }
    }
    for (auto& [key, list] : part.buckets) {
      const auto copies_before = static_cast<std::uint32_t>(out.copies[std::get<0>(key)].size());
      const auto index = kernel_index.find(std::get<0>(key));
      for (Activity& a : list) {
        if (a.detail == kNoDetail) continue;
        a.detail = a.kind == ActivityKind::kKernel ? index->second[a.detail] : a.detail + copies_before;
      }
    }
    for (auto& [key, list] : part.buckets) merge_sorted(out.buckets[key], list, activity_before);
    for (auto& [rank, list] : part.copies) {
      auto& into = out.copies[rank];
      into.insert(into.end(), list.begin(), list.end());
    }
    part = {};
  }
  return out;
}

ApiCallScan merge_scans(std::vector<ApiCallScan>& parts) {
  ApiCallScan out = std::move(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    for (auto& [rank, part] : parts[i]) {
      // The part's threads are numbered as its scan met them: renumbered into the merged rank's.
      RankCalls& into = out[rank];
      std::vector<std::uint32_t> renumber(part.threads.size());
      for (std::size_t t = 0; t < part.threads.size(); ++t) renumber[t] = into.thread(part.threads[t]);
      for (ApiCall& c : part.calls) c.thread = renumber[c.thread];
      merge_sorted(into.calls, part.calls, api_call_before);
    }
    parts[i] = {};
  }
  return out;
}

RangeScan merge_scans(std::vector<RangeScan>& parts) {
  RangeScan out = std::move(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    RangeScan& part = parts[i];
    for (auto& [key, list] : part.tracks) merge_sorted(out.tracks[key], list, range_before);
    for (const auto& [key, rows] : part.rows_per_track) out.rows_per_track[key] += rows;
    out.step_of_range.merge(part.step_of_range);
    out.skipped_cpu_ops += part.skipped_cpu_ops;
    out.skipped_python += part.skipped_python;
    part = {};
  }
  return out;
}

// Reads a table's slices (SCAN(slice) reads one; LAUNCH: each on a thread of its own, or one after the other)
// and merges them; a slice's error is the first reported, in rowid order, as a single read would have met
// them.
template <typename Scan, typename ScanSlice>
Scan scan_sliced(const std::vector<std::string>& slices, ScanSlice scan, std::launch launch) {
  std::vector<std::future<Scan>> futures;
  for (std::size_t i = 1; i < slices.size(); ++i) futures.push_back(std::async(launch, scan, slices[i]));
  std::vector<Scan> parts;
  std::exception_ptr error;
  try {
    parts.push_back(scan(slices[0]));
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& f : futures) {
    try {
      parts.push_back(f.get());
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return merge_scans(parts);
}

// The number of string ids (the largest id + 1), after checking that ids are positive and dense enough to be
// held in a vector: a hostile id (-1, 10^12) must not size memory. The writer numbers strings 1, 2, 3, ...;
// up to half the ids may be missing (hand-edited profiles) before the table counts as damaged.
std::int64_t string_id_bound(sql::Database& db, const std::filesystem::path& path) {
  if (!db.table_columns("strings")) fail("{}: not a meshscope profile (no strings table)", path.string());
  auto s = db.prepare("SELECT count(*), min(id), max(id) FROM strings");
  if (!s.step()) return 1;
  const std::int64_t count = s.column_int_or(0, 0);
  if (count == 0) return 1;
  const std::int64_t min = s.column_int(1), max = s.column_int(2);
  if (min < 1) fail("{}: strings id={}: string ids start at 1", path.string(), min);
  if (max > 2 * count + 1024) {
    fail("{}: strings id={}: id out of range (the table holds {} strings)", path.string(), max, count);
  }
  return max + 1;
}

// One loader per table: each reads its table through TableReader (columns by name, values checked).
std::map<std::string, std::string> read_meta(sql::Database& db) {
  std::map<std::string, std::string> meta;
  using M = schema::Meta;
  auto s = TableReader::of<M>(db, true, nullptr);
  while (s.step()) meta[s.text(M::key)] = s.text(M::value);
  return meta;
}

int schema_version_of(const std::map<std::string, std::string>& meta) {
  auto it = meta.find("schema_version");
  if (it == meta.end()) return 0;
  const std::string& v = it->second;
  int version = 0;
  const auto [end_ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), version);
  return ec == std::errc() ? version : 0;
}

std::vector<std::string> read_strings(sql::Database& db, std::int64_t string_bound) {
  std::vector<std::string> strings;
  // Ids were checked against the table's size above: the vector is at most about twice the rows.
  using S = schema::Strings;
  auto s = TableReader::of<S>(db, true, "id", "ORDER BY id");
  strings.resize(static_cast<std::size_t>(string_bound));
  while (s.step()) {
    strings[static_cast<std::size_t>(s.in_range(S::id, 1, string_bound - 1, "an id"))] = s.text(S::value);
  }
  return strings;
}

void read_ranks(sql::Database& db, RankSlots& ranks) {
  using R = schema::Ranks;
  auto s = TableReader::of<R>(db, false, "rank", "ORDER BY rank");
  while (s.step()) {
    Rank& r = ranks.slot(s.rank(R::rank));
    r.world_size = s.integer_or_null(R::world_size);
    if (r.world_size != kNull && (r.world_size < 1 || r.world_size > kMaxRank + 1)) {
      s.bad(R::world_size, fmt::format("{} is not a world size (1 to 1000001)", r.world_size));
    }
    r.hostname = s.text(R::hostname);
    r.pid = s.integer_or_null(R::pid);
    r.source_file = s.text(R::source_file);
    r.rank_source = s.text(R::rank_source);
    r.backend = s.text(R::backend);
    r.comm_version = s.text(R::comm_version);
    const TimeNs base = s.time_or_null(R::clock_base_ns), offset = s.time_or_null(R::clock_offset_ns);
    r.clock_base_ns = base == kNull ? 0 : base;
    r.clock_offset_ns = offset == kNull ? 0 : offset;
    const TimeNs first = s.time_or_null(R::first_ns), last = s.time_or_null(R::last_ns);
    r.first_ns = first == kNull ? 0 : first;
    r.last_ns = last == kNull ? 0 : last;
  }
}

void read_devices(sql::Database& db, RankSlots& ranks) {
  using D = schema::Devices;
  auto s = TableReader::of<D>(db, false, nullptr, "ORDER BY rank, device");
  while (s.step()) {
    Rank& r = ranks.slot(s.rank(D::rank));
    r.devices.push_back({s.int32(D::device), s.text(D::name), s.integer_or_null(D::total_memory_bytes),
                         s.integer_or_null(D::compute_major), s.integer_or_null(D::compute_minor),
                         s.integer_or_null(D::sm_count)});
  }
}

void read_process_groups(sql::Database& db, RankSlots& ranks) {
  using P = schema::ProcessGroups;
  auto s = TableReader::of<P>(db, false, nullptr, "ORDER BY rank, pg_name");
  while (s.step()) {
    Rank& r = ranks.slot(s.rank(P::rank));
    const std::int64_t size = s.integer_or_null(P::group_size);
    if (size != kNull && (size < 0 || size > kMaxRank + 1)) {
      s.bad(P::group_size, fmt::format("{} is not a group size", size));
    }
    r.process_groups.push_back({s.text(P::pg_name), s.text(P::pg_desc), s.text(P::backend), size,
                                member_ranks(s, P::ranks_json, s.text(P::ranks_json))});
  }
}

// WHERE: a clause naming the ranks to read ("" for all).
StreamNames read_stream_names(sql::Database& db, const std::string& where = {}) {
  StreamNames stream_names;
  using St = schema::Streams;
  auto s = TableReader::of<St>(db, false, nullptr, where);
  while (s.step())
    stream_names[{s.rank(St::rank), s.int32(St::device), s.integer(St::stream)}] = s.text(St::name);
  return stream_names;
}

ThreadNames read_thread_names(sql::Database& db, const std::string& where = {}) {
  ThreadNames thread_names;
  using T = schema::Threads;
  auto t = TableReader::of<T>(db, false, nullptr, where);
  while (t.step()) thread_names[{t.rank(T::rank), t.integer(T::pid), t.integer(T::tid)}] = t.text(T::name);
  return thread_names;
}

// STRINGS: the profile's strings. collectives.source is text: each distinct source gets a string id after the
// table's strings (ids from STRING_BOUND on, where a source an earlier load added is found again); the texts
// STRINGS lacks are appended to ADDED, numbered from STRINGS.size() on.
std::vector<CollectiveRow> read_collectives(sql::Database& db, std::int64_t string_bound,
                                            const std::vector<std::string>& strings,
                                            std::vector<std::string>& added,
                                            std::span<const std::string> clauses) {
  std::map<std::string, StringId, std::less<>> source_ids;
  for (auto id = static_cast<std::size_t>(string_bound); id < strings.size(); ++id)
    source_ids.emplace(strings[id], static_cast<StringId>(id));
  std::vector<CollectiveRow> collective_rows;
  using C = schema::Collectives;
  // Read in rowid order and sorted here: ORDER BY would walk collectives_by_rank and fetch every row from
  // the table by its rowid, several times slower on large profiles.
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<C>(db, false, "id", clause);
    while (s.step()) {
      const std::int32_t rank = s.rank(C::rank);
      Collective c = collective_of(CollectiveTableRow{s, string_bound});
      {
        const std::string source = s.text(C::source);
        auto it = source_ids.find(source);
        if (it == source_ids.end()) {
          it = source_ids.emplace(source, static_cast<StringId>(strings.size() + added.size())).first;
          added.push_back(source);
        }
        c.source = it->second;
        c.metadata = source != vocabulary::kNameOnlySource;
      }
      collective_rows.push_back({rank, std::move(c)});
    }
  }
  std::sort(collective_rows.begin(), collective_rows.end(),
            [](const CollectiveRow& a, const CollectiveRow& b) {
              return std::tie(a.rank, a.collective.start_ns, a.collective.id) <
                     std::tie(b.rank, b.collective.start_ns, b.collective.id);
            });
  return collective_rows;
}

void read_flows(sql::Database& db, RankSlots& ranks, std::int64_t string_bound,
                std::span<const std::string> clauses) {
  using F = schema::Flows;
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<F>(db, false, "id", clause + " ORDER BY id");
    while (s.step()) {
      Rank& r = ranks.slot(s.rank(F::rank));
      r.flows.push_back({s.string_id(F::category, string_bound), s.integer(F::flow_id), s.time(F::src_ns),
                         s.integer(F::src_pid), s.integer(F::src_tid), s.time_or_null(F::dst_ns),
                         s.integer_or_null(F::dst_pid), s.integer_or_null(F::dst_tid)});
    }
  }
  for (Rank& r : ranks.ranks) r.flows.shrink_to_fit();
}

// The thread scheduling and CPU samples of the ranks WHERE selects ("" for all), grouped by thread in
// (pid, tid) order and by time within each.
void read_thread_activity(sql::Database& db, RankSlots& ranks, std::int64_t string_bound,
                          const std::string& where, const ThreadNames& thread_names) {
  using A = schema::ThreadActivity;
  struct Row {
    std::int32_t rank;
    std::int64_t pid, tid;
    ThreadActivityKind kind;
    TimeNs start_ns, end_ns;
    StringId stack;
    std::int32_t cpu;
  };
  std::vector<Row> rows;
  auto s = TableReader::of<A>(db, false, "id", where);
  while (s.step()) {
    Row row;
    row.rank = s.rank(A::rank);
    row.kind = static_cast<ThreadActivityKind>(
        s.in_range(A::kind, 1, kThreadActivityKindCount, "a thread activity kind (1-2)"));
    row.pid = s.integer(A::pid);
    row.tid = s.integer(A::tid);
    std::tie(row.start_ns, row.end_ns) = s.interval(A::start_ns, A::end_ns);
    const std::int64_t cpu = s.integer_or_null(A::cpu);
    row.cpu = cpu == kNull ? -1 : static_cast<std::int32_t>(s.in_range(A::cpu, 0, INT32_MAX, "a CPU number"));
    row.stack = s.string_id(A::stack, string_bound);
    rows.push_back(row);
  }
  if (rows.empty()) return;
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.rank, a.pid, a.tid, a.kind, a.start_ns, a.end_ns) <
           std::tie(b.rank, b.pid, b.tid, b.kind, b.start_ns, b.end_ns);
  });
  for (const Row& row : rows) {
    Rank& r = ranks.slot(row.rank);
    if (r.os_threads.empty() || r.os_threads.back().pid != row.pid || r.os_threads.back().tid != row.tid) {
      OsThread t{row.pid, row.tid, {}, 0, 0, 0, 0};
      const auto name = thread_names.find({row.rank, row.pid, row.tid});
      if (name != thread_names.end()) t.name = name->second;
      t.first_on_cpu = static_cast<std::uint32_t>(r.on_cpu.size());
      t.first_sample = static_cast<std::uint32_t>(r.cpu_samples.size());
      r.os_threads.push_back(std::move(t));
    }
    OsThread& t = r.os_threads.back();
    if (row.kind == ThreadActivityKind::kOnCpu) {
      r.on_cpu.push_back({row.start_ns, row.end_ns, row.cpu});
      ++t.on_cpu_count;
    } else {
      r.cpu_samples.push_back({row.start_ns, row.stack, row.cpu});
      ++t.sample_count;
    }
  }
}

// Diagnostics of a rank go to the rank; the others (rank NULL) are returned: they concern the whole job.
std::vector<Diagnostic> read_diagnostics(sql::Database& db, RankSlots& ranks) {
  std::vector<Diagnostic> job;
  using Dg = schema::Diagnostics;
  auto s = TableReader::of<Dg>(db, false, nullptr, "ORDER BY rowid");
  while (s.step()) {
    if (s.integer_or_null(Dg::rank) == kNull) {
      job.push_back({s.text(Dg::severity), s.text(Dg::message)});
    } else {
      ranks.slot(s.rank(Dg::rank)).diagnostics.push_back({s.text(Dg::severity), s.text(Dg::message)});
    }
  }
  return job;
}

Description read_description(sql::Database& db, std::int64_t string_ids, RankSlots& ranks) {
  Description d;
  d.meta = read_meta(db);
  d.schema_version = schema_version_of(d.meta);
  d.strings = read_strings(db, string_ids);
  read_ranks(db, ranks);
  read_devices(db, ranks);
  read_process_groups(db, ranks);
  d.job_diagnostics = read_diagnostics(db, ranks);
  return d;
}

sql::Database ProfileSource::connect() const {
  return image ? sql::Database::from_image(*image, path) : sql::Database(path, true);
}

sql::Database open_profile(const ProfileSource& source) {
  const std::filesystem::path& path = source.path;
  if (!source.image) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) fail("{}: no such profile", path.string());
    require_regular_input(path);  // a FIFO or a device would block SQLite's first read
  }
  sql::Database db = source.connect();
  bool tables_present = false;
  try {
    tables_present = db.table_columns("meta") && db.table_columns("activities");  // a view is refused
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find("file is not a database") != std::string::npos) {
      fail("{}: not a meshscope profile (not an SQLite database)", path.string());
    }
    throw;  // a damaged SQLite file: its own message
  }
  if (!tables_present) fail("{}: not a meshscope profile (no meta/activities tables)", path.string());
  return db;
}

// The events of the rows CLAUSES select, attached to the ranks of RANKS (which hold the description). The
// three large tables are read in the background, each on its own thread (the CPU ranges are usually the
// largest, about as large as the other two together), a whole table's slices in parallel, while this thread
// reads the small ones. RANK_WHERE selects the streams' and threads' names ("" for every rank). New
// collective source texts are appended to ADDED (read_collectives). Returns the CPU operators left out
// (counted).
RangeScan read_events(sql::Database& db, const ProfileSource& source, std::int64_t string_ids,
                      const LoadOptions& options, TableClauses& clauses, bool parallel_slices,
                      const std::string& rank_where, const std::vector<std::string>& strings,
                      std::vector<std::string>& added, RankSlots& ranks) {
  // A whole load reads each slice on its own connection and thread; load_ranks reads its runs one after the
  // other on one connection per table.
  auto scan_table = [&]<typename Scan>(std::type_identity<Scan>, const std::vector<std::string>& list,
                                       auto scan) {
    if (parallel_slices)
      return scan_sliced<Scan>(
          list, [&](const std::string& one) { return scan(std::span<const std::string>(&one, 1)); },
          source.launch());
    return scan(std::span<const std::string>(list));
  };
  auto activities_future = std::async(source.launch(), [&] {
    return scan_table(std::type_identity<ActivityScan>{}, clauses_of(clauses, EventTable::kActivities),
                      [&](std::span<const std::string> c) {
                        return scan_activities(source, string_ids, options.kernel_details, c);
                      });
  });
  auto api_calls_future = std::async(source.launch(), [&] {
    return scan_table(
        std::type_identity<ApiCallScan>{}, clauses_of(clauses, EventTable::kApiCalls),
        [&](std::span<const std::string> c) { return scan_api_calls(source, string_ids, options.links, c); });
  });
  auto ranges_future = std::async(source.launch(), [&] {
    RangeScan scan = scan_table(
        std::type_identity<RangeScan>{}, clauses_of(clauses, EventTable::kRanges),
        [&](std::span<const std::string> c) { return scan_ranges(source, options, string_ids, c); });
    if (!options.cpu_operators && options.operators_left_out) {
      scan.skipped_cpu_ops = options.operators_left_out->cpu_ops;
      scan.skipped_python = options.operators_left_out->python_functions;
    }
    check_range_depths(source.path, scan);
    return scan;
  });
  // An error here leaves through the futures' destructors, which wait for their threads.
  const StreamNames stream_names = read_stream_names(db, rank_where);
  const ThreadNames thread_names = read_thread_names(db, rank_where);
  std::vector<CollectiveRow> collective_rows =
      read_collectives(db, string_ids, strings, added, clauses_of(clauses, EventTable::kCollectives));
  read_flows(db, ranks, string_ids, clauses_of(clauses, EventTable::kFlows));
  ActivityScan activities = activities_future.get();
  attach_activities(activities, stream_names, ranks);
  attach_collectives(collective_rows, ranks);
  auto api_calls = api_calls_future.get();
  auto range_scan = ranges_future.get();
  attach_cpu(api_calls, range_scan, thread_names, ranks);
  read_thread_activity(db, ranks, string_ids, rank_where, thread_names);
  return range_scan;
}

}  // namespace meshscope::load
