// Per-rank summaries of the measured analysis (issue #17 item 1): what `info`, `diff` and the GUI's rank ×
// time overview need, computed once when a profile is created (import, record's merge, `meshscope summarize`)
// and stored in the profile's summary_* tables (profiler/schema.sql, docs/PROFILE.md "Summaries"), so that
// those readers load kilobytes instead of the events.
//
// Every figure is the measured analysis' own (measure::analyze): the rank's and each step's breakdown, each
// stream's idle time, and per activity name, CPU operator and collective (operation, group, message size) the
// counts and times that diff compares. A profile written before the tables existed is summarised on the fly
// from its events (the same function), so readers never depend on the tables being there.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

// One activity name of one class on one rank.
struct KernelSummary {
  std::string name;
  ActivityClass cls = ActivityClass::kCompute;
  std::int64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs step_ns = 0;  // of those launched inside a step (all of them when the rank has no steps)
  TimeNs min_ns = 0, max_ns = 0;
};

// One CPU operator name on one rank: inclusive time and self time (without the CPU operators nested in it).
struct OpSummary {
  std::string name;
  std::int64_t count = 0;
  TimeNs total_ns = 0, self_ns = 0;
  TimeNs step_ns = 0, self_step_ns = 0;  // of those starting inside a step (all without steps)
};

// One collective operation of one group and message size on one rank. Communication kernels without a
// collectives row are counted under the operation their name spells, with group size and bytes 0.
struct CollectiveSummary {
  std::string op;
  std::int64_t group_size = 0, bytes = 0;  // 0 when unknown
  std::int64_t count = 0;
  TimeNs total_ns = 0, step_ns = 0;
};

struct StepSummary {
  std::int64_t number = 0;
  TimeNs cpu_start_ns = 0, cpu_end_ns = 0;
  Breakdown gpu;
};

struct StreamSummary {
  std::int32_t device = 0;
  std::int64_t stream = 0;
  StreamIdle idle;  // stream_index is the position in RankSummary::streams
};

// The rank's GPU time in buckets of 2^bucket_log2 ns aligned to multiples of that width on the profile clock,
// so that ranks bucketed at different widths combine exactly (coarsen the finer ones). Each bucket holds
// |∪ class ∩ bucket| per class; idle = bucket ∩ [rank start, rank end) − busy.
struct OverviewBucket {
  TimeNs compute_ns = 0, comm_ns = 0, exposed_comm_ns = 0, memory_only_ns = 0, busy_ns = 0, span_ns = 0;
  TimeNs idle_ns() const { return span_ns - busy_ns; }
};
struct Overview {
  int bucket_log2 = 0;            // width of a bucket: 2^bucket_log2 ns
  std::int64_t first_bucket = 0;  // bucket index of buckets[0]: it starts at first_bucket << bucket_log2
  std::vector<OverviewBucket> buckets;
  TimeNs bucket_ns() const { return TimeNs{1} << bucket_log2; }
};
// At most this many buckets per rank (one more when the span straddles a bucket boundary).
inline constexpr std::int64_t kOverviewBuckets = 256;

struct RankSummary {
  std::int32_t rank = 0;
  Breakdown total;
  Breakdown outside_steps;
  std::string step_source;
  std::int64_t unlinked_activities = 0;
  TimeNs collective_wait_ns = 0, collective_transfer_ns = 0;
  EventCounts counts;              // this rank's events (CPU operators counted even when not loaded)
  TimeNs kernel_ns = 0;            // Σ duration of all GPU activities
  std::optional<bool> training;    // backward operators recorded; nullopt when the rank has no CPU operators
  std::vector<StepSummary> steps;  // sorted by CPU start
  std::vector<StreamSummary> streams;
  std::vector<KernelSummary> kernels;          // by total time, descending
  std::vector<OpSummary> ops;                  // by total time, descending
  std::vector<CollectiveSummary> collectives;  // by total time, descending
  Overview overview;
};

struct ProfileSummary {
  std::filesystem::path path;
  bool from_tables = false;        // read from the summary tables (else computed from the events)
  std::vector<RankSummary> ranks;  // by rank
  std::int64_t world_size = 0;
};

// The summaries of PROFILE from its ANALYSIS (measure::analyze of it, default options). The profile must be
// loaded with CPU operators for the operator rows and the training flag; counts come from the rank's events.
ProfileSummary summarize(const Profile& profile, const Analysis& analysis);

// Writes SUMMARY into the profile at PATH (replacing any summaries there) in one transaction. The connection
// is hardened as a read-only one is (the file may be a copy of anyone's): nothing the file holds runs.
void write_summary(const std::filesystem::path& path, const ProfileSummary& summary);

// Ranks of more ranges than this are summarised streaming their CPU operators (summarize_in_batches).
inline constexpr std::int64_t kSummaryLargeRankRanges = 2'000'000;

