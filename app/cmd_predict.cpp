// `meshscope predict [--json] MODEL HARDWARE CONFIG [--timeline OUT.json]`: memory, step time and MFU of one
// layout (analysis/model); --timeline writes the predicted pipeline schedule of one step as a Chrome trace.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "analysis/model/timeline.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "profiler/output_file.hpp"

namespace meshscope::app {
namespace {

struct Options {
  bool json = false;
  bool explain = false;
  std::string timeline;
  ModelFlags model;
  ConfigFlags config;
  AssumptionFlags assumptions;
};

// Chrome trace JSON (Perfetto loads it): one thread per pipeline stage, complete ("X") events in
// microseconds.
void write_timeline(const std::string& path, const model::Timeline& tl, const model::ModelSpec& m) {
  JsonWriter json;
  json.begin_object();
  json.key("traceEvents").begin_array();
  json.begin_object().field("name", "process_name").field("ph", "M").field("pid", 0);
  json.key("args").begin_object().field("name", fmt::format("meshscope prediction: {}", m.name)).end_object();
  json.end_object();
  for (int s = 0; s < tl.stages; ++s) {
    json.begin_object().field("name", "thread_name").field("ph", "M").field("pid", 0).field("tid", s);
    json.key("args").begin_object().field("name", fmt::format("stage {}", s)).end_object();
    json.end_object();
  }
  for (const auto& e : tl.events) {
    std::string name{model::to_string(e.kind)};
    if (e.kind == model::TimelineKind::kForward || e.kind == model::TimelineKind::kBackward) {
      name = fmt::format("{} mb{} c{}", e.kind == model::TimelineKind::kForward ? "F" : "B", e.micro_batch,
                         e.chunk);
    } else if (e.micro_batch >= 0) {
      name = fmt::format("{} mb{}", name, e.micro_batch);
    }
    json.begin_object();
    json.field("name", name)
        .field("cat", model::to_string(e.kind))
        .field("ph", "X")
        .field("pid", 0)
        .field("tid", e.stage);
    json.field("ts", e.start_s * 1e6).field("dur", e.duration_s * 1e6);
    json.key("args").begin_object().field("micro_batch", e.micro_batch).field("chunk", e.chunk).end_object();
    json.end_object();
  }
  json.end_array();
  json.field("displayTimeUnit", "ms");
  json.end_object();
  write_output_file(path, json.str() + "\n");  // a regular file only, written whole or not at all
}

const bool registered = register_command(
    {"predict", 40, [](CLI::App& root) {
       auto* cmd = root.add_subcommand("predict", "Predict memory, step time and MFU of one layout");
       auto opts = std::make_shared<Options>();
       cmd->add_flag("--json", opts->json, "Print JSON (DESIGN.md predict keys)");
       cmd->add_flag(
           "--explain", opts->explain,
           "Print the step time as a sum of named parts with formula and inputs (JSON: \"explain\")");
       cmd->add_option("--timeline", opts->timeline,
                       "Write the predicted step as a Chrome/Perfetto trace JSON");
       add_model_flags(*cmd, opts->model);
       add_config_flags(*cmd, opts->config);
       add_assumption_flags(*cmd, opts->assumptions);
       cmd->callback([opts] {
         const model::ModelSpec m = resolve_model(opts->model, opts->config);
         const model::HardwareSpec hw = resolve_hardware(opts->model);
         model::ParallelConfig parsed = parse_config(opts->config);
         const model::Efficiencies eff = resolve_efficiencies(opts->assumptions, hw, &parsed);
         const model::ParallelConfig c = with_model_errors([&] { return model::resolve(parsed, m, hw); });
         const model::Prediction p =
             with_model_errors([&] { return model::predict(m, hw, c, eff, opts->explain); });
         if (!opts->timeline.empty()) write_timeline(opts->timeline, model::build_timeline(p), m);
         if (opts->json) {
           JsonWriter json(true);
           json.begin_object();
           write_prediction(json, p, m, hw, eff);
           if (opts->explain) write_explanation(json, p);
           json.end_object();
           std::fputs((json.str() + "\n").c_str(), stdout);
         } else {
           std::fputs(format_prediction(p, m, hw, eff).c_str(), stdout);
           if (opts->explain) std::fputs(format_explanation(p).c_str(), stdout);
         }
       });
     }});

}  // namespace
}  // namespace meshscope::app
