#include "analysis/model/tp_overlap.hpp"

#include <algorithm>

namespace meshscope::model {

double UserbufferSettings::sm_slowdown() const {
  if (sm_count <= comm_sms || comm_sms <= 0) return 1.0;
  return double(sm_count) / double(sm_count - comm_sms);
}

namespace {

// The GEMM's time without its one kernel overhead, at the SMs it runs on.
double gemm_work(double gemm_s, double overhead_s, double slowdown) {
  return std::max(0.0, gemm_s - overhead_s) * slowdown;
}

}  // namespace

double ring_exchange_time(double gemm_s, double comm_s, const UserbufferSettings& s) {
  if (gemm_s <= 0) return comm_s;
  if (s.tp <= 1) return gemm_s + comm_s;
  const double n = s.tp;
  const double chunk = gemm_work(gemm_s, s.gemm_overhead_s, 1.0) / n + s.gemm_overhead_s;
  return (n - 1) * std::max(chunk, comm_s / (n - 1)) + chunk;
}

double pipelined_reduce_scatter_time(double gemm_s, double comm_s, const UserbufferSettings& s) {
  if (gemm_s <= 0) return comm_s;
  const double n = std::max(1, s.pipeline_chunks);
  const double chunk = gemm_work(gemm_s, s.gemm_overhead_s, s.sm_slowdown()) / n + s.gemm_overhead_s;
  return chunk + (n - 1) * std::max(chunk, comm_s / n) + comm_s / n;
}

double bulk_time(double gemm_s, double comm_s, const UserbufferSettings& s) {
  if (gemm_s <= 0) return comm_s;
  return std::max(gemm_work(gemm_s, s.gemm_overhead_s, s.sm_slowdown()) + s.gemm_overhead_s, comm_s);
}

OverlappedLayer overlapped_tp_layer(const LayerTimes& layer, double all_gather_s, double reduce_scatter_s,
                                    const UserbufferSettings& s) {
  OverlappedLayer added;
  auto block = [&](const ProjectionTimes& column, const ProjectionTimes& row) {
    // Column-parallel (QKV, MLP up) then row-parallel (attention output, MLP down), Megatron-LM's pair.
    if (column.forward <= 0) return;
    added.forward += ring_exchange_time(column.forward, all_gather_s, s) - column.forward;
    added.forward += pipelined_reduce_scatter_time(row.forward, reduce_scatter_s, s) - row.forward;
    added.backward += ring_exchange_time(row.dgrad, all_gather_s, s) - row.dgrad;
    if (s.second_gradient_gather) added.backward += std::max(0.0, all_gather_s - row.wgrad);
    added.backward += bulk_time(column.dgrad, all_gather_s, s) - column.dgrad;
    added.backward += bulk_time(column.wgrad, reduce_scatter_s, s) - column.wgrad;
  };
  block(layer.qkv, layer.out);
  block(layer.mlp_up, layer.mlp_down);
  return added;
}

}  // namespace meshscope::model
