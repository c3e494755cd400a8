// Timeline level of detail: lanes for overlapping events, folding of sub-pixel events with exact counts,
// binary-search windowing, interval merging, ruler steps and time text.
#include "app/gui/timeline_lod.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace meshscope::gui {
namespace {

struct Ev {
  TimeNs start_ns, end_ns;
  int depth = 0;
};

std::uint64_t total_count(const std::vector<DrawItem>& items) {
  return std::accumulate(items.begin(), items.end(), std::uint64_t{0},
                         [](std::uint64_t s, const DrawItem& d) { return s + d.count; });
}

TEST(TimelineLod, NonOverlappingStreamIsOneLaneWithoutIndex) {
  std::vector<Ev> events{{0, 10}, {10, 20}, {25, 30}};
  const auto layout = assign_lanes(std::span<const Ev>(events));
  EXPECT_EQ(layout.lanes(), 1u);
  EXPECT_TRUE(layout.members.empty());
}

TEST(TimelineLod, OverlapsGoToSubLanesAndNoneIsLost) {
  // Three events overlap at t = 5..8; a fourth starts after all of them end.
  std::vector<Ev> events{{0, 10}, {2, 8}, {5, 9}, {12, 13}};
  const auto layout = assign_lanes(std::span<const Ev>(events));
  ASSERT_EQ(layout.lanes(), 3u);
  EXPECT_EQ(layout.members[0], (std::vector<std::uint32_t>{0, 3}));
  EXPECT_EQ(layout.members[1], (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(layout.members[2], (std::vector<std::uint32_t>{2}));
  // At full detail every event is one item, each on its lane.
  LodParams p{0, 20, 0.001, 3.0f};
  std::size_t items = 0;
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    std::vector<DrawItem> out;
    preprocess_lane(std::span<const Ev>(events), std::span<const std::uint32_t>(layout.members[lane]), p,
                    out);
    for (const auto& d : out) EXPECT_EQ(d.count, 1u);
    items += out.size();
  }
  EXPECT_EQ(items, events.size());
}

TEST(TimelineLod, NestedRangesKeepTheirDepthLane) {
  std::vector<Ev> ranges{{0, 100, 0}, {10, 50, 1}, {20, 30, 2}, {60, 90, 1}};
  const auto layout = assign_lanes(std::span<const Ev>(ranges), [](const Ev& e) { return e.depth; });
  ASSERT_EQ(layout.lanes(), 3u);
  EXPECT_EQ(layout.members[0], (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(layout.members[1], (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(layout.members[2], (std::vector<std::uint32_t>{2}));
}

TEST(TimelineLod, SubPixelEventsFoldWithExactCount) {
  // 1000 events of 10 ns every 20 ns; at 100 ns per pixel each is 0.1 px wide.
  std::vector<Ev> events;
  for (int i = 0; i < 1000; ++i) events.push_back({i * 20, i * 20 + 10});
  std::vector<DrawItem> out;
  preprocess_lane(std::span<const Ev>(events), {}, LodParams{0, 20000, 100.0, 3.0f}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 1000u);
  EXPECT_EQ(out[0].start_ns, 0);
  EXPECT_EQ(out[0].end_ns, 999 * 20 + 10);
}

TEST(TimelineLod, WideEventsAreNeverFoldedAndGapsSplitFolds) {
  std::vector<Ev> events{{0, 1},       {2, 3},      {4, 5},  // a fold of three
                         {1000, 5000},                       // wide: its own item
                         {9000, 9001}, {9002, 9003}};        // a fold of two after a wide gap
  std::vector<DrawItem> out;
  preprocess_lane(std::span<const Ev>(events), {}, LodParams{0, 10000, 10.0, 3.0f}, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].count, 3u);
  EXPECT_EQ(out[1].count, 1u);
  EXPECT_EQ(out[1].index, 3u);
  EXPECT_EQ(out[2].count, 2u);
  EXPECT_EQ(total_count(out), events.size());
}

TEST(TimelineLod, WindowFindsEventsThatStartBeforeIt) {
  std::vector<Ev> events{{0, 100}, {100, 1000}, {1000, 1100}, {2000, 2100}};
  std::vector<DrawItem> out;
  preprocess_lane(std::span<const Ev>(events), {}, LodParams{500, 1050, 1.0, 3.0f}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].index, 1u);  // started at 100, still running at 500
  EXPECT_EQ(out[1].index, 2u);
}

TEST(TimelineLod, RandomStreamsCountEveryVisibleEventOnceAtAnyZoom) {
  std::mt19937_64 rng(7);
  std::vector<Ev> events;
  TimeNs t = 0;
  for (int i = 0; i < 20000; ++i) {
    t += static_cast<TimeNs>(rng() % 2000);
    const TimeNs d = static_cast<TimeNs>(rng() % 5000) + 1;  // overlaps happen
    events.push_back({t, t + d});
  }
  const auto layout = assign_lanes(std::span<const Ev>(events));
  ASSERT_GT(layout.lanes(), 1u);
  for (double nspx : {0.5, 10.0, 1000.0, 1e5, 1e7}) {
    for (TimeNs t0 : {TimeNs{0}, t / 3}) {
      const TimeNs t1 = t0 + static_cast<TimeNs>(nspx * 1500);
      std::uint64_t visible = 0;
      for (const auto& e : events) visible += e.end_ns >= t0 && e.start_ns < t1;
      std::uint64_t drawn = 0;
      for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
        std::vector<DrawItem> out;
        preprocess_lane(std::span<const Ev>(events), std::span<const std::uint32_t>(layout.members[lane]),
                        LodParams{t0, t1, nspx, 3.0f}, out);
        for (std::size_t i = 1; i < out.size(); ++i) EXPECT_GE(out[i].start_ns, out[i - 1].end_ns);
        drawn += total_count(out);
      }
      EXPECT_EQ(drawn, visible) << "ns/px " << nspx << " t0 " << t0;
    }
  }
}

TEST(TimelineLod, ItemsStayBoundedByPixelsWhenZoomedOut) {
  std::vector<Ev> events;
  for (int i = 0; i < 1'000'000; ++i) events.push_back({i * 100LL, i * 100LL + 60});
  std::vector<DrawItem> out;
  const TimeNs span = events.back().end_ns;
  preprocess_lane(std::span<const Ev>(events), {},
                  LodParams{0, span, static_cast<double>(span) / 2000.0, 3.0f}, out);
  EXPECT_LE(out.size(), 2000u);
  EXPECT_EQ(total_count(out), events.size());
}

// Folds know how busy they are: random sparse streams (with overlaps, so on sub-lanes), zoomed out, each
// fold's busy time from the prefix sums equals the sum of its events' durations, and the busy time of any
// window from busy_until equals the events' overlap with it, counted one by one.
TEST(TimelineLod, FoldsAndWindowsKnowTheirBusyTime) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<Ev> events;
    TimeNs t = 0;
    for (int i = 0; i < 3000; ++i) {
      t += std::uniform_int_distribution<TimeNs>(0, 400)(rng);
      events.push_back({t, t + std::uniform_int_distribution<TimeNs>(1, 300)(rng)});
    }
    auto layout = assign_lanes(std::span<const Ev>(events));
    add_busy_prefix(layout, std::span<const Ev>(events));
    ASSERT_EQ(layout.busy_before.size(), layout.lanes());
    const LodParams p{0, t + 1000, 200.0, 3.0f};
    for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
      const std::span<const std::uint32_t> members =
          layout.members.empty() ? std::span<const std::uint32_t>() : layout.members[lane];
      std::vector<DrawItem> out;
      preprocess_lane(std::span<const Ev>(events), members, p, out);
      for (const DrawItem& d : out) {
        TimeNs expected = 0;
        const std::size_t k = lane_position(layout, lane, d.index);
        for (std::uint32_t j = 0; j < d.count; ++j) {
          const Ev& e = events[members.empty() ? k + j : members[k + j]];
          expected += e.end_ns - e.start_ns;
        }
        ASSERT_EQ(busy_of_run(layout, lane, d.index, d.count), expected);
      }
      for (int w = 0; w < 50; ++w) {
        TimeNs a = std::uniform_int_distribution<TimeNs>(-100, t + 500)(rng);
        TimeNs b = std::uniform_int_distribution<TimeNs>(-100, t + 500)(rng);
        if (b < a) std::swap(a, b);
        TimeNs expected = 0;
        for (std::size_t k = 0; k < (members.empty() ? events.size() : members.size()); ++k) {
          const Ev& e = events[members.empty() ? k : members[k]];
          expected += std::max<TimeNs>(0, std::min(b, e.end_ns) - std::max(a, e.start_ns));
        }
        ASSERT_EQ(busy_until(layout, lane, std::span<const Ev>(events), b) -
                      busy_until(layout, lane, std::span<const Ev>(events), a),
                  expected);
      }
    }
  }
  // A layout without sums says so.
  std::vector<Ev> events{{0, 10}, {20, 30}};
  const auto plain = assign_lanes(std::span<const Ev>(events));
  EXPECT_EQ(busy_of_run(plain, 0, 0, 2), -1);
  EXPECT_EQ(busy_until(plain, 0, std::span<const Ev>(events), 25), -1);
}

