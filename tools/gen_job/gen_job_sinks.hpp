// Outputs of meshscope_gen_job. The simulation hands every finished event to a Sink: KinetoSink streams
// PyTorch profiler (Kineto) Chrome-trace JSON, one file per rank, plain or gzip; MsdbSink writes one
// meshscope profile through ProfileWriter; CountingSink only counts (used to size the job). Nothing is kept
// after it is written.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"
#include "tools/gen_job/gen_job_model.hpp"

namespace meshscope::gen {

// -----------------------------------------------------------------------------------------------------------
// Events as the simulation produces them. Times are Kineto timestamps in integer nanoseconds (ts * 1000); the
// profile clock is that plus baseTimeNanoseconds. Names point at strings that outlive the run (literals or
// strings owned by the job), so sinks may cache by address.

enum class Cat : std::uint8_t { kCpuOp, kUserAnnotation, kStep };
enum class CollOp : std::uint8_t { kAllReduce, kReduceScatter, kAllGather, kSend, kRecv };
enum class GpuKind : std::uint8_t { kKernel, kMemcpy, kMemset };

struct CommMeta {
  CollOp op = CollOp::kAllReduce;
  const ProcessGroup* pg = nullptr;
  std::int64_t seq = 0;
  std::int64_t in_nelems = 0, out_nelems = 0;
  const char* dtype = "BFloat16";
  std::int64_t elem_bytes = 2;
};

struct CpuEvent {
  std::string_view name;
  Cat cat = Cat::kCpuOp;
  std::int64_t tid = 0;
  TimeNs ts = 0, dur = 0;
  std::int64_t external_id = 0, ev_idx = 0;
  std::int64_t seq_nr = -1;        // autograd "Sequence number", -1 when none
  int fwd_thread = 0;              // "Fwd thread id" when seq_nr >= 0
  const CommMeta* comm = nullptr;  // record_param_comms metadata
  std::int64_t step = -1;          // ProfilerStep#N
};

struct RuntimeEvent {
  std::string_view name;
  std::int64_t tid = 0;
  TimeNs ts = 0, dur = 0;
  std::int64_t external_id = 0, correlation = 0, cbid = 0;
};

struct GpuEvent {
  GpuKind kind = GpuKind::kKernel;
  std::string_view name;
  int stream = kComputeStream;
  TimeNs ts = 0, dur = 0;
  std::int64_t external_id = 0, correlation = 0;
  const KernelShape* shape = nullptr;
  std::int64_t bytes = 0;
  const char* copy_kind = nullptr;  // HtoD, DtoH, ...
  const CommMeta* comm = nullptr;
  TimeNs launch_ts = 0;  // the runtime call that launched it (for the ac2g flow)
  std::int64_t launch_tid = 0;
};

// What a sink needs to know about a rank.
struct RankIdentity {
  int rank = 0;
  int device = 0;
  std::int64_t pid = 0, main_tid = 0, autograd_tid = 0;
};

struct JobInfo {
  const Topology* topology = nullptr;
  const Gpu* gpu = nullptr;
  std::vector<RankIdentity> ranks;
  std::int64_t base_time_ns = 0;  // baseTimeNanoseconds
  TimeNs origin_ts = 0;           // first timestamp of the job (Kineto ns)
  std::string nccl_version = "2.21.5";
  std::string command_line;
  std::uint64_t seed = 0;
};

inline const char* collective_name(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce:
      return "allreduce";
    case CollOp::kReduceScatter:
      return "_reduce_scatter_base";
    case CollOp::kAllGather:
      return "_allgather_base";
    case CollOp::kSend:
      return "send";
    case CollOp::kRecv:
      return "recv";
  }
  return "allreduce";
}

inline const char* normalized_op(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce:
      return "allreduce";
    case CollOp::kReduceScatter:
      return "reducescatter";
    case CollOp::kAllGather:
      return "allgather";
    case CollOp::kSend:
      return "send";
    case CollOp::kRecv:
      return "recv";
  }
  return "allreduce";
}

