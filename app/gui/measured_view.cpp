#include "app/gui/measured_view.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "profiler/text_format.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::gui {
namespace {

std::string join_stated(const std::vector<std::string>& stated) {
  std::string out;
  for (const auto& part : stated) out += (out.empty() ? "" : "; ") + part;
  return out;
}

}  // namespace

ProfileStart profile_start(const compare::MeasuredModel& measured, std::int64_t world_size) {
  const compare::Workload& wl = measured.workload;
  ProfileStart s;
  auto v = [](const std::optional<std::int64_t>& x) { return x ? std::to_string(*x) : std::string("?"); };
  if (wl.stated_model) {
    const model::ModelSpec& m = *wl.stated_model;
    s.summary = "model " + m.name + " (stated): hidden " + std::to_string(m.hidden) + ", " +
                std::to_string(m.layers) + " layers, ffn " + std::to_string(m.ffn) + ", " +
                std::to_string(m.heads) + " heads (" + std::to_string(m.kv_heads) + " kv), vocab " +
                std::to_string(m.vocab);
  } else if (wl.transformer) {
    s.summary = compare::model_text(wl, false);
  } else {
    s.summary = wl.shapes_recorded ? "not a recognised transformer" : "no shapes recorded";
  }
  if (wl.training) s.summary += *wl.training ? ", training" : ", inference";
  if (const std::vector<std::string> assumed = compare::assumed_values(wl); !assumed.empty()) {
    s.summary += " (assumed, as the profile does not show them:";
    for (const std::string& a : assumed) s.summary += " " + a + (&a == &assumed.back() ? ")" : ",");
  }
  s.summary += "; ";
  s.summary += wl.stated_hardware     ? wl.stated_hardware->name + " (stated)"
               : wl.recorded_hardware ? *wl.hardware + " (described from its records)"
               : wl.hardware          ? *wl.hardware
               : wl.gpu.empty()       ? std::string("no GPU named")
                                      : "GPU '" + wl.gpu + "' without a hardware preset";
  if (wl.tp || wl.pp || wl.dp || wl.cp || wl.ep) {
    s.summary +=
        "; tp " + v(wl.tp) + " pp " + v(wl.pp) + " dp " + v(wl.dp) + " cp " + v(wl.cp) + " ep " + v(wl.ep);
  } else {
    s.summary += "; layout unknown";
  }
  if ((wl.hardware || wl.stated_hardware) && measured.hardware) s.hardware = measured.hardware->name;
  if (wl.stated_hardware) s.stated_hardware = wl.stated_hardware;
  if (!wl.stated_hardware && measured.hardware && wl.recorded_hardware)
    s.recorded_hardware = wl.recorded_hardware;
  model::ModelSpec m;
  std::string why;
  bool modelled = false;
  try {
    modelled = compare::inferred_model(wl, m, &why);
  } catch (const std::exception& e) {  // a preset the inferred model is laid out on failed to load
    why = e.what();
  }
  if (modelled) s.model = m;
  if (!modelled) {
    s.reason = why;
  } else if (s.hardware.empty()) {
    s.reason = wl.gpu.empty() ? "the profile names no GPU, so its hardware is unknown"
                              : "the profile's GPU '" + wl.gpu + "' has no hardware preset";
  }
  s.comparable = s.reason.empty();

  // The layout and batch the profile states and shows, as `compare` takes them without flags.
  compare::LayoutOrigins origins;
  const model::ParallelConfig c =
      compare::profile_config(wl, std::max<std::int64_t>(1, world_size), {}, modelled, false, origins).config;
  auto or_one = [](int value) { return value > 0 ? value : 1; };  // resolve()'s default
  model::ParallelConfig in = explorer_layout();
  in.tp = or_one(c.tp);
  in.pp = or_one(c.pp);
  in.cp = or_one(c.cp);
  in.ep = or_one(c.ep);
  in.dp = c.dp;
  in.micro_batch = or_one(c.micro_batch);
  in.global_batch = c.global_batch;
  in.seq = c.seq;
  in.gpus = c.dp > 0 ? in.tp * in.pp * in.cp * c.dp : c.gpus;
  s.layout_known = modelled;
  in.zero = in.dp > 1 || (in.dp == 0 && in.gpus / std::max(1, in.tp * in.pp * in.cp) > 1) ? 1 : 0;
  in.precision = c.precision;
  in.mode = c.mode;
  if (c.inference()) in.zero = 0;
  s.layout = in;

  std::vector<std::string> from;
  if (!wl.stated.empty()) from.push_back("what is stated in the profile (" + join_stated(wl.stated) + ")");
  if (wl.shapes_recorded)
    from.push_back(wl.transformer ? "the recorded shapes of its GEMMs, attention and embedding"
                                  : "its recorded operator shapes");
  if (!wl.gpu.empty())
    from.push_back(wl.recorded_hardware ? "what it records of its GPU '" + wl.gpu + "'"
                                        : "the GPU name '" + wl.gpu + "'");
  bool groups = false;
  for (const auto& e : wl.evidence) groups |= e.find("process group") != std::string::npos;
  if (groups) from.push_back("its process groups");
  if (wl.tp || wl.pp || wl.dp || wl.cp || wl.ep)
    from.push_back("its world size of " + std::to_string(world_size));
  for (std::size_t i = 0; i < from.size(); ++i)
    s.sources += (i == 0 ? "" : i + 1 == from.size() ? " and " : ", ") + from[i];
  return s;
}

