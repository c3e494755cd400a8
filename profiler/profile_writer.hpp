// ProfileWriter: the one way rows get into a meshscope profile.
//
// Rows are appended to in-memory batches; full batches go to a background thread that inserts them with
// prepared statements inside one large transaction. The profile is written to a temporary file beside the
// target and renamed over it only by commit(), so a failed import never leaves a half-written profile behind.
// Ids of activities are assigned here (not by SQLite) so that a collective can point at its kernel before
// either reaches the database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/records.hpp"
#include "profiler/work_records.hpp"

namespace meshscope {

struct WriterOptions {
  // Records per batch handed to the background thread; also bounds memory (at most kQueueDepth batches
  // queued).
  std::size_t batch_records = 32768;
  // Run inserts on a background thread. Off makes every flush synchronous (handy in tests and signal paths).
  bool background = true;
  // Durable writes (fsync at commit). Importers leave this off: the file is renamed only once complete
  // anyway.
  bool durable = false;
  // Refused as the output (the same file, by inode): the files this profile is made from.
  std::vector<std::filesystem::path> inputs;
  // Called by commit() once the profile is complete and closed in its temporary file (WRITTEN), before it is
  // renamed over the target: what else the output holds (its summaries, a merge of parts, events dropped) is
  // added there, so that the output appears whole or not at all. SHOWN is the path messages should name.
  // An exception leaves the old output as it was. Not for durable writers.
  std::function<void(const std::filesystem::path& written, const std::filesystem::path& shown)>
      before_publish;

  // Every flush synchronous, in batches of BATCH_RECORDS (tests, signal paths).
  static WriterOptions synchronous(std::size_t batch_records = 1024) {
    WriterOptions options;
    options.batch_records = batch_records;
    options.background = false;
    return options;
  }
};

// Where importers hand rows: the ProfileWriter itself, or a buffer that is handed to it later in one piece
// (collectors/import/record_buffer.hpp, for files parsed in parallel). The meaning of each call is the
// ProfileWriter's, below.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual StringId intern(std::string_view text) = 0;
  virtual std::int64_t add_activity(const ActivityRecord& record) = 0;
  virtual void add_collective(const CollectiveRecord& record) = 0;
  virtual void add_api_call(const ApiCallRecord& record) = 0;
  virtual void add_range(const RangeRecord& record) = 0;
  virtual std::int64_t add_op_work(const OpWorkRecord& record) = 0;
  virtual void add_kernel_work(const KernelWorkRecord& record) = 0;
  virtual void add_flow(const FlowRecord& record) = 0;
  virtual void add_thread_activity(const ThreadActivityRecord& record) = 0;
  virtual void add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) = 0;
  virtual void rewrite_rank(std::int32_t old_rank, std::int32_t new_rank, std::int64_t shift_ns) = 0;
  virtual void add_device(const DeviceInfo& info) = 0;
  virtual void add_process_group(const ProcessGroupInfo& info) = 0;
  virtual void add_stream(const StreamInfo& info) = 0;
  virtual void add_thread(const ThreadInfo& info) = 0;
  virtual void add_diagnostic(std::int32_t rank, std::string_view severity, std::string_view message) = 0;
};

class ProfileWriter final : public RecordSink {
 public:
  explicit ProfileWriter(std::filesystem::path target, WriterOptions options = {});
  ~ProfileWriter();  // without commit(): stops the writer and deletes the temporary file
  ProfileWriter(const ProfileWriter&) = delete;
  ProfileWriter& operator=(const ProfileWriter&) = delete;

  // Interns a string; the same text always gives the same id. Empty text gives kNoString.
  StringId intern(std::string_view text) override;

