// Profile::of_records: a profile made of records in memory (what a writer would write), checked as a load
// checks the rows it reads and attached to ranks as a load attaches them (profile_load.hpp).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/event_rows.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_load.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope {

using namespace load;

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

// The records as the scanners of event_rows.hpp take them (the rows a load reads), each field checked as
// a load checks it.
struct ActivityRecordRow {
  const ActivityRecord& rec;
  std::size_t index;  // in the rank's records: the id a writer gives it is index + 1
  std::int32_t rank_of_rows;
  const RecordChecks& check;
  std::int32_t rank() const {
    check.same_rank(rank_of_rows, rec.rank, "an activity");
    return rec.rank;
  }
  std::int32_t device() const { return rec.device; }
  std::int64_t stream() const { return rec.stream; }
  ActivityKind kind() const { return check.kind(rec.kind, kActivityKindCount, "an activity"); }
  std::pair<TimeNs, TimeNs> interval() const {
    return check.interval(rec.start_ns, rec.end_ns, "an activity");
  }
  std::int64_t id() const { return static_cast<std::int64_t>(index) + 1; }
  std::int64_t correlation() const { return rec.correlation; }
  StringId name() const { return check.string(rec.name, "an activity"); }
  KernelDetail kernel_detail() const {
    KernelDetail k{};
    for (int d = 0; d < 3; ++d) k.grid[d] = to_i32(rec.grid[d]);
    for (int d = 0; d < 3; ++d) k.block[d] = to_i32(rec.block[d]);
    k.registers = to_i32(rec.registers);
    k.shared_bytes = to_i32(rec.shared_bytes);
    k.graph_id = rec.graph_id;
    return k;
  }
  CopyDetail copy_detail() const { return {rec.bytes, check.string(rec.copy_kind, "a copy")}; }
};

struct ApiCallRecordRow {
  const ApiCallRecord& rec;
  std::int32_t rank_of_rows;
  bool links;
  const RecordChecks& check;
  std::int32_t rank() const {
    check.same_rank(rank_of_rows, rec.rank, "an API call");
    return rec.rank;
  }
  ApiKind kind() const { return check.kind(rec.kind, kApiKindCount, "an API call"); }
  std::int64_t pid() const { return rec.pid; }
  std::int64_t tid() const { return rec.tid; }
  std::pair<TimeNs, TimeNs> interval() const {
    return check.interval(rec.start_ns, rec.end_ns, "an API call");
  }
  StringId name() const { return check.string(rec.name, "an API call"); }
  std::int64_t correlation() const { return rec.correlation; }
  std::int64_t external_id() const { return links ? rec.external_id : kNull; }
};

struct RangeRecordRow {
  const RangeRecord& rec;
  std::size_t index;
  std::int32_t depth_of;
  bool links;
  const RecordChecks& check;
  const std::filesystem::path& path;
  RangeKind kind() const { return check.kind(rec.kind, kRangeKindCount, "a range"); }
  std::int32_t rank() const { return rec.rank; }  // checked before the filter
  std::int64_t pid() const { return rec.pid; }
  std::int64_t tid() const { return rec.tid; }
  std::pair<TimeNs, TimeNs> interval() const { return check.interval(rec.start_ns, rec.end_ns, "a range"); }
  std::int64_t id() const { return static_cast<std::int64_t>(index) + 1; }
  std::int64_t external_id() const { return links ? rec.external_id : kNull; }
  std::int64_t step() const { return rec.step; }
  StringId name() const { return check.string(rec.name, "a range"); }
  StringId category() const { return links ? check.string(rec.category, "a range") : kNoString; }
  std::int32_t depth() const {
    if (depth_of < 0) fail("{}: a range's depth {} is negative", path.string(), depth_of);
    return depth_of;
  }
};

struct CollectiveRecordRow {
  const CollectiveRecord& rec;
  std::int64_t id_of;
  const RecordChecks& check;
  std::int64_t id() const { return id_of; }
  std::int64_t activity_id() const { return rec.activity_id; }
  StringId communicator() const { return check.string(rec.communicator, "a collective"); }
  StringId pg_desc() const { return check.string(rec.pg_desc, "a collective"); }
  StringId pg_ranks() const { return check.string(rec.pg_ranks, "a collective"); }
  std::int64_t seq() const { return rec.seq; }
  StringId op() const { return check.string(rec.op, "a collective"); }
  std::int64_t in_nelems() const { return rec.in_nelems; }
  std::int64_t out_nelems() const { return rec.out_nelems; }
  StringId dtype() const { return check.string(rec.dtype, "a collective"); }
  std::int64_t in_bytes() const { return rec.in_bytes; }
  std::int64_t out_bytes() const { return rec.out_bytes; }
  std::int64_t group_size() const { return rec.group_size; }
  StringId algorithm() const { return check.string(rec.algorithm, "a collective"); }
  StringId protocol() const { return check.string(rec.protocol, "a collective"); }
  std::int64_t channels() const { return rec.channels; }
  std::pair<TimeNs, TimeNs> interval() const {
    return check.interval(rec.start_ns, rec.end_ns, "a collective");
  }
};

