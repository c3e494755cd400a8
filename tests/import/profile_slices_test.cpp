// Profile::load reads its three large tables in rowid slices on several threads (profile.cpp
// rowid_slices): each slice sorted as read, then merged. The loaded profile must be exactly the one a whole
// read gives, for any number of slices: checked field by field on profiles imported from real traces
// (Kineto with several ranks and threads, Nsight Systems).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/import/import.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"
#include "tests/profile_compare.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;

fs::path shared_trace(const std::string& relative) {
  return fs::path(MESHSCOPE_SHARED_DIR) / "traces" / relative;
}

fs::path imported(const std::vector<std::string>& traces, const std::string& name) {
  const fs::path out = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()) + ".msdb");
  fs::remove(out);
  std::vector<fs::path> inputs;
  for (const auto& t : traces) inputs.push_back(shared_trace(t));
  import_traces(inputs, out);
  return out;
}

// MIN_EVENTS: enough rows for every slice to hold some.
void expect_same_profile(const fs::path& path, std::size_t slices, std::size_t min_events = 1000) {
  const Profile whole = Profile::load(path, LoadOptions{.table_slices = 1});
  const Profile sliced = Profile::load(path, LoadOptions{.table_slices = slices});
  ASSERT_EQ(whole.ranks().size(), sliced.ranks().size());
  std::size_t events = 0;
  for (std::size_t i = 0; i < whole.ranks().size(); ++i) {
    const Rank& a = whole.ranks()[i];
    const Rank& b = sliced.ranks()[i];
    expect_same_rank(a, b);
    events += a.activities.size() + a.api_calls.size() + a.ranges.size();
  }
  EXPECT_GE(events, min_events);
  const EventCounts& n = whole.counts();
  const EventCounts& m = sliced.counts();
  EXPECT_EQ(std::tie(n.kernel, n.memcpy, n.runtime, n.cpu_op, n.python_function, n.step, n.collective),
            std::tie(m.kernel, m.memcpy, m.runtime, m.cpu_op, m.python_function, m.step, m.collective));
}

// Two ranks of HTA's 128-rank job: kernels, copies, collectives, several CPU threads and streams.
TEST(ProfileSlices, KinetoRanksLoadTheSameInAnyNumberOfSlices) {
  const fs::path profile = imported({"hta/trace_filter"}, "slices-kineto");
  for (std::size_t slices : {2u, 3u, 7u}) {
    SCOPED_TRACE(slices);
    expect_same_profile(profile, slices);
  }
}

// Ranges start at the same time on a thread (a step and its first operator; forward and backward of one
// operator) and a slice boundary can fall between them: the merge keeps the whole read's order.
TEST(ProfileSlices, ResNetWithNestedOperatorsLoadsTheSame) {
  const fs::path profile = imported({"kineto/resnet50_num_workers_0"}, "slices-resnet");
  expect_same_profile(profile, 5);
}

// A small MPI job's export (99 events): slices of a few rows each.
TEST(ProfileSlices, NsightSystemsExportLoadsTheSame) {
  const fs::path profile = imported({"nsys"}, "slices-nsys");
  expect_same_profile(profile, 4, 90);
}

// Without CPU operators (what the analyses that skip them load), the skipped rows are still counted once.
TEST(ProfileSlices, SkippedOperatorsAreCountedOnceOverTheSlices) {
  const fs::path profile = imported({"kineto/resnet50_num_workers_0"}, "slices-skipped");
  const Profile whole = Profile::load(profile, LoadOptions{.cpu_operators = false, .table_slices = 1});
  const Profile sliced = Profile::load(profile, LoadOptions{.cpu_operators = false, .table_slices = 6});
  EXPECT_GT(whole.counts().cpu_op, 0);
  EXPECT_EQ(whole.counts().cpu_op, sliced.counts().cpu_op);
  EXPECT_EQ(whole.counts().python_function, sliced.counts().python_function);
  // SQLite counts the rows it leaves out: as many as a load with the operators holds.
  const Profile with_operators = Profile::load(profile);
  EXPECT_EQ(whole.counts().cpu_op, with_operators.counts().cpu_op);
  EXPECT_EQ(whole.counts().python_function, with_operators.counts().python_function);
  EXPECT_EQ(whole.counts().annotation, with_operators.counts().annotation);
  // The ranges that stay (annotations, steps) keep their depths under the operators left out.
  std::size_t kept = 0;
  for (const Rank& r : whole.ranks()) {
    for (const CpuRange& c : r.ranges) {
      EXPECT_NE(c.kind, RangeKind::kCpuOp);
      ++kept;
    }
  }
  EXPECT_GT(kept, 0u);
}

