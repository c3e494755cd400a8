#include "analysis/measure/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/measure/classify.hpp"
#include "analysis/measure/intervals.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

// Two members of one collective end within this of each other, or within a tenth of the shorter duration:
// every member leaves the operation when the last data arrives, whoever came first.
constexpr TimeNs kEndAgreementNs = 50'000;

// The ops whose nccl-tests factor depends on the group size.
bool busbw_depends_on_group(std::string_view op) {
  return op == "allreduce" || op == "allgather" || op == "reducescatter" || op == "alltoall" ||
         op == "alltoallv" || op == "alltoallbase";
}

struct StatsKey {
  std::string op;
  std::int64_t group_size;
  std::int64_t bytes;
  OpSource source;
  auto tie() const { return std::tie(op, group_size, bytes, source); }
  bool operator<(const StatsKey& other) const { return tie() < other.tie(); }
};

void finish_stats(std::map<StatsKey, std::vector<TimeNs>>& groups, std::vector<CollectiveStats>& out) {
  for (auto& [key, durations] : groups) {
    CollectiveStats s;
    s.op = key.op;
    s.group_size = key.group_size;
    s.bytes = key.bytes;
    s.op_source = key.source;
    s.from_metadata = key.source == OpSource::kMetadata;
    s.count = static_cast<std::int64_t>(durations.size());
    for (TimeNs d : durations) {
      s.total_ns += d;
      s.max_ns = std::max(s.max_ns, d);
    }
    s.mean_ns = s.count > 0 ? s.total_ns / s.count : 0;
    s.p50_ns = nearest_rank(durations, 0.50);
    s.p95_ns = nearest_rank(durations, 0.95);
    set_bandwidth(s);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveStats& a, const CollectiveStats& b) {
    return a.total_ns > b.total_ns;
  });
}

// One operation waiting to be matched by metadata.
struct Pending {
  std::uint32_t family;  // (communicator, member list) index
  std::int64_t key;      // seq or ordinal
  std::uint32_t rank_index;
  std::uint32_t collective;
};

struct Ref {
  std::uint32_t rank_index;
  std::uint32_t collective;
};

CollectiveIdentity identify(const Profile& profile, const Collective& c, const std::string& cpu_op) {
  CollectiveIdentity id;
  const std::string& recorded = profile.str(c.op);
  if (has_metadata(c)) {
    id.op = recorded.empty() ? std::string("unknown") : recorded;
    id.op_source = OpSource::kMetadata;
    id.group_size = c.group_size == kNull || c.group_size < 0 ? 0 : c.group_size;
    id.bytes = message_bytes(profile, c);
  } else if (!cpu_op.empty()) {
    id.op = cpu_op;
    id.op_source = OpSource::kCpuOp;
  } else {
    id.op = recorded.empty() ? std::string("unknown") : recorded;
    id.op_source = OpSource::kKernelName;
  }
  return id;
}

// Builds instances and the straggler rows from member lists.
class InstanceBuilder {
 public:
  InstanceBuilder(const Profile& profile, CollectiveReport& report)
      : ranks_(profile.ranks()), report_(report), rows_(ranks_.size()) {
    for (std::size_t ri = 0; ri < ranks_.size(); ++ri) rows_[ri].rank = ranks_[ri].rank;
  }

  const Collective& at(const Ref& r) const { return ranks_[r.rank_index].collectives[r.collective]; }

