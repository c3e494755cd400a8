#include "analysis/compare/link_edits.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "analysis/compare/compare.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/predict.hpp"
#include "profiler/error.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {
namespace {

bool parse_domain(std::string_view name, LinkClass& out) {
  const std::string n = vocabulary::lower(name);
  if (n == "intra_node" || n == "nvlink" || n == "intra-node") {
    out = LinkClass::kIntraNode;
    return true;
  }
  if (n == "inter_node" || n == "network" || n == "inter-node") {
    out = LinkClass::kInterNode;
    return true;
  }
  return false;
}

// The transfer time of collective C of RANK (nccl-tests form) on LINK, or nothing when C has no op, group or
// size to time it by.
struct Timed {
  model::Collective op = model::Collective::kAllReduce;
  int group_size = 0;
  double bytes = 0;
  LinkClass link = LinkClass::kIntraNode;
};
std::optional<Timed> timed(const Profile& profile, const meshscope::Collective& c, int gpus_per_node) {
  Timed t;
  if (!collective_of(profile.str(c.op), t.op)) return std::nullopt;
  const std::vector<int> members = group_members(profile, c);
  std::int64_t n =
      c.group_size != kNull && c.group_size > 0 ? c.group_size : static_cast<std::int64_t>(members.size());
  if (t.op == model::Collective::kSendRecv) n = 2;
  if (n < 2) return std::nullopt;
  t.group_size = static_cast<int>(n);
  t.bytes = static_cast<double>(message_bytes(profile, c));
  if (!(t.bytes > 0)) return std::nullopt;
  t.link = link_class_of(profile, members, t.group_size, gpus_per_node);
  return t;
}

}  // namespace

bool parse_link_edit(std::string_view text, bool latency, LinkEdit& out, std::string& error) {
  const char* flag = latency ? "--latency" : "--link";
  const auto eq = text.find('=');
  out = {};
  out.text = std::string(text);
  if (eq == std::string_view::npos || !parse_domain(text.substr(0, eq), out.link)) {
    error = fmt::format("{} {}: expected intra_node (nvlink) or inter_node (network) ={}", flag, text,
                        latency ? "µs" : "GB/s");
    return false;
  }
  const std::string_view number = text.substr(eq + 1);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) || value < 0 ||
      (!latency && value == 0)) {
    error = fmt::format("{} {}: expected a {} number of {}", flag, text,
                        latency ? "non-negative" : "positive", latency ? "µs" : "GB/s");
    return false;
  }
  if (latency)
    out.latency_s = value * 1e-6;
  else
    out.bandwidth_Bps = value * 1e9;
  return true;
}

