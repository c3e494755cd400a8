#include "collectors/import/import.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "collectors/import/input_file.hpp"
#include "collectors/import/kineto/kineto_importer.hpp"
#include "collectors/import/nsys/nsys_importer.hpp"
#include "collectors/import/record_buffer.hpp"
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

// The rank a Kineto file's events go under, from its path and metadata alone (what other files claim aside):
// distributedInfo, else the file name, else rank 0 when it is the only file. A meshscope export states its
// ranks itself: the lowest. Throws Error when the file names no rank or one out of range.
struct StatedRank {
  std::int32_t rank;
  std::string source;
};
StatedRank stated_rank(const std::filesystem::path& path, const kineto::FileMetadata& m,
                       std::size_t file_count) {
  if (!m.exported_ranks.empty()) {
    std::int32_t first = m.exported_ranks.front().info.rank;
    for (const auto& exported : m.exported_ranks) first = std::min(first, exported.info.rank);
    return {first, "export"};
  }
  std::int64_t rank = -1;
  std::string source;
  if (m.rank) {
    rank = *m.rank;
    source = "distributedInfo";
  } else if (const auto from_name = rank_from_file_name(path); from_name >= 0) {
    rank = from_name;
    source = "filename";
  } else if (file_count == 1) {
    rank = 0;
    source = "single";
  } else {
    fail(
        "{}: no rank in distributedInfo or in the file name (rank-N, workerN); cannot order it within the "
        "job",
        describe(path));
  }
  if (rank < 0 || rank > kMaxRank) fail("{}: rank {} is out of range", describe(path), rank);
  return {static_cast<std::int32_t>(rank), source};
}

// Ranks the files of one job claim; detects duplicates and mixed jobs.
class RankAssigner {
 public:
  explicit RankAssigner(std::size_t file_count) : file_count_(file_count) {}

  std::int32_t assign(const std::filesystem::path& path, const kineto::FileMetadata& m) {
    if (!m.exported_ranks.empty()) {  // a meshscope export: one file, every rank
      for (const auto& exported : m.exported_ranks) {
        claim(path.string() + "#" + std::to_string(exported.info.rank), exported.info.rank,
              exported.info.rank_source.empty() ? "export" : exported.info.rank_source,
              exported.info.world_size == kNull ? std::nullopt
                                                : std::optional<std::int64_t>(exported.info.world_size));
      }
      return stated_rank(path, m, file_count_).rank;
    }
    const StatedRank stated = stated_rank(path, m, file_count_);
    claim(path, stated.rank, stated.source, m.world_size);
    return stated.rank;
  }

  // Withdraws every claim of PATH (a file skipped after its ranks were claimed).
  void release(const std::filesystem::path& path) {
    const std::string key = path.string(), prefix = key + "#";
    std::erase_if(claims_,
                  [&](const auto& c) { return c.second.path == key || c.second.path.starts_with(prefix); });
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
      // Refused before anything of the file is written (the loader refuses the same).
      if (*world_size < 1 || *world_size > kMaxRank + 1)
        fail("{}: world size {} is not a world size (1 to {})", describe(path), *world_size, kMaxRank + 1);
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

std::vector<std::filesystem::path> expand_trace_inputs(const std::vector<std::filesystem::path>& inputs,
                                                       std::vector<std::filesystem::path>* repeated) {
  std::vector<std::filesystem::path> files;
  std::set<std::pair<dev_t, ino_t>> seen;  // a file named twice (or a folder and a file in it) is read once
  auto take = [&](const std::filesystem::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && !seen.emplace(st.st_dev, st.st_ino).second) {
      if (repeated) repeated->push_back(file);
      return;
    }
    files.push_back(file);
  };
  for (const auto& input : inputs) {
    std::error_code error;
    if (std::filesystem::is_directory(input, error)) {
      std::vector<std::filesystem::path> found;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(input, error)) {
        if (entry.is_regular_file() && looks_like_trace(entry.path())) found.push_back(entry.path());
      }
      if (found.empty()) fail("{}: directory holds no traces (.json, .json.gz, .sqlite)", input.string());
      std::sort(found.begin(), found.end());
      for (const auto& f : found) take(f);
    } else {
      require_regular_input(input);  // a FIFO or a device would block the reader or never end
      take(input);
    }
  }
  return files;
}

