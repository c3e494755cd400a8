// Classification of GPU activities into compute, communication, memory traffic and synchronisation.
//
// Order of evidence (first that applies wins):
//   1. the activity kind: memcpy/memset are memory, sync records are sync;
//   2. collective metadata: a kernel that a collectives row points at (Kineto collective args, NCCL plugin)
//      is communication;
//   3. the name rules: one table (default_rules()) that a user extends with their own rules, which are tried
//      before the defaults. A rule matches a prefix or a substring of the name, or the name's structure: the
//      words of the function and of its namespaces (tokenize_kernel_name), so that forks and in-house copies
//      of a communication library that keep its verbs (dispatch, combine, all_reduce, internode::) are
//      recognised without their namespace being known, while GEMMs and attention kernels in the same
//      namespace are not;
//   4. everything else is compute.
// docs/ANALYSIS.md lists the default rules, each with the library it comes from, and how to add one
// (`meshscope report --rule comm:prefix:myKernel`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope::measure {

using meshscope::ActivityClass;  // profiler/summary_records.hpp: the summaries store it
using meshscope::kClassCount;
const char* to_string(ActivityClass c);

struct ClassRule {
  enum class Match : std::uint8_t { kPrefix, kContains, kTokens };
  Match match = Match::kContains;
  // kPrefix / kContains: case-sensitive text (a leading "void " of a demangled name is ignored for kPrefix).
  // kTokens: space-separated terms that must all hold, each a list of words separated by '|' (a word ending
  // in '*' matches any word it begins); words are lower case:
  //   fn=W|W    a word of the function's own name is one of these
  //   ns=W|W    a namespace (as a whole, or one of its words) is one of these
  //   any=W|W   a word of the function or of a namespace is one of these
  //   only=W|W  every word of the function's name is one of these or of the rule's fn= words
  //   not=W|W   no word of the function or of a namespace is one of these
  // A token rule that classifies as anything but compute never matches a GEMM, attention or convolution
  // kernel (words such as gemm, matmul, attn, flash, fmha, conv; kTokenVeto in classify.cpp).
  std::string pattern;
  ActivityClass cls = ActivityClass::kComm;
  std::string library;  // who launches such kernels (nccl, deep_ep, pplx, ...), shown in reports
  std::string source;   // where such names come from (repository and file); "--rule" for a user's rule
};
const char* to_string(ClassRule::Match m);

// What decided an activity's class.
enum class Evidence : std::uint8_t { kKind = 0, kMetadata = 1, kRule = 2, kDefault = 3 };
const char* to_string(Evidence e);

struct Verdict {
  ActivityClass cls = ActivityClass::kCompute;
  Evidence evidence = Evidence::kDefault;
  std::int32_t rule = -1;  // index into Classifier::rules() when evidence is kRule
};

// The structure of a (demangled) kernel name: "void deep_ep::internode_ll::dispatch<...>(...)" -> namespaces
// {"deep_ep", "internode_ll"} with words {deep, ep, internode, ll}, function words {dispatch}. Template
// arguments and parameters are not part of it; "(anonymous namespace)" is dropped. Words are lower case,
// split at '_', at camelCase and at digit-to-word boundaries ("moeA2ADispatchKernel" -> moe, a2a, dispatch,
// kernel), with the collective verbs joined: all+reduce -> allreduce, all+gather -> allgather,
// reduce+scatter -> reducescatter, all+to+all -> alltoall, send+recv -> sendrecv, inter+node -> internode,
// intra+node -> intranode.
struct NameTokens {
  std::vector<std::string> namespaces;  // lower case, as written ("internode_ll")
  std::vector<std::string> namespace_words;
  std::vector<std::string> function_words;
};
NameTokens tokenize_kernel_name(std::string_view name);

// The built-in name rules (NCCL/RCCL kernel generations, NVSHMEM, expert-parallel dispatch/combine libraries
// and their forks, symmetric-memory and custom all-reduce kernels, MSCCL++, TransformerEngine userbuffers,
// memcpy/memset-named kernels), in the order they are tried.
const std::vector<ClassRule>& default_rules();

// Parses "CLASS:MATCH:PATTERN[:LIBRARY]" (CLASS = compute|comm|memory|sync, MATCH = prefix|contains|tokens).
// PATTERN keeps every "::" (C++ names almost always contain one); a single ':' ends it and starts LIBRARY.
// Throws meshscope::Error with one line when the rule is malformed or ambiguous (":::", a second single ':',
// an empty part, a token pattern that does not parse).
ClassRule parse_rule(std::string_view text);

class Classifier {
 public:
  // One parsed term of a token pattern (ClassRule::pattern): where to look and which words count.
  struct Term {
    enum class Where : std::uint8_t { kFunction, kNamespace, kAny, kOnly, kNot };
    Where where = Where::kFunction;
    std::vector<std::string> words;  // lower case; a trailing '*' matches any word it begins
    bool matches(const std::string& word) const;
    bool any_of(const std::vector<std::string>& list) const;
  };

  // USER rules are tried first, then the defaults. Throws meshscope::Error on a token pattern that does not
  // parse.
  explicit Classifier(std::vector<ClassRule> user_rules = {});

  // Index into rules() of the first rule that matches NAME, or -1.
  std::int32_t match_index(std::string_view name) const;
  // The first rule that matches NAME, or nullptr.
  const ClassRule* match(std::string_view name) const;

  // Class of an activity of RANK and why (name-rule results are cached per string id in CACHE, which belongs
  // to the caller: one per thread). A collectives row counts as metadata unless the importer made it from the
  // kernel's name alone (source "kernel_name"): then the name rules decide, as for any other kernel.
  Verdict classify(const Profile& profile, const Rank& rank, const Activity& activity,
                   std::vector<std::int32_t>& cache) const;

  const std::vector<ClassRule>& rules() const { return rules_; }

 private:
  bool tokens_match(std::size_t rule, const NameTokens& tokens) const;

  std::vector<ClassRule> rules_;
  std::vector<std::vector<Term>> terms_;  // per rule; empty unless the rule is kTokens
};

// The collective operation a communication kernel's name spells ("ncclKernel_AllReduce_RING_LL_Sum_float" ->
// "allreduce", "ncclDevKernel_SendRecv" -> "sendrecv", "deep_ep::internode::dispatch" -> "dispatch"); empty
// when the name does not say.
std::string op_from_kernel_name(std::string_view name);

}  // namespace meshscope::measure
