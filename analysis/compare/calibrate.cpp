#include "analysis/compare/calibrate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "profiler/vocabulary.hpp"

namespace meshscope::compare {
namespace {

// Ring steps of OP among N ranks, as model::collective_time counts them (Thakur et al. 2005 §4: all-reduce
// 2(n−1), reduce-scatter / all-gather / all-to-all / broadcast n−1, send/recv 1).
double ring_steps(model::Collective op, int n) {
  switch (op) {
    case model::Collective::kAllReduce:
      return 2.0 * (n - 1);
    case model::Collective::kReduceScatter:
    case model::Collective::kAllGather:
    case model::Collective::kAllToAll:
    case model::Collective::kBroadcast:
      return n - 1.0;
    case model::Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

// The model's time of one point with link (ALPHA per step, bandwidth B): model::collective_time's ring form.
double model_time(const LinkPoint& p, double alpha_step_s, double busbw_Bps) {
  return model::collective_time(p.op, p.bytes, p.group_size, model::Link{alpha_step_s, busbw_Bps});
}

LinkFit fit_points(std::span<const LinkPoint> points, LinkClass link) {
  LinkFit out;
  out.link = link;
  // Pooled form of t = steps × α + factor × S / B (model::collective_time, nccl-tests factor): dividing by
  // the steps gives t/steps = α + (factor × S / steps) / B, one straight line for every op and group size,
  // which model::fit_alpha_beta fits as a send/recv (one step, factor 1).
  std::vector<model::SizeTime> pooled;
  std::set<double> sizes;
  std::vector<const LinkPoint*> used;
  for (const LinkPoint& p : points) {
    if (!(p.bytes > 0) || !(p.seconds > 0) || p.group_size < 1) continue;
    if (p.group_size < 2 && p.op != model::Collective::kSendRecv) continue;
    const double steps = ring_steps(p.op, p.group_size);
    const double factor = model::busbw_factor(p.op, std::max(2, p.group_size));
    pooled.push_back({p.bytes * factor / steps, p.seconds / steps});
    sizes.insert(pooled.back().bytes);
    used.push_back(&p);
    out.transfer_points += p.transfer ? 1 : 0;
  }
  out.points = static_cast<int>(pooled.size());
  out.sizes = static_cast<int>(sizes.size());
  if (out.points < 2) {
    out.reason = out.points == 0 ? "no collectives with a message size and a duration"
                                 : "only one collective with a message size";
    return out;
  }
  if (out.sizes < 2) {
    out.reason =
        fmt::format("{} collectives, all of one message size: α and β cannot be told apart", out.points);
    return out;
  }
  try {
    out.fit = model::fit_alpha_beta(pooled, model::Collective::kSendRecv, 2);
  } catch (const model::InvalidInput& e) {
    out.reason = e.what();
    return out;
  }
  out.fitted = true;
  // Coefficient of determination R² = 1 − SS_res / SS_tot of the measured times (Draper & Smith 1998 §1.4).
  double mean = 0;
  for (const LinkPoint* p : used) mean += p->seconds;
  mean /= static_cast<double>(used.size());
  double ss_res = 0, ss_tot = 0, err = 0;
  for (const LinkPoint* p : used) {
    const double predicted = model_time(*p, out.fit.alpha_step_s, out.fit.busbw_Bps);
    ss_res += (p->seconds - predicted) * (p->seconds - predicted);
    ss_tot += (p->seconds - mean) * (p->seconds - mean);
    err += std::abs(predicted / p->seconds - 1.0);
  }
  out.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  out.mean_error = err / static_cast<double>(used.size());
  return out;
}

TimeNs median(std::vector<TimeNs>& values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A line that explains less than half of the variance of the measured times is not applied.
constexpr double kMinR2 = 0.5;
// A fitted bandwidth up to 5 % above the nominal link rate is measurement noise (nccl-tests reports busbw
// to a few percent, and NVLS all-reduce legitimately exceeds the per-direction rate); beyond that the note
// says the groups or sizes are probably not what the model assumes.
constexpr double kNominalTolerance = 1.05;

std::string link_text(const LinkFit& f) {
  return fmt::format("α {:.2f} µs per step, busbw {:.1f} GB/s", f.fit.alpha_step_s * 1e6,
                     f.fit.busbw_Bps / 1e9);
}

}  // namespace

const char* to_string(LinkClass link) {
  return link == LinkClass::kIntraNode ? "intra_node" : "inter_node";
}

bool collective_of(std::string_view op, model::Collective& out) {
  const std::string s = vocabulary::normalise_collective_op(op);
  if (s.find("allreduce") != std::string::npos) {
    out = model::Collective::kAllReduce;
  } else if (s.find("reducescatter") != std::string::npos) {
    out = model::Collective::kReduceScatter;
  } else if (s.find("allgather") != std::string::npos) {
    out = model::Collective::kAllGather;
  } else if (s.find("alltoall") != std::string::npos) {
    out = model::Collective::kAllToAll;
  } else if (s.find("broadcast") != std::string::npos) {
    out = model::Collective::kBroadcast;
  } else if (vocabulary::is_point_to_point(s)) {
    out = model::Collective::kSendRecv;
  } else {
    return false;
  }
  return true;
}

std::vector<int> group_members(const Profile& profile, const meshscope::Collective& c) {
  std::vector<int> out;
  const std::string& text = profile.str(c.pg_ranks);
  std::size_t i = 0;
  while (i < text.size()) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      long value = 0;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && value < (1L << 30))
        value = value * 10 + (text[i++] - '0');
      out.push_back(static_cast<int>(value));
    } else {
      ++i;
    }
  }
  return out;
}

LinkClass link_class_of(const Profile& profile, std::span<const int> members, int group_size,
                        int gpus_per_node) {
  const int per_node = std::max(1, gpus_per_node);
  if (members.empty()) return group_size > per_node ? LinkClass::kInterNode : LinkClass::kIntraNode;
  std::set<std::string> hosts;
  bool all_hosts = true;
  for (int rank : members) {
    const Rank* r = profile.find_rank(rank);
    if (!r || r->hostname.empty()) {
      all_hosts = false;
      break;
    }
    hosts.insert(r->hostname);
  }
  if (all_hosts) return hosts.size() > 1 ? LinkClass::kInterNode : LinkClass::kIntraNode;
  std::set<int> nodes;
  for (int rank : members) nodes.insert(rank / per_node);
  return nodes.size() > 1 ? LinkClass::kInterNode : LinkClass::kIntraNode;
}

std::vector<LinkPoint> collect_link_points(const Profile& profile, const measure::Analysis& analysis,
                                           const model::HardwareSpec& hw) {
  const auto& ranks = profile.ranks();
  std::vector<LinkPoint> points;
  auto make_point = [&](const meshscope::Collective& c, LinkPoint& p) {
    if (!collective_of(profile.str(c.op), p.op)) return false;
    const std::vector<int> members = group_members(profile, c);
    std::int64_t n =
        c.group_size != kNull && c.group_size > 0 ? c.group_size : static_cast<std::int64_t>(members.size());
    if (p.op == model::Collective::kSendRecv) n = 2;
    if (n < 2) return false;
    p.group_size = static_cast<int>(n);
    p.bytes = static_cast<double>(message_bytes(profile, c));
    if (!(p.bytes > 0)) return false;
    p.link = link_class_of(profile, members, p.group_size, hw.gpus_per_node);
    return true;
  };
  // Instances matched on every peer: the transfer time, median over the members.
  std::vector<std::vector<bool>> used(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) used[i].assign(ranks[i].collectives.size(), false);
  const auto& report = analysis.collectives;
  for (const auto& inst : report.instances) {
    if (!inst.complete || inst.member_count < 2) continue;
    std::set<std::size_t> distinct;
    std::vector<TimeNs> transfers;
    for (std::uint32_t k = 0; k < inst.member_count; ++k) {
      const auto& m = report.members[inst.first_member + k];
      distinct.insert(m.rank_index);
      transfers.push_back(m.transfer_ns);
    }
    if (distinct.size() < 2) continue;
    const auto& first = report.members[inst.first_member];
    const meshscope::Collective& c = ranks[first.rank_index].collectives[first.collective];
    LinkPoint p;
    if (make_point(c, p)) {
      p.seconds = static_cast<double>(median(transfers)) / 1e9;
      p.transfer = true;
      if (p.seconds > 0) points.push_back(p);
    }
    for (std::uint32_t k = 0; k < inst.member_count; ++k) {
      const auto& m = report.members[inst.first_member + k];
      used[m.rank_index][m.collective] = true;
    }
  }
  // Everything else (peers missing from the profile, point-to-point, no communicator): the whole duration,
  // which includes waiting for peers; of repeats of one message (op, group, size) the shortest is kept, the
  // one with the least waiting in it.
  std::map<std::tuple<int, int, int, double>, LinkPoint> shortest;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    for (std::size_t ci = 0; ci < ranks[ri].collectives.size(); ++ci) {
      if (used[ri][ci]) continue;
      const meshscope::Collective& c = ranks[ri].collectives[ci];
      LinkPoint p;
      if (!make_point(c, p)) continue;
      p.seconds = static_cast<double>(c.end_ns - c.start_ns) / 1e9;
      if (!(p.seconds > 0)) continue;
      auto [it, added] =
          shortest.try_emplace({static_cast<int>(p.op), p.group_size, static_cast<int>(p.link), p.bytes}, p);
      if (!added && p.seconds < it->second.seconds) it->second = p;
    }
  }
  for (const auto& [key, p] : shortest) points.push_back(p);
  return points;
}

