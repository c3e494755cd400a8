#include "analysis/model/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace meshscope::model {

std::string_view to_string(Collective op) {
  switch (op) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kSendRecv:
      return "send_recv";
  }
  return "all_reduce";
}

double busbw_factor(Collective op, int n) {
  // nccl-tests doc/PERFORMANCE.md: 2(n-1)/n all-reduce; (n-1)/n gather, scatter, all-to-all; 1 otherwise.
  const double nn = n;
  switch (op) {
    case Collective::kAllReduce:
      return 2.0 * (nn - 1) / nn;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (nn - 1) / nn;
    case Collective::kBroadcast:
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

double collective_time(Collective op, double bytes, int n, const Link& link, Algorithm algorithm) {
  if (bytes <= 0) return 0.0;
  if (n <= 1 && op != Collective::kSendRecv) return 0.0;
  const double nn = n;
  const double a = link.alpha_s;
  const double beta = 1.0 / link.bandwidth_Bps;
  const double log_n = std::ceil(std::log2(std::max(2.0, nn)));
  switch (op) {
    case Collective::kAllReduce:
      // Ring: 2(n-1) steps of S/n each (Thakur et al. 2005 §4.5 / Patarasuk & Yuan 2009); tree: NCCL double
      // binary tree, 2 log2 n steps at ring bandwidth (Sanders et al. 2009; NCCL 2.4 release notes).
      if (algorithm == Algorithm::kTree) return 2.0 * log_n * a + 2.0 * (nn - 1) / nn * bytes * beta;
      return 2.0 * (nn - 1) * a + 2.0 * (nn - 1) / nn * bytes * beta;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      // Ring: n-1 steps of S/n (Thakur et al. 2005 §4.1/§4.4).
      return (nn - 1) * a + (nn - 1) / nn * bytes * beta;
    case Collective::kAllToAll:
      // Pairwise exchange: n-1 steps, each rank sends (n-1)/n of its buffer (Thakur et al. 2005 §4.6).
      return (nn - 1) * a + (nn - 1) / nn * bytes * beta;
    case Collective::kBroadcast:
      // Pipelined ring / binary tree broadcast: latency n-1 or log2 n steps, S/B bandwidth term.
      if (algorithm == Algorithm::kTree) return log_n * a + bytes * beta;
      return (nn - 1) * a + bytes * beta;
    case Collective::kSendRecv:
      return a + bytes * beta;  // Hockney 1994: t = alpha + S / B
  }
  return 0.0;
}

GroupShape group_shape(int size, int stride, int gpus_per_node) {
  GroupShape g;
  g.size = std::max(1, size);
  if (stride >= gpus_per_node) {
    g.per_node = 1;
  } else {
    g.per_node = std::max(1, std::min(g.size, gpus_per_node / std::max(1, stride)));
    while (g.size % g.per_node != 0) --g.per_node;
  }
  return g;
}

double hierarchical_time(Collective op, double bytes, const GroupShape& g, const Link& intra,
                         const Link& inter, Algorithm algorithm) {
  if (g.size <= 1 && op != Collective::kSendRecv) return 0.0;
  const int nodes = g.nodes();
  if (nodes <= 1) return collective_time(op, bytes, g.size, intra, algorithm);
  if (g.per_node <= 1) return collective_time(op, bytes, g.size, inter, algorithm);
  const int local = g.per_node;
  switch (op) {
    case Collective::kAllReduce:
      // Two-level all-reduce (NCCL hierarchical / Jia et al. 2018 §3.3): reduce-scatter in the node,
      // all-reduce of 1/local of the data across nodes (the local ranks use their own NICs in parallel),
      // all-gather.
      return 2.0 * collective_time(Collective::kReduceScatter, bytes, local, intra) +
             collective_time(Collective::kAllReduce, bytes / local, nodes, inter, algorithm);
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      // Bandwidth: the network carries 1/local of the data per rail (NCCL rings use every NIC of the node,
      // nccl #1576: 192 GB/s bus bandwidth on 8 x HDR), NVLink the rest. Latency: NCCL runs one flat ring of
      // n-1 steps for these (no hierarchical algorithm), nodes-1 of them across the network.
      const double bandwidth = double(nodes - 1) / nodes * (bytes / local) / inter.bandwidth_Bps +
                               double(local - 1) / local * bytes / intra.bandwidth_Bps;
      return (nodes - 1) * inter.alpha_s + double(g.size - nodes) * intra.alpha_s + bandwidth;
    }
    case Collective::kAllToAll: {
      // A rank's network traffic is (n - local)/n of its buffer and cannot use other GPUs' NICs
      // (nccl-tests issue #267); NVLink traffic runs concurrently.
      const double network =
          (g.size - 1) * inter.alpha_s + bytes * double(g.size - local) / g.size / inter.bandwidth_Bps;
      const double nvlink =
          collective_time(Collective::kAllToAll, bytes * double(local) / g.size, local, intra);
      return std::max(network, nvlink);
    }
    case Collective::kBroadcast:
      return collective_time(op, bytes, nodes, inter, algorithm) +
             collective_time(op, bytes, local, intra, algorithm);
    case Collective::kSendRecv:
      return collective_time(op, bytes, 2, inter);
  }
  return 0.0;
}

}  // namespace meshscope::model
