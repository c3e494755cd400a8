// The NCCL profiler ABI that collectors/nccl carries (NCCL does not install its profiler headers) against the
// NCCL library itself: the installed libnccl.so.2 ships its debug information, so gdb can print the size of
// every NCCL profiler type and the offset of every field the plugin reads. A wrong offset here would make the
// plugin read garbage from (or crash) a training job, and no GPU is needed to find it. Skipped where gdb or a
// libnccl with debug information is missing.
#if defined(MESHSCOPE_NCCL_LIBRARY)

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "collectors/nccl/nccl_profiler_abi.h"

namespace meshscope::test {
namespace {

struct Layout {
  std::string expression;  // what gdb evaluates on NCCL's types
  long ours;               // the same on ours
};

#define MS_SIZE(ncclType, ourType)                             \
  Layout {                                                     \
    "sizeof(" ncclType ")", static_cast<long>(sizeof(ourType)) \
  }
#define MS_FIELD(ncclType, ourType, path)                                           \
  Layout {                                                                          \
    "(long)&((" ncclType "*)0)->" #path, static_cast<long>(offsetof(ourType, path)) \
  }
#define MS_DESCR(V, path) MS_FIELD("ncclProfilerEventDescr_v" #V "_t", msncclEventDescr_v##V, path)
#define MS_PLUGIN(V, path) MS_FIELD("ncclProfiler_v" #V "_t", msncclProfiler_v##V, path)

std::vector<Layout> layouts() {
  std::vector<Layout> l = {
      MS_SIZE("ncclProfilerEventDescr_v1_t", msncclEventDescr_v1),
      MS_SIZE("ncclProfilerEventDescr_v2_t", msncclEventDescr_v2),
      MS_SIZE("ncclProfilerEventDescr_v3_t", msncclEventDescr_v3),
      MS_SIZE("ncclProfilerEventDescr_v4_t", msncclEventDescr_v4),
      MS_SIZE("ncclProfilerEventDescr_v5_t", msncclEventDescr_v5),
      MS_SIZE("ncclProfilerEventStateArgs_v1_t", msncclStateArgs_v1),
      MS_SIZE("ncclProfilerEventStateArgs_v4_t", msncclStateArgs_v4),
      MS_SIZE("ncclProfiler_v1_t", msncclProfiler_v1),
      MS_SIZE("ncclProfiler_v5_t", msncclProfiler_v5),
      // v1: metadata as small integers.
      MS_DESCR(1, rank),
      MS_DESCR(1, coll.name),
      MS_DESCR(1, coll.commHash),
      MS_DESCR(1, coll.seqNumber),
      MS_DESCR(1, coll.func),
      MS_DESCR(1, coll.count),
      MS_DESCR(1, coll.root),
      MS_DESCR(1, coll.datatype),
      MS_DESCR(1, coll.op),
      MS_DESCR(1, coll.trafficBytes),
      MS_DESCR(1, coll.nMaxChannels),
      MS_DESCR(1, coll.algo),
      MS_DESCR(1, coll.proto),
      MS_DESCR(1, p2p.commHash),
      MS_DESCR(1, p2p.func),
      MS_DESCR(1, p2p.datatype),
      MS_DESCR(1, p2p.count),
      MS_DESCR(1, p2p.peer),
      MS_DESCR(1, proxyOp.pid),
      MS_DESCR(1, proxyOp.channelId),
      MS_DESCR(1, proxyOp.peer),
      MS_DESCR(1, proxyOp.nSteps),
      MS_DESCR(1, proxyOp.isSend),
      MS_DESCR(1, proxyStep.step),
      // v2: strings.
      MS_DESCR(2, coll.func),
      MS_DESCR(2, coll.count),
      MS_DESCR(2, coll.datatype),
      MS_DESCR(2, coll.trafficBytes),
      MS_DESCR(2, coll.nMaxChannels),
      MS_DESCR(2, coll.algo),
      MS_DESCR(2, coll.proto),
      MS_DESCR(2, p2p.func),
      MS_DESCR(2, p2p.datatype),
      MS_DESCR(2, p2p.count),
      MS_DESCR(2, p2p.peer),
      MS_DESCR(2, proxyOp.channelId),
      // v3
      MS_DESCR(3, coll.seqNumber),
      MS_DESCR(3, coll.func),
      MS_DESCR(3, coll.count),
      MS_DESCR(3, coll.datatype),
      MS_DESCR(3, coll.nMaxChannels),
      MS_DESCR(3, coll.algo),
      MS_DESCR(3, coll.proto),
      MS_DESCR(3, p2p.peer),
      MS_DESCR(3, kernelCh.channelId),
      // v4: kernel channel GPU timer, communicator at init.
      MS_DESCR(4, coll.seqNumber),
      MS_DESCR(4, coll.func),
      MS_DESCR(4, coll.count),
      MS_DESCR(4, coll.root),
      MS_DESCR(4, coll.datatype),
      MS_DESCR(4, coll.nChannels),
      MS_DESCR(4, coll.algo),
      MS_DESCR(4, coll.proto),
      MS_DESCR(4, p2p.func),
      MS_DESCR(4, p2p.datatype),
      MS_DESCR(4, p2p.count),
      MS_DESCR(4, p2p.peer),
      MS_DESCR(4, p2p.nChannels),
      MS_DESCR(4, kernelCh.channelId),
      MS_DESCR(4, kernelCh.pTimer),
      MS_DESCR(4, proxyOp.pid),
      MS_DESCR(4, proxyStep.step),
      // v5: API-level events.
      MS_DESCR(5, rank),
      MS_DESCR(5, groupApi.groupDepth),
      MS_DESCR(5, coll.seqNumber),
      MS_DESCR(5, coll.func),
      MS_DESCR(5, coll.count),
      MS_DESCR(5, coll.root),
      MS_DESCR(5, coll.datatype),
      MS_DESCR(5, coll.nChannels),
      MS_DESCR(5, coll.algo),
      MS_DESCR(5, coll.proto),
      MS_DESCR(5, coll.parentGroup),
      MS_DESCR(5, p2p.func),
      MS_DESCR(5, p2p.datatype),
      MS_DESCR(5, p2p.count),
      MS_DESCR(5, p2p.peer),
      MS_DESCR(5, p2p.nChannels),
      MS_DESCR(5, kernelCh.channelId),
      MS_DESCR(5, kernelCh.pTimer),
      MS_DESCR(5, proxyOp.pid),
      MS_DESCR(5, proxyOp.channelId),
      MS_DESCR(5, proxyStep.step),
      MS_FIELD("ncclProfilerEventStateArgs_v5_t", msncclStateArgs_v5, kernelCh.pTimer),
      MS_FIELD("ncclProfilerEventStateArgs_v1_t", msncclStateArgs_v1, proxyOp.steps),
      MS_FIELD("ncclProfilerEventStateArgs_v4_t", msncclStateArgs_v4, proxyStep.transSize),
      // The plugin structs NCCL reads from the exported symbols.
      MS_PLUGIN(1, init),
      MS_PLUGIN(1, startEvent),
      MS_PLUGIN(1, stopEvent),
      MS_PLUGIN(1, recordEventState),
      MS_PLUGIN(1, finalize),
      MS_PLUGIN(4, init),
      MS_PLUGIN(4, finalize),
      MS_PLUGIN(5, init),
      MS_PLUGIN(5, startEvent),
      MS_PLUGIN(5, stopEvent),
      MS_PLUGIN(5, recordEventState),
      MS_PLUGIN(5, finalize),
  };
  return l;
}

TEST(NcclAbi, MatchesTheInstalledNcclLibrary) {
  if (std::system("command -v gdb > /dev/null 2>&1") != 0) GTEST_SKIP() << "gdb is not installed";
  const auto wanted = layouts();
  std::string command = "gdb -nx -batch -ex 'set print pretty off'";
  for (const auto& l : wanted) command += " -ex 'print " + l.expression + "'";
  command += std::string(" ") + MESHSCOPE_NCCL_LIBRARY + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<std::string> values;
  std::string all;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    const std::string text(line);
    all += text;
    if (text.rfind('$', 0) == 0 && text.find(" = ") != std::string::npos) {
      values.push_back(
          text.substr(text.find(" = ") + 3, text.find_last_not_of("\r\n") - text.find(" = ") - 2));
    }
  }
  pclose(pipe);
  if (values.empty() && all.find("No symbol") != std::string::npos) {
    GTEST_SKIP() << MESHSCOPE_NCCL_LIBRARY << " has no debug information for the profiler types";
  }
  ASSERT_EQ(values.size(), wanted.size()) << all;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    EXPECT_EQ(values[i], std::to_string(wanted[i].ours)) << wanted[i].expression;
  }
}

}  // namespace
}  // namespace meshscope::test

#endif  // MESHSCOPE_NCCL_LIBRARY