LinkFit fit_link(std::span<const LinkPoint> points, LinkClass link) {
  std::vector<LinkPoint> mine;
  for (const LinkPoint& p : points) {
    if (p.link == link) mine.push_back(p);
  }
  return fit_points(mine, link);
}

KernelCompute fit_kernel_compute(const measure::ProfileWork& work, double peak_flops, double peak_fp8,
                                 double sustained_fraction) {
  KernelCompute out;
  if (!work.shapes_recorded) {
    out.reason = measure::kNoShapesNote;
    return out;
  }
  if (!(peak_flops > 0)) {
    out.reason = "no peak for the hardware";
    return out;
  }
  static constexpr double kBounds[] = {0, 1e8, 1e9, 1e10, 1e11, 1e300};
  static constexpr const char* kNames[] = {"<1e8", "1e8-1e9", "1e9-1e10", "1e10-1e11", ">=1e11"};
  std::vector<std::vector<model::FlopsTime>> per_class(5);
  std::vector<model::FlopsTime> all;
  for (const auto& op : work.ops) {
    if (op.kernel_ns <= 0 || !(op.flops > 0)) continue;
    // FP32 work runs against another ceiling than the 16-bit and FP8 GEMMs the model predicts: it tells
    // nothing of their efficiency.
    if (op.precision == measure::WorkPrecision::kFP32) continue;
    const double seconds = static_cast<double>(op.kernel_ns) / 1e9;
    const double peak = op.fp8 && peak_fp8 > 0 ? peak_fp8 : peak_flops;
    if (op.flops / seconds > peak) continue;  // above the ceiling: left out as the roofline does
    if (op.category == measure::WorkCategory::kAttention) {
      out.attention_flops += op.flops;
      out.attention_seconds += seconds;
      continue;
    }
    if (op.category != measure::WorkCategory::kGemm) continue;
    // FP8 GEMMs count at the BF16 peak's scale: efficiency against their own peak, as the model applies it.
    const double scaled = op.flops * (peak_flops / peak);
    int c = 0;
    while (c < 4 && op.flops >= kBounds[c + 1]) ++c;
    per_class[c].push_back({scaled, seconds});
    all.push_back({scaled, seconds});
  }
  if (out.attention_seconds > 0) out.attention_flops_per_s = out.attention_flops / out.attention_seconds;
  for (int c = 0; c < 5; ++c) {
    if (per_class[c].empty()) continue;
    GemmClass g;
    g.name = kNames[c];
    g.min_flops = kBounds[c];
    g.max_flops = kBounds[c + 1];
    g.ops = static_cast<std::int64_t>(per_class[c].size());
    for (const auto& k : per_class[c]) g.flops += k.flops, g.seconds += k.seconds;
    g.efficiency = model::fit_compute(per_class[c], peak_flops).efficiency;
    out.classes.push_back(g);
  }
  if (all.empty()) {
    out.reason = "no GEMM operator with recorded shapes launched a kernel";
    return out;
  }
  for (const auto& k : all) out.gemm_flops += k.flops, out.gemm_seconds += k.seconds;
  out.gemm_efficiency = model::fit_compute(all, peak_flops).efficiency;
  out.applied_efficiency = std::min(1.0, out.gemm_efficiency / std::max(1e-9, sustained_fraction));
  out.fitted = true;
  return out;
}

