// Reading trace files: whole-file reads into a simdjson-padded buffer (plain or gzip, decompressed with
// libdeflate), and a chunked reader for files too large to hold in memory (zlib, plain or gzip).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace meshscope::import {

bool is_gzip_file(const std::filesystem::path& path);
bool is_sqlite_file(const std::filesystem::path& path);

// For a file that is not SQLite but named as Nsight Systems output (.sqlite, .sqlite3, .db; .nsys-rep and
// .qdrep, its own report format): what is wrong, in a phrase; empty for any other name.
std::string not_an_export_problem(const std::filesystem::path& path);

// Size of the decompressed content as far as it can be known cheaply (the gzip trailer for .gz files; exact
// for files under 4 GiB decompressed, otherwise a lower bound).
std::uint64_t content_size_hint(const std::filesystem::path& path);

// A byte buffer for a whole decompressed trace: 2 MiB-aligned and marked for transparent huge pages, and left
// uninitialised (the reader writes it once), so a large trace costs few page faults.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer();
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  void reserve(std::size_t capacity);  // keeps the contents
  void resize(std::size_t size);       // grows the capacity as needed; new bytes are unspecified
  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// Reads and decompresses the whole file into BUFFER, leaving at least `padding` spare bytes of capacity after
// the content, all zero (simdjson reads past the end). Throws Error naming the file for missing files and
// corrupt or truncated gzip data.
void read_whole_file(const std::filesystem::path& path, ByteBuffer& buffer, std::size_t padding);

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
