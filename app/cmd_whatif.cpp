// `meshscope whatif PROFILE [--scale CLASS=F]... [--fix-straggler] [--json]`: replays the profile's
// dependency graph (analysis/measure/replay.hpp) and, with edits, replays it again changed: the time per step
// and rank beside the measured run. JSON keys fixed in docs/CLI.md: replay {steps, mean_abs_error_pct,
// max_abs_error_pct, assumptions} and whatif {edits, steps, ranks}.
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/link_edits.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/compare/whatif_request.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/model/presets.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "app/text_report.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/text_format.hpp"

namespace meshscope::app {
namespace {

using measure::Replay;

struct Options {
  std::vector<std::string> inputs;
  std::vector<std::string> scales, links, latencies;
  std::string hardware;
  int dp = 0, tp = 0, pp = 0;  // 0: not given
  int micro_batches = 1;
  std::string batch;  // --batch F; "" not given
  bool keep_global_batch = false;
  bool fix_straggler = false;
  bool drop_unexplained = false;
  bool json = false;
  std::size_t rows = 40;
};

std::vector<std::string> edit_names(const compare::WhatifEdits& e, const Replay& w) {
  std::vector<std::string> names = e.names;
  if (e.edits.fix_straggler)
    names.push_back(w.straggler >= 0 ? fmt::format("fix-straggler (rank {})", w.straggler)
                                     : "fix-straggler (no rank made the others wait)");
  return names;
}

// A step's critical path: its parts that are not zero, in nanoseconds.
void path_json(JsonWriter& j, const measure::ReplayedStep& s) {
  j.key("critical_path").begin_object();
  for (int p = 0; p < measure::kPathKindCount; ++p)
    if (s.critical_path[static_cast<std::size_t>(p)] > 0)
      j.field(measure::to_string(static_cast<measure::PathKind>(p)),
              s.critical_path[static_cast<std::size_t>(p)]);
  j.end_object();
}

void replay_json(JsonWriter& j, const Replay& r) {
  j.key("replay").begin_object();
  j.key("steps").begin_array();
  for (const auto& s : r.steps) {
    j.begin_object();
    j.field("rank", s.rank).field("step", s.step).field("measured_ns", s.measured_ns);
    j.field("replayed_ns", s.replayed_ns);
    path_json(j, s);
    j.end_object();
  }
  j.end_array();
  j.field("mean_abs_error_pct", r.mean_abs_error_pct).field("max_abs_error_pct", r.max_abs_error_pct);
  j.field("unexplained_wait_ns", r.unexplained_ns);
  j.key("assumptions").begin_array();
  for (const auto& a : r.assumptions) j.value(a);
  j.end_array();
  j.end_object();
}

// --pp: each stage's steps and ranks in place of the replay's.
void pipeline_json(JsonWriter& j, const compare::Pipelined& p) {
  j.field("stages", static_cast<std::int64_t>(p.stages));
  j.key("steps").begin_array();
  for (const auto& s : p.steps) {
    j.begin_object();
    j.field("rank", s.rank).field("step", s.step).field("predicted_ns", s.predicted_ns);
    j.field("stage", s.stage).field("measured_rank", s.measured_rank).field("measured_ns", s.measured_ns);
    j.field("micro_batches", s.micro_batches);
    j.field("forward_ns", s.forward_ns).field("backward_ns", s.backward_ns).field("bubble_ns", s.bubble_ns);
    j.field("send_ns", s.send_ns).field("before_ns", s.before_ns).field("after_ns", s.after_ns);
    j.end_object();
  }
  j.end_array();
  j.key("ranks").begin_array();
  for (const auto& r : p.ranks) {
    j.begin_object();
    j.field("rank", r.rank).field("stage", r.stage).field("measured_rank", r.measured_rank);
    j.field("span_ns", r.span_ns).field("busy_ns", r.busy_ns).field("exposed_comm_ns", r.exposed_comm_ns);
    j.end_object();
  }
  j.end_array();
}

void whatif_json(JsonWriter& j, const compare::WhatifEdits& edits, const Replay& w,
                 const compare::Pipelined* pipelined) {
  j.key("whatif").begin_object();
  j.key("edits").begin_array();
  for (const auto& name : edit_names(edits, w)) j.value(name);
  j.end_array();
  j.key("notes").begin_array();
  for (const auto& note : edits.notes) j.value(note);
  if (pipelined)
    for (const auto& note : pipelined->notes) j.value(note);
  j.end_array();
  j.field("edited_activities", w.edited_activities);
  j.field("added_activities", w.added_activities);
  if (w.straggler >= 0) j.field("straggler", static_cast<std::int64_t>(w.straggler));
  if (pipelined) {
    pipeline_json(j, *pipelined);
    j.end_object();
    return;
  }
  j.key("steps").begin_array();
  for (const auto& s : w.steps) {
    j.begin_object();
    j.field("rank", s.rank).field("step", s.step).field("predicted_ns", s.replayed_ns);
    path_json(j, s);
    j.end_object();
  }
  j.end_array();
  j.key("ranks").begin_array();
  for (const auto& r : w.ranks) {
    j.begin_object();
    j.field("rank", r.rank).field("span_ns", r.span_ns).field("busy_ns", r.busy_ns);
    j.field("exposed_comm_ns", r.exposed_comm_ns);
    j.field("measured_span_ns", r.measured_span_ns).field("measured_busy_ns", r.measured_busy_ns);
    j.field("measured_exposed_comm_ns", r.measured_exposed_comm_ns);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

std::string change_text(TimeNs before, TimeNs after) {
  if (before <= 0) return "";
  return fmt::format("{:+.1f} %", 100.0 * static_cast<double>(after - before) / static_cast<double>(before));
}

// --pp: each stage's step beside the measured rank's, and where its time went.
void print_pipeline(const compare::Pipelined& p, std::size_t rows) {
  std::printf("\n%-6s %-5s %-6s %12s %12s %9s %11s %11s %11s %10s\n", "rank", "stage", "step", "measured",
              "predicted", "change", "forward", "backward", "bubble", "sends");
  for (std::size_t i = 0; i < p.steps.size() && i < rows; ++i) {
    const auto& s = p.steps[i];
    std::printf("%-6d %-5d %-6s %12s %12s %9s %11s %11s %11s %10s\n", s.rank, s.stage,
                s.step < 0 ? "all" : std::to_string(s.step).c_str(), duration_text(s.measured_ns).c_str(),
                duration_text(s.predicted_ns).c_str(), change_text(s.measured_ns, s.predicted_ns).c_str(),
                duration_text(s.forward_ns).c_str(), duration_text(s.backward_ns).c_str(),
                duration_text(s.bubble_ns).c_str(), duration_text(s.send_ns).c_str());
  }
  if (p.steps.size() > rows) std::printf("... %zu more (--rows, or --json)\n", p.steps.size() - rows);
  std::printf("\n%-6s %-5s %12s %12s %14s\n", "rank", "stage", "GPU span", "GPU busy", "exposed comm");
  for (std::size_t i = 0; i < p.ranks.size() && i < rows; ++i) {
    const auto& r = p.ranks[i];
    std::printf("%-6d %-5d %12s %12s %14s\n", r.rank, r.stage, duration_text(r.span_ns).c_str(),
                duration_text(r.busy_ns).c_str(), duration_text(r.exposed_comm_ns).c_str());
  }
  if (p.ranks.size() > rows) std::printf("... %zu more ranks\n", p.ranks.size() - rows);
}

void print_steps(const Replay& r, const Replay* w, std::size_t rows) {
  std::printf("\n%-6s %-6s %12s %12s %8s", "rank", "step", "measured", "replayed", "error");
  if (w) std::printf(" %12s %9s", "predicted", "change");
  std::printf("\n");
  for (std::size_t i = 0; i < r.steps.size() && i < rows; ++i) {
    const auto& s = r.steps[i];
    const double err = s.measured_ns > 0 ? 100.0 * static_cast<double>(s.replayed_ns - s.measured_ns) /
                                               static_cast<double>(s.measured_ns)
                                         : 0.0;
    std::printf("%-6d %-6s %12s %12s %+7.2f%%", s.rank, s.step < 0 ? "all" : std::to_string(s.step).c_str(),
                duration_text(s.measured_ns).c_str(), duration_text(s.replayed_ns).c_str(), err);
    if (w)
      std::printf(" %12s %9s", duration_text(w->steps[i].replayed_ns).c_str(),
                  change_text(s.measured_ns, w->steps[i].replayed_ns).c_str());
    std::printf("\n");
  }
  if (r.steps.size() > rows) std::printf("... %zu more (--rows, or --json)\n", r.steps.size() - rows);
}

// The critical paths of every step of every rank added up, part by part: replayed, and with the edits.
void print_critical_path(const Replay& r, const Replay* w) {
  std::array<TimeNs, measure::kPathKindCount> base{}, edited{};
  TimeNs total = 0;
  for (const auto& s : r.steps)
    for (std::size_t p = 0; p < base.size(); ++p) base[p] += s.critical_path[p], total += s.critical_path[p];
  if (w)
    for (const auto& s : w->steps)
      for (std::size_t p = 0; p < edited.size(); ++p) edited[p] += s.critical_path[p];
  if (total <= 0) return;
  std::printf("\n%-14s %12s %7s", "critical path", "replayed", "share");
  if (w) std::printf(" %12s %9s", "predicted", "change");
  std::printf("   (every step's, added up)\n");
  for (std::size_t p = 0; p < base.size(); ++p) {
    if (base[p] == 0 && (!w || edited[p] == 0)) continue;
    std::printf("%-14s %12s %6.1f%%", measure::to_string(static_cast<measure::PathKind>(p)),
                duration_text(base[p]).c_str(),
                100.0 * static_cast<double>(base[p]) / static_cast<double>(total));
    if (w)
      std::printf(" %12s %9s", duration_text(edited[p]).c_str(), change_text(base[p], edited[p]).c_str());
    std::printf("\n");
  }
}

void print_ranks(const Replay& w, std::size_t rows) {
  std::printf("\n%-6s %24s %24s %24s\n", "rank", "GPU span", "GPU busy", "exposed comm");
  const auto pair = [](TimeNs a, TimeNs b) { return duration_text(a) + " → " + duration_text(b); };
  for (std::size_t i = 0; i < w.ranks.size() && i < rows; ++i) {
    const auto& r = w.ranks[i];
    std::printf("%-6d %24s %24s %24s\n", r.rank, pair(r.measured_span_ns, r.span_ns).c_str(),
                pair(r.measured_busy_ns, r.busy_ns).c_str(),
                pair(r.measured_exposed_comm_ns, r.exposed_comm_ns).c_str());
  }
  if (w.ranks.size() > rows) std::printf("... %zu more ranks\n", w.ranks.size() - rows);
}

void print_text(const std::string& title, const compare::WhatifEdits& edits, const Replay& r, const Replay* w,
                const compare::Pipelined* pipelined, std::size_t rows) {
  std::printf("whatif   %s\n", title.c_str());
  std::printf("replay   %zu step%s on %zu rank%s: mean |error| %.2f %%, max %.2f %%\n", r.steps.size(),
              r.steps.size() == 1 ? "" : "s", r.ranks.size(), r.ranks.size() == 1 ? "" : "s",
              r.mean_abs_error_pct, r.max_abs_error_pct);
  if (w) {
    std::printf(
        "edits    %s; %lld activities changed%s\n",
        fmt::format("{}", fmt::join(edit_names(edits, *w), ", ")).c_str(),
        static_cast<long long>(w->edited_activities),
        w->added_activities > 0 ? fmt::format(", {} activities added", w->added_activities).c_str() : "");
    std::string text;
    for (const auto& note : edits.notes) append_wrapped(text, note, "         ", "           ");
    if (pipelined)
      for (const auto& note : pipelined->notes) append_wrapped(text, note, "         ", "           ");
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (pipelined) {
    // The stages replace the edited replay's ranks: its steps are the pipeline's input, not its result.
    print_steps(r, nullptr, rows);
    print_critical_path(r, nullptr);
    print_pipeline(*pipelined, rows);
  } else {
    print_steps(r, w, rows);
    print_critical_path(r, w);
    print_ranks(w ? *w : r, rows);
  }
  std::printf("\nassumptions\n");
  std::string text;
  for (const auto& a : r.assumptions) append_wrapped(text, a, "* ", "  ");
  std::fwrite(text.data(), 1, text.size(), stdout);
}

// The edits given, read before anything else (a bad one exits before the profile is opened).
compare::WhatifRequest read_request(const Options& o) {
  compare::WhatifRequest out;
  for (const auto& text : o.scales) {
    measure::ScaleEdit e;
    std::string error;
    if (!measure::parse_scale_edit(text, e, error)) fail("{}", error);
    out.scales.push_back(std::move(e));
  }
  out.fix_straggler = o.fix_straggler;
  for (const auto& [texts, latency] : {std::pair{&o.links, false}, std::pair{&o.latencies, true}}) {
    for (const auto& text : *texts) {
      compare::LinkEdit e;
      std::string error;
      if (!compare::parse_link_edit(text, latency, e, error)) fail("{}", error);
      out.links.push_back(std::move(e));
    }
  }
  out.hardware = o.hardware;
  out.tp = o.tp;
  out.dp = o.dp;
  out.pp = o.pp;
  out.micro_batches = o.micro_batches;
  if (!o.batch.empty()) {
    std::string error;
    if (!compare::parse_batch_scale(o.batch, out.batch, error)) fail("{}", error);
    out.batch_given = true;
  }
  out.keep_global_batch = o.keep_global_batch;
  std::string error;
  if (!compare::valid_combination(out, error)) fail("{}", error);
  return out;
}

void run(const Options& o) {
  const compare::WhatifRequest request = read_request(o);
  std::optional<model::HardwareSpec> target;
  if (!request.hardware.empty()) with_model_errors([&] { target = model::load_hardware(request.hardware); });
  Job job = open_job(o.inputs);
  const Profile& profile = job.profile();
  const measure::Analysis& analysis = job.analysis();
  static const measure::ProfileWork kNoWork;
  static const compare::Workload kNoWorkload;
  const compare::WhatifEdits edits =
      compare::whatif_edits(profile, analysis, request.needs_workload() ? job.work() : kNoWork,
                            request.needs_workload() ? job.workload() : kNoWorkload, request,
                            target ? &*target : nullptr, job.title());
  measure::ReplayOptions options;
  options.keep_unexplained = !o.drop_unexplained;
  measure::ReplayGraph graph(profile, analysis, options);
  const Replay base = graph.run();
  std::unique_ptr<Replay> edited;
  if (!edits.edits.empty() || edits.pipeline)
    edited = std::make_unique<Replay>(graph.run(edits.edits, edits.pipeline.has_value()));
  std::unique_ptr<compare::Pipelined> pipelined;
  if (edits.pipeline)
    pipelined = std::make_unique<compare::Pipelined>(
        compare::pipeline_stages(profile, analysis, edits.edits, *edited, edits.pipeline->shares,
                                 edits.pipeline->hw, edits.pipeline->request, job.title()));
  if (!o.json) {
    print_text(job.title(), edits, base, edited.get(), pipelined.get(), o.rows);
    return;
  }
  JsonWriter j(true);
  j.begin_object();
  replay_json(j, base);
  if (edited) whatif_json(j, edits, *edited, pipelined.get());
  j.end_object();
  std::string out = j.str();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
}

const bool registered = register_command(
    {"whatif", 45, [](CLI::App& root) {
       auto* cmd = root.add_subcommand(
           "whatif",
           "Replay a profile's dependency graph with its measured durations, then with edits: the time per "
           "step and rank a changed run would take, beside the measured one (docs/WHATIF.md)");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->inputs, kProfileInputHelp)->required();
       cmd->add_option(
           "--scale", opts->scales,
           "CLASS=F or PATTERN=F: durations of gemm, attention, conv, norm, elementwise kernels, of "
           "comm (the transfer after the last rank arrived) or memcpy, or of activities whose name "
           "holds PATTERN, times F (repeatable; the first that matches applies)");
       cmd->add_option(
           "--link", opts->links,
           "DOMAIN=GB/s: collectives on intra_node (nvlink) or inter_node (network) links re-timed "
           "with this bus bandwidth, from the α-β fit of the profile's own collectives (repeatable)");
       cmd->add_option("--latency", opts->latencies,
                       "DOMAIN=µs: the same with this latency per ring step (repeatable)");
       cmd->add_option(
           "--hardware", opts->hardware,
           "PRESET or FILE.toml: every kernel re-timed for this GPU from its operator's FLOPs and bytes "
           "against both rooflines, with the efficiency it reached on the profile's GPU");
       cmd->add_option("--tp", opts->tp,
                       "Tensor-parallel groups N GPUs wide instead of the measured tp (>= 2), dp and pp as "
                       "measured: GEMM and attention kernels split N ways, the tensor-parallel collectives "
                       "re-timed for N members, the gradients' for the smaller shard")
           ->check(CLI::Range(2, 1 << 20));
       cmd->add_option(
              "--dp", opts->dp,
              "N data-parallel replicas instead of the measured number, each rank's work as measured (the "
              "global batch grows with N): the data-parallel collectives re-timed for N members on the "
              "link the new group spans")
           ->check(CLI::Range(2, 1 << 20));
       cmd->add_option(
              "--pp", opts->pp,
              "N pipeline stages from a profile of one stage (pp 1): the model's layers cut over N stages, "
              "each micro-batch's passes of the replay split at each stage's share of their GEMM and "
              "attention work, scheduled 1F1B with the activations sent between stages; the stages' steps "
              "and ranks replace the replay's")
           ->check(CLI::Range(2, 1 << 20));
       cmd->add_option(
              "--micro-batches", opts->micro_batches,
              "K: with --pp, each measured micro-batch run as K of 1/K its tokens (its kernels re-timed "
              "as --batch re-times them), so the pipeline has K times the micro-batches to fill it")
           ->check(CLI::Range(1, 4096));
       cmd->add_flag(
           "--keep-global-batch", opts->keep_global_batch,
           "With --dp M: the measured global batch over M replicas instead of each rank's as measured: "
           "each rank's batch x dp / M, its compute kernels outside the optimizer with it (a GEMM keeping "
           "its fixed cost per kernel), the activations' collectives for that message");
       cmd->add_option("--batch", opts->batch,
                       "F: each rank's sequences per step x F (0.5, 2, ...): its compute kernels outside "
                       "the optimizer and the activations' collectives re-timed for that batch");
       cmd->add_flag("--fix-straggler", opts->fix_straggler,
                     "The rank that made the others wait most in collectives no longer holds them");
       cmd->add_flag("--drop-unexplained", opts->drop_unexplained,
                     "Replay without the waits no known dependency explains (what the modelled dependencies "
                     "alone give)");
       cmd->add_option("--rows", opts->rows, "Steps and ranks listed in the text output (default 40)");
       cmd->add_flag("--json", opts->json, "Machine-readable output (keys fixed in docs/CLI.md)");
       cmd->callback([opts] { run(*opts); });
     }});

}  // namespace
}  // namespace meshscope::app
