#include "collectors/import/import.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>

#include "collectors/import/input_file.hpp"
#include "collectors/import/kineto/kineto_importer.hpp"
#include "collectors/import/nsys/nsys_importer.hpp"
#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope {
namespace {

bool looks_like_trace(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  auto ends = [&](std::string_view suffix) { return name.size() >= suffix.size() && name.ends_with(suffix); };
  return ends(".json") || ends(".json.gz") || ends(".sqlite") || ends(".msdb.sqlite");
}

std::string describe(const std::filesystem::path& path) {
  return path.string();
}

// Ranks the files of one job claim; detects duplicates and mixed jobs.
class RankAssigner {
 public:
  explicit RankAssigner(std::size_t file_count) : file_count_(file_count) {}

  std::int32_t assign(const std::filesystem::path& path, const kineto::FileMetadata& m) {
    if (!m.exported_ranks.empty()) {  // a meshscope export: one file, every rank
      std::int32_t first = m.exported_ranks.front().info.rank;
      for (const auto& exported : m.exported_ranks) {
        claim(path.string() + "#" + std::to_string(exported.info.rank), exported.info.rank,
              exported.info.rank_source.empty() ? "export" : exported.info.rank_source,
              exported.info.world_size == kNull ? std::nullopt
                                                : std::optional<std::int64_t>(exported.info.world_size));
        first = std::min(first, exported.info.rank);
      }
      return first;
    }
    std::int64_t rank = -1;
    std::string source;
    if (m.rank) {
      rank = *m.rank;
      source = "distributedInfo";
    } else if (const auto from_name = rank_from_file_name(path); from_name >= 0) {
      rank = from_name;
      source = "filename";
    } else if (file_count_ == 1) {
      rank = 0;
      source = "single";
    } else {
      fail(
          "{}: no rank in distributedInfo or in the file name (rank-N, workerN); cannot order it within the "
          "job",
          describe(path));
    }
    if (rank < 0 || rank > kMaxRank) fail("{}: rank {} is out of range", describe(path), rank);
    claim(path, static_cast<std::int32_t>(rank), source, m.world_size);
    return static_cast<std::int32_t>(rank);
  }

  std::int32_t next_free_rank() const {
    std::int32_t rank = 0;
    while (claims_.count(rank)) ++rank;
    return rank;
  }

  // KEY names what claims the rank (a file, or a process within a file); claiming again replaces its claim.
  void claim(const std::filesystem::path& key_path, std::int32_t rank, const std::string& source,
             std::optional<std::int64_t> world_size) {
    const std::string key = key_path.string();
    const std::filesystem::path& path = key_path;
    for (auto it = claims_.begin(); it != claims_.end(); ++it) {
      if (it->second.path == key) {
        claims_.erase(it);
        break;
      }
    }
    auto existing = claims_.find(rank);
    if (existing != claims_.end()) {
      fail("{}: claims rank {}, which {} already claims (two files of one rank?)", describe(path), rank,
           existing->second.path);
    }
    if (world_size) {
      for (const auto& [other_rank, other] : claims_) {
        if (other.world_size && *other.world_size != *world_size) {
          fail("{}: world size {} differs from {} in {}: the files come from different jobs", describe(path),
               *world_size, *other.world_size, other.path);
        }
      }
    }
    claims_[rank] = {key, source, world_size};
  }

  const std::string& source_of(std::int32_t rank) const { return claims_.at(rank).source; }

 private:
  struct Claim {
    std::string path;
    std::string source;
    std::optional<std::int64_t> world_size;
  };
  std::size_t file_count_;
  std::map<std::int32_t, Claim> claims_;
};

}  // namespace

std::int64_t rank_from_file_name(const std::filesystem::path& path) {
  static const std::regex pattern(R"((?:^|[^A-Za-z])(?:rank|worker)[-_]?(\d+))", std::regex::icase);
  std::smatch match;
  const std::string name = path.filename().string();
  if (std::regex_search(name, match, pattern)) return std::stoll(match[1].str());
  return -1;
}

std::vector<std::filesystem::path> expand_trace_inputs(const std::vector<std::filesystem::path>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& input : inputs) {
    std::error_code error;
    if (std::filesystem::is_directory(input, error)) {
      std::vector<std::filesystem::path> found;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(input, error)) {
        if (entry.is_regular_file() && looks_like_trace(entry.path())) found.push_back(entry.path());
      }
      if (found.empty()) fail("{}: directory holds no traces (.json, .json.gz, .sqlite)", input.string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      require_regular_input(input);  // a FIFO or a device would block the reader or never end
      files.push_back(input);
    }
  }
  return files;
}