namespace {

// How the profile describes the rank of a Kineto FILE that RESULT read, its rank taken from RANK_SOURCE.
RankInfo rank_info_of(const std::filesystem::path& file, const kineto::FileResult& result,
                      std::string rank_source) {
  const auto& m = result.metadata;
  RankInfo info;
  info.rank = result.rank;
  info.world_size = m.world_size ? *m.world_size : kNull;
  info.hostname = m.hostname;
  info.source_file = std::filesystem::absolute(file).lexically_normal().string();
  info.rank_source = std::move(rank_source);
  info.backend = m.backend;
  info.comm_version = m.nccl_version.empty() ? std::string() : "NCCL " + m.nccl_version;
  info.clock_base_ns = m.base_time_ns;
  return info;
}

// Kineto files read on several threads at once: each thread parses a whole file into a RecordBuffer; the
// importing thread takes them in input order (take) and writes them. Threads run at most a few files ahead of
// the importing thread and hold at most kBytesAhead of content at once, so memory stays bounded however many
// files the job has.
class ParallelReader {
 public:
  struct Parsed {
    std::unique_ptr<import::RecordBuffer> rows;
    kineto::FileResult result;
    std::exception_ptr error;
  };

  // FILES[i] is read here when READ[i]; SIZES are their content sizes.
  // OPTIONS: the import's (the streaming threshold, the work formulas, each_rank_read).
  ParallelReader(const std::vector<std::filesystem::path>& files, const std::vector<char>& read,
                 const std::vector<std::uint64_t>& sizes, unsigned threads, const ImportOptions& options)
      : files_(files),
        read_(read),
        sizes_(sizes),
        streaming_threshold_(options.streaming_threshold_bytes),
        operator_work_(options.operator_work),
        each_rank_read_(options.each_rank_read),
        slots_(files.size()) {
    next_ = first_read_from(0);
    if (next_ == files_.size()) return;
    ahead_ = std::max<std::size_t>(4, 4 * static_cast<std::size_t>(threads));
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ParallelReader() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cancelled_ = true;
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;

  // The importing thread is at file I: threads may read up to a few files past it.
  void at(std::size_t i) {
    {
      std::lock_guard lock(mutex_);
      position_ = i;
    }
    changed_.notify_all();
  }

  // File I's rows (READ[I]), once read; TICK is called about ten times a second while waiting.
  Parsed take(std::size_t i, const std::function<void()>& tick) {
    std::unique_lock lock(mutex_);
    while (!slots_[i].done) {
      if (changed_.wait_for(lock, std::chrono::milliseconds(100)) == std::cv_status::timeout && tick) {
        lock.unlock();
        tick();
        lock.lock();
      }
    }
    Slot& slot = slots_[i];
    Parsed parsed{std::move(slot.rows), std::move(slot.result), slot.error};
    slot.taken = true;
    bytes_ahead_ -= sizes_[i];
    lock.unlock();
    changed_.notify_all();
    return parsed;
  }

  // Bytes read so far of the files being read or waiting to be taken.
  std::uint64_t bytes_read_ahead() const {
    std::lock_guard lock(mutex_);
    std::uint64_t bytes = 0;
    for (std::size_t i = position_; i < next_; ++i) {
      if (read_[i] && !slots_[i].taken) bytes += std::min(slots_[i].progress.load(), sizes_[i]);
    }
    return bytes;
  }

 private:
  // The most content (decompressed bytes) read ahead at once, beyond one file.
  static constexpr std::uint64_t kBytesAhead = std::uint64_t{512} << 20;

  struct Slot {
    bool done = false, taken = false;
    std::atomic<std::uint64_t> progress{0};
    std::unique_ptr<import::RecordBuffer> rows;
    kineto::FileResult result;
    std::exception_ptr error;
  };
  struct Cancelled {};

  std::size_t first_read_from(std::size_t i) const {
    while (i < files_.size() && !read_[i]) ++i;
    return i;
  }

  void work() {
    kineto::ReadScratch scratch;  // this thread's buffers, kept from file to file
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] {
          return stopping_ || next_ == files_.size() ||
                 (next_ < position_ + ahead_ &&
                  (bytes_ahead_ == 0 || bytes_ahead_ + sizes_[next_] <= kBytesAhead));
        });
        if (stopping_ || next_ == files_.size()) return;
        i = next_;
        next_ = first_read_from(next_ + 1);
        bytes_ahead_ += sizes_[i];
      }
      Slot& slot = slots_[i];
      auto rows = std::make_unique<import::RecordBuffer>();
      kineto::FileResult result;
      std::exception_ptr error;
      try {
        kineto::ImportSettings settings;
        settings.streaming_threshold_bytes = streaming_threshold_;
        settings.operator_work = operator_work_;
        settings.scratch = &scratch;
        settings.progress = [&](std::uint64_t done, std::uint64_t) {
          slot.progress.store(done);
          if (cancelled_.load()) throw Cancelled{};  // the import failed: stop reading
        };
        // The rank from the file alone; the claim is checked against the other files' in input order, when
        // the file is taken.
        const std::size_t file_count = files_.size();
        result = kineto::import_file(
            files_[i], *rows,
            [file_count](const std::filesystem::path& path, const kineto::FileMetadata& m) {
              return stated_rank(path, m, file_count).rank;
            },
            settings);
        rows->resolve_cpu_collectives();
        rows->nest_ranges();
      } catch (const Cancelled&) {
        return;
      } catch (...) {
        error = std::current_exception();
        rows.reset();
      }
      if (rows && each_rank_read_) hand_over(files_[i], *rows, result);
      {
        std::lock_guard lock(mutex_);
        slot.rows = std::move(rows);
        slot.result = std::move(result);
        slot.error = error;
        slot.done = true;
      }
      changed_.notify_all();
    }
  }

  // The rows of a file of one rank, described as JobImport::finish_kineto describes it in the profile (but
  // for its rank's source, settled in input order).
  void hand_over(const std::filesystem::path& file, const import::RecordBuffer& rows,
                 const kineto::FileResult& result) const {
    const auto& m = result.metadata;
    if (!m.exported_ranks.empty() || rows.has_rank_rewrites()) return;
    const RankInfo info = rank_info_of(file, result, stated_rank(file, m, files_.size()).source);
    if (const auto records = rows.rank_records(info)) each_rank_read_(info.source_file, *records);
  }

  const std::vector<std::filesystem::path>& files_;
  const std::vector<char>& read_;
  const std::vector<std::uint64_t>& sizes_;
  const std::uint64_t streaming_threshold_;
  const OperatorWorkFormulas operator_work_;
  const std::function<void(const std::filesystem::path&, const RankRecords&)>& each_rank_read_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;           // the next file to read
  std::size_t position_ = 0;       // the file the importing thread is at
  std::size_t ahead_ = 0;          // how many files past it may be started
  std::uint64_t bytes_ahead_ = 0;  // content of the files started and not yet taken
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};
};

