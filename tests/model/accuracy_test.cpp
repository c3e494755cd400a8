// End-to-end accuracy on the published runs of ../shared/calibration (development tables) and of
// tests/model/data/published_runs.csv (out of sample, leave-one-source-out). Each table reports the mean
// absolute percentage error and the Spearman rank correlation between predicted and measured; the test writes
// them to MESHSCOPE_TEST_OUTPUT/accuracy.md (the source of docs/ACCURACY.md) and checks the bounds stated
// there. No constant is fitted to the development rows: hardware inputs come from the presets
// (microbenchmarks, and the sustained fraction fitted on published_runs.csv only), software properties of
// Megatron-LM 2020-2022 from testing::megatron_2021(). MESHSCOPE_ACCURACY_DUMP=1 prints each held-out run's
// time breakdown, the shares of its compute parts (--explain terms) and memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

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
  std::ofstream(std::string(MESHSCOPE_TEST_OUTPUT) + "/accuracy.md") << report();
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

// ---- Published runs of tests/model/data/published_runs.csv, leave-one-source-out
// ---------------------------- Hardware inputs are datasheets and microbenchmarks (assets/hardware), software
// inputs the documented
// --framework presets. The few constants the model fits (kFitted below) are fitted to the runs of every
// source but one and evaluated on the held-out source's runs; every table reports only such held-out
// predictions.

ModelSpec published_model(Row& r) {
  const std::string name = r["model"];
  if (r["layers"].empty()) return load_model(name);
  ModelSpec m = load_model("gpt");
  m.name = name;
  m.layers = std::stoi(r["layers"]), m.hidden = std::stoi(r["hidden"]), m.heads = std::stoi(r["heads"]);
  m.kv_heads = std::stoi(r["kv_heads"]), m.ffn = std::stoi(r["ffn"]), m.vocab = std::stoi(r["vocab"]);
  m.gated_mlp = r["gated"] == "1";
  m.dropout = r["dropout"] == "1";
  // MPT (llm-foundry): tied embeddings, learned positions (the published parameter counts include seq x h);
  // GPT-3 (Megatron): learned positions, untied; Llama 2 / Nemotron: RoPE, untied output layer.
  m.tied_embeddings = name.rfind("mpt-", 0) == 0;
  m.learned_positions =
      name.rfind("mpt-", 0) == 0 || name.rfind("gpt", 0) == 0 || name.rfind("megatron-gpt", 0) == 0;
  return m;
}

struct PublishedRun {
  std::string source, version, table, label;
  std::string dispatcher, cuda_graphs;  // MoE runs: the recipe's token dispatcher and CUDA graphs
  ModelSpec m;
  HardwareSpec hw;
  ParallelConfig c;
  Efficiencies eff;
  std::string metric;  // tokens_per_s_per_gpu (default) or model_tflops_per_gpu / hardware_tflops_per_gpu
  double measured = 0;
};

std::vector<PublishedRun> published_runs(const std::string& file = "published_runs.csv") {
  std::vector<PublishedRun> runs;
  for (auto& r : testing::read_published_runs(file)) {
    PublishedRun run;
    run.source = r["source"], run.version = r["version"], run.table = r["table"], run.label = r["run"];
    run.m = published_model(r);
    run.hw = load_hardware(r["hardware"]);
    ParallelConfig& c = run.c;
    c.gpus = std::stoi(r["gpus"]), c.tp = std::stoi(r["tp"]), c.pp = std::stoi(r["pp"]),
    c.cp = std::stoi(r["cp"]);
    c.ep = std::stoi(r["ep"]), c.micro_batch = std::stoi(r["mbs"]), c.global_batch = std::stoi(r["gbs"]);
    if (r.count("etp") && !r["etp"].empty()) c.etp = std::stoi(r["etp"]);
    if (r.count("mtp_layers") && !r["mtp_layers"].empty()) run.m.mtp_layers = std::stoi(r["mtp_layers"]);
    if (r.count("first_stage_layers") && !r["first_stage_layers"].empty())
      c.first_stage_layers = std::stoi(r["first_stage_layers"]);
    if (r.count("last_stage_layers") && !r["last_stage_layers"].empty())
      c.last_stage_layers = std::stoi(r["last_stage_layers"]);
    if (r.count("dispatcher")) run.dispatcher = r["dispatcher"], run.cuda_graphs = r["cuda_graphs"];
    c.seq = std::stoi(r["seq"]), c.zero = std::stoi(r["zero"]), c.precision = parse_precision(r["precision"]);
    const int v = std::stoi(r["vp"]);
    c.schedule_set = true, c.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1F1B,
    c.virtual_stages = v;
    c.recompute_set = true, c.recompute = parse_recompute(r["recompute"]);
    run.m.seq = c.seq;
    run.eff = defaults_for(run.hw);
    apply_framework(framework_preset(r["framework"]), run.eff, c);
    if (!r["state_bytes"].empty()) run.eff.state_bytes = parse_state_bytes(r["state_bytes"]);
    if (!r["overlap_tp"].empty()) run.eff.overlap_tp = std::stod(r["overlap_tp"]);
    if (!r["overlap_pp"].empty()) run.eff.overlap_pp = std::stod(r["overlap_pp"]);
    if (!r["offload_layers"].empty()) c.offload_layers = std::stoi(r["offload_layers"]);
    run.eff.fp8_param_gather = r["fp8_param_gather"] == "1";
    if (!r["attention"].empty()) set_attention_kernel(run.eff, r["attention"]);
    if (r.count("cp_comm") && !r["cp_comm"].empty()) c.cp_comm = parse_cp_comm(r["cp_comm"]);
    c = resolve(c, run.m, run.hw);
    run.metric = r["metric"].empty() ? "tokens_per_s_per_gpu" : r["metric"];
    run.measured = std::stod(r["measured"]);
    runs.push_back(std::move(run));
  }
  return runs;
}

