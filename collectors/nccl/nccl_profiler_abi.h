/* The NCCL profiler plugin ABI, versions 1 to 5, as meshscope relies on it.
 *
 * NCCL does not install these definitions; a plugin carries its own. They are written here from the layouts
 * NCCL documents for its profiler plugin interface (ext-profiler in the NCCL sources): NCCL looks up a symbol
 * named ncclProfiler_vN in the library named by NCCL_PROFILER_PLUGIN (newest first) and calls through the
 * function pointers of that struct. Field order, types and sizes below must match NCCL's exactly; the static
 * assertions at the end of this header guard the offsets that matter on LP64 Linux.
 *
 *   v1 (NCCL 2.23): operation, datatype, algorithm and protocol as small integers
 *   v2 (NCCL 2.24): the same as strings
 *   v3 (NCCL 2.25): kernel channel events (no timestamps), net plugin events
 *   v4 (NCCL 2.26): init receives the communicator; kernel channel events carry GPU globaltimer stamps
 *   v5 (NCCL 2.27+): 64-bit event type, API-level events (group/collective/p2p API, kernel launch)
 */
#ifndef MESHSCOPE_NCCL_PROFILER_ABI_H_
#define MESHSCOPE_NCCL_PROFILER_ABI_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { msncclSuccess = 0, msncclInternalError = 3 } msncclResult_t;
typedef int msnccl_result_int; /* ncclResult_t is an int-sized enum */

typedef void (*msncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line,
                                    const char* fmt, ...);

/* Event type bits (ncclProfile*). */
enum {
  MSNCCL_PROFILE_GROUP = 1 << 0,
  MSNCCL_PROFILE_COLL = 1 << 1,
  MSNCCL_PROFILE_P2P = 1 << 2,
  MSNCCL_PROFILE_PROXY_OP = 1 << 3,
  MSNCCL_PROFILE_PROXY_STEP = 1 << 4,
  MSNCCL_PROFILE_PROXY_CTRL = 1 << 5,
  MSNCCL_PROFILE_KERNEL_CH = 1 << 6,
  MSNCCL_PROFILE_NET_PLUGIN = 1 << 7,
  MSNCCL_PROFILE_GROUP_API = 1 << 8,
  MSNCCL_PROFILE_COLL_API = 1 << 9,
  MSNCCL_PROFILE_P2P_API = 1 << 10,
  MSNCCL_PROFILE_KERNEL_LAUNCH = 1 << 11
};

/* Event states (ncclProfilerEventState_t), one numbering shared by every version. */
enum {
  MSNCCL_STATE_PROXY_OP_SEND_POSTED = 0,
  MSNCCL_STATE_PROXY_OP_SEND_REM_FIFO_WAIT = 1,
  MSNCCL_STATE_PROXY_OP_SEND_TRANSMITTED = 2,
  MSNCCL_STATE_PROXY_OP_SEND_DONE = 3,
  MSNCCL_STATE_PROXY_OP_RECV_POSTED = 4,
  MSNCCL_STATE_PROXY_OP_RECV_RECEIVED = 5,
  MSNCCL_STATE_PROXY_OP_RECV_TRANSMITTED = 6,
  MSNCCL_STATE_PROXY_OP_RECV_DONE = 7,
  MSNCCL_STATE_PROXY_STEP_SEND_GPU_WAIT = 8,
  MSNCCL_STATE_PROXY_STEP_SEND_WAIT = 9,
  MSNCCL_STATE_PROXY_STEP_RECV_WAIT = 10,
  MSNCCL_STATE_PROXY_STEP_RECV_FLUSH_WAIT = 11,
  MSNCCL_STATE_PROXY_STEP_RECV_GPU_WAIT = 12,
  MSNCCL_STATE_PROXY_CTRL_IDLE = 13,
  MSNCCL_STATE_PROXY_CTRL_ACTIVE = 14,
  MSNCCL_STATE_PROXY_CTRL_SLEEP = 15,
  MSNCCL_STATE_PROXY_CTRL_WAKEUP = 16,
  MSNCCL_STATE_PROXY_CTRL_APPEND = 17,
  MSNCCL_STATE_PROXY_CTRL_APPEND_END = 18,
  MSNCCL_STATE_PROXY_OP_IN_PROGRESS_V4 = 19,
  MSNCCL_STATE_PROXY_STEP_SEND_PEER_WAIT_V4 = 20,
  MSNCCL_STATE_NET_PLUGIN_UPDATE = 21,
  MSNCCL_STATE_KERNEL_CH_STOP = 22,
  MSNCCL_STATE_GROUP_START_API_STOP = 23, /* ncclGroupStart returned */
  MSNCCL_STATE_GROUP_END_API_START = 24   /* ncclGroupEnd called */
};
typedef int msncclEventState_t; /* an int-sized enum in NCCL */

/* Proxy operation and step descriptors are the same in every version. */
typedef struct {
  pid_t pid;         /* process that created the proxy operation (PXN: another process) */
  uint8_t channelId; /* channel */
  int peer;          /* remote rank */
  int nSteps;        /* network transfers in the operation */
  int chunkSize;     /* bytes per transfer */
  int isSend;        /* 1 send, 0 receive */
} msncclProxyOpDescr;

typedef struct {
  int step;
} msncclProxyStepDescr;

typedef struct {
  int64_t id;
  void* data;
} msncclNetPluginDescr;

