// timeline_details.cpp: the timeline's bottom panel (as Perfetto's and Nsight Systems' details panes).
// "Details": every field of the selected event, what launched it (CPU operator -> CUDA API call -> GPU
// work, on which thread), its flow partners, and for a collective its peers on every rank with their
// arrival, wait and transfer; every related event is a link that selects it and brings it into view.
// "Range": the totals of the selected time range per class, per kernel and per rank (sortable), with the
// exposed communication inside it, computed on a worker thread (analysis/measure/range_totals.hpp).
//
// [SECTION] Panel and links
// [SECTION] Event fields
// [SECTION] Launch and flows
// [SECTION] Collective peers
// [SECTION] Range totals (worker, tables)
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "analysis/measure/collectives.hpp"
#include "analysis/measure/occupancy.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/timeline_details.hpp"
#include "profiler/error.hpp"

namespace meshscope::gui {

namespace {

constexpr std::size_t kMaxLinks = 64;

// Where field() also writes "key: value" lines while the Details fields are drawn (what Copy puts on the
// clipboard, whole: the table may cut a value to its column).
std::string* copied_fields = nullptr;

// One "key  value" row of a two-column fields table.
void field(const char* key, const char* format, ...) IM_FMTARGS(2);
void field(const char* key, const char* format, ...) {
  char value[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(value, sizeof value, format, args);
  va_end(args);
  if (copied_fields) *copied_fields += fmt::format("{}: {}\n", key, value);
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  text_ellipsis(value);
}

void time_field(const char* key, double ns) {
  char t[32];
  field(key, "%s", duration_text(t, sizeof t, ns));
}

bool begin_fields(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) return false;
  ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, px(110));
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

std::string long_text(std::int64_t v) {
  return v == kNull ? std::string("-") : std::to_string(v);
}

}  // namespace

// [SECTION] Panel and links
// -----------------------------------------------------------------------------------------

TimelineDetails::TimelineDetails(Host host) : host_(std::move(host)) {}

TimelineDetails::~TimelineDetails() = default;

void TimelineDetails::draw() {
  const bool details = timeline().selected.valid() || timeline().selected_instance >= 0;
  if (!details && !timeline().has_selection) return;
  ImGui::BeginChild("##bottom", ImVec2(0, 0), true);
  if (ImGui::BeginTabBar("##bottomtabs")) {
    const int request = timeline().details_tab;
    timeline().details_tab = -1;
    if (details &&
        ImGui::BeginTabItem("Details", nullptr, request == 0 ? ImGuiTabItemFlags_SetSelected : 0)) {
      details_event();
      ImGui::EndTabItem();
    }
    if (timeline().has_selection &&
        ImGui::BeginTabItem("Range", nullptr, request == 1 ? ImGuiTabItemFlags_SetSelected : 0)) {
      range_panel();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

// A link to EVENT: its name (cut to the column) that selects it and brings it into view when clicked.
bool TimelineDetails::event_link(const EventRef& event, const char* id) {
  ImGui::PushID(id);
  ImGui::PushID(static_cast<int>(event.index));
  const std::string name = std::string(short_name(event_name(*loaded()->profile, event)));
  const bool clicked = ImGui::SmallButton("go");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("select it and bring it into view");
  ImGui::SameLine();
  text_ellipsis(name, 0, kColText);
  ImGui::PopID();
  ImGui::PopID();
  if (clicked) host_.select(event, true);
  return clicked;
}

void TimelineDetails::details_event() {
  const EventRef e = timeline().selected;
  const Profile& profile = *loaded()->profile;
  if (e.valid()) {
    const EventSpan span = span_of(profile, e);
    ImGui::TextColored(to_vec4(kColSelect), "%s", to_string(e.kind));
    ImGui::SameLine();
    // The name takes what the three buttons after it leave (measured, so that it holds at every scale).
    const ImGuiStyle& style = ImGui::GetStyle();
    float buttons = 0;
    for (const char* b : {"Bring into view", "Zoom to it", "Clear (Esc)"})
      buttons += ImGui::CalcTextSize(b).x + 2 * style.FramePadding.x + style.ItemSpacing.x;
    text_ellipsis(short_name(event_name(profile, e)),
                  ImGui::GetContentRegionAvail().x - buttons - style.ItemSpacing.x);
    ImGui::SameLine();
    if (ImGui::SmallButton("Bring into view")) host_.select(e, true);
    ImGui::SameLine();
    if (ImGui::SmallButton("Zoom to it")) {
      timeline().view.show_padded(
          span.start_ns, span.end_ns,
          std::max<TimeNs>(TimelineController::kMinRangeNs, (span.end_ns - span.start_ns) / 5));
    }
    ImGui::SameLine();
  }
  if (ImGui::SmallButton("Clear (Esc)")) {
    host_.select({}, false);
    return;
  }
  const bool peers = timeline().selected_instance >= 0;
  const int columns = (e.valid() ? 2 : 0) + (peers ? 1 : 0);
  if (columns == 0) return;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame;
  if (!ImGui::BeginTable("##detailcols", columns, flags, ImGui::GetContentRegionAvail())) return;
  if (e.valid()) {
    ImGui::TableNextColumn();
    ImGui::BeginChild("##fields");
    details_fields(e);
    ImGui::EndChild();
    ImGui::TableNextColumn();
    ImGui::BeginChild("##launch");
    details_launch(e);
    ImGui::EndChild();
  }
  if (peers) {
    ImGui::TableNextColumn();
    ImGui::BeginChild("##peers");
    details_peers(timeline().selected_instance);
    ImGui::EndChild();
  }
  ImGui::EndTable();
}

// [SECTION] Event fields
// -----------------------------------------------------------------------------------------

void TimelineDetails::details_fields(const EventRef& e) {
  const Profile& profile = *loaded()->profile;
  const auto r = static_cast<std::size_t>(e.rank_index);
  const Rank& rank = profile.ranks()[r];
  const EventSpan span = span_of(profile, e);
  ImGui::TextDisabled("FIELDS");
  ImGui::SameLine();
  const ImGuiIO& io = ImGui::GetIO();
  const bool copy = ImGui::SmallButton("Copy (Ctrl+C)") ||
                    (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('C', false));
  if (!begin_fields("##f")) return;
  std::string copied;
  copied_fields = &copied;
  field("name", "%s", event_name(profile, e).c_str());
  time_field("duration", static_cast<double>(span.end_ns - span.start_ns));
  time_field("start", static_cast<double>(span.start_ns - profile.first_ns()));
  time_field("end", static_cast<double>(span.end_ns - profile.first_ns()));
  field("start (ns)", "%lld (profile clock)", static_cast<long long>(span.start_ns));
  field("rank", "%d%s%s", rank.rank, rank.hostname.empty() ? "" : " on ", rank.hostname.c_str());
  if (e.kind == EventKind::kActivity) {
    const Activity& a = rank.activities[e.index];
    const auto cls = loaded()->analysis().ranks[r].classes[e.index];
    const auto it = std::upper_bound(rank.streams.begin(), rank.streams.end(), e.index,
                                     [](std::uint32_t i, const GpuStream& s) { return i < s.first; });
    const GpuStream& stream = *(it - 1);
    field("kind", "%s, %s", to_string(a.kind), measure::to_string(cls));
    field("GPU, stream", "%d, %s (%lld)", stream.device, stream.name.c_str(),
          static_cast<long long>(stream.stream));
    field("id, correlation", "%lld, %s", static_cast<long long>(a.id), long_text(a.correlation).c_str());
    // The external id is recorded on the launch (Kineto writes it on both; the profile keeps the call's).
    if (const std::uint32_t api = loaded()->ranks[r]->launches.api_of_activity[e.index];
        api != measure::kNoIndex)
      field("external id", "%s (of its launch call)", long_text(rank.api_calls[api].external_id).c_str());
    if (a.kind == ActivityKind::kKernel && a.detail != kNoDetail && a.detail < rank.kernels.size()) {
      const KernelDetail& k = rank.kernels[a.detail];
      field("grid", "[%d, %d, %d]", k.grid[0], k.grid[1], k.grid[2]);
      field("block", "[%d, %d, %d]", k.block[0], k.block[1], k.block[2]);
      field("registers", "%d", k.registers);
      field("shared memory", "%d bytes", k.shared_bytes);
      if (k.graph_id != kNull) field("CUDA graph", "%lld", static_cast<long long>(k.graph_id));
      occupancy_fields(rank, stream.device, k);
    }
    if (const measure::KernelShare* share = work_share(r, e.index)) {
      const measure::CountedOp& op = loaded()->measured->work.ops[share->op];
      char b[32];
      field("work", "%.4g GFLOP, %s (its share of %s's)", share->flops / 1e9,
            bytes_text(b, sizeof b, share->bytes), op.name.c_str());
      if (a.duration() > 0) {
        const double seconds = static_cast<double>(a.duration()) / 1e9;
        char flops_rate[48], bytes_rate[48];
        field("achieved", "%s, %s", flop_rate_text(flops_rate, sizeof flops_rate, share->flops / seconds),
              bandwidth_text(bytes_rate, sizeof bytes_rate, share->bytes / seconds));
      }
    }
    if ((a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) && a.detail != kNoDetail &&
        a.detail < rank.copies.size()) {
      const CopyDetail& c = rank.copies[a.detail];
      char b[32];
      field("bytes", "%s (%s)", bytes_text(b, sizeof b, static_cast<double>(c.bytes)),
            profile.str(c.copy_kind).c_str());
      if (a.duration() > 0)
        field("bandwidth", "%s",
              bandwidth_text(b, sizeof b,
                             static_cast<double>(c.bytes) / static_cast<double>(a.duration()) * 1e9));
    }
    if (a.collective >= 0 && static_cast<std::size_t>(a.collective) < rank.collectives.size()) {
      const Collective& c = rank.collectives[static_cast<std::size_t>(a.collective)];
      char b[32];
      field("collective", "%s (%s)", profile.str(c.op).c_str(), profile.str(c.source).c_str());
      field("communicator", "%s", profile.str(c.communicator).c_str());
      field("process group", "%s %s", profile.str(c.pg_desc).c_str(), profile.str(c.pg_ranks).c_str());
      field("seq, group size", "%s, %s", long_text(c.seq).c_str(), long_text(c.group_size).c_str());
      const std::int64_t bytes = measure::message_bytes(profile, c);
      field("message", "%s, %s elements in / %s out, %s",
            bytes > 0 ? bytes_text(b, sizeof b, static_cast<double>(bytes)) : "?",
            long_text(c.in_nelems).c_str(), long_text(c.out_nelems).c_str(), profile.str(c.dtype).c_str());
      field("algorithm", "%s, %s, %s channels", profile.str(c.algorithm).c_str(),
            profile.str(c.protocol).c_str(), long_text(c.channels).c_str());
      if (bytes > 0 && a.duration() > 0) {
        const double algbw = static_cast<double>(bytes) / static_cast<double>(a.duration()) * 1e9;
        char busbw[48];
        field("bandwidth", "algbw %s, busbw %s", bandwidth_text(b, sizeof b, algbw),
              bandwidth_text(busbw, sizeof busbw,
                             algbw * measure::busbw_factor(profile.str(c.op), c.group_size)));
      }
    }
  } else if (e.kind == EventKind::kRange) {
    const CpuRange& c = rank.ranges[e.index];
    field("kind", "%s, depth %d", to_string(c.kind), c.depth);
    field("category", "%s", profile.str(c.category).c_str());
    field("id, external id", "%lld, %s", static_cast<long long>(c.id), long_text(c.external_id).c_str());
    if (const measure::CountedOp* op = counted_op(r, c)) {
      char b[32];
      field("input dims", "%s", op->input_dims.empty() ? "unknown" : op->input_dims.c_str());
      field("input types", "%s", op->input_types.empty() ? "unknown" : op->input_types.c_str());
      field("work", "%s, %.4g GFLOP, %s (%s)", measure::to_string(op->category), op->flops / 1e9,
            bytes_text(b, sizeof b, op->bytes), measure::to_string(op->precision));
      if (op->kernel_ns > 0) {
        char rate[48];
        field("its GPU work", "%lld kernel(s), %s, %s", static_cast<long long>(op->kernels),
              duration_text(b, sizeof b, static_cast<double>(op->kernel_ns)),
              flop_rate_text(rate, sizeof rate, op->flops / static_cast<double>(op->kernel_ns) * 1e9));
      }
    } else if (c.kind == RangeKind::kCpuOp) {
      if (const RecordedShapes* shapes = recorded_shapes(r, e.index)) {
        field("input dims", "%s", shapes->input_dims.empty() ? "unknown" : shapes->input_dims.c_str());
        field("input types", "%s", shapes->input_types.empty() ? "unknown" : shapes->input_types.c_str());
      } else {
        field("input dims", "%s",
              shapes_lookup_.error.empty() ? "not recorded" : shapes_lookup_.error.c_str());
      }
    }
    if (c.kind == RangeKind::kStep) {
      for (const Step& s : rank.steps) {
        if (s.range_id == c.id && s.number != kNull) field("step", "%lld", static_cast<long long>(s.number));
      }
    }
  } else if (e.kind == EventKind::kApiCall) {
    const ApiCall& c = rank.api_calls[e.index];
    field("kind", "CUDA %s API", to_string(c.kind));
    field("process, thread", "%lld, %lld", static_cast<long long>(rank.thread_of(c).pid),
          static_cast<long long>(rank.thread_of(c).tid));
    field("correlation", "%s", long_text(c.correlation).c_str());
    field("external id", "%s", long_text(c.external_id).c_str());
  } else if (e.kind == EventKind::kStep) {
    const Step& s = rank.steps[e.index];
    field("step", "%lld (%s)", static_cast<long long>(s.number), s.source.c_str());
    for (const auto& sr : loaded()->analysis().ranks[r].steps) {
      if (sr.number != s.number) continue;
      time_field("GPU span", static_cast<double>(sr.gpu.span_ns));
      time_field("compute", static_cast<double>(sr.gpu.compute_ns));
      time_field("communication", static_cast<double>(sr.gpu.comm_ns));
      time_field("exposed comm", static_cast<double>(sr.gpu.exposed_comm_ns));
      time_field("memory", static_cast<double>(sr.gpu.memory_ns));
      time_field("idle", static_cast<double>(sr.gpu.idle_ns));
    }
  }
  ImGui::EndTable();
  copied_fields = nullptr;
  if (copy) ImGui::SetClipboardText(copied.c_str());
}

// The theoretical occupancy of kernel K on its device (analysis/measure/occupancy.hpp), when the profile
// states the device's compute capability; "unknown" otherwise, never a guess.
void TimelineDetails::occupancy_fields(const Rank& rank, std::int32_t device, const KernelDetail& k) {
  const Device* d = nullptr;
  for (const Device& candidate : rank.devices) {
    if (candidate.device == device) d = &candidate;
  }
  const auto limits = d ? measure::sm_limits(d->compute_major, d->compute_minor) : std::nullopt;
  if (!limits) {
    field("occupancy", "unknown (%s)",
          d ? "no occupancy model for this GPU's architecture" : "the profile does not describe this GPU");
    return;
  }
  const measure::Occupancy o = measure::theoretical_occupancy(k, *limits, d->sm_count > 0 ? d->sm_count : 0);
  if (o.blocks_per_sm == 0) {
    field("occupancy", "0 (the launch exceeds an SM of compute capability %lld.%lld)",
          static_cast<long long>(d->compute_major), static_cast<long long>(d->compute_minor));
    return;
  }
  field("occupancy", "%.0f%% theoretical: %d block(s), %d of %d warps per SM, limited by %s",
        100 * o.fraction, o.blocks_per_sm, o.warps_per_sm, limits->max_warps, measure::to_string(o.limit));
  if (o.waves > 0)
    field("waves", "%.2f over %lld SMs (its first wave fills %.0f%% of them)", o.waves,
          static_cast<long long>(d->sm_count), 100 * o.sms_used);
}

// The counted operator (op_work) of range C on rank R_INDEX: matched by external id and name, as the importer
// wrote it. Null when the operator has no work row (no shapes recorded, or no formula for it). Looked up once
// per selection: the Details pane is drawn every frame and a profile holds millions of rows.
const measure::CountedOp* TimelineDetails::counted_op(std::size_t r_index, const CpuRange& c) {
  if (!loaded()->measured || c.external_id == kNull || c.kind != RangeKind::kCpuOp) return nullptr;
  const auto& ops = loaded()->measured->work.ops;
  const EventRef key = timeline().selected;
  if (work_lookup_.loaded != loaded().get() || !(work_lookup_.event == key)) {
    work_lookup_ = {loaded().get(), key, -1};
    const std::string& name = loaded()->profile->str(c.name);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].rank_index == r_index && ops[i].external_id == c.external_id && ops[i].name == name) {
        work_lookup_.index = static_cast<std::ptrdiff_t>(i);
        break;
      }
    }
  }
  return work_lookup_.index >= 0 ? &ops[static_cast<std::size_t>(work_lookup_.index)] : nullptr;
}

const RecordedShapes* TimelineDetails::recorded_shapes(std::size_t r_index, std::size_t range_index) {
  const EventRef key = timeline().selected;
  if (shapes_lookup_.loaded != loaded().get() || !(shapes_lookup_.event == key)) {
    shapes_lookup_ = {loaded().get(), key, std::nullopt, {}};
    try {
      shapes_lookup_.shapes = read_recorded_shapes(
          loaded()->profile->path(), loaded()->profile->ranks()[r_index].ranges[range_index].id);
    } catch (const Error& err) {
      shapes_lookup_.error = err.what();
    }
  }
  return shapes_lookup_.shapes ? &*shapes_lookup_.shapes : nullptr;
}

// The share of a counted operator's work that activity ACTIVITY of rank R_INDEX carries (kernel_work), looked
// up once per selection as counted_op is.
const measure::KernelShare* TimelineDetails::work_share(std::size_t r_index, std::uint32_t activity) {
  if (!loaded()->measured) return nullptr;
  const auto& shares = loaded()->measured->work.kernels;
  const EventRef key = timeline().selected;
  if (work_lookup_.loaded != loaded().get() || !(work_lookup_.event == key)) {
    work_lookup_ = {loaded().get(), key, -1};
    for (std::size_t i = 0; i < shares.size(); ++i) {
      if (shares[i].rank_index == r_index && shares[i].activity == activity) {
        work_lookup_.index = static_cast<std::ptrdiff_t>(i);
        break;
      }
    }
  }
  return work_lookup_.index >= 0 ? &shares[static_cast<std::size_t>(work_lookup_.index)] : nullptr;
}

// [SECTION] Launch and flows
// ---------------------------------------------------------------------------------------

void TimelineDetails::details_launch(const EventRef& e) {
  const Profile& profile = *loaded()->profile;
  const auto r = static_cast<std::size_t>(e.rank_index);
  const Rank& rank = profile.ranks()[r];
  const auto& launches = loaded()->ranks[r]->launches;
  ImGui::TextDisabled("LAUNCH AND FLOWS");
  std::uint32_t api = measure::kNoIndex;
  if (e.kind == EventKind::kActivity) api = launches.api_of_activity[e.index];
  if (e.kind == EventKind::kApiCall) api = e.index;
  char t[32];
  if (e.kind == EventKind::kActivity && api == measure::kNoIndex)
    ImGui::TextDisabled("no CUDA API call carries its correlation id: launch not recorded");
  if (api != measure::kNoIndex) {
    const ApiCall& call = rank.api_calls[api];
    if (e.kind != EventKind::kApiCall) {
      ImGui::Text("API call (thread %lld, %s):", static_cast<long long>(rank.thread_of(call).tid),
                  duration_text(t, sizeof t, static_cast<double>(call.end_ns - call.start_ns)));
      event_link({EventKind::kApiCall, e.rank_index, api}, "api");
    }
    const std::uint32_t op = launches.op_of_api[api];
    if (op != measure::kNoIndex) {
      ImGui::Text("CPU operator:");
      event_link({EventKind::kRange, e.rank_index, op}, "op");
    }
    const auto launched = launches.activities_of(api);
    ImGui::Text("GPU work it launched (%zu):", launched.size());
    for (std::size_t k = 0; k < launched.size() && k < kMaxLinks; ++k) {
      if (launched[k] != e.index || e.kind != EventKind::kActivity)
        event_link({EventKind::kActivity, e.rank_index, launched[k]}, "act");
    }
  }
  if (e.kind == EventKind::kRange) {
    const CpuRange& c = rank.ranges[e.index];
    if (const std::int64_t parent = rank.parent_range(e.index); parent >= 0) {
      ImGui::Text("inside:");
      event_link({EventKind::kRange, e.rank_index, static_cast<std::uint32_t>(parent)}, "parent");
    }
    flow_calls_.clear();
    measure::api_calls_inside(rank, launches, e.index, flow_calls_);
    std::size_t kernels = 0;
    for (std::uint32_t call : flow_calls_) kernels += launches.activities_of(call).size();
    ImGui::Text("CUDA API calls inside: %zu, launching %zu GPU activities", flow_calls_.size(), kernels);
    for (std::size_t k = 0; k < flow_calls_.size() && k < kMaxLinks; ++k) {
      event_link({EventKind::kApiCall, e.rank_index, flow_calls_[k]}, "call");
      for (std::uint32_t act : launches.activities_of(flow_calls_[k])) {
        ImGui::Indent();
        event_link({EventKind::kActivity, e.rank_index, act}, "launched");
        ImGui::Unindent();
      }
    }
    // Flow partners recorded by the trace (forward/backward links and the like): a flow that starts or ends
    // on this range's thread while the range is open.
    const CpuTrack* track = nullptr;
    for (const CpuTrack& tr : rank.tracks) {
      if (e.index >= tr.first && e.index < tr.first + tr.count) track = &tr;
    }
    int shown = 0;
    for (const Flow& f : rank.flows) {
      if (!track || shown >= 16) break;
      const bool out = f.src_tid == track->tid && f.src_ns >= c.start_ns && f.src_ns < c.end_ns;
      const bool in =
          f.dst_tid == track->tid && f.dst_ns != kNull && f.dst_ns >= c.start_ns && f.dst_ns < c.end_ns;
      if (!out && !in) continue;
      ImGui::Text(
          "flow %s (%s) %s thread %lld at %s", profile.str(f.category).c_str(), long_text(f.flow_id).c_str(),
          out ? "to" : "from", static_cast<long long>(out ? f.dst_tid : f.src_tid),
          duration_text(t, sizeof t, static_cast<double>((out ? f.dst_ns : f.src_ns) - profile.first_ns())));
      ++shown;
    }
  }
  if (e.kind == EventKind::kStep) {
    ImGui::TextDisabled("a step launches nothing itself: select its operators or kernels");
    details_critical_path(r, rank.steps[e.index].number);  // what set when it ended
  }
}

// [SECTION] Collective peers
// ---------------------------------------------------------------------------------------

void TimelineDetails::details_peers(std::int32_t instance) {
  const auto& report = loaded()->analysis().collectives;
  if (static_cast<std::size_t>(instance) >= report.instances.size()) return;
  const Profile& profile = *loaded()->profile;
  const auto& ci = report.instances[static_cast<std::size_t>(instance)];
  char a[32], b[32], c[32];
  ImGui::TextDisabled("COLLECTIVE PEERS ACROSS RANKS");
  ImGui::TextColored(to_vec4(kColSelect), "%s", profile.str(ci.op).c_str());
  ImGui::SameLine();
  const std::string ranks = ci.expected > 0 ? fmt::format("{} of {} ranks", ci.member_count, ci.expected)
                                            : fmt::format("{} ranks (group size unknown)", ci.member_count);
  ImGui::TextDisabled("%s %lld, %s%s", ci.by_seq ? "seq" : "ordinal", static_cast<long long>(ci.key),
                      ranks.c_str(), ci.complete ? "" : " (incomplete)");
  ImGui::Text("arrival skew %s, last to arrive: rank %d",
              duration_text(a, sizeof a, static_cast<double>(ci.skew_ns)), ci.last_rank);
  text_ellipsis("communicator " + profile.str(ci.communicator));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##members", 5, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("rank (go)");
  ImGui::TableSetupColumn("arrival");
  ImGui::TableSetupColumn("wait");
  ImGui::TableSetupColumn("transfer");
  ImGui::TableSetupColumn("duration");
  ImGui::TableHeadersRow();
  for (std::uint32_t m = 0; m < ci.member_count; ++m) {
    const auto& mem = report.members[ci.first_member + m];
    const Rank& rank = profile.ranks()[mem.rank_index];
    const Collective& col = rank.collectives[mem.collective];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(m));
    char label[32];
    std::snprintf(label, sizeof label, "rank %d", rank.rank);
    if (ImGui::Selectable(label, false, ImGuiSelectableFlags_SpanAllColumns) && col.stream_index >= 0) {
      host_.select({EventKind::kActivity, static_cast<std::int32_t>(mem.rank_index), col.activity}, true);
    }
    ImGui::PopID();
    ImGui::TableNextColumn();
    ImGui::Text("+%s", duration_text(a, sizeof a, static_cast<double>(mem.start_ns - ci.first_arrival_ns)));
    ImGui::TableNextColumn();
    ImGui::TextColored(to_vec4(mem.wait_ns > 0 ? kColExposed : kColTextDim), "%s",
                       duration_text(b, sizeof b, static_cast<double>(mem.wait_ns)));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(duration_text(c, sizeof c, static_cast<double>(mem.transfer_ns)));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(duration_text(a, sizeof a, static_cast<double>(mem.end_ns - mem.start_ns)));
  }
  ImGui::EndTable();
}

