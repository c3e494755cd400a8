// RecordBuffer: the rows of one file, held until the file is known to be good and its turn has come.
//
// Files of a job are parsed on several threads at once (import.cpp), but the profile is written in input
// order by one ProfileWriter, so that it is the same whatever the threads' timing: each parsing thread hands
// its rows to a RecordBuffer with ids of its own (strings, activities, operators numbered from 1), and
// replay() hands them to the writer, which gives them the ids a direct import would have given. A file that
// fails leaves nothing behind: its buffer is dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::import {

class RecordBuffer final : public RecordSink {
 public:
  RecordBuffer() = default;
  RecordBuffer(const RecordBuffer&) = delete;  // texts_ points into ids_
  RecordBuffer& operator=(const RecordBuffer&) = delete;

  StringId intern(std::string_view text) override;
  std::int64_t add_activity(const ActivityRecord& record) override;
  void add_collective(const CollectiveRecord& record) override;
  void add_api_call(const ApiCallRecord& record) override;
  void add_range(const RangeRecord& record) override;
  std::int64_t add_op_work(const OpWorkRecord& record) override;
  void add_kernel_work(const KernelWorkRecord& record) override;
  void add_flow(const FlowRecord& record) override;
  void add_thread_activity(const ThreadActivityRecord& record) override;
  void add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) override;
  void rewrite_rank(std::int32_t old_rank, std::int32_t new_rank, std::int64_t shift_ns) override;
  void add_device(const DeviceInfo& info) override;
  void add_process_group(const ProcessGroupInfo& info) override;
  void add_stream(const StreamInfo& info) override;
  void add_thread(const ThreadInfo& info) override;
  void add_diagnostic(std::int32_t rank, std::string_view severity, std::string_view message) override;

  // Resolves the CPU-side collectives (add_cpu_collective) against this file's own API calls and kernels,
  // exactly as ProfileWriter::commit would against the whole profile (writer/cpu_collectives.hpp), so the
  // writer need not look them up at commit: on the reading thread, in memory. Call once the file is complete.
  void resolve_cpu_collectives();

  // Nests the ranges (depth and parent per track) as the writer would at commit, here on the reading
  // thread; the writer then takes them as they are. Call once the file is complete: its tracks are its own.
  void nest_ranges();

  // True when the file stated facts after its events that move its rows to another rank (rewrite_rank):
  // such a file is imported again directly, where the rewrite is resolved as it always was.
  bool has_rank_rewrites() const { return !rewrites_.empty(); }

  // The rows as the records of one rank (Profile::of_records), INFO describing it; nullopt when some row is
  // of another rank, or the rows are not yet as the writer takes them (ranges not nested, CPU-side
  // collectives not resolved) or would move (rank rewrites). The records point into this buffer.
  std::optional<RankRecords> rank_records(const RankInfo& info) const;

  // Hands every row to WRITER, each kind in the order it came, with the writer's string, activity and
  // operator ids in place of the buffer's. Once only (the buffer is dropped after). The profile is then
  // exactly what importing the file into WRITER directly would have written.
  void replay(ProfileWriter& writer);

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  struct CpuCollective {
    CollectiveRecord record;
    std::int64_t pid, tid;
  };
  struct Diagnostic {
    std::int32_t rank;
    std::string severity, message;
  };

  std::unordered_map<std::string, StringId, Hash, std::equal_to<>> ids_;
  std::vector<const std::string*> texts_;  // by id - 1 (the map's keys do not move)
  std::vector<ActivityRecord> activities_;
  std::vector<CollectiveRecord> collectives_;
  std::vector<ApiCallRecord> api_calls_;
  std::vector<RangeRecord> ranges_;
  bool nested_ = false;  // range_depth_ and range_parent_ hold each range's nesting
  std::vector<std::int32_t> range_depth_;
  std::vector<std::int64_t> range_parent_;
  std::vector<OpWorkRecord> op_work_;
  std::vector<KernelWorkRecord> kernel_work_;
  std::vector<FlowRecord> flows_;
  std::vector<ThreadActivityRecord> thread_activity_;  // not in rank_records(): no summary reads it
  std::vector<CpuCollective> cpu_collectives_;
  std::vector<CollectiveRecord> resolved_collectives_;  // by resolve_cpu_collectives, in order
  std::vector<DeviceInfo> devices_;
  std::vector<ProcessGroupInfo> process_groups_;
  std::vector<StreamInfo> streams_;
  std::vector<ThreadInfo> threads_;
  std::vector<Diagnostic> diagnostics_;
  struct Rewrite {
    std::int32_t old_rank, new_rank;
    std::int64_t shift_ns;
  };
  std::vector<Rewrite> rewrites_;
};

}  // namespace meshscope::import
