// `meshscope compare PROFILE MODEL CONFIG [--json] [--calibrate]`: the prediction's step (analysis/model)
// next to the measured steps of a profile (analysis/measure), part by part and per step, with the difference;
// with --calibrate also the prediction re-run with α/β and compute efficiency fitted to the profile. The
// mapping lives in analysis/compare (docs/COMPARE.md); this file only formats it.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/compare.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "app/text_report.hpp"
#include "app/workload_json.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/profile.hpp"

namespace meshscope::app {
namespace {

using compare::Comparison;
using compare::kParts;
using compare::Part;

struct Options {
  std::vector<std::string> inputs;
  std::string path;   // the profile read
  std::string shown;  // what messages call it: the path given, or the traces' name
  std::string
      title;  // what the text output's first line calls it: the profile's file name, or the traces' name
  bool json = false;
  bool calibrate = false;
  unsigned threads = 0;
  ModelFlags model;
  ConfigFlags config;
  AssumptionFlags assumptions;
  bool model_given = false, hardware_given = false, precision_given = false;
};

// What the comparison took from the profile instead of flags (docs/COMPARE.md "Compare like with like").
struct Inferred {
  compare::Workload workload;
  bool model = false, hardware = false;
  std::vector<std::string> layout;  // the CONFIG fields taken from the workload
  // Taken from what the user stated in the profile (meshscope annotate): the model, and CONFIG fields.
  bool stated_model = false, stated_hardware = false;
  std::vector<std::string> stated_layout;
};

constexpr std::size_t kWidth = 120;

double ms(double s) {
  return s * 1e3;
}

std::string pct_text(double pct) {
  if (!std::isfinite(pct)) return "-";
  return std::abs(pct) >= 1000 ? fmt::format("{:+.0f}", pct) : fmt::format("{:+.1f}", pct);
}

// "* " bullet word-wrapped to 120 columns with a hanging indent.
void bullet(std::string& out, std::string_view text) {
  append_wrapped(out, text, "* ", "  ", kWidth);
}

// TEXT word-wrapped to 120 columns, indented by two spaces and by four on continuation lines.
void indented(std::string& out, std::string_view text) {
  append_wrapped(out, text, "  ", "    ", kWidth);
}

void heading(std::string& out, std::string_view title) {
  out += "\n";
  out += title;
  out += "\n";
  out.append(title.size(), '-');
  out += "\n";
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

void difference_json(JsonWriter& j, const compare::PartSeconds& predicted, double predicted_step,
                     const compare::Measured& measured) {
  const auto step = compare::difference(predicted_step, measured.mean.dur_s);
  j.field("step_time_s", step.diff_s).field("step_time_pct", step.diff_pct);
  j.key("parts").begin_object();
  const auto parts = compare::difference(predicted, measured.mean.parts);
  for (Part p : kParts) {
    const auto& d = parts[static_cast<int>(p)];
    j.key(compare::to_string(p)).begin_object();
    j.field("predicted_s", d.predicted_s).field("measured_s", d.measured_s);
    j.field("diff_s", d.diff_s).field("diff_pct", d.diff_pct);
    j.field("predicted_from", compare::predicted_source(p));
    j.end_object();
  }
  j.end_object();
}

void step_json(JsonWriter& j, const compare::MeasuredStep& s) {
  j.field("step", s.step).field("ranks", s.ranks);
  j.field("dur_s", s.dur_s).field("compute_s", s.compute_s).field("comm_s", s.comm_s);
  j.field("exposed_comm_s", s.exposed_comm_s).field("idle_s", s.idle_s).field("memory_s", s.memory_s);
  j.field("memory_exposed_s", s.memory_exposed_s);
  j.field("max_dur_s", s.max_dur_s).field("slowest_rank", s.slowest_rank);
  j.key("parts").begin_object();
  for (Part p : kParts) j.field(compare::to_string(p), s.parts[static_cast<int>(p)]);
  j.end_object();
}

void link_json(JsonWriter& j, const compare::LinkFit& f) {
  j.field("alpha_us", f.fit.alpha_step_s * 1e6).field("beta_gbps", f.fit.busbw_Bps / 1e9);
  j.field("points", f.points).field("sizes", f.sizes).field("transfer_points", f.transfer_points);
  j.field("r2", f.r2).field("mean_error", f.mean_error).field("applied", f.applied);
}

void write_json(const Profile& profile, const Comparison& c, const model::ModelSpec& m,
                const model::HardwareSpec& hw, const Inferred& inferred) {
  JsonWriter j(true);
  j.begin_object();
  j.key("workload");
  write_workload_json(j, inferred.workload);
  j.key("inferred").begin_object();
  j.field("model", inferred.model).field("hardware", inferred.hardware);
  j.key("layout").begin_array();
  for (const auto& f : inferred.layout) j.value(f);
  j.end_array();
  j.end_object();
  j.key("stated").begin_object();
  j.field("model", inferred.stated_model).field("hardware", inferred.stated_hardware);
  j.key("layout").begin_array();
  for (const auto& f : inferred.stated_layout) j.value(f);
  j.end_array();
  j.end_object();
  j.key("profile").begin_object();
  j.field("path", profile.path().string());
  j.field("ranks", c.profile_ranks).field("world_size", c.world_size);
  j.end_object();
  const auto& cfg = c.config;
  j.key("config").begin_object();
  j.field("model", m.name).field("hardware", hw.name).field("gpus", cfg.gpus);
  j.field("tp", cfg.tp).field("pp", cfg.pp).field("dp", cfg.dp).field("cp", cfg.cp).field("ep", cfg.ep);
  j.field("micro_batch", cfg.micro_batch).field("global_batch", cfg.global_batch);
  j.field("micro_batches", cfg.micro_batches()).field("seq", cfg.seq).field("zero", cfg.zero);
  j.field("recompute", model::to_string(cfg.recompute)).field("schedule", model::to_string(cfg.schedule));
  j.field("virtual_stages", cfg.virtual_stages).field("precision", model::to_string(cfg.precision));
  j.field("mode", model::to_string(cfg.mode)).field("sequence_parallel", cfg.sp());
  j.key("defaulted").begin_array();
  for (const auto& name : cfg.defaulted) j.value(name);
  j.end_array();
  j.end_object();

  j.key("predicted").begin_object();
  write_prediction(j, c.predicted, m, hw, c.efficiencies);
  j.end_object();

  j.key("measured").begin_object();
  j.field("step_time_s", c.measured.mean.dur_s);
  j.field("whole_profile", c.measured.whole_profile);
  j.key("steps").begin_array();
  for (const auto& s : c.measured.steps) {
    j.begin_object();
    step_json(j, s);
    j.end_object();
  }
  j.end_array();
  j.key("mean").begin_object();
  step_json(j, c.measured.mean);
  j.end_object();
  j.end_object();

  j.key("difference").begin_object();
  difference_json(j, compare::predicted_parts(c.predicted), c.predicted.step_time_s, c.measured);
  j.end_object();

  if (c.calibration) {
    const auto& cal = *c.calibration;
    j.key("calibration").begin_object();
    j.key("fitted").begin_object();
    for (const compare::LinkFit* f : {&cal.intra, &cal.inter}) {
      if (!f->fitted) continue;
      j.key(compare::to_string(f->link)).begin_object();
      link_json(j, *f);
      j.end_object();
    }
    j.end_object();
    j.key("not_fitted").begin_object();
    for (const compare::LinkFit* f : {&cal.intra, &cal.inter}) {
      if (!f->fitted) j.field(compare::to_string(f->link), f->reason);
    }
    j.end_object();
    j.key("groups").begin_array();
    for (const auto& g : cal.groups) {
      j.begin_object();
      j.field("op", model::to_string(g.op)).field("group_size", g.group_size);
      j.field("link_class", compare::to_string(g.link)).field("fitted", g.fit.fitted);
      if (g.fit.fitted) {
        link_json(j, g.fit);
      } else {
        j.field("points", g.fit.points).field("reason", g.fit.reason);
      }
      j.end_object();
    }
    j.end_array();
    const auto& cc = cal.compute;
    if (cc.fitted) {
      j.field("compute_efficiency", cc.effective_efficiency);
    } else {
      j.key("compute_efficiency").null();
    }
    j.key("compute").begin_object();
    j.field("fitted", cc.fitted).field("effective_efficiency", cc.effective_efficiency);
    j.field("gemm_efficiency", cc.gemm_efficiency)
        .field("default_gemm_efficiency", cc.default_gemm_efficiency);
    j.field("flops_per_gpu_step", cc.flops_per_gpu_step).field("measured_compute_s", cc.measured_compute_s);
    j.field("samples", cc.samples).field("reason", cc.reason);
    j.end_object();
    const auto& kc = cal.kernels;
    j.key("kernels").begin_object();
    j.field("fitted", kc.fitted).field("reason", kc.reason);
    j.field("gemm_flops", kc.gemm_flops).field("gemm_s", kc.gemm_seconds);
    j.field("gemm_efficiency", kc.gemm_efficiency).field("applied_gemm_efficiency", kc.applied_efficiency);
    j.field("attention_flops", kc.attention_flops).field("attention_s", kc.attention_seconds);
    j.field("attention_tflops", kc.attention_flops_per_s / 1e12);
    j.key("gemm_classes").begin_array();
    for (const auto& g : kc.classes) {
      j.begin_object();
      j.field("class", g.name).field("ops", g.ops).field("flops", g.flops).field("seconds", g.seconds);
      j.field("efficiency", g.efficiency);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.key("notes").begin_array();
    for (const auto& n : cal.notes) j.value(n);
    j.end_array();
    j.end_object();

    j.key("calibrated").begin_object();
    write_prediction(j, *c.calibrated, m, hw, cal.efficiencies);
    j.end_object();
    j.key("calibrated_difference").begin_object();
    difference_json(j, compare::predicted_parts(*c.calibrated), c.calibrated->step_time_s, c.measured);
    j.end_object();
  }
  // How much of a step the measurement holds (compare::Coverage); null without recorded shapes.
  j.key("coverage");
  if (c.coverage) {
    j.begin_object();
    j.field("measured_tflop_per_rank_step", c.coverage->measured_flops_per_rank_step / 1e12);
    j.field("predicted_tflop_per_gpu_step", c.coverage->predicted_flops_per_gpu_step / 1e12);
    j.field("share", c.coverage->share).field("partial", c.coverage->partial);
    j.end_object();
  } else {
    j.null();
  }
  j.key("warnings").begin_array();
  for (const auto& w : c.warnings) j.value(w);
  j.end_array();
  j.key("notes").begin_array();
  for (const auto& n : c.notes) j.value(n);
  j.end_array();
  j.end_object();
  std::string out = j.str();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
}

// ---------------------------------------------------------------------------------------------------------------
// Text

// The values taken from the profile that it does not show (confidence low: a default such as pp 1 where no
// pipeline process group was recorded), as "pp 1": the model's sizes when the model is the profile's, the
// layout fields taken from it.
std::vector<std::string> assumed_values(const Inferred& inferred) {
  std::vector<std::string> taken = inferred.layout;
  if (inferred.model) taken.insert(taken.end(), {"hidden", "layers", "kv_heads", "vocab"});
  return compare::assumed_values(inferred.workload, &taken);
}

// The calibration section of `compare --calibrate`: the α-β fits per link and per operation, and the GEMM
// efficiency per shape class.
void calibration_text(std::string& out, const Comparison& c, const model::HardwareSpec& hw) {
  const auto& k = *c.calibration;
  heading(out, "Calibration from the profile (α per ring step, busbw as nccl-tests)");
  out += fmt::format("{:<11} {:>7} {:>10} {:>11} {:>7} {:>6} {:>9} {:>7} {:>9}   {}\n", "link", "fitted",
                     "α µs", "busbw GB/s", "points", "sizes", "transfer", "R²", "mean err", "default");
  for (const compare::LinkFit* f : {&k.intra, &k.inter}) {
    const bool intra = f->link == compare::LinkClass::kIntraNode;
    const double alpha = intra ? c.efficiencies.intra_node_alpha_s : c.efficiencies.inter_node_alpha_s;
    const double bw = intra ? c.efficiencies.intra_node_Bps : c.efficiencies.inter_node_Bps;
    const std::string dflt = fmt::format("{:.2f} µs, {:.1f} GB/s", alpha * 1e6, bw / 1e9);
    if (f->fitted) {
      out += fmt::format("{:<11} {:>7} {:>10.2f} {:>11.1f} {:>7} {:>6} {:>9} {:>7.3f} {:>8.1f}%   {}\n",
                         compare::to_string(f->link), f->applied ? "yes" : "unused",
                         f->fit.alpha_step_s * 1e6, f->fit.busbw_Bps / 1e9, f->points, f->sizes,
                         f->transfer_points, f->r2, 100 * f->mean_error, dflt);
    } else {
      out += fmt::format("{:<11} {:>7} {:>10} {:>11} {:>7} {:>6} {:>9} {:>7} {:>9}   {}\n",
                         compare::to_string(f->link), "no", "-", "-", f->points, f->sizes, f->transfer_points,
                         "-", "-", dflt);
    }
  }
  if (!k.groups.empty()) {
    out += "\nper operation and group size:\n";
    out += fmt::format("{:<15} {:>5} {:<11} {:>7} {:>6} {:>10} {:>11} {:>7}\n", "op", "ranks", "link",
                       "points", "sizes", "α µs", "busbw GB/s", "R²");
    for (const auto& g : k.groups) {
      if (g.fit.fitted) {
        out += fmt::format("{:<15} {:>5} {:<11} {:>7} {:>6} {:>10.2f} {:>11.1f} {:>7.3f}\n",
                           model::to_string(g.op), g.group_size, compare::to_string(g.link), g.fit.points,
                           g.fit.sizes, g.fit.fit.alpha_step_s * 1e6, g.fit.fit.busbw_Bps / 1e9, g.fit.r2);
      } else {
        out +=
            fmt::format("{:<15} {:>5} {:<11} {:>7} {:>6} {:>10} {:>11} {:>7}\n", model::to_string(g.op),
                        g.group_size, compare::to_string(g.link), g.fit.points, g.fit.sizes, "-", "-", "-");
      }
    }
  }
  if (!k.kernels.classes.empty()) {
    out += fmt::format("\nGEMM efficiency per shape class (the profile's GEMM kernels, % of {}'s peak):\n",
                       hw.name);
    out += fmt::format("{:<12} {:>7} {:>12} {:>12} {:>9}\n", "FLOPs/call", "ops", "TFLOP", "kernel ms",
                       "eff. %");
    for (const auto& g : k.kernels.classes) {
      out += fmt::format("{:<12} {:>7} {:>12.4f} {:>12.3f} {:>9.1f}\n", g.name, g.ops, g.flops / 1e12,
                         g.seconds * 1e3, 100 * g.efficiency);
    }
    out += fmt::format("{:<12} {:>7} {:>12.4f} {:>12.3f} {:>9.1f}\n", "all", "", k.kernels.gemm_flops / 1e12,
                       k.kernels.gemm_seconds * 1e3, 100 * k.kernels.gemm_efficiency);
  }
  out += "\n";
  for (const auto& n : k.notes) bullet(out, n);
}

// TITLE: what the user gave (the profile's file name, or the traces').
void write_text(const std::string& title, const Comparison& c, const model::ModelSpec& m,
                const model::HardwareSpec& hw, const Inferred& inferred) {
  std::string out;
  const auto& cfg = c.config;
  out += fmt::format("meshscope compare: {} ({} of {} ranks) vs {} on {} x {}\n", title, c.profile_ranks,
                     c.world_size, m.name, cfg.gpus, hw.name);
  if (inferred.model || inferred.hardware || !inferred.layout.empty()) {
    std::vector<std::string> what;
    if (inferred.model) what.push_back("model");
    if (inferred.hardware) what.push_back("hardware");
    if (!inferred.layout.empty()) what.push_back(fmt::format("{}", fmt::join(inferred.layout, ", ")));
    indented(out, fmt::format("inferred from the profile ({}): {}", fmt::join(what, "; "),
                              workload_line(inferred.workload)));
  }
  if (const std::vector<std::string> assumed = assumed_values(inferred); !assumed.empty())
    indented(out,
             fmt::format("assumed, as the profile does not show them: {} (pass them as flags, or state them "
                         "with `meshscope annotate PROFILE --layout ...`)",
                         fmt::join(assumed, ", ")));
  if (inferred.stated_model || inferred.stated_hardware || !inferred.stated_layout.empty())
    indented(out, fmt::format("stated in the profile: {}", fmt::join(inferred.workload.stated, "; ")));
  out += fmt::format("  {}; global batch {} x seq {}, {} micro-batches of {}, {}\n", describe_layout(cfg),
                     cfg.global_batch, cfg.seq, cfg.micro_batches(), cfg.micro_batch,
                     model::to_string(cfg.precision));
  if (!cfg.defaulted.empty()) out += fmt::format("  defaults chosen: {}\n", fmt::join(cfg.defaulted, ", "));
  for (const auto& w : c.warnings) {
    out += "\n";
    bullet(out, "WARNING: " + w);
  }

  const bool cal = c.calibrated.has_value();
  const auto predicted = compare::predicted_parts(c.predicted);
  const auto measured = c.measured.mean.parts;
  compare::PartSeconds calibrated{};
  if (cal) calibrated = compare::predicted_parts(*c.calibrated);
  heading(out, fmt::format(
                   "Step time by part (ms per step; measured = mean over {} step(s) of the mean over ranks)",
                   c.measured.steps.size()));
  if (cal) {
    out += fmt::format("{:<15} {:<32} {:>11} {:>11} {:>11} {:>8} {:>11} {:>8}\n", "part", "predicted from",
                       "predicted", "measured", "diff", "diff %", "calibrated", "diff %");
  } else {
    out += fmt::format("{:<15} {:<32} {:>11} {:>11} {:>11} {:>8}\n", "part", "predicted from", "predicted",
                       "measured", "diff", "diff %");
  }
  auto row = [&](std::string_view name, std::string_view from, double p, double meas, double calp) {
    const auto d = compare::difference(p, meas);
    if (cal) {
      const auto dc = compare::difference(calp, meas);
      out +=
          fmt::format("{:<15} {:<32} {:>11.3f} {:>11.3f} {:>11.3f} {:>8} {:>11.3f} {:>8}\n", name, from,
                      ms(p), ms(meas), ms(d.diff_s), pct_text(d.diff_pct), ms(calp), pct_text(dc.diff_pct));
    } else {
      out += fmt::format("{:<15} {:<32} {:>11.3f} {:>11.3f} {:>11.3f} {:>8}\n", name, from, ms(p), ms(meas),
                         ms(d.diff_s), pct_text(d.diff_pct));
    }
  };
  for (Part p : kParts) {
    const int i = static_cast<int>(p);
    row(compare::to_string(p), compare::predicted_source(p), predicted[i], measured[i], calibrated[i]);
  }
  row("step time", "sum", c.predicted.step_time_s, c.measured.mean.dur_s,
      cal ? c.calibrated->step_time_s : 0);
  out += fmt::format("predicted compute row = compute {:.3f} + recompute {:.3f} + optimizer {:.3f} ms\n",
                     ms(c.predicted.time.compute), ms(c.predicted.time.recompute),
                     ms(c.predicted.time.optimizer));
  out +=
      "diff = predicted - measured; diff % of measured. Both columns sum to the step time "
      "(docs/COMPARE.md)\n";

  heading(out, "Per step (ms; mean over the ranks that ran the step)");
  out += fmt::format("{:>8} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6}\n",
                     "step", "ranks", "dur", "compute", "exp. comm", "idle", "memory", "max dur", "predicted",
                     "diff", "diff %", "slow");
  auto step_row = [&](const compare::MeasuredStep& s, std::string_view label) {
    const double pred = c.predicted.step_time_s;
    const auto d = compare::difference(pred, s.dur_s);
    out += fmt::format(
        "{:>8} {:>5} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>8} "
        "{:>6}\n",
        label, s.ranks, ms(s.dur_s), ms(s.compute_s), ms(s.exposed_comm_s), ms(s.idle_s),
        ms(s.memory_exposed_s), ms(s.max_dur_s), ms(pred), ms(d.diff_s), pct_text(d.diff_pct),
        s.slowest_rank);
  };
  for (const auto& s : c.measured.steps)
    step_row(s, s.step < 0 ? std::string("all") : fmt::format("{}", s.step));
  step_row(c.measured.mean, "mean");
  out +=
      "exp. comm = communication with no compute running; memory = copies with neither running; slow = "
      "slowest rank\n";

  if (c.calibration) calibration_text(out, c, hw);

  if (!c.notes.empty() || inferred.model || inferred.hardware || !inferred.layout.empty()) {
    heading(out, "Notes");
    if (inferred.model || inferred.hardware || !inferred.layout.empty()) {
      for (const auto& e : inferred.workload.evidence) bullet(out, "inferred: " + e);
    }
    for (const auto& n : c.notes) bullet(out, n);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

const bool registered = register_command(
    {"compare", 45, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("compare", "Prediction next to measurement, part by part and per step");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->inputs, kProfileInputHelp)->required();
       cmd->add_flag("--json", opts->json, "machine-readable output (keys in DESIGN.md and docs/COMPARE.md)");
       cmd->add_flag("--calibrate", opts->calibrate,
                     "fit α/β per link class and compute efficiency to the profile and show the prediction "
                     "re-run with them");
       cmd->add_option("--threads", opts->threads, "worker threads for the analysis (default: all cores)");
       add_model_flags(*cmd, opts->model);
       add_config_flags(*cmd, opts->config);
       add_assumption_flags(*cmd, opts->assumptions);
       cmd->callback([opts, cmd] {
         opts->model_given = cmd->count("--model") > 0;
         opts->hardware_given = cmd->count("--hardware") > 0;
         opts->precision_given = cmd->count("--precision") > 0;
         model::ParallelConfig parsed = parse_config(opts->config);
         JobOptions job_options;
         job_options.analysis.threads = opts->threads;
         Job job = open_job(opts->inputs, job_options);
         opts->path = job.path().string();
         opts->shown = job.input().imported ? job.title() : opts->path;
         opts->title = job.title();
         const Profile& profile = job.profile();
         const measure::ProfileWork& work = job.work();
         // What the profile ran: the model, hardware and layout that flags leave out.
         Inferred inferred;
         inferred.workload = job.workload();
         const compare::Workload& wl = inferred.workload;
         model::ModelSpec m;
         if (opts->model_given) {
           m = resolve_model(opts->model, opts->config);
         } else {
           std::string why;
           if (!with_model_errors([&] { return compare::inferred_model(wl, m, &why); }))
             fail("{}: {}", opts->shown, why);
           model::ModelOverrides o = opts->model.overrides;
           if (opts->config.config.seq > 0) o.seq = opts->config.config.seq;
           with_model_errors([&] { model::apply_overrides(m, o); });
           (wl.stated_model ? inferred.stated_model : inferred.model) = true;
         }
         model::HardwareSpec hw;
         std::string hardware_warning;
         if (!opts->hardware_given && wl.stated_hardware) {
           hw = *wl.stated_hardware;
           with_model_errors([&] { model::apply_overrides(hw, opts->model.hardware_overrides); });
           inferred.stated_hardware = true;
         } else if (opts->hardware_given || !wl.hardware) {
           const std::string unknown =
               wl.gpu.empty() ? std::string("the profile names no GPU, so its hardware is unknown")
                              : "the profile's GPU '" + wl.gpu + "' has no hardware preset";
           if (!opts->hardware_given && !opts->model_given)
             fail(
                 "{}: {}: pass --hardware NAME|FILE.toml, or store it in the profile with meshscope annotate "
                 "PROFILE --hardware NAME|FILE.toml",
                 opts->shown, unknown);
           hw = resolve_hardware(opts->model);
           if (!opts->hardware_given)
             hardware_warning =
                 fmt::format("{}: predicting for {}, the default (pass --hardware)", unknown, hw.name);
         } else if (wl.recorded_hardware) {
           hw = *wl.recorded_hardware;
           with_model_errors([&] { model::apply_overrides(hw, opts->model.hardware_overrides); });
           inferred.hardware = true;
         } else {
           ModelFlags flags = opts->model;
           flags.hardware = *wl.hardware;
           hw = resolve_hardware(flags);
           inferred.hardware = true;
         }
         const model::Efficiencies eff = resolve_efficiencies(opts->assumptions, hw);
         // The layout and batch the user stated in the profile, then those it shows (where no flag gives them
         // and the model is the profile's); the mode it ran and the precision of its GEMMs.
         const bool shown = !opts->model_given && (wl.transformer || wl.stated_model);
         compare::LayoutOrigins origins;
         compare::ProfileConfig run =
             compare::profile_config(wl, profile.world_size(), parsed, shown, opts->precision_given, origins);
         parsed = run.config;
         inferred.stated_layout.insert(inferred.stated_layout.end(), origins.stated.begin(),
                                       origins.stated.end());
         inferred.layout.insert(inferred.layout.end(), origins.shown.begin(), origins.shown.end());
         // An inference trace is never compared with a training step, nor the reverse.
         if (run.ran && parsed.mode != *run.ran) {
           const bool stated = wl.stated_layout.mode.has_value();
           const bool training = *run.ran == model::Mode::kTraining;
           fail("{}: the profile ran {}, so it is not compared with {}: leave out --mode or pass --mode {}",
                opts->shown,
                stated     ? (training ? "training steps (stated in the profile)"
                                       : "inference (stated in the profile)")
                : training ? "training steps (backward operators recorded)"
                           : "inference (forward passes only, no backward operator recorded)",
                training ? "inference" : "a training step", model::to_string(*run.ran));
         }
         const std::string precision_warning = run.precision_warning;
         const model::ParallelConfig config =
             with_model_errors([&] { return model::resolve(parsed, m, hw); });
         const measure::Analysis& analysis = job.analysis();
         Comparison c = with_model_errors(
             [&] { return compare::compare(profile, analysis, m, hw, config, eff, opts->calibrate, work); });
         if (!precision_warning.empty()) c.warnings.insert(c.warnings.begin(), precision_warning);
         if (!hardware_warning.empty()) c.warnings.insert(c.warnings.begin(), hardware_warning);
         if (opts->json) {
           for (const auto& w : c.warnings)
             std::fprintf(stderr, "meshscope compare: warning: %s\n", w.c_str());
           write_json(profile, c, m, hw, inferred);
         } else {
           write_text(opts->title, c, m, hw, inferred);
         }
       });
     }});

}  // namespace
}  // namespace meshscope::app
