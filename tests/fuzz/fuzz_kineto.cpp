// libFuzzer harness: the Kineto importer on one input file, through the whole import (rank assignment,
// writer, commit), then Profile::load on what it wrote. Built twice: fuzz_kineto_memory reads the input whole
// (simdjson On-Demand); fuzz_kineto_streaming (MESHSCOPE_FUZZ_STREAMING) reads it in chunks whose size the
// first input byte picks (1 byte to 64 KiB, powers of two: every value straddles chunk boundaries somewhere).
// Findings: a crash, a sanitizer report, a timeout, or an accepted trace that writes an unloadable profile.
#include <cstdint>

#include "collectors/import/kineto/kineto_importer.hpp"
#include "profiler/profile_writer.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::fs::path input = fuzz::scratch() / "trace.json";
  const fuzz::fs::path output = fuzz::scratch() / "out.msdb";
  kineto::ImportSettings settings;
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
  } catch (const Error&) {
    return 0;  // refused with one line: fine
  }
  fuzz::must_load(output);
  return 0;
}
