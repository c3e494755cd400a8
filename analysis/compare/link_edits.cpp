#include "analysis/compare/link_edits.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/compare/compare.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/measure/correlation.hpp"
#include "analysis/measure/launch_ranges.hpp"
#include "analysis/measure/op_work.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/order_statistics.hpp"
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

namespace {

LinkClass other(LinkClass link) {
  return link == LinkClass::kIntraNode ? LinkClass::kInterNode : LinkClass::kIntraNode;
}

// The collectives of one parallel group of a layout re-timed for a new group (`--dp`, `--tp`): from the α-β
// fit of the profile's own collectives on the new group's link; where there is none, for a collective that
// moves to the other link, its own link (fitted or measured) times the GPU's ratio of the two (its preset's
// efficiencies), which keeps the efficiency the profile reached; for one that stays, its own measured bus
// bandwidth.
class GroupRetimer {
 public:
  GroupRetimer(const Profile& profile, const measure::Analysis& analysis, const model::ParallelConfig& layout,
               const std::optional<model::HardwareSpec>& hw, std::string_view title, LinkRetiming& out)
      : profile_(profile), layout_(layout), hw_(hw), title_(title), out_(out) {
    const auto& ranks = profile.ranks();
    out.factor.resize(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) out.factor[r].assign(ranks[r].activities.size(), 1.0);
    model::HardwareSpec spec = hw ? *hw : model::HardwareSpec{};
    if (!hw) spec.gpus_per_node = 8;
    per_node_ = std::max(1, spec.gpus_per_node);
    const std::vector<LinkPoint> points = collect_link_points(profile, analysis, spec);
    fits_[0] = fit_link(points, LinkClass::kIntraNode);
    fits_[1] = fit_link(points, LinkClass::kInterNode);
    if (hw) {
      const model::Efficiencies eff = model::defaults_for(*hw);
      preset_[0] = model::intra_node_link(eff);
      preset_[1] = model::inter_node_link(eff);
    }
  }

  // Each collective of PART (compare::group_part under the layout) re-timed for NEW_SIZE members STRIDE ranks
  // apart, with BYTES_SCALE × its measured message; WHAT names the group in the note ("data-parallel"), FLAG
  // the edit in a refusal ("--dp 16"). Returns how many there were.
  std::int64_t retime(Part part, int new_size, int stride, double bytes_scale, std::string_view what,
                      std::string_view flag) {
    const LinkClass link = static_cast<std::int64_t>(stride) * new_size <= per_node_ ? LinkClass::kIntraNode
                                                                                     : LinkClass::kInterNode;
    std::int64_t found = 0, from_own = 0, from_preset = 0;
    const auto& ranks = profile_.ranks();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      for (const meshscope::Collective& c : ranks[r].collectives) {
        if (c.stream_index < 0) continue;
        const std::optional<Timed> t = timed(profile_, c, per_node_);
        if (!t) continue;
        const std::vector<int> members = group_members(profile_, c);
        if (group_part(members, t->group_size, profile_.str(c.op), profile_.str(c.pg_desc), layout_) != part)
          continue;
        ++found;
        const double seconds = static_cast<double>(ranks[r].activities[c.activity].duration()) / 1e9;
        const std::optional<model::Link> before = link_before(*t, seconds);
        if (!before) continue;
        model::Link after = *before;
        if (fits_[static_cast<int>(link)].fitted) {
          after = fits_[static_cast<int>(link)].fit.link();
        } else if (t->link != link) {
          after = moved(*before, t->link, link, flag, what);
          ++from_preset;
        } else {
          ++from_own;
        }
        const double was = model::collective_time(t->op, t->bytes, t->group_size, *before);
        const double now = model::collective_time(t->op, t->bytes * bytes_scale, new_size, after);
        if (!(was > 0) || !std::isfinite(now)) continue;
        out_.factor[r][c.activity] = now / was;
        ++out_.retimed;
      }
    }
    if (found > 0) out_.notes.push_back(note(found, what, new_size, link, from_own, from_preset));
    return found;
  }

