// View: the meshscope desktop front end, a shell around its panels. View.cpp (frame, menus, opening),
// View_Files.cpp (the file browser), View_Baseline.cpp (the baseline and the what-if replay) and
// View_State.cpp (the state dump) keep the shell's state here. Every panel is an object of its own, which
// owns its state: the Timeline (timeline_panel.*, with its bottom pane in timeline_details.*, its row kinds
// in timeline_items.*, their tooltips in timeline_tooltips.cpp and its view of time in
// timeline_controller.*), the Explorer, Summary, Roofline, Overview, Planner and Query (explorer_panel.*,
// summary_panel.*, roofline_panel.*, overview_panel.*, planner_panel.*, query_panel.*), held here behind
// pointers and handed what they draw from (View_Panels.cpp); a link they follow to the timeline comes back as
// a ShowOnTimeline (timeline_controller.hpp).
//
// What is computed once after a profile is opened (LoadedProfile) is in loaded_profile.hpp.
//
// [SECTION] View: the frame (draw()), called between ImGui::NewFrame() and ImGui::Render() by gui_main.cpp,
//           by the no-window test harness and by the benchmark.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analysis/compare/whatif_request.hpp"
#include "analysis/measure/critical_path.hpp"
#include "analysis/measure/diff.hpp"
#include "analysis/measure/findings.hpp"
#include "analysis/measure/launches.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
#include "analysis/measure/range_totals.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/measure/summary.hpp"
#include "analysis/model/predict.hpp"
#include "app/gui/loaded_profile.hpp"
#include "app/gui/timeline_items.hpp"
#include "app/gui/timeline_lod.hpp"
#include "job/job.hpp"
#include "profiler/profile.hpp"

struct ImDrawList;

namespace meshscope {
class JsonWriter;
struct QueryResult;
}  // namespace meshscope

namespace meshscope::gui {

enum class Panel { kTimeline, kSummary, kRoofline, kExplorer, kPlanner, kOverview, kQuery };
inline constexpr int kPanelCount = 7;
const char* to_string(Panel panel);
// "timeline", "summary", ... (case-insensitive); false when NAME is none of them.
bool parse_panel(std::string_view name, Panel& panel);

struct ViewOptions {
  bool remember_recent = true;  // read and write the recent-files list (off for tests and screenshots)
  Panel panel = Panel::kTimeline;
  bool panel_set = false;  // PANEL was chosen by the user (else: Timeline with a profile, Explorer without)
  OpenOptions open;        // how profiles load (lazy ranks)
};

class LazyRanks;
class OverviewPanel;
class ExplorerPanel;
class RooflinePanel;
struct ExplorerReplay;
struct MeasuredPipelineRow;
class SummaryPanel;
class TimelinePanel;
struct RooflineShown;
class PlannerPanel;
class QueryPanel;

class View {
 public:
  explicit View(ViewOptions options = {});
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  // Starts loading PATHS (one profile, or the traces of one job) on a background thread; the frame shows a
  // progress bar until it is ready.
  void open(const std::vector<std::filesystem::path>& paths);
  void open(const std::filesystem::path& path) { open(std::vector<std::filesystem::path>{path}); }
  // Installs an already loaded profile (tests, benchmark).
  void set_profile(std::unique_ptr<LoadedProfile> loaded);
  bool loading() const { return loading_.load(); }
  // The lazily loaded ranks of the open profile (nullptr when it loaded whole).
  const LazyRanks* lazy_ranks() const { return lazy_.get(); }
  bool lazy_loading() const;  // ranks the timeline shows are being read
  // Takes the newest generation of lazily loaded ranks, if any (draw() does it every frame; tests call it
  // after waiting for the loads).
  void lazy_poll();
  const std::string& load_error() const { return load_error_; }
  const LoadedProfile* loaded() const { return loaded_.get(); }
  // What the Summary says stands out (measure::findings of the open profile: `report`'s first section).
  const std::vector<measure::Finding>& stands_out() const;
  const std::string& summary_gpu_line() const;
  // Baseline (View_Baseline.cpp): a second profile the Summary compares with (measure::diff_summaries, the
  // baseline as A and the open profile as B) and whose ranks' rows the timeline can stack under the same
  // rank's. open_baseline() loads on a background thread; set_baseline() installs one and diffs at once.
  void open_baseline(const std::vector<std::filesystem::path>& paths);
  void set_baseline(std::unique_ptr<LoadedProfile> baseline);
  void close_baseline();
  const LoadedProfile* baseline() const { return bl_.loaded.get(); }
  const measure::Diff* baseline_diff() const;  // nullptr until the diff of the open profile is ready
  bool baseline_loading() const { return bl_.busy.load(); }
  const std::string& baseline_error() const { return bl_.error; }
  void set_baseline_stacked(bool stacked);
  // What-if (View_Baseline.cpp): the open profile replayed with the edits REQUEST asks for (`whatif`'s, read
  // from TEXT by compare::parse_whatif_line) becomes the baseline, its rows stacked under each rank, once the
  // profile's events are in. An error (a large job opened on its summaries, an edit the profile cannot take)
  // is the baseline's error.
  void request_whatif(compare::WhatifRequest request, std::string text);
  bool baseline_stacked() const { return bl_.stacked; }
  // The critical path overlay (timeline_critical_path.cpp): shown or not, and the events it outlined in the
  // last frame (each CPU range, CUDA call and GPU activity of the drawn paths' segments, once).
  void set_critical_path_shown(bool shown);
  const std::vector<EventRef>& critical_path_events() const;
  // The what-if (or baseline) activities on the baseline's own critical path that its stacked rows outlined.
  const std::vector<std::pair<std::int32_t, std::uint32_t>>& critical_path_baseline_events() const;

