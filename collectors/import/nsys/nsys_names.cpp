// Small pure helpers of the Nsight Systems importer: GlobalId decoding, API names, NCCL NVTX ranges.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "collectors/import/collective_names.hpp"
#include "collectors/import/nsys/nsys_importer.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::nsys {
namespace {

using vocabulary::lower;

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// An integer written in decimal or 0x-hexadecimal; kNull when VALUE is not one.
std::int64_t parse_integer(std::string_view value) {
  value = trim(value);
  int base = 10;
  if (value.starts_with("0x") || value.starts_with("0X")) {
    value.remove_prefix(2);
    base = 16;
  }
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number, base);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return kNull;
  return number;
}

// Calls VISIT(key, value) for each "key": value, key=value or key: value pair in TEXT (JSON objects and the
// free-form text NCCL and users put in NVTX messages).
template <typename Visit>
void for_each_pair(std::string_view text, Visit&& visit) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto is_delimiter = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '{' || c == '}' ||
           c == '(' || c == ')' || c == '[' || c == ']';
  };
  auto read_quoted = [&](std::string& out) {
    ++i;  // opening quote
    while (i < n && text[i] != '"') {
      if (text[i] == '\\' && i + 1 < n) ++i;
      out += text[i++];
    }
    if (i < n) ++i;  // closing quote
  };
  while (i < n) {
    while (i < n && is_delimiter(text[i])) ++i;
    if (i >= n) break;
    std::string key;
    if (text[i] == '"') {
      read_quoted(key);
    } else {
      const std::size_t start = i;
      while (i < n && text[i] != ':' && text[i] != '=' && text[i] != ',' && text[i] != ';' &&
             text[i] != '}' && text[i] != ')') {
        ++i;
      }
      key = std::string(trim(text.substr(start, i - start)));
    }
    while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= n || (text[i] != ':' && text[i] != '=')) continue;  // not a pair: go on after it
    ++i;
    while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string value;
    if (i < n && text[i] == '"') {
      read_quoted(value);
    } else {
      const std::size_t start = i;
      while (i < n && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ',' &&
             text[i] != ';' && text[i] != '}' && text[i] != ')') {
        ++i;
      }
      value = std::string(text.substr(start, i - start));
    }
    if (!key.empty()) visit(lower(key), value);
  }
}

}  // namespace

GlobalId decode_global_id(std::int64_t id) {
  const auto bits = static_cast<std::uint64_t>(id);
  GlobalId g;
  g.hw = static_cast<std::int64_t>(bits >> 56);
  g.vm = static_cast<std::int64_t>((bits >> 48) & 0xff);
  g.pid = static_cast<std::int64_t>((bits >> 24) & 0xffffff);
  g.tid = static_cast<std::int64_t>(bits & 0xffffff);
  return g;
}

std::string_view api_base_name(std::string_view name) {
  const auto at = name.rfind("_v");
  if (at == std::string_view::npos || at == 0 || at + 2 >= name.size()) return name;
  for (std::size_t i = at + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, at);
}

std::optional<NcclRange> parse_nccl_range(std::string_view text, std::string_view json,
                                          std::int64_t int_payload) {
  text = trim(text);
  std::size_t name_end = 0;
  while (name_end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[name_end])) || text[name_end] == '_')) {
    ++name_end;
  }
  std::string_view name = text.substr(0, name_end);
  if (name.size() > 4 && lower(name.substr(0, 4)) == "nccl") name.remove_prefix(4);
  NcclRange range;
  range.op = import::normalise_collective_op(name);
  if (!vocabulary::is_collective_op(range.op)) return std::nullopt;
  auto visit = [&](const std::string& key, const std::string& value) {
    const bool has_comm = key.find("comm") != std::string::npos;
    if (has_comm && (key.find("size") != std::string::npos || key.find("rank") != std::string::npos)) {
      range.group_size = parse_integer(value);
    } else if (key == "nranks" || key == "ranks" || key.find("group size") != std::string::npos ||
               key.find("number of ranks") != std::string::npos) {
      range.group_size = parse_integer(value);
    } else if (has_comm) {
      range.communicator = value;
    } else if (key.find("size") != std::string::npos || key.find("bytes") != std::string::npos) {
      range.bytes = parse_integer(value);
    } else if (key.find("count") != std::string::npos || key.find("nelems") != std::string::npos ||
               key.find("elements") != std::string::npos) {
      range.count = parse_integer(value);
    } else if (key.find("type") != std::string::npos) {
      range.dtype = value;
    } else if (key.find("root") != std::string::npos || key.find("peer") != std::string::npos) {
      range.root_or_peer = parse_integer(value);
    }
  };
  for_each_pair(text.substr(name_end), visit);
  for_each_pair(json, visit);
  if (range.bytes == kNull && range.count != kNull && range.count >= 0) {
    const int element = import::dtype_bytes(range.dtype);
    if (element > 0) range.bytes = range.count * element;
  }
  if (range.bytes == kNull && int_payload != kNull && int_payload >= 0) range.bytes = int_payload;
  return range;
}

}  // namespace meshscope::nsys
