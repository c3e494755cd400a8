#include "profiler/record/merge.hpp"

#include <algorithm>
#include <deque>
#include <exception>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::record {
namespace fs = std::filesystem;

std::vector<fs::path> find_rank_files(const fs::path& dir, const fs::path& output) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (!output.empty() && fs::equivalent(entry.path(), output, ec)) continue;
    const bool committed = name.rfind("rank", 0) == 0 && name.ends_with(".msdb");
    // A killed collector's journaled file: .rank0.nccl.123.msdb.tmp-123-1a2b3c4d (its -wal and -shm beside
    // it).
    const bool left_behind = name.rfind(".rank", 0) == 0 && name.find(".msdb.tmp-") != std::string::npos &&
                             !name.ends_with("-wal") && !name.ends_with("-shm") &&
                             !name.ends_with("-journal");
    if (committed || left_behind) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

std::int64_t median(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

}  // namespace

ClockAlignment align_clocks(const std::vector<CollectiveEnd>& ends, const std::string& reference) {
  ClockAlignment result;
  std::set<std::string> nodes;
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, std::int64_t>> instances;
  for (const auto& e : ends) {
    nodes.insert(e.node);
    // One end per node and instance: the latest (ranks of one node share a clock; the last one to finish is
    // the one the collective's completion is measured by on every node alike).
    auto& at = instances[{e.communicator, e.seq}][e.node];
    at = std::max(at == 0 ? e.end_ns : at, e.end_ns);
  }
  if (nodes.empty()) return result;
  // Samples of (end on A - end on B) per edge A -> B, A the instance's first node.
  std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> samples;
  for (const auto& [key, by_node] : instances) {
    if (by_node.size() < 2) continue;
    const auto& [first, first_end] = *by_node.begin();
    for (auto it = std::next(by_node.begin()); it != by_node.end(); ++it) {
      samples[{first, it->first}].push_back(first_end - it->second);
    }
  }
  struct Edge {
    std::string to;
    std::int64_t delta;  // offset(to) - offset(from)
    std::int64_t count;
  };
  std::map<std::string, std::vector<Edge>> graph;
  for (const auto& [edge, diffs] : samples) {
    const std::int64_t m = median(diffs);
    const auto n = static_cast<std::int64_t>(diffs.size());
    graph[edge.first].push_back({edge.second, m, n});
    graph[edge.second].push_back({edge.first, -m, n});
  }
  for (auto& [node, edges] : graph) {
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.count > b.count; });
  }
  result.reference = !reference.empty() && nodes.count(reference) ? reference : *nodes.begin();
  result.offset_ns[result.reference] = 0;
  result.matches[result.reference] = 0;
  std::deque<std::string> queue{result.reference};
  while (!queue.empty()) {
    const std::string node = queue.front();
    queue.pop_front();
    for (const Edge& e : graph[node]) {
      if (result.offset_ns.count(e.to)) continue;
      result.offset_ns[e.to] = result.offset_ns[node] + e.delta;
      result.matches[e.to] = e.count;
      queue.push_back(e.to);
    }
  }
  for (const auto& node : nodes) {
    if (result.offset_ns.count(node)) continue;
    result.offset_ns[node] = 0;
    result.matches[node] = 0;
    result.unaligned.push_back(node);
  }
  return result;
}