// The GPU streams a rank of TOPO uses.
inline std::vector<int> rank_streams(const Topology& topo) {
  std::vector<int> streams{kComputeStream};
  if (topo.ranks > 1) streams.push_back(kWorldStream);
  if (topo.tp > 1) streams.push_back(kTpStream);
  if (topo.dp > 1) streams.push_back(kDpStream);
  if (topo.pp > 1) {
    for (int s : {kPpSendNextStream, kPpRecvPrevStream, kPpSendPrevStream, kPpRecvNextStream})
      streams.push_back(s);
  }
  return streams;
}

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void begin(const JobInfo&) {}
  virtual void cpu(const RankIdentity& rank, const CpuEvent& event) = 0;
  virtual void runtime(const RankIdentity& rank, const RuntimeEvent& event) = 0;
  virtual void gpu(const RankIdentity& rank, const GpuEvent& event) = 0;
  virtual void fwdbwd(const RankIdentity& rank, std::int64_t id, TimeNs fwd_ts, TimeNs bwd_ts) = 0;
  // last_ts[r]: the end of rank r's last event.
  virtual void finish(const JobInfo&, const std::vector<TimeNs>& last_ts) { (void)last_ts; }
  // Smallest number of (uncompressed) bytes written to any output so far; 0 when not meaningful.
  virtual std::uint64_t min_bytes() const { return 0; }
};

// Counts X events (CPU ranges, runtime calls, GPU activities) of one rank.
class CountingSink final : public Sink {
 public:
  explicit CountingSink(int rank) : rank_(rank) {}
  void cpu(const RankIdentity& r, const CpuEvent&) override { count(r); }
  void runtime(const RankIdentity& r, const RuntimeEvent&) override { count(r); }
  void gpu(const RankIdentity& r, const GpuEvent&) override { count(r); }
  void fwdbwd(const RankIdentity&, std::int64_t, TimeNs, TimeNs) override {}
  std::uint64_t events() const { return events_; }

 private:
  void count(const RankIdentity& r) {
    if (r.rank == rank_) ++events_;
  }
  int rank_;
  std::uint64_t events_ = 0;
};

// -----------------------------------------------------------------------------------------------------------
// Kineto JSON.

// A buffered output file, plain or gzip. Bytes are counted before compression.
class OutputFile {
 public:
  OutputFile(const std::filesystem::path& path, bool gzip, int level) : path_(path) {
    if (gzip) {
      const std::string mode = fmt::format("wb{}", level);
      gz_ = gzopen(path.c_str(), mode.c_str());
      if (gz_ == nullptr) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
      gzbuffer(gz_, 1 << 20);
    } else {
      file_ = std::fopen(path.c_str(), "wb");
      if (file_ == nullptr) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
    }
    buffer_.reserve(kFlushBytes + (64 << 10));
  }
  ~OutputFile() {
    if (gz_ != nullptr) gzclose(gz_);
    if (file_ != nullptr) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  fmt::memory_buffer& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (buffer_.size() == 0) return;
    bool ok = true;
    if (gz_ != nullptr) {
      ok = gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) ==
           static_cast<int>(buffer_.size());
    } else {
      ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size();
    }
    if (!ok) throw std::runtime_error(fmt::format("write failed: {}", path_.string()));
    bytes_ += buffer_.size();
    buffer_.clear();
  }
  void close() {
    flush();
    int status = 0;
    if (gz_ != nullptr) status = gzclose(gz_);
    if (file_ != nullptr) status = std::fclose(file_);
    gz_ = nullptr;
    file_ = nullptr;
    if (status != 0) throw std::runtime_error(fmt::format("close failed: {}", path_.string()));
  }
  std::uint64_t bytes() const { return bytes_ + buffer_.size(); }

 private:
  static constexpr std::size_t kFlushBytes = 4 << 20;
  std::filesystem::path path_;
  gzFile gz_ = nullptr;
  std::FILE* file_ = nullptr;
  fmt::memory_buffer buffer_;
  std::uint64_t bytes_ = 0;
};

// Microseconds with three decimals from integer nanoseconds (never negative here).
struct Us {
  TimeNs ns;
};

}  // namespace meshscope::gen

template <>
struct fmt::formatter<meshscope::gen::Us> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const meshscope::gen::Us& us, Context& ctx) const {
    return fmt::format_to(ctx.out(), "{}.{:03}", us.ns / 1000, us.ns % 1000);
  }
};

namespace meshscope::gen {

class KinetoSink final : public Sink {
 public:
  // paths[r]: the file for rank r, empty for ranks not written.
  KinetoSink(std::vector<std::filesystem::path> paths, bool gzip, int level)
      : paths_(std::move(paths)), gzip_(gzip), level_(level) {}

