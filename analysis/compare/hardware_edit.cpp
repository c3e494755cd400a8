#include "analysis/compare/hardware_edit.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/compare/calibrate.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/measure/op_work.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {
namespace {

// The least time a kernel of FLOPS and BYTES at PRECISION takes on HW (its roofline bound), 0 when unknown;
// an FP32 operator's kernel at the peak of how it does its multiply-adds (MATH; kUnknown: the TF32 peak where
// HW has one, the highest it could reach, as the measured roofline takes it).
double bound_s(double flops, double bytes, measure::WorkPrecision precision, Fp32Math math,
               const model::HardwareSpec& hw) {
  const measure::WorkCeilings ceilings = ceilings_of(hw);
  double peak = measure::peak_for(precision, ceilings);
  if (precision == measure::WorkPrecision::kFP32) {
    if (math == Fp32Math::kFp32Units && hw.peak_tflops_fp32 > 0) peak = hw.peak_tflops_fp32 * 1e12;
    if (math == Fp32Math::kSixteenBit) peak = ceilings.peak_flops;
  }
  const double compute = flops > 0 && peak > 0 ? flops / peak : 0;
  const double memory = bytes > 0 && hw.hbm_tbps > 0 ? bytes / (hw.hbm_tbps * 1e12) : 0;
  return std::max(compute, memory);
}

double ratio(double source, double target) {
  return source > 0 && target > 0 ? source / target : 1.0;
}

// NVIDIA's GPUs with TF32 tensor cores, which PyTorch's flags turn on (AMD's XF32 they do not).
bool has_tf32(const model::HardwareSpec& hw) {
  return hw.peak_tflops_tf32 > 0 && hw.family.rfind("cdna", 0) != 0;
}

// How an FP32 operator's kernel ran on SOURCE: as its name says; where it does not, on the FP32 units of a
// GPU without TF32, else unknown.
Fp32Math ran_on(std::string_view kernel, const model::HardwareSpec& source) {
  const Fp32Math named = fp32_math(kernel);
  if (named != Fp32Math::kUnknown) return named;
  return has_tf32(source) ? Fp32Math::kUnknown : Fp32Math::kFp32Units;
}

// How it runs on TARGET: as it ran where SOURCE has TF32 too; from a GPU without it (Volta, AMD's) to an
// NVIDIA GPU with it, as PyTorch's defaults run it (PyTorch docs, "TensorFloat-32 (TF32) on Ampere (and
// later) devices": torch.backends.cudnn.allow_tf32 defaults to True, torch.backends.cuda.matmul.allow_tf32 to
// False): a convolution in TF32, a matrix product on the FP32 units; on a GPU without TF32, on its FP32
// units. A product autocast ran in 16 bits stays in 16 bits.
Fp32Math runs_on(Fp32Math ran, bool convolution, const model::HardwareSpec& source,
                 const model::HardwareSpec& target) {
  if (ran == Fp32Math::kSixteenBit) return ran;
  if (!has_tf32(target)) return Fp32Math::kFp32Units;
  if (has_tf32(source)) return ran;
  return convolution || ran == Fp32Math::kTf32 ? Fp32Math::kTf32 : Fp32Math::kFp32Units;
}

}  // namespace

Fp32Math fp32_math(std::string_view kernel_name) {
  const std::string name = vocabulary::lower(kernel_name);
  const auto has = [&](std::initializer_list<std::string_view> marks) {
    for (const std::string_view m : marks)
      if (name.find(m) != std::string::npos) return true;
    return false;
  };
  if (has({"bf16", "fp16", "f16f16", "hgemm", "h884", "h1688", "h16816", "half"}))
    return Fp32Math::kSixteenBit;
  if (has({"tf32", "xf32", "s1688gemm"})) return Fp32Math::kTf32;
  if (has({"sgemm", "scudnn", "f32f32_f32f32", "simt"})) return Fp32Math::kFp32Units;
  return Fp32Math::kUnknown;
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
  // The kind of work a kernel does, from its name once per name (a large job has millions of kernels).
  std::unordered_map<StringId, measure::WorkCategory> category_by_name;
  const auto category_of = [&](StringId name) {
    const auto [it, added] = category_by_name.try_emplace(name, measure::WorkCategory::kOther);
    if (added) it->second = measure::kernel_work_category(profile.str(name));
    return it->second;
  };
  // Kernels with work: each its own factor, summed by kind (time-weighted) for the kernels without.
  constexpr std::size_t kKinds = measure::kWorkCategoryCount + 1;
  std::array<double, kKinds> weighted{}, seconds{};
  for (const measure::KernelShare& k : work.kernels) {
    if (k.rank_index >= ranks.size() || k.activity >= ranks[k.rank_index].activities.size()) continue;
    const measure::CountedOp& op = work.ops[k.op];
    const Fp32Math ran = op.precision == measure::WorkPrecision::kFP32
                             ? ran_on(profile.str(ranks[k.rank_index].activities[k.activity].name), source)
                             : Fp32Math::kUnknown;
    const double before = bound_s(k.flops, k.bytes, op.precision, ran, source);
    const double after =
        bound_s(k.flops, k.bytes, op.precision,
                runs_on(ran, op.category == measure::WorkCategory::kConv, source, target), target);
    if (!(before > 0) || !(after > 0)) continue;
    const double f = after / before;
    out.factor[k.rank_index][k.activity] = f;
    done[k.rank_index][k.activity] = 1;
    ++out.from_work;
    const double t = static_cast<double>(ranks[k.rank_index].activities[k.activity].duration()) / 1e9;
    const auto kind = static_cast<std::size_t>(category_of(ranks[k.rank_index].activities[k.activity].name));
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
  // A group's link once per (member list, size): a large job has a million collectives over a few groups.
  std::map<std::pair<StringId, std::int64_t>, LinkClass> link_of_group;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const meshscope::Collective& c : ranks[r].collectives) {
      if (c.stream_index < 0 || c.activity >= ranks[r].activities.size()) continue;
      const auto [it, added] = link_of_group.try_emplace({c.pg_ranks, c.group_size}, LinkClass::kIntraNode);
      if (added) {
        const std::vector<int> members = group_members(profile, c);
        const int size = c.group_size != kNull && c.group_size > 0 ? static_cast<int>(c.group_size)
                                                                   : static_cast<int>(members.size());
        it->second = link_class_of(profile, members, size, source.gpus_per_node);
      }
      if (it->second != LinkClass::kInterNode) continue;
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
        out.factor[r][i] = kind_factor(static_cast<std::size_t>(category_of(a.name)));
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
