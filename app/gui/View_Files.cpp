// View_Files.cpp: File > Open, a file browser inside the application (ImGui, no native dialog): recent
// files and places on the left; the current folder's traces and profiles on the right (Ctrl+click and
// Shift+click select several files of one job); a path field for typing. Several selected traces open as
// one job (imported together), a folder opens as the job of all its traces.
//
// [SECTION] Folder listing
// [SECTION] The browser
#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "analysis/model/presets.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"

namespace meshscope::gui {

namespace {

// Traces and profiles meshscope opens: Kineto JSON (.json, .json.gz), Nsight Systems SQLite exports
// (.sqlite), meshscope profiles (.msdb).
bool openable(const std::string& name) {
  for (const char* ext : {".json", ".json.gz", ".sqlite", ".msdb", ".pt.trace.json", ".pt.trace.json.gz"}) {
    if (name.size() >= std::strlen(ext) &&
        name.compare(name.size() - std::strlen(ext), std::string::npos, ext) == 0)
      return true;
  }
  return false;
}

}  // namespace

// [SECTION] Folder listing
// -------------------------------------------------------------------------------------------

void View::files_enter(const std::filesystem::path& dir) {
  std::error_code error;
  files_.dir = std::filesystem::weakly_canonical(dir, error);
  if (error) files_.dir = dir;
  files_list_folder();
  files_.selected.assign(files_.entries.size(), 0);
  files_.last_clicked = -1;
  std::snprintf(open_path_, sizeof open_path_, "%s", files_.dir.c_str());
}

// Lists the current folder again, keeping what was selected (by name) and the typed path: the browser does
// this each time it opens and every two seconds while open, so that files written meanwhile appear.
void View::files_refresh() {
  std::vector<std::string> chosen;
  for (std::size_t i = 0; i < files_.entries.size() && i < files_.selected.size(); ++i) {
    if (files_.selected[i]) chosen.push_back(files_.entries[i].name);
  }
  files_list_folder();
  files_.selected.assign(files_.entries.size(), 0);
  for (std::size_t i = 0; i < files_.entries.size(); ++i) {
    if (std::find(chosen.begin(), chosen.end(), files_.entries[i].name) != chosen.end())
      files_.selected[i] = 1;
  }
  files_.last_clicked = -1;
  files_.listed_at = ImGui::GetTime();
}

void View::files_list_folder() {
  std::error_code error;
  files_.entries.clear();
  files_.error.clear();
  files_.listed_at = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
  for (std::filesystem::directory_iterator it(files_.dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code e2;
    const bool directory = it->is_directory(e2);
    if (!directory && !files_.all_files && !openable(name)) continue;
    files_.entries.push_back({name, directory, directory ? 0 : it->file_size(e2)});
  }
  if (error) files_.error = files_.dir.string() + ": " + error.message();
  std::sort(files_.entries.begin(), files_.entries.end(), [](const FileEntry& a, const FileEntry& b) {
    return a.directory != b.directory ? a.directory : a.name < b.name;
  });
}

void View::files_open_selected() {
  std::vector<std::filesystem::path> paths;
  for (std::size_t i = 0; i < files_.entries.size(); ++i) {
    if (files_.selected[i]) paths.push_back(files_.dir / files_.entries[i].name);
  }
  if (paths.empty() && open_path_[0]) paths.emplace_back(open_path_);
  if (paths.empty()) return;
  if (files_.as_baseline)
    open_baseline(paths);
  else
    open(paths);
}

// The entries of the current folder: click selects, Ctrl+click adds, Shift+click extends, double-click
// enters a folder or opens a file.
void View::files_list(float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##entries", 2, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 4.0f);
  ImGui::TableSetupColumn("size", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  const ImGuiIO& io = ImGui::GetIO();
  std::filesystem::path enter;
  bool open_now = false;
  char size[32];
  for (std::size_t i = 0; i < files_.entries.size(); ++i) {
    const FileEntry& e = files_.entries[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    const std::string label = e.directory ? e.name + "/" : e.name;
    if (ImGui::Selectable(label.c_str(), files_.selected[i] != 0,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
      const int k = static_cast<int>(i);
      if (io.KeyShift && files_.last_clicked >= 0) {
        for (int j = std::min(k, files_.last_clicked); j <= std::max(k, files_.last_clicked); ++j)
          files_.selected[static_cast<std::size_t>(j)] = 1;
      } else if (io.KeyCtrl) {
        files_.selected[i] = files_.selected[i] ? 0 : 1;
      } else {
        files_.selected.assign(files_.selected.size(), 0);
        files_.selected[i] = 1;
      }
      files_.last_clicked = k;
      if (ImGui::IsMouseDoubleClicked(0)) {
        if (e.directory)
          enter = files_.dir / e.name;
        else
          open_now = true;
      }
    }
    ImGui::PopID();
    ImGui::TableNextColumn();
    if (e.directory)
      ImGui::TextDisabled("folder");
    else
      ImGui::TextDisabled("%s", bytes_text(size, sizeof size, static_cast<double>(e.bytes)));
  }
  ImGui::EndTable();
  if (!enter.empty()) files_enter(enter);
  if (open_now) {
    files_open_selected();
    ImGui::CloseCurrentPopup();
  }
}

// [SECTION] The browser
// --------------------------------------------------------------------------------------------

void View::draw_open_popup() {
  // One browser for both: the profile, or (File > Open baseline...) the baseline to compare it with.
  const char* title = files_.as_baseline ? "Open baseline###files" : "Open profile###files";
  if (open_popup_) {
    ImGui::OpenPopup(title);
    open_popup_ = false;
    if (files_.dir.empty()) {
      std::error_code error;
      files_enter(!recent_.empty() ? std::filesystem::path(recent_.front()).parent_path()
                                   : std::filesystem::current_path(error));
    } else {
      files_refresh();  // what was written into the folder since it was last shown
    }
  }
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize(ImVec2(std::min(display.x * 0.9f, px(980)), std::min(display.y * 0.85f, px(600))),
                           ImGuiCond_Appearing);
  files_.visible = ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_NoSavedSettings);
  if (!files_.visible) return;
  if (ImGui::GetTime() - files_.listed_at > 2.0) files_refresh();
  const float places_w = std::min(px(260), ImGui::GetContentRegionAvail().x * 0.3f);
  const float list_h = ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing() * 3.2f;
  ImGui::BeginChild("##places", ImVec2(places_w, list_h), true);
  ImGui::TextDisabled("PLACES");
  std::error_code error;
  const char* home = std::getenv("HOME");
  const std::pair<const char*, std::filesystem::path> places[] = {
      {"Home", home ? std::filesystem::path(home) : std::filesystem::path("/")},
      {"Working folder", std::filesystem::current_path(error)},
      {"Bundled sample", model::assets_dir() / "sample"},
      {"/", "/"}};
  for (const auto& [name, path] : places) {
    if (ImGui::Selectable(name)) files_enter(path);
  }
  ImGui::Spacing();
  ImGui::TextDisabled("RECENT");
  if (recent_.empty()) ImGui::TextDisabled("(none yet)");
  for (const auto& path : recent_) {
    ImGui::PushID(path.c_str());
    if (ImGui::Selectable("##recent", false, 0, ImVec2(0, ImGui::GetTextLineHeight()))) {
      if (files_.as_baseline)
        open_baseline({path});
      else
        open(path);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine(0, 0);
    text_ellipsis(std::filesystem::path(path).filename().string());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
    ImGui::PopID();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  if (ImGui::ArrowButton("##up", ImGuiDir_Up)) files_enter(files_.dir.parent_path());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("parent folder");
  ImGui::SameLine();
  text_ellipsis(files_.dir.string(), ImGui::GetContentRegionAvail().x - px(120));
  ImGui::SameLine();
  if (ImGui::Checkbox("all files", &files_.all_files)) files_enter(files_.dir);
  if (!files_.error.empty()) ImGui::TextColored(to_vec4(kColExposed), "%s", files_.error.c_str());
  files_list(list_h - ImGui::GetFrameHeightWithSpacing());
  ImGui::EndGroup();

  ImGui::TextDisabled("Path (a trace, a folder of traces, or a .msdb):");
  ImGui::SameLine();
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(-1);
  const bool enter =
      ImGui::InputText("##path", open_path_, sizeof open_path_, ImGuiInputTextFlags_EnterReturnsTrue);
  if (enter && std::filesystem::is_directory(open_path_, error) && files_.dir != open_path_) {
    files_enter(open_path_);
  } else if (enter) {
    files_.selected.assign(files_.selected.size(), 0);
    files_open_selected();  // the typed path (as the profile, or as the baseline)
    ImGui::CloseCurrentPopup();
  }
  const std::size_t chosen =
      static_cast<std::size_t>(std::count(files_.selected.begin(), files_.selected.end(), 1));
  char label[64];
  if (chosen > 1)
    std::snprintf(label, sizeof label, "Open %zu files as one job", chosen);
  else
    std::snprintf(label, sizeof label, chosen == 1 ? "Open" : "Open this folder");
  if (files_.as_baseline) {
    std::snprintf(label, sizeof label, "%s",
                  chosen > 1    ? "Open the files as the baseline"
                  : chosen == 1 ? "Open as baseline"
                                : "Open this folder as baseline");
  }
  if (ImGui::Button(label, ImVec2(px(200), 0))) {
    if (chosen == 0) std::snprintf(open_path_, sizeof open_path_, "%s", files_.dir.c_str());
    files_open_selected();
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel", ImVec2(px(100), 0)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    ImGui::CloseCurrentPopup();
  ImGui::SameLine();
  ImGui::TextDisabled("Ctrl+click / Shift+click: several traces of one job; double-click: open");
  ImGui::EndPopup();
}

}  // namespace meshscope::gui
