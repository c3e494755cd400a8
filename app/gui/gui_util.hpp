// Shared look of the front end: the class colours every panel uses, and text formatting of times, bytes and
// rates at the display edge (times stay int64 ns until here).
#pragma once

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "analysis/measure/classify.hpp"
#include "profiler/records.hpp"
#include "profiler/text_format.hpp"

namespace meshscope::gui {

// Activity classes (compute, communication, memory, sync) and the marks drawn over them.
inline constexpr ImU32 kColCompute = IM_COL32(76, 139, 245, 255);
inline constexpr ImU32 kColComm = IM_COL32(242, 158, 76, 255);
inline constexpr ImU32 kColMemory = IM_COL32(89, 179, 107, 255);
inline constexpr ImU32 kColSync = IM_COL32(155, 127, 209, 255);
inline constexpr ImU32 kColOverlap = IM_COL32(186, 132, 70, 255);  // communication hidden behind compute
inline constexpr ImU32 kColExposed = IM_COL32(229, 72, 77, 255);
inline constexpr ImU32 kColIdle = IM_COL32(70, 76, 88, 255);
inline constexpr ImU32 kColCpu = IM_COL32(120, 130, 150, 255);
inline constexpr ImU32 kColAnnotation = IM_COL32(94, 160, 160, 255);
inline constexpr ImU32 kColStep = IM_COL32(170, 170, 190, 255);
inline constexpr ImU32 kColSelect = IM_COL32(255, 214, 10, 255);
inline constexpr ImU32 kColText = IM_COL32(235, 238, 245, 255);
inline constexpr ImU32 kColTextDim = IM_COL32(150, 156, 170, 255);
inline constexpr ImU32 kColGrid = IM_COL32(255, 255, 255, 28);
inline constexpr ImU32 kColUtilisation = IM_COL32(180, 190, 210, 200);     // a stream's utilisation lane
inline constexpr ImU32 kColUtilisationBase = IM_COL32(255, 255, 255, 40);  // its zero line
inline constexpr ImU32 kColPredicted = IM_COL32(160, 110, 240, 255);
inline constexpr ImU32 kColMeasured = IM_COL32(250, 250, 250, 255);
inline constexpr ImU32 kColApi = IM_COL32(150, 132, 118, 255);        // CUDA API calls that launched nothing
inline constexpr ImU32 kColApiLaunch = IM_COL32(214, 126, 96, 255);   // CUDA API calls that launched GPU work
inline constexpr ImU32 kColFlow = IM_COL32(255, 214, 10, 255);        // launch flows of the selected event
inline constexpr ImU32 kColFlowHover = IM_COL32(235, 238, 245, 200);  // launch flows of the hovered event

inline ImU32 class_color(measure::ActivityClass c) {
  switch (c) {
    case measure::ActivityClass::kCompute:
      return kColCompute;
    case measure::ActivityClass::kComm:
      return kColComm;
    case measure::ActivityClass::kMemory:
      return kColMemory;
    case measure::ActivityClass::kSync:
      return kColSync;
  }
  return kColCpu;
}

inline ImU32 scale_color(ImU32 c, float f) {
  auto ch = [&](int shift) {
    const float v = static_cast<float>((c >> shift) & 0xff) * f;
    return static_cast<ImU32>(std::clamp(v, 0.0f, 255.0f)) << shift;
  };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | (c & IM_COL32_A_MASK);
}

inline ImVec4 to_vec4(ImU32 c) {
  return ImGui::ColorConvertU32ToFloat4(c);
}

// "void at::native::foo<...>(...)" -> "at::native::foo<...>(...)".
inline std::string_view short_name(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  return name;
}

// A busy sign for work on a worker thread: one of | / - \ by the time, eight steps a second.
inline const char* spinner() {
  static const char* const kFrames[] = {"|", "/", "-", "\\"};
  return kFrames[static_cast<int>(ImGui::GetTime() * 8) % 4];
}

// Seconds (model side) as text.
inline const char* seconds_text(char* buf, int size, double s) {
  return duration_text(buf, static_cast<std::size_t>(size), s * 1e9);
}

// Layout scale: the font size over the 15 px the layout was drawn for (HiDPI scale 2 gives 2), never under 1.
inline float ui_scale() {
  return std::max(1.0f, ImGui::GetFontSize() / 15.0f);
}
inline float px(float v) {
  return v * ui_scale();
}

// Dim TEXT wrapped at the window's edge: notes and explanations of any length, never cut.
inline void text_wrapped_disabled(std::string_view text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.data(), text.data() + text.size());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

// TEXT on the current line in at most WIDTH pixels (the rest of the line when WIDTH <= 0): cut with "..."
// when it does not fit, and then the whole text as a tooltip on hover (and in the ImGui log, so that text
// captures see it). For table cells and labels that must never overlap their neighbours.
inline void text_ellipsis(std::string_view text, float width = 0.0f, ImU32 color = 0) {
  if (width <= 0.0f) width = ImGui::GetContentRegionAvail().x;
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* fit = end;
  font->CalcTextSizeA(size, width, 0.0f, begin, end, &fit);
  if (color) ImGui::PushStyleColor(ImGuiCol_Text, color);
  if (fit == end) {
    ImGui::TextUnformatted(begin, end);
    if (color) ImGui::PopStyleColor();
    return;
  }
  const float dots = font->CalcTextSizeA(size, 1e9f, 0.0f, "...").x;
  font->CalcTextSizeA(size, std::max(0.0f, width - dots), 0.0f, begin, end, &fit);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddText(font, size, p, col, begin, fit);
  dl->AddText(font, size, ImVec2(p.x + font->CalcTextSizeA(size, 1e9f, 0.0f, begin, fit).x, p.y), col, "...");
  if (color) ImGui::PopStyleColor();
  ImGui::Dummy(ImVec2(width, ImGui::GetTextLineHeight()));
  ImGui::LogText("%.*s", static_cast<int>(text.size()), begin);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 50);
    ImGui::TextUnformatted(begin, end);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

// Continues the current line with an item WIDTH wide, GAP pixels after the last one (the style's item
// spacing when negative), when it fits before the window's right edge, else lets it start the next line: what
// a legend or a toolbar does instead of running past the edge.
inline void same_line_if_fits(float width, float gap = -1.0f) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const float spacing = gap < 0 ? ImGui::GetStyle().ItemSpacing.x : gap;
  if (ImGui::GetItemRectMax().x + spacing + width <= right) ImGui::SameLine(0, gap);
}

