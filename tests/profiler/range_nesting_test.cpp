// Nesting of CPU ranges as the writer computes it while they arrive (profiler/writer/range_nesting.hpp):
// the online result must equal the reference (nest_ranges: every range sorted at once), and memory must not
// follow the number of ranges sharing a start or the nesting depth (a trace of 27.5 million
// identical operators, each nested in the one before, took 5.9 GB to import).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "profiler/writer/range_nesting.hpp"

namespace meshscope::writer {
namespace {

RangeRecord range_of(TimeNs start, TimeNs end) {
  RangeRecord r;
  r.pid = 1;
  r.tid = 1;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

struct Nested {
  std::vector<std::int64_t> depth, parent;  // by id - 1; parent as an id, kNull at depth 0
  bool repaired = false;
};

// The ranges through OnlineNesting, ids 1..N in the order given, then closed.
Nested online(const std::vector<RangeRecord>& ranges) {
  Nested out;
  out.depth.assign(ranges.size(), -1);
  out.parent.assign(ranges.size(), -1);
  OnlineNesting nesting([&](const NestedRange& r) {
    out.depth[static_cast<std::size_t>(r.id - 1)] = r.depth;
    out.parent[static_cast<std::size_t>(r.id - 1)] = r.parent;
  });
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const NestedRange r{static_cast<std::int64_t>(i) + 1, 0, kNull, ranges[i]};
    if (!nesting.add(r)) out.depth[i] = 0;  // written unnested, repaired at commit
  }
  nesting.close_tracks();
  out.repaired = !nesting.tracks_to_repair().empty();
  return out;
}

Nested reference(const std::vector<RangeRecord>& ranges) {
  std::vector<std::int32_t> depth;
  std::vector<std::int64_t> parent;
  nest_ranges(ranges, depth, parent);
  Nested out;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    out.depth.push_back(depth[i]);
    out.parent.push_back(parent[i] < 0 ? kNull : parent[i] + 1);
  }
  return out;
}

TEST(NestingStack, RangesEndingTogetherAreOneRunWhateverTheDepth) {
  NestingStack stack;
  for (std::int64_t id = 1; id <= 1000; ++id) {
    stack.close_ended(10, 20);
    EXPECT_EQ(stack.depth(), id - 1);
    EXPECT_EQ(stack.parent(), id == 1 ? kNull : id - 1);
    stack.push(id, 20);
  }
  stack.close_ended(12, 15);  // inside all of them
  EXPECT_EQ(stack.depth(), 1000);
  stack.push(1001, 15);
  stack.close_ended(15, 16);  // closes 1001 only
  EXPECT_EQ(stack.depth(), 1000);
  EXPECT_EQ(stack.parent(), 1000);
  stack.close_ended(20, 20);  // a zero-length range at their end still nests in them
  EXPECT_EQ(stack.depth(), 1000);
  stack.close_ended(20, 21);
  EXPECT_EQ(stack.depth(), 0);
  EXPECT_EQ(stack.parent(), kNull);
}

// More ranges sharing one start than the nesting holds back: emitted as they fill the group, nested exactly
// as the reference nests them.
TEST(OnlineNesting, ManyRangesSharingAStartAreEmittedInGroupsAndNestedAsTheReference) {
  const std::size_t n = OnlineNesting::kMaxWaiting * 2 + 17;
  std::vector<RangeRecord> identical(n, range_of(1000, 2000));
  identical.push_back(range_of(5000, 6000));
  const Nested got = online(identical);
  EXPECT_FALSE(got.repaired);
  const Nested want = reference(identical);
  EXPECT_EQ(got.depth, want.depth);
  EXPECT_EQ(got.parent, want.parent);
  EXPECT_EQ(got.depth[n - 1], static_cast<std::int64_t>(n - 1));
  EXPECT_EQ(got.depth[n], 0);

  // Shorter and shorter ranges of one start: each group sorted, still the reference's nesting.
  std::vector<RangeRecord> shrinking;
  for (std::size_t i = 0; i < n; ++i) shrinking.push_back(range_of(0, static_cast<TimeNs>(3 * n - i)));
  const Nested got_shrinking = online(shrinking);
  EXPECT_FALSE(got_shrinking.repaired);
  const Nested want_shrinking = reference(shrinking);
  EXPECT_EQ(got_shrinking.depth, want_shrinking.depth);
  EXPECT_EQ(got_shrinking.parent, want_shrinking.parent);
}

// A range of that start ending later than the ones already emitted belonged before them: its track is left
// to the repair at commit instead of being nested wrong.
TEST(OnlineNesting, ALongerRangeAfterAnEmittedGroupOfItsStartHasTheTrackRepaired) {
  std::vector<RangeRecord> ranges(OnlineNesting::kMaxWaiting, range_of(1000, 2000));
  ranges.push_back(range_of(1000, 3000));
  EXPECT_TRUE(online(ranges).repaired);
}

}  // namespace
}  // namespace meshscope::writer
