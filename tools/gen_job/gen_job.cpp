// meshscope_gen_job: a deterministic synthetic multi-rank training job, for the bundled sample and for
// benchmark inputs of any size.
//
// It simulates a GPT-style transformer trained with tensor parallelism (TP) inside a node and data
// parallelism (DP, ZeRO-1 style: gradients reduce-scattered during backward, parameters all-gathered after
// the optimizer step) on H100s, and writes what the PyTorch profiler would have recorded: per rank a main
// Python thread with ProfilerStep#N, data loading, forward ops (aten::linear -> aten::addmm, flash attention,
// layer norm, ...), an autograd thread running the backward, CUDA runtime calls with correlation ids, and on
// the GPU a compute stream plus one NCCL stream per process group. All ranks run in lock step on one clock,
// so every collective ends only when its last peer has arrived: one straggler rank (slow data loading,
// slightly slower GPU) makes its peers wait, the last gradient bucket and the parameter all-gathers are
// exposed at the end of each step, and the GPU idles while the CPU loads data or after a host
// synchronisation.
//
// Outputs: Kineto JSON (one file per rank, plain or gzip; streamed, memory stays flat whatever the size) or a
// meshscope profile written directly through ProfileWriter (the fast path for huge benchmark inputs).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "analysis/measure/summary.hpp"
#include "job/summaries.hpp"
#include "tools/gen_job/gen_job_model.hpp"
#include "tools/gen_job/gen_job_sinks.hpp"

namespace meshscope::gen {
namespace {

namespace kn = kernel_names;

constexpr int kFirstStep = 12;         // the profiler window starts after warm-up, at ProfilerStep#12
constexpr int kLayersPerBucket = 2;    // gradient bucket = this many layers
constexpr int kMaxDefaultLayers = 96;  // deeper than this, more steps are generated instead
constexpr int kCbidLaunchKernel = 211, kCbidLaunchKernelExC = 430, kCbidMemcpyAsync = 41,
              kCbidMemsetAsync = 51, kCbidStreamSynchronize = 131, kCbidEventRecord = 135,
              kCbidStreamWaitEvent = 147;

enum class Schedule : std::uint8_t { k1F1B, kInterleaved, kGpipe };

struct Config {
  int ranks = 4;
  int tp = 0;  // 0: chosen from the rank count
  int pp = 1;  // pipeline stages
  Schedule schedule = Schedule::k1F1B;
  int virtual_stages = 1;   // model chunks per stage (interleaved)
  int micro_batches = 1;    // per step, with pp > 1
  double stage_jitter = 0;  // each stage's GPU speed drawn from [1 - jitter, 1 + jitter]
  std::string truth_path;   // with pp > 1: where to write the blocks each stage ran (--pipeline-truth)
  int layers = 4;
  std::int64_t steps = 3;  // upper bound when target_bytes is set
  std::uint64_t seed = 1;
  std::uint64_t target_bytes = 0;
  std::string command_line;
};

struct Open {
  std::string_view name;
  Cat cat;
  TimeNs start;
  std::int64_t external_id, ev_idx, seq_nr;
  int fwd_thread;
  const CommMeta* comm;
  std::int64_t step;
};

struct CpuThread {
  std::int64_t tid = 0;
  TimeNs now = 0;
  std::vector<Open> stack;
};

struct Launch {
  TimeNs ts;
  std::int64_t correlation, external_id, tid;
};

struct ForwardLinear {
  TimeNs ts;
  std::int64_t seq_nr;
};

struct RankState {
  RankIdentity id;
  int stage = 0;             // pipeline stage
  std::int64_t p2p_seq = 1;  // point-to-point operations issued
  Rng rng;
  double cpu_scale = 1.0, gpu_scale = 1.0, loader_scale = 1.0;
  CpuThread main, autograd;
  std::array<TimeNs, 48> stream_free{};
  std::int64_t next_external = 1, next_correlation = 4096, next_ev_idx = 0, next_seq_nr = 0;
  std::vector<ForwardLinear> linears;  // this step's forward linears, for their backward and fwdbwd flows
  std::vector<std::vector<ForwardLinear>> saved;  // with pipeline stages: per (chunk, micro-batch)
  std::int64_t truth_block = -1;  // the pipeline block being run (index into Simulation::truth_), or -1
  TimeNs last_ts = 0;
  // The collective being issued.
  CommMeta comm;
  Launch comm_launch{};
  TimeNs comm_arrival = 0;
};

// Base GPU durations (ns) and launch shapes of one layer's work, from the model shape and the hardware.
struct Work {
  KernelDef ln, ln_bwd_input, ln_bwd_gamma, qkv, qkv_dgrad, qkv_wgrad, proj, proj_dgrad, proj_wgrad, fc1,
      fc1_dgrad, fc1_wgrad, fc2, fc2_dgrad, fc2_wgrad, head, head_dgrad, head_wgrad, flash, flash_dot,
      flash_bwd, add, gelu, gelu_bwd, bias_sum, embedding, embedding_bwd, log_softmax, nll, nll_bwd,
      log_softmax_bwd, norm, foreach_mul, adamw, nccl_tp, nccl_dp_rs, nccl_dp_ag, nccl_world, nccl_p2p;
  double t_ln, t_ln_bwd, t_ln_gamma, t_qkv, t_proj, t_fc1, t_fc2, t_head, t_flash, t_flash_dot, t_flash_bwd,
      t_add, t_gelu, t_gelu_bwd, t_bias, t_embedding, t_embedding_bwd, t_softmax, t_nll, t_norm, t_foreach,
      t_adamw_chunk;
  std::int64_t layer_params, grad_bytes, tp_nelems, input_bytes;
};

class Simulation {
 public:
  Simulation(const Config& config, Sink& sink) : config_(config), sink_(sink) {
    topo_ = make_topology(config.ranks, config.tp, config.pp);
    build_work();
    job_rng_ = Rng(mix_seed(config.seed, 0x10b));
    const int straggler =
        config.ranks > 1 ? static_cast<int>(mix_seed(config.seed, 0x5ad) % config.ranks) : -1;
    info_.topology = &topo_;
    info_.gpu = &gpu_;
    info_.base_time_ns = 1735689600000000000;  // 2025-01-01T00:00:00Z
    // Kineto timestamps count from the host's monotonic clock: about 27 days of uptime plus a seeded offset.
    info_.origin_ts = 2332800000000000 + static_cast<TimeNs>(mix_seed(config.seed, 0x0) % 1000000000000);
    info_.command_line = config.command_line;
    info_.seed = config.seed;
    ranks_.resize(static_cast<std::size_t>(config.ranks));
    for (int r = 0; r < config.ranks; ++r) {
      RankState& s = ranks_[static_cast<std::size_t>(r)];
      s.rng = Rng(mix_seed(config.seed, 0x1000 + static_cast<std::uint64_t>(r)));
      s.id.rank = r;
      s.id.device = r % topo_.gpus_per_node;
      s.id.pid = 1000 + static_cast<std::int64_t>(
                            mix_seed(config.seed, 0x2000 + static_cast<std::uint64_t>(r)) % 3000000);
      s.id.main_tid = s.id.pid;
      s.id.autograd_tid = s.id.pid + 200 + static_cast<std::int64_t>(s.rng.below(3000));
      s.main.tid = s.id.main_tid;
      s.autograd.tid = s.id.autograd_tid;
      s.gpu_scale = s.rng.range(0.99, 1.01);
      if (r == straggler) {
        s.cpu_scale = 1.35;
        s.gpu_scale *= 1.02;
        s.loader_scale = 2.6;
      }
      s.main.now = info_.origin_ts + static_cast<TimeNs>(s.rng.below(400000));
      s.stream_free.fill(info_.origin_ts);
      s.next_seq_nr = 4000 + static_cast<std::int64_t>(kFirstStep) * (4 * config.layers + 1);
      info_.ranks.push_back(s.id);
    }
    // Pipeline stages: each runs at its own speed (another drawing, so jobs without stages do not change).
    if (topo_.pp > 1) {
      Rng stage_rng(mix_seed(config.seed, 0x57a9e));
      std::vector<double> scale(static_cast<std::size_t>(topo_.pp));
      for (double& f : scale) f = stage_rng.range(1.0 - config.stage_jitter, 1.0 + config.stage_jitter);
      for (auto& r : ranks_) {
        r.stage = topo_.stage_of(r.id.rank);
        r.gpu_scale *= scale[static_cast<std::size_t>(r.stage)];
      }
    }
    // Sequence numbers continue from the steps before the profiler window (plus the start-up broadcasts).
    const std::int64_t buckets = bucket_count();
    for (auto& pg : topo_.groups) {
      const std::int64_t per_step = pg.kind == PgKind::kTp   ? 4 * config.layers
                                    : pg.kind == PgKind::kDp ? 2 * buckets
                                                             : 1;
      pg.next_seq = 3 + kFirstStep * per_step;
    }
  }

  const Topology& topology() const { return topo_; }
  std::uint64_t events() const { return events_; }
  const JobInfo& info() const { return info_; }

  void begin() { sink_.begin(info_); }