ImportSummary import_traces(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& output, const ImportOptions& options) {
  if (inputs.empty()) fail("no traces given");
  const auto files = expand_trace_inputs(inputs);
  {
    std::error_code error;
    const auto parent = output.has_parent_path() ? output.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(parent, error))
      fail("{}: output folder does not exist", output.string());
  }
  // The output must not be one of the traces (a symbolic link to one included): writing it would destroy it.
  refuse_output_among_inputs(resolve_output_path(output), files);
  ImportSummary summary;
  std::uint64_t total_bytes = 0;
  for (const auto& file : files) total_bytes += import::content_size_hint(file);
  ProfileWriter writer(output);
  RankAssigner assigner(files.size());
  std::uint64_t done_bytes = 0;
  std::vector<std::string> formats;
  // The time windows of the files, to refuse files of different runs.
  struct Window {
    std::string path;
    TimeNs first, last;
  };
  std::vector<Window> windows;
  std::size_t files_started = 0;
  if (options.files_done) options.files_done(0, files.size());
  for (const auto& file : files) {
    // The previous file is finished (every path through the loop body ends at the next file).
    if (files_started > 0) {
      if (options.progress && total_bytes > 0) {
        options.progress(static_cast<double>(done_bytes) / static_cast<double>(total_bytes));
      }
      if (options.files_done) options.files_done(files_started, files.size());
    }
    ++files_started;
    if (import::is_sqlite_file(file)) {
      formats.push_back("nsys");
      auto ranks = nsys::import_file(
          file, writer,
          [&](const std::string& key, std::int64_t wanted, const std::string& source) {
            if (wanted > kMaxRank) fail("{}: rank {} is out of range", file.string(), wanted);
            const std::int32_t rank =
                wanted >= 0 ? static_cast<std::int32_t>(wanted) : assigner.next_free_rank();
            assigner.claim(key, rank, source, std::nullopt);
            return rank;
          },
          &summary.notes);
      writer.close_tracks();
      for (const auto& r : ranks) summary.ranks.push_back(r);
      done_bytes += import::content_size_hint(file);
      continue;
    }
    formats.push_back("kineto");
    kineto::ImportSettings settings;
    settings.streaming_threshold_bytes = options.streaming_threshold_bytes;
    const std::uint64_t file_bytes = import::content_size_hint(file);
    if (options.progress) {
      settings.progress = [&](std::uint64_t done, std::uint64_t) {
        options.progress(
            total_bytes ? static_cast<double>(done_bytes + done) / static_cast<double>(total_bytes) : 0);
      };
    }
    auto result = kineto::import_file(
        file, writer,
        [&](const std::filesystem::path& path, const kineto::FileMetadata& m) {
          return assigner.assign(path, m);
        },
        settings);
    writer.close_tracks();  // a file's tracks are complete: nest and write its ranges now
    done_bytes += file_bytes;
    if (result.gpu_events == 0 && result.cpu_events == 0) {
      fail("{}: no GPU or CPU events to import (the trace holds only metadata)", file.string());
    }
    const auto& m = result.metadata;
    if (!m.exported_ranks.empty()) {
      for (const auto& exported : m.exported_ranks) {
        writer.set_rank(exported.info);
        summary.ranks.push_back(
            {exported.info.rank, exported.info.source_file, exported.info.rank_source, 0, 0});
      }
      summary.ranks.front().gpu_events = result.gpu_events;
      summary.ranks.front().cpu_events = result.cpu_events;
      continue;
    }
    RankInfo info;
    info.rank = result.rank;
    info.world_size = m.world_size ? *m.world_size : kNull;
    info.hostname = m.hostname;
    info.source_file = std::filesystem::absolute(file).lexically_normal().string();
    info.rank_source = assigner.source_of(result.rank);
    info.backend = m.backend;
    info.comm_version = m.nccl_version.empty() ? std::string() : "NCCL " + m.nccl_version;
    info.clock_base_ns = m.base_time_ns;
    writer.set_rank(info);
    if (result.gpu_events == 0) {
      const std::string note = fmt::format("rank {} ({}): no GPU activity; imported its CPU events only",
                                           result.rank, file.filename().string());
      writer.add_diagnostic(result.rank, "warning", note);
      summary.notes.push_back(note);
    }
    if (info.rank_source != "distributedInfo") {
      const std::string note =
          fmt::format("rank {} ({}): rank taken from {}", result.rank, file.filename().string(),
                      info.rank_source == "filename" ? "the file name" : "being the only file");
      writer.add_diagnostic(result.rank, "info", note);
      summary.notes.push_back(note);
    }
    for (const auto& w : windows) {
      // Ranks of one job overlap in time; traces hours apart were recorded by different runs.
      constexpr TimeNs kHour = 3'600'000'000'000;
      if (result.first_ns > w.last + kHour || w.first > result.last_ns + kHour) {
        fail(
            "{}: recorded at a different time than {} (no overlap within an hour): the files come from "
            "different jobs",
            file.string(), w.path);
      }
    }
    windows.push_back({file.string(), result.first_ns, result.last_ns});
    summary.ranks.push_back(
        {result.rank, info.source_file, info.rank_source, result.gpu_events, result.cpu_events});
  }
  if (options.files_done) options.files_done(files.size(), files.size());
  std::sort(formats.begin(), formats.end());
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());
  std::string format_list;
  for (const auto& f : formats) format_list += (format_list.empty() ? "" : ",") + f;
  writer.set_meta("source_format", format_list);
  writer.commit();
  std::sort(summary.ranks.begin(), summary.ranks.end(),
            [](const ImportedRank& a, const ImportedRank& b) { return a.rank < b.rank; });
  if (options.progress) options.progress(1.0);
  return summary;
}

}  // namespace meshscope
