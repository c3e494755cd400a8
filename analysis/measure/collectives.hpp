// Collective communication: statistics per (operation, group size, message size), instances matched across
// ranks with each rank's wait and transfer time, and a straggler ranking.
//
// Bandwidth follows nccl-tests (doc/PERFORMANCE.md there): algbw = bytes / time, busbw = algbw × factor with
// factor 2(n−1)/n for all-reduce; (n−1)/n for all-gather, reduce-scatter and all-to-all; 1 for broadcast,
// reduce, send/recv. "bytes" is nccl-tests' size: the larger of the input and output message (the full
// buffer).
//
// Identity: an operation's name comes from collective metadata when the trace has it; otherwise from the CPU
// call that launched its kernel (PyTorch's nccl:all_to_all, c10d::alltoall_base_ around the launch), because
// kernel names are often generic (NCCL runs all-to-all as ncclKernel_SendRecv, RCCL everything as
// ncclDevKernel_Generic); only then from the kernel's name. Sizes and group sizes come from metadata only.
//
// Matching: with a communicator, an instance is (communicator, member ranks, sequence number) when every rank
// recorded sequence numbers for that communicator, else the order of operations within it. Without one (a
// trace whose only record is the kernel), each rank's operations of the same kind on the same stream are
// matched in order, and a pair counts only when the two ends agree (max(50 µs, 10 % of the shorter
// duration)): every member of a collective finishes at about the same time, whoever arrived first. A member's
// wait is the time it sat in the operation before the last peer arrived (start of the latest-starting
// member), its transfer the rest of its duration. Point-to-point operations are not matched: nothing names
// the peer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

// Where an operation's name came from.
enum class OpSource : std::uint8_t {
  kMetadata = 0,    // collective records of the trace (Kineto collective args, NCCL plugin, NCCL NVTX ranges)
  kCpuOp = 1,       // the CPU call that launched the kernel (nccl:*, c10d::*)
  kKernelName = 2,  // the kernel's name only
};
const char* to_string(OpSource s);

struct CollectiveStats {
  std::string op;               // normalised (allreduce, allgather, ...); "unknown" when nothing says
  std::int64_t group_size = 0;  // 0 when unknown
  std::int64_t bytes = 0;       // 0 when unknown
  std::int64_t count = 0;       // operations, over all ranks
  TimeNs total_ns = 0, mean_ns = 0, p50_ns = 0, p95_ns = 0, max_ns = 0;
  double algbw_gbps = 0;      // bytes / mean time, GB/s (1e9); NaN when bytes or time are unknown
  double busbw_gbps = 0;      // algbw × nccl-tests factor; NaN when unknown
  bool from_metadata = true;  // op, sizes and group from collective metadata (op_source == kMetadata)
  OpSource op_source = OpSource::kMetadata;
};

// What the analysis knows about one collectives row (Rank::collectives), from every source.
struct CollectiveIdentity {
  std::string op;  // resolved as above; "unknown" when nothing says
  OpSource op_source = OpSource::kMetadata;
  std::int64_t group_size = 0;  // from metadata; 0 when unknown
  std::int64_t bytes = 0;       // from metadata; 0 when unknown
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
  StringId communicator = kNoString;  // kNoString when matched without metadata
  StringId op = kNoString;            // the first member's op as recorded
  std::string op_name;                // resolved (CollectiveIdentity::op)
  std::int64_t key = 0;               // the sequence number, or the ordinal within the communicator / stream
  bool by_seq = false;                // matched by sequence number (true) or by order (false)
  bool by_end_time = false;           // matched without metadata: order on the stream, checked by end times
  std::int64_t expected = 0;          // group size the metadata states (0 when unknown)
  std::uint32_t first_member = 0;     // into CollectiveReport::members
  std::uint32_t member_count = 0;
  TimeNs first_arrival_ns = 0, last_arrival_ns = 0;
  TimeNs skew_ns = 0;           // last − first arrival
  std::int32_t last_rank = -1;  // global rank that arrived last (-1 with fewer than two members)
  bool complete = false;        // every peer is in the profile (group size known, or the whole job loaded)
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
  std::vector<std::vector<CollectiveIdentity>> identity;  // per rank (Profile::ranks() order), per collective
  std::int64_t matched = 0;                               // complete instances with two or more members
  std::int64_t matched_by_end_time = 0;                   // of those, matched without metadata
  std::int64_t incomplete = 0;     // instances with peers missing (or possibly missing) from the profile
  std::int64_t unmatched_ops = 0;  // operations that cannot be matched (point-to-point, no stream)
  std::int64_t solo_ops = 0;       // operations of a group of one rank (metadata says so, or a one-rank job)
  std::int64_t unpaired_ops = 0;   // operations matched by order whose end time no peer's agreed with
  TimeNs mean_skew_ns = 0;         // over complete instances
  // Communication kernels without metadata whose launch call is in the profile but no collective CPU op
  // surrounds it (every such kernel when the profile was loaded without CPU operators: load them and analyse
  // again to name their operations).
  std::int64_t launches_without_op = 0;
};

// nccl-tests bus-bandwidth factor for OP among N ranks: 2(n−1)/n for all-reduce, (n−1)/n for all-gather,
// reduce-scatter and all-to-all (0 for a group of one: nothing crosses a bus), 1 for other ops and when N is
// unknown (n < 1). The statistics leave busbw unknown when N is unknown for the ops whose factor depends on
// it.
double busbw_factor(std::string_view op, std::int64_t n);
// Sets S's algbw and busbw from its bytes, count, total time, op and group size (NaN where unknown).
void set_bandwidth(CollectiveStats& s);

// A communication kernel that has no collective row (recognised by its name only).
struct NameOnlyComm {
  StringId name;
  TimeNs duration_ns;
  std::string cpu_op;  // normalised op of the CPU call that launched it, "" when none says
};

// Message size of a collective record as nccl-tests counts it (the larger buffer), in bytes; 0 when unknown.
std::int64_t message_bytes(const Profile& profile, const Collective& c);

// The collectives row holds metadata (false for rows an importer made from the kernel's name alone).
bool has_metadata(const Collective& c);

// The identity (op, group size, bytes, where the op came from) of each of RANK's collectives; CPU_OPS as for
// analyze_collectives (this rank's list). What CollectiveReport::identity holds for the rank.
std::vector<CollectiveIdentity> identify_collectives(const Profile& profile, const Rank& rank,
                                                     const std::vector<std::string>& cpu_ops);

// Statistics and cross-rank matching over every rank's Rank::collectives. Per rank (same order as
// Profile::ranks()): CPU_OPS holds, per collective, the normalised op of the CPU call that launched its
// kernel ("" when none); NAME_ONLY_COMM the communication kernels without a collectives row, which enter the
// statistics but are not matched.
CollectiveReport analyze_collectives(const Profile& profile,
                                     const std::vector<std::vector<std::string>>& cpu_ops,
                                     const std::vector<std::vector<NameOnlyComm>>& name_only_comm);

}  // namespace meshscope::measure
