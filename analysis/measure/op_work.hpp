// Work of one CPU operator from its recorded shapes (docs/PROFILE.md "op_work"): the
// floating-point operations it performs and the bytes it must move to and from device memory, for the
// PyTorch operators whose input shapes determine them. Kineto records the shapes when the profiler runs with
// record_shapes=True: args "Input Dims" (one list of sizes per input, [] for a non-tensor), "Input type"
// (element types) and, since PyTorch 2.1, "Concrete Inputs" (the values of scalar and list arguments).
//
// Every formula cites its source in op_work.cpp and is tested on a hand-computed case
// (tests/measure/op_work_test.cpp). Bytes are the compulsory traffic: every input read once and every output
// written once (Williams, Waterman & Patterson 2009, "Roofline", §2: operational intensity is operations per
// byte of DRAM traffic). A cache can make the traffic of a real kernel smaller, a kernel that re-reads its
// operands larger.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/work_records.hpp"

namespace meshscope::measure {

enum class WorkCategory : std::uint8_t {
  kGemm = 1,
  kAttention = 2,
  kConv = 3,
  kNorm = 4,
  kElementwise = 5,  // element-wise operations, copies and reductions: bytes only
  kOther = 6,        // embedding look-ups and the like: bytes only
};
inline constexpr int kWorkCategoryCount = 6;
// "gemm", "attention", "conv", "norm", "elementwise", "other".
const char* to_string(WorkCategory category);
// The category named NAME (as to_string writes it); false when none is.
bool parse_work_category(std::string_view name, WorkCategory& out);

// The recorded arguments of one operator, as Kineto wrote them (JSON text of each arg).
struct OpArgs {
  std::string_view input_dims;       // "[[16, 559, 1024], [1024, 1024], []]"
  std::string_view input_types;      // "[\"c10::BFloat16\", \"float\", \"Scalar\"]"
  std::string_view concrete_inputs;  // "[\"\", \"\", \"[2, 2]\", \"True\"]"; empty when not recorded
};

struct OpWork {
  WorkCategory category = WorkCategory::kOther;
  double flops = 0;  // floating-point operations (a multiply-add is 2)
  double bytes = 0;  // compulsory bytes read and written
};

// The kind of work a GPU kernel does, read from its name alone: convolutions (cuDNN's fprop/dgrad/wgrad,
// implicit GEMMs, Winograd), attention (flash, fmha, attn), GEMMs (cuBLAS, CUTLASS, nvJet, rocBLAS's
// Tensile Cijk_), normalisations, element-wise and reduction kernels (ATen's, Triton's pointwise and
// reduction kernels); kOther for the rest.
WorkCategory kernel_work_category(std::string_view kernel_name);

// Whether NAME ("aten::mm", ...) has a formula here (a cheap test before any parsing).
bool has_work_formula(std::string_view name);

// Fused attention operators of attention libraries (not ATen) over q, k and v [batch, seq, heads, head_dim],
// their first three inputs: FlashAttention 2's and 3's registered operators and autograd function, AITER's.
bool batch_seq_heads_attention(std::string_view name);

// A user's own attention operator (a Triton kernel wrapped with torch.library, "mylib::fused_attn_fwd"): a
// namespaced name that is not ATen's nor a library's above, naming attention (attn, attention, mha, sdpa) and
// not a backward (backward, bwd, grad). Its shapes are kept (op_work status undetermined); whether its first
// three inputs are queries, keys and values is for the workload inference to judge.
bool user_attention_operator(std::string_view name);

// Attention over sequences packed into one dimension of tokens: the queries [tokens, heads, head_dim] at
// input Q, the keys [tokens, kv_heads, head_dim] at K, or a paged cache of keys [pages, page_size, kv_heads,
// head_dim] (PAGED; the "NHD" layout FlashInfer, sglang and vLLM default to); where the operator takes them,
// the sequences' offsets [sequences + 1] and the cache pages they use.
struct PackedAttentionLayout {
  std::size_t q = 0, k = 0;
  std::optional<std::size_t> offsets, pages;
  bool paged = false;
};
std::optional<PackedAttentionLayout> packed_attention_layout(std::string_view name);

enum class WorkStatus : std::uint8_t {
  kOk,
  kNoFormula,     // not an operator this file knows
  kUnparsable,    // the recorded args do not parse, or their shapes do not fit the operator's signature
  kUndetermined,  // the shapes parse but do not determine the work (a stride, mask or dtype not recorded)
};

// The work of operator NAME with ARGS.
WorkStatus op_work(std::string_view name, const OpArgs& args, OpWork& out);

// Parsing helpers (exposed for the workload inference and the tests).
// "[[16, 559], [], [3]]" -> {{16, 559}, {}, {3}}; false when it is not a list of lists of integers >= 0.
bool parse_dims(std::string_view text, std::vector<std::vector<std::int64_t>>& out);
// "[\"a\", \"\", \"b\"]" -> {"a", "", "b"}; false when it is not a list of strings.
bool parse_string_list(std::string_view text, std::vector<std::string>& out);
// The canonical form of a recorded list is storage's (profiler/work_records.hpp).
using meshscope::canonical_list;
using meshscope::is_canonical_list;
// The formulas above as the import stores their results (ImportOptions::operator_work).
OperatorWorkFormulas operator_work_formulas();

// Bytes per element of a PyTorch type name as the profiler writes it ("float" 4, "c10::BFloat16" 2,
// "c10::Float8_e4m3fn" 1, "long int" 8, ...); 0 when not a tensor element type this file knows.
int element_bytes(std::string_view type);

}  // namespace meshscope::measure