// The fitted constant: per GPU family, the fraction of the microbenchmark tensor-core rates sustained in a
// training step (HardwareSpec::sustained_fraction). A family with no run among the training sources of a fold
// takes the previous generation's fraction, or the fraction fitted on all of that fold's runs pooled (key
// "").
using Fitted = std::map<std::string, double>;

// NVIDIA data-centre generations in order: a family without runs in a fold takes the fraction of the
// generation before it (the nearest in process, power and clock behaviour), else the pooled fraction.
const std::map<std::string, std::string>& previous_generation() {
  static const std::map<std::string, std::string> previous = {
      {"blackwell", "hopper"}, {"hopper", "ampere"}, {"ampere", "volta"}};
  return previous;
}

double sustained_for(const Fitted& f, const std::string& family) {
  for (std::string at = family;;) {
    if (const auto it = f.find(at); it != f.end()) return it->second;
    const auto before = previous_generation().find(at);
    if (before == previous_generation().end()) return f.at("");
    at = before->second;
  }
}

double predicted_metric(const PublishedRun& run, const Fitted& f, Prediction* keep = nullptr) {
  Efficiencies eff = run.eff;
  eff.sustained_fraction = sustained_for(f, run.hw.family);
  Prediction p;
  predict_into(run.m, run.hw, run.c, eff, p, keep != nullptr && std::getenv("MESHSCOPE_ACCURACY_DUMP"));
  const double value = run.metric == "model_tflops_per_gpu"      ? p.model_tflops_per_gpu
                       : run.metric == "hardware_tflops_per_gpu" ? p.hardware_tflops_per_gpu
                                                                 : p.tokens_per_s / run.c.gpus;
  if (keep != nullptr) *keep = std::move(p);
  return value;
}

// Mean absolute log error (relative error, symmetric in over- and under-prediction), each source weighing the
// same whatever its number of runs.
double loss(const std::vector<const PublishedRun*>& runs, double sustained) {
  std::map<std::string, std::pair<double, int>> by_source;
  for (const PublishedRun* run : runs) {
    auto& [sum, n] = by_source[run->source];
    sum += std::abs(std::log(predicted_metric(*run, Fitted{{"", sustained}}) / run->measured));
    ++n;
  }
  double total = 0;
  for (const auto& [source, sum_n] : by_source) total += sum_n.first / sum_n.second;
  return total / by_source.size();
}

// Golden-section search of the sustained fraction in [0.4, 1.2] minimising the loss over RUNS.
double fit_one(const std::vector<const PublishedRun*>& runs) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0.4, b = 1.2, x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = loss(runs, x1),
         f2 = loss(runs, x2);
  for (int i = 0; i < 40; ++i) {
    if (f1 < f2) {
      b = x2, x2 = x1, f2 = f1, x1 = b - g * (b - a), f1 = loss(runs, x1);
    } else {
      a = x1, x1 = x2, f1 = f2, x2 = a + g * (b - a), f2 = loss(runs, x2);
    }
  }
  return (a + b) / 2;
}

Fitted fit(const std::vector<const PublishedRun*>& runs) {
  std::map<std::string, std::vector<const PublishedRun*>> by_family;
  for (const PublishedRun* run : runs) by_family[run->hw.family].push_back(run);
  Fitted f{{"", fit_one(runs)}};
  for (const auto& [family, members] : by_family) f[family] = fit_one(members);
  return f;
}

