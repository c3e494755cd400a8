// Nsight Systems SQLite export importer (`nsys export --type sqlite`).
//
// Export schema 2.x (table EXPORT_META_DATA, Nsight Systems up to 2022.x) and 3.x (META_DATA_EXPORT, 2023.1
// and later) are understood; other versions import whatever tables and columns are recognised, with one
// warning. Columns are looked up by name, so a column that an export lacks reads as absent. See docs/NSYS.md
// for what is imported from which table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/import/import.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope::nsys {

// Claims the rank a process of the export is written under. KEY identifies the process uniquely across the
// job (e.g. "FILE#pid"); WANTED is the rank the export states (MPI rank), or -1 to take the next free rank;
// SOURCE says where the rank came from ("mpi", "nsys-process"). Returns the rank to use; throws Error on a
// duplicate.
using RankClaim =
    std::function<std::int32_t(const std::string& key, std::int64_t wanted, const std::string& source)>;

// True when PATH is an SQLite database with the tables of an Nsight Systems export.
bool is_nsys_export(const std::filesystem::path& path);

// Imports every process (rank) of the export at PATH into WRITER: ranks, devices, streams, threads, kernels,
// memcpy/memset, syncs, runtime/driver API calls, NVTX ranges (nested), NCCL-domain NVTX ranges as
// collectives on the kernels they launched (grouped ones on the kernels of their ncclGroupEnd). Throws
// meshscope::Error ("FILE: problem") when nothing can be imported. What the user should know about an import
// that succeeds (an export schema meshscope does not know) goes to NOTES, when given, and to the profile's
// diagnostics; nothing is printed.
std::vector<ImportedRank> import_file(const std::filesystem::path& path, ProfileWriter& writer,
                                      const RankClaim& claim, std::vector<std::string>* notes = nullptr);

// ---- building blocks (exposed for tests) ----

// A serialized Nsight Systems GlobalId: hardware id (bits 63..56), VM id (55..48), process id (47..24) and
// thread id (23..0). globalPid values have tid 0.
struct GlobalId {
  std::int64_t hw = 0, vm = 0, pid = 0, tid = 0;
};
GlobalId decode_global_id(std::int64_t id);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the export appends the API version; Kineto does not).
std::string_view api_base_name(std::string_view name);

// What an NCCL-domain NVTX range says about the collective it brackets. TEXT is the range's message
// ("ncclAllReduce", optionally followed by "key=value" or "key: value" pairs), JSON its JSON payload (empty
// when none) and INT_PAYLOAD its integer payload (kNull when none), which NCCL sets to the message size in
// bytes. Returns nullopt for NCCL API ranges that are not communication (ncclCommInitRank, ncclGroupStart,
// ...).
struct NcclRange {
  std::string op;  // normalised: allreduce, allgather, reducescatter, broadcast, reduce, alltoall, send, recv
  std::int64_t bytes = kNull;
  std::int64_t count = kNull;  // element count, when stated
  std::int64_t group_size = kNull;
  std::int64_t root_or_peer = kNull;
  std::string communicator;
  std::string dtype;
};
std::optional<NcclRange> parse_nccl_range(std::string_view text, std::string_view json,
                                          std::int64_t int_payload);

}  // namespace meshscope::nsys