  void begin(const JobInfo& job) override {
    files_.resize(paths_.size());
    first_.assign(paths_.size(), true);
    for (std::size_t r = 0; r < paths_.size(); ++r) {
      if (paths_[r].empty()) continue;
      files_[r] = std::make_unique<OutputFile>(paths_[r], gzip_, level_);
      write_header(job, static_cast<int>(r), files_[r]->buffer());
      files_[r]->maybe_flush();
    }
  }

  void cpu(const RankIdentity& r, const CpuEvent& e) override {
    auto* file = out(r);
    if (file == nullptr) return;
    auto& b = file->buffer();
    separator(r, b);
    const char* cat = e.cat == Cat::kCpuOp ? "cpu_op" : "user_annotation";
    fmt::format_to(
        std::back_inserter(b),
        "  {{\n    \"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, \"tid\": {},\n"
        "    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {},\"Record function id\": 0",
        cat, e.name, r.pid, e.tid, Us{e.ts}, Us{e.dur}, e.external_id);
    if (e.seq_nr >= 0) {
      fmt::format_to(std::back_inserter(b), ", \"Sequence number\": {}, \"Fwd thread id\": {}", e.seq_nr,
                     e.fwd_thread);
    }
    if (e.comm != nullptr) {
      const CommMeta& c = *e.comm;
      const auto& ranks = c.pg->ranks;
      const int stride = ranks.size() > 1 ? ranks[1] - ranks[0] : 1;
      fmt::format_to(
          std::back_inserter(b),
          ", \"Collective name\": \"{}\", \"dtype\": \"{}\", \"In msg nelems\": {}, \"Out msg nelems\": {}, "
          "\"Group size\": {}, \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Global rank start\": "
          "{}, \"Global rank stride\": {}, \"Process Group Name\": \"{}\", \"Process Group Description\": "
          "\"{}\", \"Process Group Ranks\": \"{}\", \"Rank\": {}, \"Seq\": {}",
          collective_name(c.op), c.dtype, c.in_nelems, c.out_nelems, ranks.size(), ranks.front(), stride,
          c.pg->name, c.pg->desc, c.pg->ranks_text, r.rank, c.seq);
    }
    fmt::format_to(std::back_inserter(b), ", \"Ev Idx\": {}\n    }}\n  }}", e.ev_idx);
    file->maybe_flush();
  }

  void runtime(const RankIdentity& r, const RuntimeEvent& e) override {
    auto* file = out(r);
    if (file == nullptr) return;
    auto& b = file->buffer();
    separator(r, b);
    fmt::format_to(
        std::back_inserter(b),
        "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"{}\", \"pid\": {}, \"tid\": {},\n"
        "    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {}, \"cbid\": {}, "
        "\"correlation\": {}\n    }}\n  }}",
        e.name, r.pid, e.tid, Us{e.ts}, Us{e.dur}, e.external_id, e.cbid, e.correlation);
    file->maybe_flush();
  }

