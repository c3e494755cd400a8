// View.cpp: opening profiles on a background thread (loaded_profile.cpp does the work), the frame (menu,
// status line, panel tabs), recent files and the theme.
//
// [SECTION] View: construction, frame, menu, status line, open popup, recent files
// [SECTION] Theme
#include "app/gui/View.hpp"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/presets.hpp"
#include "app/gui/explorer_panel.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "app/gui/overview_panel.hpp"
#include "app/gui/planner_panel.hpp"
#include "app/gui/query_panel.hpp"
#include "app/gui/roofline_panel.hpp"
#include "app/gui/summary_panel.hpp"
#include "app/gui/timeline_details.hpp"
#include "app/gui/timeline_panel.hpp"
#include "profiler/error.hpp"
#include "profiler/text_format.hpp"

namespace meshscope::gui {

const char* to_string(Panel panel) {
  switch (panel) {
    case Panel::kTimeline:
      return "Timeline";
    case Panel::kSummary:
      return "Summary";
    case Panel::kRoofline:
      return "Roofline";
    case Panel::kExplorer:
      return "Explorer";
    case Panel::kPlanner:
      return "Planner";
    case Panel::kOverview:
      return "Overview";
    case Panel::kQuery:
      return "Query";
  }
  return "?";
}

bool parse_panel(std::string_view name, Panel& panel) {
  for (int i = 0; i < kPanelCount; ++i) {
    const auto p = static_cast<Panel>(i);
    const std::string_view label = to_string(p);
    if (label.size() == name.size() &&
        std::equal(label.begin(), label.end(), name.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      panel = p;
      return true;
    }
  }
  return false;
}

namespace {

std::filesystem::path config_file() {
  const char* config_home = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = config_home && *config_home ? std::filesystem::path(config_home)
                              : home && *home             ? std::filesystem::path(home) / ".config"
                                                          : std::filesystem::temp_directory_path();
  return dir / "meshscope" / "recent.txt";
}

}  // namespace

// [SECTION] View
// ---------------------------------------------------------------------------------------------

View::View(ViewOptions options)
    : options_(options),
      timeline_(std::make_unique<TimelinePanel>(
          TimelinePanel::Host{.loaded = &loaded_,
                              .lazy = &lazy_,
                              .baseline = &bl_.loaded,
                              .baseline_stacked = &bl_.stacked,
                              .set_baseline_stacked = [this](bool stacked) { set_baseline_stacked(stacked); },
                              .whatif_button = [this] { whatif_button(); }})),
      explorer_(std::make_unique<ExplorerPanel>(
          ExplorerPanel::Host{.loaded = &loaded_,
                              .replay_graph = [this]() -> measure::ReplayGraph& { return replay_graph(); },
                              .saved =
                                  [this](const compare::Statement& statement) {
                                    saved_statement_ = statement;
                                    restate_loaded();
                                    explorer_->open_profile();
                                  }})),
      roofline_(std::make_unique<RooflinePanel>()),
      query_(std::make_unique<QueryPanel>()),
      summary_(std::make_unique<SummaryPanel>()),
      overview_(std::make_unique<OverviewPanel>()),
      planner_(std::make_unique<PlannerPanel>()) {
  panel_ = options_.panel_set ? options_.panel : Panel::kExplorer;
  if (options_.remember_recent) load_recent();
  if (const char* state = std::getenv("MESHSCOPE_STATE_FILE"); state && *state) state_file_ = state;
  explorer_->init();
}

View::~View() {
  if (loader_.joinable()) loader_.join();
}

// The timeline, as tests, scripts and the benchmark read and set it.
const measure::RangeTotals* View::range_totals() const {
  return timeline_->details().range_totals();
}
void View::set_time_range(TimeNs start, TimeNs end) {
  timeline_->set_time_range(start, end);
}
TimeNs View::time_start() const {
  return timeline_->state().view.start();
}
TimeNs View::time_end() const {
  return timeline_->state().view.end();
}
void View::set_all_ranks_open(bool open) {
  timeline_->set_all_ranks_open(open);
}
void View::set_all_cpu_open(bool open) {
  auto& cpu_open = timeline_->state().cpu_open;
  cpu_open.assign(cpu_open.size(), open ? 1 : 0);
}
std::size_t View::last_frame_items() const {
  return timeline_->state().frame_items;
}
std::size_t View::last_frame_events() const {
  return timeline_->state().frame_events;
}
const EventRef& View::selected_event() const {
  return timeline_->state().selected;
}
void View::select_event(const EventRef& event) {
  timeline_->select(event, false);
}
bool View::has_range() const {
  return timeline_->state().has_selection;
}
void View::search(std::string_view text) {
  timeline_->search(text);
}
void View::search_next(int delta) {
  timeline_->jump_to_match(delta);
}
int View::search_matches() const {
  return static_cast<int>(timeline_->state().matches.size());
}
void View::set_row_pinned(std::uint32_t item, bool pinned) {
  auto& pins = timeline_->state().pinned;
  if (item < pins.size()) pins[item] = pinned ? 1 : 0;
}
int View::search_cursor() const {
  return timeline_->state().match_cursor;
}
void View::set_critical_path_shown(bool shown) {
  timeline_->state().critical = shown;
}
const std::vector<EventRef>& View::critical_path_events() const {
  return timeline_->state().critical_events;
}
const std::vector<std::pair<std::int32_t, std::uint32_t>>& View::critical_path_baseline_events() const {
  return timeline_->state().critical_baseline;
}

void View::run_query(const std::string& sql) {
  if (loaded_) query_->run(loaded_->msdb, sql);
}

bool View::query_running() const {
  return query_->running();
}

const QueryResult* View::query_result() const {
  return query_->result();
}

void View::open(const std::vector<std::filesystem::path>& paths) {
  if (loading_.load() || paths.empty()) return;  // one load at a time; the menu is disabled meanwhile
  if (loader_.joinable()) loader_.join();
  loading_ = true;
  progress_ = 0.0;
  stage_ = "starting";
  files_done_ = files_total_ = 0;
  load_started_ = std::chrono::steady_clock::now();
  loading_paths_ = paths;
  load_error_.clear();
  loader_ = std::jthread([this, paths] {
    std::unique_ptr<LoadedProfile> result;
    std::string error;
    try {
      result = load_profile(
          paths,
          [this](double f, const char* stage) {
            progress_ = f;
            stage_ = stage;
          },
          [this](std::size_t done, std::size_t total) {
            files_total_ = total;
            files_done_ = done;
          },
          [this](std::unique_ptr<LoadedProfile> early) {
            std::lock_guard lock(loader_mutex_);
            preview_ = std::move(early);
          },
          options_.open);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(loader_mutex_);
    pending_ = std::move(result);
    pending_error_ = std::move(error);
    loading_ = false;
  });
}

void View::set_profile(std::unique_ptr<LoadedProfile> loaded) {
  lazy_.reset();  // its worker reads the profile it was made for
  saved_statement_.reset();
  explorer_->forget_save();
  loaded_ = std::move(loaded);
  if (loaded_ && loaded_->lazy && loaded_->lazy->reader)
    lazy_ = std::make_unique<LazyRanks>(loaded_, loaded_->lazy->budget);
  on_profile_installed();
}

bool View::lazy_loading() const {
  return lazy_ && lazy_->pending() > 0;
}

void View::lazy_poll() {
  if (!lazy_) return;
  if (auto generation = lazy_->take()) install_generation(std::move(generation));
}

void View::install_generation(std::unique_ptr<LoadedProfile> generation) {
  const TimelinePanel::RowsKept kept = timeline_->rows_kept();
  loaded_ = std::move(generation);
  restate_loaded();  // a generation is made from the first load, before any statement saved since
  timeline_->generation_installed(kept);
}

void View::poll_loader() {
  if (loading_.load()) {
    std::unique_ptr<LoadedProfile> early;
    {
      std::lock_guard lock(loader_mutex_);
      early = std::move(preview_);
    }
    if (early) {
      set_profile(std::move(early));
      // The first frame shows the whole job: the Overview, unless a panel was asked for.
      if (!options_.panel_set) {
        select_panel(Panel::kOverview);
        preview_chose_panel_ = true;
      }
    }
    return;
  }
  std::unique_ptr<LoadedProfile> ready;
  {
    std::lock_guard lock(loader_mutex_);
    preview_.reset();  // a preview the frame never took
    if (!pending_ && pending_error_.empty()) return;
    ready = std::move(pending_);
    if (!pending_error_.empty()) load_error_ = std::move(pending_error_);
    pending_error_.clear();
  }
  if (ready) {
    if (options_.remember_recent) add_recent(ready->source);
    set_profile(std::move(ready));
    // The Overview the preview chose gives way to the Timeline, as any profile opens, unless the user went
    // elsewhere meanwhile.
    if (preview_chose_panel_ && panel_ == Panel::kOverview) select_panel(Panel::kTimeline);
    preview_chose_panel_ = false;
  } else if (loaded_ && !loaded_->events) {
    loaded_.reset();  // the load failed after its preview: nothing stays open
    on_profile_installed();
  }
}

void View::on_profile_installed() {
  timeline_->open_profile();
  summary_->prepare(loaded_.get());
  overview_->prepare(loaded_.get());
  if (!options_.panel_set && panel_ == Panel::kExplorer) select_panel(Panel::kTimeline);
  // The Explorer starts from what the profile ran (its inferred model, hardware and layout).
  if (loaded_ && loaded_->events) explorer_->open_profile();
}

void View::show_on_timeline(const ShowOnTimeline& show) {
  timeline_->show(show);
  select_panel(Panel::kTimeline);
}

void View::select_panel(Panel panel) {
  panel_ = panel;
  panel_request_ = true;
}

void View::draw() {
  poll_loader();
  lazy_poll();
  baseline_poll();
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::Begin("meshscope", nullptr, flags);
  ImGui::PopStyleVar();
  draw_menu();
  draw_status();

  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && !io.WantTextInput) {
    for (int i = 0; i < kPanelCount; ++i) {
      if (ImGui::IsKeyPressed('1' + i, false)) select_panel(static_cast<Panel>(i));
    }
    if (ImGui::IsKeyPressed('O', false)) {
      files_.as_baseline = false;
      open_popup_ = true;
    }
    if (ImGui::IsKeyPressed('B', false) && !baseline_loading()) {
      files_.as_baseline = true;
      open_popup_ = true;
    }
  }

  if (ImGui::BeginTabBar("##panels", ImGuiTabBarFlags_None)) {
    // A panel chosen while a tab draws (a click in the Overview opens the Timeline, drawn before it) is
    // requested again next frame rather than lost.
    const bool request = panel_request_;
    panel_request_ = false;
    for (int i = 0; i < kPanelCount; ++i) {
      const auto p = static_cast<Panel>(i);
      const ImGuiTabItemFlags tab_flags =
          request && panel_ == p ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
      if (ImGui::BeginTabItem(to_string(p), nullptr, tab_flags)) {
        if (!request && !panel_request_) panel_ = p;
        if (loaded_ && !loaded_->events && p != Panel::kOverview && p != Panel::kPlanner) {
          draw_waiting_for_events();
          ImGui::EndTabItem();
          continue;
        }
        switch (p) {
          case Panel::kTimeline:
            timeline_->draw(loading());
            break;
          case Panel::kSummary:
            draw_summary();
            break;
          case Panel::kRoofline:
            draw_roofline();
            break;
          case Panel::kExplorer:
            explorer_->draw();
            break;
          case Panel::kPlanner:
            draw_planner();
            break;
          case Panel::kOverview:
            if (auto clicked = overview_->draw(loaded_.get(), loading())) show_on_timeline(*clicked);
            break;
          case Panel::kQuery:
            query_->draw(loaded_ ? QueryPanel::Files{loaded_->msdb, loaded_->source} : QueryPanel::Files{});
            break;
        }
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
  // Esc closes an open combo box or menu, as keyboard navigation would (off here: the arrows drive the
  // timeline). After the panels, whose own Esc (clear the selection) gave way to the open popup this frame.
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false) &&
      ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
    ImGui::ClosePopupsExceptModals();
  draw_open_popup();
  ImGui::End();
  ++frame_;
  if (!state_file_.empty()) write_state();
}

void View::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O", false, !loading())) {
      files_.as_baseline = false;
      open_popup_ = true;
    }
    if (ImGui::BeginMenu("Open recent", !recent_.empty() && !loading())) {
      for (const auto& path : recent_) {
        if (ImGui::MenuItem(path.c_str())) open(path);
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Open baseline...", "Ctrl+B", false, !baseline_loading())) {
      files_.as_baseline = true;
      open_popup_ = true;
    }
    if (ImGui::MenuItem("Close baseline", nullptr, false, bl_.loaded != nullptr)) close_baseline();
    if (ImGui::MenuItem("Open bundled sample", nullptr, false, !loading())) {
      const char* env = std::getenv("MESHSCOPE_SAMPLE");
      open(env && *env ? std::string(env) : (model::assets_dir() / "sample" / "sample_job").string());
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < kPanelCount; ++i) {
      char shortcut[16];
      std::snprintf(shortcut, sizeof shortcut, "Ctrl+%d", i + 1);
      if (ImGui::MenuItem(to_string(static_cast<Panel>(i)), shortcut, panel_ == static_cast<Panel>(i))) {
        select_panel(static_cast<Panel>(i));
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Expand all ranks", nullptr, false, loaded_ != nullptr)) set_all_ranks_open(true);
    if (ImGui::MenuItem("Collapse all ranks", nullptr, false, loaded_ != nullptr)) set_all_ranks_open(false);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    for (const char* line :
         {"Timeline: wheel = zoom at the cursor, Shift+wheel = scroll rows, left drag = pan,",
          "drag on the time axis (or right drag, Shift+left drag) = select a range: its totals show below;",
          "Z zooms to the range, B bookmarks it. Click an event: its details, launch (CPU op -> API call ->",
          "kernel, drawn as arrows) and collective peers below; Esc clears.",
          "W/S or Up/Down zoom, A/D or Left/Right pan, F fit, Ctrl+F search (Enter / Shift+Enter = next /",
          "previous match, centred at the current zoom). Right-click a row label: pin, move, collapse.",
          "Explorer: sliders step through valid values; Ctrl+click a slider to type a value.",
          "Overview (Ctrl+6): ranks x time; click a cell to open that rank at that time on the timeline.",
          "Query (Ctrl+7): read-only SQL over the profile; Ctrl+Enter runs it; copy or export the rows as "
          "CSV.",
          "Drop traces (Kineto .json/.json.gz, Nsight Systems .sqlite) or a .msdb on the window to open "
          "them."})
      ImGui::TextUnformatted(line);
    ImGui::EndMenu();
  }
  if (ImGui::GetIO().KeyCtrl && ImGui::IsKeyPressed('Q', false)) quit_ = true;
  ImGui::EndMenuBar();
}

// A panel that needs the events, while only the preview (description and summaries) is open.
void View::draw_waiting_for_events() {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_started_).count();
  ImGui::TextDisabled(
      "Loading the events of %zu rank%s (%s so far): this panel opens when they are in. The "
      "Overview shows the whole job from the profile's summaries meanwhile.",
      loaded_->summary->ranks.size(), loaded_->summary->ranks.size() == 1 ? "" : "s",
      seconds_text(elapsed).c_str());
  if (ImGui::Button("Overview")) select_panel(Panel::kOverview);
}

void View::draw_status() {
  if (loading()) {
    char overlay[256];
    std::string names = loading_paths_.front().filename().string();
    if (loading_paths_.size() > 1) names += " and " + std::to_string(loading_paths_.size() - 1) + " more";
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_started_).count();
    if (files_total_.load() > 1 && std::string_view(stage_.load()) == "importing") {
      // Many trace files: how many are done, and the time left.
      std::snprintf(overlay, sizeof overlay, "importing %s: %s", names.c_str(),
                    import_progress_text(files_done_.load(), files_total_.load(),
                                         progress_.load() / kImportShare, elapsed)
                        .c_str());
    } else {
      std::snprintf(overlay, sizeof overlay, "%s %s  %.0f%%", stage_.load(), names.c_str(),
                    100.0 * progress_.load());
    }
    ImGui::ProgressBar(static_cast<float>(progress_.load()), ImVec2(-1, 0), overlay);
  } else if (loaded_) {
    const auto& p = *loaded_->profile;
    const auto& c = loaded_->lazy ? loaded_->lazy->counts : p.counts();

    // Steps as the analysis found them (ProfilerStep ranges, else NVTX step ranges), as `info` counts them.
    std::size_t steps = 0;
    for (const auto& r : loaded_->job().ranks) steps = std::max(steps, r.steps.size());
    ImGui::TextDisabled("Profile");
    ImGui::SameLine();
    ImGui::TextUnformatted(loaded_->source.filename().c_str());
    ImGui::SameLine();
    char span[32];
    // In the unit its size calls for, as every duration in the GUI.
    duration_text(span, sizeof span, static_cast<double>(p.last_ns() - p.first_ns()));
    ImGui::TextDisabled(
        "| %zu rank%s (world %lld) | %s | %lld kernels, %lld copies, %lld memsets, %lld collectives, "
        "%lld CPU ranges | %lld steps",
        p.ranks().size(), p.ranks().size() == 1 ? "" : "s", static_cast<long long>(p.world_size()), span,
        static_cast<long long>(c.kernel), static_cast<long long>(c.memcpy), static_cast<long long>(c.memset),
        static_cast<long long>(c.collective),
        static_cast<long long>(c.cpu_op + c.annotation + c.python_function + c.nvtx + c.step +
                               c.gpu_annotation + c.other + c.os_runtime),
        static_cast<long long>(steps));
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s\nimport %.2f s, load %.2f s, analysis %.2f s", loaded_->msdb.c_str(),
                        loaded_->import_s, loaded_->load_s, loaded_->analyze_s);
    }
    if (const auto& lazy = loaded_->lazy) {
      // Lazy ranks: how many ranks' events are in memory, and what is still being read.
      char held[32], budget[32];
      ImGui::SameLine();
      const std::size_t pending = lazy_ ? lazy_->pending() : 0;
      ImGui::TextDisabled("| events of %zu of %zu ranks loaded (%s of %s)%s", lazy->loaded_ranks,
                          p.ranks().size(), bytes_text(held, sizeof held, static_cast<double>(lazy->bytes)),
                          bytes_text(budget, sizeof budget, static_cast<double>(lazy->budget)),
                          pending ? ", loading..." : "");
      if (ImGui::IsItemHovered()) {
        const std::string error = lazy_ ? lazy_->error() : std::string();
        ImGui::SetTooltip(
            "A large job: each rank's events load when the timeline shows it (its group open, or its header\n"
            "on screen at a zoom the summary's overview is too coarse for); ranks not shown are evicted\n"
            "beyond the budget (--rank-cache). The Summary and Overview show the whole job from the\n"
            "summaries; the Explorer and Roofline measure %s.%s%s",
            lazy->sample.c_str(), error.empty() ? "" : "\nLast error: ", error.c_str());
      }
    }
  } else {
    ImGui::TextDisabled(
        "No profile open: File > Open (Ctrl+O) or drop a trace on the window. The Explorer "
        "works without one.");
  }
  if (!load_error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 100, 255));
    ImGui::TextWrapped("Could not open: %s", load_error_.c_str());
    ImGui::PopStyleColor();
  }
}