std::vector<double> compute_seconds_per_step(const measure::Analysis& analysis) {
  std::vector<double> out;
  for (const auto& rr : analysis.ranks) {
    for (const auto& s : rr.steps) {
      if (s.gpu.activities > 0 && s.gpu.compute_ns > 0)
        out.push_back(static_cast<double>(s.gpu.compute_ns) / 1e9);
    }
  }
  return out;
}

// Applies the intra- and inter-node link fits that hold (R² at least kMinR2) over DEFAULTS' links, and says
// for each what was fitted, applied or kept.
void apply_link_fits(ProfileCalibration& out, const model::HardwareSpec& hw,
                     const model::Efficiencies& defaults) {
  for (LinkFit* f : {&out.intra, &out.inter}) {
    const bool intra = f->link == LinkClass::kIntraNode;
    const double alpha = intra ? defaults.intra_node_alpha_s : defaults.inter_node_alpha_s;
    const double bw = intra ? defaults.intra_node_Bps : defaults.inter_node_Bps;
    if (f->fitted && f->r2 < kMinR2) {
      out.notes.push_back(fmt::format(
          "{}: fitted {} from {} points, but not applied: R² {:.3f} < {} (the durations do not follow a "
          "straight line in message size: waits, contention or overlap); keeps the default α {:.2f} µs per "
          "step, {:.1f} GB/s",
          to_string(f->link), link_text(*f), f->points, f->r2, kMinR2, alpha * 1e6, bw / 1e9));
    } else if (f->fitted) {
      f->applied = true;
      (intra ? out.calibration.intra_node : out.calibration.inter_node) = f->fit;
      out.notes.push_back(fmt::format(
          "{}: fitted {} from {} collectives of {} sizes ({} with the wait for peers taken out); R² {:.3f}, "
          "mean error {:.1f} % (default was α {:.2f} µs, {:.1f} GB/s)",
          to_string(f->link), link_text(*f), f->points, f->sizes, f->transfer_points, f->r2,
          100 * f->mean_error, alpha * 1e6, bw / 1e9));
      if (f->transfer_points < f->points) {
        out.notes.push_back(fmt::format(
            "{}: {} of the {} points are whole durations that include waiting for peers not in the profile "
            "(or point-to-point): the fitted bandwidth is a lower bound",
            to_string(f->link), f->points - f->transfer_points, f->points));
      }
      const double nominal = (intra ? hw.intra_node_gbps : hw.inter_node_gbps) * 1e9;
      if (nominal > 0 && f->fit.busbw_Bps > nominal * kNominalTolerance) {
        out.notes.push_back(fmt::format(
            "{}: the fitted {:.1f} GB/s exceeds {}'s nominal {:.1f} GB/s: the groups may not be on the link "
            "class assumed (check --gpus-per-node) or the message sizes are off",
            to_string(f->link), f->fit.busbw_Bps / 1e9, hw.name, nominal / 1e9));
      }
    } else {
      out.notes.push_back(
          fmt::format("{}: not fitted ({}); keeps the default α {:.2f} µs per step, {:.1f} GB/s",
                      to_string(f->link), f->reason, alpha * 1e6, bw / 1e9));
    }
  }
}

