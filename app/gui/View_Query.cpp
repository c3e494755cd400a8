// View_Query.cpp: the Query panel — read-only SQL over the open profile (app/gui/query.hpp), as Perfetto's
// query page: a statement to edit or one of the saved ones to start from, run with Ctrl+Enter on a worker
// thread, its rows in a clipped table, copied as tab-separated text or exported as CSV.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string_view>

#include "app/gui/View.hpp"
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

void View::run_query(const std::string& sql) {
  if (!loaded_ || qy_.job.valid()) return;
  qy_.text = sql;
  qy_.ran = sql;
  qy_.message.clear();
  qy_.job = std::async(std::launch::async, gui::run_query, loaded_->msdb, sql, kQueryMaxRows);
}

void View::query_poll() {
  using namespace std::chrono_literals;
  if (qy_.job.valid() && qy_.job.wait_for(0s) == std::future_status::ready) {
    qy_.result = qy_.job.get();
    qy_.has_result = true;
  }
}

void View::draw_query() {
  query_poll();
  if (!loaded_) {
    ImGui::TextDisabled(
        "Open a profile to query it (File > Open): every table of docs/PROFILE.md, read-only.");
    return;
  }
  ImGui::TextDisabled("QUERY %s (SQLite, read-only: no views, no writes, work bounded by the file's size)",
                      loaded_->source.filename().c_str());
  ImGui::SetNextItemWidth(px(320));
  if (ImGui::BeginCombo("##saved", "Start from a saved query")) {
    for (const SavedQuery& q : saved_queries()) {
      if (ImGui::Selectable(q.name)) qy_.text = q.sql;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  const bool running = qy_.job.valid();
  bool run = ImGui::Button(running ? "Running..." : "Run (Ctrl+Enter)") && !running;
  const float editor_h = std::max(px(90), ImGui::GetTextLineHeight() * 7);
  ImGui::InputTextMultiline("##sql", qy_.text.data(), qy_.text.capacity() + 1, ImVec2(-1, editor_h),
                            ImGuiInputTextFlags_CallbackResize | ImGuiInputTextFlags_AllowTabInput,
                            text_callback, &qy_.text);
  if (ImGui::IsItemFocused() && ImGui::GetIO().KeyCtrl &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false))
    run = !running;
  if (run) run_query(std::string(qy_.text.c_str()));

  if (running) {
    ImGui::TextColored(to_vec4(kColSelect), "%s running...", spinner());
    return;
  }
  if (!qy_.has_result) {
    ImGui::TextDisabled("Ctrl+Enter runs the statement; its rows appear here.");
    return;
  }
  const QueryResult& r = qy_.result;
  if (!r.error.empty()) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", r.error.c_str());
    return;
  }
  char t[32];
  ImGui::Text("%zu row(s) in %s", r.rows_seen, duration_text(t, sizeof t, r.seconds * 1e9));
  if (std::string_view(qy_.text.c_str()) != qy_.ran) {
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
    qy_.message = "copied " + std::to_string(r.rows.size()) + " row(s) as tab-separated text";
    qy_.message_failed = false;
  }
  ImGui::SameLine();
  if (qy_.export_path.empty()) {
    const auto& msdb = loaded_->source;
    qy_.export_path = (msdb.parent_path() / (msdb.stem().string() + "-query.csv")).string();
  }
  if (ImGui::SmallButton("Export CSV to")) {
    try {
      write_output_file(qy_.export_path, to_csv(r), {loaded_->msdb, loaded_->source});
      qy_.message = "wrote " + qy_.export_path;
      qy_.message_failed = false;
    } catch (const std::exception& e) {
      qy_.message = e.what();
      qy_.message_failed = true;
    }
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  char path[1024];
  std::snprintf(path, sizeof path, "%s", qy_.export_path.c_str());
  if (ImGui::InputText("##csv", path, sizeof path)) qy_.export_path = path;
  if (!qy_.message.empty())
    ImGui::TextColored(to_vec4(qy_.message_failed ? kColExposed : kColTextDim), "%s", qy_.message.c_str());

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
