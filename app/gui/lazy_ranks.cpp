#include "app/gui/lazy_ranks.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "analysis/compare/measured.hpp"
#include "job/profile_work.hpp"
#include "profiler/error.hpp"
#include "profiler/parallel.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::gui {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename T>
std::size_t held(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
std::size_t held(const LaneLayout& lanes) {
  std::size_t n = held(lanes.members);
  for (const auto& m : lanes.members) n += held(m);
  n += held(lanes.busy_before);
  for (const auto& sums : lanes.busy_before) n += held(sums);
  n += held(lanes.fold_index);
  for (const auto& f : lanes.fold_index) n += held(f.block_max) + held(f.group_max);
  return n;
}

// What one cached rank holds: its events, its analysis part and its timeline index.
std::size_t held_bytes(const Rank& rank, const measure::RankPart& part,
                       const LoadedProfile::RankIndex& index) {
  std::size_t n = event_memory(rank).total();
  const measure::RankResult& r = part.result;
  n += held(r.exposed_comm) + held(r.classes) + held(r.steps) + held(r.streams) + held(r.kernels);
  n += held(part.name_only) + held(part.cpu_ops);
  for (const auto& s : part.cpu_ops) n += s.capacity() > 15 ? s.capacity() + 1 : 0;
  for (const auto& lanes : index.streams) n += held(lanes);
  for (const auto& lanes : index.tracks) n += held(lanes);
  for (const auto& lanes : index.api_threads) n += held(lanes);
  const auto& l = index.launches;
  n += held(l.api_of_activity) + held(l.op_of_api) + held(l.launched_first) + held(l.launched) +
       held(l.threads) + held(l.thread_of_api);
  for (const auto& t : l.threads) n += held(t.calls);
  return n;
}

}  // namespace

std::vector<std::int32_t> sample_ranks(const Profile& description, std::size_t max) {
  std::set<std::int32_t> out;
  const auto& ranks = description.ranks();
  if (ranks.empty() || max == 0) return {};
  const Rank& lowest = ranks.front();
  out.insert(lowest.rank);
  // Its pipeline group: the measured pipeline needs every stage.
  for (const ProcessGroup& pg : lowest.process_groups) {
    if (pg.ranks.size() < 2 || !vocabulary::parallel_dims_named(pg.desc).pp) continue;
    for (std::int32_t r : pg.ranks) {
      if (out.size() < max && description.find_rank(r)) out.insert(r);
    }
    break;
  }
  // Then ranks spread over the job.
  const std::size_t want = std::min(max, ranks.size());
  for (std::size_t k = 1; out.size() < want && k < want * 4; ++k) {
    const std::size_t at = std::min(ranks.size() - 1, k * ranks.size() / want);
    out.insert(ranks[at].rank);
    if (k >= want) out.insert(ranks[(k * 7919) % ranks.size()].rank);  // when the spread hit taken ones
  }
  return {out.begin(), out.end()};
}

std::optional<RankReader> open_lazily(Job& job, const OpenOptions& options) {
  const ProfileSummary* summary = job.summary();
  if (options.lazy == LazyMode::kNever || !summary || summary->ranks.empty()) return std::nullopt;
  if (options.lazy == LazyMode::kAuto && summary_events(*summary) < options.lazy_events) return std::nullopt;
  PhaseTimer timer("view: rank rows");
  std::optional<RankReader> reader = job.rank_reader();
  // A table whose ranks take turns row by row would be read whole for every rank: load everything instead
  // (unless asked to go lazy whatever it costs).
  if (reader && options.lazy != LazyMode::kAlways && interleaved(reader->index())) return std::nullopt;
  return reader;
}

