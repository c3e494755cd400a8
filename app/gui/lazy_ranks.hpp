// Lazy ranks: a large profile opens on its description and summaries, and each rank's
// events load only when the timeline shows them (its group is expanded, or its header is on screen at a zoom
// the summary's overview buckets are too coarse for). A bounded cache keeps the loaded ranks and evicts those
// not shown, least recently shown first.
//
// LazyRanks runs one worker thread. The view tells it each frame which ranks it shows (want()); the worker
// reads the missing ones (Profile::load_ranks, through the row runs of profiler/rank_rows.hpp), analyses each
// once (measure::RankAnalyzer, the timeline's lanes and launch links), and hands the view a new generation: a
// LoadedProfile whose profile holds the cached ranks' events (shared, not copied), with the analyses that
// need the ranks together (collective instances, critical paths) run again over them. The whole job's figures
// (the Summary, the Overview) come from the summaries; the Explorer's and the Roofline's measured model from
// a sample of ranks loaded when the profile opens (sample_ranks()).
//
// Plain C++ (no ImGui); tests/gui/lazy_ranks_test.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/loaded_profile.hpp"
#include "profiler/summarised_ranks.hpp"

namespace meshscope::gui {

// The ranks whose events the measured model (Explorer, Roofline) and the measured pipeline are taken from
// when a profile opens lazily: the lowest rank, the members of its pipeline group when the profile describes
// one, and ranks spread evenly over the job, at most MAX of them (by rank number, ascending).
std::vector<std::int32_t> sample_ranks(const Profile& description, std::size_t max = 8);

// The job's reader of its ranks (Job::rank_reader) when JOB is to open lazily: it carries summaries whose
// event counts reach OPTIONS' threshold (or lazy loading is forced), and its event tables keep each rank's
// rows together (else every rank's load would read them whole); nullopt when it loads whole.
std::optional<RankReader> open_lazily(Job& job, const OpenOptions& options);

// The first generation of a lazily opened profile: PREVIEW's description and summaries, no rank's events, the
// whole job's analysis from the summaries, and the measured model and pipeline of the sample ranks. Throws
// meshscope::Error naming the file when the sample's events cannot be read.
std::unique_ptr<LoadedProfile> lazy_base(std::unique_ptr<LoadedProfile> preview, RankReader reader,
                                         const OpenOptions& options);

class LazyRanks {
 public:
  // BASE: a lazy_base() (or a generation of it). BUDGET_BYTES: what the cached ranks may hold (their events
  // and what the view derives from them); the ranks shown are kept even beyond it.
  LazyRanks(std::shared_ptr<const LoadedProfile> base, std::size_t budget_bytes);
  ~LazyRanks();
  LazyRanks(const LazyRanks&) = delete;
  LazyRanks& operator=(const LazyRanks&) = delete;

  // The ranks (indices into Profile::ranks()) the view shows now, the most wanted first. Cheap when nothing
  // changed; the worker loads the missing ones in that order, a batch at a time.
  void want(std::vector<std::uint32_t> ranks);
  // The newest generation made since the last call (nullptr: none).
  std::unique_ptr<LoadedProfile> take();
  // Wanted ranks whose events are not in the newest generation yet (being read or analysed).
  std::size_t pending() const { return pending_.load(); }
  // The last load error (one line naming the file), "" when none. The ranks it concerned are not retried.
  std::string error() const;
  // Generations made, ranks read and evicted so far (tests, the state dump).
  struct Stats {
    std::size_t generations = 0, loaded = 0, evicted = 0, cached = 0, bytes = 0;
    double load_s = 0, index_s = 0, generation_s = 0;  // reading ranks; analysing each; making generations
  };
  Stats stats() const;
  // Blocks until no wanted rank is pending (tests, screenshots); false after TIMEOUT_S.
  bool wait_idle(double timeout_s) const;

 private:
  struct Cached;
  void run(std::stop_token stop);
  void load_batch(const std::vector<std::uint32_t>& batch);
  bool evict(const std::vector<std::uint32_t>& wanted);
  std::unique_ptr<LoadedProfile> make_generation(const std::vector<std::uint32_t>& wanted);

  std::shared_ptr<const LoadedProfile> base_;
  std::unique_ptr<RankReader> reader_;  // its index refined (exact runs) when a load finds a guess wrong
  std::size_t budget_;
  // Worker state (only the worker touches it).
  std::vector<std::unique_ptr<Cached>> cache_;  // per rank index, null when not loaded
  std::vector<std::uint8_t> failed_;            // per rank index: not to be read again
  std::vector<std::uint8_t> absent_;            // per rank index: the profile holds only its summary
  std::vector<std::uint8_t> paths_of_;  // per rank index: the newest generation has its critical paths
  std::shared_ptr<const std::vector<std::string>> strings_;
  std::uint64_t clock_ = 0;  // increases with each want() seen: the recency of a rank
  // Shared with the view, under mutex_.
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::uint32_t> wanted_;
  std::uint64_t wanted_version_ = 0;
  std::unique_ptr<LoadedProfile> ready_;
  std::string error_;
  Stats stats_;
  std::atomic<std::size_t> pending_{0};
  std::jthread worker_;  // last: stopped and joined first
};

}  // namespace meshscope::gui
