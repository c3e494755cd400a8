// Shared by the libFuzzer harnesses: a scratch folder in memory (/dev/shm), writing an input to a file,
// applying SQL from an input to a copy of a seed database, and the invariant every harness checks: whatever
// meshscope accepts and writes, Profile::load reads back.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"

// SQLite's blocks still allocated (fuzz_sqlite_setup.cpp: SQLite allocates outside the sanitizer).
extern "C" long meshscope_fuzz_sqlite_live_blocks();

namespace meshscope::fuzz {

namespace fs = std::filesystem;

// A private folder for this fuzzing process, in memory when /dev/shm exists (SQLite files there cost no
// disk). /dev/shm is memory: the folder goes when the process exits, and those of fuzzers that died (a
// finding, a kill) are removed by the next one, so that long campaigns do not fill it.
inline const fs::path& scratch() {
  static const fs::path dir = [] {
    std::error_code error;
    const fs::path base =
        fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm") : fs::temp_directory_path();
    const std::string prefix = "meshscope-fuzz-";
    for (const auto& entry : fs::directory_iterator(base, error)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string digits = name.substr(prefix.size());
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
        continue;
      if (!fs::exists("/proc/" + digits, error)) fs::remove_all(entry.path(), error);
    }
    fs::path d = base / (prefix + std::to_string(::getpid()));
    fs::remove_all(d, error);
    fs::create_directories(d);
    // A copy that outlives the static this initialises (destroyed before handlers registered earlier run).
    static const fs::path* const to_remove = new fs::path(d);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(*to_remove, ignored);
    });
    return d;
  }();
  return dir;
}

// Every connection and statement an execution opens is closed by its end: SQLite's blocks return to their
// count before it (the leak checker cannot see SQLite's memory, fuzz_sqlite_setup.cpp). The first member of
// every harness's entry point. Seeds made once per process (function statics) are closed before it returns
// too.
class SqliteBlocksReleased {
 public:
  SqliteBlocksReleased() : before_(meshscope_fuzz_sqlite_live_blocks()) {}
  ~SqliteBlocksReleased() {
    const long after = meshscope_fuzz_sqlite_live_blocks();
    if (after != before_) {
      std::fprintf(stderr,
                   "SQLite holds %ld blocks more after the execution: a connection or statement left open\n",
                   after - before_);
      std::abort();
    }
  }
  SqliteBlocksReleased(const SqliteBlocksReleased&) = delete;
  SqliteBlocksReleased& operator=(const SqliteBlocksReleased&) = delete;

 private:
  long before_;
};

inline void write_file(const fs::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// What the fuzzer's SQL may do on DB, a connection to a copy of a seed: no other files, and work bounded so
// that a slow statement costs the harness, not the code under test, little.
inline void limit_author(sqlite3* db) {
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 24 << 20);
  // The fuzzer's SQL touches this one file only: no ATTACH (VACUUM INTO attaches too), no pragmas that name
  // folders.
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_set_authorizer(
      db,
      [](void*, int action, const char* a, const char*, const char*, const char*) {
        if (action == SQLITE_ATTACH || action == SQLITE_DETACH) return SQLITE_DENY;
        if (action == SQLITE_PRAGMA && a &&
            (std::string_view(a).find("directory") != std::string_view::npos)) {
          return SQLITE_DENY;
        }
        return SQLITE_OK;
      },
      nullptr);
  static int steps = 0;
  steps = 0;
  sqlite3_progress_handler(
      db, 1000, [](void*) { return ++steps > 2000 ? 1 : 0; }, nullptr);
}

// Runs SQL (the fuzzer's text) on DB_PATH, a copy of a seed, as its author would: read-write, views and
// triggers allowed, within limit_author's bounds. Errors are ignored (most mutations are not valid SQL).
inline void apply_sql(const fs::path& db_path, std::string_view sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  limit_author(db);
  const std::string text(sql);
  sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

// The bytes of the SQLite file PATH in 1 KiB pages rather than meshscope's 16 KiB (each of the forty-odd
// tables takes a page, and every execution copies the image); empty when it cannot be read.
inline std::vector<unsigned char> small_page_image(const fs::path& path) {
  sqlite3* db = nullptr;
  std::vector<unsigned char> bytes;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
      sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 1024; VACUUM", nullptr, nullptr,
                   nullptr) == SQLITE_OK) {
    sqlite3_int64 size = 0;
    if (unsigned char* image = sqlite3_serialize(db, "main", &size, 0)) {
      bytes.assign(image, image + size);
      sqlite3_free(image);
    }
  }
  sqlite3_close(db);
  return bytes;
}