// One job's import: the profile being written and what the files said so far.
class JobImport {
 public:
  JobImport(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs,
            const ImportOptions& options, const BeforePublish& before_publish)
      : writer_(output, writer_options(inputs, before_publish)),
        assigner_(inputs.size()),
        options_(options) {}

  ProfileWriter& writer() { return writer_; }
  RankAssigner& assigner() { return assigner_; }
  ImportSummary& summary() { return summary_; }

  // A Kineto file read directly into the writer (too large to hold, or read again).
  kineto::FileResult read_directly(const std::filesystem::path& file,
                                   const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    kineto::ImportSettings settings;
    settings.streaming_threshold_bytes = options_.streaming_threshold_bytes;
    settings.operator_work = options_.operator_work;
    settings.progress = progress;
    auto result = kineto::import_file(
        file, writer_,
        [&](const std::filesystem::path& path, const kineto::FileMetadata& m) {
          return assigner_.assign(path, m);
        },
        settings);
    writer_.close_tracks();  // a file's tracks are complete: nest and write its ranges now
    check_kineto(file, result);
    return result;
  }

  // The claims and checks of a Kineto file read into a RecordBuffer, in input order, before any of its rows
  // is written. Throws, claiming nothing, when it cannot be imported.
  void claim_buffered(const std::filesystem::path& file, const kineto::FileResult& result) {
    try {
      const std::int32_t rank = assigner_.assign(file, result.metadata);
      if (rank != result.rank) {
        fail("{}: rank {} read, {} claimed (internal error)", file.string(), result.rank, rank);
      }
      check_kineto(file, result);
    } catch (...) {
      assigner_.release(file);
      throw;
    }
  }

