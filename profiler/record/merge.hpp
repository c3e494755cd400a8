// Merging the per-rank profiles that the collectors wrote (DIR/rank<R>.<collector>.<pid>.msdb, and the
// journaled temporary files that killed processes left) into one job profile, with every host's clock
// aligned.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace meshscope::record {

// The per-rank profiles in DIR, in name order: committed ones (rank*.msdb) and, for processes that were
// killed before committing, their temporary files (.rank*.msdb.tmp-*). OUTPUT (the job profile) is left out.
std::vector<std::filesystem::path> find_rank_files(const std::filesystem::path& dir,
                                                   const std::filesystem::path& output = {});

// One collective's end as one rank saw it, on that rank's own clock.
struct CollectiveEnd {
  std::string node;  // the clock it was measured with (the host name; ranks of one host share a clock)
  std::string communicator;  // with seq: one collective instance on every rank
  std::int64_t seq = 0;
  std::int64_t end_ns = 0;
};

struct ClockAlignment {
  std::map<std::string, std::int64_t>
      offset_ns;                                // node -> offset to add to its times (the reference node: 0)
  std::map<std::string, std::int64_t> matches;  // node -> collective instances the offset was estimated from
  std::string reference;                        // the node the others are aligned to
  std::vector<std::string> unaligned;           // nodes sharing no collective with the others (offset 0)
};

// Collectives end within microseconds of each other on every rank that takes part, so the end times of one
// instance (communicator, seq) seen on two clocks give their offset. Every node is linked to the first node
// of each instance it took part in; the median difference over an edge is that edge's offset, and offsets are
// propagated from the reference (the first node in name order, usually the host of rank 0) along a
// breadth-first tree.
ClockAlignment align_clocks(const std::vector<CollectiveEnd>& ends, const std::string& reference = {});

struct MergeOptions {
  bool align_clocks = true;
};

struct MergedRank {
  std::int32_t rank = 0;
  std::string node;
  std::vector<std::filesystem::path> files;
  std::int64_t clock_offset_ns = 0;
  bool recovered = false;  // at least one file was left by a process that did not finish
};

struct MergeResult {
  std::vector<MergedRank> ranks;
  std::vector<std::string> notes;
  std::uint64_t activities = 0, collectives = 0, linked_collectives = 0;
  // Plugin operations timed only by their enqueue call that were given their NCCL kernel's GPU times.
  std::uint64_t kernel_timed_collectives = 0;
  std::uint64_t skipped_rows = 0;  // rows of damaged files: a kind or time out of range (noted)
};

// Writes the job profile OUTPUT from FILES. Throws meshscope::Error when no file is a readable profile.
MergeResult merge_rank_profiles(const std::vector<std::filesystem::path>& files,
                                const std::filesystem::path& output, const MergeOptions& options = {});

}  // namespace meshscope::record
