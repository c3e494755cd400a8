#include "analysis/measure/diff.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/measure/correlation.hpp"
#include "analysis/measure/op_work.hpp"
#include "profiler/text_format.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {

// ---------------------------------------------------------------------------------------------------------
// Kernel name normalisation

namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Scalar and storage types: template arguments made only of these are dropped (a kernel built for BF16
// and for FP32 is one kernel).
bool scalar_word(std::string_view w) {
  static const std::set<std::string, std::less<>> kWords = {"float",
                                                            "double",
                                                            "int",
                                                            "long",
                                                            "short",
                                                            "char",
                                                            "bool",
                                                            "unsigned",
                                                            "signed",
                                                            "half",
                                                            "__half",
                                                            "bfloat16",
                                                            "__nv_bfloat16",
                                                            "bfloat16_t",
                                                            "half_t",
                                                            "float16",
                                                            "bf16",
                                                            "fp16",
                                                            "fp32",
                                                            "tfloat32_t",
                                                            "float8_e4m3fn",
                                                            "float8_e5m2",
                                                            "float_e4m3_t",
                                                            "float_e5m2_t",
                                                            "int8_t",
                                                            "uint8_t",
                                                            "int16_t",
                                                            "uint16_t",
                                                            "int32_t",
                                                            "uint32_t",
                                                            "int64_t",
                                                            "uint64_t",
                                                            "size_t",
                                                            "complex",
                                                            "void",
                                                            "const",
                                                            "float8_e4m3fnuz",
                                                            "float8_e5m2fnuz",
                                                            "__nv_fp8_e4m3",
                                                            "__nv_fp8_e5m2",
                                                            "float4_e2m1fn_x2"};
  return kWords.count(vocabulary::lower(w)) > 0;
}

// A number (with a C++ integer suffix), true/false, or empty.
bool literal_word(std::string_view w) {
  if (w.empty() || w == "true" || w == "false") return true;
  std::size_t i = 0;
  if (w[0] == '-') i = 1;
  if (i >= w.size() || !std::isdigit(static_cast<unsigned char>(w[i]))) return false;
  while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
  while (i < w.size() && (w[i] == 'u' || w[i] == 'l' || w[i] == 'U' || w[i] == 'L')) ++i;
  return i == w.size();
}

// True when a normalised template argument carries nothing that names the kernel.
bool droppable(std::string_view arg) {
  if (literal_word(arg)) return true;
  // Every word a scalar type or a namespace of one (c10::BFloat16, cutlass::bfloat16_t, unsigned int).
  std::string_view last = arg;
  if (const auto colon = arg.rfind("::"); colon != std::string_view::npos) last = arg.substr(colon + 2);
  bool all_scalar = true;
  std::size_t i = 0;
  while (i < last.size()) {
    if (!ident_char(last[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < last.size() && ident_char(last[j])) ++j;
    if (!scalar_word(last.substr(i, j - i)) && !literal_word(last.substr(i, j - i))) all_scalar = false;
    i = j;
  }
  return all_scalar;
}

// Index just past the bracket that closes the one at TEXT[i] ('(' or '{' or '<'); parentheses and braces
// inside are skipped whole, so "->" in a parameter list does not close a template.
std::size_t skip_group(std::string_view text, std::size_t i) {
  const char open = text[i];
  const char close = open == '(' ? ')' : open == '{' ? '}' : '>';
  int depth = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == open) {
      ++depth;
    } else if (c == close) {
      if (--depth == 0) return i + 1;
    } else if (open == '<' && (c == '(' || c == '{')) {
      i = skip_group(text, i) - 1;
    }
  }
  return text.size();
}

void append_space_aware(std::string& out, std::string_view piece, bool space_before) {
  if (space_before && !out.empty() && ident_char(out.back()) && !piece.empty() && ident_char(piece.front()))
    out += ' ';
  out += piece;
}

std::string normalise_expr(std::string_view text);

// The template argument list starting at TEXT[i] == '<': normalised arguments worth keeping.
std::string normalise_template(std::string_view text, std::size_t& i) {
  const std::size_t end = skip_group(text, i);
  const std::string_view inner = text.substr(i + 1, end >= i + 2 ? end - i - 2 : 0);
  i = end;
  std::vector<std::string> kept;
  std::size_t start = 0;
  for (std::size_t k = 0; k <= inner.size(); ++k) {
    if (k < inner.size()) {
      const char c = inner[k];
      if (c == '<' || c == '(' || c == '{') {
        k = skip_group(inner, k) - 1;
        continue;
      }
      if (c != ',') continue;
    }
    std::string arg = normalise_expr(inner.substr(start, k - start));
    if (!droppable(arg)) kept.push_back(std::move(arg));
    start = k + 1;
  }
  if (kept.empty()) return {};
  std::string out = "<";
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (k > 0) out += ',';
    out += kept[k];
  }
  out += '>';
  return out;
}

