// NeuSight's measured one-GPU steps (tests/compare/neusight_steps.hpp) as profiles the replay runs, and the
// model they ran: what the what-if tests of layout edits start from.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/measure/op_work.hpp"
#include "analysis/model/presets.hpp"
#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"
#include "profiler/work_records.hpp"
#include "tests/compare/neusight_steps.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::test {

// GPT-2 large (Radford et al. 2019; Hugging Face's gpt2-large config: 36 layers, d_model 1280, 20 heads,
// vocabulary 50257, 1024 positions, the output layer tied to the embedding).
inline model::ModelSpec gpt2_large() {
  model::ModelSpec m = model::load_model("gpt");
  m.layers = 36;
  m.hidden = 1280;
  m.heads = 20;
  m.kv_heads = 20;
  m.ffn = 5120;
  m.ffn_multiplier = 0;
  m.vocab = 50257;
  m.seq = 1024;
  m.learned_positions = true;
  m.tied_embeddings = true;
  return m;
}

// NeuSight's one-GPU step as a profile: each operator's forward kernels in order (the first block's
// operators once per layer), then its backward kernels in reverse order, launched from inside an autograd
// range on the backward's thread; every kernel queued on one stream. A GEMM's backward is two kernels.
// The step holds one pass: its CPU range ends with the last launch.
inline Profile step_profile(const test::NeuSightStep& step, const std::string& name) {
  test::ProfileBuilder b(name);
  b.rank(0, 1);
  std::vector<const test::NeuSightOperator*> order;  // each call, forward order
  std::size_t first_block = step.operators.size(), after_block = step.operators.size();
  for (std::size_t k = 0; k < step.operators.size(); ++k) {
    if (step.operators[k].times > 1 && first_block == step.operators.size()) first_block = k;
    if (step.operators[k].times > 1) after_block = k + 1;
  }
  const auto add = [&](const test::NeuSightOperator& op) {
    if (!op.aten.empty() && op.aten != "-") order.push_back(&op);
  };
  for (std::size_t k = 0; k < first_block; ++k) add(step.operators[k]);
  for (int layer = 0; first_block < after_block && layer < step.operators[first_block].times; ++layer)
    for (std::size_t k = first_block; k < after_block; ++k) add(step.operators[k]);
  for (std::size_t k = after_block; k < step.operators.size(); ++k) add(step.operators[k]);

  // Each call's operator with its work (meshscope's formulas on NeuSight's shapes), its kernels' work rows.
  ProfileWriter& writer = b.writer();
  std::vector<std::int64_t> op_ids(order.size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    measure::OpWork work;
    if (measure::op_work(order[k]->aten, {order[k]->input_dims, order[k]->input_types, ""}, work) !=
        measure::WorkStatus::kOk)
      continue;
    OpWorkRecord r;
    r.external_id = static_cast<std::int64_t>(k) + 1;
    r.pid = 1;
    r.tid = 1;
    r.name = writer.intern(order[k]->aten);
    r.category = static_cast<std::int64_t>(work.category);
    r.flops = work.flops;
    r.bytes = work.bytes;
    r.input_dims = writer.intern(canonical_list(order[k]->input_dims));
    r.input_types = writer.intern(canonical_list(order[k]->input_types));
    r.kernels = order[k]->gemm ? 3 : 2;
    op_ids[k] = writer.add_op_work(r);
  }
  TimeNs gpu = 1000, call = 0;
  // A GEMM's kernels as cuBLAS names its FP32 ones, the others as ATen's element-wise kernels: what
  // measure::kernel_work_category reads.
  const auto launch = [&](std::int64_t tid, double ms, std::size_t k) {
    const TimeNs length = std::max<TimeNs>(1, std::llround(ms * 1e6));
    const std::int64_t id = b.launch(0, tid, call, call + 1, 7, gpu, gpu + length,
                                     order[k]->gemm ? "sgemm_128x64_nn" : "vectorized_elementwise_kernel");
    if (op_ids[k] != 0)
      writer.add_kernel_work({.activity_id = id, .rank = 0, .op_id = op_ids[k], .flops = 0, .bytes = 0});
    call += 2;
    gpu += length;
  };
  for (std::size_t k = 0; k < order.size(); ++k)
    if (order[k]->forward_ms > 0) launch(1, order[k]->forward_ms, k);
  const TimeNs backward_from = call;
  for (std::size_t k = order.size(); k-- > 0;) {
    if (!(order[k]->backward_ms > 0)) continue;
    const int kernels = order[k]->gemm ? 2 : 1;
    for (int j = 0; j < kernels; ++j) launch(2, order[k]->backward_ms / kernels, k);
  }
  b.range(0, 2, RangeKind::kCpuOp, backward_from, call, "autograd::engine::evaluate_function: MmBackward0");
  b.step(0, 1, 0, call, 1);
  return b.finish();
}

}  // namespace meshscope::test
