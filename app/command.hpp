// Command registry for the `meshscope` command line. Each command lives in its own cmd_<name>.cpp, which
// registers itself at start-up, so commands can be added without touching main.cpp.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "job/job.hpp"

namespace meshscope::app {

struct Command {
  std::string name;
  int order;  // position in --help
  // Adds the subcommand to ROOT and sets its callback. The callback sets exit_code() or throws
  // meshscope::Error.
  std::function<void(CLI::App& root)> setup;
};

bool register_command(Command command);
const std::vector<Command>& commands();

// What `meshscope` with no arguments does: the registered job with the highest priority runs.
bool register_default_job(int priority, std::function<int()> job);
int run_default_job();

// Exit status the running command wants (0 unless it says otherwise).
int& exit_code();

// Runs one meshscope command line (without the program name) in this process, as main() would: for jobs that
// chain commands (the default job, `record` printing the report). Parse errors throw CLI::ParseError.
int run_command_line(const std::vector<std::string>& args);

// The text default job: imports the bundled sample job and prints `info` and `report` (cmd_default.cpp). The
// front end's default job falls back to it when there is no display.
int run_text_sample_job();

// True when a command of that name is registered.
bool has_command(const std::string& name);

// Path of the bundled sample job (assets/sample/sample_job under model::assets_dir()).
std::string bundled_sample_path();

// What a command was given, opened as a job (job/job.hpp): a profile as it is; traces, a folder of traces, an
// Nsight Systems export or several files of one job imported first into the user's cache, as `view` does,
// with one line on standard error saying where when it is a terminal, and a note when their summaries failed.
Job open_job(const std::vector<std::string>& inputs, JobOptions options = {});

// The help text of a command's inputs.
inline constexpr const char* kProfileInputHelp =
    "A meshscope profile (.msdb), or traces to import first: Kineto JSON files, a folder of them, an Nsight "
    "Systems export";

}  // namespace meshscope::app