std::string normalise_expr(std::string_view text) {
  std::string out;
  bool pending_space = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      pending_space = true;
      ++i;
      continue;
    }
    if (c == '(') {  // parameter lists, casts, "(anonymous namespace)"
      i = skip_group(text, i);
      continue;
    }
    if (c == '{') {  // {lambda(float)#1} -> {lambda}
      const std::size_t end = skip_group(text, i);
      if (text.substr(i, 7) == "{lambda") out += "{lambda}";
      i = end;
      continue;
    }
    if (c == '<') {
      out += normalise_template(text, i);
      pending_space = false;
      continue;
    }
    if (c == '*' || c == '&' || c == '>' || c == ')' || c == '}') {
      ++i;
      continue;
    }
    if (ident_char(c)) {
      std::size_t j = i;
      while (j < text.size() && ident_char(text[j])) ++j;
      const std::string_view word = text.substr(i, j - i);
      if (word != "const" && word != "volatile") append_space_aware(out, word, pending_space);
      pending_space = false;
      i = j;
      continue;
    }
    out += c;
    pending_space = false;
    ++i;
  }
  // "at::native::(anonymous namespace)::f" leaves "at::native::::f".
  for (std::size_t at = out.find("::::"); at != std::string::npos; at = out.find("::::", at))
    out.erase(at, 2);
  while (out.starts_with("::")) out.erase(0, 2);
  while (out.ends_with("::")) out.resize(out.size() - 2);
  return out;
}

// "128x256x64" -> "N" wherever a run of digits is followed by x and digits.
std::string collapse_tiles(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) &&
        (i == 0 || !std::isdigit(static_cast<unsigned char>(text[i - 1])))) {
      std::size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      std::size_t k = j;
      int dims = 1;
      while (k + 1 < text.size() && text[k] == 'x' && std::isdigit(static_cast<unsigned char>(text[k + 1]))) {
        k += 1;
        while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
        ++dims;
      }
      if (dims >= 2) {
        out += 'N';
        i = k;
        continue;
      }
      out.append(text, i, j - i);
      i = j;
      continue;
    }
    out += text[i++];
  }
  return out;
}

}  // namespace

