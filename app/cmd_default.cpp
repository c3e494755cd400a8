// What `meshscope` does with no arguments (until a front end registers a higher-priority job): import the
// bundled sample job and print what the command line knows about it.
#include <cstdio>
#include <filesystem>

#include "app/command.hpp"
#include "collectors/import/import.hpp"
#include "job/import_job.hpp"
#include "profiler/text_format.hpp"

namespace meshscope::app {

int run_text_sample_job() {
  const std::filesystem::path sample = bundled_sample_path();
  const std::filesystem::path cache = meshscope::user_cache_dir();
  std::filesystem::create_directories(cache);
  const auto profile = cache / "sample_job.msdb";
  std::printf("meshscope: no arguments, so importing the bundled sample job %s\n\n", sample.c_str());
  meshscope::import_with_summaries({sample}, profile);  // as `import` does
  int rc = run_command_line({"info", profile.string()});
  if (rc == 0 && has_command("report")) {
    std::printf("\n");
    rc = run_command_line({"report", profile.string()});
  }
  std::printf("\nNext: meshscope --help lists every command; the profile is %s\n", profile.c_str());
  return rc;
}

namespace {

const bool registered = register_default_job(0, run_text_sample_job);

}  // namespace
}  // namespace meshscope::app
