// meshscope diff A.msdb B.msdb [--json]: what changed between two runs of a job. The figures come from
// analysis/measure/diff.hpp; this file only loads, analyses both profiles and formats (text that fits 120
// columns, or JSON with the keys fixed in DESIGN.md: a, b, classes, kernels, per_step, plus headline,
// cpu_ops, collectives, op_shapes and notes).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "analysis/measure/diff.hpp"
#include "analysis/measure/measure.hpp"
#include "app/command.hpp"
#include "app/text_report.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile.hpp"
#include "profiler/timing.hpp"

namespace meshscope::app {
namespace {

using measure::Diff;
using measure::DiffRow;

struct Options {
  std::string a, b;
  bool json = false;
  std::vector<std::string> rules;
  unsigned threads = 0;
  std::size_t top = 15;
};

double us(TimeNs ns) {
  return static_cast<double>(ns) / 1e3;
}
double ms(TimeNs ns) {
  return static_cast<double>(ns) / 1e6;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string shorten(std::string_view name, std::size_t width) {
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width - 3)) + "...";
}

// ---------------------------------------------------------------------------------------------------------
// JSON

void side_json(JsonWriter& j, const measure::DiffSide& s) {
  j.begin_object();
  j.field("file", file_name(s.path));
  j.field("ranks", s.ranks).field("world_size", s.world_size);
  j.field("steps", s.steps).field("rank_steps", s.rank_steps).field("has_steps", s.has_steps);
  j.field("step_us", us(s.step_ns)).field("cpu_step_us", us(s.cpu_step_ns));
  j.field("activities", s.activities).field("cpu_ops", s.cpu_ops).field("gpu_us", us(s.kernel_ns));
  j.end_object();
}

void row_fields(JsonWriter& j, const DiffRow& r) {
  j.field("a_count", r.a_count).field("b_count", r.b_count);
  j.field("a_us", us(r.a_ns)).field("b_us", us(r.b_ns)).field("delta_us", us(r.delta_ns()));
  j.field("a_step_us", us(r.a_step_ns)).field("b_step_us", us(r.b_step_ns));
  j.field("delta_step_us", us(r.step_delta_ns()));
}

void write_json(const Diff& d) {
  JsonWriter j(true);
  j.begin_object();
  j.key("a");
  side_json(j, d.a);
  j.key("b");
  side_json(j, d.b);
  j.field("similarity", d.similarity);
  if (d.operator_similarity >= 0) {
    j.field("operator_similarity", d.operator_similarity);
  } else {
    j.key("operator_similarity").null();
  }
  j.field("unrelated", d.unrelated).field("different_kernels", d.different_kernels);
  j.field("iteration_ratio", d.iteration_ratio);
  j.key("headline").begin_array();
  for (const auto& h : d.headline) {
    j.begin_object().field("kind", h.kind).field("name", h.name).field("level", h.level);
    j.field("delta_step_us", us(h.delta_ns)).field("text", h.text).end_object();
  }
  j.end_array();
  j.key("per_step").begin_object();
  j.field("a_steps", d.a.steps).field("b_steps", d.b.steps);
  j.field("a_rank_steps", d.a.rank_steps).field("b_rank_steps", d.b.rank_steps);
  j.field("a_step_us", us(d.a.step_ns)).field("b_step_us", us(d.b.step_ns));
  j.field("delta_us", us(d.step_delta_ns));
  j.field("delta_pct", d.a.step_ns > 0
                           ? 100.0 * static_cast<double>(d.step_delta_ns) / static_cast<double>(d.a.step_ns)
                           : 0.0);
  j.field("a_cpu_step_us", us(d.a.cpu_step_ns)).field("b_cpu_step_us", us(d.b.cpu_step_ns));
  j.end_object();
  j.key("classes").begin_array();
  for (const auto& c : d.classes) {
    j.begin_object().field("class", c.name);
    j.field("a_us", us(c.a_ns)).field("b_us", us(c.b_ns)).field("delta_us", us(c.b_ns - c.a_ns));
    j.field("a_step_us", us(c.a_step_ns)).field("b_step_us", us(c.b_step_ns));
    j.field("delta_step_us", us(c.b_step_ns - c.a_step_ns));
    j.end_object();
  }
  j.end_array();
  j.key("kernels").begin_array();
  for (const auto& r : d.kernels) {
    j.begin_object().field("name", r.name).field("class", measure::to_string(r.cls));
    row_fields(j, r);
    j.field("a_names", r.a_variants).field("b_names", r.b_variants);
    j.field("a_example", r.a_example).field("b_example", r.b_example);
    j.end_object();
  }
  j.end_array();
  j.key("collectives").begin_array();
  for (const auto& r : d.collectives) {
    j.begin_object().field("op", r.op).field("group_size", r.group_size).field("bytes", r.bytes);
    row_fields(j, r);
    j.end_object();
  }
  j.end_array();
  j.key("cpu_ops").begin_array();
  for (const auto& r : d.cpu_ops) {
    j.begin_object().field("name", r.name);
    row_fields(j, r);
    j.field("a_self_us", us(r.a_self_ns)).field("b_self_us", us(r.b_self_ns));
    j.field("a_self_step_us", us(r.a_self_step_ns)).field("b_self_step_us", us(r.b_self_step_ns));
    j.field("a_gpu_us", us(r.a_gpu_ns)).field("b_gpu_us", us(r.b_gpu_ns));
    j.field("a_gpu_step_us", us(r.a_gpu_step_ns)).field("b_gpu_step_us", us(r.b_gpu_step_ns));
    j.field("a_gpu_self_step_us", us(r.a_gpu_self_step_ns))
        .field("b_gpu_self_step_us", us(r.b_gpu_self_step_ns));
    j.end_object();
  }
  j.end_array();
  // Per operator and input shapes: the time fields are the GPU time attributed to the operators.
  j.key("op_shapes").begin_array();
  for (const auto& r : d.op_shapes) {
    j.begin_object().field("name", r.name);
    j.field("a_input_dims", r.a_input_dims).field("b_input_dims", r.b_input_dims);
    row_fields(j, r);
    j.end_object();
  }
  j.end_array();
  j.key("notes").begin_array();
  for (const auto& n : d.notes) j.value(n);
  j.end_array();
  j.end_object();
  std::string out = j.str();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
}

// ---------------------------------------------------------------------------------------------------------
// Text

// Rows with the largest change per step first (the JSON keeps the whole-profile order).
std::vector<const DiffRow*> by_step_change(const std::vector<DiffRow>& rows) {
  std::vector<const DiffRow*> out;
  for (const auto& r : rows) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const DiffRow* x, const DiffRow* y) {
    return std::llabs(x->step_delta_ns()) > std::llabs(y->step_delta_ns());
  });
  return out;
}