  std::int64_t add_activity(const ActivityRecord& record) override;  // returns the activity id
  void add_collective(const CollectiveRecord& record) override;
  void add_api_call(const ApiCallRecord& record) override;
  void add_range(const RangeRecord& record) override;
  // Work per operator (schema.sql op_work, kernel_work; docs/PROFILE.md "Work per operator"): the id of
  // RECORD is assigned here and returned, for the kernel_work rows that point at it.
  std::int64_t add_op_work(const OpWorkRecord& record) override;
  // Ranges the caller nested itself (writer::nest_ranges) over every range their tracks hold: RANGES[i] gets
  // the next range id, at DEPTH[i] inside the range PARENT[i] (an index into RANGES; -1 for none). A range
  // that comes for one of these tracks later has the track nested again at commit.
  void add_nested_ranges(const std::vector<RangeRecord>& ranges, const std::vector<std::int32_t>& depth,
                         const std::vector<std::int64_t>& parent);
  void add_kernel_work(const KernelWorkRecord& record) override;
  void add_flow(const FlowRecord& record) override;
  // A thread's time on a CPU core or a sample of its stack (schema.sql thread_activity). It does not extend
  // the rank's first_ns/last_ns, which stay those of its traced events (a process's scheduling covers its
  // whole life, most of it often outside the capture of its GPU work).
  void add_thread_activity(const ThreadActivityRecord& record) override;

  // Every range of the tracks (rank, pid, tid) handed over so far has been: ranges held back for nesting
  // (writer/range_nesting.hpp) are nested and written now. Importers call it after each file, which bounds
  // the memory ranges wait in. A track that later receives a range starting before its last one is nested
  // again in SQL at commit (slower, same result).
  void close_tracks();

  // Collective metadata known on the CPU side only (Kineto record_param_comms, NVTX NCCL ranges): at commit,
  // every kernel launched (by correlation id) from an API call on (pid, tid) within [start_ns, end_ns] that
  // has no collective yet becomes a collective with this metadata and the kernel's GPU times. If the range
  // launched no kernel at all, the collective is kept with the CPU range's times and no activity (e.g. gloo).
  void add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) override;

  // A collective that the resolution of add_cpu_collective at commit would write, resolved already by the
  // importer from the rows of its file (collectors/import/record_buffer.hpp): written at commit, numbered in
  // turn with the CPU collectives handed over before and after it.
  void add_resolved_collective(const CollectiveRecord& record);

  // At commit, moves every row of OLD_RANK to NEW_RANK and shifts its times by SHIFT_NS (for facts that a
  // trace states only after its events, such as a distributedInfo at the end of a Kineto file).
  void rewrite_rank(std::int32_t old_rank, std::int32_t new_rank, std::int64_t shift_ns) override;

  void set_rank(const RankInfo& info);  // insert or replace
  void add_device(const DeviceInfo& info) override;
  void add_process_group(const ProcessGroupInfo& info) override;
  void add_stream(const StreamInfo& info) override;
  void add_thread(const ThreadInfo& info) override;
  // RANK -1 (any negative rank) files the diagnostic under the whole job (diagnostics.rank NULL).
  void add_diagnostic(std::int32_t rank, std::string_view severity, std::string_view message) override;
  void set_meta(std::string_view key, std::string_view value);

  // The earliest start and latest end of the rows handed over so far for RANK (before any rank rewrite);
  // nullopt when it has none.
  std::optional<std::pair<TimeNs, TimeNs>> rank_extent(std::int32_t rank) const;

  // Finishes the profile: rebuilds range nesting per track, fills rank first/last times, creates indexes,
  // commits and atomically renames the temporary file to the target. Throws meshscope::Error on failure.
  void commit();

  // Writes what has been handed over so far and commits it to the temporary file without finishing the
  // profile (collectors call this periodically so a killed process leaves a readable file). Not for
  // importers.
  void checkpoint();

  const std::filesystem::path& target() const;
  const std::filesystem::path& temp_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The schema version this build writes and reads.
inline constexpr int kSchemaVersion = 1;

// The schema text (profiler/schema.sql), split into the part before and after the "@indexes" marker.
std::string_view schema_tables_sql();
std::string_view schema_indexes_sql();

}  // namespace meshscope