// The activities, as the activity scan reads them.
ActivityScan scan_activities(const RankRecords& in, const RecordChecks& check, const LoadOptions& options) {
  ActivityScanner scanner(options.kernel_details);
  for (std::size_t i = 0; i < in.activities.size(); ++i)
    scanner.add(ActivityRecordRow{in.activities[i], i, in.info.rank, check});
  return scanner.finish();
}

// The collectives, as read_collectives reads them; each source word is added to STRINGS once.
std::vector<CollectiveRow> collective_rows_of(const RankRecords& in, const RecordChecks& check,
                                              std::vector<std::string>& strings) {
  const std::int32_t rank = in.info.rank;
  std::vector<CollectiveRow> collective_rows;
  collective_rows.reserve(in.collectives.size() + in.resolved_collectives.size());
  std::map<std::string, StringId, std::less<>> source_ids;
  std::int64_t id = 0;
  for (const auto list : {in.collectives, in.resolved_collectives}) {
    for (const CollectiveRecord& rec : list) {
      check.same_rank(rank, rec.rank, "a collective");
      Collective c = collective_of(CollectiveRecordRow{rec, ++id, check});
      const std::string_view source = rec.source ? rec.source : "";
      auto it = source_ids.find(source);
      if (it == source_ids.end()) {
        it = source_ids.emplace(std::string(source), static_cast<StringId>(strings.size())).first;
        strings.emplace_back(source);
      }
      c.source = it->second;
      c.metadata = source != vocabulary::kNameOnlySource;
      collective_rows.push_back({rank, c});
    }
  }
  std::sort(collective_rows.begin(), collective_rows.end(),
            [](const CollectiveRow& a, const CollectiveRow& b) {
              return std::tie(a.collective.start_ns, a.collective.id) <
                     std::tie(b.collective.start_ns, b.collective.id);
            });
  return collective_rows;
}

// The API calls, as the API call scan reads them.
ApiCallScan scan_api_calls(const RankRecords& in, const RecordChecks& check, const LoadOptions& options) {
  ApiCallScanner scanner;
  for (const ApiCallRecord& rec : in.api_calls)
    scanner.add(ApiCallRecordRow{rec, in.info.rank, options.links, check});
  return scanner.finish();
}

// The CPU ranges, as the range scan reads them (CPU operators left out as OPTIONS says, as the scan's WHERE
// clause leaves them out), depths checked.
RangeScan scan_ranges(const std::filesystem::path& path, const RankRecords& in, const RecordChecks& check,
                      const LoadOptions& options) {
  if (in.range_depths.size() != in.ranges.size())
    fail("{}: {} ranges but {} depths (internal error)", path.string(), in.ranges.size(),
         in.range_depths.size());
  RangeScanner scanner;
  RangeScan& scan = scanner.scan();
  for (std::size_t i = 0; i < in.ranges.size(); ++i) {
    const RangeRecord& rec = in.ranges[i];
    check.same_rank(in.info.rank, rec.rank, "a range");
    const RangeKind kind = rec.kind;
    const bool kept_call = options.process_group_calls && kind == RangeKind::kCpuOp && rec.name > 0 &&
                           static_cast<std::size_t>(rec.name) <= in.strings.size() &&
                           vocabulary::names_process_group_call(*in.strings[rec.name - 1]);
    if (!options.cpu_operators && !kept_call &&
        (kind == RangeKind::kCpuOp || kind == RangeKind::kPythonFunction)) {
      ++(kind == RangeKind::kCpuOp ? scan.skipped_cpu_ops : scan.skipped_python);
      continue;
    }
    scanner.add(RangeRecordRow{rec, i, in.range_depths[i], options.links, check, path});
  }
  RangeScan out = scanner.finish();
  if (!options.cpu_operators && options.operators_left_out) {
    out.skipped_cpu_ops = options.operators_left_out->cpu_ops;
    out.skipped_python = options.operators_left_out->python_functions;
  }
  check_range_depths(path, out);
  return out;
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

}  // namespace meshscope
