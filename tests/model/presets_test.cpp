// Presets: every file loads, sources are stated, bad files fail with one line.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

TEST(Presets, AllPresetsLoadAndCiteSources) {
  EXPECT_EQ(hardware_presets(),
            (std::vector<std::string>{"a100-40gb", "a100-80gb", "a100-80gb-pcie", "a800",      "b200",
                                      "b300",      "gb200",     "gb300",          "h100-nvl",  "h100-pcie",
                                      "h100-sxm",  "h20",       "h200",           "h800",      "l4",
                                      "l40s",      "mi210",     "mi250",          "mi250x",    "mi300x",
                                      "mi325x",    "mi355x",    "v100",           "v100-16gb", "v100-pcie"}));
  const std::vector<std::string> models = model_presets();
  for (const char* name :
       {"gpt", "gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "deepseek-v3"})
    EXPECT_NE(std::find(models.begin(), models.end(), name), models.end()) << name;
  for (const auto& name : hardware_presets()) EXPECT_EQ(load_hardware(name).name, name);
  for (const auto& name : models) EXPECT_EQ(load_model(name).name, name);
  // Every number in a preset carries a "# source:" comment on the line before it.
  for (const char* folder : {"hardware", "models"}) {
    for (const auto& entry : std::filesystem::directory_iterator(assets_dir() / folder)) {
      std::ifstream in(entry.path());
      std::string line, previous;
      while (std::getline(in, line)) {
        const bool number = !line.empty() && line[0] != '#' && line.find('=') != std::string::npos &&
                            line.find('"') == std::string::npos && line.find("true") == std::string::npos &&
                            line.find("false") == std::string::npos;
        if (number && previous.rfind("# source:", 0) != 0 && previous.find('=') == std::string::npos)
          ADD_FAILURE() << entry.path() << ": no source for " << line;
        previous = line;
      }
    }
  }
}

// A profile stores the model and hardware a user states as TOML (model_toml, hardware_toml): read back, every
// preset is the same spec, field for field, with overrides applied before writing kept.
TEST(Presets, ModelAndHardwareWrittenAsTomlReadBackTheSame) {
  for (const auto& name : model_presets()) {
    ModelSpec m = load_model(name);
    ModelOverrides o;
    o.layers = m.layers + 1;
    o.seq = 1234;
    apply_overrides(m, o);
    const ModelSpec back = parse_model(model_toml(m), "stored");
    EXPECT_EQ(model_toml(back), model_toml(m)) << name;
    EXPECT_EQ(back.name, m.name);
    EXPECT_EQ(back.source, m.source);
    EXPECT_EQ(back.layers, load_model(name).layers + 1);
    EXPECT_EQ(back.seq, 1234);
    EXPECT_EQ(back.ffn_multiplier, m.ffn_multiplier) << name;
    EXPECT_EQ(back.moe_ffn, m.moe_ffn) << name;
    EXPECT_EQ(back.kv_lora_rank, m.kv_lora_rank) << name;
    EXPECT_EQ(back.gated_mlp, m.gated_mlp) << name;
  }
  for (const auto& name : hardware_presets()) {
    const HardwareSpec h = load_hardware(name);
    const HardwareSpec back = parse_hardware(hardware_toml(h), "stored");
    EXPECT_EQ(hardware_toml(back), hardware_toml(h)) << name;
    EXPECT_EQ(back.family, h.family) << name;
    EXPECT_EQ(back.peak_tflops_fp4, h.peak_tflops_fp4) << name;
    EXPECT_EQ(back.sustained_fraction, h.sustained_fraction) << name;
    EXPECT_EQ(back.inter_node_alpha_us, h.inter_node_alpha_us) << name;
    EXPECT_EQ(back.intra_node_link, h.intra_node_link) << name;
  }
}

// The scale-up link is named as its vendor names it: AMD's Instinct GPUs talk over Infinity Fabric (xGMI
// links: AMD Instinct MI300X data sheet), PCIe cards over PCIe (H100, A100 80GB and V100 PCIe without
// bridges; L40S, L4: no NVLink), NVIDIA's SXM boards over NVLink.
TEST(Presets, TheScaleUpLinkCarriesItsVendorsName) {
  const std::set<std::string> pcie_cards{"h100-pcie", "l40s", "l4", "a100-80gb-pcie", "v100-pcie"};
  for (const auto& name : hardware_presets()) {
    const HardwareSpec h = load_hardware(name);
    const std::string expected = h.family.rfind("cdna", 0) == 0 ? "Infinity Fabric (xGMI)"
                                 : pcie_cards.contains(name)    ? "PCIe"
                                                                : "NVLink";
    EXPECT_EQ(h.intra_node_link, expected) << name;
  }
}

TEST(Presets, HardwareMatchesPublishedSpecs) {
  // hardware_specs.csv: dense BF16 peak, HBM bandwidth.
  for (auto& r : testing::read_calibration_csv("hardware_specs.csv")) {
    const std::string gpu = r["gpu"];
    std::string preset = gpu.rfind("A100", 0) == 0     ? "a100-80gb"
                         : gpu.rfind("H100", 0) == 0   ? "h100-sxm"
                         : gpu.rfind("H200", 0) == 0   ? "h200"
                         : gpu.rfind("H800", 0) == 0   ? "h800"
                         : gpu.rfind("B200", 0) == 0   ? "b200"
                         : gpu.rfind("MI300X", 0) == 0 ? "mi300x"
                                                       : "";
    if (preset.empty()) continue;
    const HardwareSpec hw = load_hardware(preset);
    EXPECT_DOUBLE_EQ(hw.peak_tflops_bf16, std::stod(r["bf16_fp16_dense_tflops"])) << preset;
    EXPECT_DOUBLE_EQ(hw.hbm_tbps, std::stod(r["hbm_bw_TBps"])) << preset;
    EXPECT_DOUBLE_EQ(hw.intra_node_gbps * 2, std::stod(r["nvlink_or_fabric_total_GBps"])) << preset;
  }
}

TEST(Presets, NvlinkDomainsAndDensePeaks) {
  // GB200/GB300 NVL72: 72 GPUs in one NVLink domain, which group_shape() uses (an EP of 64 stays on NVLink).
  EXPECT_EQ(load_hardware("gb200").gpus_per_node, 72);
  EXPECT_EQ(load_hardware("gb300").gpus_per_node, 72);
  EXPECT_EQ(group_shape(64, 1, 72).nodes(), 1);
  // Dense peaks: FP8 = 2 x BF16 and FP4 = 2 x FP8 on Blackwell (hardware_specs.csv; sparse figures are 2x
  // these).
  for (const char* name : {"b200", "gb200"}) {
    const HardwareSpec hw = load_hardware(name);
    EXPECT_DOUBLE_EQ(hw.peak_tflops_fp8, 2 * hw.peak_tflops_bf16) << name;
    EXPECT_DOUBLE_EQ(hw.peak_tflops_fp4, 2 * hw.peak_tflops_fp8) << name;
  }
  EXPECT_DOUBLE_EQ(load_hardware("l40s").peak_tflops_bf16, 362.05);  // 733 is the sparse figure
  EXPECT_EQ(load_hardware("v100").peak_tflops_fp8, 0.0);
  EXPECT_EQ(load_hardware("h800").intra_node_gbps, 200.0);
}

TEST(Presets, VariantsCarryTheirPublishedFigures) {
  struct Figures {
    const char* preset;
    double bf16_dense, hbm_tbps, gib;
  };
  // NVIDIA H100 datasheet (PCIe and NVL columns: sparse figures halved), A100 datasheet (40GB SXM), V100
  // datasheet (SXM2 16 GB, PCIe 32 GB: 112 Tensor TFLOPS), A100 80GB PCIe column (1,935 GB/s), L4 datasheet
  // (242 sparse FP16 TFLOPS, 24 GB GDDR6 at 300 GB/s); AMD's MI210/MI250 table (AnandTech 17326) and MI250X
  // figures (383 TFLOPS, 128 GB, 3.2 TB/s per package), halved per die for the MI250 and MI250X, which
  // PyTorch shows as two devices each.
  for (const Figures& f :
       {Figures{"h100-pcie", 756.5, 2.0, 79.6}, Figures{"h100-nvl", 835.5, 3.9, 93.6},
        Figures{"a100-40gb", 312.0, 1.555, 40.0}, Figures{"v100-16gb", 125.0, 0.9, 15.8},
        Figures{"v100-pcie", 112.0, 0.9, 32.0}, Figures{"a100-80gb-pcie", 312.0, 1.935, 80.0},
        Figures{"l4", 121.0, 0.3, 22.4}, Figures{"mi210", 181.0, 1.6, 64.0},
        Figures{"mi250", 181.0, 1.6, 64.0}, Figures{"mi250x", 191.5, 1.6, 64.0}}) {
    const HardwareSpec hw = load_hardware(f.preset);
    EXPECT_DOUBLE_EQ(hw.peak_tflops_bf16, f.bf16_dense) << f.preset;
    EXPECT_DOUBLE_EQ(hw.hbm_tbps, f.hbm_tbps) << f.preset;
    EXPECT_DOUBLE_EQ(hw.hbm_capacity_gib, f.gib) << f.preset;
  }
  // FP8 tensor cores: Hopper has them (dense = 2 x BF16), Volta, Ampere and CDNA 2 have none.
  EXPECT_DOUBLE_EQ(load_hardware("h100-pcie").peak_tflops_fp8, 2 * 756.5);
  for (const char* none :
       {"v100-16gb", "v100-pcie", "a100-40gb", "a100-80gb-pcie", "mi210", "mi250", "mi250x"})
    EXPECT_EQ(load_hardware(none).peak_tflops_fp8, 0.0) << none;
  // H100 NVL: an NVLink domain of two bridged cards (600 GB/s total), PCIe Gen5 beyond it.
  EXPECT_EQ(load_hardware("h100-nvl").gpus_per_node, 2);
  EXPECT_DOUBLE_EQ(load_hardware("h100-nvl").intra_node_gbps, 300.0);
}

// Every preset states its FP32 peak, and its dense TF32 tensor peak exactly where the GPU has TF32: FP32
// operators are checked against the one or the other (measure::peak_for). Figures: NVIDIA's datasheets (A800,
// H100 NVL, Blackwell, Blackwell Ultra; sparse TF32 halved; the GB200 NVL72 page's rack totals / 72), the
// H800 and H20 specification tables resellers reproduce (no NVIDIA datasheet is public), AMD's MI200 table
// (FP32 matrix per die) and MI355X specifications. Volta and CDNA 2 have no TF32; CDNA 4 emulates it in
// software (no peak).
TEST(Presets, Fp32AndTf32PeaksWhereTheHardwareHasThem) {
  struct Peaks {
    const char* preset;
    double fp32, tf32;  // TFLOP/s per device, dense; tf32 0 = none
  };
  for (const Peaks& p :
       {Peaks{"a800", 19.5, 156.0}, Peaks{"h800", 67.0, 494.7}, Peaks{"h20", 44.0, 74.0},
        Peaks{"h100-nvl", 60.0, 417.5}, Peaks{"b200", 75.0, 1100.0}, Peaks{"b300", 75.0, 1100.0},
        Peaks{"gb200", 80.0, 1250.0}, Peaks{"gb300", 80.0, 1250.0}, Peaks{"mi250x", 47.85, 0.0},
        Peaks{"mi355x", 157.3, 0.0}, Peaks{"v100", 15.7, 0.0}, Peaks{"v100-pcie", 14.0, 0.0},
        Peaks{"a100-80gb-pcie", 19.5, 156.0}, Peaks{"l4", 30.3, 60.0}}) {
    const HardwareSpec hw = load_hardware(p.preset);
    EXPECT_DOUBLE_EQ(hw.peak_tflops_fp32, p.fp32) << p.preset;
    EXPECT_DOUBLE_EQ(hw.peak_tflops_tf32, p.tf32) << p.preset;
  }
  // And no preset is left without an FP32 peak.
  for (const std::string& name : hardware_presets())
    EXPECT_GT(load_hardware(name).peak_tflops_fp32, 0.0) << name;
}

TEST(Presets, BadInputSaysWhatToChange) {
  try {
    load_model("gpt4");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model preset 'gpt4': use one of"), std::string::npos);
  }
  EXPECT_THROW(load_hardware("tpu"), InvalidInput);
  EXPECT_THROW(parse_model("name = \"x\"\nlayers = [", "bad.toml"), InvalidInput);
  try {
    parse_model("name = \"x\"\nlayers = 2\nhidden = 64\nheads = 4\nffn = 256\nvocab = 10\nhiden = 3\n",
                "typo.toml");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), "typo.toml: unknown key 'hiden' (line 7)");
  }
  EXPECT_THROW(parse_model("name = \"x\"\nlayers = 2\n", "short.toml"), InvalidInput);
  EXPECT_THROW(load_model("/nonexistent/model.toml"), InvalidInput);
}

TEST(Presets, GptFlagsShapeTheGenericModel) {
  ModelSpec m = load_model("gpt");
  ModelOverrides o;
  o.hidden = 4096;
  o.heads = 32;
  o.layers = 32;
  apply_overrides(m, o);
  EXPECT_EQ(m.ffn, 4 * 4096);  // ffn = 4 x hidden follows --hidden
  EXPECT_EQ(m.kv_heads, 32);   // multi-head attention stays multi-head
  o = {};
  o.experts = 8;
  o.top_k = 2;
  apply_overrides(m, o);
  EXPECT_TRUE(m.is_moe());
  HardwareSpec hw = load_hardware("h100-sxm");
  HardwareOverrides ho;
  ho.gpus_per_node = 72;
  apply_overrides(hw, ho);
  EXPECT_EQ(hw.gpus_per_node, 72);
  ho.inter_node_gbps = -1;
  EXPECT_THROW(apply_overrides(hw, ho), InvalidInput);
}

}  // namespace
}  // namespace meshscope::model
