// `meshscope plan [--json]`: the checkpoint interval (Young-Daly) and the scaling-law budget
// (C = 6ND, ~20 tokens per parameter). analysis/model/planner.hpp holds the formulas.
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "analysis/model/planner.hpp"
#include "analysis/model/presets.hpp"
#include "app/command.hpp"
#include "app/model_flags.hpp"

namespace meshscope::app {
namespace {

struct Options {
  bool json = false;
  std::optional<double> mtbf_hours, gpu_mtbf_hours, checkpoint_s, checkpoint_gb, write_gbps, params_b,
      compute_flops, days;
  double restart_s = 0;
  double mfu = 0.4;
  double tokens_per_param = 20;
  int gpus = 0;
  std::string hardware = "h100-sxm";
};

template <typename T>
void optional_option(CLI::App& cmd, const std::string& name, std::optional<T>& target,
                     const std::string& help) {
  cmd.add_option_function<T>(
      name, [&target](const T& v) { target = v; }, help);
}

const bool registered = register_command(
    {"plan", 42, [](CLI::App& root) {
       auto* cmd =
           root.add_subcommand("plan", "Checkpoint interval (Young-Daly) and scaling-law compute budget");
       auto opts = std::make_shared<Options>();
       cmd->add_flag("--json", opts->json, "Print JSON");
       optional_option(*cmd, "--mtbf-hours", opts->mtbf_hours, "Mean time between failures of the whole job");
       optional_option(*cmd, "--gpu-mtbf-hours", opts->gpu_mtbf_hours,
                       "MTBF of one GPU (job MTBF = this / --gpus)");
       optional_option(*cmd, "--checkpoint-s", opts->checkpoint_s, "Seconds to write one checkpoint");
       optional_option(*cmd, "--checkpoint-gb", opts->checkpoint_gb,
                       "Checkpoint size in GB (with --write-gbps)");
       optional_option(*cmd, "--write-gbps", opts->write_gbps, "Storage write bandwidth in GB/s");
       cmd->add_option("--restart-s", opts->restart_s, "Seconds to restart after a failure (default 0)");
       optional_option(*cmd, "--params", opts->params_b,
                       "Model size in billions of parameters (budget: D = 20 N)");
       optional_option(*cmd, "--compute-flops", opts->compute_flops,
                       "Compute budget C in FLOPs (budget: optimal N, D)");
       optional_option(*cmd, "--days", opts->days,
                       "Training days on --gpus (budget: C = gpus x peak x MFU x time)");
       cmd->add_option("--gpus", opts->gpus, "Number of GPUs");
       cmd->add_option("--hardware", opts->hardware,
                       "Hardware preset or FILE.toml for the peak FLOP/s (default h100-sxm)");
       cmd->add_option("--mfu", opts->mfu, "Model FLOPs utilisation assumed for --days (default 0.4)");
       cmd->add_option("--tokens-per-param", opts->tokens_per_param,
                       "Tokens per parameter (default 20, Chinchilla)");
       cmd->callback([opts] {
         const Options& o = *opts;
         JsonWriter json(true);
         json.begin_object();
         std::string text;
         bool any = false;
         // Checkpointing.
         std::optional<double> mtbf;
         if (o.mtbf_hours) mtbf = *o.mtbf_hours * 3600;
         if (o.gpu_mtbf_hours) {
           if (o.gpus < 1) throw Error("--gpu-mtbf-hours needs --gpus N");
           mtbf = with_model_errors([&] { return model::job_mtbf_s(*o.gpu_mtbf_hours * 3600, o.gpus); });
         }
         std::optional<double> delta = o.checkpoint_s;
         if (!delta && o.checkpoint_gb) {
           if (!o.write_gbps || *o.write_gbps <= 0)
             throw Error("--checkpoint-gb needs a positive --write-gbps");
           delta = *o.checkpoint_gb / *o.write_gbps;
         }
         if (mtbf || delta) {
           if (!mtbf || !delta)
             throw Error(
                 "the checkpoint plan needs an MTBF (--mtbf-hours, or --gpu-mtbf-hours with --gpus) and a "
                 "checkpoint time (--checkpoint-s, or --checkpoint-gb with --write-gbps)");
           const auto plan =
               with_model_errors([&] { return model::plan_checkpoints(*mtbf, *delta, o.restart_s); });
           any = true;
           json.key("checkpoint").begin_object();
           json.field("mtbf_s", plan.mtbf_s)
               .field("checkpoint_s", plan.checkpoint_s)
               .field("restart_s", plan.restart_s);
           json.field("young_interval_s", plan.young_interval_s)
               .field("daly_interval_s", plan.daly_interval_s);
           json.field("overhead_fraction", plan.overhead_fraction);
           json.end_object();
           text += fmt::format(
               "checkpoint every {:.0f} s ({:.2f} h; Young sqrt(2 delta M)), Daly {:.0f} s; expected "
               "overhead {:.1f} % (MTBF {:.0f} s, checkpoint {:.0f} s, restart {:.0f} s)\n",
               plan.young_interval_s, plan.young_interval_s / 3600, plan.daly_interval_s,
               100 * plan.overhead_fraction, plan.mtbf_s, plan.checkpoint_s, plan.restart_s);
         }
         // Budget.
         std::optional<model::ScalingBudget> budget;
         double peak = 0;
         if (o.days) {
           if (o.gpus < 1) throw Error("--days needs --gpus N");
           if (!(o.mfu > 0 && o.mfu <= 1)) throw Error(fmt::format("--mfu {}: use a value in (0, 1]", o.mfu));
           peak = with_model_errors([&] { return model::load_hardware(o.hardware).peak_tflops_bf16 * 1e12; });
           budget = with_model_errors([&] {
             return model::budget_from_compute(model::compute_of(o.gpus, peak, o.mfu, *o.days * 86400),
                                               o.tokens_per_param);
           });
         } else if (o.compute_flops) {
           budget = with_model_errors(
               [&] { return model::budget_from_compute(*o.compute_flops, o.tokens_per_param); });
         } else if (o.params_b) {
           budget = with_model_errors(
               [&] { return model::budget_from_params(*o.params_b * 1e9, o.tokens_per_param); });
         }
         if (budget) {
           any = true;
           if (o.gpus > 0) {
             if (peak == 0)
               peak = with_model_errors(
                   [&] { return model::load_hardware(o.hardware).peak_tflops_bf16 * 1e12; });
             budget->gpu_seconds = budget->compute_flops / (peak * o.mfu);
           }
           json.key("budget").begin_object();
           json.field("compute_flops", budget->compute_flops)
               .field("params", budget->params)
               .field("tokens", budget->tokens);
           json.field("tokens_per_param", o.tokens_per_param);
           if (o.gpus > 0)
             json.field("days_on_gpus", budget->gpu_seconds / o.gpus / 86400)
                 .field("gpus", o.gpus)
                 .field("mfu", o.mfu);
           json.end_object();
           text += fmt::format(
               "budget: C = 6ND = {:.3g} FLOPs, N = {:.3g} parameters, D = {:.3g} tokens ({:g} per "
               "parameter)",
               budget->compute_flops, budget->params, budget->tokens, o.tokens_per_param);
           if (o.gpus > 0)
             text += fmt::format("; {:.1f} days on {} x {} at {:.0f} % MFU",
                                 budget->gpu_seconds / o.gpus / 86400, o.gpus, o.hardware, 100 * o.mfu);
           text += "\n";
         }
         if (!any)
           throw CLI::ValidationError(
               "plan",
               "give --mtbf-hours/--gpu-mtbf-hours with --checkpoint-s, and/or --params, --compute-flops or "
               "--days with --gpus");
         json.end_object();
         std::fputs(o.json ? (json.str() + "\n").c_str() : text.c_str(), stdout);
       });
     }});

}  // namespace
}  // namespace meshscope::app