// SEED changed by SQL, run by the file's author on a copy in memory (errors ignored, work bounded as
// apply_sql bounds it): the changed file's bytes, SQLite's own while the author's connection is open.
class ChangedSeed {
 public:
  ChangedSeed(std::span<const unsigned char> seed, std::string_view sql) {
    if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return;
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(seed.size()));
    if (!copy) return;
    std::memcpy(copy, seed.data(), seed.size());
    sqlite3_deserialize(db_, "main", copy, static_cast<sqlite3_int64>(seed.size()),
                        static_cast<sqlite3_int64>(seed.size()),
                        SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    limit_author(db_);
    const std::string text(sql);
    sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
    sqlite3_int64 size = 0;
    if (const unsigned char* image = sqlite3_serialize(db_, "main", &size, SQLITE_SERIALIZE_NOCOPY))
      bytes_ = {image, static_cast<std::size_t>(size)};
  }
  ~ChangedSeed() { sqlite3_close(db_); }
  ChangedSeed(const ChangedSeed&) = delete;
  ChangedSeed& operator=(const ChangedSeed&) = delete;
  std::span<const unsigned char> bytes() const { return bytes_; }

 private:
  sqlite3* db_ = nullptr;
  std::span<const unsigned char> bytes_;
};

// Copies of SEEDS in DIR (emptied first), named NAME(i), each changed by its own SQL script of the input: the
// input is split on the byte 0x01, script i for seed i (missing scripts leave a copy as it was).
template <typename Name>
std::vector<fs::path> seed_copies_changed_by(const std::vector<fs::path>& seeds, const fs::path& dir,
                                             const std::uint8_t* data, std::size_t size, Name&& name) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<fs::path> files;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto cut = rest.find('\x01');
    const std::string_view script = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    files.push_back(dir / name(i));
    fs::copy_file(seeds[i], files.back());
    if (!script.empty()) apply_sql(files.back(), script);
  }
  return files;
}

// A small Kineto trace of RANK in a job of WORLD: eight 6 us kernels (three names) on one stream inside
// ProfilerStep#1, the ranks a few microseconds apart. What the summary harnesses make their parts from.
inline std::string small_rank_trace(int rank, int world) {
  std::string events;
  for (int i = 0; i < 8; ++i) {
    events += std::string(i ? "," : "") + R"({"ph": "X", "cat": "kernel", "name": "k)" +
              std::to_string(i % 3) + R"(", "pid": 0, "tid": 7, "ts": )" +
              std::to_string(1'000'000 + rank * 3 + i * 10) +
              R"(, "dur": 6, "args": {"device": 0, "stream": 7}})";
  }
  events +=
      R"(, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 1, "ts": 999990,)"
      R"( "dur": 100})";
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": )" +
         std::to_string(world) + R"(}, "traceEvents": [)" + events + "]}";
}

// Whatever meshscope wrote must load: a profile it writes and then refuses is a bug (an importer that let an
// invalid value through). Aborts with the load error, so that libFuzzer keeps the input.
inline void must_load(const fs::path& profile) {
  try {
    (void)Profile::load(profile);
  } catch (const Error& e) {
    std::fprintf(stderr, "meshscope wrote a profile it cannot load: %s\n", e.what());
    std::abort();
  }
}

// Bad input gets one line naming the file (NAME: a part of its path): anything else is a finding.
inline void require_one_line_naming(const Error& e, std::string_view name) {
  const std::string_view message = e.what();
  if (message.find('\n') != std::string_view::npos || message.find(name) == std::string_view::npos) {
    std::fprintf(stderr, "an error that is not one line naming the file: %s\n", e.what());
    std::abort();
  }
}

}  // namespace meshscope::fuzz
