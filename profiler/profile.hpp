// Profile: a read-only, in-memory view of a meshscope profile, built once by Profile::load().
//
// Layout (Tracy-style): per rank, GPU activities live in one vector grouped by stream and sorted by start
// time within each stream; a GpuStream names its slice of that vector. CPU ranges are grouped by track (pid,
// tid) and sorted by start. Names are StringIds into the profile's string table. Nothing here is mutated
// after load, so analyses and the GUI may read it from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.hpp"

namespace meshscope {

namespace sql {
class Database;
}

// Packed: there may be tens of millions of these.
struct Activity {
  TimeNs start_ns;
  TimeNs end_ns;
  std::int64_t id;           // activities.id
  std::int64_t correlation;  // kNull when absent
  StringId name;
  std::int32_t collective;  // index into Rank::collectives, -1 when the activity is not a known collective
  std::uint32_t
      detail;  // index into Rank::kernels (kernels) or Rank::copies (memcpy/memset); kNoDetail if none
  ActivityKind kind;
  std::uint8_t pad_[3];
  TimeNs duration() const { return end_ns - start_ns; }
};
static_assert(sizeof(Activity) == 48, "Activity is packed deliberately: one more byte costs megabytes");
inline constexpr std::uint32_t kNoDetail = 0xffffffffu;

// A kernel's launch configuration. Kernels launched alike share one (Rank::kernels holds each distinct one).
struct KernelDetail {
  std::int32_t grid[3];
  std::int32_t block[3];
  std::int32_t registers;
  std::int32_t shared_bytes;
  std::int64_t graph_id;  // kNull when not graph-launched
  bool operator==(const KernelDetail&) const = default;
};

struct CopyDetail {
  std::int64_t bytes;
  StringId copy_kind;
};

struct GpuStream {
  std::int32_t device;
  std::int64_t stream;
  std::string name;
  std::uint32_t first;  // index of the first activity of this stream in Rank::activities
  std::uint32_t count;  // number of activities
};

// Laid out widest first (no padding): a large job holds a million of them.
struct Collective {
  std::int64_t id;
  std::int64_t activity_id;  // kNull when no kernel was seen
  std::int64_t seq;          // kNull when absent
  std::int64_t in_nelems, out_nelems;
  std::int64_t in_bytes, out_bytes;
  std::int64_t group_size;
  std::int64_t channels;
  TimeNs start_ns, end_ns;
  std::int32_t stream_index;  // index into Rank::streams of the kernel, -1 if none
  std::uint32_t activity;     // index into Rank::activities of the kernel (valid when stream_index >= 0)
  StringId communicator;
  StringId pg_desc;
  StringId pg_ranks;
  StringId op;
  StringId dtype;
  StringId algorithm, protocol;
  StringId source;  // collectives.source: who recorded it ("kernel_name": an importer, from the name alone)
  bool metadata;    // the row holds metadata (source is not "kernel_name")
};
static_assert(sizeof(Collective) == 136, "Collective is laid out deliberately: see above");

// A thread that made CUDA API calls (Rank::call_threads): calls name it by index, not by (pid, tid).
struct CallThread {
  std::int64_t pid, tid;
  friend auto operator<=>(const CallThread&, const CallThread&) = default;
};

struct ApiCall {
  TimeNs start_ns, end_ns;
  std::int64_t correlation;
  std::int64_t external_id;
  StringId name;
  std::uint32_t thread;  // index into Rank::call_threads
  ApiKind kind;
};
static_assert(sizeof(ApiCall) == 48, "ApiCall is packed deliberately: a rank makes millions of calls");

// A range's parent (ranges.parent_id) is not held: it is the range of depth - 1 that encloses it on its track
// (the writer nests them so: profiler/writer/range_nesting.hpp), found when asked for (parent_range()).
struct CpuRange {
  TimeNs start_ns, end_ns;
  std::int64_t id;
  std::int64_t external_id;  // kNull when absent
  StringId name;
  StringId category;
  std::int32_t depth;
  RangeKind kind;  // a kStep range's step number is its Step's (Rank::steps, by range_id)
};
static_assert(sizeof(CpuRange) == 48, "CpuRange is packed deliberately: most events are CPU ranges");

struct CpuTrack {
  std::int64_t pid, tid;
  std::string name;
  bool gpu;             // true for gpu_annotation tracks (pid = device, tid = stream)
  std::uint32_t first;  // index of the first range in Rank::ranges
  std::uint32_t count;
  std::int32_t max_depth;
};

struct Step {
  std::int64_t number;  // N of ProfilerStep#N (or the NVTX step index)
  TimeNs start_ns, end_ns;
  std::int64_t pid, tid;
  std::int64_t range_id;
  std::string source;  // "ProfilerStep" or "nvtx"
};

struct Flow {
  StringId category;
  std::int64_t flow_id;
  TimeNs src_ns;
  std::int64_t src_pid, src_tid;
  TimeNs dst_ns;  // kNull when the source had no end
  std::int64_t dst_pid, dst_tid;
};

struct Diagnostic {
  std::string severity, message;
};

// What the operating system recorded of a CPU thread (thread_activity): the intervals it ran on a core, and
// samples of its call stack.
struct OnCpu {
  TimeNs start_ns, end_ns;
  std::int32_t cpu;  // the core, -1 when unknown
};
struct CpuSample {
  TimeNs time_ns;
  StringId stack;  // innermost frame first, one per line (kNoString: no stack recorded)
  std::int32_t cpu;
};
struct OsThread {
  std::int64_t pid, tid;
  std::string name;
  std::uint32_t first_on_cpu = 0, on_cpu_count = 0;  // into Rank::on_cpu
  std::uint32_t first_sample = 0, sample_count = 0;  // into Rank::cpu_samples
};

struct Device {
  std::int32_t device;
  std::string name;
  std::int64_t total_memory_bytes;
  std::int64_t compute_major, compute_minor, sm_count;
};

struct ProcessGroup {
  std::string name, desc, backend;
  std::int64_t group_size;
  std::vector<std::int32_t> ranks;
};

struct Rank {
  std::int32_t rank = 0;
  std::int64_t world_size = kNull;
  std::string hostname, source_file, rank_source, backend, comm_version;
  std::int64_t pid = kNull;
  std::int64_t clock_base_ns = 0, clock_offset_ns = 0;
  TimeNs first_ns = 0, last_ns = 0;  // over every event of the rank
  // False when only the rank's description was read (LoadOptions::events off, or a profile composed by
  // with_ranks() before its events were loaded): its event lists are empty whatever it recorded.
  bool events_loaded = true;

