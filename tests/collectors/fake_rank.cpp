// meshscope_fake_rank: a stand-in for one rank of a training job, for the collector tests on machines without
// a GPU. It does what NCCL does with a profiler plugin: dlopen()s the library named by NCCL_PROFILER_PLUGIN,
// initialises a communicator and drives the plugin with made-up event descriptors (groups, collectives with
// kernel channel events stamped like the GPU globaltimer, send/recv), then ends the way the test asks.
//
//   meshscope_fake_rank [--spawn N [--hosts H]] [--collectives N] [--abi 1..5] [--skew-ns-per-host NS]
//                       [--base-ns NS] [--exit normal|kill|kill-late|wait-signal] [--exit-code N]
//                       [--cuda [--cuda-burst N] [--cuda-reset] [--cuda-fork]]
//
// --spawn N starts N copies with RANK/LOCAL_RANK/WORLD_SIZE set (as torchrun does), all stamping from one
// base (--base-ns, or the time of the spawn), and exits with the worst status; --hosts H spreads them over H
// pretend hosts (MESHSCOPE_HOSTNAME=fakehostK). Collective i ends at base + i ms + 400 us (+ a few hundred ns
// of jitter) on every rank, as real collectives end together; --skew-ns-per-host shifts host K's clock by
// K * NS so that the merge has something to undo.
//
// --cuda (when built with the CUDA toolkit) also plays the CUDA driver and GPU for the CUPTI injection
// library named by CUDA_INJECTION64_PATH (fake_cuda.hpp): each step's GPU work, with the NCCL kernel over the
// collective's GPU time. Without NCCL_PROFILER_PLUGIN only CUDA records are produced. --cuda-burst N adds N
// kernels in a tight loop; --cuda-reset calls "cudaDeviceReset" after the steps and then waits for a signal
// (like --exit wait-signal); --cuda-fork forks a child that produces records and exits (a DataLoader worker).
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectors/nccl/nccl_profiler_abi.h"
#ifdef MESHSCOPE_FAKE_CUPTI_SONAME
#include "tests/collectors/fake_cuda.hpp"
#endif