LinkRetiming retime_links(const Profile& profile, const measure::Analysis& analysis,
                          std::span<const LinkEdit> edits, int gpus_per_node) {
  LinkRetiming out;
  const auto& ranks = profile.ranks();
  out.factor.resize(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) out.factor[r].assign(ranks[r].activities.size(), 1.0);
  if (edits.empty()) return out;
  model::HardwareSpec hw;
  hw.gpus_per_node = gpus_per_node;
  const std::vector<LinkPoint> points = collect_link_points(profile, analysis, hw);
  // Per link class: the edit (bandwidth and latency merged, the last given wins) and the fit.
  struct Plan {
    bool edited = false;
    double bandwidth_Bps = 0, latency_s = -1;
    LinkFit fit;
  };
  Plan plans[2];
  for (const LinkEdit& e : edits) {
    Plan& p = plans[static_cast<int>(e.link)];
    p.edited = true;
    if (e.bandwidth_Bps > 0) p.bandwidth_Bps = e.bandwidth_Bps;
    if (e.latency_s >= 0) p.latency_s = e.latency_s;
  }
  for (int l = 0; l < 2; ++l) {
    Plan& p = plans[l];
    if (!p.edited) continue;
    p.fit = fit_link(points, static_cast<LinkClass>(l));
    if (p.fit.fitted)
      out.notes.push_back(
          fmt::format("{}: the profile's {} collectives fit α {:.2f} µs per step, bus bandwidth "
                      "{:.1f} GB/s; re-timed with {}",
                      to_string(static_cast<LinkClass>(l)), p.fit.points, p.fit.fit.alpha_step_s * 1e6,
                      p.fit.fit.busbw_Bps / 1e9,
                      p.bandwidth_Bps > 0 ? fmt::format("{:.1f} GB/s", p.bandwidth_Bps / 1e9)
                                          : std::string("the fitted bandwidth")));
    else
      out.notes.push_back(
          fmt::format("{}: no α-β fit ({}): each collective re-timed from its own measured bus "
                      "bandwidth, latency 0",
                      to_string(static_cast<LinkClass>(l)), p.fit.reason));
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const meshscope::Collective& c : ranks[r].collectives) {
      if (c.stream_index < 0) continue;
      const std::optional<Timed> t = timed(profile, c, gpus_per_node);
      if (!t) continue;
      const Plan& p = plans[static_cast<int>(t->link)];
      if (!p.edited) continue;
      model::Link before{0, 0};
      if (p.fit.fitted) {
        before = p.fit.fit.link();
      } else {
        const double seconds = static_cast<double>(ranks[r].activities[c.activity].duration()) / 1e9;
        if (!(seconds > 0)) continue;
        before.bandwidth_Bps = t->bytes * model::busbw_factor(t->op, t->group_size) / seconds;
      }
      const model::Link after{p.latency_s >= 0 ? p.latency_s : before.alpha_s,
                              p.bandwidth_Bps > 0 ? p.bandwidth_Bps : before.bandwidth_Bps};
      const double was = model::collective_time(t->op, t->bytes, t->group_size, before);
      const double now = model::collective_time(t->op, t->bytes, t->group_size, after);
      if (!(was > 0) || !std::isfinite(now)) continue;
      out.factor[r][c.activity] = now / was;
      ++out.retimed;
    }
  }
  return out;
}

