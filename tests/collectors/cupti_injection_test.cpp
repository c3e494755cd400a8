// The CUPTI injection library's whole life without a GPU: meshscope_fake_rank --cuda loads it the way the
// CUDA driver does (CUDA_INJECTION64_PATH, InitializeInjection) and plays the GPU through a CUPTI test double
// (fake_cupti.cpp) that the injection library loads in place of libcupti. What is checked here is everything
// between CUPTI and the profile: subscription and stepping aside, the timestamp callback and its fallback,
// buffer requests, caps and drop accounting, flushes on device reset, SIGTERM and exit, forked children, and
// `meshscope record` merging the CUDA and NCCL collectors' profiles of a multi-host job.
#ifdef MESHSCOPE_FAKE_CUPTI_DIR

#include <gtest/gtest.h>

#include <cupti.h>

#include <chrono>
#include <regex>

#include "profiler/profile.hpp"
#include "tests/collectors/collectors_test_util.hpp"

namespace meshscope::test {
namespace {

// An environment in which the injection library loads the CUPTI double and writes into DIR.
std::map<std::string, std::string> cuda_env(const fs::path& dir) {
  auto env = clean_env();
  env["LD_LIBRARY_PATH"] = MESHSCOPE_FAKE_CUPTI_DIR;
  env["CUDA_INJECTION64_PATH"] = MESHSCOPE_CUPTI_LIBRARY;
  env["MESHSCOPE_OUTPUT_DIR"] = dir.string();
  for (const char* fake :
       {"FAKE_CUPTI_HOLDER", "FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "FAKE_CUPTI_UNSUPPORTED_KINDS",
        "FAKE_CUPTI_NO_API_FILTER", "MESHSCOPE_CUPTI_ALL_APIS"})
    env[fake] = "";
  return env;
}

// The "fake_cuda: kernels=16 ..." line the fake rank prints: what it offered CUPTI and what CUPTI stored.
std::map<std::string, long> emitted(const std::string& output) {
  std::map<std::string, long> counts;
  const auto at = output.find("fake_cuda: kernels=");
  if (at == std::string::npos) return counts;
  const std::string line = output.substr(at, output.find('\n', at) - at);
  const std::regex pair(R"((\w+)=(\d+))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator(); ++it) {
    counts[(*it)[1]] = std::stol((*it)[2]);
  }
  return counts;
}

std::int64_t kind_count(const fs::path& db, int kind) {
  return query_int(db, "SELECT count(*) FROM activities WHERE kind = " + std::to_string(kind));
}

// The diagnostics number that follows TEXT in a message matching LIKE, or -1.
long diagnostic_number(const fs::path& db, const std::string& like, const std::string& before_number) {
  const std::string message =
      query_text(db, "SELECT message FROM diagnostics WHERE message LIKE '" + like + "' LIMIT 1");
  const auto at = message.find(before_number);
  if (at == std::string::npos) return -1;
  return std::stol(message.substr(at + before_number.size()));
}

constexpr std::int64_t kBase = 1'800'000'000'000'000'000;  // 2027-01-15, a fixed GPU time for exact checks

TEST(CuptiInjection, RecordsEveryActivityKindOnTheProfileClock) {
  const fs::path dir = fresh_dir("cupti-kinds");
  const auto r =
      run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "12", "--base-ns", std::to_string(kBase)},
                  cuda_env(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sent = emitted(r.output);
  ASSERT_EQ(sent.at("offered"), sent.at("stored")) << r.output;
  const auto files = files_in(dir, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  const fs::path db = files[0];

  EXPECT_EQ(kind_count(db, 1), sent.at("kernels"));
  EXPECT_EQ(kind_count(db, 2), sent.at("memcpys"));
  EXPECT_EQ(kind_count(db, 3), sent.at("memsets"));
  EXPECT_EQ(kind_count(db, 4), sent.at("syncs"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM activities WHERE graph_id = 7"), sent.at("graph_kernels"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM api_calls"), sent.at("runtime") + sent.at("driver"));
  EXPECT_EQ(query_rows(db,
                       "SELECT s.value, count(*) FROM api_calls a JOIN strings s ON s.id = a.name "
                       "GROUP BY s.value ORDER BY s.value"),
            "cuLaunchKernelEx|12\ncudaGraphLaunch|3\ncudaLaunchKernel|9\ncudaMemcpyAsync|3\n"
            "cudaStreamSynchronize|12\n");
  // Kernel names demangled; the NCCL kernel runs exactly over the collective's GPU time.
  EXPECT_EQ(query_rows(db,
                       "SELECT DISTINCT s.value FROM activities a JOIN strings s ON s.id = a.name "
                       "WHERE a.kind = 1 ORDER BY 1"),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\n"
            "void gemm_tile<128>(float const*, float const*, float*, int)\n");
  EXPECT_EQ(query_rows(
                db, "SELECT a.start_ns - " + std::to_string(kBase) + ", a.end_ns - " + std::to_string(kBase) +
                        ", a.stream, a.grid_x, a.block_x, a.registers, a.shared_bytes FROM activities a "
                        "JOIN strings s ON s.id = a.name WHERE s.value LIKE 'nccl%' ORDER BY a.start_ns "
                        "LIMIT 2"),
            "0|400000|13|132|256|128|81920\n1000000|1400000|13|132|256|128|81920\n");
  // Kernels link to the API calls that launched them.
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM activities a JOIN api_calls c ON c.correlation = a.correlation "
                      "WHERE a.kind = 1"),
            sent.at("kernels"));
  // NVTX: one range per step plus the mark, in the default domain.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM ranges WHERE kind = 6"),
            sent.at("ranges") + sent.at("marks"));
  EXPECT_EQ(query_text(db,
                       "SELECT s.value FROM ranges r JOIN strings s ON s.id = r.category WHERE r.kind = 6 "
                       "LIMIT 1"),
            "NVTX");
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.category "
                      "WHERE s.value = 'cupti_overhead'"),
            sent.at("overheads"));
  EXPECT_EQ(query_rows(db, "SELECT name, sm_count, compute_major FROM devices"),
            "NVIDIA H100 80GB HBM3 (fake)|132|9\n");
  EXPECT_EQ(query_text(db, "SELECT name FROM threads"), "pt_main_thread");
  EXPECT_EQ(query_text(db, "SELECT value FROM meta WHERE key = 'cupti_api_version'"),
            std::to_string(CUPTI_API_VERSION));
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM diagnostics WHERE message = "
                      "'cupti: timestamps from the profile clock (CLOCK_REALTIME callback)'"),
            1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM diagnostics WHERE severity <> 'info'"), 0)
      << query_rows(db, "SELECT severity, message FROM diagnostics");
  const Profile p = Profile::load(db);
  EXPECT_EQ(p.ranks().size(), 1u);
}