// The GEMM efficiency that makes the model's compute for MODEL on HW with CONFIG equal the measured compute
// per rank-step of ANALYSIS, with a note of what was fitted or why not.
void fit_model_compute(ProfileCalibration& out, const measure::Analysis& analysis,
                       const model::ModelSpec& model, const model::HardwareSpec& hw,
                       const model::ParallelConfig& config, const model::Efficiencies& defaults) {
  ComputeCalibration& cc = out.compute;
  const bool fp8 = config.precision == model::Precision::kFP8 && hw.peak_tflops_fp8 > 0;
  const double peak = (fp8 ? hw.peak_tflops_fp8 : hw.peak_tflops_bf16) * 1e12;
  const double e0 = fp8 ? defaults.gemm_fp8 : defaults.gemm_bf16;
  cc.default_gemm_efficiency = e0;
  const std::vector<double> measured = compute_seconds_per_step(analysis);
  cc.samples = static_cast<int>(measured.size());
  if (measured.empty()) {
    cc.reason = "no steps with compute in the profile (ProfilerStep or NVTX step ranges are needed)";
  } else {
    double sum = 0;
    for (double s : measured) sum += s;
    cc.measured_compute_s = sum / static_cast<double>(measured.size());
    const model::Prediction p0 = model::predict(model, hw, config, defaults);
    cc.flops_per_gpu_step = p0.hardware_flops / config.gpus;
    std::vector<model::FlopsTime> samples;
    for (double s : measured) samples.push_back({cc.flops_per_gpu_step, s});
    cc.effective_efficiency = model::fit_compute(samples, peak).efficiency;
    // The model's compute is T(e) = A / e + B: the GEMMs at efficiency e plus the attention core,
    // element-wise kernels and per-kernel overheads (predict.cpp layer_forward). Two predictions give A and
    // B; then e* = A / (T_measured − B) makes the model's compute + recompute + optimizer equal the measured
    // compute.
    model::Efficiencies half = defaults;
    (fp8 ? half.gemm_fp8 : half.gemm_bf16) = e0 / 2;
    const model::Prediction p1 = model::predict(model, hw, config, half);
    // The optimizer is in the sum: its kernels are compute kernels in the measurement (compare.hpp mapping).
    const double t0 = p0.time.compute + p0.time.recompute + p0.time.optimizer;
    const double t1 = p1.time.compute + p1.time.recompute + p1.time.optimizer;
    const double a = e0 * (t1 - t0);
    const double b = t0 - (t1 - t0);
    if (!(cc.measured_compute_s > b)) {
      cc.reason = fmt::format(
          "the model's non-GEMM compute ({:.4g} s: attention, element-wise, optimizer, kernel overheads) "
          "exceeds the measured compute ({:.4g} s per step); check that MODEL and CONFIG describe the "
          "profiled job",
          b, cc.measured_compute_s);
    } else {
      const double e = a / (cc.measured_compute_s - b);
      if (!(e > 0) || e > 1) {
        cc.reason = fmt::format(
            "matching the measured compute ({:.4g} s per step) would need a GEMM efficiency of {:.0f} % of "
            "peak: the profiled steps do less work than MODEL and CONFIG describe (check --global-batch, "
            "--seq, the model shape)",
            cc.measured_compute_s, 100 * e);
      } else {
        cc.gemm_efficiency = e;
        cc.fitted = true;
        out.calibration.gemm_efficiency = e;
      }
    }
  }
  if (cc.fitted) {
    out.notes.push_back(
        fmt::format("compute: {:.4g} TFLOP per GPU and step (the model's, recompute counted) in {:.4g} s "
                    "measured compute (mean of {} rank-steps) = {:.1f} % of peak effective; GEMM efficiency "
                    "{:.1f} % (default {:.1f} %) makes the predicted compute match",
                    cc.flops_per_gpu_step / 1e12, cc.measured_compute_s, cc.samples,
                    100 * cc.effective_efficiency, 100 * cc.gemm_efficiency, 100 * e0));
    out.notes.push_back(
        "compute: the calibrated prediction's compute row equals the measured compute by construction; only "
        "the other rows test the model");
  } else {
    out.notes.push_back(fmt::format("compute: not fitted ({}); keeps the default GEMM efficiency {:.1f} %",
                                    cc.reason, 100 * e0));
  }
}

