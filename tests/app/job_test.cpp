// One job opened for a front end (job/job.hpp): what the user gave made one profile (traces imported into the
// cache), and each thing read or derived from it computed once and kept; the workload inferred from the
// summaries is the one the events give.
#include "job/job.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/measure/work.hpp"
#include "job/profile_work.hpp"
#include "profiler/error.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;

// A cache of this test's own: the jobs' traces are imported there.
fs::path use_scratch_cache(const std::string& name) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  return dir;
}

fs::path shared_trace(const char* relative) {
  return fs::path(MESHSCOPE_SHARED_DIR) / "traces" / relative;
}

// The workload the events give, as compare inferred it before a job kept one.
compare::Workload workload_of_events(Job& job) {
  return compare::infer_workload(
      job.profile(),
      load_work(job.profile(), {.kernel_shares = false, .lowest_rank_only = true, .uncounted_shapes = true}));
}

void expect_same_workload(const compare::Workload& a, const compare::Workload& b, const std::string& trace) {
  EXPECT_EQ(a.transformer, b.transformer) << trace;
  EXPECT_EQ(a.hidden, b.hidden) << trace;
  EXPECT_EQ(a.layers, b.layers) << trace;
  EXPECT_EQ(a.heads, b.heads) << trace;
  EXPECT_EQ(a.kv_heads, b.kv_heads) << trace;
  EXPECT_EQ(a.vocab, b.vocab) << trace;
  EXPECT_EQ(a.ffn, b.ffn) << trace;
  EXPECT_EQ(a.training, b.training) << trace;
  EXPECT_EQ(a.hardware, b.hardware) << trace;
  EXPECT_EQ(a.gpu, b.gpu) << trace;
  EXPECT_EQ(a.precision, b.precision) << trace;
  EXPECT_EQ(a.tp, b.tp) << trace;
  EXPECT_EQ(a.dp, b.dp) << trace;
  EXPECT_EQ(a.evidence, b.evidence) << trace;
}

TEST(Job, TracesAreImportedOnceAndWhatIsDerivedIsKept) {
  use_scratch_cache("job-kept");
  const fs::path trace = shared_trace("tracelens/h100_qwen1.5_0.5b_inference.json.gz");
  Job job = Job::open({trace});
  EXPECT_TRUE(job.input().imported);
  EXPECT_EQ(job.title(), sources_title({trace}));
  EXPECT_TRUE(fs::exists(job.path()));
  ASSERT_NE(job.summary(), nullptr);  // imported with its summaries
  EXPECT_EQ(job.summary()->ranks.size(), job.description().ranks().size());
  EXPECT_EQ(&job.description(), &job.description());
  EXPECT_EQ(&job.profile(), &job.profile());
  EXPECT_EQ(&job.work(), &job.work());
  EXPECT_EQ(&job.analysis(), &job.analysis());
  EXPECT_EQ(&job.workload(), &job.workload());
  EXPECT_TRUE(job.workload().transformer);
  EXPECT_EQ(job.workload().hidden, 1024);  // Qwen1.5-0.5B's hidden size (its config.json)
  EXPECT_GT(job.work().ops.size(), 0u);
  EXPECT_EQ(job.analysis().ranks.size(), job.profile().ranks().size());
}

// The workload is inferred from the description and summaries when the profile has them: the same as from the
// events, on traces of one rank and of several, with and without shapes.
TEST(Job, TheWorkloadFromSummariesIsTheWorkloadFromEvents) {
  use_scratch_cache("job-workload");
  for (const char* relative :
       {"tracelens/h100_qwen1.5_0.5b_inference.json.gz", "kineto/resnet50_num_workers_4",
        "hta/trace_diff/test/test.json.gz", "hta/trace_filter", "nsys_nccl/mfu_2gpu_after.sqlite",
        "tracelens/mi300_resnet_act_checkpoint.json.gz"}) {
    Job job = Job::open({shared_trace(relative)});
    ASSERT_NE(job.summary(), nullptr) << relative;
    const compare::Workload from_summaries = job.workload();
    expect_same_workload(from_summaries, workload_of_events(job), relative);
  }
}