// [SECTION] Range totals
// --------------------------------------------------------------------------------------------

void TimelineDetails::range_start() {
  range_cancel();
  if (!loaded()) return;
  range_job_ = std::make_unique<RangeJob>();
  RangeJob* job = range_job_.get();
  std::shared_ptr<const LoadedProfile> profile = loaded();
  const TimelineState& tl = timeline();
  const TimeNs lo = std::min(tl.sel_a, tl.sel_b), hi = std::max(tl.sel_a, tl.sel_b);
  job->thread = std::jthread([job, profile, lo, hi] {
    std::vector<const measure::LaunchIndex*> launches;
    for (const auto& index : profile->ranks) launches.push_back(index ? &index->launches : nullptr);
    job->result = measure::range_totals(*profile->profile, profile->analysis(), profile->range_index, lo, hi,
                                        &job->cancel, &launches);
    job->done = true;
  });
}

void TimelineDetails::range_poll() {
  if (!range_job_ || !range_job_->done.load()) return;
  range_ = std::move(range_job_->result);
  range_job_.reset();
  range_ready_ = !range_.cancelled;
  range_kernel_order_.resize(range_.kernels.size());
  std::iota(range_kernel_order_.begin(), range_kernel_order_.end(), 0u);
  range_rank_order_.resize(range_.ranks.size());
  std::iota(range_rank_order_.begin(), range_rank_order_.end(), 0u);
  range_op_order_.resize(range_.operators.size());
  std::iota(range_op_order_.begin(), range_op_order_.end(), 0u);
}

