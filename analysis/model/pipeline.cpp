#include "analysis/model/pipeline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace meshscope::model {

std::vector<int> stage_layers(const ModelSpec& m, const ParallelConfig& c) {
  const int p = std::max(1, c.pp);
  std::vector<int> layers(static_cast<size_t>(p), 0);
  if (p == 1) {
    layers[0] = m.layers;
    return layers;
  }
  const bool uneven = c.first_stage_layers >= 0 || c.last_stage_layers >= 0;
  if (!uneven) {
    // Balanced: ceil(L / p) each, then one layer fewer on the last, first, second-to-last, ... stage until
    // the total is L (the ends also carry the embedding and the loss).
    const int base = (m.layers + p - 1) / p;
    std::fill(layers.begin(), layers.end(), base);
    int surplus = base * p - m.layers;
    for (int k = 0; surplus > 0; ++k, --surplus) {
      const int stage = k % 2 == 0 ? p - 1 - k / 2 : k / 2;
      --layers[static_cast<size_t>(stage)];
    }
    return layers;
  }
  int rest = m.layers;
  int middle = p;
  if (c.first_stage_layers >= 0)
    layers.front() = c.first_stage_layers, rest -= c.first_stage_layers, --middle;
  if (c.last_stage_layers >= 0) layers.back() = c.last_stage_layers, rest -= c.last_stage_layers, --middle;
  const size_t begin = c.first_stage_layers >= 0 ? 1 : 0;
  for (int i = 0; i < middle; ++i) {
    // Spread what is left as evenly as possible; earlier middle stages take the remainder.
    const int share = rest / (middle - i) + (rest % (middle - i) != 0 ? 1 : 0);
    layers[begin + static_cast<size_t>(i)] = std::max(0, share);
    rest -= share;
  }
  return layers;
}

std::string check_stage_layers(const ModelSpec& m, const ParallelConfig& c) {
  if (c.pp > m.layers && c.first_stage_layers < 0 && c.last_stage_layers < 0)
    return fmt::format("--pp {} exceeds --layers {}: a pipeline stage would hold no transformer layer", c.pp,
                       m.layers);
  if (c.pp == 1 && (c.first_stage_layers >= 0 || c.last_stage_layers >= 0))
    return "--first-stage-layers and --last-stage-layers need --pp 2 or more";
  const int fixed = std::max(0, c.first_stage_layers) + std::max(0, c.last_stage_layers);
  if (fixed > m.layers)
    return fmt::format("--first-stage-layers {} + --last-stage-layers {} exceed --layers {}",
                       std::max(0, c.first_stage_layers), std::max(0, c.last_stage_layers), m.layers);
  const int middle = c.pp - (c.first_stage_layers >= 0) - (c.last_stage_layers >= 0);
  if (middle == 0 && fixed != m.layers)
    return fmt::format("--first-stage-layers + --last-stage-layers = {} is not --layers {} with --pp 2",
                       fixed, m.layers);
  if (middle > 0 && m.layers - fixed < middle)
    return fmt::format("{} layers left for {} middle stages: each stage needs at least one layer",
                       m.layers - fixed, middle);
  return {};
}

int moe_layers_in(const ModelSpec& m, int first, int layers) {
  return m.moe_layers_between(first, layers);
}

int microbatch_group(const ParallelConfig& c) {
  const int m = c.micro_batches();
  if (c.microbatch_group > 0) return c.microbatch_group;
  return m % c.pp == 0 ? c.pp : m;
}

double inflight_micro_batches(const ParallelConfig& c, int stage) {
  const double m = c.micro_batches();
  const int p = c.pp;
  if (p == 1) return 1.0;
  switch (c.schedule) {
    case Schedule::kGPipe:
      return m;  // Huang et al. 2019: every micro-batch's activations are kept until the backward pass
    case Schedule::k1F1B:
      return std::min(m, double(p - stage));
    case Schedule::kInterleaved: {
      const double v = c.virtual_stages;
      const double warmup = 2.0 * (p - stage - 1) + (v - 1) * microbatch_group(c);
      return std::min(m * v, warmup + 1.0) / v;
    }
  }
  return 1.0;
}

}  // namespace meshscope::model
