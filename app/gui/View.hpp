// View: the meshscope desktop front end, a shell around its panels. View.cpp (frame, menus, opening),
// View_Timeline.cpp (with its row kinds in timeline_items.*, their tooltips in timeline_tooltips.cpp and its
// view of time in timeline_controller.*) and View_Explorer.cpp keep their state here. The Summary, Roofline,
// Overview, Planner and Query panels are objects of their own (summary_panel.*, roofline_panel.*,
// overview_panel.*, planner_panel.*, query_panel.*), held here behind pointers and handed what they draw
// from; a link they follow to the timeline comes back as a ShowOnTimeline (timeline_controller.hpp).
//
// What is computed once after a profile is opened (LoadedProfile) is in loaded_profile.hpp.
//
// [SECTION] View: the frame (draw()), called between ImGui::NewFrame() and ImGui::Render() by gui_main.cpp,
//           by the no-window test harness and by the benchmark.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
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
#include "analysis/model/planner.hpp"
#include "analysis/model/predict.hpp"
#include "analysis/model/roofline.hpp"
#include "analysis/model/search.hpp"
#include "analysis/model/timeline.hpp"
#include "app/gui/explorer_search.hpp"
#include "app/gui/explorer_steps.hpp"
#include "app/gui/loaded_profile.hpp"
#include "app/gui/measured_view.hpp"
#include "app/gui/timeline_items.hpp"
#include "app/gui/timeline_lod.hpp"
#include "job/job.hpp"
#include "profiler/profile.hpp"
#include "profiler/work_store.hpp"

struct ImDrawList;

namespace meshscope {
class JsonWriter;
}  // namespace meshscope

namespace meshscope::gui {

enum class Panel { kTimeline, kSummary, kRoofline, kExplorer, kPlanner, kOverview, kQuery };
inline constexpr int kPanelCount = 7;
const char* to_string(Panel panel);
// "timeline", "summary", ... (case-insensitive); false when NAME is none of them.
bool parse_panel(std::string_view name, Panel& panel);

// The totals of a selected time range, computed on a worker thread (View_TimelineDetails.cpp).
struct RangeJob {
  std::atomic<bool> cancel{false}, done{false};
  measure::RangeTotals result;
  std::jthread thread;  // last: joined first when the job is destroyed
};

// The Explorer's replay of the measured run at the layout chosen (explorer_replay.cpp): the layout it was run
// for, the degrees the profile ran and the chosen ones, the mean replayed step as measured and with the edit.
struct ExplorerReplay {
  model::ParallelConfig for_layout;
  int ran_tp = 0, ran_dp = 0, tp = 0, dp = 0;
  double measured_ns = 0, edited_ns = 0;
  bool done = false;
  std::string error;               // why there is no replay ("" with one)
  std::vector<std::string> notes;  // what the edit scaled (compare::retime_layout)
};

struct ViewOptions {
  bool remember_recent = true;  // read and write the recent-files list (off for tests and screenshots)
  Panel panel = Panel::kTimeline;
  bool panel_set = false;  // PANEL was chosen by the user (else: Timeline with a profile, Explorer without)
  OpenOptions open;        // how profiles load (lazy ranks)
};

class LazyRanks;
class OverviewPanel;
class RooflinePanel;
class SummaryPanel;
struct RooflineShown;
class PlannerPanel;
class QueryPanel;
struct QueryResult;

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
  void set_critical_path_shown(bool shown) { tl_.critical = shown; }
  const std::vector<EventRef>& critical_path_events() const { return tl_.critical_events; }
  // The what-if (or baseline) activities on the baseline's own critical path that its stacked rows outlined.
  const std::vector<std::pair<std::int32_t, std::uint32_t>>& critical_path_baseline_events() const {
    return tl_.critical_baseline;
  }
  // The measured pipeline's rows as the Explorer drew them last frame (pipeline_measured.cpp): one per stage.
  struct PipelineRow {
    std::int32_t stage, rank;
    std::int64_t step;
    std::int32_t blocks;     // forward and backward blocks drawn
    double bubble_fraction;  // the stage's measured bubble in that step
    float y0, y1;
  };
  const std::vector<PipelineRow>& measured_pipeline_rows() const { return pipeline_rows_; }
  // Sets the Explorer's pipeline to the measured one's shape (stages, schedule, chunks, micro-batches), so
  // that the predicted pipeline shows the same schedule (the measured view's "Predict this pipeline" button).
  void explorer_use_measured_pipeline();