  void finish() {
    std::vector<TimeNs> last;
    for (const auto& r : ranks_) last.push_back(r.last_ts);
    sink_.finish(info_, last);
  }

  void run_step(std::int64_t step) {
    if (topo_.pp > 1) {
      run_pipeline_step(step);
      return;
    }
    // Kept for the whole run: sinks may identify a name by its address.
    step_names_.push_back(fmt::format("ProfilerStep#{}", step));
    const std::string_view step_name = step_names_.back();
    each([&](RankState& r) {
      r.linears.clear();
      open(r, r.main, step_name, Cat::kStep, 20000, -1, 0, nullptr, step);
      step_start(r);
      forward_head(r);
    });
    const int L = config_.layers;
    for (int layer = 0; layer < L; ++layer) forward_layer();
    each([&](RankState& r) {
      layer_norm(r, r.main);
      linear(r, work_.head, work_.t_head);
      cross_entropy(r);
      // loss.backward(): the autograd engine takes over on its own thread.
      r.autograd.now = std::max(r.autograd.now, r.main.now) + cost(r, 30000);
      backward_head(r);
    });
    int pending_layers = 0;
    for (int layer = L - 1; layer >= 0; --layer) {
      backward_layer(4 * static_cast<std::size_t>(layer));
      if (++pending_layers == kLayersPerBucket && layer > 0) {
        dp_reduce_scatter(pending_layers);
        pending_layers = 0;
      }
    }
    each([&](RankState& r) {
      embedding_backward(r);
      // backward() returns on the main thread.
      r.main.now = std::max(r.main.now, r.autograd.now) + cost(r, 25000);
    });
    dp_reduce_scatter(pending_layers);
    optimizer_tail(L);
  }

  // One transformer layer's forward on every rank in scope (main thread), with its two TP all-reduces.
  void forward_layer() {
    each([&](RankState& r) {
      layer_norm(r, r.main);
      linear(r, work_.qkv, work_.t_qkv);
      attention(r);
      linear(r, work_.proj, work_.t_proj);
    });
    tp_allreduce(false);
    each([&](RankState& r) {
      elementwise(r, r.main, "aten::add", work_.add, work_.t_add);
      layer_norm(r, r.main);
      linear(r, work_.fc1, work_.t_fc1);
      elementwise(r, r.main, "aten::gelu", work_.gelu, work_.t_gelu);
      linear(r, work_.fc2, work_.t_fc2);
    });
    tp_allreduce(false);
    each([&](RankState& r) { elementwise(r, r.main, "aten::add", work_.add, work_.t_add); });
  }

  // One layer's backward (autograd thread); BASE indexes its four forward linears in RankState::linears.
  void backward_layer(std::size_t base) {
    each([&](RankState& r) {
      grad_passthrough(r, "AddBackward0");
      linear_backward(r, base + 3, work_.fc2_dgrad, work_.fc2_wgrad, work_.t_fc2);
      backward_elementwise(r, "GeluBackward0", "aten::gelu_backward", work_.gelu_bwd, work_.t_gelu_bwd);
      linear_backward(r, base + 2, work_.fc1_dgrad, work_.fc1_wgrad, work_.t_fc1);
      open_backward(r, "_CopyToModelParallelRegionBackward");
    });
    tp_allreduce(true);
    each([&](RankState& r) {
      close(r, r.autograd);
      close(r, r.autograd);
      layer_norm_backward(r);
      grad_passthrough(r, "AddBackward0");
      linear_backward(r, base + 1, work_.proj_dgrad, work_.proj_wgrad, work_.t_proj);
      attention_backward(r);
      linear_backward(r, base + 0, work_.qkv_dgrad, work_.qkv_wgrad, work_.t_qkv);
      open_backward(r, "_CopyToModelParallelRegionBackward");
    });
    tp_allreduce(true);
    each([&](RankState& r) {
      close(r, r.autograd);
      close(r, r.autograd);
      layer_norm_backward(r);
    });
  }

  // After the backward: finish the gradient sync, clip by the global norm, step the optimizer, gather the
  // updated parameters of LAYERS layers, close the step.
  void optimizer_tail(int layers) {
    each([&](RankState& r) {
      if (topo_.dp > 1) wait_stream(r, r.main, kDpStream);
      open(r, r.main, "aten::linalg_vector_norm");
      kernel(r, r.main, work_.norm, work_.t_norm);
      close(r, r.main);
    });
    if (topo_.ranks > 1) {
      const int saved = scope_stage_;
      scope_stage_ = -1;  // the global norm spans every stage
      collective(PgKind::kWorld, CollOp::kAllReduce, false, 1, 1, "Float", 4, work_.nccl_world, true);
      scope_stage_ = saved;
    }
    each([&](RankState& r) {
      item(r);
      open(r, r.main, "aten::_foreach_mul_");
      kernel(r, r.main, work_.foreach_mul, work_.t_foreach);
      close(r, r.main);
      open(r, r.main, "Optimizer.step#AdamW.step", Cat::kUserAnnotation);
      open(r, r.main, "aten::_fused_adamw_", Cat::kCpuOp, 30000);
      for (int chunk = 0; chunk < 4; ++chunk) kernel(r, r.main, work_.adamw, work_.t_adamw_chunk);
      close(r, r.main, 8000);
      close(r, r.main);
    });
    if (topo_.dp > 1) {
      for (int layer = 0; layer < layers; layer += kLayersPerBucket) {
        const std::int64_t params = work_.layer_params * std::min(kLayersPerBucket, layers - layer);
        collective(PgKind::kDp, CollOp::kAllGather, false, params / topo_.dp, params, "BFloat16", 2,
                   work_.nccl_dp_ag, true);
      }
    }
    each([&](RankState& r) {
      item(r);
      close(r, r.main, 15000);
    });
  }

  // --- pipeline parallelism ---

  struct Action {
    bool forward;
    int chunk, micro_batch;
  };

  // The order in which stage S runs its micro-batches (Megatron-LM's schedules:
  // pipeline_parallel/schedules.py): GPipe runs every forward, then every backward; 1F1B runs p - s - 1
  // forwards to warm up, then alternates one forward and one backward, then drains the backwards; interleaved
  // 1F1B does the same over m * v units, with 2 (p - s - 1) + (v - 1) p warm-up forwards, unit k being model
  // chunk (k mod pv) / p (reversed for backwards) of micro-batch (k / pv) p + k mod p.
  std::vector<Action> stage_schedule(int s) const {
    const int p = topo_.pp, v = config_.virtual_stages, m = config_.micro_batches;
    std::vector<Action> out;
    if (config_.schedule == Schedule::kGpipe) {
      for (int mb = 0; mb < m; ++mb) out.push_back({true, 0, mb});
      for (int mb = 0; mb < m; ++mb) out.push_back({false, 0, mb});
      return out;
    }
    const int total = m * v;
    auto unit = [&](int k, bool forward) {
      const int in_group = k % (p * v);
      int chunk = in_group / p;
      if (!forward) chunk = v - 1 - chunk;
      return Action{forward, chunk, (k / (p * v)) * p + k % p};
    };
    const int warmup = config_.schedule == Schedule::kInterleaved
                           ? std::min(2 * (p - s - 1) + (v - 1) * p, total)
                           : std::min(p - s - 1, total);
    for (int k = 0; k < warmup; ++k) out.push_back(unit(k, true));
    for (int i = 0; i < total - warmup; ++i) {
      out.push_back(unit(warmup + i, true));
      out.push_back(unit(i, false));
    }
    for (int k = total - warmup; k < total; ++k) out.push_back(unit(k, false));
    return out;
  }

  std::size_t unit_key(int stage, int chunk, int mb) const {
    return (static_cast<std::size_t>(stage) * static_cast<std::size_t>(config_.virtual_stages) +
            static_cast<std::size_t>(chunk)) *
               static_cast<std::size_t>(config_.micro_batches) +
           static_cast<std::size_t>(mb);
  }

  // Whether stage S may run action A: its input has been sent.
  bool ready(int s, const Action& a) const {
    const int p = topo_.pp, v = config_.virtual_stages;
    if (a.forward) {
      if (s == 0 && a.chunk == 0) return true;
      return s > 0 ? done_forward_[unit_key(s - 1, a.chunk, a.micro_batch)]
                   : done_forward_[unit_key(p - 1, a.chunk - 1, a.micro_batch)];
    }
    if (s == p - 1 && a.chunk == v - 1) return done_forward_[unit_key(s, a.chunk, a.micro_batch)];
    return s < p - 1 ? done_backward_[unit_key(s + 1, a.chunk, a.micro_batch)]
                     : done_backward_[unit_key(0, a.chunk + 1, a.micro_batch)];
  }

