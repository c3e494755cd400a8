#include "profiler/writer/cpu_collectives.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "profiler/schema_tables.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::writer {

void rewrite_ranks(std::span<CpuCollective> collectives, std::span<const RankRewrite> rewrites) {
  for (const auto& r : rewrites) {
    for (auto& c : collectives) {
      if (c.record.rank != r.old_rank) continue;
      c.record.rank = r.new_rank;
      c.record.start_ns += r.shift_ns;
      c.record.end_ns += r.shift_ns;
    }
  }
}

void resolve_cpu_collectives(sql::Database& db, std::span<const CpuCollective> collectives,
                             std::int64_t& next_id,
                             const std::function<void(std::int64_t, const CollectiveRecord&)>& write) {
  if (collectives.empty()) return;
  const bool all_resolved =
      std::all_of(collectives.begin(), collectives.end(), [](const CpuCollective& c) { return c.resolved; });
  if (all_resolved) {  // nothing to look up: the importer resolved them (no other row refers to these
                       // kernels)
    for (const auto& c : collectives) write(next_id++, c.record);
    return;
  }
  db.exec("CREATE INDEX IF NOT EXISTS api_calls_by_thread ON api_calls (rank, pid, tid, start_ns)");
  // Kernels that already have a collective (activity -> row id, known by name only): those with metadata keep
  // it; name-only rows take the CPU metadata.
  std::unordered_map<std::int64_t, std::pair<std::int64_t, bool>> existing;
  {
    sql::Statement s =
        db.prepare("SELECT activity_id, id, source FROM collectives WHERE activity_id IS NOT NULL");
    while (s.step())
      existing[s.column_int(0)] = {s.column_int(1), s.column_text(2) == vocabulary::kNameOnlySource};
  }
  sql::Statement calls = db.prepare(
      "SELECT correlation FROM api_calls WHERE rank = ? AND pid = ? AND tid = ? AND start_ns BETWEEN ? AND ?"
      " AND correlation IS NOT NULL");
  sql::Statement kernels = db.prepare(fmt::format(
      "SELECT id, start_ns, end_ns FROM activities WHERE rank = ? AND correlation = ? AND kind = {}",
      static_cast<int>(ActivityKind::kKernel)));
  // The metadata columns, numbered as Collectives::bind_metadata binds them; algorithm and protocol stay as
  // the kernel's name gave them (the CPU side never states them).
  using schema::Collectives;
  std::string set_metadata;
  for (int i = Collectives::communicator; i <= Collectives::source; ++i) {
    if (i == Collectives::start_ns || i == Collectives::end_ns || i == Collectives::algorithm ||
        i == Collectives::protocol)
      continue;
    set_metadata +=
        fmt::format("{}{} = ?{}", set_metadata.empty() ? "" : ", ", Collectives::kColumns[i].name, i + 1);
  }
  sql::Statement upgrade = db.prepare(
      fmt::format("UPDATE collectives SET {} WHERE id = ?{}", set_metadata, Collectives::kCount + 1));
  for (const auto& [c, pid, tid, resolved] : collectives) {
    if (resolved) {
      const std::int64_t id = next_id++;
      write(id, c);
      if (c.activity_id != kNull) existing[c.activity_id] = {id, false};
      continue;
    }
    bool launched = false;
    calls.bind(1, c.rank);
    calls.bind(2, pid);
    calls.bind(3, tid);
    calls.bind(4, c.start_ns);
    calls.bind(5, c.end_ns);
    std::vector<std::int64_t> correlations;
    while (calls.step()) correlations.push_back(calls.column_int(0));
    calls.reset();
    for (const auto correlation : correlations) {
      kernels.bind(1, c.rank);
      kernels.bind(2, correlation);
      while (kernels.step()) {
        launched = true;
        const std::int64_t activity = kernels.column_int(0);
        auto it = existing.find(activity);
        if (it != existing.end() && !it->second.second) continue;
        if (it != existing.end()) {
          CollectiveRecord metadata = c;
          if (!metadata.source) metadata.source = "cpu_op";
          Collectives::bind_metadata(upgrade, 1, metadata);
          upgrade.bind(Collectives::kCount + 1, it->second.first);
          upgrade.run();
          it->second.second = false;
          continue;
        }
        CollectiveRecord on_gpu = c;
        on_gpu.activity_id = activity;
        on_gpu.start_ns = kernels.column_int(1);
        on_gpu.end_ns = kernels.column_int(2);
        const std::int64_t id = next_id++;
        write(id, on_gpu);
        existing[activity] = {id, false};
      }
      kernels.reset();
    }
    if (!launched) write(next_id++, c);  // CPU-only (e.g. gloo): keep the CPU times
  }
  db.exec("DROP INDEX api_calls_by_thread");
}

}  // namespace meshscope::writer
