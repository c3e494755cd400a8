#include "job/profile_input.hpp"

#include <chrono>
#include <fstream>
#include <functional>
#include <string_view>

#include <fmt/format.h>

#include "job/import_job.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/text_format.hpp"

namespace meshscope {
bool is_sqlite(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == 16 && std::string_view(header, 15) == "SQLite format 3";
}

bool is_profile_input(const std::vector<std::filesystem::path>& sources) {
  if (sources.size() != 1) return false;
  const auto& source = sources.front();
  std::error_code error;
  const auto status = std::filesystem::status(source, error);
  if (status.type() == std::filesystem::file_type::not_found) return true;
  if (status.type() == std::filesystem::file_type::directory) return false;
  if (source.extension() == ".msdb") return true;
  // Another SQLite file (an Nsight Systems export) is imported; a FIFO or a device goes to the importer too,
  // which refuses it without reading.
  return status.type() == std::filesystem::file_type::regular && is_sqlite(source) &&
         Profile::looks_like_profile(source);
}

std::filesystem::path import_cache_path(const std::vector<std::filesystem::path>& sources) {
  std::string key;
  for (const auto& s : sources) {
    auto absolute = std::filesystem::absolute(s).lexically_normal();
    if (!absolute.has_filename()) absolute = absolute.parent_path();  // "dir/" is "dir"
    key += absolute.string() + "\n";
  }
  const std::filesystem::path& first = sources.front();
  // A folder given as "dir/" has an empty file name: name the file after the folder itself.
  const std::filesystem::path named = first.has_filename() ? first : first.parent_path();
  std::string stem = named.stem().string();
  if (named.extension() == ".gz" && stem.ends_with(".json")) stem.resize(stem.size() - 5);  // rank0.json.gz
  return user_cache_dir() / "view" /
         fmt::format("{}{}{:016x}.msdb", stem, sources.size() > 1 ? "-job-" : "-",
                     std::hash<std::string>{}(key));
}

ProfileInput profile_input(const std::vector<std::filesystem::path>& sources, ImportOptions options) {
  if (sources.empty()) throw Error("nothing to open");
  if (is_profile_input(sources)) {
    ProfileInput input;
    input.profile = sources.front();
    return input;
  }
  return import_to_cache(sources, std::move(options));
}

ProfileInput import_to_cache(const std::vector<std::filesystem::path>& sources, ImportOptions options) {
  if (sources.empty()) throw Error("nothing to open");
  ProfileInput input;
  input.profile = import_cache_path(sources);
  input.imported = true;
  std::filesystem::create_directories(input.profile.parent_path());
  const auto start = std::chrono::steady_clock::now();
  bool summarising = false;
  try {
    import_with_summaries(sources, input.profile, std::move(options),
                          [&](const std::filesystem::path&) { summarising = true; });
  } catch (const Error& e) {
    if (!summarising) throw;
    input.summaries_error = e.what();  // the profile is there, complete: the front end reads it without them
  }
  input.import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return input;
}

std::string sources_title(const std::vector<std::filesystem::path>& sources) {
  if (sources.empty()) return {};
  const std::filesystem::path& first = sources.front();
  std::string name = (first.has_filename() ? first : first.parent_path()).filename().string();
  if (sources.size() > 1) name += fmt::format(" and {} more", sources.size() - 1);
  return name;
}

}  // namespace meshscope
