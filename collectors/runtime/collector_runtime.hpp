// The part of a collector that runs inside the training process and is the same for every collector (the
// CUPTI injection library, the NCCL profiler plugin): who this process is, the one clock, a bounded lock-free
// hand-off queue, and a Session that owns the per-rank profile and the background thread that writes it.
//
// Rules every collector follows (docs/COLLECTORS.md, "Safety"):
//   * training threads never block and never allocate without bound: they push into a BoundedQueue and, when
//     it is full, drop and count;
//   * everything that touches SQLite runs on the Session's thread;
//   * an internal error prints one line on stderr and disables the collector; the job goes on;
//   * what was checkpointed stays readable if the process dies (the writer journals with a WAL).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"

namespace meshscope::record {

// The one clock of recorded profiles: CLOCK_REALTIME in nanoseconds. Both collectors stamp with it (CUPTI
// through a registered timestamp callback), so one rank's CUDA and NCCL rows line up; hosts are aligned at
// merge.
std::int64_t clock_ns() noexcept;

// Who this process is in the job, from the launcher's environment.
struct Identity {
  std::int32_t rank = 0;
  std::int64_t local_rank = kNull;
  std::int64_t world_size = kNull;
  std::string rank_source;  // the variable the rank came from (RANK, SLURM_PROCID, ...) or "default"
  std::string hostname;
  std::int64_t pid = 0;
};

// Reads MESHSCOPE_RANK, RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID (first found wins),
// then the local rank and world size of that launcher first and of any other after (docs/COLLECTORS.md has
// the table). Without any, rank 0 with rank_source "default". The host name (which names the clock) is
// MESHSCOPE_HOSTNAME when set, else gethostname().
Identity identity_from_environment();

// Integer environment variable NAME, or FALLBACK when unset or not a number.
std::int64_t env_int(const char* name, std::int64_t fallback) noexcept;

// Prints "meshscope[COLLECTOR]: MESSAGE" on stderr in one write (async-signal-safe).
void log_line(std::string_view collector, std::string_view message) noexcept;

// Bounded multi-producer multi-consumer queue without locks (D. Vyukov's array queue). push() never blocks or
// allocates: it returns false when the queue is full, and the caller counts the drop.
template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity_pow2) : mask_(capacity_pow2 - 1), cells_(capacity_pow2) {
    for (std::size_t i = 0; i < cells_.size(); ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
  }
  bool push(const T& value) noexcept {
    Cell* cell;
    std::size_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      cell = &cells_[pos & mask_];
      const std::size_t seq = cell->sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
    cell->value = value;
    cell->sequence.store(pos + 1, std::memory_order_release);
    return true;
  }
  bool pop(T& value) noexcept {
    Cell* cell;
    std::size_t pos = dequeue_.load(std::memory_order_relaxed);
    for (;;) {
      cell = &cells_[pos & mask_];
      const std::size_t seq = cell->sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
      if (diff == 0) {
        if (dequeue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        return false;
      } else {
        pos = dequeue_.load(std::memory_order_relaxed);
      }
    }
    value = cell->value;
    cell->sequence.store(pos + mask_ + 1, std::memory_order_release);
    return true;
  }
  std::size_t capacity() const noexcept { return mask_ + 1; }

 private:
  struct Cell {
    std::atomic<std::size_t> sequence{0};
    T value{};
  };
  const std::size_t mask_;
  std::vector<Cell> cells_;
  alignas(64) std::atomic<std::size_t> enqueue_{0};
  alignas(64) std::atomic<std::size_t> dequeue_{0};
};

// What a collector plugs into a Session. Every method runs on the Session's thread only.
class Source {
 public:
  virtual ~Source() = default;
  // Moves whatever producers queued into the writer.
  virtual void drain(ProfileWriter& writer) = 0;
  // Called before each checkpoint and before the final commit (CUPTI flushes its activity buffers here).
  // FORCED: the flush was requested (signal, device reset) or is the last one, so partly filled buffers count
  // too.
  virtual void before_flush(bool forced) { (void)forced; }
  // Last call before the profile is committed: write drop counts and other diagnostics.
  virtual void finish(ProfileWriter& writer) { (void)writer; }
};

struct SessionOptions {
  std::string collector;            // "cupti", "nccl": part of the file name and of log lines
  std::filesystem::path directory;  // where the per-rank profile goes (MESHSCOPE_OUTPUT_DIR)
  int flush_ms = 1000;              // checkpoint period (MESHSCOPE_FLUSH_MS)
  int drain_ms = 50;                // how often queued data moves to the writer
  bool signal_flush = true;         // flush on SIGTERM/SIGINT before the previous disposition runs
};

// SessionOptions from the environment: MESHSCOPE_OUTPUT_DIR (default ./meshscope-record), MESHSCOPE_FLUSH_MS.
SessionOptions session_options_from_environment(std::string collector);

// Owns the per-rank profile DIR/rank<R>.<collector>.<pid>.msdb and the thread that writes it. The file is
// created by the thread (so start() costs the caller nothing), checkpointed every flush_ms and on request,
// and committed by shutdown(). Nothing here throws to the caller; failures disable the session with one log
// line.
class Session {
 public:
  Session(Source& source, Identity identity, SessionOptions options);
  ~Session();  // shutdown()
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the writer thread. False (after one log line) when the thread cannot start.
  bool start() noexcept;
  // Wakes the thread to flush and checkpoint now. Async-signal-safe.
  void request_flush() noexcept;
  // request_flush() and wait until the checkpoint is done or TIMEOUT_MS passed. Async-signal-safe.
  bool flush_and_wait(int timeout_ms) noexcept;
  // Flushes, writes the source's last words, commits and stops the thread. Idempotent; a no-op in a forked
  // child (the thread belongs to the parent).
  void shutdown() noexcept;
  // Stops recording after an internal error: one log line, producers see enabled() == false. What was
  // checkpointed stays on disk.
  void disable(std::string_view why) noexcept;
  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }

  const Identity& identity() const { return identity_; }
  const SessionOptions& options() const { return options_; }
  // The profile this session writes (valid once start() returned true).
  std::filesystem::path target() const;

 private:
  void thread_main();
  bool open_writer();
  void checkpoint_now(bool forced);
  void signal_done() noexcept;

  Source& source_;
  Identity identity_;
  SessionOptions options_;
  std::filesystem::path target_;
  std::unique_ptr<ProfileWriter> writer_;
  std::thread thread_;
  std::atomic<bool> enabled_{true};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> logged_{false};
  std::int64_t owner_pid_ = 0;
  int wake_fd_ = -1;  // eventfd: flush requests and stop
  int done_fd_ = -1;  // eventfd: one count per completed requested flush
  std::atomic<std::uint64_t> flush_requests_{0};
};

// Installs SIGTERM and SIGINT handlers that flush SESSION (waiting up to TIMEOUT_MS) and then run whatever
// disposition was there before (the default one terminates the process as it would have). Up to four sessions
// per library; safe to call again for another session.
void install_signal_flush(Session& session, int timeout_ms = 3000) noexcept;
// Removes SESSION from the signal handlers' list (before the session is destroyed).
void remove_signal_flush(Session& session) noexcept;

}  // namespace meshscope::record