TEST(CuptiInjection, WithoutTheTimestampCallbackShiftsCuptiTimeOntoTheProfileClock) {
  const fs::path dir = fresh_dir("cupti-shift");
  auto env = cuda_env(dir);
  env["FAKE_CUPTI_NO_TIMESTAMP_CALLBACK"] = "1";  // records come on CLOCK_MONOTONIC, another epoch
  const auto r = run_process(
      {MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "4", "--base-ns", std::to_string(kBase)}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto files = files_in(dir, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(query_int(files[0],
                      "SELECT count(*) FROM diagnostics WHERE message LIKE 'cupti: timestamps shifted by %'"),
            1);
  // Two clock reads apart at start: within a millisecond of the GPU time the test asked for.
  const std::int64_t first = query_int(
      files[0],
      "SELECT min(a.start_ns) FROM activities a JOIN strings s ON s.id = a.name WHERE s.value LIKE 'nccl%'");
  EXPECT_NEAR(static_cast<double>(first - kBase), 0.0, 1e6);
}

TEST(CuptiInjection, StepsAsideOnceWhenAnotherClientHoldsCupti) {
  const fs::path dir = fresh_dir("cupti-holder");
  auto env = cuda_env(dir);
  env["FAKE_CUPTI_HOLDER"] = "Nsight Systems";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "4"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string line = "meshscope[cupti]: Nsight Systems already holds CUPTI in this process";
  const auto at = r.output.find(line);
  EXPECT_NE(at, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(line, at + 1), std::string::npos) << "said once";
  EXPECT_EQ(emitted(r.output).at("stored"), 0);
  EXPECT_TRUE(files_in(dir, "rank0.cupti.").empty());
  EXPECT_TRUE(files_in(dir, ".rank0.cupti.").empty());
}

TEST(CuptiInjection, NamesActivityKindsCuptiRefusesAndRecordsTheRest) {
  const fs::path dir = fresh_dir("cupti-kinds-refused");
  auto env = cuda_env(dir);
  env["FAKE_CUPTI_UNSUPPORTED_KINDS"] =
      std::to_string(CUPTI_ACTIVITY_KIND_MEMCPY2) + "," + std::to_string(CUPTI_ACTIVITY_KIND_OVERHEAD);
  env["MESHSCOPE_CUPTI_DRIVER_API"] = "0";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "8"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sent = emitted(r.output);
  EXPECT_EQ(sent.at("driver"), 0);
  EXPECT_EQ(sent.at("overheads"), 0);
  const auto files = files_in(dir, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(query_text(files[0], "SELECT message FROM diagnostics WHERE severity = 'warning'"),
            "cupti: activity kinds not available: peer memcpy (CUPTI_ERROR_NOT_COMPATIBLE), overhead "
            "(CUPTI_ERROR_NOT_COMPATIBLE)");
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM api_calls WHERE kind = 2"), 0);
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM api_calls"), sent.at("runtime"));
  EXPECT_EQ(kind_count(files[0], 2), sent.at("memcpys"));
  EXPECT_EQ(query_int(files[0],
                      "SELECT count(*) FROM activities WHERE copy_kind IN "
                      "(SELECT id FROM strings WHERE value = 'PtoP')"),
            0);
}

// One fake rank recorded with driver calls by callback and EXTRA in its environment: its output and profile.
struct CallbackRun {
  std::string output;
  std::map<std::string, long> sent;
  fs::path profile;
};
CallbackRun record_driver_callbacks(const std::string& name,
                                    const std::map<std::string, std::string>& extra) {
  const fs::path dir = fresh_dir(name);
  auto env = cuda_env(dir);
  env["MESHSCOPE_CUPTI_DRIVER_API"] = "2";
  for (const auto& [key, value] : extra) env[key] = value;
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "8"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto files = files_in(dir, "rank0.cupti.");
  EXPECT_EQ(files.size(), 1u) << r.output;
  return {r.output, emitted(r.output), files.empty() ? fs::path() : files[0]};
}

// MESHSCOPE_CUPTI_DRIVER_API=2: driver calls through CUPTI's callback API, not its DRIVER activity kind
// (which makes CUPTI wrap every driver call: docs/PERFORMANCE.md, "Measured on an H200"). The same rows come
// out: each launch call with its name and correlation id (its kernel finds it), on the thread CUPTI names for
// the runtime calls, the quiet functions left out; a CUPTI that refuses the callbacks gets the activity kind.
TEST(CuptiInjection, DriverCallsByCallbackGiveTheSameRows) {
  const std::string launches =
      "SELECT count(*) FROM api_calls c JOIN strings s ON s.id = c.name WHERE c.kind = 2 AND s.value = "
      "'cuLaunchKernelEx' AND c.end_ns >= c.start_ns AND c.start_ns > 0";
  const std::string launched_kernels =
      "SELECT count(*) FROM activities a JOIN api_calls c ON c.rank = a.rank AND c.correlation = "
      "a.correlation "
      "WHERE a.kind = 1 AND c.kind = 2";
  // Stamped at the call on the profile clock (within 10 minutes of now).
  const std::string stamped_now = "SELECT count(*) FROM api_calls WHERE kind = 2 AND abs(start_ns - " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                     std::chrono::system_clock::now().time_since_epoch())
                                                     .count()) +
                                  ") < 600000000000";
  const CallbackRun run = record_driver_callbacks("cupti-driver-callbacks", {});
  ASSERT_FALSE(run.profile.empty());
  EXPECT_EQ(run.sent.at("driver"), 0);  // no DRIVER activity records
  EXPECT_EQ(run.sent.at("driver_launches"), 8);
  const fs::path& db = run.profile;
  EXPECT_EQ(query_int(db, launches), 8) << query_rows(db, "SELECT * FROM api_calls WHERE kind = 2");
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM api_calls WHERE kind = 2"), 8);
  EXPECT_EQ(query_int(db, launched_kernels), 8);  // each NCCL kernel's launch
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT tid) FROM api_calls"), 1);
  EXPECT_EQ(query_int(db, stamped_now), 8);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM diagnostics WHERE message = 'cupti: driver API calls recorded "
                      "through CUPTI''s callback API (MESHSCOPE_CUPTI_DRIVER_API=2), not its DRIVER "
                      "activity kind'"),
            1)
      << query_rows(db, "SELECT message FROM diagnostics");
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM diagnostics WHERE severity = 'warning'"), 0);

  // CUPTI's own clock shifted onto the profile clock: the calls' times, read on it already, are not shifted.
  const CallbackRun shifted =
      record_driver_callbacks("cupti-driver-callbacks-shifted", {{"FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1"}});
  EXPECT_EQ(query_int(shifted.profile, stamped_now), 8);

  // Every driver function when asked for.
  const CallbackRun all =
      record_driver_callbacks("cupti-driver-callbacks-all", {{"MESHSCOPE_CUPTI_ALL_APIS", "1"}});
  EXPECT_EQ(
      query_rows(all.profile,
                 "SELECT s.value, count(*) FROM api_calls c JOIN strings s ON s.id = c.name WHERE c.kind "
                 "= 2 GROUP BY 1 ORDER BY 1"),
      "cuDevicePrimaryCtxGetState|8\ncuLaunchKernelEx|8\n");

  // A CUPTI without domain callbacks: the activity kind stands in.
  const CallbackRun refused =
      record_driver_callbacks("cupti-driver-callbacks-refused", {{"FAKE_CUPTI_NO_DOMAIN_CALLBACKS", "1"}});
  EXPECT_EQ(refused.sent.at("driver"), 8);
  EXPECT_EQ(query_int(refused.profile, launches), 8);
  EXPECT_EQ(query_int(refused.profile, launched_kernels), 8);
  EXPECT_NE(refused.output.find("driver API callbacks refused (CUPTI_ERROR_NOT_SUPPORTED): driver calls are "
                                "recorded as CUPTI activity records instead"),
            std::string::npos)
      << refused.output;
}

