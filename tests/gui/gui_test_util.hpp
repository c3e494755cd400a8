// Shared helpers of the GUI tests: real shared traces imported once with `meshscope import`, and a no-window
// Dear ImGui context (the null backend of imgui's examples/example_null).
#pragma once

#include <unistd.h>

#include <imgui.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "app/gui/View.hpp"

namespace meshscope::gui::test {

inline std::filesystem::path shared_trace(const std::string& relative) {
  return std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces" / relative;
}
inline std::filesystem::path sample_job() {
  return std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "assets/sample/sample_job";
}

// Imports TRACE (a file or a directory) with the meshscope binary into the test temp dir, once per process.
// Returns "" when the import failed.
inline std::filesystem::path imported(const std::filesystem::path& trace) {
  static std::map<std::string, std::filesystem::path> cache;
  auto it = cache.find(trace.string());
  if (it != cache.end()) return it->second;
  // The process id keeps tests that ctest runs in parallel from importing over each other's file.
  const auto out = std::filesystem::path(MESHSCOPE_TEST_TMP) /
                   ("gui-" + std::to_string(std::hash<std::string>{}(trace.string())) + "-" +
                    std::to_string(::getpid()) + ".msdb");
  std::filesystem::remove(out);
  const std::string command = std::string("'") + MESHSCOPE_BINARY + "' import '" + trace.string() + "' -o '" +
                              out.string() + "' > /dev/null";
  const bool ok = std::system(command.c_str()) == 0 && std::filesystem::exists(out);
  cache[trace.string()] = ok ? out : std::filesystem::path();
  return cache[trace.string()];
}

// A job from the job generator (meshscope_gen_job ARGS --format msdb), written once per process and NAME.
// Returns "" when the generator failed.
inline std::filesystem::path generated_job(const std::string& name, const std::string& args) {
  const auto out = std::filesystem::path(MESHSCOPE_TEST_TMP) /
                   ("gui-" + name + "-" + std::to_string(::getpid()) + ".msdb");
  if (!std::filesystem::exists(out)) {
    const std::string command = std::string("'") + MESHSCOPE_GEN_JOB + "' " + args +
                                " --format msdb -q -o '" + out.string() + "' > /dev/null";
    if (std::system(command.c_str()) != 0) return {};
  }
  return out;
}

// Options for a test's View: it opens on PANEL and leaves the user's recent-files list alone.
inline ViewOptions options_for(Panel panel) {
  ViewOptions o;
  o.remember_recent = false;
  o.panel = panel;
  o.panel_set = true;
  return o;
}

// A Dear ImGui context with no window and no renderer: frames are built (layout, draw lists) and discarded.
class NullImGui {
 public:
  NullImGui(float width, float height, float scale = 1.0f) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(width, height);
    // As the OpenGL 3 renderer does: draw lists over 64k vertices are split by vertex offset.
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    View::setup_style(scale);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~NullImGui() { ImGui::DestroyContext(); }
  NullImGui(const NullImGui&) = delete;
  NullImGui& operator=(const NullImGui&) = delete;

  // One frame of VIEW; returns the number of vertices it produced.
  int frame(View& view) {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60.0f;
    ImGui::NewFrame();
    view.draw();
    ImGui::Render();
    return ImGui::GetDrawData()->TotalVtxCount;
  }
};

// The text one frame of VIEW rendered, as `view --screenshot-text` captures it (ImGui's log to a file; the
// capture ends with the View's main window, so text of later windows, tooltips, is not in it).
inline std::string frame_text(View& view) {
  const auto path =
      std::filesystem::path(MESHSCOPE_TEST_TMP) / ("gui-text-" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(path);
  ImGuiIO& io = ImGui::GetIO();
  io.DeltaTime = 1.0f / 60.0f;
  ImGui::NewFrame();
  ImGui::LogToFile(-1, path.c_str());
  view.draw();
  ImGui::LogFinish();
  ImGui::Render();
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace meshscope::gui::test
