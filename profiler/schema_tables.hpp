// The tables of schema.sql as C++ reads and writes them: one description per table (its name and columns, in
// schema order, with the declared type and whether Profile::load refuses a profile without the column), plus
// the one place that binds a record to those columns and reads it back. The ProfileWriter builds its INSERT
// statements from these, the merge of rank profiles its SELECTs, and Profile::load its checked reads, each
// addressing a column by name (Activities::start_ns), never by a number spelled out by hand.
// schema.sql stays the documentation and the DDL; tests/profiler/schema_tables_test.cpp checks that every
// table there is described here column for column, and that the enums table holds what to_string() says.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "profiler/records.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::schema {

struct Column {
  const char* name;
  sql::Affinity affinity;
  // Profile::load refuses a profile whose table lacks it; an optional column a profile lacks reads as NULL
  // (profiles of another schema version load what meshscope knows).
  bool required;
};

namespace detail {
constexpr Column integer(const char* name) {
  return {name, sql::Affinity::kInteger, true};
}
constexpr Column optional_integer(const char* name) {
  return {name, sql::Affinity::kInteger, false};
}
constexpr Column text(const char* name) {
  return {name, sql::Affinity::kText, true};
}
constexpr Column optional_text(const char* name) {
  return {name, sql::Affinity::kText, false};
}
constexpr Column optional_real(const char* name) {
  return {name, sql::Affinity::kReal, false};
}
}  // namespace detail

// "a, b, c" for COLUMNS.
std::string column_list(std::span<const Column> columns);
// The INSERT statement for TABLE with VERB ("INSERT", "INSERT OR REPLACE") and ROWS rows of bound parameters
// (a `?` per column in each), so that ROWS records are bound and inserted by one statement.
std::string insert_sql(std::string_view table, std::span<const Column> columns, int rows = 1,
                       std::string_view verb = "INSERT");
template <typename Table>
std::string insert_sql(int rows = 1, std::string_view verb = "INSERT") {
  return insert_sql(Table::kName, Table::kColumns, rows, verb);
}
// "SELECT columns FROM TABLE".
template <typename Table>
std::string select_sql() {
  return "SELECT " + column_list(Table::kColumns) + " FROM " + Table::kName;
}
// The same for TABLE as DB has it: NULL in place of each optional column it lacks (a file written before the
// column was added), so that its rows read as Table::read expects.
std::string select_sql(sql::Database& db, std::string_view table, std::span<const Column> columns);
template <typename Table>
std::string select_sql(sql::Database& db) {
  return select_sql(db, Table::kName, Table::kColumns);
}

// The rows of the enums table, from to_string() of each kind: "INSERT INTO enums VALUES (...), ...".
std::string enums_insert_sql();

struct Meta {
  static constexpr const char* kName = "meta";
  enum Index : int { key, value, kCount };
  static constexpr Column kColumns[] = {detail::text("key"), detail::text("value")};
};

struct Enums {
  static constexpr const char* kName = "enums";
  enum Index : int { enum_name, value, name, kCount };
  static constexpr Column kColumns[] = {detail::text("enum_name"), detail::integer("value"),
                                        detail::text("name")};
};

struct Strings {
  static constexpr const char* kName = "strings";
  enum Index : int { id, value, kCount };
  static constexpr Column kColumns[] = {detail::integer("id"), detail::text("value")};
};

struct Ranks {
  static constexpr const char* kName = "ranks";
  enum Index : int {
    rank,
    world_size,
    hostname,
    pid,
    source_file,
    rank_source,
    backend,
    comm_version,
    clock_base_ns,
    clock_offset_ns,
    first_ns,
    last_ns,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("rank"),
                                        detail::optional_integer("world_size"),
                                        detail::optional_text("hostname"),
                                        detail::optional_integer("pid"),
                                        detail::optional_text("source_file"),
                                        detail::optional_text("rank_source"),
                                        detail::optional_text("backend"),
                                        detail::optional_text("comm_version"),
                                        detail::optional_integer("clock_base_ns"),
                                        detail::optional_integer("clock_offset_ns"),
                                        detail::optional_integer("first_ns"),
                                        detail::optional_integer("last_ns")};
  // first_ns and last_ns are written NULL here and filled in when the writer commits.
  static void bind(sql::Statement& s, int first, const RankInfo& r);
};

