// meshscope report PROFILE [--json]: the measured breakdown per rank and step, idle time per stream, top
// kernels, collectives with bandwidth, cross-rank matching and stragglers. The numbers come from
// analysis/measure; this file only formats them (text tables that fit 120 columns, or JSON with the keys
// fixed in DESIGN.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/measure/findings.hpp"
#include "analysis/measure/launch_queue.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
#include "app/command.hpp"
#include "app/report_roofline.hpp"
#include "app/text_report.hpp"
#include "job/report_analysis.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/text_format.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::app {
namespace {

using measure::ActivityClass;
using measure::Analysis;
using measure::RankResult;

struct Options {
  std::vector<std::string> inputs;
  std::string title;  // the header's name: the profile's file name, or the traces
  bool json = false;
  bool hta = false;
  std::vector<std::string> rules;
  unsigned threads = 0;
  std::size_t top = 10;
  bool cpu_ops = false;
  Streaming stream = Streaming::kAuto;
};

// What the report prints beside the main analysis: the launch/queue and pipeline sections, the
// longest host-bound launches, whether CPU operators were read.
using Sections = ReportAnalysis;

double us(TimeNs ns) {
  return static_cast<double>(ns) / 1e3;
}
double ms(TimeNs ns) {
  return static_cast<double>(ns) / 1e6;
}
double pct(TimeNs part, TimeNs whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string shorten(std::string_view name, std::size_t width) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width - 3)) + "...";
}

std::vector<std::string> profile_notes(const Profile& profile, const Options& options) {
  std::vector<std::string> notes;
  if (profile.schema_version() != kSchemaVersion) {
    notes.push_back(
        fmt::format("the profile has schema_version {} and this meshscope reads {}: tables it does not "
                    "know were skipped, so some figures may be missing",
                    profile.schema_version(), kSchemaVersion));
  }
  if (options.hta) {
    notes.push_back(
        "HTA-compatible figures: times rounded inward to whole µs, GPU work launched outside the traced "
        "steps left out, sync records counted as compute (see docs/ANALYSIS.md)");
  }
  return notes;
}

const char* evidence_key(measure::Evidence e) {
  switch (e) {
    case measure::Evidence::kKind:
      return "kind";
    case measure::Evidence::kMetadata:
      return "metadata";
    case measure::Evidence::kRule:
      return "rule";
    case measure::Evidence::kDefault:
      return "default";
  }
  return "default";
}

