// A small profile written with ProfileWriter for the diff, critical-path, launch and pipeline tests: CPU
// threads with ranges and CUDA calls, GPU streams with activities linked to their launch calls by
// correlation id, collectives and process groups. Times are whatever the test says (ns).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope::test {

class ProfileBuilder {
 public:
  explicit ProfileBuilder(const std::string& name)
      : path_(std::filesystem::path(MESHSCOPE_TEST_TMP) /
              ("builder_" + name + "-" + std::to_string(::getpid()) + ".msdb")) {
    std::filesystem::create_directories(MESHSCOPE_TEST_TMP);
    std::filesystem::remove(path_);
    writer_ = std::make_unique<ProfileWriter>(path_, WriterOptions::synchronous());
  }

  void rank(std::int32_t rank, std::int64_t world_size = kNull, std::string_view hostname = {}) {
    RankInfo info;
    info.rank = rank;
    info.world_size = world_size;
    info.hostname = std::string(hostname);
    info.source_file = "test";
    info.rank_source = "test";
    writer_->set_rank(info);
  }

  void process_group(std::int32_t rank, std::string_view name, std::string_view desc,
                     std::string_view ranks_json, std::int64_t size) {
    ProcessGroupInfo pg;
    pg.rank = rank;
    pg.pg_name = std::string(name);
    pg.pg_desc = std::string(desc);
    pg.backend = "nccl";
    pg.group_size = size;
    pg.ranks_json = std::string(ranks_json);
    writer_->add_process_group(pg);
  }

  // A CUDA call on thread TID; returns its correlation id.
  std::int64_t api(std::int32_t rank, std::int64_t tid, TimeNs start, TimeNs end,
                   std::string_view name = "cudaLaunchKernel") {
    ApiCallRecord c;
    c.rank = rank;
    c.kind = ApiKind::kRuntime;
    c.pid = 1;
    c.tid = tid;
    c.start_ns = start;
    c.end_ns = end;
    c.name = writer_->intern(name);
    c.correlation = ++correlation_;
    writer_->add_api_call(c);
    return c.correlation;
  }

  // A GPU activity; CORRELATION kNull: no launch in the profile.
  std::int64_t activity(std::int32_t rank, std::int64_t stream, TimeNs start, TimeNs end,
                        std::string_view name, std::int64_t correlation = kNull,
                        ActivityKind kind = ActivityKind::kKernel) {
    ActivityRecord a;
    a.rank = rank;
    a.kind = kind;
    a.stream = stream;
    a.start_ns = start;
    a.end_ns = end;
    a.name = writer_->intern(name);
    a.correlation = correlation;
    return writer_->add_activity(a);
  }

  // A launch call [call_start, call_end) on TID and the kernel [start, end) it launched on STREAM.
  std::int64_t launch(std::int32_t rank, std::int64_t tid, TimeNs call_start, TimeNs call_end,
                      std::int64_t stream, TimeNs start, TimeNs end, std::string_view name,
                      ActivityKind kind = ActivityKind::kKernel) {
    const std::int64_t correlation =
        api(rank, tid, call_start, call_end,
            kind == ActivityKind::kKernel ? "cudaLaunchKernel" : "cudaMemcpyAsync");
    return activity(rank, stream, start, end, name, correlation, kind);
  }

  void range(std::int32_t rank, std::int64_t tid, RangeKind kind, TimeNs start, TimeNs end,
             std::string_view name, std::int64_t step = kNull) {
    RangeRecord r;
    r.rank = rank;
    r.kind = kind;
    r.pid = 1;
    r.tid = tid;
    r.start_ns = start;
    r.end_ns = end;
    r.name = writer_->intern(name);
    r.step = step;
    writer_->add_range(r);
  }

  // The OS's record of thread TID: an interval on core CPU, or (KIND kSample) a sample at START.
  void thread_activity(std::int32_t rank, std::int64_t tid, ThreadActivityKind kind, TimeNs start, TimeNs end,
                       std::int64_t cpu = 0) {
    ThreadActivityRecord a;
    a.rank = rank;
    a.kind = kind;
    a.pid = 1;
    a.tid = tid;
    a.start_ns = start;
    a.end_ns = end;
    a.cpu = cpu;
    writer_->add_thread_activity(a);
  }

  void step(std::int32_t rank, std::int64_t tid, TimeNs start, TimeNs end, std::int64_t number) {
    range(rank, tid, RangeKind::kStep, start, end, "ProfilerStep#" + std::to_string(number), number);
  }

  void collective(std::int32_t rank, std::int64_t activity_id, TimeNs start, TimeNs end, std::string_view op,
                  std::string_view communicator, std::int64_t seq, std::int64_t group_size,
                  std::int64_t bytes, std::string_view pg_ranks = {}, std::string_view pg_desc = {}) {
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = activity_id;
    c.communicator = writer_->intern(communicator);
    if (!pg_ranks.empty()) c.pg_ranks = writer_->intern(pg_ranks);
    if (!pg_desc.empty()) c.pg_desc = writer_->intern(pg_desc);
    c.seq = seq;
    c.op = writer_->intern(op);
    c.in_bytes = bytes;
    c.out_bytes = bytes;
    c.group_size = group_size;
    c.start_ns = start;
    c.end_ns = end;
    c.source = "kernel_args";
    writer_->add_collective(c);
  }

  // Commits, closes the writer and loads the profile.
  Profile finish(const LoadOptions& options = {}) {
    writer_->commit();
    writer_.reset();
    return Profile::load(path_, options);
  }

  const std::filesystem::path& path() const { return path_; }
  // For the records the helpers above do not write (the work tables).
  ProfileWriter& writer() { return *writer_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<ProfileWriter> writer_;
  std::int64_t correlation_ = 1000;
};

}  // namespace meshscope::test