void rows_text(TextReport& t, const std::vector<DiffRow>& rows, std::size_t top, bool with_class,
               std::size_t width) {
  if (rows.empty()) {
    t.line("none in either profile");
    return;
  }
  if (with_class) {
    t.line("{:<7} {:<{}} {:>8} {:>8} {:>11} {:>11} {:>11}", "class", "name", width, "A count", "B count",
           "A ms/step", "B ms/step", "delta ms");
  } else {
    t.line("{:<{}} {:>8} {:>8} {:>11} {:>11} {:>11}", "name", width + 8, "A count", "B count", "A ms/step",
           "B ms/step", "delta ms");
  }
  const auto sorted = by_step_change(rows);
  for (std::size_t i = 0; i < sorted.size() && i < top; ++i) {
    const DiffRow& r = *sorted[i];
    if (with_class) {
      t.line("{:<7} {:<{}} {:>8} {:>8} {:>11.3f} {:>11.3f} {:>+11.3f}", measure::to_string(r.cls),
             shorten(r.name, width), width, r.a_count, r.b_count, ms(r.a_step_ns), ms(r.b_step_ns),
             ms(r.step_delta_ns()));
    } else {
      t.line("{:<{}} {:>8} {:>8} {:>11.3f} {:>11.3f} {:>+11.3f}", shorten(r.name, width + 8), width + 8,
             r.a_count, r.b_count, ms(r.a_step_ns), ms(r.b_step_ns), ms(r.step_delta_ns()));
    }
  }
  if (sorted.size() > top) t.line("... {} more rows in --json", sorted.size() - top);
}

