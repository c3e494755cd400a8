// Where meshscope writes and what it reads: output paths resolved and checked before anything is written,
// inputs refused when they are not regular files, and hidden temporary files that are removed when the
// process is interrupted (SIGINT, SIGTERM, SIGHUP) or, after a kill -9, by the next write to the same folder.
#pragma once

#include <filesystem>
#include <functional>
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

// The one way meshscope writes an output (import, export, summarize, --merge, record's merge, text outputs):
// the requested path resolved (a link written through; a device, FIFO, socket or directory refused), refused
// when it is one of INPUTS (the same file, by inode), its folder checked for writing, the leftovers of killed
// processes removed from that folder, and a scratch file beside it whose name is unique to this process
// (.NAME.part-HOST-PID-RANDOM) guarded against SIGINT, SIGTERM and SIGHUP. The output is built in scratch()
// and appears at once, complete, by publish(); destroyed unpublished, the scratch file (and its SQLite
// companions) is removed and the old output stays as it was. Every message names the path as requested.
class OutputFile {
 public:
  explicit OutputFile(const std::filesystem::path& requested,
                      const std::vector<std::filesystem::path>& inputs = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::filesystem::path& requested() const { return requested_; }
  const std::filesystem::path& target() const { return target_; }    // links followed
  const std::filesystem::path& scratch() const { return scratch_; }  // where the output is built
  // Renames the scratch file over the target (atomic on one file system). Throws Error naming the requested
  // path; the scratch file is then removed.
  void publish();
  bool published() const { return published_; }

 private:
  std::filesystem::path requested_, target_, scratch_;
  TempFileGuard guard_;
  bool published_ = false;
};

// Runs WORK, which reads or writes the scratch file SCRATCH; an Error it throws names SHOWN (the output the
// user asked for) wherever it named SCRATCH, a hidden file the user never sees.
void with_output_named(const std::filesystem::path& scratch, const std::filesystem::path& shown,
                       const std::function<void()>& work);

// Writes CONTENT to REQUESTED as the other outputs are written: the path resolved (a link written through; a
// device, FIFO or directory refused), refused when it is one of INPUTS, the text written to a hidden
// temporary file beside it and renamed over it, so that a failed write leaves the old file as it was. Throws
// Error naming REQUESTED.
void write_output_file(const std::filesystem::path& requested, std::string_view content,
                       const std::vector<std::filesystem::path>& inputs = {});

}  // namespace meshscope
