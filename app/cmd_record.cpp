// meshscope record -o DIR [MODEL CONFIG] -- COMMAND...
// Runs COMMAND with the CUDA (CUPTI) and NCCL collectors injected, one profile per rank in DIR, then merges
// them into DIR/job.msdb with the hosts' clocks aligned, prints the `report` summary (and, given MODEL and
// CONFIG flags, the `compare` of prediction and measurement). Exits with the command's status.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "analysis/measure/summary.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "job/summaries.hpp"
#include "profiler/error.hpp"
#include "profiler/record/launch.hpp"
#include "profiler/record/merge.hpp"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string output;
  std::vector<std::string> command;
  bool no_merge = false;
  bool merge_only = false;
  bool quiet = false;
  meshscope::app::ModelFlags model;
  meshscope::app::ConfigFlags config;
};

// The MODEL/CONFIG flags given on the command line, as they were written (for `compare`).
std::vector<std::string> given_model_flags(CLI::App& cmd, const CLI::App& model_group) {
  std::vector<std::string> args;
  for (const CLI::Option* opt : model_group.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string name = "--" + opt->get_lnames().front();
    if (opt->get_expected_min() == 0) {
      args.push_back(name);
      continue;
    }
    for (const auto& value : opt->results()) {
      args.push_back(name);
      args.push_back(value);
    }
  }
  (void)cmd;
  return args;
}

int record(const Options& o, const std::vector<std::string>& model_args) {
  namespace rec = meshscope::record;
  const fs::path dir = o.output;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) meshscope::fail("{}: cannot create the output folder: {}", dir.string(), ec.message());
  const fs::path job = dir / "job.msdb";

  int status = 0;
  int stopped_by = 0;  // a terminating signal meshscope record itself received while the job ran
  if (!o.merge_only) {
    if (o.command.empty())
      meshscope::fail("record: no command given (meshscope record -o DIR -- COMMAND...)");
    const auto libraries = rec::find_collector_libraries(rec::self_executable());
    std::vector<std::string> notes;
    const auto env = rec::record_environment(dir, libraries, notes);
    for (const auto& note : notes) std::fprintf(stderr, "meshscope record: %s\n", note.c_str());
    std::fflush(stdout);
    std::string error;
    status = rec::run_command(o.command, env, error, &stopped_by);
    if (!error.empty()) {
      std::fprintf(stderr, "meshscope record: %s\n", error.c_str());
      return status;
    }
    if (status != 0) std::fprintf(stderr, "meshscope record: the command exited with status %d\n", status);
    if (stopped_by != 0) {
      std::fprintf(stderr, "meshscope record: stopped by signal %d; merging what the ranks wrote\n",
                   stopped_by);
      if (status == 0) status = 128 + stopped_by;  // the job ended cleanly, but it was asked to stop
    }
  }
  if (o.no_merge) return status;
  // The merge finishes what it starts: a stop asked for now is honoured when it is done.
  rec::SignalDeferral deferral;
  const auto finish = [&](int code) {
    if (deferral.signal() != 0 && code == 0) return 128 + deferral.signal();
    return code;
  };

  const auto files = rec::find_rank_files(dir, job);
  if (files.empty()) {
    std::fprintf(
        stderr,
        "meshscope record: no per-rank profile in %s (the command used neither CUDA nor NCCL, or the "
        "collectors could not load)\n",
        dir.c_str());
    return finish(status != 0 ? status : 1);
  }
  rec::MergeResult merged;
  try {
    merged = rec::merge_rank_profiles(files, job);
    meshscope::add_summaries(job);  // what info, diff and the overview read (docs/PROFILE.md)
  } catch (const meshscope::Error& e) {
    std::fprintf(stderr, "meshscope record: %s\n", e.what());
    return finish(status != 0 ? status : 1);
  }
  if (!o.quiet) {
    std::printf("recorded %zu rank%s (%zu file%s, %llu GPU activities, %llu collectives) into %s\n",
                merged.ranks.size(), merged.ranks.size() == 1 ? "" : "s", files.size(),
                files.size() == 1 ? "" : "s", static_cast<unsigned long long>(merged.activities),
                static_cast<unsigned long long>(merged.collectives), job.c_str());
    for (const auto& r : merged.ranks) {
      if (r.clock_offset_ns != 0) {
        std::printf("  rank %d (%s): clock shifted by %lld ns\n", r.rank, r.node.c_str(),
                    static_cast<long long>(r.clock_offset_ns));
      }
    }
    for (const auto& note : merged.notes) std::printf("note: %s\n", note.c_str());
    std::fflush(stdout);
    // The summaries come after the job ran: their failure is reported, and the command's status stands.
    auto summary = [](const std::vector<std::string>& args) {
      std::printf("\n");
      std::fflush(stdout);
      try {
        meshscope::app::run_command_line(args);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "meshscope %s: %s\n", args.front().c_str(), e.what());
      }
    };
    // A job that was asked to stop gets its profile merged, not summaries that would delay the stop.
    const bool stopping = stopped_by != 0 || deferral.signal() != 0;
    if (!stopping && meshscope::app::has_command("report")) summary({"report", job.string()});
    if (!stopping && !model_args.empty() && meshscope::app::has_command("compare")) {
      std::vector<std::string> args{"compare", job.string()};
      args.insert(args.end(), model_args.begin(), model_args.end());
      summary(args);
    }
  }
  return finish(status);
}

const bool registered = meshscope::app::register_command(
    {"record", 55, [](CLI::App& root) {
       auto* cmd = root.add_subcommand("record",
                                       "Run COMMAND with the CUDA and NCCL collectors, one profile per rank "
                                       "in DIR, merged into DIR/job.msdb");
       auto opts = std::make_shared<Options>();
       cmd->add_option("-o,--output", opts->output, "Folder for the per-rank profiles and job.msdb")
           ->required();
       cmd->add_option("COMMAND", opts->command,
                       "The command to run, after -- (torchrun ..., srun ..., python ...)");
       cmd->add_flag("--no-merge", opts->no_merge, "Only run and record (merge later with --merge-only)");
       cmd->add_flag("--merge-only", opts->merge_only,
                     "Merge the per-rank profiles already in DIR; run nothing");
       cmd->add_flag("-q,--quiet", opts->quiet, "Print no summary");
       auto* model_group =
           cmd->add_option_group("MODEL/CONFIG", "Model and configuration to compare against");
       meshscope::app::add_model_flags(*model_group, opts->model);
       meshscope::app::add_config_flags(*model_group, opts->config);
       cmd->callback([opts, cmd, model_group] {
         if (opts->merge_only && !opts->command.empty()) {
           throw CLI::ValidationError("record", "--merge-only runs no command");
         }
         meshscope::app::exit_code() = record(*opts, given_model_flags(*cmd, *model_group));
       });
     }});

}  // namespace
