#include "profiler/profile.hpp"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope {

// What every load reads: the profile's description (the events aside).
struct Description {
  std::map<std::string, std::string> meta;
  int schema_version = 0;
  std::vector<std::string> strings;
  std::vector<Diagnostic> job_diagnostics;
};

namespace {

using sql::Affinity;

std::int32_t to_i32(std::int64_t value) {
  if (value == kNull) return -1;
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(value, INT32_MIN, INT32_MAX));
}

Rank& rank_slot(std::vector<Rank>& ranks, std::map<std::int32_t, std::size_t>& index, std::int32_t rank) {
  auto it = index.find(rank);
  if (it != index.end()) return ranks[it->second];
  index.emplace(rank, ranks.size());
  ranks.emplace_back();
  ranks.back().rank = rank;
  return ranks.back();
}

const char* affinity_name(Affinity a) {
  switch (a) {
    case Affinity::kInteger:
      return "INTEGER";
    case Affinity::kText:
      return "TEXT";
    case Affinity::kBlob:
      return "BLOB";
    case Affinity::kReal:
      return "REAL";
    case Affinity::kNumeric:
      return "NUMERIC";
  }
  return "?";
}

// One table as Profile::load reads it. Before reading: the table must be an ordinary table (never a view: its
// SQL would run), the wanted columns are found by name and their declared types checked; a wanted column the
// profile lacks reads as NULL when optional (profiles of another schema_version load what meshscope knows).
// While reading: every value is checked as it is taken (type, range), and a bad one is refused with one line
// naming the file, the table and the row (its id, or its position).
class TableReader {
 public:
  // TABLE's columns as schema_tables.hpp describes them, selected in that order: read column Activities::rank
  // as integer(Activities::rank).
  // UNREAD columns are selected as NULL (SQLite then does not decode them): for loads that do not keep them.
  template <typename Table>
  static TableReader of(sql::Database& db, bool required_table, const char* key_column = "id",
                        std::string_view tail = {}, std::span<const int> unread = {}) {
    return TableReader(db, Table::kName, Table::kColumns, required_table, key_column, tail, unread);
  }

  TableReader(sql::Database& db, const char* table, std::span<const schema::Column> columns,
              bool required_table, const char* key_column = "id", std::string_view tail = {},
              std::span<const int> unread = {})
      : path_(db.path()), table_(table), columns_(columns) {
    const auto declared = db.table_columns(table);
    if (!declared) {
      if (required_table) fail("{}: not a meshscope profile (no {} table)", path_.string(), table);
      return;
    }
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const schema::Column& c = columns_[i];
      if (i) sql += ", ";
      if (std::find(unread.begin(), unread.end(), static_cast<int>(i)) != unread.end()) {
        sql += "NULL";
        continue;
      }
      const auto found = declared->find(c.name);
      if (found == declared->end()) {
        if (c.required) {
          fail("{}: table {} has no column {} (not a profile this meshscope can read)", path_.string(), table,
               c.name);
        }
        sql += "NULL";
        continue;
      }
      if (found->second == sql::kComputedColumn) {
        fail("{}: {}.{} is a computed column (meshscope reads only stored values; a hostile file?)",
             path_.string(), table, c.name);
      }
      const Affinity affinity = sql::affinity_of(found->second);
      if (affinity != c.affinity) {
        fail("{}: {}.{} is declared {}, not {} (a damaged or hostile file?)", path_.string(), table, c.name,
             found->second.empty() ? std::string("without a type") : found->second,
             affinity_name(c.affinity));
      }
      sql += fmt::format("\"{}\"", c.name);
      if (key_column && std::string_view(c.name) == key_column) key_ = static_cast<int>(i);
    }
    sql += fmt::format(" FROM \"{}\"", table);
    if (!tail.empty()) sql += fmt::format(" {}", tail);
    statement_ = db.prepare(sql);
    present_ = true;
  }

  bool present() const { return present_; }
  bool step() {
    if (!present_ || !statement_.step()) return false;
    ++row_;
    return true;
  }

  [[noreturn]] void bad(int i, std::string_view problem) const {
    const std::string row =
        key_ >= 0 && statement_.column_type(key_) == SQLITE_INTEGER
            ? fmt::format("{} {}={}", table_, columns_[key_].name, statement_.column_int(key_))
            : fmt::format("{} row {}", table_, row_);
    fail("{}: {}: {} {}", path_.string(), row, columns_[i].name, problem);
  }
  [[noreturn]] void bad_row(std::string_view problem) const {
    const std::string row =
        key_ >= 0 && statement_.column_type(key_) == SQLITE_INTEGER
            ? fmt::format("{} {}={}", table_, columns_[key_].name, statement_.column_int(key_))
            : fmt::format("{} row {}", table_, row_);
    fail("{}: {}: {}", path_.string(), row, problem);
  }

  // An integer, or kNull for NULL (an absent optional column reads as NULL).
  std::int64_t integer_or_null(int i) const {
    std::int64_t value = 0;
    const int type = statement_.column_type_and_int(i, value);
    if (type == SQLITE_INTEGER) return value;
    if (type == SQLITE_NULL) return kNull;
    bad(i, "is not an integer");
  }
  std::int64_t integer(int i) const {
    const std::int64_t v = integer_or_null(i);
    if (v == kNull) bad(i, "is NULL");
    return v;
  }
  std::int64_t in_range(int i, std::int64_t lo, std::int64_t hi, const char* what) const {
    const std::int64_t v = integer(i);
    if (v < lo || v > hi) bad(i, fmt::format("{} is not {}", v, what));
    return v;
  }
  std::int32_t rank(int i) const {
    return static_cast<std::int32_t>(in_range(i, 0, kMaxRank, "a rank (0 to 1000000)"));
  }
  std::int32_t int32(int i) const {
    return static_cast<std::int32_t>(in_range(i, INT32_MIN, INT32_MAX, "a 32-bit integer"));
  }
  TimeNs time(int i) const {
    const std::int64_t v = integer(i);
    if (!time_in_range(v)) bad(i, fmt::format("{} is out of range (times lie within +-2^62 ns)", v));
    return v;
  }
  TimeNs time_or_null(int i) const { return statement_.column_type(i) == SQLITE_NULL ? kNull : time(i); }
  // A [start, end] pair: both times in range, end not before start.
  std::pair<TimeNs, TimeNs> interval(int start, int end) const {
    const TimeNs a = time(start), b = time(end);
    if (b < a) bad(end, fmt::format("{} is before {} {}", b, columns_[start].name, a));
    return {a, b};
  }
  StringId string_id(int i, std::int64_t bound) const {
    const std::int64_t v = integer_or_null(i);
    if (v == kNull) return kNoString;
    if (v < 0 || v >= bound) bad(i, fmt::format("{} is not the id of a string in the profile", v));
    return static_cast<StringId>(v);
  }
  std::string text(int i) const {
    const int type = statement_.column_type(i);
    if (type == SQLITE_NULL) return {};
    if (type != SQLITE_TEXT) bad(i, "is not text");
    return statement_.column_text(i);
  }

 private:
  const std::filesystem::path& path_;
  const char* table_;
  std::span<const schema::Column> columns_;
  sql::Statement statement_;
  bool present_ = false;
  int key_ = -1;
  std::int64_t row_ = 0;
};

std::vector<std::int32_t> member_ranks(const TableReader& t, int column, std::string_view text) {
  std::vector<std::int32_t> ranks;
  std::string bad;
  if (!parse_rank_list(text, ranks, &bad)) t.bad(column, fmt::format("holds {}, which is not a rank", bad));
  return ranks;
}

using StreamKey = std::tuple<std::int32_t, std::int32_t, std::int64_t>;       // rank, device, stream
using TrackKey = std::tuple<std::int32_t, bool, std::int64_t, std::int64_t>;  // rank, gpu, pid, tid

struct ActivityScan {
  std::map<StreamKey, std::vector<Activity>> buckets;
  std::map<std::int32_t, std::vector<KernelDetail>> kernels;
  std::map<std::int32_t, std::vector<CopyDetail>> copies;
};

