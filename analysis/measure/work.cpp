#include "analysis/measure/work.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::measure {

const char* const kNoShapesNote = "no shapes recorded (record with record_shapes=True)";

namespace {

bool finite_amount(double v) {
  return std::isfinite(v) && v >= 0;
}

}  // namespace

ProfileWork load_work(const Profile& profile, const WorkLoadOptions& options) {
  ProfileWork out;
  sql::Database db(profile.path(), true);
  const auto op_columns = db.table_columns("op_work");
  const auto kernel_columns = db.table_columns("kernel_work");
  if (!op_columns || !kernel_columns) return out;
  for (const char* c : {"id", "rank", "external_id", "name", "status", "category", "flops", "bytes",
                        "input_dims", "input_types", "kernels", "kernel_ns"}) {
    if (!op_columns->contains(c)) fail("{}: table op_work has no column {}", profile.path().string(), c);
  }
  for (const char* c : {"activity_id", "rank", "op_id", "flops", "bytes"}) {
    if (!kernel_columns->contains(c))
      fail("{}: table kernel_work has no column {}", profile.path().string(), c);
  }
  out.has_tables = true;
  const auto& ranks = profile.ranks();
  std::map<std::int64_t, std::size_t> rank_index;
  // In a profile of which some ranks' events are loaded (the view's lazy ranks: Profile::with_ranks), the
  // rows of the others are left out (SQLite skips them). A profile without any events (its description) reads
  // every rank's operators, as before.
  std::string loaded_only;
  {
    std::string list;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (!ranks[i].events_loaded) continue;
      list += fmt::format("{}{}", list.empty() ? "" : ", ", ranks[i].rank);
    }
    const bool some = !list.empty() &&
                      std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return !r.events_loaded; });
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (!some || ranks[i].events_loaded) rank_index[ranks[i].rank] = i;
    }
    if (some) loaded_only = fmt::format(" AND rank IN ({})", list);
  }
  auto bad = [&](std::string_view table, std::int64_t row, std::string_view problem) {
    fail("{}: {} row {}: {}", profile.path().string(), table, row, problem);
  };

  {
    sql::Statement s = db.prepare("SELECT status, COUNT(*) FROM op_work GROUP BY status");
    while (s.step()) {
      const std::int64_t status = s.column_int(0), n = s.column_int(1);
      out.shapes_recorded = true;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kNested)) out.nested += n;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kUnparsable)) out.unparsable += n;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kUndetermined)) out.undetermined += n;
    }
  }
  std::unordered_map<std::int64_t, std::uint32_t> op_of_id;
  {
    sql::Statement s = db.prepare(
        "SELECT id, rank, external_id, name, category, flops, bytes, input_dims, input_types, kernels, "
        "kernel_ns FROM op_work WHERE status = 1" +
        loaded_only +
        std::string(options.lowest_rank_only
                        ? " AND rank = (SELECT min(rank) FROM op_work WHERE status = 1" + loaded_only + ")"
                        : "") +
        " ORDER BY id");
    while (s.step()) {
      CountedOp op;
      op.id = s.column_int(0);
      auto r = rank_index.find(s.column_int(1));
      if (r == rank_index.end()) bad("op_work", op.id, "its rank is not in the profile");
      op.rank_index = r->second;
      op.external_id = s.column_int(2);
      op.name = profile.str(static_cast<StringId>(std::max<std::int64_t>(0, s.column_int(3))));
      const std::int64_t category = s.column_int(4);
      if (category < 1 || category > kWorkCategoryCount) bad("op_work", op.id, "category is not 1 to 6");
      op.category = static_cast<WorkCategory>(category);
      op.flops = s.column_double(5);
      op.bytes = s.column_double(6);
      if (!finite_amount(op.flops) || !finite_amount(op.bytes))
        bad("op_work", op.id, "flops and bytes must be finite and not negative");
      op.input_dims = profile.str(static_cast<StringId>(std::max<std::int64_t>(0, s.column_int(7))));
      op.input_types = profile.str(static_cast<StringId>(std::max<std::int64_t>(0, s.column_int(8))));
      op.precision = precision_of_types(op.input_types);
      op.fp8 = op.precision == WorkPrecision::kFP8;
      op.kernels = std::max<std::int64_t>(0, s.column_int_or(9, 0));
      op.kernel_ns = std::max<std::int64_t>(0, s.column_int_or(10, 0));
      op_of_id.emplace(op.id, static_cast<std::uint32_t>(out.ops.size()));
      out.ops.push_back(std::move(op));
    }
  }
  // activities.id -> index, per rank, for the kernels that have work.
  std::vector<std::unordered_map<std::int64_t, std::uint32_t>> activity_index(ranks.size());
  if (options.kernel_shares && !options.lowest_rank_only) {
    sql::Statement s = db.prepare("SELECT activity_id, rank, op_id, flops, bytes FROM kernel_work" +
                                  (loaded_only.empty() ? std::string() : " WHERE " + loaded_only.substr(5)));
    while (s.step()) {
      const std::int64_t activity_id = s.column_int(0);
      auto r = rank_index.find(s.column_int(1));
      if (r == rank_index.end()) bad("kernel_work", activity_id, "its rank is not in the profile");
      auto op = op_of_id.find(s.column_int(2));
      if (op == op_of_id.end()) bad("kernel_work", activity_id, "op_id is no counted operator of op_work");
      auto& index = activity_index[r->second];
      if (index.empty()) {
        const auto& acts = ranks[r->second].activities;
        index.reserve(acts.size());
        for (std::uint32_t i = 0; i < acts.size(); ++i) index.emplace(acts[i].id, i);
      }
      auto a = index.find(activity_id);
      if (a == index.end()) bad("kernel_work", activity_id, "no such activity of its rank");
      KernelShare k;
      k.rank_index = r->second;
      k.activity = a->second;
      k.op = op->second;
      k.flops = s.column_double(3);
      k.bytes = s.column_double(4);
      if (!finite_amount(k.flops) || !finite_amount(k.bytes))
        bad("kernel_work", activity_id, "flops and bytes must be finite and not negative");
      out.kernels.push_back(k);
    }
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
  std::map<std::pair<std::string, int>, RooflineOpRow> rows;
  std::int64_t no_kernels = 0, above = 0;
  for (std::uint32_t i = 0; i < work.ops.size(); ++i) {
    const CountedOp& op = work.ops[i];
    if (op.kernels == 0 || op.kernel_ns <= 0) {
      ++no_kernels;
      continue;
    }
    const double seconds = static_cast<double>(op.kernel_ns) / 1e9;
    const double peak = peak_for(op.precision, ceilings);
    if (peak > 0 && op.flops / seconds > peak) {
      ++above;
      continue;
    }
    out.points.push_back(i);
    RooflineOpRow& row = rows[{op.name, static_cast<int>(op.category)}];
    row.op = op.name;
    row.category = op.category;
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