struct Devices {
  static constexpr const char* kName = "devices";
  enum Index : int {
    rank,
    device,
    name,
    total_memory_bytes,
    compute_major,
    compute_minor,
    sm_count,
    properties_json,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("rank"),
                                        detail::integer("device"),
                                        detail::optional_text("name"),
                                        detail::optional_integer("total_memory_bytes"),
                                        detail::optional_integer("compute_major"),
                                        detail::optional_integer("compute_minor"),
                                        detail::optional_integer("sm_count"),
                                        detail::optional_text("properties_json")};
  static void bind(sql::Statement& s, int first, const DeviceInfo& d);
  static DeviceInfo read(const sql::Statement& s, int first);
};

struct ProcessGroups {
  static constexpr const char* kName = "process_groups";
  enum Index : int { rank, pg_name, pg_desc, backend, group_size, ranks_json, kCount };
  static constexpr Column kColumns[] = {detail::integer("rank"),
                                        detail::text("pg_name"),
                                        detail::optional_text("pg_desc"),
                                        detail::optional_text("backend"),
                                        detail::optional_integer("group_size"),
                                        detail::optional_text("ranks_json")};
  static void bind(sql::Statement& s, int first, const ProcessGroupInfo& p);
  static ProcessGroupInfo read(const sql::Statement& s, int first);
};

struct Streams {
  static constexpr const char* kName = "streams";
  enum Index : int { rank, device, stream, name, kCount };
  static constexpr Column kColumns[] = {detail::integer("rank"), detail::integer("device"),
                                        detail::integer("stream"), detail::optional_text("name")};
  static void bind(sql::Statement& s, int first, const StreamInfo& st);
  static StreamInfo read(const sql::Statement& s, int first);
};

struct Threads {
  static constexpr const char* kName = "threads";
  enum Index : int { rank, pid, tid, name, kCount };
  static constexpr Column kColumns[] = {detail::integer("rank"), detail::integer("pid"),
                                        detail::integer("tid"), detail::optional_text("name")};
  static void bind(sql::Statement& s, int first, const ThreadInfo& t);
  static ThreadInfo read(const sql::Statement& s, int first);
};

struct Activities {
  static constexpr const char* kName = "activities";
  enum Index : int {
    id,
    rank,
    kind,
    device,
    stream,
    start_ns,
    end_ns,
    name,
    correlation,
    external_id,
    grid_x,
    grid_y,
    grid_z,
    block_x,
    block_y,
    block_z,
    registers,
    shared_bytes,
    bytes,
    copy_kind,
    graph_id,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::integer("kind"),
                                        detail::integer("device"),
                                        detail::integer("stream"),
                                        detail::integer("start_ns"),
                                        detail::integer("end_ns"),
                                        detail::integer("name"),
                                        detail::optional_integer("correlation"),
                                        detail::optional_integer("external_id"),
                                        detail::optional_integer("grid_x"),
                                        detail::optional_integer("grid_y"),
                                        detail::optional_integer("grid_z"),
                                        detail::optional_integer("block_x"),
                                        detail::optional_integer("block_y"),
                                        detail::optional_integer("block_z"),
                                        detail::optional_integer("registers"),
                                        detail::optional_integer("shared_bytes"),
                                        detail::optional_integer("bytes"),
                                        detail::optional_integer("copy_kind"),
                                        detail::optional_integer("graph_id")};
  static void bind(sql::Statement& s, int first, std::int64_t row_id, const ActivityRecord& a);
  // The values as stored (string ids of the file read, kind unchecked); ROW_ID gets the id column.
  static ActivityRecord read(const sql::Statement& s, int first, std::int64_t& row_id);
};