std::unique_ptr<LoadedProfile> lazy_base(std::unique_ptr<LoadedProfile> preview, RankReader reader,
                                         const OpenOptions& options) {
  auto loaded = std::move(preview);
  const Profile& description = *loaded->profile;
  const auto& ranks = description.ranks();
  const auto t = Clock::now();
  LoadedProfile::Lazy lazy;
  lazy.loaded.assign(ranks.size(), 0);
  lazy.summary_of.assign(ranks.size(), -1);
  for (const auto& r : loaded->summary->ranks) lazy.counts += r.counts;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto* s = find_rank(*loaded->summary, ranks[r].rank);
    if (s) lazy.summary_of[r] = static_cast<std::int32_t>(s - loaded->summary->ranks.data());
  }
  loaded->job_analysis =
      std::make_shared<const measure::Analysis>(measure::analysis_of_summary(description, *loaded->summary));

  // The measured model and pipeline from a sample of ranks (the whole job's would need every event).
  const std::vector<std::int32_t> sample = sample_ranks(description, options.sample_ranks);
  {
    PhaseTimer timer("view: sample ranks");
    std::shared_ptr<const std::vector<std::string>> strings = description.strings();
    auto sample_events = reader.read(sample, strings);
    const Profile sampled = description.with_ranks(sample_events, strings);
    std::vector<measure::RankPart> parts(ranks.size());
    std::vector<std::uint8_t> analysed(ranks.size(), 0);
    measure::RankAnalyzer analyzer;
    for (std::int32_t number : sample) {
      const auto ri = static_cast<std::size_t>(sampled.rank_index(number));
      parts[ri] = analyzer.analyze(sampled, ri);
      analysed[ri] = 1;
    }
    const measure::Analysis analysis = measure::combine(sampled, std::move(parts), analysed);
    try {
      loaded->measured =
          compare::measure_profile(sampled, analysis, load_work(sampled, {.uncounted_shapes = true}));
      loaded->start = profile_start(*loaded->measured, description.world_size());
      loaded->roofline = measured_points(*loaded->measured);
    } catch (const std::exception& e) {
      loaded->measured.reset();
      loaded->measured_error = e.what();
    }
    loaded->pipeline = measure::measure_pipeline(sampled, analysis);
    // Only the groups whose every stage was sampled were measured on events.
    auto& groups = loaded->pipeline.groups;
    groups.erase(std::remove_if(groups.begin(), groups.end(),
                                [&](const measure::PipelineGroup& g) {
                                  return std::any_of(g.ranks.begin(), g.ranks.end(), [&](std::int32_t r) {
                                    return !std::binary_search(sample.begin(), sample.end(), r);
                                  });
                                }),
                 groups.end());
    loaded->pipeline.found = !groups.empty();
    std::string list;
    for (std::int32_t r : sample) list += fmt::format("{}{}", list.empty() ? "" : ", ", r);
    lazy.sample = fmt::format("ranks {} ({} of {})", list, sample.size(), ranks.size());
  }
  lazy.reader = std::make_shared<const RankReader>(std::move(reader));
  lazy.budget = options.rank_cache_bytes;
  // No rank's events yet: every per-rank structure is empty.
  std::vector<measure::RankPart> parts(ranks.size());
  loaded->shared_analysis = std::make_shared<const measure::Analysis>(
      measure::combine(description, std::move(parts), std::vector<std::uint8_t>(ranks.size(), 0)));
  loaded->ranks.assign(ranks.size(), std::make_shared<const LoadedProfile::RankIndex>());
  loaded->instance_of.assign(ranks.size(), {});
  loaded->range_index = measure::index_ranges(description);
  measure::CriticalPathOptions none;
  none.ranks.assign(ranks.size(), 0);
  loaded->critical = measure::critical_paths(description, loaded->analysis(), none);
  loaded->lazy = std::move(lazy);
  loaded->events = true;
  loaded->analyze_s = seconds_since(t);
  return loaded;
}

// [SECTION] LazyRanks
// -----------------------------------------------------------------------------------------------

struct LazyRanks::Cached {
  std::shared_ptr<const Rank> rank;
  measure::RankPart part;
  std::shared_ptr<const LoadedProfile::RankIndex> index;
  std::size_t bytes = 0;
  std::uint64_t used = 0;  // clock_ when last wanted
};

