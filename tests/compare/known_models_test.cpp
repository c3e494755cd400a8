// What is inferred from the traces of models whose configuration is known (analysis/compare/model_shapes.hpp,
// workload.hpp), checked against that configuration: tests/data/known_models/NAME.json.gz were recorded on
// this project's machine by tests/data/record_known_models.py (PyTorch 1.13's profiler, CPU, shapes recorded)
// from models built with random weights, and tests/data/known_models.json holds what each model was built
// with. The expected values are read from that file, not written here: a decoder with grouped-query
// attention computed eagerly (training and prefill), a GPT-2 whose projections are addmm over [in, out]
// weights, BERT through nn.TransformerEncoderLayer (heads folded into bmm's batch; in inference PyTorch's
// fused encoder-layer path), a ViT (patch-embedding convolution, classifier, no vocabulary), a top-2 MoE with
// a router and experts run one by one, an encoder-decoder, and a text encoder beside a larger decoder. One is
// a CUDA trace: h200_gpt_train, recorded on an H200 by tests/gpu/kineto_trace.py (PyTorch 2.11, bf16
// autocast, nn.MultiheadAttention with a causal mask, cuBLAS and SDPA kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include <simdjson.h>

#include "analysis/compare/model_shapes.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/work.hpp"
#include "job/profile_work.hpp"
#include "profiler/profile.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data";

// What one model was built with (known_models.json).
struct Truth {
  std::string family, mode;
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, batch = 0, seq = 0;
  std::int64_t encoder_layers = 0, decoder_layers = 0, classes = 0, experts = 1, top_k = 1;
  bool gated_mlp = false;
  std::int64_t other_hidden = 0;  // the smaller model of a pipeline
  std::int64_t tp = 1, dp = 1;
  // A head size of its own (0: hidden / heads) and multi-head latent attention's sizes (0: none).
  std::int64_t head_dim = 0, q_lora_rank = 0, kv_lora_rank = 0, qk_nope_dim = 0, qk_rope_dim = 0,
               v_head_dim = 0;
};

std::int64_t integer(simdjson::dom::object o, const char* key, std::int64_t fallback = 0) {
  std::int64_t v = fallback;
  if (o[key].get(v) != simdjson::SUCCESS) return fallback;
  return v;
}

Truth truth_of(const std::string& name) {
  static simdjson::dom::parser parser;
  static const simdjson::dom::element all = parser.load((kData / "known_models.json").string());
  simdjson::dom::object c = all[name].get_object();
  Truth t;
  t.family = std::string(std::string_view(c["family"]));
  t.mode = std::string(std::string_view(c["mode"]));
  t.batch = integer(c, "batch");
  t.seq = integer(c, "seq");
  simdjson::dom::object model = c;
  if (t.family == "pipeline") {
    model = c["decoder"].get_object();
    t.other_hidden = integer(c["encoder"].get_object(), "hidden");
    t.seq += 1;  // the encoder's pooled output is prepended to the decoder's tokens as one position
  }
  t.hidden = integer(model, "hidden");
  t.layers = integer(model, "layers");
  t.heads = integer(model, "heads");
  t.kv_heads = integer(model, "kv_heads");
  t.ffn = integer(model, "ffn");
  t.vocab = integer(model, "vocab");
  t.gated_mlp = bool(model["gated_mlp"]);
  t.encoder_layers = integer(model, "encoder_layers");
  t.decoder_layers = integer(model, "decoder_layers");
  t.classes = integer(model, "classes");
  t.experts = integer(model, "experts", 1);
  t.top_k = integer(model, "top_k", 1);
  t.tp = integer(c, "tp", 1);
  t.dp = integer(c, "dp", 1);
  t.head_dim = integer(model, "head_dim");
  simdjson::dom::object mla;
  if (model["mla"].get(mla) == simdjson::SUCCESS) {
    t.q_lora_rank = integer(mla, "q_lora_rank");
    t.kv_lora_rank = integer(mla, "kv_lora_rank");
    t.qk_nope_dim = integer(mla, "qk_nope_dim");
    t.qk_rope_dim = integer(mla, "qk_rope_dim");
    t.v_head_dim = integer(mla, "v_head_dim");
  }
  return t;
}

// The workload as a Job infers it: the lowest rank's operators, those without input types included.
Workload inferred(const std::string& name) {
  // A job of several ranks is a folder of their traces.
  const fs::path folder = kData / "known_models" / name;
  const fs::path profile =
      test::imported(name, fs::is_directory(folder) ? folder : kData / "known_models" / (name + ".json.gz"));
  const Profile p = Profile::load(profile);
  const measure::ProfileWork work =
      load_work(p, {.kernel_shares = false, .lowest_rank_only = true, .uncounted_shapes = true});
  return infer_workload(p, work);
}

