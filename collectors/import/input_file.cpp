#include "collectors/import/input_file.hpp"

#include <libdeflate.h>
#include <sys/mman.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>

#include <cstring>
#include <fstream>
#include <memory>

#include "profiler/error.hpp"

namespace meshscope::import {
namespace {

std::string read_prefix(const std::filesystem::path& path, std::size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::string prefix(count, '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(count));
  prefix.resize(static_cast<std::size_t>(in.gcount()));
  return prefix;
}

void require_readable_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such file", path.string());
  if (!std::filesystem::is_regular_file(path, error)) fail("{}: not a regular file", path.string());
}

}  // namespace

bool is_gzip_file(const std::filesystem::path& path) {
  const auto prefix = read_prefix(path, 2);
  return prefix.size() == 2 && static_cast<unsigned char>(prefix[0]) == 0x1f &&
         static_cast<unsigned char>(prefix[1]) == 0x8b;
}

bool is_sqlite_file(const std::filesystem::path& path) {
  return read_prefix(path, 16) == std::string("SQLite format 3\0", 16);
}

std::string not_an_export_problem(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".nsys-rep" || extension == ".qdrep")
    return "an Nsight Systems report, not its SQLite export: run `nsys export --type sqlite` on it and "
           "import "
           "the .sqlite file";
  if (extension == ".sqlite" || extension == ".sqlite3" || extension == ".db")
    return "not an SQLite database (no SQLite header), though named as one: an Nsight Systems export is the "
           "SQLite file `nsys export --type sqlite` writes";
  return {};
}

std::uint64_t content_size_hint(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return 0;
  if (!is_gzip_file(path) || size < 18) return size;
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(size - 4));
  unsigned char trailer[4] = {};
  in.read(reinterpret_cast<char*>(trailer), 4);
  const std::uint64_t isize =
      trailer[0] | (trailer[1] << 8) | (trailer[2] << 16) | (std::uint64_t{trailer[3]} << 24);
  // ISIZE is the size modulo 2^32; gzip'd JSON compresses at least ~4x, so lift it above the compressed size.
  std::uint64_t estimate = isize;
  while (estimate < size) estimate += (std::uint64_t{1} << 32);
  // Deflate expands at most 1032:1: a damaged or hostile trailer must not make a small file look huge (the
  // in-memory reader reserves this much).
  return std::min<std::uint64_t>(estimate, std::uint64_t{size} * 1032 + 1024);
}

ByteBuffer::~ByteBuffer() {
  std::free(data_);
}

void ByteBuffer::reserve(std::size_t capacity) {
  if (capacity <= capacity_) return;
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t rounded = (capacity + kHugePage - 1) / kHugePage * kHugePage;
  char* fresh = static_cast<char*>(std::aligned_alloc(kHugePage, rounded));
  if (!fresh) throw std::bad_alloc();
  ::madvise(fresh, rounded, MADV_HUGEPAGE);  // a hint: without transparent huge pages it changes nothing
  if (size_) std::memcpy(fresh, data_, size_);
  std::free(data_);
  data_ = fresh;
  capacity_ = rounded;
}

void ByteBuffer::resize(std::size_t size) {
  if (size > capacity_) reserve(std::max(size, capacity_ * 2));
  size_ = size;
}

void read_whole_file(const std::filesystem::path& path, ByteBuffer& buffer, std::size_t padding) {
  require_readable_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open for reading", path.string());
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  auto finish = [&](std::size_t content) {
    buffer.reserve(content + padding);
    std::memset(buffer.data() + content, 0, padding);
    buffer.resize(content);
  };
  if (!is_gzip_file(path)) {
    buffer.reserve(size + padding);
    buffer.resize(size);
    in.read(buffer.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::size_t>(in.gcount()) != size) fail("{}: short read", path.string());
    finish(size);
    return;
  }
  std::string compressed(size, '\0');
  in.read(compressed.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::size_t>(in.gcount()) != size) fail("{}: short read", path.string());
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decompressor(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor) fail("{}: out of memory", path.string());
  std::size_t capacity = static_cast<std::size_t>(content_size_hint(path));
  buffer.resize(0);
  // One gzip member after another (concatenated .gz files are legal); each member is decompressed in turn.
  std::size_t in_offset = 0;
  while (in_offset < compressed.size()) {
    const std::size_t out_offset = buffer.size();
    std::size_t member_capacity = std::max<std::size_t>(capacity, 1024);
    for (;;) {
      buffer.reserve(out_offset + member_capacity + padding);
      std::size_t in_used = 0, out_used = 0;
      const auto result = libdeflate_gzip_decompress_ex(
          decompressor.get(), compressed.data() + in_offset, compressed.size() - in_offset,
          buffer.data() + out_offset, member_capacity, &in_used, &out_used);
      if (result == LIBDEFLATE_SUCCESS) {
        buffer.resize(out_offset + out_used);
        in_offset += in_used;
        break;
      }
      if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
        member_capacity *= 2;
        continue;
      }
      fail("{}: corrupt or truncated gzip data", path.string());
    }
    // Trailing zero padding after the last member is tolerated, as gzip does.
    while (in_offset < compressed.size() && compressed[in_offset] == '\0') ++in_offset;
    capacity = 0;
  }
  finish(buffer.size());
}

ChunkReader::ChunkReader(const std::filesystem::path& path) : path_(path) {
  require_readable_file(path);
  gz_ = gzopen(path.c_str(), "rb");
  if (!gz_) fail("{}: cannot open for reading", path.string());
  gzbuffer(static_cast<gzFile>(gz_), 1 << 20);
}

ChunkReader::~ChunkReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

std::size_t ChunkReader::read(std::string& out, std::size_t max) {
  const std::size_t old_size = out.size();
  out.resize(old_size + max);
  const int got = gzread(static_cast<gzFile>(gz_), out.data() + old_size, static_cast<unsigned>(max));
  if (got < 0) {
    int code = 0;
    const char* message = gzerror(static_cast<gzFile>(gz_), &code);
    out.resize(old_size);
    fail("{}: corrupt or truncated gzip data ({})", path_.string(), message ? message : "read error");
  }
  out.resize(old_size + static_cast<std::size_t>(got));
  if (got == 0) {
    int code = 0;
    gzerror(static_cast<gzFile>(gz_), &code);
    if (code != Z_OK && code != Z_STREAM_END) fail("{}: corrupt or truncated gzip data", path_.string());
  }
  bytes_read_ += static_cast<std::uint64_t>(got);
  return static_cast<std::size_t>(got);
}

}  // namespace meshscope::import
