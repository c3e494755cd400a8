// Field-by-field comparison of loaded ranks, for the tests of the ways a profile loads (whole, in slices,
// rank by rank).
#pragma once

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope {

inline auto key(const Activity& a) {
  return std::tie(a.start_ns, a.end_ns, a.id, a.correlation, a.name, a.collective, a.detail, a.kind);
}
inline auto key(const KernelDetail& k) {
  return std::tuple(k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers,
                    k.shared_bytes, k.graph_id);
}
inline auto key(const CopyDetail& c) {
  return std::tie(c.bytes, c.copy_kind);
}
inline auto key(const GpuStream& s) {
  return std::tie(s.device, s.stream, s.name, s.first, s.count);
}
inline auto key(const Collective& c) {
  return std::tie(c.id, c.activity_id, c.stream_index, c.activity, c.communicator, c.seq, c.op, c.in_bytes,
                  c.out_bytes, c.group_size, c.start_ns, c.end_ns, c.source);
}
inline auto key(const ApiCall& a) {
  return std::tie(a.start_ns, a.end_ns, a.thread, a.correlation, a.external_id, a.name, a.kind);
}
inline auto key(const CpuRange& r) {
  return std::tie(r.start_ns, r.end_ns, r.id, r.external_id, r.name, r.category, r.depth, r.kind);
}
inline auto key(const CpuTrack& t) {
  return std::tie(t.pid, t.tid, t.name, t.gpu, t.first, t.count, t.max_depth);
}
inline auto key(const Step& s) {
  return std::tie(s.number, s.start_ns, s.end_ns, s.pid, s.tid, s.range_id, s.source);
}
inline auto key(const CallThread& t) {
  return std::tie(t.pid, t.tid);
}
inline auto key(const OsThread& t) {
  return std::tie(t.pid, t.tid, t.name, t.first_on_cpu, t.on_cpu_count, t.first_sample, t.sample_count);
}
inline auto key(const OnCpu& r) {
  return std::tie(r.start_ns, r.end_ns, r.cpu);
}
inline auto key(const CpuSample& s) {
  return std::tie(s.time_ns, s.stack, s.cpu);
}
inline auto key(const Flow& f) {
  return std::tie(f.category, f.flow_id, f.src_ns, f.src_pid, f.src_tid, f.dst_ns, f.dst_pid, f.dst_tid);
}

template <typename T>
inline void expect_same(const std::vector<T>& whole, const std::vector<T>& sliced, const char* what,
                        std::int32_t rank) {
  ASSERT_EQ(whole.size(), sliced.size()) << what << " of rank " << rank;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    ASSERT_TRUE(key(whole[i]) == key(sliced[i])) << what << " " << i << " of rank " << rank;
  }
}

// Every event list of two loads of the same rank.
inline void expect_same_rank(const Rank& a, const Rank& b) {
  ASSERT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.gpu_first_ns, b.gpu_first_ns);
  EXPECT_EQ(a.gpu_last_ns, b.gpu_last_ns);
  expect_same(a.streams, b.streams, "stream", a.rank);
  expect_same(a.activities, b.activities, "activity", a.rank);
  expect_same(a.kernels, b.kernels, "kernel detail", a.rank);
  expect_same(a.copies, b.copies, "copy detail", a.rank);
  expect_same(a.collectives, b.collectives, "collective", a.rank);
  expect_same(a.api_calls, b.api_calls, "API call", a.rank);
  expect_same(a.call_threads, b.call_threads, "API call thread", a.rank);
  expect_same(a.tracks, b.tracks, "track", a.rank);
  expect_same(a.ranges, b.ranges, "range", a.rank);
  expect_same(a.steps, b.steps, "step", a.rank);
  expect_same(a.flows, b.flows, "flow", a.rank);
  expect_same(a.os_threads, b.os_threads, "OS thread", a.rank);
  expect_same(a.on_cpu, b.on_cpu, "run on a core", a.rank);
  expect_same(a.cpu_samples, b.cpu_samples, "CPU sample", a.rank);
}

}  // namespace meshscope