  void gpu(const RankIdentity& r, const GpuEvent& e) override {
    auto* file = out(r);
    if (file == nullptr) return;
    auto& b = file->buffer();
    separator(r, b);
    const char* cat = e.kind == GpuKind::kKernel   ? "kernel"
                      : e.kind == GpuKind::kMemcpy ? "gpu_memcpy"
                                                   : "gpu_memset";
    fmt::format_to(std::back_inserter(b),
                   "  {{\n    \"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, \"tid\": {},\n"
                   "    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {}, ",
                   cat, e.name, r.device, e.stream, Us{e.ts}, Us{e.dur}, e.external_id);
    if (e.kind == GpuKind::kKernel) {
      const KernelShape& k = *e.shape;
      const std::int64_t blocks = k.grid[0] * k.grid[1] * k.grid[2];
      const std::int64_t threads = k.block[0] * k.block[1] * k.block[2];
      const double blocks_per_sm = static_cast<double>(blocks) / sm_count_;
      const double warps_per_sm = blocks_per_sm * static_cast<double>((threads + 31) / 32);
      const int occupancy = static_cast<int>(std::min(100.0, warps_per_sm / 64.0 * 100.0));
      fmt::format_to(
          std::back_inserter(b),
          "\"queued\": 0, \"device\": {}, \"context\": 1, \"stream\": {}, \"correlation\": {}, "
          "\"registers per thread\": {}, \"shared memory\": {}, \"blocks per SM\": {:.6f}, \"warps per SM\": "
          "{:.6f}, \"grid\": [{}, {}, {}], \"block\": [{}, {}, {}], \"est. achieved occupancy %\": {}",
          r.device, e.stream, e.correlation, k.registers, k.shared_bytes, blocks_per_sm, warps_per_sm,
          k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], occupancy);
      if (e.comm != nullptr) {
        const CommMeta& c = *e.comm;
        fmt::format_to(
            std::back_inserter(b),
            ", \"Collective name\": \"{}\", \"In msg nelems\": {}, \"Out msg nelems\": {}, \"In msg size\": "
            "{}, \"Out msg size\": {}, \"Group size\": {}, \"dtype\": \"{}\", \"In split size\": \"[]\", "
            "\"Out split size\": \"[]\", \"Process Group Name\": \"{}\", \"Process Group Description\": "
            "\"{}\", \"Process Group Ranks\": \"{}\", \"Seq\": {}",
            collective_name(c.op), c.in_nelems, c.out_nelems, c.in_nelems * c.elem_bytes,
            c.out_nelems * c.elem_bytes, c.pg->ranks.size(), c.dtype, c.pg->name, c.pg->desc,
            c.pg->ranks_text, c.seq);
      }
    } else {
      const double gbps = e.dur > 0 ? static_cast<double>(e.bytes) / static_cast<double>(e.dur) : 0.0;
      fmt::format_to(std::back_inserter(b),
                     "\"device\": {}, \"context\": 1, \"stream\": {}, \"correlation\": {}, \"bytes\": {}, "
                     "\"memory bandwidth (GB/s)\": {}",
                     r.device, e.stream, e.correlation, e.bytes, gbps);
    }
    // The launch flow: start on the CPU thread at the runtime call, finish on the GPU stream at the activity.
    fmt::format_to(
        std::back_inserter(b),
        "\n    }}\n  }},\n  {{\n    \"ph\": \"s\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {},\n"
        "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }},\n  {{\n    \"ph\": \"f\", \"id\": {}, \"pid\": {}, "
        "\"tid\": {}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }}",
        e.correlation, r.pid, e.launch_tid, Us{e.launch_ts}, e.correlation, r.device, e.stream, Us{e.ts});
    file->maybe_flush();
  }

  void fwdbwd(const RankIdentity& r, std::int64_t id, TimeNs fwd_ts, TimeNs bwd_ts) override {
    auto* file = out(r);
    if (file == nullptr) return;
    auto& b = file->buffer();
    separator(r, b);
    fmt::format_to(
        std::back_inserter(b),
        "  {{\n    \"ph\": \"s\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {},\n    \"cat\": "
        "\"fwdbwd\", "
        "\"name\": \"fwdbwd\"\n  }},\n  {{\n    \"ph\": \"f\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": "
        "{},\n    \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"bp\": \"e\"\n  }}",
        id, r.pid, r.main_tid, Us{fwd_ts}, id, r.pid, r.autograd_tid, Us{bwd_ts});
    file->maybe_flush();
  }

  void finish(const JobInfo& job, const std::vector<TimeNs>& last_ts) override {
    for (std::size_t r = 0; r < files_.size(); ++r) {
      if (!files_[r]) continue;
      write_footer(job, static_cast<int>(r), last_ts[r], files_[r]->buffer());
      files_[r]->close();
    }
  }

  std::uint64_t min_bytes() const override {
    std::uint64_t least = 0;
    bool any = false;
    for (const auto& file : files_) {
      if (!file) continue;
      least = any ? std::min(least, file->bytes()) : file->bytes();
      any = true;
    }
    return least;
  }

 private:
  OutputFile* out(const RankIdentity& r) { return files_[static_cast<std::size_t>(r.rank)].get(); }

  void separator(const RankIdentity& r, fmt::memory_buffer& b) {
    auto&& first = first_[static_cast<std::size_t>(r.rank)];
    if (!first) b.append(std::string_view(",\n"));
    first = false;
  }

