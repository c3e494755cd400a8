// The pieces of Profile::load its two sources share: profile.cpp reads a profile's tables (SQLite), and
// profile_records.cpp takes the same rows as records in memory (Profile::of_records); both scan rows into
// these lists and attach them to ranks with the same functions. Inside the profiler only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {

// What every load reads: the profile's description (the events aside).
struct Description {
  std::map<std::string, std::string> meta;
  int schema_version = 0;
  std::vector<std::string> strings;
  std::vector<Diagnostic> job_diagnostics;
};

namespace load {

std::int32_t to_i32(std::int64_t value);
Rank& rank_slot(std::vector<Rank>& ranks, std::map<std::int32_t, std::size_t>& index, std::int32_t rank);

using StreamKey = std::tuple<std::int32_t, std::int32_t, std::int64_t>;       // rank, device, stream
using TrackKey = std::tuple<std::int32_t, bool, std::int64_t, std::int64_t>;  // rank, gpu, pid, tid

struct ActivityScan {
  std::map<StreamKey, std::vector<Activity>> buckets;
  std::map<std::int32_t, std::vector<KernelDetail>> kernels;
  std::map<std::int32_t, std::vector<CopyDetail>> copies;
};

struct KernelDetailHash {
  std::size_t operator()(const KernelDetail& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.graph_id);
    for (std::int32_t v :
         {k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers, k.shared_bytes})
      h = (h ^ static_cast<std::uint32_t>(v)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// Rows usually come in time order (a writer adds them so): a sorted list is left as it is, which a stable
// sort gives back unchanged but only after allocating a buffer of half the list and moving it through it.
template <typename T, typename Before>
void stable_sort_unless_sorted(std::vector<T>& list, Before before) {
  if (!std::is_sorted(list.begin(), list.end(), before)) std::stable_sort(list.begin(), list.end(), before);
}

inline bool activity_before(const Activity& a, const Activity& b) {
  return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
}
inline bool api_call_before(const ApiCall& a, const ApiCall& b) {
  return a.start_ns < b.start_ns;
}
inline bool range_before(const CpuRange& a, const CpuRange& b) {
  return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
}

// One rank's calls as a scan reads them, each naming its thread by an index into THREADS (in the order the
// scan met them; attach_cpu sorts the threads).
struct RankCalls {
  std::vector<ApiCall> calls;
  std::vector<CallThread> threads;
  std::map<CallThread, std::uint32_t> index;  // threads -> position
  std::uint32_t thread(const CallThread& t) {
    const auto [it, added] = index.try_emplace(t, static_cast<std::uint32_t>(threads.size()));
    if (added) threads.push_back(t);
    return it->second;
  }
};
using ApiCallScan = std::map<std::int32_t, RankCalls>;

struct RangeScan {
  std::map<TrackKey, std::vector<CpuRange>> tracks;
  std::int64_t skipped_cpu_ops = 0, skipped_python = 0;  // counted, not loaded (LoadOptions::cpu_operators)
  // Rows per (rank, pid, tid), the track the writer nests on, whatever their kind and whether loaded.
  std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>, std::size_t> rows_per_track;
  std::map<std::int64_t, std::int64_t> step_of_range;  // kStep ranges: id -> ranges.step (kNull when NULL)
};

// The ranks of the profile being loaded, created on first mention by any table.
struct RankSlots {
  std::vector<Rank> ranks;
  std::map<std::int32_t, std::size_t> index;
  Rank& slot(std::int32_t rank) { return rank_slot(ranks, index, rank); }
};

using StreamNames = std::map<StreamKey, std::string>;
using ThreadNames = std::map<std::tuple<std::int32_t, std::int64_t, std::int64_t>, std::string>;
struct CollectiveRow {
  std::int32_t rank;
  Collective collective;
};

// The clauses each event table is read with: the table's rowid slices for a whole load, or each asked rank's
// runs for load_ranks.
using TableClauses = std::array<std::vector<std::string>, kEventTableCount>;
inline std::vector<std::string>& clauses_of(TableClauses& c, EventTable t) {
  return c[static_cast<std::size_t>(t)];
}

// Where a load reads: a profile's file, or the bytes of one in memory (Profile::load_image).
struct ProfileSource {
  const std::filesystem::path& path;  // the file, or the name an image's errors give
  std::optional<std::span<const unsigned char>> image;
  // One more read-only, hardened connection to it (a scan's thread opens its own).
  sql::Database connect() const;
  // How the scans run: a file's tables on threads of their own; an image's one after the other on the
  // calling thread (a small profile in memory reads faster than threads start; the same code runs).
  std::launch launch() const { return image ? std::launch::deferred : std::launch::async; }
};

// Reading the tables (profile_scan.cpp).
// Opens SOURCE for reading after checking that it is a meshscope profile (one line naming the file
// otherwise).
sql::Database open_profile(const ProfileSource& source);
inline sql::Database open_profile(const std::filesystem::path& path) {
  return open_profile(ProfileSource{path, std::nullopt});
}
// One past the largest string id of the profile (its strings table checked).
std::int64_t string_id_bound(sql::Database& db, const std::filesystem::path& path);
// WHERE clauses that cut TABLE into about SLICES_WANTED runs of rowids ("" alone: read it whole).
std::vector<std::string> rowid_slices(sql::Database& db, const char* table, std::size_t slices_wanted);
// The profile's meta, strings and diagnostics, and the ranks, devices and process groups into RANKS.
Description read_description(sql::Database& db, std::int64_t string_ids, RankSlots& ranks);
// The events of the rows CLAUSES select, attached to the ranks of RANKS (profile_scan.cpp says how).
RangeScan read_events(sql::Database& db, const ProfileSource& source, std::int64_t string_ids,
                      const LoadOptions& options, TableClauses& clauses, bool parallel_slices,
                      const std::string& rank_where, const std::vector<std::string>& strings,
                      std::vector<std::string>& added, RankSlots& ranks);
// Every range of SCAN's tracks nested no deeper than a load allows (one line naming PATH otherwise).
void check_range_depths(const std::filesystem::path& path, RangeScan& scan);

// Rows → events (profile_attach.cpp).
void attach_activities(ActivityScan& activities, const StreamNames& stream_names, RankSlots& ranks);
void attach_collectives(std::vector<CollectiveRow>& collective_rows, RankSlots& ranks);
void attach_cpu(ApiCallScan& api_calls, RangeScan& range_scan, const ThreadNames& thread_names,
                RankSlots& ranks);
EventCounts count_events(const std::vector<Rank>& ranks, const RangeScan& range_scan);

inline RankList sorted_rank_list(std::vector<Rank>&& ranks) {
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  std::vector<RankList::Ptr> list;
  list.reserve(ranks.size());
  for (Rank& r : ranks) list.push_back(std::make_shared<const Rank>(std::move(r)));
  return RankList(std::move(list));
}

}  // namespace load
}  // namespace meshscope