// What put a kernel into its class, in words: "name rule contains "deep_ep::" (deep_ep: deepseek-ai/DeepEP
// ...)".
std::string reason_text(const Analysis& a, const measure::ClassReason& reason, ActivityClass cls) {
  switch (reason.evidence) {
    case measure::Evidence::kKind:
      return cls == ActivityClass::kSync ? "the record is a synchronisation"
                                         : "the record is a memcpy or memset";
    case measure::Evidence::kMetadata:
      return "collective metadata (the trace names the collective this kernel ran)";
    case measure::Evidence::kDefault:
      return "no rule matched (everything else is compute)";
    case measure::Evidence::kRule:
      break;
  }
  const measure::ClassRule& rule = a.rules[static_cast<std::size_t>(reason.rule)];
  return fmt::format("name rule {} \"{}\" ({}: {})", measure::to_string(rule.match), rule.pattern,
                     rule.library, rule.source);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

void breakdown_fields(JsonWriter& j, const Breakdown& b) {
  j.field("span_us", us(b.span_ns));
  j.field("busy_us", us(b.busy_ns));
  j.field("idle_us", us(b.idle_ns));
  j.field("compute_us", us(b.compute_ns));
  j.field("comm_us", us(b.comm_ns));
  j.field("memory_us", us(b.memory_ns));
  j.field("overlap_us", us(b.overlap_ns));
  j.field("exposed_comm_us", us(b.exposed_comm_ns));
  j.field("memory_only_us", us(b.memory_only_ns));
  j.field("sync_us", us(b.sync_ns));
}

void latency_json(JsonWriter& j, const measure::LatencyStats& s) {
  j.begin_object();
  j.field("count", s.count).field("min", us(s.min_ns)).field("p50", us(s.p50_ns)).field("p90", us(s.p90_ns));
  j.field("p99", us(s.p99_ns)).field("max", us(s.max_ns)).field("mean", us(s.mean_ns));
  j.key("histogram").begin_array();
  for (int k = 0; k < measure::LatencyStats::kBuckets; ++k) {
    if (s.histogram[static_cast<std::size_t>(k)] == 0) continue;
    j.begin_object().key("from");
    if (k == 0) {
      j.null();
    } else {
      j.value(us(measure::LatencyStats::bucket_start_ns(k)));
    }
    j.key("to");
    if (k == measure::LatencyStats::kBuckets - 1) {
      j.null();
    } else {
      j.value(us(measure::LatencyStats::bucket_start_ns(k + 1)));
    }
    j.field("count", s.histogram[static_cast<std::size_t>(k)]).end_object();
  }
  j.end_array();
  j.end_object();
}

void host_bound_ops_json(JsonWriter& j, const Profile& profile,
                         const std::vector<measure::OpHostBound>& by_range, std::size_t top) {
  const std::vector<measure::OpHostBound> ops = measure::by_operator(profile, by_range);
  j.begin_array();
  for (std::size_t i = 0; i < ops.size() && i < top; ++i) {
    j.begin_object().key("op");
    if (ops[i].name == kNoString) {
      j.null();
    } else {
      j.value(vocabulary::operator_name(profile.str(ops[i].name)));
    }
    j.field("launches", ops[i].launches).field("gpu_idle_us", us(ops[i].gap_ns));
    j.field("device_idle_us", us(ops[i].device_idle_ns)).end_object();
  }
  j.end_array();
}

void launches_json(JsonWriter& j, const Profile& profile, const Sections& sections, const Options& options) {
  const measure::LaunchAnalysis& l = sections.launches;
  const TimeNs origin = profile.first_ns();
  j.begin_object();
  j.field("cpu_operators_loaded", sections.cpu_operators_loaded);
  std::int64_t activities = 0, linked = 0, host_bound = 0, device_dry = 0;
  TimeNs host_bound_ns = 0, device_idle_ns = 0;
  for (const auto& r : l.ranks) {
    activities += r.activities;
    linked += r.linked;
    host_bound += static_cast<std::int64_t>(r.host_bound.size());
    host_bound_ns += r.host_bound_ns;
    device_dry += r.device_dry_launches;
    device_idle_ns += r.device_idle_ns;
  }
  j.field("activities", activities).field("linked", linked);
  j.key("latency_us");
  latency_json(j, l.latency);
  j.key("idle_stream_latency_us");
  latency_json(j, l.dry_latency);
  j.field("host_bound_launches", host_bound).field("host_bound_gpu_idle_us", us(host_bound_ns));
  j.field("device_dry_launches", device_dry).field("host_bound_device_idle_us", us(device_idle_ns));
  j.key("host_bound_ops");
  host_bound_ops_json(j, profile, l.host_bound_ops, options.top);
  j.key("ranks").begin_array();
  for (const auto& rl : l.ranks) {
    const Rank& r = profile.ranks()[rl.rank_index];
    j.begin_object();
    j.field("rank", rl.rank).field("activities", rl.activities).field("linked", rl.linked);
    j.key("latency_us");
    latency_json(j, rl.latency);
    j.key("idle_stream_latency_us");
    latency_json(j, rl.dry_latency);
    j.key("streams").begin_array();
    for (const auto& q : rl.streams) {
      if (q.launches == 0) continue;
      const GpuStream& st = r.streams[q.stream_index];
      j.begin_object().field("device", st.device).field("stream", st.stream);
      j.field("launches", q.launches).field("max_queue", static_cast<std::int64_t>(q.max_length));
      j.field("mean_queue", q.mean_length).field("span_us", us(q.span_ns)).field("empty_us", us(q.empty_ns));
      j.end_object();
    }
    j.end_array();
    j.field("host_bound_launches", static_cast<std::int64_t>(rl.host_bound.size()));
    j.field("host_bound_gpu_idle_us", us(rl.host_bound_ns));
    j.field("host_bound_in_os_calls_us", us(rl.host_bound_in_os_calls_ns));
    j.field("host_bound_off_cpu_us", us(rl.host_bound_off_cpu_ns));
    j.field("host_bound_scheduled", rl.host_bound_scheduled);
    j.field("device_dry_launches", rl.device_dry_launches);
    j.field("host_bound_device_idle_us", us(rl.device_idle_ns));
    j.key("host_bound_ops");
    host_bound_ops_json(j, profile, rl.host_bound_ops, options.top);
    // The longest waits, each with the kernel, its stream and the CPU operator that launched it.
    j.key("host_bound").begin_array();
    for (const measure::HostBoundRow& h : sections.longest_host_bound[rl.rank_index]) {
      j.begin_object().field("name", profile.str(h.kernel));
      j.field("device", h.device).field("stream", h.stream);
      j.field("start_us", us(h.start_ns - origin)).field("gpu_idle_us", us(h.gap_ns));
      j.field("launched_after_idle_us", us(h.launched_after_dry_ns));
      j.field("device_idle_us", us(h.device_idle_ns));
      j.field("launch", profile.str(h.launch)).key("op");
      if (h.has_op) {
        j.value(profile.str(h.op));
      } else {
        j.null();
      }
      j.key("os_call");
      if (h.os_call != kNoString) {
        j.value(profile.str(h.os_call));
      } else {
        j.null();
      }
      j.field("os_call_us", us(h.os_call_ns)).key("off_cpu_us");
      if (h.off_cpu_ns >= 0) {
        j.value(us(h.off_cpu_ns));
      } else {
        j.null();
      }
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("notes").begin_array();
  for (const auto& note : l.notes) j.value(note);
  j.end_array();
  j.end_object();
}

void pipeline_json(JsonWriter& j, const Profile& profile, const measure::PipelineReport& p) {
  const TimeNs origin = profile.first_ns();
  j.begin_object();
  j.field("found", p.found);
  j.key("groups").begin_array();
  for (const auto& g : p.groups) {
    j.begin_object();
    j.key("ranks").begin_array();
    for (const auto r : g.ranks) j.value(static_cast<std::int64_t>(r));
    j.end_array();
    j.field("source", g.source).field("schedule", g.schedule);
    j.field("micro_batches", static_cast<std::int64_t>(g.micro_batches));
    j.field("virtual_stages", static_cast<std::int64_t>(g.virtual_stages));
    j.field("stages_matching", static_cast<std::int64_t>(g.stages_matching));
    j.field("predicted_bubble", g.predicted_bubble).field("imbalanced_bubble", g.imbalanced_bubble);
    j.field("measured_bubble", g.measured_bubble);
    j.field("slowest_stage", static_cast<std::int64_t>(g.slowest_stage)).field("imbalance", g.imbalance);
    j.key("steps").begin_array();
    for (const auto& s : g.steps) {
      j.begin_object().field("step", s.step).field("start_us", us(s.start_ns - origin));
      j.field("dur_us", us(s.end_ns - s.start_ns)).field("mean_bubble", s.mean_bubble_fraction).end_object();
    }
    j.end_array();
    j.key("stages").begin_array();
    for (const auto& st : g.stages) {
      j.begin_object().field("stage", static_cast<std::int64_t>(st.stage)).field("rank", st.rank);
      j.field("in_profile", st.rank_index >= 0).field("mean_bubble", st.mean_bubble_fraction);
      j.key("steps").begin_array();
      for (const auto& s : st.steps) {
        j.begin_object().field("step", s.step);
        j.field("forwards", static_cast<std::int64_t>(s.forwards));
        j.field("backwards", static_cast<std::int64_t>(s.backwards));
        j.field("warmup", static_cast<std::int64_t>(s.warmup));
        j.field("busy_us", us(s.busy_ns)).field("bubble_us", us(s.bubble_ns));
        j.field("bubble", s.bubble_fraction);
        j.key("blocks").begin_array();
        for (const auto& b : s.blocks) {
          j.begin_object().field("forward", b.forward).field("chunk", static_cast<std::int64_t>(b.chunk));
          j.field("micro_batch", static_cast<std::int64_t>(b.micro_batch));
          j.field("start_us", us(b.start_ns - origin)).field("dur_us", us(b.end_ns - b.start_ns));
          j.end_object();
        }
        j.end_array();
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("notes").begin_array();
  for (const auto& note : p.notes) j.value(note);
  j.end_array();
  j.end_object();
}

// "profile": its schema, ranks, the devices they used and the events it holds.
void profile_json(JsonWriter& j, const Profile& profile) {
  j.key("profile").begin_object();
  j.field("schema_version", profile.schema_version());
  j.field("ranks", static_cast<std::int64_t>(profile.ranks().size()));
  j.field("world_size", profile.world_size());
  j.key("devices").begin_array();
  for (const Rank& r : profile.ranks()) {
    for (const measure::DeviceUse& d : measure::devices_used(r)) {
      j.begin_object().field("rank", r.rank).field("device", d.device).key("name");
      if (d.info && !d.info->name.empty()) {
        j.value(d.info->name);
      } else {
        j.null();
      }
      j.end_object();
    }
  }
  j.end_array();
  const EventCounts& n = profile.counts();
  j.key("events").begin_object();
  j.field("kernel", n.kernel).field("memcpy", n.memcpy).field("memset", n.memset).field("sync", n.sync);
  j.field("runtime", n.runtime).field("driver", n.driver).field("cpu_op", n.cpu_op);
  j.field("annotation", n.annotation).field("python_function", n.python_function).field("step", n.step);
  j.field("gpu_annotation", n.gpu_annotation).field("nvtx", n.nvtx).field("other", n.other);
  j.field("os_runtime", n.os_runtime).field("on_cpu", n.on_cpu).field("cpu_sample", n.cpu_sample);
  j.field("collective", n.collective).field("flow", n.flow);
  j.end_object();
  j.end_object();
}

// "ranks": each rank's breakdown, steps and streams.
void ranks_json(JsonWriter& j, const Profile& profile, const Analysis& a) {
  const TimeNs origin = profile.first_ns();
  j.key("ranks").begin_array();
  for (const RankResult& rr : a.ranks) {
    const Rank& r = profile.ranks()[rr.rank_index];
    j.begin_object();
    j.field("rank", rr.rank);
    breakdown_fields(j, rr.total);
    j.field("overlap_pct_of_comm", pct(rr.total.overlap_ns, rr.total.comm_ns));
    j.field("exposed_segments", static_cast<std::int64_t>(rr.exposed_comm.size()));
    j.field("collective_wait_us", us(rr.collective_wait_ns));
    j.field("collective_transfer_us", us(rr.collective_transfer_ns));
    j.field("step_source", rr.step_source);
    j.key("steps").begin_array();
    for (const auto& s : rr.steps) {
      j.begin_object();
      j.field("step", s.number);
      j.field("start_us", s.gpu.activities > 0 ? us(s.gpu.start_ns - origin) : us(s.cpu_start_ns - origin));
      j.field("dur_us", us(s.gpu.span_ns));
      j.field("compute_us", us(s.gpu.compute_ns));
      j.field("comm_us", us(s.gpu.comm_ns));
      j.field("exposed_comm_us", us(s.gpu.exposed_comm_ns));
      j.field("idle_us", us(s.gpu.idle_ns));
      j.field("memory_us", us(s.gpu.memory_ns));
      j.field("memory_only_us", us(s.gpu.memory_only_ns));
      j.field("busy_us", us(s.gpu.busy_ns));
      j.field("cpu_start_us", us(s.cpu_start_ns - origin));
      j.field("cpu_dur_us", us(s.cpu_end_ns - s.cpu_start_ns));
      j.field("activities", s.gpu.activities);
      j.end_object();
    }
    j.end_array();
    j.key("streams").begin_array();
    for (const auto& s : rr.streams) {
      const GpuStream& st = r.streams[s.stream_index];
      j.begin_object();
      j.field("device", st.device).field("stream", st.stream);
      j.field("device_wide", vocabulary::is_device_wide_stream(st.stream));
      j.field("busy_us", us(s.busy_ns)).field("idle_us", us(s.idle_ns));
      j.field("host_bound_us", us(s.host_bound_ns)).field("kernel_gap_us", us(s.kernel_gap_ns));
      j.field("other_us", us(s.other_ns));
      j.field("work", measure::to_string(s.work));
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
}

// "collectives", "matching" and "stragglers".
void collectives_json(JsonWriter& j, const Analysis& a) {
  const auto& c = a.collectives;
  j.key("collectives").begin_array();
  for (const auto& s : c.stats) {
    j.begin_object();
    j.field("op", s.op).field("op_source", measure::to_string(s.op_source));
    j.key("group_size");
    s.group_size > 0 ? j.value(s.group_size) : j.null();
    j.key("bytes");
    s.bytes > 0 ? j.value(s.bytes) : j.null();
    j.field("count", s.count);
    j.field("mean_us", us(s.mean_ns)).field("algbw_gbps", s.algbw_gbps).field("busbw_gbps", s.busbw_gbps);
    j.field("total_us", us(s.total_ns)).field("p50_us", us(s.p50_ns)).field("p95_us", us(s.p95_ns));
    j.field("max_us", us(s.max_ns)).field("from_metadata", s.from_metadata);
    j.end_object();
  }
  j.end_array();
  j.key("matching").begin_object();
  j.field("instances", static_cast<std::int64_t>(c.instances.size())).field("matched", c.matched);
  j.field("matched_by_end_time", c.matched_by_end_time);
  j.field("incomplete", c.incomplete).field("unmatched_ops", c.unmatched_ops).field("solo_ops", c.solo_ops);
  j.field("unpaired_ops", c.unpaired_ops);
  j.field("mean_skew_us", us(c.mean_skew_ns));
  j.end_object();
  j.key("stragglers").begin_array();
  for (const auto& s : c.stragglers) {
    j.begin_object();
    j.field("rank", s.rank).field("instances", s.instances).field("times_last", s.times_last);
    j.field("late_us", us(s.late_ns))
        .field("caused_wait_us", us(s.caused_wait_ns))
        .field("wait_us", us(s.wait_ns));
    j.end_object();
  }
  j.end_array();
}

// "top_kernels" and "classification": per class its longest kernels and what classified its time.
void classes_json(JsonWriter& j, const Profile& profile, const Analysis& a) {
  j.key("top_kernels").begin_object();
  for (int cls = 0; cls < measure::kClassCount; ++cls) {
    j.key(measure::to_string(static_cast<ActivityClass>(cls))).begin_array();
    for (const auto& k : a.top_kernels[cls]) {
      j.begin_object().field("name", profile.str(k.name)).field("count", k.count);
      j.field("total_us", us(k.total_ns)).field("mean_us", us(k.count > 0 ? k.total_ns / k.count : 0));
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
  j.key("classification").begin_object();
  for (int cls = 0; cls < measure::kClassCount; ++cls) {
    j.key(measure::to_string(static_cast<ActivityClass>(cls))).begin_array();
    for (const auto& reason : a.reasons[cls]) {
      j.begin_object().field("evidence", evidence_key(reason.evidence));
      if (reason.rule >= 0) {
        const measure::ClassRule& rule = a.rules[static_cast<std::size_t>(reason.rule)];
        j.field("match", measure::to_string(rule.match)).field("pattern", rule.pattern);
        j.field("library", rule.library).field("source", rule.source);
      }
      j.field("names", reason.names).field("total_us", us(reason.total_ns));
      j.field("largest", profile.str(reason.largest)).field("largest_us", us(reason.largest_ns));
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

void write_json(const Profile& profile, const Analysis& a, const Options& options, const Sections& sections) {
  JsonWriter j(true);
  j.begin_object();
  profile_json(j, profile);
  j.field("hta_compatible", options.hta);

  ranks_json(j, profile, a);
  collectives_json(j, a);
  classes_json(j, profile, a);
  j.key("launches");
  launches_json(j, profile, sections, options);
  j.key("pipeline");
  pipeline_json(j, profile, sections.pipeline);
  j.key("notes").begin_array();
  for (const auto& note : profile_notes(profile, options)) j.value(note);
  for (const auto& note : a.notes) j.value(note);
  j.end_array();
  j.key("roofline");
  {
    PhaseTimer timer("report: roofline");
    write_roofline_json(j, profile);
  }
  j.end_object();
  std::string out = j.str();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
}

// ---------------------------------------------------------------------------------------------------------------
// Text

const char* op_source_text(measure::OpSource s) {
  switch (s) {
    case measure::OpSource::kMetadata:
      return "metadata";
    case measure::OpSource::kCpuOp:
      return "CPU op";
    case measure::OpSource::kKernelName:
      return "kernel";
  }
  return "kernel";
}

// Sentences a user can act on (measure::findings): the straggler first, when the collectives show one.
void findings(TextReport& t, const Profile& profile, const Analysis& a) {
  t.heading("What stands out");
  for (const measure::Finding& f : measure::findings(profile, a)) t.bullet(f.text);
}

// "2 GPUs used: NVIDIA A100-SXM4-80GB x2" from the devices each rank ran work on.
std::string devices_text(const Profile& profile) {
  std::vector<std::pair<std::string, int>> names;
  int used = 0;
  for (const Rank& r : profile.ranks()) {
    for (const measure::DeviceUse& d : measure::devices_used(r)) {
      ++used;
      const std::string name =
          d.info && !d.info->name.empty() ? d.info->name : std::string("model not in the trace");
      auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
      if (it == names.end()) {
        names.push_back({name, 1});
      } else {
        ++it->second;
      }
    }
  }
  if (used == 0) return "no GPU work";
  std::string out = fmt::format("{} GPU{} used: ", used, used == 1 ? "" : "s");
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += fmt::format("{}{}{}", i ? ", " : "", names[i].first,
                       names[i].second > 1 ? fmt::format(" x{}", names[i].second) : "");
  }
  return out;
}

std::string latency_row(std::string_view label, const measure::LatencyStats& s) {
  if (s.count == 0) return fmt::format("  {:<24} {:>9}   none", label, 0);
  return fmt::format("  {:<24} {:>9} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>10.1f} {:>9.1f}", label, s.count,
                     us(s.min_ns), us(s.p50_ns), us(s.p90_ns), us(s.p99_ns), us(s.max_ns), us(s.mean_ns));
}

std::string histogram_text(const measure::LatencyStats& s) {
  std::string out;
  for (int k = 0; k < measure::LatencyStats::kBuckets; ++k) {
    const std::int64_t n = s.histogram[static_cast<std::size_t>(k)];
    if (n == 0) continue;
    std::string range;
    if (k == 0) {
      range = "< 0";
    } else if (k == measure::LatencyStats::kBuckets - 1) {
      range = fmt::format(">= {:g}", us(measure::LatencyStats::bucket_start_ns(k)));
    } else {
      range = fmt::format("{:g}-{:g}", us(measure::LatencyStats::bucket_start_ns(k)),
                          us(measure::LatencyStats::bucket_start_ns(k + 1)));
    }
    out += fmt::format("{}{} µs: {}", out.empty() ? "" : ", ", range, n);
  }
  return out;
}

// Where the profile holds the OS's record of the threads (Nsight exports): what the launching threads did
// while their streams sat dry before the host-bound launches' calls.
void host_bound_threads_text(TextReport& t, const Profile& profile, const Sections& sections) {
  TimeNs in_os = 0, off_cpu = 0, before_calls = 0, scheduled_before = 0;
  std::int64_t scheduled = 0, launches = 0;
  for (const auto& r : sections.launches.ranks) {
    in_os += r.host_bound_in_os_calls_ns;
    off_cpu += r.host_bound_off_cpu_ns;
    scheduled += r.host_bound_scheduled;
    launches += static_cast<std::int64_t>(r.host_bound.size());
    for (const auto& h : r.host_bound) {
      before_calls += h.launched_after_dry_ns;
      if (h.off_cpu_ns >= 0) scheduled_before += h.launched_after_dry_ns;
    }
  }
  if (profile.counts().os_runtime == 0 && scheduled == 0) return;
  std::string text = fmt::format(
      "before those launch calls (from the end of their stream's earlier work, {} in all), the launching "
      "threads ",
      duration_text(before_calls));
  if (profile.counts().os_runtime > 0) {
    text += fmt::format("were in OS runtime calls for {}", duration_text(in_os));
    const measure::HostBoundRow* longest = nullptr;
    std::int32_t longest_rank = 0;
    for (const auto& r : sections.launches.ranks) {
      for (const auto& h : sections.longest_host_bound[r.rank_index]) {
        if (h.os_call != kNoString && (!longest || h.os_call_ns > longest->os_call_ns)) {
          longest = &h;
          longest_rank = r.rank;
        }
      }
    }
    if (longest) {
      text += fmt::format(" (the longest: {} for {} before {} on rank {})", profile.str(longest->os_call),
                          duration_text(longest->os_call_ns), shorten(profile.str(longest->kernel), 48),
                          longest_rank);
    }
  } else {
    text += "made no OS runtime calls that were traced (the profile holds none)";
  }
  if (scheduled > 0) {
    const double off =
        scheduled_before > 0 ? static_cast<double>(off_cpu) / static_cast<double>(scheduled_before) : 0;
    text += fmt::format(
        "; they were off their CPU core {} of the {} whose thread scheduling is recorded ({} of {} "
        "launches){}",
        duration_text(off_cpu), duration_text(scheduled_before), scheduled, launches,
        off < 0.1   ? ": running, so the time went to work on the CPU, not to waiting"
        : off > 0.5 ? ": mostly descheduled, blocked or preempted"
                    : "");
  } else {
    text += "; their thread scheduling is not recorded";
  }
  t.bullet(text);
}

void launches_text(TextReport& t, const Profile& profile, const Sections& sections, const Options& options) {
  const measure::LaunchAnalysis& l = sections.launches;
  t.heading("Launches and queues (CPU launch call -> GPU activity, by correlation id)");
  std::int64_t activities = 0, linked = 0, host_bound = 0, device_dry = 0;
  TimeNs host_bound_ns = 0, device_idle_ns = 0;
  for (const auto& r : l.ranks) {
    activities += r.activities;
    linked += r.linked;
    host_bound += static_cast<std::int64_t>(r.host_bound.size());
    host_bound_ns += r.host_bound_ns;
    device_dry += r.device_dry_launches;
    device_idle_ns += r.device_idle_ns;
  }
  if (activities == 0) {
    t.line("no GPU activity in this profile");
    return;
  }
  if (linked == 0) {
    t.line("none of the {} GPU activities has its launch call in the profile (no correlation ids)",
           activities);
    return;
  }
  t.line("{} of {} GPU activities have their launch call in the profile", linked, activities);
  t.line("Launch delay (GPU start - end of the launch call), µs:");
  t.line("  {:<24} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}", "", "count", "min", "p50", "p90", "p99",
         "max", "mean");
  t.line("{}", latency_row("every launch", l.latency));
  t.line("{}", latency_row("onto an idle stream", l.dry_latency));
  t.bullet("every launch: " + histogram_text(l.latency));

  // Queue length per stream: the streams with the longest mean queues.
  struct Row {
    std::int32_t rank;
    const measure::StreamQueue* q;
    const GpuStream* st;
  };
  std::vector<Row> rows;
  for (const auto& rl : l.ranks) {
    for (const auto& q : rl.streams) {
      if (q.launches > 0)
        rows.push_back({rl.rank, &q, &profile.ranks()[rl.rank_index].streams[q.stream_index]});
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& x, const Row& y) { return x.q->mean_length > y.q->mean_length; });
  t.line("Queue length per stream (launched and not yet finished), longest mean first:");
  t.line("  {:>5} {:>6} {:>10} {:>9} {:>5} {:>6} {:>11} {:>7}", "rank", "device", "stream", "launches", "max",
         "mean", "span ms", "empty");
  const std::size_t shown = std::min(rows.size(), options.top);
  for (std::size_t i = 0; i < shown; ++i) {
    const Row& r = rows[i];
    t.line("  {:>5} {:>6} {:>10} {:>9} {:>5} {:>6.2f} {:>11.3f} {:>6.1f}%", r.rank, r.st->device,
           r.st->stream, r.q->launches, r.q->max_length, r.q->mean_length, ms(r.q->span_ns),
           pct(r.q->empty_ns, r.q->span_ns));
  }
  if (rows.size() > shown) t.line("  ... {} more streams in --json", rows.size() - shown);

  if (host_bound == 0) {
    t.bullet("host-bound launches: none (no activity was launched after its stream had run dry)");
    return;
  }
  t.bullet(fmt::format(
      "host-bound launches: {} activities were launched after their stream had run dry; their streams sat "
      "idle {} waiting for them (summed over streams and ranks); {} of them were launched after the whole "
      "GPU had run dry (nothing ran on any of its streams) and ended it, after {} of GPU idle in all",
      host_bound, duration_text(host_bound_ns), device_dry, duration_text(device_idle_ns)));
  host_bound_threads_text(t, profile, sections);
  const bool ops = sections.cpu_operators_loaded || profile.counts().cpu_op == 0;
  t.line("  {:<64} {:>9} {:>15} {:>13}",
         ops ? "launched from (CPU operator)" : "launched from (innermost CPU range loaded)", "launches",
         "stream idle ms", "GPU dry ms");
  const std::vector<measure::OpHostBound> by_op = measure::by_operator(profile, l.host_bound_ops);
  for (std::size_t i = 0; i < by_op.size() && i < options.top; ++i) {
    const auto& op = by_op[i];
    t.line("  {:<64} {:>9} {:>15.3f} {:>13.3f}",
           op.name == kNoString ? "(no CPU range open)"
                                : shorten(vocabulary::operator_name(profile.str(op.name)), 64),
           op.launches, ms(op.gap_ns), ms(op.device_idle_ns));
  }
  if (!ops) {
    t.line("  CPU operators were not loaded: --cpu-ops names the operator that launched each activity");
  }
}

void pipeline_text(TextReport& t, const measure::PipelineReport& p) {
  t.heading("Pipeline schedule");
  if (!p.found) {
    for (const auto& note : p.notes) t.bullet(note);
    return;
  }
  double lo = 1, hi = 0;
  for (const auto& g : p.groups) {
    lo = std::min(lo, g.measured_bubble);
    hi = std::max(hi, g.measured_bubble);
  }
  if (p.groups.size() > 1) {
    t.bullet(
        fmt::format("{} pipelines; measured bubble {:.1f} % to {:.1f} % (the first is shown; all in --json)",
                    p.groups.size(), 100 * lo, 100 * hi));
  }
  const auto& g = p.groups.front();
  t.bullet(fmt::format(
      "{} stages ({}): schedule {}, {} micro-batches, {} model chunk(s) per stage; the warm-up of {} of {} "
      "stages matches it",
      g.ranks.size(), g.source, g.schedule, g.micro_batches, g.virtual_stages, g.stages_matching,
      g.stages.size()));
  t.bullet(
      fmt::format("bubble: measured {:.1f} %; predicted (p-1)/(v*m+p-1) = {:.1f} %; the same schedule with "
                  "each stage's measured work {:.1f} % (slowest stage {}, {:.2f}x the mean stage)",
                  100 * g.measured_bubble, 100 * g.predicted_bubble, 100 * g.imbalanced_bubble,
                  g.slowest_stage, g.imbalance));
  t.line("  {:>5} {:>6} {:>8} {:>8} {:>8} {:>14} {:>16} {:>9}", "stage", "rank", "forward", "backward",
         "warm-up", "busy ms/step", "bubble ms/step", "bubble");
  for (const auto& st : g.stages) {
    if (st.rank_index < 0 || st.steps.empty()) {
      t.line("  {:>5} {:>6} not in the profile", st.stage, st.rank);
      continue;
    }
    double busy = 0, bubble = 0;
    for (const auto& s : st.steps) {
      busy += ms(s.busy_ns);
      bubble += ms(s.bubble_ns);
    }
    const double n = static_cast<double>(st.steps.size());
    const auto& first = st.steps.front();
    t.line("  {:>5} {:>6} {:>8} {:>8} {:>8} {:>14.3f} {:>16.3f} {:>8.1f}%", st.stage, st.rank, first.forwards,
           first.backwards, first.warmup, busy / n, bubble / n, 100 * st.mean_bubble_fraction);
  }
  t.line("  forward/backward/warm-up: the first step's blocks; busy and bubble: means over {} step(s)",
         g.steps.size());
  for (const auto& note : p.notes) t.bullet(note);
}

// "N steps on M ranks" (distinct step numbers), or "no steps".
std::string steps_summary(const Analysis& a) {
  std::vector<std::int64_t> numbers;
  std::size_t ranks_with_steps = 0;
  for (const RankResult& rr : a.ranks) {
    if (!rr.steps.empty()) ++ranks_with_steps;
    for (const auto& s : rr.steps) numbers.push_back(s.number);
  }
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  if (numbers.empty()) return "no steps";
  return fmt::format("{} step{} on {} rank{}", numbers.size(), numbers.size() == 1 ? "" : "s",
                     ranks_with_steps, ranks_with_steps == 1 ? "" : "s");
}

void header_text(TextReport& t, const Profile& profile, const Analysis& a, const Options& options) {
  const EventCounts& n = profile.counts();
  t.line("meshscope report: {}", options.title);
  t.line("schema {}, {} rank(s) of world size {}, {}", profile.schema_version(), profile.ranks().size(),
         profile.world_size(), devices_text(profile));
  auto count = [](std::int64_t value, std::string_view noun) {
    return fmt::format("{} {}{}", value, noun, value == 1 ? "" : "s");
  };
  t.line("{}, {} memcpy, {} memset, {} sync, {}, {}, {}, {}", count(n.kernel, "kernel"), n.memcpy, n.memset,
         n.sync, count(n.collective, "collective"), count(n.runtime + n.driver, "runtime call"),
         count(n.cpu_op, "CPU op"), steps_summary(a));
  if (options.hta) t.line("HTA-compatible mode (see notes)");
}

void rank_breakdown_text(TextReport& t, const Analysis& a) {
  t.heading("GPU time per rank (ms; whole profile)");
  t.line("{:>5} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>9} {:>9}", "rank", "span",
         "idle", "idle%", "compute", "comm", "memory", "overlap", "exposed", "hidden%", "coll wait", "sync");
  for (const RankResult& rr : a.ranks) {
    const Breakdown& b = rr.total;
    t.line(
        "{:>5} {:>10.3f} {:>10.3f} {:>6.1f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>7.1f} "
        "{:>9.3f} {:>9.3f}",
        rr.rank, ms(b.span_ns), ms(b.idle_ns), pct(b.idle_ns, b.span_ns), ms(b.compute_ns), ms(b.comm_ns),
        ms(b.memory_ns), ms(b.overlap_ns), ms(b.exposed_comm_ns), pct(b.overlap_ns, b.comm_ns),
        ms(rr.collective_wait_ns), ms(b.sync_ns));
  }
  t.line("span = first start to last end of GPU work; idle = span - busy; hidden% = overlap / comm;");
  t.line(
      "exposed = communication with no compute running; coll wait = time in collectives before the last peer "
      "arrived");
}

// Up to 64 rank-steps: one row each.
void step_rows_text(TextReport& t, const Profile& profile, const Analysis& a) {
  const TimeNs origin = profile.first_ns();
  t.line("{:>5} {:>8} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}", "rank", "step", "gpu start",
         "gpu dur", "compute", "exposed", "mem only", "idle", "comm", "GPU work");
  for (const RankResult& rr : a.ranks) {
    for (const auto& s : rr.steps) {
      if (s.gpu.activities == 0) {
        t.line("{:>5} {:>8} {:>11.3f} {:>10}   no GPU work launched from this step", rr.rank, s.number,
               ms(s.cpu_start_ns - origin), "-");
        continue;
      }
      t.line("{:>5} {:>8} {:>11.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>8}",
             rr.rank, s.number, ms(s.gpu.start_ns - origin), ms(s.gpu.span_ns), ms(s.gpu.compute_ns),
             ms(s.gpu.exposed_comm_ns), ms(s.gpu.memory_only_ns), ms(s.gpu.idle_ns), ms(s.gpu.comm_ns),
             s.gpu.activities);
    }
  }
  t.line("gpu start = first GPU work of the step, ms since the profile's first event;");
  t.line("GPU work = kernels, copies and memsets launched from the step");
}

// Many rank-steps: one row per step number, mean over ranks and the slowest rank.
void step_means_text(TextReport& t, const Analysis& a) {
  struct StepAggregate {
    std::int64_t number;
    int ranks = 0;
    TimeNs dur = 0, compute = 0, exposed = 0, memory = 0, idle = 0, comm = 0, slowest = -1;
    std::int32_t slowest_rank = -1;
  };
  std::vector<StepAggregate> steps;
  for (const RankResult& rr : a.ranks) {
    for (const auto& s : rr.steps) {
      auto it = std::find_if(steps.begin(), steps.end(),
                             [&](const StepAggregate& g) { return g.number == s.number; });
      if (it == steps.end()) {
        steps.push_back({s.number});
        it = steps.end() - 1;
      }
      ++it->ranks;
      it->dur += s.gpu.span_ns;
      it->compute += s.gpu.compute_ns;
      it->exposed += s.gpu.exposed_comm_ns;
      it->memory += s.gpu.memory_only_ns;
      it->idle += s.gpu.idle_ns;
      it->comm += s.gpu.comm_ns;
      if (s.gpu.span_ns > it->slowest) {
        it->slowest = s.gpu.span_ns;
        it->slowest_rank = rr.rank;
      }
    }
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepAggregate& x, const StepAggregate& y) { return x.number < y.number; });
  t.line("{:>8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}", "step", "ranks", "mean dur",
         "compute", "exposed", "mem only", "idle", "comm", "max dur", "slowest rank");
  for (const StepAggregate& g : steps) {
    const double k = g.ranks > 0 ? static_cast<double>(g.ranks) : 1.0;
    t.line("{:>8} {:>6} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>12}",
           g.number, g.ranks, ms(g.dur) / k, ms(g.compute) / k, ms(g.exposed) / k, ms(g.memory) / k,
           ms(g.idle) / k, ms(g.comm) / k, ms(g.slowest), g.slowest_rank);
  }
  t.line("means over the ranks that ran each step");
}

// Steps: the columns after "gpu dur" add up to it; comm is shown apart (hidden + exposed).
void steps_text(TextReport& t, const Profile& profile, const Analysis& a) {
  std::size_t rows = 0;
  for (const RankResult& rr : a.ranks) rows += rr.steps.size();
  if (rows == 0) return;
  std::string sources;
  for (const RankResult& rr : a.ranks) {
    if (!rr.step_source.empty() && sources.find(rr.step_source) == std::string::npos) {
      sources += (sources.empty() ? "" : ", ") + rr.step_source;
    }
  }
  t.heading(fmt::format(
      "Steps (ms; GPU work launched from inside each step, by correlation id; boundaries from {})", sources));
  if (rows <= 64) {
    step_rows_text(t, profile, a);
  } else {
    step_means_text(t, a);
  }
  t.line(
      "gpu dur = compute + exposed + mem only + idle: exposed = communication with no compute running, mem "
      "only = copies");
  t.line(
      "under neither, idle = no GPU work (waits on syncs included); comm = all of the step's communication "
      "(hidden + exposed)");
}

void stream_idle_text(TextReport& t, const Profile& profile, const Analysis& a) {
  const auto& ranks = profile.ranks();
  t.heading("Idle time per stream (ms)");
  t.line("{:>5} {:>7} {:>9} {:>8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}", "rank", "device", "stream",
         "work", "busy", "idle", "host-bound", "kernel gap", "other", "gaps");
  const bool per_stream = a.ranks.size() <= 8;
  for (const RankResult& rr : a.ranks) {
    const Rank& r = ranks[rr.rank_index];
    if (per_stream) {
      for (const auto& s : rr.streams) {
        const GpuStream& st = r.streams[s.stream_index];
        t.line(
            "{:>5} {:>7} {:>9} {:>8} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>8}", rr.rank,
            st.device,
            vocabulary::is_device_wide_stream(st.stream) ? std::string("device") : std::to_string(st.stream),
            measure::to_string(s.work), ms(s.busy_ns), ms(s.idle_ns), ms(s.host_bound_ns),
            ms(s.kernel_gap_ns), ms(s.other_ns), s.gaps);
      }
      continue;
    }
    // Many ranks: one row per rank, the sum over its main compute streams.
    StreamIdle sum;
    TimeNs busiest = 0;
    for (const auto& s : rr.streams) busiest = std::max(busiest, s.compute_ns);
    for (const auto& s : rr.streams) {
      if (busiest == 0 || s.compute_ns * 10 < busiest) continue;
      sum.busy_ns += s.busy_ns;
      sum.idle_ns += s.idle_ns;
      sum.host_bound_ns += s.host_bound_ns;
      sum.kernel_gap_ns += s.kernel_gap_ns;
      sum.other_ns += s.other_ns;
      sum.gaps += s.gaps;
    }
    t.line("{:>5} {:>7} {:>9} {:>8} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>8}", rr.rank, "all",
           "main", "compute", ms(sum.busy_ns), ms(sum.idle_ns), ms(sum.host_bound_ns), ms(sum.kernel_gap_ns),
           ms(sum.other_ns), sum.gaps);
  }
  t.line(
      "work = the class with the most time on the stream; host-bound: the next work was launched only after "
      "the stream");
  t.line(
      "ran dry; kernel gap: queued, gap < 30 µs; other: queued but waiting longer (other streams, events, "
      "syncs).");
  t.line(
      "Communication and copy streams wait for work by design: their host-bound time is normal. Idle here is "
      "per stream");
  bool device_wide = false;
  for (const Rank& r : ranks) {
    for (const GpuStream& st : r.streams) device_wide |= vocabulary::is_device_wide_stream(st.stream);
  }
  if (!per_stream) {
    t.line(
        "more than 8 ranks: one row per rank, summed over its main compute streams (compute time at least a "
        "tenth of the stream with the most)");
  }
  if (device_wide) {
    t.line(
        "stream \"device\": device-wide synchronisations (context and event syncs), which wait on no one "
        "stream");
  }
}

// Top kernels per class, and why the largest kernels are in their class.
void kernels_text(TextReport& t, const Profile& profile, const Analysis& a) {
  t.heading("Top kernels by total time (all ranks)");
  t.line("{:<7} {:<74} {:>9} {:>12} {:>12}", "class", "name", "count", "total ms", "mean µs");
  for (int cls = 0; cls < measure::kClassCount; ++cls) {
    const auto& list = a.top_kernels[cls];
    for (std::size_t i = 0; i < list.size() && i < 5; ++i) {
      const auto& k = list[i];
      t.line("{:<7} {:<74} {:>9} {:>12.3f} {:>12.1f}", measure::to_string(static_cast<ActivityClass>(cls)),
             shorten(profile.str(k.name), 74), k.count, ms(k.total_ns),
             us(k.total_ns) / static_cast<double>(k.count));
    }
  }

  t.heading("How the kernels were classified (per class, the evidence behind the most time)");
  for (int cls = 0; cls < measure::kClassCount; ++cls) {
    const auto& reasons = a.reasons[cls];
    const auto class_name = measure::to_string(static_cast<ActivityClass>(cls));
    for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) {
      const auto& reason = reasons[i];
      t.bullet(fmt::format("{}: {:.3f} ms in {} kernel name(s), largest {} ({:.3f} ms): {}", class_name,
                           ms(reason.total_ns), reason.names, shorten(profile.str(reason.largest), 60),
                           ms(reason.largest_ns), reason_text(a, reason, static_cast<ActivityClass>(cls))));
    }
    if (reasons.size() > 3) {
      t.bullet(fmt::format("{}: {} more (--json \"classification\")", class_name, reasons.size() - 3));
    }
  }
  t.line("rules are tried in order, --rule ones first; docs/ANALYSIS.md lists them");
}

void collectives_text(TextReport& t, const Analysis& a) {
  const auto& c = a.collectives;
  t.heading(
      "Collectives (all ranks; bandwidth as nccl-tests: algbw = bytes / mean time, busbw = algbw x factor)");
  if (c.stats.empty()) {
    t.line("no communication operations in this profile");
    return;
  }
  t.line("{:<14} {:<8} {:>7} {:>10} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}", "op", "from", "group",
         "size", "count", "total ms", "mean µs", "p50 µs", "p95 µs", "algbw GB/s", "busbw GB/s");
  auto unknown_or = [](double v) {
    return std::isfinite(v) ? fmt::format("{:.2f}", v) : std::string("unknown");
  };
  for (std::size_t i = 0; i < c.stats.size() && i < 20; ++i) {
    const auto& s = c.stats[i];
    t.line("{:<14} {:<8} {:>7} {:>10} {:>7} {:>10.3f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10} {:>10}",
           shorten(s.op, 14), op_source_text(s.op_source),
           s.group_size > 0 ? fmt::format("{}", s.group_size) : "unknown",
           s.bytes > 0 ? bytes_text(s.bytes) : "unknown", s.count, ms(s.total_ns), us(s.mean_ns),
           us(s.p50_ns), us(s.p95_ns), unknown_or(s.algbw_gbps), unknown_or(s.busbw_gbps));
  }
  if (c.stats.size() > 20) t.line("... {} more rows in --json", c.stats.size() - 20);
  t.line(
      "from: where the operation's name came from: metadata = the trace's collective records; CPU op = the "
      "PyTorch");
  t.line(
      "call that launched the kernel (nccl:*, c10d::*); kernel = the kernel's name. Group and size come only "
      "from metadata");
}

// Collective instances matched across ranks, and the ranks the others waited for.
void across_ranks_text(TextReport& t, const Analysis& a) {
  const auto& c = a.collectives;
  t.heading("Across ranks");
  if (c.instances.empty() && c.unmatched_ops == 0 && c.solo_ops == 0) {
    t.bullet("nothing to match: the profile holds no collective operations");
  } else if (c.instances.empty() && c.unmatched_ops == 0) {
    t.bullet(fmt::format("nothing to match: the {} collective operation(s) ran in groups of one rank",
                         c.solo_ops));
  } else {
    std::string how;
    if (c.matched_by_end_time > 0) {
      how = fmt::format(" ({} of them without metadata: in order on their stream, checked by end times)",
                        c.matched_by_end_time);
    }
    std::string unpaired;
    if (c.unpaired_ops > 0)
      unpaired = fmt::format(", {} without a peer whose end time agreed", c.unpaired_ops);
    if (c.solo_ops > 0) unpaired += fmt::format(", {} in groups of one rank", c.solo_ops);
    t.bullet(fmt::format(
        "{} collective instance(s): {} matched on every peer{} (mean arrival skew {:.1f} µs), {} with peers "
        "missing or possibly missing, {} operation(s) not matchable{}",
        c.instances.size(), c.matched, how, us(c.mean_skew_ns), c.incomplete, c.unmatched_ops, unpaired));
  }
  if (c.stragglers.empty()) return;
  t.line("{:>5} {:>10} {:>10} {:>12} {:>16} {:>14}", "rank", "last in", "of", "late ms", "peers waited ms",
         "own wait ms");
  for (std::size_t i = 0; i < c.stragglers.size() && i < 8; ++i) {
    const auto& s = c.stragglers[i];
    t.line("{:>5} {:>10} {:>10} {:>12.3f} {:>16.3f} {:>14.3f}", s.rank, s.times_last, s.instances,
           ms(s.late_ns), ms(s.caused_wait_ns), ms(s.wait_ns));
  }
  t.line("late = its arrival minus the previous peer's, summed over the instances where it came last");
}

void write_text(const Profile& profile, const Analysis& a, const Options& options, const Sections& sections) {
  TextReport t;
  header_text(t, profile, a, options);
  findings(t, profile, a);
  rank_breakdown_text(t, a);
  steps_text(t, profile, a);
  // Any GPU activity (a rank's classes: one per activity; a streamed rank gave its events back).
  if (std::any_of(a.ranks.begin(), a.ranks.end(), [](const RankResult& r) { return !r.classes.empty(); })) {
    stream_idle_text(t, profile, a);
    kernels_text(t, profile, a);
  }
  collectives_text(t, a);
  across_ranks_text(t, a);
  launches_text(t, profile, sections, options);
  pipeline_text(t, sections.pipeline);

  std::vector<std::string> notes = profile_notes(profile, options);
  notes.insert(notes.end(), a.notes.begin(), a.notes.end());
  notes.insert(notes.end(), sections.launches.notes.begin(), sections.launches.notes.end());
  if (!notes.empty()) {
    t.heading("Notes");
    for (const auto& note : notes) t.bullet(note);
  }
  std::fwrite(t.str().data(), 1, t.str().size(), stdout);
}

const bool registered = register_command(
    {"report", 30, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("report", "Measured breakdown per rank and step, collectives, stragglers");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->inputs, kProfileInputHelp)->required();
       cmd->add_flag("--json", opts->json, "machine-readable output (keys in DESIGN.md)");
       cmd->add_flag(
           "--hta-compatible", opts->hta,
           "reproduce Holistic Trace Analysis' figures (µs rounding, launch filter; docs/ANALYSIS.md)");
       cmd->add_option(
           "--rule", opts->rules,
           "extra classification rule CLASS:MATCH:PATTERN[:LIBRARY], tried before the built-in table (e.g. "
           "comm:prefix:myAllReduceKernel)");
       cmd->add_option("--threads", opts->threads, "worker threads for the analysis (default: all cores)");
       cmd->add_option("--top", opts->top, "rows in the top-kernel, queue and host-bound lists (default 10)");
       cmd->add_flag("--cpu-ops", opts->cpu_ops,
                     "load CPU operators too (slower on large profiles): host-bound launches are tied to the "
                     "operator that launched them");
       cmd->add_option(
              "--stream", opts->stream,
              "read the ranks of a large summarised profile a batch at a time instead of all at once: "
              "auto (4 million events or more), always, never (same output; docs/CLI.md)")
           ->transform(CLI::CheckedTransformer(std::map<std::string, Streaming>{
               {"auto", Streaming::kAuto}, {"always", Streaming::kAlways}, {"never", Streaming::kNever}}));
       cmd->callback([opts] {
         measure::Options options;
         for (const auto& rule : opts->rules) options.user_rules.push_back(measure::parse_rule(rule));
         options.hta_compatible = opts->hta;
         options.threads = opts->threads;
         options.top_kernels = opts->top;
         ReportOptions report;
         report.analysis = options;
         report.cpu_operators = opts->cpu_ops;
         report.top = opts->top;
         report.streaming = opts->stream;
         const Job job = open_job(opts->inputs);
         opts->title = job.title();
         const ReportAnalysis input = job.report_analysis(report);
         const Profile& profile = input.profile;
         const Analysis& analysis = input.analysis;
         if (opts->json) {
           write_json(profile, analysis, *opts, input);
         } else {
           write_text(profile, analysis, *opts, input);
         }
       });
     }});

}  // namespace
}  // namespace meshscope::app