std::string profile_gpu_line(const Profile& profile, const std::string& gpu, const std::string& hardware,
                             HardwareOrigin origin) {
  if (gpu.empty()) return "the profile names no GPU";
  const Device* described = nullptr;
  std::int64_t ranks = 0;
  for (const Rank& r : profile.ranks()) {
    for (const Device& d : r.devices) {
      if (d.name != gpu) continue;
      if (!described) described = &d;
      ++ranks;
      break;
    }
  }
  std::string line = gpu;
  if (ranks > 0) line += fmt::format(" (described by {} rank{})", ranks, ranks == 1 ? "" : "s");
  std::vector<std::string> facts;
  if (described) {
    const bool nvidia = vocabulary::gpu_vendor(gpu) == vocabulary::GpuVendor::kNvidia;
    if (described->total_memory_bytes > 0)
      facts.push_back(bytes_text(described->total_memory_bytes) + " memory");
    if (described->compute_major != kNull && described->compute_minor != kNull) {
      facts.push_back(fmt::format("{} {}.{}", nvidia ? "compute capability" : "architecture",
                                  described->compute_major, described->compute_minor));
    }
    if (described->sm_count > 0)
      facts.push_back(fmt::format("{} {}", described->sm_count, nvidia ? "SMs" : "compute units"));
  }
  for (std::size_t i = 0; i < facts.size(); ++i) line += (i == 0 ? ": " : ", ") + facts[i];
  if (origin == HardwareOrigin::kStated) return line + "; stated hardware " + hardware;
  if (origin == HardwareOrigin::kRecorded)
    return line + "; no preset names it: predicted as " + hardware + ", described from these records";
  return line +
         (hardware.empty()
              ? "; no hardware preset describes it (the Explorer predicts on the hardware chosen there)"
              : "; hardware preset " + hardware);
}

std::string display_reason(const std::string& reason) {
  const auto advice = reason.find(": pass --");
  return advice == std::string::npos ? reason : reason.substr(0, advice);
}

MeasuredPoints measured_points(const compare::MeasuredModel& measured) {
  MeasuredPoints out;
  const auto& work = measured.work;
  using Key = std::tuple<std::string, std::string, int, int>;
  std::map<Key, MeasuredPoint> by_shape;
  std::map<int, MeasuredPoint> by_category;
  for (std::uint32_t i : measured.roofline.points) {
    const measure::CountedOp& op = work.ops[i];
    const double seconds = static_cast<double>(op.kernel_ns) / 1e9;
    auto add = [&](MeasuredPoint& p) {
      ++p.count;
      p.kernels += op.kernels;
      p.flops += op.flops;
      p.bytes += op.bytes;
      p.seconds += seconds;
    };
    MeasuredPoint& p =
        by_shape[{op.name, op.input_dims, static_cast<int>(op.category), static_cast<int>(op.precision)}];
    if (p.count == 0) {
      p.name = op.name;
      p.dims = op.input_dims;
      p.category = op.category;
      p.fp8 = op.fp8;
      p.precision = op.precision;
    }
    add(p);
    MeasuredPoint& c = by_category[static_cast<int>(op.category)];
    if (c.count == 0) {
      c.name = measure::to_string(op.category);
      c.category = op.category;
    }
    add(c);
  }
  auto longest_first = [](const MeasuredPoint& a, const MeasuredPoint& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
  };
  for (auto& [key, p] : by_shape) {
    if (p.flops > 0) {
      out.ops.push_back(std::move(p));
    } else {
      ++out.bytes_only;
    }
  }
  std::sort(out.ops.begin(), out.ops.end(), longest_first);
  for (auto& [key, c] : by_category) {
    if (c.flops > 0) out.categories.push_back(std::move(c));
  }
  std::sort(out.categories.begin(), out.categories.end(), longest_first);
  const auto& mean = measured.steps.mean;
  if (measured.flops_per_step > 0 && mean.dur_s > 0) {
    MeasuredPoint step;
    step.name = "mean step";
    step.count = measured.rank_steps;
    step.flops = measured.flops_per_step;
    step.bytes = measured.bytes_per_step;
    step.seconds = mean.dur_s;
    out.step = step;
  }
  return out;
}

}  // namespace meshscope::gui