  // Each collective of PART re-timed in its own group on its own link for BYTES_SCALE × its measured message
  // (the activations of a batch of another size). Returns how many there were.
  std::int64_t rescale(Part part, double bytes_scale, std::string_view what) {
    std::int64_t found = 0;
    const auto& ranks = profile_.ranks();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      for (const meshscope::Collective& c : ranks[r].collectives) {
        if (c.stream_index < 0) continue;
        const std::optional<Timed> t = timed(profile_, c, per_node_);
        if (!t || group_part(group_members(profile_, c), t->group_size, profile_.str(c.op),
                             profile_.str(c.pg_desc), layout_) != part)
          continue;
        ++found;
        const double seconds = static_cast<double>(ranks[r].activities[c.activity].duration()) / 1e9;
        const std::optional<model::Link> link = link_before(*t, seconds);
        if (!link) continue;
        const double was = model::collective_time(t->op, t->bytes, t->group_size, *link);
        const double now = model::collective_time(t->op, t->bytes * bytes_scale, t->group_size, *link);
        if (!(was > 0) || !std::isfinite(now)) continue;
        out_.factor[r][c.activity] *= now / was;
        ++out_.retimed;
      }
    }
    if (found > 0)
      out_.notes.push_back(fmt::format(
          "{} {} collectives re-timed for {:.3g}x their message (the batch's activations) in their own "
          "groups, on their own links",
          found, what, bytes_scale));
    return found;
  }

 private:
  // The link collective T ran on: the profile's fit of its class, else its own measured bus bandwidth.
  std::optional<model::Link> link_before(const Timed& t, double seconds) const {
    const LinkFit& fit = fits_[static_cast<int>(t.link)];
    if (fit.fitted) return fit.fit.link();
    if (!(seconds > 0)) return std::nullopt;
    return model::Link{0, t.bytes * model::busbw_factor(t.op, t.group_size) / seconds};
  }

  model::Link moved(const model::Link& before, LinkClass from_link, LinkClass to_link, std::string_view flag,
                    std::string_view what) const {
    const auto& from = preset_[static_cast<int>(from_link)];
    const auto& to = preset_[static_cast<int>(to_link)];
    if (!from || !to || !(from->bandwidth_Bps > 0))
      fail(
          "{}: {} puts the {} group on the {} link, which none of the profile's collectives fit and whose "
          "GPU "
          "is not known: state it with `meshscope annotate PROFILE --hardware NAME`",
          title_, flag, what, to_string(to_link));
    return {from->alpha_s > 0 ? before.alpha_s * to->alpha_s / from->alpha_s : to->alpha_s,
            before.bandwidth_Bps * to->bandwidth_Bps / from->bandwidth_Bps};
  }

  std::string note(std::int64_t found, std::string_view what, int new_size, LinkClass link,
                   std::int64_t from_own, std::int64_t from_preset) const {
    const LinkFit& fit = fits_[static_cast<int>(link)];
    std::string source;
    if (fit.fitted)
      source =
          fmt::format("the profile's {} collectives' fit (α {:.2f} µs per step, bus bandwidth {:.1f} GB/s)",
                      fit.points, fit.fit.alpha_step_s * 1e6, fit.fit.busbw_Bps / 1e9);
    else if (from_preset > 0)
      source = fmt::format(
          "their own {} link scaled by {}'s {} / {} ratio ({} of them; no fit of the profile's own {} "
          "collectives)",
          to_string(other(link)), hw_->name, to_string(link), to_string(other(link)), from_preset,
          to_string(link));
    if (from_own > 0)
      source += fmt::format("{}each one's own measured bus bandwidth, latency 0 ({} of them: no α-β fit)",
                            source.empty() ? "" : "; ", from_own);
    return fmt::format("{} {} collectives re-timed for {} ranks on the {} link from {}", found, what,
                       new_size, to_string(link), source);
  }

  const Profile& profile_;
  const model::ParallelConfig& layout_;
  const std::optional<model::HardwareSpec>& hw_;
  std::string_view title_;
  LinkRetiming& out_;
  int per_node_ = 8;
  LinkFit fits_[2];
  std::optional<model::Link> preset_[2];
};

}  // namespace

