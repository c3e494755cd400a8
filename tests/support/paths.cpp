#include "tests/support/paths.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <string>

const char* meshscope_test_path(const char* relative) {
  static std::mutex mutex;
  static std::map<std::string, std::string> made;  // nodes never move: the pointers stay valid
  const std::lock_guard lock(mutex);
  auto [it, added] = made.try_emplace(relative);
  if (added)
    it->second = (std::filesystem::path(MESHSCOPE_TEST_SOURCE_ROOT) / relative).lexically_normal().string();
  return it->second.c_str();
}