  void write_header(const JobInfo& job, int rank, fmt::memory_buffer& b) {
    const Gpu& gpu = *job.gpu;
    const Topology& topo = *job.topology;
    sm_count_ = gpu.sm_count;
    auto o = std::back_inserter(b);
    fmt::format_to(o, "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int d = 0; d < topo.gpus_per_node; ++d) {
      fmt::format_to(
          o,
          "    {{\n      \"id\": {}, \"name\": \"{}\", \"totalGlobalMem\": {},\n      \"computeMajor\": {}, "
          "\"computeMinor\": {},\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": "
          "2048,\n"
          "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": "
          "{}\n"
          "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
          "\"sharedMemPerMultiprocessor\": 233472\n    }}{}\n",
          d, gpu.name, gpu.total_memory, gpu.compute_major, gpu.compute_minor, gpu.sm_count,
          d + 1 < topo.gpus_per_node ? "," : "");
    }
    fmt::format_to(o,
                   "  ],\n  \"cupti_version\": 24,\n  \"cuda_runtime_version\": 12040,\n"
                   "  \"cuda_driver_version\": 12040,\n");
    std::vector<const ProcessGroup*> member;
    for (const auto& pg : topo.groups) {
      for (int m : pg.ranks) {
        if (m == rank) member.push_back(&pg);
      }
    }
    fmt::format_to(
        o,
        "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": {}, "
        "\"pg_config\": [",
        rank, topo.ranks, member.size());
    for (std::size_t i = 0; i < member.size(); ++i) {
      fmt::format_to(
          o,
          "{}{{\"pg_name\": \"{}\", \"pg_desc\": \"{}\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {}, "
          "\"ranks\": {}}}",
          i == 0 ? "" : ", ", member[i]->name, member[i]->desc, member[i]->ranks.size(),
          member[i]->ranks_text);
    }
    fmt::format_to(o, "], \"nccl_version\": \"{}\"}},\n  \"record_shapes\": 0,\n  \"with_stack\": 0,\n",
                   job.nccl_version);
    fmt::format_to(o, "  \"trace_id\": \"{:016X}{:016X}\",\n  \"traceEvents\": [\n",
                   mix_seed(job.seed, 1000 + rank), mix_seed(job.seed, 2000 + rank));
  }

  void write_footer(const JobInfo& job, int rank, TimeNs last_ts, fmt::memory_buffer& b) {
    const RankIdentity& r = job.ranks[static_cast<std::size_t>(rank)];
    const Topology& topo = *job.topology;
    const TimeNs start = job.origin_ts;
    separator(r, b);
    auto o = std::back_inserter(b);
    auto meta = [&](const char* name, auto pid, auto tid, std::string_view args) {
      fmt::format_to(o,
                     "  {{\n    \"name\": \"{}\", \"ph\": \"M\", \"ts\": {}, \"pid\": {}, \"tid\": {},\n    "
                     "\"args\": {{{}}}\n  }},\n",
                     name, Us{start}, pid, tid, args);
    };
    meta("process_name", r.pid, 0, "\"name\": \"python3.11\"");
    meta("process_labels", r.pid, 0, "\"labels\": \"CPU\"");
    meta("process_sort_index", r.pid, 0, fmt::format("\"sort_index\": {}", r.pid));
    for (int d = 0; d < topo.gpus_per_node; ++d) {
      meta("process_name", d, 0, "\"name\": \"python3.11\"");
      meta("process_labels", d, 0, fmt::format("\"labels\": \"GPU {}\"", d));
      meta("process_sort_index", d, 0, fmt::format("\"sort_index\": {}", 16777216 + d));
    }
    for (int s : rank_streams(topo)) {
      meta("thread_name", r.device, s, fmt::format("\"name\": \"stream {} \"", s));
      meta("thread_sort_index", r.device, s, fmt::format("\"sort_index\": {}", s));
    }
    meta("thread_name", r.pid, r.main_tid,
         fmt::format("\"name\": \"thread {} (pt_main_thread)\"", r.main_tid));
    meta("thread_sort_index", r.pid, r.main_tid, fmt::format("\"sort_index\": {}", r.main_tid));
    meta("thread_name", r.pid, r.autograd_tid,
         fmt::format("\"name\": \"thread {} (pt_autograd_0)\"", r.autograd_tid));
    meta("thread_sort_index", r.pid, r.autograd_tid, fmt::format("\"sort_index\": {}", r.autograd_tid));
    fmt::format_to(
        o,
        "  {{\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {}, \"dur\": {},\n    \"pid\": \"Spans\", "
        "\"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {{\n"
        "      \"Op count\": 0\n    }}\n  }},\n",
        Us{start}, Us{last_ts - start});
    fmt::format_to(o,
                   "  {{\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": {}, \"pid\": "
                   "\"Spans\", \"tid\": 0,\n"
                   "    \"args\": {{\n      \"sort_index\": 536870912\n    }}\n  }},\n",
                   Us{start});
    fmt::format_to(o,
                   "  {{\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
                   "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": {}\n  }},\n",
                   Us{start});
    fmt::format_to(o,
                   "  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": "
                   "\"\", \"tid\": "
                   "\"\", \"ts\": {}\n  }}\n],\n",
                   Us{last_ts + 1000});
    fmt::format_to(
        o,
        "  \"traceName\": \"synthetic/meshscope_gen_job/rank-{}.json\",\n  \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": {}\n}}\n",
        rank, job.base_time_ns);
  }

  std::vector<std::filesystem::path> paths_;
  bool gzip_;
  int level_;
  int sm_count_ = 132;
  std::vector<std::unique_ptr<OutputFile>> files_;
  std::vector<bool> first_;
};

