// Kineto (PyTorch profiler) Chrome-trace JSON importer: .json and .json.gz, 2021 and current generations.
//
// Two readers share one event handler: files that fit comfortably in memory are decompressed whole and walked
// with simdjson On-Demand (metadata first, then events, so the rank and clock base are known before any event
// is written); larger files are read in chunks, split into complete events by a small scanner and parsed a
// batch at a time, so memory stays flat however large the trace is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::kineto {

// A rank described by a meshscope export (the top-level "meshscope" object): one file, many ranks.
struct ExportedRank {
  RankInfo info;
  std::vector<DeviceInfo> devices;
  std::vector<ProcessGroupInfo> process_groups;
};

// What a trace says about itself outside traceEvents.
struct FileMetadata {
  std::optional<std::int64_t> rank;        // distributedInfo.rank
  std::optional<std::int64_t> world_size;  // distributedInfo.world_size
  bool has_distributed_info = false;
  std::string backend, nccl_version, hostname, trace_id;
  std::int64_t base_time_ns = 0;  // baseTimeNanoseconds (0 when absent)
  std::vector<ProcessGroupInfo> process_groups;
  std::vector<DeviceInfo> devices;
  // Set for files written by `meshscope export`: events then carry their rank as pid.
  std::vector<ExportedRank> exported_ranks;
};

// Decides which rank a file's events are written under, from its path and the metadata read so far.
using RankResolver = std::function<std::int32_t(const std::filesystem::path&, const FileMetadata&)>;

// What a thread that reads many files keeps from one to the next: the buffer of the decompressed text and the
// JSON parser's own, so that their pages are not faulted in (and zeroed by the kernel) again for every file.
class ReadScratch {
 public:
  ReadScratch();
  ~ReadScratch();
  ReadScratch(const ReadScratch&) = delete;
  ReadScratch& operator=(const ReadScratch&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ImportSettings {
  // Files whose decompressed size exceeds this are streamed instead of read whole.
  std::uint64_t streaming_threshold_bytes = std::uint64_t{256} << 20;
  std::size_t stream_chunk_bytes = std::size_t{8} << 20;
  // Called now and then with (bytes processed, bytes in total); may be empty.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // Buffers kept between the files one thread reads whole (may be null: fresh ones per file).
  ReadScratch* scratch = nullptr;
  // ImportOptions::operator_work: without them no work rows are written.
  OperatorWorkFormulas operator_work;
};

struct FileResult {
  FileMetadata metadata;  // complete, including facts stated after the events
  std::int32_t rank = 0;  // the rank the events were written under (after any rewrite); see exported_ranks
  std::uint64_t gpu_events = 0;
  std::uint64_t cpu_events = 0;
  std::uint64_t imported_rows = 0;
  std::uint64_t skipped_events = 0;  // profiler bookkeeping, counters, instants: counted, not stored
  TimeNs first_ns = 0, last_ns = 0;
  bool streamed = false;
};

// Imports one Kineto trace into WRITER. Throws meshscope::Error ("FILE: problem") on bad input.
FileResult import_file(const std::filesystem::path& path, RecordSink& writer,
                       const RankResolver& resolve_rank, const ImportSettings& settings = {});

// Parses a Kineto microsecond timestamp token ("1623142623460111", "4458676522690.655", "1.5e3") into integer
// nanoseconds, keeping every sub-microsecond digit exactly. Returns false when TOKEN is not a number, or when
// it is one whose nanoseconds lie beyond +-kTimeLimitNs (then *OUT_OF_RANGE, when given, is set): never a
// wrapped value.
bool parse_microseconds(std::string_view token, std::int64_t& nanoseconds, bool* out_of_range = nullptr);

}  // namespace meshscope::kineto