/* ---- v1 ---- */
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      uint8_t func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      uint8_t datatype;
      uint32_t op;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      uint8_t algo;
      uint8_t proto;
      int isCollnet;
      int isNvls;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      uint8_t func;
      void* buff;
      uint8_t datatype;
      size_t count;
      int peer;
    } p2p;
    msncclProxyOpDescr proxyOp;
    msncclProxyStepDescr proxyStep;
  };
} msncclEventDescr_v1;

typedef union {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
} msncclStateArgs_v1;

/* ---- v2 ---- */
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
    } p2p;
    msncclProxyOpDescr proxyOp;
    msncclProxyStepDescr proxyStep;
  };
} msncclEventDescr_v2;

typedef msncclStateArgs_v1 msncclStateArgs_v2;

/* ---- v3 ---- */
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
    } p2p;
    msncclProxyOpDescr proxyOp;
    msncclProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
    } kernelCh;
    msncclNetPluginDescr netPlugin;
  };
} msncclEventDescr_v3;

typedef msncclStateArgs_v1 msncclStateArgs_v3;

/* ---- v4 ---- */
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    msncclProxyOpDescr proxyOp;
    msncclProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer; /* GPU globaltimer at the channel's start, ns */
    } kernelCh;
    msncclNetPluginDescr netPlugin;
  };
} msncclEventDescr_v4;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer; /* GPU globaltimer at the channel's stop, ns */
  } kernelCh;
} msncclStateArgs_v4;

/* ---- v5 ---- */
typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint8_t graphCaptured; /* bool (or the low byte of an int in some NCCL builds) */
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      uint8_t graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      uint8_t graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    msncclProxyOpDescr proxyOp;
    msncclProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    msncclNetPluginDescr netPlugin;
  };
} msncclEventDescr_v5;

typedef msncclStateArgs_v4 msncclStateArgs_v5;

/* ---- the plugin structs (one per version) ---- */
#define MSNCCL_PROFILER_COMMON(DESCR, ARGS)                                                          \
  msnccl_result_int (*startEvent)(void* context, void** eHandle, DESCR* eDescr);                     \
  msnccl_result_int (*stopEvent)(void* eHandle);                                                     \
  msnccl_result_int (*recordEventState)(void* eHandle, msncclEventState_t eState, ARGS* eStateArgs); \
  msnccl_result_int (*finalize)(void* context);

typedef struct {
  const char* name;
  msnccl_result_int (*init)(void** context, int* eActivationMask);
  MSNCCL_PROFILER_COMMON(msncclEventDescr_v1, msncclStateArgs_v1)
} msncclProfiler_v1;

typedef struct {
  const char* name;
  msnccl_result_int (*init)(void** context, int* eActivationMask);
  MSNCCL_PROFILER_COMMON(msncclEventDescr_v2, msncclStateArgs_v2)
} msncclProfiler_v2;

typedef struct {
  const char* name;
  msnccl_result_int (*init)(void** context, int* eActivationMask);
  MSNCCL_PROFILER_COMMON(msncclEventDescr_v3, msncclStateArgs_v3)
} msncclProfiler_v3;

typedef struct {
  const char* name;
  msnccl_result_int (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                            int nNodes, int nranks, int rank, msncclDebugLogger_t logfn);
  MSNCCL_PROFILER_COMMON(msncclEventDescr_v4, msncclStateArgs_v4)
} msncclProfiler_v4;

typedef struct {
  const char* name;
  msnccl_result_int (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                            int nNodes, int nranks, int rank, msncclDebugLogger_t logfn);
  MSNCCL_PROFILER_COMMON(msncclEventDescr_v5, msncclStateArgs_v5)
} msncclProfiler_v5;

#undef MSNCCL_PROFILER_COMMON

#ifdef __cplusplus
}  // extern "C"

#include <cstddef>
/* Layout guards (LP64). */
static_assert(offsetof(msncclEventDescr_v1, rank) == 16 && sizeof(void*) == 8, "LP64 layout expected");
static_assert(offsetof(msncclEventDescr_v1, coll.func) == 48 && offsetof(msncclEventDescr_v1, coll.op) == 88);
static_assert(offsetof(msncclEventDescr_v2, coll.trafficBytes) == 96 &&
              offsetof(msncclEventDescr_v2, coll.proto) == 120);
static_assert(offsetof(msncclEventDescr_v3, coll.nMaxChannels) == 96 &&
              offsetof(msncclEventDescr_v3, coll.proto) == 112);
static_assert(offsetof(msncclEventDescr_v4, coll.seqNumber) == 24 &&
              offsetof(msncclEventDescr_v4, coll.nChannels) == 80);
static_assert(offsetof(msncclEventDescr_v4, coll.proto) == 96 &&
              offsetof(msncclEventDescr_v4, kernelCh.pTimer) == 32);
static_assert(offsetof(msncclEventDescr_v4, p2p.nChannels) == 60 &&
              offsetof(msncclEventDescr_v4, proxyOp.isSend) == 44);
static_assert(offsetof(msncclEventDescr_v5, coll.parentGroup) == 104 &&
              offsetof(msncclEventDescr_v5, p2p.parentGroup) == 64);
static_assert(offsetof(msncclEventDescr_v5, groupApi.groupDepth) == 28 &&
              offsetof(msncclEventDescr_v5, collApi.graphCaptured) == 64);
static_assert(sizeof(msncclStateArgs_v1) == 16 && sizeof(msncclStateArgs_v4) == 8);
#endif

#endif /* MESHSCOPE_NCCL_PROFILER_ABI_H_ */
