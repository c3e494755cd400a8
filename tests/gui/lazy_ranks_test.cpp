// Lazy ranks (app/gui/lazy_ranks.hpp): a summarised profile opens on its description and
// summaries, and the view loads a rank's events only when the timeline shows it, in a bounded cache. On a
// generated 12-rank job imported as users import theirs (each rank's rows together), compared with the same
// profile loaded whole.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "app/gui/View.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui::test {
namespace {

// The generated job's traces (rank-0.json.gz ... rank-11.json.gz), once per process.
std::filesystem::path traces() {
  static const std::filesystem::path dir = [] {
    const auto out = std::filesystem::path(MESHSCOPE_TEST_TMP) / ("lazy-job-" + std::to_string(::getpid()));
    std::filesystem::remove_all(out);
    const std::string command =
        fmt::format("'{}' --ranks 12 --events-per-rank 3000 --format kineto-gz -q -o '{}' > /dev/null",
                    MESHSCOPE_GEN_JOB, out.string());
    return std::system(command.c_str()) == 0 ? out : std::filesystem::path();
  }();
  return dir;
}

std::filesystem::path job() {
  static const std::filesystem::path path = traces().empty() ? std::filesystem::path() : imported(traces());
  return path;
}

OpenOptions lazily() {
  OpenOptions o;
  o.lazy = LazyMode::kAlways;
  return o;
}

std::unique_ptr<LoadedProfile> open_lazily(const std::filesystem::path& path) {
  return load_profile(std::vector<std::filesystem::path>{path}, {}, {}, {}, lazily());
}

const LoadedProfile& whole() {
  static const auto loaded = load_profile(job());
  return *loaded;
}

std::unique_ptr<LoadedProfile> next_generation(LazyRanks& lazy) {
  EXPECT_TRUE(lazy.wait_idle(120));
  return lazy.take();
}

TEST(LazyRanks, OpensOnTheSummariesWithNoRankLoaded) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  const auto loaded = open_lazily(path);
  ASSERT_TRUE(loaded && loaded->lazy);
  EXPECT_TRUE(loaded->events);
  EXPECT_EQ(loaded->profile->ranks().size(), 12u);
  EXPECT_EQ(loaded->lazy->loaded_ranks, 0u);
  for (std::size_t r = 0; r < 12; ++r) {
    EXPECT_FALSE(loaded->rank_loaded(r));
    EXPECT_TRUE(loaded->profile->ranks()[r].activities.empty());
    // The whole job's figures come from the summaries: what the analysis of every event gives.
    EXPECT_EQ(loaded->job().ranks[r].total.busy_ns, whole().analysis().ranks[r].total.busy_ns);
    EXPECT_EQ(loaded->job().ranks[r].total.exposed_comm_ns,
              whole().analysis().ranks[r].total.exposed_comm_ns);
    ASSERT_NE(loaded->rank_summary(r), nullptr);
    EXPECT_EQ(loaded->rank_summary(r)->rank, loaded->profile->ranks()[r].rank);
  }
  // The job's event counts are the summaries' (the status line).
  EXPECT_EQ(loaded->lazy->counts.kernel, whole().profile->counts().kernel);
  // The Explorer's start is measured on a sample of ranks: the same workload as the whole job's.
  ASSERT_TRUE(loaded->measured) << loaded->measured_error;
  EXPECT_FALSE(loaded->lazy->sample.empty());
  EXPECT_EQ(loaded->start.summary, whole().start.summary);
  EXPECT_EQ(loaded->start.comparable, whole().start.comparable);
}

TEST(LazyRanks, AutomaticOnlyForLargeProfiles) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  // 12 ranks of 3,000 events: under the default threshold, the profile loads whole.
  const auto small = load_profile(std::vector<std::filesystem::path>{path});
  EXPECT_FALSE(small->lazy);
  OpenOptions low;
  low.lazy_events = 1000;
  EXPECT_TRUE(load_profile(std::vector<std::filesystem::path>{path}, {}, {}, {}, low)->lazy);
  OpenOptions never;
  never.lazy = LazyMode::kNever;
  never.lazy_events = 1;
  EXPECT_FALSE(load_profile(std::vector<std::filesystem::path>{path}, {}, {}, {}, never)->lazy);
}