  // One frame of the whole UI, in a window covering the display. Call between NewFrame() and Render().
  void draw();
  void select_panel(Panel panel);
  Panel panel() const { return panel_; }
  bool quit_requested() const { return quit_; }

  // Timeline window (in profile ns); a range of 0 length means "fit the whole profile".
  void set_time_range(TimeNs start, TimeNs end);
  TimeNs time_start() const;
  TimeNs time_end() const;
  // Opens (or collapses) every rank group of the timeline.
  void set_all_ranks_open(bool open);
  // Shows (or hides) every rank's CPU threads and their CUDA API calls.
  void set_all_cpu_open(bool open);
  // Draw items the timeline produced in the last frame (for tests and the benchmark).
  std::size_t last_frame_items() const;
  std::size_t last_frame_events() const;
  // Timeline selection: the clicked event, and the selected time range (tests, benchmark).
  const EventRef& selected_event() const;
  void select_event(const EventRef& event);
  bool has_range() const;
  // The totals of the selected range once computed (nullptr while computing or with no range).
  const measure::RangeTotals* range_totals() const;
  // Runs the timeline search for TEXT and jumps to the first match (tests).
  void search(std::string_view text);
  void search_next(int delta);
  int search_matches() const;
  // Pins row ITEM (an index of the state's rows) to the top of the timeline (tests; the row menu does it).
  void set_row_pinned(std::uint32_t item, bool pinned);
  int search_cursor() const;
  // The state a test or a script reads: selection, zoom, range, search, rows, explorer layout (JSON).
  std::string state_json() const;
  // Explorer model (a preset name with shape overrides, 0 = the preset's) and layout; used for the bundled
  // sample, whose synthetic job is a 5-layer GPT of hidden 4096 on TP 2 x DP 2 (assets/sample/README.md).
  void configure_explorer(const std::string& model_name, int layers, int hidden, int heads, int seq, int gpus,
                          int tp, int global_batch);
  // Explorer layout in CLI terms (tests).
  void set_layout(int gpus, int tp, int pp, int cp = 1, int ep = 1, int etp = 0);
  // The Explorer's step: training or inference (tests; the "step" combo does it).
  void set_explorer_mode(model::Mode mode);
  // The Explorer's global batch in sequences (tests; its control does it).
  void set_global_batch(int sequences);
  // The Explorer's micro-batch in sequences (tests; its control does it).
  void set_micro_batch(int sequences);
  // The Explorer's search for the best layouts is running (its table shows a busy sign).
  // A search still running: one that finished while no one drew the Explorer (which takes its result) is not.
  bool explorer_searching() const;
  // The Query panel: SQL runs on a worker thread (as its Run button does); running while it does; its result.
  void run_query(const std::string& sql);
  bool query_running() const;
  const QueryResult* query_result() const;
  const model::Prediction* prediction() const;
  // What the Explorer opened the profile on (the inferred model, hardware and layout, or why it is not
  // comparable), and the measured step its measured column showed in the last frame (nullptr: none shown).
  const ProfileStart& explorer_start() const;
  const compare::MeasuredStep* explorer_measured_shown() const;
  // The Explorer's replay of the measured run at its layout (explorer_panel.hpp).
  const ExplorerReplay& explorer_replay_shown() const;
  // The measured pipeline's rows as the Explorer drew them last frame (explorer_panel.hpp): one per stage.
  const std::vector<MeasuredPipelineRow>& measured_pipeline_rows() const;
  // Sets the Explorer's pipeline to the measured one's shape (stages, schedule, chunks, micro-batches), so
  // that the predicted pipeline shows the same schedule (the measured view's "Predict this pipeline" button).
  void explorer_use_measured_pipeline();
  // What the Roofline drew in the last frame (tests).
  const RooflineShown& roofline_shown() const;
  const std::string& layout_error() const;

