#include "analysis/measure/work.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::measure {

const char* const kNoShapesNote = "no shapes recorded (record with record_shapes=True)";

namespace {

// In a profile of which some ranks' events are loaded (the view's lazy ranks: Profile::with_ranks), the rows
// of the others are left out. A profile without any events (its description) reads every rank's operators.
bool some_ranks_loaded(const Profile& profile) {
  const auto& ranks = profile.ranks();
  return std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return r.events_loaded; }) &&
         std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return !r.events_loaded; });
}

}  // namespace

WorkReadOptions work_read_options(const Profile& profile, const WorkLoadOptions& options) {
  WorkReadOptions read;
  read.lowest_rank_only = options.lowest_rank_only;
  read.kernel_shares = options.kernel_shares;
  read.uncounted_shapes = options.uncounted_shapes;
  if (some_ranks_loaded(profile)) {
    for (const Rank& r : profile.ranks())
      if (r.events_loaded) read.ranks.push_back(r.rank);
  }
  return read;
}

ProfileWork work_of(const Profile& profile, const StoredWork& stored) {
  ProfileWork out;
  const auto& ranks = profile.ranks();
  const bool some = some_ranks_loaded(profile);
  std::map<std::int64_t, std::size_t> rank_index;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (some && !ranks[i].events_loaded) continue;
    rank_index[ranks[i].rank] = i;
  }
  if (!stored.has_tables) return out;
  out.has_tables = true;
  out.shapes_recorded = stored.any_rows;
  out.nested = stored.nested;
  out.unparsable = stored.unparsable;
  out.undetermined = stored.undetermined;
  auto bad = [&](std::string_view table, std::int64_t row, std::string_view problem) {
    fail("{}: {} row {}: {}", profile.path().string(), table, row, problem);
  };

  std::unordered_map<std::int64_t, std::uint32_t> op_of_id;
  out.ops.reserve(stored.counted.size());
  for (const OpWorkRecord& row : stored.counted) {
    CountedOp op;
    op.id = row.id;
    auto r = rank_index.find(row.rank);
    if (r == rank_index.end()) bad("op_work", op.id, "its rank is not in the profile");
    op.rank_index = r->second;
    op.external_id = row.external_id;
    op.name = profile.str(row.name);
    if (row.category < 1 || row.category > kWorkCategoryCount)
      bad("op_work", op.id, "category is not 1 to 6");
    op.category = static_cast<WorkCategory>(row.category);
    op.flops = row.flops;
    op.bytes = row.bytes;
    op.input_dims = profile.str(row.input_dims);
    op.input_types = profile.str(row.input_types);
    op.precision = precision_of_types(op.input_types);
    op.fp8 = op.precision == WorkPrecision::kFP8;
    op.kernels = row.kernels;
    op.kernel_ns = row.kernel_ns;
    op.pid = row.pid;
    op.tid = row.tid;
    op_of_id.emplace(op.id, static_cast<std::uint32_t>(out.ops.size()));
    out.ops.push_back(std::move(op));
  }
  for (const OpWorkRecord& row : stored.uncounted) {
    auto r = rank_index.find(row.rank);
    if (r == rank_index.end()) bad("op_work", row.id, "its rank is not in the profile");
    out.uncounted.push_back(
        {r->second, profile.str(row.name), profile.str(row.input_dims), row.pid, row.tid});
  }
  // activities.id -> index, per rank, for the kernels that have work.
  std::vector<std::unordered_map<std::int64_t, std::uint32_t>> activity_index(ranks.size());
  for (const KernelWorkRecord& row : stored.kernel_shares) {
    auto r = rank_index.find(row.rank);
    if (r == rank_index.end()) bad("kernel_work", row.activity_id, "its rank is not in the profile");
    auto op = op_of_id.find(row.op_id);
    if (op == op_of_id.end()) bad("kernel_work", row.activity_id, "op_id is no counted operator of op_work");
    auto& index = activity_index[r->second];
    if (index.empty()) {
      const auto& acts = ranks[r->second].activities;
      index.reserve(acts.size());
      for (std::uint32_t i = 0; i < acts.size(); ++i) index.emplace(acts[i].id, i);
    }
    auto a = index.find(row.activity_id);
    if (a == index.end()) bad("kernel_work", row.activity_id, "no such activity of its rank");
    out.kernels.push_back({r->second, a->second, op->second, row.flops, row.bytes});
  }
  return out;
}

const char* to_string(WorkPrecision precision) {
  switch (precision) {
    case WorkPrecision::kFP32:
      return "FP32";
    case WorkPrecision::kFP16:
      return "FP16";
    case WorkPrecision::kBF16:
      return "BF16";
    case WorkPrecision::kFP8:
      return "FP8";
    case WorkPrecision::kOther:
      break;
  }
  return "other";
}

