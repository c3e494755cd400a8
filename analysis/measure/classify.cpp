#include "analysis/measure/classify.hpp"

#include <algorithm>
#include <array>

#include "profiler/error.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::measure {
namespace {

using vocabulary::lower;

using M = ClassRule::Match;
using C = ActivityClass;

// Cache values: 0 = not yet classified, 1 = no rule matched (compute), otherwise rule index + 2.
constexpr std::int32_t kUnknown = 0;
constexpr std::int32_t kNoRule = 1;

std::string_view strip_void(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  if (name.starts_with("void ")) name.remove_prefix(5);
  return name;
}

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word_char(char c) {
  return is_lower(c) || is_upper(c) || is_digit(c);
}

// Words of one name component: split at non-alphanumerics, at a lower-to-upper step ("allReduce"), before an
// upper letter that starts a word after capitals or digits ("A2ADispatch" -> A2A, Dispatch), lower-cased.
void split_words(std::string_view text, std::vector<std::string>& out) {
  std::string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(lower(word));
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!is_word_char(c)) {
      flush();
      continue;
    }
    if (!word.empty() && is_upper(c)) {
      const char prev = text[i - 1];
      const bool next_lower = i + 1 < text.size() && is_lower(text[i + 1]);
      if (is_lower(prev) || ((is_upper(prev) || is_digit(prev)) && next_lower)) flush();
    }
    word += c;
  }
  flush();
}

// Joins the words of the collective verbs and of the node scopes: all reduce -> allreduce, all to all ->
// alltoall, inter node -> internode, ...
void join_words(std::vector<std::string>& words) {
  std::vector<std::string> out;
  out.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string* next = i + 1 < words.size() ? &words[i + 1] : nullptr;
    if (next) {
      const bool pair = (w == "all" && (next->starts_with("reduce") || next->starts_with("gather"))) ||
                        (w == "reduce" && next->starts_with("scatter")) || (w == "send" && *next == "recv") ||
                        ((w == "inter" || w == "intra") && *next == "node");
      if (pair) {
        out.push_back(w + *next);
        ++i;
        continue;
      }
      if (w == "all" && *next == "to" && i + 2 < words.size() && words[i + 2].starts_with("all")) {
        out.push_back("allto" + words[i + 2]);
        i += 2;
        continue;
      }
    }
    out.push_back(w);
  }
  words = std::move(out);
}

void erase_all(std::string& text, std::string_view what) {
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at))
    text.erase(at, what.size());
}

// Words that mark a GEMM, attention or convolution kernel: a token rule that classifies as anything but
// compute never matches a function whose own name has one of them, however much of a communication library's
// namespace or verbs it carries ("dpsk::gemm::fp8_gemm_kernel", "flash::flash_fwd_splitkv_combine_kernel",
// Helion's "gemm_one_shot_all_reduce_kernel": a fused GEMM and collective counts as compute).
constexpr std::array<std::string_view, 7> kVetoInside = {"gemm",      "gemv", "matmul", "attn",
                                                         "attention", "fmha", "flash"};
constexpr std::array<std::string_view, 7> kVetoWord = {"mha", "mma",     "wgmma", "conv",
                                                       "bmm", "splitkv", "mla"};

bool vetoed(const std::string& word) {
  for (std::string_view v : kVetoInside) {
    if (word.find(v) != std::string::npos) return true;
  }
  return std::find(kVetoWord.begin(), kVetoWord.end(), word) != kVetoWord.end();
}

}  // namespace

bool Classifier::Term::matches(const std::string& word) const {
  for (const std::string& w : words) {
    if (!w.empty() && w.back() == '*' ? word.starts_with(std::string_view(w).substr(0, w.size() - 1))
                                      : word == w) {
      return true;
    }
  }
  return false;
}

bool Classifier::Term::any_of(const std::vector<std::string>& list) const {
  return std::any_of(list.begin(), list.end(), [&](const std::string& w) { return matches(w); });
}

