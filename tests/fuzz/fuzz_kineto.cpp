// libFuzzer harness: the Kineto importer on one input file, through the whole import (rank assignment,
// writer, commit), then Profile::load on what it wrote. Built twice: fuzz_kineto_memory reads the input whole
// (simdjson On-Demand); fuzz_kineto_streaming (MESHSCOPE_FUZZ_STREAMING) reads it in chunks whose size the
// first input byte picks (1 byte to 64 KiB, powers of two: every value straddles chunk boundaries somewhere).
// Findings: a crash, a sanitizer report, a timeout, or an accepted trace that writes an unloadable profile.
// The memory variant also reads the file into rows held in memory, as the import's reading threads do, and
// summarises its rank from them (measure::ImportSummaries): a summary other than the one the analysis of the
// written profile gives is a finding too.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "analysis/measure/op_work.hpp"
#include "analysis/measure/summary.hpp"
#include "collectors/import/kineto/kineto_importer.hpp"
#include "collectors/import/record_buffer.hpp"
#include "profiler/profile_writer.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

#ifndef MESHSCOPE_FUZZ_STREAMING
// The summary of the one rank of PROFILE (written from INPUT) computed from INPUT's rows held in memory must
// equal the one its events give once loaded (the figures info and diff read, and the matched collectives').
void check_summary_from_rows(const fuzz::fs::path& input, const fuzz::fs::path& profile, const RankInfo& info,
                             const kineto::ImportSettings& settings) {
  import::RecordBuffer rows;
  try {
    kineto::import_file(
        input, rows, [&](const fuzz::fs::path&, const kineto::FileMetadata&) { return info.rank; }, settings);
  } catch (const Error&) {
    std::fprintf(stderr, "the trace imported into a profile but not into rows held in memory\n");
    std::abort();
  }
  rows.resolve_cpu_collectives();
  rows.nest_ranges();
  const auto records = rows.rank_records(info);
  if (!records) return;  // rows the import writes directly
  measure::ImportSummaries summaries;
  summaries.add(profile, *records);
  const auto read = summaries.combined(Profile::load(profile, LoadOptions{.events = false}),
                                       {{info.rank, profile.string()}});
  if (!read) return;  // left to the pass: rows Profile::of_records refuses
  const Profile p = Profile::load(profile);
  const ProfileSummary whole = measure::summarize(p, measure::analyze(p));
  auto same = [](const RankSummary& a, const RankSummary& b) {
    return a.rank == b.rank && a.total.busy_ns == b.total.busy_ns &&
           a.total.exposed_comm_ns == b.total.exposed_comm_ns && a.step_source == b.step_source &&
           a.steps.size() == b.steps.size() && a.kernel_ns == b.kernel_ns &&
           a.kernels.size() == b.kernels.size() && a.ops.size() == b.ops.size() &&
           a.collectives.size() == b.collectives.size() && a.counts.kernel == b.counts.kernel &&
           a.counts.cpu_op == b.counts.cpu_op && a.counts.collective == b.counts.collective &&
           a.unlinked_activities == b.unlinked_activities && a.collective_wait_ns == b.collective_wait_ns &&
           a.overview.buckets.size() == b.overview.buckets.size();
  };
  if (read->ranks.size() != whole.ranks.size() ||
      (!whole.ranks.empty() && !same(read->ranks[0], whole.ranks[0]))) {
    std::fprintf(stderr, "the summary from the rows read differs from the analysis of the written profile\n");
    std::abort();
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  const fuzz::fs::path input = fuzz::scratch() / "trace.json";
  const fuzz::fs::path output = fuzz::scratch() / "out.msdb";
  kineto::ImportSettings settings;
  settings.operator_work = measure::operator_work_formulas();  // as the job imports
#ifdef MESHSCOPE_FUZZ_STREAMING
  if (size == 0) return 0;
  settings.streaming_threshold_bytes = 0;
  settings.stream_chunk_bytes = std::size_t{1} << (data[0] % 17);  // 1 byte to 64 KiB
  fuzz::write_file(input, data + 1, size - 1);
#else
  settings.streaming_threshold_bytes = std::uint64_t{1} << 40;  // always whole, whatever a gzip trailer says
  fuzz::write_file(input, data, size);
#endif
  try {
    // As import_traces does, on one thread (no background writer: a fuzzer wants executions per second).
    WriterOptions options;
    options.background = false;
    ProfileWriter writer(output, options);
    const auto result = kineto::import_file(
        input, writer,
        [](const fuzz::fs::path&, const kineto::FileMetadata& m) {
          return m.rank && *m.rank >= 0 && *m.rank <= kMaxRank ? static_cast<std::int32_t>(*m.rank) : 0;
        },
        settings);
    RankInfo info;
    info.rank = result.rank;
    info.source_file = "fuzz";
    info.clock_base_ns = result.metadata.base_time_ns;
    writer.set_rank(info);
    writer.commit();
#ifndef MESHSCOPE_FUZZ_STREAMING
    fuzz::must_load(output);
    check_summary_from_rows(input, output, info, settings);
    return 0;
#endif
  } catch (const Error&) {
    return 0;  // refused with one line: fine
  }
  fuzz::must_load(output);
  return 0;
}