  std::vector<Device> devices;
  std::vector<ProcessGroup> process_groups;
  std::vector<GpuStream> streams;        // sorted by (device, stream)
  std::vector<Activity> activities;      // grouped by stream (in streams order), time-sorted within
  std::vector<KernelDetail> kernels;     // Activity::detail for kernels (each distinct configuration once)
  std::vector<CopyDetail> copies;        // Activity::detail for memcpy/memset
  std::vector<Collective> collectives;   // sorted by start
  std::vector<ApiCall> api_calls;        // sorted by start
  std::vector<CallThread> call_threads;  // the threads of api_calls, sorted by (pid, tid)
  std::vector<CpuTrack> tracks;          // CPU threads first (by pid, tid), then GPU annotation tracks
  std::vector<CpuRange> ranges;          // grouped by track, sorted by (start, depth) within
  std::vector<Step> steps;               // sorted by start
  std::vector<Flow> flows;               // flows not implied by correlation ids (e.g. fwdbwd)
  std::vector<OsThread> os_threads;      // threads with scheduling or samples, by (pid, tid)
  std::vector<OnCpu> on_cpu;             // grouped by thread (os_threads order), by start within
  std::vector<CpuSample> cpu_samples;    // grouped by thread, by time within
  std::vector<Diagnostic> diagnostics;   // what the importer or collector reported about this rank

