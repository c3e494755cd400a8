// The one formatting of durations, sizes and the cache folder that the CLI and the GUI share.
#include "profiler/text_format.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

namespace meshscope {
namespace {

TEST(TextFormat, DurationsTakeTheUnitThatReadsBest) {
  EXPECT_EQ(duration_text(120), "120 ns");
  EXPECT_EQ(duration_text(850'000), "850.0 µs");
  EXPECT_EQ(duration_text(51'513'000), "51.513 ms");
  EXPECT_EQ(duration_text(999'999'000), "999.999 ms");
  EXPECT_EQ(duration_text(4'159'083'000), "4.159 s");
  EXPECT_EQ(duration_text(12'854'000'000), "12.854 s");
  // A training run's durations (the Planner's MTBF and checkpoint intervals) in minutes, hours and days.
  EXPECT_EQ(duration_text(TimeNs{150} * 1'000'000'000), "2.5 min");
  EXPECT_EQ(duration_text(TimeNs{9000} * 1'000'000'000), "2.50 h");
  EXPECT_EQ(duration_text(TimeNs{54} * 86400 * 1'000'000'000), "54.0 days");
  char buf[32];
  EXPECT_STREQ(duration_text(buf, sizeof buf, -2.5e6), "-2.500 ms");
  EXPECT_EQ(ms_text(1'500'000), "1.500 ms");
}

TEST(TextFormat, SizesAre1024Based) {
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(1536), "1.5 KiB");
  EXPECT_EQ(bytes_text(std::int64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(bytes_text(0), "?");
  EXPECT_EQ(bytes_text(-1, "size unknown"), "size unknown");
}

// Rates as datasheets print them: H100 SXM's 3.35 TB/s HBM3, 900 GB/s NVLink, 989 TFLOP/s dense BF16 and
// 1,979 TFLOP/s dense FP8 (NVIDIA H100 datasheet), and the units' edges.
TEST(TextFormat, RatesTakeTheDecimalPrefixThatReadsBest) {
  char buf[48];
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 3.35e12), "3.35 TB/s");
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 900e9), "900 GB/s");
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 50e9), "50.0 GB/s");
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 850e6), "850 MB/s");
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 999.7e9), "1.00 TB/s") << "rounds up into the next prefix";
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 12), "12.0 B/s");
  EXPECT_STREQ(bandwidth_text(buf, sizeof buf, 0), "0 B/s");
  EXPECT_STREQ(flop_rate_text(buf, sizeof buf, 989e12), "989 TFLOP/s");
  EXPECT_STREQ(flop_rate_text(buf, sizeof buf, 1979e12), "1.98 PFLOP/s");
  EXPECT_STREQ(flop_rate_text(buf, sizeof buf, 494.7e12), "495 TFLOP/s");
  EXPECT_STREQ(flop_rate_text(buf, sizeof buf, 1.5e9), "1.50 GFLOP/s");
  EXPECT_STREQ(flop_rate_text(buf, sizeof buf, 3e21), "3000 EFLOP/s") << "the last prefix keeps the rest";
}

TEST(TextFormat, ImportProgressSaysFilesShareAndTimeLeft) {
  EXPECT_EQ(seconds_text(0.42), "0.4 s");
  EXPECT_EQ(seconds_text(12.4), "12 s");
  EXPECT_EQ(seconds_text(200), "3 min 20 s");
  EXPECT_EQ(import_progress_text(0, 64, 0, 0), "0 of 64 files, 0.0 %, 0.0 s elapsed");
  // 25 % read in 10 s: 30 s left at that rate.
  EXPECT_EQ(import_progress_text(16, 64, 0.25, 10), "16 of 64 files, 25.0 %, 10 s elapsed, about 30 s left");
  EXPECT_EQ(import_progress_text(63, 64, 0.99, 50),
            "63 of 64 files, 99.0 %, 50 s elapsed, less than a second left");
  EXPECT_EQ(import_progress_text(1, 1, 1.0, 2.5), "1 of 1 file read, finishing the profile, 2.5 s elapsed");
}

TEST(TextFormat, CacheFolderFollowsXdg) {
  // Other tests of this executable read HOME and XDG_CACHE_HOME: put them back.
  const char* old_home = std::getenv("HOME");
  const char* old_cache = std::getenv("XDG_CACHE_HOME");
  const std::string home = old_home ? old_home : "", cache = old_cache ? old_cache : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  EXPECT_EQ(user_cache_dir(), std::filesystem::path("/tmp/xdg-cache/meshscope"));
  ::setenv("XDG_CACHE_HOME", "", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(user_cache_dir(), std::filesystem::path("/home/someone/.cache/meshscope"));
  old_home ? ::setenv("HOME", home.c_str(), 1) : ::unsetenv("HOME");
  old_cache ? ::setenv("XDG_CACHE_HOME", cache.c_str(), 1) : ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace meshscope