namespace {

// What each rank's compute kernels take of their measured time under a layout edit: TP, the share of a
// tensor-parallel group's work (tp / N) that GEMM and attention kernels keep (with sequence parallelism,
// element-wise and norm kernels too); BATCH, each rank's sequences per step × BATCH, which every compute
// kernel outside the optimizer takes (the activations' work grows with the tokens); OPTIMIZER, the share of
// the parameters a rank updates (tp / N, and dp / M where the optimizer is sharded over data parallelism),
// for kernels launched inside an optimizer range (measure::optimizer_range_name) whatever their kind.
struct KernelShares {
  double tp = 1;
  bool sequence_parallel = false;
  const std::vector<std::vector<std::uint8_t>>* sharded = nullptr;  // LayoutEdit::sharded_kernels
  double batch = 1;
  double optimizer = 1;
};
struct ScaledKernels {
  std::int64_t split = 0, batch = 0, optimizer = 0, gemms_with_overhead = 0;
  std::int64_t split_by_shape = 0;  // of SPLIT: other kernels, by their operators' shapes
};

// A GEMM keeps its fixed per-kernel cost (GEMM_OVERHEAD_NS, the profile's GPU's, 0 when unknown): of its
// measured time t only t - overhead is work that scales, t' = (t - overhead) × SHARE + overhead (the
// roofline of model::gemm_time, fitted to a cuBLASLt size sweep), so a small GEMM gains less than its share.
ScaledKernels scale_kernels(const Profile& profile, const measure::Analysis& analysis,
                            const KernelShares& shares, TimeNs gemm_overhead_ns, LinkRetiming& out) {
  std::unordered_map<StringId, measure::WorkCategory> kinds;  // kernel_work_category per name
  ScaledKernels counts;
  const auto& ranks = profile.ranks();
  // Told apart whenever anything scales, so that the note counts them even where the factors agree.
  const bool optimizer_apart = shares.optimizer != 1 || shares.batch != 1 || shares.tp != 1;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::vector<std::uint8_t> in_optimizer;
    measure::CorrelationMap launches;
    if (optimizer_apart) {
      in_optimizer = measure::calls_inside_ranges(profile, r, measure::optimizer_range_name);
      launches.build(ranks[r].api_calls);
    }
    for (std::uint32_t i = 0; i < ranks[r].activities.size(); ++i) {
      const Activity& a = ranks[r].activities[i];
      if (a.kind != ActivityKind::kKernel || analysis.ranks[r].classes[i] != ActivityClass::kCompute)
        continue;
      if (optimizer_apart) {
        const std::int32_t call = launches.find(a.correlation);
        if (call >= 0 && in_optimizer[static_cast<std::size_t>(call)]) {
          out.factor[r][i] = shares.optimizer;
          ++counts.optimizer;
          continue;
        }
      }
      auto [it, added] = kinds.try_emplace(a.name, measure::WorkCategory::kOther);
      if (added) it->second = measure::kernel_work_category(profile.str(a.name));
      const measure::WorkCategory kind = it->second;
      const bool by_shape = kind != measure::WorkCategory::kGemm &&
                            kind != measure::WorkCategory::kAttention && shares.sharded &&
                            r < shares.sharded->size() && i < (*shares.sharded)[r].size() &&
                            (*shares.sharded)[r][i] != 0;
      const bool sharded =
          kind == measure::WorkCategory::kGemm || kind == measure::WorkCategory::kAttention || by_shape ||
          (shares.sequence_parallel &&
           (kind == measure::WorkCategory::kElementwise || kind == measure::WorkCategory::kNorm));
      if (by_shape && shares.tp != 1) ++counts.split_by_shape;
      const double share = (sharded ? shares.tp : 1.0) * shares.batch;
      if (sharded && shares.tp != 1) ++counts.split;
      if (shares.batch != 1) ++counts.batch;
      if (share == 1) continue;
      const TimeNs t = a.duration();
      if (kind != measure::WorkCategory::kGemm || gemm_overhead_ns <= 0 || t <= 0) {
        out.factor[r][i] = share;
        continue;
      }
      out.factor[r][i] =
          scaled_kernel_time(static_cast<double>(t), share, static_cast<double>(gemm_overhead_ns)) /
          static_cast<double>(t);
      ++counts.gemms_with_overhead;
    }
  }
  return counts;
}