  std::span<const Activity> stream_activities(std::size_t stream_index) const {
    const auto& s = streams[stream_index];
    return {activities.data() + s.first, s.count};
  }
  std::span<const CpuRange> track_ranges(std::size_t track_index) const {
    const auto& t = tracks[track_index];
    return {ranges.data() + t.first, t.count};
  }
  std::span<const OnCpu> thread_on_cpu(std::size_t os_thread) const {
    const auto& t = os_threads[os_thread];
    return {on_cpu.data() + t.first_on_cpu, t.on_cpu_count};
  }
  std::span<const CpuSample> thread_samples(std::size_t os_thread) const {
    const auto& t = os_threads[os_thread];
    return {cpu_samples.data() + t.first_sample, t.sample_count};
  }
  // The index in os_threads of (PID, TID), -1 when the thread has no scheduling or samples.
  std::int64_t os_thread_of(std::int64_t pid, std::int64_t tid) const;
  // The index in ranges of the range enclosing ranges[INDEX] one level up on its track, -1 at depth 0 (or
  // when none encloses it).
  std::int64_t parent_range(std::uint32_t index) const;
  const CallThread& thread_of(const ApiCall& call) const { return call_threads[call.thread]; }
  // GPU activity span: first start and last end over all streams (0,0 when the rank has no GPU activity).
  TimeNs gpu_first_ns = 0, gpu_last_ns = 0;
};

struct EventCounts {
  std::int64_t kernel = 0, memcpy = 0, memset = 0, sync = 0;
  std::int64_t runtime = 0, driver = 0;
  std::int64_t cpu_op = 0, annotation = 0, python_function = 0, step = 0, gpu_annotation = 0, nvtx = 0,
               other = 0, os_runtime = 0;
  std::int64_t on_cpu = 0, cpu_sample = 0;
  std::int64_t collective = 0, flow = 0;
  EventCounts& operator+=(const EventCounts& other);
};

// RANK without its event lists (activities and their details, API calls and their threads, CPU ranges,
// flows): its description, streams, tracks, steps and collectives stay. Streams and tracks keep their counts
// (what devices_used() and the report read) but their spans, like a collective's activity index, point into
// lists it no longer holds: stream_activities() and track_ranges() must not be called on it. What `report`
// keeps of each rank it streams through its analysis.
Rank without_event_lists(const Rank& rank);

// The events RANK holds, by kind (what it has loaded: CPU operators skipped by LoadOptions are not counted).
EventCounts count_events(const Rank& rank);

// The memory a loaded rank's events hold (vector capacities × element sizes, and the heap text of its
// collectives' sources and of its streams' and tracks' names), and how many events that is: what
// docs/PERFORMANCE.md's bytes per event are measured with (tests/bench/bench_profile_memory.cpp).
struct EventMemory {
  std::size_t activities = 0, kernel_details = 0, copy_details = 0, api_calls = 0, ranges = 0,
              collectives = 0, flows = 0, other = 0;  // other: streams, tracks, steps
  std::size_t events = 0;  // activities + API calls + ranges + collectives + flows loaded
  std::size_t total() const {
    return activities + kernel_details + copy_details + api_calls + ranges + collectives + flows + other;
  }
  EventMemory& operator+=(const EventMemory& o);
};
EventMemory event_memory(const Rank& rank);

struct LoadOptions {
  // Load CPU operators and Python functions (usually most of the CPU ranges). Analyses that need only steps,
  // annotations and NVTX ranges turn this off to load large profiles faster; counts() still counts them.
  bool cpu_operators = true;
  // Load each kernel's launch configuration (grid, block, registers, shared memory, graph): the timeline's
  // details show it; the measured analysis never reads it, so commands that only analyse skip it.
  bool kernel_details = true;
  // Load the links between CPU ranges and calls (ranges' external_id and category, API calls' external_id):
  // the timeline and the launch analysis follow them; the step and class breakdowns, diff, compare and the
  // workload inference do not (they read NULL then: kNull, kNoString).
  bool links = true;
  // Load the events at all (activities, API calls, CPU ranges, collectives, flows). Off: only the profile's
  // description (meta, strings, ranks, devices, process groups, diagnostics; no streams, tracks or steps),
  // for readers of the summaries (analysis/measure/summary.hpp) such as `info`, which then read kilobytes.
  bool events = true;
  // With cpu_operators off: still load the CPU operators around a process group's call
  // (vocabulary::names_process_group_call), which the measured analysis names collective kernels by; the
  // summary pass loads a rank so and reads its other operators' totals streamed
  // (measure::summarize_in_batches).
  bool process_group_calls = false;
  // With cpu_operators off: how many CPU operators and Python functions the rows read hold, when the caller
  // knows (the summaries' counts, checked against the rows each rank has). The load takes them instead of
  // counting the rows it leaves out, a second walk through most of the ranges table.
  struct OperatorsLeftOut {
    std::int64_t cpu_ops = 0, python_functions = 0;
  };
  std::optional<OperatorsLeftOut> operators_left_out = std::nullopt;
  // Slices each of the three large tables is read in, on as many threads (0: one per hardware thread for a
  // table of a million rows or more, else whole). The result is the same whatever the number: tests and the
  // fuzzer ask for several slices of small profiles.
  std::size_t table_slices = 0;
};

// The ranks of a profile, by rank. Each Rank is held by a shared pointer so that profiles composed from the
// same loaded ranks (the view's lazily loaded ranks, Profile::with_ranks) share their events instead of
// copying them; the list reads like a vector of const Rank.
class RankList {
 public:
  using Ptr = std::shared_ptr<const Rank>;
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Rank;
    using difference_type = std::ptrdiff_t;
    using pointer = const Rank*;
    using reference = const Rank&;
    iterator() = default;
    explicit iterator(const Ptr* at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    reference operator[](difference_type n) const { return *at_[n]; }
    iterator& operator++() { return ++at_, *this; }
    iterator operator++(int) { return iterator(at_++); }
    iterator& operator--() { return --at_, *this; }
    iterator operator--(int) { return iterator(at_--); }
    iterator& operator+=(difference_type n) { return at_ += n, *this; }
    iterator& operator-=(difference_type n) { return at_ -= n, *this; }
    friend iterator operator+(iterator i, difference_type n) { return i += n; }
    friend iterator operator+(difference_type n, iterator i) { return i += n; }
    friend iterator operator-(iterator i, difference_type n) { return i -= n; }
    friend difference_type operator-(iterator a, iterator b) { return a.at_ - b.at_; }
    friend bool operator==(iterator a, iterator b) { return a.at_ == b.at_; }
    friend auto operator<=>(iterator a, iterator b) { return a.at_ <=> b.at_; }

   private:
    const Ptr* at_ = nullptr;
  };
  using const_iterator = iterator;

