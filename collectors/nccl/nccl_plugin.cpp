// meshscope's NCCL profiler plugin (libnccl-profiler-meshscope.so), loaded by NCCL through
// NCCL_PROFILER_PLUGIN.
//
// [SECTION] Events: NCCL calls startEvent/recordEventState/stopEvent from the application thread (collective
//           and group events) and from its proxy threads (kernel channel, proxy op and step events). Event
//           objects come from fixed pools per communicator; a collective is complete once NCCL stopped it (it
//           was enqueued) and all its kernel channels and proxy operations stopped. Completed collectives go
//           through a lock-free bounded queue to the writer thread; a full queue or pool drops the event and
//           counts it.
// [SECTION] Timing: a collective's GPU start/end are the earliest channel start and the latest channel stop
//           that the kernel stamped with the GPU globaltimer (v4+). Without those: the kernel channel events'
//           host times (v3), then proxy operation times, then the enqueue call (counted in the diagnostics).
// [SECTION] Versions: one implementation behind five ABI entry points (ncclProfiler_v5 ... ncclProfiler_v1).
// [SECTION] Writer: the Session thread turns queued items into profile rows.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "collectors/nccl/nccl_profiler_abi.h"
#include "collectors/runtime/collector_runtime.hpp"
#include "profiler/vocabulary.hpp"

#define MESHSCOPE_EXPORT __attribute__((visibility("default")))

