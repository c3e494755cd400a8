// Nesting of CPU ranges per track (rank, pid, tid): depth and parent of every range, as the ProfileWriter
// stores them. Ranges sorted by start (longer first on ties) nest inside the innermost open range that has
// not ended; ranges that overlap without nesting are kept one level deeper, so nothing is hidden.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "profiler/records.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope::writer {

struct NestedRange {
  std::int64_t id, depth, parent;  // parent: kNull at depth 0
  RangeRecord record;
};

// Nesting computed as ranges arrive, when each track's ranges come in start order (the usual case): ranges
// with the same start wait until a later start shows up (the longest of them is the parent), then take their
// depth from the track's stack of open ranges and go to EMIT. A range that arrives out of order turns this
// off (add() returns false from then on): the caller writes ranges as they come and calls
// rebuild_range_nesting() at the end.
class OnlineNesting {
 public:
  explicit OnlineNesting(std::function<void(const NestedRange&)> emit) : emit_(std::move(emit)) {}

  // False when RANGE could not be nested online (it is then the caller's to write, unnested).
  bool add(const NestedRange& range);
  // Emits the ranges still waiting for a later start.
  void flush();
  bool active() const { return active_; }

 private:
  struct Open {
    std::int64_t id;
    TimeNs end;
  };
  struct Track {
    std::vector<Open> stack;
    std::vector<NestedRange> same_start;  // ranges sharing the latest start, not yet nested
  };
  struct TrackKey {
    std::int32_t rank;
    std::int64_t pid, tid;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    std::size_t operator()(const TrackKey& k) const {
      return std::hash<std::int64_t>{}(k.pid * 1'000'003 + k.tid) ^ std::hash<std::int32_t>{}(k.rank);
    }
  };

  void emit_same_start(Track& track);

  std::function<void(const NestedRange&)> emit_;
  std::unordered_map<TrackKey, Track, TrackKeyHash> tracks_;
  bool active_ = true;
};

// Rewrites the ranges table of DB in track order with depth and parent filled in (sequential inserts:
// updating rows in place would touch pages at random, minutes for millions of ranges).
void rebuild_range_nesting(sql::Database& db);

}  // namespace meshscope::writer
