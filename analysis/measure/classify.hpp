// Classification of GPU activities into compute, communication, memory traffic and synchronisation.
//
// Order of evidence (first that applies wins):
//   1. the activity kind: memcpy/memset are memory, sync records are sync;
//   2. collective metadata: a kernel that a collectives row points at (Kineto collective args, NCCL plugin)
//   is
//      communication;
//   3. the name rules: one table (default_rules()) that a user extends with their own rules, which are tried
//      before the defaults;
//   4. everything else is compute.
// docs/ANALYSIS.md lists the default rules and how to add one (`meshscope report --rule
// comm:prefix:myKernel`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

enum class ActivityClass : std::uint8_t { kCompute = 0, kComm = 1, kMemory = 2, kSync = 3 };
inline constexpr int kClassCount = 4;
const char* to_string(ActivityClass c);

struct ClassRule {
  enum class Match : std::uint8_t { kPrefix, kContains };
  Match match = Match::kContains;
  std::string pattern;  // case-sensitive; a leading "void " of a demangled name is ignored for kPrefix
  ActivityClass cls = ActivityClass::kComm;
  std::string library;  // who launches such kernels (nccl, nvshmem, deep_ep, ...), shown in reports
};

// The built-in name rules (NCCL/RCCL kernel generations, NVSHMEM, expert-parallel dispatch/combine,
// symmetric-memory all-reduce, MSCCL++, custom all-reduce kernels, memcpy/memset-named kernels).
const std::vector<ClassRule>& default_rules();

// Parses "CLASS:MATCH:PATTERN[:LIBRARY]" (CLASS = compute|comm|memory|sync, MATCH = prefix|contains).
// Throws meshscope::Error on a malformed rule.
ClassRule parse_rule(std::string_view text);

class Classifier {
 public:
  // USER rules are tried first, then the defaults.
  explicit Classifier(std::vector<ClassRule> user_rules = {});

  // The rule that matches NAME, or nullptr.
  const ClassRule* match(std::string_view name) const;

  // Class of an activity of RANK (name-rule results are cached per string id in CACHE, which belongs to the
  // caller: one per thread).
  ActivityClass classify(const Profile& profile, const Activity& activity,
                         std::vector<std::uint8_t>& cache) const;

  const std::vector<ClassRule>& rules() const { return rules_; }

 private:
  std::vector<ClassRule> rules_;
};

// The collective operation a communication kernel's name spells ("ncclKernel_AllReduce_RING_LL_Sum_float" ->
// "allreduce", "ncclDevKernel_SendRecv" -> "sendrecv"); empty when the name does not say.
std::string op_from_kernel_name(std::string_view name);

}  // namespace meshscope::measure
