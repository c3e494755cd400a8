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

int& field_of(LayoutInputs& in, LayoutField field) {
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

int field_of(const LayoutInputs& in, LayoutField field) {
  return field_of(const_cast<LayoutInputs&>(in), field);
}

model::ParallelConfig to_config(const LayoutInputs& in) {
  model::ParallelConfig c;
  c.gpus = in.gpus;
  c.tp = in.tp;
  c.pp = in.pp;
  c.dp = in.dp;
  c.cp = in.cp;
  c.ep = in.ep;
  c.etp = in.etp;
  c.micro_batch = in.micro_batch;
  c.global_batch = in.global_batch;
  c.seq = in.seq;
  c.zero = in.zero;
  c.recompute_set = true;
  c.recompute = static_cast<model::Recompute>(in.recompute);
  c.schedule_set = true;
  c.schedule = static_cast<model::Schedule>(in.schedule);
  c.virtual_stages = c.schedule == model::Schedule::kInterleaved ? in.virtual_stages : 1;
  c.precision = static_cast<model::Precision>(in.precision);
  c.mode = static_cast<model::Mode>(in.mode);
  if (c.inference()) c.zero = 0, c.recompute = model::Recompute::kNone;  // nothing to shard or recompute
  return c;
}

LayoutInputs from_config(const model::ParallelConfig& c) {
  LayoutInputs in;
  in.gpus = c.gpus;
  in.tp = c.tp;
  in.pp = c.pp;
  in.dp = c.dp;
  in.cp = c.cp;
  in.ep = c.ep;
  in.etp = c.etp == c.tp ? 0 : c.etp;  // as TP reads "as TP"
  in.micro_batch = c.micro_batch;
  in.global_batch = c.global_batch;
  in.seq = c.seq;
  in.zero = c.zero;
  in.recompute = static_cast<int>(c.recompute);
  in.schedule = static_cast<int>(c.schedule);
  in.virtual_stages = c.virtual_stages;
  in.precision = static_cast<int>(c.precision);
  in.mode = static_cast<int>(c.mode);
  return in;
}

std::string layout_problem(const LayoutInputs& inputs, const model::ModelSpec& model,
                           const model::HardwareSpec& hw) {
  try {
    model::resolve(to_config(inputs), model, hw);
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

int auto_dp(const LayoutInputs& in) {
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

std::vector<int> candidates(LayoutField field, const LayoutInputs& in, const model::ModelSpec& m,
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

std::vector<LayoutStep> layout_steps(LayoutField field, const LayoutInputs& inputs,
                                     const model::ModelSpec& model, const model::HardwareSpec& hw) {
  std::vector<LayoutStep> steps;
  LayoutInputs trial = inputs;
  for (int value : candidates(field, inputs, model, hw)) {
    field_of(trial, field) = value;
    steps.push_back({value, layout_problem(trial, model, hw)});
  }
  return steps;
}

}  // namespace meshscope::gui
