// Screenshot tests: `meshscope view PROFILE --panel P --screenshot OUT.png` under xvfb-run renders real
// OpenGL frames; the PNG must have the requested size, show the panel's known labels (the text its widgets
// rendered, --screenshot-text) and draw the class colours of the data it shows.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/gui/gui_util.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

bool have_xvfb() {
  return std::system("command -v xvfb-run > /dev/null 2>&1") == 0;
}

// What a panel must show: labels from its widgets' text (--screenshot-text) and colours drawn exactly as
// app/gui/gui_util.hpp defines them (the class colours of real data).
struct Expected {
  std::vector<std::string> labels;
  std::vector<std::pair<const char*, unsigned>> colours;  // name, 0xRRGGBB
};

constexpr unsigned rgb(ImU32 c) {
  return ((c >> IM_COL32_R_SHIFT) & 0xff) << 16 | ((c >> IM_COL32_G_SHIFT) & 0xff) << 8 |
         ((c >> IM_COL32_B_SHIFT) & 0xff);
}

// Runs `meshscope view PROFILE --panel P --screenshot ...` under Xvfb with `env` (VAR=value ...) before it
// and EXTRA_ARGS after it (PANEL "": no --panel, the panel the view chooses); returns its stderr.
std::string check_screenshot(const std::filesystem::path& profile, const char* panel, int w, int h,
                             const Expected& expected, const std::string& extra_env = "",
                             const std::string& extra_args = "") {
  // One file per test process: ctest runs the screenshot tests side by side, two of them of the timeline.
  const std::string stem =
      std::string("shot-") + (*panel ? panel : "chosen") + "-" + std::to_string(::getpid());
  const auto out = std::filesystem::path(MESHSCOPE_TEST_TMP) / (stem + ".png");
  const auto text_out = std::filesystem::path(MESHSCOPE_TEST_TMP) / (stem + ".txt");
  std::filesystem::remove(out);
  std::filesystem::remove(text_out);
#if defined(__SANITIZE_ADDRESS__)
  // Mesa's DRI driver is dlclose()d at exit, so the few blocks it keeps show up as "<unknown module>" and no
  // suppression in lsan.supp can name them. Leak checking of meshscope's own code runs in-process in
  // harness_test.cpp (same View, same profiles); here only the OpenGL process skips it.
  const std::string env = "ASAN_OPTIONS=detect_leaks=0 ";
#else
  const std::string env;
#endif
  const auto err_out = std::filesystem::path(MESHSCOPE_TEST_TMP) / (stem + ".err");
  // The X authority file in this test's own folder: xvfb-run then makes no temporary folder of its own, whose
  // removal failed now and then with tests running beside each other (exit 5, "problem while cleaning up").
  const auto auth = std::filesystem::path(MESHSCOPE_TEST_TMP) / (stem + ".xauth");
  const std::string command =
      env + extra_env + " xvfb-run -a -f '" + auth.string() + "' -s '-screen 0 " + std::to_string(w + 64) +
      "x" + std::to_string(h + 64) + "x24' '" + MESHSCOPE_BINARY + "' view '" + profile.string() + "'" +
      (*panel ? std::string(" --panel ") + panel : std::string()) + " " + extra_args + " --size " +
      std::to_string(w) + "x" + std::to_string(h) + " --screenshot '" + out.string() +
      "' --screenshot-text '" + text_out.string() + "' > /dev/null 2> '" + err_out.string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream err_in(err_out);
  std::stringstream err;
  err << err_in.rdbuf();
  std::filesystem::remove(err_out);
  EXPECT_EQ(status, 0) << command << "\n" << err.str();
  if (status != 0 || !std::filesystem::exists(out)) {
    ADD_FAILURE() << "no screenshot written";
    return err.str();
  }
  int iw = 0, ih = 0, channels = 0;
  unsigned char* pixels = stbi_load(out.c_str(), &iw, &ih, &channels, 3);
  if (pixels == nullptr) {
    ADD_FAILURE() << "unreadable PNG " << out;
    return err.str();
  }
  EXPECT_EQ(iw, w);
  EXPECT_EQ(ih, h);
  std::map<unsigned, std::size_t> colour_pixels;
  for (int i = 0; i < iw * ih; ++i) {
    const unsigned char* p = pixels + static_cast<std::size_t>(i) * 3;
    ++colour_pixels[(unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | p[2]];
  }
  stbi_image_free(pixels);
  // A class colour drawn as a bar or a box, not a stray anti-aliased pixel.
  for (const auto& [name, colour] : expected.colours)
    EXPECT_GE(colour_pixels[colour], 40u) << panel << ": no " << name << " drawn";

  std::ifstream text_in(text_out);
  std::stringstream text;
  text << text_in.rdbuf();
  for (const auto& label : expected.labels)
    EXPECT_NE(text.str().find(label), std::string::npos) << panel << ": '" << label << "' not shown";
  if (!::testing::Test::HasFailure()) {
    std::filesystem::remove(out);
    std::filesystem::remove(text_out);
  }
  return err.str();
}

Expected expected_on_sample(const std::string& panel) {
  const std::pair<const char*, unsigned> compute{"compute", rgb(kColCompute)},
      comm{"communication", rgb(kColComm)}, exposed{"exposed communication", rgb(kColExposed)};
  // Every panel: the menu and the profile line of the four-rank sample.
  std::vector<std::string> common = {"File", "Profile", "4 ranks (world 4)"};
  Expected e;
  if (panel == "timeline") e = {{"Search names", "Fit (F)"}, {compute, comm, exposed}};
  if (panel == "summary")
    e = {{"PER-RANK GPU TIME", "TOP KERNELS", "ncclDevKernel_ReduceScatter"},
         {compute, exposed, {"overlapped communication", rgb(kColOverlap)}}};
  if (panel == "roofline")
    e = {{"Extended roofline of h100-sxm", "attention QKV GEMM", "bound by"},
         {{"predicted points", rgb(kColPredicted)}}};
  if (panel == "explorer")
    e = {{"MODEL AND HARDWARE", "PREDICTED STEP TIME BY PART", "BEST LAYOUTS"}, {compute}};
  if (panel == "planner") e = {{"Checkpoint interval", "Young interval", "Compute-optimal budget"}, {}};
  if (panel == "overview")
    e = {{"Sort rows by", "exposed communication", "outlier (", "slowest step"},
         {exposed, {"the slowest step's frame", rgb(kColSelect)}}};
  e.labels.insert(e.labels.end(), common.begin(), common.end());
  return e;
}

class Screenshot : public ::testing::TestWithParam<const char*> {};

TEST_P(Screenshot, SampleJob) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  check_screenshot(msdb, GetParam(), 1280, 720, expected_on_sample(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Gui, Screenshot,
                         ::testing::Values("timeline", "summary", "roofline", "explorer", "planner",
                                           "overview"));

// A V100 (Kineto's ResNet-50 trace: "Tesla V100-DGXS-32GB", FP32 convolutions) has no BF16: the Explorer
// names its 16-bit precision FP16, and the Roofline its 16-bit tensor peak and, for the FP32 work, the FP32
// peak.
TEST(Screenshot, AV100HasNoBf16) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto msdb = test::imported(test::shared_trace("kineto/resnet50_num_workers_0"));
  ASSERT_FALSE(msdb.empty());
  check_screenshot(msdb, "explorer", 1400, 900, {{"{ fp16 } precision", "1f1b  fp16  training"}, {}});
  check_screenshot(msdb, "roofline", 1400, 900, {{"Extended roofline of v100", "Per GPU, FP16."}, {}});
}

// HTA's cupti_profiler trace ran on "NVIDIA A100-PG509-200", a board name no preset names: the Summary says
// it is described from its records, and the Explorer lists that description first and predicts on it.
TEST(Screenshot, ABoardNameIsPredictedOnFromItsRecords) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto msdb = test::imported(test::shared_trace("hta/cupti_profiler"));
  ASSERT_FALSE(msdb.empty());
  check_screenshot(
      msdb, "summary", 1600, 900,
      {{"compute capability 8.0, 108 SMs; no preset names it: predicted as a100-pg509-200, described "
        "from these records"},
       {}});
  check_screenshot(msdb, "explorer", 1600, 900,
                   {{"{ a100-pg509-200 } hardware", "a100-pg509-200 (described from its records)"}, {}});
}