  void run_pipeline_step(std::int64_t step) {
    step_names_.push_back(fmt::format("ProfilerStep#{}", step));
    const std::string_view step_name = step_names_.back();
    scope_stage_ = -1;
    each([&](RankState& r) {
      open(r, r.main, step_name, Cat::kStep, 20000, -1, 0, nullptr, step);
      step_start(r);
      r.saved.assign(static_cast<std::size_t>(config_.virtual_stages * config_.micro_batches), {});
    });
    const int p = topo_.pp;
    std::vector<std::vector<Action>> actions(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) actions[static_cast<std::size_t>(s)] = stage_schedule(s);
    const std::size_t units = static_cast<std::size_t>(p * config_.virtual_stages * config_.micro_batches);
    done_forward_.assign(units, false);
    done_backward_.assign(units, false);
    std::vector<std::size_t> cursor(static_cast<std::size_t>(p), 0);
    // Run each stage as far as its inputs allow, until every stage is through its schedule.
    for (bool progress = true; progress;) {
      progress = false;
      for (int s = 0; s < p; ++s) {
        auto& list = actions[static_cast<std::size_t>(s)];
        auto& at = cursor[static_cast<std::size_t>(s)];
        while (at < list.size() && ready(s, list[at])) {
          scope_stage_ = s;
          const Action a = list[at++];
          begin_truth(step, a);
          if (a.forward) {
            pipeline_forward(s, a.chunk, a.micro_batch);
            done_forward_[unit_key(s, a.chunk, a.micro_batch)] = true;
          } else {
            pipeline_backward(s, a.chunk, a.micro_batch);
            done_backward_[unit_key(s, a.chunk, a.micro_batch)] = true;
          }
          each([](RankState& r) { r.truth_block = -1; });
          progress = true;
        }
      }
    }
    for (int s = 0; s < p; ++s) {
      if (cursor[static_cast<std::size_t>(s)] != actions[static_cast<std::size_t>(s)].size())
        throw std::logic_error("pipeline schedule deadlocked");
    }
    // Each stage reduces its gradients over its data-parallel group, then the step ends as without stages.
    const int stage_layers = config_.layers / p;
    for (int s = 0; s < p; ++s) {
      scope_stage_ = s;
      for (int layer = 0; layer < stage_layers; layer += kLayersPerBucket)
        dp_reduce_scatter(std::min(kLayersPerBucket, stage_layers - layer));
    }
    scope_stage_ = -1;
    optimizer_tail(stage_layers);
  }

  // The blocks each rank ran, as the generator scheduled them: the truth the measured schedule is tested on.
  struct TruthBlock {
    int rank = 0, stage = 0, chunk = 0, micro_batch = 0;
    std::int64_t step = 0;
    bool forward = true;
    TimeNs start = 0, end = 0;
    std::int64_t kernels = 0;
  };

  void begin_truth(std::int64_t step, const Action& a) {
    if (config_.truth_path.empty()) return;
    each([&](RankState& r) {
      r.truth_block = static_cast<std::int64_t>(truth_.size());
      truth_.push_back({r.id.rank, r.stage, a.chunk, a.micro_batch, step, a.forward, 0, 0, 0});
    });
  }