TEST(LazyRanks, LoadsTheRanksWantedAsTheWholeLoadHasThem) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  std::shared_ptr<const LoadedProfile> base = open_lazily(path);
  LazyRanks lazy(base, std::size_t{1} << 30);
  lazy.want({2, 7});
  const auto gen = next_generation(lazy);
  ASSERT_TRUE(gen);
  EXPECT_EQ(lazy.error(), "");
  ASSERT_TRUE(gen->lazy);
  EXPECT_EQ(gen->lazy->loaded_ranks, 2u);
  EXPECT_GT(gen->lazy->bytes, 0u);
  for (std::size_t r = 0; r < 12; ++r) EXPECT_EQ(gen->rank_loaded(r), r == 2 || r == 7) << r;
  for (std::size_t r : {2u, 7u}) {
    const Rank& got = gen->profile->ranks()[r];
    const Rank& want = whole().profile->ranks()[r];
    EXPECT_EQ(got.activities.size(), want.activities.size());
    EXPECT_EQ(got.ranges.size(), want.ranges.size());
    EXPECT_EQ(got.api_calls.size(), want.api_calls.size());
    // The rank's own analysis and timeline index are those of the whole load.
    EXPECT_EQ(gen->analysis().ranks[r].total.busy_ns, whole().analysis().ranks[r].total.busy_ns);
    EXPECT_EQ(gen->analysis().ranks[r].classes, whole().analysis().ranks[r].classes);
    ASSERT_EQ(gen->ranks[r]->streams.size(), whole().ranks[r]->streams.size());
    for (std::size_t s = 0; s < gen->ranks[r]->streams.size(); ++s)
      EXPECT_EQ(gen->ranks[r]->streams[s].lanes(), whole().ranks[r]->streams[s].lanes());
    EXPECT_EQ(gen->ranks[r]->launches.api_of_activity, whole().ranks[r]->launches.api_of_activity);
    EXPECT_FALSE(gen->critical.ranks[r].steps.empty());
  }
  // The ranks not loaded hold nothing, and the whole job's figures are still the summaries'.
  EXPECT_TRUE(gen->profile->ranks()[0].activities.empty());
  EXPECT_EQ(gen->job().ranks[0].total.busy_ns, whole().analysis().ranks[0].total.busy_ns);
  // Nothing new wanted: no new generation.
  lazy.want({7, 2});
  EXPECT_TRUE(lazy.wait_idle(60));
  EXPECT_EQ(lazy.take(), nullptr);
}

TEST(LazyRanks, EvictsTheRanksNotShownBeyondTheBudget) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  std::shared_ptr<const LoadedProfile> base = open_lazily(path);
  LazyRanks lazy(base, 1);  // every rank is over the budget: only those shown stay
  lazy.want({1, 3});
  auto gen = next_generation(lazy);
  ASSERT_TRUE(gen);
  EXPECT_TRUE(gen->rank_loaded(1) && gen->rank_loaded(3)) << "ranks shown stay, whatever the budget";
  lazy.want({5});
  gen = next_generation(lazy);
  ASSERT_TRUE(gen);
  EXPECT_TRUE(gen->rank_loaded(5));
  EXPECT_FALSE(gen->rank_loaded(1));
  EXPECT_FALSE(gen->rank_loaded(3));
  EXPECT_EQ(gen->lazy->loaded_ranks, 1u);
  EXPECT_EQ(lazy.stats().evicted, 2u);
  EXPECT_EQ(lazy.stats().cached, 1u);
  // Within a budget the ranks stay cached after they go out of view.
  LazyRanks roomy(base, std::size_t{1} << 30);
  roomy.want({1, 3});
  ASSERT_TRUE(next_generation(roomy));
  roomy.want({5});
  gen = next_generation(roomy);
  ASSERT_TRUE(gen);
  EXPECT_TRUE(gen->rank_loaded(1) && gen->rank_loaded(3) && gen->rank_loaded(5));
  EXPECT_EQ(roomy.stats().evicted, 0u);
}

// A test's view on the Timeline that opens profiles with lazy ranks.
ViewOptions lazy_view() {
  ViewOptions options = options_for(Panel::kTimeline);
  options.open = lazily();
  return options;
}