  // MEMBERS sorted by rank index. COMPLETE: every peer is present (decided by the caller).
  void add(std::vector<Ref>& members, std::int64_t key, bool by_seq, bool by_end_time, std::int64_t expected,
           bool complete) {
    std::stable_sort(members.begin(), members.end(),
                     [](const Ref& a, const Ref& b) { return a.rank_index < b.rank_index; });
    const Collective& first = at(members.front());
    CollectiveInstance inst;
    inst.communicator = first.communicator;
    inst.op = first.op;
    inst.op_name = report_.identity[members.front().rank_index][members.front().collective].op;
    inst.key = key;
    inst.by_seq = by_seq;
    inst.by_end_time = by_end_time;
    inst.expected = expected;
    inst.first_member = static_cast<std::uint32_t>(report_.members.size());
    inst.member_count = static_cast<std::uint32_t>(members.size());
    TimeNs first_arrival = std::numeric_limits<TimeNs>::max(),
           last_arrival = std::numeric_limits<TimeNs>::min();
    std::size_t distinct = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
      const Collective& c = at(members[k]);
      first_arrival = std::min(first_arrival, c.start_ns);
      last_arrival = std::max(last_arrival, c.start_ns);
      if (k == 0 || members[k].rank_index != members[k - 1].rank_index) ++distinct;
    }
    inst.first_arrival_ns = first_arrival;
    inst.last_arrival_ns = last_arrival;
    inst.skew_ns = last_arrival - first_arrival;
    inst.complete = complete;
    for (const Ref& m : members) {
      const Collective& c = at(m);
      const TimeNs duration = std::max<TimeNs>(c.end_ns - c.start_ns, 0);
      InstanceMember member;
      member.rank_index = m.rank_index;
      member.collective = m.collective;
      member.start_ns = c.start_ns;
      member.end_ns = c.end_ns;
      member.wait_ns = std::clamp<TimeNs>(last_arrival - c.start_ns, 0, duration);
      member.transfer_ns = duration - member.wait_ns;
      report_.members.push_back(member);
    }
    // The member that arrived last (the first one at the latest start) and the arrival before it.
    std::size_t last_k = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (at(members[k]).start_ns == last_arrival) {
        last_k = k;
        break;
      }
    }
    TimeNs previous_arrival = first_arrival;
    for (std::size_t k = 0; k < members.size(); ++k) {
      const TimeNs start = at(members[k]).start_ns;
      if (k != last_k && start > previous_arrival) previous_arrival = start;
    }
    if (inst.complete && distinct >= 2) {
      inst.last_rank = ranks_[members[last_k].rank_index].rank;
      ++report_.matched;
      if (by_end_time) ++report_.matched_by_end_time;
      skew_total_ += inst.skew_ns;
      StragglerRow& last = rows_[members[last_k].rank_index];
      ++last.times_last;
      last.late_ns += last_arrival - previous_arrival;
      for (std::size_t k = 0; k < members.size(); ++k) {
        const InstanceMember& m = report_.members[inst.first_member + k];
        rows_[m.rank_index].wait_ns += m.wait_ns;
        if (k == 0 || members[k].rank_index != members[k - 1].rank_index) ++rows_[m.rank_index].instances;
        if (k != last_k) last.caused_wait_ns += m.wait_ns;
      }
    } else {
      inst.complete = false;
      ++report_.incomplete;
    }
    report_.instances.push_back(std::move(inst));
  }

  void finish() {
    report_.mean_skew_ns = report_.matched > 0 ? skew_total_ / report_.matched : 0;
    // Instances by first arrival; members stay grouped (first_member keeps pointing at them).
    std::stable_sort(report_.instances.begin(), report_.instances.end(),
                     [](const CollectiveInstance& a, const CollectiveInstance& b) {
                       return a.first_arrival_ns < b.first_arrival_ns;
                     });
    for (const StragglerRow& row : rows_) {
      if (row.times_last > 0) report_.stragglers.push_back(row);
    }
    std::stable_sort(report_.stragglers.begin(), report_.stragglers.end(),
                     [](const StragglerRow& a, const StragglerRow& b) {
                       return a.caused_wait_ns != b.caused_wait_ns ? a.caused_wait_ns > b.caused_wait_ns
                                                                   : a.times_last > b.times_last;
                     });
  }

 private:
  const RankList& ranks_;
  CollectiveReport& report_;
  std::vector<StragglerRow> rows_;
  TimeNs skew_total_ = 0;
};