struct Collectives {
  static constexpr const char* kName = "collectives";
  enum Index : int {
    id,
    rank,
    activity_id,
    communicator,
    pg_desc,
    pg_ranks,
    seq,
    op,
    in_nelems,
    out_nelems,
    dtype,
    in_bytes,
    out_bytes,
    group_size,
    algorithm,
    protocol,
    channels,
    start_ns,
    end_ns,
    source,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::optional_integer("activity_id"),
                                        detail::optional_integer("communicator"),
                                        detail::optional_integer("pg_desc"),
                                        detail::optional_integer("pg_ranks"),
                                        detail::optional_integer("seq"),
                                        detail::integer("op"),
                                        detail::optional_integer("in_nelems"),
                                        detail::optional_integer("out_nelems"),
                                        detail::optional_integer("dtype"),
                                        detail::optional_integer("in_bytes"),
                                        detail::optional_integer("out_bytes"),
                                        detail::optional_integer("group_size"),
                                        detail::optional_integer("algorithm"),
                                        detail::optional_integer("protocol"),
                                        detail::optional_integer("channels"),
                                        detail::integer("start_ns"),
                                        detail::integer("end_ns"),
                                        detail::optional_text("source")};
  static void bind(sql::Statement& s, int first, std::int64_t row_id, const CollectiveRecord& c);
  // Binds communicator through channels, and source: what CPU-side metadata fills in on a collective known
  // only by its kernel name.
  static void bind_metadata(sql::Statement& s, int first, const CollectiveRecord& c);
};

struct ApiCalls {
  static constexpr const char* kName = "api_calls";
  enum Index : int {
    id,
    rank,
    kind,
    pid,
    tid,
    start_ns,
    end_ns,
    name,
    correlation,
    external_id,
    cbid,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::integer("kind"),
                                        detail::integer("pid"),
                                        detail::integer("tid"),
                                        detail::integer("start_ns"),
                                        detail::integer("end_ns"),
                                        detail::integer("name"),
                                        detail::optional_integer("correlation"),
                                        detail::optional_integer("external_id"),
                                        detail::optional_integer("cbid")};
  // The id is bound NULL: SQLite numbers api_calls itself.
  static void bind(sql::Statement& s, int first, const ApiCallRecord& a);
  static ApiCallRecord read(const sql::Statement& s, int first);
};

struct Ranges {
  static constexpr const char* kName = "ranges";
  enum Index : int {
    id,
    rank,
    kind,
    pid,
    tid,
    start_ns,
    end_ns,
    name,
    depth,
    parent_id,
    external_id,
    step,
    category,
    input_dims,
    input_types,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::integer("kind"),
                                        detail::integer("pid"),
                                        detail::integer("tid"),
                                        detail::integer("start_ns"),
                                        detail::integer("end_ns"),
                                        detail::integer("name"),
                                        detail::integer("depth"),
                                        detail::optional_integer("parent_id"),
                                        detail::optional_integer("external_id"),
                                        detail::optional_integer("step"),
                                        detail::optional_integer("category"),
                                        detail::optional_integer("input_dims"),
                                        detail::optional_integer("input_types")};
  static void bind(sql::Statement& s, int first, std::int64_t row_id, std::int64_t depth_value,
                   std::int64_t parent, const RangeRecord& r);
  static RangeRecord read(const sql::Statement& s, int first);
};

struct Flows {
  static constexpr const char* kName = "flows";
  enum Index : int {
    id,
    rank,
    category,
    flow_id,
    src_ns,
    src_pid,
    src_tid,
    dst_ns,
    dst_pid,
    dst_tid,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::integer("category"),
                                        detail::integer("flow_id"),
                                        detail::integer("src_ns"),
                                        detail::integer("src_pid"),
                                        detail::integer("src_tid"),
                                        detail::optional_integer("dst_ns"),
                                        detail::optional_integer("dst_pid"),
                                        detail::optional_integer("dst_tid")};
  // The id is bound NULL: SQLite numbers flows itself.
  static void bind(sql::Statement& s, int first, const FlowRecord& f);
  static FlowRecord read(const sql::Statement& s, int first);
};

