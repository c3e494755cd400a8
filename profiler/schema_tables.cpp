#include "profiler/schema_tables.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace meshscope::schema {
namespace {

// A string id as stored: NULL, or a value no StringId can hold (a damaged file), reads as kNoString.
StringId string_id(const sql::Statement& s, int index) {
  const std::int64_t v = s.column_int(index);
  return v < 0 || v > std::int64_t{UINT32_MAX} ? kNoString : static_cast<StringId>(v);
}

}  // namespace

std::string column_list(std::span<const Column> columns) {
  std::string out;
  for (const Column& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

std::string select_sql(sql::Database& db, std::string_view table, std::span<const Column> columns) {
  const auto present = db.table_columns(table);
  std::string out = "SELECT ";
  for (const Column& c : columns) {
    if (&c != columns.data()) out += ", ";
    out += !present || present->contains(c.name) || c.required ? std::string(c.name)
                                                               : fmt::format("NULL AS {}", c.name);
  }
  return out + " FROM " + std::string(table);
}

std::string insert_sql(std::string_view table, std::span<const Column> columns, int rows,
                       std::string_view verb) {
  std::string row = "(";
  for (std::size_t c = 0; c < columns.size(); ++c) row += c ? ",?" : "?";
  row += ")";
  std::string out = fmt::format("{} INTO {} ({}) VALUES ", verb, table, column_list(columns));
  for (int r = 0; r < rows; ++r) out += (r ? "," : "") + row;
  return out;
}

std::string enums_insert_sql() {
  std::string values;
  auto add = [&values](const char* family, int count, auto kind_of) {
    for (int v = 1; v <= count; ++v) {
      values += fmt::format("{}('{}',{},'{}')", values.empty() ? "" : ",", family, v, to_string(kind_of(v)));
    }
  };
  add("activity_kind", kActivityKindCount, [](int v) { return static_cast<ActivityKind>(v); });
  add("range_kind", kRangeKindCount, [](int v) { return static_cast<RangeKind>(v); });
  add("api_kind", kApiKindCount, [](int v) { return static_cast<ApiKind>(v); });
  add("thread_activity_kind", kThreadActivityKindCount,
      [](int v) { return static_cast<ThreadActivityKind>(v); });
  return "INSERT INTO enums VALUES " + values;
}

void Ranks::bind(sql::Statement& s, int first, const RankInfo& r) {
  s.bind(first + rank, r.rank);
  s.bind(first + world_size, r.world_size);
  s.bind_text(first + hostname, r.hostname);
  s.bind(first + pid, r.pid);
  s.bind_text(first + source_file, r.source_file.empty() ? std::string_view("-") : r.source_file);
  s.bind_text(first + rank_source, r.rank_source.empty() ? std::string_view("unknown") : r.rank_source);
  s.bind_text(first + backend, r.backend);
  s.bind_text(first + comm_version, r.comm_version);
  s.bind(first + clock_base_ns, r.clock_base_ns);
  s.bind(first + clock_offset_ns, r.clock_offset_ns);
  s.bind_null(first + first_ns);
  s.bind_null(first + last_ns);
}

void Devices::bind(sql::Statement& s, int first, const DeviceInfo& d) {
  s.bind(first + rank, d.rank);
  s.bind(first + device, d.device);
  s.bind_text(first + name, d.name);
  s.bind(first + total_memory_bytes, d.total_memory_bytes);
  s.bind(first + compute_major, d.compute_major);
  s.bind(first + compute_minor, d.compute_minor);
  s.bind(first + sm_count, d.sm_count);
  s.bind_text(first + properties_json, d.properties_json);
}

DeviceInfo Devices::read(const sql::Statement& s, int first) {
  DeviceInfo d;
  d.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  d.device = static_cast<std::int32_t>(s.column_int(first + device));
  d.name = s.column_text(first + name);
  d.total_memory_bytes = s.column_int(first + total_memory_bytes);
  d.compute_major = s.column_int(first + compute_major);
  d.compute_minor = s.column_int(first + compute_minor);
  d.sm_count = s.column_int(first + sm_count);
  d.properties_json = s.column_text(first + properties_json);
  return d;
}

void ProcessGroups::bind(sql::Statement& s, int first, const ProcessGroupInfo& p) {
  s.bind(first + rank, p.rank);
  s.bind_text(first + pg_name, p.pg_name.empty() ? std::string_view("?") : p.pg_name);
  s.bind_text(first + pg_desc, p.pg_desc);
  s.bind_text(first + backend, p.backend);
  s.bind(first + group_size, p.group_size);
  s.bind_text(first + ranks_json, p.ranks_json);
}

ProcessGroupInfo ProcessGroups::read(const sql::Statement& s, int first) {
  ProcessGroupInfo p;
  p.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  p.pg_name = s.column_text(first + pg_name);
  p.pg_desc = s.column_text(first + pg_desc);
  p.backend = s.column_text(first + backend);
  p.group_size = s.column_int(first + group_size);
  p.ranks_json = s.column_text(first + ranks_json);
  return p;
}

void Streams::bind(sql::Statement& s, int first, const StreamInfo& st) {
  s.bind(first + rank, st.rank);
  s.bind(first + device, st.device);
  s.bind(first + stream, st.stream);
  s.bind_text(first + name, st.name);
}

StreamInfo Streams::read(const sql::Statement& s, int first) {
  return {static_cast<std::int32_t>(s.column_int(first + rank)),
          static_cast<std::int32_t>(s.column_int(first + device)), s.column_int(first + stream),
          s.column_text(first + name)};
}

void Threads::bind(sql::Statement& s, int first, const ThreadInfo& t) {
  s.bind(first + rank, t.rank);
  s.bind(first + pid, t.pid);
  s.bind(first + tid, t.tid);
  s.bind_text(first + name, t.name);
}

ThreadInfo Threads::read(const sql::Statement& s, int first) {
  return {static_cast<std::int32_t>(s.column_int(first + rank)), s.column_int(first + pid),
          s.column_int(first + tid), s.column_text(first + name)};
}

void Activities::bind(sql::Statement& s, int first, std::int64_t row_id, const ActivityRecord& a) {
  s.bind(first + id, row_id);
  s.bind(first + rank, a.rank);
  s.bind(first + kind, static_cast<int>(a.kind));
  s.bind(first + device, a.device);
  s.bind(first + stream, a.stream);
  s.bind(first + start_ns, a.start_ns);
  s.bind(first + end_ns, a.end_ns);
  s.bind_string_id(first + name, a.name);
  s.bind(first + correlation, a.correlation);
  s.bind(first + external_id, a.external_id);
  for (int i = 0; i < 3; ++i) s.bind(first + grid_x + i, a.grid[i]);
  for (int i = 0; i < 3; ++i) s.bind(first + block_x + i, a.block[i]);
  s.bind(first + registers, a.registers);
  s.bind(first + shared_bytes, a.shared_bytes);
  s.bind(first + bytes, a.bytes);
  s.bind_string_id(first + copy_kind, a.copy_kind);
  s.bind(first + graph_id, a.graph_id);
}

ActivityRecord Activities::read(const sql::Statement& s, int first, std::int64_t& row_id) {
  ActivityRecord a;
  row_id = s.column_int(first + id);
  a.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  a.kind = static_cast<ActivityKind>(s.column_int(first + kind));
  a.device = static_cast<std::int32_t>(s.column_int(first + device));
  a.stream = s.column_int(first + stream);
  a.start_ns = s.column_int(first + start_ns);
  a.end_ns = s.column_int(first + end_ns);
  a.name = string_id(s, first + name);
  a.correlation = s.column_int(first + correlation);
  a.external_id = s.column_int(first + external_id);
  for (int i = 0; i < 3; ++i) a.grid[i] = s.column_int(first + grid_x + i);
  for (int i = 0; i < 3; ++i) a.block[i] = s.column_int(first + block_x + i);
  a.registers = s.column_int(first + registers);
  a.shared_bytes = s.column_int(first + shared_bytes);
  a.bytes = s.column_int(first + bytes);
  a.copy_kind = string_id(s, first + copy_kind);
  a.graph_id = s.column_int(first + graph_id);
  return a;
}

void Collectives::bind_metadata(sql::Statement& s, int first, const CollectiveRecord& c) {
  s.bind_string_id(first + communicator, c.communicator);
  s.bind_string_id(first + pg_desc, c.pg_desc);
  s.bind_string_id(first + pg_ranks, c.pg_ranks);
  s.bind(first + seq, c.seq);
  s.bind_string_id(first + op, c.op);
  s.bind(first + in_nelems, c.in_nelems);
  s.bind(first + out_nelems, c.out_nelems);
  s.bind_string_id(first + dtype, c.dtype);
  s.bind(first + in_bytes, c.in_bytes);
  s.bind(first + out_bytes, c.out_bytes);
  s.bind(first + group_size, c.group_size);
  s.bind_string_id(first + algorithm, c.algorithm);
  s.bind_string_id(first + protocol, c.protocol);
  s.bind(first + channels, c.channels);
  s.bind_text(first + source, c.source ? c.source : "");
}

void Collectives::bind(sql::Statement& s, int first, std::int64_t row_id, const CollectiveRecord& c) {
  s.bind(first + id, row_id);
  s.bind(first + rank, c.rank);
  s.bind(first + activity_id, c.activity_id);
  bind_metadata(s, first, c);
  s.bind(first + start_ns, c.start_ns);
  s.bind(first + end_ns, c.end_ns);
}

void ApiCalls::bind(sql::Statement& s, int first, const ApiCallRecord& a) {
  s.bind_null(first + id);
  s.bind(first + rank, a.rank);
  s.bind(first + kind, static_cast<int>(a.kind));
  s.bind(first + pid, a.pid);
  s.bind(first + tid, a.tid);
  s.bind(first + start_ns, a.start_ns);
  s.bind(first + end_ns, a.end_ns);
  s.bind_string_id(first + name, a.name);
  s.bind(first + correlation, a.correlation);
  s.bind(first + external_id, a.external_id);
  s.bind(first + cbid, a.cbid);
}

ApiCallRecord ApiCalls::read(const sql::Statement& s, int first) {
  ApiCallRecord a;
  a.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  a.kind = static_cast<ApiKind>(s.column_int(first + kind));
  a.pid = s.column_int(first + pid);
  a.tid = s.column_int(first + tid);
  a.start_ns = s.column_int(first + start_ns);
  a.end_ns = s.column_int(first + end_ns);
  a.name = string_id(s, first + name);
  a.correlation = s.column_int(first + correlation);
  a.external_id = s.column_int(first + external_id);
  a.cbid = s.column_int(first + cbid);
  return a;
}

void Ranges::bind(sql::Statement& s, int first, std::int64_t row_id, std::int64_t depth_value,
                  std::int64_t parent, const RangeRecord& r) {
  s.bind(first + id, row_id);
  s.bind(first + rank, r.rank);
  s.bind(first + kind, static_cast<int>(r.kind));
  s.bind(first + pid, r.pid);
  s.bind(first + tid, r.tid);
  s.bind(first + start_ns, r.start_ns);
  s.bind(first + end_ns, r.end_ns);
  s.bind_string_id(first + name, r.name);
  s.bind(first + depth, depth_value);
  s.bind(first + parent_id, parent);
  s.bind(first + external_id, r.external_id);
  s.bind(first + step, r.step);
  s.bind_string_id(first + category, r.category);
  s.bind_string_id(first + input_dims, r.input_dims);
  s.bind_string_id(first + input_types, r.input_types);
}

RangeRecord Ranges::read(const sql::Statement& s, int first) {
  RangeRecord r;
  r.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  r.kind = static_cast<RangeKind>(s.column_int(first + kind));
  r.pid = s.column_int(first + pid);
  r.tid = s.column_int(first + tid);
  r.start_ns = s.column_int(first + start_ns);
  r.end_ns = s.column_int(first + end_ns);
  r.name = string_id(s, first + name);
  r.external_id = s.column_int(first + external_id);
  r.step = s.column_int(first + step);
  r.category = string_id(s, first + category);
  r.input_dims = string_id(s, first + input_dims);
  r.input_types = string_id(s, first + input_types);
  return r;
}

void Flows::bind(sql::Statement& s, int first, const FlowRecord& f) {
  s.bind_null(first + id);
  s.bind(first + rank, f.rank);
  s.bind_string_id(first + category, f.category);
  s.bind(first + flow_id, f.flow_id);
  s.bind(first + src_ns, f.src_ns);
  s.bind(first + src_pid, f.src_pid);
  s.bind(first + src_tid, f.src_tid);
  s.bind(first + dst_ns, f.dst_ns);
  s.bind(first + dst_pid, f.dst_pid);
  s.bind(first + dst_tid, f.dst_tid);
}

FlowRecord Flows::read(const sql::Statement& s, int first) {
  FlowRecord f;
  f.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  f.category = string_id(s, first + category);
  f.flow_id = s.column_int(first + flow_id);
  f.src_ns = s.column_int(first + src_ns);
  f.src_pid = s.column_int(first + src_pid);
  f.src_tid = s.column_int(first + src_tid);
  f.dst_ns = s.column_int(first + dst_ns);
  f.dst_pid = s.column_int(first + dst_pid);
  f.dst_tid = s.column_int(first + dst_tid);
  return f;
}

void OpWork::bind(sql::Statement& s, int first, const OpWorkRecord& w) {
  s.bind(first + id, w.id);
  s.bind(first + rank, w.rank);
  s.bind(first + external_id, w.external_id);
  s.bind(first + pid, w.pid);
  s.bind(first + tid, w.tid);
  s.bind(first + start_ns, w.start_ns);
  s.bind_string_id(first + name, w.name);
  s.bind(first + status, static_cast<std::int64_t>(w.status));
  s.bind(first + category, w.category);
  if (w.category != kNull) {
    s.bind_double(first + flops, w.flops);
    s.bind_double(first + bytes, w.bytes);
  } else {
    s.bind_null(first + flops);
    s.bind_null(first + bytes);
  }
  s.bind_string_id(first + input_dims, w.input_dims);
  s.bind_string_id(first + input_types, w.input_types);
  s.bind(first + kernels, w.kernels);
  s.bind(first + kernel_ns, w.kernel_ns);
}

OpWorkRecord OpWork::read(const sql::Statement& s, int first) {
  OpWorkRecord w;
  w.id = s.column_int(first + id);
  w.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  w.external_id = s.column_int(first + external_id);
  w.pid = s.column_int(first + pid);
  w.tid = s.column_int(first + tid);
  w.start_ns = s.column_int(first + start_ns);
  w.name = string_id(s, first + name);
  w.status = static_cast<OpWorkStatus>(s.column_int(first + status));
  w.category = s.column_int(first + category);
  if (w.category != kNull) {
    w.flops = s.column_double(first + flops);
    w.bytes = s.column_double(first + bytes);
  }
  w.input_dims = string_id(s, first + input_dims);
  w.input_types = string_id(s, first + input_types);
  w.kernels = s.column_int(first + kernels);
  w.kernel_ns = s.column_int(first + kernel_ns);
  return w;
}

KernelWorkRecord KernelWork::read(const sql::Statement& s, int first) {
  KernelWorkRecord k;
  k.activity_id = s.column_int(first + activity_id);
  k.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  k.op_id = s.column_int(first + op_id);
  k.flops = s.column_double(first + flops);
  k.bytes = s.column_double(first + bytes);
  return k;
}

void KernelWork::bind(sql::Statement& s, int first, const KernelWorkRecord& k) {
  s.bind(first + activity_id, k.activity_id);
  s.bind(first + rank, k.rank);
  s.bind(first + op_id, k.op_id);
  s.bind_double(first + flops, k.flops);
  s.bind_double(first + bytes, k.bytes);
}

void ThreadActivity::bind(sql::Statement& s, int first, const ThreadActivityRecord& a) {
  s.bind_null(first + id);
  s.bind(first + rank, a.rank);
  s.bind(first + kind, static_cast<std::int64_t>(a.kind));
  s.bind(first + pid, a.pid);
  s.bind(first + tid, a.tid);
  s.bind(first + start_ns, a.start_ns);
  s.bind(first + end_ns, a.end_ns);
  s.bind(first + cpu, a.cpu);
  s.bind_string_id(first + stack, a.stack);
}

ThreadActivityRecord ThreadActivity::read(const sql::Statement& s, int first) {
  ThreadActivityRecord a;
  a.rank = static_cast<std::int32_t>(s.column_int(first + rank));
  a.kind = static_cast<ThreadActivityKind>(s.column_int(first + kind));
  a.pid = s.column_int(first + pid);
  a.tid = s.column_int(first + tid);
  a.start_ns = s.column_int(first + start_ns);
  a.end_ns = s.column_int(first + end_ns);
  a.cpu = s.column_int(first + cpu);
  a.stack = string_id(s, first + stack);
  return a;
}

std::span<const TableDescription> all_tables() {
  return declared::kAllTables;
}

const TableDescription* find_table(std::string_view name) {
  for (const TableDescription& t : declared::kAllTables) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace meshscope::schema
