// Collective metadata known on the CPU side only (Kineto record_param_comms, NVTX NCCL ranges), resolved at
// commit to the kernels the CPU range launched: see ProfileWriter::add_cpu_collective.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "profiler/records.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/writer/rank_rewrites.hpp"

namespace meshscope::writer {

struct CpuCollective {
  CollectiveRecord record;
  std::int64_t pid, tid;
  // RECORD is a row to write as it is, already resolved by the importer
  // (ProfileWriter::add_resolved_collective), not a CPU range to resolve.
  bool resolved = false;
};

// Moves the CPU-side collectives of rewritten ranks as apply_rank_rewrites moved the rows they refer to.
void rewrite_ranks(std::span<CpuCollective> collectives, std::span<const RankRewrite> rewrites);

// Every kernel launched (by correlation id) from an API call on the collective's (pid, tid) within its CPU
// range becomes a collective with this metadata and the kernel's GPU times; a kernel whose collective is
// known only by its name takes the metadata instead. A range that launched no kernel keeps its CPU times
// (gloo). New rows go to WRITE with ids from NEXT_ID on, resolved entries as they are, in turn. Index lookups
// per CPU op not resolved already: the cost grows with their number.
void resolve_cpu_collectives(sql::Database& db, std::span<const CpuCollective> collectives,
                             std::int64_t& next_id,
                             const std::function<void(std::int64_t, const CollectiveRecord&)>& write);

}  // namespace meshscope::writer
