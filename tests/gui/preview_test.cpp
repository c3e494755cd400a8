// The summaries-first open: a summarised profile shows the whole job in the Overview from
// its description and summaries alone, before its events are read; the panels that need events say so; the
// full profile then replaces the preview. On a generated 64-rank job.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <chrono>
#include <thread>

#include "analysis/measure/summary.hpp"
#include "app/gui/View.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui::test {
namespace {

// The preview of the profile at PATH, opened as the view opens it.
std::unique_ptr<LoadedProfile> preview_of(const std::filesystem::path& path) {
  Job job = Job::open({path});
  return load_preview(job);
}

std::filesystem::path job() {
  return generated_job("preview", "--ranks 64 --events-per-rank 2000");
}

TEST(SummaryPreview, HoldsTheDescriptionAndTheSummariesButNoEvent) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  const auto preview = preview_of(path);
  ASSERT_TRUE(preview);
  EXPECT_FALSE(preview->events);
  EXPECT_EQ(preview->profile->ranks().size(), 64u);
  EXPECT_EQ(preview->summary->ranks.size(), 64u);
  EXPECT_TRUE(preview->summary->from_tables);
  for (const Rank& r : preview->profile->ranks()) EXPECT_TRUE(r.activities.empty() && r.ranges.empty());
  EXPECT_TRUE(preview->analysis().ranks.empty());
}

TEST(SummaryPreview, NoPreviewForAProfileWithoutSummaries) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  const auto copy = path.parent_path() / ("no-summaries-" + path.filename().string());
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DELETE FROM meta WHERE key = 'summaries'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(preview_of(copy), nullptr);
}

TEST(SummaryPreview, LoadProfileHandsThePreviewOverBeforeTheEvents) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  bool previewed = false, preview_before_analysis = false;
  std::size_t preview_ranks = 0;
  double last_progress = 0;
  const auto loaded = load_profile(
      {path}, [&](double f, const char*) { last_progress = f; }, {},
      [&](std::unique_ptr<LoadedProfile> p) {
        previewed = true;
        preview_ranks = p->summary->ranks.size();
        preview_before_analysis = last_progress < 0.6;  // handed over before "analysing"
      });
  EXPECT_TRUE(previewed);
  EXPECT_TRUE(preview_before_analysis);
  EXPECT_EQ(preview_ranks, 64u);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->events);
}

TEST(SummaryPreview, EveryPanelDrawsOverThePreviewAndOnlyTheOverviewShowsTheJob) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  NullImGui imgui(1400, 900);
  for (int p = 0; p < kPanelCount; ++p) {
    View view(options_for(static_cast<Panel>(p)));
    view.set_profile(preview_of(path));
    for (int i = 0; i < 3; ++i) imgui.frame(view);
    simdjson::dom::parser parser;
    const auto state = parser.parse(view.state_json());
    EXPECT_FALSE(bool(state["events"]));
    EXPECT_EQ(std::int64_t(state["ranks"]), 64);
    if (static_cast<Panel>(p) == Panel::kOverview) {
      EXPECT_EQ(std::int64_t(state["overview"]["rows"]), 64);
      EXPECT_GT(std::int64_t(state["overview"]["columns"]), 0);
    }
  }
}

TEST(SummaryPreview, OpeningASummarisedProfileShowsTheOverviewFirstThenTheEvents) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  NullImGui imgui(1400, 900);
  ViewOptions options = options_for(Panel::kTimeline);
  options.panel_set = false;  // as a user opening a file: the view picks the panel
  View view(options);
  view.open(path);
  bool saw_preview = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((view.loading() || !view.loaded()) && std::chrono::steady_clock::now() < deadline) {
    imgui.frame(view);
    if (view.loaded() && !view.loaded()->events) {
      saw_preview = true;
      EXPECT_EQ(view.panel(), Panel::kOverview);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  imgui.frame(view);
  ASSERT_TRUE(view.loaded());
  EXPECT_TRUE(view.loaded()->events) << "the full profile replaced the preview";
  // As any profile opens: the Timeline once the events are in (the preview's Overview was the view's choice).
  EXPECT_EQ(view.panel(), Panel::kTimeline);
  // Whether a frame ran while only the preview was in depends on the machine's speed; when one did, it was
  // the Overview (checked above).
  if (!saw_preview) GTEST_LOG_(INFO) << "the events loaded before a frame saw the preview";
}

}  // namespace
}  // namespace meshscope::gui::test
