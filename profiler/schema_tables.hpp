// The tables of schema.sql as C++ reads and writes them. schema.sql is their one declaration: at build time
// schema_codegen.cpp turns it into schema_declared.hpp, one description per table (its name, role, CREATE
// statement, and its columns in schema order with their affinity, whether Profile::load refuses a profile
// without them, and whether they are times on the profile clock). What is written here is the one place that
// binds a record to those columns and reads it back. The ProfileWriter builds its INSERT statements from
// these, the merge of rank profiles its SELECTs, and Profile::load its checked reads, each addressing a
// column by name (Activities::start_ns), never by a number spelled out by hand.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "profiler/records.hpp"
#include "profiler/schema_column.hpp"
#include "profiler/schema_declared.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::schema {

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

using Meta = declared::Meta;

using Enums = declared::Enums;

using Strings = declared::Strings;

struct Ranks : declared::Ranks {
  // first_ns and last_ns are written NULL here and filled in when the writer commits.
  static void bind(sql::Statement& s, int first, const RankInfo& r);
};

struct Devices : declared::Devices {
  static void bind(sql::Statement& s, int first, const DeviceInfo& d);
  static DeviceInfo read(const sql::Statement& s, int first);
};

struct ProcessGroups : declared::ProcessGroups {
  static void bind(sql::Statement& s, int first, const ProcessGroupInfo& p);
  static ProcessGroupInfo read(const sql::Statement& s, int first);
};

struct Streams : declared::Streams {
  static void bind(sql::Statement& s, int first, const StreamInfo& st);
  static StreamInfo read(const sql::Statement& s, int first);
};

struct Threads : declared::Threads {
  static void bind(sql::Statement& s, int first, const ThreadInfo& t);
  static ThreadInfo read(const sql::Statement& s, int first);
};

struct Activities : declared::Activities {
  static void bind(sql::Statement& s, int first, std::int64_t row_id, const ActivityRecord& a);
  // The values as stored (string ids of the file read, kind unchecked); ROW_ID gets the id column.
  static ActivityRecord read(const sql::Statement& s, int first, std::int64_t& row_id);
};

struct Collectives : declared::Collectives {
  static void bind(sql::Statement& s, int first, std::int64_t row_id, const CollectiveRecord& c);
  // Binds communicator through channels, and source: what CPU-side metadata fills in on a collective known
  // only by its kernel name.
  static void bind_metadata(sql::Statement& s, int first, const CollectiveRecord& c);
};

struct ApiCalls : declared::ApiCalls {
  // The id is bound NULL: SQLite numbers api_calls itself.
  static void bind(sql::Statement& s, int first, const ApiCallRecord& a);
  static ApiCallRecord read(const sql::Statement& s, int first);
};

struct Ranges : declared::Ranges {
  static void bind(sql::Statement& s, int first, std::int64_t row_id, std::int64_t depth_value,
                   std::int64_t parent, const RangeRecord& r);
  static RangeRecord read(const sql::Statement& s, int first);
};

struct Flows : declared::Flows {
  // The id is bound NULL: SQLite numbers flows itself.
  static void bind(sql::Statement& s, int first, const FlowRecord& f);
  static FlowRecord read(const sql::Statement& s, int first);
};

struct ThreadActivity : declared::ThreadActivity {
  // The id is bound NULL: SQLite numbers the rows itself.
  static void bind(sql::Statement& s, int first, const ThreadActivityRecord& a);
  static ThreadActivityRecord read(const sql::Statement& s, int first);
};

using Diagnostics = declared::Diagnostics;

// Work per operator (docs/PROFILE.md "Work per operator"): read back by analysis/measure/work.cpp with its
// own query, so every column is optional to Profile::load.
struct OpWork : declared::OpWork {
  static void bind(sql::Statement& s, int first, const OpWorkRecord& w);
  static OpWorkRecord read(const sql::Statement& s, int first);
};

struct KernelWork : declared::KernelWork {
  static void bind(sql::Statement& s, int first, const KernelWorkRecord& k);
  static KernelWorkRecord read(const sql::Statement& s, int first);
};

// Summaries (docs/PROFILE.md "Summaries"): written and read by profiler/summary_store.cpp only
// (Profile::load never reads them). The breakdown columns of summary_ranks and summary_steps are
// Breakdown's (profiler/summary_records.hpp).
using SummaryRanks = declared::SummaryRanks;

using SummarySteps = declared::SummarySteps;

using SummaryStreams = declared::SummaryStreams;

using SummaryKernels = declared::SummaryKernels;

using SummaryOps = declared::SummaryOps;

using SummaryCollectives = declared::SummaryCollectives;

using SummaryOpShapes = declared::SummaryOpShapes;

using SummaryOverview = declared::SummaryOverview;

// Every table of schema.sql, in schema order.
std::span<const TableDescription> all_tables();
// The table called NAME, or null.
const TableDescription* find_table(std::string_view name);

}  // namespace meshscope::schema
