// The alpha-beta cost model of collectives (Hockney 1994; Thakur, Rabenseifner & Gropp 2005) with the
// nccl-tests conventions for message size, and its hierarchical form for groups that span NVLink domains.
#pragma once

#include <string_view>

namespace meshscope::model {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class Algorithm { kRing, kTree };

std::string_view to_string(Collective op);

// One class of link: latency per algorithm step and achievable bandwidth per GPU per direction.
struct Link {
  double alpha_s = 0;
  double bandwidth_Bps = 0;
};

// Time of one collective over N ranks on one link class. BYTES follows nccl-tests (doc/PERFORMANCE.md): the
// whole buffer for all-reduce, broadcast and send/recv, and the gathered (n x per-rank) size for all-gather,
// reduce-scatter and all-to-all.
double collective_time(Collective op, double bytes, int n, const Link& link,
                       Algorithm algorithm = Algorithm::kRing);

// nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x factor.
double busbw_factor(Collective op, int n);

// Where a group's ranks sit: `size` ranks, `per_node` of them in each NVLink domain.
struct GroupShape {
  int size = 1;
  int per_node = 1;
  int nodes() const { return size / per_node; }
};

// Shape of a group whose consecutive members are STRIDE global ranks apart (Megatron-LM rank order), with
// GPUS_PER_NODE consecutive ranks per node.
GroupShape group_shape(int size, int stride, int gpus_per_node);

// Hierarchical collective: inside one node on NVLink, across nodes on the network, two-level (intra-node
// reduce-scatter / inter-node phase on 1/per_node of the data / intra-node all-gather) when both.
double hierarchical_time(Collective op, double bytes, const GroupShape& group, const Link& intra,
                         const Link& inter, Algorithm algorithm = Algorithm::kRing);

}  // namespace meshscope::model