class KnownModel : public ::testing::TestWithParam<const char*> {};

TEST_P(KnownModel, WhatIsInferredIsWhatWasBuilt) {
  const std::string name = GetParam();
  const Truth t = truth_of(name);
  const Workload w = inferred(name);
  std::string evidence;
  for (const auto& e : w.evidence) evidence += e + "\n";
  SCOPED_TRACE(evidence);
  ASSERT_TRUE(w.transformer);
  EXPECT_EQ(w.structure, t.family == "vit"  ? "vision transformer"
                         : t.family == "t5" ? "encoder-decoder"
                                            : "transformer");
  EXPECT_EQ(w.hidden, t.hidden);
  EXPECT_EQ(w.heads, t.heads);
  EXPECT_EQ(w.kv_heads, t.kv_heads);
  EXPECT_EQ(w.ffn, t.ffn);
  EXPECT_EQ(w.gated_mlp, t.gated_mlp);
  EXPECT_EQ(w.micro_batch, t.batch);
  EXPECT_EQ(w.seq, t.seq);
  EXPECT_EQ(w.tokens_per_micro_batch, t.batch * t.seq);
  EXPECT_EQ(w.training, t.mode == "training");
  EXPECT_EQ(w.tp, t.tp);
  EXPECT_EQ(w.dp, t.dp);
  if (t.family == "t5") {
    EXPECT_EQ(w.encoder_layers, t.encoder_layers);
    EXPECT_EQ(w.decoder_layers, t.decoder_layers);
    EXPECT_EQ(w.layers, t.encoder_layers + t.decoder_layers);
  } else {
    EXPECT_EQ(w.layers, t.layers);
    EXPECT_FALSE(w.encoder_layers);
  }
  if (t.family == "vit") {
    EXPECT_FALSE(w.vocab);
    EXPECT_EQ(w.classes, t.classes);
  } else {
    EXPECT_EQ(w.vocab, t.vocab);
  }
  EXPECT_EQ(w.experts, t.experts);
  EXPECT_EQ(w.top_k, t.top_k);
  if (t.other_hidden > 0) {
    ASSERT_EQ(w.other_models.size(), 1u);
    EXPECT_NE(w.other_models[0].find("a model of hidden " + std::to_string(t.other_hidden)),
              std::string::npos)
        << w.other_models[0];
  } else {
    EXPECT_TRUE(w.other_models.empty());
  }
  // A head size of the model's own, and latent attention, as built.
  const auto size = [](std::int64_t v) { return v > 0 ? std::optional<std::int64_t>(v) : std::nullopt; };
  if (t.kv_lora_rank > 0) {
    EXPECT_EQ(w.head_dim, t.qk_nope_dim + t.qk_rope_dim);
    EXPECT_EQ(w.v_head_dim, t.v_head_dim);
  } else {
    EXPECT_EQ(w.head_dim, size(t.head_dim));
    EXPECT_FALSE(w.v_head_dim);
  }
  EXPECT_EQ(w.kv_lora_rank, size(t.kv_lora_rank));
  EXPECT_EQ(w.qk_rope_dim, size(t.qk_rope_dim));
  EXPECT_EQ(w.q_lora_rank, t.kv_lora_rank > 0 ? std::optional<std::int64_t>(t.q_lora_rank) : std::nullopt);
  // Every model but the encoder-decoder is one the prediction takes, with the attention it was built with.
  model::ModelSpec spec;
  std::string why;
  EXPECT_EQ(inferred_model(w, spec, &why), t.family != "t5") << why;
  if (t.family == "t5") return;
  EXPECT_NO_THROW(model::check_model(spec));
  EXPECT_EQ(spec.head_size(), t.head_dim > 0 ? t.head_dim : t.hidden / t.heads);
  EXPECT_EQ(spec.kv_lora_rank, t.kv_lora_rank);
  EXPECT_EQ(spec.q_lora_rank, t.q_lora_rank);
  EXPECT_EQ(spec.qk_nope_dim, t.qk_nope_dim);
  EXPECT_EQ(spec.qk_rope_dim, t.qk_rope_dim);
  EXPECT_EQ(spec.v_head_dim, t.v_head_dim);
}

