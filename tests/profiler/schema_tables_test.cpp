// The descriptions generated from schema.sql (schema_codegen.cpp) are SQLite's reading of it: every table,
// every column in order, with its declared type; a column the loader requires is NOT NULL (or the table's
// key) in the schema; each table's role and clock columns are those its tags give; the enums table holds what
// to_string() says, and schema.sql's comments list the same values.
#include "profiler/schema_tables.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"

namespace meshscope {
namespace {

struct DeclaredColumn {
  std::string name, type;
  bool not_null, primary_key;
};

class SchemaDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    const std::string tables(schema_tables_sql());
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, tables.c_str(), nullptr, nullptr, &error), SQLITE_OK) << error;
    const std::string enums = schema::enums_insert_sql();
    ASSERT_EQ(sqlite3_exec(db_, enums.c_str(), nullptr, nullptr, &error), SQLITE_OK) << error;
  }
  void TearDown() override { sqlite3_close(db_); }

  std::vector<std::string> tables() const {
    std::vector<std::string> names;
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &s,
                       nullptr);
    while (sqlite3_step(s) == SQLITE_ROW)
      names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    sqlite3_finalize(s);
    return names;
  }

  std::vector<DeclaredColumn> columns(const std::string& table) const {
    std::vector<DeclaredColumn> out;
    sqlite3_stmt* s = nullptr;
    const std::string sql = "PRAGMA table_info(" + table + ")";
    sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) {
      out.push_back({reinterpret_cast<const char*>(sqlite3_column_text(s, 1)),
                     reinterpret_cast<const char*>(sqlite3_column_text(s, 2)), sqlite3_column_int(s, 3) != 0,
                     sqlite3_column_int(s, 5) != 0});
    }
    sqlite3_finalize(s);
    return out;
  }

  sqlite3* db_ = nullptr;
};

TEST_F(SchemaDatabase, EveryTableIsDescribedColumnForColumn) {
  std::set<std::string> described;
  for (const auto& table : schema::all_tables()) {
    described.insert(table.name);
    const auto declared = columns(table.name);
    ASSERT_EQ(declared.size(), table.columns.size()) << table.name;
    for (std::size_t i = 0; i < declared.size(); ++i) {
      const auto& column = table.columns[i];
      EXPECT_EQ(declared[i].name, column.name) << table.name << " column " << i;
      EXPECT_EQ(sql::affinity_of(declared[i].type), column.affinity) << table.name << "." << column.name;
      // A column Profile::load requires must be one the writer can never leave NULL.
      if (column.required) {
        EXPECT_TRUE(declared[i].not_null || declared[i].primary_key) << table.name << "." << column.name;
      }
    }
  }
  for (const auto& name : tables()) EXPECT_TRUE(described.count(name)) << name << " has no description";
}

TEST_F(SchemaDatabase, EnumsComeFromTheCppNames) {
  std::map<std::string, std::map<int, std::string>> rows;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_, "SELECT enum_name, value, name FROM enums", -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
    rows[reinterpret_cast<const char*>(sqlite3_column_text(s, 0))][sqlite3_column_int(s, 1)] =
        reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
  }
  sqlite3_finalize(s);
  ASSERT_EQ(rows["activity_kind"].size(), static_cast<std::size_t>(kActivityKindCount));
  ASSERT_EQ(rows["range_kind"].size(), static_cast<std::size_t>(kRangeKindCount));
  ASSERT_EQ(rows["api_kind"].size(), static_cast<std::size_t>(kApiKindCount));
  EXPECT_EQ(rows["activity_kind"][1], "kernel");
  EXPECT_EQ(rows["activity_kind"][4], "sync");
  EXPECT_EQ(rows["range_kind"][5], "gpu_annotation");
  EXPECT_EQ(rows["api_kind"][2], "driver");
  // schema.sql documents each kind column with "N name" for every value.
  const std::string sql(schema_tables_sql());
  for (const auto& [family, values] : rows) {
    for (const auto& [value, name] : values) {
      EXPECT_NE(sql.find(std::to_string(value) + " " + name), std::string::npos) << family << " " << value;
    }
  }
}

