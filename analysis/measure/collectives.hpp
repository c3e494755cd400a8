// Collective communication: statistics per (operation, group size, message size), instances matched across
// ranks with each rank's wait and transfer time, and a straggler ranking.
//
// Bandwidth follows nccl-tests (doc/PERFORMANCE.md there): algbw = bytes / time, busbw = algbw × factor with
// factor 2(n−1)/n for all-reduce; (n−1)/n for all-gather, reduce-scatter and all-to-all; 1 for broadcast,
// reduce, send/recv. "bytes" is nccl-tests' size: the larger of the input and output message (the full
// buffer). An instance is matched by (communicator, member ranks, sequence number) when every rank recorded
// sequence numbers for that communicator, else by the order of operations within it (point-to-point
// operations counted apart from collectives). A member's wait is the time it sat in the operation before the
// last peer arrived (start of the latest-starting member), its transfer the rest of its duration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

struct CollectiveStats {
  std::string op;  // normalised (allreduce, allgather, ...); from the kernel name when no metadata
  std::int64_t group_size = 0;  // 0 when unknown
  std::int64_t bytes = 0;       // 0 when unknown
  std::int64_t count = 0;       // operations, over all ranks
  TimeNs total_ns = 0, mean_ns = 0, p50_ns = 0, p95_ns = 0, max_ns = 0;
  double algbw_gbps = 0;      // bytes / mean time, GB/s (1e9); NaN when bytes or time are unknown
  double busbw_gbps = 0;      // algbw × nccl-tests factor; NaN when unknown
  bool from_metadata = true;  // false: recognised by kernel name only (no sizes)
};

// One operation of one rank inside a matched instance.
struct InstanceMember {
  std::size_t rank_index = 0;       // into Profile::ranks()
  std::uint32_t collective = 0;     // into Rank::collectives
  TimeNs start_ns = 0, end_ns = 0;  // arrival and end on the GPU
  TimeNs wait_ns = 0;               // before the last peer arrived (≤ duration)
  TimeNs transfer_ns = 0;           // the rest
};

struct CollectiveInstance {
  StringId communicator = kNoString;
  StringId op = kNoString;
  std::int64_t key = 0;            // the sequence number, or the ordinal within the communicator
  bool by_seq = false;             // matched by sequence number (true) or by order (false)
  std::int64_t expected = 0;       // group size the metadata states (0 when unknown)
  std::uint32_t first_member = 0;  // into CollectiveReport::members
  std::uint32_t member_count = 0;
  TimeNs first_arrival_ns = 0, last_arrival_ns = 0;
  TimeNs skew_ns = 0;           // last − first arrival
  std::int32_t last_rank = -1;  // global rank that arrived last (-1 with fewer than two members)
  bool complete = false;        // every expected peer is in the profile
};

struct StragglerRow {
  std::int32_t rank = 0;
  std::int64_t instances = 0;   // complete instances it took part in
  std::int64_t times_last = 0;  // how often it arrived last
  TimeNs late_ns = 0;           // Σ over those: its arrival − the previous arrival (how late it was)
  TimeNs caused_wait_ns = 0;    // Σ over those: the other members' waits
  TimeNs wait_ns = 0;           // Σ of its own waits (in every complete instance)
};

struct CollectiveReport {
  std::vector<CollectiveStats> stats;         // by total time, descending
  std::vector<CollectiveInstance> instances;  // by first arrival
  std::vector<InstanceMember> members;        // grouped by instance
  std::vector<StragglerRow> stragglers;  // by caused wait, descending (ranks that were never last omitted)
  std::int64_t matched = 0;              // complete instances with two or more members
  std::int64_t incomplete = 0;           // instances with peers missing from the profile
  std::int64_t unmatched_ops = 0;        // operations without a communicator (cannot be matched)
  TimeNs mean_skew_ns = 0;               // over complete instances
};

// nccl-tests bus-bandwidth factor for OP among N ranks (1 when the op is unknown or n < 2).
double busbw_factor(std::string_view op, std::int64_t n);

// A communication kernel that has no collective row (recognised by its name only).
struct NameOnlyComm {
  StringId name;
  TimeNs duration_ns;
};

// Statistics and cross-rank matching over every rank's Rank::collectives. NAME_ONLY_COMM holds, per rank
// (same order as Profile::ranks()), the communication kernels without metadata; they enter the statistics
// (operation from the kernel name, sizes unknown) but cannot be matched across ranks.
// Message size of a collective record as nccl-tests counts it (the larger buffer), in bytes; 0 when unknown.
std::int64_t message_bytes(const Profile& profile, const Collective& c);

CollectiveReport analyze_collectives(const Profile& profile,
                                     const std::vector<std::vector<NameOnlyComm>>& name_only_comm);

}  // namespace meshscope::measure