  // One frame of the whole UI, in a window covering the display. Call between NewFrame() and Render().
  void draw();
  void select_panel(Panel panel);
  Panel panel() const { return panel_; }
  bool quit_requested() const { return quit_; }

  // Timeline window (in profile ns); a range of 0 length means "fit the whole profile".
  void set_time_range(TimeNs start, TimeNs end);
  TimeNs time_start() const { return tl_.view.start(); }
  TimeNs time_end() const { return tl_.view.end(); }
  // Opens (or collapses) every rank group of the timeline.
  void set_all_ranks_open(bool open) { tl_.rank_open.assign(tl_.rank_open.size(), open ? 1 : 0); }
  // Shows (or hides) every rank's CPU threads and their CUDA API calls.
  void set_all_cpu_open(bool open) { tl_.cpu_open.assign(tl_.cpu_open.size(), open ? 1 : 0); }
  // Draw items the timeline produced in the last frame (for tests and the benchmark).
  std::size_t last_frame_items() const { return tl_.frame_items; }
  std::size_t last_frame_events() const { return tl_.frame_events; }
  // Timeline selection: the clicked event, and the selected time range (tests, benchmark).
  const EventRef& selected_event() const { return tl_.selected; }
  void select_event(const EventRef& event) { timeline_select(event, false); }
  bool has_range() const { return tl_.has_selection; }
  // The totals of the selected range once computed (nullptr while computing or with no range).
  const measure::RangeTotals* range_totals() const { return range_ready_ ? &range_ : nullptr; }
  // Runs the timeline search for TEXT and jumps to the first match (tests).
  void search(std::string_view text);
  void search_next(int delta) { timeline_jump_to_match(delta); }
  int search_matches() const { return static_cast<int>(tl_.matches.size()); }
  // Pins row ITEM (an index of the state's rows) to the top of the timeline (tests; the row menu does it).
  void set_row_pinned(std::uint32_t item, bool pinned) {
    if (item < tl_.pinned.size()) tl_.pinned[item] = pinned ? 1 : 0;
  }
  int search_cursor() const { return tl_.match_cursor; }
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
  // The Explorer's search for the best layouts is running (its table shows a busy sign).
  // A search still running: one that finished while no one drew the Explorer (which takes its result) is not.
  bool explorer_searching() const {
    return ex_.search_job.valid() &&
           ex_.search_job.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  }
  // The Query panel: SQL runs on a worker thread (as its Run button does); running while it does; its result.
  void run_query(const std::string& sql);
  bool query_running() const;
  const QueryResult* query_result() const;
  const model::Prediction* prediction() const { return ex_.valid ? &ex_.prediction : nullptr; }
  // What the Explorer opened the profile on (the inferred model, hardware and layout, or why it is not
  // comparable), and the measured step its measured column showed in the last frame (nullptr: none shown).
  const ProfileStart& explorer_start() const { return ex_.start; }
  const compare::MeasuredStep* explorer_measured_shown() const { return ex_.measured_shown; }
  const ExplorerReplay& explorer_replay_shown() const { return ex_.replay; }
  // What the Roofline drew in the last frame (tests).
  const RooflineShown& roofline_shown() const;
  const std::string& layout_error() const { return ex_.error; }

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
  void lazy_want(const TimelineContext& ctx);  // the ranks the timeline shows this frame (View_Timeline.cpp)

  // [SECTION] windows, one file each
  void draw_timeline();            // View_Timeline.cpp
  void draw_summary();             // the Summary panel, handed the Explorer's hardware (View_Explorer.cpp)
  void draw_roofline();            // the Roofline panel, handed the Explorer's prediction (View_Explorer.cpp)
  void draw_explorer();            // View_Explorer.cpp
  void draw_planner();             // the Planner panel, handed the Explorer's prediction (View_Explorer.cpp)
  void draw_waiting_for_events();  // a panel that needs the events while the preview is open
  // Follows a panel's link to the timeline (timeline_controller.hpp) and shows the timeline.
  void show_on_timeline(const ShowOnTimeline& show);

  void explorer_state(JsonWriter& j) const;  // its "explorer"
  void timeline_state(JsonWriter& j) const;  // its "timeline"

