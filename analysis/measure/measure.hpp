// Measured analysis of a Profile: where each rank's GPU time goes, per rank and per step, which communication
// is exposed, why streams sit idle, which kernels dominate, and how collectives line up across ranks.
//
// analyze() runs once after loading (the GUI calls it on a worker thread) and returns plain structs that a
// view reads directly: every time is int64 ns on the profile clock; indices point into the Profile's vectors.
// Definitions (docs/ANALYSIS.md, DESIGN.md "Definitions (measured)"), per rank over all its GPU streams:
//   compute = |∪ compute|, comm = |∪ comm|, memory = |∪ memory|, busy = |∪ (compute, comm, memory)|,
//   overlap = |∪comm ∩ ∪compute|, exposed comm = comm − overlap, span = last end − first start of that work,
//   idle = span − busy. Sync records (stream/event waits) are reported apart and count as idle.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/measure/classify.hpp"
#include "analysis/measure/collectives.hpp"
#include "analysis/measure/intervals.hpp"
#include "profiler/profile.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope::measure {

struct Options {
  std::vector<ClassRule> user_rules;  // tried before default_rules()
  // A gap on a stream shorter than this, with the next kernel already launched, is launch overhead between
  // back-to-back kernels ("kernel gap"); longer ones are "other" (HTA's consecutive_kernel_delay, 30 µs).
  TimeNs kernel_gap_threshold_ns = 30'000;
  std::size_t top_kernels = 10;  // per class, in Analysis::top_kernels
  unsigned threads = 0;          // worker threads for the per-rank pass; 0 = min(hardware, ranks)
  // Reproduce Holistic Trace Analysis' figures: times rounded inward to whole µs of the source clock (HTA
  // rounds float timestamps that way), GPU work kept only if its launch is in the trace at or before the end
  // of the last ProfilerStep (when a rank has two or more), and sync records counted as compute. Off by
  // default.
  bool hta_compatible = false;
};

struct StepResult {
  std::int64_t number = 0;  // ProfilerStep#N -> N (NVTX: the number in the name, else the ordinal)
  TimeNs cpu_start_ns = 0, cpu_end_ns = 0;  // the CPU range that defines the step
  Breakdown gpu;  // the GPU work launched from inside the step (by correlation id), over its own GPU window
};

struct KernelStat {
  StringId name = kNoString;
  ActivityClass cls = ActivityClass::kCompute;
  Evidence evidence =
      Evidence::kDefault;  // what classified it (collective metadata, when any activity had it)
  std::int32_t rule = -1;  // index into Analysis::rules when evidence is kRule
  std::int64_t count = 0;
  TimeNs total_ns = 0, min_ns = 0, max_ns = 0;
};

// Why a class holds what it holds: one row per piece of evidence (a name rule, collective metadata, the
// activity kind, no rule), with the time and the largest kernel it classified.
struct ClassReason {
  Evidence evidence = Evidence::kDefault;
  std::int32_t rule = -1;        // index into Analysis::rules when evidence is kRule
  std::int64_t names = 0;        // distinct activity names
  TimeNs total_ns = 0;           // their summed duration over all ranks
  StringId largest = kNoString;  // the name with the most time among them
  TimeNs largest_ns = 0;
};

struct RankResult {
  std::int32_t rank = 0;
  std::size_t rank_index = 0;  // into Profile::ranks()
  Breakdown total;
  std::vector<Interval> exposed_comm;  // where this rank communicates with no compute running (disjoint)
  std::vector<ActivityClass> classes;  // class of each of Rank::activities, same index
  std::string step_source;             // "ProfilerStep", "nvtx: <name pattern>", or "" when the rank has none
  std::vector<StepResult> steps;       // sorted by CPU start
  Breakdown outside_steps;  // work not launched from inside any step (or not linked by correlation)
  std::int64_t unlinked_activities = 0;  // activities whose launch could not be found (no correlation match)
  std::vector<StreamIdle> streams;       // one per Rank::streams entry
  std::vector<KernelStat> kernels;       // every activity name on this rank, by total time, descending
  TimeNs collective_wait_ns = 0;         // sum of this rank's waits in matched collective instances
  TimeNs collective_transfer_ns = 0;     // sum of this rank's transfer time in them
  std::int64_t launches_without_op = 0;  // communication kernels without metadata whose launch call is in the
                                         // profile but no collective CPU op (nccl:*, c10d::*) surrounds it
  bool hta_filtered = false;             // hta_compatible dropped work launched outside the traced steps
  std::int64_t hta_dropped = 0;          // how many activities that dropped
};

struct Analysis {
  std::vector<RankResult> ranks;  // same order as Profile::ranks()
  CollectiveReport collectives;
  std::array<std::vector<KernelStat>, kClassCount> top_kernels;  // whole profile, per ActivityClass
  std::array<std::vector<ClassReason>, kClassCount> reasons;     // per ActivityClass, by total time
  std::vector<ClassRule> rules;  // the rules tried, in order (Classifier::rules(): user rules, then defaults)
  std::vector<std::string> notes;  // plain sentences about what could not be measured and why
};

Analysis analyze(const Profile& profile, const Options& options = {});

// analyze() in two parts, for callers that keep each rank's part and combine different sets of ranks (the
// view's lazily loaded ranks, app/gui/lazy_ranks.hpp): what one rank's events alone give, then what needs the
// ranks together (collective instances and waits, the profile's top kernels and class reasons, the notes).
struct RankPart {
  RankResult result;
  std::vector<NameOnlyComm> name_only;  // for analyze_collectives
  std::vector<std::string> cpu_ops;     // per Rank::collectives: the normalised op of its launching CPU call
};
class RankAnalyzer {
 public:
  explicit RankAnalyzer(const Options& options = {});
  ~RankAnalyzer();
  RankAnalyzer(const RankAnalyzer&) = delete;
  RankAnalyzer& operator=(const RankAnalyzer&) = delete;
  // The part of rank RANK_INDEX of PROFILE. Not thread-safe: one analyzer per thread.
  RankPart analyze(const Profile& profile, std::size_t rank_index);
  const Classifier& classifier() const { return classifier_; }

 private:
  Options options_;
  Classifier classifier_;
  struct Workspace;
  std::unique_ptr<Workspace> ws_;
};
// The analysis of PROFILE from PARTS (one per Profile::ranks(), by index). ANALYSED (empty: every rank) marks
// the ranks whose parts were computed: the others are left out of the collectives and the notes (their
// results stay empty), as if the profile did not hold their events. OPTIONS must be the parts' own.
Analysis combine(const Profile& profile, std::vector<RankPart> parts,
                 const std::vector<std::uint8_t>& analysed = {}, const Options& options = {});

// The GPUs a rank actually ran work on (its streams' devices), ascending, each with what the trace says about
// it (nullptr when the trace does not describe that device). A trace lists every GPU its process could see;
// this is the one (or the few) it used. A trace may describe its GPUs under other ids than its work's (ROCm
// with HIP_VISIBLE_DEVICES=2: work on device 2, properties of device 0): when no described device has the
// work's id and every described device is one GPU model, that model is the device's (DESCRIBED_AS its id).
struct DeviceUse {
  std::int32_t device = 0;
  const Device* info = nullptr;
  std::int32_t described_as = -1;  // the described device taken for it, -1 when the ids match (or none)
};
std::vector<DeviceUse> devices_used(const Rank& rank);
// What RANK's trace describes of DEVICE (as above), into USE.
void describe_device_use(const Rank& rank, DeviceUse& use);

}  // namespace meshscope::measure