namespace {

// Set in a forked child: its parent's threads (the collectors' writer threads) are not there, so what only
// their stacks pointed to looks leaked to LeakSanitizer at the child's exit. That is fork, not a leak; the
// parent's own exit is still checked.
[[maybe_unused]] bool forked_child = false;  // read under ASan, set only with the CUPTI double

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
extern "C" int __lsan_is_turned_off() {
  return forked_child ? 1 : 0;
}
#endif

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct Options {
  int spawn = 0;
  int hosts = 1;
  int collectives = 16;
  int abi = 5;
  long long skew = 0;
  long long base = 0;
  std::string exit_mode = "normal";
  int exit_code = 0;
  bool cuda = false;
  long cuda_burst = 0;
  bool cuda_reset = false;
  bool cuda_fork = false;
};

#ifdef MESHSCOPE_FAKE_CUPTI_SONAME
fake_cuda::Gpu* gpu = nullptr;  // set by --cuda once the injection library is loaded
#endif

// Waits (up to 30 s) for the signal the test sends; the collectors' handlers flush before the process ends.
int wait_for_signal() {
  std::printf("ready\n");
  std::fflush(stdout);
  for (int i = 0; i < 300; ++i) usleep(100'000);
  return 5;
}

// Without NCCL_PROFILER_PLUGIN (a CUDA-only run): no NCCL events.
struct NoNccl {
  int init(int, int) { return 0; }
  void op(bool, const char*, int, int, std::int64_t, std::int64_t) {}
  void finalize() {}
};

constexpr std::uint64_t kCommHash = 0x5eed0001ull;

// Builds and sends one operation's events through ABI version V.
template <int V>
struct Driver;

template <>
struct Driver<5> {
  msncclProfiler_v5* p;
  void* ctx = nullptr;
  int init(int nranks, int rank) {
    int mask = 0;
    return p->init(&ctx, kCommHash, &mask, "world", 1, nranks, rank, nullptr);
  }
  // As NCCL 2.28 does: a GroupApi event around the call, and also a Group event (NCCL starts one whenever
  // collectives are profiled, even when the mask leaves groups out); point-to-point operations announce every
  // channel but only those with steps send kernel channel events (NVIDIA/nccl#2056); with PXN, a proxy thread
  // of this process starts proxy operations of another process, with that process's context pointer.
  void op(bool coll, const char* func, int rank, int peer, std::int64_t start, std::int64_t end) {
    msncclEventDescr_v5 g{};
    g.type = MSNCCL_PROFILE_GROUP_API;
    g.rank = rank;
    g.groupApi.groupDepth = 1;
    void* group = nullptr;
    p->startEvent(ctx, &group, &g);
    msncclEventDescr_v5 legacy_group{};
    legacy_group.type = MSNCCL_PROFILE_GROUP;
    legacy_group.rank = rank;
    void* legacy = nullptr;
    p->startEvent(ctx, &legacy, &legacy_group);
    msncclEventDescr_v5 d{};
    d.type = coll ? MSNCCL_PROFILE_COLL : MSNCCL_PROFILE_P2P;
    d.rank = rank;
    if (coll) {
      d.coll.func = func;
      d.coll.count = 1 << 20;
      d.coll.datatype = "ncclBfloat16";
      d.coll.nChannels = 2;
      d.coll.nWarps = 16;
      d.coll.algo = "RING";
      d.coll.proto = "SIMPLE";
    } else {
      d.p2p.func = func;
      d.p2p.count = 4096;
      d.p2p.datatype = "ncclFloat32";
      d.p2p.peer = peer;
      d.p2p.nChannels = 2;  // one of them without steps: no kernel channel event for it
    }
    void* handle = nullptr;
    p->startEvent(ctx, &handle, &d);
    p->stopEvent(handle);  // enqueued: NCCL stops the task event right after the launch
    if (legacy) p->stopEvent(legacy);
    p->stopEvent(group);
    msncclEventDescr_v5 pxn{};
    pxn.type = MSNCCL_PROFILE_PROXY_OP;
    pxn.parentObj = reinterpret_cast<void*>(0x10);  // another process's event handle
    pxn.proxyOp.pid = getpid() + 100000;
    pxn.proxyOp.channelId = 0;
    void* pxn_handle = nullptr;
    p->startEvent(reinterpret_cast<void*>(0x20), &pxn_handle, &pxn);  // another process's context
    if (pxn_handle) p->stopEvent(pxn_handle);
    const int channels = coll ? 2 : 1;
    std::vector<void*> ch(channels);
    for (int c = 0; c < channels; ++c) {
      msncclEventDescr_v5 k{};
      k.type = MSNCCL_PROFILE_KERNEL_CH;
      k.parentObj = handle;
      k.kernelCh.channelId = static_cast<std::uint8_t>(c);
      k.kernelCh.pTimer = static_cast<std::uint64_t>(start + c * 50);
      p->startEvent(ctx, &ch[c], &k);
    }
    for (int c = 0; c < channels; ++c) {
      msncclStateArgs_v5 a{};
      a.kernelCh.pTimer = static_cast<std::uint64_t>(end - (channels - 1 - c) * 50);
      p->recordEventState(ch[c], MSNCCL_STATE_KERNEL_CH_STOP, &a);
      p->stopEvent(ch[c]);
    }
  }
  void finalize() { p->finalize(ctx); }
};

template <>
struct Driver<4> {
  msncclProfiler_v4* p;
  void* ctx = nullptr;
  int init(int nranks, int rank) {
    int mask = 0;
    return p->init(&ctx, &mask, "world", kCommHash, 1, nranks, rank, nullptr);
  }
  void op(bool coll, const char* func, int rank, int peer, std::int64_t start, std::int64_t end) {
    msncclEventDescr_v4 g{};
    g.type = MSNCCL_PROFILE_GROUP;
    g.rank = rank;
    void* group = nullptr;
    p->startEvent(ctx, &group, &g);
    msncclEventDescr_v4 d{};
    d.type = coll ? MSNCCL_PROFILE_COLL : MSNCCL_PROFILE_P2P;
    d.rank = rank;
    d.parentObj = group;
    if (coll) {
      d.coll.func = func;
      d.coll.count = 1 << 20;
      d.coll.datatype = "ncclBfloat16";
      d.coll.nChannels = 1;
      d.coll.algo = "TREE";
      d.coll.proto = "LL128";
    } else {
      d.p2p.func = func;
      d.p2p.count = 4096;
      d.p2p.datatype = "ncclFloat32";
      d.p2p.peer = peer;
      d.p2p.nChannels = 1;
    }
    void* handle = nullptr;
    p->startEvent(ctx, &handle, &d);
    p->stopEvent(handle);
    msncclEventDescr_v4 k{};
    k.type = MSNCCL_PROFILE_KERNEL_CH;
    k.parentObj = handle;
    k.kernelCh.pTimer = static_cast<std::uint64_t>(start);
    void* kh = nullptr;
    p->startEvent(ctx, &kh, &k);
    msncclStateArgs_v4 a{};
    a.kernelCh.pTimer = static_cast<std::uint64_t>(end);
    p->recordEventState(kh, MSNCCL_STATE_KERNEL_CH_STOP, &a);
    p->stopEvent(kh);
    p->stopEvent(group);
  }
  void finalize() { p->finalize(ctx); }
};

// v1 to v3: init knows nothing about the communicator; every collective names it. No GPU timestamps.
template <int V, typename P, typename D>
struct OldDriver {
  P* p;
  void* ctx = nullptr;
  int init(int, int) {
    int mask = 0;
    return p->init(&ctx, &mask);
  }
  void op(bool coll, const char* func, int rank, int peer, std::int64_t, std::int64_t) {
    D d{};
    d.type = coll ? MSNCCL_PROFILE_COLL : MSNCCL_PROFILE_P2P;
    d.rank = rank;
    if (coll) {
      d.coll.name = "world";
      d.coll.commHash = kCommHash;
      d.coll.count = 1 << 20;
      if constexpr (V == 1) {
        d.coll.func = 4;      // AllReduce
        d.coll.datatype = 9;  // bfloat16
        d.coll.algo = 1;      // RING
        d.coll.proto = 2;     // SIMPLE
      } else {
        d.coll.func = func;
        d.coll.datatype = "ncclBfloat16";
        d.coll.algo = "RING";
        d.coll.proto = "SIMPLE";
      }
      d.coll.nMaxChannels = 2;
    } else {
      d.p2p.name = "world";
      d.p2p.commHash = kCommHash;
      d.p2p.count = 4096;
      d.p2p.peer = peer;
      if constexpr (V == 1) {
        d.p2p.func = 6;      // Send
        d.p2p.datatype = 7;  // float32
      } else {
        d.p2p.func = func;
        d.p2p.datatype = "ncclFloat32";
      }
    }
    void* handle = nullptr;
    p->startEvent(ctx, &handle, &d);
    if constexpr (V == 3) {
      D k{};
      k.type = MSNCCL_PROFILE_KERNEL_CH;
      k.parentObj = handle;
      void* kh = nullptr;
      p->startEvent(ctx, &kh, &k);
      p->stopEvent(kh);
    }
    p->stopEvent(handle);
  }
  void finalize() { p->finalize(ctx); }
};

template <typename DriverT>
int run(DriverT driver, const Options& o, int rank, int nranks) {
  if (driver.init(nranks, rank) != 0) {
    std::fprintf(stderr, "fake_rank: plugin init failed\n");
    return 4;
  }
  const std::int64_t base = o.base ? o.base : now_ns() / 1'000'000 * 1'000'000;
  const std::int64_t skew = o.skew * env_int("FAKE_HOST_INDEX", 0);
  const std::int64_t loop_start = now_ns();
  for (int i = 0; i < o.collectives; ++i) {
    const std::int64_t start = base + std::int64_t{i} * 1'000'000 + rank * 2'000;
    const std::int64_t end = base + std::int64_t{i} * 1'000'000 + 400'000 + (rank % 2) * 300;
    driver.op(true, i % 3 == 2 ? "AllGather" : "AllReduce", rank, -1, start + skew, end + skew);
#ifdef MESHSCOPE_FAKE_CUPTI_SONAME
    if (gpu) gpu->step(i, start + skew, end + skew);
#endif
    if (i % 4 == 3 && nranks > 1) {
      driver.op(false, rank % 2 ? "Recv" : "Send", rank, rank % 2 ? rank - 1 : (rank + 1) % nranks,
                end + skew + 10'000, end + skew + 60'000);
    }
  }
  if (std::getenv("FAKE_TIMING")) {
    // The cost of the plugin on the calling thread, per operation (one group, one collective, its channels).
    std::fprintf(stderr, "fake_rank: %.1f ns per operation\n",
                 static_cast<double>(now_ns() - loop_start) / std::max(o.collectives, 1));
  }
  if (o.exit_mode == "kill-late") {
    // Long enough for the plugin's sweeper to complete the point-to-point operations (their channel count is
    // unknown: 200 ms of quiet) and for several flushes after it, even on a loaded machine.
    usleep(static_cast<useconds_t>(400'000 + env_int("MESHSCOPE_FLUSH_MS", 1000) * 8000));
    raise(SIGKILL);
  }
#ifdef MESHSCOPE_FAKE_CUPTI_SONAME
  if (gpu) {
    const std::int64_t after = base + std::int64_t{o.collectives} * 1'000'000 + skew;
    gpu->overhead(after, after + 3'000);
    if (o.cuda_burst > 0) gpu->burst(o.cuda_burst, after + 10'000);
    if (o.cuda_fork) {
      const pid_t child = fork();
      if (child == 0) {
        forked_child = true;
        gpu->burst(100, after + 20'000);
        std::exit(0);  // runs the atexit handlers, as a DataLoader worker does
      }
      int status = 0;
      waitpid(child, &status, 0);
      std::printf("fake_cuda: child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    }
    gpu->print_counts();
    if (o.cuda_reset) {
      gpu->device_reset();
      return wait_for_signal();
    }
  }
#endif
  if (o.exit_mode == "wait-signal") return wait_for_signal();
  driver.finalize();
  if (o.exit_mode == "kill") raise(SIGKILL);
  return o.exit_code;
}

int spawn(int n, int hosts, char** argv) {
  // Without --base-ns every copy stamps from one base taken now, as GPUs finishing one collective do. Taken
  // here rather than by a test before the launcher started: the stamps stand for GPU times on the host's
  // clock, and the NCCL plugin takes a GPU timer more than a second away from the host clock for one on
  // another epoch (startup under the sanitizers can take that long).
  bool based = false;
  for (char** a = argv; *a; ++a) based = based || std::strcmp(*a, "--base-ns") == 0;
  const std::string base = std::to_string(now_ns() / 1'000'000 * 1'000'000);
  std::vector<pid_t> children;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      const int host = r * hosts / n;
      setenv("FAKE_HOST_INDEX", std::to_string(host).c_str(), 1);
      if (hosts > 1) setenv("MESHSCOPE_HOSTNAME", ("fakehost" + std::to_string(host)).c_str(), 1);
      std::vector<char*> args;
      for (char** a = argv; *a; ++a) {
        if (std::strcmp(*a, "--spawn") == 0 || std::strcmp(*a, "--hosts") == 0) {
          ++a;
          continue;
        }
        args.push_back(*a);
      }
      std::string base_flag = "--base-ns";
      std::string base_value = base;
      if (!based) {
        args.push_back(base_flag.data());
        args.push_back(base_value.data());
      }
      args.push_back(nullptr);
      execv("/proc/self/exe", args.data());
      _exit(127);
    }
    children.push_back(pid);
  }
  int worst = 0;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (code > worst) worst = code;
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "0";
    if (a == "--spawn")
      o.spawn = std::atoi(next), ++i;
    else if (a == "--collectives")
      o.collectives = std::atoi(next), ++i;
    else if (a == "--abi")
      o.abi = std::atoi(next), ++i;
    else if (a == "--hosts")
      o.hosts = std::atoi(next), ++i;
    else if (a == "--skew-ns-per-host")
      o.skew = std::atoll(next), ++i;
    else if (a == "--base-ns")
      o.base = std::atoll(next), ++i;
    else if (a == "--exit")
      o.exit_mode = next, ++i;
    else if (a == "--exit-code")
      o.exit_code = std::atoi(next), ++i;
    else if (a == "--cuda")
      o.cuda = true;
    else if (a == "--cuda-burst")
      o.cuda_burst = std::atol(next), ++i;
    else if (a == "--cuda-reset")
      o.cuda_reset = true;
    else if (a == "--cuda-fork")
      o.cuda_fork = true;
    else {
      std::fprintf(stderr, "fake_rank: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.spawn > 0) return spawn(o.spawn, o.hosts, argv);
  const int rank = env_int("RANK", 0), nranks = env_int("WORLD_SIZE", 1);
  if (o.cuda) {
#ifdef MESHSCOPE_FAKE_CUPTI_SONAME
    // CUDA initialises before NCCL creates a communicator, as in a training script.
    static fake_cuda::Gpu the_gpu;
    if (the_gpu.start(env_int("LOCAL_RANK", 0))) gpu = &the_gpu;
#else
    std::fprintf(stderr, "fake_rank: built without the CUDA toolkit, --cuda is not available\n");
    return 2;
#endif
  }
  const char* plugin = std::getenv("NCCL_PROFILER_PLUGIN");
  if (o.cuda && (!plugin || !*plugin)) return run(NoNccl{}, o, rank, nranks);
  if (!plugin || !*plugin) {
    std::fprintf(stderr, "fake_rank: NCCL_PROFILER_PLUGIN is not set\n");
    return 3;
  }
  void* lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "fake_rank: %s\n", dlerror());
    return 3;
  }
  const std::string symbol = "ncclProfiler_v" + std::to_string(o.abi);
  void* sym = dlsym(lib, symbol.c_str());
  if (!sym) {
    std::fprintf(stderr, "fake_rank: %s not found\n", symbol.c_str());
    return 3;
  }
  int rc = 0;
  switch (o.abi) {
    case 5:
      rc = run(Driver<5>{static_cast<msncclProfiler_v5*>(sym)}, o, rank, nranks);
      break;
    case 4:
      rc = run(Driver<4>{static_cast<msncclProfiler_v4*>(sym)}, o, rank, nranks);
      break;
    case 3:
      rc = run(OldDriver<3, msncclProfiler_v3, msncclEventDescr_v3>{static_cast<msncclProfiler_v3*>(sym)}, o,
               rank, nranks);
      break;
    case 2:
      rc = run(OldDriver<2, msncclProfiler_v2, msncclEventDescr_v2>{static_cast<msncclProfiler_v2*>(sym)}, o,
               rank, nranks);
      break;
    default:
      rc = run(OldDriver<1, msncclProfiler_v1, msncclEventDescr_v1>{static_cast<msncclProfiler_v1*>(sym)}, o,
               rank, nranks);
      break;
  }
  // NCCL dlcloses its plugin when the last communicator is gone (the plugin is built to stay loaded).
  dlclose(lib);
  return rc;
}
