// What a front end was given, as one profile to load: every command and the GUI take the same inputs (a
// profile, trace files, a folder of traces, an Nsight Systems export, several files of one job).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collectors/import/import.hpp"

namespace meshscope {

// PATH begins as an SQLite database does (a meshscope profile, an Nsight Systems export, another).
bool is_sqlite(const std::filesystem::path& path);

// True when SOURCES is to be loaded as it is: one path, not a folder, that is a meshscope profile, names one
// (.msdb), or does not exist (the loader's error names it). Anything else is imported first.
bool is_profile_input(const std::vector<std::filesystem::path>& sources);

// Where SOURCES are imported to: one file per set of sources in the user's cache (user_cache_dir()/view),
// named after the first source and a hash of every source's absolute path.
std::filesystem::path import_cache_path(const std::vector<std::filesystem::path>& sources);

struct ProfileInput {
  std::filesystem::path profile;  // what to load
  bool imported = false;          // made from traces, in the cache
  std::string summaries_error;    // imported, but its summaries failed (the profile is complete without them)
  double import_s = 0;
};

// SOURCES as a profile: the profile itself (is_profile_input), or the traces imported with their summaries,
// as `meshscope import` makes them, into import_cache_path(SOURCES). Imported again at every call, since the
// traces may have changed (`meshscope import` makes a profile to keep); an import that fails leaves the cache
// as it was and throws meshscope::Error naming the trace.
ProfileInput profile_input(const std::vector<std::filesystem::path>& sources, ImportOptions options = {});

// The import half of profile_input, whatever SOURCES are (the GUI, which opens profiles itself).
ProfileInput import_to_cache(const std::vector<std::filesystem::path>& sources, ImportOptions options = {});

// The sources as one short name for a title: the first one's file name, and how many more.
std::string sources_title(const std::vector<std::filesystem::path>& sources);

}  // namespace meshscope
