#include "collectors/import/record_buffer.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "profiler/error.hpp"
#include "profiler/vocabulary.hpp"
#include "profiler/writer/range_nesting.hpp"

namespace meshscope::import {

StringId RecordBuffer::intern(std::string_view text) {
  if (text.empty()) return kNoString;
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<StringId>(texts_.size() + 1);
  it = ids_.emplace(std::string(text), id).first;
  texts_.push_back(&it->first);
  return id;
}

std::int64_t RecordBuffer::add_activity(const ActivityRecord& record) {
  activities_.push_back(record);
  return static_cast<std::int64_t>(activities_.size());
}

void RecordBuffer::add_collective(const CollectiveRecord& record) {
  collectives_.push_back(record);
}

void RecordBuffer::add_api_call(const ApiCallRecord& record) {
  api_calls_.push_back(record);
}

void RecordBuffer::add_range(const RangeRecord& record) {
  ranges_.push_back(record);
}

std::int64_t RecordBuffer::add_op_work(const OpWorkRecord& record) {
  op_work_.push_back(record);
  return static_cast<std::int64_t>(op_work_.size());
}

void RecordBuffer::add_kernel_work(const KernelWorkRecord& record) {
  kernel_work_.push_back(record);
}

void RecordBuffer::add_flow(const FlowRecord& record) {
  flows_.push_back(record);
}

void RecordBuffer::add_thread_activity(const ThreadActivityRecord& record) {
  thread_activity_.push_back(record);
}

void RecordBuffer::add_cpu_collective(const CollectiveRecord& record, std::int64_t pid, std::int64_t tid) {
  cpu_collectives_.push_back({record, pid, tid});
}

void RecordBuffer::rewrite_rank(std::int32_t old_rank, std::int32_t new_rank, std::int64_t shift_ns) {
  rewrites_.push_back({old_rank, new_rank, shift_ns});
}

void RecordBuffer::add_device(const DeviceInfo& info) {
  devices_.push_back(info);
}

void RecordBuffer::add_process_group(const ProcessGroupInfo& info) {
  process_groups_.push_back(info);
}

void RecordBuffer::add_stream(const StreamInfo& info) {
  streams_.push_back(info);
}

void RecordBuffer::add_thread(const ThreadInfo& info) {
  threads_.push_back(info);
}

void RecordBuffer::add_diagnostic(std::int32_t rank, std::string_view severity, std::string_view message) {
  diagnostics_.push_back({rank, std::string(severity), std::string(message)});
}

void RecordBuffer::nest_ranges() {
  writer::nest_ranges(ranges_, range_depth_, range_parent_);
  nested_ = true;
}

void RecordBuffer::resolve_cpu_collectives() {
  if (cpu_collectives_.empty()) return;
  using Thread = std::tuple<std::int32_t, std::int64_t, std::int64_t>;
  // API calls with a correlation id per thread, by start (then as they came): the order of the index
  // api_calls_by_thread (rank, pid, tid, start_ns) the writer queries.
  std::map<Thread, std::vector<std::pair<TimeNs, std::int64_t>>> calls;
  for (const auto& c : api_calls_) {
    if (c.correlation != kNull) calls[{c.rank, c.pid, c.tid}].emplace_back(c.start_ns, c.correlation);
  }
  for (auto& [thread, list] : calls) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // Kernels by (rank, correlation), in id order.
  std::map<std::pair<std::int32_t, std::int64_t>, std::vector<std::int64_t>> kernels;
  for (std::size_t i = 0; i < activities_.size(); ++i) {
    const auto& a = activities_[i];
    if (a.kind == ActivityKind::kKernel && a.correlation != kNull)
      kernels[{a.rank, a.correlation}].push_back(static_cast<std::int64_t>(i) + 1);
  }
  // Kernels that have a collective: its index in collectives_ (-1: one resolved here), and whether it is
  // known by the kernel's name only (it then takes the CPU side's metadata).
  std::unordered_map<std::int64_t, std::pair<std::int64_t, bool>> existing;
  for (std::size_t i = 0; i < collectives_.size(); ++i) {
    const auto& c = collectives_[i];
    if (c.activity_id != kNull)
      existing[c.activity_id] = {static_cast<std::int64_t>(i),
                                 std::string_view(c.source) == vocabulary::kNameOnlySource};
  }
  for (const auto& [c, pid, tid] : cpu_collectives_) {
    bool launched = false;
    std::vector<std::int64_t> correlations;
    if (const auto it = calls.find({c.rank, pid, tid}); it != calls.end()) {
      const auto& list = it->second;
      auto call = std::lower_bound(list.begin(), list.end(), c.start_ns,
                                   [](const auto& entry, TimeNs t) { return entry.first < t; });
      for (; call != list.end() && call->first <= c.end_ns; ++call) correlations.push_back(call->second);
    }
    for (const auto correlation : correlations) {
      const auto found = kernels.find({c.rank, correlation});
      if (found == kernels.end()) continue;
      for (const std::int64_t activity : found->second) {
        launched = true;
        auto it = existing.find(activity);
        if (it != existing.end() && !it->second.second) continue;
        if (it != existing.end()) {  // known by name only: the CPU side's metadata, as the writer's UPDATE
          CollectiveRecord& row = collectives_[static_cast<std::size_t>(it->second.first)];
          row.communicator = c.communicator;
          row.pg_desc = c.pg_desc;
          row.pg_ranks = c.pg_ranks;
          row.seq = c.seq;
          row.op = c.op;
          row.in_nelems = c.in_nelems;
          row.out_nelems = c.out_nelems;
          row.dtype = c.dtype;
          row.in_bytes = c.in_bytes;
          row.out_bytes = c.out_bytes;
          row.group_size = c.group_size;
          row.channels = c.channels;
          row.source = c.source ? c.source : "cpu_op";
          it->second.second = false;
          continue;
        }
        CollectiveRecord on_gpu = c;
        on_gpu.activity_id = activity;
        on_gpu.start_ns = activities_[static_cast<std::size_t>(activity - 1)].start_ns;
        on_gpu.end_ns = activities_[static_cast<std::size_t>(activity - 1)].end_ns;
        resolved_collectives_.push_back(on_gpu);
        existing[activity] = {-1, false};
      }
    }
    if (!launched) resolved_collectives_.push_back(c);  // CPU-only (e.g. gloo): keep the CPU times
  }
  cpu_collectives_.clear();
}

std::optional<RankRecords> RecordBuffer::rank_records(const RankInfo& info) const {
  if (!nested_ || !cpu_collectives_.empty() || !rewrites_.empty()) return std::nullopt;
  auto of_rank = [&](const auto& rows) {
    return std::all_of(rows.begin(), rows.end(), [&](const auto& row) { return row.rank == info.rank; });
  };
  if (!of_rank(activities_) || !of_rank(collectives_) || !of_rank(resolved_collectives_) ||
      !of_rank(api_calls_) || !of_rank(ranges_) || !of_rank(flows_) || !of_rank(thread_activity_) ||
      !of_rank(devices_) || !of_rank(process_groups_) || !of_rank(streams_) || !of_rank(threads_))
    return std::nullopt;
  RankRecords out;
  out.info = info;
  out.strings = texts_;
  out.activities = activities_;
  out.api_calls = api_calls_;
  out.ranges = ranges_;
  out.range_depths = range_depth_;
  out.collectives = collectives_;
  out.resolved_collectives = resolved_collectives_;
  out.flows = flows_;
  out.devices = devices_;
  out.process_groups = process_groups_;
  out.streams = streams_;
  out.threads = threads_;
  return out;
}

void RecordBuffer::replay(ProfileWriter& writer) {
  // Strings first, in the order the file first used them: the writer numbers new ones in that order, as it
  // would have while the file was read.
  std::vector<StringId> string_id(texts_.size() + 1, kNoString);
  for (std::size_t i = 0; i < texts_.size(); ++i) string_id[i + 1] = writer.intern(*texts_[i]);
  auto s = [&](StringId local) { return string_id[local]; };
  auto collective = [&](CollectiveRecord c, std::int64_t activity_base) {
    c.communicator = s(c.communicator);
    c.pg_desc = s(c.pg_desc);
    c.pg_ranks = s(c.pg_ranks);
    c.op = s(c.op);
    c.dtype = s(c.dtype);
    c.algorithm = s(c.algorithm);
    c.protocol = s(c.protocol);
    if (c.activity_id != kNull) c.activity_id += activity_base;
    return c;
  };
  // The writer numbers activities and operators consecutively: the buffer's id N becomes BASE + N.
  std::int64_t activity_base = 0;
  for (std::size_t i = 0; i < activities_.size(); ++i) {
    ActivityRecord a = activities_[i];
    a.name = s(a.name);
    a.copy_kind = s(a.copy_kind);
    const std::int64_t id = writer.add_activity(a);
    if (i == 0) activity_base = id - 1;
    if (id != activity_base + static_cast<std::int64_t>(i) + 1)
      fail("{}: activity ids are not consecutive (internal error)", writer.target().string());
  }
  std::int64_t op_base = 0;
  for (std::size_t i = 0; i < op_work_.size(); ++i) {
    OpWorkRecord w = op_work_[i];
    w.name = s(w.name);
    w.input_dims = s(w.input_dims);
    w.input_types = s(w.input_types);
    const std::int64_t id = writer.add_op_work(w);
    if (i == 0) op_base = id - 1;
    if (id != op_base + static_cast<std::int64_t>(i) + 1)
      fail("{}: operator ids are not consecutive (internal error)", writer.target().string());
  }
  for (KernelWorkRecord k : kernel_work_) {
    k.activity_id += activity_base;
    k.op_id += op_base;
    writer.add_kernel_work(k);
  }
  for (const auto& c : collectives_) writer.add_collective(collective(c, activity_base));
  for (const auto& c : cpu_collectives_)
    writer.add_cpu_collective(collective(c.record, activity_base), c.pid, c.tid);
  for (const auto& c : resolved_collectives_) writer.add_resolved_collective(collective(c, activity_base));
  for (ApiCallRecord c : api_calls_) {
    c.name = s(c.name);
    writer.add_api_call(c);
  }
  for (RangeRecord& r : ranges_) {
    r.name = s(r.name);
    r.category = s(r.category);
    r.input_dims = s(r.input_dims);
    r.input_types = s(r.input_types);
    if (!nested_) writer.add_range(r);
  }
  if (nested_) writer.add_nested_ranges(ranges_, range_depth_, range_parent_);
  for (FlowRecord f : flows_) {
    f.category = s(f.category);
    writer.add_flow(f);
  }
  for (ThreadActivityRecord a : thread_activity_) {
    a.stack = s(a.stack);
    writer.add_thread_activity(a);
  }
  for (const auto& r : rewrites_) writer.rewrite_rank(r.old_rank, r.new_rank, r.shift_ns);
  for (const auto& d : devices_) writer.add_device(d);
  for (const auto& p : process_groups_) writer.add_process_group(p);
  for (const auto& st : streams_) writer.add_stream(st);
  for (const auto& t : threads_) writer.add_thread(t);
  for (const auto& d : diagnostics_) writer.add_diagnostic(d.rank, d.severity, d.message);
}

}  // namespace meshscope::import
