// meshscope import TRACE... -o OUT.msdb
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/compare/statement.hpp"
#include "analysis/measure/summary.hpp"
#include "analysis/model/presets.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"
#include "collectors/import/import.hpp"
#include "job/import_job.hpp"
#include "profiler/error.hpp"
#include "profiler/text_format.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string output;
  bool quiet = false;
  bool progress = false;
  bool skip_bad = false;
  std::string model, hardware,
      layout;  // what the job ran, where the traces cannot tell (stored in the profile)
};

// One status line on standard error, rewritten in place: files done of all, the share of the bytes read, the
// time so far and an estimate of the time left (from the bytes read so far). At most five updates a second.
class TerminalProgress {
 public:
  void fraction(double f) {
    fraction_ = f;
    draw(false);
  }
  void files(std::size_t done, std::size_t total) {
    files_done_ = done;
    files_total_ = total;
    draw(true);
  }
  // The import is written; the per-rank summaries are computed now (a few seconds on large jobs).
  void summarising() {
    summarising_ = true;
    draw(true);
  }
  // Clears the line (the summary follows on standard output).
  void finish() {
    if (width_ > 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
    std::fflush(stderr);
  }

 private:
  void draw(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string line =
        summarising_
            ? fmt::format("summarising: analysing every rank for the summaries, {} elapsed",
                          meshscope::seconds_text(elapsed))
            : "importing: " + meshscope::import_progress_text(files_done_, files_total_, fraction_, elapsed);
    const std::size_t shown = line.size();
    if (shown < width_) line.append(width_ - shown, ' ');
    width_ = std::max(width_, shown);
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
  }

  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
  double fraction_ = 0;
  std::size_t files_done_ = 0, files_total_ = 0, width_ = 0;
  bool summarising_ = false;
};

const bool registered = meshscope::app::register_command(
    {"import", 10, [](CLI::App& root) {
       auto* cmd = root.add_subcommand(
           "import",
           "Import traces (Kineto JSON .json/.json.gz, Nsight Systems SQLite) into one profile; a directory "
           "stands for all its traces");
       auto opts = std::make_shared<Options>();
       cmd->add_option("TRACE", opts->inputs, "Trace files or directories, one job")->required();
       cmd->add_option("-o,--output", opts->output, "Profile to write (.msdb)")->required();
       cmd->add_flag("-q,--quiet", opts->quiet, "Print nothing on success");
       cmd->add_flag("--progress", opts->progress,
                     "Show files done, share read and time left on standard error even when it is not a "
                     "terminal (on a terminal it is shown unless --quiet)");
       cmd->add_flag("--skip-bad", opts->skip_bad,
                     "Leave out a trace that cannot be imported (each one is listed in a note) instead of "
                     "failing; fails when none is left");
       cmd->add_option(
           "--model", opts->model,
           "The model the job trained or served (a preset or FILE.toml), stored in the profile for "
           "compare and the Explorer where the traces cannot tell (docs/COMPARE.md)");
       cmd->add_option(
           "--hardware", opts->hardware,
           "The GPU the job ran on (a preset or FILE.toml), stored in the profile where the traces do "
           "not name it");
       cmd->add_option(
           "--layout", opts->layout,
           "The job's layout, stored in the profile: tp=N,pp=N,dp=N,cp=N,ep=N,micro_batch=N,seq=N,"
           "global_batch=N,mode=training|inference (any of them)");
       cmd->callback([opts] {
         std::vector<std::filesystem::path> inputs(opts->inputs.begin(), opts->inputs.end());
         // What the user states is checked before anything is read.
         meshscope::compare::Statement statement;
         meshscope::app::with_model_errors([&] {
           if (!opts->model.empty()) statement.model = meshscope::model::load_model(opts->model);
           if (!opts->hardware.empty()) statement.hardware = meshscope::model::load_hardware(opts->hardware);
           if (!opts->layout.empty()) statement.layout = meshscope::compare::parse_layout(opts->layout);
         });
         meshscope::ImportOptions options;
         options.skip_bad = opts->skip_bad;
         auto progress = std::make_shared<TerminalProgress>();
         const bool show = opts->progress || (!opts->quiet && ::isatty(STDERR_FILENO) == 1);
         if (show) {
           options.progress = [progress](double f) { progress->fraction(f); };
           options.files_done = [progress](std::size_t done, std::size_t total) {
             progress->files(done, total);
           };
         }
         const auto summary = [&] {
           bool summarising = false;
           try {
             // The summaries that info, diff and the GUI's overview read (docs/PROFILE.md "Summaries").
             auto s =
                 meshscope::import_with_summaries(inputs, opts->output, options, [&](const auto& written) {
                   if (!statement.empty())
                     meshscope::write_meta(written, meshscope::compare::meta_changes(statement),
                                           opts->output);
                   summarising = true;
                   if (show) progress->summarising();
                 });
             if (show) progress->finish();
             return s;
           } catch (const meshscope::Error& e) {
             if (show) progress->finish();  // the error line starts on a clean line
             if (!summarising) throw;
             // The profile is complete without its summaries: it stays, and the error says how to add them.
             throw meshscope::Error(fmt::format(
                 "{} (the profile {} is complete without its summaries; `meshscope summarize` adds them)",
                 e.what(), opts->output));
           } catch (...) {
             if (show) progress->finish();
             throw;
           }
         }();
         if (opts->quiet) return;
         std::uint64_t gpu = 0, cpu = 0;
         for (const auto& r : summary.ranks) {
           gpu += r.gpu_events;
           cpu += r.cpu_events;
         }
         std::printf("imported %zu rank%s (%llu GPU events, %llu CPU events) into %s\n", summary.ranks.size(),
                     summary.ranks.size() == 1 ? "" : "s", static_cast<unsigned long long>(gpu),
                     static_cast<unsigned long long>(cpu), opts->output.c_str());
         for (const auto& note : summary.notes) std::printf("note: %s\n", note.c_str());
       });
     }});

}  // namespace
