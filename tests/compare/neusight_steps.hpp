// NeuSight's measured training steps (Lee et al., ASPLOS 2025; github.com/sitar-lab/NeuSight
// scripts/asplos/label, MIT licence) as tests/data/neusight/convert.py cuts them: per GPU and model, the
// step's end-to-end latency and each operator of the traced model with its forward + backward latency
// measured alone (and each apart), the ATen operator PyTorch runs for it and its inputs' sizes and element
// types; where measured, the same model's steps on four GPUs (data-, tensor-parallel, pipelined).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshscope::test {

struct NeuSightOperator {
  bool gemm = false;
  int kernels = 1,
      times = 1;          // kernels per call (forward, and with a backward its gradients); calls per step
  double latency_ms = 0;  // forward + backward, one call
  std::string aten;       // "aten::linear"; "-" where no kernel runs (views, sizes)
  std::string input_dims, input_types;
  double forward_ms = 0, backward_ms = 0;  // apart, one call
};

struct NeuSightStep {
  double step_ms = 0;
  // The same model on four GPUs of the same kind, each running this batch (0: not measured): data-parallel
  // (4x the global batch), tensor-parallel, pipelined with one micro-batch.
  double dp4_step_ms = 0, tp4_step_ms = 0, pp4_1_step_ms = 0;
  std::vector<NeuSightOperator> operators;
};

inline std::filesystem::path neusight_dir() {
  return std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/data/neusight";
}

inline NeuSightStep read_neusight_step(const std::filesystem::path& path) {
  std::ifstream in(path);
  NeuSightStep out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("gemm\t")) continue;
    if (line.starts_with("step_ms\t")) {
      out.step_ms = std::stod(line.substr(8));
      continue;
    }
    bool multi = false;
    for (auto [key, value] :
         {std::pair{"dp4_step_ms\t", &out.dp4_step_ms}, std::pair{"tp4_step_ms\t", &out.tp4_step_ms},
          std::pair{"pp4_1_step_ms\t", &out.pp4_1_step_ms}}) {
      if (!line.starts_with(key)) continue;
      *value = std::stod(line.substr(std::string_view(key).size()));
      multi = true;
    }
    if (multi) continue;
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string field; std::getline(row, field, '\t');) fields.push_back(field);
    if (fields.size() < 4) continue;
    NeuSightOperator op;
    op.gemm = fields[0] != "0";
    op.kernels = std::stoi(fields[1]);
    op.times = std::stoi(fields[2]);
    op.latency_ms = std::stod(fields[3]);
    if (fields.size() >= 7) {
      op.aten = fields[4];
      op.input_dims = fields[5];
      op.input_types = fields[6];
    }
    if (fields.size() >= 9) {
      op.forward_ms = std::stod(fields[7]);
      op.backward_ms = std::stod(fields[8]);
    }
    out.operators.push_back(std::move(op));
  }
  return out;
}

}  // namespace meshscope::test
