// meshscope view [PROFILE...] [--baseline B...] [--stack-baseline] [--critical-path] [--screenshot OUT.png
// [--interactive]] [--panel NAME] [--size WxH] [--scale S],
// `meshscope PROFILE`, and the
// GUI default job (priority 10): `meshscope` with no arguments opens the window on the Explorer with the
// bundled sample loaded, or, when there is no display, says so and runs the command-line sample job.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "analysis/compare/whatif_request.hpp"
#include "app/command.hpp"
#include "app/gui/gui_main.hpp"
#include "collectors/import/import.hpp"
#include "profiler/error.hpp"

namespace meshscope::app {
namespace {

struct ViewFlags {
  std::vector<std::string> profiles;
  std::vector<std::string> baseline;
  bool stack_baseline = false, critical_path = false;
  std::string whatif;
  std::string screenshot;
  std::string screenshot_text;
  std::string panel;
  std::string size = "1600x900";
  std::string range;
  float scale = 0;
  bool interactive = false;
  std::string lazy = "auto";
  double rank_cache_mb = 512;
};

bool on_path(const char* program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs = path;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && ::access((std::filesystem::path(dir) / program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

gui::WindowOptions window_options(const ViewFlags& flags) {
  gui::WindowOptions o;
  o.profiles = flags.profiles;
  o.baseline = flags.baseline;
  if (!o.baseline.empty() && o.profiles.empty()) throw Error("--baseline needs a PROFILE to compare with it");
  if (flags.stack_baseline && o.baseline.empty()) throw Error("--stack-baseline needs --baseline");
  o.stack_baseline = flags.stack_baseline;
  if (!flags.whatif.empty()) {
    if (!o.baseline.empty())
      throw Error("--whatif: the replay is shown as the baseline; leave out --baseline");
    if (o.profiles.empty()) throw Error("--whatif needs a PROFILE to replay");
    compare::WhatifRequest request;
    std::string error;
    if (!compare::parse_whatif_line(flags.whatif, request, error)) throw Error("--whatif " + error);
    o.whatif = flags.whatif;
  }
  o.critical_path = flags.critical_path;
  o.screenshot = flags.screenshot;
  o.interactive = flags.interactive;
  if (o.interactive && o.screenshot.empty()) throw Error("--interactive needs --screenshot");
  if (flags.scale != 0 && (flags.scale < 1 || flags.scale > 4))
    throw Error("--scale: expected 1 to 4, e.g. 2 for HiDPI");
  o.scale = flags.scale;
  o.screenshot_text = flags.screenshot_text;
  if (!o.screenshot_text.empty() && o.screenshot.empty()) throw Error("--screenshot-text needs --screenshot");
  if (!flags.panel.empty()) {
    if (!gui::parse_panel(flags.panel, o.panel)) {
      throw Error("--panel " + flags.panel +
                  ": expected timeline, summary, roofline, explorer, planner or overview");
    }
    o.panel_set = true;
  }
  if (std::sscanf(flags.size.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 || o.height < 240 ||
      o.width > 16384 || o.height > 16384) {
    throw Error("--size " + flags.size + ": expected WIDTHxHEIGHT, e.g. 1600x900 (at least 320x240)");
  }
  if (!gui::parse_lazy_mode(flags.lazy, o.open.lazy))
    throw Error("--lazy " + flags.lazy + ": expected auto, always or never");
  if (!(flags.rank_cache_mb >= 16 && flags.rank_cache_mb <= 1e6))
    throw Error("--rank-cache: expected megabytes from 16 on, e.g. 512");
  o.open.rank_cache_bytes = static_cast<std::size_t>(flags.rank_cache_mb * 1024 * 1024);
  if (!flags.range.empty() &&
      (std::sscanf(flags.range.c_str(), "%lf:%lf", &o.range_start_ms, &o.range_end_ms) != 2 ||
       o.range_end_ms <= o.range_start_ms || o.range_start_ms < 0)) {
    throw Error("--range " + flags.range + ": expected START_MS:END_MS from the profile start, e.g. 0:12.5");
  }
  return o;
}

// With no display, a screenshot runs itself again under xvfb-run (when installed) so that it renders real
// frames, and exits as that run did. The X authority file lives in a folder of this process, removed after:
// left to itself, xvfb-run makes its own temporary folder and, with other runs beside it, now and then failed
// to remove it and exited 5 ("problem while cleaning up temporary directory") whatever the view did.
int run_under_xvfb(const gui::WindowOptions& o, const ViewFlags& flags) {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/meshscope-xvfb-XXXXXX";
  if (!::mkdtemp(folder.data())) throw Error("cannot make a temporary folder for xvfb-run: " + folder);
  std::vector<std::string> args = {
      "xvfb-run",
      "-a",
      "-f",
      folder + "/Xauthority",
      "-s",
      "-screen 0 " + std::to_string(o.width + 16) + "x" + std::to_string(o.height + 16) + "x24",
      std::filesystem::read_symlink("/proc/self/exe").string(),
      "view"};
  args.insert(args.end(), flags.profiles.begin(), flags.profiles.end());
  for (const auto& b : flags.baseline) args.insert(args.end(), {"--baseline", b});
  if (flags.stack_baseline) args.emplace_back("--stack-baseline");
  if (flags.critical_path) args.emplace_back("--critical-path");
  if (!flags.whatif.empty()) args.insert(args.end(), {"--whatif", flags.whatif});
  args.insert(args.end(), {"--screenshot", flags.screenshot, "--size", flags.size});
  if (!flags.panel.empty()) args.insert(args.end(), {"--panel", flags.panel});
  if (!flags.range.empty()) args.insert(args.end(), {"--range", flags.range});
  if (!flags.screenshot_text.empty()) args.insert(args.end(), {"--screenshot-text", flags.screenshot_text});
  if (flags.scale != 0) args.insert(args.end(), {"--scale", std::to_string(flags.scale)});
  args.insert(args.end(), {"--lazy", flags.lazy, "--rank-cache", std::to_string(flags.rank_cache_mb)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // As system(3) does: Ctrl-C reaches the run under xvfb-run (same process group), which ends, and this
  // process then cleans up.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t child = ::fork();
  if (child == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::setenv("MESHSCOPE_IN_XVFB", "1", 1);
    ::execvp("xvfb-run", argv.data());
    std::fprintf(stderr, "meshscope view: could not run xvfb-run: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  pid_t waited = -1;
  if (child > 0) {
    do {
      waited = ::waitpid(child, &status, 0);
    } while (waited < 0 && errno == EINTR);
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  if (child < 0 || waited != child) throw Error("could not run xvfb-run");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_view(const ViewFlags& flags) {
  const gui::WindowOptions o = window_options(flags);
  for (const auto& profile : o.profiles) {
    if (!std::filesystem::exists(profile)) throw Error(profile + ": no such file or directory");
  }
  for (const auto& profile : o.baseline) {
    if (!std::filesystem::exists(profile))
      throw Error("--baseline " + profile + ": no such file or directory");
  }
  if (!gui::has_display()) {
    const char* inside = std::getenv("MESHSCOPE_IN_XVFB");
    if (!o.screenshot.empty() && !(inside && *inside) && on_path("xvfb-run")) return run_under_xvfb(o, flags);
    throw Error(
        "no display (DISPLAY and WAYLAND_DISPLAY are unset): run on a desktop, or render a screenshot with "
        "`xvfb-run -a -s \"-screen 0 1920x1080x24\" meshscope view PROFILE --screenshot out.png`");
  }
  const int status = gui::run_window(o);
  if (status == 4) throw Error("could not open an OpenGL 3.3 window on this display");
  return status;
}

int gui_default_job() {
  if (!gui::has_display()) {
    std::printf(
        "meshscope: no display (DISPLAY/WAYLAND_DISPLAY unset), so the desktop view is not opened; "
        "running the command-line sample instead.\n");
    return run_text_sample_job();
  }
  gui::WindowOptions o;
  o.panel = gui::Panel::kExplorer;
  o.panel_set = true;
  if (std::filesystem::exists(bundled_sample_path())) o.profiles = {bundled_sample_path()};
  const int status = gui::run_window(o);
  if (status == 4) {
    std::printf(
        "meshscope: could not open an OpenGL 3.3 window, so running the command-line sample instead.\n");
    return run_text_sample_job();
  }
  return status;
}

void setup(CLI::App& root) {
  auto flags = std::make_shared<ViewFlags>();
  CLI::App* cmd = root.add_subcommand(
      "view", "open the desktop front end (timeline, summary, roofline, explorer, planner) on PROFILE");
  cmd->add_option(
      "PROFILE", flags->profiles,
      "a trace (Kineto .json/.json.gz, Nsight Systems .sqlite), a directory of traces, a .msdb, or "
      "several trace files of one job");
  cmd->add_option(
         "--baseline", flags->baseline,
         "a second profile (or traces of one job) to compare with: the Summary shows both side by side "
         "(as `meshscope diff BASELINE PROFILE`), the timeline can stack its rows under each rank")
      ->allow_extra_args(false);
  cmd->add_flag("--stack-baseline", flags->stack_baseline,
                "with --baseline: start with the baseline's rows under each rank of the timeline");
  cmd->add_option(
      "--whatif", flags->whatif,
      "replay the profile with these edits, as `whatif` takes them (\"gemm=0.5 comm=2 fix-straggler "
      "--tp 4\"; \"replay\": none) and stack the replay's rows under each rank (docs/WHATIF.md)");
  cmd->add_flag("--critical-path", flags->critical_path,
                "start with the timeline's critical path overlay on (select a step to see one step's path)");
  cmd->add_option("--screenshot", flags->screenshot, "render real frames headless, write this PNG and exit");
  cmd->add_flag("--interactive", flags->interactive,
                "with --screenshot: open the window as usual and write the PNG each time F12 is pressed");
  cmd->add_option("--scale", flags->scale, "HiDPI scale of text and sizes, 1 to 4 (default: the monitor's)");
  cmd->add_option(
      "--screenshot-text", flags->screenshot_text,
      "with --screenshot: also write the text the frame's widgets rendered (labels, table cells)");
  cmd->add_option("--panel", flags->panel,
                  "timeline|summary|roofline|explorer|planner|overview|query (the panel shown first)");
  cmd->add_option("--size", flags->size, "window size WIDTHxHEIGHT (default 1600x900)");
  cmd->add_option("--range", flags->range,
                  "timeline window START_MS:END_MS from the profile start (default: all)");
  cmd->add_option("--lazy", flags->lazy,
                  "auto|always|never: load a large job's events rank by rank as the timeline shows them "
                  "(auto: profiles with summaries and 4 million events or more)");
  cmd->add_option("--rank-cache", flags->rank_cache_mb,
                  "with lazy ranks: megabytes the loaded ranks may hold before those not shown are evicted "
                  "(default 512)");
  cmd->callback([flags] { exit_code() = run_view(*flags); });

  // `meshscope PROFILE`: a bare existing path as the only argument opens the view on it.
  auto bare = std::make_shared<std::string>();
  root.add_option("profile", *bare, "open PROFILE in the desktop view (same as `meshscope view PROFILE`)")
      ->check(CLI::ExistingPath);
  root.callback([bare, root_ptr = &root] {
    if (bare->empty() || !root_ptr->get_subcommands().empty()) return;
    ViewFlags f;
    f.profiles = {*bare};
    exit_code() = run_view(f);
  });
}

const bool registered = register_command({"view", 90, setup});
const bool default_registered = register_default_job(10, gui_default_job);

}  // namespace
}  // namespace meshscope::app