std::string normalise_kernel_name(std::string_view name) {
  while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
  if (name.starts_with("void ")) name.remove_prefix(5);
  std::string out = collapse_tiles(normalise_expr(name));
  if (out.starts_with("triton_")) {  // Triton numbers its generated kernels: triton_poi_fused_add_3
    std::size_t end = out.size();
    while (end > 0 && std::isdigit(static_cast<unsigned char>(out[end - 1]))) --end;
    if (end < out.size() && end > 1 && out[end - 1] == '_') out.resize(end - 1);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? std::string(name) : out;
}

// ---------------------------------------------------------------------------------------------------------
// The diff

namespace {

struct SideAcc {
  std::int64_t count = 0;
  TimeNs ns = 0, step_ns = 0;
  TimeNs self_ns = 0, self_step_ns = 0;
  TimeNs gpu_ns = 0, gpu_step_ns = 0, gpu_self_step_ns = 0;
};

// Per-side totals of one row key, with the raw names that fed it.
struct RowAcc {
  std::array<SideAcc, 2> side{};
  std::array<std::map<std::string, TimeNs>, 2> raw;  // raw name -> time, per side
  std::array<TimeNs, kClassCount> class_ns{};
  std::string op;
  std::int64_t group_size = 0, bytes = 0;
};

struct Collected {
  std::map<std::string, RowAcc> kernels, cpu_ops, collectives;
  std::map<std::pair<std::string, std::string>, RowAcc> op_shapes;  // (name, input dims)
  std::array<bool, 2> has_shapes{};                                 // a side recorded operators' shapes
};

// One side's rows from its summaries (summary.hpp): kernels under their normalised name, CPU operators and
// collectives under their own keys.
void collect_side(int side, const ProfileSummary& p, DiffSide& out, Collected& rows) {
  const auto s = static_cast<std::size_t>(side);
  out.path = p.path.string();
  out.ranks = static_cast<std::int64_t>(p.ranks.size());
  out.world_size = p.world_size;
  std::set<std::int64_t> numbers;
  TimeNs step_sum = 0, cpu_sum = 0;
  std::int64_t cpu_steps = 0;
  std::unordered_map<std::string, std::string> normalised;  // raw kernel name -> its row key
  for (const RankSummary& r : p.ranks) {
    if (!r.steps.empty()) {
      out.has_steps = true;
      for (const StepSummary& st : r.steps) {
        numbers.insert(st.number);
        cpu_sum += st.cpu_end_ns - st.cpu_start_ns;
        ++cpu_steps;
        if (st.gpu.activities == 0) continue;
        ++out.rank_steps;
        step_sum += st.gpu.span_ns;
      }
    } else if (r.counts.kernel + r.counts.memcpy + r.counts.memset + r.counts.sync > 0) {
      ++out.rank_steps;
      step_sum += r.total.span_ns;
    }
    out.activities += r.counts.kernel + r.counts.memcpy + r.counts.memset + r.counts.sync;
    out.kernel_ns += r.kernel_ns;
    for (const KernelSummary& k : r.kernels) {
      auto [it, added] = normalised.try_emplace(k.name);
      if (added) {
        it->second = normalise_kernel_name(k.name);
        if (it->second.empty()) it->second = "(unnamed)";
      }
      RowAcc& row = rows.kernels[it->second];
      row.side[s].count += k.count;
      row.side[s].ns += k.total_ns;
      row.side[s].step_ns += k.step_ns;
      row.class_ns[static_cast<std::size_t>(k.cls)] += k.total_ns;
      row.raw[s][k.name] += k.total_ns;
    }
    for (const OpSummary& o : r.ops) {
      out.cpu_ops += o.count;
      RowAcc& row = rows.cpu_ops[o.name];
      row.side[s].count += o.count;
      row.side[s].ns += o.total_ns;
      row.side[s].step_ns += o.step_ns;
      row.side[s].self_ns += o.self_ns;
      row.side[s].self_step_ns += o.self_step_ns;
      row.side[s].gpu_ns += o.gpu_ns;
      row.side[s].gpu_step_ns += o.gpu_step_ns;
      row.side[s].gpu_self_step_ns += o.gpu_self_step_ns;
    }
    for (const OpShapeSummary& o : r.op_shapes) {
      rows.has_shapes[s] = true;
      SideAcc& acc = rows.op_shapes[{o.name, o.input_dims}].side[s];
      acc.count += o.count;
      acc.ns += o.gpu_ns;
      acc.step_ns += o.gpu_step_ns;
      acc.gpu_ns += o.gpu_ns;
      acc.gpu_step_ns += o.gpu_step_ns;
    }
    for (const CollectiveSummary& c : r.collectives) {
      RowAcc& row = rows.collectives[fmt::format("{}\x1f{}\x1f{}", c.op, c.group_size, c.bytes)];
      row.op = c.op;
      row.group_size = c.group_size;
      row.bytes = c.bytes;
      row.side[s].count += c.count;
      row.side[s].ns += c.total_ns;
      row.side[s].step_ns += c.step_ns;
    }
  }
  out.steps = static_cast<std::int64_t>(numbers.size());
  out.step_ns = out.rank_steps > 0 ? step_sum / out.rank_steps : 0;
  out.cpu_step_ns = cpu_steps > 0 ? cpu_sum / cpu_steps : 0;
}

TimeNs per_step(TimeNs total, std::int64_t rank_steps) {
  return rank_steps > 0 ? total / rank_steps : 0;
}

std::vector<DiffRow> finish_rows(std::map<std::string, RowAcc>& rows, const Diff& d, bool kernels) {
  std::vector<DiffRow> out;
  out.reserve(rows.size());
  for (auto& [key, acc] : rows) {
    DiffRow row;
    row.name = key;
    if (!acc.op.empty()) {  // collectives: "allreduce 67108864 B group 8"
      row.name =
          fmt::format("{} {} group {}", acc.op, acc.bytes > 0 ? fmt::format("{} B", acc.bytes) : "size ?",
                      acc.group_size > 0 ? fmt::format("{}", acc.group_size) : "?");
    }
    row.op = acc.op;
    row.group_size = acc.group_size;
    row.bytes = acc.bytes;
    row.a_count = acc.side[0].count;
    row.b_count = acc.side[1].count;
    row.a_ns = acc.side[0].ns;
    row.b_ns = acc.side[1].ns;
    row.a_step_ns = per_step(acc.side[0].step_ns, d.a.rank_steps);
    row.b_step_ns = per_step(acc.side[1].step_ns, d.b.rank_steps);
    row.a_self_ns = acc.side[0].self_ns;
    row.b_self_ns = acc.side[1].self_ns;
    row.a_self_step_ns = per_step(acc.side[0].self_step_ns, d.a.rank_steps);
    row.b_self_step_ns = per_step(acc.side[1].self_step_ns, d.b.rank_steps);
    row.a_gpu_ns = acc.side[0].gpu_ns;
    row.b_gpu_ns = acc.side[1].gpu_ns;
    row.a_gpu_step_ns = per_step(acc.side[0].gpu_step_ns, d.a.rank_steps);
    row.b_gpu_step_ns = per_step(acc.side[1].gpu_step_ns, d.b.rank_steps);
    row.a_gpu_self_step_ns = per_step(acc.side[0].gpu_self_step_ns, d.a.rank_steps);
    row.b_gpu_self_step_ns = per_step(acc.side[1].gpu_self_step_ns, d.b.rank_steps);
    if (kernels) {
      std::size_t best = 0;
      for (std::size_t c = 1; c < acc.class_ns.size(); ++c) {
        if (acc.class_ns[c] > acc.class_ns[best]) best = c;
      }
      row.cls = static_cast<ActivityClass>(best);
      for (int s = 0; s < 2; ++s) {
        const auto& raw = acc.raw[static_cast<std::size_t>(s)];
        std::string example;
        TimeNs most = -1;
        for (const auto& [name, ns] : raw) {
          if (ns > most) {
            most = ns;
            example = name;
          }
        }
        (s == 0 ? row.a_example : row.b_example) = example;
        (s == 0 ? row.a_variants : row.b_variants) = static_cast<std::int32_t>(raw.size());
      }
    }
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const DiffRow& x, const DiffRow& y) {
    const TimeNs dx = std::abs(x.delta_ns()), dy = std::abs(y.delta_ns());
    if (dx != dy) return dx > dy;
    return x.name < y.name;
  });
  return out;
}

using Dims = std::vector<std::vector<std::int64_t>>;

// How alike two recorded shape lists are (parsed; nullopt when unparsable): -1 unless they have the same
// number of inputs of the same ranks (the same call with other sizes), else the number of equal sizes.
int shape_likeness(const std::optional<Dims>& x, const std::optional<Dims>& y) {
  if (!x || !y || x->size() != y->size()) return -1;
  int equal = 0;
  for (std::size_t i = 0; i < x->size(); ++i) {
    if ((*x)[i].size() != (*y)[i].size()) return -1;
    for (std::size_t k = 0; k < (*x)[i].size(); ++k) equal += (*x)[i][k] == (*y)[i][k] ? 1 : 0;
  }
  return equal;
}

// The per-shape operator rows: those whose name and shapes both runs ran compare as they are. Of the rest, an
// operator's shapes on one side only are paired with its shapes on the other side only that have as many
// inputs of the same ranks (another batch or sequence length changes sizes, not the call): A's by GPU time,
// each with the most alike of B's (then the one with the most GPU time). What stays unpaired ran on one side.
std::vector<DiffRow> finish_shape_rows(Collected& rows, const Diff& d) {
  std::map<std::string, RowAcc> keyed;
  std::map<std::string, std::pair<std::string, std::string>> dims;  // row key -> (A's dims, B's dims)
  struct Lone {
    TimeNs ns;
    std::string dims;
    bool paired = false;
    std::optional<Dims>
        parsed;  // parsed once: every shape of one side is compared with every one of the other
  };
  std::map<std::string, std::array<std::vector<Lone>, 2>> lone;  // by operator name
  for (const auto& [key, acc] : rows.op_shapes) {
    const bool a = acc.side[0].count > 0, b = acc.side[1].count > 0;
    if (a && b) {
      const std::string row = fmt::format("{} {}", key.first, key.second);
      keyed[row] = acc;
      dims[row] = {key.second, key.second};
      continue;
    }
    lone[key.first][b ? 1 : 0].push_back({acc.side[b ? 1 : 0].ns, key.second, false, std::nullopt});
  }
  auto add_row = [&](const std::string& name, const Lone* a, const Lone* b) {
    // A key no other row has: a (name, dims) on one side only is on no other row of either side.
    const std::string row = a && b ? fmt::format("{} {} -> {}", name, a->dims, b->dims)
                                   : fmt::format("{} {}", name, a ? a->dims : b->dims);
    RowAcc& acc = keyed[row];
    if (a) acc.side[0] = rows.op_shapes[{name, a->dims}].side[0];
    if (b) acc.side[1] = rows.op_shapes[{name, b->dims}].side[1];
    dims[row] = {a ? a->dims : std::string(), b ? b->dims : std::string()};
  };
  for (auto& [name, sides] : lone) {
    for (auto& side : sides) {
      for (Lone& l : side) {
        Dims dims;
        if (parse_dims(l.dims, dims)) l.parsed = std::move(dims);
      }
      std::sort(side.begin(), side.end(),
                [](const Lone& x, const Lone& y) { return x.ns != y.ns ? x.ns > y.ns : x.dims < y.dims; });
    }
    for (Lone& a : sides[0]) {
      Lone* best = nullptr;
      int best_likeness = -1;
      for (Lone& b : sides[1]) {
        if (b.paired) continue;
        const int likeness = shape_likeness(a.parsed, b.parsed);
        if (likeness > best_likeness) best = &b, best_likeness = likeness;
      }
      if (best) best->paired = true;
      add_row(name, &a, best);
    }
    for (const Lone& b : sides[1]) {
      if (!b.paired) add_row(name, nullptr, &b);
    }
  }
  std::vector<DiffRow> out = finish_rows(keyed, d, false);
  for (DiffRow& r : out) {
    const auto& [a_dims, b_dims] = dims.at(r.name);
    r.a_input_dims = a_dims;
    r.b_input_dims = b_dims;
  }
  return out;
}

// Σ over ROWS of min(share of A's total, share of B's total) of the quantity AMOUNT(row, side) gives; -1 when
// a side's total is 0.
template <typename Amount>
double overlap_of(const std::vector<DiffRow>& rows, Amount amount) {
  double a = 0, b = 0;
  for (const DiffRow& r : rows) a += amount(r, 0), b += amount(r, 1);
  if (a <= 0 || b <= 0) return -1.0;
  double sum = 0;
  for (const DiffRow& r : rows) sum += std::min(amount(r, 0) / a, amount(r, 1) / b);
  return sum;
}

// Kernel or operator time, and operator calls.
double overlap(const std::vector<DiffRow>& rows) {
  return overlap_of(rows,
                    [](const DiffRow& r, int side) { return static_cast<double>(side ? r.b_ns : r.a_ns); });
}
double count_overlap(const std::vector<DiffRow>& rows) {
  return overlap_of(
      rows, [](const DiffRow& r, int side) { return static_cast<double>(side ? r.b_count : r.a_count); });
}

std::string signed_ms(TimeNs ns) {
  return fmt::format("{:+.3f} ms", static_cast<double>(ns) / 1e6);
}

std::string short_name(std::string_view name, std::size_t width = 90) {
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width - 3)) + "...";
}

