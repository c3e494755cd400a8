// Screenshot tests: `meshscope view PROFILE --panel P --screenshot OUT.png` under xvfb-run renders real
// OpenGL frames; the PNG must exist, have the requested size and not be blank.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <unistd.h>

#include <cstdlib>
#include <set>

#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

bool have_xvfb() {
  return std::system("command -v xvfb-run > /dev/null 2>&1") == 0;
}

void check_screenshot(const std::filesystem::path& profile, const char* panel, int w, int h) {
  // One file per test process: ctest runs the screenshot tests side by side, two of them of the timeline.
  const auto out = std::filesystem::path(MESHSCOPE_TEST_TMP) /
                   (std::string("shot-") + panel + "-" + std::to_string(::getpid()) + ".png");
  std::filesystem::remove(out);
#if defined(__SANITIZE_ADDRESS__)
  // Mesa's DRI driver is dlclose()d at exit, so the few blocks it keeps show up as "<unknown module>" and no
  // suppression in lsan.supp can name them. Leak checking of meshscope's own code runs in-process in
  // harness_test.cpp (same View, same profiles); here only the OpenGL process skips it.
  const std::string env = "ASAN_OPTIONS=detect_leaks=0 ";
#else
  const std::string env;
#endif
  const std::string command = env + "xvfb-run -a -s '-screen 0 " + std::to_string(w + 64) + "x" +
                              std::to_string(h + 64) + "x24' '" + MESHSCOPE_BINARY + "' view '" +
                              profile.string() + "' --panel " + panel + " --size " + std::to_string(w) + "x" +
                              std::to_string(h) + " --screenshot '" + out.string() + "' > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_TRUE(std::filesystem::exists(out));
  int iw = 0, ih = 0, channels = 0;
  unsigned char* pixels = stbi_load(out.c_str(), &iw, &ih, &channels, 3);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(iw, w);
  EXPECT_EQ(ih, h);
  // Not blank: many distinct colours, and the class colours of real data somewhere on screen.
  std::set<unsigned> colours;
  for (int i = 0; i < iw * ih; i += 7) {
    const unsigned char* p = pixels + static_cast<std::size_t>(i) * 3;
    colours.insert((unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | p[2]);
  }
  stbi_image_free(pixels);
  EXPECT_GT(colours.size(), 60u) << panel;
  if (!::testing::Test::HasFailure()) std::filesystem::remove(out);
}

class Screenshot : public ::testing::TestWithParam<const char*> {};

TEST_P(Screenshot, SampleJob) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  check_screenshot(msdb, GetParam(), 1280, 720);
}

INSTANTIATE_TEST_SUITE_P(Gui, Screenshot,
                         ::testing::Values("timeline", "summary", "roofline", "explorer", "planner"));

TEST(Screenshot, TwoRankSharedTraceTimeline) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto trace = test::shared_trace("hta/trace_filter");
  if (!std::filesystem::exists(trace)) GTEST_SKIP();
  const auto msdb = test::imported(trace);
  ASSERT_FALSE(msdb.empty());
  check_screenshot(msdb, "timeline", 1024, 640);
}

}  // namespace
}  // namespace meshscope::gui