TEST_F(SchemaDatabase, EachTablesCreateStatementMakesTheTableTheSchemaMakes) {
  for (const auto& table : schema::all_tables()) {
    sqlite3* alone = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &alone), SQLITE_OK);
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(alone, table.create_sql, nullptr, nullptr, &error), SQLITE_OK) << error;
    sqlite3_stmt* s = nullptr;
    const std::string sql = std::string("SELECT count(*) FROM pragma_table_info('") + table.name + "')";
    sqlite3_prepare_v2(alone, sql.c_str(), -1, &s, nullptr);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(static_cast<std::size_t>(sqlite3_column_int(s, 0)), columns(table.name).size()) << table.name;
    sqlite3_finalize(s);
    sqlite3_close(alone);
  }
}

// The roles schema.sql's "@role" lines give: a rank's description and summaries are what a summary part keeps
// and a merge copies, its events what a part drops and a rank rewrite shifts.
TEST(SchemaTables, EveryTableHasTheRoleItsRowsPlay) {
  std::map<schema::Role, std::set<std::string>> by_role;
  for (const auto& table : schema::all_tables()) by_role[table.role].insert(table.name);
  EXPECT_EQ(by_role[schema::Role::kJob], (std::set<std::string>{"meta", "enums", "strings"}));
  EXPECT_EQ(
      by_role[schema::Role::kDescription],
      (std::set<std::string>{"ranks", "devices", "process_groups", "streams", "threads", "diagnostics"}));
  EXPECT_EQ(by_role[schema::Role::kEvents],
            (std::set<std::string>{"activities", "collectives", "api_calls", "ranges", "flows",
                                   "thread_activity", "op_work", "kernel_work"}));
  EXPECT_EQ(by_role[schema::Role::kSummary].size(), 8u);
  for (const auto& name : by_role[schema::Role::kSummary]) EXPECT_TRUE(name.starts_with("summary_")) << name;
  // Every table of a rank's description, events and summaries says whose it is.
  for (const auto& table : schema::all_tables()) {
    if (table.role == schema::Role::kJob) continue;
    const bool has_rank = std::any_of(table.columns.begin(), table.columns.end(),
                                      [](const schema::Column& c) { return std::string(c.name) == "rank"; });
    EXPECT_TRUE(has_rank) << table.name;
  }
}

TEST(SchemaTables, TheClockColumnsOfTheEventsAreTheirTimes) {
  std::map<std::string, std::vector<std::string>> clock;
  for (const auto& table : schema::all_tables()) {
    if (table.role != schema::Role::kEvents) continue;
    auto& names = clock[table.name];
    for (const auto& c : table.columns)
      if (c.clock) names.emplace_back(c.name);
  }
  const std::vector<std::string> interval = {"start_ns", "end_ns"};
  for (const char* table : {"activities", "collectives", "api_calls", "ranges", "thread_activity"})
    EXPECT_EQ(clock[table], interval) << table;
  EXPECT_EQ(clock["flows"], (std::vector<std::string>{"src_ns", "dst_ns"}));
  EXPECT_EQ(clock["op_work"], (std::vector<std::string>{"start_ns"}));
  EXPECT_TRUE(clock["kernel_work"].empty());
  // A duration is no time on the clock.
  EXPECT_FALSE(schema::OpWork::kColumns[schema::OpWork::kernel_ns].clock);
}

TEST(SchemaTables, ACppKeywordColumnGetsAnUnderscore) {
  EXPECT_EQ(schema::SummaryKernels::kColumns[schema::SummaryKernels::class_].name, std::string("class"));
  EXPECT_EQ(schema::find_table("summary_kernels")->columns.size(),
            static_cast<std::size_t>(schema::SummaryKernels::kCount));
  EXPECT_EQ(schema::find_table("no_such_table"), nullptr);
}

TEST(SchemaTables, InsertAndSelectNameTheColumnsInSchemaOrder) {
  EXPECT_EQ(schema::insert_sql<schema::Streams>(2, "INSERT OR REPLACE"),
            "INSERT OR REPLACE INTO streams (rank, device, stream, name) VALUES (?,?,?,?),(?,?,?,?)");
  EXPECT_EQ(schema::select_sql<schema::Threads>(), "SELECT rank, pid, tid, name FROM threads");
  EXPECT_EQ(schema::Activities::kColumns[schema::Activities::graph_id].name, std::string("graph_id"));
  EXPECT_EQ(schema::Ranges::kColumns[schema::Ranges::depth].name, std::string("depth"));
}

}  // namespace
}  // namespace meshscope