// The GPU time each CPU operator launched, largest change per step first: operator by operator, what two runs
// whose kernels differ (two GPU vendors, two library versions) spent on the GPU.
void operator_gpu_text(TextReport& t, const std::vector<DiffRow>& rows, std::size_t top) {
  std::vector<const DiffRow*> sorted;
  for (const auto& r : rows) {
    if (r.a_gpu_ns > 0 || r.b_gpu_ns > 0) sorted.push_back(&r);
  }
  if (sorted.empty()) return;
  std::stable_sort(sorted.begin(), sorted.end(), [](const DiffRow* x, const DiffRow* y) {
    return std::llabs(x->b_gpu_step_ns - x->a_gpu_step_ns) > std::llabs(y->b_gpu_step_ns - y->a_gpu_step_ns);
  });
  t.heading("GPU time per CPU operator (activities launched from inside it; self: from it directly)");
  t.line("{:<52} {:>8} {:>8} {:>11} {:>11} {:>11} {:>11} {:>11}", "name", "A count", "B count", "A ms/step",
         "B ms/step", "delta ms", "A self", "B self");
  for (std::size_t i = 0; i < sorted.size() && i < top; ++i) {
    const DiffRow& r = *sorted[i];
    t.line("{:<52} {:>8} {:>8} {:>11.3f} {:>11.3f} {:>+11.3f} {:>11.3f} {:>11.3f}", shorten(r.name, 52),
           r.a_count, r.b_count, ms(r.a_gpu_step_ns), ms(r.b_gpu_step_ns),
           ms(r.b_gpu_step_ns - r.a_gpu_step_ns), ms(r.a_gpu_self_step_ns), ms(r.b_gpu_self_step_ns));
  }
  if (sorted.size() > top) t.line("... {} more rows in --json", sorted.size() - top);
}

// The GPU time of the operators by their recorded input shapes, largest change per step first: the same
// operator on the same shapes in both runs, or (A's shapes -> B's) an operator that ran with other shapes.
void operator_shapes_text(TextReport& t, const std::vector<DiffRow>& rows, std::size_t top) {
  if (rows.empty()) return;
  // Backward operators record many inputs without shape: a run of them is written once, "8 x []", so that
  // the sizes fit the column (the JSON keeps the shapes as recorded).
  auto compact = [](std::string name) {
    static constexpr std::string_view kEmpty = ", []";
    for (std::size_t at = name.find(kEmpty); at != std::string::npos; at = name.find(kEmpty, at + 1)) {
      std::size_t end = at, runs = 0;
      while (name.compare(end, kEmpty.size(), kEmpty) == 0) end += kEmpty.size(), ++runs;
      if (runs >= 2 && end < name.size() && name[end] == ']')
        name.replace(at, end - at, fmt::format(", {} x []", runs));
    }
    return name;
  };
  std::vector<DiffRow> shown = rows;
  for (DiffRow& r : shown) r.name = compact(std::move(r.name));
  t.heading("GPU time per CPU operator and input shapes (matched on both; -> when the shapes changed)");
  rows_text(t, shown, top, false, 60);
}

void write_text(const Diff& d, const Options& options) {
  TextReport t;
  auto side = [](const measure::DiffSide& s) {
    return fmt::format("{} ({} rank{}, {} step{}, {} rank-steps{})", file_name(s.path), s.ranks,
                       s.ranks == 1 ? "" : "s", s.steps, s.steps == 1 ? "" : "s", s.rank_steps,
                       s.has_steps ? "" : ", no steps: whole profile per rank");
  };
  t.line("A: {}", side(d.a));
  t.line("B: {}", side(d.b));

  t.heading("Headline (B - A, per rank-step)");
  for (const auto& h : d.headline)
    t.line("{}{}", std::string(static_cast<std::size_t>(2 * h.level), ' '), h.text);
  t.line("kernel-time overlap of the two runs: {:.1f} % (100 % = the same kernels in the same proportions)",
         100.0 * d.similarity);

  t.heading("Per step (means over rank-steps, ms)");
  t.line("{:<14} {:>12} {:>12} {:>12} {:>14} {:>14}", "class", "A", "B", "delta", "A whole ms", "B whole ms");
  for (const auto& c : d.classes) {
    t.line("{:<14} {:>12.3f} {:>12.3f} {:>+12.3f} {:>14.3f} {:>14.3f}", c.name, ms(c.a_step_ns),
           ms(c.b_step_ns), ms(c.b_step_ns - c.a_step_ns), ms(c.a_ns), ms(c.b_ns));
  }
  t.line("step = GPU span of the work a step launched = compute + exposed_comm + memory_only + idle");

  t.heading("Kernels (grouped by normalised name; largest change per step first)");
  rows_text(t, d.kernels, options.top, true, 60);
  t.heading("Collectives (operation, message size, group size)");
  rows_text(t, d.collectives, options.top, false, 60);
  t.heading("CPU operators (inclusive time)");
  rows_text(t, d.cpu_ops, options.top, false, 60);
  operator_gpu_text(t, d.cpu_ops, options.top);
  operator_shapes_text(t, d.op_shapes, options.top);
  if (!d.notes.empty()) {
    t.heading("Notes");
    for (const auto& n : d.notes) t.line("* {}", n);
  }
  std::fwrite(t.str().data(), 1, t.str().size(), stdout);
}