INSTANTIATE_TEST_SUITE_P(Traces, KnownModel,
                         ::testing::Values("llama_gqa_train", "llama_gqa_prefill", "llama_gqa_generate",
                                           "llama_tp2_dp2_train", "gpt2_conv1d_train", "bert_train",
                                           "bert_infer", "vit_train", "moe_train", "t5_like_train",
                                           "two_model_infer", "llama_vllm_prefill", "llama_vllm_generate",
                                           "llama_flash_varlen_train", "llama_flashinfer_generate",
                                           "h200_gpt_train", "qwen3_head_dim_prefill", "deepseek_mla_train",
                                           "llama_mm_prefill"),
                         [](const auto& info) { return std::string(info.param); });

// How each trace computed its attention, said in the workload.
TEST(KnownModels, TheAttentionsImplementationIsNamed) {
  EXPECT_EQ(inferred("llama_gqa_train").attention, "eager");
  EXPECT_EQ(inferred("bert_train").attention, "eager, heads folded into the batch");
  // PyTorch's fused encoder layer (inference) softmaxes scores over [batch, heads, seq, seq] after a bmm
  // over batch × heads: the softmax's shape gives the heads.
  EXPECT_EQ(inferred("bert_infer").attention, "eager");
}

// Megatron-LM's sharding over TP 2 on 4 ranks, recording only the default process group: TP from the sharded
// shapes (the embedding's width over the heads per rank × head size), the vocabulary from the embedding and
// output layer that hold the same rows on each rank, DP the rest of the world size (assumed: no group says
// so).
TEST(KnownModels, TensorParallelShardsAreReadBackToTheWholeModel) {
  const Workload w = inferred("llama_tp2_dp2_train");
  EXPECT_EQ(w.confidence.at("tp"), Confidence::kMedium);
  EXPECT_EQ(w.confidence.at("vocab"), Confidence::kMedium);
  EXPECT_EQ(w.confidence.at("dp"), Confidence::kLow);
  EXPECT_EQ(w.confidence.at("pp"), Confidence::kLow);
  EXPECT_NE(std::find(w.evidence.begin(), w.evidence.end(),
                      "tp 2 from the sharded shapes (hidden / heads per rank × head size)"),
            w.evidence.end());
}

// Generation: a prefill, then one-token passes whose queries attend over the cached keys (one look-up of the
// vocabulary each): the layers are the attention calls per pass, the tokens the prefill's.
TEST(KnownModels, GeneratingIsInferenceOfPrefillAndDecodePasses) {
  const Workload w = inferred("llama_gqa_generate");
  EXPECT_EQ(w.training, false);
  EXPECT_EQ(w.layers, 4);
  EXPECT_EQ(w.structure, "transformer");  // decode attention (1 query over the cache) is no cross-attention
  EXPECT_NE(
      std::find(w.evidence.begin(), w.evidence.end(),
                "layers 4: 16 forward attention calls in 4 forward pass(es) (one look-up of the vocabulary's "
                "embedding table each)"),
      w.evidence.end());
}

// A trace ending inside a pass (the generation cut by tests/data/cut_trace.py at 95 % of its operators' time,
// inside the second pass): fewer output layers than look-ups, so the layers are unknown — its 4 attention
// calls in 2 look-ups would read as 2 layers — and compare asks for the model in one sentence.
TEST(KnownModels, ATraceEndingInsideAPassLeavesTheLayersUnknown) {
  const fs::path trace = kData / "generate_cut.json.gz";
  const Profile p = Profile::load(test::imported("generate_cut", trace));
  const Workload w = infer_workload(
      p, load_work(p, {.kernel_shares = false, .lowest_rank_only = true, .uncounted_shapes = true}));
  EXPECT_FALSE(w.layers);
  EXPECT_NE(
      std::find(w.evidence.begin(), w.evidence.end(),
                "1 of the 2 forward pass(es) ran an output layer [2048, 256]: the trace ends inside a pass, "
                "so the layers are unknown (state the model)"),
      w.evidence.end());
  model::ModelSpec spec;
  std::string why;
  ASSERT_FALSE(inferred_model(w, spec, &why));
  EXPECT_EQ(
      why,
      "the profile does not show the model's layer count: pass --model NAME|FILE.toml, or store it in the "
      "profile with `meshscope annotate PROFILE --model ...`");
}

