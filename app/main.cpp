// meshscope command line: every subcommand is registered by its own cmd_<name>.cpp (see command.hpp).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "app/command.hpp"
#include "profiler/error.hpp"

int main(int argc, char** argv) {
  CLI::App root{"meshscope: where does each training step go, and what would another parallelism layout do?"};
  root.set_version_flag("--version", "meshscope " MESHSCOPE_VERSION);
  root.require_subcommand(0, 1);
  for (const auto& command : meshscope::app::commands()) command.setup(root);
  try {
    if (argc == 1) return meshscope::app::run_default_job();
    try {
      root.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return root.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return root.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return root.exit(e);
    } catch (const CLI::ParseError& e) {
      root.exit(e);
      return 2;
    }
    return meshscope::app::exit_code();
  } catch (const meshscope::Error& e) {
    std::fprintf(stderr, "meshscope: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope: internal error: %s\n", e.what());
    return 3;
  }
}
