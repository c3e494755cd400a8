#include "analysis/measure/classify.hpp"

#include <algorithm>

#include "profiler/error.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

using vocabulary::lower;

using M = ClassRule::Match;
using C = ActivityClass;

// Cache values: 0 = not yet classified, otherwise class + 1.
constexpr std::uint8_t kUnknown = 0;

std::string_view strip_void(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  if (name.starts_with("void ")) name.remove_prefix(5);
  return name;
}

}  // namespace

const char* to_string(ActivityClass c) {
  switch (c) {
    case C::kCompute:
      return "compute";
    case C::kComm:
      return "comm";
    case C::kMemory:
      return "memory";
    case C::kSync:
      return "sync";
  }
  return "unknown";
}

const std::vector<ClassRule>& default_rules() {
  // clang-format off
  static const std::vector<ClassRule> rules = {
      // NCCL and RCCL, every kernel generation: ncclKernel_AllReduce_RING_LL_Sum_float (<= 2.18),
      // ncclDevKernel_AllGather_RING_LL (2.19+), ncclDevKernel_Generic (RCCL, NCCL generic kernels).
      {M::kPrefix, "ncclKernel", C::kComm, "nccl"},
      {M::kPrefix, "ncclDevKernel", C::kComm, "nccl"},
      {M::kContains, "ncclKernel", C::kComm, "nccl"},
      {M::kContains, "ncclDevKernel", C::kComm, "nccl"},
      {M::kPrefix, "rcclKernel", C::kComm, "rccl"},
      {M::kContains, "msccl::", C::kComm, "msccl"},
      {M::kPrefix, "msccl", C::kComm, "msccl"},
      // MSCCL++ (mscclpp::... kernels, mscclppAllReduce...).
      {M::kContains, "mscclpp", C::kComm, "mscclpp"},
      // NVSHMEM device kernels and collectives (nvshmemi_..., nvshmem_..._kernel).
      {M::kPrefix, "nvshmem", C::kComm, "nvshmem"},
      {M::kContains, "nvshmemi_", C::kComm, "nvshmem"},
      {M::kContains, "nvshmem::", C::kComm, "nvshmem"},
      // Expert-parallel dispatch/combine libraries that move tokens without NCCL.
      {M::kContains, "deep_ep::", C::kComm, "deep_ep"},
      {M::kContains, "pplx::", C::kComm, "pplx"},
      {M::kContains, "uccl::ep", C::kComm, "uccl_ep"},
      {M::kContains, "moe_a2a", C::kComm, "trtllm_moe_a2a"},
      {M::kContains, "moeA2A", C::kComm, "trtllm_moe_a2a"},
      // PyTorch symmetric memory all-reduce / all-gather kernels and intra-node comm.
      {M::kContains, "symmetric_memory::", C::kComm, "torch_symm_mem"},
      {M::kContains, "multimem_all_reduce", C::kComm, "torch_symm_mem"},
      {M::kContains, "one_shot_all_reduce", C::kComm, "torch_symm_mem"},
      {M::kContains, "two_shot_all_reduce", C::kComm, "torch_symm_mem"},
      {M::kContains, "intra_node_comm", C::kComm, "torch_intra_node"},
      // Custom all-reduce kernels of inference engines (vLLM, TensorRT-LLM, SGLang).
      {M::kContains, "cross_device_reduce", C::kComm, "custom_allreduce"},
      {M::kContains, "customAllReduce", C::kComm, "custom_allreduce"},
      {M::kContains, "allreduce_fusion_kernel", C::kComm, "custom_allreduce"},
      // Other vendors' collective libraries.
      {M::kPrefix, "hccl", C::kComm, "hccl"},
      {M::kPrefix, "oneccl", C::kComm, "oneccl"},
      // Kernels named like copies (AMD reports some copies as kernels).
      {M::kPrefix, "Memcpy", C::kMemory, "copy"},
      {M::kPrefix, "Memset", C::kMemory, "copy"},
      {M::kContains, "__amd_rocclr_copyBuffer", C::kMemory, "copy"},
      {M::kContains, "__amd_rocclr_fillBuffer", C::kMemory, "copy"},
  };
  // clang-format on
  return rules;
}