struct KernelDetailHash {
  std::size_t operator()(const KernelDetail& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.graph_id);
    for (std::int32_t v :
         {k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers, k.shared_bytes})
      h = (h ^ static_cast<std::uint32_t>(v)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// The lists of RANK in LISTS (keyed by tuples that start with the rank) give back the spare room their growth
// left. Called when a scan reaches a rank it has not seen (a rank's rows usually come together): the next
// rank's lists reuse that room in the reading thread's heap, so a load holds one rank's spare room, not every
// list's. Never on a rank seen before: where ranks take turns row by row, every turn would copy the lists.
template <typename Map>
void give_back_room(Map& lists, std::int32_t rank) {
  // The smallest key of RANK: the rank, then the lowest value of every other element.
  auto first = []<typename... Rest>(std::int32_t r, std::tuple<std::int32_t, Rest...>*) {
    return typename Map::key_type{r, std::numeric_limits<Rest>::lowest()...};
  }(rank, static_cast<typename Map::key_type*>(nullptr));
  for (auto it = lists.lower_bound(first); it != lists.end() && std::get<0>(it->first) == rank; ++it)
    it->second.shrink_to_fit();
}

// Rows usually come in time order (a writer adds them so): a sorted list is left as it is, which a stable
// sort gives back unchanged but only after allocating a buffer of half the list and moving it through it.
template <typename T, typename Before>
void stable_sort_unless_sorted(std::vector<T>& list, Before before) {
  if (!std::is_sorted(list.begin(), list.end(), before)) std::stable_sort(list.begin(), list.end(), before);
}

bool activity_before(const Activity& a, const Activity& b) {
  return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
}
bool api_call_before(const ApiCall& a, const ApiCall& b) {
  return a.start_ns < b.start_ns;
}
bool range_before(const CpuRange& a, const CpuRange& b) {
  return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
}

// The three large tables are read on their own connections and threads (a profile can hold tens of millions
// of rows).
// CLAUSES: the WHERE clauses the table is read with, one after the other on one connection (one slice of a
// whole load, or the row runs of the ranks load_ranks reads; "" reads the whole table).
ActivityScan scan_activities(const std::filesystem::path& path, std::int64_t string_bound,
                             bool kernel_details, std::span<const std::string> clauses) {
  sql::Database db(path, true);
  ActivityScan scan;
  using A = schema::Activities;
  static constexpr int kKernelDetailColumns[] = {A::grid_x,    A::grid_y,       A::grid_z,
                                                 A::block_x,   A::block_y,      A::block_z,
                                                 A::registers, A::shared_bytes, A::graph_id};
  std::vector<Activity>* bucket = nullptr;
  std::vector<KernelDetail>* kernels = nullptr;
  std::vector<CopyDetail>* copies = nullptr;
  // A kernel's launch configuration repeats with every launch of it: each distinct one is held once per rank
  // (and slice), and activities point at it.
  std::map<std::int32_t, std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash>> distinct_kernels;
  std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash>* distinct = nullptr;
  StreamKey last_key{-1, -1, -1};
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<A>(
        db, true, "id", clause,
        kernel_details ? std::span<const int>() : std::span<const int>(kKernelDetailColumns));
    while (s.step()) {
      const StreamKey key{s.rank(A::rank), s.int32(A::device), s.integer(A::stream)};
      if (!bucket || key != last_key) {
        if (bucket && std::get<0>(key) != std::get<0>(last_key) && !scan.kernels.contains(std::get<0>(key))) {
          give_back_room(scan.buckets, std::get<0>(last_key));
          kernels->shrink_to_fit();
          copies->shrink_to_fit();
        }
        bucket = &scan.buckets[key];
        kernels = &scan.kernels[std::get<0>(key)];
        copies = &scan.copies[std::get<0>(key)];
        distinct = &distinct_kernels[std::get<0>(key)];
        last_key = key;
      }
      Activity a{};
      a.kind =
          static_cast<ActivityKind>(s.in_range(A::kind, 1, kActivityKindCount, "an activity kind (1-4)"));
      std::tie(a.start_ns, a.end_ns) = s.interval(A::start_ns, A::end_ns);
      a.id = s.integer(A::id);
      a.correlation = s.integer_or_null(A::correlation);
      a.name = s.string_id(A::name, string_bound);
      a.collective = -1;
      a.detail = kNoDetail;
      if (a.kind == ActivityKind::kKernel && kernel_details) {
        KernelDetail k{};
        for (int i = 0; i < 3; ++i) k.grid[i] = to_i32(s.integer_or_null(A::grid_x + i));
        for (int i = 0; i < 3; ++i) k.block[i] = to_i32(s.integer_or_null(A::block_x + i));
        k.registers = to_i32(s.integer_or_null(A::registers));
        k.shared_bytes = to_i32(s.integer_or_null(A::shared_bytes));
        k.graph_id = s.integer_or_null(A::graph_id);
        const auto [it, added] = distinct->try_emplace(k, static_cast<std::uint32_t>(kernels->size()));
        if (added) kernels->push_back(k);
        a.detail = it->second;
      } else if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) {
        a.detail = static_cast<std::uint32_t>(copies->size());
        copies->push_back({s.integer_or_null(A::bytes), s.string_id(A::copy_kind, string_bound)});
      }
      bucket->push_back(a);
    }
  }
  for (auto& [key, list] : scan.buckets) stable_sort_unless_sorted(list, activity_before);
  return scan;
}

// One rank's calls as a scan reads them, each naming its thread by an index into THREADS (in the order the
// scan met them; attach_cpu sorts the threads).
struct RankCalls {
  std::vector<ApiCall> calls;
  std::vector<CallThread> threads;
  std::map<CallThread, std::uint32_t> index;  // threads -> position
  std::uint32_t thread(const CallThread& t) {
    const auto [it, added] = index.try_emplace(t, static_cast<std::uint32_t>(threads.size()));
    if (added) threads.push_back(t);
    return it->second;
  }
};
using ApiCallScan = std::map<std::int32_t, RankCalls>;