// Functions that do no GPU work (PyTorch's cudaGetDevice, cuDevicePrimaryCtxGetState, ...) are left out at
// the source, said once in the diagnostics; MESHSCOPE_CUPTI_ALL_APIS=1 records them; a CUPTI that cannot
// leave out single functions records every call and says so.
TEST(CuptiInjection, LeavesOutApiFunctionsThatDoNoGpuWork) {
  const std::string getters =
      "SELECT count(*) FROM api_calls c JOIN strings s ON s.id = c.name WHERE s.value IN ('cudaGetDevice', "
      "'cuDevicePrimaryCtxGetState')";
  const fs::path quiet = fresh_dir("cupti-quiet-apis");
  auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "8"}, cuda_env(quiet));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto files = files_in(quiet, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(query_int(files[0], getters), 0);
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM api_calls"),
            emitted(r.output).at("runtime") + emitted(r.output).at("driver"));
  EXPECT_EQ(query_int(files[0],
                      "SELECT count(*) FROM api_calls c JOIN strings s ON s.id = c.name WHERE s.value = "
                      "'cudaLaunchKernel'"),
            6);
  EXPECT_EQ(
      query_int(files[0],
                "SELECT count(*) FROM diagnostics WHERE severity = 'info' AND message LIKE 'cupti: 55 API "
                "functions that do no GPU work are not recorded (cudaGetDevice, %MESHSCOPE_CUPTI_ALL_APIS=1 "
                "records them)'"),
      1)
      << query_rows(files[0], "SELECT message FROM diagnostics");

  const fs::path all = fresh_dir("cupti-all-apis");
  auto env = cuda_env(all);
  env["MESHSCOPE_CUPTI_ALL_APIS"] = "1";
  r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "8"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  files = files_in(all, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(
      query_rows(files[0],
                 "SELECT s.value, count(*) FROM api_calls c JOIN strings s ON s.id = c.name WHERE s.value IN "
                 "('cudaGetDevice', 'cuDevicePrimaryCtxGetState') GROUP BY 1 ORDER BY 1"),
      "cuDevicePrimaryCtxGetState|8\ncudaGetDevice|24\n");
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM diagnostics WHERE message LIKE '%API functions%'"), 0);

  const fs::path old_cupti = fresh_dir("cupti-no-api-filter");
  env = cuda_env(old_cupti);
  env["FAKE_CUPTI_NO_API_FILTER"] = "1";
  r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "8"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  files = files_in(old_cupti, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(query_int(files[0], getters), 32);
  EXPECT_EQ(query_text(files[0], "SELECT message FROM diagnostics WHERE message LIKE '%API call%'"),
            "cupti: every API call is recorded: this CUPTI cannot leave out single functions "
            "(CUPTI_ERROR_NOT_SUPPORTED)");
}

TEST(CuptiInjection, DisabledByEnvironmentWritesNothing) {
  const fs::path dir = fresh_dir("cupti-off");
  auto env = cuda_env(dir);
  env["MESHSCOPE_CUPTI"] = "0";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "4"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(emitted(r.output).at("stored"), 0);
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(CuptiInjection, BoundedBuffersDropAndCountEveryLostRecord) {
  const fs::path dir = fresh_dir("cupti-cap");
  auto env = cuda_env(dir);
  // Two 64 KiB buffers at most, and a burst far faster than the writer: CUPTI must drop, and every record is
  // either in the profile or counted as dropped.
  env["MESHSCOPE_CUPTI_BUFFER_KB"] = "64";
  env["MESHSCOPE_CUPTI_MAX_BUFFERS"] = "2";
  const auto r =
      run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "4", "--cuda-burst", "200000"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sent = emitted(r.output);
  const long refused_by_cupti = sent.at("offered") - sent.at("stored");
  ASSERT_GT(refused_by_cupti, 0) << r.output;
  const auto files = files_in(dir, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  const fs::path db = files[0];
  EXPECT_EQ(diagnostic_number(db, "cupti: CUPTI dropped %", "CUPTI dropped "), refused_by_cupti)
      << query_rows(db, "SELECT severity, message FROM diagnostics");
  const long lost_in_queue = diagnostic_number(db, "cupti: dropped % buffers with %", "buffers with ");
  EXPECT_EQ(kind_count(db, 1), sent.at("kernels") - std::max(lost_in_queue, 0L));
  EXPECT_GT(diagnostic_number(db, "cupti: refused %", "refused "), 0);
}

TEST(CuptiInjection, DeviceResetFlushesAtOnceAndAKilledProcessKeepsIt) {
  const fs::path dir = fresh_dir("cupti-reset");
  auto env = cuda_env(dir);
  env["MESHSCOPE_FLUSH_MS"] = "600000";  // no periodic flush: only the reset can write the records now
  long expected_kernels = -1;
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "6", "--cuda-reset"}, env,
                             [&](pid_t pid, const fs::path& out) {
                               ASSERT_TRUE(wait_for_text(out, "ready"));
                               std::ifstream in(out);
                               std::stringstream text;
                               text << in.rdbuf();
                               expected_kernels = emitted(text.str()).at("kernels");
                               // The records reach the profile's journal while the process lives on.
                               const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                               std::int64_t seen = -1;
                               while (std::chrono::steady_clock::now() < until) {
                                 const auto tmp = files_in(dir, ".rank0.cupti.", ".tmp-");
                                 if (!tmp.empty()) {
                                   try {
                                     seen = kind_count(tmp[0], 1);
                                   } catch (const std::exception&) {
                                     seen = -1;  // schema not committed yet
                                   }
                                 }
                                 if (seen == expected_kernels) break;
                                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                               }
                               EXPECT_EQ(seen, expected_kernels);
                               ::kill(pid, SIGKILL);
                             });
  EXPECT_EQ(r.signal, SIGKILL);
  const auto merged =
      run_process({MESHSCOPE_BINARY, "record", "-q", "--merge-only", "-o", dir.string()}, cuda_env(dir));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(kind_count(dir / "job.msdb", 1), expected_kernels);
}

TEST(CuptiInjection, SigtermFlushesThenEndsTheProcessAsBefore) {
  const fs::path dir = fresh_dir("cupti-sigterm");
  auto env = cuda_env(dir);
  env["MESHSCOPE_FLUSH_MS"] = "600000";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "6", "--exit", "wait-signal"},
                             env, [&](pid_t pid, const fs::path& out) {
                               ASSERT_TRUE(wait_for_text(out, "ready"));
                               ::kill(pid, SIGTERM);
                             });
  EXPECT_EQ(r.signal, SIGTERM) << r.output;
  const auto sent = emitted(r.output);
  const auto merged =
      run_process({MESHSCOPE_BINARY, "record", "-q", "--merge-only", "-o", dir.string()}, cuda_env(dir));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(kind_count(dir / "job.msdb", 1), sent.at("kernels"));
  EXPECT_EQ(query_int(dir / "job.msdb", "SELECT count(*) FROM api_calls"),
            sent.at("runtime") + sent.at("driver"));
}

