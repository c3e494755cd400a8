// The alpha-beta model and its calibration against nccl-tests curves and measured bus bandwidths.
#include <gtest/gtest.h>

#include <map>

#include "analysis/model/calibration.hpp"
#include "analysis/model/collectives.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

using testing::read_calibration_csv;

std::map<std::string, std::vector<SizeTime>> azure_curves() {
  std::map<std::string, std::vector<SizeTime>> curves;
  for (auto& r : read_calibration_csv("nccl_allreduce_busbw_curves_azure.csv"))
    curves[r["system"]].push_back({std::stod(r["msg_bytes"]), std::stod(r["time_us_derived"]) * 1e-6});
  return curves;
}

TEST(Collectives, BusBandwidthFactorsFollowNcclTests) {
  // nccl_busbw_formulas.csv (nccl-tests doc/PERFORMANCE.md).
  for (auto& r : read_calibration_csv("nccl_busbw_formulas.csv")) {
    const std::string op = r["collective"];
    const int n = 8;
    if (op == "AllReduce") {
      EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, n), 2.0 * 7 / 8);
    }
    if (op == "ReduceScatter") {
      EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, n), 7.0 / 8);
    }
    if (op == "AllGather") {
      EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, n), 7.0 / 8);
    }
    if (op == "AlltoAll") {
      EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, n), 7.0 / 8);
    }
    if (op == "Broadcast" || op == "SendRecv") {
      EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, n), 1.0);
    }
  }
  // The ideal times of the same table: t = (S/B) x factor.
  const Link link{0, 100e9};
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllReduce, 1e9, 8, link), 1e9 / 100e9 * 2 * 7 / 8);
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllGather, 1e9, 8, link), 1e9 / 100e9 * 7 / 8);
  EXPECT_DOUBLE_EQ(collective_time(Collective::kSendRecv, 1e9, 2, link), 1e9 / 100e9);
  EXPECT_DOUBLE_EQ(collective_time(Collective::kBroadcast, 1e9, 8, link), 1e9 / 100e9);
}

TEST(Calibration, AlphaBetaFitOfAzureAllReduceCurves) {
  // nccl_allreduce_busbw_curves_azure.csv: fit t = alpha + S x 2(n-1)/n / busbw on each 1 KiB - 8 GiB curve.
  // The fitted bus bandwidth lands within 15 % of the large-message plateau and alpha near the small-message
  // time; the straight line describes every curve within 15 % on average.
  const auto curves = azure_curves();
  ASSERT_EQ(curves.size(), 4u);
  for (const auto& [system, points] : curves) {
    const int n = system.find("GB200") != std::string::npos ? 4 : 8;
    const AlphaBetaFit fit = fit_alpha_beta(points, Collective::kAllReduce, n);
    const double plateau =
        points.back().bytes / points.back().seconds * busbw_factor(Collective::kAllReduce, n);
    EXPECT_NEAR(fit.busbw_Bps / plateau, 1.0, 0.15) << system;
    EXPECT_NEAR(fit.alpha_s / points.front().seconds, 1.0, 0.35) << system;
    EXPECT_LT(fit.mape, 0.15) << system;
    EXPECT_EQ(fit.points, 24);
  }
  // ND A100 v4: 204.7 GB/s and 44.2 us (the values in assets/hardware/a100-80gb.toml).
  const AlphaBetaFit a100 =
      fit_alpha_beta(curves.at("ND A100 v4 (8x A100-SXM4-80GB)"), Collective::kAllReduce, 8);
  EXPECT_NEAR(a100.busbw_Bps / 1e9, 204.7, 0.5);
  EXPECT_NEAR(a100.alpha_s * 1e6, 44.2, 0.5);
  EXPECT_NEAR(a100.alpha_step_s * 1e6, 3.16, 0.05);
}

TEST(Calibration, FittedLinkReproducesTheCurveThroughTheModel) {
  // Feeding the fit back into collective_time() reproduces the measured 1 GiB all-reduce (ND H200 v5: 4018.67
  // us) within 10 %.
  const auto curves = azure_curves();
  const auto& points = curves.at("ND H200 v5 (8x H200 141GB)");
  const AlphaBetaFit fit = fit_alpha_beta(points, Collective::kAllReduce, 8);
  const double t = collective_time(Collective::kAllReduce, 1073741824.0, 8, fit.link());
  EXPECT_NEAR(t / 4018.67e-6, 1.0, 0.10);
}