std::string row_label(const DiffRow& r, const std::string& kind) {
  if (kind == "collective") {
    return fmt::format("{} {} in groups of {}", r.op, bytes_text(r.bytes, "size unknown"),
                       r.group_size > 0 ? fmt::format("{}", r.group_size) : std::string("?"));
  }
  return short_name(r.name);
}

// Runs without steps are windows: scale A's per-step figures to B's number of iterations, estimated from the
// kernels both ran (the time-weighted median of B's calls over A's). Rows and classes then compare the same
// work: a kernel run 68 times in A's window and 60 in B's at the same time per call does not change.
void scale_windows(Diff& d) {
  std::vector<std::pair<double, double>> ratios;  // (B's calls / A's, weight)
  double weight = 0;
  for (const DiffRow& r : d.kernels) {
    if (r.a_count <= 0 || r.b_count <= 0) continue;
    const double w = static_cast<double>(r.a_ns + r.b_ns);
    ratios.push_back({static_cast<double>(r.b_count) / static_cast<double>(r.a_count), w});
    weight += w;
  }
  if (ratios.empty() || weight <= 0) return;
  std::sort(ratios.begin(), ratios.end());
  double seen = 0, ratio = ratios.back().first;
  for (const auto& [value, w] : ratios) {
    seen += w;
    if (seen >= weight / 2) {
      ratio = value;
      break;
    }
  }
  if (ratio == 1.0) return;
  d.iteration_ratio = ratio;
  auto scaled = [ratio](TimeNs ns) {
    return static_cast<TimeNs>(std::llround(static_cast<double>(ns) * ratio));
  };
  d.a.step_ns = scaled(d.a.step_ns);
  for (ClassDiff& c : d.classes) c.a_step_ns = scaled(c.a_step_ns);
  for (std::vector<DiffRow>* rows : {&d.kernels, &d.cpu_ops, &d.collectives, &d.op_shapes}) {
    for (DiffRow& r : *rows) {
      r.a_step_ns = scaled(r.a_step_ns);
      r.a_self_step_ns = scaled(r.a_self_step_ns);
      r.a_gpu_step_ns = scaled(r.a_gpu_step_ns);
      r.a_gpu_self_step_ns = scaled(r.a_gpu_self_step_ns);
    }
  }
  d.step_delta_ns = d.b.step_ns - d.a.step_ns;
  d.notes.push_back(
      fmt::format("no steps to compare: B ran {:.3f} x the calls A ran of the kernels both ran, so A's "
                  "window is scaled by "
                  "that ratio (per-step figures of A are for as many iterations as B caught)",
                  ratio));
}