// The kernels' own FLOPs, when the profile was recorded with shapes (WORK): independent of the model and the
// layout, so they replace the GEMM efficiency fitted from them.
void apply_kernel_compute(ProfileCalibration& out, const measure::ProfileWork& work,
                          const model::HardwareSpec& hw, const model::Efficiencies& defaults) {
  out.kernels = fit_kernel_compute(work, hw.peak_tflops_bf16 * 1e12, hw.peak_tflops_fp8 * 1e12,
                                   defaults.sustained_fraction);
  const KernelCompute& kc = out.kernels;
  if (kc.fitted) {
    out.calibration.gemm_efficiency = kc.applied_efficiency;
    out.notes.push_back(fmt::format(
        "compute: the profile's GEMM kernels ran {:.4g} TFLOP (from their operators' shapes) in {:.4g} s = "
        "{:.1f} % of {}'s peak; applied as GEMM efficiency {:.1f} % (÷ sustained fraction {:.3f}) instead of "
        "the model-FLOPs fit",
        kc.gemm_flops / 1e12, kc.gemm_seconds, 100 * kc.gemm_efficiency, hw.name, 100 * kc.applied_efficiency,
        defaults.sustained_fraction));
    if (kc.attention_flops_per_s > 0) {
      out.calibration.attention_flops_per_s =
          kc.attention_flops_per_s / std::max(1e-9, defaults.sustained_fraction);
      out.notes.push_back(
          fmt::format("compute: the attention kernels ran at {:.1f} TFLOP/s, applied as the attention rate",
                      kc.attention_flops_per_s / 1e12));
    }
  } else {
    out.notes.push_back(
        fmt::format("compute FLOPs come from MODEL and CONFIG, not from the kernels ({})", kc.reason));
  }
}

