// End-to-end accuracy on every published run of ../shared/calibration. Each table reports the mean absolute
// percentage error and the Spearman rank correlation between predicted and measured; the test writes them to
// MESHSCOPE_TEST_TMP/accuracy.md (the source of docs/ACCURACY.md) and checks the bounds stated there.
// No constant is fitted to these rows: hardware inputs come from the presets (microbenchmarks), software
// properties of Megatron-LM 2020-2022 from testing::megatron_2021().
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "analysis/model/framework.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

using testing::read_calibration_csv;
using testing::Row;

struct Table {
  std::string title, unit;
  std::vector<std::string> rows;
  std::vector<double> predicted, measured;
  void add(const std::string& row, double p, double m) {
    rows.push_back(row);
    predicted.push_back(p);
    measured.push_back(m);
  }
  double mape() const { return testing::mape(predicted, measured); }
  double spearman() const { return testing::spearman(predicted, measured); }
  std::string markdown() const {
    std::string s = fmt::format("### {}\n\n| run | measured {} | predicted {} | error |\n|---|---|---|---|\n",
                                title, unit, unit);
    for (size_t i = 0; i < rows.size(); ++i)
      s += fmt::format("| {} | {:.4g} | {:.4g} | {:+.1f} % |\n", rows[i], measured[i], predicted[i],
                       100 * (predicted[i] / measured[i] - 1));
    s += fmt::format("\nMAPE {:.1f} %, Spearman rank correlation {:.2f} ({} runs)\n\n", mape(), spearman(),
                     rows.size());
    return s;
  }
};

std::string& report() {
  static std::string text;
  return text;
}

void publish(const Table& t) {
  report() += t.markdown();
  std::ofstream(std::string(MESHSCOPE_TEST_TMP) + "/accuracy.md") << report();
}

Table korthikanti_table5() {
  // Korthikanti et al. 2022 Table 5: iteration time with full recompute vs sequence parallel + selective.
  const HardwareSpec hw = load_hardware("a100-80gb");
  const Efficiencies eff = testing::megatron_2021(hw);
  Table t{"Korthikanti et al. 2022 Table 5 — iteration time, A100, TP=8", "s", {}, {}, {}};
  for (auto& r : read_calibration_csv("korthikanti2022_table5_and_readme_mfu.csv")) {
    if (r["global_batch"] == "n/a") continue;
    const ModelSpec m = testing::megatron_gpt(r["model"], std::stoi(r["layers"]), std::stoi(r["hidden"]),
                                              std::stoi(r["heads"]));
    for (int selective = 0; selective < 2; ++selective) {
      ParallelConfig c;
      c.gpus = std::stoi(r["num_gpus"]), c.tp = std::stoi(r["tp"]), c.pp = std::stoi(r["pp"]);
      c.dp = std::stoi(r["dp"]), c.micro_batch = std::stoi(r["microbatch"]);
      c.global_batch = std::stoi(r["global_batch"]), c.zero = 0;
      const int v = std::stoi(r["pipeline_interleave"]);
      c.schedule_set = true, c.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1F1B,
      c.virtual_stages = v;
      c.recompute_set = true, c.recompute = selective ? Recompute::kSelective : Recompute::kFull;
      c.sequence_parallel = selective;
      const Prediction p = predict(m, hw, resolve(c, m, hw), eff);
      t.add(fmt::format("{} {}", r["model"], selective ? "seq-par + selective" : "full recompute"),
            p.step_time_s,
            std::stod(r[selective ? "iter_time_s_seqpar_selective" : "iter_time_s_full_recompute"]));
    }
  }
  return t;
}

TEST(Accuracy, KorthikantiTable5IterationTimes) {
  const Table t = korthikanti_table5();
  publish(t);
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_LT(t.mape(), 10.0);
  EXPECT_GT(t.spearman(), 0.95);
}

TEST(Accuracy, KorthikantiMfuAt2240Gpus) {
  // Korthikanti et al. 2022 abstract: 530B on 2240 A100 (TP 8, PP 35, DP 8): MFU 54.2 % with sequence
  // parallel + selective recompute, 42.1 % with full recompute. Batch: Table 5's 280 per pipeline x DP 8
  // (assumption).
  const HardwareSpec hw = load_hardware("a100-80gb");
  const ModelSpec m = testing::megatron_gpt("turing-530B", 105, 20480, 128);
  Table t{"Korthikanti et al. 2022 abstract — MFU, 530B on 2240 A100", "MFU %", {}, {}, {}};
  for (int selective = 0; selective < 2; ++selective) {
    ParallelConfig c;
    c.gpus = 2240, c.tp = 8, c.pp = 35, c.global_batch = 2240, c.zero = 0;
    c.schedule_set = true, c.schedule = Schedule::kInterleaved, c.virtual_stages = 3;
    c.recompute_set = true, c.recompute = selective ? Recompute::kSelective : Recompute::kFull;
    c.sequence_parallel = selective;
    const Prediction p = predict(m, hw, resolve(c, m, hw), testing::megatron_2021(hw));
    t.add(selective ? "seq-par + selective" : "full recompute", 100 * p.mfu, selective ? 54.2 : 42.1);
  }
  publish(t);
  EXPECT_LT(t.mape(), 10.0);
  EXPECT_GT(t.predicted[1], t.predicted[0]);
}