LazyRanks::LazyRanks(std::shared_ptr<const LoadedProfile> base, std::size_t budget_bytes)
    : base_(std::move(base)), budget_(budget_bytes) {
  const std::size_t n = base_->profile->ranks().size();
  cache_.resize(n);
  failed_.assign(n, 0);
  absent_.assign(n, 0);
  strings_ = base_->profile->strings();
  reader_ = base_->lazy && base_->lazy->reader
                ? std::make_unique<RankReader>(*base_->lazy->reader)
                : std::make_unique<RankReader>(base_->profile, base_->summary, RankRowIndex{});
  worker_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

LazyRanks::~LazyRanks() {
  {
    // Under the mutex: the worker checks for a stop under it before it waits, so the wake-up cannot fall
    // between.
    std::lock_guard lock(mutex_);
    worker_.request_stop();
  }
  changed_.notify_all();
}

void LazyRanks::want(std::vector<std::uint32_t> ranks) {
  std::lock_guard lock(mutex_);
  if (ranks == wanted_) return;
  // Until the worker has looked, every rank of a new list may be missing (a screenshot waits for them).
  if (!ranks.empty()) pending_ = std::max<std::size_t>(pending_.load(), 1);
  wanted_ = std::move(ranks);
  ++wanted_version_;
  changed_.notify_all();
}

std::unique_ptr<LoadedProfile> LazyRanks::take() {
  std::lock_guard lock(mutex_);
  return std::move(ready_);
}

std::string LazyRanks::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

LazyRanks::Stats LazyRanks::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool LazyRanks::wait_idle(double timeout_s) const {
  const auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::unique_lock lock(mutex_);
  while (Clock::now() < until) {
    if (pending_.load() == 0) return true;
    changed_.wait_for(lock, std::chrono::milliseconds(10));
  }
  return pending_.load() == 0;
}

void LazyRanks::run(std::stop_token stop) {
  std::uint64_t seen = 0;
  while (!stop.stop_requested()) {
    std::vector<std::uint32_t> wanted;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop.stop_requested() || wanted_version_ != seen; });
      if (stop.stop_requested()) return;
      seen = wanted_version_;
      wanted = wanted_;
    }
    ++clock_;
    std::vector<std::uint32_t> missing;
    for (std::uint32_t r : wanted) {
      if (r >= cache_.size()) continue;
      if (cache_[r])
        cache_[r]->used = clock_;
      else if (!failed_[r])
        missing.push_back(r);
    }
    pending_ = missing.size();
    // Ranks shown that are cached but whose critical paths the view's generation lacks (they were off screen
    // when it was made): a generation with them, from the cache.
    if (missing.empty() && std::any_of(wanted.begin(), wanted.end(), [&](std::uint32_t r) {
          return r < cache_.size() && cache_[r] && (r >= paths_of_.size() || !paths_of_[r]);
        })) {
      auto generation = make_generation(wanted);
      std::lock_guard lock(mutex_);
      ready_ = std::move(generation);
      ++stats_.generations;
    }
    // A batch at a time, so that the first ranks show while the others load; a newer want() list is taken up
    // between batches. Ranks already cached are in the current generation: nothing to do for them.
    constexpr std::size_t kBatch = 16;
    for (std::size_t at = 0; at < missing.size() && !stop.stop_requested(); at += kBatch) {
      const std::size_t end = std::min(missing.size(), at + kBatch);
      const std::vector<std::uint32_t> batch(missing.begin() + static_cast<std::ptrdiff_t>(at),
                                             missing.begin() + static_cast<std::ptrdiff_t>(end));
      load_batch(batch);
      if (evict(wanted)) ::malloc_trim(0);  // the evicted ranks' memory, freed in this thread's arena
      auto generation = make_generation(wanted);
      std::lock_guard lock(mutex_);
      ready_ = std::move(generation);
      ++stats_.generations;
      pending_ = missing.size() - end;
      changed_.notify_all();
      if (wanted_version_ != seen) break;  // the view moved on: serve its newer list first
    }
    std::lock_guard lock(mutex_);
    if (wanted_version_ == seen) pending_ = 0;
    changed_.notify_all();
  }
}

void LazyRanks::load_batch(const std::vector<std::uint32_t>& batch) {
  const Profile& description = *base_->profile;
  const auto t = Clock::now();
  std::vector<std::int32_t> numbers;
  for (std::uint32_t r : batch) numbers.push_back(description.ranks()[r].rank);
  std::vector<std::shared_ptr<const Rank>> got;
  try {
    got = reader_->read(numbers, strings_);
  } catch (const std::exception& e) {
    for (std::uint32_t r : batch) failed_[r] = 1;
    std::lock_guard lock(mutex_);
    error_ = e.what();
    return;
  }
  const double load_s = seconds_since(t);
  const auto t2 = Clock::now();
  // A rank whose summary counts events that the profile does not hold (a summary part merged without its
  // events: docs/SCALE.md) stays a summary: it is not cached, and not asked for again.
  std::vector<std::uint32_t> kept;
  {
    std::vector<std::shared_ptr<const Rank>> with_events;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const TableRows have = loaded_rows(*got[k]);
      const RankSummary* s = find_rank(*base_->summary, got[k]->rank);
      const TableRows want = s ? summary_rows(*s) : TableRows{};
      const auto sum = [](const TableRows& rows) {
        return std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
      };
      if (sum(have) == 0 && sum(want) > 0) {
        failed_[batch[k]] = absent_[batch[k]] = 1;
        continue;
      }
      with_events.push_back(got[k]);
      kept.push_back(batch[k]);
    }
    got = std::move(with_events);
  }
  // Each rank's own analysis and timeline index, on every core; a composed profile lends them its strings.
  const Profile composed = description.with_ranks(got, strings_);
  std::vector<std::unique_ptr<Cached>> made(got.size());
  parallel_for_with(
      got.size(), 0, [] { return std::make_unique<measure::RankAnalyzer>(); },
      [&](std::unique_ptr<measure::RankAnalyzer>& analyzer, std::size_t k) {
        const auto ri = static_cast<std::size_t>(composed.rank_index(got[k]->rank));
        auto c = std::make_unique<Cached>();
        c->rank = got[k];
        c->part = analyzer->analyze(composed, ri);
        c->index = std::make_shared<const LoadedProfile::RankIndex>(index_rank(*got[k]));
        c->bytes = held_bytes(*got[k], c->part, *c->index);
        c->used = clock_;
        made[k] = std::move(c);
      });
  std::size_t loaded = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    cache_[kept[k]] = std::move(made[k]);
    ++loaded;
  }
  std::lock_guard lock(mutex_);
  stats_.loaded += loaded;
  stats_.load_s += load_s;
  stats_.index_s += seconds_since(t2);
}