// Whether PART's collectives include reduce-scatters or all-gathers. Tensor parallelism: sequence parallelism
// (Megatron-LM: the exchange is a reduce-scatter and an all-gather instead of an all-reduce, and the norms
// and element-wise work between them are split too). Data parallelism: a sharded optimizer (ZeRO 1-3, FSDP,
// Megatron's distributed optimizer: gradients reduce-scattered, updated weights all-gathered), each rank
// updating 1/dp of the parameters.
bool reduces_in_shards(const Profile& profile, const model::ParallelConfig& layout, Part part) {
  for (const Rank& rank : profile.ranks()) {
    for (const meshscope::Collective& c : rank.collectives) {
      const std::optional<Timed> t = timed(profile, c, 8);
      if (t && (t->op == model::Collective::kReduceScatter || t->op == model::Collective::kAllGather) &&
          group_part(group_members(profile, c), t->group_size, profile.str(c.op), profile.str(c.pg_desc),
                     layout) == part)
        return true;
    }
  }
  return false;
}

// A larger data-parallel group waits for a later last member: with arrival jitter of standard deviation σ
// across the members of the profile's data-parallel collectives (pooled over their complete instances), the
// last of NEW_DP members arrives σ × (E[max of NEW_DP] − E[max of DP]) later than the last of the DP measured
// (expected maxima of normal draws, model::expected_normal_maximum). Each data-parallel collective's transfer
// takes that much longer, so that every member leaves it that much later. A smaller group keeps the measured
// arrivals (the replay cannot take a measured straggler out of its group).
void add_group_jitter(const Profile& profile, const measure::Analysis& analysis,
                      const model::ParallelConfig& layout, int dp, int new_dp, LinkRetiming& out) {
  if (new_dp <= dp) return;
  const measure::CollectiveReport& report = analysis.collectives;
  const auto& ranks = profile.ranks();
  std::vector<const measure::CollectiveInstance*> instances;
  double squares = 0, freedom = 0;
  for (const measure::CollectiveInstance& in : report.instances) {
    if (!in.complete || in.member_count != static_cast<std::uint32_t>(dp)) continue;
    const measure::InstanceMember& first = report.members[in.first_member];
    const meshscope::Collective& c = ranks[first.rank_index].collectives[first.collective];
    const std::optional<Timed> t =
        timed(profile, c, 8);  // its op and group size; the link plays no part here
    if (!t || group_part(group_members(profile, c), t->group_size, profile.str(c.op), profile.str(c.pg_desc),
                         layout) != Part::kDp)
      continue;
    double mean = 0;
    for (std::uint32_t m = 0; m < in.member_count; ++m)
      mean += static_cast<double>(report.members[in.first_member + m].start_ns - in.first_arrival_ns);
    mean /= in.member_count;
    for (std::uint32_t m = 0; m < in.member_count; ++m) {
      const double d =
          static_cast<double>(report.members[in.first_member + m].start_ns - in.first_arrival_ns) - mean;
      squares += d * d;
    }
    freedom += in.member_count - 1;
    instances.push_back(&in);
  }
  if (instances.empty() || !(freedom > 0)) {
    out.notes.push_back(fmt::format(
        "dp {} -> {}: no complete data-parallel collective of {} members to measure the arrival jitter from: "
        "the new members' arrivals are left out",
        dp, new_dp, dp));
    return;
  }
  const double sigma_ns = std::sqrt(squares / freedom);
  const double later_ns =
      sigma_ns * (model::expected_normal_maximum(new_dp) - model::expected_normal_maximum(dp));
  std::int64_t lengthened = 0;
  for (const measure::CollectiveInstance* in : instances) {
    if (!(later_ns > 0)) break;  // the members arrived together
    for (std::uint32_t m = 0; m < in->member_count; ++m) {
      const measure::InstanceMember& member = report.members[in->first_member + m];
      if (member.transfer_ns <= 0) continue;
      const std::uint32_t a = ranks[member.rank_index].collectives[member.collective].activity;
      const double transfer = static_cast<double>(member.transfer_ns);
      out.factor[member.rank_index][a] = (out.factor[member.rank_index][a] * transfer + later_ns) / transfer;
      ++lengthened;
    }
  }
  out.notes.push_back(
      fmt::format("dp {} -> {}: the members of the profile's {} data-parallel collectives arrive with a "
                  "spread of σ {:.1f} µs; "
                  "the last of {} arrives {:.1f} µs later than the last of {} (expected maxima of normal "
                  "draws), added to "
                  "{} of their transfers",
                  dp, new_dp, instances.size(), sigma_ns / 1e3, new_dp, later_ns / 1e3, dp, lengthened));
}

