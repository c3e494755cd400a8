#include "job/import_job.hpp"

#include <optional>
#include <string>
#include <utility>

#include "analysis/measure/op_work.hpp"
#include "analysis/measure/summary.hpp"
#include "profiler/error.hpp"
#include "profiler/output_file.hpp"

namespace meshscope {

ImportSummary import_with_summaries(
    const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& output,
    ImportOptions options, const std::function<void(const std::filesystem::path& written)>& before_summaries,
    const std::function<void(const std::filesystem::path& written)>& then) {
  measure::ImportSummaries summaries;
  options.operator_work = measure::operator_work_formulas();
  options.each_rank_read = [&summaries](const std::filesystem::path& file, const RankRecords& rows) {
    summaries.add(file, rows);
  };
  std::optional<Error> summaries_failed;
  ImportSummary imported =
      import_traces(inputs, output, options,
                    [&](const std::filesystem::path& written, const std::filesystem::path& shown,
                        const ImportSummary& read) {
                      if (before_summaries)
                        with_output_named(written, shown, [&] { before_summaries(written); });
                      std::vector<std::pair<std::int32_t, std::string>> rank_files;
                      for (const ImportedRank& r : read.ranks) rank_files.emplace_back(r.rank, r.source_file);
                      try {
                        with_output_named(written, shown, [&] { summaries.write(written, rank_files); });
                      } catch (const Error& e) {
                        // The profile is complete without them (the write is one transaction): it is
                        // published.
                        if (then) throw;
                        summaries_failed = e;
                        return;
                      }
                      if (then) with_output_named(written, shown, [&] { then(written); });
                    });
  if (summaries_failed) throw *summaries_failed;
  return imported;
}

}  // namespace meshscope