void TimelineDetails::range_cancel() {
  if (range_job_) {
    range_job_->cancel = true;
    range_job_.reset();  // joins the worker
  }
  range_ready_ = false;
}

void TimelineDetails::range_panel() {
  const TimeNs lo = std::min(timeline().sel_a, timeline().sel_b),
               hi = std::max(timeline().sel_a, timeline().sel_b);
  const TimeNs origin = loaded()->profile->first_ns();
  char a[32], b[32], c[32];
  ImGui::TextColored(to_vec4(kColSelect), "Range %s",
                     duration_text(a, sizeof a, static_cast<double>(hi - lo)));
  ImGui::SameLine();
  ImGui::TextDisabled("from %s to %s", duration_text(b, sizeof b, static_cast<double>(lo - origin)),
                      duration_text(c, sizeof c, static_cast<double>(hi - origin)));
  ImGui::SameLine();
  if (ImGui::SmallButton("Zoom to it (Z)")) timeline().view.zoom_from(lo, hi);
  ImGui::SameLine();
  if (ImGui::SmallButton("Bookmark (B)")) timeline().bookmarks.push_back({lo, hi});
  ImGui::SameLine();
  if (ImGui::SmallButton("Clear (Esc)")) {
    timeline().has_selection = false;
    range_cancel();
    return;
  }
  if (!range_ready_) {
    ImGui::TextDisabled(range_job_ ? "computing the totals..." : "no totals");
    return;
  }
  if (loaded()->lazy) {
    // Lazy ranks: the totals of the ranks whose events are loaded.
    ImGui::Text(
        "%lld GPU activities overlap it; exposed communication inside it: %s (the %zu ranks loaded, of %zu)",
        static_cast<long long>(range_.events),
        duration_text(a, sizeof a, static_cast<double>(range_.exposed_comm_ns)), loaded()->lazy->loaded_ranks,
        loaded()->profile->ranks().size());
  } else {
    ImGui::Text("%lld GPU activities overlap it; exposed communication inside it: %s (all ranks)",
                static_cast<long long>(range_.events),
                duration_text(a, sizeof a, static_cast<double>(range_.exposed_comm_ns)));
  }
  range_tables();
}