// The utilisation lane: random sparse streams with overlaps (so on sub-lanes), in buckets of a fractional
// width; each bucket's share equals the events' overlap with it counted one by one over every sub-lane, at
// most 1. A stream busy a tenth of the time reads a tenth, never solid.
TEST(TimelineLod, UtilisationLaneSaysHowBusyEachBucketIs) {
  std::mt19937 rng(11);
  for (int round = 0; round < 10; ++round) {
    std::vector<Ev> events;
    TimeNs t = 0;
    for (int i = 0; i < 2000; ++i) {
      t += std::uniform_int_distribution<TimeNs>(0, 500)(rng);
      events.push_back({t, t + std::uniform_int_distribution<TimeNs>(1, 200)(rng)});
    }
    auto layout = assign_lanes(std::span<const Ev>(events));
    add_busy_prefix(layout, std::span<const Ev>(events));
    const TimeNs t0 = -300;
    const double width = static_cast<double>(t + 600) / 137.0;
    std::vector<float> shares(137);
    lane_utilisation(layout, std::span<const Ev>(events), t0, width, shares);
    for (std::size_t k = 0; k < shares.size(); ++k) {
      const TimeNs a = t0 + static_cast<TimeNs>(static_cast<double>(k) * width);
      const TimeNs b = t0 + static_cast<TimeNs>(static_cast<double>(k + 1) * width);
      TimeNs busy = 0;
      for (const Ev& e : events) busy += std::max<TimeNs>(0, std::min(b, e.end_ns) - std::max(a, e.start_ns));
      const double expected = std::min(1.0, static_cast<double>(busy) / static_cast<double>(b - a));
      ASSERT_NEAR(shares[k], expected, 1e-5) << "bucket " << k;
    }
    // A part of the grid computed alone (what a pan brings into view) has the very buckets of the whole.
    std::vector<float> part(40);
    lane_utilisation(layout, std::span<const Ev>(events), t0, width, part, 61);
    for (std::size_t k = 0; k < part.size(); ++k) ASSERT_EQ(part[k], shares[61 + k]) << "bucket " << 61 + k;
  }
  std::vector<Ev> sparse;
  for (TimeNs s = 0; s < 100'000; s += 1'000) sparse.push_back({s, s + 100});
  auto layout = assign_lanes(std::span<const Ev>(sparse));
  add_busy_prefix(layout, std::span<const Ev>(sparse));
  std::vector<float> shares(10);
  lane_utilisation(layout, std::span<const Ev>(sparse), 0, 10'000.0, shares);
  for (const float share : shares) EXPECT_NEAR(share, 0.1, 1e-6);
  const auto plain = assign_lanes(std::span<const Ev>(sparse));
  lane_utilisation(plain, std::span<const Ev>(sparse), 0, 10'000.0, shares);
  EXPECT_EQ(shares[0], 0.0f) << "no busy sums: nothing to say";
}

// The fold index gives the very items the stepwise folding gives: random streams with overlaps (sub-lanes),
// dense bursts, long events and long gaps, lanes long enough for whole blocks and groups of blocks to be
// jumped, at zooms from one event per pixel to the whole lane in a few pixels, and windows anywhere.
TEST(TimelineLod, FoldIndexGivesTheItemsOfTheStepwiseFolding) {
  std::mt19937 rng(23);
  for (int round = 0; round < 6; ++round) {
    std::vector<Ev> events;
    TimeNs t = 0;
    const int n = round < 3 ? 3000 : 300'000;
    for (int i = 0; i < n; ++i) {
      const int kind = std::uniform_int_distribution<int>(0, 99)(rng);
      t += kind < 2 ? std::uniform_int_distribution<TimeNs>(10'000, 5'000'000)(rng)  // an idle stretch
                    : std::uniform_int_distribution<TimeNs>(0, 300)(rng);
      const TimeNs length = kind == 99 ? std::uniform_int_distribution<TimeNs>(5'000, 500'000)(rng)
                                       : std::uniform_int_distribution<TimeNs>(1, 400)(rng);
      events.push_back({t, t + length});
    }
    auto layout = assign_lanes(std::span<const Ev>(events));
    add_fold_index(layout, std::span<const Ev>(events));
    ASSERT_EQ(layout.fold_index.size(), layout.lanes());
    for (const double ns_per_px : {0.5, 20.0, 700.0, 40'000.0, 3e6, static_cast<double>(t)}) {
      for (int window = 0; window < 4; ++window) {
        const TimeNs t0 = window == 0 ? 0 : std::uniform_int_distribution<TimeNs>(0, t)(rng);
        const TimeNs t1 = window == 0 ? t + 1 : t0 + static_cast<TimeNs>(ns_per_px * 1920);
        const LodParams p{t0, t1, ns_per_px, 3.0f};
        for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
          const auto members = layout.members.empty() ? std::span<const std::uint32_t>()
                                                      : std::span<const std::uint32_t>(layout.members[lane]);
          std::vector<DrawItem> stepwise, indexed;
          preprocess_lane(std::span<const Ev>(events), members, p, stepwise);
          const FoldIndex* folds = lane_fold_index(layout, lane);
          ASSERT_NE(folds, nullptr);
          preprocess_lane(std::span<const Ev>(events), members, p, indexed, folds);
          ASSERT_EQ(indexed.size(), stepwise.size()) << "round " << round << " ns/px " << ns_per_px;
          for (std::size_t i = 0; i < indexed.size(); ++i) {
            ASSERT_EQ(indexed[i].start_ns, stepwise[i].start_ns);
            ASSERT_EQ(indexed[i].end_ns, stepwise[i].end_ns);
            ASSERT_EQ(indexed[i].index, stepwise[i].index);
            ASSERT_EQ(indexed[i].count, stepwise[i].count);
          }
        }
      }
    }
  }
  // A lane whose events end before they start keeps the stepwise folding.
  std::vector<Ev> broken{{0, 10}, {20, 15}, {30, 40}};
  auto layout = assign_lanes(std::span<const Ev>(broken));
  add_fold_index(layout, std::span<const Ev>(broken));
  EXPECT_EQ(lane_fold_index(layout, 0), nullptr);
}

// A utilisation lane held between frames finds again only the edges it does not hold, and its shares are
// always the very ones computed from nothing: pans, zooms out and in by two and four, and back.
TEST(TimelineLod, UtilisationGridSearchesOnlyTheEdgesItLacks) {
  std::mt19937 rng(5);
  std::vector<Ev> events;
  TimeNs t = 0;
  for (int i = 0; i < 20'000; ++i) {
    t += std::uniform_int_distribution<TimeNs>(0, 900)(rng);
    events.push_back({t, t + std::uniform_int_distribution<TimeNs>(1, 700)(rng)});
  }
  auto layout = assign_lanes(std::span<const Ev>(events));
  add_busy_prefix(layout, std::span<const Ev>(events));
  ASSERT_GT(layout.lanes(), 1u);
  struct Step {
    std::int64_t first;
    std::size_t count;
    double width;
    std::size_t most_searched;  // at most this many edges searched (count + 1: all)
  };
  const Step steps[] = {
      {100, 480, 16'384, 481},  // the first frame: every edge
      {100, 480, 16'384, 0},    // the same view: nothing
      {110, 480, 16'384, 10},   // a pan of ten buckets: the ten new edges
      {55, 480, 32'768, 240},   // zoom out by two about the middle: only the edges outside the held range
      {110, 480, 16'384, 241},  // zoom in by two: every other edge
      {220, 480, 8'192, 481},   // zoom in again by two, shifted: at most all
      {50, 480, 32'768, 360},   // out by four: the held edges 220..700 are 55..175 of this grid
  };
  UtilisationGrid grid;
  for (const Step& step : steps) {
    update_utilisation_grid(grid, layout, std::span<const Ev>(events), -50, step.first, step.count,
                            step.width);
    EXPECT_LE(grid.searched, step.most_searched) << "first " << step.first << " width " << step.width;
    std::vector<float> fresh(step.count);
    lane_utilisation(layout, std::span<const Ev>(events), -50, step.width, fresh, step.first);
    ASSERT_EQ(grid.shares, fresh) << "first " << step.first << " width " << step.width;
  }
}

TEST(TimelineLod, IntervalsMergeUnderOnePixel) {
  std::vector<measure::Interval> v{{0, 10}, {12, 20}, {100, 200}, {5000, 6000}};
  std::vector<DrawItem> out;
  preprocess_intervals(v, LodParams{0, 10000, 5.0, 3.0f}, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].end_ns, 20);
  out.clear();
  preprocess_intervals(v, LodParams{150, 5500, 5.0, 3.0f}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].start_ns, 100);
}

TEST(TimelineLod, RulerStepsAreOneTwoFive) {
  EXPECT_EQ(ruler_step(1.0, 100), 100);
  EXPECT_EQ(ruler_step(1.5, 100), 200);
  EXPECT_EQ(ruler_step(3.0, 100), 500);
  EXPECT_EQ(ruler_step(1e6, 100), 100'000'000);
}

TEST(TimelineLod, TimeTextPicksUnits) {
  char buf[32];
  format_time(buf, sizeof buf, 2'500'000, 500'000);
  EXPECT_STREQ(buf, "2.5 ms");
  format_time(buf, sizeof buf, 40'000'000, 20'000'000);
  EXPECT_STREQ(buf, "40 ms");
  format_time(buf, sizeof buf, 1500, 500);
  EXPECT_STREQ(buf, "1.5 \xC2\xB5s");
  format_time(buf, sizeof buf, 12, 2);
  EXPECT_STREQ(buf, "12 ns");
  format_time(buf, sizeof buf, 3'000'000'000, 1'000'000'000);
  EXPECT_STREQ(buf, "3 s");
}

}  // namespace
}  // namespace meshscope::gui
