// `meshscope search [--json] MODEL HARDWARE --gpus N [--top K]`: every valid layout for N GPUs and one global
// batch, pruned by memory, ranked by predicted step time (analysis/model/search.hpp).
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "analysis/model/search.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"

namespace meshscope::app {
namespace {

struct Options {
  bool json = false;
  int top = 10;
  bool all = false;
  ModelFlags model;
  ConfigFlags config;
  AssumptionFlags assumptions;
};

const bool registered = register_command(
    {"search", 41, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("search", "Rank every valid parallel layout on N GPUs by predicted step time");
       auto opts = std::make_shared<Options>();
       cmd->add_flag("--json", opts->json, "Print JSON");
       cmd->add_option("--top", opts->top, "How many layouts to show (default 10)");
       cmd->add_flag("--include-not-fitting", opts->all, "Also rank layouts that do not fit in memory");
       add_model_flags(*cmd, opts->model);
       add_config_flags(*cmd, opts->config, false);
       add_assumption_flags(*cmd, opts->assumptions);
       cmd->callback([opts] {
         const auto start = std::chrono::steady_clock::now();
         const model::ModelSpec m = resolve_model(opts->model, opts->config);
         const model::HardwareSpec hw = resolve_hardware(opts->model);
         const model::Efficiencies eff = resolve_efficiencies(opts->assumptions, hw);
         const model::ParallelConfig parsed = parse_config(opts->config);
         if (parsed.gpus < 1) throw Error("--gpus N is required: the number of GPUs to lay the model out on");
         model::SearchOptions o;
         o.gpus = parsed.gpus;
         o.global_batch = parsed.global_batch;
         o.seq = parsed.seq;
         o.top = opts->top;
         o.precision = parsed.precision;
         o.mode = parsed.mode;
         o.keep_not_fitting = opts->all;
         const model::SearchResult r = with_model_errors([&] { return model::search(m, hw, eff, o); });
         const double ms =
             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
         if (opts->json) {
           JsonWriter json(true);
           json.begin_object();
           json.field("model", m.name).field("hardware", hw.name).field("gpus", o.gpus);
           json.field("global_batch", r.global_batch).field("seq", r.seq);
           json.field("evaluated", static_cast<std::int64_t>(r.evaluated));
           json.field("fitting", static_cast<std::int64_t>(r.fitting));
           json.field("search_ms", ms);
           json.key("results").begin_array();
           for (size_t i = 0; i < r.top.size(); ++i) {
             json.begin_object();
             json.field("rank", static_cast<int>(i + 1));
             write_prediction(json, r.top[i], m, hw, eff);
             json.end_object();
           }
           json.end_array();
           json.end_object();
           std::fputs((json.str() + "\n").c_str(), stdout);
           return;
         }
         std::fputs(
             fmt::format(
                 "{} on {} x {}, global batch {} x seq {}: {} valid layouts, {} fit in memory ({:.1f} ms)\n",
                 m.name, o.gpus, hw.name, r.global_batch, r.seq, r.evaluated, r.fitting, ms)
                 .c_str(),
             stdout);
         if (r.top.empty()) {
           std::fputs(
               "no layout fits in memory; try more GPUs, a smaller --global-batch or --include-not-fitting\n",
               stdout);
           return;
         }
         std::fputs(fmt::format("{:>4} {:>10} {:>6} {:>9} {:>8}  {}\n", "rank", "step_s", "MFU%", "mem_GiB",
                                "bubble%", "layout")
                        .c_str(),
                    stdout);
         for (size_t i = 0; i < r.top.size(); ++i) {
           const auto& p = r.top[i];
           std::fputs(fmt::format("{:>4} {:>10.4g} {:>6.1f} {:>9.1f} {:>8.1f}  {}{}\n", i + 1, p.step_time_s,
                                  100 * p.mfu, p.memory.total() / double(1ull << 30), 100 * p.bubble_fraction,
                                  describe_layout(p.config), p.fits ? "" : "  (does not fit)")
                          .c_str(),
                      stdout);
         }
       });
     }});

}  // namespace
}  // namespace meshscope::app