namespace {

// Re-sorts ORDER (indices into ROWS) when the table's sort changed. LESS(a, b, column) orders two rows by a
// column, ascending.
template <class Row, class Less>
void sort_rows(std::vector<std::uint32_t>& order, const std::vector<Row>& rows, Less less) {
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (!specs || !specs->SpecsDirty || specs->SpecsCount == 0) return;
  const auto& spec = specs->Specs[0];
  const bool asc = spec.SortDirection == ImGuiSortDirection_Ascending;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return asc ? less(rows[x], rows[y], spec.ColumnIndex) : less(rows[y], rows[x], spec.ColumnIndex);
  });
  specs->SpecsDirty = false;
}

}  // namespace

// The range's GPU work by the CPU operator that launched it.
void TimelineDetails::range_operator_table(int flags) {
  const Profile& profile = *loaded()->profile;
  ImGui::SameLine();
  ImGui::TextDisabled("(%zu operators; click a header to sort)", range_.operators.size());
  if (!ImGui::BeginTable("##rops", 4, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("operator", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn("GPU work");
  ImGui::TableSetupColumn("total",
                          ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("max");
  ImGui::TableHeadersRow();
  auto name_of = [&](const measure::RangeOperatorTotal& o) -> std::string_view {
    return o.name == kNoString ? std::string_view("(no CPU operator recorded)") : profile.str(o.name);
  };
  sort_rows(range_op_order_, range_.operators,
            [&](const measure::RangeOperatorTotal& x, const measure::RangeOperatorTotal& y, int column) {
              switch (column) {
                case 0:
                  return name_of(x) < name_of(y);
                case 1:
                  return x.count < y.count;
                case 3:
                  return x.max_ns < y.max_ns;
                default:
                  return x.total_ns < y.total_ns;
              }
            });
  char t[32];
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(range_op_order_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& o = range_.operators[range_op_order_[static_cast<std::size_t>(i)]];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      text_ellipsis(name_of(o));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(o.count));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(o.total_ns)));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(o.max_ns)));
    }
  }
  ImGui::EndTable();
}