ClassRule parse_rule(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t from = 0;
  for (int i = 0; i < 3; ++i) {
    const auto colon = text.find(':', from);
    if (colon == std::string_view::npos) break;
    parts.push_back(text.substr(from, colon - from));
    from = colon + 1;
  }
  parts.push_back(text.substr(from));
  if (parts.size() < 3 || parts[2].empty()) {
    fail("--rule {}: expected CLASS:MATCH:PATTERN[:LIBRARY], e.g. comm:prefix:myAllReduceKernel", text);
  }
  ClassRule rule;
  const std::string cls = lower(parts[0]);
  if (cls == "compute") {
    rule.cls = C::kCompute;
  } else if (cls == "comm" || cls == "communication") {
    rule.cls = C::kComm;
  } else if (cls == "memory") {
    rule.cls = C::kMemory;
  } else if (cls == "sync") {
    rule.cls = C::kSync;
  } else {
    fail("--rule {}: class must be compute, comm, memory or sync", text);
  }
  const std::string match = lower(parts[1]);
  if (match == "prefix") {
    rule.match = M::kPrefix;
  } else if (match == "contains") {
    rule.match = M::kContains;
  } else {
    fail("--rule {}: match must be prefix or contains", text);
  }
  rule.pattern = std::string(parts[2]);
  rule.library = parts.size() > 3 && !parts[3].empty() ? std::string(parts[3]) : std::string("user");
  return rule;
}

Classifier::Classifier(std::vector<ClassRule> user_rules) : rules_(std::move(user_rules)) {
  rules_.insert(rules_.end(), default_rules().begin(), default_rules().end());
}

const ClassRule* Classifier::match(std::string_view name) const {
  const std::string_view stripped = strip_void(name);
  for (const ClassRule& rule : rules_) {
    const bool hit = rule.match == M::kPrefix ? stripped.starts_with(rule.pattern)
                                              : name.find(rule.pattern) != std::string_view::npos;
    if (hit) return &rule;
  }
  return nullptr;
}

ActivityClass Classifier::classify(const Profile& profile, const Activity& activity,
                                   std::vector<std::uint8_t>& cache) const {
  switch (activity.kind) {
    case ActivityKind::kMemcpy:
    case ActivityKind::kMemset:
      return C::kMemory;
    case ActivityKind::kSync:
      return C::kSync;
    case ActivityKind::kKernel:
      break;
  }
  if (activity.collective >= 0) return C::kComm;
  if (activity.name >= cache.size()) cache.resize(std::max<std::size_t>(activity.name + 1, cache.size() * 2));
  std::uint8_t& slot = cache[activity.name];
  if (slot == kUnknown) {
    const ClassRule* rule = match(profile.str(activity.name));
    slot = static_cast<std::uint8_t>(static_cast<int>(rule ? rule->cls : C::kCompute) + 1);
  }
  return static_cast<ActivityClass>(slot - 1);
}

std::string op_from_kernel_name(std::string_view name) {
  if (const auto nccl = vocabulary::parse_nccl_kernel_name(name)) return nccl->op;
  const std::string text = lower(strip_void(name));
  if (text.find("all_reduce") != std::string::npos || text.find("allreduce") != std::string::npos ||
      text.find("cross_device_reduce") != std::string::npos) {
    return "allreduce";
  }
  if (text.find("dispatch") != std::string::npos) return "dispatch";
  if (text.find("combine") != std::string::npos) return "combine";
  if (text.find("all_gather") != std::string::npos || text.find("allgather") != std::string::npos) {
    return "allgather";
  }
  return {};
}

}  // namespace meshscope::measure