// Matches operations with a communicator: by sequence number when every rank recorded one, else by order.
void match_by_metadata(const Profile& profile, const std::vector<Ref>& ops, InstanceBuilder& builder) {
  const auto& ranks = profile.ranks();
  std::map<std::pair<StringId, StringId>, std::uint32_t> family_index;
  std::vector<bool> family_all_seq;
  std::vector<std::int64_t> family_expected;
  std::vector<Pending> pending;
  pending.reserve(ops.size());
  std::vector<std::int64_t> ordinal;  // per family, reset per rank
  std::vector<std::uint32_t> ordinal_rank;
  for (const Ref& op : ops) {
    const Collective& c = builder.at(op);
    auto [it, added] = family_index.try_emplace({c.communicator, c.pg_ranks},
                                                static_cast<std::uint32_t>(family_all_seq.size()));
    if (added) {
      family_all_seq.push_back(true);
      family_expected.push_back(0);
      ordinal.push_back(0);
      ordinal_rank.push_back(std::numeric_limits<std::uint32_t>::max());
    }
    const std::uint32_t f = it->second;
    if (ordinal_rank[f] != op.rank_index) {
      ordinal_rank[f] = op.rank_index;
      ordinal[f] = 0;
    }
    if (c.seq == kNull) family_all_seq[f] = false;
    if (c.group_size != kNull) family_expected[f] = std::max(family_expected[f], c.group_size);
    pending.push_back({f, ordinal[f]++, op.rank_index, op.collective});
  }
  for (Pending& p : pending) {
    if (family_all_seq[p.family]) p.key = ranks[p.rank_index].collectives[p.collective].seq;
  }
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.family, a.key, a.rank_index, a.collective) <
           std::tie(b.family, b.key, b.rank_index, b.collective);
  });
  std::vector<Ref> members;
  for (std::size_t i = 0; i < pending.size();) {
    std::size_t j = i;
    members.clear();
    std::size_t distinct = 0;
    while (j < pending.size() && pending[j].family == pending[i].family && pending[j].key == pending[i].key) {
      if (j == i || pending[j].rank_index != pending[j - 1].rank_index) ++distinct;
      members.push_back({pending[j].rank_index, pending[j].collective});
      ++j;
    }
    const std::int64_t expected = family_expected[pending[i].family];
    const bool complete = expected > 0 ? static_cast<std::int64_t>(distinct) >= expected : distinct >= 2;
    builder.add(members, pending[i].key, family_all_seq[pending[i].family], false, expected, complete);
    i = j;
  }
}

// Which stream of each rank carries the same operations as which stream of another, for operations without
// a communicator. Kineto traces of one job number their streams alike on every rank (the same PyTorch
// process layout), so equal stream ids are the same process group's stream; Nsight Systems numbers streams
// per process (rank 0's NCCL stream 24, rank 1's 32), so when the ranks' stream ids of an operation differ
// the streams are paired by the order in which each rank first used them.
class StreamKeys {
 public:
  StreamKeys(const Profile& profile, const CollectiveReport& report) : ranks_(profile.ranks()) {
    const auto& ranks = profile.ranks();
    first_used_.resize(ranks.size());
    for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
      const Rank& r = ranks[ri];
      auto& by_op = first_used_[ri];
      std::map<std::pair<std::string, std::int32_t>, TimeNs> first;
      for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
        const Collective& c = r.collectives[ci];
        if (c.stream_index < 0 || c.communicator != kNoString) continue;
        const auto [it, added] = first.try_emplace({report.identity[ri][ci].op, c.stream_index}, c.start_ns);
        if (!added) it->second = std::min(it->second, c.start_ns);
      }
      for (const auto& [key, start] : first) by_op[key.first].push_back({start, key.second});
      for (auto& [op, streams] : by_op) std::sort(streams.begin(), streams.end());
    }
    // Per operation: do the ranks that ran it use the same stream ids?
    std::map<std::string, std::set<std::int64_t>> ids_of;
    for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
      for (const auto& [op, streams] : first_used_[ri]) {
        std::set<std::int64_t> ids;
        for (const auto& [start, index] : streams)
          ids.insert(ranks[ri].streams[static_cast<std::size_t>(index)].stream);
        const auto [it, added] = ids_of.try_emplace(op, ids);
        if (!added && it->second != ids) by_order_.insert(op);
      }
    }
  }

  // The key of operation OP on the rank's stream STREAM_INDEX: the stream id, or (streams numbered per
  // process) the stream's place in the order of first use. One operation's keys are all of one kind.
  std::int64_t key(std::size_t rank_index, const std::string& op, std::int32_t stream_index) const {
    if (!by_order_.count(op))
      return ranks_[rank_index].streams[static_cast<std::size_t>(stream_index)].stream;
    const auto& streams = first_used_[rank_index].at(op);
    for (std::size_t k = 0; k < streams.size(); ++k)
      if (streams[k].second == stream_index) return static_cast<std::int64_t>(k);
    return -1;
  }

 private:
  const RankList& ranks_;
  std::vector<std::map<std::string, std::vector<std::pair<TimeNs, std::int32_t>>>> first_used_;
  std::set<std::string> by_order_;
};