std::string flag_text(const LayoutEdit& edit) {
  std::string out;
  if (edit.tp > 0) out += fmt::format("--tp {}", edit.tp);
  if (edit.dp > 0) out += fmt::format("{}--dp {}", out.empty() ? "" : " ", edit.dp);
  if (edit.keep_global_batch)
    out += fmt::format("{}--keep-global-batch", out.empty() ? "" : " ");
  else if (edit.batch_scale != 1)
    out += fmt::format("{}--batch {:.3g}", out.empty() ? "" : " ", edit.batch_scale);
  return out;
}

// Every compute kernel re-timed for the layout edit (scale_kernels), with the note saying how.
struct ComputeEdit {
  int tp = 1, new_tp = 1;
  bool tp_edit = false;                 // --tp given (even at the measured degree)
  bool optimizer_sharded_anew = false;  // the optimizer sharded over data parallelism, and dp changes
  int micro_batch_split = 1;            // LayoutEdit::micro_batch_split
};

void scale_compute(const Profile& profile, const measure::Analysis& analysis, const KernelShares& shares,
                   const ComputeEdit& edit, const std::optional<model::HardwareSpec>& hw,
                   std::string_view prefix, LinkRetiming& out) {
  const int tp = edit.tp, new_tp = edit.new_tp;
  const TimeNs overhead_ns = hw ? static_cast<TimeNs>(std::llround(hw->gemm_overhead_us * 1e3)) : 0;
  const ScaledKernels scaled = scale_kernels(profile, analysis, shares, overhead_ns, out);
  const std::string gemm_cost =
      overhead_ns > 0
          ? fmt::format("{} GEMMs keep their fixed {:.3g} us per kernel ({}'s), only the rest scales",
                        scaled.gemms_with_overhead, hw->gemm_overhead_us, hw->name)
          : std::string("each GEMM's fixed cost per kernel is left out (the profile names no GPU)");
  std::vector<std::string> parts;
  if (edit.tp_edit)
    parts.push_back(fmt::format(
        "{} GEMM and attention kernels{}{} x {:.3g}, their work split {} ways instead of {}",
        scaled.split - scaled.split_by_shape,
        shares.sequence_parallel ? ", element-wise and norm kernels (sequence parallelism)" : "",
        scaled.split_by_shape > 0
            ? fmt::format(" and {} other kernels whose operators' inputs are sharded (attention scores, the "
                          "MLP's activation, the logits: their recorded shapes)",
                          scaled.split_by_shape)
            : std::string(),
        shares.tp, new_tp, tp));
  if (shares.batch != 1 && edit.micro_batch_split > 1)
    parts.push_back(
        fmt::format("{} compute kernels outside the optimizer x {:.3g} for micro-batches {:.3g} the measured "
                    "one's size, {} of them per measured micro-batch (copies and launches of each run as "
                    "measured)",
                    scaled.batch, shares.batch, shares.batch, edit.micro_batch_split));
  else if (shares.batch != 1)
    parts.push_back(fmt::format(
        "{} compute kernels outside the optimizer x {:.3g} for the batch, each rank's sequences per step "
        "x {:.3g} (the activations' work grows with the tokens; the kernels keep their number: a framework "
        "that ran fewer micro-batches instead would also launch fewer; copies and launches as measured)",
        scaled.batch, shares.batch, shares.batch));
  if (scaled.optimizer > 0)
    parts.push_back(
        fmt::format("{} kernels launched inside the optimizer's ranges x {:.3g} (the parameters "
                    "each rank updates{})",
                    scaled.optimizer, shares.optimizer,
                    edit.optimizer_sharded_anew ? ", the optimizer sharded over data parallelism" : ""));
  else if (shares.batch != 1 || shares.tp != 1)
    parts.push_back(
        "no kernel was launched inside an optimizer range (Optimizer.step#...): the optimizer's kernels, if "
        "any, are scaled as the others");
  if (parts.empty()) return;
  std::string note;
  for (const auto& p : parts) note += (note.empty() ? "" : "; ") + p;
  out.notes.push_back(
      fmt::format("{}{}, at the efficiency each reached ({}); launches and host work as measured", prefix,
                  note, gemm_cost));
}

}  // namespace

