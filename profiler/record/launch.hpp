// Launching a training command with the collectors injected (`meshscope record`): where the collector
// libraries are, the environment that loads them, and running the command with signals forwarded.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace meshscope::record {

// File names of the collector libraries, as the build writes them.
inline constexpr const char* kCuptiLibraryName = "libmeshscope_cupti.so";
inline constexpr const char* kNcclLibraryName = "libnccl-profiler-meshscope.so";

struct CollectorLibraries {
  std::filesystem::path cupti;  // empty when not found (built without the CUDA toolkit)
  std::filesystem::path nccl;
  // The libcupti the CUDA collector will load (searched as the dynamic loader would): NVTX is routed to it
  // through NVTX_INJECTION64_PATH, which is how CUPTI receives NVTX ranges. Empty when not found.
  std::filesystem::path cupti_runtime;
};

// Looks in $MESHSCOPE_COLLECTOR_DIR, then beside EXECUTABLE, then in ../lib/meshscope and ../lib from it.
CollectorLibraries find_collector_libraries(const std::filesystem::path& executable);

// The path of the running executable (/proc/self/exe).
std::filesystem::path self_executable();

using Environment = std::vector<std::pair<std::string, std::string>>;

// Variables to set for the command: the collectors' paths (CUDA_INJECTION64_PATH, NCCL_PROFILER_PLUGIN) and
// MESHSCOPE_OUTPUT_DIR. A loader variable the user (or another tool, such as Nsight Systems) already set is
// kept, and NOTES says which collector therefore stays out. Rank identity is read by the collectors in each
// process (RANK, LOCAL_RANK, WORLD_SIZE, SLURM_*, OMPI_COMM_WORLD_*), so launchers that set it per process
// just work.
Environment record_environment(const std::filesystem::path& output_dir, const CollectorLibraries& libraries,
                               std::vector<std::string>& notes);

// Runs COMMAND (searched in PATH) with ENV added to this process's environment, and waits for it. SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to this process are passed on to the command (a
// terminal's Ctrl-C already reaches it, being in the same process group, and is not sent twice). Returns the
// command's exit status, 128 + N when signal N ended it, 127 when it could not be started (ERROR says why).
int run_command(const std::vector<std::string>& command, const Environment& env, std::string& error);

}  // namespace meshscope::record