namespace {

std::vector<Classifier::Term> parse_terms(std::string_view pattern, std::string_view rule_text) {
  using Term = Classifier::Term;
  std::vector<Term> terms;
  std::size_t pos = 0;
  while (pos < pattern.size()) {
    auto end = pattern.find(' ', pos);
    if (end == std::string_view::npos) end = pattern.size();
    const std::string_view text = pattern.substr(pos, end - pos);
    pos = end + 1;
    if (text.empty()) continue;
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq + 1 >= text.size()) {
      fail("--rule {}: token term '{}' is not KEY=WORD|WORD (keys: fn, ns, any, only, not)", rule_text, text);
    }
    const std::string_view key = text.substr(0, eq);
    Term term;
    if (key == "fn") {
      term.where = Term::Where::kFunction;
    } else if (key == "ns") {
      term.where = Term::Where::kNamespace;
    } else if (key == "any") {
      term.where = Term::Where::kAny;
    } else if (key == "only") {
      term.where = Term::Where::kOnly;
    } else if (key == "not") {
      term.where = Term::Where::kNot;
    } else {
      fail("--rule {}: token term key '{}' must be fn, ns, any, only or not", rule_text, key);
    }
    std::string_view words = text.substr(eq + 1);
    while (!words.empty()) {
      const auto bar = words.find('|');
      const std::string word = lower(words.substr(0, bar));
      if (word.empty() || word == "*") fail("--rule {}: token term '{}' has an empty word", rule_text, text);
      term.words.push_back(word);
      if (bar == std::string_view::npos) break;
      words.remove_prefix(bar + 1);
      if (words.empty()) fail("--rule {}: token term '{}' has an empty word", rule_text, text);
    }
    terms.push_back(std::move(term));
  }
  if (terms.empty())
    fail("--rule {}: token pattern has no terms (e.g. fn=dispatch|combine ns=ep)", rule_text);
  return terms;
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

const char* to_string(ClassRule::Match m) {
  switch (m) {
    case M::kPrefix:
      return "prefix";
    case M::kContains:
      return "contains";
    case M::kTokens:
      return "tokens";
  }
  return "unknown";
}

const char* to_string(Evidence e) {
  switch (e) {
    case Evidence::kKind:
      return "activity kind";
    case Evidence::kMetadata:
      return "collective metadata";
    case Evidence::kRule:
      return "name rule";
    case Evidence::kDefault:
      return "no rule (compute)";
  }
  return "unknown";
}

NameTokens tokenize_kernel_name(std::string_view name) {
  std::string text(strip_void(name));
  erase_all(text, "(anonymous namespace)::");
  erase_all(text, "<unnamed>::");
  std::string_view qualified = text;
  qualified = qualified.substr(0, qualified.find_first_of("<("));
  // A return type or qualifier before the name ("int foo::bar"): keep what follows the last space.
  while (!qualified.empty() && qualified.back() == ' ') qualified.remove_suffix(1);
  if (const auto space = qualified.rfind(' '); space != std::string_view::npos) {
    qualified.remove_prefix(space + 1);
  }
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = qualified.find("::");
    parts.push_back(qualified.substr(0, at));
    if (at == std::string_view::npos) break;
    qualified.remove_prefix(at + 2);
  }
  NameTokens tokens;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    tokens.namespaces.push_back(lower(parts[i]));
    split_words(parts[i], tokens.namespace_words);
  }
  join_words(tokens.namespace_words);
  split_words(parts.back(), tokens.function_words);
  join_words(tokens.function_words);
  return tokens;
}