// True when the CPU operators of both runs carry the GPU time they launched (summaries written since).
bool has_operator_gpu(const Diff& d) {
  bool a = false, b = false;
  for (const DiffRow& r : d.cpu_ops) {
    a = a || r.a_gpu_ns > 0;
    b = b || r.b_gpu_ns > 0;
  }
  return a && b;
}

// The rows that explain the change PART_DELTA of class NAME in the headline: kernels of the class,
// collectives, or CPU operators (for idle time, and for GPU work when the runs' kernels differ).
void explain_part(Diff& d, const DiffOptions& options, const std::string& name, TimeNs part_delta,
                  std::size_t& lines) {
  auto add = [&](std::string kind, std::string row, TimeNs delta, int level, std::string text) {
    d.headline.push_back({std::move(kind), std::move(row), delta, level, std::move(text)});
  };
  // The rows that explain it: kernels of the class, collectives, or CPU operators for idle time.
  const std::vector<DiffRow>* rows = &d.kernels;
  std::string kind = "kernel";
  ActivityClass want = ActivityClass::kCompute;
  if (name == "exposed_comm") {
    rows = &d.collectives;
    kind = "collective";
  } else if (name == "memory_only") {
    want = ActivityClass::kMemory;
  } else if (name == "idle") {
    rows = &d.cpu_ops;
    kind = "cpu_op";
  }
  // Runs on two vendors or library versions run the same operators through different kernels: their GPU
  // work is explained operator by operator, by the GPU time each launched itself.
  const bool operator_gpu = d.different_kernels && kind == "kernel" && has_operator_gpu(d);
  if (operator_gpu) {
    rows = &d.cpu_ops;
    kind = "cpu_op";
  }
  // CPU operators by self time, so that an operator and the ones nested in it do not all appear.
  const bool self = kind == "cpu_op" && !operator_gpu;
  // Without steps on both sides each run is one window of however many iterations it caught: a kernel
  // called 68 times in one window and 60 in the other did not get slower. Rows on both sides then change by
  // their time per call (B's calls at B's mean minus B's calls at A's mean).
  const bool per_call = !(d.a.has_steps && d.b.has_steps) && !self && !operator_gpu;
  auto change = [self, per_call, operator_gpu](const DiffRow& r) -> TimeNs {
    if (operator_gpu) return r.b_gpu_self_step_ns - r.a_gpu_self_step_ns;
    if (self) return r.b_self_step_ns - r.a_self_step_ns;
    if (per_call && r.a_count > 0 && r.b_count > 0) {
      const double a_mean = static_cast<double>(r.a_ns) / static_cast<double>(r.a_count);
      const double b_mean = static_cast<double>(r.b_ns) / static_cast<double>(r.b_count);
      return static_cast<TimeNs>(std::llround((b_mean - a_mean) * static_cast<double>(r.b_count)));
    }
    return r.step_delta_ns();
  };
  std::vector<const DiffRow*> candidates;
  for (const DiffRow& r : *rows) {
    if (kind == "kernel" && r.cls != want) continue;
    // Another vendor's kernels are not "new" or "gone": the same operators ran them.
    if (kind == "kernel" && d.different_kernels && (r.a_count == 0 || r.b_count == 0)) continue;
    if ((change(r) > 0) != (part_delta > 0) || change(r) == 0) continue;
    candidates.push_back(&r);
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](const DiffRow* x, const DiffRow* y) { return std::abs(change(*x)) > std::abs(change(*y)); });
  TimeNs explained = 0;
  for (std::size_t i = 0; i < candidates.size() && i < 3 && lines < options.headline_items; ++i) {
    const DiffRow& r = *candidates[i];
    const TimeNs delta_row = change(r);
    if (std::abs(delta_row) * 20 < std::abs(part_delta) && i > 0) break;  // under 5 % of the part
    if (explained >= std::abs(part_delta) * 8 / 10 && i > 0) break;
    explained += std::abs(delta_row);
    std::string extra;
    if (kind == "kernel" && r.a_count > 0 && r.b_count > 0 && r.a_example != r.b_example &&
        !r.a_example.empty() && !r.b_example.empty()) {
      extra = "; renamed between the runs";
    } else if (r.a_count == 0) {
      extra = "; new in B";
    } else if (r.b_count == 0) {
      extra = "; gone in B";
    }
    if (operator_gpu) {
      add(kind, r.name, delta_row, 2,
          fmt::format("CPU op {}: the GPU time it launched itself {} per step ({} -> {}; count {} -> {}{})",
                      row_label(r, kind), signed_ms(delta_row), ms_text(r.a_gpu_self_step_ns),
                      ms_text(r.b_gpu_self_step_ns), r.a_count, r.b_count, extra));
    } else if (per_call && r.a_count > 0 && r.b_count > 0) {
      add(kind, r.name, delta_row, 2,
          fmt::format("{} {} {} at B's {} calls ({:.3f} -> {:.3f} µs per call; count {} -> {}{})", kind,
                      row_label(r, kind), signed_ms(delta_row), r.b_count,
                      static_cast<double>(r.a_ns) / static_cast<double>(r.a_count) / 1e3,
                      static_cast<double>(r.b_ns) / static_cast<double>(r.b_count) / 1e3, r.a_count,
                      r.b_count, extra));
    } else {
      add(kind, r.name, delta_row, 2,
          fmt::format("{} {} {} per step{} ({} -> {}; count {} -> {}{})", self ? "CPU op" : kind,
                      row_label(r, kind), signed_ms(delta_row), self ? " of self time" : "",
                      ms_text(self ? r.a_self_step_ns : r.a_step_ns),
                      ms_text(self ? r.b_self_step_ns : r.b_step_ns), r.a_count, r.b_count, extra));
    }
    ++lines;
  }
}

