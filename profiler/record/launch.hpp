// Launching a training command with the collectors injected (`meshscope record`): where the collector
// libraries are, the environment that loads them, and running the command with signals forwarded.
#pragma once

#include <signal.h>

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

// Runs COMMAND (searched in PATH) with ENV added to this process's environment, and waits for it. The job
// runs in a process group of its own, led by a small guardian process (a fork of this one) that starts the
// command, collects every process of the job that ends (as their subreaper) and returns only when all of them
// have ended. Every signal sent to this process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2; the
// terminal's Ctrl-C included) is passed on to the whole job, SIGHUP as SIGTERM (the stop that launchers and
// the collectors act on); the third SIGINT/SIGTERM/SIGHUP/SIGQUIT kills it outright. When this process dies,
// even by SIGKILL, the guardian stops the job (SIGTERM to the group, SIGKILL 20 s later): nothing keeps
// running on its own. Being a background group, the job cannot read the terminal. Returns the command's exit
// status, 128 + N when signal N ended it, 127 when it could not be started (ERROR says why); RECORD_SIGNAL,
// when given, receives the last terminating signal this process itself got (0 if none), so that `record` can
// still merge what the ranks wrote and then end as asked.
int run_command(const std::vector<std::string>& command, const Environment& env, std::string& error,
                int* record_signal = nullptr);

// While alive, SIGINT, SIGTERM, SIGHUP and SIGQUIT do not end this process but are remembered (the merge
// after a job finishes what it started; `record` then exits as the signal asked).
class SignalDeferral {
 public:
  SignalDeferral();
  ~SignalDeferral();
  SignalDeferral(const SignalDeferral&) = delete;
  SignalDeferral& operator=(const SignalDeferral&) = delete;
  int signal() const;  // the last deferred signal, 0 if none

 private:
  struct sigaction previous_[4];
};

}  // namespace meshscope::record
