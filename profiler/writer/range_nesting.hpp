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

// Nesting computed before the ranges reach the database, so that commit() need not rewrite the table.
// While every track's ranges arrive in start order (the usual case), each range goes to EMIT as soon as a
// later start shows up (ranges with the same start wait: the longest is the parent), and the database writes
// them while the source is still being read. Once some track's range arrives out of order (PyTorch lists a
// parent after its children), every track's ranges from then on wait in memory until close_tracks() (the
// importer calls it after each file, and it happens by itself when kMaxWaiting ranges wait), are sorted, and
// nested then. The track that went out of order, and any track whose waiting ranges start before what it
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
  struct Open {
    std::int64_t id;
    TimeNs end;
  };
  struct Track {
    std::vector<Open> stack;
    std::vector<NestedRange> same_start;  // in start order: the ranges sharing the latest start
    std::vector<NestedRange> waiting;     // after the switch to waiting: every range, in any order
    TimeNs last_start = 0;                // of the ranges emitted nested
    bool emitted = false;
    bool repair = false;
    bool nested_by_caller = false;
    std::size_t ranges = 0;
  };
  struct TrackKeyHash {
    std::size_t operator()(const TrackKey& k) const {
      return std::hash<std::int64_t>{}(k.pid * 1'000'003 + k.tid) ^ std::hash<std::int32_t>{}(k.rank);
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
