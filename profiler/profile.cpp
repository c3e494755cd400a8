#include "profiler/profile.hpp"
#include "profiler/profile_load.hpp"
#include "profiler/table_reader.hpp"

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

using namespace load;

namespace {

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
  return load_from(ProfileSource{path, std::nullopt}, options);
}

Profile Profile::load_image(std::span<const unsigned char> image, const std::filesystem::path& display,
                            const LoadOptions& options) {
  return load_from(ProfileSource{display, image}, options);
}

Profile Profile::load_from(const ProfileSource& source, const LoadOptions& options) {
  const std::filesystem::path& path = source.path;
  sql::Database db = open_profile(source);
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
      read_events(db, source, string_ids, options, clauses, true, {}, d.strings, sources, ranks);
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
  const RangeScan range_scan = read_events(db, ProfileSource{path, std::nullopt}, string_ids, one, clauses,
                                           false, rank_where, strings, sources, ranks);
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

Profile Profile::described(std::shared_ptr<const std::vector<std::string>> strings) const {
  Profile p;
  p.path_ = path_;
  p.schema_version_ = schema_version_;
  p.meta_ = meta_;
  p.strings_ = strings ? std::move(strings) : strings_;
  p.job_diagnostics_ = job_diagnostics_;
  return p;
}

Profile Profile::with_ranks(std::span<const std::shared_ptr<const Rank>> ranks,
                            std::shared_ptr<const std::vector<std::string>> strings,
                            const EventCounts* counts) const {
  Profile p = described(std::move(strings));
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

Profile Profile::with_rank_list(std::vector<std::shared_ptr<const Rank>> ranks,
                                std::shared_ptr<const std::vector<std::string>> strings) const {
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const auto& a, const auto& b) { return a->rank < b->rank; });
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i]->rank == ranks[i - 1]->rank)
      throw Error(fmt::format("{}: rank {} given twice", path_.string(), ranks[i]->rank));
  Profile p = described(std::move(strings));
  std::vector<RankList::Ptr> list(ranks.begin(), ranks.end());
  p.ranks_ = RankList(std::move(list));
  for (const Rank& r : p.ranks_) p.counts_ += meshscope::count_events(r);
  return p;
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
