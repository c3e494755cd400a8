#include "app/gui/explorer_steps.hpp"

#include <algorithm>
#include <exception>

namespace meshscope::gui {

const char* to_string(LayoutField field) {
  switch (field) {
    case LayoutField::kGpus:
      return "GPUs";
    case LayoutField::kTp:
      return "TP";
    case LayoutField::kPp:
      return "PP";
    case LayoutField::kDp:
      return "DP";
    case LayoutField::kCp:
      return "CP";
    case LayoutField::kEp:
      return "EP";
    case LayoutField::kMicroBatch:
      return "micro-batch";
    case LayoutField::kGlobalBatch:
      return "global batch";
    case LayoutField::kSeq:
      return "sequence";
    case LayoutField::kVirtualStages:
      return "virtual stages";
    case LayoutField::kEtp:
      return "expert TP";
  }
  return "?";
}

int& field_of(model::ParallelConfig& in, LayoutField field) {
  switch (field) {
    case LayoutField::kGpus:
      return in.gpus;
    case LayoutField::kTp:
      return in.tp;
    case LayoutField::kPp:
      return in.pp;
    case LayoutField::kDp:
      return in.dp;
    case LayoutField::kCp:
      return in.cp;
    case LayoutField::kEp:
      return in.ep;
    case LayoutField::kMicroBatch:
      return in.micro_batch;
    case LayoutField::kGlobalBatch:
      return in.global_batch;
    case LayoutField::kSeq:
      return in.seq;
    case LayoutField::kVirtualStages:
      return in.virtual_stages;
    case LayoutField::kEtp:
      return in.etp;
  }
  return in.gpus;
}

int field_of(const model::ParallelConfig& in, LayoutField field) {
  return field_of(const_cast<model::ParallelConfig&>(in), field);
}

model::ParallelConfig explorer_layout() {
  model::ParallelConfig c;
  c.gpus = 8;
  c.tp = c.pp = c.cp = c.ep = 1;
  c.micro_batch = 1;
  c.zero = 1;
  c.virtual_stages = 1;
  c.recompute_set = true;
  c.recompute = model::Recompute::kNone;
  c.schedule_set = true;
  c.schedule = model::Schedule::k1F1B;
  return c;
}

model::ParallelConfig layout_request(const model::ParallelConfig& layout) {
  model::ParallelConfig c = layout;
  c.recompute_set = true;
  c.schedule_set = true;
  if (c.schedule != model::Schedule::kInterleaved) c.virtual_stages = 1;
  if (c.inference()) c.zero = 0, c.recompute = model::Recompute::kNone;  // nothing to shard or recompute
  return c;
}

model::ParallelConfig controls_of(const model::ParallelConfig& config) {
  model::ParallelConfig c = explorer_layout();
  for (int f = 0; f < kLayoutFieldCount; ++f) {
    const auto field = static_cast<LayoutField>(f);
    field_of(c, field) = field_of(config, field);
  }
  if (c.etp == c.tp) c.etp = 0;  // as TP reads "as TP"
  c.zero = config.zero;
  c.recompute = config.recompute;
  c.schedule = config.schedule;
  c.precision = config.precision;
  c.mode = config.mode;
  return c;
}

std::string layout_problem(const model::ParallelConfig& layout, const model::ModelSpec& model,
                           const model::HardwareSpec& hw) {
  try {
    model::resolve(layout_request(layout), model, hw);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<int> log_multiples(int unit, int limit) {
  std::vector<int> out;
  if (unit < 1) return out;
  for (long m = 1; m * unit <= limit; m *= 2) {
    out.push_back(static_cast<int>(m * unit));
    if (m >= 2 && (m + m / 2) * unit <= limit) out.push_back(static_cast<int>((m + m / 2) * unit));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int auto_dp(const model::ParallelConfig& in) {
  if (in.dp > 0) return in.dp;
  const long mp = static_cast<long>(in.tp) * in.pp * in.cp;
  return mp > 0 && in.gpus % mp == 0 ? static_cast<int>(in.gpus / mp) : 1;
}

namespace {

std::vector<int> powers_of_two(int lo, int hi) {
  std::vector<int> out;
  for (long v = lo; v <= hi; v *= 2) out.push_back(static_cast<int>(v));
  return out;
}

std::vector<int> candidates(LayoutField field, const model::ParallelConfig& in, const model::ModelSpec& m,
                            const model::HardwareSpec& hw) {
  std::vector<int> v;
  auto add = [&](const std::vector<int>& more) { v.insert(v.end(), more.begin(), more.end()); };
  switch (field) {
    case LayoutField::kGpus: {
      const int node = std::max(1, hw.gpus_per_node);
      add(powers_of_two(1, node - 1));
      add(log_multiples(node, 32768));
      break;
    }
    case LayoutField::kTp:
      for (int d : divisors(std::max(1, m.heads))) {
        if (d <= std::max(in.gpus, 1)) v.push_back(d);
      }
      break;
    case LayoutField::kPp:
      for (int d : divisors(std::max(1, m.layers))) v.push_back(d);
      for (int d : divisors(std::max(1, in.gpus))) {
        if (d <= m.layers) v.push_back(d);
      }
      break;
    case LayoutField::kDp:
      v.push_back(0);
      add(divisors(std::max(1, in.gpus)));
      break;
    case LayoutField::kCp:
      add(powers_of_two(1, std::clamp(in.gpus, 1, 64)));
      break;
    case LayoutField::kEp:
      add(m.is_moe() ? divisors(m.experts) : std::vector<int>{1});
      break;
    case LayoutField::kMicroBatch:
      add(log_multiples(1, 64));
      break;
    case LayoutField::kGlobalBatch:
      v.push_back(0);
      add(log_multiples(auto_dp(in) * std::max(1, in.micro_batch), 65536));
      break;
    case LayoutField::kSeq:
      v.push_back(0);
      add(log_multiples(128, 131072));
      break;
    case LayoutField::kVirtualStages:
      for (int s = 1; s <= 16; ++s) v.push_back(s);
      break;
    case LayoutField::kEtp:
      // 0 = as TP; else the divisors of an expert's FFN width that a node could hold.
      v.push_back(0);
      if (m.is_moe()) {
        for (int d : divisors(std::max(1, m.moe_ffn))) {
          if (d <= std::max(1, std::min(in.gpus, hw.gpus_per_node))) v.push_back(d);
        }
      }
      break;
  }
  v.push_back(field_of(in, field));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<LayoutStep> layout_steps(LayoutField field, const model::ParallelConfig& layout,
                                     const model::ModelSpec& model, const model::HardwareSpec& hw) {
  std::vector<LayoutStep> steps;
  model::ParallelConfig trial = layout;
  for (int value : candidates(field, layout, model, hw)) {
    field_of(trial, field) = value;
    steps.push_back({value, layout_problem(trial, model, hw)});
  }
  return steps;
}

}  // namespace meshscope::gui
