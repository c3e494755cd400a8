// gui_main.cpp: the GLFW + OpenGL 3.3 loop around one View, as thin as Dear ImGui's example_glfw_opengl3,
// plus the headless screenshot path (render frames into an offscreen framebuffer until the profile is
// loaded and the layout has settled, glReadPixels, write a PNG with stb_image_write).
#define GL_GLEXT_PROTOTYPES 1
#define GLFW_INCLUDE_GLEXT 1
#include "app/gui/gui_main.hpp"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

namespace meshscope::gui {

namespace {

std::vector<std::string>& dropped_paths() {
  static std::vector<std::string> paths;
  return paths;
}

void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) dropped_paths().emplace_back(paths[i]);
}

// Key taps shorter than a frame. Dear ImGui 1.86 reads keys as held-down state (io.KeysDown, io.KeyCtrl) in
// the frame, so a press and its release that arrive in the same event poll (a quick tap, a key sent by
// xdotool or a remote desktop) would never be seen down, and a modifier released in the same poll as the
// key it modifies would not apply to it (xdotool's ctrl+o releases Ctrl first). Key events are therefore
// queued and handed to ImGui in order before each frame, stopping at the first release that follows a press
// in the same batch and at a second change of one key (a release then the next press of Enter): that event
// and what follows wait for the next frame (as ImGui 1.87's input queue trickles events).
struct KeyEvent {
  enum Kind { kKey, kChar, kMouse } kind;
  int key, scancode, action, mods;  // kChar: scancode holds the code point; kMouse: key is the button
  double x, y;                      // kMouse: where the pointer was when the button changed
};
std::deque<KeyEvent>& key_queue() {
  static std::deque<KeyEvent> queue;
  return queue;
}
double cursor_x = 0, cursor_y = 0;  // the pointer as of the last motion event processed
bool press_pos_set = false;         // a button press was handed to ImGui: the frame sees it where it was
ImVec2 press_pos;

void on_key(GLFWwindow*, int key, int scancode, int action, int mods) {
  key_queue().push_back({KeyEvent::kKey, key, scancode, action, mods, 0, 0});
}
// Characters go through the same queue, so that text typed after Ctrl+A reaches the field once Ctrl is up.
void on_char(GLFWwindow*, unsigned int c) {
  key_queue().push_back({KeyEvent::kChar, 0, static_cast<int>(c), 0, 0, 0, 0});
}
// Mouse buttons too (a Ctrl+click whose Ctrl release arrives with the click), with the pointer's position at
// the press (ImGui 1.86 polls the position, which may already be further along a drag).
void on_mouse_button(GLFWwindow*, int button, int action, int mods) {
  key_queue().push_back({KeyEvent::kMouse, button, 0, action, mods, cursor_x, cursor_y});
}
void on_cursor(GLFWwindow*, double x, double y) {
  cursor_x = x;
  cursor_y = y;
}

// Before a frame: the queued input events this frame can see, in order.
void apply_key_events(GLFWwindow* window) {
  auto& queue = key_queue();
  bool pressed = false;
  std::vector<int> changed;  // keys (and buttons, as -1 - button) whose state this batch changed
  while (!queue.empty()) {
    const KeyEvent e = queue.front();
    if (e.kind == KeyEvent::kChar) {
      ImGui_ImplGlfw_CharCallback(window, static_cast<unsigned int>(e.scancode));
    } else if (e.action != GLFW_REPEAT) {
      const int id = e.kind == KeyEvent::kMouse ? -1 - e.key : e.key;
      if ((e.action == GLFW_RELEASE && pressed) ||
          std::find(changed.begin(), changed.end(), id) != changed.end())
        break;
      pressed |= e.action == GLFW_PRESS;
      changed.push_back(id);
      if (e.kind == KeyEvent::kMouse) {
        ImGui_ImplGlfw_MouseButtonCallback(window, e.key, e.action, e.mods);
        if (e.action == GLFW_PRESS && !press_pos_set) {
          press_pos = ImVec2(static_cast<float>(e.x), static_cast<float>(e.y));
          press_pos_set = true;
        }
      } else {
        ImGui_ImplGlfw_KeyCallback(window, e.key, e.scancode, e.action, e.mods);
      }
    }
    queue.pop_front();
  }
}

bool any_key_down() {
  for (bool down : ImGui::GetIO().KeysDown) {
    if (down) return true;
  }
  return false;
}