const std::vector<ClassRule>& default_rules() {
  // clang-format off
  static const std::vector<ClassRule> rules = {
      // NCCL and RCCL, every kernel generation.
      {M::kPrefix, "ncclKernel", C::kComm, "nccl",
       "NVIDIA/nccl src/collectives/device (ncclKernel_AllReduce_RING_LL_Sum_float, NCCL <= 2.18)"},
      {M::kPrefix, "ncclDevKernel", C::kComm, "nccl",
       "NVIDIA/nccl src/device/generate.py (ncclDevKernel_AllGather_RING_LL, 2.19+; ncclDevKernel_Generic, RCCL)"},
      {M::kPrefix, "ncclSymk", C::kComm, "nccl",
       "NVIDIA/nccl src/device/symmetric (ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16, 2.27+)"},
      {M::kContains, "ncclKernel", C::kComm, "nccl", "NVIDIA/nccl (names with a prefix)"},
      {M::kContains, "ncclDevKernel", C::kComm, "nccl", "NVIDIA/nccl (names with a prefix)"},
      {M::kPrefix, "rcclKernel", C::kComm, "rccl", "ROCm/rccl (older kernel names)"},
      {M::kContains, "msccl::", C::kComm, "msccl", "microsoft/msccl"},
      {M::kPrefix, "msccl", C::kComm, "msccl", "microsoft/msccl"},
      {M::kContains, "mscclpp", C::kComm, "mscclpp", "microsoft/mscclpp (mscclpp:: kernels)"},
      // NVSHMEM device kernels and collectives (nvshmemi_..., nvshmem_..._kernel).
      {M::kPrefix, "nvshmem", C::kComm, "nvshmem", "NVIDIA NVSHMEM (nvshmem_*, nvshmemi_* kernels)"},
      {M::kContains, "nvshmemi_", C::kComm, "nvshmem", "NVIDIA NVSHMEM (nvshmemi_* kernels)"},
      {M::kContains, "nvshmem::", C::kComm, "nvshmem", "NVIDIA NVSHMEM"},
      // Expert-parallel dispatch/combine libraries that move tokens without NCCL. get_dispatch_layout comes
      // first: it counts tokens per rank and expert and moves no data.
      {M::kTokens, "fn=layout any=dispatch|combine", C::kCompute, "deep_ep",
       "deepseek-ai/DeepEP csrc/kernels/layout.cu (deep_ep::layout::get_dispatch_layout; older releases: "
       "deep_ep::internode::get_dispatch_layout)"},
      {M::kContains, "deep_ep::", C::kComm, "deep_ep",
       "deepseek-ai/DeepEP csrc/kernels/intranode.cu, internode.cu, internode_ll.cu"},
      {M::kContains, "pplx::", C::kComm, "pplx", "ppl-ai/pplx-kernels csrc/all_to_all"},
      {M::kContains, "uccl::ep", C::kComm, "uccl_ep", "uccl-project/uccl ep"},
      {M::kContains, "moe_a2a", C::kComm, "trtllm_moe_a2a", "NVIDIA/TensorRT-LLM MoE all-to-all kernels"},
      {M::kContains, "moeA2A", C::kComm, "trtllm_moe_a2a", "NVIDIA/TensorRT-LLM MoE all-to-all kernels"},
      // PyTorch symmetric memory all-reduce / all-gather kernels and intra-node comm (in an anonymous
      // namespace: "(anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>").
      {M::kContains, "symmetric_memory::", C::kComm, "torch_symm_mem",
       "pytorch/pytorch torch/csrc/distributed/c10d/symm_mem"},
      {M::kContains, "multimem_all_reduce", C::kComm, "torch_symm_mem",
       "pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu"},
      {M::kContains, "one_shot_all_reduce", C::kComm, "torch_symm_mem",
       "pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu"},
      {M::kContains, "two_shot_all_reduce", C::kComm, "torch_symm_mem",
       "pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu"},
      {M::kContains, "intra_node_comm", C::kComm, "torch_intra_node",
       "pytorch/pytorch torch/csrc/distributed/c10d/intra_node_comm.cu"},
      // Custom all-reduce kernels of inference engines.
      {M::kContains, "cross_device_reduce", C::kComm, "custom_allreduce",
       "vllm-project/vllm csrc/custom_all_reduce.cuh (vllm::cross_device_reduce_1stage, _2stage)"},
      {M::kContains, "customAllReduce", C::kComm, "custom_allreduce",
       "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/customAllReduceKernels.cu"},
      {M::kContains, "allreduce_fusion_kernel", C::kComm, "custom_allreduce",
       "flashinfer-ai/flashinfer include/flashinfer/comm/trtllm_allreduce_fusion.cuh "
       "(allreduce_fusion_kernel_oneshot_lamport)"},
      // TransformerEngine's userbuffers (tensor-parallel communication overlapped with GEMMs).
      {M::kContains, "userbuffers", C::kComm, "te_userbuffers",
       "NVIDIA/TransformerEngine transformer_engine/common/comm_gemm_overlap/userbuffers/userbuffers.cu "
       "(kuserbuffers_pushsend, userbuffers_fp16_sum_inplace_gpu_rw_ag)"},
      // Other vendors' collective libraries.
      {M::kPrefix, "hccl", C::kComm, "hccl", "Huawei HCCL"},
      {M::kPrefix, "oneccl", C::kComm, "oneccl", "oneapi-src/oneCCL"},
      // Kernels named like copies (AMD reports some copies as kernels).
      {M::kPrefix, "Memcpy", C::kMemory, "copy", "CUPTI/roctracer copy records named as kernels"},
      {M::kPrefix, "Memset", C::kMemory, "copy", "CUPTI/roctracer memset records named as kernels"},
      {M::kContains, "__amd_rocclr_copyBuffer", C::kMemory, "copy", "ROCm/clr (blit kernels)"},
      {M::kContains, "__amd_rocclr_fillBuffer", C::kMemory, "copy", "ROCm/clr (blit kernels)"},
      // Structure: forks and in-house copies keep the verbs and namespaces of the library they copy.
      {M::kTokens, "ns=internode|intranode", C::kComm, "ep",
       "DeepEP's communication namespaces (deepseek-ai/DeepEP csrc/kernels/internode.cu, intranode.cu, "
       "internode_ll.cu), kept by forks: dpsk::ep::internode::notify_dispatch, dispatch, cached_notify, combine "
       "in deepseek-ai/profile-data prefill.json"},
      {M::kTokens, "fn=dispatch|combine any=ep|moe|expert|experts|a2a|alltoall|all2all|nvshmem|internode|intranode",
       C::kComm, "ep",
       "expert-parallel dispatch/combine: ROCm/mori src/ops/dispatch_combine (mori::moe::"
       "EpDispatchIntraNodeKernel, EpCombineIntraNodeKernel), DeepEP forks"},
      {M::kTokens,
       "fn=dispatch|combine only=kernel|notify|cached|send|recv|ll|low|latency|internode|intranode|coop|overlap",
       C::kComm, "ep",
       "ppl-ai/pplx-kernels csrc/all_to_all/internode_dispatch.cu ((anonymous namespace)::dispatchKernel, "
       "combineKernel); DeepEP's notify_dispatch, cached_notify_combine"},
      {M::kTokens, "fn=allreduce*|allgather*|reducescatter*|alltoall*|all2all*", C::kComm, "custom_collective",
       "custom collectives: NVIDIA/TensorRT-LLM customAllReduceKernels.cu (oneShotAllReduceKernel, "
       "twoShotAllReduceKernel), pytorch/pytorch CUDASymmetricMemoryOps.cu (multimem_all_gather_kernel), "
       "all_to_all_vdev"},
      {M::kTokens, "fn=p2p|sendrecv", C::kComm, "p2p",
       "point-to-point kernels: FlagOpen/FlagCX (flagcxP2pKernel)"},
      {M::kTokens, "fn=peer fn=copy|put|get|send|recv", C::kComm, "p2p",
       "GPU-driven peer copies: uccl gpu_driven/include/peer_copy.cuh (peer_copy_kernel_vec_batched)"},
      {M::kTokens, "any=multimem|nvshmem*|lamport", C::kComm, "symmetric_memory",
       "NVLink multicast / NVSHMEM / Lamport-flag kernels: pytorch/pytorch CUDASymmetricMemoryOps.cu "
       "(multimem_*), NVIDIA/TensorRT-LLM (lamport all-reduce)"},
  };
  // clang-format on
  return rules;
}