namespace {

// collectives.source of a plugin operation timed only by its enqueue call (docs/COLLECTORS.md).
constexpr const char* kEnqueueTimed = "nccl_plugin_enqueue";

// One per-rank file, opened.
struct Input {
  fs::path path;
  sql::Database db;
  std::int32_t rank = 0;
  std::string node;
  RankInfo info;
  bool recovered = false;
};

// Every table the merge reads must be an ordinary table (a view's SQL would run; see sqlite_util.hpp): a file
// where one is not is skipped as unreadable.
void check_tables(sql::Database& db) {
  for (const char* table :
       {"meta", "strings", "ranks", "activities", "api_calls", "ranges", "flows", "devices", "streams",
        "threads", "process_groups", "diagnostics", "collectives"}) {
    if (!db.table_columns(table)) fail("{}: no {} table", db.path().string(), table);
  }
  db.prepare("SELECT count(*) FROM meta").step();
}

sql::Database open_input(const fs::path& path) {
  try {
    sql::Database db(path, true);  // untrusted: see sqlite_util.hpp
    check_tables(db);
    return db;
  } catch (const Error&) {
    // A journaled file whose -shm is gone needs a writable connection to replay its WAL.
    sql::Database db(path, false);
    db.harden();
    check_tables(db);
    return db;
  }
}

std::string merge_ranks_json(const std::vector<std::string>& parts) {
  // Positional arrays like "[null, 5, null]" from each member: the merged array takes every known entry.
  std::vector<std::string> merged;
  for (const auto& text : parts) {
    std::vector<std::string> items;
    std::string item;
    for (const char c : text) {
      if (c == '[' || c == ' ') continue;
      if (c == ',' || c == ']') {
        items.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    if (merged.size() < items.size()) merged.resize(items.size(), "null");
    for (std::size_t i = 0; i < items.size(); ++i) {
      // Only ranks are kept (a damaged file's other text would make the job profile unloadable).
      const std::string& v = items[i];
      const bool rank = !v.empty() && v.size() <= 7 &&
                        std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                        std::stoll(v) <= kMaxRank;
      if (rank) merged[i] = v;
    }
  }
  std::string out = "[";
  for (std::size_t i = 0; i < merged.size(); ++i) out += (i ? ", " : "") + merged[i];
  return out + "]";
}

class Merger {
 public:
  Merger(ProfileWriter& writer, MergeResult& result) : w_(writer), result_(result) {}

  // The OS's record of the threads: optional (profiles written before it have none); only an ordinary table
  // is read.
  void copy_thread_activity(Input& in, std::int64_t shift) {
    using schema::ThreadActivity;
    if (!in.db.table_columns(ThreadActivity::kName)) return;
    auto s = in.db.prepare(schema::select_sql<ThreadActivity>());
    while (s.step()) {
      ThreadActivityRecord a = ThreadActivity::read(s, 0);
      a.rank = in.rank;
      const std::int64_t kind = s.column_int(ThreadActivity::kind);
      if (kind < 1 || kind > kThreadActivityKindCount ||
          !interval(a.start_ns, a.end_ns, shift, a.start_ns, a.end_ns)) {
        ++result_.skipped_rows;
        continue;
      }
      a.stack = str(a.stack);
      w_.add_thread_activity(a);
    }
  }

  // Everything but collectives; remembers NCCL kernels for linking.
  void copy_first_pass(Input& in, std::int64_t shift) {
    map_strings(in);
    auto& ids = activity_ids_[in.path];
    using namespace schema;
    {
      auto s = in.db.prepare(select_sql<Activities>());
      while (s.step()) {
        std::int64_t old_id = 0;
        ActivityRecord a = Activities::read(s, 0, old_id);
        a.rank = in.rank;
        const std::int64_t kind = s.column_int(Activities::kind), device = s.column_int(Activities::device);
        if (kind < 1 || kind > kActivityKindCount || device < INT32_MIN || device > INT32_MAX ||
            !interval(a.start_ns, a.end_ns, shift, a.start_ns, a.end_ns)) {
          ++result_.skipped_rows;
          continue;
        }
        a.name = named(a.name, "(unnamed)");
        a.copy_kind = str(a.copy_kind);
        ids[old_id] = w_.add_activity(a);
        ++result_.activities;
      }
    }
    {
      // NCCL kernels of this rank, for linking the plugin's collectives to the kernel they ran as.
      auto s = in.db.prepare(
          fmt::format("SELECT a.id, a.start_ns, a.end_ns, a.correlation FROM activities a JOIN strings n "
                      "ON n.id = a.name WHERE a.kind = {} AND (n.value LIKE 'ncclDevKernel%' OR n.value LIKE "
                      "'ncclKernel%')",
                      static_cast<int>(ActivityKind::kKernel)));
      auto& kernels = nccl_kernels_[in.rank];
      while (s.step()) {
        const auto id = ids.find(s.column_int(0));
        if (id == ids.end()) continue;  // skipped above
        const std::int64_t correlation = s.column_int(3);
        if (correlation != kNull) nccl_launch_of_[correlation] = kernels.size();
        kernels.push_back({s.column_int(1) + shift, s.column_int(2) + shift, id->second});
      }
    }
    {
      auto s = in.db.prepare(select_sql<ApiCalls>());
      auto& kernels = nccl_kernels_[in.rank];
      while (s.step()) {
        ApiCallRecord c = ApiCalls::read(s, 0);
        c.rank = in.rank;
        const std::int64_t kind = s.column_int(ApiCalls::kind);
        if (kind < 1 || kind > kApiKindCount ||
            !interval(c.start_ns, c.end_ns, shift, c.start_ns, c.end_ns)) {
          ++result_.skipped_rows;
          continue;
        }
        c.name = named(c.name, "(unnamed)");
        if (!nccl_launch_of_.empty() && c.correlation != kNull) {
          // The call that launched an NCCL kernel (runtime and driver calls may both carry its correlation).
          const auto launched = nccl_launch_of_.find(c.correlation);
          if (launched != nccl_launch_of_.end()) {
            std::int64_t& launch = kernels[launched->second].launch;
            launch = launch == kNull ? c.start_ns : std::min(launch, c.start_ns);
          }
        }
        w_.add_api_call(c);
      }
      nccl_launch_of_.clear();
    }
    {
      auto s = in.db.prepare(select_sql<Ranges>(in.db));
      while (s.step()) {
        RangeRecord r = Ranges::read(s, 0);
        r.rank = in.rank;
        const std::int64_t kind = s.column_int(Ranges::kind);
        if (kind < 1 || kind > kRangeKindCount ||
            !interval(r.start_ns, r.end_ns, shift, r.start_ns, r.end_ns)) {
          ++result_.skipped_rows;
          continue;
        }
        r.name = named(r.name, "(unnamed)");
        r.category = str(r.category);
        r.input_dims = str(r.input_dims);
        r.input_types = str(r.input_types);
        w_.add_range(r);
      }
    }
    w_.close_tracks();
    {
      auto s = in.db.prepare(select_sql<Flows>());
      while (s.step()) {
        FlowRecord f = Flows::read(s, 0);
        f.rank = in.rank;
        f.category = named(f.category, "(unknown)");
        if (!interval(f.src_ns, f.src_ns, shift, f.src_ns, f.src_ns) ||
            (f.dst_ns != kNull && !interval(f.dst_ns, f.dst_ns, shift, f.dst_ns, f.dst_ns))) {
          ++result_.skipped_rows;
          continue;
        }
        w_.add_flow(f);
      }
    }
    copy_thread_activity(in, shift);
    {
      auto s = in.db.prepare(select_sql<Devices>());
      while (s.step()) {
        const std::int64_t device = s.column_int(Devices::device);
        if (device < INT32_MIN || device > INT32_MAX) continue;
        DeviceInfo d = Devices::read(s, 0);
        d.rank = in.rank;
        w_.add_device(d);
      }
    }
    {
      auto s = in.db.prepare(select_sql<Streams>());
      while (s.step()) {
        const std::int64_t device = s.column_int(Streams::device);
        if (device < INT32_MIN || device > INT32_MAX) continue;
        StreamInfo st = Streams::read(s, 0);
        st.rank = in.rank;
        w_.add_stream(st);
      }
    }
    {
      auto s = in.db.prepare(select_sql<Threads>());
      while (s.step()) {
        ThreadInfo t = Threads::read(s, 0);
        t.rank = in.rank;
        w_.add_thread(t);
      }
    }
    {
      auto s = in.db.prepare(select_sql<ProcessGroups>());
      while (s.step()) {
        ProcessGroupInfo pg = ProcessGroups::read(s, 0);
        pg.rank = in.rank;
        if (pg.group_size < 0 || pg.group_size > kMaxRank + 1) pg.group_size = kNull;
        if (!pg.ranks_json.empty()) ranks_json_[pg.pg_name].push_back(pg.ranks_json);
        groups_.push_back(pg);
      }
    }
    {
      using schema::Diagnostics;
      auto s = in.db.prepare(schema::select_sql<Diagnostics>());
      while (s.step())
        w_.add_diagnostic(in.rank, s.column_text(Diagnostics::severity), s.column_text(Diagnostics::message));
    }
    copy_work(in, shift);
  }

  // Work per operator and its kernels' shares (docs/PROFILE.md "Work per operator"): per-rank profiles made
  // by `import` carry them, the collectors' files do not. Operators and kernels get the job's ids.
  void copy_work(Input& in, std::int64_t shift) {
    using schema::KernelWork;
    using schema::OpWork;
    if (!in.db.table_columns(OpWork::kName) || !in.db.table_columns(KernelWork::kName)) return;
    std::unordered_map<std::int64_t, std::int64_t> op_ids;
    {
      auto s = in.db.prepare(schema::select_sql<OpWork>());
      while (s.step()) {
        OpWorkRecord w = OpWork::read(s, 0);
        const std::int64_t status = s.column_int(OpWork::status), category = s.column_int(OpWork::category);
        if (!is_op_work_status(status) || (category != kNull && (category < 1 || category > 6)) ||
            !interval(w.start_ns, w.start_ns, shift, w.start_ns, w.start_ns)) {
          ++result_.skipped_rows;
          continue;
        }
        const std::int64_t old_id = w.id;
        w.rank = in.rank;
        w.name = named(s.column_int(OpWork::name), "(unnamed)");
        w.input_dims = str(s.column_int(OpWork::input_dims));
        w.input_types = str(s.column_int(OpWork::input_types));
        op_ids[old_id] = w_.add_op_work(w);
      }
    }
    const auto& activities = activity_ids_[in.path];
    auto s = in.db.prepare(schema::select_sql<KernelWork>());
    while (s.step()) {
      KernelWorkRecord k = KernelWork::read(s, 0);
      const auto activity = activities.find(k.activity_id);
      const auto op = op_ids.find(k.op_id);
      if (activity == activities.end() || op == op_ids.end()) {
        ++result_.skipped_rows;
        continue;
      }
      k.activity_id = activity->second;
      k.op_id = op->second;
      k.rank = in.rank;
      w_.add_kernel_work(k);
    }
  }

  void copy_collectives(Input& in, std::int64_t shift) {
    use_strings_of(in);
    auto& ids = activity_ids_[in.path];
    auto& kernels = nccl_kernels_[in.rank];
    std::sort(kernels.begin(), kernels.end());
    using schema::Collectives;
    auto s = in.db.prepare(schema::select_sql<Collectives>());
    while (s.step()) {
      CollectiveRecord c;
      c.rank = in.rank;
      const std::int64_t old_activity = s.column_int(Collectives::activity_id);
      if (old_activity != kNull) {
        const auto it = ids.find(old_activity);
        c.activity_id = it == ids.end() ? kNull : it->second;
      }
      c.communicator = str(s.column_int(Collectives::communicator));
      c.pg_desc = str(s.column_int(Collectives::pg_desc));
      c.pg_ranks = str(s.column_int(Collectives::pg_ranks));
      c.seq = s.column_int(Collectives::seq);
      c.op = named(s.column_int(Collectives::op), "(unknown)");
      c.in_nelems = s.column_int(Collectives::in_nelems);
      c.out_nelems = s.column_int(Collectives::out_nelems);
      c.dtype = str(s.column_int(Collectives::dtype));
      c.in_bytes = s.column_int(Collectives::in_bytes);
      c.out_bytes = s.column_int(Collectives::out_bytes);
      c.group_size = s.column_int(Collectives::group_size);
      c.algorithm = str(s.column_int(Collectives::algorithm));
      c.protocol = str(s.column_int(Collectives::protocol));
      c.channels = s.column_int(Collectives::channels);
      if (!interval(s.column_int(Collectives::start_ns), s.column_int(Collectives::end_ns), shift, c.start_ns,
                    c.end_ns)) {
        ++result_.skipped_rows;
        continue;
      }
      c.source = static_source(s.column_text(Collectives::source));
      if (std::string_view(c.source) == kEnqueueTimed) take_kernel_times(c);
      if (c.activity_id == kNull) c.activity_id = link(kernels, c.start_ns, c.end_ns);
      if (c.activity_id != kNull) ++result_.linked_collectives;
      w_.add_collective(c);
      ++result_.collectives;
    }
  }

  void write_groups() {
    for (auto& pg : groups_) {
      const auto it = ranks_json_.find(pg.pg_name);
      if (it != ranks_json_.end()) pg.ranks_json = merge_ranks_json(it->second);
      w_.add_process_group(pg);
    }
  }

 private:
  struct Kernel {
    std::int64_t start, end, id;
    std::int64_t launch = kNull;  // start of the API call that launched it (kNull: not recorded)
    bool operator<(const Kernel& o) const { return start < o.start; }
  };

  // An operation the plugin could only time by its enqueue call (no kernel channel event came: NCCL 2.28
  // sends none for channels without steps, e.g. a send to the rank itself) gets the GPU times of the NCCL
  // kernel launched for it. NCCL starts and stops an operation's task event right after launching its group's
  // kernel (seen on an H200 with NCCL 2.28.9: 0.2-0.6 us after cuLaunchKernelEx returned), so that kernel is
  // the last one launched before the event started; every operation of one group gets the group's kernel.
  void take_kernel_times(CollectiveRecord& c) {
    auto [at, first] = nccl_launches_.try_emplace(c.rank);
    std::vector<Kernel>& launches = at->second;
    if (first) {
      for (const Kernel& k : nccl_kernels_[c.rank])
        if (k.launch != kNull) launches.push_back(k);
      std::sort(launches.begin(), launches.end(),
                [](const Kernel& a, const Kernel& b) { return a.launch < b.launch; });
    }
    auto it = std::upper_bound(launches.begin(), launches.end(), c.start_ns,
                               [](std::int64_t t, const Kernel& k) { return t < k.launch; });
    if (it == launches.begin()) return;
    --it;
    // The first launch of a kernel loads its module (milliseconds); far more than that is another group's.
    constexpr std::int64_t kEventAfterLaunch = 100'000'000;
    if (c.start_ns - it->launch > kEventAfterLaunch) return;
    c.start_ns = it->start;
    c.end_ns = it->end;
    c.activity_id = it->id;
    c.source = "nccl_plugin";
    ++result_.kernel_timed_collectives;
  }

  // The NCCL kernel that overlaps [start, end] the most (kNull when none does).
  static std::int64_t link(const std::vector<Kernel>& kernels, std::int64_t start, std::int64_t end) {
    auto it = std::upper_bound(kernels.begin(), kernels.end(), Kernel{end, 0, 0});
    std::int64_t best = kNull, best_overlap = -1;
    for (int steps = 0; it != kernels.begin() && steps < 64; ++steps) {
      --it;
      const std::int64_t overlap = std::min(end, it->end) - std::max(start, it->start);
      if (overlap >= 0 && overlap > best_overlap) {
        best_overlap = overlap;
        best = it->id;
      }
      if (it->end < start - 1'000'000'000) break;
    }
    return best;
  }

  // START..END shifted onto the job's clock: false (the row is skipped and counted) when a time is missing,
  // out of range after the shift, or the interval ends before it starts; damaged per-rank files must not
  // stop the merge or wrap times.
  static bool interval(std::int64_t start, std::int64_t end, std::int64_t shift, TimeNs& start_out,
                       TimeNs& end_out) {
    if (start == kNull || end == kNull || end < start) return false;
    if (__builtin_add_overflow(start, shift, &start_out) || __builtin_add_overflow(end, shift, &end_out)) {
      return false;
    }
    return time_in_range(start_out) && time_in_range(end_out);
  }

  static const char* static_source(const std::string& text) {
    for (const char* known : {"kernel_args", "cpu_op", "nccl_plugin", kEnqueueTimed, "nvtx"}) {
      if (text == known) return known;
    }
    return "nccl_plugin";
  }

  // Every input file numbers its strings its own way: each keeps its own map from its ids to the job's, and
  // whatever is copied from a file (first pass or collectives) goes through that file's map.
  void map_strings(Input& in) {
    auto& map = string_maps_[in.path];
    map.clear();
    using schema::Strings;
    auto s = in.db.prepare(schema::select_sql<Strings>());
    while (s.step()) map[s.column_int(Strings::id)] = w_.intern(s.column_text(Strings::value));
    strings_ = &map;
  }
  void use_strings_of(const Input& in) { strings_ = &string_maps_.at(in.path); }
  // For NOT NULL name columns: a damaged file's missing string becomes PLACEHOLDER, not a failed merge.
  StringId named(std::int64_t old, std::string_view placeholder) {
    const StringId id = str(old);
    return id != kNoString ? id : w_.intern(placeholder);
  }
  StringId str(std::int64_t old) const {
    if (old == kNull) return kNoString;
    const auto it = strings_->find(old);
    return it == strings_->end() ? kNoString : it->second;
  }

  ProfileWriter& w_;
  MergeResult& result_;
  std::map<fs::path, std::unordered_map<std::int64_t, StringId>> string_maps_;
  const std::unordered_map<std::int64_t, StringId>* strings_ = nullptr;  // the file being copied
  std::map<fs::path, std::unordered_map<std::int64_t, std::int64_t>> activity_ids_;
  std::map<std::int32_t, std::vector<Kernel>> nccl_kernels_;
  std::map<std::int32_t, std::vector<Kernel>> nccl_launches_;     // by launch time, built when needed
  std::unordered_map<std::int64_t, std::size_t> nccl_launch_of_;  // correlation -> kernel, per input file
  std::vector<ProcessGroupInfo> groups_;
  std::map<std::string, std::vector<std::string>> ranks_json_;
};

// A launcher's own process (torchrun's agent asks CUDA how many devices there are) has no rank variable, so
// its file says rank 0 ("single"). Beside files that name their rank from the launcher, such a file that
// holds no GPU work and no collective is that process, not a rank: left out, with a note.
void leave_out_launcher_processes(std::vector<Input>& inputs, MergeResult& result) {
  std::set<std::int32_t> launched;
  for (const auto& in : inputs)
    if (in.info.rank_source.rfind("recorded:", 0) == 0) launched.insert(in.rank);
  if (launched.empty()) return;
  std::erase_if(inputs, [&](Input& in) {
    if (in.info.rank_source != "single" || !launched.contains(in.rank)) return false;
    try {
      auto s = in.db.prepare(
          "SELECT EXISTS (SELECT 1 FROM activities) OR EXISTS (SELECT 1 FROM collectives) OR "
          "EXISTS (SELECT 1 FROM ranges r LEFT JOIN strings s ON s.id = r.category "
          "WHERE s.value IS NOT 'cupti_overhead')");
      if (!s.step() || s.column_int(0) != 0) return false;
    } catch (const Error&) {
      return false;  // read (and judged) with the others
    }
    result.notes.push_back(
        fmt::format("{}: process {} had no rank of its own and ran no GPU work beside the launcher's "
                    "ranks (the launcher's own process): left out",
                    in.path.filename().string(), in.info.pid));
    return true;
  });
}

}  // namespace

MergeResult merge_rank_profiles(const std::vector<fs::path>& files, const fs::path& output,
                                const MergeOptions& options) {
  MergeResult result;
  std::vector<Input> inputs;
  for (const auto& path : files) {
    Input in;
    in.path = path;
    try {
      in.db = open_input(path);
      auto s = in.db.prepare(
          "SELECT rank, world_size, hostname, pid, source_file, rank_source FROM ranks LIMIT 1");
      if (!s.step()) {
        result.notes.push_back(fmt::format("{}: no rank recorded yet, skipped", path.filename().string()));
        continue;
      }
      const std::int64_t rank = s.column_int(0);
      if (rank < 0 || rank > kMaxRank) fail("rank {} is out of range", rank);
      in.rank = static_cast<std::int32_t>(rank);
      in.info.rank = in.rank;
      in.info.world_size = s.column_int(1);
      if (in.info.world_size < 1 || in.info.world_size > kMaxRank + 1) in.info.world_size = kNull;
      in.info.hostname = s.column_text(2);
      in.info.pid = s.column_int(3);
      in.info.source_file = path.filename().string();
      in.info.rank_source = s.column_text(5);
      in.node = in.info.hostname.empty() ? fmt::format("rank {}", in.rank) : in.info.hostname;
      in.recovered = path.filename().string().find(".tmp-") != std::string::npos;
      if (in.recovered) {
        result.notes.push_back(
            fmt::format("{}: the process ended before finishing its profile; recovered what it "
                        "had flushed",
                        path.filename().string()));
      }
    } catch (const Error& e) {
      result.notes.push_back(fmt::format("{}: unreadable, skipped ({})", path.filename().string(), e.what()));
      continue;
    }
    inputs.push_back(std::move(in));
  }
  leave_out_launcher_processes(inputs, result);
  if (inputs.empty()) fail("{}: no readable per-rank profile to merge", output.parent_path().string());
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const Input& a, const Input& b) { return a.rank < b.rank; });

  // Clocks: one per host, aligned on the ends of collectives every host saw.
  ClockAlignment alignment;
  if (options.align_clocks) {
    std::vector<CollectiveEnd> ends;
    for (auto& in : inputs) {
      auto s = in.db.prepare(
          "SELECT c.seq, c.end_ns, s.value FROM collectives c JOIN strings s ON s.id = c.communicator WHERE "
          "c.seq IS NOT NULL AND c.source = 'nccl_plugin'");
      while (s.step()) ends.push_back({in.node, s.column_text(2), s.column_int(0), s.column_int(1)});
    }
    alignment = align_clocks(ends, inputs.front().node);
    for (const auto& node : alignment.unaligned) {
      result.notes.push_back(fmt::format("clock of {} not aligned: it shares no recorded collective with {}",
                                         node, alignment.reference));
    }
  }
  auto offset_of = [&](const Input& in) {
    const auto it = alignment.offset_ns.find(in.node);
    return it == alignment.offset_ns.end() ? std::int64_t{0} : it->second;
  };

  // The writer cannot store a job-wide diagnostic (rank NULL) yet: job notes go to the first rank.
  const std::int32_t job_rank = inputs.front().rank;
  {
    WriterOptions writing;
    writing.inputs = files;  // a per-rank file is never the output
    ProfileWriter writer(output, writing);
    writer.set_meta("source_format", "meshscope-record");
    writer.set_meta("merged_files", std::to_string(inputs.size()));
    if (!alignment.reference.empty()) writer.set_meta("clock_reference", alignment.reference);
    Merger merger(writer, result);
    std::map<std::int32_t, MergedRank> ranks;
    for (auto& in : inputs) {
      const std::int64_t shift = offset_of(in);
      merger.copy_first_pass(in, shift);
      auto& r = ranks[in.rank];
      r.rank = in.rank;
      r.node = in.node;
      r.files.push_back(in.path);
      r.clock_offset_ns = shift;
      r.recovered = r.recovered || in.recovered;
    }
    for (auto& in : inputs) merger.copy_collectives(in, offset_of(in));
    if (result.kernel_timed_collectives > 0) {
      result.notes.push_back(
          fmt::format("{} NCCL operations the plugin could time only by their enqueue call took the "
                      "GPU times of the NCCL kernel launched for them",
                      result.kernel_timed_collectives));
    }
    merger.write_groups();
    // One ranks row per rank, combining what its files said.
    std::map<std::int32_t, RankInfo> infos;
    std::map<std::int32_t, std::set<std::int64_t>> other_pids;  // noted once per process
    for (const auto& in : inputs) {
      auto [it, inserted] = infos.try_emplace(in.rank, in.info);
      RankInfo& info = it->second;
      if (!inserted) {
        info.source_file += ", " + in.info.source_file;
        if (info.world_size == kNull) info.world_size = in.info.world_size;
        if (info.pid != in.info.pid && in.info.pid != kNull &&
            other_pids[in.rank].insert(in.info.pid).second) {
          result.notes.push_back(fmt::format("rank {} was recorded by more than one process (pids {} and {})",
                                             in.rank, info.pid, in.info.pid));
        }
      }
      info.backend = "nccl";
      info.clock_offset_ns = offset_of(in);
    }
    for (auto& [rank, info] : infos) writer.set_rank(info);
    for (const auto& [node, offset] : alignment.offset_ns) {
      if (node == alignment.reference) continue;
      writer.add_diagnostic(
          job_rank, "info",
          fmt::format("clock of {} shifted by {} ns onto {} (from {} matched collective ends)", node, offset,
                      alignment.reference, alignment.matches[node]));
    }
    if (result.skipped_rows > 0) {
      result.notes.push_back(
          fmt::format("{} rows of damaged per-rank files skipped (a kind, a device or a time out of range)",
                      result.skipped_rows));
    }
    for (const auto& note : result.notes) writer.add_diagnostic(job_rank, "info", note);
    for (auto& [rank, r] : ranks) result.ranks.push_back(r);
    // The inputs stay open read-only while the writer finishes: close them first so the job profile's commit
    // is the last thing that touches the folder.
    inputs.clear();
    writer.commit();
  }
  return result;
}

}  // namespace meshscope::record
