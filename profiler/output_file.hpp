// Where meshscope writes and what it reads: output paths resolved and checked before anything is written,
// inputs refused when they are not regular files, and hidden temporary files that are removed when the
// process is interrupted (SIGINT, SIGTERM, SIGHUP) or, after a kill -9, by the next write to the same folder.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace meshscope {

// Where an output really goes: PATH with every symbolic link followed, so that a link is written through
// rather than replaced. Throws Error naming PATH when the target exists and is not a regular file (a device
// such as /dev/full, a FIFO, a socket, a directory) or when a link loops.
std::filesystem::path resolve_output_path(const std::filesystem::path& path);

// Throws Error when OUTPUT is the same file as one of INPUTS (writing it would destroy the input).
void refuse_output_among_inputs(const std::filesystem::path& output,
                                const std::vector<std::filesystem::path>& inputs);

// Throws Error naming PATH unless it is a regular file (or, with ALLOW_DIRECTORY, a directory): a FIFO or a
// device would block a reader forever or never end.
void require_regular_input(const std::filesystem::path& path, bool allow_directory = false);

// A hidden temporary file beside TARGET, named .NAME.part-HOST-PID-RANDOM, for output written whole and then
// renamed over TARGET. Such names are what remove_stale_temp_files() recognises.
std::filesystem::path scratch_path_for(const std::filesystem::path& target);

// Removes the temporary files (and their SQLite -journal, -wal, -shm companions) that processes of this host
// which no longer run left in DIR. Returns how many files were removed. Files of live processes, of other
// hosts and of the collectors (which `record` recovers) are left alone.
int remove_stale_temp_files(const std::filesystem::path& dir);

// Writes CONTENT to REQUESTED as the other outputs are written: the path resolved (a link written through; a
// device, FIFO or directory refused), refused when it is one of INPUTS, the text written to a hidden
// temporary file beside it and renamed over it, so that a failed write leaves the old file as it was. Throws
// Error naming REQUESTED.
void write_output_file(const std::filesystem::path& requested, std::string_view content,
                       const std::vector<std::filesystem::path>& inputs = {});

// Registers PATH (with its -journal, -wal and -shm companions) for removal if the process is ended by SIGINT,
// SIGTERM or SIGHUP; the handlers are installed on first use where the signal's disposition is still the
// default (a handler the program set itself is left alone). Unregistering is cheap. At most 64 paths are
// registered at once; more are simply not guarded.
class TempFileGuard {
 public:
  TempFileGuard() = default;
  explicit TempFileGuard(const std::filesystem::path& path);
  ~TempFileGuard();
  TempFileGuard(TempFileGuard&& other) noexcept;
  TempFileGuard& operator=(TempFileGuard&& other) noexcept;
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void release();  // the file is no longer temporary (renamed into place, or removed by its owner)

 private:
  int slot_ = -1;
};

}  // namespace meshscope
