// Tensor-parallel collectives overlapped with their GEMMs as Transformer Engine's userbuffers run them under
// Megatron-Core's --tp-comm-overlap. The chunk counts and SMs are TE's defaults
// (transformer_engine/pytorch/module/base.py, initialize_ub / get_default_config): ring exchange in tp chunks
// on the copy engines, the pipelined reduce-scatter in 4 chunks on 16 SMs kept from the GEMM, bulk
// collectives on 16 SMs beside the whole GEMM. The times below are worked by hand from those settings.
#include <gtest/gtest.h>

#include "analysis/model/tp_overlap.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

constexpr double us = 1e-6;

// H100 SXM: 132 SMs (H100 whitepaper), 6 µs per GEMM kernel (assets/hardware/h100-sxm.toml).
UserbufferSettings h100_tp4() {
  UserbufferSettings s;
  s.tp = 4;
  s.sm_count = 132;
  s.gemm_overhead_s = 6 * us;
  return s;
}

TEST(TpOverlap, RingExchangeChunksTheGemmIntoTpPiecesBesideTheTransfers) {
  const UserbufferSettings s = h100_tp4();
  // 400 µs of GEMM work + 6 µs overhead in 4 chunks of 100 + 6 µs. An all-gather of 240 µs is 3 transfers
  // of 80 µs, each hidden behind a chunk: 4 x 106 = 424 µs, the GEMM alone plus three more overheads.
  EXPECT_NEAR(ring_exchange_time(406 * us, 240 * us, s), 424 * us, 1e-12);
  // An all-gather of 600 µs (3 x 200 µs) is what the chunks wait for: 3 x 200 + 106 = 706 µs.
  EXPECT_NEAR(ring_exchange_time(406 * us, 600 * us, s), 706 * us, 1e-12);
  // Without a tensor-parallel group nothing overlaps.
  UserbufferSettings one = s;
  one.tp = 1;
  EXPECT_NEAR(ring_exchange_time(406 * us, 10 * us, one), 416 * us, 1e-12);
}

TEST(TpOverlap, PipelinedReduceScatterRunsTheGemmWithoutTheCommunicationSms) {
  const UserbufferSettings s = h100_tp4();
  EXPECT_NEAR(s.sm_slowdown(), 132.0 / 116.0, 1e-12);
  // 400 µs of work on 116 of 132 SMs = 455.17 µs in 4 chunks of 113.79 + 6 µs; a reduce-scatter of 200 µs
  // in 4 parts of 50 µs each behind the next chunk, the last one after the GEMM:
  // 119.79 + 3 x 119.79 + 50 = 529.17 µs.
  const double chunk = 400.0 * 132.0 / 116.0 / 4.0 + 6.0;
  EXPECT_NEAR(pipelined_reduce_scatter_time(406 * us, 200 * us, s), (4 * chunk + 50) * us, 1e-12);
  // A slow reduce-scatter (800 µs, 200 µs per part) paces the pipeline: chunk + 3 x 200 + 200.
  EXPECT_NEAR(pipelined_reduce_scatter_time(406 * us, 800 * us, s), (chunk + 800) * us, 1e-12);
  // An unknown SM count leaves the GEMM all its SMs.
  UserbufferSettings unknown = s;
  unknown.sm_count = 0;
  EXPECT_DOUBLE_EQ(unknown.sm_slowdown(), 1.0);
}

TEST(TpOverlap, BulkCollectivesRunBesideTheWholeGemm) {
  const UserbufferSettings s = h100_tp4();
  EXPECT_NEAR(bulk_time(406 * us, 100 * us, s), (400.0 * 132.0 / 116.0 + 6.0) * us, 1e-12);
  EXPECT_NEAR(bulk_time(406 * us, 900 * us, s), 900 * us, 1e-12);
}

