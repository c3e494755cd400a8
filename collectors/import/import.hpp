// Importing traces of other tools into one meshscope job profile. Files are recognised by content (SQLite
// Nsight Systems exports, gzip or plain Kineto JSON); a directory stands for every trace inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/work_records.hpp"

namespace meshscope {

struct ImportOptions {
  // Kineto files larger than this (decompressed) are streamed with flat memory instead of read whole.
  std::uint64_t streaming_threshold_bytes = std::uint64_t{256} << 20;
  // Progress of the whole import in [0, 1]; may be empty. Called from the importing thread.
  std::function<void(double)> progress;
  // Files finished and files in all, after each file; may be empty. Called from the importing thread.
  std::function<void(std::size_t done, std::size_t total)> files_done;
  // Threads reading Kineto files at once (0: one per core, at most 8, and none for a job of one file, which
  // is read as the writer inserts it). The profile is the same whatever the number: files are written in
  // input order.
  unsigned threads = 0;
  // Leave out a file that cannot be imported (listed in ImportSummary::skipped and notes) instead of failing;
  // the import still fails when no file is left, or when the file was partly written before its problem
  // showed (Nsight Systems exports and Kineto files above streaming_threshold_bytes are written as read).
  bool skip_bad = false;
  // Called on a reading thread with the rows of each Kineto file read ahead that holds one rank, once they
  // are read and before they are written (FILE: absolute and normal, as ImportedRank::source_file names it).
  // The rows are those the profile will hold of that rank if the file is imported (it may yet be refused or
  // skipped: ImportSummary::ranks lists what was). The summaries are computed here (analysis/measure/
  // summary.hpp, ImportSummaries, which the job supplies). Must not throw. May be empty.
  std::function<void(const std::filesystem::path& file, const RankRecords& rows)> each_rank_read;
  // The FLOPs and bytes of a CPU operator from its recorded shapes (op_work rows; the job supplies the
  // formulas of analysis/measure/op_work.hpp). Without them no work rows are written.
  OperatorWorkFormulas operator_work;
};

struct ImportSummary;

// Called once the profile is complete in its temporary file (WRITTEN), before it replaces the output: what
// else the output is to hold (its summaries, merged parts) is added there. SHOWN is the output as the user
// named it (for messages); IMPORTED what the import read. May be empty.
using BeforePublish = std::function<void(const std::filesystem::path& written,
                                         const std::filesystem::path& shown, const ImportSummary& imported)>;

struct ImportedRank {
  std::int32_t rank;
  std::string source_file;
  std::string rank_source;  // distributedInfo, filename, single, nsys-process, ...
  std::uint64_t gpu_events, cpu_events;
};

// A file --skip-bad left out.
struct SkippedFile {
  std::string path;
  std::string problem;  // the one-line error, naming the file
};

struct ImportSummary {
  std::vector<ImportedRank> ranks;
  std::vector<SkippedFile> skipped;
  std::vector<std::string> notes;  // one line each: what the importer decided or could not use
};

// The trace files INPUTS stand for, in a stable order (directories expanded to the traces inside them), each
// file once: one named again (by another path, or as a file of a folder given too) is left out and, when
// REPEATED is given, listed there.
std::vector<std::filesystem::path> expand_trace_inputs(
    const std::vector<std::filesystem::path>& inputs, std::vector<std::filesystem::path>* repeated = nullptr);

// The rank a file name states ("rank-3", "rank_3", "rank3", "worker3"), or -1.
std::int64_t rank_from_file_name(const std::filesystem::path& path);

// Imports INPUTS as one job into OUTPUT (written atomically: nothing is left behind on failure).
// Throws meshscope::Error with one line naming the file and the problem.
// The output is refused when it is one of the inputs, a device, FIFO or directory (profiler/output_file.hpp).
ImportSummary import_traces(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& output, const ImportOptions& options = {},
                            const BeforePublish& before_publish = {});

}  // namespace meshscope
