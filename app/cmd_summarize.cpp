// meshscope summarize: the per-rank summaries (analysis/measure/summary.hpp) for profiles that lack them, and
// the summarise-next-to-each-rank, merge-only-the-summaries path for jobs too large for one machine
// (docs/SCALE.md):
//   meshscope summarize PROFILE...                           add or refresh the summaries in place
//   meshscope summarize TRACE... -o PART.msdb [--summaries-only]  import, summarise (and drop the events)
//   meshscope summarize TRACES --rank-from-launcher --summaries-only -o FOLDER   (one process per rank)
//   meshscope summarize --merge PART... [--events TRACE...] -o JOB.msdb
//                                                            one job profile from the parts' summaries, with
//                                                            the events of the ranks whose traces are given
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/measure/summary.hpp"
#include "app/command.hpp"
#include "collectors/import/import.hpp"
#include "collectors/runtime/collector_runtime.hpp"
#include "job/import_job.hpp"
#include "profiler/error.hpp"
#include "profiler/summary_store.hpp"

namespace meshscope::app {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> inputs;
  std::string output;
  bool rank_from_launcher = false;
  bool summaries_only = false;
  bool merge = false;
  std::vector<std::string> events;
  bool quiet = false;
};

std::vector<fs::path> paths_as_given(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

// The paths V names, a folder standing for the profiles (*.msdb) inside it, in name order.
std::vector<fs::path> paths(const std::vector<std::string>& v) {
  std::vector<fs::path> out;
  for (const auto& p : v) {
    std::error_code error;
    if (!fs::is_directory(p, error)) {
      out.emplace_back(p);
      continue;
    }
    std::vector<fs::path> inside;
    for (const auto& entry : fs::directory_iterator(p, error)) {
      if (entry.path().extension() == ".msdb") inside.push_back(entry.path());
    }
    std::sort(inside.begin(), inside.end());
    if (inside.empty()) fail("{}: no profile (*.msdb) in this folder", p);
    out.insert(out.end(), inside.begin(), inside.end());
  }
  return out;
}

// Under a launcher (srun, torchrun, mpirun: collectors/runtime's identity_from_environment), each process
// summarises the trace of its own rank: the one among INPUTS whose file name states that rank, written as
// OUTPUT/part-<rank>.msdb.
void pick_own_rank(Options& o) {
  const record::Identity me = record::identity_from_environment();
  if (me.rank_source == "default")
    fail(
        "summarize --rank-from-launcher: no launcher rank in the environment (RANK, SLURM_PROCID, "
        "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or MESHSCOPE_RANK)");
  std::vector<fs::path> mine;
  for (const auto& trace : expand_trace_inputs(paths_as_given(o.inputs))) {
    if (rank_from_file_name(trace) == me.rank) mine.push_back(trace);
  }
  if (mine.empty())
    fail("summarize --rank-from-launcher: no trace named for rank {} ({}) among the inputs", me.rank,
         me.rank_source);
  std::error_code error;
  if (o.output.empty() || !fs::is_directory(o.output, error))
    fail("summarize --rank-from-launcher: -o must name an existing folder for the parts");
  o.inputs.clear();
  for (const auto& m : mine) o.inputs.push_back(m.string());
  o.output = (fs::path(o.output) / fmt::format("part-{}.msdb", me.rank)).string();
}

void summarize_in_place(const fs::path& input, bool quiet) {
  if (!meshscope::summarize_in_place(input)) {
    if (!quiet)
      std::printf("note: %s holds only summaries (its events were dropped): left as it is\n", input.c_str());
    return;
  }
  if (!quiet) std::printf("summarised %s\n", input.c_str());
}

void run(Options o) {
  if (o.rank_from_launcher) pick_own_rank(o);
  if (o.output.empty()) {
    if (o.merge || o.summaries_only || !o.events.empty())
      fail("summarize: --merge, --summaries-only and --events write a new profile: give -o OUT.msdb");
    for (const auto& input : o.inputs) summarize_in_place(input, o.quiet);
    return;
  }
  const fs::path output(o.output);
  if (o.merge) {
    if (o.summaries_only) fail("summarize: --summaries-only applies to one part, not to --merge");
    const auto parts = paths(o.inputs);
    const std::vector<std::int32_t> copied =
        merge_summary_parts_into(parts, paths_as_given(o.events), output);
    if (!o.quiet)
      std::printf("merged the summaries of %zu rank%s from %zu part%s%s into %s\n", copied.size(),
                  copied.size() == 1 ? "" : "s", parts.size(), parts.size() == 1 ? "" : "s",
                  o.events.empty() ? ""
                                   : fmt::format(", with the events of {} trace file{}", o.events.size(),
                                                 o.events.size() == 1 ? "" : "s")
                                         .c_str(),
                  output.c_str());
    return;
  }
  if (!o.events.empty()) fail("summarize: --events is for --merge (the traces given are imported whole)");
  std::function<void(const fs::path&)> then;
  if (o.summaries_only) then = [](const fs::path& written) { drop_events(written); };
  import_with_summaries(paths_as_given(o.inputs), output, {}, {}, then);
  if (!o.quiet)
    std::printf("summarised %zu input%s into %s%s\n", o.inputs.size(), o.inputs.size() == 1 ? "" : "s",
                output.c_str(), o.summaries_only ? " (summaries only, no events)" : "");
}

const bool registered = register_command(
    {"summarize", 12, [](CLI::App& root) {
       auto* cmd = root.add_subcommand("summarize",
                                       "Per-rank summaries: add them to profiles, summarise traces next to "
                                       "each rank, merge the summaries");
       auto opts = std::make_shared<Options>();
       cmd->add_option(
              "INPUT", opts->inputs,
              "Profiles to summarise in place; with -o the traces to summarise; with --merge the parts")
           ->required();
       cmd->add_option("-o,--output", opts->output, "Profile to write (.msdb)");
       cmd->add_flag("--summaries-only", opts->summaries_only,
                     "Keep only the description and the summaries, not the events (a part to merge)");
       cmd->add_flag("--merge", opts->merge,
                     "Merge summary parts (or summarised profiles) into one job profile");
       cmd->add_option("--events", opts->events,
                       "With --merge: traces of the ranks to keep whole (their events are imported)");
       cmd->add_flag("--rank-from-launcher", opts->rank_from_launcher,
                     "Under srun/torchrun/mpirun: summarise only this process's rank's trace (named for its "
                     "rank) into -o FOLDER/part-RANK.msdb");
       cmd->add_flag("-q,--quiet", opts->quiet, "Print nothing on success");
       cmd->callback([opts] { run(*opts); });
     }});

}  // namespace
}  // namespace meshscope::app
