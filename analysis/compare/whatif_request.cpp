#include "analysis/compare/whatif_request.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "analysis/compare/gradient_sync.hpp"
#include "analysis/compare/hardware_edit.hpp"
#include "analysis/compare/measured.hpp"
#include "profiler/error.hpp"

namespace meshscope::compare {
namespace {

// A's factors times B's, activity by activity (A empty: B).
void multiply_into(std::vector<std::vector<double>>& a, std::vector<std::vector<double>> b) {
  if (a.empty()) {
    a = std::move(b);
    return;
  }
  for (std::size_t r = 0; r < a.size() && r < b.size(); ++r)
    for (std::size_t i = 0; i < a[r].size() && i < b[r].size(); ++i) a[r][i] *= b[r][i];
}

void add_retiming(WhatifEdits& out, std::vector<std::vector<double>> factor, std::vector<std::string> notes) {
  multiply_into(out.edits.transfer_factor, std::move(factor));
  out.notes.insert(out.notes.end(), notes.begin(), notes.end());
}

// --hardware: every kernel re-timed for the target from its work (compare::retime_hardware).
void add_hardware(const Profile& profile, const measure::Analysis& analysis, const measure::ProfileWork& work,
                  const Workload& workload, const model::HardwareSpec& target, std::string_view title,
                  WhatifEdits& out) {
  const auto source = hardware_spec(workload);
  if (!source)
    fail(
        "{}: the GPU it ran on is not known, so --hardware has nothing to scale from: state it with "
        "`meshscope annotate PROFILE --hardware NAME`",
        title);
  HardwareRetiming retimed = retime_hardware(profile, analysis, work, *source, target);
  add_retiming(out, std::move(retimed.factor), std::move(retimed.notes));
  out.names.push_back("hardware " + target.name);
}

// B's added activities after A's, rank by rank (B's references to its own added ones moved past A's).
void append_added(std::vector<std::vector<measure::AddedActivity>>& a,
                  std::vector<std::vector<measure::AddedActivity>> b) {
  if (a.size() < b.size()) a.resize(b.size());
  for (std::size_t r = 0; r < b.size(); ++r) {
    const auto offset = static_cast<std::uint32_t>(a[r].size());
    for (measure::AddedActivity& x : b[r]) {
      if (x.after_added != measure::AddedActivity::kNoActivity) x.after_added += offset;
      a[r].push_back(std::move(x));
    }
  }
}

// The model of WORKLOAD for an edit that adds collectives from it (FLAG names the edit), and the GPU.
std::pair<model::ModelSpec, model::HardwareSpec> model_and_gpu(
    const Workload& workload, std::string_view flag, std::string_view title,
    std::string_view what = "the collectives it adds") {
  if (workload.pp.value_or(1) > 1)
    fail(
        "{}: {} from one GPU of a pipeline (pp {}) is not replayed: each stage holds another share of the "
        "model",
        title, flag, *workload.pp);
  model::ModelSpec model;
  std::string why;
  if (!inferred_model(workload, model, &why))
    fail("{}: {} sizes {} by the model, and {}", title, flag, what,
         why.empty() ? std::string(kNotATransformer) : why);
  const auto hw = hardware_spec(workload);
  if (!hw)
    fail(
        "{}: {} times {} on the GPU's links, and the GPU it ran on is not known: state it with `meshscope "
        "annotate PROFILE --hardware NAME`",
        title, flag, what);
  return {model, *hw};
}

// The activations of one micro-batch (tokens × hidden × the element size the GEMMs ran in) × BATCH_SCALE,
// which FLAG's WHAT carry; a note says the element size.
double activation_bytes(const Workload& workload, const model::ModelSpec& model, double batch_scale,
                        std::string_view flag, std::string_view what, std::string_view title,
                        WhatifEdits& out) {
  double tokens = 0;
  if (workload.tokens_per_micro_batch)
    tokens = static_cast<double>(*workload.tokens_per_micro_batch);
  else if (workload.micro_batch && workload.seq)
    tokens = static_cast<double>(*workload.micro_batch * *workload.seq);
  if (!(tokens > 0))
    fail(
        "{}: {} sizes its {} by the tokens of a micro-batch, which the profile does not show: "
        "state them with `meshscope annotate PROFILE --layout micro_batch=N,seq=N`",
        title, flag, what);
  const bool fp32 = workload.precision && *workload.precision == measure::WorkPrecision::kFP32;
  const std::string note =
      fmt::format("activations of {} bytes per element: the GEMMs ran in {}", fp32 ? 4 : 2,
                  workload.precision ? measure::to_string(*workload.precision) : "a precision not recorded");
  if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) out.notes.push_back(note);
  return tokens * batch_scale * model.hidden * (fp32 ? 4.0 : 2.0);
}

// --tp N from tp 1: Megatron-LM's all-reduces added to the replay (compare::plan_tensor_sync).
void add_tensor_sync(const Profile& profile, const measure::Analysis& analysis, const Workload& workload,
                     const LayoutEdit& edit, std::string_view title, WhatifEdits& out) {
  const std::string flag = fmt::format("--tp {}", edit.tp);
  const auto [model, hw] = model_and_gpu(workload, flag, title);
  const int seq = static_cast<int>(workload.seq.value_or(model.seq));
  TensorSyncRequest request;
  request.tp = edit.tp;
  request.message_bytes =
      activation_bytes(workload, model, edit.batch_scale, flag, "all-reduces", title, out);
  GradientSync sync = plan_tensor_sync(profile, analysis, tensor_sync_points(model, seq), hw, request, title);
  append_added(out.edits.added, std::move(sync.added));
  out.notes.insert(out.notes.end(), sync.notes.begin(), sync.notes.end());
}

LayoutEdit layout_edit(const WhatifRequest& request, const Workload& workload, std::string_view title);

// --pp N from pp 1: the stages the edited replay is cut into (compare::pipeline_stages).
void add_pipeline(const Workload& workload, const WhatifRequest& request, std::string_view title,
                  WhatifEdits& out) {
  const std::string flag = fmt::format("--pp {}", request.pp);
  if (request.pp < 2)
    fail("{}: {}: give 2 or more stages (the profile's own stage is what the replay runs)", title, flag);
  if (!workload.pp)
    fail(
        "{}: {} needs the pipeline degree the job ran, which its process groups do not show: "
        "state the layout with `meshscope annotate PROFILE --layout pp=N`",
        title, flag);
  const auto [model, hw] = model_and_gpu(workload, flag, title, "the sends between its stages");
  if (request.pp > model.layers)
    fail("{}: {}: the model has {} layers, so a stage would hold none", title, flag, model.layers);
  PipelineEdit edit{
      stage_shares(model, static_cast<int>(workload.seq.value_or(model.seq)), request.pp), hw, {}};
  edit.request.pp = request.pp;
  const double batch = layout_edit(request, workload, title).batch_scale;
  const auto degree = [](int given, const std::optional<std::int64_t>& measured) -> std::int64_t {
    return given > 0 ? given : measured.value_or(1);
  };
  // Megatron-LM sends each stage's activations split over the tensor-parallel ranks (its scatter-gather
  // across them, Narayanan et al. 2021 §4.1), each rank 1/tp of them.
  const std::int64_t tp = degree(request.tp, workload.tp);
  const int split = request.micro_batches;
  edit.request.micro_batch_split = split;
  edit.request.message_bytes =
      activation_bytes(workload, model, batch / split, flag, "sends", title, out) / static_cast<double>(tp);
  if (split > 1) {
    // Each new micro-batch holds whole sequences: the measured one's × the batch edit's factor / K.
    std::optional<double> sequences;
    if (workload.micro_batch)
      sequences = static_cast<double>(*workload.micro_batch);
    else if (workload.tokens_per_micro_batch && workload.seq && *workload.seq > 0)
      sequences = static_cast<double>(*workload.tokens_per_micro_batch) / static_cast<double>(*workload.seq);
    if (!sequences)
      fail(
          "{}: --micro-batches {}: the sequences of a measured micro-batch are not known: state them with "
          "`meshscope annotate PROFILE --layout micro_batch=N,seq=N`",
          title, split);
    const double each = *sequences * batch / split;
    if (each < 1 - 1e-9 || std::abs(each - std::round(each)) > 1e-9)
      fail(
          "{}: --micro-batches {}: each micro-batch would hold {:.3g} sequences ({:.3g} x {:.3g} / {}): not "
          "a whole "
          "number, 1 or more",
          title, split, each, *sequences, batch, split);
    out.notes.push_back(fmt::format(
        "each measured micro-batch run as {} (--micro-batches): its kernels re-timed for 1/{} of its "
        "tokens as the batch edit re-times them, each piece of it scheduled {} times, the step's work before "
        "and after "
        "its passes once",
        split, split, split));
  }
  edit.request.stride = tp * degree(0, workload.cp) * degree(request.dp, workload.dp);
  if (tp > 1)
    out.notes.push_back(
        fmt::format("each send 1/{} of a micro-batch's activations: Megatron-LM's scatter-gather "
                    "over the tensor-parallel ranks",
                    tp));
  if (!request.hardware.empty())
    out.notes.push_back(
        "the sends between stages timed on the links of the GPU the profile ran on (--hardware re-times the "
        "kernels)");
  out.pipeline = std::move(edit);
  out.names.push_back(fmt::format("pp {}", request.pp));
  if (split > 1) out.names.push_back(fmt::format("micro-batches x{}", split));
}

// --dp N from one replica: the gradients' all-reduces N replicas would run, added to the replay
// (compare::plan_gradient_sync), for the model the profile shows on the GPU it ran on.
void add_gradient_sync(const Profile& profile, const measure::Analysis& analysis,
                       const measure::ProfileWork& work, const Workload& workload, const LayoutEdit& edit,
                       std::string_view title, WhatifEdits& out) {
  if (workload.training && !*workload.training)
    fail(
        "{}: --dp {}: the profile recorded no backward pass (inference): its replicas would exchange no "
        "gradients",
        title, edit.dp);
  const auto [model, hw] = model_and_gpu(workload, fmt::format("--dp {}", edit.dp), title);
  GradientSyncRequest request;
  request.dp = edit.dp;
  request.tp = edit.tp > 0 ? edit.tp : static_cast<int>(workload.tp.value_or(1));
  request.cp = static_cast<int>(workload.cp.value_or(1));
  const ParameterPrecision precision = parameter_precision(work);
  request.bytes_per_gradient = precision.bytes;
  const int seq = static_cast<int>(workload.seq.value_or(model.seq));
  GradientSync sync =
      plan_gradient_sync(profile, analysis, gradient_buckets(model, seq, request), hw, request, title);
  append_added(out.edits.added, std::move(sync.added));
  out.notes.insert(out.notes.end(), sync.notes.begin(), sync.notes.end());
  out.notes.push_back(fmt::format(
      "gradients of {} bytes per parameter: {}; each rank's batch {}, so the global batch x{:.3g}",
      request.bytes_per_gradient, precision.reason,
      edit.batch_scale == 1 ? std::string("as measured") : fmt::format("x{:.3g}", edit.batch_scale),
      edit.dp * edit.batch_scale));
}

// --tp, --dp: the groups' collectives, and for --tp the split kernels, re-timed (compare::retime_layout);
// with MICRO_BATCH_SPLIT K (--micro-batches, for --pp) the kernels and activations' collectives of a
// micro-batch 1/K the size (the step's K times as many run in the pipeline).
void add_layout(const Profile& profile, const measure::Analysis& analysis, const measure::ProfileWork& work,
                const Workload& workload, const LayoutEdit& edit, int micro_batch_split,
                std::string_view title, WhatifEdits& out) {
  for (const auto& [field, given, known] : {std::tuple{"tp", edit.tp, workload.tp.has_value()},
                                            std::tuple{"dp", edit.dp, workload.dp.has_value()}}) {
    if (given > 0 && !known)
      fail(
          "{}: --{} needs the {} degree the job ran, which its process groups do not show: state the layout "
          "with `meshscope annotate PROFILE --layout dp=N,tp=N`",
          title, field, field == std::string_view("tp") ? "tensor-parallel" : "data-parallel");
  }
  // From one replica the replay adds the gradients' all-reduces instead of re-timing the profile's own.
  const bool from_one = edit.dp >= 2 && workload.dp.value_or(0) == 1;
  const bool tp_from_one = edit.tp >= 2 && workload.tp.value_or(0) == 1;
  LayoutEdit retimed_edit = edit;
  retimed_edit.data_parallel_added = from_one;
  retimed_edit.tensor_parallel_added = tp_from_one;
  retimed_edit.batch_scale /= micro_batch_split;
  retimed_edit.micro_batch_split = micro_batch_split;
  if (retimed_edit.tp > 0 || retimed_edit.dp > 0 || retimed_edit.batch_scale != 1 || micro_batch_split > 1) {
    // Which other kernels split with the GEMMs, from their operators' recorded shapes and the model's sizes.
    std::vector<std::vector<std::uint8_t>> sharded;
    model::ModelSpec model;
    if (edit.tp > 0 && !work.ops.empty() && inferred_model(workload, model))
      sharded = tensor_sharded_kernels(profile, work, model, static_cast<int>(workload.tp.value_or(1)));
    LinkRetiming retimed =
        retime_layout(profile, analysis, inferred_layout(workload), retimed_edit, hardware_spec(workload),
                      std::string(title), sharded.empty() ? nullptr : &sharded);
    add_retiming(out, std::move(retimed.factor), std::move(retimed.notes));
  }
  if (tp_from_one) add_tensor_sync(profile, analysis, workload, retimed_edit, title, out);
  if (from_one) add_gradient_sync(profile, analysis, work, workload, edit, title, out);
  if (edit.tp > 0) out.names.push_back(fmt::format("tp {}", edit.tp));
  if (edit.dp > 0) out.names.push_back(fmt::format("dp {}", edit.dp));
  if (edit.batch_scale != 1) out.names.push_back(fmt::format("batch x{:.3g}", edit.batch_scale));
}

// The layout edit of REQUEST: --keep-global-batch gives each rank dp / M of its measured batch.
LayoutEdit layout_edit(const WhatifRequest& request, const Workload& workload, std::string_view title) {
  LayoutEdit edit{.tp = request.tp, .dp = request.dp, .batch_scale = request.batch};
  if (!request.keep_global_batch) return edit;
  std::string error;
  if (!valid_combination(request, error)) fail("{}", error);
  edit.keep_global_batch = true;
  if (!workload.dp)
    fail(
        "{}: --keep-global-batch needs the data-parallel degree the job ran, which its process groups do not "
        "show: state the layout with `meshscope annotate PROFILE --layout dp=N,tp=N`",
        title);
  edit.batch_scale = static_cast<double>(*workload.dp) / request.dp;
  return edit;
}

// A batch the profile states (`annotate --layout global_batch=N`) cannot leave a rank less than one sequence.
void check_sequences_per_rank(const LayoutEdit& edit, const Workload& workload, std::string_view title) {
  const auto& batch = workload.stated_layout.global_batch;
  if (!batch || !workload.dp || *workload.dp <= 0 || edit.batch_scale == 1) return;
  const double per_rank = static_cast<double>(*batch) / static_cast<double>(*workload.dp) * edit.batch_scale;
  if (per_rank < 1.0)
    fail(
        "{}: each rank would run {:.3g} sequences per step (the stated global batch {} over dp {}, x "
        "{:.3g}): "
        "fewer than one",
        title, per_rank, *batch, *workload.dp, edit.batch_scale);
  if (std::abs(per_rank - std::round(per_rank)) > 1e-9)
    fail(
        "{}: each rank would run {:.3g} sequences per step (the stated global batch {} over dp {}, x "
        "{:.3g}): "
        "not a whole number",
        title, per_rank, *batch, *workload.dp, edit.batch_scale);
}

// The value of flag FLAG in WORD ("--tp=4") or in the next word of TEXT from AT ("--tp 4").
std::optional<std::string_view> flag_value(std::string_view word, std::string_view flag,
                                           std::string_view text, std::size_t& at) {
  if (word == flag) {
    while (at < text.size() && (text[at] == ' ' || text[at] == ',' || text[at] == '\t')) ++at;
    const std::size_t end = std::min(text.find_first_of(" ,\t", at), text.size());
    const std::string_view value = text.substr(at, end - at);
    at = end + 1;
    return value;
  }
  if (word.size() > flag.size() && word.starts_with(flag) && word[flag.size()] == '=')
    return word.substr(flag.size() + 1);
  return std::nullopt;
}

bool parse_degree(std::string_view flag, std::string_view value, int& out, std::string& error) {
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 1 << 20) {
    error = fmt::format("{} {}: expected a whole number of GPUs, 1 or more", flag, value);
    return false;
  }
  out = n;
  return true;
}

}  // namespace

