#include "profiler/record/launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
constexpr std::array<int, 4> kTerminating = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// How long the job's processes get to finish (flush their profiles) once the job is being stopped, before the
// group is killed; and how long processes left behind by a command that ended normally are waited for.
constexpr int kStopGraceSeconds = 20;
constexpr int kLeftoverWaitSeconds = 10;

std::atomic<pid_t> g_group{0};      // the job's process group (the guardian's pid)
std::atomic<int> g_terminating{0};  // terminating signals received (INT, TERM, HUP, QUIT)
std::atomic<int> g_last_signal{0};  // the last of them

bool is_terminating(int sig) {
  return std::find(kTerminating.begin(), kTerminating.end(), sig) != kTerminating.end();
}

// meshscope record's handler while the job runs: every signal goes on to the whole job (it runs in its own
// process group, so nothing the terminal sends reaches it directly); a hang-up goes on as SIGTERM, the stop
// that launchers and the collectors act on (flushing what they hold); the third terminating signal kills the
// job outright. Async-signal-safe: kill and atomics only.
void forward(int sig) {
  const int saved = errno;
  if (is_terminating(sig)) {
    g_last_signal.store(sig);
    const int count = ++g_terminating;
    const pid_t group = g_group.load();
    if (group > 0) ::kill(-group, count >= 3 ? SIGKILL : sig == SIGHUP ? SIGTERM : sig);
  } else if (const pid_t group = g_group.load(); group > 0) {
    ::kill(-group, sig);
  }
  errno = saved;
}

std::int64_t now_ms() {
  struct timespec t {};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1'000'000;
}

// Ends the guardian as the command ended: its exit status, or its signal (raised again, without a core file).
[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    struct rlimit none {};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

// The guardian: the first process of the job's process group, between meshscope record and the command. It
// outlives the command until every process of the job has ended (it is their subreaper, so orphans come back
// to it), and when meshscope record dies (even by SIGKILL) it stops the whole job: TERM, then KILL after a
// grace period. Runs only async-signal-safe calls (it is a fork of a possibly threaded process).
[[noreturn]] void guardian(char* const* argv, char* const* envp, int report_fd, pid_t parent,
                           int death_signal) {
  ::setpgid(0, 0);
  sigset_t waited;
  sigemptyset(&waited);
  for (const int sig : kForwarded) sigaddset(&waited, sig);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, death_signal);
  ::sigprocmask(SIG_BLOCK, &waited, nullptr);
  for (const int sig : kForwarded) ::signal(sig, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, death_signal);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t group = ::getpid();
  const pid_t command = ::fork();
  if (command == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(argv[0], argv, envp);
    const int code = errno;
    [[maybe_unused]] const ssize_t n = ::write(report_fd, &code, sizeof code);
    ::_exit(127);
  }
  ::close(report_fd);
  if (command < 0) ::_exit(127);
  bool stopping = ::getppid() != parent;  // meshscope record died before the death signal was armed
  if (stopping) ::kill(-group, SIGTERM);
  std::int64_t stop_at = stopping ? now_ms() : 0;  // when the stop began
  std::int64_t command_ended_at = 0;
  int command_status = 0;
  bool killed = false;
  for (;;) {
    // Reap whatever ended: the command, or a process of the job that was handed to us.
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(-1, &status, WNOHANG);
      if (done == command) {
        command_status = status;
        command_ended_at = now_ms();
      } else if (done < 0 && errno == ECHILD) {
        end_like(command_status);  // nothing of the job is left
      }
      if (done <= 0) break;
    }
    const std::int64_t now = now_ms();
    if (command_ended_at != 0 && !stopping && now - command_ended_at > kLeftoverWaitSeconds * 1000) {
      end_like(command_status);  // processes the command left running are not ours to stop
    }
    if (stopping && !killed && now - stop_at > kStopGraceSeconds * 1000) {
      ::kill(-group, SIGKILL);
      killed = true;
    }
    struct timespec tick {
      0, 100'000'000
    };
    siginfo_t info{};
    const int sig = ::sigtimedwait(&waited, &info, &tick);
    if (sig == death_signal) {
      if (!stopping) ::kill(-group, SIGTERM);
      stopping = true;
      stop_at = now_ms();
    } else if (sig > 0 && sig != SIGCHLD && is_terminating(sig) && !stopping) {
      // meshscope record passed a stop on to the group (this process included): the job is ending.
      stopping = true;
      stop_at = now_ms();
    }
  }
}

void install(const struct sigaction& action, std::array<struct sigaction, kForwarded.size()>* previous) {
  for (std::size_t i = 0; i < kForwarded.size(); ++i) {
    ::sigaction(kForwarded[i], &action, previous ? &(*previous)[i] : nullptr);
  }
}

}  // namespace

int run_command(const std::vector<std::string>& command, const Environment& env, std::string& error,
                int* record_signal) {
  if (record_signal) *record_signal = 0;
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
  // Everything the children need is prepared before fork: they call no allocator.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!replaced) env_text.emplace_back(entry);
  }
  for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& text : env_text) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int death_signal = SIGRTMIN + 1;
  const pid_t parent = ::getpid();

  g_terminating.store(0);
  g_last_signal.store(0);
  g_group.store(0);
  std::array<struct sigaction, kForwarded.size()> previous{};
  struct sigaction action {};
  action.sa_handler = forward;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  install(action, &previous);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    guardian(argv.data(), envp.data(), report[1], parent, death_signal);
  }
  ::close(report[1]);
  int result = 127;
  if (pid < 0) {
    error = fmt::format("cannot start {}: {}", command[0], std::strerror(errno));
  } else {
    ::setpgid(pid, pid);  // also done by the child: whichever runs first
    g_group.store(pid);
    // A signal that came before the group existed is passed on now.
    if (const int early = g_last_signal.load(); early != 0) ::kill(-pid, early);
    int exec_error = 0;
    ssize_t got;
    do {
      got = ::read(report[0], &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_group.store(0);
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
  if (record_signal) *record_signal = g_last_signal.load();
  return result;
}

namespace {
std::atomic<int> g_deferred{0};
void defer(int sig) {
  g_deferred.store(sig);
}
}  // namespace

SignalDeferral::SignalDeferral() {
  g_deferred.store(0);
  struct sigaction action {};
  action.sa_handler = defer;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < kTerminating.size(); ++i) ::sigaction(kTerminating[i], &action, &previous_[i]);
}

SignalDeferral::~SignalDeferral() {
  for (std::size_t i = 0; i < kTerminating.size(); ++i) ::sigaction(kTerminating[i], &previous_[i], nullptr);
}

int SignalDeferral::signal() const {
  return g_deferred.load();
}

}  // namespace meshscope::record
