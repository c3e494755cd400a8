#include "profiler/writer/range_nesting.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "profiler/schema_tables.hpp"

namespace meshscope::writer {
namespace {

// Pops the ranges that ended by START; a zero-length range at the end of an open one still nests inside it.
template <typename Stack>
void close_ended(Stack& stack, TimeNs start, TimeNs end) {
  while (!stack.empty() && stack.back().end <= start && !(stack.back().end == start && end == start)) {
    stack.pop_back();
  }
}

}  // namespace

bool OnlineNesting::add(const NestedRange& range) {
  if (!active_) return false;
  const RangeRecord& record = range.record;
  auto& track = tracks_[TrackKey{record.rank, record.pid, record.tid}];
  const TimeNs group_start =
      track.same_start.empty() ? record.start_ns : track.same_start.front().record.start_ns;
  if (record.start_ns >= group_start) {
    if (record.start_ns > group_start) emit_same_start(track);
    track.same_start.push_back(range);
    return true;
  }
  // Out of order: what waits is emitted as nested so far, the rest is the caller's.
  active_ = false;
  flush();
  tracks_.clear();
  return false;
}

void OnlineNesting::flush() {
  for (auto& [key, track] : tracks_) emit_same_start(track);
}

void OnlineNesting::emit_same_start(Track& track) {
  auto& group = track.same_start;
  if (group.empty()) return;
  std::stable_sort(group.begin(), group.end(), [](const NestedRange& a, const NestedRange& b) {
    return a.record.end_ns > b.record.end_ns;
  });
  for (auto& range : group) {
    const TimeNs start = range.record.start_ns, end = range.record.end_ns;
    close_ended(track.stack, start, end);
    range.depth = static_cast<std::int64_t>(track.stack.size());
    range.parent = track.stack.empty() ? kNull : track.stack.back().id;
    track.stack.push_back({range.id, end});
    emit_(range);
  }
  group.clear();
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
    struct Open {
      std::int64_t id;
      TimeNs end;
    };
    std::vector<Open> stack;
    std::int64_t track_rank = kNull, track_pid = kNull, track_tid = kNull;
    while (select.step()) {
      const std::int64_t id = select.column_int(Ranges::id);
      const std::int64_t rank = select.column_int(Ranges::rank), pid = select.column_int(Ranges::pid),
                         tid = select.column_int(Ranges::tid);
      const TimeNs start = select.column_int(Ranges::start_ns), end = select.column_int(Ranges::end_ns);
      if (rank != track_rank || pid != track_pid || tid != track_tid) {
        stack.clear();
        track_rank = rank;
        track_pid = pid;
        track_tid = tid;
      }
      close_ended(stack, start, end);
      for (int i = 0; i < Ranges::kCount; ++i)
        sqlite3_bind_value(insert.handle(), i + 1, sqlite3_column_value(select.handle(), i));
      insert.bind(1 + Ranges::depth, static_cast<std::int64_t>(stack.size()));
      insert.bind(1 + Ranges::parent_id, stack.empty() ? kNull : stack.back().id);
      insert.run();
      stack.push_back({id, end});
    }
  }
  db.exec("DROP TABLE ranges_unnested");
}

}  // namespace meshscope::writer