// -----------------------------------------------------------------------------------------------------------
// meshscope profile, written directly. Times on the profile clock: Kineto ts + baseTimeNanoseconds.

class MsdbSink final : public Sink {
 public:
  explicit MsdbSink(const std::filesystem::path& target) : writer_(target) {}

  void begin(const JobInfo& job) override {
    base_ = job.base_time_ns;
    cat_cpu_op_ = writer_.intern("cpu_op");
    cat_annotation_ = writer_.intern("user_annotation");
    fwdbwd_ = writer_.intern("fwdbwd");
    writer_.set_meta("source_format", "synthetic");
    writer_.set_meta("generator", job.command_line);
    writer_.set_meta("job_id", fmt::format("synthetic-{}", job.seed));
    const Topology& topo = *job.topology;
    const Gpu& gpu = *job.gpu;
    for (const auto& r : job.ranks) {
      RankInfo info;
      info.rank = r.rank;
      info.world_size = topo.ranks;
      info.pid = r.pid;
      info.source_file = fmt::format("synthetic:rank-{}", r.rank);
      info.rank_source = "distributedInfo";
      info.backend = "nccl";
      info.comm_version = job.nccl_version;
      info.clock_base_ns = job.base_time_ns;
      writer_.set_rank(info);
      for (int d = 0; d < topo.gpus_per_node; ++d) {
        DeviceInfo dev;
        dev.rank = r.rank;
        dev.device = d;
        dev.name = gpu.name;
        dev.total_memory_bytes = gpu.total_memory;
        dev.compute_major = gpu.compute_major;
        dev.compute_minor = gpu.compute_minor;
        dev.sm_count = gpu.sm_count;
        dev.properties_json = fmt::format(
            "{{\"id\": {}, \"name\": \"{}\", \"totalGlobalMem\": {}, \"computeMajor\": {}, \"computeMinor\": "
            "{}, "
            "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, "
            "\"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": {}, \"regsPerMultiprocessor\": "
            "65536, "
            "\"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472}}",
            d, gpu.name, gpu.total_memory, gpu.compute_major, gpu.compute_minor, gpu.sm_count);
        writer_.add_device(dev);
      }
      for (const auto& pg : topo.groups) {
        bool is_member = false;
        for (int m : pg.ranks) is_member = is_member || m == r.rank;
        if (!is_member) continue;
        ProcessGroupInfo info_pg;
        info_pg.rank = r.rank;
        info_pg.pg_name = pg.name;
        info_pg.pg_desc = pg.desc;
        info_pg.backend = "cuda:nccl";
        info_pg.group_size = static_cast<std::int64_t>(pg.ranks.size());
        info_pg.ranks_json = pg.ranks_text;
        writer_.add_process_group(info_pg);
      }
      for (int s : rank_streams(topo)) writer_.add_stream({r.rank, r.device, s, fmt::format("stream {}", s)});
      writer_.add_thread({r.rank, r.pid, r.main_tid, fmt::format("thread {} (pt_main_thread)", r.main_tid)});
      writer_.add_thread(
          {r.rank, r.pid, r.autograd_tid, fmt::format("thread {} (pt_autograd_0)", r.autograd_tid)});
    }
  }