ClassRule parse_rule(std::string_view text) {
  // CLASS and MATCH never hold a colon: the first two single colons end them. The rest is PATTERN, then
  // optionally ':' and LIBRARY; "::" belongs to the pattern (C++ names), a single ':' separates.
  const auto first = text.find(':');
  const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (second == std::string_view::npos) {
    fail("--rule {}: expected CLASS:MATCH:PATTERN[:LIBRARY], e.g. comm:contains:my_ep::dispatch", text);
  }
  const std::string_view cls_text = text.substr(0, first);
  const std::string_view match_text = text.substr(first + 1, second - first - 1);
  const std::string_view rest = text.substr(second + 1);
  if (cls_text.empty() || match_text.empty() || rest.starts_with(':')) {
    fail("--rule {}: expected CLASS:MATCH:PATTERN[:LIBRARY] with single colons after CLASS and MATCH", text);
  }
  std::size_t separator = std::string_view::npos;
  for (std::size_t i = 0; i < rest.size();) {
    if (rest[i] != ':') {
      ++i;
      continue;
    }
    std::size_t run = 1;
    while (i + run < rest.size() && rest[i + run] == ':') ++run;
    if (run >= 3) {
      fail(
          "--rule {}: '{}' is ambiguous (is a ':' part of the pattern or the start of LIBRARY?); write "
          "PATTERN:LIBRARY with the pattern's '::' and one ':' before the library",
          text, std::string(run, ':'));
    }
    if (run == 1) {
      if (separator != std::string_view::npos) {
        fail("--rule {}: more than one single ':' after the pattern; only '::' may appear inside a pattern",
             text);
      }
      separator = i;
    }
    i += run;
  }
  const std::string_view pattern = rest.substr(0, separator);
  const std::string_view library =
      separator == std::string_view::npos ? std::string_view() : rest.substr(separator + 1);
  if (pattern.empty()) fail("--rule {}: the pattern is empty", text);
  if (separator != std::string_view::npos && library.empty())
    fail("--rule {}: the library after ':' is empty", text);

  ClassRule rule;
  const std::string cls = lower(cls_text);
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
  const std::string match = lower(match_text);
  if (match == "prefix") {
    rule.match = M::kPrefix;
  } else if (match == "contains") {
    rule.match = M::kContains;
  } else if (match == "tokens") {
    rule.match = M::kTokens;
    parse_terms(pattern, text);  // validates
  } else {
    fail("--rule {}: match must be prefix, contains or tokens", text);
  }
  rule.pattern = std::string(pattern);
  rule.library = library.empty() ? std::string("user") : std::string(library);
  rule.source = "--rule";
  return rule;
}