  // Timeline helpers (View_Timeline.cpp)
  void timeline_toolbar();
  void timeline_legend();
  void timeline_canvas();
  TimelineContext timeline_context(float x0, float x1, bool hovered) const;
  float timeline_layout(TimelineContext& ctx, float y0, float pins_h);
  float timeline_pins_height(const TimelineContext& ctx) const;
  void timeline_draw_rows(TimelineContext& ctx, bool pinned, float y0);
  void timeline_overlays(TimelineContext& ctx);
  void timeline_hover_actions(const TimelineContext& ctx);
  void timeline_handle_input(float x0, float x1, bool hovered, bool ruler_hovered);
  void timeline_keys(float x0, float x1);
  void timeline_draw_ruler(ImDrawList* dl, float x0, float x1, float y0, float label_w, float h);
  void timeline_run_search();
  void timeline_jump_to_match(int delta);
  void timeline_fit_selection();
  void timeline_select(const EventRef& event, bool jump);
  bool timeline_event_rect(const TimelineContext& ctx, const EventRef& event, ImVec2& a, ImVec2& b) const;
  void timeline_flows(TimelineContext& ctx, const EventRef& event, ImU32 color);
  void timeline_row_menu(const TimelineContext& ctx);
  void timeline_move_row(std::uint32_t item, int direction);
  void timeline_move_rank(std::int32_t rank_index, int direction);
  // Bottom panel: details of the selected event, range totals (View_TimelineDetails.cpp)
  void timeline_bottom_panel();
  void details_event();
  void details_fields(const EventRef& event);
  void occupancy_fields(const Rank& rank, std::int32_t device, const KernelDetail& kernel);
  const measure::CountedOp* counted_op(std::size_t rank_index, const CpuRange& range);
  const measure::KernelShare* work_share(std::size_t rank_index, std::uint32_t activity);
  // The recorded shapes and types of the operator at ranges[RANGE_INDEX] of rank R_INDEX (ranges.input_dims,
  // input_types), read from the file once per selection; null when none were recorded.
  const RecordedShapes* recorded_shapes(std::size_t rank_index, std::size_t range_index);
  void details_launch(const EventRef& event);
  void details_peers(std::int32_t instance);
  bool event_link(const EventRef& event, const char* id);
  void range_panel();
  void range_tables();
  void range_operator_table(int flags);
  void range_start();
  void range_poll();
  void range_cancel();
  // Critical path overlay and details (timeline_critical_path.cpp)
  void timeline_critical_path(TimelineContext& ctx);
  void details_critical_path(std::size_t rank_index, std::int64_t step);
  // Baseline (View_Baseline.cpp)
  void baseline_start(std::vector<std::filesystem::path> paths);
  void baseline_poll();
  void timeline_rebuild_items();

  // Explorer helpers (View_Explorer.cpp)
  void explorer_layout_controls();
  bool explorer_step_control(LayoutField field, const char* help);
  void explorer_init();
  void explorer_open_profile();  // the model, hardware and layout the open profile ran (ProfileStart)
  void explorer_inferred_line();
  // Where the Explorer's hardware came from ("the profile's GPU '...'", "chosen in the Explorer; ...").
  std::string hardware_note() const;
  void explorer_apply_shape();
  void explorer_repredict();
  void explorer_run_search();
  void explorer_apply(const model::ParallelConfig& config);
  void explorer_pipeline(float height);
  void explorer_bars();
  void explorer_measured();
  void explorer_replay();  // explorer_replay.cpp
  void explorer_run_replay(const model::ParallelConfig& now, int ran_tp, int ran_dp, int tp, int dp);
  bool explorer_only_tp_dp(const model::ParallelConfig& now) const;
  measure::ReplayGraph& replay_graph();  // the open profile's, built once and kept for what-ifs
  // Saves the Explorer's model, hardware and layout in the open profile as what it ran (its meta table,
  // analysis/compare/statement.hpp) and shows the profile as stating them.
  void explorer_save_statement();
  void explorer_save_button();
  // The open profile's measured model, Explorer start and roofline points as SAVED_STATEMENT_ states (a copy
  // of the LoadedProfile: workers may read the one shown).
  void restate_loaded();
  void explorer_pipeline_measured();  // pipeline_measured.cpp

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
  struct PendingStep {  // a step to select once its rank's events are loaded
    std::int32_t rank_index = -1;
    std::int64_t number = 0;
  } pending_step_;
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
  // Range totals, computed on a worker thread when a range is selected
  std::unique_ptr<RangeJob> range_job_;
  measure::RangeTotals range_;
  bool range_ready_ = false;
  std::vector<std::uint32_t> range_kernel_order_, range_rank_order_, range_op_order_;
  bool range_by_operator_ = false;  // the range's kernels table grouped by launching CPU operator
  // State dump for tests and scripts ($MESHSCOPE_STATE_FILE, written when it changes)
  void write_state();
  std::string state_file_;
  std::string state_written_;
  std::uint64_t frame_ = 0;