  RankList() = default;
  explicit RankList(std::vector<Ptr> ranks) : ranks_(std::move(ranks)) {}
  std::size_t size() const { return ranks_.size(); }
  bool empty() const { return ranks_.empty(); }
  const Rank& operator[](std::size_t i) const { return *ranks_[i]; }
  const Rank& at(std::size_t i) const { return *ranks_.at(i); }
  const Rank& front() const { return *ranks_.front(); }
  const Rank& back() const { return *ranks_.back(); }
  iterator begin() const { return iterator(ranks_.data()); }
  iterator end() const { return iterator(ranks_.data() + ranks_.size()); }
  const Ptr& ptr(std::size_t i) const { return ranks_[i]; }

 private:
  std::vector<Ptr> ranks_;
};

// Where one rank's rows lie in the tables of its events: runs of consecutive rowids per table
// (profiler/rank_rows.hpp finds them), so that its events load without reading the tables whole.
enum class EventTable : std::uint8_t { kActivities, kApiCalls, kRanges, kCollectives, kFlows };
inline constexpr int kEventTableCount = 5;
const char* table_name(EventTable table);
struct RowRun {
  std::int64_t first = 0, last = 0;  // rowids, inclusive
  friend bool operator==(const RowRun&, const RowRun&) = default;
};
struct RankRows {
  std::int32_t rank = 0;
  std::array<std::vector<RowRun>, kEventTableCount> runs;  // per EventTable; empty: no rows there
  std::vector<RowRun>& operator[](EventTable t) { return runs[static_cast<std::size_t>(t)]; }
  const std::vector<RowRun>& operator[](EventTable t) const { return runs[static_cast<std::size_t>(t)]; }
};

// The rows of one rank as an importer hands them to a ProfileWriter (collectors/import/record_buffer.hpp),
// with ids of their own: strings by id (STRINGS[id - 1]; 0 is no string), activities and ranges numbered
// from 1 in the order given, ranges nested (their depths given: writer/range_nesting.hpp), collectives in
// the order the writer numbers them (those it writes as they come, then the resolved CPU-side ones).
struct RankRecords {
  RankInfo info;
  std::span<const std::string* const> strings;
  std::span<const ActivityRecord> activities;
  std::span<const ApiCallRecord> api_calls;
  std::span<const RangeRecord> ranges;
  std::span<const std::int32_t> range_depths;  // per range
  std::span<const CollectiveRecord> collectives, resolved_collectives;
  std::span<const FlowRecord> flows;
  std::span<const DeviceInfo> devices;
  std::span<const ProcessGroupInfo> process_groups;
  std::span<const StreamInfo> streams;
  std::span<const ThreadInfo> threads;
};

// A CPU operator or Python function as Profile::stream_operators reads it.
struct OperatorRow {
  std::int64_t pid = 0, tid = 0;
  TimeNs start_ns = 0, end_ns = 0;
  StringId name = kNoString;
  RangeKind kind = RangeKind::kCpuOp;
};
// Where Profile::stream_operators hands the rows.
class OperatorSink {
 public:
  virtual ~OperatorSink() = default;
  // The next operator of its thread (pid, tid), in the order a load sorts a thread's ranges (start, then
  // depth, then rowid); threads take turns in any order.
  virtual void add(const OperatorRow& row) = 0;
  // What was given so far is void: every operator comes again (some thread's rows were not stored in order).
  virtual void restart() = 0;
};

class Profile;
struct Description;  // profile.cpp: what every load reads besides the events
namespace load {
struct ProfileSource;  // profile_load.hpp: a file, or the bytes of one in memory
}
// What Profile::load_ranks gives: the ranks with their events, and the profile's strings (a new list when
// the ranks' collectives named a source the profile had not seen, else the profile's own).
struct LoadedRanks {
  std::vector<std::shared_ptr<const Rank>> ranks;  // in the order asked
  std::shared_ptr<const std::vector<std::string>> strings;
  EventCounts counts;  // of these ranks, as load() counts them (CPU operators left out counted too)
};

class Profile {
 public:
  // Loads the profile into memory (the large tables on parallel connections). Throws meshscope::Error naming
  // the file for anything that is not a readable meshscope profile. A profile of another schema_version loads
  // what it can; schema_version() tells.
  static Profile load(const std::filesystem::path& path, const LoadOptions& options = {});
  // The same load of a profile held in memory as the bytes of its file (IMAGE, read through SQLite's
  // deserialize on each connection, never written; no file is opened, and the tables are read one after
  // the other on the calling thread): what the fuzzers read their inputs with. DISPLAY names it in errors
  // and is its path(); nothing more can be read from it later (load_ranks, stream_operators need the file).
  static Profile load_image(std::span<const unsigned char> image, const std::filesystem::path& display,
                            const LoadOptions& options = {});