  void cpu(const RankIdentity& r, const CpuEvent& e) override {
    RangeRecord rec;
    rec.rank = r.rank;
    rec.kind = e.cat == Cat::kCpuOp  ? RangeKind::kCpuOp
               : e.cat == Cat::kStep ? RangeKind::kStep
                                     : RangeKind::kAnnotation;
    rec.pid = r.pid;
    rec.tid = e.tid;
    rec.start_ns = base_ + e.ts;
    rec.end_ns = base_ + e.ts + e.dur;
    rec.name = id(e.name);
    rec.external_id = e.external_id;
    rec.step = e.step >= 0 ? e.step : kNull;
    rec.category = e.cat == Cat::kCpuOp ? cat_cpu_op_ : cat_annotation_;
    writer_.add_range(rec);
  }

  void runtime(const RankIdentity& r, const RuntimeEvent& e) override {
    ApiCallRecord rec;
    rec.rank = r.rank;
    rec.kind = ApiKind::kRuntime;
    rec.pid = r.pid;
    rec.tid = e.tid;
    rec.start_ns = base_ + e.ts;
    rec.end_ns = base_ + e.ts + e.dur;
    rec.name = id(e.name);
    rec.correlation = e.correlation;
    rec.external_id = e.external_id;
    rec.cbid = e.cbid;
    writer_.add_api_call(rec);
  }

  void gpu(const RankIdentity& r, const GpuEvent& e) override {
    ActivityRecord rec;
    rec.rank = r.rank;
    rec.kind = e.kind == GpuKind::kKernel   ? ActivityKind::kKernel
               : e.kind == GpuKind::kMemcpy ? ActivityKind::kMemcpy
                                            : ActivityKind::kMemset;
    rec.device = r.device;
    rec.stream = e.stream;
    rec.start_ns = base_ + e.ts;
    rec.end_ns = base_ + e.ts + e.dur;
    rec.name = id(e.name);
    rec.correlation = e.correlation;
    rec.external_id = e.external_id;
    if (e.kind == GpuKind::kKernel) {
      for (int i = 0; i < 3; ++i) {
        rec.grid[i] = e.shape->grid[i];
        rec.block[i] = e.shape->block[i];
      }
      rec.registers = e.shape->registers;
      rec.shared_bytes = e.shape->shared_bytes;
    } else {
      rec.bytes = e.bytes;
      if (e.copy_kind != nullptr) rec.copy_kind = id(e.copy_kind);
    }
    const std::int64_t activity = writer_.add_activity(rec);
    if (e.comm == nullptr) return;
    const CommMeta& c = *e.comm;
    CollectiveRecord col;
    col.rank = r.rank;
    col.activity_id = activity;
    col.communicator = id(c.pg->name);
    col.pg_desc = id(c.pg->desc);
    col.pg_ranks = id(c.pg->ranks_text);
    col.seq = c.seq;
    col.op = id(normalized_op(c.op));
    col.in_nelems = c.in_nelems;
    col.out_nelems = c.out_nelems;
    col.dtype = id(c.dtype);
    col.in_bytes = c.in_nelems * c.elem_bytes;
    col.out_bytes = c.out_nelems * c.elem_bytes;
    col.group_size = static_cast<std::int64_t>(c.pg->ranks.size());
    col.algorithm = id("RING");
    col.protocol = id("LL");
    col.start_ns = rec.start_ns;
    col.end_ns = rec.end_ns;
    col.source = "kernel_args";
    writer_.add_collective(col);
  }

  void fwdbwd(const RankIdentity& r, std::int64_t flow, TimeNs fwd_ts, TimeNs bwd_ts) override {
    FlowRecord rec;
    rec.rank = r.rank;
    rec.category = fwdbwd_;
    rec.flow_id = flow;
    rec.src_ns = base_ + fwd_ts;
    rec.src_pid = r.pid;
    rec.src_tid = r.main_tid;
    rec.dst_ns = base_ + bwd_ts;
    rec.dst_pid = r.pid;
    rec.dst_tid = r.autograd_tid;
    writer_.add_flow(rec);
  }

  void finish(const JobInfo&, const std::vector<TimeNs>&) override { writer_.commit(); }

 private:
  // Names are stable strings, so their address identifies them; the writer interns the text once.
  StringId id(std::string_view text) {
    auto [it, inserted] = ids_.try_emplace(text.data(), kNoString);
    if (inserted) it->second = writer_.intern(text);
    return it->second;
  }

  ProfileWriter writer_;
  std::int64_t base_ = 0;
  StringId cat_cpu_op_ = kNoString, cat_annotation_ = kNoString, fwdbwd_ = kNoString;
  std::unordered_map<const char*, StringId> ids_;
};

}  // namespace meshscope::gen