WorkPrecision precision_of_types(std::string_view types) {
  // The first floating-point type named in the list decides ("[\"float\", \"Int\"]" -> FP32).
  struct Spelling {
    std::string_view text;
    WorkPrecision precision;
  };
  static constexpr Spelling kSpellings[] = {
      {"Float8", WorkPrecision::kFP8},      {"BFloat16", WorkPrecision::kBF16},
      {"Half", WorkPrecision::kFP16},       {"\"float\"", WorkPrecision::kFP32},
      {"\"double\"", WorkPrecision::kFP32},
  };
  std::size_t first = std::string_view::npos;
  WorkPrecision found = WorkPrecision::kOther;
  for (const Spelling& s : kSpellings) {
    const std::size_t at = types.find(s.text);
    if (at < first) first = at, found = s.precision;
  }
  return found;
}

double peak_for(WorkPrecision precision, const WorkCeilings& ceilings) {
  if (precision == WorkPrecision::kFP8 && ceilings.peak_fp8_flops > 0) return ceilings.peak_fp8_flops;
  if (precision == WorkPrecision::kFP32 && ceilings.peak_fp32_flops > 0) return ceilings.peak_fp32_flops;
  return ceilings.peak_flops;
}

const char* peak_name(WorkPrecision precision, const WorkCeilings& ceilings) {
  if (precision == WorkPrecision::kFP8 && ceilings.peak_fp8_flops > 0) return "FP8";
  if (precision == WorkPrecision::kFP32 && ceilings.peak_fp32_flops > 0)
    return ceilings.fp32_is_tf32 ? "TF32" : "FP32";
  return ceilings.bf16 ? "BF16" : "FP16";
}

MeasuredRoofline measured_roofline(const ProfileWork& work, const WorkCeilings& ceilings) {
  MeasuredRoofline out;
  out.shapes_recorded = work.shapes_recorded;
  if (!work.shapes_recorded) {
    out.notes.push_back(kNoShapesNote);
    return out;
  }
  std::map<std::tuple<std::string, int, int>, RooflineOpRow> rows;
  std::int64_t no_kernels = 0, above = 0, fp32_without_ceiling = 0;
  for (std::uint32_t i = 0; i < work.ops.size(); ++i) {
    const CountedOp& op = work.ops[i];
    if (op.kernels == 0 || op.kernel_ns <= 0) {
      ++no_kernels;
      continue;
    }
    if (op.precision == WorkPrecision::kFP32 && ceilings.peak_fp32_flops <= 0 && ceilings.peak_flops > 0)
      ++fp32_without_ceiling;
    const double seconds = static_cast<double>(op.kernel_ns) / 1e9;
    const double peak = peak_for(op.precision, ceilings);
    if (peak > 0 && op.flops / seconds > peak) {
      ++above;
      continue;
    }
    out.points.push_back(i);
    RooflineOpRow& row = rows[{op.name, static_cast<int>(op.category), static_cast<int>(op.precision)}];
    row.op = op.name;
    row.category = op.category;
    row.precision = op.precision;
    ++row.count;
    row.flops += op.flops;
    row.bytes += op.bytes;
    row.kernel_s += seconds;
    out.kernels += op.kernels;
    out.flops += op.flops;
    out.bytes += op.bytes;
    out.kernel_s += seconds;
  }
  for (auto& [key, row] : rows) out.ops.push_back(std::move(row));
  std::sort(out.ops.begin(), out.ops.end(), [](const RooflineOpRow& a, const RooflineOpRow& b) {
    return a.kernel_s != b.kernel_s ? a.kernel_s > b.kernel_s : a.op < b.op;
  });
  out.left_out = above;
  if (above > 0) {
    out.notes.push_back(fmt::format(
        "{} operator(s) left out: their FLOPs over their kernels' time exceed the peak of {} for their "
        "operands' precision (the shapes or the kernel attribution do not describe what ran, as for a "
        "Winograd or FFT convolution, which does fewer multiplications than its shapes count)",
        above, ceilings.hardware));
  }
  if (fp32_without_ceiling > 0) {
    out.notes.push_back(fmt::format(
        "{} operator(s) ran in FP32, and the preset {} states no FP32 or TF32 peak: they are checked against "
        "its {} peak",
        fp32_without_ceiling, ceilings.hardware, ceilings.bf16 ? "BF16" : "FP16"));
  }
  if (ceilings.peak_flops <= 0) {
    out.notes.push_back(
        "the GPU is not a known hardware preset: achieved rates are not checked against a peak");
  }
  if (no_kernels > 0) {
    out.notes.push_back(fmt::format(
        "{} operator(s) with work launched no kernel the profile links to them (CPU work, or launches "
        "without correlation): not plotted",
        no_kernels));
  }
  if (work.unparsable + work.undetermined > 0) {
    out.notes.push_back(fmt::format(
        "{} operator(s) not counted: {} whose recorded shapes do not parse or fit the operator, {} whose "
        "shapes do not determine the work (a stride, causal flag or element type not recorded)",
        work.unparsable + work.undetermined, work.unparsable, work.undetermined));
  }
  return out;
}

}  // namespace meshscope::measure