// Between the items of a legend: the next one, LABEL, on this line when it fits (legend_item's width).
inline void legend_same_line(const char* label) {
  same_line_if_fits(ImGui::GetTextLineHeight() + 2 + ImGui::CalcTextSize(label).x);
}

// Legend and toolbar items drawn running past their window's right edge, counted since the caller last set
// it to 0: legends and toolbars wrap (same_line_if_fits), so the tests expect none at any window size.
inline int& items_past_edge() {
  static int count = 0;
  return count;
}

// Counts the last item when it runs past its window's right edge (items_past_edge).
inline void note_if_past_edge() {
  if (ImGui::GetItemRectMax().x > ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x + 0.5f)
    ++items_past_edge();
}

// The widths ImGui gives a button and a checkbox labelled LABEL: what same_line_if_fits needs to know before
// one is drawn.
inline float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}
inline float checkbox_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label, nullptr, true).x;
}

// A coloured square followed by a label, on the current line.
inline void legend_item(ImU32 color, const char* label) {
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h - 4, p.y + h - 2), color,
                                            2.0f);
  ImGui::Dummy(ImVec2(h - 2, h));
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted(label);
  note_if_past_edge();
}

// The first cells of a kernel table's row (the Summary's kernels, a range's kernels): the name cut to its
// column, the class in its colour, the count and the total time. KERNEL has name (a string of the profile
// whose text NAME_TEXT is), cls, count and total_ns.
template <typename Kernel>
void kernel_row_cells(std::string_view name_text, const Kernel& kernel) {
  char t[32];
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  text_ellipsis(short_name(name_text));
  ImGui::TableNextColumn();
  ImGui::TextColored(to_vec4(class_color(kernel.cls)), "%s", measure::to_string(kernel.cls));
  ImGui::TableNextColumn();
  ImGui::Text("%lld", static_cast<long long>(kernel.count));
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(kernel.total_ns)));
}

}  // namespace meshscope::gui
