// Each test process writes under a folder of its own, removed when the process exits: ctest runs each of the
// ~500 tests as a process of its own, and what they left behind (about 1 GB a run, 2 GB with the sanitizer
// build) filled a CI machine's disk. The folders of processes that ended without exiting (a crash, a ctest
// timeout) are removed by the next test process that asks for its own. MESHSCOPE_KEEP_TEST_FILES=1 keeps them
// (to look at what a failing test wrote).
#include "tests/support/scratch.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string scratch;
pid_t owner = 0;

// A child forked by a test (a death test, a spawned command before exec) exits too: only the owner removes.
void remove_scratch() {
  if (::getpid() != owner || std::getenv("MESHSCOPE_KEEP_TEST_FILES") != nullptr) return;
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
}

bool process_is_gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

void remove_folders_of_ended_processes(const fs::path& root) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 2 || name[0] != 'p' || name.find_first_not_of("0123456789", 1) != std::string::npos)
      continue;
    const long pid = std::strtol(name.c_str() + 1, nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || !process_is_gone(static_cast<pid_t>(pid))) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

}  // namespace

const char* meshscope_test_scratch_dir() {
  static std::once_flag once;
  std::call_once(once, [] {
    const fs::path root = MESHSCOPE_TEST_TMP_ROOT;
    fs::create_directories(root);
    remove_folders_of_ended_processes(root);
    owner = ::getpid();
    scratch = (root / ("p" + std::to_string(owner))).string();
    fs::create_directories(scratch);
    std::atexit(remove_scratch);
  });
  return scratch.c_str();
}