void on_glfw_error(int code, const char* description) {
  std::fprintf(stderr, "meshscope view: GLFW error %d: %s\n", code, description);
}

// An offscreen colour target of the window's size, so screenshots do not depend on the screen.
struct Offscreen {
  GLuint fbo = 0, color = 0;
  bool create(int w, int h) {
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    return glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  }
  void destroy() {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (color) glDeleteRenderbuffers(1, &color);
    if (fbo) glDeleteFramebuffers(1, &fbo);
  }
};

bool write_png(const std::string& path, int w, int h) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's origin is bottom-left; PNG rows go top-down. Opaque alpha.
  std::vector<unsigned char> flipped(pixels.size());
  const std::size_t row = static_cast<std::size_t>(w) * 4;
  for (int y = 0; y < h; ++y) {
    const unsigned char* src = pixels.data() + static_cast<std::size_t>(h - 1 - y) * row;
    unsigned char* dst = flipped.data() + static_cast<std::size_t>(y) * row;
    for (std::size_t x = 0; x < row; x += 4) {
      dst[x] = src[x];
      dst[x + 1] = src[x + 1];
      dst[x + 2] = src[x + 2];
      dst[x + 3] = 255;
    }
  }
  return stbi_write_png(path.c_str(), w, h, 4, flipped.data(), static_cast<int>(row)) != 0;
}

}  // namespace

bool has_display() {
  const char* x = std::getenv("DISPLAY");
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (wl && *wl);
}

// The window and its OpenGL 3.3 context, with ImGui set up on it (styled at the options' scale, else the
// monitor's); nullptr when GLFW cannot make one.
GLFWwindow* open_window(const WindowOptions& options, bool headless) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) return nullptr;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  if (headless && !options.interactive) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(options.width, options.height, "meshscope", nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless && !options.interactive ? 0 : 1);
  glfwSetDropCallback(window, on_drop);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  float scale = options.scale;
  if (scale <= 0) {
    float sx = 1, sy = 1;
    if (!headless) glfwGetWindowContentScale(window, &sx, &sy);
    scale = std::clamp(std::max(sx, sy), 1.0f, 4.0f);
  }
  View::setup_style(scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  glfwSetKeyCallback(window, on_key);  // queued, then handed to ImGui's (see apply_key_events)
  glfwSetCharCallback(window, on_char);
  glfwSetMouseButtonCallback(window, on_mouse_button);
  glfwSetCursorPosCallback(window, on_cursor);
  ImGui_ImplOpenGL3_Init("#version 330");

  return window;
}

// Waits for what the next frame draws: continuously while a mouse button or key is held (held keys pan and
// zoom the timeline at a rate per second) and while key events wait for a frame; 20 a second while a profile
// loads (the progress bar moves, and the loading threads keep the cores: unthrottled, frames drawn in
// software took one of two cores and doubled the load of a 1,024-rank job).
void wait_for_frame(const View& view, bool offscreen) {
  if (ImGui::IsAnyMouseDown() || any_key_down() || !key_queue().empty())
    glfwPollEvents();
  else if (view.loading() || view.baseline_loading() || view.lazy_loading() || view.explorer_searching())
    glfwWaitEventsTimeout(0.05);
  else if (offscreen)
    glfwPollEvents();
  else
    glfwWaitEventsTimeout(0.25);
}

// The end of an offscreen run, once the profile is in and the layout has settled: the screenshot (and its
// text) written, or the load's error; the exit status.
int finish_offscreen(const View& view, const WindowOptions& options) {
  std::error_code text_error;
  if (!view.load_error().empty()) {
    std::fprintf(stderr, "meshscope view: %s\n", view.load_error().c_str());
    return 1;
  } else if (!view.baseline_error().empty()) {
    std::fprintf(stderr, "meshscope view: %s\n", view.baseline_error().c_str());
    return 1;
  } else if (!write_png(options.screenshot, options.width, options.height)) {
    std::fprintf(stderr, "meshscope view: could not write %s\n", options.screenshot.c_str());
    return 1;
  } else if (!options.screenshot_text.empty() &&
             !std::filesystem::is_regular_file(options.screenshot_text, text_error)) {
    std::fprintf(stderr, "meshscope view: could not write %s\n", options.screenshot_text.c_str());
    return 1;
  } else {
    std::printf("wrote %s (%dx%d, panel %s)\n", options.screenshot.c_str(), options.width, options.height,
                to_string(view.panel()));
  }
  return 0;
}

