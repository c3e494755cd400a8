#include "analysis/compare/hardware_edit.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "analysis/compare/calibrate.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/measure/op_work.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {
namespace {

// The least time a kernel of FLOPS and BYTES at PRECISION takes on HW (its roofline bound), 0 when unknown.
// An FP32 kernel off the tensor cores (TF32 false) is bound by the FP32 units' peak.
double bound_s(double flops, double bytes, measure::WorkPrecision precision, bool tf32,
               const model::HardwareSpec& hw) {
  const measure::WorkCeilings ceilings = ceilings_of(hw);
  const double peak = precision == measure::WorkPrecision::kFP32 && !tf32 && hw.peak_tflops_fp32 > 0
                          ? hw.peak_tflops_fp32 * 1e12
                          : measure::peak_for(precision, ceilings);
  const double compute = flops > 0 && peak > 0 ? flops / peak : 0;
  const double memory = bytes > 0 && hw.hbm_tbps > 0 ? bytes / (hw.hbm_tbps * 1e12) : 0;
  return std::max(compute, memory);
}

double ratio(double source, double target) {
  return source > 0 && target > 0 ? source / target : 1.0;
}

// Whether a kernel of an FP32 operator runs on TARGET's TF32 tensor cores: as it ran, where SOURCE has them
// too; from a GPU without them (Volta, AMD's), as PyTorch's defaults run it on an NVIDIA GPU that has them
// (PyTorch docs, "TensorFloat-32 (TF32) on Ampere (and later) devices": torch.backends.cudnn.allow_tf32
// defaults to True, torch.backends.cuda.matmul.allow_tf32 to False): convolutions in TF32, matrix products on
// the FP32 units.
bool tf32_on_target(std::string_view kernel, bool ran_tf32, const model::HardwareSpec& source,
                    const model::HardwareSpec& target) {
  const auto has_tf32 = [](const model::HardwareSpec& hw) {
    return hw.peak_tflops_tf32 > 0 && hw.family.rfind("cdna", 0) != 0;
  };
  if (has_tf32(source) || !has_tf32(target)) return ran_tf32 && target.peak_tflops_tf32 > 0;
  return measure::kernel_work_category(kernel) == measure::WorkCategory::kConv;
}

}  // namespace

bool tf32_kernel(std::string_view kernel_name) {
  const std::string name = vocabulary::lower(kernel_name);
  for (const std::string_view mark : {"tf32", "xf32", "1688gemm", "16816gemm"})
    if (name.find(mark) != std::string::npos) return true;
  return false;
}

