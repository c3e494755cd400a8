#include "app/command.hpp"

#include <unistd.h>

#include <algorithm>
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

std::filesystem::path executable_dir() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path(".") : self.parent_path();
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
  const std::filesystem::path name = "assets/sample/sample_job";
  const std::filesystem::path candidates[] = {
      executable_dir() / ".." / name, executable_dir() / "../.." / name,
      executable_dir() / "../share/meshscope" / name, std::filesystem::path(MESHSCOPE_SOURCE_DIR) / name};
  for (const auto& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::exists(candidate, error))
      return std::filesystem::weakly_canonical(candidate).string();
  }
  return (std::filesystem::path(MESHSCOPE_SOURCE_DIR) / name).string();
}

}  // namespace meshscope::app
