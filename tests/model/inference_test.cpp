// Inference as a workload (ParallelConfig::mode = kInference): a forward-only step (a prefill) costs the
// forward passes, holds weights and a KV cache instead of gradients and optimizer state, and is laid out and
// searched without ZeRO or recompute.
#include <gtest/gtest.h>

#include "analysis/model/architecture.hpp"
#include "analysis/model/memory.hpp"
#include "analysis/model/search.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

ParallelConfig layout(int gpus, int tp, int pp, Mode mode, int global_batch = 8) {
  ParallelConfig c;
  c.gpus = gpus, c.tp = tp, c.pp = pp, c.global_batch = global_batch, c.mode = mode;
  return c;
}

Prediction run(const ModelSpec& m, const HardwareSpec& hw, ParallelConfig c) {
  return predict(m, hw, resolve(c, m, hw), defaults_for(hw));
}

TEST(Inference, ForwardFlopsAreAThirdOfATrainingStepAndAbout2NPerToken) {
  // Kaplan et al. 2020 §2.1: the forward pass costs C_forward ≈ 2N FLOPs per token (N non-embedding
  // parameters), plus attention (2 n_layer n_ctx d_attn, a few percent at 2,048 tokens) and the output layer.
  const ModelSpec m = load_model("gpt3-175b");
  const double tokens = 2048.0 * 1536;
  const StepFlops forward = forward_flops(m, tokens, 2048);
  EXPECT_DOUBLE_EQ(forward.model, step_flops(m, tokens, 2048, Recompute::kNone).model / 3.0);
  EXPECT_DOUBLE_EQ(forward.hardware, forward.model);
  const double per_token = forward.model / tokens;
  const double two_n = 2.0 * 174.6e9;  // GPT-3 175B: 174.6 B parameters (Brown et al. 2020, Table 2.1)
  EXPECT_GT(per_token, 0.99 * two_n);
  EXPECT_LT(per_token, 1.06 * two_n);
}

TEST(Inference, KvCacheBytesPerTokenAsVllmCountsThem) {
  // Kwon et al. 2023 (vLLM, SOSP) §3: "the KV cache of a single token demands 800 KB of space, calculated as
  // 2 (key and value vectors) x 5120 (hidden state size) x 40 (number of layers) x 2 (bytes per FP16)" for
  // OPT-13B.
  ModelSpec opt13b = load_model("gpt");
  opt13b.layers = 40, opt13b.hidden = 5120, opt13b.heads = 40, opt13b.kv_heads = 40;
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_token(opt13b), 819200.0);
  // Grouped-query attention keeps kv_heads heads: Llama 3 70B (80 layers, 8 KV heads of 128) holds
  // 2 x 80 x 8 x 128 x 2 B = 320 KiB per token.
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_token(load_model("llama3-70b")), 327680.0);
}

TEST(Inference, AStepIsTheForwardPassesAlone) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Prediction train = run(m, hw, layout(8, 8, 1, Mode::kTraining));
  const Prediction infer = run(m, hw, layout(8, 8, 1, Mode::kInference));
  EXPECT_EQ(infer.config.zero, 0);
  EXPECT_EQ(infer.config.recompute, Recompute::kNone);
  EXPECT_DOUBLE_EQ(infer.step_time_s, infer.time.total());
  // The same forward per micro-batch; nothing of the backward, the gradients or the optimizer.
  EXPECT_DOUBLE_EQ(infer.micro_batch.forward, train.micro_batch.forward);
  EXPECT_DOUBLE_EQ(infer.micro_batch.backward, 0.0);
  EXPECT_DOUBLE_EQ(infer.time.compute, infer.config.micro_batches() * infer.micro_batch.forward);
  EXPECT_DOUBLE_EQ(infer.time.optimizer, 0.0);
  EXPECT_DOUBLE_EQ(infer.time.dp_exposed, 0.0);
  EXPECT_DOUBLE_EQ(infer.time.recompute, 0.0);
  // Tensor parallelism: the forward's two all-reduces per layer, half a training step's four.
  EXPECT_NEAR(infer.comm.tp, train.comm.tp / 2.0, 1e-12);
  // Model FLOPs of the forward alone: a third of the training step's.
  EXPECT_NEAR(infer.model_flops, train.model_flops / 3.0, 1e-6 * train.model_flops);
  EXPECT_LT(infer.step_time_s, train.step_time_s / 2.5);
}

TEST(Inference, MemoryHoldsWeightsAndTheKvCacheNotTrainingState) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Prediction infer = run(m, hw, layout(1, 1, 1, Mode::kInference, 4));
  const Prediction train = run(m, hw, layout(1, 1, 1, Mode::kTraining, 4));
  EXPECT_DOUBLE_EQ(infer.memory.grads, 0.0);
  EXPECT_DOUBLE_EQ(infer.memory.optimizer, 0.0);
  EXPECT_DOUBLE_EQ(infer.memory.params, train.memory.params);  // BF16 weights, 2 B each
  // The KV cache of one micro-batch (1 sequence of 8,192 tokens: 1 GiB for Llama 3 8B's 128 KiB per token)
  // is part of the activations, which are far below a training step's stored ones.
  const double kv = kv_cache_bytes_per_token(m) * infer.config.seq * infer.config.micro_batch;
  EXPECT_GT(infer.memory.activations, kv);
  EXPECT_LT(infer.memory.activations, train.memory.activations / 4);
}

TEST(Inference, ALayoutWithTrainingStateIsRefused) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig zero = layout(8, 1, 1, Mode::kInference);
  zero.zero = 1;
  EXPECT_THROW(resolve(zero, m, hw), InvalidInput);
  ParallelConfig recompute = layout(8, 1, 1, Mode::kInference);
  recompute.recompute_set = true, recompute.recompute = Recompute::kFull;
  EXPECT_THROW(resolve(recompute, m, hw), InvalidInput);
  EXPECT_EQ(resolve(layout(8, 1, 1, Mode::kInference), m, hw).zero, 0);  // dp 8, yet no ZeRO
  EXPECT_EQ(parse_mode("inference"), Mode::kInference);
  EXPECT_THROW(parse_mode("serving"), InvalidInput);
}

TEST(Inference, SearchLaysOutForwardPassesOnly) {
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  SearchOptions o;
  o.gpus = 16, o.global_batch = 32, o.mode = Mode::kInference;
  const SearchResult r = search(m, hw, defaults_for(hw), o);
  ASSERT_FALSE(r.top.empty());
  for (const Prediction& p : r.top) {
    EXPECT_EQ(p.config.mode, Mode::kInference);
    EXPECT_EQ(p.config.zero, 0);
    EXPECT_EQ(p.config.recompute, Recompute::kNone);
    EXPECT_DOUBLE_EQ(p.time.optimizer, 0.0);
  }
}

}  // namespace
}  // namespace meshscope::model