  // Applies the theme and fonts this view expects (call once after ImGui::CreateContext()); SCALE > 1 for
  // HiDPI displays scales the fonts and every size of the style.
  static void setup_style(float scale = 1.0f);

 private:
  // [SECTION] frame (View.cpp)
  void poll_loader();
  void draw_menu();
  void draw_status();
  void draw_open_popup();  // View_Files.cpp: the file browser
  void files_list(float height);
  void files_open_selected();
  void files_enter(const std::filesystem::path& dir);
  void files_refresh();
  void files_list_folder();
  void add_recent(const std::filesystem::path& path);
  void load_recent();
  void on_profile_installed();
  // A lazy profile's next generation: the same profile with other ranks' events loaded. The timeline keeps
  // its zoom, open ranks, order, pins, selection (when its rank is still loaded) and search.
  void install_generation(std::unique_ptr<LoadedProfile> generation);

  // [SECTION] windows, one file each
  void draw_summary();             // the Summary panel, handed the Explorer's hardware
  void draw_roofline();            // the Roofline panel, handed the Explorer's prediction
  void draw_planner();             // the Planner panel, handed the Explorer's prediction
  void draw_waiting_for_events();  // a panel that needs the events while the preview is open
  // Follows a panel's link to the timeline (timeline_controller.hpp) and shows the timeline.
  void show_on_timeline(const ShowOnTimeline& show);

  // Baseline (View_Baseline.cpp)
  void baseline_start(std::vector<std::filesystem::path> paths);
  void baseline_poll();

  ViewOptions options_;
  Panel panel_ = Panel::kTimeline;
  bool panel_request_ = true;  // the tab bar should switch to panel_ this frame
  bool quit_ = false;