TEST(CuptiInjection, AForkedChildLeavesTheParentsProfileAlone) {
  const fs::path dir = fresh_dir("cupti-fork");
  const auto r =
      run_process({MESHSCOPE_FAKE_RANK, "--cuda", "--collectives", "4", "--cuda-fork"}, cuda_env(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fake_cuda: child exit 0"), std::string::npos) << r.output;
  const auto files = files_in(dir, "rank0.cupti.");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files_in(dir, ".rank0.").empty()) << "no journal left behind";
  EXPECT_EQ(kind_count(files[0], 1), emitted(r.output).at("kernels"));
}

TEST(CuptiInjection, RecordMergesCudaAndNcclProfilesOfAMultiHostJob) {
  const fs::path dir = fresh_dir("cupti-record");
  auto env = cuda_env(dir);
  env["CUDA_INJECTION64_PATH"] = "";  // record sets both collectors' paths itself
  env["MESHSCOPE_OUTPUT_DIR"] = "";
  // The ranks stamp their GPU work from one base, taken when the fake launcher spawns them (fake_rank.cpp).
  const auto r =
      run_process({MESHSCOPE_BINARY, "record", "-o", dir.string(), "--", MESHSCOPE_FAKE_RANK, "--spawn", "4",
                   "--hosts", "2", "--cuda", "--collectives", "12", "--skew-ns-per-host", "3000000"},
                  env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path job = dir / "job.msdb";
  ASSERT_TRUE(fs::exists(job)) << r.output;
  EXPECT_EQ(files_in(dir, "rank", ".cupti.").size(), 4u);
  EXPECT_EQ(files_in(dir, "rank", ".nccl.").size(), 4u);
  // Every collective found the NCCL kernel it ran as, on its own rank.
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM collectives WHERE seq IS NOT NULL"), 48);
  EXPECT_EQ(
      query_int(job,
                "SELECT count(*) FROM collectives c JOIN activities a ON a.id = c.activity_id "
                "JOIN strings s ON s.id = a.name WHERE a.rank = c.rank AND s.value LIKE 'ncclDevKernel%'"),
      48);
  // One clock: the second host's offset moved its CUDA activities too, so the NCCL kernels of one collective
  // end together on all four ranks.
  EXPECT_NEAR(static_cast<double>(query_int(job, "SELECT clock_offset_ns FROM ranks WHERE rank = 3")), -3e6,
              1e3);
  EXPECT_LT(
      query_int(job,
                "SELECT max(spread) FROM (SELECT max(a.end_ns) - min(a.end_ns) AS spread FROM collectives c "
                "JOIN activities a ON a.id = c.activity_id WHERE c.seq IS NOT NULL GROUP BY c.seq)"),
      2'000);
  EXPECT_EQ(query_int(job, "SELECT count(DISTINCT rank) FROM devices"), 4);
  // The report that record prints sees the GPU time and the communication.
  EXPECT_NE(r.output.find("recorded 4 ranks (8 files"), std::string::npos) << r.output;
  const auto report = run_process({MESHSCOPE_BINARY, "report", "--json", job.string()}, {});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("\"ranks\""), std::string::npos);
}

// CUPTI receives NVTX ranges only when NVTX_INJECTION64_PATH names the libcupti it runs in (the CUPTI
// documentation's NVTX set-up): record sets it to the libcupti the dynamic loader will give the CUDA
// collector.
TEST(CuptiInjection, RecordRoutesNvtxToTheCollectorsLibcupti) {
  const fs::path dir = fresh_dir("cupti-nvtx-env");
  auto env = cuda_env(dir);
  env["CUDA_INJECTION64_PATH"] = "";
  env["NVTX_INJECTION64_PATH"] = "";
  const auto routed = run_process(
      {MESHSCOPE_BINARY, "record", "-q", "--no-merge", "-o", dir.string(), "--", "/usr/bin/env"}, env);
  ASSERT_EQ(routed.exit_code, 0) << routed.output;
  EXPECT_NE(routed.output.find("NVTX_INJECTION64_PATH=" +
                               (fs::path(MESHSCOPE_FAKE_CUPTI_DIR) / "libcupti.so.").string()),
            std::string::npos)
      << routed.output;
  EXPECT_NE(routed.output.find("CUDA_INJECTION64_PATH=" + std::string(MESHSCOPE_CUPTI_LIBRARY)),
            std::string::npos);

  env["NVTX_INJECTION64_PATH"] = "/opt/other/libnvtx-tool.so";  // someone else's NVTX tool is kept
  const auto kept =
      run_process({MESHSCOPE_BINARY, "record", "--no-merge", "-o", dir.string(), "--", "/usr/bin/env"}, env);
  EXPECT_NE(kept.output.find("NVTX_INJECTION64_PATH=/opt/other/libnvtx-tool.so"), std::string::npos)
      << kept.output;
  EXPECT_NE(kept.output.find("NVTX_INJECTION64_PATH is already set"), std::string::npos) << kept.output;

  env["NVTX_INJECTION64_PATH"] = "";
  env["MESHSCOPE_NVTX"] = "0";
  const auto off = run_process(
      {MESHSCOPE_BINARY, "record", "-q", "--no-merge", "-o", dir.string(), "--", "/usr/bin/env"}, env);
  EXPECT_EQ(off.output.find("NVTX_INJECTION64_PATH="), std::string::npos) << off.output;
}

}  // namespace
}  // namespace meshscope::test

#endif  // MESHSCOPE_FAKE_CUPTI_DIR