bool parse_batch_scale(std::string_view value, double& out, std::string& error) {
  double f = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), f);
  if (ec != std::errc() || end != value.data() + value.size() || !(f > 0) || !(f <= 1e6)) {
    error = fmt::format("--batch {}: expected a positive factor on each rank's batch (0.5, 2, ...)", value);
    return false;
  }
  out = f;
  return true;
}

bool valid_combination(const WhatifRequest& request, std::string& error) {
  if (request.micro_batches > 4096) {
    error = fmt::format("--micro-batches {}: at most 4096 per measured micro-batch", request.micro_batches);
    return false;
  }
  if (request.micro_batches != 1 && request.pp <= 0) {
    error = fmt::format(
        "--micro-batches {}: it splits each micro-batch for a pipeline: give the stages too (--pp N)",
        request.micro_batches);
    return false;
  }
  if (!request.keep_global_batch) return true;
  if (request.batch_given) {
    error = fmt::format(
        "--keep-global-batch and --batch {:g}: the one keeps the global batch, the other changes it: give "
        "one",
        request.batch);
    return false;
  }
  if (request.dp <= 0) {
    error = "--keep-global-batch: give the data-parallel degree it keeps the global batch over (--dp M)";
    return false;
  }
  return true;
}

bool parse_whatif_line(std::string_view text, WhatifRequest& out, std::string& error) {
  out = {};
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find_first_of(" ,\t", at), text.size());
    const std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty() || word == "replay") continue;  // "replay": the run as measured, no edit
    if (word == "fix-straggler") {
      out.fix_straggler = true;
      continue;
    }
    if (word == "--keep-global-batch") {
      out.keep_global_batch = true;
      continue;
    }
    if (word.starts_with("--")) {
      bool known = false;
      for (const auto& [flag, degree] :
           {std::pair{"--tp", &out.tp}, std::pair{"--dp", &out.dp}, std::pair{"--pp", &out.pp},
            std::pair{"--micro-batches", &out.micro_batches}}) {
        if (const auto value = flag_value(word, flag, text, at)) {
          if (!parse_degree(flag, *value, *degree, error)) return false;
          known = true;
        }
      }
      for (const auto& [flag, latency] : {std::pair{"--link", false}, std::pair{"--latency", true}}) {
        if (const auto value = flag_value(word, flag, text, at)) {
          LinkEdit e;
          if (!parse_link_edit(*value, latency, e, error)) return false;
          out.links.push_back(std::move(e));
          known = true;
        }
      }
      if (const auto value = flag_value(word, "--batch", text, at)) {
        if (!parse_batch_scale(*value, out.batch, error)) return false;
        out.batch_given = true;
        known = true;
      }
      if (const auto value = flag_value(word, "--hardware", text, at)) {
        if (value->empty()) {
          error = "--hardware: expected a GPU's name (b200, h100, ...) or a TOML file";
          return false;
        }
        out.hardware = std::string(*value);
        known = true;
      }
      if (!known) {
        error = fmt::format(
            "{}: expected --tp N, --dp N, --pp N, --micro-batches K, --keep-global-batch, --batch F, --link "
            "DOMAIN=GB/s, "
            "--latency "
            "DOMAIN=us or --hardware GPU",
            word);
        return false;
      }
      continue;
    }
    measure::ScaleEdit e;
    if (!measure::parse_scale_edit(word, e, error)) {
      error = fmt::format("{}: expected CLASS=F, PATTERN=F, fix-straggler or a flag of whatif (--tp N, ...)",
                          word);
      return false;
    }
    out.scales.push_back(std::move(e));
  }
  return valid_combination(out, error);
}

