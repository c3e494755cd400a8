#include "profiler/record/launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace meshscope::record {
namespace fs = std::filesystem;

fs::path self_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

CollectorLibraries find_collector_libraries(const fs::path& executable) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("MESHSCOPE_COLLECTOR_DIR"); env && *env) dirs.emplace_back(env);
  const fs::path bin = executable.parent_path();
  dirs.push_back(bin);
  dirs.push_back(bin / ".." / "lib" / "meshscope");
  dirs.push_back(bin / ".." / "lib");
  CollectorLibraries found;
  std::error_code ec;
  for (const auto& dir : dirs) {
    if (found.cupti.empty() && fs::exists(dir / kCuptiLibraryName, ec)) {
      found.cupti = fs::weakly_canonical(dir / kCuptiLibraryName, ec);
    }
    if (found.nccl.empty() && fs::exists(dir / kNcclLibraryName, ec)) {
      found.nccl = fs::weakly_canonical(dir / kNcclLibraryName, ec);
    }
  }
#ifdef MESHSCOPE_CUPTI_SONAME
  if (!found.cupti.empty()) {
    // The dynamic loader's order for the injection library's libcupti: LD_LIBRARY_PATH, then its RUNPATH (the
    // toolkit it was built with), then the system folders.
    std::vector<fs::path> search;
    if (const char* path = std::getenv("LD_LIBRARY_PATH"); path && *path) {
      std::string_view rest(path);
      while (!rest.empty()) {
        const auto colon = rest.find(':');
        if (colon != 0) search.emplace_back(rest.substr(0, colon));
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
      }
    }
    search.emplace_back(MESHSCOPE_CUPTI_RUNTIME_DIR);
    for (const char* system : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"})
      search.emplace_back(system);
    for (const auto& dir : search) {
      if (fs::exists(dir / MESHSCOPE_CUPTI_SONAME, ec)) {
        found.cupti_runtime = fs::absolute(dir / MESHSCOPE_CUPTI_SONAME, ec);
        break;
      }
    }
  }
#endif
  return found;
}

Environment record_environment(const fs::path& output_dir, const CollectorLibraries& libraries,
                               std::vector<std::string>& notes) {
  Environment env;
  std::error_code ec;
  env.emplace_back("MESHSCOPE_OUTPUT_DIR", fs::absolute(output_dir, ec).string());
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection && *injection) {
    notes.push_back(fmt::format(
        "CUDA_INJECTION64_PATH is already set ({}): the CUDA collector is not injected", injection));
  } else if (libraries.cupti.empty()) {
    notes.push_back(
        "no CUDA collector (meshscope was built without the CUDA toolkit): NCCL collectives only");
  } else {
    env.emplace_back("CUDA_INJECTION64_PATH", libraries.cupti.string());
    const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
    if (nvtx && *nvtx) {
      notes.push_back(fmt::format("NVTX_INJECTION64_PATH is already set ({}): NVTX ranges go there", nvtx));
    } else if (const char* off = std::getenv("MESHSCOPE_NVTX"); off && std::string_view(off) == "0") {
      // NVTX left alone on request (MESHSCOPE_NVTX=0).
    } else if (libraries.cupti_runtime.empty()) {
      notes.push_back("libcupti not found: NVTX ranges are not recorded");
    } else {
      env.emplace_back("NVTX_INJECTION64_PATH", libraries.cupti_runtime.string());
    }
  }
  const char* plugin = std::getenv("NCCL_PROFILER_PLUGIN");
  if (plugin && *plugin) {
    notes.push_back(
        fmt::format("NCCL_PROFILER_PLUGIN is already set ({}): the NCCL collector is not loaded", plugin));
  } else if (libraries.nccl.empty()) {
    notes.push_back(
        fmt::format("{} not found beside meshscope: NCCL collectives are not recorded", kNcclLibraryName));
  } else {
    env.emplace_back("NCCL_PROFILER_PLUGIN", libraries.nccl.string());
  }
  return env;
}

namespace {

constexpr std::array<int, 6> kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child <= 0) return;
  // Signals the kernel generated for the terminal (Ctrl-C, Ctrl-\, hang-up) reach the whole foreground
  // process group, the command included: only what was sent to us alone is passed on.
  if (info && info->si_code == SI_KERNEL) return;
  const int saved = errno;
  ::kill(child, sig);
  errno = saved;
}

}  // namespace

int run_command(const std::vector<std::string>& command, const Environment& env, std::string& error) {
  if (command.empty()) {
    error = "no command to run";
    return 127;
  }
  // A pipe that closes on a successful exec tells the parent whether the command started.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    error = fmt::format("cannot create a pipe: {}", std::strerror(errno));
    return 127;
  }
  std::array<struct sigaction, kForwarded.size()> previous{};
  for (std::size_t i = 0; i < kForwarded.size(); ++i) {
    struct sigaction action {};
    action.sa_sigaction = forward;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(kForwarded[i], &action, &previous[i]);
  }
  std::vector<std::string> env_text;
  for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    for (std::size_t i = 0; i < kForwarded.size(); ++i) ::sigaction(kForwarded[i], &previous[i], nullptr);
    for (auto& text : env_text) ::putenv(text.data());
    ::execvp(argv[0], argv.data());
    const int code = errno;
    [[maybe_unused]] const ssize_t n = ::write(report[1], &code, sizeof code);
    ::_exit(127);
  }
  ::close(report[1]);
  int status = 0;
  int result = 127;
  if (pid < 0) {
    error = fmt::format("cannot start {}: {}", command[0], std::strerror(errno));
  } else {
    g_child.store(pid);
    int exec_error = 0;
    ssize_t got;
    do {
      got = ::read(report[0], &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child.store(0);
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
      error = fmt::format("cannot run {}: {}", command[0], std::strerror(exec_error));
    } else if (WIFEXITED(status)) {
      result = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result = 128 + WTERMSIG(status);
    }
  }
  ::close(report[0]);
  for (std::size_t i = 0; i < kForwarded.size(); ++i) ::sigaction(kForwarded[i], &previous[i], nullptr);
  return result;
}

}  // namespace meshscope::record
