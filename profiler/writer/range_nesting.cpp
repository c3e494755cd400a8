#include "profiler/writer/range_nesting.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "profiler/schema_tables.hpp"

namespace meshscope::writer {

// Pops the ranges that ended by START; a zero-length range at the end of an open one still nests inside it.
void NestingStack::close_ended(TimeNs start, TimeNs end) {
  while (!runs_.empty() && runs_.back().end <= start && !(runs_.back().end == start && end == start)) {
    depth_ -= runs_.back().count;
    runs_.pop_back();
  }
}

void NestingStack::push(std::int64_t id, TimeNs end) {
  // Ranges that end together are popped together: one run holds them, however deep they nest.
  if (!runs_.empty() && runs_.back().end == end) {
    ++runs_.back().count;
    runs_.back().last_id = id;
  } else {
    runs_.push_back({end, id, 1});
  }
  ++depth_;
}

namespace {

// Nesting of ranges read in track order (rank, pid, tid, then start, longer first): the depth and parent of
// each.
class SortedTrackNester {
 public:
  struct Place {
    std::int64_t depth, parent;  // parent: kNull at depth 0
  };
  Place place(std::int64_t rank, std::int64_t pid, std::int64_t tid, std::int64_t id, TimeNs start,
              TimeNs end) {
    if (rank != rank_ || pid != pid_ || tid != tid_) {
      stack_.clear();
      rank_ = rank;
      pid_ = pid;
      tid_ = tid;
    }
    stack_.close_ended(start, end);
    const Place where{stack_.depth(), stack_.parent()};
    stack_.push(id, end);
    return where;
  }