namespace meshscope::nccl {
namespace {

using record::clock_ns;

constexpr std::uint32_t kTagColl = 0x6d73636fu;          // "msco"
constexpr std::uint32_t kTagChild = 0x6d736368u;         // "msch"
constexpr std::uint32_t kTagGroup = 0x6d736772u;         // "msgr"
constexpr std::int64_t kProxyTrackBase = 1'000'000'000;  // threads.tid of the proxy tracks: base + channel
constexpr std::int64_t kUnset = INT64_MIN;

// Lengths are fixed so that items are plain data; NCCL's strings are short (AllReduce, Bfloat16, NVLS_TREE).
struct Text {
  char text[32] = {};
  void set(const char* value) noexcept {
    if (!value) {
      text[0] = '\0';
      return;
    }
    std::size_t n = 0;
    for (; n + 1 < sizeof text && value[n]; ++n) text[n] = value[n];
    text[n] = '\0';
  }
  std::string_view view() const noexcept { return text; }
};

enum class TimeSource : std::uint8_t { kKernelTimer = 0, kKernelHost = 1, kProxy = 2, kEnqueue = 3 };
constexpr const char* kTimeSourceNames[] = {"GPU kernel timers", "kernel channel events (host time)",
                                            "proxy operations (host time)", "the enqueue call (host time)"};

// One unit of work for the writer thread.
struct Item {
  enum Kind : std::uint8_t { kComm, kColl, kP2p, kGroup, kProxyOp, kProxyStep } kind = kColl;
  TimeSource source = TimeSource::kEnqueue;
  bool incomplete = false;
  std::uint8_t channels = 0;
  std::int32_t comm_rank = -1, nranks = -1, nnodes = -1, root = -1, peer = -1, channel = -1, is_send = 0,
               step = -1;
  std::uint64_t comm_hash = 0;
  std::int64_t seq = kUnset;
  std::uint64_t count = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t tid = 0;
  std::uint64_t trans_size = 0;
  Text func, dtype, algo, proto, comm_name;
};

std::int64_t this_tid() noexcept {
  thread_local const std::int64_t tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  return tid;
}

void atomic_min(std::atomic<std::int64_t>& a, std::int64_t v) noexcept {
  std::int64_t cur = a.load(std::memory_order_relaxed);
  while ((cur == kUnset || v < cur) && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}
void atomic_max(std::atomic<std::int64_t>& a, std::int64_t v) noexcept {
  std::int64_t cur = a.load(std::memory_order_relaxed);
  while ((cur == kUnset || v > cur) && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

struct Context;

struct CollEvent {
  std::uint32_t tag = kTagColl;
  std::atomic<bool> busy{false};
  std::atomic<std::uint32_t> generation{0};
  Context* ctx = nullptr;
  Item item;                     // metadata, written by startEvent before the handle is returned
  int expected_channels = 0;     // kernel channel events NCCL announced (0: unknown)
  bool kernel_expected = false;  // kernel channel events are enabled: wait for at least one
  std::atomic<int> live_children{0};
  std::atomic<int> channels_done{0};
  std::atomic<bool> stopped{false};
  std::atomic<bool> emitted{false};
  std::atomic<std::int64_t> enqueue_start{kUnset}, enqueue_stop{kUnset};
  std::atomic<std::int64_t> gpu_start{kUnset}, gpu_end{kUnset};  // raw GPU globaltimer
  std::atomic<std::int64_t> kernel_host_start{kUnset}, kernel_host_end{kUnset};
  std::atomic<std::int64_t> proxy_start{kUnset}, proxy_end{kUnset};
  std::atomic<std::int64_t> last_activity{0};
};

struct ChildEvent {
  std::uint32_t tag = kTagChild;
  std::atomic<bool> busy{false};
  std::uint64_t type = 0;  // MSNCCL_PROFILE_KERNEL_CH, _PROXY_OP, _PROXY_STEP
  CollEvent* parent = nullptr;
  std::uint32_t parent_generation = 0;
  ChildEvent* op = nullptr;  // proxy steps: their proxy operation
  std::int32_t channel = -1, peer = -1, is_send = 0, step = -1, n_steps = 0;
  std::int64_t start_ns = 0;
  std::int64_t gpu_start = kUnset, gpu_stop = kUnset;
  std::uint64_t trans_size = 0;
};

struct GroupEvent {
  std::uint32_t tag = kTagGroup;
  std::atomic<bool> busy{false};
  std::int64_t start_ns = 0;
  std::int64_t tid = 0;
  std::int32_t depth = 0;
};

template <typename T>
class Pool {
 public:
  explicit Pool(std::size_t size) : size_(std::max<std::size_t>(size, 1)), slots_(new T[size_]) {}
  T* acquire() noexcept {
    for (int attempt = 0; attempt < 32; ++attempt) {
      T& slot = slots_[cursor_.fetch_add(1, std::memory_order_relaxed) % size_];
      bool expected = false;
      if (slot.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) return &slot;
    }
    return nullptr;
  }
  static void release(T* slot) noexcept { slot->busy.store(false, std::memory_order_release); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return slots_[i]; }

 private:
  std::size_t size_;
  std::unique_ptr<T[]> slots_;
  std::atomic<std::size_t> cursor_{0};
};

struct Context {
  int version = 5;
  std::uint64_t comm_hash = 0;
  std::int32_t nranks = -1, comm_rank = -1, nnodes = -1;
  Text comm_name;
  std::atomic<std::int64_t> next_seq{0};
  Pool<CollEvent> colls;
  Pool<ChildEvent> children;
  Pool<GroupEvent> groups;
  explicit Context(std::size_t n) : colls(n), children(n * 4), groups(256) {}
};

// ---- process-wide state ----------------------------------------------------------------------------------

class NcclSource;

struct Global {
  std::mutex mutex;  // init, finalize and the sweeper only; never the event paths
  std::vector<Context*> contexts;
  std::unique_ptr<record::Session> session;
  std::unique_ptr<NcclSource> source;
  std::unique_ptr<record::BoundedQueue<Item>> queue;
  std::atomic<bool> enabled{false};  // new events are recorded (off after an error and during exit)
  bool failed = false;               // the session could not start: stay off for the rest of the process
  bool record_proxy = false;         // MESHSCOPE_NCCL_PROXY: write proxy operations and steps as ranges
  int version = 0;
  int mask = 0;
  std::size_t pool_size = 2048;
  std::atomic<std::uint64_t> dropped_queue{0}, dropped_pool{0}, incomplete{0};
  std::atomic<std::uint64_t> by_source[4] = {};
  std::atomic<std::int64_t> gpu_clock_delta{
      kUnset};  // min over observations of (host clock - GPU globaltimer)
  std::atomic<bool> logged{false};
};

Global& global() {
  static Global* g = new Global();  // never destroyed: NCCL's threads may call in during exit
  return *g;
}

void disable(std::string_view why) noexcept {
  Global& g = global();
  g.enabled.store(false);
  if (g.session) {
    g.session->disable(why);
  } else if (!g.logged.exchange(true)) {
    record::log_line("nccl", fmt::format("disabled: {} (the job continues without it)", why));
  }
}

// Hands an item to the writer thread (never blocks; counts what does not fit).
void push(const Item& item) noexcept {
  Global& g = global();
  if (!g.session || !g.session->enabled()) return;
  if (!g.queue || !g.queue->push(item)) g.dropped_queue.fetch_add(1, std::memory_order_relaxed);
}

// GPU globaltimer (ns) to the profile clock. The globaltimer normally counts Unix-epoch nanoseconds, like the
// profile clock: then it is used as it is. When it does not (it differs from the host clock by more than a
// second), the smallest (host observation - GPU stamp) seen so far maps it, which is off by the smallest
// observation latency.
std::int64_t gpu_to_clock(std::int64_t gpu) noexcept {
  const std::int64_t delta = global().gpu_clock_delta.load(std::memory_order_relaxed);
  if (delta == kUnset || (delta > -1'000'000'000 && delta < 1'000'000'000)) return gpu;
  return gpu + delta;
}

void observe_gpu_clock(std::uint64_t gpu, std::int64_t host) noexcept {
  if (gpu == 0) return;
  atomic_min(global().gpu_clock_delta, host - static_cast<std::int64_t>(gpu));
}

// Turns a collective event into an item and gives its slot back.
void emit(CollEvent* e, bool forced) noexcept {
  if (e->emitted.exchange(true)) return;
  Global& g = global();
  Item item = e->item;
  item.incomplete = forced;
  const std::int64_t gs = e->gpu_start.load(), ge = e->gpu_end.load();
  const std::int64_t ks = e->kernel_host_start.load(), ke = e->kernel_host_end.load();
  const std::int64_t ps = e->proxy_start.load(), pe = e->proxy_end.load();
  const std::int64_t es = e->enqueue_start.load(), ee = e->enqueue_stop.load();
  if (gs != kUnset && ge != kUnset && ge >= gs) {
    item.source = TimeSource::kKernelTimer;
    item.start_ns = gpu_to_clock(gs);
    item.end_ns = gpu_to_clock(ge);
  } else if (ks != kUnset && ke != kUnset && ke >= ks) {
    item.source = TimeSource::kKernelHost;
    item.start_ns = ks;
    item.end_ns = ke;
  } else if (ps != kUnset && pe != kUnset && pe >= ps) {
    item.source = TimeSource::kProxy;
    item.start_ns = ps;
    item.end_ns = pe;
  } else {
    item.source = TimeSource::kEnqueue;
    item.start_ns = es;
    item.end_ns = ee == kUnset ? es : std::max(ee, es);
  }
  g.by_source[static_cast<int>(item.source)].fetch_add(1, std::memory_order_relaxed);
  if (forced) g.incomplete.fetch_add(1, std::memory_order_relaxed);
  push(item);
  e->generation.fetch_add(1, std::memory_order_release);
  Pool<CollEvent>::release(e);
}

// Complete once stopped, no child is running, and every announced kernel channel stopped. Collectives whose
// channel count is unknown are completed by the sweeper after a quiet period instead.
void try_complete(CollEvent* e) noexcept {
  if (!e->stopped.load() || e->live_children.load() != 0) return;
  if (e->expected_channels <= 0 || e->channels_done.load() < e->expected_channels) return;
  emit(e, false);
}

// ---- the writer side -------------------------------------------------------------------------------------

std::string_view strip_nccl(std::string_view dtype) {
  return dtype.substr(0, 4) == "nccl" ? dtype.substr(4) : dtype;
}

std::string comm_id(std::uint64_t hash) {
  return fmt::format("nccl:{:016x}", hash);
}

class NcclSource final : public record::Source {
 public:
  explicit NcclSource(const record::Identity& identity) : identity_(identity) {}

  void drain(ProfileWriter& writer) override {
    sweep();
    Item item;
    Global& g = global();
    while (g.queue && g.queue->pop(item)) write(writer, item);
  }

  void finish(ProfileWriter& writer) override {
    Global& g = global();
    const std::int32_t rank = identity_.rank;
    writer.set_meta("nccl_profiler_abi", fmt::format("v{}", g.version));
    writer.add_diagnostic(rank, "info",
                          fmt::format("nccl: profiler plugin ABI v{}, event mask 0x{:x}", g.version, g.mask));
    for (int i = 0; i < 4; ++i) {
      const auto n = g.by_source[i].load();
      if (n == 0) continue;
      writer.add_diagnostic(rank, i == 0 ? "info" : "warning",
                            fmt::format("nccl: {} operations timed by {}", n, kTimeSourceNames[i]));
    }
    if (const auto n = g.dropped_queue.load()) {
      writer.add_diagnostic(rank, "warning", fmt::format("nccl: dropped {} events (writer queue full)", n));
    }
    if (const auto n = g.dropped_pool.load()) {
      writer.add_diagnostic(
          rank, "warning",
          fmt::format("nccl: dropped {} events (event pool exhausted; MESHSCOPE_NCCL_POOL)", n));
    }
    if (const auto n = g.incomplete.load()) {
      writer.add_diagnostic(
          rank, "warning",
          fmt::format("nccl: {} operations written without all their kernel/proxy events", n));
    }
    const std::int64_t delta = g.gpu_clock_delta.load();
    if (delta != kUnset) {
      writer.add_diagnostic(rank, "info",
                            fmt::format("nccl: host clock - GPU globaltimer >= {} ns ({})", delta,
                                        delta > -1'000'000'000 && delta < 1'000'000'000
                                            ? "globaltimer used as the profile clock"
                                            : "globaltimer mapped to the host clock"));
    }
  }

  // Completes collectives whose channel count is unknown after a quiet period, and gives up on any collective
  // that waited too long for its events (NCCL aborts, dropped child events).
  void sweep() {
    Global& g = global();
    const std::int64_t now = clock_ns();
    std::lock_guard lock(g.mutex);
    for (Context* ctx : g.contexts) {
      for (std::size_t i = 0; i < ctx->colls.size(); ++i) {
        CollEvent& e = ctx->colls[i];
        if (!e.busy.load(std::memory_order_acquire) || !e.stopped.load() || e.emitted.load()) continue;
        const std::int64_t quiet = now - e.last_activity.load();
        const int live = e.live_children.load();
        const bool started = live > 0 || e.channels_done.load() > 0;
        if (e.expected_channels <= 0 && live == 0 && quiet > 200'000'000 && (started || !e.kernel_expected)) {
          emit(&e, false);
        } else if (quiet > (started || !e.kernel_expected ? 10'000'000'000 : 300'000'000'000)) {
          // Given up: events were lost, or NCCL aborted. An operation whose kernel never started (a rank
          // stuck behind a slow peer) gets minutes, so that its slot is not reused before its kernel runs.
          emit(&e, true);
        }
      }
    }
  }

 private:
  StringId comm_string(ProfileWriter& w, const Item& item) {
    const std::string id = comm_id(item.comm_hash);
    if (seen_comms_.insert(item.comm_hash).second && item.kind != Item::kComm) add_group(w, item);
    return w.intern(id);
  }

  void add_group(ProfileWriter& w, const Item& item) {
    ProcessGroupInfo pg;
    pg.rank = identity_.rank;
    pg.pg_name = comm_id(item.comm_hash);
    pg.pg_desc = std::string(item.comm_name.view());
    pg.backend = "nccl";
    pg.group_size = item.nranks > 0 ? item.nranks : kNull;
    if (item.nranks > 0 && item.comm_rank >= 0 && item.comm_rank < item.nranks) {
      // Only this rank's position is known here; the merge fills in the others.
      std::string json = "[";
      for (int r = 0; r < item.nranks; ++r) {
        if (r) json += ", ";
        json += r == item.comm_rank ? std::to_string(identity_.rank) : "null";
      }
      pg.ranks_json = json + "]";
    }
    w.add_process_group(pg);
  }

  void write(ProfileWriter& w, const Item& item) {
    const std::int32_t rank = identity_.rank;
    switch (item.kind) {
      case Item::kComm:
        seen_comms_.insert(item.comm_hash);
        add_group(w, item);
        return;
      case Item::kColl:
      case Item::kP2p: {
        CollectiveRecord c;
        c.rank = rank;
        c.communicator = comm_string(w, item);
        c.seq = item.kind == Item::kColl ? item.seq : kNull;
        const std::string op = vocabulary::normalise_collective_op(item.func.view());
        c.op = w.intern(op.empty() ? std::string_view("unknown") : std::string_view(op));
        const std::string_view dtype = strip_nccl(item.dtype.view());
        c.dtype = w.intern(dtype);
        const auto count = static_cast<std::int64_t>(item.count);
        const std::int64_t n = item.nranks > 0 ? item.nranks : 1;
        c.in_nelems = c.out_nelems = count;
        if (op == "allgather") c.out_nelems = count * n;
        if (op == "reducescatter") c.in_nelems = count * n;
        if (const int size = vocabulary::dtype_bytes(dtype)) {
          c.in_bytes = c.in_nelems * size;
          c.out_bytes = c.out_nelems * size;
        }
        c.group_size = item.kind == Item::kP2p ? 2 : item.nranks > 0 ? item.nranks : kNull;
        c.algorithm = w.intern(item.algo.view());
        c.protocol = w.intern(item.proto.view());
        c.channels = item.channels > 0 ? item.channels : kNull;
        c.start_ns = item.start_ns;
        c.end_ns = std::max(item.end_ns, item.start_ns);
        // Times from the enqueue call are host times of the launch, not of the transfer: the merge replaces
        // them with the NCCL kernel's GPU times when the CUDA collector saw that kernel launched.
        c.source = item.source == TimeSource::kEnqueue ? "nccl_plugin_enqueue" : "nccl_plugin";
        w.add_collective(c);
        return;
      }
      case Item::kGroup: {
        RangeRecord r;
        r.rank = rank;
        r.kind = RangeKind::kOther;
        r.pid = identity_.pid;
        r.tid = item.tid;
        r.start_ns = item.start_ns;
        r.end_ns = std::max(item.end_ns, item.start_ns);
        r.name = w.intern("ncclGroup");
        r.category = w.intern("nccl");
        w.add_range(r);
        return;
      }
      case Item::kProxyOp:
      case Item::kProxyStep: {
        const std::int64_t tid = kProxyTrackBase + std::max(item.channel, 0);
        if (proxy_tracks_.insert(tid).second) {
          w.add_thread(
              {rank, identity_.pid, tid, fmt::format("NCCL proxy channel {}", std::max(item.channel, 0))});
        }
        RangeRecord r;
        r.rank = rank;
        r.kind = RangeKind::kOther;
        r.pid = identity_.pid;
        r.tid = tid;
        r.start_ns = item.start_ns;
        r.end_ns = std::max(item.end_ns, item.start_ns);
        const bool op = item.kind == Item::kProxyOp;
        r.name = w.intern(item.is_send ? (op ? "NCCL proxy send" : "NCCL proxy send step")
                                       : (op ? "NCCL proxy recv" : "NCCL proxy recv step"));
        r.category = w.intern("nccl_proxy");
        w.add_range(r);
        return;
      }
    }
  }

  record::Identity identity_;
  std::unordered_set<std::uint64_t> seen_comms_;
  std::set<std::int64_t> proxy_tracks_;
};

void at_exit() {
  Global& g = global();
  g.enabled.store(false);
  {
    std::lock_guard lock(g.mutex);
    for (Context* ctx : g.contexts) {
      for (std::size_t i = 0; i < ctx->colls.size(); ++i) {
        CollEvent& e = ctx->colls[i];
        if (e.busy.load() && e.stopped.load() && !e.emitted.load()) emit(&e, true);
      }
    }
  }
  if (g.session) g.session->shutdown();
}

// ---- the version-independent event handling --------------------------------------------------------------

int default_mask(int version) {
  int mask = MSNCCL_PROFILE_COLL | MSNCCL_PROFILE_P2P;
  if (version >= 3) mask |= MSNCCL_PROFILE_KERNEL_CH;
  if (version <= 2) mask |= MSNCCL_PROFILE_PROXY_OP;  // the only source of transfer times before v3
  mask |= version >= 5 ? MSNCCL_PROFILE_GROUP_API : MSNCCL_PROFILE_GROUP;
  if (record::env_int("MESHSCOPE_NCCL_PROXY", 0) != 0)
    mask |= MSNCCL_PROFILE_PROXY_OP | MSNCCL_PROFILE_PROXY_STEP;
  return static_cast<int>(record::env_int("MESHSCOPE_NCCL_EVENT_MASK", mask));
}

int init_common(void** context, int* mask, int version, std::uint64_t comm_hash, const char* comm_name,
                int nnodes, int nranks, int rank) noexcept {
  *context = nullptr;
  try {
    Global& g = global();
    std::lock_guard lock(g.mutex);
    if (g.failed) return msncclInternalError;
    if (!g.session) {
      g.version = version;
      g.pool_size = static_cast<std::size_t>(
          std::clamp<std::int64_t>(record::env_int("MESHSCOPE_NCCL_POOL", 2048), 16, 1 << 20));
      const auto capacity = static_cast<std::size_t>(
          std::clamp<std::int64_t>(record::env_int("MESHSCOPE_NCCL_QUEUE", 1 << 15), 64, 1 << 22));
      std::size_t pow2 = 64;
      while (pow2 < capacity) pow2 <<= 1;
      g.queue = std::make_unique<record::BoundedQueue<Item>>(pow2);
      const record::Identity identity = record::identity_from_environment();
      g.source = std::make_unique<NcclSource>(identity);
      g.session = std::make_unique<record::Session>(*g.source, identity,
                                                    record::session_options_from_environment("nccl"));
      if (!g.session->start()) {
        g.failed = true;
        return msncclInternalError;
      }
      record::install_signal_flush(*g.session);
      g.record_proxy = record::env_int("MESHSCOPE_NCCL_PROXY", 0) != 0;
      std::atexit(at_exit);
      g.enabled.store(true);
    }
    if (!g.session->enabled()) return msncclInternalError;
    g.mask = default_mask(version);
    *mask = g.mask;
    auto ctx = std::make_unique<Context>(g.pool_size);
    ctx->version = version;
    ctx->comm_hash = comm_hash;
    ctx->nranks = nranks;
    ctx->comm_rank = rank;
    ctx->nnodes = nnodes;
    ctx->comm_name.set(comm_name);
    if (version >= 4) {
      Item item;
      item.kind = Item::kComm;
      item.comm_hash = comm_hash;
      item.nranks = nranks;
      item.comm_rank = rank;
      item.nnodes = nnodes;
      item.comm_name.set(comm_name);
      push(item);
    }
    g.contexts.push_back(ctx.get());
    *context = ctx.release();
    return msncclSuccess;
  } catch (const std::exception& e) {
    disable(fmt::format("init failed: {}", e.what()));
  } catch (...) {
    disable("init failed");
  }
  return msncclInternalError;
}

int finalize_common(void* context) noexcept {
  if (!context) return msncclSuccess;
  auto* ctx = static_cast<Context*>(context);
  Global& g = global();
  bool last = false;
  {
    std::lock_guard lock(g.mutex);
    for (std::size_t i = 0; i < ctx->colls.size(); ++i) {
      CollEvent& e = ctx->colls[i];
      if (e.busy.load() && !e.emitted.load()) emit(&e, !e.stopped.load() || e.live_children.load() != 0);
    }
    g.contexts.erase(std::remove(g.contexts.begin(), g.contexts.end(), ctx), g.contexts.end());
    last = g.contexts.empty();
  }
  delete ctx;
  // The process may end without running exit handlers (os._exit): put what we have on disk now.
  if (last && g.session) g.session->flush_and_wait(2000);
  return msncclSuccess;
}

// What a version's descriptor says, normalised.
struct Descr {
  std::uint64_t type = 0;
  void* parent = nullptr;
  int rank = -1;
  // coll / p2p
  std::uint64_t comm_hash = 0;
  bool has_comm_hash = false;
  const char* comm_name = nullptr;
  std::uint64_t seq = 0;
  const char* func = nullptr;
  const char* dtype = nullptr;
  const char* algo = nullptr;
  const char* proto = nullptr;
  std::uint64_t count = 0;
  int root = -1, peer = -1, channels = 0;
  bool channels_exact = false;
  // proxy
  pid_t pid = 0;
  int channel = -1, n_steps = 0, is_send = 0, step = -1;
  // kernel channel
  std::uint64_t ptimer = 0;
  // group API
  int group_depth = 0;
};

void start_common(Context* ctx, void** handle, const Descr& d) noexcept {
  *handle = nullptr;
  Global& g = global();
  // A PXN proxy operation runs in this proxy thread on behalf of another process: its context (and parent)
  // are that process's pointers. Never dereference them.
  if (d.type == MSNCCL_PROFILE_PROXY_OP && d.pid != static_cast<pid_t>(::getpid())) return;
  if (!ctx || !g.enabled.load(std::memory_order_relaxed)) return;
  // NCCL starts some events whether or not the plugin asked for them (v5: ncclProfileGroup whenever
  // collectives are on): record only what the mask asked for.
  if (!(static_cast<int>(d.type) & g.mask)) return;
  const std::int64_t now = clock_ns();
  switch (d.type) {
    case MSNCCL_PROFILE_COLL:
    case MSNCCL_PROFILE_P2P: {
      const bool coll = d.type == MSNCCL_PROFILE_COLL;
      // The sequence number counts every collective of the communicator (NCCL's own counts per operation),
      // so (communicator, seq) names one collective instance on every rank.
      const std::int64_t seq = coll ? ctx->next_seq.fetch_add(1, std::memory_order_relaxed) : kUnset;
      CollEvent* e = ctx->colls.acquire();
      if (!e) {
        g.dropped_pool.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      e->ctx = ctx;
      Item& it = e->item;
      it = Item{};
      it.kind = coll ? Item::kColl : Item::kP2p;
      it.comm_hash = d.has_comm_hash ? d.comm_hash : ctx->comm_hash;
      if (d.comm_name) {
        it.comm_name.set(d.comm_name);
      } else {
        it.comm_name = ctx->comm_name;
      }
      it.comm_rank = d.rank >= 0 ? d.rank : ctx->comm_rank;
      it.nranks = ctx->nranks;
      it.seq = seq;
      it.func.set(d.func);
      it.dtype.set(d.dtype);
      it.algo.set(d.algo);
      it.proto.set(d.proto);
      it.count = d.count;
      it.root = d.root;
      it.peer = d.peer;
      it.channels = static_cast<std::uint8_t>(std::clamp(d.channels, 0, 255));
      it.tid = this_tid();
      e->expected_channels = d.channels_exact && (g.mask & MSNCCL_PROFILE_KERNEL_CH) ? d.channels : 0;
      e->kernel_expected = (g.mask & MSNCCL_PROFILE_KERNEL_CH) != 0;
      e->live_children.store(0);
      e->channels_done.store(0);
      e->stopped.store(false);
      e->emitted.store(false);
      e->enqueue_start.store(now);
      e->enqueue_stop.store(kUnset);
      for (auto* a : {&e->gpu_start, &e->gpu_end, &e->kernel_host_start, &e->kernel_host_end, &e->proxy_start,
                      &e->proxy_end}) {
        a->store(kUnset, std::memory_order_relaxed);
      }
      e->last_activity.store(now);
      *handle = e;
      return;
    }
    case MSNCCL_PROFILE_KERNEL_CH:
    case MSNCCL_PROFILE_PROXY_OP:
    case MSNCCL_PROFILE_PROXY_STEP: {
      CollEvent* parent = nullptr;
      ChildEvent* op = nullptr;
      if (d.type == MSNCCL_PROFILE_PROXY_STEP) {
        op = static_cast<ChildEvent*>(d.parent);
        if (op && op->tag != kTagChild) op = nullptr;
        if (!op) return;  // its proxy operation was not recorded
      } else {
        parent = static_cast<CollEvent*>(d.parent);
        if (parent && parent->tag != kTagColl) parent = nullptr;
      }
      if (d.type == MSNCCL_PROFILE_KERNEL_CH && !parent) return;
      ChildEvent* c = ctx->children.acquire();
      if (!c) {
        g.dropped_pool.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      c->type = d.type;
      c->parent = parent;
      c->parent_generation = parent ? parent->generation.load(std::memory_order_acquire) : 0;
      c->op = op;
      c->channel = op ? op->channel : d.channel;
      c->peer = op ? op->peer : d.peer;
      c->is_send = op ? op->is_send : d.is_send;
      c->n_steps = d.n_steps;
      c->step = d.step;
      c->start_ns = now;
      c->gpu_start = d.ptimer ? static_cast<std::int64_t>(d.ptimer) : kUnset;
      c->gpu_stop = kUnset;
      c->trans_size = 0;
      if (parent) {
        parent->live_children.fetch_add(1);
        parent->last_activity.store(now, std::memory_order_relaxed);
        if (d.type == MSNCCL_PROFILE_KERNEL_CH) {
          atomic_min(parent->kernel_host_start, now);
          if (d.ptimer) {
            observe_gpu_clock(d.ptimer, now);
            atomic_min(parent->gpu_start, static_cast<std::int64_t>(d.ptimer));
          }
        } else {
          atomic_min(parent->proxy_start, now);
        }
      }
      *handle = c;
      return;
    }
    case MSNCCL_PROFILE_GROUP:
    case MSNCCL_PROFILE_GROUP_API: {
      GroupEvent* e = ctx->groups.acquire();
      if (!e) {
        g.dropped_pool.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      e->start_ns = now;
      e->tid = this_tid();
      e->depth = d.group_depth;
      *handle = e;
      return;
    }
    default:
      return;  // API-level, proxy control and net plugin events are not recorded
  }
}

void record_state_common(void* handle, int state, std::uint64_t ptimer, std::uint64_t trans_size) noexcept {
  if (!handle) return;
  if (*static_cast<std::uint32_t*>(handle) != kTagChild) return;
  auto* c = static_cast<ChildEvent*>(handle);
  if (state == MSNCCL_STATE_KERNEL_CH_STOP && ptimer) c->gpu_stop = static_cast<std::int64_t>(ptimer);
  if (trans_size) c->trans_size = trans_size;
}

void stop_common(void* handle) noexcept {
  if (!handle) return;
  const std::int64_t now = clock_ns();
  const std::uint32_t tag = *static_cast<std::uint32_t*>(handle);
  if (tag == kTagColl) {
    auto* e = static_cast<CollEvent*>(handle);
    e->enqueue_stop.store(now);
    e->last_activity.store(now, std::memory_order_relaxed);
    e->stopped.store(true);
    try_complete(e);
    return;
  }
  if (tag == kTagGroup) {
    auto* e = static_cast<GroupEvent*>(handle);
    Item item;
    item.kind = Item::kGroup;
    item.start_ns = e->start_ns;
    item.end_ns = now;
    item.tid = e->tid;
    Pool<GroupEvent>::release(e);
    push(item);
    return;
  }
  if (tag != kTagChild) return;
  auto* c = static_cast<ChildEvent*>(handle);
  if (c->type != MSNCCL_PROFILE_KERNEL_CH && global().record_proxy) {
    Item item;
    item.kind = c->type == MSNCCL_PROFILE_PROXY_OP ? Item::kProxyOp : Item::kProxyStep;
    item.channel = c->channel;
    item.peer = c->peer;
    item.is_send = c->is_send;
    item.step = c->step;
    item.start_ns = c->start_ns;
    item.end_ns = now;
    item.trans_size = c->trans_size;
    push(item);
  }
  CollEvent* parent = c->parent;
  if (parent && parent->generation.load(std::memory_order_acquire) == c->parent_generation) {
    if (c->type == MSNCCL_PROFILE_KERNEL_CH) {
      atomic_max(parent->kernel_host_end, now);
      if (c->gpu_stop != kUnset) {
        observe_gpu_clock(static_cast<std::uint64_t>(c->gpu_stop), now);
        atomic_max(parent->gpu_end, c->gpu_stop);
      }
      parent->channels_done.fetch_add(1);
    } else if (c->type == MSNCCL_PROFILE_PROXY_OP) {
      atomic_max(parent->proxy_end, now);
    }
    parent->last_activity.store(now, std::memory_order_relaxed);
    parent->live_children.fetch_sub(1);
    try_complete(parent);
  }
  Pool<ChildEvent>::release(c);
}

// ---- v1 names
// ----------------------------------------------------------------------------------------------

const char* v1_func(std::uint8_t f) {
  static const char* const kNames[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                       "AllReduce", "SendRecv", "Send",      "Recv"};
  return f < std::size(kNames) ? kNames[f] : "unknown";
}
const char* v1_dtype(std::uint8_t t) {
  static const char* const kNames[] = {"Int8",    "Uint8",    "Int32",      "Uint32",
                                       "Int64",   "Uint64",   "Float16",    "Float32",
                                       "Float64", "Bfloat16", "Float8e4m3", "Float8e5m2"};
  return t < std::size(kNames) ? kNames[t] : "unknown";
}
const char* v1_algo(std::uint8_t a) {
  static const char* const kNames[] = {"TREE",      "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                                       "NVLS_TREE", "PAT"};
  return a < std::size(kNames) ? kNames[a] : "";
}
const char* v1_proto(std::uint8_t p) {
  static const char* const kNames[] = {"LL", "LL128", "SIMPLE"};
  return p < std::size(kNames) ? kNames[p] : "";
}

// ---- descriptor adapters, one per version
// ------------------------------------------------------------------

template <typename D>
void fill_proxy(Descr& d, const D& e) {
  if (d.type == MSNCCL_PROFILE_PROXY_OP) {
    d.pid = e.proxyOp.pid;
    d.channel = e.proxyOp.channelId;
    d.peer = e.proxyOp.peer;
    d.n_steps = e.proxyOp.nSteps;
    d.is_send = e.proxyOp.isSend;
  } else if (d.type == MSNCCL_PROFILE_PROXY_STEP) {
    d.step = e.proxyStep.step;
  }
}

Descr adapt(const msncclEventDescr_v1& e) {
  Descr d;
  d.type = e.type;
  d.parent = e.parentObj;
  d.rank = e.rank;
  if (d.type == MSNCCL_PROFILE_COLL) {
    d.comm_name = e.coll.name;
    d.comm_hash = e.coll.commHash;
    d.has_comm_hash = true;
    d.seq = e.coll.seqNumber;
    d.func = v1_func(e.coll.func);
    d.dtype = v1_dtype(e.coll.datatype);
    d.algo = v1_algo(e.coll.algo);
    d.proto = v1_proto(e.coll.proto);
    d.count = e.coll.count;
    d.root = e.coll.root;
    d.channels = e.coll.nMaxChannels;
  } else if (d.type == MSNCCL_PROFILE_P2P) {
    d.comm_name = e.p2p.name;
    d.comm_hash = e.p2p.commHash;
    d.has_comm_hash = true;
    d.func = v1_func(e.p2p.func);
    d.dtype = v1_dtype(e.p2p.datatype);
    d.count = e.p2p.count;
    d.peer = e.p2p.peer;
  }
  fill_proxy(d, e);
  return d;
}

template <typename D>  // v2 and v3 share the coll/p2p layout apart from v2's trafficBytes
Descr adapt_v2v3(const D& e) {
  Descr d;
  d.type = e.type;
  d.parent = e.parentObj;
  d.rank = e.rank;
  if (d.type == MSNCCL_PROFILE_COLL) {
    d.comm_name = e.coll.name;
    d.comm_hash = e.coll.commHash;
    d.has_comm_hash = true;
    d.seq = e.coll.seqNumber;
    d.func = e.coll.func;
    d.dtype = e.coll.datatype;
    d.algo = e.coll.algo;
    d.proto = e.coll.proto;
    d.count = e.coll.count;
    d.root = e.coll.root;
    d.channels = e.coll.nMaxChannels;
  } else if (d.type == MSNCCL_PROFILE_P2P) {
    d.comm_name = e.p2p.name;
    d.comm_hash = e.p2p.commHash;
    d.has_comm_hash = true;
    d.func = e.p2p.func;
    d.dtype = e.p2p.datatype;
    d.count = e.p2p.count;
    d.peer = e.p2p.peer;
  }
  fill_proxy(d, e);
  return d;
}

Descr adapt(const msncclEventDescr_v3& e) {
  Descr d = adapt_v2v3(e);
  if (d.type == MSNCCL_PROFILE_KERNEL_CH) d.channel = e.kernelCh.channelId;
  return d;
}

template <typename D>  // v4 and v5 share coll/p2p/kernel channel layouts
Descr adapt_v4v5(const D& e) {
  Descr d;
  d.type = e.type;
  d.parent = e.parentObj;
  d.rank = e.rank;
  if (d.type == MSNCCL_PROFILE_COLL) {
    d.seq = e.coll.seqNumber;
    d.func = e.coll.func;
    d.dtype = e.coll.datatype;
    d.algo = e.coll.algo;
    d.proto = e.coll.proto;
    d.count = e.coll.count;
    d.root = e.coll.root;
    d.channels = e.coll.nChannels;
    d.channels_exact = true;
  } else if (d.type == MSNCCL_PROFILE_P2P) {
    d.func = e.p2p.func;
    d.dtype = e.p2p.datatype;
    d.count = e.p2p.count;
    d.peer = e.p2p.peer;
    d.channels = e.p2p.nChannels;
    // Not exact: NCCL 2.28 counts every channel, also those with no steps that send no kernel channel event
    // (NVIDIA/nccl#2056). The operation completes when its channels that did start are done.
    d.channels_exact = false;
  } else if (d.type == MSNCCL_PROFILE_KERNEL_CH) {
    d.channel = e.kernelCh.channelId;
    d.ptimer = e.kernelCh.pTimer;
  }
  fill_proxy(d, e);
  return d;
}

template <typename D>
int start_event(void* context, void** handle, D* descr) noexcept {
  if (!handle) return msncclSuccess;
  *handle = nullptr;
  if (!descr) return msncclSuccess;
  try {
    Descr d;
    if constexpr (std::is_same_v<D, msncclEventDescr_v1>) {
      d = adapt(*descr);
    } else if constexpr (std::is_same_v<D, msncclEventDescr_v2>) {
      d = adapt_v2v3(*descr);
    } else if constexpr (std::is_same_v<D, msncclEventDescr_v3>) {
      d = adapt(*descr);
    } else {
      d = adapt_v4v5(*descr);
      if constexpr (std::is_same_v<D, msncclEventDescr_v5>) {
        if (d.type == MSNCCL_PROFILE_GROUP_API) d.group_depth = descr->groupApi.groupDepth;
      }
    }
    start_common(static_cast<Context*>(context), handle, d);
  } catch (...) {
    disable("internal error in startEvent");
    *handle = nullptr;
  }
  return msncclSuccess;
}

int stop_event(void* handle) noexcept {
  try {
    stop_common(handle);
  } catch (...) {
    disable("internal error in stopEvent");
  }
  return msncclSuccess;
}

int record_v1v3(void* handle, msncclEventState_t state, msncclStateArgs_v1* args) noexcept {
  record_state_common(handle, state, 0, args ? args->proxyOp.transSize : 0);
  return msncclSuccess;
}

int record_v4v5(void* handle, msncclEventState_t state, msncclStateArgs_v4* args) noexcept {
  if (!args) {
    record_state_common(handle, state, 0, 0);
  } else if (state == MSNCCL_STATE_KERNEL_CH_STOP) {
    record_state_common(handle, state, args->kernelCh.pTimer, 0);
  } else if (state >= MSNCCL_STATE_PROXY_STEP_SEND_GPU_WAIT &&
             state <= MSNCCL_STATE_PROXY_STEP_RECV_GPU_WAIT) {
    record_state_common(handle, state, 0, args->proxyStep.transSize);
  } else {
    record_state_common(handle, state, 0, 0);
  }
  return msncclSuccess;
}

int init_v1v3(int version, void** context, int* mask) noexcept {
  return init_common(context, mask, version, 0, nullptr, -1, -1, -1);
}
int init_v1(void** context, int* mask) {
  return init_v1v3(1, context, mask);
}
int init_v2(void** context, int* mask) {
  return init_v1v3(2, context, mask);
}
int init_v3(void** context, int* mask) {
  return init_v1v3(3, context, mask);
}
int init_v4(void** context, int* mask, const char* comm_name, std::uint64_t comm_hash, int nnodes, int nranks,
            int rank, msncclDebugLogger_t) {
  return init_common(context, mask, 4, comm_hash, comm_name, nnodes, nranks, rank);
}
int init_v5(void** context, std::uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks,
            int rank, msncclDebugLogger_t) {
  return init_common(context, mask, 5, comm_id, comm_name, nnodes, nranks, rank);
}

}  // namespace
}  // namespace meshscope::nccl

using namespace meshscope::nccl;

extern "C" {

MESHSCOPE_EXPORT msncclProfiler_v5 ncclProfiler_v5 = {
    "meshscope", init_v5, start_event<msncclEventDescr_v5>, stop_event, record_v4v5, finalize_common};
MESHSCOPE_EXPORT msncclProfiler_v4 ncclProfiler_v4 = {
    "meshscope", init_v4, start_event<msncclEventDescr_v4>, stop_event, record_v4v5, finalize_common};
MESHSCOPE_EXPORT msncclProfiler_v3 ncclProfiler_v3 = {
    "meshscope", init_v3, start_event<msncclEventDescr_v3>, stop_event, record_v1v3, finalize_common};
MESHSCOPE_EXPORT msncclProfiler_v2 ncclProfiler_v2 = {
    "meshscope", init_v2, start_event<msncclEventDescr_v2>, stop_event, record_v1v3, finalize_common};
MESHSCOPE_EXPORT msncclProfiler_v1 ncclProfiler_v1 = {
    "meshscope", init_v1, start_event<msncclEventDescr_v1>, stop_event, record_v1v3, finalize_common};

}  // extern "C"