  void write_buffered(import::RecordBuffer& rows) {
    rows.replay(writer_);
    writer_.close_tracks();
  }

  // What the job records of a Kineto file once its rows are written.
  void finish_kineto(const std::filesystem::path& file, const kineto::FileResult& result) {
    formats_.push_back("kineto");
    const auto& m = result.metadata;
    if (!m.exported_ranks.empty()) {
      for (const auto& exported : m.exported_ranks) {
        writer_.set_rank(exported.info);
        summary_.ranks.push_back(
            {exported.info.rank, exported.info.source_file, exported.info.rank_source, 0, 0});
      }
      auto& first = summary_.ranks[summary_.ranks.size() - m.exported_ranks.size()];
      first.gpu_events = result.gpu_events;
      first.cpu_events = result.cpu_events;
      return;
    }
    const RankInfo info = rank_info_of(file, result, assigner_.source_of(result.rank));
    writer_.set_rank(info);
    windows_.push_back({file.string(), result.first_ns, result.last_ns, false});
    if (result.gpu_events == 0) {
      const std::string note = fmt::format("rank {} ({}): no GPU activity; imported its CPU events only",
                                           result.rank, file.filename().string());
      writer_.add_diagnostic(result.rank, "warning", note);
      summary_.notes.push_back(note);
    }
    if (info.rank_source != "distributedInfo") {
      const std::string note =
          fmt::format("rank {} ({}): rank taken from {}", result.rank, file.filename().string(),
                      info.rank_source == "filename" ? "the file name" : "being the only file");
      writer_.add_diagnostic(result.rank, "info", note);
      summary_.notes.push_back(note);
    }
    summary_.ranks.push_back(
        {result.rank, info.source_file, info.rank_source, result.gpu_events, result.cpu_events});
  }

  void import_nsys(const std::filesystem::path& file) {
    formats_.push_back("nsys");
    auto ranks = nsys::import_file(
        file, writer_,
        [&](const std::string& key, std::int64_t wanted, const std::string& source) {
          if (wanted > kMaxRank) fail("{}: rank {} is out of range", file.string(), wanted);
          const std::int32_t rank =
              wanted >= 0 ? static_cast<std::int32_t>(wanted) : assigner_.next_free_rank();
          assigner_.claim(key, rank, source, std::nullopt);
          return rank;
        },
        &summary_.notes);
    writer_.close_tracks();
    for (const auto& r : ranks) {
      if (const auto extent = writer_.rank_extent(r.rank)) {
        const Window window{file.string(), extent->first, extent->second, true};
        check_window(window);
        windows_.push_back(window);
      }
      summary_.ranks.push_back(r);
    }
  }

  // A file left out (--skip-bad): one note, and a diagnostic of the whole job in the profile.
  void skip(const std::filesystem::path& file, const std::string& problem) {
    summary_.skipped.push_back({file.string(), problem});
    const std::string note = "skipped " + problem;
    summary_.notes.push_back(note);
    writer_.add_diagnostic(-1, "warning", note);
  }

