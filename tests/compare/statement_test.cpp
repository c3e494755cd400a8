// What the user states a profile ran (analysis/compare/statement.hpp; `meshscope annotate`, `import --model
// --hardware --layout`): the layout text, the statement stored in the profile's meta table and read back,
// what it does to the inferred workload, and `annotate`, `info` and `compare` on a real Nsight Systems export
// that records neither shapes nor a GPU name (nsys_nccl/mfu_2gpu_after: two ranks of a data-parallel job).

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "analysis/compare/statement.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_meta.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

using test::Result;
using test::run;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh copy of the imported Nsight export, for a test that changes it.
fs::path nsys_copy(const std::string& name) {
  const fs::path imported = test::shared_trace("nsys-nccl", "nsys_nccl/mfu_2gpu_after.sqlite");
  const fs::path copy = fs::path(MESHSCOPE_TEST_TMP) / (name + ".msdb");
  fs::copy_file(imported, copy, fs::copy_options::overwrite_existing);
  return copy;
}

std::string one_line_error(const std::function<void()>& work) {
  try {
    work();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(StatedLayout, ReadsEveryKeyInAnyOrderAndWritesThemBackInOne) {
  const StatedLayout l =
      parse_layout(" dp = 8,tp=2, micro-batch=4,mode=inference,,seq=4096,global_batch=256,ep=2 ");
  EXPECT_EQ(l.tp, 2);
  EXPECT_EQ(l.dp, 8);
  EXPECT_EQ(l.ep, 2);
  EXPECT_EQ(l.micro_batch, 4);
  EXPECT_EQ(l.seq, 4096);
  EXPECT_EQ(l.global_batch, 256);
  EXPECT_EQ(l.mode, model::Mode::kInference);
  EXPECT_FALSE(l.pp || l.cp);
  EXPECT_EQ(layout_text(l), "tp=2,dp=8,ep=2,micro_batch=4,seq=4096,global_batch=256,mode=inference");
  EXPECT_EQ(layout_text(parse_layout(layout_text(l))), layout_text(l));
  EXPECT_TRUE(parse_layout("").empty());
  EXPECT_EQ(layout_text(StatedLayout{}), "");
}

TEST(StatedLayout, RefusesWhatIsNotALayoutInOneSentence) {
  auto error = [](const char* text) { return one_line_error([&] { parse_layout(text); }); };
  EXPECT_EQ(error("tp=0"), "layout 'tp=0': tp must be a whole number from 1 to 1048576, not '0'");
  EXPECT_EQ(error("tp=2x"), "layout 'tp=2x': tp must be a whole number from 1 to 1048576, not '2x'");
  EXPECT_EQ(error("pp=99999999999999999999"),
            "layout 'pp=99999999999999999999': pp must be a whole number from 1 to 1048576, not "
            "'99999999999999999999'");
  EXPECT_EQ(
      error("zero=1"),
      "layout 'zero=1': unknown key 'zero' (keys: tp, pp, dp, cp, ep, micro_batch, seq, global_batch, mode)");
  EXPECT_EQ(error("tp"),
            "layout 'tp': 'tp' is not KEY=VALUE (keys: tp, pp, dp, cp, ep, micro_batch, seq, "
            "global_batch, mode)");
  EXPECT_EQ(error("mode=serving"),
            "layout 'mode=serving': mode must be training or inference, not 'serving'");
}

TEST(Statement, StoredInTheProfileReadBackAndReplacesWhatWasInferred) {
  const fs::path path = nsys_copy("stated");
  {
    const Profile p = Profile::load(path);
    EXPECT_TRUE(stated(p).empty());
    const Workload w = infer_workload(p, load_work(p));
    EXPECT_FALSE(w.transformer);
    EXPECT_FALSE(w.dp);  // only the default process group recorded: the layout is not shown
    EXPECT_TRUE(w.stated.empty());
  }
  Statement s;
  s.model = model::load_model("llama3-8b");
  s.hardware = model::load_hardware("a100-40gb");
  s.layout = parse_layout("tp=2,dp=1,seq=2048,mode=inference");
  update_meta(path, meta_changes(s));
  const Profile p = Profile::load(path);
  const Statement back = stated(p);
  ASSERT_TRUE(back.model && back.hardware);
  EXPECT_EQ(model::model_toml(*back.model), model::model_toml(*s.model));
  EXPECT_EQ(model::hardware_toml(*back.hardware), model::hardware_toml(*s.hardware));
  EXPECT_EQ(layout_text(back.layout), "tp=2,dp=1,seq=2048,mode=inference");
  EXPECT_EQ(statement_line(back),
            "model llama3-8b (32 layers, hidden 4096, 32 heads (8 kv), ffn 14336, vocab 128256); hardware "
            "a100-40gb; layout tp=2,dp=1,seq=2048,mode=inference");

  const Workload w = infer_workload(p, load_work(p));
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.dp, 1);
  EXPECT_EQ(w.seq, 2048);
  EXPECT_EQ(w.training, std::optional<bool>(false));
  ASSERT_TRUE(w.stated_model && w.stated_hardware);
  EXPECT_EQ(w.stated, (std::vector<std::string>{"model llama3-8b", "hardware a100-40gb", "tp 2", "dp 1",
                                                "sequence length 2048", "inference"}));
  model::ModelSpec m;
  ASSERT_TRUE(inferred_model(w, m));
  EXPECT_EQ(m.name, "llama3-8b");
  EXPECT_EQ(m.seq, 2048);  // the stated sequence, not the preset's 8192

  // Stating nothing removes what was stated.
  update_meta(path, meta_changes(Statement{}));
  EXPECT_TRUE(stated(Profile::load(path)).empty());
}

TEST(Statement, AStoredValueThatIsNoStatementIsRefusedNamingTheProfile) {
  const fs::path path = nsys_copy("stated-hostile");
  update_meta(path, {{std::string(kStatedModelKey), std::string("name = \"x\"\nlayers = \"many\"\n")}});
  const Profile p = Profile::load(path);
  const std::string error = one_line_error([&] { stated(p); });
  EXPECT_EQ(error.rfind(path.string() + ": the stated workload it holds is not valid (", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_NE(error.find("state it again with meshscope annotate"), std::string::npos) << error;
  const Result info = run("info \"" + path.string() + "\"", true);
  EXPECT_EQ(info.status, 1);
  EXPECT_EQ(info.out, "meshscope: " + error + "\n");

  update_meta(path, {{std::string(kStatedModelKey), std::nullopt},
                     {std::string(kStatedLayoutKey), std::string(70'000, 'x')}});
  EXPECT_EQ(one_line_error([&] { stated(Profile::load(path)); }),
            path.string() +
                ": the profile's meta 'stated_layout' holds 70000 bytes, more than a statement of "
                "what ran ever takes");
}

TEST(Annotate, StatesWhatTheExportCannotTellAndCompareUsesIt) {
  const fs::path path = nsys_copy("annotate");
  const std::string quoted = "\"" + path.string() + "\"";
  const Result before = run("compare " + quoted, true);
  EXPECT_EQ(before.status, 1);
  EXPECT_NE(before.out.find("or store them in the profile with `meshscope annotate PROFILE --model"),
            std::string::npos)
      << before.out;
  EXPECT_EQ(run("annotate " + quoted).out, path.string() + ": nothing stated\n");

  const Result said =
      run("annotate " + quoted + " --model gpt --hardware a100-40gb --layout dp=2,micro_batch=4");
  ASSERT_EQ(said.status, 0) << said.out;
  EXPECT_EQ(said.out,
            path.string() +
                ": model gpt (24 layers, hidden 2048, 16 heads (16 kv), ffn 8192, vocab 51200); hardware "
                "a100-40gb; layout dp=2,micro_batch=4\n");
  // The keys given replace the stated ones; the others stay.
  const Result more = run("annotate " + quoted + " --layout seq=1024,micro-batch=2,mode=training");
  EXPECT_NE(more.out.find("layout dp=2,micro_batch=2,seq=1024,mode=training\n"), std::string::npos)
      << more.out;

  const Result info = run("info " + quoted);
  EXPECT_NE(
      info.out.find("stated      model gpt; hardware a100-40gb; dp 2; micro-batch 2; sequence length 1024; "
                    "training (meshscope annotate)\n"),
      std::string::npos)
      << info.out;
  const Result json = run("info --json " + quoted);
  EXPECT_NE(json.out.find(R"("stated": {
      "model": "gpt",
      "layout": "dp=2,micro_batch=2,seq=1024,mode=training"
    })"),
            std::string::npos)
      << json.out;

  const Result text = run("compare " + quoted, true);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("vs gpt on 2 x a100-40gb\n"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find("  stated in the profile: model gpt; hardware a100-40gb; dp 2; micro-batch 2; sequence "
                    "length 1024; training\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("global batch 4 x seq 1024, 1 micro-batches of 2"), std::string::npos) << text.out;
  const Result compared = run("compare --json " + quoted);
  ASSERT_EQ(compared.status, 0);
  EXPECT_NE(compared.out.find(R"("stated": {
    "model": true,
    "hardware": true,
    "layout": [
      "dp",
      "micro_batch",
      "seq",
      "mode"
    ]
  })"),
            std::string::npos)
      << compared.out;
  // A flag still wins over what is stated.
  const Result flagged =
      run("compare " + quoted + " --model llama3-8b --hardware h100-sxm --mode training", true);
  EXPECT_NE(flagged.out.find("vs llama3-8b on 2 x h100-sxm\n"), std::string::npos) << flagged.out;
  const Result mode = run("compare " + quoted + " --mode inference", true);
  EXPECT_EQ(mode.status, 1);
  EXPECT_NE(
      mode.out.find("the profile ran training steps (stated in the profile), so it is not compared with "
                    "inference"),
      std::string::npos)
      << mode.out;

  EXPECT_EQ(run("annotate " + quoted + " --clear").out, path.string() + ": nothing stated\n");
  EXPECT_EQ(run("compare " + quoted).status, 1);
}

TEST(Annotate, RefusalsAreOneLineAndLeaveTheProfileAsItWas) {
  const fs::path path = nsys_copy("annotate-refusals");
  const std::string quoted = "\"" + path.string() + "\"";
  const std::string bytes = slurp(path);
  const Result layout = run("annotate " + quoted + " --layout tp=0", true);
  EXPECT_EQ(layout.status, 1);
  EXPECT_EQ(layout.out, "meshscope: layout 'tp=0': tp must be a whole number from 1 to 1048576, not '0'\n");
  const Result model = run("annotate " + quoted + " --model gpt-17", true);
  EXPECT_EQ(model.status, 1);
  EXPECT_EQ(model.out.rfind("meshscope: unknown model preset 'gpt-17': use one of ", 0), 0u) << model.out;
  EXPECT_EQ(slurp(path), bytes);

  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0";
  const Result on_trace = run("annotate \"" + trace.string() + "\" --model gpt", true);
  EXPECT_EQ(on_trace.status, 1);
  EXPECT_EQ(on_trace.out,
            "meshscope: " + trace.string() +
                ": annotate writes into a profile, and this is a trace or a folder of traces: import "
                "it with `meshscope import " +
                trace.string() + " -o JOB.msdb --model ... --layout ...`\n");
  const fs::path not_profile = fs::path(MESHSCOPE_TEST_TMP) / "not-a-profile.msdb";
  std::ofstream(not_profile) << "hello";
  const Result bad = run("annotate \"" + not_profile.string() + "\" --model gpt", true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out.find('\n'), bad.out.size() - 1) << bad.out;
  EXPECT_EQ(slurp(not_profile), "hello");
}

TEST(Annotate, ImportStoresTheStatementWithTheProfile) {
  const fs::path out = fs::path(MESHSCOPE_TEST_TMP) / "imported-stated.msdb";
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys_nccl/mfu_2gpu_after.sqlite";
  const Result bad =
      run("import \"" + trace.string() + "\" -o \"" + out.string() + "\" --layout tp=two", true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_FALSE(fs::exists(out));
  const Result r = run("import -q \"" + trace.string() + "\" -o \"" + out.string() +
                           "\" --model llama3-8b --hardware h100-sxm --layout tp=2,mode=training",
                       true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(
      run("annotate \"" + out.string() + "\"").out,
      out.string() +
          ": model llama3-8b (32 layers, hidden 4096, 32 heads (8 kv), ffn 14336, vocab 128256); hardware "
          "h100-sxm; layout tp=2,mode=training\n");
}

}  // namespace
}  // namespace meshscope::compare
