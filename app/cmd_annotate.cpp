// `meshscope annotate PROFILE [--model NAME|FILE.toml] [--hardware NAME|FILE.toml] [--layout SPEC]
// [--clear]`: states what the job ran where its traces cannot tell (no shapes recorded, a model not
// recognised, a GPU not named, a layout no process group shows), stored in the profile
// (analysis/compare/statement.hpp) for compare, info and the Explorer. Without options it prints what is
// stated.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/compare/statement.hpp"
#include "analysis/model/presets.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "job/job.hpp"
#include "job/profile_input.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_meta.hpp"

namespace meshscope::app {
namespace {

struct Options {
  std::string profile, model, hardware, layout;
  bool clear = false;
};

void run(const Options& o) {
  const std::filesystem::path path(o.profile);
  if (!is_profile_input({path}))
    fail(
        "{}: annotate writes into a profile, and this is a trace or a folder of traces: import it with "
        "`meshscope import {} -o JOB.msdb --model ... --layout ...`",
        o.profile, o.profile);
  Job job = Job::open({path});
  compare::Statement statement = compare::stated(job.description());
  if (o.model.empty() && o.hardware.empty() && o.layout.empty() && !o.clear) {
    std::printf("%s: %s\n", o.profile.c_str(), compare::statement_line(statement).c_str());
    return;
  }
  if (o.clear) statement = {};
  with_model_errors([&] {
    if (!o.model.empty()) statement.model = model::load_model(o.model);
    if (!o.hardware.empty()) statement.hardware = model::load_hardware(o.hardware);
    // The keys given replace the stated ones; the others stay.
    if (!o.layout.empty()) statement.layout.update(compare::parse_layout(o.layout));
  });
  update_meta(path, compare::meta_changes(statement));
  std::printf("%s: %s\n", o.profile.c_str(), compare::statement_line(statement).c_str());
}

const bool registered = register_command(
    {"annotate", 15, [](CLI::App& root) {
       auto* cmd = root.add_subcommand(
           "annotate",
           "State what a profile's job ran where its traces cannot tell (the model, the GPU, the layout), "
           "stored in "
           "the profile for compare, info and the Explorer; without options, print what is stated");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->profile, "A meshscope profile (.msdb)")->required();
       cmd->add_option("--model", opts->model,
                       "The model (a preset: " + fmt::format("{}", fmt::join(model::model_presets(), ", ")) +
                           "; or FILE.toml, e.g. a copy of a preset edited)");
       cmd->add_option("--hardware", opts->hardware,
                       "The GPU (a preset: " + fmt::format("{}", fmt::join(model::hardware_presets(), ", ")) +
                           "; or FILE.toml)");
       cmd->add_option("--layout", opts->layout,
                       "tp=N,pp=N,dp=N,cp=N,ep=N,micro_batch=N,seq=N,global_batch=N,mode=training|inference "
                       "(any of them; the keys given replace the stated ones)");
       cmd->add_flag("--clear", opts->clear, "Remove what is stated (then store what else is given)");
       cmd->callback([opts] { run(*opts); });
     }});

}  // namespace
}  // namespace meshscope::app