TEST(Accuracy, Megatron2021Table2PtdpAndZero3) {
  // Narayanan et al. 2021 Table 2: achieved TFLOP/s per GPU (counting recompute) of PTD-P and ZeRO-3.
  const HardwareSpec hw = load_hardware("a100-80gb");
  const Efficiencies eff = testing::megatron_2021(hw);
  Table ptdp{"Narayanan et al. 2021 Table 2 — PTD-P, A100", "TFLOP/s/GPU", {}, {}, {}};
  Table zero3{"Narayanan et al. 2021 Table 2 — ZeRO-3 (DeepSpeed), A100", "TFLOP/s/GPU", {}, {}, {}};
  for (auto& r : read_calibration_csv("megatron2021_table2_zero3_vs_ptdp.csv")) {
    const bool big = r["params_billion"] == "529.6";
    const ModelSpec m =
        big ? testing::megatron_gpt("530B", 105, 20480, 128) : testing::megatron_gpt("175B", 96, 12288, 96);
    std::string batch = r["global_batch_size"];
    if (batch.back() == '*') batch.pop_back();
    ParallelConfig c;
    c.gpus = std::stoi(r["num_gpus"]), c.tp = std::stoi(r["tp"]), c.pp = std::stoi(r["pp"]);
    c.micro_batch = std::stoi(r["microbatch_size"]), c.global_batch = std::stoi(batch);
    c.recompute_set = true, c.recompute = Recompute::kFull, c.sequence_parallel = 0;
    const bool is_zero3 = r["scheme"] == "ZeRO-3";
    c.zero = is_zero3 ? 3 : 0;
    const Prediction p = predict(m, hw, resolve(c, m, hw), eff);
    (is_zero3 ? zero3 : ptdp)
        .add(fmt::format("{}B on {} GPUs", r["params_billion"], c.gpus), p.hardware_tflops_per_gpu,
             std::stod(r["achieved_tflops_per_gpu"]));
  }
  publish(ptdp);
  publish(zero3);
  EXPECT_LT(ptdp.mape(), 12.0);
  EXPECT_GT(ptdp.spearman(), 0.8);
  // ZeRO-3: the trend (throughput falling with data-parallel degree) is right; the level is not (see
  // docs/ACCURACY.md): DeepSpeed's 2021 ZeRO-3 ran far below what NCCL bandwidth allows.
  EXPECT_GT(zero3.spearman(), 0.7);
}

TEST(Accuracy, MegatronReadmeTensorParallelScaling) {
  // Megatron-LM README (2020): GPT-2-style models on DGX-A100, TP inside one node, with and without 128-way
  // data parallelism; iteration time. Full recompute (--checkpoint-activations of that release).
  const HardwareSpec hw = load_hardware("a100-80gb");
  const Efficiencies eff = testing::megatron_2021(hw);
  Table t{"Megatron-LM README 2020 — TP scaling on DGX-A100", "ms", {}, {}, {}};
  for (auto& r : read_calibration_csv("megatron_readme_2020_tp_scaling.csv")) {
    if (r["system"].find("A100") == std::string::npos) continue;
    ModelSpec m = testing::megatron_gpt(r["case"], std::stoi(r["num_layers"]), std::stoi(r["hidden_size"]),
                                        std::stoi(r["attention_heads"]), 1024);
    ParallelConfig c;
    c.gpus = std::stoi(r["num_gpus"]), c.tp = std::stoi(r["tp"]),
    c.global_batch = std::stoi(r["global_batch_size"]);
    c.dp = c.gpus / c.tp, c.micro_batch = c.global_batch / c.dp, c.zero = 0, c.sequence_parallel = 0;
    c.recompute_set = true, c.recompute = Recompute::kFull;
    const Prediction p = predict(m, hw, resolve(c, m, hw), eff);
    t.add(fmt::format("{} {} GPUs", r["case"], c.gpus), p.step_time_s * 1e3,
          std::stod(r["iteration_time_ms"]));
  }
  publish(t);
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_LT(t.mape(), 15.0);
  EXPECT_GT(t.spearman(), 0.6);
}

