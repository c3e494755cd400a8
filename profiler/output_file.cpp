#include "profiler/output_file.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <string_view>

#include "profiler/error.hpp"

namespace meshscope {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kScratchTag = ".part-";
constexpr std::array<std::string_view, 3> kCompanions = {"-journal", "-wal", "-shm"};

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host(name);
  for (char& c : host) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '_';
  }
  return host;
}

// ---- temporary files removed on SIGINT, SIGTERM, SIGHUP ----

constexpr int kSlots = 64;
constexpr std::size_t kPathCapacity = 4096;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 guarded
  char path[kPathCapacity];
};
Slot g_slots[kSlots];

// Async-signal-safe: unlink and memcpy only.
void remove_guarded_files() {
  char buffer[kPathCapacity + 16];
  for (auto& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != 2) continue;
    ::unlink(slot.path);
    const std::size_t length = std::strlen(slot.path);
    for (const auto companion : kCompanions) {
      std::memcpy(buffer, slot.path, length);
      std::memcpy(buffer + length, companion.data(), companion.size());
      buffer[length + companion.size()] = '\0';
      ::unlink(buffer);
    }
  }
}

void on_terminating_signal(int sig) {
  const int saved = errno;
  remove_guarded_files();
  errno = saved;
  // SA_RESETHAND restored the default action: the signal, raised again, ends the process as it would have.
  ::raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0) continue;
      if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL)
        continue;  // the program's own
      struct sigaction action {};
      action.sa_handler = on_terminating_signal;
      action.sa_flags = SA_RESETHAND;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
  });
}

}  // namespace

fs::path resolve_output_path(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;  // a new file
      fail("{}: cannot write there: {}", path.string(), std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      std::error_code error;
      const fs::path target = fs::read_symlink(p, error);
      if (error) fail("{}: cannot follow the link: {}", path.string(), error.message());
      p = target.is_absolute() ? target : p.parent_path() / target;
      continue;
    }
    if (S_ISREG(st.st_mode)) return p;
    if (S_ISDIR(st.st_mode)) fail("{}: is a directory; name an output file", path.string());
    fail("{}: not a regular file (a device, FIFO or socket); meshscope writes only to regular files",
         path.string());
  }
  fail("{}: too many levels of symbolic links", path.string());
}

void refuse_output_among_inputs(const fs::path& output, const std::vector<fs::path>& inputs) {
  std::error_code error;
  if (!fs::exists(output, error)) return;
  for (const auto& input : inputs) {
    if (fs::equivalent(input, output, error)) {
      fail("{}: is also an input ({}); write the output to another file", output.string(), input.string());
    }
  }
}

void require_regular_input(const fs::path& path, bool allow_directory) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) fail("{}: no such file", path.string());
    fail("{}: cannot read: {}", path.string(), std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) {
    if (allow_directory) return;
    fail("{}: is a directory, not a file", path.string());
  }
  fail("{}: not a regular file (a FIFO, device or socket); meshscope reads only regular files",
       path.string());
}

fs::path scratch_path_for(const fs::path& target) {
  std::random_device random;
  return target.parent_path() / fmt::format(".{}{}{}-{}-{:08x}", target.filename().string(), kScratchTag,
                                            host_name(), ::getpid(), random());
}

int remove_stale_temp_files(const fs::path& dir) {
  const std::string host = host_name();
  const fs::path folder = dir.empty() ? fs::path(".") : dir;
  int removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] != '.') continue;
    std::string_view rest(name);
    for (const auto companion : kCompanions) {
      if (rest.ends_with(companion)) {
        rest.remove_suffix(companion.size());
        break;
      }
    }
    const auto tag = rest.rfind(kScratchTag);
    if (tag == std::string_view::npos) continue;
    std::string_view owner = rest.substr(tag + kScratchTag.size());  // HOST-PID-RANDOM
    const auto random_at = owner.rfind('-');
    if (random_at == std::string_view::npos || owner.size() - random_at - 1 != 8) continue;
    const auto pid_at = owner.rfind('-', random_at - 1);
    if (pid_at == std::string_view::npos || pid_at == 0) continue;
    const std::string_view pid_text = owner.substr(pid_at + 1, random_at - pid_at - 1);
    if (owner.substr(0, pid_at) != host || pid_text.empty() || pid_text.size() > 9) continue;
    bool digits = true;
    for (const char c : pid_text) digits = digits && c >= '0' && c <= '9';
    if (!digits) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(pid_text)));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code ignored;
    if (fs::remove(entry.path(), ignored)) ++removed;
  }
  return removed;
}

namespace {

void remove_with_companions(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
  for (const auto companion : kCompanions) fs::remove(path.string() + std::string(companion), ignored);
}

}  // namespace

OutputFile::OutputFile(const fs::path& requested, const std::vector<fs::path>& inputs)
    : requested_(requested), target_(resolve_output_path(requested)) {
  const fs::path folder = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(folder, error)) fail("{}: output folder does not exist", requested_.string());
  // A read-only or forbidden folder is said before anything is built (root passes the permission bits, not a
  // read-only file system).
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    fail("{}: cannot write in {}: {}", requested_.string(), folder.string(), std::strerror(errno));
  refuse_output_among_inputs(target_, inputs);
  remove_stale_temp_files(folder);
  scratch_ = scratch_path_for(target_);
  guard_ = TempFileGuard(scratch_);
  remove_with_companions(scratch_);
}

OutputFile::~OutputFile() {
  if (!published_) remove_with_companions(scratch_);
  guard_.release();
}

void OutputFile::publish() {
  std::error_code error;
  fs::rename(scratch_, target_, error);
  if (error) {
    remove_with_companions(scratch_);
    fail("{}: cannot write: {}", requested_.string(), error.message());
  }
  // What a SQLite connection left beside the scratch file (nothing, once closed) must not stay behind.
  for (const auto companion : kCompanions) fs::remove(scratch_.string() + std::string(companion), error);
  published_ = true;
  guard_.release();
}

void with_output_named(const fs::path& scratch, const fs::path& shown, const std::function<void()>& work) {
  try {
    work();
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string hidden = scratch.string(), named = shown.string();
    for (auto at = message.find(hidden); !hidden.empty() && at != std::string::npos;
         at = message.find(hidden, at + named.size()))
      message.replace(at, hidden.size(), named);
    throw Error(message);
  }
}

void write_output_file(const fs::path& requested, std::string_view content,
                       const std::vector<fs::path>& inputs) {
  OutputFile output(requested, inputs);
  std::FILE* out = std::fopen(output.scratch().c_str(), "wbx");
  if (!out) fail("{}: cannot create output file: {}", requested.string(), std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), out) == content.size();
  if (std::fclose(out) != 0 || !written) fail("{}: cannot write output file", requested.string());
  output.publish();
}

TempFileGuard::TempFileGuard(const fs::path& path) {
  const std::string text = path.string();
  if (text.size() + 1 > kPathCapacity) return;
  install_handlers_once();
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    std::memcpy(g_slots[i].path, text.c_str(), text.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  release();
}

TempFileGuard::TempFileGuard(TempFileGuard&& other) noexcept : slot_(other.slot_) {
  other.slot_ = -1;
}

TempFileGuard& TempFileGuard::operator=(TempFileGuard&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void TempFileGuard::release() {
  if (slot_ >= 0) g_slots[slot_].state.store(0, std::memory_order_release);
  slot_ = -1;
}

}  // namespace meshscope