struct ThreadActivity {
  static constexpr const char* kName = "thread_activity";
  enum Index : int { id, rank, kind, pid, tid, start_ns, end_ns, cpu, stack, kCount };
  static constexpr Column kColumns[] = {
      detail::integer("id"),     detail::integer("rank"),         detail::integer("kind"),
      detail::integer("pid"),    detail::integer("tid"),          detail::integer("start_ns"),
      detail::integer("end_ns"), detail::optional_integer("cpu"), detail::optional_integer("stack")};
  // The id is bound NULL: SQLite numbers the rows itself.
  static void bind(sql::Statement& s, int first, const ThreadActivityRecord& a);
  static ThreadActivityRecord read(const sql::Statement& s, int first);
};

struct Diagnostics {
  static constexpr const char* kName = "diagnostics";
  enum Index : int { rank, severity, message, kCount };
  static constexpr Column kColumns[] = {detail::optional_integer("rank"), detail::optional_text("severity"),
                                        detail::optional_text("message")};
};

// Work per operator (docs/PROFILE.md "Work per operator"): read back by analysis/measure/work.cpp with its
// own query, so every column is optional to Profile::load.
struct OpWork {
  static constexpr const char* kName = "op_work";
  enum Index : int {
    id,
    rank,
    external_id,
    pid,
    tid,
    start_ns,
    name,
    status,
    category,
    flops,
    bytes,
    input_dims,
    input_types,
    kernels,
    kernel_ns,
    kCount
  };
  static constexpr Column kColumns[] = {detail::integer("id"),
                                        detail::integer("rank"),
                                        detail::optional_integer("external_id"),
                                        detail::integer("pid"),
                                        detail::integer("tid"),
                                        detail::integer("start_ns"),
                                        detail::integer("name"),
                                        detail::integer("status"),
                                        detail::optional_integer("category"),
                                        detail::optional_real("flops"),
                                        detail::optional_real("bytes"),
                                        detail::optional_integer("input_dims"),
                                        detail::optional_integer("input_types"),
                                        detail::integer("kernels"),
                                        detail::integer("kernel_ns")};
  static void bind(sql::Statement& s, int first, const OpWorkRecord& w);
  static OpWorkRecord read(const sql::Statement& s, int first);
};

struct KernelWork {
  static constexpr const char* kName = "kernel_work";
  enum Index : int { activity_id, rank, op_id, flops, bytes, kCount };
  static constexpr Column kColumns[] = {detail::integer("activity_id"), detail::integer("rank"),
                                        detail::integer("op_id"), detail::optional_real("flops"),
                                        detail::optional_real("bytes")};
  static void bind(sql::Statement& s, int first, const KernelWorkRecord& k);
  static KernelWorkRecord read(const sql::Statement& s, int first);
};

// Summaries (docs/PROFILE.md "Summaries"): written and read by profiler/summary_store.cpp only
// (Profile::load never reads them). The breakdown columns of summary_ranks and summary_steps are
// Breakdown's (profiler/summary_records.hpp).
struct SummaryRanks {
  static constexpr const char* kName = "summary_ranks";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::optional_integer("start_ns"),
      detail::optional_integer("end_ns"),
      detail::optional_integer("span_ns"),
      detail::optional_integer("busy_ns"),
      detail::optional_integer("idle_ns"),
      detail::optional_integer("compute_ns"),
      detail::optional_integer("comm_ns"),
      detail::optional_integer("memory_ns"),
      detail::optional_integer("memory_only_ns"),
      detail::optional_integer("sync_ns"),
      detail::optional_integer("overlap_ns"),
      detail::optional_integer("exposed_comm_ns"),
      detail::optional_integer("activities"),
      detail::optional_integer("outside_steps_span_ns"),
      detail::optional_integer("outside_steps_busy_ns"),
      detail::optional_text("step_source"),
      detail::optional_integer("unlinked_activities"),
      detail::optional_integer("collective_wait_ns"),
      detail::optional_integer("collective_transfer_ns"),
      detail::optional_integer("kernel_ns"),
      detail::optional_integer("training"),
      detail::optional_integer("n_kernel"),
      detail::optional_integer("n_memcpy"),
      detail::optional_integer("n_memset"),
      detail::optional_integer("n_sync"),
      detail::optional_integer("n_runtime"),
      detail::optional_integer("n_driver"),
      detail::optional_integer("n_cpu_op"),
      detail::optional_integer("n_annotation"),
      detail::optional_integer("n_python_function"),
      detail::optional_integer("n_step"),
      detail::optional_integer("n_gpu_annotation"),
      detail::optional_integer("n_nvtx"),
      detail::optional_integer("n_other"),
      detail::optional_integer("n_collective"),
      detail::optional_integer("n_flow"),
      detail::optional_integer("overview_bucket_log2"),
      detail::optional_integer("overview_first_bucket"),
      detail::optional_integer("n_os_runtime"),
      detail::optional_integer("n_on_cpu"),
      detail::optional_integer("n_cpu_sample"),
  };
};