// ---- Published runs of tests/model/data/published_runs.csv (out of sample)
// ---------------------------------- No constant of the model is fitted to any row of any table: hardware
// inputs are datasheets and microbenchmarks (assets/hardware), software inputs the documented --framework
// presets. Leave-one-source-out is therefore the identity: every table below is evaluated with constants
// fitted on none of its sources.

ModelSpec published_model(Row& r) {
  const std::string name = r["model"];
  if (name.rfind("mpt-", 0) != 0 && name.rfind("llama2-", 0) != 0) return load_model(name);
  ModelSpec m = load_model("gpt");
  m.name = name;
  m.layers = std::stoi(r["layers"]), m.hidden = std::stoi(r["hidden"]), m.heads = std::stoi(r["heads"]);
  m.kv_heads = std::stoi(r["kv_heads"]), m.ffn = std::stoi(r["ffn"]), m.vocab = std::stoi(r["vocab"]);
  m.gated_mlp = r["gated"] == "1";
  m.dropout = false;
  // MPT (llm-foundry): tied embeddings, learned positions (the published parameter counts include seq x h);
  // Llama 2: RoPE, untied output layer.
  m.tied_embeddings = name.rfind("mpt-", 0) == 0;
  m.learned_positions = name.rfind("mpt-", 0) == 0;
  return m;
}

struct PublishedTables {
  std::vector<Table> tables;
  Table overall{"All published runs", "tokens/s/GPU", {}, {}, {}};
};

PublishedTables published_tables() {
  PublishedTables out;
  for (auto& r : testing::read_published_runs("published_runs.csv")) {
    const ModelSpec m = published_model(r);
    const HardwareSpec hw = load_hardware(r["hardware"]);
    ParallelConfig c;
    c.gpus = std::stoi(r["gpus"]), c.tp = std::stoi(r["tp"]), c.pp = std::stoi(r["pp"]),
    c.cp = std::stoi(r["cp"]);
    c.ep = std::stoi(r["ep"]), c.micro_batch = std::stoi(r["mbs"]), c.global_batch = std::stoi(r["gbs"]);
    c.seq = std::stoi(r["seq"]), c.zero = std::stoi(r["zero"]), c.precision = parse_precision(r["precision"]);
    const int v = std::stoi(r["vp"]);
    c.schedule_set = true, c.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1F1B,
    c.virtual_stages = v;
    c.recompute_set = true, c.recompute = parse_recompute(r["recompute"]);
    Efficiencies eff = defaults_for(hw);
    apply_framework(framework_preset(r["framework"]), eff, c);
    const Prediction p = predict(m, hw, resolve(c, m, hw), eff);
    const double predicted = p.tokens_per_s / c.gpus;
    const double measured = std::stod(r["tokens_per_s_per_gpu"]);
    const std::string title = r["table"];
    auto it =
        std::find_if(out.tables.begin(), out.tables.end(), [&](const Table& t) { return t.title == title; });
    if (it == out.tables.end()) {
      out.tables.push_back(Table{title, "tokens/s/GPU", {}, {}, {}});
      it = out.tables.end() - 1;
    }
    const std::string run =
        fmt::format("{} [{}]{}", r["run"], r["source"], p.fits ? "" : " (predicted not to fit)");
    it->add(run, predicted, measured);
    out.overall.add(fmt::format("{}: {}", title, r["run"]), predicted, measured);
  }
  return out;
}

TEST(Accuracy, PublishedRunsOutOfSample) {
  const PublishedTables t = published_tables();
  std::string summary =
      "### Out-of-sample summary (published_runs.csv)\n\n| table | runs | MAPE | Spearman "
      "|\n|---|---|---|---|\n";
  for (const Table& table : t.tables) {
    publish(table);
    summary += fmt::format("| {} | {} | {:.1f} % | {:.2f} |\n", table.title, table.rows.size(), table.mape(),
                           table.spearman());
  }
  summary += fmt::format("| all | {} | {:.1f} % | {:.2f} |\n\n", t.overall.rows.size(), t.overall.mape(),
                         t.overall.spearman());
  report() += summary;
  std::ofstream(std::string(MESHSCOPE_TEST_TMP) + "/accuracy.md") << report();
  ASSERT_GE(t.overall.rows.size(), 40u);
  // Bounds that hold today (docs/ACCURACY.md states the target and where the model misses it).
  EXPECT_LT(t.overall.mape(), 35.0);
  EXPECT_GT(t.overall.spearman(), 0.9);
}

}  // namespace
}  // namespace meshscope::model