  // The events of the ranks WHICH names, read only from their rows' runs, each rank as load() would give it
  // with BASE's description of it (BASE: this file loaded before, usually without its events). Tables are
  // read on parallel connections as in load(). Throws meshscope::Error naming the file, as load() does; a
  // rank BASE does not hold is refused.
  static LoadedRanks load_ranks(const Profile& base, std::span<const RankRows> which,
                                const LoadOptions& options = {});
  // The CPU operators and Python functions of ROWS' rank, read from this profile's file without holding
  // them (values checked as load() checks them): for a rank too large to hold with its operators (the
  // summary pass, measure::summarize_in_batches). Rows are read in rowid order while every thread's come in
  // load order, else SINK restarts and they come sorted by SQLite (its sorter spills to temporary files).
  void stream_operators(const RankRows& rows, OperatorSink& sink) const;
  // This profile with RANKS in place of its ranks of the same numbers (sharing their events), and STRINGS in
  // place of its strings when given (load_ranks' list). Counts are those of the ranks it then holds, or
  // COUNTS when given (a profile whose ranks were read in parts and then thinned: what the parts counted).
  Profile with_ranks(std::span<const std::shared_ptr<const Rank>> ranks,
                     std::shared_ptr<const std::vector<std::string>> strings = nullptr,
                     const EventCounts* counts = nullptr) const;
  // This profile's description with RANKS as its whole list of ranks (sorted by number here; numbers it did
  // not hold allowed): a run drawn from this one with other ranks (a what-if's pipeline stages).
  Profile with_rank_list(std::vector<std::shared_ptr<const Rank>> ranks,
                         std::shared_ptr<const std::vector<std::string>> strings = nullptr) const;
  const std::shared_ptr<const std::vector<std::string>>& strings() const { return strings_; }

