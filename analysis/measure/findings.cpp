#include "analysis/measure/findings.hpp"

#include <cmath>

#include <fmt/format.h>

#include "profiler/text_format.hpp"

namespace meshscope::measure {
namespace {

double ms(TimeNs ns) {
  return static_cast<double>(ns) / 1e6;
}

double pct(TimeNs part, TimeNs whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string size_text(std::int64_t bytes) {
  return bytes > 0 ? bytes_text(bytes) : "size not recorded";
}

std::string group_text(std::int64_t group_size) {
  return group_size > 0 ? fmt::format("{} ranks", group_size) : "group size unknown";
}

}  // namespace

std::vector<Finding> findings(const Profile& profile, const Analysis& a) {
  std::vector<Finding> out;
  const auto& c = a.collectives;
  const RankResult* worst_exposed = nullptr;
  const RankResult* worst_idle = nullptr;
  TimeNs span_sum = 0, comm_sum = 0;
  for (const RankResult& rr : a.ranks) {
    if (rr.total.span_ns <= 0) continue;
    span_sum += rr.total.span_ns;
    comm_sum += rr.total.comm_ns;
    if (!worst_exposed || pct(rr.total.exposed_comm_ns, rr.total.span_ns) >
                              pct(worst_exposed->total.exposed_comm_ns, worst_exposed->total.span_ns)) {
      worst_exposed = &rr;
    }
    if (!worst_idle ||
        pct(rr.total.idle_ns, rr.total.span_ns) > pct(worst_idle->total.idle_ns, worst_idle->total.span_ns)) {
      worst_idle = &rr;
    }
  }
  const measure::StragglerRow* straggler = c.stragglers.empty() ? nullptr : &c.stragglers.front();
  if (straggler) {
    TimeNs others_span = 0;
    for (const RankResult& rr : a.ranks) {
      if (rr.rank != straggler->rank) others_span += rr.total.span_ns;
    }
    if (pct(straggler->caused_wait_ns, others_span) >= kWaitStandsOutPct) {
      out.push_back({Finding::Kind::kStraggler, straggler->rank,
                     fmt::format("Straggler: the other ranks waited {} for rank {} in collectives. It "
                                 "arrived last in {} of the {} "
                                 "collectives matched on every peer, {} after the previous peer in total",
                                 duration_text(straggler->caused_wait_ns), straggler->rank,
                                 straggler->times_last, c.matched, duration_text(straggler->late_ns))});
    } else {
      straggler = nullptr;
    }
  }
  if (worst_exposed &&
      pct(worst_exposed->total.exposed_comm_ns, worst_exposed->total.span_ns) >= kExposedStandsOutPct) {
    const RankResult& rr = *worst_exposed;
    std::string waiting;
    if (rr.collective_wait_ns == 0 && static_cast<std::int64_t>(a.ranks.size()) < profile.world_size()) {
      waiting = fmt::format(
          "; the other {} ranks' traces are not in the profile, so how much of this is waiting for them "
          "cannot be measured",
          profile.world_size() - static_cast<std::int64_t>(a.ranks.size()));
    } else if (rr.collective_wait_ns > 0) {
      waiting = fmt::format("; {} of its time in collectives was waiting for peers to arrive{}",
                            duration_text(rr.collective_wait_ns),
                            straggler && straggler->rank != rr.rank
                                ? fmt::format(" (rank {} came last most often)", straggler->rank)
                                : "");
    }
    out.push_back(
        {Finding::Kind::kExposedCommunication, rr.rank,
         fmt::format(
             "Exposed communication: rank {} spends {:.1f}% of its span ({}) communicating with no compute "
             "running; {:.1f}% of its communication is hidden behind compute{}",
             rr.rank, pct(rr.total.exposed_comm_ns, rr.total.span_ns),
             duration_text(rr.total.exposed_comm_ns), pct(rr.total.overlap_ns, rr.total.comm_ns), waiting)});
  }
  if (worst_idle && pct(worst_idle->total.idle_ns, worst_idle->total.span_ns) >= kIdleStandsOutPct) {
    const RankResult& rr = *worst_idle;
    // Judged on the main compute streams (compute time at least a tenth of the stream with the most):
    // communication and copy streams, and side streams that run a few kernels, wait for work by design.
    TimeNs host = 0, gap = 0, other = 0, busiest = 0;
    for (const auto& s : rr.streams) busiest = std::max(busiest, s.compute_ns);
    for (const auto& s : rr.streams) {
      if (busiest > 0 && s.compute_ns * 10 < busiest) continue;
      host += s.host_bound_ns;
      gap += s.kernel_gap_ns;
      other += s.other_ns;
    }
    const TimeNs all = host + gap + other;
    const char* where = busiest > 0 ? "its main compute streams" : "its streams";
    std::string why;
    if (all > 0) {
      if (host >= gap && host >= other) {
        why = fmt::format(
            "; {:.0f}% of the gaps on {} are host-bound (the GPU waited for the CPU to launch work: look at "
            "CPU overhead, data loading, or CUDA graphs)",
            pct(host, all), where);
      } else if (other >= gap) {
        why = fmt::format(
            "; {:.0f}% of the gaps on {} are long waits with work already queued (dependencies on other "
            "streams, events or synchronisation)",
            pct(other, all), where);
      } else {
        why = fmt::format(
            "; {:.0f}% of the gaps on {} are short launch gaps between back-to-back kernels (many tiny "
            "kernels: fuse them or use CUDA graphs)",
            pct(gap, all), where);
      }
    }
    out.push_back(
        {Finding::Kind::kGpuIdle, rr.rank,
         fmt::format("GPU idle: rank {} is idle {:.1f}% of its span ({}){}", rr.rank,
                     pct(rr.total.idle_ns, rr.total.span_ns), duration_text(rr.total.idle_ns), why)});
  }
  if (!c.stats.empty() && pct(comm_sum, span_sum) >= kCommStandsOutPct) {
    const auto& s = c.stats.front();
    out.push_back(
        {Finding::Kind::kLargestCommunication, -1,
         fmt::format(
             "Largest communication cost: {} ({}, {}) x{}: {:.3f} ms in total over all ranks, mean {}{}",
             s.op, size_text(s.bytes), group_text(s.group_size), s.count, ms(s.total_ns),
             duration_text(s.mean_ns),
             std::isfinite(s.busbw_gbps) ? fmt::format(", busbw {:.2f} GB/s", s.busbw_gbps) : "")});
  }
  if (out.empty()) {
    if (span_sum == 0) {
      out.push_back({Finding::Kind::kNothing, -1,
                     "Nothing to measure on the GPU: no rank in this profile ran GPU work"});
      return out;
    }
    out.push_back(
        {Finding::Kind::kNothing, -1,
         fmt::format(
             "Nothing: no rank is idle {:.0f}% of its span or more, none spends {:.0f}% or more in exposed "
             "communication{}",
             kIdleStandsOutPct, kExposedStandsOutPct,
             c.matched > 0
                 ? fmt::format(
                       ", and no rank kept its peers waiting in the {} collectives matched on every peer",
                       c.matched)
                 : std::string())});
  }
  return out;
}

}  // namespace meshscope::measure