// The summaries of the profile at PATH read a batch of ranks at a time on every core, as `report` streams its
// ranks, instead of loading every event at once (the same summaries; on the 1,024-rank job a fraction of the
// memory, and each batch reuses the pages of the one before). Only for a profile of STREAM_ROWS event rows or
// more whose ranks' rows lie together; nullopt otherwise, and when the ranks read do not hold every row of
// every table (the probed runs missed some): the caller then loads the profile whole. THREADS: lanes (0: one
// per core).
// A rank whose ranges span more than LARGE_RANK_RANGES rows is read alone and without its CPU operators,
// whose totals are streamed from the file instead (Profile::stream_operators: a rank may hold tens of
// millions of identical operators); smaller ranks load them (one read of the table: faster).
std::optional<ProfileSummary> summarize_in_batches(const std::filesystem::path& path,
                                                   std::int64_t stream_rows, unsigned threads = 0,
                                                   std::int64_t large_rank_ranges = kSummaryLargeRankRanges);

// The summaries of the profile at PATH, computed from its events (read-only): in batches of ranks for a
// profile of STREAM_ROWS event rows or more whose ranks' rows lie together, else from the whole profile.
ProfileSummary compute_summaries(const std::filesystem::path& path, std::int64_t stream_rows = 4'000'000);
// Loads the profile at PATH, analyses it and writes its summaries (import, merge, `meshscope summarize`).
// Throws meshscope::Error naming the file on failure; the profile is then unchanged.
// A profile of STREAM_ROWS event rows or more whose ranks' rows lie together is read a batch of ranks at a
// time (the same summaries, in a fraction of the memory); any other is loaded whole.
void add_summaries(const std::filesystem::path& path, std::int64_t stream_rows = 4'000'000);

// The summaries of an import computed while it reads (issue #17): each rank's on the import's reading
// threads from the rows just read (ImportOptions::each_rank_read, Profile::of_records), then, once the
// profile is written, the collectives matched across the ranks (measure::combine on each rank's streams,
// steps and collectives). The
// same tables as add_summaries, without reading the events back from the new file.
class ImportSummaries {
 public:
  ImportSummaries();
  ~ImportSummaries();
  ImportSummaries(const ImportSummaries&) = delete;
  ImportSummaries& operator=(const ImportSummaries&) = delete;

  // For ImportOptions::each_rank_read: summarises the rank of ROWS, read from FILE. Thread-safe; never
  // throws (rows that cannot be summarised here leave their rank to add_summaries).
  void add(const std::filesystem::path& file, const RankRecords& rows) noexcept;

  // Writes the summaries of the profile at PATH, which the import wrote with RANK_FILES (each rank it
  // imported and its source file, ImportSummary::ranks): from the ranks summarised while reading when the
  // profile holds those ranks and no other, each from the file named, else by add_summaries(PATH,
  // STREAM_ROWS). Throws meshscope::Error naming the file, as add_summaries does.
  void write(const std::filesystem::path& path,
             const std::vector<std::pair<std::int32_t, std::string>>& rank_files,
             std::int64_t stream_rows = 4'000'000);
  // The summaries of PATH from the ranks summarised while reading (as write uses them), or nullopt when
  // they do not cover its ranks exactly.
  std::optional<ProfileSummary> combined(const std::filesystem::path& path,
                                         const std::vector<std::pair<std::int32_t, std::string>>& rank_files);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Drops the events of the profile at PATH (every table but its description and the summaries; activities
// stays, empty), leaving a summary part: what `meshscope summarize --summaries-only` writes next to each
// rank's trace. The profile must hold summaries (else every figure would be lost). Compacts the file.
void drop_events(const std::filesystem::path& path);

// Copies into the profile JOB the description (ranks, devices, process groups, streams, threads,
// diagnostics) and the summaries of every rank of PARTS that JOB does not hold yet (summary parts, or whole
// profiles with summaries). Returns the ranks copied. Throws meshscope::Error naming the part that is not a
// profile with summaries, or that repeats a rank another part already gave. JOB is changed in one
// transaction.
std::vector<std::int32_t> merge_summary_parts(const std::vector<std::filesystem::path>& parts,
                                              const std::filesystem::path& job);

// The summaries stored in the profile at PATH, or nullopt when it has none (written before they existed).
// Throws meshscope::Error naming the file when the tables are there but damaged.
// RANKS_ONLY: each rank's totals and event counts, without its steps, streams, kernels, operators,
// collectives and overview (what reading a rank's events checks its rows against).
std::optional<ProfileSummary> read_summary(const std::filesystem::path& path, bool ranks_only = false);

// The whole job's analysis as far as SUMMARY tells it, for views of a profile whose events are not all loaded
// (the view's lazy ranks): per rank of PROFILE (by index) its breakdown, steps, stream idle times and kernels
// (names found among PROFILE's strings), and the collectives' statistics by operation, group and size (count,
// total and mean; percentiles and instance matching need the events and stay 0). Ranks without a summary get
// an empty result. A note says that the figures come from the summaries.
Analysis analysis_of_summary(const Profile& profile, const ProfileSummary& summary);

// The summary of RANK in SUMMARY (nullptr when it has none).
const RankSummary* find_rank(const ProfileSummary& summary, std::int32_t rank);

// devices_used (measure.hpp) for a profile loaded without its events: the devices of the rank's streams in
// its summary (every summarised stream ran work).
std::vector<DeviceUse> devices_used(const Rank& rank, const RankSummary& summary);

}  // namespace meshscope::measure