void TimelineDetails::range_tables() {
  const Profile& profile = *loaded()->profile;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Sortable |
                                ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("##rangecols", 3, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV,
                         ImGui::GetContentRegionAvail()))
    return;
  ImGui::TableSetupColumn("classes", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("kernels", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableSetupColumn("ranks", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  char t[32];
  ImGui::TableNextColumn();
  ImGui::TextDisabled("BY CLASS");
  if (ImGui::BeginTable("##classes", 4, flags & ~ImGuiTableFlags_Sortable)) {
    for (const char* h : {"class", "events", "busy (union)", "sum"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (int k = 0; k < measure::kClassCount; ++k) {
      const auto& ct = range_.classes[static_cast<std::size_t>(k)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(to_vec4(class_color(static_cast<measure::ActivityClass>(k))), "%s",
                         measure::to_string(static_cast<measure::ActivityClass>(k)));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(ct.events));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(ct.busy_ns)));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(ct.sum_ns)));
    }
    ImGui::EndTable();
  }
  ImGui::TableNextColumn();
  if (ImGui::RadioButton("by kernel", !range_by_operator_)) range_by_operator_ = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("by CPU operator", range_by_operator_)) range_by_operator_ = true;
  if (range_by_operator_) {
    range_operator_table(flags);
  } else {
    ImGui::SameLine();
    ImGui::TextDisabled("(%zu names; click a header to sort)", range_.kernels.size());
  }
  if (!range_by_operator_ && ImGui::BeginTable("##rkernels", 5, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 3.0f);
    ImGui::TableSetupColumn("class");
    ImGui::TableSetupColumn("count");
    ImGui::TableSetupColumn("total",
                            ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn("max");
    ImGui::TableHeadersRow();
    sort_rows(range_kernel_order_, range_.kernels,
              [&](const measure::RangeKernelTotal& x, const measure::RangeKernelTotal& y, int column) {
                switch (column) {
                  case 0:
                    return short_name(profile.str(x.name)) < short_name(profile.str(y.name));
                  case 1:
                    return x.cls < y.cls;
                  case 2:
                    return x.count < y.count;
                  case 4:
                    return x.max_ns < y.max_ns;
                  default:
                    return x.total_ns < y.total_ns;
                }
              });
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(range_kernel_order_.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const auto& k = range_.kernels[range_kernel_order_[static_cast<std::size_t>(i)]];
        kernel_row_cells(profile.str(k.name), k);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(k.max_ns)));
      }
    }
    ImGui::EndTable();
  }
  ImGui::TableNextColumn();
  ImGui::TextDisabled("BY RANK (exposed = communication with no compute under it)");
  if (ImGui::BeginTable("##rranks", 7, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"rank", "compute", "comm", "exposed", "memory", "idle", "events"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    auto values = [](const measure::RangeRankTotal& r) {
      return std::array<TimeNs, 7>{r.rank,      r.compute_ns, r.comm_ns, r.exposed_comm_ns,
                                   r.memory_ns, r.idle_ns,    r.events};
    };
    sort_rows(range_rank_order_, range_.ranks,
              [&](const measure::RangeRankTotal& x, const measure::RangeRankTotal& y, int column) {
                const auto c = static_cast<std::size_t>(std::clamp(column, 0, 6));
                return values(x)[c] < values(y)[c];
              });
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(range_rank_order_.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const auto& rr = range_.ranks[range_rank_order_[static_cast<std::size_t>(i)]];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", rr.rank);
        const auto v = values(rr);
        for (std::size_t c = 1; c < 6; ++c) {
          ImGui::TableNextColumn();
          if (c == 3 && v[c] > 0)
            ImGui::TextColored(to_vec4(kColExposed), "%s",
                               duration_text(t, sizeof t, static_cast<double>(v[c])));
          else
            ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(v[c])));
        }
        ImGui::TableNextColumn();
        ImGui::Text("%lld", static_cast<long long>(rr.events));
      }
    }
    ImGui::EndTable();
  }
  ImGui::EndTable();
}

}  // namespace meshscope::gui