double scaled_kernel_time(double t, double share, double fixed) {
  const double kept = std::clamp(fixed, 0.0, std::max(0.0, t));
  return kept + (t - kept) * share;
}

LinkRetiming retime_layout(const Profile& profile, const measure::Analysis& analysis,
                           const model::ParallelConfig& layout, const LayoutEdit& edit,
                           const std::optional<model::HardwareSpec>& hw, std::string_view title,
                           const std::vector<std::vector<std::uint8_t>>* sharded_kernels) {
  const int tp = std::max(1, layout.tp), dp = std::max(1, layout.dp), cp = std::max(1, layout.cp);
  const std::string flag = flag_text(edit);
  // The replay moves what the profile holds: a group it never ran has no collectives to re-time.
  for (const auto& [field, was, now] : {std::tuple{"tp", tp, edit.tp}, std::tuple{"dp", dp, edit.dp}}) {
    const bool added =
        field == std::string_view("tp") ? edit.tensor_parallel_added : edit.data_parallel_added;
    if (now <= 0 || (added && now >= 2)) continue;
    if (was < 2)
      fail(
          "{}: --{} {}: the profile ran {} 1, so it holds no collectives of that group to re-time and the "
          "replay cannot add them: `meshscope compare PROFILE --{} {}` predicts that layout from the model",
          title, field, now, field, field, now);
    if (now < 2)
      fail(
          "--{} {}: the replay keeps the measured ranks coupled, so it cannot run them apart: give 2 or more",
          field, now);
  }
  if (!(edit.batch_scale > 0) || !std::isfinite(edit.batch_scale))
    fail("{}: {}: each rank's batch must be scaled by a positive number", title, flag);
  const int new_tp = edit.tp > 0 ? edit.tp : tp, new_dp = edit.dp > 0 ? edit.dp : dp;
  LinkRetiming out;
  GroupRetimer retimer(profile, analysis, layout, hw, title, out);
  const double share = static_cast<double>(tp) / new_tp;  // of each rank's sharded work
  const bool tp_edit = new_tp != tp || edit.tp > 0;
  const double batch = edit.batch_scale;
  const bool sharded_optimizer = reduces_in_shards(profile, layout, Part::kDp);
  KernelShares shares;
  shares.tp = share;
  shares.batch = batch;
  shares.optimizer = share * (sharded_optimizer ? static_cast<double>(dp) / new_dp : 1.0);
  if (tp_edit) shares.sequence_parallel = reduces_in_shards(profile, layout, Part::kTp);
  if (tp_edit) shares.sharded = sharded_kernels;
  const int others = std::max(1, layout.pp) * cp;
  const std::string prefix = tp_edit ? fmt::format(
                                           "tp {} -> {}: pp as measured ({} GPUs per replica instead "
                                           "of {}); ",
                                           tp, new_tp, new_tp * others, tp * others)
                                     : std::string();
  if (tp_edit || batch != 1 || shares.optimizer != 1)
    scale_compute(profile, analysis, shares,
                  ComputeEdit{.tp = tp,
                              .new_tp = new_tp,
                              .tp_edit = tp_edit,
                              .optimizer_sharded_anew = sharded_optimizer && new_dp != dp,
                              .micro_batch_split = edit.micro_batch_split},
                  hw, prefix, out);
  if (tp_edit && edit.tensor_parallel_added) {
    // Nothing of the profile's is tensor-parallel: the caller adds the group's collectives.
  } else if (tp_edit) {
    if (retimer.retime(Part::kTp, new_tp, 1, batch, "tensor-parallel", flag) == 0)
      out.notes.push_back(fmt::format("no collective of the profile is tensor-parallel under tp {}", tp));
  } else if (batch != 1) {
    retimer.rescale(Part::kTp, batch, "tensor-parallel");
  }
  if (batch != 1) {
    retimer.rescale(Part::kCp, batch, "context-parallel");
    retimer.rescale(Part::kEp, batch, "expert-parallel");
    retimer.rescale(Part::kPp, batch, "pipeline");
  }
  // Sequences per step: a micro-batch's scale × the micro-batches each becomes.
  const double per_step = batch * edit.micro_batch_split;
  if (edit.dp > 0 && !edit.data_parallel_added)
    out.notes.push_back(fmt::format(
        "dp {} -> {}: {}, so the global batch {:.3g}x; the measured ranks stay coupled as they ran", dp,
        new_dp,
        per_step == 1 ? std::string("each rank's batch as measured, the same micro-batches per GPU")
                      : fmt::format("each rank's batch x {:.3g}", per_step),
        static_cast<double>(new_dp) / dp * per_step));
  else if (per_step != 1)
    out.notes.push_back(fmt::format("each rank's batch x {:.3g}, so the global batch too", per_step));
  if (edit.data_parallel_added) {
    // Nothing of the profile's is data-parallel: the caller adds the gradients' collectives.
  } else if (new_dp != dp || new_tp != tp || edit.dp > 0) {
    const std::string what = new_tp == tp ? std::string("data-parallel")
                                          : fmt::format("data-parallel (gradients of a 1/{} shard)", new_tp);
    if (retimer.retime(Part::kDp, new_dp, new_tp * cp, share, what, flag) == 0 && edit.dp > 0)
      out.notes.push_back(fmt::format(
          "no collective of the profile is data-parallel under tp {}, cp {}, dp {}: nothing to re-time", tp,
          cp, dp));
    else if (edit.dp > 0)
      add_group_jitter(profile, analysis, layout, dp, new_dp, out);
  }
  return out;
}

LinkRetiming retime_data_parallel(const Profile& profile, const measure::Analysis& analysis,
                                  const model::ParallelConfig& layout, int new_dp,
                                  const std::optional<model::HardwareSpec>& hw, std::string_view title) {
  return retime_layout(profile, analysis, layout, LayoutEdit{.tp = 0, .dp = new_dp}, hw, title);
}

LinkRetiming retime_tensor_parallel(const Profile& profile, const measure::Analysis& analysis,
                                    const model::ParallelConfig& layout, int new_tp,
                                    const std::optional<model::HardwareSpec>& hw, std::string_view title) {
  return retime_layout(profile, analysis, layout, LayoutEdit{.tp = new_tp, .dp = 0}, hw, title);
}

}  // namespace meshscope::compare
