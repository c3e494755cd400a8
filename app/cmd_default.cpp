// What `meshscope` does with no arguments (until a front end registers a higher-priority job): import the
// bundled sample job and print what the command line knows about it.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/command.hpp"
#include "collectors/import/import.hpp"

namespace {

int run_command_line(const std::vector<std::string>& args) {
  CLI::App root{"meshscope"};
  for (const auto& command : meshscope::app::commands()) command.setup(root);
  std::vector<const char*> argv{"meshscope"};
  for (const auto& a : args) argv.push_back(a.c_str());
  root.parse(static_cast<int>(argv.size()), argv.data());
  return meshscope::app::exit_code();
}

bool has_command(const std::string& name) {
  for (const auto& c : meshscope::app::commands()) {
    if (c.name == name) return true;
  }
  return false;
}

int sample_job() {
  const std::filesystem::path sample = meshscope::app::bundled_sample_path();
  const char* cache_home = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path cache = cache_home && *cache_home ? std::filesystem::path(cache_home)
                                : home && *home           ? std::filesystem::path(home) / ".cache"
                                                          : std::filesystem::temp_directory_path();
  cache /= "meshscope";
  std::filesystem::create_directories(cache);
  const auto profile = cache / "sample_job.msdb";
  std::printf("meshscope: no arguments, so importing the bundled sample job %s\n\n", sample.c_str());
  meshscope::import_traces({sample}, profile);
  int rc = run_command_line({"info", profile.string()});
  if (rc == 0 && has_command("report")) {
    std::printf("\n");
    rc = run_command_line({"report", profile.string()});
  }
  std::printf("\nNext: meshscope --help lists every command; the profile is %s\n", profile.c_str());
  return rc;
}

const bool registered = meshscope::app::register_default_job(0, sample_job);

}  // namespace