void build_headline(Diff& d, const DiffOptions& options) {
  auto add = [&](std::string kind, std::string name, TimeNs delta, int level, std::string text) {
    d.headline.push_back({std::move(kind), std::move(name), delta, level, std::move(text)});
  };
  const TimeNs delta = d.step_delta_ns;
  const double pct =
      d.a.step_ns > 0 ? 100.0 * static_cast<double>(delta) / static_cast<double>(d.a.step_ns) : 0;
  add("step", "", delta, 0,
      fmt::format("step time {} -> {} per rank-step ({}, {:+.1f} %)", ms_text(d.a.step_ns),
                  ms_text(d.b.step_ns), signed_ms(delta), pct));
  if (d.unrelated) {
    add("unrelated", "", 0, 0,
        d.operator_similarity >= 0
            ? fmt::format(
                  "the runs look unrelated: only {:.1f} % of their GPU time is in kernels both ran and "
                  "{:.1f} % of their CPU operator calls are of operators both ran, so the differences "
                  "below compare different work",
                  100.0 * std::max(d.similarity, 0.0), 100.0 * d.operator_similarity)
            : fmt::format(
                  "the runs look unrelated: only {:.1f} % of their GPU time is in kernels both ran, so "
                  "the differences below compare different work",
                  100.0 * std::max(d.similarity, 0.0)));
  } else if (d.different_kernels) {
    add("different_kernels", "", 0, 0,
        fmt::format(
            "the runs ran the same operators ({:.1f} % of CPU operator calls by name) through different "
            "kernels (only {:.1f} % of GPU time is in kernels both ran: another GPU vendor or library "
            "version); kernels only one run has are not listed as new or gone below",
            100.0 * d.operator_similarity, 100.0 * std::max(d.similarity, 0.0)));
  }
  // The step's GPU span is compute + exposed comm + memory only + idle: split the change that way.
  struct Part {
    const char* name;
    TimeNs delta;
  };
  std::vector<Part> parts;
  for (const ClassDiff& c : d.classes) {
    if (c.name == "compute" || c.name == "exposed_comm" || c.name == "memory_only" || c.name == "idle")
      parts.push_back({c.name.c_str(), c.b_step_ns - c.a_step_ns});
  }
  std::sort(parts.begin(), parts.end(),
            [](const Part& x, const Part& y) { return std::abs(x.delta) > std::abs(y.delta); });
  TimeNs total_abs = 0;
  for (const Part& p : parts) total_abs += std::abs(p.delta);
  if (total_abs == 0) {
    add("class", "", 0, 1,
        "no change in compute, exposed communication, memory traffic or idle time per step");
    return;
  }
  const TimeNs scale = std::max(d.a.step_ns, d.b.step_ns);
  TimeNs covered = 0;
  std::size_t lines = 0;
  for (const Part& part : parts) {
    if (lines >= options.headline_items) break;
    if (covered >= total_abs * 8 / 10 && lines > 0) break;
    if (std::abs(part.delta) * 50 < scale && lines > 0) break;  // under 2 % of the step
    covered += std::abs(part.delta);
    const std::string name = part.name;
    const ClassDiff& cls =
        *std::find_if(d.classes.begin(), d.classes.end(), [&](const ClassDiff& c) { return c.name == name; });
    const char* label = name == "exposed_comm"  ? "exposed communication"
                        : name == "memory_only" ? "memory traffic (not hidden)"
                        : name == "idle"        ? "idle (no GPU work)"
                                                : "compute";
    add("class", name, part.delta, 1,
        fmt::format("{} {} per step ({} -> {})", label, signed_ms(part.delta), ms_text(cls.a_step_ns),
                    ms_text(cls.b_step_ns)));
    ++lines;
    explain_part(d, options, name, part.delta, lines);
  }
}

}  // namespace