ApiCallScan scan_api_calls(const std::filesystem::path& path, std::int64_t string_bound, bool links,
                           std::span<const std::string> clauses) {
  sql::Database db(path, true);
  ApiCallScan calls;
  using C = schema::ApiCalls;
  static constexpr int kLinkColumns[] = {C::external_id};
  RankCalls* list = nullptr;
  std::int32_t last_rank = -1;
  CallThread last_thread{kNull, kNull};
  std::uint32_t last_index = 0;
  for (const std::string& clause : clauses) {
    auto s = TableReader::of<C>(db, false, "id", clause,
                                links ? std::span<const int>() : std::span<const int>(kLinkColumns));
    while (s.step()) {
      const std::int32_t rank = s.rank(C::rank);
      if (!list || rank != last_rank) {
        // A rank's calls usually come together: when the next rank starts, the last one's list, grown row by
        // row, gives back its spare room, which the next can reuse (shrinking every list at the end would
        // hold both at once). Only on a rank not seen yet: ranks that take turns would otherwise copy their
        // lists at every turn.
        auto [at, first_seen] = calls.try_emplace(rank);
        if (list && first_seen) list->calls.shrink_to_fit();
        list = &at->second;
        last_rank = rank;
        last_thread = {kNull, kNull};
      }
      ApiCall a{};
      a.kind = static_cast<ApiKind>(s.in_range(C::kind, 1, kApiKindCount, "an API kind (1-2)"));
      const CallThread thread{s.integer(C::pid), s.integer(C::tid)};
      if (thread != last_thread) {  // a rank's calls come thread after thread, mostly
        last_index = list->thread(thread);
        last_thread = thread;
      }
      a.thread = last_index;
      std::tie(a.start_ns, a.end_ns) = s.interval(C::start_ns, C::end_ns);
      a.name = s.string_id(C::name, string_bound);
      a.correlation = s.integer_or_null(C::correlation);
      a.external_id = s.integer_or_null(C::external_id);
      list->calls.push_back(a);
    }
  }
  if (list) list->calls.shrink_to_fit();
  for (auto& [rank, list_of_rank] : calls) stable_sort_unless_sorted(list_of_rank.calls, api_call_before);
  return calls;
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

struct RangeScan {
  std::map<TrackKey, std::vector<CpuRange>> tracks;
  std::int64_t skipped_cpu_ops = 0, skipped_python = 0;  // counted, not loaded (LoadOptions::cpu_operators)
  // Rows per (rank, pid, tid), the track the writer nests on, whatever their kind and whether loaded.
  std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>, std::size_t> rows_per_track;
  std::map<std::int64_t, std::int64_t> step_of_range;  // kStep ranges: id -> ranges.step (kNull when NULL)
};

RangeScan scan_ranges(const std::filesystem::path& path, const LoadOptions& options,
                      std::int64_t string_bound, std::span<const std::string> clauses) {
  const bool cpu_operators = options.cpu_operators, links = options.links;
  const bool count_left_out = !options.operators_left_out;
  sql::Database db(path, true);
  RangeScan scan;
  auto& tracks = scan.tracks;
  using R = schema::Ranges;
  // parent_id is never decoded: a range's parent is found from the nesting (Rank::parent_range).
  static constexpr int kLinkColumns[] = {R::parent_id, R::external_id, R::category, R::input_dims,
                                         R::input_types};
  static constexpr int kUnheld[] = {R::parent_id, R::input_dims, R::input_types};
  std::vector<CpuRange>* list = nullptr;
  TrackKey last_key{-1, false, 0, 0};
  auto& rows_per_track = scan.rows_per_track;
  std::set<std::int32_t> ranks_seen;  // for give_back_room: only when a scan reaches a rank not seen yet
  std::size_t* rows = nullptr;
  std::tuple<std::int32_t, std::int64_t, std::int64_t> last_track{-1, 0, 0};
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
    while (s.step()) {
      CpuRange c{};
      c.kind = static_cast<RangeKind>(s.in_range(R::kind, 1, kRangeKindCount, "a range kind (1-8)"));
      const std::int32_t rank = s.rank(R::rank);
      const std::int64_t pid = s.integer(R::pid), tid = s.integer(R::tid);
      if (!rows || last_track != std::make_tuple(rank, pid, tid)) {
        last_track = {rank, pid, tid};
        rows = &rows_per_track[last_track];
      }
      ++*rows;
      const TrackKey key{rank, c.kind == RangeKind::kGpuAnnotation, pid, tid};
      if (!list || key != last_key) {
        if (list && rank != std::get<0>(last_key) && ranks_seen.insert(rank).second)
          give_back_room(tracks, std::get<0>(last_key));
        list = &tracks[key];
        last_key = key;
      }
      std::tie(c.start_ns, c.end_ns) = s.interval(R::start_ns, R::end_ns);
      c.id = s.integer(R::id);
      c.external_id = s.integer_or_null(R::external_id);
      if (c.kind == RangeKind::kStep) scan.step_of_range[c.id] = s.integer_or_null(R::step);
      c.name = s.string_id(R::name, string_bound);
      c.category = s.string_id(R::category, string_bound);
      c.depth = static_cast<std::int32_t>(s.in_range(R::depth, 0, INT32_MAX, "a depth"));
      list->push_back(c);
    }
  }
  for (auto& [key, list_of_track] : tracks) stable_sort_unless_sorted(list_of_track, range_before);
  return scan;
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

// Reads a table's slices at once and merges them (SCAN(slice) reads one); a slice's error is the first
// reported, in rowid order, as a single read would have met them.
template <typename Scan, typename ScanSlice>
Scan scan_sliced(const std::vector<std::string>& slices, ScanSlice scan) {
  std::vector<std::future<Scan>> futures;
  for (std::size_t i = 1; i < slices.size(); ++i)
    futures.push_back(std::async(std::launch::async, scan, slices[i]));
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

// The ranks of the profile being loaded, created on first mention by any table.
struct RankSlots {
  std::vector<Rank> ranks;
  std::map<std::int32_t, std::size_t> index;
  Rank& slot(std::int32_t rank) { return rank_slot(ranks, index, rank); }
};

using StreamNames = std::map<StreamKey, std::string>;
using ThreadNames = std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>, std::string>;
struct CollectiveRow {
  std::int32_t rank;
  Collective collective;
};

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
      Collective c{};
      const std::int32_t rank = s.rank(C::rank);
      c.id = s.integer(C::id);
      c.activity_id = s.integer_or_null(C::activity_id);
      c.stream_index = -1;
      c.activity = 0;
      c.communicator = s.string_id(C::communicator, string_bound);
      c.pg_desc = s.string_id(C::pg_desc, string_bound);
      c.pg_ranks = s.string_id(C::pg_ranks, string_bound);
      c.seq = s.integer_or_null(C::seq);
      c.op = s.string_id(C::op, string_bound);
      c.in_nelems = s.integer_or_null(C::in_nelems);
      c.out_nelems = s.integer_or_null(C::out_nelems);
      c.dtype = s.string_id(C::dtype, string_bound);
      c.in_bytes = s.integer_or_null(C::in_bytes);
      c.out_bytes = s.integer_or_null(C::out_bytes);
      c.group_size = s.integer_or_null(C::group_size);
      c.algorithm = s.string_id(C::algorithm, string_bound);
      c.protocol = s.string_id(C::protocol, string_bound);
      c.channels = s.integer_or_null(C::channels);
      std::tie(c.start_ns, c.end_ns) = s.interval(C::start_ns, C::end_ns);
      {
        const std::string source = s.text(C::source);
        auto it = source_ids.find(source);
        if (it == source_ids.end()) {
          it = source_ids.emplace(source, static_cast<StringId>(strings.size() + added.size())).first;
          added.push_back(source);
        }
        c.source = it->second;
        c.metadata = source != "kernel_name";
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

// The per-stream and per-track lists were filled on the reading threads, whose heaps (malloc arenas) the
// loading thread does not reuse: as their rows are copied into each rank's vectors, the freed lists are given
// back to the system every so often, so the load does not hold the events twice.
class ReleaseFreed {
 public:
  void freed(std::size_t bytes) {
    since_ += bytes;
    if (since_ < kEvery) return;
    ::malloc_trim(0);
    since_ = 0;
  }

 private:
  static constexpr std::size_t kEvery = 128u << 20;
  std::size_t since_ = 0;
};

// GPU activities, flattened stream by stream, with each rank's GPU span.
void attach_activities(ActivityScan& activities, const StreamNames& stream_names, RankSlots& ranks) {
  // Each rank's streams are appended into one vector: sized once, and each stream's bucket freed as it is
  // copied, so the load never holds the activities twice.
  std::map<std::int32_t, std::size_t> per_rank;
  for (const auto& [key, bucket] : activities.buckets) per_rank[std::get<0>(key)] += bucket.size();
  ReleaseFreed release;
  for (auto& [key, bucket] : activities.buckets) {
    Rank& r = ranks.slot(std::get<0>(key));
    GpuStream stream{std::get<1>(key),
                     std::get<2>(key),
                     {},
                     static_cast<std::uint32_t>(r.activities.size()),
                     static_cast<std::uint32_t>(bucket.size())};
    auto name = stream_names.find(key);
    stream.name = name != stream_names.end() && !name->second.empty()
                      ? name->second
                      : fmt::format("stream {}", std::get<2>(key));
    r.streams.push_back(std::move(stream));
    const std::size_t total = per_rank[std::get<0>(key)];
    if (r.activities.empty() && bucket.size() == total) {
      r.activities = std::move(bucket);
    } else {
      if (r.activities.capacity() < total) r.activities.reserve(total);
      r.activities.insert(r.activities.end(), bucket.begin(), bucket.end());
      release.freed(bucket.capacity() * sizeof(Activity));
    }
    std::vector<Activity>().swap(bucket);
  }
  for (auto& [rank, list] : activities.kernels) ranks.slot(rank).kernels = std::move(list);
  for (auto& [rank, list] : activities.copies) ranks.slot(rank).copies = std::move(list);
  for (auto& r : ranks.ranks) {
    bool any = false;
    for (const auto& a : r.activities) {
      if (!any || a.start_ns < r.gpu_first_ns) r.gpu_first_ns = a.start_ns;
      if (!any || a.end_ns > r.gpu_last_ns) r.gpu_last_ns = a.end_ns;
      any = true;
    }
  }
}

// Collectives, linked to their kernels.
void attach_collectives(std::vector<CollectiveRow>& collective_rows, RankSlots& ranks) {
  for (const auto& row : collective_rows) ranks.slot(row.rank);
  std::vector<std::unordered_map<std::int64_t, std::pair<std::int32_t, std::uint32_t>>> kernel_at(
      ranks.ranks.size());
  for (const auto& row : collective_rows) {
    if (row.collective.activity_id != kNull)
      kernel_at[ranks.index[row.rank]][row.collective.activity_id] = {-1, 0};
  }
  for (std::size_t ri = 0; ri < ranks.ranks.size(); ++ri) {
    if (kernel_at[ri].empty()) continue;
    Rank& r = ranks.ranks[ri];
    for (std::size_t si = 0; si < r.streams.size(); ++si) {
      const auto& st = r.streams[si];
      for (std::uint32_t i = 0; i < st.count; ++i) {
        auto it = kernel_at[ri].find(r.activities[st.first + i].id);
        if (it != kernel_at[ri].end()) it->second = {static_cast<std::int32_t>(si), st.first + i};
      }
    }
  }
  {
    std::vector<std::size_t> per_rank(ranks.ranks.size(), 0);
    for (const auto& row : collective_rows) ++per_rank[ranks.index[row.rank]];
    for (std::size_t ri = 0; ri < ranks.ranks.size(); ++ri) ranks.ranks[ri].collectives.reserve(per_rank[ri]);
  }
  for (auto& row : collective_rows) {
    const std::size_t ri = ranks.index[row.rank];
    Rank& r = ranks.ranks[ri];
    Collective& c = row.collective;
    if (c.activity_id != kNull) {
      auto it = kernel_at[ri].find(c.activity_id);
      if (it != kernel_at[ri].end() && it->second.first >= 0) {
        c.stream_index = it->second.first;
        c.activity = it->second.second;
        r.activities[c.activity].collective = static_cast<std::int32_t>(r.collectives.size());
      }
    }
    r.collectives.push_back(std::move(c));
  }
}

// CPU side: API calls, then ranges per track and the steps among them.
void attach_cpu(ApiCallScan& api_calls, RangeScan& range_scan, const ThreadNames& thread_names,
                RankSlots& ranks) {
  auto& tracks = range_scan.tracks;
  for (auto& [rank, calls_of_rank] : api_calls) {
    // The rank's threads sorted by (pid, tid), the calls renumbered to match.
    RankCalls& list = calls_of_rank;  // a lambda below refers to it (clang 14 cannot capture a binding)
    Rank& r = ranks.slot(rank);
    std::vector<std::uint32_t> order(list.threads.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return list.threads[a] < list.threads[b]; });
    std::vector<std::uint32_t> renumber(order.size());
    r.call_threads.resize(order.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
      renumber[order[k]] = k;
      r.call_threads[k] = list.threads[order[k]];
    }
    for (ApiCall& c : list.calls) c.thread = renumber[c.thread];
    r.api_calls = std::move(list.calls);
  }
  // As for the activities: each rank's ranges sized once, each track's list freed as it is copied.
  ReleaseFreed release;
  std::map<std::int32_t, std::size_t> per_rank;
  for (const auto& [key, list] : tracks) per_rank[std::get<0>(key)] += list.size();
  for (auto& [key, list] : tracks) {
    const auto& [rank, gpu, pid, tid] = key;
    Rank& r = ranks.slot(rank);
    CpuTrack track{pid,
                   tid,
                   {},
                   gpu,
                   static_cast<std::uint32_t>(r.ranges.size()),
                   static_cast<std::uint32_t>(list.size()),
                   0};
    if (gpu) {
      track.name = fmt::format("GPU {} stream {} annotations", pid, tid);
    } else {
      auto name = thread_names.find({rank, pid, tid});
      track.name =
          name != thread_names.end() && !name->second.empty() ? name->second : fmt::format("thread {}", tid);
    }
    for (const auto& c : list) {
      track.max_depth = std::max(track.max_depth, c.depth);
      if (c.kind == RangeKind::kStep)
        r.steps.push_back(
            {range_scan.step_of_range[c.id], c.start_ns, c.end_ns, pid, tid, c.id, "ProfilerStep"});
    }
    if (r.ranges.capacity() < per_rank[rank]) r.ranges.reserve(per_rank[rank]);
    r.ranges.insert(r.ranges.end(), list.begin(), list.end());
    release.freed(list.capacity() * sizeof(CpuRange));
    std::vector<CpuRange>().swap(list);
    r.tracks.push_back(std::move(track));
  }
  for (auto& r : ranks.ranks) {
    std::stable_sort(r.steps.begin(), r.steps.end(),
                     [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  }
}

EventCounts count_events(const std::vector<Rank>& ranks, const RangeScan& range_scan) {
  EventCounts n;
  for (const auto& r : ranks) n += meshscope::count_events(r);
  n.cpu_op += range_scan.skipped_cpu_ops;  // counted, not loaded
  n.python_function += range_scan.skipped_python;
  return n;
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

}  // namespace

EventCounts count_events(const Rank& r) {
  EventCounts n;
  for (const auto& a : r.activities) {
    switch (a.kind) {
      case ActivityKind::kKernel:
        ++n.kernel;
        break;
      case ActivityKind::kMemcpy:
        ++n.memcpy;
        break;
      case ActivityKind::kMemset:
        ++n.memset;
        break;
      case ActivityKind::kSync:
        ++n.sync;
        break;
    }
  }
  for (const auto& a : r.api_calls) (a.kind == ApiKind::kDriver ? n.driver : n.runtime)++;
  for (const auto& c : r.ranges) {
    switch (c.kind) {
      case RangeKind::kCpuOp:
        ++n.cpu_op;
        break;
      case RangeKind::kAnnotation:
        ++n.annotation;
        break;
      case RangeKind::kPythonFunction:
        ++n.python_function;
        break;
      case RangeKind::kStep:
        ++n.step;
        break;
      case RangeKind::kGpuAnnotation:
        ++n.gpu_annotation;
        break;
      case RangeKind::kNvtx:
        ++n.nvtx;
        break;
      case RangeKind::kOther:
        ++n.other;
        break;
      case RangeKind::kOsRuntime:
        ++n.os_runtime;
        break;
    }
  }
  n.collective += static_cast<std::int64_t>(r.collectives.size());
  n.flow += static_cast<std::int64_t>(r.flows.size());
  n.on_cpu += static_cast<std::int64_t>(r.on_cpu.size());
  n.cpu_sample += static_cast<std::int64_t>(r.cpu_samples.size());
  return n;
}

std::int64_t Rank::os_thread_of(std::int64_t pid, std::int64_t tid) const {
  const auto it = std::lower_bound(os_threads.begin(), os_threads.end(), std::make_pair(pid, tid),
                                   [](const OsThread& t, const std::pair<std::int64_t, std::int64_t>& key) {
                                     return std::make_pair(t.pid, t.tid) < key;
                                   });
  if (it == os_threads.end() || it->pid != pid || it->tid != tid) return -1;
  return it - os_threads.begin();
}

std::int64_t Rank::parent_range(std::uint32_t index) const {
  if (index >= ranges.size() || ranges[index].depth <= 0) return -1;
  const CpuRange& c = ranges[index];
  for (const CpuTrack& t : tracks) {
    if (index < t.first || index >= t.first + t.count) continue;
    // Ranges are sorted by (start, depth) on the track: the parent starts at or before C, the nearest such
    // range one level up that is still open at C's start.
    for (std::uint32_t i = index; i-- > t.first;) {
      const CpuRange& p = ranges[i];
      if (p.depth == c.depth - 1 && p.start_ns <= c.start_ns && p.end_ns >= c.start_ns) return i;
    }
    return -1;
  }
  return -1;
}

namespace {
template <typename T>
std::size_t held(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
// Heap text of a std::string (none while it fits the small-string buffer inside the object).
std::size_t heap_text(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}
}  // namespace

EventMemory event_memory(const Rank& r) {
  EventMemory m;
  m.activities = held(r.activities);
  m.kernel_details = held(r.kernels);
  m.copy_details = held(r.copies);
  m.api_calls = held(r.api_calls);
  m.ranges = held(r.ranges);
  m.collectives = held(r.collectives);
  m.flows = held(r.flows);
  m.other = held(r.streams) + held(r.tracks) + held(r.steps) + held(r.call_threads);
  for (const auto& s : r.streams) m.other += heap_text(s.name);
  for (const auto& t : r.tracks) m.other += heap_text(t.name);
  for (const auto& s : r.steps) m.other += heap_text(s.source);
  // The OS's record of the threads counts as other (scheduling and samples are not traced events).
  m.other += held(r.os_threads) + held(r.on_cpu) + held(r.cpu_samples);
  for (const auto& t : r.os_threads) m.other += heap_text(t.name);
  m.events =
      r.activities.size() + r.api_calls.size() + r.ranges.size() + r.collectives.size() + r.flows.size();
  return m;
}

EventMemory& EventMemory::operator+=(const EventMemory& o) {
  activities += o.activities;
  kernel_details += o.kernel_details;
  copy_details += o.copy_details;
  api_calls += o.api_calls;
  ranges += o.ranges;
  collectives += o.collectives;
  flows += o.flows;
  other += o.other;
  events += o.events;
  return *this;
}

EventCounts& EventCounts::operator+=(const EventCounts& o) {
  kernel += o.kernel;
  memcpy += o.memcpy;
  memset += o.memset;
  sync += o.sync;
  runtime += o.runtime;
  driver += o.driver;
  cpu_op += o.cpu_op;
  annotation += o.annotation;
  python_function += o.python_function;
  step += o.step;
  gpu_annotation += o.gpu_annotation;
  nvtx += o.nvtx;
  other += o.other;
  os_runtime += o.os_runtime;
  on_cpu += o.on_cpu;
  cpu_sample += o.cpu_sample;
  collective += o.collective;
  flow += o.flow;
  return *this;
}

namespace {

// Opens PATH for reading after checking that it is a meshscope profile (one line naming the file otherwise).
sql::Database open_profile(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such profile", path.string());
  require_regular_input(path);  // a FIFO or a device would block SQLite's first read
  sql::Database db(path, true);
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

// The clauses each event table is read with: the table's rowid slices for a whole load, or each asked rank's
// runs for load_ranks.
using TableClauses = std::array<std::vector<std::string>, kEventTableCount>;
std::vector<std::string>& clauses_of(TableClauses& c, EventTable t) {
  return c[static_cast<std::size_t>(t)];
}

// The events of the rows CLAUSES select, attached to the ranks of RANKS (which hold the description). The
// three large tables are read in the background, each on its own thread (the CPU ranges are usually the
// largest, about as large as the other two together), a whole table's slices in parallel, while this thread
// reads the small ones. RANK_WHERE selects the streams' and threads' names ("" for every rank). New
// collective source texts are appended to ADDED (read_collectives). Returns the CPU operators left out
// (counted).
RangeScan read_events(sql::Database& db, const std::filesystem::path& path, std::int64_t string_ids,
                      const LoadOptions& options, TableClauses& clauses, bool parallel_slices,
                      const std::string& rank_where, const std::vector<std::string>& strings,
                      std::vector<std::string>& added, RankSlots& ranks) {
  // A whole load reads each slice on its own connection and thread; load_ranks reads its runs one after the
  // other on one connection per table.
  auto scan_table = [&]<typename Scan>(std::type_identity<Scan>, const std::vector<std::string>& list,
                                       auto scan) {
    if (parallel_slices)
      return scan_sliced<Scan>(
          list, [&](const std::string& one) { return scan(std::span<const std::string>(&one, 1)); });
    return scan(std::span<const std::string>(list));
  };
  auto activities_future = std::async(std::launch::async, [&] {
    return scan_table(std::type_identity<ActivityScan>{}, clauses_of(clauses, EventTable::kActivities),
                      [&](std::span<const std::string> c) {
                        return scan_activities(path, string_ids, options.kernel_details, c);
                      });
  });
  auto api_calls_future = std::async(std::launch::async, [&] {
    return scan_table(
        std::type_identity<ApiCallScan>{}, clauses_of(clauses, EventTable::kApiCalls),
        [&](std::span<const std::string> c) { return scan_api_calls(path, string_ids, options.links, c); });
  });
  auto ranges_future = std::async(std::launch::async, [&] {
    RangeScan scan =
        scan_table(std::type_identity<RangeScan>{}, clauses_of(clauses, EventTable::kRanges),
                   [&](std::span<const std::string> c) { return scan_ranges(path, options, string_ids, c); });
    if (!options.cpu_operators && options.operators_left_out) {
      scan.skipped_cpu_ops = options.operators_left_out->cpu_ops;
      scan.skipped_python = options.operators_left_out->python_functions;
    }
    check_range_depths(path, scan);
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

RankList sorted_rank_list(std::vector<Rank>&& ranks) {
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  std::vector<RankList::Ptr> list;
  list.reserve(ranks.size());
  for (Rank& r : ranks) list.push_back(std::make_shared<const Rank>(std::move(r)));
  return RankList(std::move(list));
}

// RANK's description (what read_description gives), without its events.
Rank description_of(const Rank& rank) {
  Rank d;
  d.rank = rank.rank;
  d.world_size = rank.world_size;
  d.hostname = rank.hostname;
  d.source_file = rank.source_file;
  d.rank_source = rank.rank_source;
  d.backend = rank.backend;
  d.comm_version = rank.comm_version;
  d.pid = rank.pid;
  d.clock_base_ns = rank.clock_base_ns;
  d.clock_offset_ns = rank.clock_offset_ns;
  d.first_ns = rank.first_ns;
  d.last_ns = rank.last_ns;
  d.devices = rank.devices;
  d.process_groups = rank.process_groups;
  d.diagnostics = rank.diagnostics;
  d.events_loaded = true;  // what load_ranks fills
  return d;
}

}  // namespace

Rank without_event_lists(const Rank& rank) {
  Rank out = description_of(rank);
  out.events_loaded = rank.events_loaded;
  out.streams = rank.streams;
  out.collectives = rank.collectives;
  out.tracks = rank.tracks;
  out.steps = rank.steps;
  out.gpu_first_ns = rank.gpu_first_ns;
  out.gpu_last_ns = rank.gpu_last_ns;
  return out;
}

const char* table_name(EventTable table) {
  switch (table) {
    case EventTable::kActivities:
      return schema::Activities::kName;
    case EventTable::kApiCalls:
      return schema::ApiCalls::kName;
    case EventTable::kRanges:
      return schema::Ranges::kName;
    case EventTable::kCollectives:
      return schema::Collectives::kName;
    case EventTable::kFlows:
      return schema::Flows::kName;
  }
  return "?";
}

// A profile of PATH with D's meta, schema version and job diagnostics (moved out of D); no ranks or strings
// yet.
Profile Profile::described(const std::filesystem::path& path, Description& d) {
  Profile profile;
  profile.path_ = path;
  profile.meta_ = std::move(d.meta);
  profile.schema_version_ = d.schema_version;
  profile.job_diagnostics_ = std::move(d.job_diagnostics);
  return profile;
}

// The profile without its events (LoadOptions::events off): no streams, tracks or steps either (they are
// known from the events).
Profile Profile::load_description(sql::Database& db, const std::filesystem::path& path,
                                  std::int64_t string_ids) {
  RankSlots ranks;
  Description d = read_description(db, string_ids, ranks);
  Profile profile = described(path, d);
  profile.strings_ = std::make_shared<const std::vector<std::string>>(std::move(d.strings));
  for (Rank& r : ranks.ranks) r.events_loaded = false;
  profile.ranks_ = sorted_rank_list(std::move(ranks.ranks));
  return profile;
}

Profile Profile::load(const std::filesystem::path& path, const LoadOptions& options) {
  sql::Database db = open_profile(path);
  const std::int64_t string_ids = string_id_bound(db, path);
  if (!options.events) return load_description(db, path, string_ids);

  TableClauses clauses;
  clauses_of(clauses, EventTable::kActivities) =
      rowid_slices(db, schema::Activities::kName, options.table_slices);
  clauses_of(clauses, EventTable::kApiCalls) =
      rowid_slices(db, schema::ApiCalls::kName, options.table_slices);
  clauses_of(clauses, EventTable::kRanges) = rowid_slices(db, schema::Ranges::kName, options.table_slices);
  clauses_of(clauses, EventTable::kCollectives) = {std::string()};
  clauses_of(clauses, EventTable::kFlows) = {std::string()};

  RankSlots ranks;
  Description d = read_description(db, string_ids, ranks);
  Profile profile = described(path, d);
  std::vector<std::string> sources;
  const RangeScan range_scan =
      read_events(db, path, string_ids, options, clauses, true, {}, d.strings, sources, ranks);
  d.strings.insert(d.strings.end(), sources.begin(), sources.end());
  profile.strings_ = std::make_shared<const std::vector<std::string>>(std::move(d.strings));
  profile.counts_ = count_events(ranks.ranks, range_scan);
  profile.ranks_ = sorted_rank_list(std::move(ranks.ranks));
  // The reading threads' buffers were freed into their own malloc arenas, where nothing else would reuse
  // them: give them back to the system before the analyses allocate.
  ::malloc_trim(0);
  return profile;
}

void Profile::stream_operators(const RankRows& rows, OperatorSink& sink) const {
  sql::Database db = open_profile(path_);
  const std::int64_t string_ids = string_id_bound(db, path_);
  using R = schema::Ranges;
  static constexpr int kUnread[] = {R::parent_id, R::external_id, R::step, R::category};
  std::string runs;
  for (const RowRun& run : rows[EventTable::kRanges]) {
    const bool every = run.first == std::numeric_limits<std::int64_t>::min() &&
                       run.last == std::numeric_limits<std::int64_t>::max();
    runs +=
        fmt::format("{}{}", runs.empty() ? "" : " OR ",
                    every ? std::string("1") : fmt::format("rowid BETWEEN {} AND {}", run.first, run.last));
  }
  if (runs.empty()) return;
  // "+rank": read in rowid order, as a load reads (never through an index).
  const std::string where =
      fmt::format("WHERE ({}) AND +rank = {} AND kind IN ({}, {})", runs, rows.rank,
                  static_cast<int>(RangeKind::kCpuOp), static_cast<int>(RangeKind::kPythonFunction));
  auto read = [&](const std::string& tail, bool check_order) {
    auto s = TableReader::of<R>(db, true, "id", tail, kUnread);
    // Per thread, the last (start, depth) given: a row before it in load order means the rows are not stored
    // sorted.
    std::map<std::pair<std::int64_t, std::int64_t>, std::pair<TimeNs, std::int32_t>> last;
    std::pair<std::int64_t, std::int64_t> last_thread{0, 0};
    std::pair<TimeNs, std::int32_t>* at = nullptr;
    while (s.step()) {
      OperatorRow row;
      row.kind = static_cast<RangeKind>(s.in_range(R::kind, 1, kRangeKindCount, "a range kind (1-8)"));
      row.pid = s.integer(R::pid);
      row.tid = s.integer(R::tid);
      std::tie(row.start_ns, row.end_ns) = s.interval(R::start_ns, R::end_ns);
      row.name = s.string_id(R::name, string_ids);
      const auto depth = static_cast<std::int32_t>(s.in_range(R::depth, 0, INT32_MAX, "a depth"));
      if (check_order) {
        if (!at || last_thread != std::make_pair(row.pid, row.tid)) {
          last_thread = {row.pid, row.tid};
          at = &last.try_emplace(last_thread, std::numeric_limits<TimeNs>::min(), 0).first->second;
        }
        if (row.start_ns < at->first || (row.start_ns == at->first && depth < at->second)) return false;
        *at = {row.start_ns, depth};
      }
      sink.add(row);
    }
    return true;
  };
  if (read(where, true)) return;
  sink.restart();
  read(where + " ORDER BY pid, tid, start_ns, depth, rowid", false);
}

LoadedRanks Profile::load_ranks(const Profile& base, std::span<const RankRows> which,
                                const LoadOptions& options) {
  const std::filesystem::path& path = base.path_;
  sql::Database db = open_profile(path);
  const std::int64_t string_ids = string_id_bound(db, path);
  const std::vector<std::string> no_strings;
  const std::vector<std::string>& strings = base.strings_ ? *base.strings_ : no_strings;
  if (static_cast<std::size_t>(string_ids) > strings.size())
    fail("{}: the profile changed since it was opened (it holds more strings now)", path.string());
  RankSlots ranks;
  TableClauses clauses;
  std::string rank_where;
  for (const RankRows& asked : which) {
    const Rank* described = base.find_rank(asked.rank);
    if (!described) fail("{}: rank {} is not in the profile", path.string(), asked.rank);
    if (ranks.index.contains(asked.rank)) continue;
    ranks.slot(asked.rank) = description_of(*described);
    rank_where += fmt::format("{}{}", rank_where.empty() ? "WHERE rank IN (" : ", ", asked.rank);
    for (int t = 0; t < kEventTableCount; ++t) {
      for (const RowRun& run : asked.runs[static_cast<std::size_t>(t)]) {
        const bool every = run.first == std::numeric_limits<std::int64_t>::min() &&
                           run.last == std::numeric_limits<std::int64_t>::max();
        // "+rank": SQLite must not read the rank through an index (activities_by_stream,
        // collectives_by_rank): rows then come in rowid order, as a whole load reads them, so the rank loads
        // exactly as there (the numbering of its kernel configurations, the order of equal start times).
        clauses[static_cast<std::size_t>(t)].push_back(
            every ? fmt::format("WHERE +rank = {}", asked.rank)
                  : fmt::format("WHERE rowid BETWEEN {} AND {} AND +rank = {}", run.first, run.last,
                                asked.rank));
      }
    }
  }
  if (!rank_where.empty()) rank_where += ")";
  LoadOptions one = options;
  one.events = true;
  std::vector<std::string> sources;
  const RangeScan range_scan =
      read_events(db, path, string_ids, one, clauses, false, rank_where, strings, sources, ranks);
  LoadedRanks out;
  out.counts = count_events(ranks.ranks, range_scan);
  if (sources.empty()) {
    out.strings = base.strings_;
  } else {
    auto grown = std::make_shared<std::vector<std::string>>(strings);
    grown->insert(grown->end(), sources.begin(), sources.end());
    out.strings = std::move(grown);
  }
  std::map<std::int32_t, std::shared_ptr<const Rank>> made;
  for (Rank& r : ranks.ranks) {
    const std::int32_t number = r.rank;
    made.emplace(number, std::make_shared<const Rank>(std::move(r)));
  }
  for (const RankRows& asked : which) out.ranks.push_back(made.at(asked.rank));
  return out;
}

Profile Profile::with_ranks(std::span<const std::shared_ptr<const Rank>> ranks,
                            std::shared_ptr<const std::vector<std::string>> strings,
                            const EventCounts* counts) const {
  Profile p;
  p.path_ = path_;
  p.schema_version_ = schema_version_;
  p.meta_ = meta_;
  p.strings_ = strings ? std::move(strings) : strings_;
  p.job_diagnostics_ = job_diagnostics_;
  std::vector<RankList::Ptr> list;
  list.reserve(ranks_.size());
  for (std::size_t i = 0; i < ranks_.size(); ++i) list.push_back(ranks_.ptr(i));
  for (const auto& r : ranks) {
    const std::ptrdiff_t at = rank_index(r->rank);
    if (at < 0) throw Error(fmt::format("{}: rank {} is not in the profile", path_.string(), r->rank));
    list[static_cast<std::size_t>(at)] = r;
  }
  p.ranks_ = RankList(std::move(list));
  if (counts) {
    p.counts_ = *counts;
  } else {
    for (const Rank& r : p.ranks_) p.counts_ += meshscope::count_events(r);
  }
  return p;
}

namespace {

// The checks a load makes of what it reads (TableReader), made of records: their failures name PATH.
class RecordChecks {
 public:
  RecordChecks(const std::filesystem::path& path, std::size_t string_count)
      : path_(path), string_count_(string_count) {}
  StringId string(StringId id, const char* what) const {
    if (id > string_count_) fail("{}: {} names string {}, which the rows lack", path_.string(), what, id);
    return id;
  }
  std::pair<TimeNs, TimeNs> interval(TimeNs start, TimeNs end, const char* what) const {
    if (!time_in_range(start) || !time_in_range(end) || end < start)
      fail("{}: {} ends at {}, before its start {} (or out of range)", path_.string(), what, end, start);
    return {start, end};
  }
  void same_rank(std::int32_t rank, std::int32_t row_rank, const char* what) const {
    if (row_rank != rank)
      fail("{}: {} of rank {} among the rows of rank {}", path_.string(), what, row_rank, rank);
  }
  template <typename Kind>
  Kind kind(Kind kind, int count, const char* what) const {
    const int value = static_cast<int>(kind);
    if (value < 1 || value > count)
      fail("{}: {} kind {} is not one of 1-{}", path_.string(), what, value, count);
    return kind;
  }

 private:
  const std::filesystem::path& path_;
  std::size_t string_count_;
};

}  // namespace

namespace {

// The description, as read_ranks, read_devices and read_process_groups read what the writer wrote.
void describe_rank(const std::filesystem::path& path, const RankRecords& in, const RecordChecks& check,
                   Rank& r) {
  const std::int32_t rank = in.info.rank;
  auto same_rank = [&](std::int32_t row_rank, const char* what) { check.same_rank(rank, row_rank, what); };
  r.world_size = in.info.world_size;
  if (r.world_size != kNull && (r.world_size < 1 || r.world_size > kMaxRank + 1))
    fail("{}: {} is not a world size (1 to 1000001)", path.string(), r.world_size);
  r.hostname = in.info.hostname;
  r.pid = in.info.pid;
  r.source_file = in.info.source_file;
  r.rank_source = in.info.rank_source;
  r.backend = in.info.backend;
  r.comm_version = in.info.comm_version;
  r.clock_base_ns = in.info.clock_base_ns;
  r.clock_offset_ns = in.info.clock_offset_ns;
  {
    // The writer's extent: activities, API calls and ranges (ProfileWriter's rank_extent).
    bool any = false;
    auto extend = [&](TimeNs start, TimeNs end) {
      r.first_ns = any ? std::min(r.first_ns, start) : start;
      r.last_ns = any ? std::max(r.last_ns, end) : end;
      any = true;
    };
    for (const ActivityRecord& a : in.activities) extend(a.start_ns, a.end_ns);
    for (const ApiCallRecord& c : in.api_calls) extend(c.start_ns, c.end_ns);
    for (const RangeRecord& c : in.ranges) extend(c.start_ns, c.end_ns);
  }
  {
    std::map<std::int32_t, const DeviceInfo*> devices;  // a later row replaces an earlier one (the key's)
    for (const DeviceInfo& d : in.devices) {
      same_rank(d.rank, "a device");
      devices[d.device] = &d;
    }
    for (const auto& [device, d] : devices)
      r.devices.push_back(
          {device, d->name, d->total_memory_bytes, d->compute_major, d->compute_minor, d->sm_count});
    std::map<std::string, const ProcessGroupInfo*> groups;
    for (const ProcessGroupInfo& g : in.process_groups) {
      same_rank(g.rank, "a process group");
      groups[g.pg_name] = &g;
    }
    for (const auto& [name, g] : groups) {
      if (g->group_size != kNull && (g->group_size < 0 || g->group_size > kMaxRank + 1))
        fail("{}: process group {}: {} is not a group size", path.string(), name, g->group_size);
      std::vector<std::int32_t> members;
      std::string bad;
      if (!parse_rank_list(g->ranks_json, members, &bad))
        fail("{}: process group {} holds {}, which is not a rank", path.string(), name, bad);
      r.process_groups.push_back({name, g->pg_desc, g->backend, g->group_size, std::move(members)});
    }
  }
}

// The activities, as the activity scan reads them.
ActivityScan scan_activities(const RankRecords& in, const RecordChecks& check, const LoadOptions& options) {
  const std::int32_t rank = in.info.rank;
  ActivityScan activities;
  {
    std::vector<KernelDetail>& kernels = activities.kernels[rank];
    std::vector<CopyDetail>& copies = activities.copies[rank];
    std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash> distinct;
    std::vector<Activity>* bucket = nullptr;
    StreamKey last_key{-1, -1, -1};
    for (std::size_t i = 0; i < in.activities.size(); ++i) {
      const ActivityRecord& rec = in.activities[i];
      check.same_rank(rank, rec.rank, "an activity");
      const StreamKey key{rank, rec.device, rec.stream};
      if (!bucket || key != last_key) {
        bucket = &activities.buckets[key];
        last_key = key;
      }
      Activity a{};
      a.kind = check.kind(rec.kind, kActivityKindCount, "an activity");
      std::tie(a.start_ns, a.end_ns) = check.interval(rec.start_ns, rec.end_ns, "an activity");
      a.id = static_cast<std::int64_t>(i) + 1;
      a.correlation = rec.correlation;
      a.name = check.string(rec.name, "an activity");
      a.collective = -1;
      a.detail = kNoDetail;
      if (a.kind == ActivityKind::kKernel && options.kernel_details) {
        KernelDetail k{};
        for (int d = 0; d < 3; ++d) k.grid[d] = to_i32(rec.grid[d]);
        for (int d = 0; d < 3; ++d) k.block[d] = to_i32(rec.block[d]);
        k.registers = to_i32(rec.registers);
        k.shared_bytes = to_i32(rec.shared_bytes);
        k.graph_id = rec.graph_id;
        const auto [it, added] = distinct.try_emplace(k, static_cast<std::uint32_t>(kernels.size()));
        if (added) kernels.push_back(k);
        a.detail = it->second;
      } else if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) {
        a.detail = static_cast<std::uint32_t>(copies.size());
        copies.push_back({rec.bytes, check.string(rec.copy_kind, "a copy")});
      }
      bucket->push_back(a);
    }
    for (auto& [key, list] : activities.buckets) stable_sort_unless_sorted(list, activity_before);
  }
  return activities;
}

// The collectives, as read_collectives reads them; each source word is added to STRINGS once.
std::vector<CollectiveRow> collective_rows_of(const RankRecords& in, const RecordChecks& check,
                                              std::vector<std::string>& strings) {
  const std::int32_t rank = in.info.rank;
  std::vector<CollectiveRow> collective_rows;
  {
    collective_rows.reserve(in.collectives.size() + in.resolved_collectives.size());
    std::map<std::string, StringId, std::less<>> source_ids;
    std::int64_t id = 0;
    for (const auto list : {in.collectives, in.resolved_collectives}) {
      for (const CollectiveRecord& rec : list) {
        check.same_rank(rank, rec.rank, "a collective");
        Collective c{};
        c.id = ++id;
        c.activity_id = rec.activity_id;
        c.stream_index = -1;
        c.activity = 0;
        c.communicator = check.string(rec.communicator, "a collective");
        c.pg_desc = check.string(rec.pg_desc, "a collective");
        c.pg_ranks = check.string(rec.pg_ranks, "a collective");
        c.seq = rec.seq;
        c.op = check.string(rec.op, "a collective");
        c.in_nelems = rec.in_nelems;
        c.out_nelems = rec.out_nelems;
        c.dtype = check.string(rec.dtype, "a collective");
        c.in_bytes = rec.in_bytes;
        c.out_bytes = rec.out_bytes;
        c.group_size = rec.group_size;
        c.algorithm = check.string(rec.algorithm, "a collective");
        c.protocol = check.string(rec.protocol, "a collective");
        c.channels = rec.channels;
        std::tie(c.start_ns, c.end_ns) = check.interval(rec.start_ns, rec.end_ns, "a collective");
        const std::string_view source = rec.source ? rec.source : "";
        auto it = source_ids.find(source);
        if (it == source_ids.end()) {
          it = source_ids.emplace(std::string(source), static_cast<StringId>(strings.size())).first;
          strings.emplace_back(source);
        }
        c.source = it->second;
        c.metadata = source != "kernel_name";
        collective_rows.push_back({rank, c});
      }
    }
    std::sort(collective_rows.begin(), collective_rows.end(),
              [](const CollectiveRow& a, const CollectiveRow& b) {
                return std::tie(a.collective.start_ns, a.collective.id) <
                       std::tie(b.collective.start_ns, b.collective.id);
              });
  }
  return collective_rows;
}

// The API calls, as the API call scan reads them.
ApiCallScan scan_api_calls(const RankRecords& in, const RecordChecks& check, const LoadOptions& options) {
  const std::int32_t rank = in.info.rank;
  ApiCallScan api_calls;
  {
    RankCalls& list = api_calls[rank];
    list.calls.reserve(in.api_calls.size());
    CallThread last_thread{kNull, kNull};
    std::uint32_t last_index = 0;
    for (const ApiCallRecord& rec : in.api_calls) {
      check.same_rank(rank, rec.rank, "an API call");
      ApiCall a{};
      a.kind = check.kind(rec.kind, kApiKindCount, "an API call");
      const CallThread thread{rec.pid, rec.tid};
      if (thread != last_thread) {
        last_index = list.thread(thread);
        last_thread = thread;
      }
      a.thread = last_index;
      std::tie(a.start_ns, a.end_ns) = check.interval(rec.start_ns, rec.end_ns, "an API call");
      a.name = check.string(rec.name, "an API call");
      a.correlation = rec.correlation;
      a.external_id = options.links ? rec.external_id : kNull;
      list.calls.push_back(a);
    }
    stable_sort_unless_sorted(list.calls, api_call_before);
  }
  return api_calls;
}

// The CPU ranges, as the range scan reads them (CPU operators left out as OPTIONS says), depths checked.
RangeScan scan_ranges(const std::filesystem::path& path, const RankRecords& in, const RecordChecks& check,
                      const LoadOptions& options) {
  const std::int32_t rank = in.info.rank;
  RangeScan range_scan;
  {
    if (in.range_depths.size() != in.ranges.size())
      fail("{}: {} ranges but {} depths (internal error)", path.string(), in.ranges.size(),
           in.range_depths.size());
    std::vector<CpuRange>* list = nullptr;
    TrackKey last_key{-1, false, 0, 0};
    for (std::size_t i = 0; i < in.ranges.size(); ++i) {
      const RangeRecord& rec = in.ranges[i];
      check.same_rank(rank, rec.rank, "a range");
      const RangeKind kind = check.kind(rec.kind, kRangeKindCount, "a range");
      const bool kept_call = options.process_group_calls && kind == RangeKind::kCpuOp && rec.name > 0 &&
                             static_cast<std::size_t>(rec.name) <= in.strings.size() &&
                             vocabulary::names_process_group_call(*in.strings[rec.name - 1]);
      if (!options.cpu_operators && !kept_call &&
          (kind == RangeKind::kCpuOp || kind == RangeKind::kPythonFunction)) {
        ++(kind == RangeKind::kCpuOp ? range_scan.skipped_cpu_ops : range_scan.skipped_python);
        continue;
      }
      ++range_scan.rows_per_track[{rank, rec.pid, rec.tid}];
      const TrackKey key{rank, kind == RangeKind::kGpuAnnotation, rec.pid, rec.tid};
      if (!list || key != last_key) {
        list = &range_scan.tracks[key];
        last_key = key;
      }
      CpuRange c{};
      c.kind = kind;
      std::tie(c.start_ns, c.end_ns) = check.interval(rec.start_ns, rec.end_ns, "a range");
      c.id = static_cast<std::int64_t>(i) + 1;
      c.external_id = options.links ? rec.external_id : kNull;
      if (kind == RangeKind::kStep) range_scan.step_of_range[c.id] = rec.step;
      c.name = check.string(rec.name, "a range");
      c.category = options.links ? check.string(rec.category, "a range") : kNoString;
      c.depth = in.range_depths[i];
      if (c.depth < 0) fail("{}: a range's depth {} is negative", path.string(), c.depth);
      list->push_back(c);
    }
    for (auto& [key, list_of_track] : range_scan.tracks)
      stable_sort_unless_sorted(list_of_track, range_before);
    if (!options.cpu_operators && options.operators_left_out) {
      range_scan.skipped_cpu_ops = options.operators_left_out->cpu_ops;
      range_scan.skipped_python = options.operators_left_out->python_functions;
    }
    check_range_depths(path, range_scan);
  }
  return range_scan;
}

}  // namespace

Profile Profile::of_records(const std::filesystem::path& path, const RankRecords& in,
                            const LoadOptions& options) {
  const std::int32_t rank = in.info.rank;
  const RecordChecks check(path, in.strings.size());
  std::vector<std::string> strings;
  strings.reserve(in.strings.size() + 8);
  strings.emplace_back();
  for (const std::string* text : in.strings) strings.push_back(*text);

  RankSlots ranks;
  Rank& r = ranks.slot(rank);
  describe_rank(path, in, check, r);
  StreamNames stream_names;
  for (const StreamInfo& s : in.streams) {
    check.same_rank(rank, s.rank, "a stream");
    stream_names[{rank, s.device, s.stream}] = s.name;
  }
  ThreadNames thread_names;
  for (const ThreadInfo& t : in.threads) {
    check.same_rank(rank, t.rank, "a thread");
    thread_names[{rank, t.pid, t.tid}] = t.name;
  }

  // The events, as the scans read them.
  ActivityScan activities = scan_activities(in, check, options);
  std::vector<CollectiveRow> collective_rows = collective_rows_of(in, check, strings);
  for (const FlowRecord& f : in.flows) {
    check.same_rank(rank, f.rank, "a flow");
    if (!time_in_range(f.src_ns) || (f.dst_ns != kNull && !time_in_range(f.dst_ns)))
      fail("{}: a flow's time is out of range", path.string());
    r.flows.push_back({check.string(f.category, "a flow"), f.flow_id, f.src_ns, f.src_pid, f.src_tid,
                       f.dst_ns, f.dst_pid, f.dst_tid});
  }

  ApiCallScan api_calls = scan_api_calls(in, check, options);
  RangeScan range_scan = scan_ranges(path, in, check, options);

  attach_activities(activities, stream_names, ranks);
  attach_collectives(collective_rows, ranks);
  attach_cpu(api_calls, range_scan, thread_names, ranks);

  Profile profile;
  profile.path_ = path;
  profile.schema_version_ = kSchemaVersion;
  profile.strings_ = std::make_shared<const std::vector<std::string>>(std::move(strings));
  profile.counts_ = count_events(ranks.ranks, range_scan);
  profile.ranks_ = sorted_rank_list(std::move(ranks.ranks));
  return profile;
}

bool Profile::looks_like_profile(const std::filesystem::path& path) noexcept {
  try {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) return false;
    if (path.extension() == ".msdb") return true;
    char header[16] = {};
    {
      std::FILE* f = std::fopen(path.c_str(), "rb");
      if (!f) return false;
      const std::size_t got = std::fread(header, 1, sizeof header, f);
      std::fclose(f);
      if (got != sizeof header || std::string_view(header, 16) != std::string_view("SQLite format 3\0", 16)) {
        return false;
      }
    }
    sql::Database db(path, true);
    auto s = db.prepare(
        "SELECT count(DISTINCT lower(name)) FROM sqlite_master WHERE lower(name) IN ('meta', 'activities')");
    return s.step() && s.column_int(0) == 2;
  } catch (...) {
    return false;
  }
}

const std::string& Profile::str(StringId id) const {
  static const std::string empty;
  return strings_ && id < strings_->size() ? (*strings_)[id] : empty;
}

std::ptrdiff_t Profile::rank_index(std::int32_t rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const Rank& r, std::int32_t value) { return r.rank < value; });
  return it != ranks_.end() && it->rank == rank ? it - ranks_.begin() : -1;
}

const Rank* Profile::find_rank(std::int32_t rank) const {
  const std::ptrdiff_t at = rank_index(rank);
  return at >= 0 ? &ranks_[static_cast<std::size_t>(at)] : nullptr;
}

std::int64_t Profile::world_size() const {
  std::int64_t world = static_cast<std::int64_t>(ranks_.size());
  for (const auto& r : ranks_) {
    if (r.world_size != kNull) world = std::max(world, r.world_size);
  }
  return world;
}

TimeNs Profile::first_ns() const {
  TimeNs first = 0;
  bool any = false;
  for (const auto& r : ranks_) {
    if (r.first_ns == 0 && r.last_ns == 0) continue;
    if (!any || r.first_ns < first) first = r.first_ns;
    any = true;
  }
  return first;
}

TimeNs Profile::last_ns() const {
  TimeNs last = 0;
  for (const auto& r : ranks_) last = std::max(last, r.last_ns);
  return last;
}

}  // namespace meshscope
