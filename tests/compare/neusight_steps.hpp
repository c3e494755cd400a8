// NeuSight's measured training steps (Lee et al., ASPLOS 2025; github.com/sitar-lab/NeuSight
// scripts/asplos/label, MIT licence) as tests/data/neusight/convert.py cuts them: per GPU and model, the
// step's end-to-end latency and each operator of the traced model with its forward + backward latency
// measured alone, the ATen operator PyTorch runs for it and its inputs' sizes and element types.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace meshscope::test {

struct NeuSightOperator {
  bool gemm = false;
  int kernels = 1,
      times = 1;          // kernels per call (forward, and with a backward its gradients); calls per step
  double latency_ms = 0;  // forward + backward, one call
  std::string aten;       // "aten::linear"; "-" where no kernel runs (views, sizes)
  std::string input_dims, input_types;
};

struct NeuSightStep {
  double step_ms = 0;
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
    out.operators.push_back(std::move(op));
  }
  return out;
}

}  // namespace meshscope::test