Classifier::Classifier(std::vector<ClassRule> user_rules) : rules_(std::move(user_rules)) {
  rules_.insert(rules_.end(), default_rules().begin(), default_rules().end());
  terms_.resize(rules_.size());
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].match == M::kTokens) terms_[i] = parse_terms(rules_[i].pattern, rules_[i].pattern);
  }
}

bool Classifier::tokens_match(std::size_t rule, const NameTokens& tokens) const {
  using Where = Term::Where;
  if (rules_[rule].cls != C::kCompute &&
      std::any_of(tokens.function_words.begin(), tokens.function_words.end(), vetoed)) {
    return false;
  }
  const std::vector<Term>& terms = terms_[rule];
  for (const Term& term : terms) {
    switch (term.where) {
      case Where::kFunction:
        if (!term.any_of(tokens.function_words)) return false;
        break;
      case Where::kNamespace:
        if (!term.any_of(tokens.namespaces) && !term.any_of(tokens.namespace_words)) return false;
        break;
      case Where::kAny:
        if (!term.any_of(tokens.function_words) && !term.any_of(tokens.namespace_words) &&
            !term.any_of(tokens.namespaces)) {
          return false;
        }
        break;
      case Where::kNot:
        if (term.any_of(tokens.function_words) || term.any_of(tokens.namespace_words) ||
            term.any_of(tokens.namespaces)) {
          return false;
        }
        break;
      case Where::kOnly:
        for (const std::string& word : tokens.function_words) {
          const bool allowed =
              term.matches(word) || std::any_of(terms.begin(), terms.end(), [&](const Term& t) {
                return t.where == Where::kFunction && t.matches(word);
              });
          if (!allowed) return false;
        }
        break;
    }
  }
  return true;
}

