// `meshscope record` with a fake command (meshscope_fake_rank, which drives the NCCL plugin as NCCL would),
// the merge of per-rank profiles with clock alignment, and crash recovery.
#include <gtest/gtest.h>

#include <cctype>
#include <iterator>
#include <sstream>
#include <string_view>

#include "profiler/profile.hpp"
#include "profiler/record/merge.hpp"
#include "tests/collectors/collectors_test_util.hpp"

namespace meshscope::test {
namespace {

TEST(AlignClocks, MediansOfMatchedEndsAlongATree) {
  std::vector<record::CollectiveEnd> ends;
  // Host b runs 5 ms ahead, host c 2 ms behind; c shares collectives only with b. Ends jitter by a few
  // hundred ns, and one outlier instance must not move the median.
  for (int seq = 0; seq < 9; ++seq) {
    const std::int64_t t = 1'000'000'000 + seq * 1'000'000;
    ends.push_back({"a", "world", seq, t + (seq % 3) * 100});
    ends.push_back({"b", "world", seq, t + 5'000'000 + (seq == 4 ? 900'000 : 0)});
    ends.push_back({"b", "pp", seq, t + 5'000'000 + 50});
    ends.push_back({"c", "pp", seq, t - 2'000'000});
  }
  ends.push_back({"d", "lonely", 0, 7});
  const auto a = record::align_clocks(ends, "a");
  EXPECT_EQ(a.reference, "a");
  EXPECT_NEAR(static_cast<double>(a.offset_ns.at("b")), -5'000'000.0, 200.0);
  EXPECT_NEAR(static_cast<double>(a.offset_ns.at("c")), 2'000'150.0, 200.0);
  EXPECT_EQ(a.offset_ns.at("a"), 0);
  EXPECT_EQ(a.matches.at("b"), 9);
  EXPECT_EQ(a.unaligned, std::vector<std::string>{"d"});
  EXPECT_EQ(a.offset_ns.at("d"), 0);
}

TEST(Record, RunsTheCommandAndMergesAlignedJobProfile) {
  const fs::path dir = fresh_dir("record-job");
  // 4 ranks on 2 pretend hosts; the second host's clock runs 5 ms ahead. Every rank stamps its collectives
  // from the same base (the time the fake launcher spawns them), as GPUs finishing one collective do.
  const auto r =
      run_process({MESHSCOPE_BINARY, "record", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK, "--spawn", "4",
                   "--hosts", "2", "--collectives", "20", "--skew-ns-per-host", "5000000"},
                  clean_env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("recorded 4 ranks (4 files, 0 GPU activities, 100 collectives)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Collectives"), std::string::npos) << "the report follows:\n" << r.output;
  const fs::path job = dir / "job.msdb";
  ASSERT_TRUE(fs::exists(job));
  EXPECT_EQ(
      query_rows(job, "SELECT rank, world_size, rank_source, backend FROM ranks ORDER BY rank"),
      "0|4|recorded:RANK|nccl\n1|4|recorded:RANK|nccl\n2|4|recorded:RANK|nccl\n3|4|recorded:RANK|nccl\n");
  // The offsets that undo the skew are stored, and the collectives' ends now coincide across hosts.
  const std::int64_t offset = query_int(job, "SELECT clock_offset_ns FROM ranks WHERE rank = 2");
  EXPECT_NEAR(static_cast<double>(offset), -5'000'000.0, 1'000.0);
  EXPECT_EQ(query_int(job, "SELECT clock_offset_ns FROM ranks WHERE rank = 1"), 0);
  EXPECT_EQ(query_int(job, "SELECT clock_offset_ns FROM ranks WHERE rank = 3"), offset);
  EXPECT_LT(query_int(job,
                      "SELECT max(spread) FROM (SELECT max(end_ns) - min(end_ns) AS spread FROM collectives"
                      " WHERE seq IS NOT NULL GROUP BY communicator, seq)"),
            2'000);
  // The communicator's member list, assembled from every rank's position.
  EXPECT_EQ(query_text(job, "SELECT DISTINCT ranks_json FROM process_groups"), "[0, 1, 2, 3]");
  EXPECT_EQ(
      query_int(job, "SELECT count(*) FROM diagnostics WHERE message LIKE 'clock of fakehost1 shifted%'"), 1);
  const Profile p = Profile::load(job);
  EXPECT_EQ(p.ranks().size(), 4u);
  EXPECT_EQ(p.world_size(), 4);
}

TEST(Record, ForwardsTheExitStatus) {
  const fs::path dir = fresh_dir("record-status");
  const auto r = run_process({MESHSCOPE_BINARY, "record", "-q", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK,
                              "--collectives", "3", "--exit-code", "3"},
                             clean_env());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(fs::exists(dir / "job.msdb"));  // a failed run's profile is still merged
  const auto missing =
      run_process({MESHSCOPE_BINARY, "record", "-o", dir.string(), "--", "/nonexistent/train"}, clean_env());
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.output.find("cannot run /nonexistent/train"), std::string::npos) << missing.output;
  const auto no_command = run_process({MESHSCOPE_BINARY, "record", "-o", dir.string()}, clean_env());
  EXPECT_EQ(no_command.exit_code, 1) << no_command.output;
}

TEST(Record, ForwardsSignalsAndRecoversTheInterruptedRank) {
  const fs::path dir = fresh_dir("record-signal");
  const auto r = run_process({MESHSCOPE_BINARY, "record", "-q", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK,
                              "--collectives", "5", "--exit", "wait-signal"},
                             clean_env(), [](pid_t pid, const fs::path& out) {
                               ASSERT_TRUE(wait_for_text(out, "ready"));
                               ::kill(pid, SIGTERM);  // to meshscope, which passes it on
                             });
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.output;
  const fs::path job = dir / "job.msdb";
  ASSERT_TRUE(fs::exists(job)) << r.output;
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM collectives"), 5);
  EXPECT_EQ(
      query_int(job, "SELECT count(*) FROM diagnostics WHERE message LIKE '%recovered what it had flushed%'"),
      1);
}

TEST(Record, KilledRanksLeaveProfilesThatMerge) {
  const fs::path dir = fresh_dir("record-kill");
  const auto r = run_process({MESHSCOPE_BINARY, "record", "-q", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK,
                              "--spawn", "2", "--collectives", "7", "--exit", "kill-late"},
                             clean_env());
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.output;
  const fs::path job = dir / "job.msdb";
  ASSERT_TRUE(fs::exists(job)) << r.output;
  EXPECT_EQ(query_rows(job, "SELECT rank, count(*) FROM collectives WHERE seq IS NOT NULL GROUP BY rank"),
            "0|7\n1|7\n");
  // Merging again (--merge-only) gives the same job profile.
  const auto again =
      run_process({MESHSCOPE_BINARY, "record", "-q", "--merge-only", "-o", dir.string()}, clean_env());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM collectives"), 14 + 2);
}

TEST(Record, FindsCommittedAndLeftBehindFilesOnly) {
  const fs::path dir = fresh_dir("record-find");
  for (const char* name :
       {"rank0.nccl.1.msdb", ".rank1.nccl.2.msdb.tmp-2-00ff", ".rank1.nccl.2.msdb.tmp-2-00ff-wal",
        ".rank1.nccl.2.msdb.tmp-2-00ff-shm", "job.msdb", "notes.txt"}) {
    std::ofstream(dir / name) << "x";
  }
  const auto files = record::find_rank_files(dir, dir / "job.msdb");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), ".rank1.nccl.2.msdb.tmp-2-00ff");
  EXPECT_EQ(files[1].filename(), "rank0.nccl.1.msdb");
}

// Processes still running with MESHSCOPE_OUTPUT_DIR=DIR in their environment: the ranks of a job recording
// into DIR (and the guardian between meshscope record and the command).
int job_processes(const fs::path& dir) {
  const std::string marker = "MESHSCOPE_OUTPUT_DIR=" + fs::absolute(dir).string();
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = env.find('\0', at);
      const std::string_view var(env.data() + at, (end == std::string::npos ? env.size() : end) - at);
      if (var == marker) ++count;
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return count;
}

bool wait_until_gone(const fs::path& dir, std::chrono::seconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (job_processes(dir) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Waits until the output at PATH holds TEXT COUNT times.
bool wait_for_count(const fs::path& path, const std::string& text, int count) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(path);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int found = 0;
    for (std::size_t at = content.find(text); at != std::string::npos; at = content.find(text, at + 1))
      ++found;
    if (found >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// meshscope record's own SIGTERM or SIGHUP (a scheduler stopping the job, a closed terminal): every rank of
// the job gets it, flushes and ends, and what they wrote is merged. Was: only the launcher got it; its ranks
// ran on as orphans and their profiles were not merged.
TEST(Record, ItsOwnStopReachesEveryRankAndWhatTheyWroteIsMerged) {
  for (const int sig : {SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    const fs::path dir = fresh_dir("record-stop-" + std::to_string(sig));
    const auto r = run_process({MESHSCOPE_BINARY, "record", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK,
                                "--spawn", "4", "--collectives", "5", "--exit", "wait-signal"},
                               clean_env(), [&](pid_t pid, const fs::path& out) {
                                 ASSERT_TRUE(wait_for_count(out, "ready", 4));
                                 ::kill(pid, sig);
                               });
    EXPECT_EQ(r.exit_code, 128 + SIGTERM)
        << r.output;  // the launcher's status: a hang-up stops it as SIGTERM
    EXPECT_NE(r.output.find("stopped by signal " + std::to_string(sig) + "; merging what the ranks wrote"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(job_processes(dir), 0) << "the ranks outlived meshscope record";
    const fs::path job = dir / "job.msdb";
    ASSERT_TRUE(fs::exists(job)) << r.output;
    EXPECT_EQ(query_rows(job, "SELECT rank, count(*) FROM collectives WHERE seq IS NOT NULL GROUP BY rank"),
              "0|5\n1|5\n2|5\n3|5\n");
  }
}

// Killed outright (SIGKILL: no handler runs), meshscope record still takes the job with it: the guardian of
// the job's process group stops every rank, which flush what they have; --merge-only merges it.
TEST(Record, KilledOutrightItTakesTheJobWithIt) {
  const fs::path dir = fresh_dir("record-sigkill");
  const auto r = run_process({MESHSCOPE_BINARY, "record", "-q", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK,
                              "--spawn", "2", "--collectives", "4", "--exit", "wait-signal"},
                             clean_env(), [&](pid_t pid, const fs::path& out) {
                               ASSERT_TRUE(wait_for_count(out, "ready", 2));
                               ::kill(pid, SIGKILL);
                             });
  EXPECT_EQ(r.signal, SIGKILL);
  // Was: the ranks ran on for their full 30 s wait.
  EXPECT_TRUE(wait_until_gone(dir, std::chrono::seconds(10))) << job_processes(dir) << " processes left";
  EXPECT_FALSE(fs::exists(dir / "job.msdb"));
  const auto again =
      run_process({MESHSCOPE_BINARY, "record", "-q", "--merge-only", "-o", dir.string()}, clean_env());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(query_rows(dir / "job.msdb",
                       "SELECT rank, count(*) FROM collectives WHERE seq IS NOT NULL GROUP BY rank"),
            "0|4\n1|4\n");
}

// A command that leaves a process of its own behind is not waited for forever, and a job in its own process
// group still sees the signals meshscope record is sent (SIGUSR1 here: passed on, not acted upon).
TEST(Record, TheJobRunsInItsOwnProcessGroup) {
  const fs::path dir = fresh_dir("record-group");
  const auto r =
      run_process({MESHSCOPE_BINARY, "record", "-q", "--no-merge", "-o", dir.string(), "--", "/bin/sh", "-c",
                   "echo group $(ps -o pgid= -p $$) shell $$; echo parent-group $(ps -o pgid= -p $PPID)"},
                  clean_env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The shell's group is its parent's (the guardian's) pid: not meshscope record's group.
  std::istringstream words(r.output);
  std::string word, group, parent_group;
  while (words >> word) {
    if (word == "group") words >> group;
    if (word == "parent-group") words >> parent_group;
  }
  EXPECT_FALSE(group.empty()) << r.output;
  EXPECT_EQ(group, parent_group) << r.output;
  EXPECT_NE(group, std::to_string(::getpgrp())) << r.output;
}

}  // namespace
}  // namespace meshscope::test