WhatifEdits whatif_edits(const Profile& profile, const measure::Analysis& analysis,
                         const measure::ProfileWork& work, const Workload& workload,
                         const WhatifRequest& request, const model::HardwareSpec* target,
                         std::string_view title) {
  WhatifEdits out;
  for (const auto& e : request.scales) {
    out.names.push_back("scale " + e.text);
    out.edits.scales.push_back(e);
  }
  out.edits.fix_straggler = request.fix_straggler;
  for (const auto& e : request.links) out.names.push_back((e.latency_s >= 0 ? "latency " : "link ") + e.text);
  if (target) add_hardware(profile, analysis, work, workload, *target, title, out);
  if (request.tp > 0 || request.dp > 0 || request.batch != 1 || request.keep_global_batch ||
      request.micro_batches != 1) {
    const LayoutEdit edit = layout_edit(request, workload, title);
    check_sequences_per_rank(edit, workload, title);
    add_layout(profile, analysis, work, workload, edit, request.micro_batches, title, out);
  }
  if (request.pp > 0) add_pipeline(workload, request, title, out);
  if (!request.links.empty()) {
    const auto hw = hardware_spec(workload);
    LinkRetiming retimed = retime_links(profile, analysis, request.links, hw ? hw->gpus_per_node : 8);
    add_retiming(out, std::move(retimed.factor), std::move(retimed.notes));
    if (!hw)
      out.notes.push_back("no hardware known: ranks placed 8 to a node where their host names do not tell");
  }
  return out;
}

}  // namespace meshscope::compare
