#include "profiler/profile.hpp"

#include <algorithm>
#include <charconv>
#include <future>
#include <map>
#include <tuple>
#include <unordered_map>

#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {
namespace {

std::int32_t to_i32(std::int64_t value) {
  return value == kNull ? -1 : static_cast<std::int32_t>(value);
}

std::vector<std::int32_t> parse_rank_list(std::string_view text) {
  std::vector<std::int32_t> ranks;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if ((*p >= '0' && *p <= '9') || *p == '-') {
      std::int32_t value = 0;
      auto [next, ec] = std::from_chars(p, end, value);
      if (ec == std::errc()) ranks.push_back(value);
      p = next == p ? p + 1 : next;
    } else {
      ++p;
    }
  }
  return ranks;
}

Rank& rank_slot(std::vector<Rank>& ranks, std::map<std::int32_t, std::size_t>& index, std::int64_t rank) {
  auto it = index.find(static_cast<std::int32_t>(rank));
  if (it != index.end()) return ranks[it->second];
  index.emplace(static_cast<std::int32_t>(rank), ranks.size());
  ranks.emplace_back();
  ranks.back().rank = static_cast<std::int32_t>(rank);
  return ranks.back();
}

}  // namespace

namespace {

using StreamKey = std::tuple<std::int32_t, std::int32_t, std::int64_t>;       // rank, device, stream
using TrackKey = std::tuple<std::int32_t, bool, std::int64_t, std::int64_t>;  // rank, gpu, pid, tid

struct ActivityScan {
  std::map<StreamKey, std::vector<Activity>> buckets;
  std::map<std::int32_t, std::vector<KernelDetail>> kernels;
  std::map<std::int32_t, std::vector<CopyDetail>> copies;
};

// The three large tables are read on their own connections and threads (a profile can hold tens of millions
// of rows); NOT NULL columns are read without a type check.
// A string id read from TABLE's row ROW_ID, checked against the ids the strings table holds.
StringId string_id(const std::filesystem::path& path, std::int64_t id, std::int64_t bound, const char* table,
                   std::int64_t row_id, const char* column) {
  if (id == kNull) return kNoString;
  if (id < 0 || id >= bound) {
    fail("{}: {} id={}: {} {} is not the id of a string in the profile", path.string(), table, row_id, column,
         id);
  }
  return static_cast<StringId>(id);
}

ActivityScan scan_activities(const std::filesystem::path& path, std::int64_t string_bound) {
  sql::Database db(path, true);
  ActivityScan scan;
  auto s = db.prepare(
      "SELECT rank, kind, device, stream, start_ns, end_ns, id, correlation, name, grid_x, grid_y, grid_z,"
      " block_x, block_y, block_z, registers, shared_bytes, bytes, copy_kind, graph_id FROM activities");
  std::vector<Activity>* bucket = nullptr;
  std::vector<KernelDetail>* kernels = nullptr;
  std::vector<CopyDetail>* copies = nullptr;
  StreamKey last_key{-1, -1, -1};
  while (s.step()) {
    const StreamKey key{static_cast<std::int32_t>(s.column_int_raw(0)),
                        static_cast<std::int32_t>(s.column_int_raw(2)), s.column_int_raw(3)};
    if (!bucket || key != last_key) {
      bucket = &scan.buckets[key];
      kernels = &scan.kernels[std::get<0>(key)];
      copies = &scan.copies[std::get<0>(key)];
      last_key = key;
    }
    Activity a{};
    a.kind = static_cast<ActivityKind>(s.column_int_raw(1));
    a.start_ns = s.column_int_raw(4);
    a.end_ns = s.column_int_raw(5);
    a.id = s.column_int_raw(6);
    a.correlation = s.column_int(7);
    a.name = string_id(path, s.column_int(8), string_bound, "activities", a.id, "name");
    a.collective = -1;
    a.detail = kNoDetail;
    if (a.kind == ActivityKind::kKernel) {
      KernelDetail k{};
      for (int i = 0; i < 3; ++i) k.grid[i] = to_i32(s.column_int(9 + i));
      for (int i = 0; i < 3; ++i) k.block[i] = to_i32(s.column_int(12 + i));
      k.registers = to_i32(s.column_int(15));
      k.shared_bytes = to_i32(s.column_int(16));
      k.graph_id = s.column_int(19);
      a.detail = static_cast<std::uint32_t>(kernels->size());
      kernels->push_back(k);
    } else if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) {
      a.detail = static_cast<std::uint32_t>(copies->size());
      copies->push_back({s.column_int(17),
                         string_id(path, s.column_int(18), string_bound, "activities", a.id, "copy_kind")});
    }
    bucket->push_back(a);
  }
  for (auto& [key, list] : scan.buckets) {
    std::stable_sort(list.begin(), list.end(), [](const Activity& a, const Activity& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
  }
  return scan;
}

std::map<std::int32_t, std::vector<ApiCall>> scan_api_calls(const std::filesystem::path& path,
                                                            std::int64_t string_bound) {
  sql::Database db(path, true);
  std::map<std::int32_t, std::vector<ApiCall>> calls;
  auto s = db.prepare(
      "SELECT rank, kind, pid, tid, start_ns, end_ns, name, correlation, external_id, id FROM api_calls");
  std::vector<ApiCall>* list = nullptr;
  std::int32_t last_rank = -1;
  while (s.step()) {
    const auto rank = static_cast<std::int32_t>(s.column_int_raw(0));
    if (!list || rank != last_rank) {
      list = &calls[rank];
      last_rank = rank;
    }
    ApiCall a{};
    a.kind = static_cast<ApiKind>(s.column_int_raw(1));
    a.pid = s.column_int_raw(2);
    a.tid = s.column_int_raw(3);
    a.start_ns = s.column_int_raw(4);
    a.end_ns = s.column_int_raw(5);
    a.name = string_id(path, s.column_int(6), string_bound, "api_calls", s.column_int(9), "name");
    a.correlation = s.column_int(7);
    a.external_id = s.column_int(8);
    list->push_back(a);
  }
  for (auto& [rank, list_of_rank] : calls) {
    std::stable_sort(list_of_rank.begin(), list_of_rank.end(),
                     [](const ApiCall& a, const ApiCall& b) { return a.start_ns < b.start_ns; });
  }
  return calls;
}

struct RangeScan {
  std::map<TrackKey, std::vector<CpuRange>> tracks;
  std::int64_t skipped_cpu_ops = 0, skipped_python = 0;  // counted, not loaded (LoadOptions::cpu_operators)
};

RangeScan scan_ranges(const std::filesystem::path& path, bool cpu_operators, std::int64_t string_bound) {
  sql::Database db(path, true);
  RangeScan scan;
  auto& tracks = scan.tracks;
  auto s = db.prepare(
      "SELECT kind, rank, pid, tid, start_ns, end_ns, id, parent_id, external_id, step, name, category, depth"
      " FROM ranges");
  std::vector<CpuRange>* list = nullptr;
  TrackKey last_key{-1, false, 0, 0};
  while (s.step()) {
    CpuRange c{};
    c.kind = static_cast<RangeKind>(s.column_int_raw(0));
    if (!cpu_operators && (c.kind == RangeKind::kCpuOp || c.kind == RangeKind::kPythonFunction)) {
      ++(c.kind == RangeKind::kCpuOp ? scan.skipped_cpu_ops : scan.skipped_python);
      continue;
    }
    const auto rank = static_cast<std::int32_t>(s.column_int_raw(1));
    const TrackKey key{rank, c.kind == RangeKind::kGpuAnnotation, s.column_int_raw(2), s.column_int_raw(3)};
    if (!list || key != last_key) {
      list = &tracks[key];
      last_key = key;
    }
    c.start_ns = s.column_int_raw(4);
    c.end_ns = s.column_int_raw(5);
    c.id = s.column_int_raw(6);
    c.parent_id = s.column_int(7);
    c.external_id = s.column_int(8);
    c.step = s.column_int(9);
    c.name = string_id(path, s.column_int(10), string_bound, "ranges", c.id, "name");
    c.category = string_id(path, s.column_int(11), string_bound, "ranges", c.id, "category");
    c.depth = static_cast<std::int32_t>(s.column_int_raw(12));
    list->push_back(c);
  }
  for (auto& [key, list_of_track] : tracks) {
    std::stable_sort(list_of_track.begin(), list_of_track.end(), [](const CpuRange& a, const CpuRange& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
    });
  }
  return scan;
}

// The number of string ids (the largest id + 1), after checking that ids are positive and dense enough to be
// held in a vector: a hostile id (-1, 10^12) must not size memory. The writer numbers strings 1, 2, 3, ...;
// up to half the ids may be missing (hand-edited profiles) before the table counts as damaged.
std::int64_t string_id_bound(sql::Database& db, const std::filesystem::path& path) {
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

}  // namespace

Profile Profile::load(const std::filesystem::path& path, const LoadOptions& options) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such profile", path.string());
  require_regular_input(path);  // a FIFO or a device would block SQLite's first read
  sql::Database db(path, true);
  bool tables_present = false;
  try {
    tables_present = db.has_table("meta") && db.has_table("activities");
  } catch (const Error&) {
    fail("{}: not a meshscope profile (not an SQLite database)", path.string());
  }
  if (!tables_present) fail("{}: not a meshscope profile (no meta/activities tables)", path.string());
  const std::int64_t string_ids = string_id_bound(db, path);

  // The large tables load in the background while this thread reads the small ones.
  auto activities_future = std::async(std::launch::async, scan_activities, path, string_ids);
  auto cpu_future = std::async(std::launch::async, [&path, &options, string_ids] {
    return std::make_pair(scan_api_calls(path, string_ids),
                          scan_ranges(path, options.cpu_operators, string_ids));
  });

  Profile profile;
  profile.path_ = path;
  {
    auto s = db.prepare("SELECT key, value FROM meta");
    while (s.step()) profile.meta_[s.column_text(0)] = s.column_text(1);
    auto it = profile.meta_.find("schema_version");
    profile.schema_version_ = it == profile.meta_.end() ? 0 : std::atoi(it->second.c_str());
  }
  {
    // Ids were checked against the table's size above: the vector is at most twice the rows.
    auto s = db.prepare("SELECT id, value FROM strings ORDER BY id");
    profile.strings_.resize(static_cast<std::size_t>(string_ids));
    while (s.step()) profile.strings_[static_cast<std::size_t>(s.column_int(0))] = s.column_text(1);
  }

  auto& ranks = profile.ranks_;
  std::map<std::int32_t, std::size_t> rank_index;
  {
    auto s = db.prepare(
        "SELECT rank, world_size, hostname, pid, source_file, rank_source, backend, comm_version, "
        "clock_base_ns,"
        " clock_offset_ns, first_ns, last_ns FROM ranks ORDER BY rank");
    while (s.step()) {
      Rank& r = rank_slot(ranks, rank_index, s.column_int(0));
      r.world_size = s.column_int(1);
      r.hostname = s.column_text(2);
      r.pid = s.column_int(3);
      r.source_file = s.column_text(4);
      r.rank_source = s.column_text(5);
      r.backend = s.column_text(6);
      r.comm_version = s.column_text(7);
      r.clock_base_ns = s.column_int_or(8, 0);
      r.clock_offset_ns = s.column_int_or(9, 0);
      r.first_ns = s.column_int_or(10, 0);
      r.last_ns = s.column_int_or(11, 0);
    }
  }
  {
    auto s = db.prepare(
        "SELECT rank, device, name, total_memory_bytes, compute_major, compute_minor, sm_count FROM devices"
        " ORDER BY rank, device");
    while (s.step()) {
      Rank& r = rank_slot(ranks, rank_index, s.column_int(0));
      r.devices.push_back({to_i32(s.column_int(1)), s.column_text(2), s.column_int(3), s.column_int(4),
                           s.column_int(5), s.column_int(6)});
    }
  }
  {
    auto s = db.prepare(
        "SELECT rank, pg_name, pg_desc, backend, group_size, ranks_json FROM process_groups ORDER BY rank, "
        "pg_name");
    while (s.step()) {
      Rank& r = rank_slot(ranks, rank_index, s.column_int(0));
      r.process_groups.push_back({s.column_text(1), s.column_text(2), s.column_text(3), s.column_int(4),
                                  parse_rank_list(s.column_text(5))});
    }
  }
  std::map<StreamKey, std::string> stream_names;
  {
    auto s = db.prepare("SELECT rank, device, stream, name FROM streams");
    while (s.step()) {
      stream_names[{to_i32(s.column_int(0)), to_i32(s.column_int(1)), s.column_int(2)}] = s.column_text(3);
    }
  }
  std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>, std::string> thread_names;
  {
    auto t = db.prepare("SELECT rank, pid, tid, name FROM threads");
    while (t.step())
      thread_names[{to_i32(t.column_int(0)), t.column_int(1), t.column_int(2)}] = t.column_text(3);
  }
  struct CollectiveRow {
    std::int32_t rank;
    Collective collective;
  };
  std::vector<CollectiveRow> collective_rows;
  {
    auto s = db.prepare(
        "SELECT rank, id, activity_id, communicator, pg_desc, pg_ranks, seq, op, in_nelems, out_nelems, "
        "dtype,"
        " in_bytes, out_bytes, group_size, algorithm, protocol, channels, start_ns, end_ns, source FROM "
        "collectives"
        " ORDER BY rank, start_ns, id");
    while (s.step()) {
      Collective c{};
      c.id = s.column_int(1);
      c.activity_id = s.column_int(2);
      c.stream_index = -1;
      c.activity = 0;
      auto sid = [&](int i) {
        return string_id(path, s.column_int(i), string_ids, "collectives", c.id,
                         sqlite3_column_name(s.handle(), i));
      };
      c.communicator = sid(3);
      c.pg_desc = sid(4);
      c.pg_ranks = sid(5);
      c.seq = s.column_int(6);
      c.op = sid(7);
      c.in_nelems = s.column_int(8);
      c.out_nelems = s.column_int(9);
      c.dtype = sid(10);
      c.in_bytes = s.column_int(11);
      c.out_bytes = s.column_int(12);
      c.group_size = s.column_int(13);
      c.algorithm = sid(14);
      c.protocol = sid(15);
      c.channels = s.column_int(16);
      c.start_ns = s.column_int(17);
      c.end_ns = s.column_int(18);
      c.source = s.column_text(19);
      collective_rows.push_back({to_i32(s.column_int(0)), std::move(c)});
    }
  }
  {
    auto s = db.prepare(
        "SELECT rank, category, flow_id, src_ns, src_pid, src_tid, dst_ns, dst_pid, dst_tid, id FROM flows"
        " ORDER BY id");
    while (s.step()) {
      Rank& r = rank_slot(ranks, rank_index, s.column_int(0));
      r.flows.push_back({string_id(path, s.column_int(1), string_ids, "flows", s.column_int(9), "category"),
                         s.column_int(2), s.column_int(3), s.column_int(4), s.column_int(5), s.column_int(6),
                         s.column_int(7), s.column_int(8)});
    }
  }
  {
    auto s = db.prepare("SELECT rank, severity, message FROM diagnostics ORDER BY rowid");
    while (s.step()) {
      if (s.column_is_null(0)) {
        profile.job_diagnostics_.push_back({s.column_text(1), s.column_text(2)});
      } else {
        rank_slot(ranks, rank_index, s.column_int(0))
            .diagnostics.push_back({s.column_text(1), s.column_text(2)});
      }
    }
  }

  // GPU activities: flatten stream by stream.
  ActivityScan activities = activities_future.get();
  for (auto& [key, bucket] : activities.buckets) {
    Rank& r = rank_slot(ranks, rank_index, std::get<0>(key));
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
    if (r.activities.empty()) {
      r.activities = std::move(bucket);
    } else {
      r.activities.insert(r.activities.end(), bucket.begin(), bucket.end());
    }
    std::vector<Activity>().swap(bucket);
  }
  for (auto& [rank, list] : activities.kernels) rank_slot(ranks, rank_index, rank).kernels = std::move(list);
  for (auto& [rank, list] : activities.copies) rank_slot(ranks, rank_index, rank).copies = std::move(list);
  for (auto& r : ranks) {
    bool any = false;
    for (const auto& a : r.activities) {
      if (!any || a.start_ns < r.gpu_first_ns) r.gpu_first_ns = a.start_ns;
      if (!any || a.end_ns > r.gpu_last_ns) r.gpu_last_ns = a.end_ns;
      any = true;
    }
  }

  // Collectives, linked to their kernels.
  {
    for (const auto& row : collective_rows) rank_slot(ranks, rank_index, row.rank);
    std::vector<std::unordered_map<std::int64_t, std::pair<std::int32_t, std::uint32_t>>> kernel_at(
        ranks.size());
    for (const auto& row : collective_rows) {
      if (row.collective.activity_id != kNull)
        kernel_at[rank_index[row.rank]][row.collective.activity_id] = {-1, 0};
    }
    for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
      if (kernel_at[ri].empty()) continue;
      Rank& r = ranks[ri];
      for (std::size_t si = 0; si < r.streams.size(); ++si) {
        const auto& st = r.streams[si];
        for (std::uint32_t i = 0; i < st.count; ++i) {
          auto it = kernel_at[ri].find(r.activities[st.first + i].id);
          if (it != kernel_at[ri].end()) it->second = {static_cast<std::int32_t>(si), st.first + i};
        }
      }
    }
    for (auto& row : collective_rows) {
      const std::size_t ri = rank_index[row.rank];
      Rank& r = ranks[ri];
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
  auto [api_calls, range_scan] = cpu_future.get();
  auto& tracks = range_scan.tracks;
  for (auto& [rank, list] : api_calls) rank_slot(ranks, rank_index, rank).api_calls = std::move(list);
  for (auto& [key, list] : tracks) {
    const auto& [rank, gpu, pid, tid] = key;
    Rank& r = rank_slot(ranks, rank_index, rank);
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
        r.steps.push_back({c.step, c.start_ns, c.end_ns, pid, tid, c.id, "ProfilerStep"});
    }
    r.ranges.insert(r.ranges.end(), list.begin(), list.end());
    r.tracks.push_back(std::move(track));
  }
  for (auto& r : ranks) {
    std::stable_sort(r.steps.begin(), r.steps.end(),
                     [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  }
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) { return a.rank < b.rank; });

  // Counts by kind.
  EventCounts& n = profile.counts_;
  for (const auto& r : ranks) {
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
      }
    }
    n.collective += static_cast<std::int64_t>(r.collectives.size());
    n.flow += static_cast<std::int64_t>(r.flows.size());
  }
  n.cpu_op += range_scan.skipped_cpu_ops;  // counted, not loaded
  n.python_function += range_scan.skipped_python;
  return profile;
}

const std::string& Profile::str(StringId id) const {
  static const std::string empty;
  return id < strings_.size() ? strings_[id] : empty;
}

StringId Profile::find_string(std::string_view text) const {
  for (std::size_t i = 1; i < strings_.size(); ++i) {
    if (strings_[i] == text) return static_cast<StringId>(i);
  }
  return kNoString;
}

const Rank* Profile::find_rank(std::int32_t rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const Rank& r, std::int32_t value) { return r.rank < value; });
  return it != ranks_.end() && it->rank == rank ? &*it : nullptr;
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