int run_window(const WindowOptions& options) {
  const bool headless = !options.screenshot.empty();
  GLFWwindow* window = open_window(options, headless);
  if (!window) return 4;
  int status = 0;
  {
    ViewOptions view_options;
    view_options.remember_recent = !headless;
    view_options.panel = options.panel;
    view_options.panel_set = options.panel_set;
    view_options.open = options.open;
    View view(view_options);
    if (!options.profiles.empty())
      view.open(std::vector<std::filesystem::path>(options.profiles.begin(), options.profiles.end()));
    if (!options.baseline.empty())
      view.open_baseline(
          std::vector<std::filesystem::path>(options.baseline.begin(), options.baseline.end()));
    view.set_baseline_stacked(options.stack_baseline);
    view.set_critical_path_shown(options.critical_path);
    if (!options.whatif.empty()) {
      compare::WhatifRequest request;
      std::string ignored;
      compare::parse_whatif_line(options.whatif, request, ignored);
      view.request_whatif(std::move(request), options.whatif);
    }

    Offscreen offscreen;
    if (headless && !options.interactive && !offscreen.create(options.width, options.height)) {
      std::fprintf(stderr, "meshscope view: could not create an offscreen framebuffer\n");
      status = 4;
    }
    int settled = 0;
    bool range_applied = options.range_start_ms < 0;
    int shots = 0;
    while (status == 0 && !glfwWindowShouldClose(window) && !view.quit_requested()) {
      wait_for_frame(view, headless && !options.interactive);
      apply_key_events(window);
      if (!dropped_paths().empty()) {
        // Several files dropped together are the traces of one job: imported together, then opened.
        view.open(std::vector<std::filesystem::path>(dropped_paths().begin(), dropped_paths().end()));
        dropped_paths().clear();
      }
      // Once the profile is in (a summarised profile shows its preview first, which the full one replaces).
      if (!range_applied && view.loaded() && view.loaded()->events && !view.loading()) {
        const TimeNs origin = view.loaded()->profile->first_ns();
        view.set_time_range(origin + static_cast<TimeNs>(options.range_start_ms * 1e6),
                            origin + static_cast<TimeNs>(options.range_end_ms * 1e6));
        range_applied = true;
      }
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      if (press_pos_set) {
        // The frame that sees a press sees it where it happened; the next one sees the pointer where it is.
        ImGui::GetIO().MousePos = press_pos;
        press_pos_set = false;
      }
      if (headless && !options.interactive)
        ImGui::GetIO().DisplaySize =
            ImVec2(static_cast<float>(options.width), static_cast<float>(options.height));
      ImGui::NewFrame();
      // The text widgets render, for --screenshot-text: what a test can assert on. ImGui's log capture ends
      // when the first top-level window ends (the View's main window, which holds every panel) and appends to
      // its file, so each frame starts a fresh file and the last frame's text is what remains.
      const bool capture_text = headless && !options.interactive && !options.screenshot_text.empty();
      if (capture_text) {
        std::remove(options.screenshot_text.c_str());
        ImGui::LogToFile(-1, options.screenshot_text.c_str());
      }
      view.draw();
      if (capture_text) ImGui::LogFinish();
      ImGui::Render();
      int w = options.width, h = options.height;
      if (!headless || options.interactive) glfwGetFramebufferSize(window, &w, &h);
      glViewport(0, 0, w, h);
      glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) {
        // F12: the current frame as a PNG (the --screenshot path with --interactive, else numbered files).
        const std::string out =
            headless ? options.screenshot : "meshscope-" + std::to_string(++shots) + ".png";
        if (write_png(out, w, h))
          std::printf("wrote %s (%dx%d, panel %s)\n", out.c_str(), w, h, to_string(view.panel()));
        else
          std::fprintf(stderr, "meshscope view: could not write %s\n", out.c_str());
        std::fflush(stdout);
      }
      if (headless && !options.interactive) {
        // Frames until the profile is in and the layout (tabs, tables, clippers) has settled.
        if (view.loading() || view.baseline_loading() || view.lazy_loading() || view.explorer_searching()) {
          settled = 0;  // lazily loaded ranks the first frames asked for count as loading
        } else if (++settled >= 6) {
          status = finish_offscreen(view, options);
          break;
        }
      } else {
        glfwSwapBuffers(window);
      }
    }
    offscreen.destroy();
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace meshscope::gui