  ImportSummary commit() {
    std::sort(formats_.begin(), formats_.end());
    formats_.erase(std::unique(formats_.begin(), formats_.end()), formats_.end());
    std::string format_list;
    for (const auto& f : formats_) format_list += (format_list.empty() ? "" : ",") + f;
    writer_.set_meta("source_format", format_list);
    std::sort(summary_.ranks.begin(), summary_.ranks.end(),
              [](const ImportedRank& a, const ImportedRank& b) { return a.rank < b.rank; });
    writer_.commit();
    return std::move(summary_);
  }

 private:
  WriterOptions writer_options(const std::vector<std::filesystem::path>& inputs,
                               const BeforePublish& before_publish) {
    WriterOptions w;
    w.inputs = inputs;
    if (before_publish) {
      w.before_publish = [this, before_publish](const std::filesystem::path& written,
                                                const std::filesystem::path& shown) {
        before_publish(written, shown, summary_);
      };
    }
    return w;
  }

  // Checks of a Kineto file against itself and the files before it.
  void check_kineto(const std::filesystem::path& file, const kineto::FileResult& result) const {
    if (result.gpu_events == 0 && result.cpu_events == 0) {
      fail("{}: no GPU or CPU events to import (the trace holds only metadata)", file.string());
    }
    if (!result.metadata.exported_ranks.empty()) return;
    check_window({file.string(), result.first_ns, result.last_ns, false});
  }

  // The time windows of the files, to refuse files of different runs.
  struct Window {
    std::string path;
    TimeNs first, last;
    bool nsys;
    // On the wall clock (ns since 1970, after 1973), not relative to the start of a capture.
    bool on_wall_clock() const { return first > 100'000'000'000'000'000; }
  };

  // Ranks of one job overlap in time; files hours apart were recorded by different runs, whatever their
  // formats. An Nsight Systems export without its session's start time counts from its capture's start: it
  // is compared only with files on the same clock.
  void check_window(const Window& file) const {
    for (const auto& w : windows_) {
      if ((file.nsys || w.nsys) && file.on_wall_clock() != w.on_wall_clock()) continue;
      constexpr TimeNs kHour = 3'600'000'000'000;
      if (file.first > w.last + kHour || w.first > file.last + kHour) {
        fail(
            "{}: recorded at a different time than {} (no overlap within an hour): the files come from "
            "different jobs",
            file.path, w.path);
      }
    }
  }

  ProfileWriter writer_;
  RankAssigner assigner_;
  const ImportOptions& options_;
  ImportSummary summary_;
  std::vector<std::string> formats_;
  std::vector<Window> windows_;
};

unsigned reading_threads(const ImportOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

}  // namespace

namespace {

// The files of a job and what is known of each before reading it.
struct JobFiles {
  std::vector<std::filesystem::path> paths;
  std::vector<std::uint64_t> sizes;
  std::vector<char> nsys, buffered;
  std::uint64_t total_bytes = 0;
};

// Under --skip-bad, a file that failed after some of its rows were written: the import starts over without
// it.
struct StartOver {
  std::size_t file;
  std::string problem;
};

// One pass over FILES into OUTPUT, leaving out the files LEFT_OUT says (with their problem).
ImportSummary import_job(const JobFiles& files, const std::filesystem::path& output,
                         const std::vector<std::string>& left_out, const ImportOptions& options,
                         const BeforePublish& before_publish) {
  const std::size_t count = files.paths.size();
  std::vector<char> read(files.buffered);
  for (std::size_t i = 0; i < count; ++i) {
    if (!left_out[i].empty()) read[i] = 0;
  }
  JobImport job(output, files.paths, options, before_publish);
  std::uint64_t done_bytes = 0;
  double shown = 0;
  ParallelReader reader(files.paths, read, files.sizes, reading_threads(options), options);
  auto report = [&](std::uint64_t within_file) {
    if (!options.progress || files.total_bytes == 0) return;
    const double f = static_cast<double>(done_bytes + within_file + reader.bytes_read_ahead()) /
                     static_cast<double>(files.total_bytes);
    if (f <= shown) return;
    shown = std::min(f, 1.0);
    options.progress(shown);
  };
  if (options.files_done) options.files_done(0, count);
  std::size_t imported = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& file = files.paths[i];
    reader.at(i);
    bool writing = false;  // rows of this file have gone to the writer
    try {
      if (!left_out[i].empty()) {
        job.skip(file, left_out[i]);
      } else if (files.nsys[i]) {
        writing = true;
        job.import_nsys(file);
        ++imported;
      } else {
        kineto::FileResult result;
        bool written = false;
        if (read[i]) {
          auto parsed = reader.take(i, [&] { report(0); });
          if (parsed.error) std::rethrow_exception(parsed.error);
          // Facts stated after the events move the file's rows to its final rank: such a file is read again
          // directly, where that is resolved as it always was.
          if (!parsed.rows->has_rank_rewrites()) {
            job.claim_buffered(file, parsed.result);
            writing = true;
            job.write_buffered(*parsed.rows);
            result = std::move(parsed.result);
            written = true;
          }
        }
        if (!written) {
          writing = true;
          result = job.read_directly(file, [&](std::uint64_t done, std::uint64_t) { report(done); });
        }
        job.finish_kineto(file, result);
        ++imported;
      }
    } catch (const Error& e) {
      if (!options.skip_bad) throw;
      // Nsight Systems exports and Kineto files too large to hold are written while they are read: when one
      // of them fails, the import starts over without it.
      if (writing) throw StartOver{i, e.what()};
      job.skip(file, e.what());
    }
    done_bytes += files.sizes[i];
    report(0);
    if (options.files_done) options.files_done(i + 1, count);
  }
  if (imported == 0) {
    std::string problems;
    for (const auto& s : job.summary().skipped) problems += (problems.empty() ? "" : "; ") + s.problem;
    fail("no file could be imported ({} skipped: {})", count, problems);
  }
  auto summary = job.commit();
  if (options.progress) options.progress(1.0);
  return summary;
}

}  // namespace