void View::load_recent() {
  std::ifstream in(config_file());
  std::string line;
  while (std::getline(in, line) && recent_.size() < 10) {
    if (!line.empty()) recent_.push_back(line);
  }
}

void View::add_recent(const std::filesystem::path& path) {
  std::error_code error;
  const std::string text = std::filesystem::absolute(path, error).lexically_normal().string();
  recent_.erase(std::remove(recent_.begin(), recent_.end(), text), recent_.end());
  recent_.insert(recent_.begin(), text);
  if (recent_.size() > 10) recent_.resize(10);
  std::filesystem::create_directories(config_file().parent_path(), error);
  std::ofstream out(config_file());
  for (const auto& r : recent_) out << r << '\n';
}

// [SECTION] Theme
// --------------------------------------------------------------------------------------------

void View::setup_style(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  // MESHSCOPE_FONT picks a TrueType file, or "builtin". Otherwise DejaVu Sans, from Debian's
  // fonts-dejavu-core (build.sh and the .deb install it). Without a TrueType font, ImGui's built-in bitmap
  // font (ProggyClean, 13 px) stays legible when drawn at an integer multiple of its size.
  const char* chosen = std::getenv("MESHSCOPE_FONT");
  const bool builtin_asked = chosen && std::string_view(chosen) == "builtin";
  std::vector<std::string> fonts;
  if (chosen && *chosen && !builtin_asked) fonts.emplace_back(chosen);
  for (const char* font : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                           "/usr/share/fonts/TTF/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"})
    fonts.emplace_back(font);
  bool loaded = false;
  for (const auto& font : fonts) {
    if (builtin_asked) break;
    std::error_code error;
    if (std::filesystem::is_regular_file(font, error) &&
        io.Fonts->AddFontFromFileTTF(font.c_str(), 15.0f * scale)) {
      loaded = true;
      break;
    }
    if (font == fonts.front() && chosen && *chosen)
      std::fprintf(stderr,
                   "meshscope view: MESHSCOPE_FONT=%s: not a TrueType font file; trying the defaults\n",
                   chosen);
  }
  if (!loaded) {
    ImFontConfig config;
    config.SizePixels = 13.0f * std::max(1.0f, std::round(scale));
    io.Fonts->AddFontDefault(&config);
    static bool said = false;
    if (!said) {
      std::fprintf(
          stderr, "meshscope view: %s; using ImGui's built-in font ProggyClean at %.0f px\n",
          builtin_asked ? "MESHSCOPE_FONT=builtin" : "no TrueType font found (install fonts-dejavu-core)",
          config.SizePixels);
      said = true;
    }
  }
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.TabRounding = 3.0f;
  style.ScrollbarRounding = 3.0f;
  style.FramePadding = ImVec2(6, 3);
  style.ItemSpacing = ImVec2(8, 5);
  style.CellPadding = ImVec2(6, 2);
  ImVec4* c = style.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  c[ImGuiCol_ChildBg] = ImVec4(0.07f, 0.08f, 0.095f, 1.0f);
  c[ImGuiCol_PopupBg] = ImVec4(0.11f, 0.12f, 0.14f, 0.98f);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.12f, 0.13f, 0.16f, 1.0f);
  c[ImGuiCol_FrameBg] = ImVec4(0.16f, 0.18f, 0.22f, 1.0f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.22f, 0.25f, 0.31f, 1.0f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.25f, 0.29f, 0.36f, 1.0f);
  c[ImGuiCol_Header] = ImVec4(0.20f, 0.25f, 0.33f, 1.0f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.26f, 0.33f, 0.45f, 1.0f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.30f, 0.38f, 0.52f, 1.0f);
  c[ImGuiCol_Tab] = ImVec4(0.14f, 0.16f, 0.20f, 1.0f);
  c[ImGuiCol_TabHovered] = ImVec4(0.28f, 0.38f, 0.55f, 1.0f);
  c[ImGuiCol_TabActive] = ImVec4(0.22f, 0.32f, 0.48f, 1.0f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.14f, 0.16f, 0.20f, 1.0f);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.03f);
  c[ImGuiCol_PlotHistogram] = ImVec4(0.30f, 0.55f, 0.96f, 1.0f);
  if (scale > 1.0f) style.ScaleAllSizes(scale);
}

}  // namespace meshscope::gui