  // Writes the blocks to Config::truth_path: a header line, then one tab-separated line per block (times in
  // ns on the generator's clock: an msdb profile's are these plus one constant offset).
  void write_truth() const {
    if (config_.truth_path.empty()) return;
    std::FILE* f = std::fopen(config_.truth_path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write " + config_.truth_path);
    const char* schedule = config_.schedule == Schedule::kInterleaved ? "interleaved"
                           : config_.schedule == Schedule::kGpipe     ? "gpipe"
                                                                      : "1f1b";
    fmt::print(f, "# schedule {} pp {} virtual_stages {} micro_batches {} tp {} dp {}\n", schedule, topo_.pp,
               config_.virtual_stages, config_.micro_batches, topo_.tp, topo_.dp);
    fmt::print(f, "rank\tstage\tstep\tforward\tchunk\tmicro_batch\tstart_ns\tend_ns\tkernels\n");
    for (const TruthBlock& b : truth_) {
      fmt::print(f, "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", b.rank, b.stage, b.step, b.forward ? 1 : 0,
                 b.chunk, b.micro_batch, b.start, b.end, b.kernels);
    }
    if (std::fclose(f) != 0) throw std::runtime_error("cannot write " + config_.truth_path);
  }

  int chunk_layers() const { return config_.layers / (topo_.pp * config_.virtual_stages); }

  void pipeline_forward(int s, int chunk, int mb) {
    const int p = topo_.pp, v = config_.virtual_stages;
    const bool first = s == 0 && chunk == 0, last = s == p - 1 && chunk == v - 1;
    if (!first) p2p_recv(true, unit_key(s, chunk, mb));
    each([&](RankState& r) {
      r.linears.clear();
      if (first) forward_head(r);
    });
    for (int layer = 0; layer < chunk_layers(); ++layer) forward_layer();
    each([&](RankState& r) {
      if (last) {
        layer_norm(r, r.main);
        linear(r, work_.head, work_.t_head);
        cross_entropy(r);
      }
      r.saved[static_cast<std::size_t>(chunk * config_.micro_batches + mb)] = r.linears;
    });
    if (!last) {
      const int to = (s + 1) % p;
      p2p_send(s, to, true, unit_key(to, s == p - 1 ? chunk + 1 : chunk, mb));
    }
  }

  void pipeline_backward(int s, int chunk, int mb) {
    const int p = topo_.pp, v = config_.virtual_stages;
    const bool first = s == 0 && chunk == 0, last = s == p - 1 && chunk == v - 1;
    if (!last) p2p_recv(false, unit_key(s, chunk, mb));
    each([&](RankState& r) {
      r.linears = std::move(r.saved[static_cast<std::size_t>(chunk * config_.micro_batches + mb)]);
      // backward of this micro-batch: the autograd engine takes over on its own thread.
      r.autograd.now = std::max(r.autograd.now, r.main.now) + cost(r, 30000);
      if (last) backward_head(r);
    });
    for (int layer = chunk_layers() - 1; layer >= 0; --layer)
      backward_layer(4 * static_cast<std::size_t>(layer));
    each([&](RankState& r) {
      if (first) embedding_backward(r);
      r.main.now = std::max(r.main.now, r.autograd.now) + cost(r, 25000);
    });
    if (!first) {
      const int to = (s + p - 1) % p;
      p2p_send(s, to, false, unit_key(to, s == 0 ? chunk - 1 : chunk, mb));
    }
  }

  // Activations (forward) or their gradients (backward) of one micro-batch, sharded over TP.
  std::int64_t p2p_nelems() const { return shape_.tokens() * shape_.hidden / topo_.tp; }

  // The CPU side of a send or receive on the main thread; returns the launch of its kernel.
  Launch p2p_cpu(RankState& r, CollOp op) {
    auto& t = r.main;
    const ProcessGroup& pg = topo_.groups[static_cast<std::size_t>(topo_.pp_group_of(r.id.rank))];
    r.comm = CommMeta{op, &pg, r.p2p_seq++, p2p_nelems(), p2p_nelems(), "BFloat16", 2};
    open(r, t, op == CollOp::kSend ? "c10d::send" : "c10d::recv_", Cat::kCpuOp, 8000);
    open(r, t, "record_param_comms", Cat::kCpuOp, 5000, -1, 0, &r.comm);
    open(r, t, op == CollOp::kSend ? "nccl:send" : "nccl:recv", Cat::kUserAnnotation, 6000);
    api(r, t, "cudaEventRecord", kCbidEventRecord, 2500);
    api(r, t, "cudaStreamWaitEvent", kCbidStreamWaitEvent, 2000);
    const Launch l = api(r, t, "cudaLaunchKernelExC", kCbidLaunchKernelExC, 9000);
    api(r, t, "cudaEventRecord", kCbidEventRecord, 2500);
    close(r, t, 4000);
    close(r, t, 6000);
    close(r, t, 9000);
    return l;
  }

  // Stage S sends to stage TO (forward: activations to the next stage; else gradients to the previous one).
  // The send's kernel is written when the receiver posts its receive: both end together.
  void p2p_send(int s, int to, bool forward, std::size_t key) {
    const int per_stage = topo_.tp * topo_.dp;
    each([&](RankState& r) {
      const Launch l = p2p_cpu(r, CollOp::kSend);
      PendingSend send;
      send.launch = l;
      send.ready = std::max(l.ts + r.rng.jitter(4000, 0.3), r.stream_free[kComputeStream]);
      send.meta = r.comm;
      send.sender = r.id.rank;
      const int peer = r.id.rank + (to - s) * per_stage;
      pending_[{peer, forward, key}] = send;
    });
  }

  // The receiving stage (the one in scope) posts its receives; the matching sends were posted before.
  void p2p_recv(bool forward, std::size_t key) {
    const int send_stream = forward ? kPpSendNextStream : kPpSendPrevStream;
    const int recv_stream = forward ? kPpRecvPrevStream : kPpRecvNextStream;
    const ProcessGroup& any = topo_.groups.back();
    each([&](RankState& r) {
      const Launch l = p2p_cpu(r, CollOp::kRecv);
      const auto it = pending_.find({r.id.rank, forward, key});
      if (it == pending_.end()) throw std::logic_error("receive without a send");
      PendingSend& send = it->second;
      RankState& sender = ranks_[static_cast<std::size_t>(send.sender)];
      const TimeNs send_start =
          std::max(send.ready, sender.stream_free[static_cast<std::size_t>(send_stream)]);
      const TimeNs recv_start =
          std::max(l.ts + r.rng.jitter(4000, 0.3), r.stream_free[static_cast<std::size_t>(recv_stream)]);
      const TimeNs end = std::max(send_start, recv_start) +
                         transfer_ns(any, CollOp::kSend, p2p_nelems(), p2p_nelems(), 2) +
                         r.rng.jitter(600, 0.5);
      GpuEvent e;
      e.kind = GpuKind::kKernel;
      e.name = work_.nccl_p2p.name;
      e.shape = &work_.nccl_p2p.shape;
      e.stream = send_stream;
      e.ts = send_start;
      e.dur = end - send_start;
      e.comm = &send.meta;
      sender.stream_free[static_cast<std::size_t>(send_stream)] = end;
      gpu(sender, e, send.launch);
      e.stream = recv_stream;
      e.ts = recv_start;
      e.dur = end - recv_start;
      e.comm = &r.comm;
      r.stream_free[static_cast<std::size_t>(recv_stream)] = end;
      gpu(r, e, l);
      pending_.erase(it);
      // work.wait(): later compute waits for the data.
      api(r, r.main, "cudaStreamWaitEvent", kCbidStreamWaitEvent, 2000);
      auto& compute = r.stream_free[kComputeStream];
      compute = std::max(compute, end);
    });
  }

  std::int64_t bucket_count() const { return (config_.layers + kLayersPerBucket - 1) / kLayersPerBucket; }

 private:
  // Every rank in scope: all ranks, or while a pipeline stage runs its part of the schedule, that stage's.
  template <typename F>
  void each(F&& f) {
    for (auto& r : ranks_) {
      if (in_scope(r)) f(r);
    }
  }
  bool in_scope(const RankState& r) const { return scope_stage_ < 0 || r.stage == scope_stage_; }
  bool group_in_scope(const ProcessGroup& pg) const {
    return scope_stage_ < 0 || topo_.stage_of(pg.ranks.front()) == scope_stage_;
  }

  TimeNs cost(RankState& r, double ns) { return r.rng.jitter(ns * r.cpu_scale, 0.3); }

  void note(RankState& r, TimeNs end) {
    r.last_ts = std::max(r.last_ts, end);
    ++events_;
  }

  // --- CPU ranges ---

  void open(RankState& r, CpuThread& t, std::string_view name, Cat cat = Cat::kCpuOp, double gap = 4000,
            std::int64_t seq_nr = -1, int fwd_thread = 0, const CommMeta* comm = nullptr,
            std::int64_t step = -1) {
    t.now += cost(r, gap);
    t.stack.push_back({name, cat, t.now, r.next_external++, r.next_ev_idx++, seq_nr, fwd_thread, comm, step});
  }

  void close(RankState& r, CpuThread& t, double tail = 2500) {
    t.now += cost(r, tail);
    const Open o = t.stack.back();
    t.stack.pop_back();
    CpuEvent e;
    e.name = o.name;
    e.cat = o.cat;
    e.tid = t.tid;
    e.ts = o.start;
    e.dur = t.now - o.start;
    e.external_id = o.external_id;
    e.ev_idx = o.ev_idx;
    e.seq_nr = o.seq_nr;
    e.fwd_thread = o.fwd_thread;
    e.comm = o.comm;
    e.step = o.step;
    sink_.cpu(r.id, e);
    note(r, t.now);
  }

  // An op with no GPU work of its own (views, allocations).
  void leaf(RankState& r, CpuThread& t, std::string_view name) {
    open(r, t, name, Cat::kCpuOp, 2500);
    close(r, t, 1500);
  }

  // --- CUDA runtime and GPU activities ---

  Launch api(RankState& r, CpuThread& t, std::string_view name, std::int64_t cbid, double ns) {
    t.now += cost(r, 1200);
    const Launch l{t.now, r.next_correlation++, t.stack.empty() ? 0 : t.stack.back().external_id, t.tid};
    const TimeNs dur = cost(r, ns);
    sink_.runtime(r.id, {name, t.tid, l.ts, dur, l.external_id, l.correlation, cbid});
    t.now += dur;
    note(r, t.now);
    return l;
  }

  void gpu(RankState& r, GpuEvent& e, const Launch& l) {
    // A pipeline block's work: its kernels but the pipeline's own send/recv (as the analysis defines it).
    if (r.truth_block >= 0 && e.kind == GpuKind::kKernel && e.name != work_.nccl_p2p.name) {
      TruthBlock& b = truth_[static_cast<std::size_t>(r.truth_block)];
      b.start = b.kernels == 0 ? e.ts : std::min(b.start, e.ts);
      b.end = b.kernels == 0 ? e.ts + e.dur : std::max(b.end, e.ts + e.dur);
      ++b.kernels;
    }
    e.external_id = l.external_id;
    e.correlation = l.correlation;
    e.launch_ts = l.ts;
    e.launch_tid = l.tid;
    sink_.gpu(r.id, e);
    note(r, e.ts + e.dur);
  }

  TimeNs start_on(RankState& r, int stream, const Launch& l) {
    return std::max(r.stream_free[static_cast<std::size_t>(stream)], l.ts + r.rng.jitter(3500, 0.4));
  }

  void kernel(RankState& r, CpuThread& t, const KernelDef& k, double ns, int stream = kComputeStream) {
    const Launch l = api(r, t, "cudaLaunchKernel", kCbidLaunchKernel, 4500);
    GpuEvent e;
    e.kind = GpuKind::kKernel;
    e.name = k.name;
    e.stream = stream;
    e.ts = start_on(r, stream, l);
    e.dur = r.rng.jitter(ns * r.gpu_scale, 0.04);
    e.shape = &k.shape;
    r.stream_free[static_cast<std::size_t>(stream)] = e.ts + e.dur;
    gpu(r, e, l);
  }

  void memcpy(RankState& r, CpuThread& t, const char* name, const char* kind, std::int64_t bytes, double bw) {
    const Launch l = api(r, t, "cudaMemcpyAsync", kCbidMemcpyAsync, 9000);
    GpuEvent e;
    e.kind = GpuKind::kMemcpy;
    e.name = name;
    e.ts = start_on(r, kComputeStream, l);
    e.dur = r.rng.jitter(1200 + static_cast<double>(bytes) / bw * 1e9, 0.1);
    e.bytes = bytes;
    e.copy_kind = kind;
    r.stream_free[kComputeStream] = e.ts + e.dur;
    gpu(r, e, l);
  }

  void memset(RankState& r, CpuThread& t, std::int64_t bytes) {
    const Launch l = api(r, t, "cudaMemsetAsync", kCbidMemsetAsync, 6000);
    GpuEvent e;
    e.kind = GpuKind::kMemset;
    e.name = "Memset (Device)";
    e.ts = start_on(r, kComputeStream, l);
    e.dur = r.rng.jitter(1500 + static_cast<double>(bytes) / (gpu_.hbm_bytes_per_s * 0.8) * 1e9, 0.05);
    e.bytes = bytes;
    r.stream_free[kComputeStream] = e.ts + e.dur;
    gpu(r, e, l);
  }

  // The compute stream waits for STREAM (cudaStreamWaitEvent): later compute kernels start after its work.
  void wait_stream(RankState& r, CpuThread& t, int stream) {
    api(r, t, "cudaStreamWaitEvent", kCbidStreamWaitEvent, 2500);
    auto& compute = r.stream_free[kComputeStream];
    compute = std::max(compute, r.stream_free[static_cast<std::size_t>(stream)]);
  }

  // tensor.item(): a 4-byte device-to-host copy and a stream synchronisation; the CPU waits for the GPU.
  void item(RankState& r) {
    auto& t = r.main;
    open(r, t, "aten::item");
    open(r, t, "aten::_local_scalar_dense");
    memcpy(r, t, "Memcpy DtoH (Device -> Pinned)", "DtoH", 4, 2e9);
    t.now += cost(r, 1000);
    const TimeNs ts = t.now;
    const TimeNs end =
        std::max(ts + r.rng.jitter(2500, 0.3), r.stream_free[kComputeStream] + r.rng.jitter(1800, 0.3));
    const std::int64_t ext = t.stack.back().external_id;
    sink_.runtime(r.id, {"cudaStreamSynchronize", t.tid, ts, end - ts, ext, r.next_correlation++,
                         kCbidStreamSynchronize});
    ++events_;
    t.now = end;
    close(r, t, 3000);
    close(r, t);
  }

  // --- forward building blocks ---

  void step_start(RankState& r) {
    auto& t = r.main;
    open(r, t, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", Cat::kUserAnnotation, 6000);
    t.now += r.rng.jitter(2.2e6 * r.loader_scale, 0.3);
    close(r, t, 5000);
    for (int tensor = 0; tensor < 2; ++tensor) {  // input ids and labels, pinned -> device
      open(r, t, "aten::to", Cat::kCpuOp, 8000);
      open(r, t, "aten::_to_copy");
      leaf(r, t, "aten::empty_strided");
      open(r, t, "aten::copy_");
      memcpy(r, t, "Memcpy HtoD (Pinned -> Device)", "HtoD", work_.input_bytes, 20e9);
      close(r, t);
      close(r, t);
      close(r, t);
    }
    open(r, t, "Optimizer.zero_grad#AdamW.zero_grad", Cat::kUserAnnotation, 10000);
    open(r, t, "aten::zero_");
    open(r, t, "aten::fill_");
    memset(r, t, work_.grad_bytes);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void forward_head(RankState& r) {
    auto& t = r.main;
    open(r, t, "aten::embedding", Cat::kCpuOp, 12000, r.next_seq_nr++, 0);
    open(r, t, "aten::index_select");
    kernel(r, t, work_.embedding, work_.t_embedding);
    close(r, t);
    close(r, t);
  }

  void layer_norm(RankState& r, CpuThread& t) {
    open(r, t, "aten::layer_norm", Cat::kCpuOp, 6000, r.next_seq_nr++, 0);
    open(r, t, "aten::native_layer_norm");
    kernel(r, t, work_.ln, work_.t_ln);
    close(r, t);
    close(r, t);
  }

  void linear(RankState& r, const KernelDef& k, double ns) {
    auto& t = r.main;
    const std::int64_t seq_nr = r.next_seq_nr++;
    open(r, t, "aten::linear", Cat::kCpuOp, 6000, seq_nr, 0);
    r.linears.push_back({t.stack.back().start, seq_nr});
    open(r, t, "aten::t");
    open(r, t, "aten::transpose");
    leaf(r, t, "aten::as_strided");
    close(r, t);
    close(r, t);
    open(r, t, "aten::addmm", Cat::kCpuOp, 4000, seq_nr, 0);
    kernel(r, t, k, ns);
    close(r, t);
    close(r, t);
  }

  void attention(RankState& r) {
    auto& t = r.main;
    open(r, t, "aten::scaled_dot_product_attention", Cat::kCpuOp, 6000, r.next_seq_nr++, 0);
    open(r, t, "aten::_scaled_dot_product_flash_attention");
    open(r, t, "aten::_flash_attention_forward");
    leaf(r, t, "aten::empty");
    leaf(r, t, "aten::empty");
    kernel(r, t, work_.flash, work_.t_flash);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void elementwise(RankState& r, CpuThread& t, std::string_view op, const KernelDef& k, double ns) {
    open(r, t, op, Cat::kCpuOp, 5000, r.next_seq_nr++, 0);
    kernel(r, t, k, ns);
    close(r, t);
  }

  void cross_entropy(RankState& r) {
    auto& t = r.main;
    open(r, t, "aten::cross_entropy_loss", Cat::kCpuOp, 8000);
    open(r, t, "aten::log_softmax");
    open(r, t, "aten::_log_softmax", Cat::kCpuOp, 3000, r.next_seq_nr++, 0);
    kernel(r, t, work_.log_softmax, work_.t_softmax);
    close(r, t);
    close(r, t);
    open(r, t, "aten::nll_loss_nd");
    open(r, t, "aten::nll_loss");
    open(r, t, "aten::nll_loss_forward", Cat::kCpuOp, 3000, r.next_seq_nr++, 0);
    kernel(r, t, work_.nll, work_.t_nll);
    close(r, t);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  // --- backward building blocks (autograd thread) ---

  void open_backward(RankState& r, std::string_view node, std::int64_t seq_nr = -1) {
    auto& t = r.autograd;
    const std::string_view evaluate = evaluate_name(node);
    open(r, t, evaluate, Cat::kCpuOp, 9000, seq_nr, 1);
    open(r, t, node, Cat::kCpuOp, 4000, seq_nr, 1);
  }

  static std::string_view evaluate_name(std::string_view node) {
    // "autograd::engine::evaluate_function: <node>" for the few node names used; literals keep addresses
    // stable.
    if (node == "AddmmBackward0") return "autograd::engine::evaluate_function: AddmmBackward0";
    if (node == "AddBackward0") return "autograd::engine::evaluate_function: AddBackward0";
    if (node == "GeluBackward0") return "autograd::engine::evaluate_function: GeluBackward0";
    if (node == "NativeLayerNormBackward0")
      return "autograd::engine::evaluate_function: NativeLayerNormBackward0";
    if (node == "ScaledDotProductFlashAttentionBackward0") {
      return "autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0";
    }
    if (node == "_CopyToModelParallelRegionBackward") {
      return "autograd::engine::evaluate_function: _CopyToModelParallelRegionBackward";
    }
    if (node == "NllLossBackward0") return "autograd::engine::evaluate_function: NllLossBackward0";
    if (node == "LogSoftmaxBackward0") return "autograd::engine::evaluate_function: LogSoftmaxBackward0";
    if (node == "EmbeddingBackward0") return "autograd::engine::evaluate_function: EmbeddingBackward0";
    return "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad";
  }

  void grad_passthrough(RankState& r, std::string_view node) {
    open_backward(r, node);
    close(r, r.autograd, 1500);
    close(r, r.autograd, 2000);
  }

  void backward_elementwise(RankState& r, std::string_view node, std::string_view op, const KernelDef& k,
                            double ns) {
    auto& t = r.autograd;
    open_backward(r, node);
    open(r, t, op);
    kernel(r, t, k, ns);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void linear_backward(RankState& r, std::size_t index, const KernelDef& dgrad, const KernelDef& wgrad,
                       double ns) {
    auto& t = r.autograd;
    const ForwardLinear fwd = r.linears[index];
    open_backward(r, "AddmmBackward0", fwd.seq_nr);
    sink_.fwdbwd(r.id, fwd.seq_nr, fwd.ts, t.stack[t.stack.size() - 2].start);
    leaf(r, t, "aten::t");
    open(r, t, "aten::mm");
    kernel(r, t, dgrad, ns);
    close(r, t);
    leaf(r, t, "aten::t");
    open(r, t, "aten::mm");
    kernel(r, t, wgrad, ns * 1.05);
    close(r, t);
    open(r, t, "aten::sum");
    kernel(r, t, work_.bias_sum, work_.t_bias);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void layer_norm_backward(RankState& r) {
    auto& t = r.autograd;
    open_backward(r, "NativeLayerNormBackward0");
    open(r, t, "aten::native_layer_norm_backward");
    kernel(r, t, work_.ln_bwd_input, work_.t_ln_bwd);
    kernel(r, t, work_.ln_bwd_gamma, work_.t_ln_gamma);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void attention_backward(RankState& r) {
    auto& t = r.autograd;
    open_backward(r, "ScaledDotProductFlashAttentionBackward0");
    open(r, t, "aten::_scaled_dot_product_flash_attention_backward");
    open(r, t, "aten::_flash_attention_backward");
    kernel(r, t, work_.flash_dot, work_.t_flash_dot);
    kernel(r, t, work_.flash_bwd, work_.t_flash_bwd);
    close(r, t);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  void backward_head(RankState& r) {
    auto& t = r.autograd;
    open_backward(r, "NllLossBackward0");
    open(r, t, "aten::nll_loss_backward");
    kernel(r, t, work_.nll_bwd, work_.t_nll);
    close(r, t);
    close(r, t);
    close(r, t);
    backward_elementwise(r, "LogSoftmaxBackward0", "aten::_log_softmax_backward_data", work_.log_softmax_bwd,
                         work_.t_softmax);
    linear_backward(r, r.linears.size() - 1, work_.head_dgrad, work_.head_wgrad, work_.t_head);
    layer_norm_backward(r);
  }

  void embedding_backward(RankState& r) {
    auto& t = r.autograd;
    open_backward(r, "EmbeddingBackward0");
    open(r, t, "aten::embedding_backward");
    open(r, t, "aten::embedding_dense_backward");
    kernel(r, t, work_.embedding_bwd, work_.t_embedding_bwd);
    close(r, t);
    close(r, t);
    close(r, t);
    close(r, t);
  }

  // --- collectives ---

  void tp_allreduce(bool backward) {
    if (topo_.tp <= 1) return;
    collective(PgKind::kTp, CollOp::kAllReduce, backward, work_.tp_nelems, work_.tp_nelems, "BFloat16", 2,
               work_.nccl_tp, true);
  }

  void dp_reduce_scatter(int layers) {
    if (topo_.dp <= 1 || layers <= 0) return;
    const std::int64_t params = work_.layer_params * layers;
    collective(PgKind::kDp, CollOp::kReduceScatter, true, params, params / topo_.dp, "Float", 4,
               work_.nccl_dp_rs, false);
  }

  int group_of(int rank, PgKind kind) const {
    switch (kind) {
      case PgKind::kWorld:
        return topo_.world_group();
      case PgKind::kTp:
        return topo_.tp_group_of(rank);
      case PgKind::kDp:
        return topo_.dp_group_of(rank);
      case PgKind::kPp:
        return topo_.pp_group_of(rank);
    }
    return -1;
  }

  // One collective on every group of KIND. Each rank issues it from its CPU thread (c10d op,
  // record_param_comms, the nccl:* annotation, event record/wait, the kernel launch); its kernel starts once
  // launched and once the compute stream has produced the input, and ends when the last member has arrived
  // plus the transfer time.
  void collective(PgKind kind, CollOp op, bool on_autograd, std::int64_t in_nelems, std::int64_t out_nelems,
                  const char* dtype, std::int64_t elem_bytes, const KernelDef& k, bool wait) {
    const char* c10d = op == CollOp::kAllReduce       ? "c10d::allreduce_"
                       : op == CollOp::kReduceScatter ? "c10d::_reduce_scatter_base_"
                                                      : "c10d::_allgather_base_";
    const char* annotation = op == CollOp::kAllReduce       ? "nccl:all_reduce"
                             : op == CollOp::kReduceScatter ? "nccl:_reduce_scatter_base"
                                                            : "nccl:_all_gather_base";
    group_seq_.assign(topo_.groups.size(), 0);
    group_last_.assign(topo_.groups.size(), 0);
    for (std::size_t g = 0; g < topo_.groups.size(); ++g) {
      if (topo_.groups[g].kind == kind && group_in_scope(topo_.groups[g]))
        group_seq_[g] = topo_.groups[g].next_seq++;
    }
    for (auto& r : ranks_) {
      if (!in_scope(r)) continue;
      const int g = group_of(r.id.rank, kind);
      if (g < 0) continue;
      const ProcessGroup& pg = topo_.groups[static_cast<std::size_t>(g)];
      CpuThread& t = on_autograd ? r.autograd : r.main;
      r.comm = CommMeta{op,    &pg,       group_seq_[static_cast<std::size_t>(g)], in_nelems, out_nelems,
                        dtype, elem_bytes};
      open(r, t, c10d, Cat::kCpuOp, 8000);
      open(r, t, "record_param_comms", Cat::kCpuOp, 5000, -1, 0, &r.comm);
      open(r, t, annotation, Cat::kUserAnnotation, 6000);
      api(r, t, "cudaEventRecord", kCbidEventRecord, 2500);
      api(r, t, "cudaStreamWaitEvent", kCbidStreamWaitEvent, 2000);
      r.comm_launch = api(r, t, "cudaLaunchKernelExC", kCbidLaunchKernelExC, 9000);
      api(r, t, "cudaEventRecord", kCbidEventRecord, 2500);
      close(r, t, 4000);
      close(r, t, 6000);
      close(r, t, 9000);
      r.comm_arrival =
          std::max({r.comm_launch.ts + r.rng.jitter(4000, 0.3),
                    r.stream_free[static_cast<std::size_t>(pg.stream)], r.stream_free[kComputeStream]});
      auto& last = group_last_[static_cast<std::size_t>(g)];
      last = std::max(last, r.comm_arrival);
      if (wait) api(r, t, "cudaStreamWaitEvent", kCbidStreamWaitEvent, 2000);  // work.wait()
    }
    group_transfer_.assign(topo_.groups.size(), 0);
    for (std::size_t g = 0; g < topo_.groups.size(); ++g) {
      if (topo_.groups[g].kind == kind && group_in_scope(topo_.groups[g]))
        group_transfer_[g] = transfer_ns(topo_.groups[g], op, in_nelems, out_nelems, elem_bytes);
    }
    for (auto& r : ranks_) {
      if (!in_scope(r)) continue;
      const int g = group_of(r.id.rank, kind);
      if (g < 0) continue;
      const ProcessGroup& pg = topo_.groups[static_cast<std::size_t>(g)];
      GpuEvent e;
      e.kind = GpuKind::kKernel;
      e.name = k.name;
      e.stream = pg.stream;
      e.ts = r.comm_arrival;
      const TimeNs end = group_last_[static_cast<std::size_t>(g)] +
                         group_transfer_[static_cast<std::size_t>(g)] + r.rng.jitter(600, 0.5);
      e.dur = end - e.ts;
      e.shape = &k.shape;
      e.comm = &r.comm;
      r.stream_free[static_cast<std::size_t>(pg.stream)] = end;
      if (wait) {
        auto& compute = r.stream_free[kComputeStream];
        compute = std::max(compute, end);
      }
      gpu(r, e, r.comm_launch);
    }
  }

  // nccl-tests bus bandwidth model: time = latency + bytes * factor / busbw, with a little noise per
  // instance.
  TimeNs transfer_ns(const ProcessGroup& pg, CollOp op, std::int64_t in_nelems, std::int64_t out_nelems,
                     std::int64_t elem_bytes) {
    const double n = static_cast<double>(pg.ranks.size());
    const double bytes = static_cast<double>(std::max(in_nelems, out_nelems) * elem_bytes);
    const double factor = op == CollOp::kAllReduce                     ? 2.0 * (n - 1.0) / n
                          : op == CollOp::kSend || op == CollOp::kRecv ? 1.0
                                                                       : (n - 1.0) / n;
    const double busbw = pg.inter_node ? gpu_.network_busbw : gpu_.nvlink_busbw;
    const double latency = pg.inter_node ? 25000.0 : 9000.0;
    return job_rng_.jitter(latency + bytes * factor / busbw * 1e9, 0.06);
  }

  // --- the workload ---

  void build_work() {
    const double tp = topo_.tp;
    const std::int64_t T = shape_.tokens(), h = shape_.hidden, f = shape_.ffn;
    const std::int64_t hq = 3 * h / topo_.tp, ft = f / topo_.tp, vt = shape_.vocab / topo_.tp;
    auto gemm_ns = [&](double m, double n, double k) {
      return 2.0 * m * n * k / (gpu_.peak_bf16_flops * 0.62) * 1e9;
    };
    auto mem_ns = [&](double bytes) { return 2500.0 + bytes / (gpu_.hbm_bytes_per_s * 0.8) * 1e9; };
    Work& w = work_;
    w.qkv = gemm_kernel(kn::kGemmTn, T, hq, true);
    w.qkv_dgrad = gemm_kernel(kn::kGemmNn, T, h, true);
    w.qkv_wgrad = gemm_kernel(kn::kGemmNt, hq, h, false);
    w.proj = gemm_kernel(kn::kGemmTn, T, h, true);
    w.proj_dgrad = gemm_kernel(kn::kGemmNn, T, h / topo_.tp, true);
    w.proj_wgrad = gemm_kernel(kn::kGemmNt, h, h / topo_.tp, false);
    w.fc1 = gemm_kernel(kn::kGemmTn, T, ft, true);
    w.fc1_dgrad = gemm_kernel(kn::kGemmNn, T, h, true);
    w.fc1_wgrad = gemm_kernel(kn::kGemmNt, ft, h, false);
    w.fc2 = gemm_kernel(kn::kGemmTn, T, h, true);
    w.fc2_dgrad = gemm_kernel(kn::kGemmNn, T, ft, true);
    w.fc2_wgrad = gemm_kernel(kn::kGemmNt, h, ft, false);
    w.head = gemm_kernel(kn::kGemmTn, T, vt, true);
    w.head_dgrad = gemm_kernel(kn::kGemmNn, T, h, true);
    w.head_wgrad = gemm_kernel(kn::kGemmNt, vt, h, false);
    w.t_qkv = gemm_ns(T, hq, h);
    w.t_proj = gemm_ns(T, h, h / tp);
    w.t_fc1 = gemm_ns(T, ft, h);
    w.t_fc2 = gemm_ns(T, h, ft);
    w.t_head = gemm_ns(T, vt, h);
    const std::int64_t heads = std::max<std::int64_t>(1, shape_.heads / topo_.tp);
    w.flash = KernelDef{kn::kFlashFwd, {}};
    w.flash.shape.grid[0] = ceil_div(shape_.seq, 128);
    w.flash.shape.grid[1] = shape_.micro_batch;
    w.flash.shape.grid[2] = heads;
    w.flash.shape.registers = 255;
    w.flash.shape.shared_bytes = 49152;
    w.flash_dot = KernelDef{kn::kFlashBwdDotDoO, {}};
    w.flash_dot.shape.grid[0] = ceil_div(shape_.seq, 128);
    w.flash_dot.shape.grid[1] = shape_.micro_batch;
    w.flash_dot.shape.grid[2] = heads;
    w.flash_dot.shape.block[0] = 256;
    w.flash_dot.shape.registers = 40;
    w.flash_bwd = KernelDef{kn::kFlashBwd, {}};
    w.flash_bwd.shape.grid[0] = ceil_div(shape_.seq, 128);
    w.flash_bwd.shape.grid[1] = shape_.micro_batch;
    w.flash_bwd.shape.grid[2] = heads;
    w.flash_bwd.shape.block[0] = 256;
    w.flash_bwd.shape.registers = 255;
    w.flash_bwd.shape.shared_bytes = 98304;
    const double attn_flops = 4.0 * static_cast<double>(T) * static_cast<double>(shape_.seq) *
                              static_cast<double>(h) / tp * 0.5;  // causal
    w.t_flash = attn_flops / (gpu_.peak_bf16_flops * 0.45) * 1e9;
    w.t_flash_bwd = 2.5 * w.t_flash;
    w.t_flash_dot = mem_ns(static_cast<double>(T * h) / tp * 4.0);
    const double act = static_cast<double>(T * h);
    w.ln = row_kernel(kn::kLayerNorm, T, 128, 40, 0);
    w.ln_bwd_input = row_kernel(kn::kLayerNormBwdInput, T, 128, 48, 0);
    w.ln_bwd_gamma = row_kernel(kn::kLayerNormBwdGamma, ceil_div(h, 32), 1024, 64, 8448);
    w.t_ln = mem_ns(act * 2 * 2);
    w.t_ln_bwd = mem_ns(act * 2 * 3);
    w.t_ln_gamma = mem_ns(act * 2 * 2);
    w.add = elementwise_kernel(kn::kAdd, T * h);
    w.t_add = mem_ns(act * 2 * 3);
    w.gelu = elementwise_kernel(kn::kGelu, T * ft);
    w.gelu_bwd = elementwise_kernel(kn::kGeluBwd, T * ft);
    w.t_gelu = mem_ns(static_cast<double>(T * ft) * 2 * 2);
    w.t_gelu_bwd = mem_ns(static_cast<double>(T * ft) * 2 * 3);
    w.bias_sum = row_kernel(kn::kBiasSum, 256, 512, 32, 16);
    w.t_bias = mem_ns(act * 2);
    w.embedding = elementwise_kernel(kn::kEmbedding, T * h, 8);
    w.t_embedding = mem_ns(act * 2 * 2);
    w.embedding_bwd = row_kernel(kn::kEmbeddingBwd, ceil_div(T, 32), 1024, 38, 8192);
    w.t_embedding_bwd = mem_ns(act * 2 * 3);
    w.log_softmax = row_kernel(kn::kLogSoftmax, T, 1024, 32, 0);
    w.log_softmax_bwd = row_kernel(kn::kLogSoftmaxBwd, T, 1024, 32, 0);
    w.t_softmax = mem_ns(static_cast<double>(T * vt) * 2 * 2);
    w.nll = row_kernel(kn::kNllLoss, 1, 1024, 30, 8192);
    w.nll_bwd = elementwise_kernel(kn::kNllLossBwd, T);
    w.t_nll = mem_ns(static_cast<double>(T) * 16);
    w.layer_params = (4 * h * h + 2 * h * f) / topo_.tp + 9 * h;
    // Parameters held by one rank: its pipeline stage's layers (all of them without stages).
    const std::int64_t total_params =
        w.layer_params * (config_.layers / topo_.pp) + 2 * shape_.vocab / topo_.tp * h;
    w.grad_bytes = total_params * 4;
    w.norm = row_kernel(kn::kNorm, 640, 512, 32, 16);
    w.t_norm = mem_ns(static_cast<double>(w.grad_bytes));
    w.foreach_mul =
        elementwise_kernel(kn::kForeachMul, std::min<std::int64_t>(total_params, 320 * 65536 * 4));
    w.t_foreach = mem_ns(static_cast<double>(w.grad_bytes) * 2);
    w.adamw =
        elementwise_kernel(kn::kFusedAdamW, std::min<std::int64_t>(total_params / topo_.dp / 4, 65535 * 512));
    w.adamw.shape.block[0] = 512;
    w.adamw.shape.registers = 64;
    // Optimizer state of this rank's parameter shard: params, grads, two moments in fp32, read and written.
    w.t_adamw_chunk = mem_ns(static_cast<double>(total_params) / topo_.dp * 16.0 * 2.0 / 4.0);
    w.tp_nelems = T * h;
    w.input_bytes = T * 8;
    w.nccl_tp = nccl_kernel(kn::kNcclAllReduceBf16, 16, 640);
    w.nccl_dp_rs = nccl_kernel(kn::kNcclReduceScatterF32, 32, 544);
    w.nccl_dp_ag = nccl_kernel(kn::kNcclAllGather, 32, 544);
    w.nccl_world = nccl_kernel(kn::kNcclAllReduceF32, 2, 64);
    w.nccl_p2p = nccl_kernel(kn::kNcclSendRecv, 8, 320);
  }

  Config config_;
  Sink& sink_;
  Topology topo_;
  Gpu gpu_;
  Shape shape_;
  Work work_;
  JobInfo info_;
  Rng job_rng_;
  std::vector<RankState> ranks_;
  std::deque<std::string> step_names_;
  std::vector<std::int64_t> group_seq_;
  int scope_stage_ = -1;      // -1: every rank; else only the ranks of this pipeline stage
  std::uint64_t events_ = 0;  // X events written (CPU ranges, runtime calls, GPU activities)
  struct PendingSend {
    Launch launch{};
    TimeNs ready = 0;  // the data is ready and the kernel launched
    CommMeta meta;
    int sender = 0;
  };
  std::map<std::tuple<int, bool, std::size_t>, PendingSend> pending_;  // (receiver rank, forward, unit)
  std::vector<bool> done_forward_, done_backward_;
  std::vector<TruthBlock> truth_;
  std::vector<TimeNs> group_last_, group_transfer_;
};

// Events (X events of one rank) of one step with LAYERS layers.
std::uint64_t events_per_step(Config config, int layers) {
  config.layers = layers;
  CountingSink counter(0);
  Simulation sim(config, counter);
  sim.run_step(kFirstStep);
  return counter.events();
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Writes the job. FIXED and PER_LAYER estimate the events per step for the summary (0 with pipeline stages,
// which count their events instead).
int generate(const Config& config, const std::string& format, const std::string& output, bool single_file,
             int only_rank, int gzip_level, bool quiet, double fixed, double per_layer) {
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<Sink> sink;
  std::vector<std::filesystem::path> files;
  if (format == "msdb") {
    const std::filesystem::path target(output);
    if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
    sink = std::make_unique<MsdbSink>(target);
  } else {
    const bool gzip = format == "kineto-gz";
    std::vector<std::filesystem::path> paths(static_cast<std::size_t>(config.ranks));
    if (single_file) {
      const std::filesystem::path target(output);
      if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
      paths[static_cast<std::size_t>(only_rank)] = target;
    } else {
      std::filesystem::create_directories(output);
      for (int r = 0; r < config.ranks; ++r) {
        paths[static_cast<std::size_t>(r)] =
            std::filesystem::path(output) / fmt::format("rank-{}.json{}", r, gzip ? ".gz" : "");
      }
    }
    for (const auto& p : paths) {
      if (!p.empty()) files.push_back(p);
    }
    sink = std::make_unique<KinetoSink>(std::move(paths), gzip, gzip_level);
  }

  Simulation sim(config, *sink);
  sim.begin();
  std::int64_t done = 0;
  for (; done < config.steps; ++done) {
    sim.run_step(kFirstStep + done);
    if (config.target_bytes > 0 && sink->min_bytes() >= config.target_bytes) {
      ++done;
      break;
    }
  }
  const auto generated = std::chrono::steady_clock::now();
  sim.finish();
  sim.write_truth();
  // A profile written here is what `import` would have written: with its per-rank summaries.
  if (format == "msdb") add_summaries(output);
  const auto finished = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(finished - started).count();
  const double finish_seconds = std::chrono::duration<double>(finished - generated).count();

  if (!quiet) {
    const auto& topo = sim.topology();
    if (topo.pp > 1) {
      const char* schedule = config.schedule == Schedule::kInterleaved ? "interleaved"
                             : config.schedule == Schedule::kGpipe     ? "gpipe"
                                                                       : "1f1b";
      fmt::print(
          stderr,
          "meshscope_gen_job: {} ranks (tp {}, dp {}, pp {}), {} layers, {} schedule, {} virtual stage(s), "
          "{} micro-batches, stage jitter {}, {} steps, {} events in all, seed {}, {} in {:.1f} s (of which "
          "{:.1f} s finishing the output)\n",
          config.ranks, topo.tp, topo.dp, topo.pp, config.layers, schedule, config.virtual_stages,
          config.micro_batches, config.stage_jitter, done, sim.events(), config.seed, output, seconds,
          finish_seconds);
    } else {
      const double per_rank = (fixed + per_layer * config.layers) * static_cast<double>(done);
      fmt::print(
          stderr,
          "meshscope_gen_job: {} ranks (tp {}, dp {}), {} layers, {} steps, about {:.0f} events per rank "
          "({:.0f} in all), seed {}, {} in {:.1f} s (of which {:.1f} s finishing the output)\n",
          config.ranks, topo.tp, topo.dp, config.layers, done, per_rank, per_rank * config.ranks, config.seed,
          output, seconds, finish_seconds);
    }
    for (const auto& f : files) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(f, ec);
      if (!ec && files.size() <= 8) fmt::print(stderr, "  {} ({} bytes)\n", f.string(), size);
    }
  }
  return 0;
}

// The pipeline of CONFIG (config.pp > 1) from the options: its schedule, chunks, micro-batches, the stages'
// jitter, and the layer and step counts' defaults. False, with one line on standard error, for options that
// do not make a pipeline.
bool configure_pipeline(Config& config, const std::string& schedule, int virtual_stages, int micro_batches,
                        double stage_jitter, const std::string& truth_path, int& layers,
                        std::int64_t& steps) {
  const int pp = config.pp;
  config.schedule = schedule == "interleaved" ? Schedule::kInterleaved
                    : schedule == "gpipe"     ? Schedule::kGpipe
                                              : Schedule::k1F1B;
  const bool interleaved = config.schedule == Schedule::kInterleaved;
  if (!interleaved && virtual_stages > 1) {
    fmt::print(stderr, "meshscope_gen_job: --virtual-stages needs --schedule interleaved\n");
    return false;
  }
  config.virtual_stages = interleaved ? (virtual_stages > 0 ? virtual_stages : 2) : 1;
  if (interleaved && config.virtual_stages < 2) {
    fmt::print(stderr, "meshscope_gen_job: --schedule interleaved needs --virtual-stages 2 or more\n");
    return false;
  }
  config.micro_batches = micro_batches > 0 ? micro_batches : 2 * pp;
  if (interleaved && config.micro_batches % pp != 0) {
    fmt::print(stderr, "meshscope_gen_job: interleaving needs --micro-batches a multiple of --pp ({})\n", pp);
    return false;
  }
  config.stage_jitter = stage_jitter;
  config.truth_path = truth_path;
  const int chunks = pp * config.virtual_stages;
  if (layers == 0) layers = 2 * chunks;
  if (layers % chunks != 0) {
    fmt::print(stderr, "meshscope_gen_job: --layers {} is not a multiple of pp x virtual stages ({})\n",
               layers, chunks);
    return false;
  }
  if (steps == 0) steps = 2;
  return true;
}

// The layer and step counts of a job without pipeline stages that holds about EVENTS_PER_RANK events per rank
// (events per step grow linearly with the layers: FIXED + PER_LAYER x layers, measured on two sizes); LAYERS
// and STEPS when given. UNTIL_BYTES: steps are added until the files reach --target-bytes.
void size_job(Config& config, int layers, std::int64_t steps, std::uint64_t events_per_rank, bool until_bytes,
              double& fixed, double& per_layer) {
  config.layers = 2;
  const std::uint64_t at2 = events_per_step(config, 2);
  const std::uint64_t at4 = events_per_step(config, 4);
  per_layer = static_cast<double>(at4 - at2) / 2.0;
  fixed = static_cast<double>(at2) - 2.0 * per_layer;
  auto layers_for = [&](double events_per_step) {
    return std::max(1, static_cast<int>(std::llround((events_per_step - fixed) / per_layer)));
  };
  const double target_events = static_cast<double>(events_per_rank);
  if (layers > 0) {
    config.layers = layers;
    if (steps == 0) {
      const double per_step = fixed + per_layer * layers;
      steps = std::max<std::int64_t>(1, std::llround(target_events / per_step));
    }
  } else if (steps > 0) {
    config.layers = layers_for(target_events / static_cast<double>(steps));
  } else {
    steps = 3;
    config.layers = layers_for(target_events / 3.0);
    if (config.layers > kMaxDefaultLayers) {
      const double per_step = fixed + per_layer * kMaxDefaultLayers;
      steps = std::max<std::int64_t>(3, std::llround(target_events / per_step));
      config.layers = std::min(kMaxDefaultLayers, layers_for(target_events / static_cast<double>(steps)));
    }
  }
  if (until_bytes) steps = std::numeric_limits<std::int64_t>::max() / 2;
  config.steps = steps;
}

int run(int argc, char** argv) {
  CLI::App app{
      "Generates a deterministic synthetic multi-rank LLM training job (tensor + data parallel, H100, NCCL) "
      "as "
      "PyTorch-profiler Kineto JSON or as a meshscope profile."};
  Config config;
  int ranks = 4, tp = 0, layers = 0, only_rank = 0, gzip_level = 6;
  std::int64_t steps = 0;
  std::uint64_t events_per_rank = 20000, seed = 1, target_bytes = 0;
  std::string format = "kineto-gz", output;
  bool quiet = false;
  int pp = 1, virtual_stages = 0, micro_batches = 0;
  std::string schedule = "1f1b", truth_path;
  double stage_jitter = 0.05;
  app.add_option("--ranks", ranks, "number of ranks (GPUs)")->check(CLI::Range(1, 65536));
  app.add_option("--steps", steps, "profiler steps (default: 3, more when needed to reach --events-per-rank)")
      ->check(CLI::Range(static_cast<std::int64_t>(1), std::numeric_limits<std::int64_t>::max() / 2));
  app.add_option(
         "--events-per-rank", events_per_rank,
         "approximate CPU+GPU events (X events) per rank; sets the layer count and, without --steps, the "
         "number of steps")
      ->check(CLI::Range(static_cast<std::uint64_t>(100), static_cast<std::uint64_t>(1) << 40));
  app.add_option("--layers", layers,
                 "transformer layers (overrides the count derived from --events-per-rank)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--tp", tp,
                 "tensor-parallel size (default: 8, 4, 2 or 1 from the rank count); dp = ranks / tp")
      ->check(CLI::Range(1, 65536));
  app.add_option(
         "--pp", pp,
         "pipeline-parallel stages; ranks = tp x dp x pp, stage = rank / (tp x dp) (Megatron-LM's order)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--schedule", schedule, "pipeline schedule with --pp: 1f1b (default), interleaved or gpipe")
      ->check(CLI::IsMember({"1f1b", "interleaved", "gpipe"}));
  app.add_option("--virtual-stages", virtual_stages,
                 "model chunks per stage with --schedule interleaved (default 2)")
      ->check(CLI::Range(1, 64));
  app.add_option("--micro-batches", micro_batches,
                 "micro-batches per step with --pp (default 2 x pp; a multiple of pp when interleaved)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option(
      "--pipeline-truth", truth_path,
      "with --pp: write the forward/backward blocks each rank ran (tab-separated: rank, stage, step, "
      "forward, chunk, micro-batch, start and end in ns on the generator's clock, kernels) to this file");
  app.add_option("--stage-jitter", stage_jitter,
                 "with --pp: each stage's GPU speed is drawn from [1 - F, 1 + F] (default 0.05)")
      ->check(CLI::Range(0.0, 0.9));
  app.add_option("--seed", seed, "random seed: the same seed and options give the same job");
  app.add_option("--format", format, "output format")->check(CLI::IsMember({"kineto", "kineto-gz", "msdb"}));
  app.add_option(
         "-o,--output", output,
         "kineto formats: a directory receiving rank-<r>.json[.gz], or one FILE.json[.gz] holding only "
         "--rank; msdb: the profile file")
      ->required();
  app.add_option("--rank", only_rank, "the rank written when -o names a single .json/.json.gz file")
      ->check(CLI::Range(0, 65535));
  app.add_option("--target-bytes", target_bytes,
                 "kineto formats: keep adding steps until every written file holds this many bytes of JSON "
                 "(uncompressed); accepts suffixes such as 4GB")
      ->transform(CLI::AsSizeValue(true));
  app.add_option("--gzip-level", gzip_level, "gzip compression level for kineto-gz")->check(CLI::Range(1, 9));
  app.add_flag("-q,--quiet", quiet, "no summary on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  if (ranks % pp != 0) {
    fmt::print(stderr, "meshscope_gen_job: --pp {} does not divide --ranks {}\n", pp, ranks);
    return 2;
  }
  if (tp != 0 && ranks % (tp * pp) != 0) {
    fmt::print(stderr, "meshscope_gen_job: --tp {} x --pp {} does not divide --ranks {}\n", tp, pp, ranks);
    return 2;
  }
  if (pp == 1 && (app.count("--schedule") || app.count("--virtual-stages") || app.count("--micro-batches") ||
                  app.count("--pipeline-truth"))) {
    fmt::print(
        stderr,
        "meshscope_gen_job: --schedule, --virtual-stages, --micro-batches and --pipeline-truth need --pp "
        "> 1\n");
    return 2;
  }
  if (target_bytes > 0 && format == "msdb") {
    fmt::print(stderr, "meshscope_gen_job: --target-bytes applies to the kineto formats only\n");
    return 2;
  }
  const bool single_file = format != "msdb" && (ends_with(output, ".json") || ends_with(output, ".json.gz"));
  if (single_file && only_rank >= ranks) {
    fmt::print(stderr, "meshscope_gen_job: --rank {} is not below --ranks {}\n", only_rank, ranks);
    return 2;
  }

  config.ranks = ranks;
  config.tp = tp;
  config.pp = pp;
  if (pp > 1 && !configure_pipeline(config, schedule, virtual_stages, micro_batches, stage_jitter, truth_path,
                                    layers, steps))
    return 2;
  config.seed = seed;
  config.target_bytes = target_bytes;
  {
    std::string line = "meshscope_gen_job";
    for (int i = 1; i < argc; ++i) line += fmt::format(" {}", argv[i]);
    config.command_line = line;
  }

  // Size the job: events per step grow linearly with the layer count (with pipeline stages, the layer,
  // micro-batch and step counts are the options' or their defaults).
  if (pp > 1) {
    config.layers = layers;
    config.steps = steps;
    return generate(config, format, output, single_file, only_rank, gzip_level, quiet, 0, 0);
  }
  double fixed = 0, per_layer = 0;
  size_job(config, layers, steps, events_per_rank, target_bytes > 0 && !app.count("--steps"), fixed,
           per_layer);
  return generate(config, format, output, single_file, only_rank, gzip_level, quiet, fixed, per_layer);
}

}  // namespace
}  // namespace meshscope::gen

int main(int argc, char** argv) {
  try {
    return meshscope::gen::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "meshscope_gen_job: %s\n", error.what());
    return 1;
  }
}