  // Baseline: the profile, its diff with the open one, the worker that loads and diffs
  void whatif_button();  // View_Timeline.cpp: the toolbar's What-if button and editor
  measure::ReplayEdits whatif_edits(const compare::WhatifRequest& request);
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
  int pipeline_group_ = 0, pipeline_step_ = 0;  // the measured pipeline shown (Explorer)
  std::vector<PipelineRow> pipeline_rows_;
  ImVec4 pipeline_button_ = {};  // where "Predict this pipeline" was drawn last frame (state dump)

  // Timeline state (timeline_items.hpp)
  TimelineState tl_;
  std::vector<std::uint32_t> flow_calls_;  // scratch of timeline_flows()
  // The Details pane's work row of the selected event (counted_op, work_share): its index, -1 none.
  struct WorkLookup {
    const LoadedProfile* loaded = nullptr;
    EventRef event;
    std::ptrdiff_t index = -1;
  };
  WorkLookup work_lookup_;
  struct ShapesLookup {
    const LoadedProfile* loaded = nullptr;
    EventRef event;
    std::optional<RecordedShapes> shapes;
    std::string error;  // why the file could not be read (shown in place of the shapes)
  };
  ShapesLookup shapes_lookup_;

  // Explorer state
  struct ExplorerState {
    bool ready = false;
    std::vector<std::string> models, hardware;
    int model_index = 0, hardware_index = 0;
    int inferred_index = -1;  // the models entry that is the open profile's inferred model, -1 none
    // The hardware entry that is the open profile's own hardware when no preset is it: the hardware stated in
    // the profile, or its GPU described from the profile's records.
    int own_hw_index = -1;
    model::HardwareSpec own_hw;
    std::string save_message;  // what the last "save as what the profile ran" did
    bool save_failed = false;
    ImVec4 save_button_rect = {};  // where that button was drawn (state dump)
    model::ModelSpec inferred;     // that model (compare::inferred_model)
    ProfileStart start;            // what the open profile ran, or why it is not comparable
    const compare::MeasuredStep* measured_shown = nullptr;
    model::ModelSpec base_model;            // the preset as loaded (parsed once per combo change)
    model::ModelSpec model;                 // base_model with the shape sliders applied
    int layers = 0, hidden = 0, heads = 0;  // shape overrides, 0 = the preset's
    model::HardwareSpec hw;
    model::Efficiencies eff;
    model::ParallelConfig layout =
        explorer_layout();  // what the controls show (a profile's layout when one is open)
    // Per layout control, the values it steps through (with their problems), recomputed when the layout
    // or the model changes.
    std::vector<LayoutStep> steps[kLayoutFieldCount];
    model::ParallelConfig steps_for;  // the layout and model (key) the steps were computed for
    std::string steps_key;
    bool steps_dirty = true;
    std::vector<int> positions;  // scratch: the valid steps of one control
    int typing = -1;             // the control a Ctrl+click turned into a text field (LayoutField), -1 none
    int typed = 0;
    bool typing_focus = false;
    ImVec4 control_rects[kLayoutFieldCount] = {};  // where each control's slider was drawn (state dump)
    bool dirty = true;
    bool valid = false;
    std::string error;
    std::string spec_error;
    model::Prediction prediction;
    model::Timeline timeline;
    std::vector<model::RooflineOperation> roofline;  // the layout's operations for the Roofline panel
    model::ParallelConfig resolved;
    // Search: on a worker thread (a search over thousands of GPUs takes most of a second); the table shows a
    // busy sign, never the previous inputs' layouts, until it is back.
    bool search_dirty = true;
    ExplorerSearch search;
    std::future<ExplorerSearch> search_job;
    std::vector<std::future<ExplorerSearch>> search_abandoned;  // superseded runs, dropped once they end
    int search_selected = -1;
    ExplorerReplay replay;  // the measured run replayed at the layout chosen (explorer_replay.cpp)
  } ex_;

  std::unique_ptr<RooflinePanel> roofline_;  // the Roofline panel (roofline_panel.hpp)
  std::unique_ptr<QueryPanel> query_;        // the Query panel (query_panel.hpp)

  std::unique_ptr<SummaryPanel> summary_;  // the Summary panel (summary_panel.hpp)

  std::unique_ptr<OverviewPanel> overview_;  // the Overview panel (overview_panel.hpp)

  std::unique_ptr<PlannerPanel> planner_;  // the Planner panel (planner_panel.hpp)
};

}  // namespace meshscope::gui