// What the view shows beside the timeline (the measured model, critical paths, pipeline) is derived by the
// job once, from the same analysis; a job over a profile in memory (the view's replay) derives the same from
// it.
TEST(Job, TheViewsResultsAreDerivedOnceAndAlikeForAProfileInMemory) {
  use_scratch_cache("job-view");
  Job job = Job::open({shared_trace("kineto/resnet50_num_workers_0")});
  const auto complete = job.shared_complete_profile();
  EXPECT_EQ(&job.profile(), complete.get()) << "the complete profile serves the analyses once loaded";
  EXPECT_EQ(job.shared_analysis(), job.shared_analysis());
  EXPECT_EQ(&job.measured(), &job.measured());
  EXPECT_EQ(job.critical_paths(), job.critical_paths());
  EXPECT_EQ(job.pipeline(), job.pipeline());
  EXPECT_EQ(
      job.measured().steps.steps.size(),
      compare::measure_profile(*complete, job.analysis(), load_work(*complete, {.uncounted_shapes = true}))
          .steps.steps.size());
  ASSERT_EQ(job.critical_paths()->ranks.size(), complete->ranks().size());

  Job in_memory = Job::of_profile(complete, job.shared_summary());
  EXPECT_EQ(&in_memory.profile(), complete.get());
  EXPECT_EQ(&in_memory.complete_profile(), complete.get());
  EXPECT_EQ(in_memory.summary(), job.summary());
  EXPECT_EQ(in_memory.analysis().ranks.size(), job.analysis().ranks.size());
  for (std::size_t r = 0; r < complete->ranks().size(); ++r) {
    EXPECT_EQ(in_memory.analysis().ranks[r].total.busy_ns, job.analysis().ranks[r].total.busy_ns);
    ASSERT_EQ(in_memory.critical_paths()->ranks[r].steps.size(), job.critical_paths()->ranks[r].steps.size());
    for (std::size_t s = 0; s < job.critical_paths()->ranks[r].steps.size(); ++s)
      EXPECT_EQ(in_memory.critical_paths()->ranks[r].steps[s].segments.size(),
                job.critical_paths()->ranks[r].steps[s].segments.size());
  }
  EXPECT_EQ(in_memory.measured().steps.steps.size(), job.measured().steps.steps.size());
}

// A summarised profile's ranks read a few at a time through the job's reader (the view's lazy ranks) are the
// ranks of the whole load, event for event; a profile without summaries has no reader.
TEST(Job, TheRankReaderReadsTheRanksTheWholeLoadHolds) {
  use_scratch_cache("job-rank-reader");
  Job job = Job::open({shared_trace("hta/trace_filter")});  // two ranks, sampled by HTA's trace filter
  std::optional<RankReader> reader = job.rank_reader();
  ASSERT_TRUE(reader.has_value());
  const Profile& whole = job.complete_profile();
  ASSERT_EQ(whole.ranks().size(), 2u);
  std::shared_ptr<const std::vector<std::string>> strings = job.description().strings();
  for (const Rank& want : whole.ranks()) {
    const auto got = reader->read({want.rank}, strings);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0]->rank, want.rank);
    EXPECT_EQ(loaded_rows(*got[0]), loaded_rows(want)) << "rank " << want.rank;
    EXPECT_EQ(loaded_rows(*got[0]), summary_rows(*find_rank(*job.summary(), want.rank)))
        << "rank " << want.rank;
  }
  EXPECT_GT(reader->index().probes, 0);

  Job without = Job::of_profile(job.shared_complete_profile(), nullptr);
  EXPECT_FALSE(without.rank_reader().has_value());
}

TEST(Job, AFileThatIsNoProfileIsRefusedOnOneLine) {
  const fs::path dir = use_scratch_cache("job-refused");
  const fs::path bogus = dir / "bogus.msdb";
  std::ofstream(bogus) << "not a database";
  Job job = Job::open({bogus});
  EXPECT_FALSE(job.input().imported);
  try {
    job.description();
    FAIL() << "a file that is no profile was opened";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("bogus.msdb"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace meshscope