// Matches operations without a communicator: per rank, operations of the same kind on the same stream in
// order, a pair kept only when the ends agree. OPS_BY_RANK: per rank, the family's operations by start.
void match_by_end_time(const Profile& profile, std::vector<std::vector<Ref>>& ops_by_rank,
                       InstanceBuilder& builder, CollectiveReport& report) {
  const auto& ranks = profile.ranks();
  std::size_t ranks_present = 0;
  for (const auto& list : ops_by_rank) ranks_present += list.empty() ? 0 : 1;
  const bool whole_job = static_cast<std::int64_t>(ranks.size()) >= profile.world_size();
  if (ranks_present < 2 && profile.world_size() <= 1) {
    for (const auto& list : ops_by_rank) report.solo_ops += static_cast<std::int64_t>(list.size());
    return;
  }
  auto end_of = [&](const Ref& r) { return builder.at(r).end_ns; };
  auto duration_of = [&](const Ref& r) {
    return std::max<TimeNs>(builder.at(r).end_ns - builder.at(r).start_ns, 0);
  };
  std::vector<std::vector<Ref>> groups;
  std::vector<Ref> rest;
  while (true) {
    std::size_t ref = ops_by_rank.size();
    for (std::size_t ri = 0; ri < ops_by_rank.size(); ++ri) {
      if (!ops_by_rank[ri].empty() &&
          (ref == ops_by_rank.size() || ops_by_rank[ri].size() > ops_by_rank[ref].size()))
        ref = ri;
    }
    if (ref == ops_by_rank.size()) break;
    const std::vector<Ref>& base = ops_by_rank[ref];
    groups.assign(base.size(), {});
    for (std::size_t k = 0; k < base.size(); ++k) groups[k].push_back(base[k]);
    for (std::size_t ri = 0; ri < ops_by_rank.size(); ++ri) {
      if (ri == ref || ops_by_rank[ri].empty()) continue;
      std::vector<Ref>& other = ops_by_rank[ri];
      rest.clear();
      std::size_t i = 0, j = 0;
      while (i < base.size() && j < other.size()) {
        const TimeNs a = end_of(base[i]), b = end_of(other[j]);
        const TimeNs tolerance =
            std::max(kEndAgreementNs, std::min(duration_of(base[i]), duration_of(other[j])) / 10);
        if (std::llabs(a - b) <= tolerance) {
          groups[i].push_back(other[j]);
          ++i;
          ++j;
        } else if (a < b) {
          ++i;
        } else {
          rest.push_back(other[j]);
          ++j;
        }
      }
      rest.insert(rest.end(), other.begin() + static_cast<std::ptrdiff_t>(j), other.end());
      other.swap(rest);
    }
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const bool paired = groups[k].size() >= 2;
      if (!paired && ranks_present >= 2) ++report.unpaired_ops;
      const bool complete = paired && groups[k].size() == ranks_present && whole_job;
      builder.add(groups[k], static_cast<std::int64_t>(k), false, true, 0, complete);
    }
    ops_by_rank[ref].clear();
  }
}

}  // namespace

const char* to_string(OpSource s) {
  switch (s) {
    case OpSource::kMetadata:
      return "metadata";
    case OpSource::kCpuOp:
      return "cpu_op";
    case OpSource::kKernelName:
      return vocabulary::kNameOnlySource;
  }
  return "unknown";
}

bool has_metadata(const Collective& c) {
  return c.metadata;
}

// nccl-tests size: the larger of the input and output buffers; else elements x dtype size.
std::int64_t message_bytes(const Profile& profile, const Collective& c) {
  std::int64_t bytes = 0;
  if (c.in_bytes != kNull) bytes = std::max(bytes, c.in_bytes);
  if (c.out_bytes != kNull) bytes = std::max(bytes, c.out_bytes);
  if (bytes > 0) return bytes;
  const int size = vocabulary::dtype_bytes(profile.str(c.dtype));
  if (size == 0) return 0;
  if (c.in_nelems != kNull) bytes = std::max(bytes, c.in_nelems * size);
  if (c.out_nelems != kNull) bytes = std::max(bytes, c.out_nelems * size);
  return bytes;
}

void set_bandwidth(CollectiveStats& s) {
  const double mean_s =
      static_cast<double>(s.total_ns) / static_cast<double>(std::max<std::int64_t>(s.count, 1)) / 1e9;
  if (s.bytes > 0 && mean_s > 0) {
    s.algbw_gbps = static_cast<double>(s.bytes) / mean_s / 1e9;
    // busbw needs the group size for the collectives whose factor depends on it; unknown without it.
    s.busbw_gbps = s.group_size < 1 && busbw_depends_on_group(s.op)
                       ? std::numeric_limits<double>::quiet_NaN()
                       : s.algbw_gbps * busbw_factor(s.op, s.group_size);
  } else {
    s.algbw_gbps = std::numeric_limits<double>::quiet_NaN();
    s.busbw_gbps = std::numeric_limits<double>::quiet_NaN();
  }
}