const bool registered = register_command(
    {"diff", 35, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("diff", "What changed between two runs of a job (A = baseline, B = new)");
       auto opts = std::make_shared<Options>();
       cmd->add_option("A", opts->a, "the baseline: a profile (.msdb) or its traces (a folder, files)")
           ->required();
       cmd->add_option("B", opts->b, "the run compared with it: a profile or its traces")->required();
       cmd->add_flag("--json", opts->json, "machine-readable output (keys in DESIGN.md and docs/CLI.md)");
       cmd->add_option(
           "--rule", opts->rules,
           "extra classification rule CLASS:MATCH:PATTERN[:LIBRARY] for both profiles (as report)");
       cmd->add_option("--threads", opts->threads, "worker threads for the analysis (default: all cores)");
       cmd->add_option("--top", opts->top, "rows per table in the text output (default 15)");
       cmd->callback([opts] {
         JobOptions job_options;
         for (const auto& rule : opts->rules)
           job_options.analysis.user_rules.push_back(measure::parse_rule(rule));
         job_options.analysis.threads = opts->threads;
         // Each side may be traces too, imported first as `view` does; then the traces' name is shown.
         Job job_a = open_job({opts->a}, job_options), job_b = open_job({opts->b}, job_options);
         const bool imported_a = job_a.input().imported, imported_b = job_b.input().imported;
         const std::string shown_a = imported_a ? job_a.title() : opts->a;
         const std::string shown_b = imported_b ? job_b.title() : opts->b;
         opts->a = job_a.path().string();
         opts->b = job_b.path().string();
         // Both profiles summarised at import (and no rule of the user's, which would classify differently):
         // the diff reads the summaries alone, kilobytes instead of the events.
         if (job_options.analysis.user_rules.empty()) {
           job_a.description();  // a clear error for a file that is no profile
           job_b.description();
           const ProfileSummary* summary_a = job_a.summary();
           const ProfileSummary* summary_b = summary_a ? job_b.summary() : nullptr;
           if (summary_a && summary_b) {
             ProfileSummary shown_summary_a = *summary_a, shown_summary_b = *summary_b;
             shown_summary_a.path = shown_a;
             shown_summary_b.path = shown_b;
             const Diff d = measure::diff_summaries(shown_summary_a, shown_summary_b);
             if (opts->json) {
               write_json(d);
             } else {
               write_text(d, *opts);
             }
             return;
           }
         }
         // The two loads overlap: each reads its large tables on parallel connections, but one table (the
         // CPU ranges) takes longest, so a single load leaves a core idle for most of its time.
         auto loading_b = std::async(std::launch::async, [&] {
           PhaseTimer timer("diff: load B");
           job_b.profile();
         });
         {
           PhaseTimer timer("diff: load A");
           job_a.profile();
         }
         loading_b.get();
         {
           PhaseTimer timer("diff: analyze A and B");
           job_a.analysis();
           job_b.analysis();
         }
         Diff d = [&] {
           PhaseTimer timer("diff: compare");
           // The operators' GPU time by shapes comes from the summaries the import wrote (the rules change
           // no operator's GPU time).
           auto summarised = [](Job& job) {
             ProfileSummary s = measure::summarize(job.profile(), job.analysis());
             if (const ProfileSummary* stored = job.summary()) {
               for (RankSummary& r : s.ranks) {
                 if (const RankSummary* st = find_rank(*stored, r.rank)) r.op_shapes = st->op_shapes;
               }
             }
             return s;
           };
           return measure::diff_summaries(summarised(job_a), summarised(job_b));
         }();
         if (imported_a) d.a.path = shown_a;
         if (imported_b) d.b.path = shown_b;
         if (opts->json) {
           write_json(d);
         } else {
           write_text(d, *opts);
         }
       });
     }});

}  // namespace
}  // namespace meshscope::app
