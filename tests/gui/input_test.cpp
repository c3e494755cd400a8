// Input-driven tests: the real program (`meshscope view`) in an Xvfb server of its own, driven by the real X
// mouse and keyboard with xdotool (click, drag, wheel, type, keys), and checked on what the program reports
// about itself: MESHSCOPE_STATE_FILE, a JSON dump of its selection, zoom, range, search, rows and Explorer
// layout that it rewrites whenever they change (app/gui/View_State.cpp). Skipped without Xvfb or xdotool.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "profiler/profile.hpp"
#include "tests/gui/gui_test_util.hpp"

extern char** environ;

namespace meshscope::gui {
namespace {

using Clock = std::chrono::steady_clock;

bool have(const char* program) {
  return std::system((std::string("command -v ") + program + " > /dev/null 2>&1").c_str()) == 0;
}

pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

void stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// An X server of the test's own on a free display number.
class Xvfb {
 public:
  Xvfb(int w, int h) {
    for (int n = 90 + ::getpid() % 300; n < 1000 && pid_ <= 0; ++n) {
      if (std::filesystem::exists("/tmp/.X" + std::to_string(n) + "-lock") ||
          std::filesystem::exists("/tmp/.X11-unix/X" + std::to_string(n)))
        continue;
      pid_ = spawn({"Xvfb", ":" + std::to_string(n), "-screen", "0",
                    std::to_string(w) + "x" + std::to_string(h) + "x24", "-nolisten", "tcp"},
                   {});
      for (int i = 0; i < 500 && pid_ > 0; ++i) {
        if (std::filesystem::exists("/tmp/.X11-unix/X" + std::to_string(n))) {
          // The socket may be another test's server that won the race for this number (ours then exits
          // at once): use it only if ours is still running a moment later.
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            break;
          }
          display_ = ":" + std::to_string(n);
          return;
        }
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) pid_ = -1;  // lost the race for this number
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  ~Xvfb() { stop(pid_); }
  Xvfb(const Xvfb&) = delete;
  Xvfb& operator=(const Xvfb&) = delete;
  const std::string& display() const { return display_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

// `meshscope view ARGS` on the test's X server, and what it says about itself.
class App {
 public:
  App(const Xvfb& x, const std::vector<std::string>& args) : display_(x.display()) {
    const std::string tmp = MESHSCOPE_TEST_TMP;
    state_ = tmp + "/input-state-" + std::to_string(::getpid()) + ".json";
    std::filesystem::remove(state_);
    std::vector<std::string> argv = {MESHSCOPE_BINARY, "view"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ =
        spawn(argv, {"DISPLAY=" + display_, "MESHSCOPE_STATE_FILE=" + state_,
                     "XDG_CONFIG_HOME=" + tmp + "/input-config", "XDG_CACHE_HOME=" + tmp + "/input-cache"});
  }
  ~App() { stop(pid_); }
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // The latest state (re-read from the file). The element stays valid while the App lives.
  simdjson::dom::element state() {
    auto parser = std::make_unique<simdjson::dom::parser>();
    simdjson::dom::element e;
    if (!read(*parser, e)) {
      ADD_FAILURE() << "no state from the program: " << text_.substr(0, 200);
      static simdjson::dom::parser empty;
      return empty.parse(std::string("{}"));
    }
    kept_.push_back(std::move(parser));
    return e;
  }
  // Waits until PRED holds on the state (up to SECONDS); returns the state it held on.
  simdjson::dom::element wait(const std::function<bool(simdjson::dom::element)>& pred, double seconds = 20) {
    const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    while (Clock::now() < until) {
      auto parser = std::make_unique<simdjson::dom::parser>();
      simdjson::dom::element e;
      if (read(*parser, e) && pred(e)) {
        kept_.push_back(std::move(parser));
        return e;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    const auto sel = text_.find("\"selected\"");
    ADD_FAILURE() << "timed out; last state: " << text_.substr(0, 1500) << " ... "
                  << (sel == std::string::npos ? std::string() : text_.substr(sel, 1500));
    return state();
  }
  // Runs xdotool with ARGS (window-relative mouse moves use the app's window).
  void xdo(const std::string& args) {
    if (window_.empty()) {
      const std::string find =
          "DISPLAY=" + display_ + " xdotool search --sync --name '^meshscope$' | head -1";
      FILE* p = ::popen(find.c_str(), "r");
      char buf[64] = {};
      if (p && std::fgets(buf, sizeof buf, p)) window_ = std::string(buf, std::strcspn(buf, "\n"));
      if (p) ::pclose(p);
    }
    std::string command = args;
    for (std::size_t at = command.find("WIN"); at != std::string::npos; at = command.find("WIN", at + 1))
      command.replace(at, 3, window_);
    ASSERT_EQ(std::system(("DISPLAY=" + display_ + " xdotool " + command).c_str()), 0) << command;
  }
  void move(double x, double y) {
    xdo("mousemove --window WIN " + std::to_string(static_cast<int>(x)) + " " +
        std::to_string(static_cast<int>(y)));
  }
  void click(double x, double y, int button = 1) {
    move(x, y);
    xdo("sleep 0.1 click " + std::to_string(button));
  }
  // A drag with BUTTON from (X0, Y0) to (X1, Y1) in STEPS moves, each seen by a frame of its own.
  void drag(double x0, double y0, double x1, double y1, int button = 1, int steps = 8) {
    move(x0, y0);
    xdo("sleep 0.1 mousedown " + std::to_string(button));
    for (int i = 1; i <= steps; ++i) {
      move(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps);
      xdo("sleep 0.05");
    }
    xdo("sleep 0.1 mouseup " + std::to_string(button));
  }
  bool running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  // Waits until the profile is in and the layout has settled (a few frames later), returns that state.
  simdjson::dom::element loaded_state(double seconds = 30);

 private:
  bool read(simdjson::dom::parser& parser, simdjson::dom::element& e) {
    std::ifstream in(state_);
    std::stringstream text;
    text << in.rdbuf();
    text_ = text.str();
    return !text_.empty() && !parser.parse(text_).get(e) && e.type() == simdjson::dom::element_type::OBJECT;
  }
  std::string display_, state_, text_, window_;
  pid_t pid_ = -1;
  std::vector<std::unique_ptr<simdjson::dom::parser>> kept_;  // parsers of the states handed out
};

bool loaded(simdjson::dom::element s) {
  bool loading = true;
  std::int64_t ranks = 0;
  simdjson::dom::array rows;
  return !s["loading"].get(loading) && !loading && !s["ranks"].get(ranks) && ranks > 0 &&
         !s["timeline"]["rows"].get(rows) && rows.size() > 0;
}
std::int64_t i64(simdjson::dom::element e) {
  std::int64_t v = 0;
  return e.get(v) ? 0 : v;
}
double num(simdjson::dom::element e) {
  double v = 0;
  return e.get(v) ? 0 : v;
}
std::string str(simdjson::dom::element e) {
  std::string_view v;
  return e.get(v) ? std::string() : std::string(v);
}

simdjson::dom::element App::loaded_state(double seconds) {
  wait(loaded, seconds);
  xdo("sleep 0.6");  // the first frames with the profile still place the toolbar and rows
  return state();
}

class InputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have("Xvfb") || !have("xdotool"))
      GTEST_SKIP() << "Xvfb and xdotool are needed (apt install xvfb xdotool)";
    msdb_ = test::imported(test::sample_job());
    ASSERT_FALSE(msdb_.empty());
  }
  std::filesystem::path msdb_;
};

// Screen x of time T in state S.
double x_of(simdjson::dom::element s, TimeNs t) {
  const auto tl = s["timeline"];
  const double x0 = num(tl["canvas"]["x0"]), x1 = num(tl["canvas"]["x1"]);
  return x0 + static_cast<double>(t - i64(tl["t0_ns"])) /
                  static_cast<double>(i64(tl["t1_ns"]) - i64(tl["t0_ns"])) * (x1 - x0);
}

// The first row of KIND of RANK (a test failure, and the first row, when there is none).
simdjson::dom::element row_of(simdjson::dom::element s, std::string_view kind, std::int64_t rank) {
  for (auto row : s["timeline"]["rows"].get_array()) {
    if (str(row["kind"]) == kind && i64(row["rank"]) == rank) return row;
  }
  ADD_FAILURE() << "no " << kind << " row of rank " << rank;
  return s["timeline"]["rows"].at(0);
}

TEST_F(InputTest, ClickWheelDragRangeKeysAndSearchOnTheTimeline) {
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--size", "1400x900"});
  auto s = app.loaded_state();
  ASSERT_TRUE(app.running());
  const Profile profile = Profile::load(msdb_);
  const Rank& rank = profile.ranks()[0];

  // Click the widest activity of rank 0's first stream.
  const auto events = rank.stream_activities(0);
  std::uint32_t best = 0;
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    if (events[i].duration() > events[best].duration()) best = i;
  }
  auto row = row_of(s, "gpu_stream", 0);
  app.click(x_of(s, (events[best].start_ns + events[best].end_ns) / 2),
            num(row["y"]) + num(row["lane_h"]) / 2);
  s = app.wait([&](auto st) { return str(st["timeline"]["selected"]["kind"]) == "activity"; });
  EXPECT_EQ(i64(s["timeline"]["selected"]["index"]), rank.streams[0].first + best);
  EXPECT_EQ(str(s["timeline"]["selected"]["name"]), profile.str(events[best].name));
  const TimeNs width = i64(s["timeline"]["t1_ns"]) - i64(s["timeline"]["t0_ns"]);
  app.xdo("key Escape");
  s = app.wait([&](auto st) { return str(st["timeline"]["selected"]["kind"]) == "none"; });

  // Wheel up three notches at 40 % of the canvas: zooms in around the cursor.
  const double cx = num(s["timeline"]["canvas"]["x0"]) +
                    0.4 * (num(s["timeline"]["canvas"]["x1"]) - num(s["timeline"]["canvas"]["x0"]));
  const double cy = num(row["y"]) + 2;
  auto t_at = [&](simdjson::dom::element st, double px) {
    const auto tl = st["timeline"];
    return i64(tl["t0_ns"]) + static_cast<TimeNs>((px - num(tl["canvas"]["x0"])) /
                                                  (num(tl["canvas"]["x1"]) - num(tl["canvas"]["x0"])) *
                                                  static_cast<double>(i64(tl["t1_ns"]) - i64(tl["t0_ns"])));
  };
  const TimeNs under = t_at(s, cx);
  app.move(cx, cy);
  app.xdo("sleep 0.1 click 4 sleep 0.1 click 4 sleep 0.1 click 4");
  s = app.wait(
      [&](auto st) { return i64(st["timeline"]["t1_ns"]) - i64(st["timeline"]["t0_ns"]) < width * 7 / 10; });
  const TimeNs zoomed = i64(s["timeline"]["t1_ns"]) - i64(s["timeline"]["t0_ns"]);
  EXPECT_NEAR(static_cast<double>(t_at(s, cx)), static_cast<double>(under),
              3.0 * static_cast<double>(width) / 1200)
      << "the time under the cursor stays under it";

  // Drag on the time axis: a range, its totals, Z zooms to it.
  const double ry = (num(s["timeline"]["canvas"]["ruler_y0"]) + num(s["timeline"]["canvas"]["ruler_y1"])) / 2;
  const double x0 = num(s["timeline"]["canvas"]["x0"]), x1 = num(s["timeline"]["canvas"]["x1"]);
  app.drag(x0 + 0.25 * (x1 - x0), ry, x0 + 0.6 * (x1 - x0), ry);
  s = app.wait([](auto st) {
    return bool(st["timeline"]["range"]["active"]) && bool(st["timeline"]["range"]["ready"]);
  });
  EXPECT_GT(i64(s["timeline"]["range"]["events"]), 0);
  EXPECT_GT(i64(s["timeline"]["range"]["kernels"]), 0);
  const TimeNs lo = i64(s["timeline"]["range"]["start_ns"]), hi = i64(s["timeline"]["range"]["end_ns"]);
  EXPECT_NEAR(static_cast<double>(hi - lo), 0.35 * static_cast<double>(zoomed),
              0.03 * static_cast<double>(zoomed));
  app.xdo("key b");
  app.xdo("key z");
  s = app.wait(
      [&](auto st) { return i64(st["timeline"]["t0_ns"]) == lo && i64(st["timeline"]["t1_ns"]) == hi; });
  EXPECT_EQ(i64(s["timeline"]["bookmarks"]), 1);

  // Keyboard: W held zooms in, D held pans right.
  const TimeNs before = i64(s["timeline"]["t1_ns"]) - i64(s["timeline"]["t0_ns"]);
  app.xdo("keydown w sleep 0.4 keyup w");
  s = app.wait(
      [&](auto st) { return i64(st["timeline"]["t1_ns"]) - i64(st["timeline"]["t0_ns"]) < before * 8 / 10; });
  const TimeNs t0 = i64(s["timeline"]["t0_ns"]);
  app.xdo("keydown Right sleep 0.3 keyup Right");
  s = app.wait([&](auto st) { return i64(st["timeline"]["t0_ns"]) > t0; });

  // Search: Ctrl+F, type, Enter three times: each match centred at the same zoom, "k of n" advancing.
  app.xdo("key Escape key f");  // clear the range; F fits (a frame after Escape: wait for both)
  s = app.wait([&](auto st) {
    return !bool(st["timeline"]["range"]["active"]) &&
           i64(st["timeline"]["t1_ns"]) - i64(st["timeline"]["t0_ns"]) == width;
  });
  const double mid = (num(s["timeline"]["canvas"]["x0"]) + num(s["timeline"]["canvas"]["x1"])) / 2;
  app.move(mid, num(row["y"]) + 2);
  app.xdo("click 4 sleep 0.1 click 4 sleep 0.1 click 4 sleep 0.1 click 4 sleep 0.2");
  s = app.wait(
      [&](auto st) { return i64(st["timeline"]["t1_ns"]) - i64(st["timeline"]["t0_ns"]) < width / 2; });
  app.xdo("sleep 0.3");
  s = app.state();
  const TimeNs search_width = i64(s["timeline"]["t1_ns"]) - i64(s["timeline"]["t0_ns"]);
  app.xdo("key ctrl+f sleep 0.2 type --delay 40 nccl");
  app.xdo("sleep 0.2 key Return");
  s = app.wait([](auto st) {
    return i64(st["timeline"]["search"]["matches"]) > 0 && i64(st["timeline"]["search"]["cursor"]) >= 0;
  });
  const std::int64_t n = i64(s["timeline"]["search"]["matches"]);
  for (int k = 0; k < 3; ++k) {
    const std::int64_t cursor = i64(s["timeline"]["search"]["cursor"]);
    EXPECT_EQ(i64(s["timeline"]["t1_ns"]) - i64(s["timeline"]["t0_ns"]), search_width) << "match " << cursor;
    const TimeNs pad = std::max<TimeNs>(1000, (profile.last_ns() - profile.first_ns()) / 50);
    EXPECT_GE(i64(s["timeline"]["t0_ns"]), profile.first_ns() - pad);
    EXPECT_LE(i64(s["timeline"]["selected"]["start_ns"]), i64(s["timeline"]["t1_ns"]));
    EXPECT_GE(i64(s["timeline"]["selected"]["end_ns"]), i64(s["timeline"]["t0_ns"]));
    app.xdo("key Return");
    s = app.wait([&](auto st) { return i64(st["timeline"]["search"]["cursor"]) == (cursor + 1) % n; });
  }
}

TEST_F(InputTest, RowMenuPinsARowThatStaysAtTheTopWhileScrolling) {
  Xvfb x(1300, 800);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--size", "1200x700"});
  auto s = app.loaded_state();
  // Right-click the label of rank 2's first stream (on screen: rank 3's is below the window's edge), then
  // "Pin to top".
  auto row = row_of(s, "gpu_stream", 2);
  const std::int64_t item = i64(row["item"]);
  app.click(num(s["timeline"]["canvas"]["x0"]) - 60, num(row["y"]) + 5, 3);
  s = app.wait([](auto st) { return st["timeline"]["menu"].get_array().size() > 0; });
  for (auto m : s["timeline"]["menu"].get_array()) {
    if (str(m["label"]) == "Pin to top")
      app.click((num(m["x0"]) + num(m["x1"])) / 2, (num(m["y0"]) + num(m["y1"])) / 2);
  }
  auto pinned = [&](simdjson::dom::element st) {
    for (auto r : st["timeline"]["rows"].get_array()) {
      if (i64(r["item"]) == item) return bool(r["pinned"]);
    }
    return false;
  };
  // The frame that pinned it laid the rows out before: wait for one that shows it in the pinned band.
  s = app.wait([&](auto st) {
    if (!pinned(st)) return false;
    for (auto r : st["timeline"]["rows"].get_array()) {
      if (i64(r["item"]) == item)
        return std::abs(num(r["y"]) - num(st["timeline"]["canvas"]["rows_top"])) < 0.5;
    }
    return false;
  });
  // Open rank 0's CPU threads (a click on its "CPU threads" row), so that the rows no longer fit the window.
  app.click(num(s["timeline"]["canvas"]["x0"]) - 120, num(row_of(s, "cpu_section", 0)["y"]) + 6);
  s = app.wait([](auto st) {
    for (auto r : st["timeline"]["rows"].get_array()) {
      if (str(r["kind"]) == "cpu_thread" && i64(r["rank"]) == 0) return true;  // laid out, not just opened
    }
    return false;
  });
  double bottom = 0;
  for (auto r : s["timeline"]["rows"].get_array()) bottom = std::max(bottom, num(r["y"]) + num(r["h"]));
  ASSERT_GT(bottom, num(s["timeline"]["canvas"]["rows_bottom"]) + 60) << "the rows fit: nothing to scroll";
  // Shift + wheel scrolls the rows; the pinned row stays at the top.
  const double top = num(s["timeline"]["canvas"]["rows_top"]);
  app.move(700, 500);
  app.xdo("keydown shift click 5 sleep 0.05 click 5 sleep 0.05 click 5 sleep 0.05 click 5 keyup shift");
  s = app.wait([&](auto st) {
    for (auto r : st["timeline"]["rows"].get_array()) {
      if (str(r["kind"]) == "header" && i64(r["rank"]) == 0) return num(r["y"]) < top - 20;
    }
    return false;
  });
  for (auto r : s["timeline"]["rows"].get_array()) {
    if (i64(r["item"]) == item) {
      EXPECT_NEAR(num(r["y"]), top, 0.5);
    }
  }
}

TEST_F(InputTest, ExplorerSlidersLandOnValidLayoutsAndCtrlClickTypes) {
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--panel", "explorer", "--size", "1400x900"});
  auto s = app.wait([](auto st) {
    return !bool(st["loading"]) && i64(st["ranks"]) > 0 && num(st["explorer"]["controls"]["TP"].at(2)) > 0;
  });
  auto rect = [&](simdjson::dom::element st, const char* field, int k) {
    return num(st["explorer"]["controls"][field].at(static_cast<std::size_t>(k)));
  };
  // Drag TP to its right end, then the GPUs slider from its left end across half its width: each lands on a
  // value that gives a valid layout with the other as it is.
  const double ty = (rect(s, "TP", 1) + rect(s, "TP", 3)) / 2;
  app.drag(rect(s, "TP", 0) + 3, ty, rect(s, "TP", 2) - 2, ty);
  s = app.wait([](auto st) { return i64(st["explorer"]["TP"]) > 1 && !bool(st["mouse_down"]); });
  const std::int64_t tp = i64(s["explorer"]["TP"]);
  EXPECT_TRUE(bool(s["explorer"]["valid"])) << "TP " << tp << ": " << str(s["explorer"]["error"]);
  EXPECT_EQ(32 % tp, 0) << "TP divides the 32 heads of the sample's GPT";
  const double gy = (rect(s, "GPUs", 1) + rect(s, "GPUs", 3)) / 2;
  app.drag(rect(s, "GPUs", 0) + 3, gy, rect(s, "GPUs", 0) + 0.55 * (rect(s, "GPUs", 2) - rect(s, "GPUs", 0)),
           gy);
  s = app.wait([](auto st) { return i64(st["explorer"]["GPUs"]) > 8 && !bool(st["mouse_down"]); });
  const std::int64_t gpus = i64(s["explorer"]["GPUs"]);
  EXPECT_TRUE(gpus % 8 == 0) << gpus << " GPUs: not a multiple of the node size";
  EXPECT_TRUE(bool(s["explorer"]["valid"])) << gpus << " GPUs: " << str(s["explorer"]["error"]);
  EXPECT_EQ(i64(s["explorer"]["TP"]), tp);
  // Ctrl+click types a value; an invalid one is explained, not clamped.
  app.move((rect(s, "TP", 0) + rect(s, "TP", 2)) / 2, ty);
  app.xdo("keydown ctrl click 1 keyup ctrl");
  s = app.wait([](auto st) { return i64(st["explorer"]["typing"]) == 1; });
  app.xdo("key ctrl+a type 3");
  app.xdo("key Return");
  s = app.wait([](auto st) { return i64(st["explorer"]["TP"]) == 3; });
  EXPECT_FALSE(bool(s["explorer"]["valid"]));
  EXPECT_NE(str(s["explorer"]["error"]).find("--tp 3"), std::string::npos) << str(s["explorer"]["error"]);
}

// Context parallelism's exchange is a control of its own once CP is above 1: typed CP 2, the ring hides its
// K/V steps behind the attention; chosen from the combo, the all-gather (Llama 3's) is exposed in the step.
TEST_F(InputTest, ExplorerChoosesHowContextParallelismExchangesKeysAndValues) {
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--panel", "explorer", "--size", "1400x900"});
  auto s = app.wait([](auto st) {
    return !bool(st["loading"]) && i64(st["ranks"]) > 0 && num(st["explorer"]["controls"]["CP"].at(2)) > 0;
  });
  EXPECT_EQ(num(s["explorer"]["cp_comm_combo"].at(2)), 0) << "no CP exchange control while CP is 1";
  auto cp = [&](int k) { return num(s["explorer"]["controls"]["CP"].at(static_cast<std::size_t>(k))); };
  app.move((cp(0) + cp(2)) / 2, (cp(1) + cp(3)) / 2);
  app.xdo("keydown ctrl click 1 keyup ctrl");
  s = app.wait([](auto st) { return i64(st["explorer"]["typing"]) == 4; });
  app.xdo("key ctrl+a type 2");
  app.xdo("key Return");
  s = app.wait([](auto st) {
    return i64(st["explorer"]["CP"]) == 2 && num(st["explorer"]["cp_comm_combo"].at(2)) > 0;
  });
  ASSERT_TRUE(bool(s["explorer"]["valid"])) << str(s["explorer"]["error"]);
  EXPECT_EQ(str(s["explorer"]["cp_comm"]), "ring");
  const double ring_exposed = num(s["explorer"]["cp_exposed_s"]);
  auto combo = [&](int k) { return num(s["explorer"]["cp_comm_combo"].at(static_cast<std::size_t>(k))); };
  const double h = combo(3) - combo(1);
  app.click((combo(0) + combo(2)) / 2, (combo(1) + combo(3)) / 2);
  app.click((combo(0) + combo(2)) / 2, combo(3) + 1.5 * h);  // the second item of the list below it
  s = app.wait([](auto st) { return str(st["explorer"]["cp_comm"]) != "ring"; });
  EXPECT_EQ(str(s["explorer"]["cp_comm"]), "all-gather");
  EXPECT_GT(num(s["explorer"]["cp_exposed_s"]), ring_exposed);
}

// An Nsight Systems export records neither shapes nor a GPU name: the Explorer says why it is not comparable
// and offers to save the model, hardware and layout chosen there as what the profile ran. Clicked, the
// profile holds them (what `meshscope annotate` stores) and the measured column appears.
TEST_F(InputTest, NotComparableOffersToSaveWhatTheProfileRan) {
  const std::filesystem::path msdb = std::filesystem::path(MESHSCOPE_TEST_TMP) / "explorer-stated.msdb";
  std::filesystem::copy_file(test::imported(test::shared_trace("nsys_nccl/mfu_2gpu_after.sqlite")), msdb,
                             std::filesystem::copy_options::overwrite_existing);
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb.string(), "--panel", "explorer", "--size", "1400x900"});
  auto s = app.wait([](auto st) {
    return !bool(st["loading"]) && i64(st["ranks"]) > 0 && num(st["explorer"]["save_button"].at(2)) > 0;
  });
  EXPECT_FALSE(bool(s["explorer"]["comparable"]));
  const std::string model = str(s["explorer"]["model"]), hardware = str(s["explorer"]["hardware"]);
  auto button = [&](int k) { return num(s["explorer"]["save_button"].at(static_cast<std::size_t>(k))); };
  app.click((button(0) + button(2)) / 2, (button(1) + button(3)) / 2);
  s = app.wait([](auto st) { return bool(st["explorer"]["comparable"]); });
  EXPECT_EQ(str(s["explorer"]["save_message"]), "saved in explorer-stated.msdb");
  EXPECT_EQ(str(s["explorer"]["model"]), model);
  EXPECT_EQ(str(s["explorer"]["hardware"]), hardware);
  EXPECT_NE(str(s["explorer"]["start"]).find("model " + model + " (stated)"), std::string::npos)
      << str(s["explorer"]["start"]);
  const Profile saved = Profile::load(msdb, LoadOptions{.events = false});
  ASSERT_EQ(saved.meta().count("stated_model"), 1u);
  EXPECT_NE(saved.meta().at("stated_model").find("name = '" + model + "'"), std::string::npos)
      << saved.meta().at("stated_model");
  EXPECT_NE(saved.meta().at("stated_hardware").find("name = '" + hardware + "'"), std::string::npos);
  EXPECT_NE(saved.meta().at("stated_layout").find("mode=training"), std::string::npos)
      << saved.meta().at("stated_layout");
}

TEST_F(InputTest, FileBrowserOpensATypedPathAndSeveralTracesOpenAsOneJob) {
  Xvfb x(1300, 800);
  ASSERT_FALSE(x.display().empty());
  {
    App app(x, {"--size", "1200x700"});
    app.wait([](auto st) { return str(st["panel"]) == "Explorer"; });
    app.xdo("sleep 0.3 key ctrl+o");
    app.wait([](auto st) { return bool(st["open_dialog"]); });
    app.xdo("sleep 0.2 key ctrl+a type --delay 5 " + msdb_.string());
    app.xdo("key Return");
    const auto s = app.loaded_state();
    EXPECT_EQ(i64(s["ranks"]), 4);
    EXPECT_EQ(str(s["profile"]), msdb_.string());
  }
  {
    std::vector<std::string> args;
    for (int r = 0; r < 4; ++r)
      args.push_back((test::sample_job() / ("rank-" + std::to_string(r) + ".json.gz")).string());
    args.insert(args.end(), {"--size", "1200x700"});
    App app(x, args);
    const auto s = app.loaded_state(60);
    EXPECT_EQ(i64(s["ranks"]), 4) << "four trace files, one job";
  }
}

TEST_F(InputTest, ClickingAStepInTheSummarySelectsItOnTheTimeline) {
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--panel", "summary", "--size", "1400x900"});
  auto s = app.wait([](auto st) {
    simdjson::dom::array steps;
    return !bool(st["loading"]) && !st["summary"]["steps"].get(steps) && steps.size() > 1;
  });
  app.xdo("sleep 0.5");
  s = app.state();
  const auto row = s["summary"]["steps"].at(1);
  const std::int64_t number = i64(row["number"]);
  const std::int64_t rank_index = i64(s["summary"]["rank_index"]);
  app.click(num(row["x0"]) + 10, (num(row["y0"]) + num(row["y1"])) / 2);
  s = app.wait([](auto st) {
    return str(st["panel"]) == "Timeline" && str(st["timeline"]["selected"]["kind"]) == "step";
  });
  EXPECT_EQ(str(s["timeline"]["selected"]["name"]), "Step " + std::to_string(number));
  EXPECT_EQ(i64(s["timeline"]["selected"]["rank_index"]), rank_index);
  EXPECT_LE(i64(s["timeline"]["t0_ns"]), i64(s["timeline"]["selected"]["start_ns"])) << "the step is in view";
  EXPECT_GE(i64(s["timeline"]["t1_ns"]), i64(s["timeline"]["selected"]["end_ns"]));
}

TEST_F(InputTest, HiDpiScaleTwoAtTheSmallestWindow) {
  Xvfb x(1200, 800);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--size", "1100x700", "--scale", "2"});
  auto s = app.loaded_state();
  const auto row = row_of(s, "gpu_stream", 0);
  EXPECT_NEAR(num(row["lane_h"]), 36.0, 0.01);
  EXPECT_NEAR(num(s["timeline"]["canvas"]["x0"]), 400.0 + 8 * 2, 20.0) << "the label column scales too";
  // A click still lands on the event under it.
  const Profile profile = Profile::load(msdb_);
  const auto events = profile.ranks()[0].stream_activities(0);
  std::uint32_t best = 0;
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    if (events[i].duration() > events[best].duration()) best = i;
  }
  app.click(x_of(s, (events[best].start_ns + events[best].end_ns) / 2),
            num(row["y"]) + num(row["lane_h"]) / 2);
  s = app.wait([](auto st) { return str(st["timeline"]["selected"]["kind"]) == "activity"; });
  EXPECT_EQ(i64(s["timeline"]["selected"]["index"]), profile.ranks()[0].streams[0].first + best);
}

// Ctrl+B opens the file browser for the baseline; a typed path loads it and the Summary compares with it.
TEST_F(InputTest, CtrlBOpensABaselineThroughTheFileBrowser) {
  Xvfb x(1300, 800);
  ASSERT_FALSE(x.display().empty());
  App app(x, {msdb_.string(), "--panel", "summary", "--size", "1200x700"});
  app.wait([](auto st) { return !bool(st["loading"]) && i64(st["ranks"]) > 0; });
  app.xdo("sleep 0.3 key ctrl+b");
  app.wait([](auto st) { return bool(st["open_dialog"]); });
  app.xdo("sleep 0.2 key ctrl+a type --delay 5 " + msdb_.string());
  app.xdo("key Return");
  const auto s = app.wait([](auto st) { return bool(st["baseline_diff"]); }, 60);
  EXPECT_EQ(str(s["baseline"]), msdb_.string());
  EXPECT_EQ(str(s["profile"]), msdb_.string()) << "the open profile stays";
  EXPECT_EQ(str(s["baseline_error"]), "");
  EXPECT_FALSE(bool(s["open_dialog"]));
}

// One click on a cell of the rank x time overview opens the timeline on that rank's lanes,
// zoomed to the cell's time window (a generated 32-rank job: the rank is far below the first screen of
// lanes).
TEST_F(InputTest, ClickOnAnOverviewCellOpensTheRankAtThatTimeOnTheTimeline) {
  const auto job = test::generated_job("overview-input", "--ranks 32 --events-per-rank 1000");
  ASSERT_FALSE(job.empty());
  Xvfb x(1500, 950);
  ASSERT_FALSE(x.display().empty());
  App app(x, {job.string(), "--panel", "overview", "--size", "1400x900"});
  auto s = app.wait(
      [](auto st) {
        simdjson::dom::array order;
        return str(st["panel"]) == "Overview" && !st["overview"]["order"].get(order) && order.size() == 32 &&
               i64(st["overview"]["columns"]) > 0;
      },
      60);
  app.xdo("sleep 0.5");
  s = app.state();
  const auto ov = s["overview"];
  ASSERT_EQ(i64(ov["ranks_per_row"]), 1);
  const std::int64_t rank = 27, columns = i64(ov["columns"]), column = columns * 3 / 5;
  ASSERT_EQ(i64(ov["order"].at(static_cast<std::size_t>(rank))), rank) << "rows by rank";
  const double x0 = num(ov["canvas"].at(0)), y0 = num(ov["canvas"].at(1)), x1 = num(ov["canvas"].at(2));
  const double col_w = (x1 - x0) / static_cast<double>(columns);
  const TimeNs start = i64(ov["start_ns"]) + i64(ov["column_ns"]) * column, width = i64(ov["column_ns"]);
  app.click(x0 + col_w * (static_cast<double>(column) + 0.5),
            y0 + num(ov["row_h"]) * (static_cast<double>(rank) + 0.5));
  s = app.wait([&](auto st) {
    if (str(st["panel"]) != "Timeline") return false;
    for (auto row : st["timeline"]["rows"].get_array()) {
      if (str(row["kind"]) == "header" && i64(row["rank"]) == rank)
        return num(row["y"]) >= num(st["timeline"]["canvas"]["rows_top"]) - 1 &&
               num(row["y"]) < num(st["timeline"]["canvas"]["rows_bottom"]);
    }
    return false;
  });
  EXPECT_EQ(i64(s["timeline"]["t0_ns"]), start);
  EXPECT_EQ(i64(s["timeline"]["t1_ns"]), start + width);
  EXPECT_TRUE(bool(s["timeline"]["rank_open"].at(static_cast<std::size_t>(rank))));
}

}  // namespace
}  // namespace meshscope::gui
