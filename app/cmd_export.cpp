// meshscope export PROFILE --format perfetto -o trace.json
#include <cstdio>
#include <memory>

#include "app/command.hpp"
#include "profiler/error.hpp"
#include "profiler/perfetto_export.hpp"
#include "profiler/profile.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string format = "perfetto";
  std::string output;
};

const bool registered = meshscope::app::register_command(
    {"export", 60, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("export", "Write a profile as one Chrome-trace JSON for ui.perfetto.dev");
       auto opts = std::make_shared<Options>();
       cmd->add_option("PROFILE", opts->inputs, meshscope::app::kProfileInputHelp)->required();
       cmd->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"perfetto"}));
       cmd->add_option("-o,--output", opts->output, "Output file (.json)")->required();
       cmd->callback([opts] {
         meshscope::Job job = meshscope::app::open_job(opts->inputs);
         const meshscope::Profile& profile = job.complete_profile();
         meshscope::export_perfetto(profile, opts->output);
         std::printf("wrote %s (%zu ranks) for ui.perfetto.dev\n", opts->output.c_str(),
                     profile.ranks().size());
       });
     }});

}  // namespace
