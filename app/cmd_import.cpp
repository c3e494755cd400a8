// meshscope import TRACE... -o OUT.msdb
#include <cstdio>
#include <memory>

#include "app/command.hpp"
#include "collectors/import/import.hpp"
#include "profiler/error.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string output;
  bool quiet = false;
};

const bool registered = meshscope::app::register_command(
    {"import", 10, [](CLI::App& root) {
       auto* cmd = root.add_subcommand(
           "import",
           "Import traces (Kineto JSON .json/.json.gz, Nsight Systems SQLite) into one profile; a directory "
           "stands for all its traces");
       auto opts = std::make_shared<Options>();
       cmd->add_option("TRACE", opts->inputs, "Trace files or directories, one job")->required();
       cmd->add_option("-o,--output", opts->output, "Profile to write (.msdb)")->required();
       cmd->add_flag("-q,--quiet", opts->quiet, "Print nothing on success");
       cmd->callback([opts] {
         std::vector<std::filesystem::path> inputs(opts->inputs.begin(), opts->inputs.end());
         const auto summary = meshscope::import_traces(inputs, opts->output);
         if (opts->quiet) return;
         std::uint64_t gpu = 0, cpu = 0;
         for (const auto& r : summary.ranks) {
           gpu += r.gpu_events;
           cpu += r.cpu_events;
         }
         std::printf("imported %zu rank%s (%llu GPU events, %llu CPU events) into %s\n", summary.ranks.size(),
                     summary.ranks.size() == 1 ? "" : "s", static_cast<unsigned long long>(gpu),
                     static_cast<unsigned long long>(cpu), opts->output.c_str());
         for (const auto& note : summary.notes) std::printf("note: %s\n", note.c_str());
       });
     }});

}  // namespace