// The refusal for an encoder-decoder is one sentence that says what to pass.
TEST(KnownModels, AnEncoderDecoderIsNamedAndNotPredicted) {
  const Workload w = inferred("t5_like_train");
  model::ModelSpec spec;
  std::string why;
  ASSERT_FALSE(inferred_model(w, spec, &why));
  EXPECT_EQ(
      why,
      "the profile ran an encoder-decoder (3 encoder and 3 decoder layers, with cross-attention) and the "
      "model predicts one stack of layers, so it is not compared: pass --model NAME|FILE.toml (and "
      "--hardware) to compare it as one, or store them with `meshscope annotate PROFILE --model ...`");
  const test::Result info = test::run(
      "info " + test::imported("t5_like_train", kData / "known_models/t5_like_train.json.gz").string());
  EXPECT_NE(
      info.out.find("workload    encoder-decoder: hidden 256, 3 + 3 layers (encoder + decoder), ffn 1024"),
      std::string::npos)
      << info.out;
}

}  // namespace
}  // namespace meshscope::compare

namespace meshscope::compare {
namespace {

// Every value inferred says how sure it is: read from one recorded shape (high), derived by a rule from
// several (medium), or assumed where the trace shows nothing (low).
TEST(KnownModels, EveryValueSaysHowSureItIs) {
  const Workload w = inferred("llama_gqa_train");
  EXPECT_EQ(w.confidence.at("hidden"), Confidence::kHigh);      // the embedding table's width
  EXPECT_EQ(w.confidence.at("vocab"), Confidence::kHigh);       // its rows
  EXPECT_EQ(w.confidence.at("kv_heads"), Confidence::kMedium);  // the key and value projections' width
  EXPECT_EQ(w.confidence.at("layers"), Confidence::kMedium);    // attention calls per look-up
  EXPECT_EQ(w.confidence.at("tp"), Confidence::kHigh);          // one process
  // GPT-2's eager attention shows no key/value heads of its own: as many as the heads is assumed.
  EXPECT_EQ(inferred("gpt2_conv1d_train").confidence.at("kv_heads"), Confidence::kLow);
  // Heads folded into bmm's batch are the hidden size over the head size.
  EXPECT_EQ(inferred("bert_train").confidence.at("heads"), Confidence::kMedium);
  for (const auto& [field, value] : {std::pair{"hidden", w.hidden},
                                     {"layers", w.layers},
                                     {"ffn", w.ffn},
                                     {"heads", w.heads},
                                     {"kv_heads", w.kv_heads},
                                     {"vocab", w.vocab},
                                     {"experts", w.experts},
                                     {"top_k", w.top_k},
                                     {"tokens_per_micro_batch", w.tokens_per_micro_batch},
                                     {"micro_batch", w.micro_batch},
                                     {"seq", w.seq},
                                     {"tp", w.tp},
                                     {"pp", w.pp},
                                     {"dp", w.dp},
                                     {"cp", w.cp},
                                     {"ep", w.ep}}) {
    EXPECT_EQ(value.has_value(), w.confidence.contains(field)) << field;
  }
}

}  // namespace
}  // namespace meshscope::compare