struct PublishedTables {
  std::vector<Table> tables;
  Table overall{"All published runs", "tokens/s/GPU", {}, {}, {}};
  std::vector<std::pair<std::string, Fitted>> folds;  // held-out source -> constants fitted without it
  Fitted all;                                         // fitted on every source (the shipped defaults)
  int not_fitting = 0;                                // published runs the memory model says cannot run
};

PublishedTables published_tables() {
  const std::vector<PublishedRun> runs = published_runs();
  std::vector<std::string> sources;
  for (const auto& run : runs)
    if (std::find(sources.begin(), sources.end(), run.source) == sources.end()) sources.push_back(run.source);
  PublishedTables out;
  std::vector<const PublishedRun*> every;
  for (const auto& run : runs) every.push_back(&run);
  out.all = fit(every);
  std::map<const PublishedRun*, std::pair<double, bool>> held_out;
  for (const std::string& source : sources) {
    std::vector<const PublishedRun*> train;
    for (const auto& run : runs)
      if (run.source != source) train.push_back(&run);
    const Fitted f = fit(train);
    out.folds.push_back({source, f});
    for (const auto& run : runs) {
      if (run.source != source) continue;
      Prediction p;
      held_out[&run] = {predicted_metric(run, f, &p), p.fits};
      if (std::getenv("MESHSCOPE_ACCURACY_DUMP")) {
        const auto& t = p.time;
        const double st = p.step_time_s;
        fmt::print(
            "{:<40} {:+6.1f}% comp {:.2f} reco {:.2f} tp {:.2f} cp {:.2f} p2p {:.2f} bub {:.2f} dp {:.2f} "
            "opt {:.2f} mem {:.0f}/{:.0f}\n",
            run.label + " " + run.source, 100 * (held_out[&run].first / run.measured - 1), t.compute / st,
            t.recompute / st, t.tp_exposed / st, t.cp_exposed / st, t.pp_p2p_exposed / st, t.pp_bubble / st,
            t.dp_exposed / st, t.optimizer / st, p.memory.total() / double(1ull << 30),
            p.memory.capacity / double(1ull << 30));
        std::string shares;
        for (const ExplainTerm& term : p.terms)
          if (term.part == "compute" || term.part == "recompute")
            shares += fmt::format(" {} {:.2f};", term.name, term.seconds / st);
        fmt::print("    {}\n", shares);
      }
    }
  }
  for (const auto& run : runs) {
    const auto [predicted, fits] = held_out[&run];
    auto it = std::find_if(out.tables.begin(), out.tables.end(),
                           [&](const Table& t) { return t.title == run.table; });
    if (it == out.tables.end()) {
      out.tables.push_back(Table{
          run.table, run.metric == "tokens_per_s_per_gpu" ? "tokens/s/GPU" : "TFLOP/s/GPU", {}, {}, {}});
      it = out.tables.end() - 1;
    }
    it->add(fmt::format("{} [{} {}]{}", run.label, run.source, run.version,
                        fits ? "" : " (predicted not to fit)"),
            predicted, run.measured);
    if (!fits) ++out.not_fitting;
    out.overall.add(fmt::format("{}: {}", run.table, run.label), predicted, run.measured);
  }
  return out;
}

TEST(Accuracy, PublishedRunsOutOfSample) {
  const PublishedTables t = published_tables();
  std::string summary =
      "### Out-of-sample summary (published_runs.csv, leave-one-source-out)\n\n| table | runs | MAPE | "
      "Spearman |\n|---|---|---|---|\n";
  for (const Table& table : t.tables) {
    publish(table);
    summary += fmt::format("| {} | {} | {:.1f} % | {:.2f} |\n", table.title, table.rows.size(), table.mape(),
                           table.spearman());
  }
  summary += fmt::format("| all | {} | {:.1f} % | {:.2f} |\n\n", t.overall.rows.size(), t.overall.mape(),
                         t.overall.spearman());
  auto fractions = [](const Fitted& f) {
    std::string s;
    for (const auto& [family, value] : f)
      s += fmt::format("{}{} {:.3f}", s.empty() ? "" : ", ", family.empty() ? "pooled" : family, value);
    return s;
  };
  summary += "| held-out source | sustained fraction fitted on the other sources |\n|---|---|\n";
  for (const auto& [source, f] : t.folds) summary += fmt::format("| {} | {} |\n", source, fractions(f));
  summary += fmt::format("| (none: fitted on all, shipped in assets/hardware) | {} |\n\n", fractions(t.all));
  report() += summary;
  std::ofstream(std::string(MESHSCOPE_TEST_OUTPUT) + "/accuracy.md") << report();
  ASSERT_GE(t.overall.rows.size(), 80u);
  // What holds today, leave-one-source-out (docs/ACCURACY.md states the target, MAPE < 10 % per table of at
  // least five runs, met by every table since the Triton attention kernel is modelled as Dao 2023 measured
  // it).
  const std::map<std::string, double> max_mape = {{"megatron-bridge", 10.0},
                                                  {"nemo-h100-fp8", 5.0},
                                                  {"mpt-a100", 5.0},
                                                  {"mpt-a100-long-sequence", 10.0},
                                                  {"mpt-a100-sequence-sweep", 10.0},
                                                  {"mpt-h100", 10.0},
                                                  {"megatron-2021-weak-scaling", 7.0},
                                                  {"llama3-405b", 7.0}};
  for (const Table& table : t.tables) {
    ASSERT_TRUE(max_mape.count(table.title)) << table.title;
    EXPECT_LT(table.mape(), max_mape.at(table.title)) << table.title;
    if (table.rows.size() >= 5) {
      EXPECT_GE(table.spearman(), 0.7) << table.title;
    }
  }
  EXPECT_LT(t.overall.mape(), 7.0);
  EXPECT_GT(t.overall.spearman(), 0.95);
  // The presets ship the fractions fitted on every source (assets/hardware, sustained_fraction).
  for (const char* name : {"a100-80gb", "h100-sxm", "gb200"}) {
    const HardwareSpec hw = load_hardware(name);
    EXPECT_NEAR(hw.sustained_fraction, sustained_for(t.all, hw.family), 0.002) << name;
  }
  // Runs that ran must fit: one does not (Nemotron-340B on 128 H100, whose recipe settings NeMo 24.07 did not
  // publish with the table).
  EXPECT_LE(t.not_fitting, 1);
}