ProfileCalibration calibrate(const Profile& profile, const measure::Analysis& analysis,
                             const model::ModelSpec& model, const model::HardwareSpec& hw,
                             const model::ParallelConfig& config, const model::Efficiencies& eff,
                             const measure::ProfileWork& work) {
  ProfileCalibration out;
  out.points = collect_link_points(profile, analysis, hw);
  out.intra = fit_link(out.points, LinkClass::kIntraNode);
  out.inter = fit_link(out.points, LinkClass::kInterNode);

  // Per (op, group size, class) fits, for display.
  std::map<std::tuple<int, int, int>, std::vector<LinkPoint>> by_group;
  for (const LinkPoint& p : out.points)
    by_group[{static_cast<int>(p.op), p.group_size, static_cast<int>(p.link)}].push_back(p);
  for (const auto& [key, pts] : by_group) {
    GroupFit g;
    g.op = static_cast<model::Collective>(std::get<0>(key));
    g.group_size = std::get<1>(key);
    g.link = static_cast<LinkClass>(std::get<2>(key));
    g.fit = fit_points(pts, g.link);
    out.groups.push_back(std::move(g));
  }

  const model::Efficiencies defaults = eff;
  apply_link_fits(out, hw, defaults);
  fit_model_compute(out, analysis, model, hw, config, defaults);
  apply_kernel_compute(out, work, hw, defaults);
  out.efficiencies = model::apply_calibration(defaults, out.calibration, config.precision);
  return out;
}

}  // namespace meshscope::compare