  // Loading (shared with the range-totals worker, which may outlive a profile switch)
  std::shared_ptr<LoadedProfile> loaded_;
  std::unique_ptr<LazyRanks> lazy_;  // the rank loader of a lazily opened profile
  // What the user saved in the open profile as what it ran, this session: the generations of a lazily loaded
  // profile are made from its first load and are re-stated as they arrive.
  std::optional<compare::Statement> saved_statement_;
  // The open profile's measured model, Explorer start and roofline points as SAVED_STATEMENT_ states (a copy
  // of the LoadedProfile: workers may read the one shown).
  void restate_loaded();
  measure::ReplayGraph& replay_graph();  // the open profile's, built once and kept for what-ifs
  std::jthread loader_;
  std::mutex loader_mutex_;
  std::unique_ptr<LoadedProfile> pending_;  // handed over by the loader under loader_mutex_
  std::unique_ptr<LoadedProfile> preview_;  // the same, for the summaries-only preview
  bool preview_chose_panel_ = false;        // the preview switched to the Overview by itself
  std::string pending_error_;
  std::atomic<bool> loading_{false};
  std::atomic<double> progress_{0.0};
  std::atomic<const char*> stage_{""};
  std::atomic<std::size_t> files_done_{0}, files_total_{0};
  std::chrono::steady_clock::time_point load_started_;
  std::vector<std::filesystem::path> loading_paths_;
  std::string load_error_;
  std::vector<std::string> recent_;
  bool open_popup_ = false;
  char open_path_[1024] = {};
  // File browser
  struct FileEntry {
    std::string name;
    bool directory;
    std::uintmax_t bytes;
  };
  struct FilesState {
    std::filesystem::path dir;
    std::vector<FileEntry> entries;
    std::vector<std::uint8_t> selected;
    int last_clicked = -1;
    bool all_files = false;
    bool as_baseline = false;  // the browser opens the baseline (File > Open baseline...)
    bool visible = false;      // the browser was drawn this frame
    double listed_at = 0;      // ImGui time of the last listing (files_refresh)
    std::string error;
  } files_;
  // State dump for tests and scripts ($MESHSCOPE_STATE_FILE, written when it changes)
  void write_state();
  std::string state_file_;
  std::string state_written_;
  std::uint64_t frame_ = 0;

  // Baseline: the profile, its diff with the open one, the worker that loads and diffs
  void whatif_button();  // View_Baseline.cpp: the timeline toolbar's What-if button and editor
  compare::WhatifEdits whatif_edits(const compare::WhatifRequest& request);
  void run_whatif();  // View_Baseline.cpp: the requested replay, on the UI thread
  struct WhatifState {
    std::optional<compare::WhatifRequest> requested;
    std::string requested_text;
    char text[256] = "gemm=0.5";
    std::string error;
    // The open profile's dependency graph, built by the first what-if and simulated again by the next.
    std::unique_ptr<measure::ReplayGraph> graph;
    std::weak_ptr<LoadedProfile> graph_of;
    const Profile* graph_profile = nullptr;
  } wi_;
  struct BaselineState {
    std::shared_ptr<LoadedProfile> loaded;
    std::shared_ptr<const measure::Diff> diff;
    std::weak_ptr<LoadedProfile> diff_of;  // the open profile the diff was computed for
    std::string error;
    bool stacked = false;  // the timeline shows the baseline's rows under each rank's
    std::atomic<bool> busy{false};
    std::mutex mutex;  // guards the pending_* results the worker hands over
    bool pending = false;
    std::shared_ptr<LoadedProfile> pending_loaded;
    std::shared_ptr<const measure::Diff> pending_diff;
    std::weak_ptr<LoadedProfile> pending_of;
    std::string pending_error;
    std::vector<std::filesystem::path> paths;  // being loaded
    std::jthread worker;                       // last: joined first
  } bl_;

  std::unique_ptr<TimelinePanel> timeline_;  // the Timeline panel (timeline_panel.hpp)

  std::unique_ptr<ExplorerPanel> explorer_;  // the Explorer panel (explorer_panel.hpp)
  std::unique_ptr<RooflinePanel> roofline_;  // the Roofline panel (roofline_panel.hpp)
  std::unique_ptr<QueryPanel> query_;        // the Query panel (query_panel.hpp)

  std::unique_ptr<SummaryPanel> summary_;  // the Summary panel (summary_panel.hpp)

  std::unique_ptr<OverviewPanel> overview_;  // the Overview panel (overview_panel.hpp)

  std::unique_ptr<PlannerPanel> planner_;  // the Planner panel (planner_panel.hpp)
};

}  // namespace meshscope::gui
