// Shared helpers for the model tests: the published runs of ../shared/calibration as
// ModelSpec/ParallelConfig, the Megatron-LM (2020-2022) software assumptions, and error statistics.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"
#include "tests/model/csv.hpp"

namespace meshscope::model::testing {

// Megatron-LM as published in 2020-2022: unfused attention, fp32 gradient accumulation (18 bytes/param), no
// overlap of TP, PP or DP communication (the gradient all-reduce ran after the backward pass). These are
// properties of that software, not fitted constants.
inline Efficiencies megatron_2021(const HardwareSpec& hw) {
  Efficiencies e = defaults_for(hw);
  e.flash_attention = false;
  e.state_bytes = StateBytes::k18;
  e.overlap_tp = 0;
  e.overlap_pp = 0;
  e.overlap_dp = 0;
  return e;
}

// GPT-style model as in Narayanan et al. 2021 / Korthikanti et al. 2022 (vocab 51200, seq 2048, ffn 4h).
inline ModelSpec megatron_gpt(const std::string& name, int layers, int hidden, int heads, int seq = 2048) {
  ModelSpec m = load_model("gpt");
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn = 4 * hidden;
  m.seq = seq;
  return m;
}

inline double mape(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double sum = 0;
  for (size_t i = 0; i < predicted.size(); ++i) sum += std::abs(predicted[i] / measured[i] - 1.0);
  return 100.0 * sum / predicted.size();
}

inline std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return r;
}

// Spearman rank correlation (Pearson correlation of the ranks; ties get mean ranks).
inline double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = ra.size();
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n,
               mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

}  // namespace meshscope::model::testing