TEST(TpOverlap, ALayerAddsItsEightOverlapsAndAMoeLayerOnlyTheAttentions) {
  const UserbufferSettings s = h100_tp4();
  LayerTimes dense;
  const ProjectionTimes p{406 * us, 406 * us, 406 * us};
  dense.qkv = dense.out = dense.mlp_up = dense.mlp_down = p;
  const double ag = 240 * us, rs = 200 * us;
  const OverlappedLayer d = overlapped_tp_layer(dense, ag, rs, s);
  const double ring = ring_exchange_time(406 * us, ag, s) - 406 * us;
  const double pipe = pipelined_reduce_scatter_time(406 * us, rs, s) - 406 * us;
  const double bulk_ag = bulk_time(406 * us, ag, s) - 406 * us;
  const double bulk_rs = bulk_time(406 * us, rs, s) - 406 * us;
  EXPECT_NEAR(d.forward, 2 * (ring + pipe), 1e-12);
  EXPECT_NEAR(d.backward, 2 * (ring + bulk_ag + bulk_rs), 1e-12);
  LayerTimes moe = dense;
  moe.mlp_up = moe.mlp_down = ProjectionTimes{};
  const OverlappedLayer e = overlapped_tp_layer(moe, ag, rs, s);
  EXPECT_NEAR(e.forward, d.forward / 2, 1e-12);
  EXPECT_NEAR(e.backward, d.backward / 2, 1e-12);
}

TEST(TpOverlap, MxFp8GathersTheOutputGradientAgainBesideTheWeightGradient) {
  // TE linear.py / layernorm_mlp.py: with an MXFP8 gradient quantizer the row-parallel layers'
  // weight-gradient GEMM waits for a second, column-wise all-gather of the output gradient
  // (bulk_overlap_ag_with_external_gemm).
  UserbufferSettings s = h100_tp4();
  LayerTimes layer;
  layer.qkv = layer.out = ProjectionTimes{406 * us, 406 * us, 100 * us};
  const double ag = 240 * us, rs = 200 * us;
  const OverlappedLayer once = overlapped_tp_layer(layer, ag, rs, s);
  s.second_gradient_gather = true;
  const OverlappedLayer twice = overlapped_tp_layer(layer, ag, rs, s);
  EXPECT_NEAR(twice.backward - once.backward, (240 - 100) * us, 1e-12);  // the gather outlasts the wgrad GEMM
  EXPECT_DOUBLE_EQ(twice.forward, once.forward);
}

TEST(TpOverlap, Nvfp4RunsItsCollectivesWithoutTheOverlap) {
  // TE fills userbuffers from FP8 and MXFP8 quantizers only: under NVFP4 the TP collectives stay exposed.
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("gb200");
  ParallelConfig c;
  c.gpus = 64, c.tp = 4, c.pp = 4, c.global_batch = 64, c.precision = Precision::kNVFP4;
  const ParallelConfig r = resolve(c, m, hw);
  Efficiencies overlapped = defaults_for(hw);
  overlapped.overlap_tp = 1;
  const Prediction p = predict(m, hw, r, overlapped, true);
  EXPECT_DOUBLE_EQ(p.time.tp_exposed, p.comm.tp);
  bool said = false;
  for (const ExplainTerm& t : p.terms)
    said |= t.part == "tp_exposed" &&
            t.inputs.find("NVFP4: Transformer Engine's userbuffers") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TpOverlap, OverlapHidesPartOfTheTensorParallelTimeNotAllOfIt) {
  // Llama 3.1 405B on H100 at TP 8 (Megatron-Bridge's layout: PP 8, CP 2, VP 8, FP8): overlapping the
  // TP collectives saves time, but less than they cost — the chunks' overheads and the SMs the
  // reduce-scatters take stay on the GEMMs.
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 1024, c.tp = 8, c.pp = 8, c.cp = 2, c.micro_batch = 1, c.global_batch = 1536, c.seq = 8192;
  c.schedule = Schedule::kInterleaved, c.virtual_stages = 8, c.precision = Precision::kFP8;
  const ParallelConfig r = resolve(c, m, hw);
  Efficiencies plain = defaults_for(hw);
  plain.overlap_tp = 0;
  Efficiencies overlapped = plain;
  overlapped.overlap_tp = 1;
  const Prediction a = predict(m, hw, r, plain);
  const Prediction b = predict(m, hw, r, overlapped);
  EXPECT_LT(b.step_time_s, a.step_time_s);
  EXPECT_GT(b.time.tp_exposed, 0.2 * a.time.tp_exposed);
  EXPECT_LT(b.time.tp_exposed, a.time.tp_exposed);
  EXPECT_DOUBLE_EQ(a.time.compute, b.time.compute);
}

}  // namespace
}  // namespace meshscope::model