std::int32_t Classifier::match_index(std::string_view name) const {
  const std::string_view stripped = strip_void(name);
  NameTokens tokens;
  bool tokenized = false;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const ClassRule& rule = rules_[i];
    bool hit = false;
    switch (rule.match) {
      case M::kPrefix:
        hit = stripped.starts_with(rule.pattern);
        break;
      case M::kContains:
        hit = name.find(rule.pattern) != std::string_view::npos;
        break;
      case M::kTokens:
        if (!tokenized) {
          tokens = tokenize_kernel_name(name);
          tokenized = true;
        }
        hit = tokens_match(i, tokens);
        break;
    }
    if (hit) return static_cast<std::int32_t>(i);
  }
  return -1;
}

const ClassRule* Classifier::match(std::string_view name) const {
  const std::int32_t i = match_index(name);
  return i < 0 ? nullptr : &rules_[static_cast<std::size_t>(i)];
}

Verdict Classifier::classify(const Profile& profile, const Rank& rank, const Activity& activity,
                             std::vector<std::int32_t>& cache) const {
  switch (activity.kind) {
    case ActivityKind::kMemcpy:
    case ActivityKind::kMemset:
      return {C::kMemory, Evidence::kKind, -1};
    case ActivityKind::kSync:
      return {C::kSync, Evidence::kKind, -1};
    case ActivityKind::kKernel:
      break;
  }
  if (activity.collective >= 0 && rank.collectives[static_cast<std::size_t>(activity.collective)].metadata) {
    return {C::kComm, Evidence::kMetadata, -1};
  }
  if (activity.name >= cache.size()) cache.resize(std::max<std::size_t>(activity.name + 1, cache.size() * 2));
  std::int32_t& slot = cache[activity.name];
  if (slot == kUnknown) {
    const std::int32_t rule = match_index(profile.str(activity.name));
    slot = rule < 0 ? kNoRule : rule + 2;
  }
  if (slot == kNoRule) return {C::kCompute, Evidence::kDefault, -1};
  const std::int32_t rule = slot - 2;
  return {rules_[static_cast<std::size_t>(rule)].cls, Evidence::kRule, rule};
}

std::string op_from_kernel_name(std::string_view name) {
  if (const auto nccl = vocabulary::parse_nccl_kernel_name(name)) return nccl->op;
  const NameTokens tokens = tokenize_kernel_name(name);
  auto has = [&](std::string_view prefix) {
    for (const auto* list : {&tokens.function_words, &tokens.namespace_words}) {
      for (const std::string& w : *list) {
        if (w.starts_with(prefix)) return true;
      }
    }
    return false;
  };
  if (has("allreduce") || lower(name).find("cross_device_reduce") != std::string::npos) return "allreduce";
  if (has("reducescatter")) return "reducescatter";
  if (has("allgather")) return "allgather";
  if (has("alltoall") || has("all2all") || has("a2a")) return "alltoall";
  for (const std::string& w : tokens.function_words) {
    if (w == "dispatch" || w == "combine") return w;
  }
  if (has("sendrecv") || has("p2p")) return "sendrecv";
  return {};
}

}  // namespace meshscope::measure
