// libFuzzer harness: `record`'s merge of per-rank profiles, then Profile::load on the job profile it wrote.
// Three per-rank files are written at start as the NCCL collector writes them (ranks 0-2, string tables
// numbered differently, sends and receives on NCCL kernels, nested ranges, a flow); each input is SQL run on
// copies of them by their author, split on the byte 0x01 into one script per file. Findings: a crash, a
// sanitizer report, a timeout, or a merged profile that does not load.
#include <cstdint>
#include <string_view>
#include <vector>

#include "profiler/profile_writer.hpp"
#include "profiler/record/merge.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

void write_rank(const fuzz::fs::path& path, std::int32_t rank) {
  WriterOptions options;
  options.background = false;
  ProfileWriter writer(path, options);
  RankInfo info;
  info.rank = rank;
  info.world_size = 3;
  info.hostname = rank == 2 ? "b" : "a";
  info.source_file = path.filename().string();
  info.rank_source = "recorded:RANK";
  writer.set_rank(info);
  for (int i = 0; i < rank; ++i) writer.intern("padding " + std::to_string(i));
  const StringId kernel = writer.intern("ncclDevKernel_SendRecv");
  for (int i = 0; i < 6; ++i) {
    ActivityRecord a;
    a.rank = rank;
    a.stream = 9;
    a.start_ns = 1'000'000 + i * 1000 + rank * 7;
    a.end_ns = a.start_ns + 500;
    a.name = kernel;
    const std::int64_t id = writer.add_activity(a);
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = i % 2 ? id : kNull;
    c.op = writer.intern(i % 2 ? "send" : "recv");
    c.communicator = writer.intern("world");
    c.seq = i;
    c.in_bytes = 4096;
    c.group_size = 3;
    c.start_ns = a.start_ns;
    c.end_ns = a.end_ns;
    c.source = "nccl_plugin";
    writer.add_collective(c);
    RangeRecord r;
    r.rank = rank;
    r.kind = i % 3 ? RangeKind::kNvtx : RangeKind::kStep;
    r.pid = 10;
    r.tid = 11;
    r.start_ns = a.start_ns - 100;
    r.end_ns = a.end_ns + (i % 2 ? 600 : 100);
    r.step = i;
    r.name = writer.intern(i % 3 ? "forward" : "ProfilerStep#" + std::to_string(i));
    writer.add_range(r);
  }
  FlowRecord f;
  f.rank = rank;
  f.category = writer.intern("fwdbwd");
  f.flow_id = 1;
  f.src_ns = 1'000'100;
  f.dst_ns = 1'002'000;
  writer.add_flow(f);
  ProcessGroupInfo pg{rank, "world", "default_pg", "nccl", 3, "[0, 1, 2]"};
  writer.add_process_group(pg);
  writer.commit();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  static const std::vector<fuzz::fs::path> seeds = [] {
    std::vector<fuzz::fs::path> paths;
    for (std::int32_t rank = 0; rank < 3; ++rank) {
      paths.push_back(fuzz::scratch() / ("seed" + std::to_string(rank) + ".msdb"));
      write_rank(paths.back(), rank);
    }
    return paths;
  }();
  const fuzz::fs::path dir = fuzz::scratch() / "job";
  const std::vector<fuzz::fs::path> files = fuzz::seed_copies_changed_by(
      seeds, dir, data, size, [](std::size_t i) { return "rank" + std::to_string(i) + ".nccl.1.msdb"; });
  try {
    record::merge_rank_profiles(files, dir / "job.msdb");
  } catch (const Error&) {
    return 0;
  }
  fuzz::must_load(dir / "job.msdb");
  return 0;
}
