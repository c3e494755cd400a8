// The Query panel (app/gui/query.hpp, query_panel.hpp): read-only SQL over a profile imported from a real
// shared trace, on the hardened connection — counts that match the loaded profile, writes and second
// statements refused, views off, a runaway statement stopped by the work bound, CSV quoting, and the panel's
// table.
#include "app/gui/query.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

std::filesystem::path resnet() {
  return test::imported(test::shared_trace("kineto/resnet50_num_workers_0"));
}

TEST(Query, CountsMatchTheLoadedProfile) {
  const auto msdb = resnet();
  ASSERT_FALSE(msdb.empty());
  const auto loaded = load_profile(msdb);
  std::int64_t kernels = 0;
  for (const Rank& r : loaded->profile->ranks()) {
    for (const Activity& a : r.activities) kernels += a.kind == ActivityKind::kKernel;
  }
  const QueryResult q = run_query(msdb, "SELECT COUNT(*) AS kernels FROM activities WHERE kind = 1");
  ASSERT_TRUE(q.error.empty()) << q.error;
  ASSERT_EQ(q.columns, std::vector<std::string>{"kernels"});
  ASSERT_EQ(q.rows.size(), 1u);
  EXPECT_EQ(q.rows[0][0], std::to_string(kernels));
  // Every saved query runs on the hardened connection.
  for (const SavedQuery& s : saved_queries()) {
    const QueryResult r = run_query(msdb, s.sql);
    EXPECT_TRUE(r.error.empty()) << s.name << ": " << r.error;
  }
}

TEST(Query, WritesSecondStatementsAndViewsAreRefusedOnOneLine) {
  const auto msdb = resnet();
  ASSERT_FALSE(msdb.empty());
  const auto before = std::filesystem::file_size(msdb);
  for (const char* sql : {"DELETE FROM activities", "DROP TABLE activities", "CREATE TABLE x(y)",
                          "INSERT INTO meta VALUES ('a', 'b')"}) {
    const QueryResult q = run_query(msdb, sql);
    EXPECT_FALSE(q.error.empty()) << sql;
    EXPECT_EQ(q.error.find('\n'), std::string::npos) << q.error;
  }
  EXPECT_NE(run_query(msdb, "SELECT 1; DELETE FROM activities").error.find("one statement at a time"),
            std::string::npos);
  EXPECT_TRUE(run_query(msdb, "SELECT 1; -- a comment\n").error.empty());
  // The profile's own view does not run (a hostile file's view could): its query is written as a join.
  EXPECT_FALSE(run_query(msdb, "SELECT * FROM activity_names LIMIT 1").error.empty());
  EXPECT_EQ(std::filesystem::file_size(msdb), before);
  const QueryResult c = run_query(msdb, "SELECT COUNT(*) FROM activities");
  ASSERT_TRUE(c.error.empty());
  EXPECT_NE(c.rows[0][0], "0");
}

// A statement that would run for ever is stopped by the bound on the work (proportional to the file's size).
TEST(Query, ARunawayStatementIsStopped) {
  const auto msdb = resnet();
  ASSERT_FALSE(msdb.empty());
  const QueryResult q = run_query(
      msdb, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n");
  EXPECT_NE(q.error.find("stopped"), std::string::npos) << q.error;
}

TEST(Query, RowsBeyondTheLimitAreCountedNotKept) {
  const auto msdb = resnet();
  ASSERT_FALSE(msdb.empty());
  const QueryResult q = run_query(msdb, "SELECT id FROM activities", 10);
  ASSERT_TRUE(q.error.empty()) << q.error;
  EXPECT_EQ(q.rows.size(), 10u);
  EXPECT_TRUE(q.truncated);
  EXPECT_GT(q.rows_seen, 10u);
}

TEST(Query, CsvQuotesWhatNeedsIt) {
  QueryResult r;
  r.columns = {"name", "n"};
  r.rows = {{"plain", "1"}, {"a,b", "2"}, {"say \"hi\"", "3"}, {"two\nlines", "NULL"}};
  EXPECT_EQ(to_csv(r), "name,n\r\nplain,1\r\n\"a,b\",2\r\n\"say \"\"hi\"\"\",3\r\n\"two\nlines\",NULL\r\n");
  EXPECT_EQ(to_tsv(r), "name\tn\nplain\t1\na,b\t2\nsay \"hi\"\t3\ntwo lines\tNULL\n");
}

// The panel: a query run from the View shows its rows in the table.
TEST(Query, ThePanelShowsTheRows) {
  const auto msdb = resnet();
  ASSERT_FALSE(msdb.empty());
  test::NullImGui imgui(1600, 900);
  View view(test::options_for(Panel::kQuery));
  view.set_profile(load_profile(msdb));
  imgui.frame(view);
  view.run_query("SELECT rank, COUNT(*) AS kernels_of_rank FROM activities WHERE kind = 1 GROUP BY rank");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (view.query_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    imgui.frame(view);
  }
  imgui.frame(view);
  ASSERT_NE(view.query_result(), nullptr);
  ASSERT_TRUE(view.query_result()->error.empty()) << view.query_result()->error;
  const std::string text = test::frame_text(view);
  EXPECT_NE(text.find("kernels_of_rank"), std::string::npos) << text;
  EXPECT_NE(text.find("1 row(s) in"), std::string::npos) << text;
  EXPECT_NE(text.find(view.query_result()->rows[0][1]), std::string::npos) << text;
}

}  // namespace
}  // namespace meshscope::gui
