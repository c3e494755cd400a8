#include "profiler/vocabulary.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace meshscope::vocabulary {
namespace {

char lower_char(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string_view strip_prefix(std::string_view text, std::string_view prefix) {
  return text.starts_with(prefix) ? text.substr(prefix.size()) : text;
}

}  // namespace

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower_char(c);
  return out;
}

std::string_view operator_name(std::string_view range_name) {
  const auto comma = range_name.find(", ");
  if (comma == std::string_view::npos) return range_name;
  const std::string_view name = range_name.substr(0, comma), rest = range_name.substr(comma + 2);
  // Operators are namespaced ("aten::add", "c10d::alltoall_base_"); ProcessGroupNCCL's record names use one
  // colon ("nccl:all_to_all").
  const bool namespaced = name.find("::") != std::string_view::npos || name.starts_with("nccl:");
  if (!namespaced || name.find(' ') != std::string_view::npos) return range_name;
  for (const std::string_view field : {"seq = ", "op_id = ", "sizes = ", "input_op_ids = "}) {
    if (rest.substr(0, field.size()) == field) return name;
  }
  return range_name;
}

GpuVendor gpu_vendor(std::string_view device_name) {
  const std::string n = lower(device_name);
  for (const char* word : {"nvidia", "tesla", "quadro", "geforce"})
    if (n.find(word) != std::string::npos) return GpuVendor::kNvidia;
  for (const char* word : {"amd", "radeon", "instinct"})
    if (n.find(word) != std::string::npos) return GpuVendor::kAmd;
  return GpuVendor::kUnknown;
}

std::string lower_alnum(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (is_alnum(c)) out += lower_char(c);
  }
  return out;
}

ParallelDims parallel_dims_named(std::string_view process_group_desc) {
  ParallelDims dims;
  const std::string text = lower(process_group_desc);
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_alnum(text[i])) ++i;
    std::size_t end = i;
    while (end < text.size() && is_alnum(text[end])) ++end;
    const std::string_view word = std::string_view(text).substr(i, end - i);
    if (word == "tp" || word.starts_with("tensor")) dims.tp = true;
    if (word == "pp" || word.starts_with("pipe")) dims.pp = true;
    if (word == "cp" || word == "context") dims.cp = true;
    if (word == "ep" || word.starts_with("expert")) dims.ep = true;
    if (word == "dp" || word == "data" || word == "fsdp" || word == "ddp") dims.dp = true;
    i = end;
  }
  return dims;
}

bool names_process_group_call(std::string_view name) {
  return name.starts_with("nccl:") || name.starts_with("c10d::");
}

std::string process_group_call_sql(std::string_view text_column) {
  // GLOB, not LIKE or =: case-sensitive as starts_with whatever collation the column declares.
  const std::string column(text_column);
  return "(" + column + " GLOB 'nccl:*' OR " + column + " GLOB 'c10d::*')";
}

std::string normalise_collective_op(std::string_view name) {
  const std::string lowered = lower(name);
  std::string_view view = lowered;
  // Namespaces and record names of the sources: Kineto's "nccl:all_reduce" and "c10d::allreduce_".
  view = strip_prefix(view, "nccl:");
  view = strip_prefix(view, "c10d::");
  std::string op = lower_alnum(view);
  // NCCL API names ("ncclAllReduce") when a source keeps the library prefix.
  if (op.size() > 4 && op.starts_with("nccl")) op.erase(0, 4);
  // PyTorch suffixes that do not change what moves over the wire.
  for (const std::string_view suffix : {"coalesced", "base", "intotensor", "tensor", "single", "multigpu"}) {
    while (op.size() > suffix.size() && op.ends_with(suffix)) op.resize(op.size() - suffix.size());
  }
  if (op == "alltoallv") return "alltoall";
  if (op == "allgatherv") return "allgather";
  if (op == "reducescatterv") return "reducescatter";
  if (op == "bcast") return "broadcast";
  return op;
}

bool is_collective_op(std::string_view op) {
  static constexpr std::array<std::string_view, 11> kOps = {
      "allreduce", "allgather", "reducescatter", "broadcast", "reduce",  "alltoall",
      "gather",    "scatter",   "send",          "recv",      "sendrecv"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool is_point_to_point(std::string_view op) {
  return op == "send" || op == "recv" || op == "sendrecv";
}

std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view kernel_name) {
  std::string_view name = kernel_name;
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  name = strip_prefix(name, "void ");
  name = name.substr(0, name.find_first_of("(<"));
  std::string_view rest;
  if (name.starts_with("ncclKernel_")) {
    rest = name.substr(11);
  } else if (name.starts_with("ncclDevKernel_")) {
    rest = name.substr(14);
  } else if (name.starts_with("rcclKernel_")) {
    rest = name.substr(11);
  } else if (name.starts_with("ncclSymkDevKernel_")) {
    rest = name.substr(18);
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
        std::transform(algorithm.begin(), algorithm.end(), algorithm.begin(),
                       [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
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
  const std::string lowered = lower(dtype);
  std::string_view view = lowered;
  for (const std::string_view prefix : {"c10::", "at::", "torch."}) view = strip_prefix(view, prefix);
  std::string d = lower_alnum(view);
  if (d.size() > 4 && d.starts_with("nccl")) d.erase(0, 4);  // ncclFloat16, ncclBfloat16
  struct Size {
    std::string_view name;
    int bytes;
  };
  // PyTorch c10::ScalarType names (c10/core/ScalarType.h), torch dtype names, C integer types, NCCL's
  // ncclDataType_t names (nccl.h: ncclInt8 ... ncclFloat8e4m3, ncclFloat8e5m2), all lower-cased and stripped
  // of everything but letters and digits.
  static constexpr std::array<Size, 55> kSizes = {{
      {"bool", 1},         {"char", 1},           {"byte", 1},
      {"int8", 1},         {"int8t", 1},          {"uint8", 1},
      {"uint8t", 1},       {"qint8", 1},          {"quint8", 1},
      {"quint4x2", 1},     {"quint2x4", 1},       {"fp8", 1},
      {"float8e4m3", 1},   {"float8e4m3fn", 1},   {"float8e4m3fnuz", 1},
      {"float8e5m2", 1},   {"float8e5m2fnuz", 1}, {"float8e8m0fnu", 1},
      {"fp8e4m3", 1},      {"fp8e5m2", 1},        {"float4e2m1fnx2", 1},
      {"short", 2},        {"int16", 2},          {"int16t", 2},
      {"uint16", 2},       {"uint16t", 2},        {"half", 2},
      {"float16", 2},      {"fp16", 2},           {"bfloat16", 2},
      {"bf16", 2},         {"bits16", 2},         {"int", 4},
      {"int32", 4},        {"int32t", 4},         {"uint32", 4},
      {"uint32t", 4},      {"qint32", 4},         {"float", 4},
      {"float32", 4},      {"fp32", 4},           {"complexhalf", 4},
      {"chalf", 4},        {"long", 8},           {"int64", 8},
      {"int64t", 8},       {"uint64", 8},         {"uint64t", 8},
      {"double", 8},       {"float64", 8},        {"fp64", 8},
      {"complexfloat", 8}, {"complex64", 8},      {"complexdouble", 16},
      {"complex128", 16},
  }};
  for (const Size& s : kSizes) {
    if (d == s.name) return s.bytes;
  }
  return 0;
}

}  // namespace meshscope::vocabulary
