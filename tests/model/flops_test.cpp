// Parameter counts and FLOPs against published model sizes and Megatron's FLOP formula.
#include <gtest/gtest.h>

#include "analysis/model/architecture.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

TEST(Architecture, PresetParameterCountsMatchPublishedSizes) {
  struct Case {
    const char* preset;
    double total_b, active_b, tolerance;
  };
  // GPT-3 175B (Brown et al. 2020), Llama 3 8B/70B/405B (Llama 3 Table 3 and model cards: 8.03B, 70.6B,
  // 405.9B), Mixtral 46.7B total / 12.9B active (Jiang et al. 2024 §2.1), DeepSeek-V3 671B / 37B (DeepSeek-V3
  // §1), Qwen3-30B-A3B 30.5B / 3.3B and Qwen3-235B-A22B 235B / 22B (Qwen3 report Table 2 and model cards),
  // Llama 4 Maverick 400B / 17B (Meta's model card), Kimi K2 1.04T / 32.6B (Kimi K2 report, arXiv:2507.20534,
  // Table 2).
  const Case cases[] = {{"gpt3-175b", 174.6, 174.6, 0.01},  {"llama3-8b", 8.03, 8.03, 0.01},
                        {"llama3-70b", 70.6, 70.6, 0.01},   {"llama3-405b", 405.9, 405.9, 0.01},
                        {"mixtral-8x7b", 46.7, 12.9, 0.01}, {"deepseek-v3", 671, 37, 0.03},
                        {"qwen3-30b-a3b", 30.5, 3.3, 0.02}, {"qwen3-235b-a22b", 235, 22, 0.02},
                        {"llama4-maverick", 400, 17, 0.02}, {"kimi-k2", 1040, 32.6, 0.02}};
  for (const auto& c : cases) {
    const ParameterCounts p = count_parameters(load_model(c.preset));
    EXPECT_NEAR(p.total() / 1e9 / c.total_b, 1.0, c.tolerance) << c.preset << " total " << p.total() / 1e9;
    EXPECT_NEAR(p.active() / 1e9 / c.active_b, 1.0, c.tolerance)
        << c.preset << " active " << p.active() / 1e9;
  }
}

TEST(Flops, MatchesMegatronFormula) {
  // Narayanan et al. 2021 eq. (3) without recompute: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)); with full
  // recompute (their reported FLOPs): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
  const ModelSpec m = testing::megatron_gpt("gpt3", 96, 12288, 96);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const StepFlops none = step_flops(m, B * s, 2048, Recompute::kNone);
  const StepFlops full = step_flops(m, B * s, 2048, Recompute::kFull);
  const double megatron = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  const double megatron_full = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  // Our count adds layer-norm weights (4h per layer) to the 12h^2 of the formula: < 0.1 %.
  EXPECT_NEAR(none.model / megatron, 1.0, 1e-3);
  EXPECT_NEAR(full.hardware / megatron_full, 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(full.model, none.model);
}

TEST(Flops, KorthikantiReadmeMfuFromMeasuredIterationTimes) {
  // korthikanti2022_table5_and_readme_mfu.csv: mfu_*_recomputed = 72 B s l h^2 (1 + s/(6h) + V/(12lh)) /
  // (t x GPUs x 312e12) for the measured iteration times.
  for (auto& r : testing::read_calibration_csv("korthikanti2022_table5_and_readme_mfu.csv")) {
    if (r["global_batch"] == "n/a") continue;
    const ModelSpec m = testing::megatron_gpt(r["model"], std::stoi(r["layers"]), std::stoi(r["hidden"]),
                                              std::stoi(r["heads"]));
    const double tokens = std::stod(r["global_batch"]) * 2048;
    const double flops = step_flops(m, tokens, 2048, Recompute::kSelective).model;
    const double gpus = std::stod(r["num_gpus"]);
    const double mfu_sel = flops / (std::stod(r["iter_time_s_seqpar_selective"]) * gpus * 312e12);
    const double mfu_full = flops / (std::stod(r["iter_time_s_full_recompute"]) * gpus * 312e12);
    EXPECT_NEAR(100 * mfu_sel, std::stod(r["mfu_seqsel_recomputed"]), 0.15) << r["model"];
    EXPECT_NEAR(100 * mfu_full, std::stod(r["mfu_full_recomputed"]), 0.15) << r["model"];
  }
}

TEST(Flops, MoeCountsActiveParameters) {
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  const ParameterCounts p = count_parameters(mixtral);
  const double tokens = 1e6;
  const StepFlops f = step_flops(mixtral, tokens, mixtral.seq, Recompute::kNone);
  // 6 x active (non-embedding) parameters per token plus attention and logits (Kaplan et al. 2020 §2.1).
  // (Norm weights are parameters but cost no GEMM FLOPs: < 0.01 %.)
  const double expected =
      6 * p.layers_active() * tokens + 3 * tokens *
                                           (mixtral.layers * attention_flops_per_token(mixtral, mixtral.seq) +
                                            logits_flops_per_token(mixtral));
  EXPECT_NEAR(f.model / expected, 1.0, 1e-4);
  EXPECT_LT(f.model, 6 * p.total() * tokens * 0.5);
}

TEST(Flops, GroupedQueryAttentionShrinksKeyValueProjections) {
  ModelSpec m = load_model("llama3-8b");
  const double gqa = count_parameters(m).attention_per_layer;
  m.kv_heads = m.heads;
  const double mha = count_parameters(m).attention_per_layer;
  // 4h^2 for MHA, (2 + 2 x 8/32) h^2 for 8 KV heads of 32.
  EXPECT_DOUBLE_EQ(mha, 4.0 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(gqa, 2.5 * 4096 * 4096);
}

}  // namespace
}  // namespace meshscope::model
