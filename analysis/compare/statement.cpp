#include "analysis/compare/statement.hpp"

#include <charconv>

#include <fmt/format.h>

#include "analysis/model/presets.hpp"
#include "profiler/error.hpp"

namespace meshscope::compare {
namespace {

// Larger than any real degree, batch or sequence; small enough that products of a few stay far from overflow.
constexpr std::int64_t kLargestStated = 1 << 20;
// A stated model is a few hundred bytes of TOML; a larger stored value is not one meshscope wrote.
constexpr std::size_t kLargestStoredValue = 64 << 10;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct LayoutKey {
  const char* name;
  const char* alias;
  std::optional<std::int64_t> StatedLayout::*field;
};
constexpr LayoutKey kLayoutKeys[] = {
    {"tp", "tp", &StatedLayout::tp},    {"pp", "pp", &StatedLayout::pp},
    {"dp", "dp", &StatedLayout::dp},    {"cp", "cp", &StatedLayout::cp},
    {"ep", "ep", &StatedLayout::ep},    {"micro_batch", "micro-batch", &StatedLayout::micro_batch},
    {"seq", "seq", &StatedLayout::seq}, {"global_batch", "global-batch", &StatedLayout::global_batch},
};

}  // namespace

bool StatedLayout::empty() const {
  for (const LayoutKey& k : kLayoutKeys) {
    if (this->*k.field) return false;
  }
  return !mode;
}

void StatedLayout::update(const StatedLayout& given) {
  for (const LayoutKey& k : kLayoutKeys) {
    if (given.*k.field) this->*k.field = given.*k.field;
  }
  if (given.mode) mode = given.mode;
}

StatedLayout parse_layout(std::string_view text) {
  StatedLayout out;
  const std::string keys = "tp, pp, dp, cp, ep, micro_batch, seq, global_batch, mode";
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string_view part = trim(text.substr(begin, end - begin));
    begin = end + 1;
    if (part.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      throw model::InvalidInput(
          fmt::format("layout '{}': '{}' is not KEY=VALUE (keys: {})", text, part, keys));
    const std::string_view key = trim(part.substr(0, eq)), value = trim(part.substr(eq + 1));
    if (key == "mode") {
      if (value != "training" && value != "inference")
        throw model::InvalidInput(
            fmt::format("layout '{}': mode must be training or inference, not '{}'", text, value));
      out.mode = model::parse_mode(value);
      continue;
    }
    const LayoutKey* known = nullptr;
    for (const LayoutKey& k : kLayoutKeys) {
      if (key == k.name || key == k.alias) known = &k;
    }
    if (known == nullptr)
      throw model::InvalidInput(fmt::format("layout '{}': unknown key '{}' (keys: {})", text, key, keys));
    std::int64_t number = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || ptr != value.data() + value.size() || number < 1 || number > kLargestStated)
      throw model::InvalidInput(fmt::format("layout '{}': {} must be a whole number from 1 to {}, not '{}'",
                                            text, known->name, kLargestStated, value));
    out.*known->field = number;
  }
  return out;
}

std::string layout_text(const StatedLayout& layout) {
  std::string out;
  for (const LayoutKey& k : kLayoutKeys) {
    if (const auto& v = layout.*k.field) out += fmt::format("{}{}={}", out.empty() ? "" : ",", k.name, *v);
  }
  if (layout.mode) out += fmt::format("{}mode={}", out.empty() ? "" : ",", model::to_string(*layout.mode));
  return out;
}

Statement stated(const Profile& profile) {
  Statement out;
  const auto& meta = profile.meta();
  auto stored = [&](std::string_view key) -> const std::string* {
    const auto it = meta.find(std::string(key));
    if (it == meta.end()) return nullptr;
    if (it->second.size() > kLargestStoredValue)
      fail("{}: the profile's meta '{}' holds {} bytes, more than a statement of what ran ever takes",
           profile.path().string(), key, it->second.size());
    return &it->second;
  };
  try {
    if (const std::string* text = stored(kStatedModelKey))
      out.model = model::parse_model(*text, fmt::format("meta '{}'", kStatedModelKey));
    if (const std::string* text = stored(kStatedHardwareKey))
      out.hardware = model::parse_hardware(*text, fmt::format("meta '{}'", kStatedHardwareKey));
    if (const std::string* text = stored(kStatedLayoutKey)) out.layout = parse_layout(*text);
  } catch (const model::InvalidInput& e) {
    fail("{}: the stated workload it holds is not valid ({}): state it again with meshscope annotate",
         profile.path().string(), e.what());
  }
  return out;
}

std::vector<MetaChange> meta_changes(const Statement& statement) {
  std::vector<MetaChange> changes;
  changes.push_back({std::string(kStatedModelKey),
                     statement.model ? std::optional(model::model_toml(*statement.model)) : std::nullopt});
  changes.push_back(
      {std::string(kStatedHardwareKey),
       statement.hardware ? std::optional(model::hardware_toml(*statement.hardware)) : std::nullopt});
  const std::string layout = layout_text(statement.layout);
  changes.push_back({std::string(kStatedLayoutKey), layout.empty() ? std::nullopt : std::optional(layout)});
  return changes;
}

std::string statement_line(const Statement& statement) {
  if (statement.empty()) return "nothing stated";
  std::string out;
  if (statement.model) {
    const model::ModelSpec& m = *statement.model;
    out = fmt::format("model {} ({} layers, hidden {}, {} heads ({} kv), ffn {}, vocab {}", m.name, m.layers,
                      m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab);
    if (m.is_moe()) out += fmt::format(", {} experts top-{}", m.experts, m.top_k);
    out += ")";
  }
  if (statement.hardware)
    out += fmt::format("{}hardware {}", out.empty() ? "" : "; ", statement.hardware->name);
  if (!statement.layout.empty())
    out += fmt::format("{}layout {}", out.empty() ? "" : "; ", layout_text(statement.layout));
  return out;
}

}  // namespace meshscope::compare
