#include "job/job.hpp"

#include <optional>
#include <utility>

#include "job/profile_work.hpp"
#include "profiler/error.hpp"
#include "profiler/summary_store.hpp"

namespace meshscope {

namespace {

// How the analyses load the events: launch configurations and links are read only by what shows them.
constexpr LoadOptions kAnalysisLoad{.kernel_details = false, .links = false};

}  // namespace

struct Job::State {
  std::vector<std::filesystem::path> sources;
  JobOptions options;
  ProfileInput input;
  std::string title;
  std::shared_ptr<const Profile> description, profile, complete;
  bool summary_read = false;
  std::shared_ptr<const ProfileSummary> summary;
  std::optional<RankRowIndex> rank_rows;  // of a summarised profile (rank_reader)
  std::optional<measure::ProfileWork> work;
  std::shared_ptr<const measure::Analysis> analysis;
  std::optional<compare::Workload> workload;
  std::optional<compare::MeasuredModel> measured;
  std::string measured_error;  // why measured() failed, once it did
  std::shared_ptr<const measure::CriticalPaths> critical;
  std::shared_ptr<const measure::PipelineReport> pipeline;
};

Job::Job(std::unique_ptr<State> state) : state_(std::move(state)) {}
Job::Job(Job&&) noexcept = default;
Job& Job::operator=(Job&&) noexcept = default;
Job::~Job() = default;

Job Job::open(const std::vector<std::filesystem::path>& sources, JobOptions options) {
  auto state = std::make_unique<State>();
  state->sources = sources;
  state->input = options.always_import ? import_to_cache(sources, options.import)
                                       : profile_input(sources, options.import);
  state->title = state->input.imported ? sources_title(sources) : state->input.profile.filename().string();
  state->options = std::move(options);
  return Job(std::move(state));
}

Job Job::of_profile(std::shared_ptr<const Profile> profile, std::shared_ptr<const ProfileSummary> stored) {
  auto state = std::make_unique<State>();
  state->input.profile = profile->path();
  state->title = profile->path().filename().string();
  state->description = state->profile = state->complete = std::move(profile);
  state->summary = std::move(stored);
  state->summary_read = true;
  return Job(std::move(state));
}

const std::filesystem::path& Job::path() const {
  return state_->input.profile;
}

const ProfileInput& Job::input() const {
  return state_->input;
}

const std::string& Job::title() const {
  return state_->title;
}

const Profile& Job::description() {
  return *shared_description();
}

std::shared_ptr<const Profile> Job::shared_description() {
  if (!state_->description)
    state_->description =
        std::make_shared<const Profile>(Profile::load(path(), LoadOptions{.events = false}));
  return state_->description;
}

const ProfileSummary* Job::summary() {
  return shared_summary().get();
}

std::shared_ptr<const ProfileSummary> Job::shared_summary() {
  if (!state_->summary_read) {
    description();  // a file that is no profile is refused by the loader's one line
    if (auto stored = read_summary(path()))
      state_->summary = std::make_shared<const ProfileSummary>(std::move(*stored));
    state_->summary_read = true;
  }
  return state_->summary;
}

std::optional<RankReader> Job::rank_reader() {
  auto summary = shared_summary();
  if (!summary) return std::nullopt;
  if (!state_->rank_rows) state_->rank_rows = index_summarised_ranks(path(), *summary);
  return RankReader(shared_description(), std::move(summary), *state_->rank_rows);
}

const Profile& Job::profile() {
  if (!state_->profile && state_->complete) state_->profile = state_->complete;
  if (!state_->profile)
    state_->profile = std::make_shared<const Profile>(Profile::load(path(), kAnalysisLoad));
  return *state_->profile;
}

const Profile& Job::complete_profile() {
  return *shared_complete_profile();
}

std::shared_ptr<const Profile> Job::shared_complete_profile() {
  if (!state_->complete) state_->complete = std::make_shared<const Profile>(Profile::load(path()));
  return state_->complete;
}

const measure::ProfileWork& Job::work() {
  if (!state_->work) state_->work = load_work(profile());
  return *state_->work;
}

const measure::Analysis& Job::analysis() {
  return *shared_analysis();
}

std::shared_ptr<const measure::Analysis> Job::shared_analysis() {
  if (!state_->analysis)
    state_->analysis =
        std::make_shared<const measure::Analysis>(measure::analyze(profile(), state_->options.analysis));
  return state_->analysis;
}

const compare::MeasuredModel& Job::measured() {
  if (!state_->measured) {
    if (!state_->measured_error.empty()) throw Error(state_->measured_error);
    try {
      state_->measured =
          compare::measure_profile(profile(), analysis(), load_work(profile(), {.uncounted_shapes = true}));
    } catch (const std::exception& e) {
      state_->measured_error = e.what();
      throw Error(state_->measured_error);
    }
  }
  return *state_->measured;
}

std::shared_ptr<const measure::CriticalPaths> Job::critical_paths() {
  if (!state_->critical)
    state_->critical =
        std::make_shared<const measure::CriticalPaths>(measure::critical_paths(profile(), analysis()));
  return state_->critical;
}

std::shared_ptr<const measure::PipelineReport> Job::pipeline() {
  if (!state_->pipeline)
    state_->pipeline =
        std::make_shared<const measure::PipelineReport>(measure::measure_pipeline(profile(), analysis()));
  return state_->pipeline;
}

const compare::Workload& Job::workload() {
  if (!state_->workload) {
    constexpr measure::WorkLoadOptions kLowestRank{
        .kernel_shares = false, .lowest_rank_only = true, .uncounted_shapes = true};
    if (const ProfileSummary* stored = summary()) {
      state_->workload =
          compare::infer_workload(description(), load_work(description(), kLowestRank), stored);
    } else {
      state_->workload = compare::infer_workload(profile(), load_work(profile(), kLowestRank));
    }
  }
  return *state_->workload;
}

ReportAnalysis Job::report_analysis(const ReportOptions& options) const {
  return analyze_for_report(path(), options);
}

}  // namespace meshscope
