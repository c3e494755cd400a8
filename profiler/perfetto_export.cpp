#include "profiler/perfetto_export.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/output_file.hpp"

namespace meshscope {
namespace {

const char* activity_category(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kKernel:
      return "kernel";
    case ActivityKind::kMemcpy:
      return "gpu_memcpy";
    case ActivityKind::kMemset:
      return "gpu_memset";
    case ActivityKind::kSync:
      return "cuda_sync";
  }
  return "kernel";
}

const char* range_category(RangeKind kind) {
  switch (kind) {
    case RangeKind::kCpuOp:
      return "cpu_op";
    case RangeKind::kAnnotation:
    case RangeKind::kStep:
      return "user_annotation";
    case RangeKind::kPythonFunction:
      return "python_function";
    case RangeKind::kGpuAnnotation:
      return "gpu_user_annotation";
    case RangeKind::kNvtx:
      return "nvtx";
    case RangeKind::kOther:
      return "other";
    case RangeKind::kOsRuntime:
      return "os_runtime";
  }
  return "other";
}

class Exporter {
 public:
  Exporter(const Profile& profile, std::FILE* out, const std::filesystem::path& name)
      : profile_(profile), out_(out), name_(name) {
    const TimeNs first = profile.first_ns();
    base_ns_ = first - ((first % 1'000'000'000) + 1'000'000'000) % 1'000'000'000;
  }

  void run() {
    w_.begin_object();
    w_.field("displayTimeUnit", "ns");
    w_.field("baseTimeNanoseconds", base_ns_);
    write_rank_metadata();
    w_.key("traceEvents").begin_array();
    for (const auto& rank : profile_.ranks()) write_rank(rank);
    w_.end_array();
    w_.end_object();
    flush(true);
  }

 private:
  void flush(bool force) {
    auto& buffer = w_.buffer();
    if (!force && buffer.size() < (std::size_t{8} << 20)) return;
    if (std::fwrite(buffer.data(), 1, buffer.size(), out_) != buffer.size())
      fail("{}: cannot write the export: {}", name_.string(), std::strerror(errno));
    buffer.clear();
  }

  // Microseconds relative to the base, with every nanosecond kept: "12.345".
  // (The difference is taken in unsigned 64 bits, where it is exact: a profile's times lie within +-2^62 ns,
  // but the base, a whole second at or before the first of them, may lie up to a second further out.)
  void time_field(const char* key, TimeNs ns) {
    const bool negative = ns < base_ns_;
    const std::uint64_t magnitude =
        negative ? static_cast<std::uint64_t>(base_ns_) - static_cast<std::uint64_t>(ns)
                 : static_cast<std::uint64_t>(ns) - static_cast<std::uint64_t>(base_ns_);
    w_.key(key).raw(fmt::format("{}{}.{:03}", negative ? "-" : "", magnitude / 1000, magnitude % 1000));
  }

  void duration_field(TimeNs ns) { w_.key("dur").raw(fmt::format("{}.{:03}", ns / 1000, ns % 1000)); }

  void write_rank_metadata() {
    w_.key("meshscope").begin_object();
    w_.field("export_version", 1);
    w_.key("ranks").begin_array();
    for (const auto& r : profile_.ranks()) {
      w_.begin_object();
      w_.field("rank", r.rank);
      if (r.world_size != kNull) w_.field("world_size", r.world_size);
      w_.field("source_file", r.source_file);
      w_.field("rank_source", r.rank_source);
      w_.field("hostname", r.hostname);
      w_.field("backend", r.backend);
      w_.field("comm_version", r.comm_version);
      w_.field("clock_base_ns", r.clock_base_ns);
      w_.key("devices").begin_array();
      for (const auto& d : r.devices) {
        w_.begin_object();
        w_.field("id", d.device);
        w_.field("name", d.name);
        if (d.total_memory_bytes != kNull) w_.field("totalGlobalMem", d.total_memory_bytes);
        if (d.compute_major != kNull) w_.field("computeMajor", d.compute_major);
        if (d.compute_minor != kNull) w_.field("computeMinor", d.compute_minor);
        if (d.sm_count != kNull) w_.field("numSms", d.sm_count);
        w_.end_object();
      }
      w_.end_array();
      w_.key("pg_config").begin_array();
      for (const auto& pg : r.process_groups) {
        w_.begin_object();
        w_.field("pg_name", pg.name);
        w_.field("pg_desc", pg.desc);
        w_.field("backend_config", pg.backend);
        if (pg.group_size != kNull) w_.field("pg_size", pg.group_size);
        w_.key("ranks").begin_array();
        for (const auto member : pg.ranks) w_.value(member);
        w_.end_array();
        w_.end_object();
      }
      w_.end_array();
      w_.end_object();
    }
    w_.end_array();
    w_.end_object();
  }

  void metadata_event(const char* name, std::int64_t pid, std::int64_t tid, const char* arg,
                      const std::string& value) {
    w_.begin_object();
    w_.field("ph", "M");
    w_.field("name", name);
    w_.field("pid", pid);
    w_.field("tid", tid);
    w_.key("args").begin_object().field(arg, value).end_object();
    w_.end_object();
  }

  void sort_event(const char* name, std::int64_t pid, std::int64_t tid, std::int64_t index) {
    w_.begin_object();
    w_.field("ph", "M");
    w_.field("name", name);
    w_.field("pid", pid);
    w_.field("tid", tid);
    w_.key("args").begin_object().field("sort_index", index).end_object();
    w_.end_object();
  }

  void write_rank(const Rank& rank) {
    const std::int64_t pid = rank.rank;
    metadata_event("process_name", pid, 0, "name", fmt::format("rank {}", rank.rank));
    sort_event("process_sort_index", pid, 0, rank.rank);
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> stream_tid;
    for (std::size_t i = 0; i < rank.streams.size(); ++i) {
      const auto& s = rank.streams[i];
      const std::int64_t tid = kExportStreamTidBase + static_cast<std::int64_t>(i);
      stream_tid[{s.device, s.stream}] = tid;
      metadata_event("thread_name", pid, tid, "name", fmt::format("GPU {} {}", s.device, s.name));
      sort_event("thread_sort_index", pid, tid, static_cast<std::int64_t>(i));
    }
    for (const auto& t : rank.tracks) {
      if (t.gpu) continue;
      metadata_event("thread_name", pid, t.tid, "name", t.name);
      sort_event("thread_sort_index", pid, t.tid, 1000 + t.tid % 1000000);
    }
    std::unordered_map<std::int64_t, std::pair<std::int64_t, TimeNs>>
        launched;  // correlation -> (tid, start)
    for (std::size_t si = 0; si < rank.streams.size(); ++si) {
      const std::int64_t tid = kExportStreamTidBase + static_cast<std::int64_t>(si);
      const auto& stream = rank.streams[si];
      for (const auto& a : rank.stream_activities(si)) {
        write_activity(rank, stream, a, pid, tid);
        if (a.correlation != kNull) launched.emplace(a.correlation, std::make_pair(tid, a.start_ns));
        flush(false);
      }
    }
    for (const auto& c : rank.api_calls) {
      const CallThread& thread = rank.thread_of(c);
      w_.begin_object();
      w_.field("ph", "X");
      w_.field("cat", c.kind == ApiKind::kDriver ? "cuda_driver" : "cuda_runtime");
      w_.field("name", profile_.str(c.name));
      w_.field("pid", pid);
      w_.field("tid", thread.tid);
      time_field("ts", c.start_ns);
      duration_field(c.end_ns - c.start_ns);
      w_.key("args").begin_object();
      if (c.correlation != kNull) w_.field("correlation", c.correlation);
      if (c.external_id != kNull) w_.field("External id", c.external_id);
      w_.field("pid", thread.pid);
      w_.end_object();
      w_.end_object();
      // The launch flow from the API call to the work it started.
      if (c.correlation != kNull) {
        auto it = launched.find(c.correlation);
        if (it != launched.end()) {
          write_flow_point('s', "ac2g", c.correlation, pid, thread.tid, c.start_ns);
          write_flow_point('f', "ac2g", c.correlation, pid, it->second.first, it->second.second);
        }
      }
      flush(false);
    }
    for (std::size_t ti = 0; ti < rank.tracks.size(); ++ti) {
      const auto& track = rank.tracks[ti];
      std::int64_t tid = track.tid;
      if (track.gpu) {
        auto it = stream_tid.find({track.pid, track.tid});
        tid = it != stream_tid.end() ? it->second
                                     : kExportStreamTidBase + 100000 + static_cast<std::int64_t>(ti);
      }
      for (const auto& r : rank.track_ranges(ti)) {
        w_.begin_object();
        w_.field("ph", "X");
        const std::string& category = profile_.str(r.category);
        w_.field("cat", category.empty() || r.kind == RangeKind::kStep ? range_category(r.kind) : category);
        w_.field("name", profile_.str(r.name));
        w_.field("pid", pid);
        w_.field("tid", tid);
        time_field("ts", r.start_ns);
        duration_field(r.end_ns - r.start_ns);
        w_.key("args").begin_object();
        if (r.external_id != kNull) w_.field("External id", r.external_id);
        if (track.gpu) {
          w_.field("device", track.pid);
          w_.field("stream", track.tid);
        } else {
          w_.field("pid", track.pid);
        }
        w_.end_object();
        w_.end_object();
        flush(false);
      }
    }
    for (const auto& f : rank.flows) {
      const std::string& category = profile_.str(f.category);
      write_flow_point('s', category.c_str(), f.flow_id, pid, f.src_tid, f.src_ns);
      if (f.dst_ns != kNull) write_flow_point('f', category.c_str(), f.flow_id, pid, f.dst_tid, f.dst_ns);
    }
  }

  void write_flow_point(char phase, const char* category, std::int64_t id, std::int64_t pid, std::int64_t tid,
                        TimeNs ts) {
    w_.begin_object();
    w_.field("ph", std::string(1, phase));
    w_.field("cat", category);
    w_.field("name", category);
    w_.field("id", id);
    w_.field("pid", pid);
    w_.field("tid", tid);
    time_field("ts", ts);
    if (phase == 'f') w_.field("bp", "e");
    w_.end_object();
  }

  void write_activity(const Rank& rank, const GpuStream& stream, const Activity& a, std::int64_t pid,
                      std::int64_t tid) {
    w_.begin_object();
    w_.field("ph", "X");
    w_.field("cat", activity_category(a.kind));
    w_.field("name", profile_.str(a.name));
    w_.field("pid", pid);
    w_.field("tid", tid);
    time_field("ts", a.start_ns);
    duration_field(a.end_ns - a.start_ns);
    w_.key("args").begin_object();
    w_.field("device", stream.device);
    w_.field("stream", stream.stream);
    if (a.correlation != kNull) w_.field("correlation", a.correlation);
    if (a.kind == ActivityKind::kKernel && a.detail != kNoDetail) {
      const auto& k = rank.kernels[a.detail];
      if (k.grid[0] >= 0)
        w_.key("grid").begin_array().value(k.grid[0]).value(k.grid[1]).value(k.grid[2]).end_array();
      if (k.block[0] >= 0) {
        w_.key("block").begin_array().value(k.block[0]).value(k.block[1]).value(k.block[2]).end_array();
      }
      if (k.registers >= 0) w_.field("registers per thread", k.registers);
      if (k.shared_bytes >= 0) w_.field("shared memory", k.shared_bytes);
    } else if (a.detail != kNoDetail) {
      const auto& c = rank.copies[a.detail];
      if (c.bytes != kNull) w_.field("bytes", c.bytes);
    }
    if (a.collective >= 0) {
      const auto& c = rank.collectives[static_cast<std::size_t>(a.collective)];
      w_.field("Collective name", profile_.str(c.op));
      if (c.in_nelems != kNull) w_.field("In msg nelems", c.in_nelems);
      if (c.out_nelems != kNull) w_.field("Out msg nelems", c.out_nelems);
      if (c.in_bytes != kNull) w_.field("In msg size", c.in_bytes);
      if (c.out_bytes != kNull) w_.field("Out msg size", c.out_bytes);
      if (c.dtype) w_.field("dtype", profile_.str(c.dtype));
      if (c.group_size != kNull) w_.field("Group size", c.group_size);
      if (c.communicator) w_.field("Process Group Name", profile_.str(c.communicator));
      if (c.pg_desc) w_.field("Process Group Description", profile_.str(c.pg_desc));
      if (c.pg_ranks) w_.field("Process Group Ranks", profile_.str(c.pg_ranks));
      if (c.seq != kNull) w_.field("Seq", c.seq);
      if (c.algorithm) w_.field("algorithm", profile_.str(c.algorithm));
      if (c.protocol) w_.field("protocol", profile_.str(c.protocol));
      if (c.channels != kNull) w_.field("channels", c.channels);
    }
    w_.end_object();
    w_.end_object();
  }

  const Profile& profile_;
  std::FILE* out_;
  const std::filesystem::path& name_;
  JsonWriter w_;
  TimeNs base_ns_ = 0;
};

}  // namespace

void export_perfetto(const Profile& profile, const std::filesystem::path& requested) {
  OutputFile output(requested, {profile.path()});
  std::FILE* out = std::fopen(output.scratch().c_str(), "wbx");
  if (!out) fail("{}: cannot create output file: {}", requested.string(), std::strerror(errno));
  try {
    Exporter(profile, out, requested).run();
  } catch (...) {
    std::fclose(out);
    throw;
  }
  if (std::fclose(out) != 0) fail("{}: cannot write output file", requested.string());
  output.publish();
}

}  // namespace meshscope