TEST(Calibration, GemmEfficiencyFromAzureSweep) {
  // measured_microbenchmarks_azure.csv: A100 FP16 cuBLASLt square GEMMs; best 256.5 TFLOP/s = 82.2 % of 312,
  // and a per-kernel overhead of ~9.7 us explains the small sizes (assets/hardware/a100-80gb.toml).
  std::vector<FlopsTime> kernels;
  for (auto& r : read_calibration_csv("measured_microbenchmarks_azure.csv")) {
    if (r["system"].find("A100") == std::string::npos || r["benchmark"] != "cuBLASLt GEMM FP16") continue;
    int mm = 0, nn = 0, kk = 0;
    std::sscanf(r["shape_or_kernel"].c_str(), "%dx%dx%d", &mm, &nn, &kk);
    if (!(mm == nn && nn == kk)) continue;
    const double flops = 2.0 * mm * nn * kk;
    kernels.push_back({flops, flops / (std::stod(r["value"]) * 1e12)});
  }
  ASSERT_EQ(kernels.size(), 5u);
  const ComputeFit fit = fit_compute(kernels, 312e12);
  EXPECT_NEAR(fit.best_efficiency, 0.822, 0.001);
  EXPECT_NEAR(fit.overhead_s * 1e6, 9.7, 0.1);
  EXPECT_LT(fit.efficiency, fit.best_efficiency);
  EXPECT_LT(fit.mape, 0.1);
  // Applying it replaces the defaults.
  Calibration cal;
  cal.gemm_efficiency = fit.best_efficiency;
  cal.gemm_overhead_s = fit.overhead_s;
  const Efficiencies eff = apply_calibration(Efficiencies{}, cal);
  EXPECT_DOUBLE_EQ(eff.gemm_bf16, fit.best_efficiency);
  EXPECT_DOUBLE_EQ(eff.gemm_overhead_s, fit.overhead_s);
}

TEST(Collectives, HierarchicalAllReduceAggregatesNics) {
  // nccl_measured_busbw_points.csv: 2 nodes x 8 A100 with 4 x HDR per node reach 86 GB/s bus bandwidth at
  // 4 GiB; 4 NICs shared by 8 GPUs = 12.5 GB/s per GPU at the 0.96 HDR efficiency (nccl-tests #160).
  const Link nvlink{3.16e-6, 204.7e9};
  const Link network{5e-6, 12.5e9 * 0.96};
  const GroupShape g = group_shape(16, 1, 8);
  EXPECT_EQ(g.per_node, 8);
  EXPECT_EQ(g.nodes(), 2);
  const double bytes = 4294967296.0;
  const double t = hierarchical_time(Collective::kAllReduce, bytes, g, nvlink, network);
  const double busbw = bytes / t * busbw_factor(Collective::kAllReduce, 16) / 1e9;
  EXPECT_NEAR(busbw / 86.0, 1.0, 0.15) << busbw;
  // A group with one rank per node only has its own NIC: all-to-all cannot aggregate NICs (nccl-tests #267).
  const GroupShape spread = group_shape(8, 8, 8);
  EXPECT_EQ(spread.per_node, 1);
  EXPECT_GT(hierarchical_time(Collective::kAllToAll, bytes, spread, nvlink, network),
            hierarchical_time(Collective::kAllToAll, bytes, group_shape(8, 1, 8), nvlink, network));
}

TEST(Collectives, TreeBeatsRingOnLatencyAtScale) {
  const Link link{5e-6, 25e9};
  EXPECT_LT(collective_time(Collective::kAllReduce, 1024, 1024, link, Algorithm::kTree),
            collective_time(Collective::kAllReduce, 1024, 1024, link, Algorithm::kRing));
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllReduce, 1e6, 1, link), 0.0);
}

}  // namespace
}  // namespace meshscope::model
