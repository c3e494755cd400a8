#include "collectors/runtime/collector_runtime.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <fmt/format.h>

namespace meshscope::record {
namespace {

std::string env_text(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

bool parse_int(const char* text, std::int64_t& out) noexcept {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  out = value;
  return true;
}

int make_eventfd() noexcept {
  return ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void write_event(int fd) noexcept {
  if (fd < 0) return;
  const std::uint64_t one = 1;
  const int saved = errno;
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
  errno = saved;
}

std::uint64_t read_event(int fd) noexcept {
  std::uint64_t value = 0;
  if (fd < 0 || ::read(fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) return 0;
  return value;
}

}  // namespace

std::int64_t clock_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t env_int(const char* name, std::int64_t fallback) noexcept {
  std::int64_t value = 0;
  return parse_int(std::getenv(name), value) ? value : fallback;
}

void log_line(std::string_view collector, std::string_view message) noexcept {
  char buffer[512];
  const int n =
      std::snprintf(buffer, sizeof buffer, "meshscope[%.*s]: %.*s\n", static_cast<int>(collector.size()),
                    collector.data(), static_cast<int>(message.size()), message.data());
  if (n <= 0) return;
  const std::size_t size = std::min(static_cast<std::size_t>(n), sizeof buffer - 1);
  const int saved = errno;
  [[maybe_unused]] const ssize_t written = ::write(2, buffer, size);
  errno = saved;
}

Identity identity_from_environment() {
  // Each launcher sets a rank, a local rank and a size; the local rank and size are read from the launcher
  // that gave the rank first (a torchrun inside an srun step sees both families, and Slurm's describe the
  // step's tasks, not torchrun's workers), then from any other.
  struct Family {
    const char* rank;
    const char* local_rank;
    const char* world_size;
  };
  static constexpr Family kFamilies[] = {
      {"MESHSCOPE_RANK", "MESHSCOPE_LOCAL_RANK", "MESHSCOPE_WORLD_SIZE"},
      {"RANK", "LOCAL_RANK", "WORLD_SIZE"},                                            // torchrun
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},  // Open MPI
      {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},                                     // MPICH, Intel MPI
      {"PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_SIZE"},                                   // PMIx
      {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},                               // srun
  };
  Identity id;
  id.rank = 0;
  id.rank_source = "default";
  const Family* chosen = nullptr;
  std::int64_t value = 0;
  for (const Family& f : kFamilies) {
    if (parse_int(std::getenv(f.rank), value)) {
      id.rank = static_cast<std::int32_t>(value);
      id.rank_source = f.rank;
      chosen = &f;
      break;
    }
  }
  const auto read = [&](const char* Family::*field) -> std::int64_t {
    if (chosen && parse_int(std::getenv(chosen->*field), value)) return value;
    for (const Family& f : kFamilies) {
      if (parse_int(std::getenv(f.*field), value)) return value;
    }
    return kNull;
  };
  id.local_rank = read(&Family::local_rank);
  id.world_size = read(&Family::world_size);
  // The host names one clock; MESHSCOPE_HOSTNAME overrides it (containers that share a host name).
  id.hostname = env_text("MESHSCOPE_HOSTNAME");
  char host[256] = {};
  if (id.hostname.empty() && ::gethostname(host, sizeof host - 1) == 0) id.hostname = host;
  id.pid = ::getpid();
  return id;
}

SessionOptions session_options_from_environment(std::string collector) {
  SessionOptions options;
  options.collector = std::move(collector);
  const std::string dir = env_text("MESHSCOPE_OUTPUT_DIR");
  options.directory = dir.empty() ? std::filesystem::path("meshscope-record") : std::filesystem::path(dir);
  options.flush_ms = static_cast<int>(std::max<std::int64_t>(10, env_int("MESHSCOPE_FLUSH_MS", 1000)));
  options.signal_flush = env_int("MESHSCOPE_SIGNAL_FLUSH", 1) != 0;
  return options;
}

Session::Session(Source& source, Identity identity, SessionOptions options)
    : source_(source), identity_(std::move(identity)), options_(std::move(options)) {
  owner_pid_ = ::getpid();
}

Session::~Session() {
  remove_signal_flush(*this);
  shutdown();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (done_fd_ >= 0) ::close(done_fd_);
}

std::filesystem::path Session::target() const {
  return target_;
}

bool Session::start() noexcept {
  try {
    wake_fd_ = make_eventfd();
    done_fd_ = make_eventfd();
    if (wake_fd_ < 0 || done_fd_ < 0) {
      disable(fmt::format("cannot create an eventfd: {}", std::strerror(errno)));
      return false;
    }
    // The writer thread must never run the signal handlers (they wait for it).
    sigset_t block, previous;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &previous);
    thread_ = std::thread([this] { thread_main(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return true;
  } catch (const std::exception& e) {
    disable(fmt::format("cannot start the writer thread: {}", e.what()));
    return false;
  }
}

void Session::request_flush() noexcept {
  flush_requests_.fetch_add(1, std::memory_order_relaxed);
  write_event(wake_fd_);
}

bool Session::flush_and_wait(int timeout_ms) noexcept {
  if (!enabled() || !thread_.joinable() || stopped_.load() ||
      static_cast<std::int64_t>(::getpid()) != owner_pid_) {
    return false;
  }
  request_flush();
  pollfd p{done_fd_, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    read_event(done_fd_);
    return true;
  }
}

void Session::disable(std::string_view why) noexcept {
  enabled_.store(false, std::memory_order_relaxed);
  if (!logged_.exchange(true)) {
    log_line(options_.collector, fmt::format("disabled: {} (the job continues without it)", why));
  }
}

void Session::signal_done() noexcept {
  write_event(done_fd_);
}

bool Session::open_writer() {
  std::error_code ec;
  std::filesystem::create_directories(options_.directory, ec);
  const std::string stem = fmt::format("rank{}.{}.{}", identity_.rank, options_.collector, identity_.pid);
  target_ = options_.directory / (stem + ".msdb");
  for (int n = 1; std::filesystem::exists(target_, ec); ++n) {
    target_ = options_.directory / fmt::format("{}-{}.msdb", stem, n);
  }
  WriterOptions writer_options;
  writer_options.background = false;  // this thread is already the background
  writer_options.durable = true;      // WAL: a killed process leaves a readable file
  writer_options.batch_records = 4096;
  writer_ = std::make_unique<ProfileWriter>(target_, writer_options);
  writer_->set_meta("source_format", "meshscope-record");
  writer_->set_meta("collector", options_.collector);
  RankInfo info;
  info.rank = identity_.rank;
  info.world_size = identity_.world_size;
  info.hostname = identity_.hostname;
  info.pid = identity_.pid;
  info.source_file = target_.filename().string();
  info.rank_source = identity_.rank_source == "default" ? "single" : "recorded:" + identity_.rank_source;
  writer_->set_rank(info);
  writer_->add_diagnostic(identity_.rank, "info",
                          fmt::format("{} collector recording on {} (pid {}, local rank {})",
                                      options_.collector, identity_.hostname, identity_.pid,
                                      identity_.local_rank == kNull ? std::string("unknown")
                                                                    : std::to_string(identity_.local_rank)));
  writer_->checkpoint();
  return true;
}

void Session::checkpoint_now(bool forced) {
  source_.before_flush(forced);
  source_.drain(*writer_);
  writer_->checkpoint();
}

void Session::thread_main() {
  try {
    open_writer();
  } catch (const std::exception& e) {
    disable(fmt::format("cannot create the profile in {}: {}", options_.directory.string(), e.what()));
    writer_.reset();
    return;
  }
  std::int64_t last_checkpoint = clock_ns();
  std::uint64_t flushes_done = 0;
  try {
    while (!stopping_.load()) {
      pollfd p{wake_fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, options_.drain_ms);
      if (r > 0) read_event(wake_fd_);
      if (stopping_.load()) break;
      const std::uint64_t requested = flush_requests_.load();
      const std::int64_t now = clock_ns();
      if (requested != flushes_done || now - last_checkpoint >= std::int64_t{options_.flush_ms} * 1'000'000) {
        checkpoint_now(requested != flushes_done);
        last_checkpoint = clock_ns();
        for (; flushes_done < requested; ++flushes_done) signal_done();
      } else {
        source_.drain(*writer_);
      }
    }
    source_.before_flush(true);
    source_.drain(*writer_);
    source_.finish(*writer_);
    writer_->commit();
    writer_.reset();
  } catch (const std::exception& e) {
    disable(fmt::format("cannot write {}: {}", target_.string(), e.what()));
    // Keep what was checkpointed: destroying the writer without commit() would delete its file.
    static_cast<void>(writer_.release());
  }
  // Wake anyone still waiting for a flush.
  for (std::uint64_t i = flushes_done; i < flush_requests_.load(); ++i) signal_done();
}

void Session::shutdown() noexcept {
  if (static_cast<std::int64_t>(::getpid()) != owner_pid_) return;
  if (stopped_.exchange(true)) return;
  stopping_.store(true);
  write_event(wake_fd_);
  if (thread_.joinable()) thread_.join();
}

// ---- signals ----------------------------------------------------------------------------------------------

namespace {

constexpr int kMaxSessions = 4;
std::atomic<Session*> g_sessions[kMaxSessions];
std::atomic<int> g_timeout_ms{3000};
struct sigaction g_previous[2];
std::atomic<bool> g_installed{false};
constexpr int kSignals[2] = {SIGTERM, SIGINT};

void chain(int sig, siginfo_t* info, void* context) {
  const int index = sig == SIGTERM ? 0 : 1;
  const struct sigaction& previous = g_previous[index];
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler == SIG_DFL) {
    // Let the default action happen as if we had never been here: it is delivered once this handler returns.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
    return;
  }
  previous.sa_handler(sig);
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved = errno;
  for (auto& slot : g_sessions) {
    if (Session* s = slot.load()) s->flush_and_wait(g_timeout_ms.load());
  }
  errno = saved;
  chain(sig, info, context);
}

}  // namespace

void install_signal_flush(Session& session, int timeout_ms) noexcept {
  if (!session.options().signal_flush) return;
  g_timeout_ms.store(timeout_ms);
  for (auto& slot : g_sessions) {
    Session* expected = nullptr;
    if (slot.compare_exchange_strong(expected, &session)) break;
  }
  if (g_installed.exchange(true)) return;
  for (int i = 0; i < 2; ++i) {
    struct sigaction action {};
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], &action, &g_previous[i]);
  }
}

void remove_signal_flush(Session& session) noexcept {
  for (auto& slot : g_sessions) {
    Session* expected = &session;
    slot.compare_exchange_strong(expected, nullptr);
  }
}

}  // namespace meshscope::record
