// The desktop window: GLFW + OpenGL 3.3 + Dear ImGui around one View (gui_main.cpp), and its headless path
// that renders real frames into an offscreen framebuffer and writes a PNG.
#pragma once

#include <string>
#include <vector>

#include "app/gui/View.hpp"

namespace meshscope::gui {

struct WindowOptions {
  std::vector<std::string> profiles;  // opened on a background thread at start (several traces: one job)
  std::vector<std::string> baseline;  // opened as the baseline (Summary comparison, stacked timeline rows)
  bool stack_baseline = false;        // the timeline starts with the baseline's rows under each rank
  bool critical_path = false;         // the timeline starts with the critical path overlay on
  std::string
      whatif;  // edits (compare::parse_whatif_line): the profile's replay becomes the baseline, stacked
  std::string screenshot;    // PNG to write after the first settled frames, then exit ("" = interactive)
  bool interactive = false;  // with a screenshot: keep the window interactive and write the PNG on each F12
  std::string screenshot_text;  // with a screenshot: the text that frame's widgets rendered, one item a line
  Panel panel = Panel::kTimeline;
  bool panel_set = false;
  int width = 1600, height = 900;
  float scale = 0;  // HiDPI scale of fonts and sizes; 0 = the monitor's content scale (1 headless)
  double range_start_ms = -1, range_end_ms = -1;  // timeline window (ms from the profile start), -1 = fit
  OpenOptions open;                               // lazy ranks (docs/GUI.md "Opening a large job")
};

// True when a window system is reachable (DISPLAY or WAYLAND_DISPLAY is set).
bool has_display();

// Runs the window until it is closed (or, with a screenshot, until the PNG is written). Returns the process
// exit status: 0, 1 when the profile could not be opened or the PNG not written, 4 when no window could be
// created (no display, no OpenGL 3.3).
int run_window(const WindowOptions& options);

}  // namespace meshscope::gui
