// The timeline's bottom pane (as Perfetto's and Nsight Systems' details panes), an object of its own: the
// Details of the selected event and the totals of the selected range, with the state they keep — the range
// worker and its result, the tables' orders, the work and shapes looked up once per selection. The view lends
// it the open profile, the timeline's state (the selection it describes) and the way to select an event.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analysis/measure/range_totals.hpp"
#include "analysis/measure/work.hpp"
#include "app/gui/loaded_profile.hpp"
#include "app/gui/timeline_items.hpp"
#include "profiler/work_store.hpp"

namespace meshscope::gui {

// The totals of a selected time range, computed on a worker thread.
struct RangeJob {
  std::atomic<bool> cancel{false}, done{false};
  measure::RangeTotals result;
  std::jthread thread;  // last: joined first when the job is destroyed
};

class TimelineDetails {
 public:
  // What the view lends the pane.
  struct Host {
    // The view's open profile (its own pointer, so that the pane always sees the profile shown; shared: the
    // range worker keeps the profile it reads alive).
    const std::shared_ptr<LoadedProfile>* loaded = nullptr;
    TimelineState* timeline = nullptr;  // the selection, the selected range, the tab asked for, the zoom
    // Selects EVENT on the timeline (JUMP: and brings it into view).
    std::function<void(const EventRef& event, bool jump)> select;
  };
  explicit TimelineDetails(Host host);
  ~TimelineDetails();
  TimelineDetails(const TimelineDetails&) = delete;
  TimelineDetails& operator=(const TimelineDetails&) = delete;

  // The pane, below the timeline, when an event or a range is selected.
  void draw();
  // The totals of the timeline's selected range: started on a worker thread, taken when done, dropped.
  void range_start();
  void range_poll();
  void range_cancel();
  // The totals once computed (nullptr while computing or with no range).
  const measure::RangeTotals* range_totals() const { return range_ready_ ? &range_ : nullptr; }

 private:
  const std::shared_ptr<LoadedProfile>& loaded() const { return *host_.loaded; }
  TimelineState& timeline() const { return *host_.timeline; }
  void details_event();
  void details_fields(const EventRef& event);
  void occupancy_fields(const Rank& rank, std::int32_t device, const KernelDetail& kernel);
  // The selected step's critical path (timeline_critical_path.cpp).
  void details_critical_path(std::size_t rank_index, std::int64_t step);
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

  Host host_;
  std::vector<std::uint32_t> flow_calls_;  // scratch of details_launch
  // Range totals, computed on a worker thread when a range is selected
  std::unique_ptr<RangeJob> range_job_;
  measure::RangeTotals range_;
  bool range_ready_ = false;
  std::vector<std::uint32_t> range_kernel_order_, range_rank_order_, range_op_order_;
  bool range_by_operator_ = false;  // the range's kernels table grouped by launching CPU operator
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
};

}  // namespace meshscope::gui
