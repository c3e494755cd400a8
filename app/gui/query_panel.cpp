#include "app/gui/query_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string_view>

#include "app/gui/gui_util.hpp"
#include "profiler/output_file.hpp"

namespace meshscope::gui {

namespace {

// ImGui 1.86 tables hold at most 64 columns.
constexpr int kMaxShownColumns = 64;

int text_callback(ImGuiInputTextCallbackData* data) {
  auto* text = static_cast<std::string*>(data->UserData);
  if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
    text->resize(static_cast<std::size_t>(data->BufTextLen));
    data->Buf = text->data();
  }
  return 0;
}

}  // namespace

void QueryPanel::run(const std::filesystem::path& msdb, const std::string& sql) {
  if (msdb.empty() || state_.job.valid()) return;
  state_.text = sql;
  state_.ran = sql;
  state_.message.clear();
  state_.job = std::async(std::launch::async, meshscope::run_query, msdb, sql, kQueryMaxRows);
}

void QueryPanel::poll() {
  using namespace std::chrono_literals;
  if (state_.job.valid() && state_.job.wait_for(0s) == std::future_status::ready) {
    state_.result = state_.job.get();
    state_.has_result = true;
  }
}

void QueryPanel::draw(const Files& open) {
  poll();
  if (open.msdb.empty()) {
    ImGui::TextDisabled(
        "Open a profile to query it (File > Open): every table of docs/PROFILE.md, read-only.");
    return;
  }
  ImGui::TextDisabled("QUERY %s (SQLite, read-only: no views, no writes, work bounded by the file's size)",
                      open.source.filename().c_str());
  ImGui::SetNextItemWidth(px(320));
  if (ImGui::BeginCombo("##saved", "Start from a saved query")) {
    for (const SavedQuery& q : saved_queries()) {
      if (ImGui::Selectable(q.name)) state_.text = q.sql;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  const bool running = state_.job.valid();
  bool run = ImGui::Button(running ? "Running..." : "Run (Ctrl+Enter)") && !running;
  const float editor_h = std::max(px(90), ImGui::GetTextLineHeight() * 7);
  ImGui::InputTextMultiline("##sql", state_.text.data(), state_.text.capacity() + 1, ImVec2(-1, editor_h),
                            ImGuiInputTextFlags_CallbackResize | ImGuiInputTextFlags_AllowTabInput,
                            text_callback, &state_.text);
  if (ImGui::IsItemFocused() && ImGui::GetIO().KeyCtrl &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false))
    run = !running;
  if (run) this->run(open.msdb, std::string(state_.text.c_str()));

  if (running) {
    ImGui::TextColored(to_vec4(kColSelect), "%s running...", spinner());
    return;
  }
  if (!state_.has_result) {
    ImGui::TextDisabled("Ctrl+Enter runs the statement; its rows appear here.");
    return;
  }
  draw_result(open);
}

// The last result: its count and notes, copy and export, and its rows in a clipped table.
void QueryPanel::draw_result(const Files& open) {
  const QueryResult& r = state_.result;
  if (!r.error.empty()) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", r.error.c_str());
    return;
  }
  char t[32];
  ImGui::Text("%zu row(s) in %s", r.rows_seen, duration_text(t, sizeof t, r.seconds * 1e9));
  if (std::string_view(state_.text.c_str()) != state_.ran) {
    ImGui::SameLine();
    ImGui::TextDisabled("(of the statement before your edits: Ctrl+Enter runs them)");
  }
  if (r.truncated) {
    ImGui::SameLine();
    ImGui::TextColored(to_vec4(kColExposed), "(the first %zu kept: add a LIMIT or aggregate)", r.rows.size());
  }
  if (static_cast<int>(r.columns.size()) > kMaxShownColumns) {
    ImGui::SameLine();
    ImGui::TextColored(to_vec4(kColExposed), "(%d of %zu columns shown; copy or export has all)",
                       kMaxShownColumns, r.columns.size());
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy (TSV)")) {
    ImGui::SetClipboardText(to_tsv(r).c_str());
    state_.message = "copied " + std::to_string(r.rows.size()) + " row(s) as tab-separated text";
    state_.message_failed = false;
  }
  ImGui::SameLine();
  if (state_.export_path.empty()) {
    state_.export_path = (open.source.parent_path() / (open.source.stem().string() + "-query.csv")).string();
  }
  if (ImGui::SmallButton("Export CSV to")) {
    try {
      write_output_file(state_.export_path, to_csv(r), {open.msdb, open.source});
      state_.message = "wrote " + state_.export_path;
      state_.message_failed = false;
    } catch (const std::exception& e) {
      state_.message = e.what();
      state_.message_failed = true;
    }
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  char path[1024];
  std::snprintf(path, sizeof path, "%s", state_.export_path.c_str());
  if (ImGui::InputText("##csv", path, sizeof path)) state_.export_path = path;
  if (!state_.message.empty())
    ImGui::TextColored(to_vec4(state_.message_failed ? kColExposed : kColTextDim), "%s",
                       state_.message.c_str());

  const int columns = std::min<int>(static_cast<int>(r.columns.size()), kMaxShownColumns);
  if (columns == 0) return;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##rows", columns, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (int c = 0; c < columns; ++c) ImGui::TableSetupColumn(r.columns[static_cast<std::size_t>(c)].c_str());
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(r.rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& row = r.rows[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      for (int c = 0; c < columns; ++c) {
        ImGui::TableNextColumn();
        const std::string& v = row[static_cast<std::size_t>(c)];
        // A long value is cut to 200 characters in the cell (copy and export keep it whole).
        if (v.size() > 200) {
          ImGui::TextUnformatted(v.data(), v.data() + 200);
          ImGui::SameLine(0, 0);
          ImGui::TextDisabled("...");
        } else {
          ImGui::TextUnformatted(v.c_str());
        }
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace meshscope::gui
