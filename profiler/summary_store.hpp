// Storage of the per-rank summaries (profiler/summary_records.hpp; schema.sql summary_*, docs/PROFILE.md
// "Summaries"): written into a profile, read back as untrusted input, merged from summary parts, and a
// profile's events dropped to leave a part. What the summaries hold is computed by
// analysis/measure/summary.hpp; everything here speaks SQL.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope::sql {
class Database;
}  // namespace meshscope::sql

namespace meshscope {

// Writes SUMMARY into the profile at PATH (replacing any summaries there) in one transaction. The connection
// is hardened as a read-only one is (the file may be a copy of anyone's): nothing the file holds runs.
void write_summary(const std::filesystem::path& path, const ProfileSummary& summary);

// Drops the events of the profile at PATH (every table but its description and the summaries; activities
// stays, empty), leaving a summary part: what `meshscope summarize --summaries-only` writes next to each
// rank's trace. The profile must hold summaries (else every figure would be lost). Compacts the file.
void drop_events(const std::filesystem::path& path);
// Whether META (a profile's meta table) marks a summary part, whose events drop_events dropped.
bool events_dropped(const std::map<std::string, std::string>& meta);

// Copies into the profile JOB the description (ranks, devices, process groups, streams, threads,
// diagnostics) and the summaries of every rank of PARTS that JOB does not hold yet (summary parts, or whole
// profiles with summaries). Returns the ranks copied. Throws meshscope::Error naming the part that is not a
// profile with summaries, or that repeats a rank another part already gave. JOB is changed in one
// transaction.
std::vector<std::int32_t> merge_summary_parts(const std::vector<std::filesystem::path>& parts,
                                              const std::filesystem::path& job);

// The summaries stored in the profile at PATH, or nullopt when it has none (written before they existed).
// Throws meshscope::Error naming the file when the tables are there but damaged.
// RANKS_ONLY: each rank's totals and event counts, without its steps, streams, kernels, operators,
// collectives and overview (what reading a rank's events checks its rows against).
std::optional<ProfileSummary> read_summary(const std::filesystem::path& path, bool ranks_only = false);
// The same from DB, an untrusted connection already open on the profile PATH names (a file, or an image in
// memory: sql::Database::from_image).
std::optional<ProfileSummary> read_summary(sql::Database& db, const std::filesystem::path& path,
                                           bool ranks_only = false);

// Per event table of the profile at PATH, the span of its rowids (max − min + 1, saturated; the writers' ids
// are 1..N, so its rows): two edge lookups, no scan; 0 for a table it lacks or an empty one.
std::array<std::uint64_t, kEventTableCount> event_rowid_spans(const std::filesystem::path& path);
// The rows of TABLE in the profile at PATH, counted (0 when it lacks the table).
std::int64_t event_rows(const std::filesystem::path& path, EventTable table);

}  // namespace meshscope