// Without a TrueType font (a machine without fonts-dejavu-core) the panels still render their labels, with
// ImGui's built-in font, and the program says once which font it uses.
TEST(Screenshot, BuiltInFontWhenNoTrueTypeFont) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  const std::string err =
      check_screenshot(msdb, "summary", 1280, 720, expected_on_sample("summary"), "MESHSCOPE_FONT=builtin");
  EXPECT_NE(err.find("using ImGui's built-in font ProggyClean at 13 px"), std::string::npos) << err;
  const auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = err.find(needle); at != std::string::npos; at = err.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("built-in font"), 1u) << err;

  const std::string missing = check_screenshot(msdb, "timeline", 1280, 720, expected_on_sample("timeline"),
                                               "MESHSCOPE_FONT=/nonexistent/font.ttf");
  EXPECT_NE(missing.find("MESHSCOPE_FONT=/nonexistent/font.ttf: not a TrueType font file"), std::string::npos)
      << missing;
}

TEST(Screenshot, TwoRankSharedTraceTimeline) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  const auto trace = test::shared_trace("hta/trace_filter");
  if (!std::filesystem::exists(trace)) GTEST_SKIP();
  const auto msdb = test::imported(trace);
  ASSERT_FALSE(msdb.empty());
  check_screenshot(
      msdb, "timeline", 1024, 640,
      {{"Search names", "2 ranks"}, {{"compute", rgb(kColCompute)}, {"communication", rgb(kColComm)}}});
}

// `view PROFILE --whatif EDITS` with no panel named: the view starts on the Explorer, which starts its search
// of layouts, then opens the profile on the timeline with the replay's rows stacked. The search finished
// while no one drew the Explorer must not count as running: the offscreen run waited for it forever.
TEST(Screenshot, AWhatIfOpensOnTheTimelineAndSettles) {
  if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
  // The trace itself: the view imports it while the Explorer draws its first frames.
  const auto trace =
      std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  check_screenshot(trace, "", 1024, 640, {{"Search names", "What-if rows"}, {{"compute", rgb(kColCompute)}}},
                   "timeout 120 ",
                   "--whatif 'gemm=0.5'");  // (a hang fails in 2 minutes, not at ctest's limit)
}

}  // namespace
}  // namespace meshscope::gui
