// Linked into every harness: before the first input, SQLite is given an allocator that AddressSanitizer does
// not see. Debian's SQLite is built without lookaside memory (SQLITE_OMIT_LOOKASIDE), so each connection's
// schema parse makes thousands of small allocations; through ASan each is poisoned, filled, quarantined and
// recycled, and the harnesses spent most of an execution there (docs/RELIABILITY.md "Fuzzers"). SQLite itself
// is not instrumented, so ASan checked nothing in those blocks that a bug of meshscope could reach beyond
// what a page buffer shared by many values already hid: reads of a column's text or blob stay within SQLite's
// pages either way. Everything meshscope allocates still goes through ASan. What the leak checker no longer
// sees (a connection or statement left open) is caught by counting SQLite's live blocks around each execution
// (fuzz_common.hpp, SqliteBlocksReleased).
#include <sqlite3.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
// glibc's own allocator, under the names the sanitizer does not intercept.
void* __libc_malloc(std::size_t size);
void* __libc_realloc(void* block, std::size_t size);
void __libc_free(void* block);
}

namespace {

// Each block carries its size in a 16-byte header (SQLite asks for it; alignment stays 16).
constexpr std::size_t kHeader = 16;

std::atomic<long> live_blocks{0};

void* sqlite_malloc(int size) {
  auto* block = static_cast<unsigned char*>(__libc_malloc(static_cast<std::size_t>(size) + kHeader));
  if (block == nullptr) return nullptr;
  live_blocks.fetch_add(1, std::memory_order_relaxed);
  const std::size_t n = static_cast<std::size_t>(size);
  std::memcpy(block, &n, sizeof n);
  return block + kHeader;
}

void sqlite_free(void* p) {
  if (p == nullptr) return;
  live_blocks.fetch_sub(1, std::memory_order_relaxed);
  __libc_free(static_cast<unsigned char*>(p) - kHeader);
}

void* sqlite_realloc(void* p, int size) {
  auto* block = static_cast<unsigned char*>(
      __libc_realloc(static_cast<unsigned char*>(p) - kHeader, static_cast<std::size_t>(size) + kHeader));
  if (block == nullptr) return nullptr;
  const std::size_t n = static_cast<std::size_t>(size);
  std::memcpy(block, &n, sizeof n);
  return block + kHeader;
}

int sqlite_size(void* p) {
  std::size_t n = 0;
  std::memcpy(&n, static_cast<unsigned char*>(p) - kHeader, sizeof n);
  return static_cast<int>(n);
}

int sqlite_roundup(int size) {
  return (size + 7) & ~7;
}
int sqlite_init(void*) {
  return SQLITE_OK;
}
void sqlite_shutdown(void*) {}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static const sqlite3_mem_methods methods = {sqlite_malloc,  sqlite_free, sqlite_realloc,  sqlite_size,
                                              sqlite_roundup, sqlite_init, sqlite_shutdown, nullptr};
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK) {
    std::fprintf(stderr, "fuzz: SQLite was used before its allocator could be set\n");
    std::abort();
  }
  // What SQLite allocates once per process (its mutexes, the VFS's tables) is allocated now, not during the
  // first execution's count.
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_exec(db, "CREATE TABLE t(x); SELECT * FROM t;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return 0;
}

extern "C" long meshscope_fuzz_sqlite_live_blocks() {
  return live_blocks.load(std::memory_order_relaxed);
}