double busbw_factor(std::string_view op, std::int64_t n) {
  if (n < 1) return 1.0;
  const double ranks = static_cast<double>(n);
  if (op == "allreduce") return 2.0 * (ranks - 1.0) / ranks;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall" || op == "alltoallv" ||
      op == "alltoallbase") {
    return (ranks - 1.0) / ranks;
  }
  return 1.0;
}

std::vector<CollectiveIdentity> identify_collectives(const Profile& profile, const Rank& rank,
                                                     const std::vector<std::string>& cpu_ops) {
  static const std::string kNone;
  std::vector<CollectiveIdentity> out;
  out.reserve(rank.collectives.size());
  for (std::size_t ci = 0; ci < rank.collectives.size(); ++ci)
    out.push_back(identify(profile, rank.collectives[ci], ci < cpu_ops.size() ? cpu_ops[ci] : kNone));
  return out;
}

CollectiveReport analyze_collectives(const Profile& profile,
                                     const std::vector<std::vector<std::string>>& cpu_ops,
                                     const std::vector<std::vector<NameOnlyComm>>& name_only_comm) {
  CollectiveReport report;
  const auto& ranks = profile.ranks();

  // Identity of every collectives row, and the statistics.
  std::map<StatsKey, std::vector<TimeNs>> groups;
  report.identity.resize(ranks.size());
  static const std::vector<std::string> kNone;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const Rank& r = ranks[ri];
    report.identity[ri] = identify_collectives(profile, r, ri < cpu_ops.size() ? cpu_ops[ri] : kNone);
    for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
      const Collective& c = r.collectives[ci];
      const CollectiveIdentity& id = report.identity[ri][ci];
      groups[StatsKey{id.op, id.group_size, id.bytes, id.op_source}].push_back(
          std::max<TimeNs>(c.end_ns - c.start_ns, 0));
    }
  }
  {
    std::unordered_map<StringId, std::string> op_of_name;
    for (const auto& list : name_only_comm) {
      for (const NameOnlyComm& k : list) {
        StatsKey key{k.cpu_op, 0, 0, OpSource::kCpuOp};
        if (key.op.empty()) {
          auto it = op_of_name.find(k.name);
          if (it == op_of_name.end()) {
            std::string op = op_from_kernel_name(profile.str(k.name));
            it = op_of_name.emplace(k.name, op.empty() ? std::string("unknown") : op).first;
          }
          key = {it->second, 0, 0, OpSource::kKernelName};
        }
        groups[key].push_back(std::max<TimeNs>(k.duration_ns, 0));
      }
    }
  }
  finish_stats(groups, report.stats);

  // Matching: with a communicator by metadata; without one by order on the stream, checked by end times.
  InstanceBuilder builder(profile, report);
  // Each operation is a member of one instance at most (a job's hundreds of thousands: grown, the list would
  // be copied again and again).
  std::size_t operations = 0;
  for (const Rank& r : ranks) operations += r.collectives.size();
  report.members.reserve(operations);
  std::vector<Ref> with_communicator;
  with_communicator.reserve(operations);
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::vector<Ref>>> by_stream;
  const StreamKeys stream_keys(profile, report);
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const Rank& r = ranks[ri];
    for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
      const Collective& c = r.collectives[ci];
      const CollectiveIdentity& id = report.identity[ri][ci];
      const Ref ref{static_cast<std::uint32_t>(ri), static_cast<std::uint32_t>(ci)};
      if (id.group_size == 1) {
        ++report.solo_ops;  // a group of one rank (a one-GPU job's NCCL calls): no peer to match
      } else if (vocabulary::is_point_to_point(id.op)) {
        // Point-to-point operations pair a sender with one receiver that nothing names.
        ++report.unmatched_ops;
      } else if (c.communicator != kNoString) {
        with_communicator.push_back(ref);
      } else if (c.stream_index < 0) {
        ++report.unmatched_ops;  // no kernel, no stream: nothing to order by
      } else {
        auto& lists = by_stream[{id.op, stream_keys.key(ri, id.op, c.stream_index)}];
        lists.resize(ranks.size());
        lists[ri].push_back(ref);
      }
    }
  }
  match_by_metadata(profile, with_communicator, builder);
  for (auto& [key, lists] : by_stream) {
    for (auto& list : lists) {
      std::stable_sort(list.begin(), list.end(), [&](const Ref& a, const Ref& b) {
        return builder.at(a).start_ns < builder.at(b).start_ns;
      });
    }
    match_by_end_time(profile, lists, builder, report);
  }
  builder.finish();
  return report;
}

}  // namespace meshscope::measure
