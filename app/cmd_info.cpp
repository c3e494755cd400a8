// meshscope info PROFILE [--json]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "app/command.hpp"
#include "app/workload_json.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;
  bool json = false;
};

struct CountRow {
  const char* name;
  std::int64_t value;
};

std::vector<CountRow> count_rows(const meshscope::EventCounts& n) {
  return {{"kernel", n.kernel},
          {"memcpy", n.memcpy},
          {"memset", n.memset},
          {"sync", n.sync},
          {"runtime", n.runtime},
          {"driver", n.driver},
          {"cpu_op", n.cpu_op},
          {"annotation", n.annotation},
          {"python_function", n.python_function},
          {"step", n.step},
          {"gpu_annotation", n.gpu_annotation},
          {"nvtx", n.nvtx},
          {"other", n.other},
          {"os_runtime", n.os_runtime},
          {"on_cpu", n.on_cpu},
          {"cpu_sample", n.cpu_sample},
          {"collective", n.collective},
          {"flow", n.flow}};
}

std::string format_duration_ns(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", v / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", v / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3f} us", v / 1e3);
  return fmt::format("{} ns", ns);
}

// What info reads of each rank: from the summaries when the profile has them (it was then loaded without its
// events), else from the events.
struct RankFacts {
  std::vector<meshscope::measure::DeviceUse> devices;
  std::size_t streams = 0, steps = 0;
};

RankFacts facts_of(const meshscope::Rank& r, const meshscope::ProfileSummary* summary) {
  const meshscope::RankSummary* s = summary ? meshscope::find_rank(*summary, r.rank) : nullptr;
  if (summary) {
    if (!s) return {};
    return {meshscope::measure::devices_used(r, *s), s->streams.size(), s->steps.size()};
  }
  return {meshscope::measure::devices_used(r), r.streams.size(), r.steps.size()};
}

meshscope::EventCounts counts_of(const meshscope::Profile& profile,
                                 const meshscope::ProfileSummary* summary) {
  if (!summary) return profile.counts();
  meshscope::EventCounts n;
  for (const auto& r : summary->ranks) n += r.counts;
  return n;
}