struct SummarySteps {
  static constexpr const char* kName = "summary_steps";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::integer("ordinal"),
      detail::integer("step"),
      detail::optional_integer("cpu_start_ns"),
      detail::optional_integer("cpu_end_ns"),
      detail::optional_integer("start_ns"),
      detail::optional_integer("end_ns"),
      detail::optional_integer("span_ns"),
      detail::optional_integer("busy_ns"),
      detail::optional_integer("idle_ns"),
      detail::optional_integer("compute_ns"),
      detail::optional_integer("comm_ns"),
      detail::optional_integer("memory_ns"),
      detail::optional_integer("memory_only_ns"),
      detail::optional_integer("sync_ns"),
      detail::optional_integer("overlap_ns"),
      detail::optional_integer("exposed_comm_ns"),
      detail::optional_integer("activities"),
  };
};

struct SummaryStreams {
  static constexpr const char* kName = "summary_streams";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::integer("device"),
      detail::integer("stream"),
      detail::optional_integer("span_ns"),
      detail::optional_integer("busy_ns"),
      detail::optional_integer("idle_ns"),
      detail::optional_integer("host_bound_ns"),
      detail::optional_integer("kernel_gap_ns"),
      detail::optional_integer("other_ns"),
      detail::optional_integer("gaps"),
      detail::optional_integer("compute_ns"),
      detail::optional_integer("work_class"),
  };
};

struct SummaryKernels {
  static constexpr const char* kName = "summary_kernels";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::text("name"),
      detail::integer("class"),
      detail::optional_integer("count"),
      detail::optional_integer("total_ns"),
      detail::optional_integer("step_ns"),
      detail::optional_integer("min_ns"),
      detail::optional_integer("max_ns"),
  };
};

struct SummaryOps {
  static constexpr const char* kName = "summary_ops";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::text("name"),
      detail::optional_integer("count"),
      detail::optional_integer("total_ns"),
      detail::optional_integer("self_ns"),
      detail::optional_integer("step_ns"),
      detail::optional_integer("self_step_ns"),
      detail::optional_integer("gpu_ns"),
      detail::optional_integer("gpu_self_ns"),
      detail::optional_integer("gpu_step_ns"),
      detail::optional_integer("gpu_self_step_ns"),
  };
};

struct SummaryCollectives {
  static constexpr const char* kName = "summary_collectives";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::text("op"),
      detail::optional_integer("group_size"),
      detail::optional_integer("bytes"),
      detail::optional_integer("count"),
      detail::optional_integer("total_ns"),
      detail::optional_integer("step_ns"),
  };
};

struct SummaryOpShapes {
  static constexpr const char* kName = "summary_op_shapes";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::text("name"),
      detail::text("input_dims"),
      detail::optional_integer("count"),
      detail::optional_integer("gpu_ns"),
      detail::optional_integer("gpu_step_ns"),
  };
};

struct SummaryOverview {
  static constexpr const char* kName = "summary_overview";
  static constexpr Column kColumns[] = {
      detail::integer("rank"),
      detail::integer("bucket"),
      detail::optional_integer("compute_ns"),
      detail::optional_integer("comm_ns"),
      detail::optional_integer("exposed_comm_ns"),
      detail::optional_integer("memory_only_ns"),
      detail::optional_integer("busy_ns"),
      detail::optional_integer("span_ns"),
  };
};

// Every table above, for checks that walk them all.
struct TableDescription {
  const char* name;
  std::span<const Column> columns;
};
std::span<const TableDescription> all_tables();

}  // namespace meshscope::schema
