// Nesting of CPU ranges per track (rank, pid, tid): depth and parent of every range, as the ProfileWriter
// stores them. Ranges sorted by start (longer first on ties) nest inside the innermost open range that has
// not ended; ranges that overlap without nesting are kept one level deeper, so nothing is hidden.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/records.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope::writer {

struct NestedRange {
  std::int64_t id, depth, parent;  // parent: kNull at depth 0
  RangeRecord record;
};

struct TrackKey {
  std::int32_t rank;
  std::int64_t pid, tid;
  bool operator==(const TrackKey&) const = default;
  bool operator<(const TrackKey& o) const {
    return rank != o.rank ? rank < o.rank : pid != o.pid ? pid < o.pid : tid < o.tid;
  }
};

// The ranges open at a point of a track, innermost last: what nesting the next range needs (its depth and
// parent). Ranges that end at the same time are held as one run, so that memory follows the distinct ends
// open, not the depth: a trace of millions of identical operators nests them millions deep in one run.
class NestingStack {
 public:
  // Closes the ranges that ended by START (a range [START, END) with END == START still nests in one ending
  // at START).
  void close_ended(TimeNs start, TimeNs end);
  void push(std::int64_t id, TimeNs end);
  std::int64_t depth() const { return depth_; }
  // The innermost open range's id, kNull when none is open.
  std::int64_t parent() const { return runs_.empty() ? kNull : runs_.back().last_id; }
  void clear() {
    runs_.clear();
    depth_ = 0;
  }

 private:
  struct Run {
    TimeNs end;
    std::int64_t last_id, count;
  };
  std::vector<Run> runs_;
  std::int64_t depth_ = 0;
};

// Nesting computed before the ranges reach the database, so that commit() need not rewrite the table.
// While every track's ranges arrive in start order (the usual case), each range goes to EMIT as soon as a
// later start shows up (ranges with the same start wait: the longest is the parent; at most kMaxWaiting of
// them, then they are emitted and any of that start that ends later has the track repaired), and the database
// writes them while the source is still being read. Once some track's range arrives out of order (PyTorch
// lists a parent after its children), every track's ranges from then on wait in memory until close_tracks()
// (the importer calls it after each file, and it happens by itself when kMaxWaiting ranges wait), are sorted,
// and nested then. The track that went out of order, and any track whose waiting ranges start before what it
// already emitted, is left to repair_range_nesting() at commit: add() returns false for its ranges, which the
// caller writes unnested.
class OnlineNesting {
 public:
  // About 50 MB of waiting ranges: more than a large trace file holds per rank, and a bound on memory.
  static constexpr std::size_t kMaxWaiting = std::size_t{1} << 19;

  explicit OnlineNesting(std::function<void(const NestedRange&)> emit) : emit_(std::move(emit)) {}

  // False when RANGE's track is left to the repair at commit (the caller then writes RANGE unnested).
  bool add(const NestedRange& range);
  // RANGES ranges of the track KEY were nested by the caller (nest_ranges) and written: a range that comes
  // for the track later (add) has the track repaired at commit.
  void add_nested_track(const TrackKey& key, std::size_t ranges);
  // Emits every range held back: the tracks seen so far are complete (more ranges may still come for them,
  // but starting after their last one, or the track is repaired at commit).
  void close_tracks();
  // The tracks whose nesting repair_range_nesting() must compute, keyed by the rank at the time of add().
  std::vector<TrackKey> tracks_to_repair() const;
  // How many ranges those tracks hold, and how many ranges were added in all.
  std::size_t ranges_to_repair() const;
  std::size_t total_ranges() const { return total_ranges_; }

 private:
  struct Track {
    NestingStack stack;
    std::vector<NestedRange> same_start;  // in start order: the ranges sharing the latest start
    // More than kMaxWaiting ranges shared that start: those were emitted (sorted), ending no later than
    // partial_end; one of that start ending later would have had to precede them (the track is repaired).
    bool partial = false;
    TimeNs partial_start = 0, partial_end = 0;
    std::vector<NestedRange> waiting;  // after the switch to waiting: every range, in any order
    TimeNs last_start = 0;             // of the ranges emitted nested
    bool emitted = false;
    bool repair = false;
    bool nested_by_caller = false;
    std::size_t ranges = 0;
  };
  struct TrackKeyHash {
    std::size_t operator()(const TrackKey& k) const {
      // Unsigned: a trace's pid and tid are whatever it says, and a signed product could overflow.
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.pid) * 1'000'003u +
                                        static_cast<std::uint64_t>(k.tid)) ^
             std::hash<std::int32_t>{}(k.rank);
    }
  };

  void nest_and_emit(Track& track, std::vector<NestedRange>& sorted);
  void emit_same_start(Track& track);
  void emit_waiting(Track& track);

  std::function<void(const NestedRange&)> emit_;
  std::unordered_map<TrackKey, Track, TrackKeyHash> tracks_;
  std::size_t waiting_ = 0;
  std::size_t total_ranges_ = 0;
  bool hold_back_ = false;  // ranges wait until close_tracks() (some track came out of order)
};

// Depth and parent of each of RANGES, whose tracks hold no other ranges, by the rule above (the order of
// RANGES breaks ties): DEPTH[i], and PARENT[i] the index in RANGES of its parent, or -1 at depth 0.
void nest_ranges(const std::vector<RangeRecord>& ranges, std::vector<std::int32_t>& depth,
                 std::vector<std::int64_t>& parent);

// Rewrites the ranges table of DB in track order with depth and parent filled in (sequential inserts:
// updating rows in place would touch pages at random, minutes for millions of ranges).
void rebuild_range_nesting(sql::Database& db);

// Computes depth and parent of the ranges of TRACKS only (ranks as stored now), updating them in place: for a
// few tracks of a large profile, much cheaper than rewriting the table.
void repair_range_nesting(sql::Database& db, const std::vector<TrackKey>& tracks);

}  // namespace meshscope::writer