// PROFILE: the job's description when it has summaries (SUMMARY), else its events.
void print_info(const meshscope::Profile& profile, const meshscope::ProfileSummary* summary,
                const meshscope::compare::Workload& workload, bool json) {
  std::set<std::int64_t> steps;
  if (summary) {
    for (const auto& r : summary->ranks) {
      for (const auto& s : r.steps) steps.insert(s.number);
    }
  } else {
    for (const auto& r : profile.ranks()) {
      for (const auto& s : r.steps) steps.insert(s.number);
    }
  }
  const meshscope::EventCounts counts = counts_of(profile, summary);
  const auto first = profile.first_ns(), last = profile.last_ns();
  if (json) {
    meshscope::JsonWriter w(true);
    w.begin_object();
    w.field("schema_version", profile.schema_version());
    w.field("ranks", static_cast<std::int64_t>(profile.ranks().size()));
    w.field("world_size", profile.world_size());
    w.key("rank_list").begin_array();
    for (const auto& r : profile.ranks()) {
      const RankFacts facts = facts_of(r, summary);
      w.begin_object();
      w.field("rank", r.rank);
      w.field("source_file", r.source_file);
      w.field("rank_source", r.rank_source);
      w.field("first_ns", r.first_ns);
      w.field("last_ns", r.last_ns);
      w.field("streams", static_cast<std::int64_t>(facts.streams));
      w.field("steps", static_cast<std::int64_t>(facts.steps));
      w.field("devices_visible", static_cast<std::int64_t>(r.devices.size()));
      w.end_object();
    }
    w.end_array();
    // The devices each rank ran work on (a trace lists every GPU its process could see).
    w.key("devices").begin_array();
    for (const auto& r : profile.ranks()) {
      for (const auto& use : facts_of(r, summary).devices) {
        w.begin_object();
        w.field("rank", r.rank);
        w.field("device", use.device);
        w.key("name");
        if (use.info && !use.info->name.empty()) {
          w.value(use.info->name);
        } else {
          w.null();
        }
        if (use.info && use.info->total_memory_bytes != meshscope::kNull) {
          w.field("memory_bytes", use.info->total_memory_bytes);
        }
        if (use.info && use.info->sm_count != meshscope::kNull) w.field("sm_count", use.info->sm_count);
        w.end_object();
      }
    }
    w.end_array();
    w.field("first_ns", first);
    w.field("last_ns", last);
    w.field("span_us", static_cast<double>(last - first) / 1000.0);
    w.field("steps", static_cast<std::int64_t>(steps.size()));
    w.key("step_numbers").begin_array();
    for (const auto s : steps) w.value(s);
    w.end_array();
    w.key("events").begin_object();
    for (const auto& row : count_rows(counts)) w.field(row.name, row.value);
    w.end_object();
    w.key("workload");
    meshscope::app::write_workload_json(w, workload);
    w.end_object();
    std::printf("%s\n", w.str().c_str());
    return;
  }
  const auto& meta = profile.meta();
  auto meta_or = [&](const char* key) {
    auto it = meta.find(key);
    return it == meta.end() ? std::string("?") : it->second;
  };
  std::printf("profile     %s\n", profile.path().c_str());
  std::printf("schema      %d (written by %s %s from %s)\n", profile.schema_version(),
              meta_or("creator").c_str(), meta_or("creator_version").c_str(),
              meta_or("source_format").c_str());
  std::printf("ranks       %zu of world size %lld\n", profile.ranks().size(),
              static_cast<long long>(profile.world_size()));
  for (const auto& r : profile.ranks()) {
    const RankFacts facts = facts_of(r, summary);
    // The GPUs the rank ran work on, whichever device ids they have (not every GPU the process could see).
    std::string devices;
    for (const auto& use : facts.devices) {
      devices += fmt::format("{}GPU {}", devices.empty() ? "" : ", ", use.device);
      if (use.info && !use.info->name.empty()) {
        devices += " " + use.info->name;
        if (use.described_as >= 0) devices += fmt::format(" (described as device {})", use.described_as);
      } else {
        devices += " (model not in the trace)";
      }
      if (use.info && use.info->total_memory_bytes != meshscope::kNull) {
        devices +=
            fmt::format(" ({:.0f} GiB)", static_cast<double>(use.info->total_memory_bytes) / (1 << 30));
      }
    }
    std::printf("  rank %-4d %zu streams, %zu steps, rank from %s; %s\n", r.rank, facts.streams, facts.steps,
                r.rank_source.c_str(), devices.empty() ? "no GPU activity" : devices.c_str());
  }
  std::printf("time        %lld .. %lld ns (span %s)\n", static_cast<long long>(first),
              static_cast<long long>(last), format_duration_ns(last - first).c_str());
  if (steps.empty()) {
    std::printf("steps       none (no ProfilerStep or NVTX step ranges)\n");
  } else {
    std::printf("steps       %zu (#%lld .. #%lld)\n", steps.size(), static_cast<long long>(*steps.begin()),
                static_cast<long long>(*steps.rbegin()));
  }
  std::printf("events     ");
  for (const auto& row : count_rows(counts)) {
    if (row.value) std::printf(" %s %lld", row.name, static_cast<long long>(row.value));
  }
  std::printf("\n");
  std::printf("workload    %s\n", meshscope::app::workload_line(workload).c_str());
  if (!workload.stated.empty())
    std::printf("stated      %s (meshscope annotate)\n",
                fmt::format("{}", fmt::join(workload.stated, "; ")).c_str());
}

const bool registered = meshscope::app::register_command(
    {"info", 20, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("info", "Ranks, devices, time span, steps and event counts of a profile");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->inputs, meshscope::app::kProfileInputHelp)->required();
       cmd->add_flag("--json", opts->json, "Machine-readable output (keys fixed in docs/CLI.md)");
       cmd->callback([opts] {
         // With summaries (written at import) info reads kilobytes: the profile's description and the
         // summaries, never the events.
         meshscope::Job job = meshscope::app::open_job(opts->inputs);
         if (const meshscope::ProfileSummary* summary = job.summary()) {
           print_info(job.description(), summary, job.workload(), opts->json);
           return;
         }
         print_info(job.profile(), nullptr, job.workload(), opts->json);
       });
     }});

}  // namespace