LinkRetiming retime_data_parallel(const Profile& profile, const measure::Analysis& analysis,
                                  const model::ParallelConfig& layout, int new_dp,
                                  const std::optional<model::HardwareSpec>& hw, std::string_view title) {
  if (new_dp < 2)
    fail(
        "--dp {}: the replay keeps the measured ranks coupled, so it cannot show one replica alone: give 2 "
        "or more",
        new_dp);
  LinkRetiming out;
  const auto& ranks = profile.ranks();
  out.factor.resize(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) out.factor[r].assign(ranks[r].activities.size(), 1.0);
  model::HardwareSpec spec = hw ? *hw : model::HardwareSpec{};
  if (!hw) spec.gpus_per_node = 8;
  const int per_node = std::max(1, spec.gpus_per_node);
  const std::vector<LinkPoint> points = collect_link_points(profile, analysis, spec);
  const LinkFit fits[2] = {fit_link(points, LinkClass::kIntraNode), fit_link(points, LinkClass::kInterNode)};
  const int stride = std::max(1, layout.tp) * std::max(1, layout.cp);
  const LinkClass link =
      static_cast<std::int64_t>(stride) * new_dp <= per_node ? LinkClass::kIntraNode : LinkClass::kInterNode;
  const LinkFit& fit = fits[static_cast<int>(link)];
  // The new group's link when the profile's own collectives do not fit it: for a collective that moves to the
  // other link, its own link (fitted or measured) times the GPU's ratio of the two (its preset's
  // efficiencies), which keeps the efficiency the profile reached; for one that stays, its own measured bus
  // bandwidth.
  std::optional<model::Link> preset[2];
  if (hw) {
    const model::Efficiencies eff = model::defaults_for(*hw);
    preset[0] = model::intra_node_link(eff);
    preset[1] = model::inter_node_link(eff);
  }
  std::int64_t dp_collectives = 0, from_own = 0, from_preset = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const meshscope::Collective& c : ranks[r].collectives) {
      if (c.stream_index < 0) continue;
      const std::optional<Timed> t = timed(profile, c, per_node);
      if (!t) continue;
      const std::vector<int> members = group_members(profile, c);
      if (group_part(members, t->group_size, profile.str(c.op), profile.str(c.pg_desc), layout) != Part::kDp)
        continue;
      ++dp_collectives;
      const LinkFit& was_fit = fits[static_cast<int>(t->link)];
      model::Link before{0, 0};
      if (was_fit.fitted) {
        before = was_fit.fit.link();
      } else {
        const double seconds = static_cast<double>(ranks[r].activities[c.activity].duration()) / 1e9;
        if (!(seconds > 0)) continue;
        before.bandwidth_Bps = t->bytes * model::busbw_factor(t->op, t->group_size) / seconds;
      }
      model::Link after = before;
      if (fit.fitted) {
        after = fit.fit.link();
      } else if (t->link != link) {
        const auto& from = preset[static_cast<int>(t->link)];
        const auto& to = preset[static_cast<int>(link)];
        if (!from || !to || !(from->bandwidth_Bps > 0))
          fail(
              "{}: --dp {} puts the data-parallel group on the {} link, which none of the profile's "
              "collectives "
              "fit and whose GPU is not known: state it with `meshscope annotate PROFILE --hardware NAME`",
              title, new_dp, to_string(link));
        after.bandwidth_Bps = before.bandwidth_Bps * to->bandwidth_Bps / from->bandwidth_Bps;
        after.alpha_s = from->alpha_s > 0 ? before.alpha_s * to->alpha_s / from->alpha_s : to->alpha_s;
        ++from_preset;
      } else {
        ++from_own;
      }
      const double was = model::collective_time(t->op, t->bytes, t->group_size, before);
      const double now = model::collective_time(t->op, t->bytes, new_dp, after);
      if (!(was > 0) || !std::isfinite(now)) continue;
      out.factor[r][c.activity] = now / was;
      ++out.retimed;
    }
  }
  out.notes.push_back(
      fmt::format("dp {} -> {}: each rank's work as measured (the same micro-batches per GPU, so the global "
                  "batch is {:.3g}x); "
                  "the measured ranks stay coupled as they ran",
                  layout.dp, new_dp, static_cast<double>(new_dp) / std::max(1, layout.dp)));
  if (dp_collectives == 0) {
    out.notes.push_back(
        fmt::format("no collective of the profile is data-parallel under tp {}, cp {}, dp {}: "
                    "nothing to re-time",
                    layout.tp, layout.cp, layout.dp));
    return out;
  }
  std::string source;
  if (fit.fitted)
    source =
        fmt::format("the profile's {} collectives' fit (α {:.2f} µs per step, bus bandwidth {:.1f} GB/s)",
                    fit.points, fit.fit.alpha_step_s * 1e6, fit.fit.busbw_Bps / 1e9);
  else if (from_preset > 0)
    source = fmt::format(
        "their own {} link scaled by {}'s {} / {} ratio ({} of them; no fit of the profile's "
        "own {} collectives)",
        to_string(link == LinkClass::kIntraNode ? LinkClass::kInterNode : LinkClass::kIntraNode), hw->name,
        to_string(link),
        to_string(link == LinkClass::kIntraNode ? LinkClass::kInterNode : LinkClass::kIntraNode), from_preset,
        to_string(link));
  if (from_own > 0)
    source += fmt::format("{}each one's own measured bus bandwidth, latency 0 ({} of them: no α-β fit)",
                          source.empty() ? "" : "; ", from_own);
  out.notes.push_back(fmt::format("{} data-parallel collectives re-timed for {} ranks on the {} link from {}",
                                  dp_collectives, new_dp, to_string(link), source));
  return out;
}

}  // namespace meshscope::compare
