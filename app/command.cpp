#include "app/command.hpp"

#include <unistd.h>

#include "analysis/model/presets.hpp"
#include "job/profile_input.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

namespace meshscope::app {
namespace {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

std::vector<std::pair<int, std::function<int()>>>& default_jobs() {
  static std::vector<std::pair<int, std::function<int()>>> jobs;
  return jobs;
}

}  // namespace

bool register_command(Command command) {
  registry().push_back(std::move(command));
  std::sort(registry().begin(), registry().end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  return true;
}

const std::vector<Command>& commands() {
  return registry();
}

bool register_default_job(int priority, std::function<int()> job) {
  default_jobs().emplace_back(priority, std::move(job));
  return true;
}

int run_default_job() {
  auto& jobs = default_jobs();
  if (jobs.empty()) return 2;
  auto best = std::max_element(jobs.begin(), jobs.end(),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
  return best->second();
}

int run_command_line(const std::vector<std::string>& args) {
  CLI::App root{"meshscope"};
  for (const auto& command : commands()) command.setup(root);
  std::vector<const char*> argv{"meshscope"};
  for (const auto& a : args) argv.push_back(a.c_str());
  exit_code() = 0;
  root.parse(static_cast<int>(argv.size()), argv.data());
  return exit_code();
}

bool has_command(const std::string& name) {
  return std::any_of(registry().begin(), registry().end(), [&](const Command& c) { return c.name == name; });
}

int& exit_code() {
  static int code = 0;
  return code;
}

std::string bundled_sample_path() {
  return (model::assets_dir() / "sample" / "sample_job").string();
}

Job open_job(const std::vector<std::string>& inputs, JobOptions options) {
  const std::vector<std::filesystem::path> sources(inputs.begin(), inputs.end());
  Job job = Job::open(sources, std::move(options));
  const ProfileInput& input = job.input();
  if (input.imported && ::isatty(STDERR_FILENO) == 1) {
    // On a terminal only, so that a script's standard error holds nothing but a failure's one line (and on
    // standard error, so that --json output stays one document).
    std::fprintf(stderr, "meshscope: imported %s into %s\n", job.title().c_str(), input.profile.c_str());
  }
  if (!input.summaries_error.empty())
    std::fprintf(stderr, "meshscope: note: %s; the profile is read without them\n",
                 input.summaries_error.c_str());
  return job;
}

}  // namespace meshscope::app
