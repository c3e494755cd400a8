// Reading trace files: whole-file reads into a simdjson-padded buffer (plain or gzip, decompressed with
// libdeflate), and a chunked reader for files too large to hold in memory (zlib, plain or gzip).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace meshscope::import {

bool is_gzip_file(const std::filesystem::path& path);
bool is_sqlite_file(const std::filesystem::path& path);

// Size of the decompressed content as far as it can be known cheaply (the gzip trailer for .gz files; exact
// for files under 4 GiB decompressed, otherwise a lower bound).
std::uint64_t content_size_hint(const std::filesystem::path& path);

// Reads and decompresses the whole file into BUFFER, leaving `padding` spare bytes at the end (simdjson needs
// them). Throws Error naming the file for missing files and corrupt or truncated gzip data.
void read_whole_file(const std::filesystem::path& path, std::string& buffer, std::size_t padding);

// Reads a file (gzip or plain) in chunks without holding it whole.
class ChunkReader {
 public:
  explicit ChunkReader(const std::filesystem::path& path);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;
  // Appends up to MAX bytes to OUT; returns the number appended (0 at the end). Throws Error on corrupt data.
  std::size_t read(std::string& out, std::size_t max);
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  std::filesystem::path path_;
  void* gz_ = nullptr;  // gzFile
  std::uint64_t bytes_read_ = 0;
};

}  // namespace meshscope::import