HardwareRetiming retime_hardware(const Profile& profile, const measure::Analysis& analysis,
                                 const measure::ProfileWork& work, const model::HardwareSpec& source,
                                 const model::HardwareSpec& target) {
  HardwareRetiming out;
  const auto& ranks = profile.ranks();
  out.factor.resize(ranks.size());
  std::vector<std::vector<std::uint8_t>> done(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    out.factor[r].assign(ranks[r].activities.size(), 1.0);
    done[r].assign(ranks[r].activities.size(), 0);
  }
  // Kernels with work: each its own factor, summed by kind (time-weighted) for the kernels without.
  constexpr std::size_t kKinds = measure::kWorkCategoryCount + 1;
  std::array<double, kKinds> weighted{}, seconds{};
  for (const measure::KernelShare& k : work.kernels) {
    if (k.rank_index >= ranks.size() || k.activity >= ranks[k.rank_index].activities.size()) continue;
    const measure::CountedOp& op = work.ops[k.op];
    const std::string_view kernel = profile.str(ranks[k.rank_index].activities[k.activity].name);
    const bool tf32 = tf32_kernel(kernel);
    const double before = bound_s(k.flops, k.bytes, op.precision, tf32, source);
    const double after =
        bound_s(k.flops, k.bytes, op.precision, tf32_on_target(kernel, tf32, source, target), target);
    if (!(before > 0) || !(after > 0)) continue;
    const double f = after / before;
    out.factor[k.rank_index][k.activity] = f;
    done[k.rank_index][k.activity] = 1;
    ++out.from_work;
    const double t = static_cast<double>(ranks[k.rank_index].activities[k.activity].duration()) / 1e9;
    const auto kind = static_cast<std::size_t>(
        measure::kernel_work_category(profile.str(ranks[k.rank_index].activities[k.activity].name)));
    for (const std::size_t slot : {kind, std::size_t{0}}) {
      weighted[slot] += t * f;
      seconds[slot] += t;
    }
  }
  const auto kind_factor = [&](std::size_t kind) {
    if (seconds[kind] > 0) return weighted[kind] / seconds[kind];
    return seconds[0] > 0 ? weighted[0] / seconds[0]
                          : ratio(source.peak_tflops_bf16, target.peak_tflops_bf16);
  };
  const double hbm = ratio(source.hbm_tbps, target.hbm_tbps);
  const double intra = ratio(source.intra_node_gbps, target.intra_node_gbps);
  const double inter = ratio(source.inter_node_gbps, target.inter_node_gbps);
  // A collective whose group spans nodes (its members' hosts, else the source's GPUs per node) takes the
  // ratio of the networks, the others (and communication kernels no collective record describes) the scale-up
  // links'.
  std::int64_t across_nodes = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const meshscope::Collective& c : ranks[r].collectives) {
      if (c.stream_index < 0 || c.activity >= ranks[r].activities.size()) continue;
      const std::vector<int> members = group_members(profile, c);
      const int size = c.group_size != kNull && c.group_size > 0 ? static_cast<int>(c.group_size)
                                                                 : static_cast<int>(members.size());
      if (link_class_of(profile, members, size, source.gpus_per_node) != LinkClass::kInterNode) continue;
      out.factor[r][c.activity] = inter;
      done[r][c.activity] = 1;
      ++across_nodes;
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    for (std::uint32_t i = 0; i < rank.activities.size(); ++i) {
      if (done[r][i]) continue;
      const Activity& a = rank.activities[i];
      const ActivityClass cls = analysis.ranks[r].classes[i];
      if (cls == ActivityClass::kComm) {
        out.factor[r][i] = intra;
      } else if (a.kind == ActivityKind::kMemset ||
                 (a.kind == ActivityKind::kMemcpy && profile.str(a.name).find("DtoD") != std::string::npos)) {
        out.factor[r][i] = hbm;
      } else if (a.kind == ActivityKind::kKernel && cls == ActivityClass::kCompute) {
        out.factor[r][i] =
            kind_factor(static_cast<std::size_t>(measure::kernel_work_category(profile.str(a.name))));
        ++out.from_kind;
      }
    }
  }
  out.notes.push_back(
      fmt::format("{} → {}: {} kernels re-timed from their operators' FLOPs and bytes against "
                  "both rooflines, {} without work by the factor of their kind",
                  source.name, target.name, out.from_work, out.from_kind));
  if (out.from_work == 0 && out.from_kind > 0)
    out.notes.push_back(
        fmt::format("no kernel has work (record with record_shapes=True): compute kernels × "
                    "{:.3f}, the ratio of the BF16 dense peaks",
                    ratio(source.peak_tflops_bf16, target.peak_tflops_bf16)));
  for (std::size_t kind = 1; kind < kKinds; ++kind) {
    if (seconds[kind] > 0)
      out.notes.push_back(fmt::format("{} kernels × {:.3f} (time-weighted over those with work)",
                                      measure::to_string(static_cast<measure::WorkCategory>(kind)),
                                      weighted[kind] / seconds[kind]));
  }
  out.notes.push_back(fmt::format(
      "device copies and memsets × {:.3f} (HBM {:.2f} → {:.2f} TB/s); "
      "communication × {:.3f} (links {:.0f} → {:.0f} GB/s); host copies unchanged",
      hbm, source.hbm_tbps, target.hbm_tbps, intra, source.intra_node_gbps, target.intra_node_gbps));
  if (across_nodes > 0)
    out.notes.push_back(
        fmt::format("{} collectives across nodes × {:.3f} (network {:.1f} → {:.1f} GB/s per GPU)",
                    across_nodes, inter, source.inter_node_gbps, target.inter_node_gbps));
  return out;
}

}  // namespace meshscope::compare