  // A profile of the one rank RECORDS holds, as load() with OPTIONS would read it once a writer had written
  // those rows (and nothing else) to a file, without the file: the ids are the records' own, the strings
  // theirs (then the collectives' sources). PATH names it. For the import's summaries, computed from the
  // rows it has just read (analysis/measure/summary.hpp). Throws meshscope::Error for rows a load would
  // refuse (a process group's member list that names no ranks, a range end before its start).
  static Profile of_records(const std::filesystem::path& path, const RankRecords& records,
                            const LoadOptions& options = {});

  // True when PATH is meant to be a meshscope profile, even a damaged one: a regular file named *.msdb, or an
  // SQLite file whose schema names both meta and activities. Callers that would otherwise try an unloadable
  // file as another tool's trace report Profile::load's error instead. Never throws; reads no more than the
  // schema.
  static bool looks_like_profile(const std::filesystem::path& path) noexcept;

  const std::string& str(StringId id) const;  // "" for kNoString or unknown ids

  const RankList& ranks() const { return ranks_; }
  const Rank* find_rank(std::int32_t rank) const;
  // The index of RANK in ranks(), -1 when the profile does not hold it.
  std::ptrdiff_t rank_index(std::int32_t rank) const;
  int schema_version() const { return schema_version_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  const EventCounts& counts() const { return counts_; }
  const std::filesystem::path& path() const { return path_; }
  const std::vector<Diagnostic>& job_diagnostics() const { return job_diagnostics_; }  // not tied to a rank
  std::int64_t world_size() const;  // the largest world size any rank reported, else the number of ranks
  TimeNs first_ns() const;          // over all ranks
  TimeNs last_ns() const;

 private:
  // A profile with this one's path, schema, metadata and job diagnostics, STRINGS (null: this one's) and no
  // ranks: what with_ranks and with_rank_list start from.
  Profile described(std::shared_ptr<const std::vector<std::string>> strings) const;
  static Profile load_description(sql::Database& db, const std::filesystem::path& path,
                                  std::int64_t string_ids);
  static Profile described(const std::filesystem::path& path, Description& d);
  static Profile load_from(const load::ProfileSource& source, const LoadOptions& options);

  std::filesystem::path path_;
  int schema_version_ = 0;
  std::map<std::string, std::string> meta_;
  std::shared_ptr<const std::vector<std::string>> strings_;  // index = StringId
  RankList ranks_;                                           // sorted by rank
  EventCounts counts_;
  std::vector<Diagnostic> job_diagnostics_;
};

}  // namespace meshscope