namespace meshscope::compare {
namespace {

std::string evidence_with(const Workload& w, std::string_view part) {
  for (const auto& e : w.evidence) {
    if (e.find(part) != std::string::npos) return e;
  }
  return {};
}

// torch.compile's generated code runs every projection as aten::mm of the tokens by the weight's transpose,
// with no aten::linear recorded. In forward passes those products are the weights; in a training step the
// backward's products by the same weights and by the tokens look the same, so the model is not read then,
// and the evidence says why.
TEST(KnownModels, MatrixProductsAreReadAsWeightsInForwardPassesOnly) {
  const Workload prefill = inferred("llama_mm_prefill");
  EXPECT_TRUE(prefill.transformer);
  EXPECT_NE(evidence_with(prefill, "projections recorded as matrix products"), "");
  const Workload train = inferred("llama_mm_train");
  EXPECT_FALSE(train.transformer);
  EXPECT_NE(evidence_with(train, "recorded only as matrix products (aten::mm"), "");
  model::ModelSpec spec;
  std::string why;
  EXPECT_FALSE(inferred_model(train, spec, &why));
  EXPECT_NE(why.find("recorded only as matrix products (aten::mm, as torch.compile's code runs them)"),
            std::string::npos)
      << why;
}

// A user's attention operator takes q, k and v heads-first (PyTorch's and the Triton tutorial's layout) or
// seq-first (flash-attn's); the layout is the one its shapes fit, heads-first where both do unless only the
// other shows grouped key/value heads.
TEST(ModelShapes, AUsersAttentionOperatorIsReadInEitherLayout) {
  const auto read = [](const char* dims) -> std::optional<AttentionShape> {
    measure::ProfileWork work;
    work.uncounted.push_back({0, "mylab::attn_fwd", dims});
    const ShapeCounts c = count_shapes(work, true);
    if (c.attention.size() != 1) return std::nullopt;
    return c.attention.begin()->first;
  };
  const auto expect = [&](const char* dims, std::int64_t heads, std::int64_t kv_heads, std::int64_t seq,
                          std::int64_t kv_seq) {
    SCOPED_TRACE(dims);
    const auto a = read(dims);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->heads, heads);
    EXPECT_EQ(a->kv_heads, kv_heads);
    EXPECT_EQ(a->seq, seq);
    EXPECT_EQ(a->kv_seq, kv_seq);
    EXPECT_EQ(a->head_dim, 32);
  };
  expect("[[2, 8, 96, 32], [2, 2, 96, 32], [2, 2, 96, 32], [], []]", 8, 2, 96, 96);  // heads-first, GQA
  expect("[[2, 96, 8, 32], [2, 96, 2, 32], [2, 96, 2, 32], [], []]", 8, 2, 96, 96);  // seq-first, GQA
  expect("[[2, 8, 1, 32], [2, 8, 97, 32], [2, 8, 97, 32]]", 8, 8, 1, 97);            // decoding, heads-first
  expect("[[2, 1, 8, 32], [2, 97, 8, 32], [2, 97, 8, 32]]", 8, 8, 1, 97);            // decoding, seq-first
  EXPECT_FALSE(read("[[2, 8, 96, 32], [2, 8, 96, 32], [2, 8, 48, 32]]"));  // keys and values disagree
  EXPECT_FALSE(read("[[2, 8, 96, 32], [2, 8, 96, 16], [2, 8, 96, 32]]"));  // q and k of other head sizes
  EXPECT_FALSE(read("[[2, 8, 96, 32], [2, 8, 96, 32]]"));                  // two inputs
  // An attention library's own operator is read by its signature, not as a user's: flash-attn's forward is
  // seq-first even where both layouts fit.
  measure::ProfileWork flash;
  flash.uncounted.push_back(
      {0, "flash_attn::_flash_attn_forward", "[[2, 96, 8, 32], [2, 96, 8, 32], [2, 96, 8, 32], [], [], []]"});
  const ShapeCounts library = count_shapes(flash, true);
  ASSERT_EQ(library.attention.size(), 1u);
  EXPECT_EQ(library.attention.begin()->first.heads, 8);
  EXPECT_EQ(library.attention.begin()->first.seq, 96);
  EXPECT_TRUE(library.user_attention.empty());
  // Sizes no tensor could have (a hostile file's) show nothing, and overflow nothing.
  EXPECT_FALSE(
      read("[[281474976710656, 281474976710656, 1, 32], [281474976710656, 281474976710656, 1, 32], "
           "[281474976710656, 281474976710656, 1, 32]]"));
}

// In a training step recorded on a GPU, PyTorch's autograd engine runs the backward on a thread of its own:
// the matrix products on the threads the forward attention ran on are the forward's projections. (PyTorch's
// CPU profiler records only the thread it runs on, so this is checked on operators written here: a layer's
// query, output, up and down projections of a model of hidden 64, and their backward products.)
TEST(ModelShapes, InATrainingStepTheProductsOfTheForwardThreadAreTheWeights) {
  measure::ProfileWork work;
  const std::int64_t forward = 11, backward = 12;
  auto op = [&](std::int64_t tid, const char* name, const char* dims) {
    work.uncounted.push_back({0, name, dims, 1, tid});
  };
  op(forward, "aten::embedding", "[[1000, 64], [2, 8]]");
  op(forward, "aten::mm", "[[16, 64], [64, 64]]");  // queries
  op(forward, "aten::_scaled_dot_product_flash_attention", "[[2, 4, 8, 16], [2, 4, 8, 16], [2, 4, 8, 16]]");
  op(forward, "aten::mm", "[[16, 64], [64, 64]]");     // output projection
  op(forward, "aten::mm", "[[16, 64], [64, 256]]");    // up
  op(forward, "aten::mm", "[[16, 256], [256, 64]]");   // down
  op(backward, "aten::mm", "[[16, 64], [64, 256]]");   // down's input gradient: the up projection's shape
  op(backward, "aten::mm", "[[64, 16], [16, 256]]");   // down's weight gradient
  op(backward, "aten::mm", "[[16, 256], [256, 64]]");  // up's input gradient
  const ShapeCounts apart = count_shapes(work, false);
  EXPECT_TRUE(apart.products_on_forward_threads);
  EXPECT_EQ(apart.weight_calls(64, 64), 2);
  EXPECT_EQ(apart.weight_calls(256, 64), 1);
  EXPECT_EQ(apart.weight_calls(64, 256), 1);
  EXPECT_EQ(apart.weight_calls(256, 16), 0);
  // The same operators on one thread: nothing tells the backward's apart.
  for (auto& o : work.uncounted) o.tid = forward;
  const ShapeCounts together = count_shapes(work, false);
  EXPECT_TRUE(together.unread_products);
  EXPECT_TRUE(together.weights.empty());
  // Forward passes only: every product is the forward's.
  EXPECT_EQ(count_shapes(work, true).weight_calls(256, 64), 2);
}

// Heads × head size is not the hidden size in Qwen3 and Gemma, nor in DeepSeek's latent attention: the
// output projection [hidden, heads × value head] ties the attention to the model, and the latent attention's
// ranks come from its down and up projections. Each value says how sure it is.
TEST(KnownModels, AHeadSizeOfItsOwnAndLatentAttentionAreReadFromTheProjections) {
  const Workload qwen = inferred("qwen3_head_dim_prefill");
  EXPECT_NE(evidence_with(qwen, "head size 64 of the model's own"), "");
  EXPECT_EQ(qwen.confidence.at("head_dim"), Confidence::kHigh);
  EXPECT_NE(model_text(qwen, false).find("head size 64"), std::string::npos) << model_text(qwen, false);
  const Workload mla = inferred("deepseek_mla_train");
  EXPECT_NE(evidence_with(mla, "multi-head latent attention: keys and values from a latent of rank 64"), "");
  for (const char* field : {"head_dim", "v_head_dim", "kv_lora_rank", "qk_rope_dim", "q_lora_rank"})
    EXPECT_EQ(mla.confidence.at(field), Confidence::kHigh) << field;
  EXPECT_NE(model_text(mla, false)
                .find("latent attention (kv rank 64, q rank 96, heads 32 + 16 rotary, values 32)"),
            std::string::npos)
      << model_text(mla, false);
}

// Serving and variable-length attention packs the sequences into one dimension of tokens: their count comes
// from the operator's offsets (flash-attn's cu_seqlens, FlashInfer's indptr), or, where the operator takes
// none (vLLM's), from the output layer a serving engine runs on each sequence's last token only.
TEST(KnownModels, PackedSequencesAreCountedFromTheirOffsetsOrTheOutputLayer) {
  const Workload vllm = inferred("llama_vllm_prefill");
  EXPECT_EQ(vllm.attention, "fused, sequences packed");
  EXPECT_EQ(
      evidence_with(vllm, "packed tokens"),
      "attention over 256 packed tokens (q [256, 8 heads, 32], k and v of 2 heads): heads 8, kv_heads 2, 4 "
      "sequences from the output layer [2048, 256] run on 4 rows (one per sequence)");
  EXPECT_EQ(vllm.confidence.at("micro_batch"), Confidence::kMedium);

  const Workload varlen = inferred("llama_flash_varlen_train");
  EXPECT_EQ(
      evidence_with(varlen, "packed tokens"),
      "attention over 256 packed tokens (q [256, 8 heads, 32], k and v of 2 heads): heads 8, kv_heads 2, 2 "
      "sequence(s) from the operator's offsets");
  EXPECT_EQ(varlen.confidence.at("micro_batch"), Confidence::kHigh);

  // vLLM generating: the output layer runs on one row per sequence in the prefill and in each decoding pass;
  // the prefill holds most of the attention's queries.
  const Workload vllm_generate = inferred("llama_vllm_generate");
  EXPECT_EQ(
      evidence_with(vllm_generate, "packed tokens"),
      "attention over 192 packed tokens (q [192, 8 heads, 32], k and v of 2 heads): heads 8, kv_heads 2, 2 "
      "sequences from the output layer [2048, 256] run on 2 rows (one per sequence)");

  // FlashInfer's decoding passes: one query per sequence over the paged cache (pages of one token).
  const Workload generate = inferred("llama_flashinfer_generate");
  EXPECT_NE(evidence_with(generate, "layers 4: 16 forward attention calls in 4 forward pass(es)"), "");
  EXPECT_EQ(generate.seq, 96);
}

}  // namespace
}  // namespace meshscope::compare