// Draws frames until the view has opened its profile and loaded the ranks its timeline shows.
void settle(NullImGui& imgui, View& view) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int quiet = 0;
  while (quiet < 3 && std::chrono::steady_clock::now() < deadline) {
    imgui.frame(view);
    quiet = view.loading() || view.lazy_loading() ? 0 : quiet + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(LazyRanks, TheTimelineLoadsTheRanksItShowsAndKeepsTheSelection) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  NullImGui imgui(1400, 2800);  // tall enough to show all twelve ranks open: all are on screen
  View view(lazy_view());
  view.open(path);
  settle(imgui, view);
  ASSERT_TRUE(view.loaded() && view.loaded()->lazy);
  ASSERT_TRUE(view.lazy_ranks());
  // Twelve ranks: the first four open, so loaded; the collapsed ones at the whole job's zoom show summaries.
  for (std::size_t r = 0; r < 4; ++r) EXPECT_TRUE(view.loaded()->rank_loaded(r)) << r;
  EXPECT_FALSE(view.loaded()->rank_loaded(11));
  {
    simdjson::dom::parser parser;
    const std::string state = view.state_json();
    const simdjson::dom::element s = parser.parse(state);
    EXPECT_EQ(s["lazy"]["loaded_ranks"].get_int64().value(), 4);
    EXPECT_EQ(s["lazy"]["pending"].get_int64().value(), 0);
  }
  // Select a kernel of rank 1, then open every rank: the generation that loads them keeps the selection.
  const Rank& rank1 = view.loaded()->profile->ranks()[1];
  ASSERT_FALSE(rank1.activities.empty());
  const EventRef kernel{EventKind::kActivity, 1, static_cast<std::uint32_t>(rank1.activities.size() / 2)};
  const TimeNs kernel_start = rank1.activities[kernel.index].start_ns;
  view.select_event(kernel);
  view.set_all_ranks_open(true);
  settle(imgui, view);
  view.lazy_poll();
  imgui.frame(view);
  EXPECT_EQ(view.loaded()->lazy->loaded_ranks, 12u);
  EXPECT_EQ(view.selected_event(), kernel);
  EXPECT_EQ(view.loaded()->profile->ranks()[1].activities[kernel.index].start_ns, kernel_start);
  // Rank 11's GPU streams are rows of the timeline now.
  simdjson::dom::parser parser;
  const std::string state = view.state_json();
  const simdjson::dom::element s = parser.parse(state);
  int streams = 0;
  for (const auto row : s["timeline"]["rows"].get_array()) {
    if (row["rank"].get_int64().value() == 11 &&
        std::string_view(row["kind"].get_string().value()) == "gpu_stream")
      ++streams;
  }
  EXPECT_EQ(streams, static_cast<int>(whole().profile->ranks()[11].streams.size()));
}

TEST(LazyRanks, ZoomingInLoadsTheHeadersOnScreen) {
  const auto path = job();
  ASSERT_FALSE(path.empty());
  NullImGui imgui(1400, 900);
  View view(lazy_view());
  view.open(path);
  settle(imgui, view);
  ASSERT_TRUE(view.loaded() && view.loaded()->lazy);
  view.set_all_ranks_open(false);
  settle(imgui, view);
  EXPECT_FALSE(view.loaded()->rank_loaded(8));
  // Zoomed to a tenth of the first step: a summary bucket covers many pixels, so the collapsed headers on
  // screen load their events (all twelve fit the screen collapsed).
  const RankSummary* s = view.loaded()->rank_summary(8);
  ASSERT_TRUE(s && !s->steps.empty());
  const TimeNs t0 = s->steps.front().cpu_start_ns;
  view.set_time_range(t0, t0 + (s->steps.front().cpu_end_ns - t0) / 10);
  settle(imgui, view);
  view.lazy_poll();
  EXPECT_TRUE(view.loaded()->rank_loaded(8));
  EXPECT_TRUE(view.loaded()->rank_loaded(11));
}

// A job merged from summary parts with the events of one rank only (docs/SCALE.md): the ranks that came
// without their events stay summaries in the timeline, say so, and are not read again.
TEST(LazyRanks, RanksMergedWithoutTheirEventsStaySummaries) {
  ASSERT_FALSE(traces().empty());
  const auto work = std::filesystem::path(MESHSCOPE_TEST_TMP) / ("lazy-merge-" + std::to_string(::getpid()));
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work / "parts");
  for (int r = 0; r < 12; ++r) {
    const std::string command =
        fmt::format("'{}' summarize '{}' --summaries-only -q -o '{}' > /dev/null", MESHSCOPE_BINARY,
                    (traces() / fmt::format("rank-{}.json.gz", r)).string(),
                    (work / "parts" / fmt::format("part-{}.msdb", r)).string());
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  const auto merged = work / "merged.msdb";
  const std::string merge =
      fmt::format("'{}' summarize --merge '{}' --events '{}' -q -o '{}' > /dev/null", MESHSCOPE_BINARY,
                  (work / "parts").string(), (traces() / "rank-2.json.gz").string(), merged.string());
  ASSERT_EQ(std::system(merge.c_str()), 0) << merge;

  std::shared_ptr<const LoadedProfile> base = open_lazily(merged);
  ASSERT_TRUE(base && base->lazy);
  LazyRanks lazy(base, std::size_t{1} << 30);
  lazy.want({1, 2});
  const auto gen = next_generation(lazy);
  ASSERT_TRUE(gen);
  EXPECT_TRUE(gen->rank_loaded(2));
  EXPECT_FALSE(gen->rank_absent(2));
  EXPECT_EQ(gen->profile->ranks()[2].activities.size(), whole().profile->ranks()[2].activities.size());
  EXPECT_FALSE(gen->rank_loaded(1));
  EXPECT_TRUE(gen->rank_absent(1));
  EXPECT_EQ(lazy.error(), "");
  // Asked for again: nothing to read.
  lazy.want({2, 1});
  EXPECT_TRUE(lazy.wait_idle(60));
  EXPECT_EQ(lazy.pending(), 0u);
  EXPECT_EQ(lazy.stats().loaded, 1u);
}

}  // namespace
}  // namespace meshscope::gui::test
