// The critical path of each step on each rank: the chain of CPU work, CUDA calls, launch delays, GPU
// kernels, copies, synchronisations and cross-rank waits that sets when the step ends.
//
// It is found by walking back from the step's end (docs/ANALYSIS.md, "Critical path"): start at whatever ends
// last (the step's last GPU activity, or the CPU thread of the step range when the CPU ends later) and, at
// each element, move to the dependency that was satisfied last, which is the one it waited for:
//   * a GPU activity waited for the previous activity on its stream (the gap is queueing on the GPU), for
//     its launch call on the CPU (the gap is launch delay; only when the stream had run dry), or for work on
//     another stream of its device that ended just before it started (an event wait);
//   * a communication kernel of a matched collective waited, at its start, for the last peer to arrive: that
//     part is a cross-rank wait, attributed to the rank that came last;
//   * a CPU thread between two CUDA calls was doing host work; inside a synchronising call (cudaStream/
//     Device/EventSynchronize, a blocking cudaMemcpy) it waited for the GPU work that ended last before the
//     call returned; a CPU thread that sat idle while another thread of the rank issued calls waited for it.
// Segments tile the step's window [CPU start of the step, max(CPU end, end of the GPU work it launched)]
// exactly, so the lengths by kind add up to the step's length. Without correlation ids (no CPU launch
// links) the path follows GPU streams only and says so.
//
// Holistic Trace Analysis builds the whole graph of CPU op and kernel begin/end nodes and runs a longest-path
// search (networkx); walking back from the end along the last-satisfied dependency finds the same chain in
// time linear in the path's length, needs no graph in memory, and adds the cross-rank waits HTA's
// single-rank analysis does not have.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

enum class PathKind : std::uint8_t {
  kCpu = 0,             // host work on a CPU thread between CUDA calls (Python, framework, operators)
  kRuntime = 1,         // inside CUDA/HIP runtime or driver calls (launches, copies, event records)
  kLaunchDelay = 2,     // from the launch call to the start of its kernel on a stream that had run dry
  kCompute = 3,         // compute kernels
  kComm = 4,            // communication kernels (the transfer part of collectives)
  kMemory = 5,          // memcpy / memset
  kCollectiveWait = 6,  // inside a collective before the last peer arrived (cross-rank wait)
  kSync = 7,            // a CPU thread in a synchronising call after the GPU work it waited for ended
  kQueue = 8,           // gap between consecutive activities of a stream, the next already launched
  kStreamWait = 9,      // waiting for work on another stream (event dependency)
  kOther = 10,          // before the earliest element the walk could explain
};
inline constexpr int kPathKindCount = 11;
const char* to_string(PathKind kind);

struct PathSegment {
  TimeNs start_ns = 0, end_ns = 0;
  PathKind kind = PathKind::kOther;
  enum class Ref : std::uint8_t { kNone, kActivity, kApiCall, kRange };
  Ref ref = Ref::kNone;
  std::uint32_t index = 0;      // into Rank::activities, Rank::api_calls or Rank::ranges (per ref)
  std::int32_t peer_rank = -1;  // kCollectiveWait: the global rank that arrived last
};

// Time on the path under one name: a kernel, a CUDA call, a CPU operator (the innermost range open on the
// thread), or for waits the kernel that waited.
struct PathContributor {
  PathKind kind = PathKind::kOther;
  StringId name = kNoString;
  std::int32_t peer_rank = -1;
  TimeNs ns = 0;
  std::int64_t segments = 0;
};

struct StepPath {
  std::int64_t step = 0;            // step number (-1: the rank's whole profile, when it has no steps)
  TimeNs start_ns = 0, end_ns = 0;  // the window the path tiles
  std::array<TimeNs, kPathKindCount> by_kind{};
  std::vector<PathContributor> top;   // by time, at most CriticalPathOptions::top
  std::vector<PathSegment> segments;  // in time order (only with CriticalPathOptions::keep_segments)
  std::int64_t segment_count = 0;
  TimeNs length_ns() const { return end_ns - start_ns; }
};

struct RankPaths {
  std::int32_t rank = 0;
  std::size_t rank_index = 0;
  bool per_stream = false;  // no CPU launch links: GPU streams only
  std::vector<StepPath> steps;
  std::array<TimeNs, kPathKindCount> by_kind{};  // Σ over steps
  std::vector<PathContributor> top;              // over all steps
};

struct CriticalPathOptions {
  bool keep_segments = true;  // keep every segment (the timeline draws them); off: totals only
  std::size_t top = 10;       // contributors kept per step and per rank
  unsigned threads = 0;       // ranks in parallel; 0 = hardware threads
  // A gap before a GPU activity longer than this, with its stream and launch ready earlier, is looked up as
  // a wait on another stream.
  TimeNs stream_wait_min_ns = 5'000;
  // A CPU thread idle this long between its CUDA calls while another thread of the rank issued calls is
  // taken to have waited for that thread.
  TimeNs thread_wait_min_ns = 50'000;
  // Per rank index, the ranks to follow (empty: every rank); the others get an empty RankPaths and no note
  // (the view's ranks whose events are not loaded).
  std::vector<std::uint8_t> ranks;
};

struct CriticalPaths {
  std::vector<RankPaths> ranks;                  // Profile::ranks() order
  std::array<TimeNs, kPathKindCount> by_kind{};  // Σ over ranks and steps
  std::vector<PathContributor> top;              // over the whole profile
  std::vector<std::string> notes;
};

// ANALYSIS must be measure::analyze(PROFILE) (its steps, classes and collective instances are used).
CriticalPaths critical_paths(const Profile& profile, const Analysis& analysis,
                             const CriticalPathOptions& options = {});

}  // namespace meshscope::measure