Diff diff_profiles(const Profile& a, const Analysis& analysis_a, const Profile& b, const Analysis& analysis_b,
                   const DiffOptions& options) {
  return diff_summaries(summarize(a, analysis_a), summarize(b, analysis_b), options);
}

Diff diff_summaries(const ProfileSummary& a, const ProfileSummary& b, const DiffOptions& options) {
  Diff d;
  Collected rows;
  collect_side(0, a, d.a, rows);
  collect_side(1, b, d.b, rows);

  // Classes: whole profile (Σ over ranks) and per rank-step.
  struct Sum {
    std::array<TimeNs, 8> total{}, step{};
  };
  auto class_sums = [](const ProfileSummary& p) {
    Sum s;
    auto add = [](std::array<TimeNs, 8>& v, const Breakdown& b) {
      v[0] += b.compute_ns;
      v[1] += b.comm_ns;
      v[2] += b.memory_ns;
      v[3] += b.sync_ns;
      v[4] += b.idle_ns;
      v[5] += b.exposed_comm_ns;
      v[6] += b.memory_only_ns;
      v[7] += b.span_ns;
    };
    for (const RankSummary& r : p.ranks) {
      add(s.total, r.total);
      if (r.steps.empty()) {
        if (r.total.activities > 0) add(s.step, r.total);
        continue;
      }
      for (const StepSummary& st : r.steps) {
        if (st.gpu.activities > 0) add(s.step, st.gpu);
      }
    }
    return s;
  };
  const Sum sa = class_sums(a), sb = class_sums(b);
  static const char* kNames[8] = {"compute", "comm",         "memory",      "sync",
                                  "idle",    "exposed_comm", "memory_only", "step"};
  for (std::size_t i = 0; i < 8; ++i) {
    d.classes.push_back({kNames[i], sa.total[i], sb.total[i], per_step(sa.step[i], d.a.rank_steps),
                         per_step(sb.step[i], d.b.rank_steps)});
  }
  d.step_delta_ns = d.b.step_ns - d.a.step_ns;

  d.kernels = finish_rows(rows.kernels, d, true);
  d.cpu_ops = finish_rows(rows.cpu_ops, d, false);
  d.collectives = finish_rows(rows.collectives, d, false);
  d.op_shapes = finish_shape_rows(rows, d);

  if (!d.a.has_steps || !d.b.has_steps) scale_windows(d);

  double sim = overlap(d.kernels);
  if (sim < 0) sim = overlap(d.cpu_ops);
  if (sim < 0) sim = (d.kernels.empty() && d.cpu_ops.empty()) ? 1.0 : 0.0;
  d.similarity = sim;
  // Operators say whether the runs did the same work; kernels only whether they ran the same code for it.
  d.operator_similarity = count_overlap(d.cpu_ops);
  const bool different_code = sim < options.unrelated_below;
  d.different_kernels = different_code && d.operator_similarity >= options.same_operators_from;
  d.unrelated = different_code && !d.different_kernels;

  if (!d.a.has_steps || !d.b.has_steps) {
    for (const DiffSide* s : {&d.a, &d.b}) {
      if (!s->has_steps)
        d.notes.push_back(
            fmt::format("{} has no steps: each rank's whole profile counts as one step, and the kernels and "
                        "collectives under the headline compare time per call",
                        s->path));
    }
  }
  if (d.a.cpu_ops == 0 || d.b.cpu_ops == 0) {
    for (const DiffSide* s : {&d.a, &d.b}) {
      if (s->cpu_ops == 0)
        d.notes.push_back(fmt::format("{} has no CPU operators: no CPU-op comparison", s->path));
    }
  }
  if (rows.has_shapes[0] != rows.has_shapes[1]) {
    d.notes.push_back(fmt::format(
        "{} recorded no operator shapes (PyTorch profiler's record_shapes=True) or was summarised before "
        "they were kept: operators compare by name only",
        rows.has_shapes[0] ? d.b.path : d.a.path));
  }
  if (d.a.rank_steps == 0 || d.b.rank_steps == 0) {
    d.notes.push_back("a profile has no step that launched GPU work: per-step figures are zero on that side");
  }
  build_headline(d, options);
  return d;
}

}  // namespace meshscope::measure