 private:
  NestingStack stack_;
  std::int64_t rank_ = kNull, pid_ = kNull, tid_ = kNull;
};

}  // namespace

bool OnlineNesting::add(const NestedRange& range) {
  const RangeRecord& record = range.record;
  Track& track = tracks_[TrackKey{record.rank, record.pid, record.tid}];
  ++track.ranges;
  ++total_ranges_;
  if (track.nested_by_caller) track.repair = true;  // its written ranges may enclose this one, or lie in it
  if (track.repair) return false;
  if (hold_back_) {
    track.waiting.push_back(range);
    if (++waiting_ >= kMaxWaiting) close_tracks();
    return true;
  }
  const TimeNs group_start = !track.same_start.empty() ? track.same_start.front().record.start_ns
                             : track.partial           ? track.partial_start
                                                       : record.start_ns;
  if (record.start_ns >= group_start) {
    if (record.start_ns > group_start) {
      emit_same_start(track);
      track.partial = false;
    }
    track.same_start.push_back(range);
    if (track.same_start.size() >= kMaxWaiting) {
      // A bound on memory: emitted now, sorted; a later one of this start must end no later.
      emit_same_start(track);
      if (!track.repair) {
        track.partial = true;
        track.partial_start = record.start_ns;
      }
    }
    return true;
  }
  // Out of order: this track's emitted ranges may lie inside RANGE, so the track is repaired at commit; every
  // other track holds its ranges back from now on.
  track.repair = true;
  hold_back_ = true;
  for (const auto& waiting : track.same_start) emit_(waiting);  // unnested, repaired at commit
  track.same_start.clear();
  return false;
}

void OnlineNesting::add_nested_track(const TrackKey& key, std::size_t ranges) {
  Track& track = tracks_[key];
  if (track.ranges > 0) track.repair = true;  // the track had ranges of its own: nest it all again at commit
  track.nested_by_caller = true;
  track.ranges += ranges;
  total_ranges_ += ranges;
}

void OnlineNesting::close_tracks() {
  for (auto& [key, track] : tracks_) {
    if (hold_back_) {
      // What an online track still had pending joins its waiting ranges.
      track.waiting.insert(track.waiting.end(), track.same_start.begin(), track.same_start.end());
      track.same_start.clear();
      emit_waiting(track);
    } else {
      emit_same_start(track);
    }
  }
  waiting_ = 0;
}

std::size_t OnlineNesting::ranges_to_repair() const {
  std::size_t n = 0;
  for (const auto& [key, track] : tracks_) {
    if (track.repair) n += track.ranges;
  }
  return n;
}

std::vector<TrackKey> OnlineNesting::tracks_to_repair() const {
  std::vector<TrackKey> out;
  for (const auto& [key, track] : tracks_) {
    if (track.repair) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void OnlineNesting::nest_and_emit(Track& track, std::vector<NestedRange>& sorted) {
  for (auto& range : sorted) {
    const TimeNs start = range.record.start_ns, end = range.record.end_ns;
    track.stack.close_ended(start, end);
    range.depth = track.stack.depth();
    range.parent = track.stack.parent();
    track.stack.push(range.id, end);
    emit_(range);
  }
  if (!sorted.empty()) {
    track.last_start = sorted.back().record.start_ns;
    track.emitted = true;
  }
  sorted.clear();
}

void OnlineNesting::emit_same_start(Track& track) {
  auto& group = track.same_start;
  if (group.empty()) return;
  std::stable_sort(group.begin(), group.end(), [](const NestedRange& a, const NestedRange& b) {
    return a.record.end_ns > b.record.end_ns;
  });
  if (track.partial && group.front().record.end_ns > track.partial_end) {
    // It belongs before ranges of its start already emitted: the track is nested again at commit.
    track.repair = true;
    track.partial = false;
    for (const auto& range : group) emit_(range);  // unnested, repaired at commit
    group.clear();
    return;
  }
  track.partial_end = group.back().record.end_ns;
  nest_and_emit(track, group);
}

void OnlineNesting::emit_waiting(Track& track) {
  auto& waiting = track.waiting;
  if (waiting.empty()) return;
  std::sort(waiting.begin(), waiting.end(), [](const NestedRange& a, const NestedRange& b) {
    if (a.record.start_ns != b.record.start_ns) return a.record.start_ns < b.record.start_ns;
    if (a.record.end_ns != b.record.end_ns) return a.record.end_ns > b.record.end_ns;
    return a.id < b.id;
  });
  // A range starting where the emitted ones started could be their parent: only a later start may follow.
  if (track.emitted && waiting.front().record.start_ns <= track.last_start) {
    track.repair = true;
    for (const auto& range : waiting) emit_(range);  // unnested, repaired at commit
    waiting.clear();
    return;
  }
  nest_and_emit(track, waiting);
}

void nest_ranges(const std::vector<RangeRecord>& ranges, std::vector<std::int32_t>& depth,
                 std::vector<std::int64_t>& parent) {
  // Track order, then start, longer first, then as given: the order rebuild_range_nesting reads.
  std::vector<std::uint32_t> order(ranges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const RangeRecord &a = ranges[x], &b = ranges[y];
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return x < y;
  });
  depth.assign(ranges.size(), 0);
  parent.assign(ranges.size(), -1);
  SortedTrackNester nester;
  for (const std::uint32_t i : order) {
    const RangeRecord& r = ranges[i];
    const auto where = nester.place(r.rank, r.pid, r.tid, i, r.start_ns, r.end_ns);
    depth[i] = static_cast<std::int32_t>(where.depth);
    parent[i] = where.parent == kNull ? -1 : where.parent;
  }
}

void rebuild_range_nesting(sql::Database& db) {
  std::string create_sql;
  {
    sql::Statement s = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'ranges'");
    if (!s.step()) return;
    create_sql = s.column_text(0);
  }
  db.exec("ALTER TABLE ranges RENAME TO ranges_unnested");
  db.exec(create_sql);
  using schema::Ranges;
  {
    sql::Statement select = db.prepare(
        fmt::format("SELECT {} FROM ranges_unnested ORDER BY rank, pid, tid, start_ns, end_ns DESC, id",
                    schema::column_list(Ranges::kColumns)));
    sql::Statement insert = db.prepare(schema::insert_sql<Ranges>());
    SortedTrackNester nester;
    while (select.step()) {
      const auto where = nester.place(select.column_int(Ranges::rank), select.column_int(Ranges::pid),
                                      select.column_int(Ranges::tid), select.column_int(Ranges::id),
                                      select.column_int(Ranges::start_ns), select.column_int(Ranges::end_ns));
      for (int i = 0; i < Ranges::kCount; ++i)
        sqlite3_bind_value(insert.handle(), i + 1, sqlite3_column_value(select.handle(), i));
      insert.bind(1 + Ranges::depth, where.depth);
      insert.bind(1 + Ranges::parent_id, where.parent);
      insert.run();
    }
  }
  db.exec("DROP TABLE ranges_unnested");
}

void repair_range_nesting(sql::Database& db, const std::vector<TrackKey>& tracks) {
  if (tracks.empty()) return;
  std::string keys;
  for (const auto& t : tracks)
    keys += fmt::format("{}({},{},{})", keys.empty() ? "" : ",", t.rank, t.pid, t.tid);
  sql::Statement select = db.prepare(fmt::format(
      "SELECT id, rank, pid, tid, start_ns, end_ns FROM ranges WHERE (rank, pid, tid) IN (VALUES {})"
      " ORDER BY rank, pid, tid, start_ns, end_ns DESC, id",
      keys));
  sql::Statement update = db.prepare("UPDATE ranges SET depth = ?, parent_id = ? WHERE id = ?");
  SortedTrackNester nester;
  while (select.step()) {
    const auto where = nester.place(select.column_int(1), select.column_int(2), select.column_int(3),
                                    select.column_int(0), select.column_int(4), select.column_int(5));
    update.bind(1, where.depth);
    update.bind(2, where.parent);
    update.bind(3, select.column_int(0));
    update.run();
  }
}

}  // namespace meshscope::writer
