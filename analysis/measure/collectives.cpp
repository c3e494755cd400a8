#include "analysis/measure/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/measure/classify.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

TimeNs nearest_rank(std::vector<TimeNs>& values, double p) {
  if (values.empty()) return 0;
  auto index = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  index = index == 0 ? 0 : index - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
  return values[index];
}

struct StatsKey {
  std::string op;
  std::int64_t group_size;
  std::int64_t bytes;
  bool metadata;
  auto tie() const { return std::tie(op, group_size, bytes, metadata); }
  bool operator<(const StatsKey& other) const { return tie() < other.tie(); }
};

void finish_stats(std::map<StatsKey, std::vector<TimeNs>>& groups, std::vector<CollectiveStats>& out) {
  for (auto& [key, durations] : groups) {
    CollectiveStats s;
    s.op = key.op;
    s.group_size = key.group_size;
    s.bytes = key.bytes;
    s.from_metadata = key.metadata;
    s.count = static_cast<std::int64_t>(durations.size());
    for (TimeNs d : durations) {
      s.total_ns += d;
      s.max_ns = std::max(s.max_ns, d);
    }
    s.mean_ns = s.count > 0 ? s.total_ns / s.count : 0;
    s.p50_ns = nearest_rank(durations, 0.50);
    s.p95_ns = nearest_rank(durations, 0.95);
    const double mean_s =
        static_cast<double>(s.total_ns) / static_cast<double>(std::max<std::int64_t>(s.count, 1)) / 1e9;
    if (s.bytes > 0 && mean_s > 0) {
      s.algbw_gbps = static_cast<double>(s.bytes) / mean_s / 1e9;
      s.busbw_gbps = s.algbw_gbps * busbw_factor(s.op, s.group_size);
    } else {
      s.algbw_gbps = std::numeric_limits<double>::quiet_NaN();
      s.busbw_gbps = std::numeric_limits<double>::quiet_NaN();
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveStats& a, const CollectiveStats& b) {
    return a.total_ns > b.total_ns;
  });
}

// One operation waiting to be matched.
struct Pending {
  std::uint32_t family;  // (communicator, member list, p2p) index
  std::int64_t key;      // seq or ordinal
  std::uint32_t rank_index;
  std::uint32_t collective;
};

}  // namespace

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

double busbw_factor(std::string_view op, std::int64_t n) {
  if (n < 2) return 1.0;
  const double ranks = static_cast<double>(n);
  if (op == "allreduce") return 2.0 * (ranks - 1.0) / ranks;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall" || op == "alltoallv" ||
      op == "alltoallbase") {
    return (ranks - 1.0) / ranks;
  }
  return 1.0;
}