bool LazyRanks::evict(const std::vector<std::uint32_t>& wanted) {
  std::size_t bytes = 0;
  for (const auto& c : cache_) bytes += c ? c->bytes : 0;
  std::vector<std::uint8_t> keep(cache_.size(), 0);
  for (std::uint32_t r : wanted) {
    if (r < keep.size()) keep[r] = 1;
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t r = 0; r < cache_.size(); ++r) {
    if (cache_[r] && !keep[r]) order.push_back(r);
  }
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return cache_[a]->used < cache_[b]->used; });
  std::size_t evicted = 0;
  for (std::uint32_t r : order) {
    if (bytes <= budget_) break;
    bytes -= cache_[r]->bytes;
    cache_[r].reset();
    ++evicted;
  }
  std::size_t cached = 0;
  for (const auto& c : cache_) cached += c ? 1 : 0;
  std::lock_guard lock(mutex_);
  stats_.evicted += evicted;
  stats_.cached = cached;
  stats_.bytes = bytes;
  return evicted > 0;
}

std::unique_ptr<LoadedProfile> LazyRanks::make_generation(const std::vector<std::uint32_t>& wanted) {
  const auto t = Clock::now();
  const LoadedProfile& base = *base_;
  const Profile& description = *base.profile;
  const std::size_t n = cache_.size();
  std::vector<std::shared_ptr<const Rank>> ranks;
  std::vector<std::uint8_t> loaded(n, 0);
  std::vector<measure::RankPart> parts(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (!cache_[r]) continue;
    ranks.push_back(cache_[r]->rank);
    loaded[r] = 1;
    parts[r] = cache_[r]->part;
  }
  // What every generation shares with the first (summaries, the sample's measured model, the empty indices of
  // the ranks not loaded), then this generation's ranks and what needs them together.
  auto gen = std::make_unique<LoadedProfile>(base);
  auto profile = std::make_shared<const Profile>(description.with_ranks(ranks, strings_));
  gen->profile = profile;
  gen->shared_analysis =
      std::make_shared<const measure::Analysis>(measure::combine(*profile, std::move(parts), loaded));
  for (std::size_t r = 0; r < n; ++r) {
    if (cache_[r]) gen->ranks[r] = cache_[r]->index;
  }
  link_instances(*gen);
  gen->range_index = measure::index_ranges(*profile);
  // Critical paths of the ranks shown only (the overlay draws no other): their cost stays that of a screen,
  // not of the cache.
  measure::CriticalPathOptions paths;
  paths.ranks.assign(n, 0);
  paths_of_.assign(n, 0);
  for (std::uint32_t r : wanted) {
    if (r < n && loaded[r]) paths.ranks[r] = paths_of_[r] = 1;
  }
  gen->critical = measure::critical_paths(*profile, gen->analysis(), paths);
  LoadedProfile::Lazy lazy = *base.lazy;
  lazy.loaded = std::move(loaded);
  lazy.absent = absent_;
  lazy.loaded_ranks = ranks.size();
  for (const auto& c : cache_) lazy.bytes += c ? c->bytes : 0;
  lazy.budget = budget_;
  gen->lazy = std::move(lazy);
  gen->events = true;
  gen->analyze_s = seconds_since(t);
  std::lock_guard lock(mutex_);
  stats_.generation_s += gen->analyze_s;
  return gen;
}

}  // namespace meshscope::gui