// Mixture-of-experts runs (published_moe_runs.csv) are evaluation only: predicted with the constants shipped
// in assets/hardware (fitted on the dense runs above), never fitted to. docs/ACCURACY.md "Mixture of experts"
// gives the tables this writes and what the model still misses. The bounds below hold today so that a change
// that makes MoE worse fails; they are far from the target (MAPE < 10 %).
TEST(Accuracy, MoeRunsOutOfSample) {
  const std::vector<PublishedRun> runs = published_runs("published_moe_runs.csv");
  ASSERT_GE(runs.size(), 30u);
  Table rack{"MoE, NVL72 racks (GB200, GB300): Megatron-Bridge 25.11-26.02.01", "tokens/s/GPU", {}, {}, {}};
  Table nodes{
      "MoE, 8-GPU nodes (B200, B300, H100): Megatron-Bridge 25.11-26.02.01", "tokens/s/GPU", {}, {}, {}};
  Table all{"MoE, all", "tokens/s/GPU", {}, {}, {}};
  int not_fitting = 0;
  double log_bias = 0;
  for (const PublishedRun& run : runs) {
    Prediction p;
    predict_into(run.m, run.hw, run.c, run.eff, p);
    const double predicted = p.tokens_per_s / run.c.gpus;
    const std::string label =
        fmt::format("{} [{}; {} dispatcher, CUDA graphs {}; TP{} PP{} EP{} VP{} MBS{}]{}", run.label,
                    run.version, run.dispatcher, run.cuda_graphs, run.c.tp, run.c.pp, run.c.ep,
                    run.c.virtual_stages, run.c.micro_batch, p.fits ? "" : " (predicted not to fit)");
    (run.hw.gpus_per_node >= 72 ? rack : nodes).add(label, predicted, run.measured);
    all.add(label, predicted, run.measured);
    log_bias += std::log(predicted / run.measured) / runs.size();
    if (!p.fits) ++not_fitting;
  }
  publish(rack);
  publish(nodes);
  report() += fmt::format(
      "### MoE summary (published_moe_runs.csv, shipped constants)\n\n| table | runs | MAPE | Spearman |\n"
      "|---|---|---|---|\n| NVL72 racks | {} | {:.1f} % | {:.2f} |\n| 8-GPU nodes | {} | {:.1f} % | {:.2f} "
      "|\n"
      "| all | {} | {:.1f} % | {:.2f} |\n\nMean log error {:+.1f} % (predicted faster than measured when "
      "positive); {} run(s) predicted not to fit.\n\n",
      rack.rows.size(), rack.mape(), rack.spearman(), nodes.rows.size(), nodes.mape(), nodes.spearman(),
      all.rows.size(), all.mape(), all.spearman(), 100 * (std::exp(log_bias) - 1), not_fitting);
  std::ofstream(std::string(MESHSCOPE_TEST_OUTPUT) + "/accuracy.md") << report();
  EXPECT_LT(rack.mape(), 10.0);
  EXPECT_LT(nodes.mape(), 65.0);
  EXPECT_LT(all.mape(), 40.0);
  EXPECT_EQ(not_fitting, 0);
}

}  // namespace
}  // namespace meshscope::model
