#include "collectors/import/collective_names.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace meshscope::import {
namespace {

std::string lower_without_underscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string normalise_collective_op(std::string_view name) {
  std::string op = lower_without_underscores(name);
  if (op.starts_with("nccl:")) op = op.substr(5);
  if (op.starts_with("c10d::")) op = op.substr(6);
  // PyTorch suffixes that do not change what moves over the wire.
  for (const std::string_view suffix : {"coalesced", "base", "intotensor", "tensor", "single", "multigpu"}) {
    while (ends_with(op, suffix) && op.size() > suffix.size()) op.resize(op.size() - suffix.size());
  }
  if (op == "alltoallv" || op == "alltoall") return "alltoall";
  if (op == "allgather" || op == "allgatherv") return "allgather";
  if (op == "reducescatter" || op == "reducescatterv") return "reducescatter";
  return op;
}

std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view kernel_name) {
  std::string_view name = kernel_name;
  if (name.starts_with("void ")) name.remove_prefix(5);
  const auto paren = name.find('(');
  if (paren != std::string_view::npos) name = name.substr(0, paren);
  const auto template_start = name.find('<');
  if (template_start != std::string_view::npos) name = name.substr(0, template_start);
  std::string_view rest;
  if (name.starts_with("ncclKernel_")) {
    rest = name.substr(11);
  } else if (name.starts_with("ncclDevKernel_")) {
    rest = name.substr(14);
  } else {
    return std::nullopt;
  }
  std::vector<std::string_view> tokens;
  while (!rest.empty()) {
    const auto at = rest.find('_');
    tokens.push_back(rest.substr(0, at));
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + 1);
  }
  NcclKernelName parsed;
  if (tokens.empty() || tokens[0] == "Generic") return parsed;
  parsed.op = normalise_collective_op(tokens[0]);
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const auto t = tokens[i];
    const bool has_next = i + 1 < tokens.size();
    if (t == "RING" || t == "TREE" || t == "PAT") {
      parsed.algorithm = std::string(t);
    } else if (t == "NVLS") {
      parsed.algorithm = has_next && tokens[i + 1] == "TREE" ? "NVLS_TREE" : "NVLS";
      if (parsed.algorithm == "NVLS_TREE") ++i;
    } else if (t == "COLLNET" || t == "CollNet") {
      std::string algorithm = "COLLNET";
      if (has_next && (tokens[i + 1] == "DIRECT" || tokens[i + 1] == "CHAIN" || tokens[i + 1] == "Direct" ||
                       tokens[i + 1] == "Chain")) {
        algorithm += "_" + std::string(tokens[i + 1]);
        std::transform(algorithm.begin(), algorithm.end(), algorithm.begin(), ::toupper);
        ++i;
      }
      parsed.algorithm = algorithm;
    } else if (t == "LL" || t == "LL128" || t == "SIMPLE") {
      parsed.protocol = std::string(t);
    }
  }
  return parsed;
}

int dtype_bytes(std::string_view dtype) {
  std::string d = lower_without_underscores(dtype);
  if (d.starts_with("c10::")) d = d.substr(5);
  if (d.starts_with("torch.")) d = d.substr(6);
  if (d.starts_with("nccl")) d = d.substr(4);
  struct Size {
    std::string_view name;
    int bytes;
  };
  static constexpr std::array<Size, 30> sizes = {{
      {"float", 4},   {"float32", 4}, {"float16", 2},      {"half", 2},         {"bfloat16", 2},
      {"double", 8},  {"float64", 8}, {"int", 4},          {"int32", 4},        {"int32t", 4},
      {"long", 8},    {"int64", 8},   {"int64t", 8},       {"short", 2},        {"int16", 2},
      {"char", 1},    {"int8", 1},    {"int8t", 1},        {"byte", 1},         {"uint8", 1},
      {"uint8t", 1},  {"bool", 1},    {"float8e4m3fn", 1}, {"float8e5m2", 1},   {"fp8e4m3", 1},
      {"fp8e5m2", 1}, {"uint32", 4},  {"uint64", 8},       {"complexfloat", 8}, {"complexdouble", 16},
  }};
  for (const auto& s : sizes) {
    if (d == s.name) return s.bytes;
  }
  return 0;
}

}  // namespace meshscope::import