CollectiveReport analyze_collectives(const Profile& profile,
                                     const std::vector<std::vector<NameOnlyComm>>& name_only_comm) {
  CollectiveReport report;
  const auto& ranks = profile.ranks();

  // Statistics.
  std::map<StatsKey, std::vector<TimeNs>> groups;
  for (const Rank& r : ranks) {
    for (const Collective& c : r.collectives) {
      StatsKey key{profile.str(c.op), c.group_size == kNull ? 0 : c.group_size, message_bytes(profile, c),
                   true};
      if (key.op.empty()) key.op = "unknown";
      groups[key].push_back(std::max<TimeNs>(c.end_ns - c.start_ns, 0));
    }
  }
  {
    std::unordered_map<StringId, std::string> op_of_name;
    for (const auto& list : name_only_comm) {
      for (const NameOnlyComm& k : list) {
        auto it = op_of_name.find(k.name);
        if (it == op_of_name.end()) {
          std::string op = op_from_kernel_name(profile.str(k.name));
          it = op_of_name.emplace(k.name, op.empty() ? std::string("unknown") : op).first;
        }
        groups[StatsKey{it->second, 0, 0, false}].push_back(std::max<TimeNs>(k.duration_ns, 0));
      }
    }
  }
  finish_stats(groups, report.stats);

  // Matching: families of (communicator, member list, p2p).
  std::map<std::tuple<StringId, StringId, bool>, std::uint32_t> family_index;
  std::vector<bool> family_all_seq;
  std::vector<std::int64_t> family_expected;
  std::vector<Pending> pending;
  std::vector<std::int64_t> ordinal;  // per family, reset per rank
  std::vector<std::uint32_t> ordinal_rank;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const Rank& r = ranks[ri];
    for (std::size_t ci = 0; ci < r.collectives.size(); ++ci) {
      const Collective& c = r.collectives[ci];
      if (c.communicator == kNoString) {
        ++report.unmatched_ops;
        continue;
      }
      const bool p2p = vocabulary::is_point_to_point(profile.str(c.op));
      if (p2p) {
        // Point-to-point operations pair a sender with one receiver that the metadata does not name.
        ++report.unmatched_ops;
        continue;
      }
      auto [it, added] = family_index.try_emplace({c.communicator, c.pg_ranks, p2p},
                                                  static_cast<std::uint32_t>(family_all_seq.size()));
      if (added) {
        family_all_seq.push_back(true);
        family_expected.push_back(0);
        ordinal.push_back(0);
        ordinal_rank.push_back(std::numeric_limits<std::uint32_t>::max());
      }
      const std::uint32_t f = it->second;
      if (ordinal_rank[f] != ri) {
        ordinal_rank[f] = static_cast<std::uint32_t>(ri);
        ordinal[f] = 0;
      }
      if (c.seq == kNull) family_all_seq[f] = false;
      if (c.group_size != kNull) family_expected[f] = std::max(family_expected[f], c.group_size);
      pending.push_back({f, ordinal[f]++, static_cast<std::uint32_t>(ri), static_cast<std::uint32_t>(ci)});
    }
  }
  for (Pending& p : pending) {
    if (family_all_seq[p.family]) p.key = ranks[p.rank_index].collectives[p.collective].seq;
  }
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.family, a.key, a.rank_index, a.collective) <
           std::tie(b.family, b.key, b.rank_index, b.collective);
  });

  std::vector<StragglerRow> rows(ranks.size());
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) rows[ri].rank = ranks[ri].rank;
  TimeNs skew_total = 0;
  report.members.reserve(pending.size());
  for (std::size_t i = 0; i < pending.size();) {
    std::size_t j = i;
    while (j < pending.size() && pending[j].family == pending[i].family && pending[j].key == pending[i].key)
      ++j;
    const Collective& first = ranks[pending[i].rank_index].collectives[pending[i].collective];
    CollectiveInstance inst;
    inst.communicator = first.communicator;
    inst.op = first.op;
    inst.key = pending[i].key;
    inst.by_seq = family_all_seq[pending[i].family];
    inst.expected = family_expected[pending[i].family];
    inst.first_member = static_cast<std::uint32_t>(report.members.size());
    inst.member_count = static_cast<std::uint32_t>(j - i);
    TimeNs first_arrival = std::numeric_limits<TimeNs>::max(),
           last_arrival = std::numeric_limits<TimeNs>::min();
    std::size_t distinct = 0;
    for (std::size_t k = i; k < j; ++k) {
      const Collective& c = ranks[pending[k].rank_index].collectives[pending[k].collective];
      first_arrival = std::min(first_arrival, c.start_ns);
      last_arrival = std::max(last_arrival, c.start_ns);
      if (k == i || pending[k].rank_index != pending[k - 1].rank_index) ++distinct;
    }
    inst.first_arrival_ns = first_arrival;
    inst.last_arrival_ns = last_arrival;
    inst.skew_ns = last_arrival - first_arrival;
    inst.complete = inst.expected > 0 ? static_cast<std::int64_t>(distinct) >= inst.expected : distinct >= 2;
    std::size_t last_k = i;
    TimeNs previous_arrival = first_arrival;
    for (std::size_t k = i; k < j; ++k) {
      const Collective& c = ranks[pending[k].rank_index].collectives[pending[k].collective];
      const TimeNs duration = std::max<TimeNs>(c.end_ns - c.start_ns, 0);
      InstanceMember m;
      m.rank_index = pending[k].rank_index;
      m.collective = pending[k].collective;
      m.start_ns = c.start_ns;
      m.end_ns = c.end_ns;
      m.wait_ns = std::clamp<TimeNs>(last_arrival - c.start_ns, 0, duration);
      m.transfer_ns = duration - m.wait_ns;
      report.members.push_back(m);
    }
    // The member that arrived last (the first one at the latest start) and the arrival before it.
    for (std::size_t k = i; k < j; ++k) {
      if (ranks[pending[k].rank_index].collectives[pending[k].collective].start_ns == last_arrival) {
        last_k = k;
        break;
      }
    }
    for (std::size_t k = i; k < j; ++k) {
      const TimeNs start = ranks[pending[k].rank_index].collectives[pending[k].collective].start_ns;
      if (k != last_k && start > previous_arrival) previous_arrival = start;
    }
    if (inst.complete && distinct >= 2) {
      inst.last_rank = ranks[pending[last_k].rank_index].rank;
      ++report.matched;
      skew_total += inst.skew_ns;
      StragglerRow& last = rows[pending[last_k].rank_index];
      ++last.times_last;
      last.late_ns += last_arrival - previous_arrival;
      for (std::size_t k = i; k < j; ++k) {
        const InstanceMember& m = report.members[inst.first_member + (k - i)];
        rows[m.rank_index].wait_ns += m.wait_ns;
        if (k == i || pending[k].rank_index != pending[k - 1].rank_index) ++rows[m.rank_index].instances;
        if (k != last_k) last.caused_wait_ns += m.wait_ns;
      }
    } else if (!inst.complete) {
      ++report.incomplete;
    }
    report.instances.push_back(inst);
    i = j;
  }
  report.mean_skew_ns = report.matched > 0 ? skew_total / report.matched : 0;

  // Instances by first arrival; members stay grouped (first_member keeps pointing at them).
  std::stable_sort(report.instances.begin(), report.instances.end(),
                   [](const CollectiveInstance& a, const CollectiveInstance& b) {
                     return a.first_arrival_ns < b.first_arrival_ns;
                   });
  for (const StragglerRow& row : rows) {
    if (row.times_last > 0) report.stragglers.push_back(row);
  }
  std::stable_sort(report.stragglers.begin(), report.stragglers.end(),
                   [](const StragglerRow& a, const StragglerRow& b) {
                     return a.caused_wait_ns != b.caused_wait_ns ? a.caused_wait_ns > b.caused_wait_ns
                                                                 : a.times_last > b.times_last;
                   });
  return report;
}

}  // namespace meshscope::measure
