// Context parallelism's three ways of exchanging keys and values (Megatron-Core --cp-comm-type, Transformer
// Engine's context-parallel attention): a ring of K/V chunks overlapped with the attention (p2p; Liu et al.
// 2023), an all-gather of K and V with the gradients reduce-scattered, exposed (Llama Team 2024 §3.3.2), and
// DeepSpeed-Ulysses' all-to-alls of Q, K, V and O, exposed (Jacobs et al. 2023).
#include <gtest/gtest.h>

#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"

namespace meshscope::model {
namespace {

// Llama 3.1 405B at 128k tokens as Meta ran it (Llama Team 2024, Table 4: TP 8, CP 16, PP 16 on 16,384 H100,
// all-gather context parallelism).
ParallelConfig llama3_long(CpComm comm) {
  ParallelConfig c;
  c.gpus = 16384, c.tp = 8, c.cp = 16, c.pp = 16, c.seq = 131072, c.global_batch = 128, c.micro_batch = 1;
  c.schedule_set = true, c.schedule = Schedule::kInterleaved, c.virtual_stages = 8;
  c.cp_comm = comm;
  return c;
}

const ExplainTerm& term(const Prediction& p, const std::string& part) {
  for (const ExplainTerm& t : p.terms)
    if (t.part == part) return t;
  throw std::runtime_error("no term " + part);
}

TEST(ContextParallel, KeysAndValuesAreTheBytesOfTheGroupedHeads) {
  // 131,072 / 16 = 8,192 tokens per rank; 8 key/value heads of dim 128 (GQA), K and V in BF16, each TP rank
  // one of the 8 heads: 8,192 x 1 x 256 x 2 B = 4,194,304 B. Queries: 128 heads / 8 = 16 per TP rank,
  // 8,192 x 16 x 128 x 2 B = 33,554,432 B, the output the same.
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const ParallelConfig c = resolve(llama3_long(CpComm::kAllGather), m, hw);
  const Prediction p = predict(m, hw, c, defaults_for(hw), true);
  const ExplainTerm& cp = term(p, "cp_exposed");
  EXPECT_NE(cp.inputs.find("Q 33.6 MB, K+V 4.19 MB, O 33.6 MB"), std::string::npos) << cp.inputs;
  EXPECT_EQ(cp.name, "K/V all-gather + gradient reduce-scatter (exposed)");
}

TEST(ContextParallel, TheGatherAndTheAllToAllsAreExposedTheRingHides) {
  // Llama 3 70B at 64k tokens over CP 8 (64 query and 8 key/value heads: Ulysses can split both 8 ways).
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  auto run = [&](CpComm comm) {
    ParallelConfig c;
    c.gpus = 64, c.tp = 1, c.cp = 8, c.pp = 8, c.seq = 65536, c.global_batch = 16, c.micro_batch = 1;
    c.cp_comm = comm;
    return predict(m, hw, resolve(c, m, hw), eff);
  };
  const Prediction ring = run(CpComm::kRing), gather = run(CpComm::kAllGather), a2a = run(CpComm::kAllToAll);
  // The ring's K/V steps hide behind 8k x 64k of attention each; the other two wait for theirs.
  EXPECT_LT(ring.time.cp_exposed, 0.01 * ring.comm.cp);
  EXPECT_GT(gather.time.cp_exposed, 0);
  EXPECT_DOUBLE_EQ(gather.time.cp_exposed, gather.comm.cp);
  EXPECT_DOUBLE_EQ(a2a.time.cp_exposed, a2a.comm.cp);
  // Per rank and layer (8,192 tokens): K+V 8 heads x 256 x 2 B = 33.5 MB, Q and O 64 x 128 x 2 B = 134 MB
  // each. Ulysses moves Q, K+V and O forward and their gradients backward, 2 x 302 = 604 MB whatever cp is;
  // the gather moves cp x K+V three times (gather, gather again, reduce-scatter), 3 x 268 = 805 MB, growing
  // with cp: at CP 8 the all-to-alls already cost less.
  EXPECT_LT(a2a.comm.cp, gather.comm.cp);
  EXPECT_NEAR(a2a.comm.cp / gather.comm.cp, 604.0 / 805.0, 0.05);
  EXPECT_DOUBLE_EQ(gather.time.compute, ring.time.compute);
}

TEST(ContextParallel, AllToAllNeedsHeadsThatSplitOverTheGroup) {
  const ModelSpec m = load_model("llama3-8b");  // 32 query heads, 8 key/value heads
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 16, c.tp = 1, c.cp = 16, c.seq = 65536, c.global_batch = 16, c.cp_comm = CpComm::kAllToAll;
  try {
    resolve(c, m, hw);
    ADD_FAILURE() << "cp 16 all-to-all over 8 key/value heads was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(
        e.what(),
        "--cp-comm all-to-all with --cp 16: each rank's 32 query and 8 key/value heads (after --tp 1) "
        "must split 16 ways; use ring or all-gather, or a --cp that divides both");
  }
  c.cp = 8, c.gpus = 8, c.global_batch = 8;
  EXPECT_NO_THROW(resolve(c, m, hw));
  EXPECT_EQ(parse_cp_comm("a2a"), CpComm::kAllToAll);
  EXPECT_EQ(parse_cp_comm("p2p"), CpComm::kRing);
  EXPECT_EQ(parse_cp_comm("all_gather"), CpComm::kAllGather);
  EXPECT_THROW(parse_cp_comm("mesh"), InvalidInput);
}

}  // namespace
}  // namespace meshscope::model
