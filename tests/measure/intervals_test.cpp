// Interval algebra: adversarial hand-written cases and a randomised check against a unit-grid reference.
#include "analysis/measure/intervals.hpp"

#include <random>

#include <gtest/gtest.h>

namespace meshscope::measure {
namespace {

using V = std::vector<Interval>;

V unite(V input) {
  sort_by_start(input);
  V out;
  union_sorted(input, out);
  return out;
}

TEST(Intervals, UnionOfNestedIdenticalStartsAndZeroLength) {
  // Nesting: [0,100) holds [10,20) and [30,40); identical starts [50,60) and [50,55); zero length at 70 and
  // 200.
  EXPECT_EQ(unite({{0, 100}, {10, 20}, {30, 40}}), (V{{0, 100}}));
  EXPECT_EQ(unite({{50, 55}, {50, 60}, {50, 50}}), (V{{50, 60}}));
  EXPECT_EQ(unite({{70, 70}, {200, 200}}), V{});
  EXPECT_EQ(unite({{0, 10}, {10, 20}}), (V{{0, 20}})) << "touching intervals merge";
  EXPECT_EQ(unite({{0, 10}, {11, 20}}), (V{{0, 10}, {11, 20}}));
  EXPECT_EQ(unite({{5, 3}, {0, 1}}), (V{{0, 1}})) << "inverted intervals contribute nothing";
  EXPECT_EQ(unite({}), V{});
  // A long interval that starts first swallows later, shorter ones, then a later one extends it.
  EXPECT_EQ(unite({{0, 50}, {1, 2}, {3, 4}, {49, 80}, {90, 95}}), (V{{0, 80}, {90, 95}}));
}

TEST(Intervals, OverlapAcrossStreams) {
  // Two streams, each disjoint on its own, overlapping each other: compute on stream A, comm on stream B.
  const V compute = {{0, 10}, {20, 30}, {40, 50}};
  const V comm = {{5, 25}, {45, 60}};
  V out;
  union_of(compute, comm, out);
  EXPECT_EQ(out, (V{{0, 30}, {40, 60}}));
  intersect(comm, compute, out);
  EXPECT_EQ(out, (V{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(intersection_length(comm, compute), 15);
  subtract(comm, compute, out);
  EXPECT_EQ(out, (V{{10, 20}, {50, 60}})) << "exposed communication";
  subtract(compute, comm, out);
  EXPECT_EQ(out, (V{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_EQ(total_length(comm), 35);
}

TEST(Intervals, SubtractEdgeCases) {
  V out;
  subtract(V{{0, 100}}, V{{0, 100}}, out);
  EXPECT_EQ(out, V{});
  subtract(V{{0, 100}}, V{{-10, 5}, {10, 20}, {95, 200}}, out);
  EXPECT_EQ(out, (V{{5, 10}, {20, 95}}));
  // One cut spanning several pieces.
  subtract(V{{0, 10}, {20, 30}, {40, 50}}, V{{5, 45}}, out);
  EXPECT_EQ(out, (V{{0, 5}, {45, 50}}));
  subtract(V{{0, 10}}, V{}, out);
  EXPECT_EQ(out, (V{{0, 10}}));
  subtract(V{}, V{{0, 10}}, out);
  EXPECT_EQ(out, V{});
  intersect(V{{0, 10}}, V{{10, 20}}, out);
  EXPECT_EQ(out, V{}) << "contact is not overlap";
}

TEST(Intervals, MergeDisjointRuns) {
  V runs = {{0, 10}, {30, 40}, /* run 2 */ {5, 15}, {35, 36}, /* run 3 */ {15, 30}, /* run 4 */ {100, 110}};
  std::vector<std::size_t> bounds = {0, 2, 4, 5, 6};
  V scratch;
  merge_disjoint_runs(runs, bounds, scratch);
  EXPECT_EQ(runs, (V{{0, 40}, {100, 110}}));
  EXPECT_EQ(bounds, (std::vector<std::size_t>{0, 2}));
  V empty;
  std::vector<std::size_t> none = {0};
  merge_disjoint_runs(empty, none, scratch);
  EXPECT_TRUE(empty.empty());
}

// Reference: mark unit cells on a small grid.
std::vector<bool> cells(const V& intervals, int size) {
  std::vector<bool> grid(static_cast<std::size_t>(size), false);
  for (const Interval& i : intervals) {
    for (TimeNs t = std::max<TimeNs>(i.start, 0); t < std::min<TimeNs>(i.end, size); ++t) grid[t] = true;
  }
  return grid;
}

bool disjoint_form(const V& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].end <= v[i].start) return false;
    if (i > 0 && v[i].start <= v[i - 1].end) return false;
  }
  return true;
}

TEST(Intervals, RandomisedAgainstGrid) {
  std::mt19937 rng(12345);
  constexpr int kSize = 200;
  std::uniform_int_distribution<int> pos(0, kSize), len(0, 30), count(0, 25);
  for (int round = 0; round < 2000; ++round) {
    auto random_set = [&] {
      V v;
      for (int k = count(rng); k > 0; --k) {
        const int s = pos(rng);
        v.push_back({s, std::min(kSize, s + len(rng))});
      }
      return v;
    };
    const V raw_a = random_set(), raw_b = random_set();
    const V a = unite(raw_a), b = unite(raw_b);
    ASSERT_TRUE(disjoint_form(a));
    ASSERT_EQ(cells(a, kSize), cells(raw_a, kSize));
    const auto ga = cells(a, kSize), gb = cells(b, kSize);
    V u, in, diff;
    union_of(a, b, u);
    intersect(a, b, in);
    subtract(a, b, diff);
    ASSERT_TRUE(disjoint_form(u) && disjoint_form(in) && disjoint_form(diff));
    TimeNs n_in = 0;
    for (int t = 0; t < kSize; ++t) {
      ASSERT_EQ(cells(u, kSize)[t], ga[t] || gb[t]);
      ASSERT_EQ(cells(in, kSize)[t], ga[t] && gb[t]);
      ASSERT_EQ(cells(diff, kSize)[t], ga[t] && !gb[t]);
      n_in += ga[t] && gb[t];
    }
    ASSERT_EQ(intersection_length(a, b), n_in);
    ASSERT_EQ(total_length(a), static_cast<TimeNs>(std::count(ga.begin(), ga.end(), true)));
    // Runs: split raw_a into 3 "streams", union each, merge.
    V runs;
    std::vector<std::size_t> bounds = {0};
    for (int s = 0; s < 3; ++s) {
      V part;
      for (std::size_t k = static_cast<std::size_t>(s); k < raw_a.size(); k += 3) part.push_back(raw_a[k]);
      const V merged = unite(part);
      runs.insert(runs.end(), merged.begin(), merged.end());
      bounds.push_back(runs.size());
    }
    V scratch;
    merge_disjoint_runs(runs, bounds, scratch);
    ASSERT_EQ(runs, a);
  }
}

}  // namespace
}  // namespace meshscope::measure