// A loaded range does not hold its parent: Rank::parent_range finds it from the nesting. It must be the range
// the writer recorded as ranges.parent_id, on traces with deep operator nesting and with NVTX ranges.
TEST(ProfileNesting, ParentRangeIsTheWritersParent) {
  std::size_t nested = 0;  // ranges with a parent, over the three traces (the Nsight export nests none)
  for (const auto& [trace, name] :
       {std::pair<const char*, const char*>{"kineto/resnet50_num_workers_0", "nest-resnet"},
        {"hta/trace_filter", "nest-hta"},
        {"nsys", "nest-nsys"}}) {
    SCOPED_TRACE(trace);
    const fs::path profile = imported({trace}, name);
    const Profile p = Profile::load(profile);
    std::map<std::int64_t, std::int64_t> parent_of;  // range id -> parent id (kNull at depth 0)
    {
      sql::Database db(profile, true);
      auto s = db.prepare("SELECT id, parent_id FROM ranges");
      while (s.step()) parent_of[s.column_int(0)] = s.column_int(1);
    }
    for (const Rank& r : p.ranks()) {
      for (std::uint32_t i = 0; i < r.ranges.size(); ++i) {
        const std::int64_t parent = r.parent_range(i);
        const std::int64_t want = parent_of.at(r.ranges[i].id);
        if (want == kNull) {
          EXPECT_EQ(parent, -1) << "range " << r.ranges[i].id;
          continue;
        }
        ASSERT_GE(parent, 0) << "range " << r.ranges[i].id;
        EXPECT_EQ(r.ranges[static_cast<std::size_t>(parent)].id, want) << "range " << r.ranges[i].id;
        ++nested;
      }
    }
  }
  EXPECT_GT(nested, 1000u);
}

// Profile::load_image reads the bytes of a profile's file in memory (what the fuzzers load): the profile is
// the file's, field by field, in one slice or several (each slice read on a connection of its own).
TEST(ProfileImage, AnImageInMemoryLoadsAsItsFileDoes) {
  const fs::path path = imported({"hta/trace_filter"}, "image-kineto");
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 0u);
  const Profile file = Profile::load(path, LoadOptions{.table_slices = 1});
  for (std::size_t slices : {1u, 3u}) {
    SCOPED_TRACE(slices);
    const Profile image = Profile::load_image(bytes, "in-memory.msdb", LoadOptions{.table_slices = slices});
    EXPECT_EQ(image.path(), fs::path("in-memory.msdb"));
    ASSERT_EQ(file.ranks().size(), image.ranks().size());
    for (std::size_t i = 0; i < file.ranks().size(); ++i) expect_same_rank(file.ranks()[i], image.ranks()[i]);
    EXPECT_EQ(file.counts().kernel, image.counts().kernel);
    EXPECT_EQ(file.meta(), image.meta());
  }
}

// Bytes that are no profile are refused in one line naming the image, as a file would be.
TEST(ProfileImage, BytesThatAreNoProfileAreOneLineNamingTheImage) {
  auto refusal = [](const std::string& text) {
    const std::vector<unsigned char> bytes(text.begin(), text.end());
    try {
      (void)Profile::load_image(bytes, "bad.msdb");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const std::string garbage = refusal(std::string(4096, 'x'));
  EXPECT_EQ(garbage, "bad.msdb: not a meshscope profile (not an SQLite database)");
  const std::string empty = refusal("");
  EXPECT_EQ(empty, "bad.msdb: not a meshscope profile (no meta/activities tables)");
}

}  // namespace
}  // namespace meshscope
