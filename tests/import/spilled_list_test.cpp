// SpilledList (collectors/import/spilled_list.hpp): what the operators' links keep while a trace is read goes
// to an unnamed temporary file past a million records, and comes back whole and in order; a temporary folder
// that cannot be written is one Error naming it.
#include "collectors/import/spilled_list.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "profiler/error.hpp"

namespace meshscope::import {
namespace {

struct Record {
  std::int64_t start;
  std::uint32_t thread;
};

TEST(SpilledList, RecordsPastTheMemoryLimitComeBackWholeAndInOrder) {
  SpilledList<Record> list;
  const std::size_t n = SpilledList<Record>::kInMemory + 3 * SpilledList<Record>::kBlock + 17;
  for (std::size_t i = 0; i < n; ++i)
    list.push_back({static_cast<std::int64_t>(i) * 3, static_cast<std::uint32_t>(i % 7)});
  EXPECT_EQ(list.size(), n);
  EXPECT_GT(list.spilled(), 0u);
  const std::vector<Record> back = list.take();
  ASSERT_EQ(back.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(back[i].start, static_cast<std::int64_t>(i) * 3) << i;
    ASSERT_EQ(back[i].thread, i % 7) << i;
  }
  EXPECT_TRUE(list.empty());
  // Cleared and used again.
  list.push_back({5, 1});
  EXPECT_EQ(list.take().size(), 1u);
}

TEST(SpilledList, AnUnwritableTemporaryFolderIsOneErrorNamingIt) {
  const char* previous = std::getenv("TMPDIR");
  const std::string saved = previous ? previous : "";
  ::setenv("TMPDIR", "/nonexistent-meshscope-tmp", 1);
  SpilledList<Record> list;
  try {
    for (std::size_t i = 0; i <= SpilledList<Record>::kInMemory; ++i) list.push_back({0, 0});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("/nonexistent-meshscope-tmp"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  if (previous) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace meshscope::import