ImportSummary import_traces(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& output, const ImportOptions& options,
                            const BeforePublish& before_publish) {
  if (inputs.empty()) fail("no traces given");
  JobFiles files;
  std::vector<std::filesystem::path> repeated;
  files.paths = expand_trace_inputs(inputs, &repeated);
  // The output is checked (not one of the traces, a link written through, its folder writable) by the writer
  // before anything is read (profiler/output_file.hpp).
  const std::size_t count = files.paths.size();
  files.sizes.resize(count);
  files.nsys.resize(count);
  files.buffered.resize(count);
  std::vector<std::string> left_out(count);
  for (std::size_t i = 0; i < count; ++i) {
    files.sizes[i] = import::content_size_hint(files.paths[i]);
    files.total_bytes += files.sizes[i];
    files.nsys[i] = import::is_sqlite_file(files.paths[i]);
    // A file named as an Nsight Systems export (or report) that is no SQLite database: say that, not what its
    // bytes fail as JSON.
    if (!files.nsys[i]) {
      const std::string problem = import::not_an_export_problem(files.paths[i]);
      if (!problem.empty()) {
        left_out[i] = fmt::format("{}: {}", files.paths[i].string(), problem);
        if (!options.skip_bad) throw Error(left_out[i]);
      }
    }
    // Kineto files that fit in memory are read on the reading threads; larger ones are streamed into the
    // profile as they are read (flat memory), on this thread.
    files.buffered[i] = !files.nsys[i] && files.sizes[i] <= options.streaming_threshold_bytes;
  }
  // One such file alone is read straight into the writer on this thread (unless threads were asked for, or
  // --skip-bad wants it held until read whole): the writer's thread then inserts its rows while it is parsed,
  // instead of after.
  if (std::count(files.buffered.begin(), files.buffered.end(), 1) == 1 && options.threads == 0 &&
      !options.skip_bad) {
    std::fill(files.buffered.begin(), files.buffered.end(), 0);
  }
  for (;;) {
    try {
      ImportSummary summary = import_job(files, output, left_out, options, before_publish);
      for (const auto& r : repeated)
        summary.notes.push_back(fmt::format("{}: given more than once; imported once", r.string()));
      return summary;
    } catch (const StartOver& again) {
      left_out[again.file] = again.problem;
    }
  }
}

}  // namespace meshscope
