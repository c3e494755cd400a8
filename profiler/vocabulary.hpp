// The domain vocabulary every layer shares: how the sources spell collective operations, NCCL/RCCL kernel
// names, and element types, each normalised in this one place. Importers (Kineto, Nsight Systems), the NCCL
// profiler plugin and the measured analysis all call these functions, so a name means the same thing from
// the trace to the report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshscope::vocabulary {

// The stream of a GPU record that belongs to no stream: a device-wide synchronisation (cudaDeviceSynchronize
// / cuCtxSynchronize, cudaEventSynchronize), for which CUPTI reports CUPTI_SYNCHRONIZATION_INVALID_VALUE
// (0xffffffff) as the stream. Importers store -1; is_device_wide_stream also recognises the raw value that
// older profiles hold (Kineto traces wrote it as 4294967295).
inline constexpr std::int64_t kDeviceWideStream = -1;
inline constexpr bool is_device_wide_stream(std::int64_t stream) {
  return stream == kDeviceWideStream || stream == 0xffffffffLL;
}

// collectives.source of a collective an importer read from its kernel's name alone (no metadata: the
// operation, size and group come from the name, or not at all). Every other source holds metadata.
inline constexpr const char* kNameOnlySource = "kernel_name";

// ASCII lower case ("AllReduce" -> "allreduce"); other bytes are kept as they are.
std::string lower(std::string_view text);

// The operator a range names: PyTorch's NVTX ranges (emit_nvtx, as Nsight Systems and `meshscope record` see
// them) carry the call's sequence number, id and shapes after the name ("aten::add, seq = 47318, op_id =
// 998541", "aten::view, op_id = 3, sizes = [[8, 512], []]", "nccl:all_to_all, op_id = 993824"): the name
// alone ("aten::add"); any other text as it is.
std::string_view operator_name(std::string_view range_name);

// The vendor of a GPU by the name its driver gives ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "Quadro
// RTX 8000"; "AMD Instinct MI300X", "AMD Radeon Graphics"): the words that decide whose compute capability
// (NVIDIA) or gfx version (AMD) a device's major.minor is.
enum class GpuVendor : std::uint8_t { kUnknown, kNvidia, kAmd };
GpuVendor gpu_vendor(std::string_view device_name);

// Lower case with everything but ASCII letters and digits removed ("Float8_e4m3fn" -> "float8e4m3fn").
std::string lower_alnum(std::string_view text);

// The parallel dimensions a process group's description names, by its words (letters and digits, lower
// case): "TENSOR_MODEL_PARALLEL_GROUP" and "mesh_tp" name tp; "pipeline" and "pp_group" pp;
// "DATA_PARALLEL_GROUP", "dp_shard", "fsdp" and "ddp" dp; "context" and "cp" cp; "expert" and "ep" ep.
// "DATA_PARALLEL_GROUP_WITH_CP" names two; "default_pg" none.
struct ParallelDims {
  bool tp = false, pp = false, dp = false, cp = false, ep = false;
  int count() const { return int{tp} + int{pp} + int{dp} + int{cp} + int{ep}; }
};
ParallelDims parallel_dims_named(std::string_view process_group_desc);

// The normalised name of a collective operation, however a source spells it: PyTorch ("all_reduce",
// "_allgather_base", "reduce_scatter_tensor_coalesced", "c10d::alltoall_base_", "nccl:all_to_all"), NCCL
// ("AllReduce", "ncclAllGather" without its prefix, "SendRecv", "Bcast") -> "allreduce", "allgather",
// "reducescatter", "alltoall", "sendrecv", "broadcast", ... Unknown names come back lower-cased with only
// letters and digits.
std::string normalise_collective_op(std::string_view name);

// NAME is a CPU operator PyTorch records around a process group's call ("nccl:all_reduce" inside
// "c10d::allreduce_"): the operators the measured analysis names collective kernels by. The same test in SQL
// on a column of text (for loads that read only these operators).
bool names_process_group_call(std::string_view name);
std::string process_group_call_sql(std::string_view text_column);

// OP (normalised) is one of the operations above: allreduce, allgather, reducescatter, broadcast, reduce,
// alltoall, send, recv, sendrecv.
bool is_collective_op(std::string_view op);

// OP (normalised) moves data between two ranks only: send, recv, sendrecv.
bool is_point_to_point(std::string_view op);

// What an NCCL/RCCL kernel name says: ncclKernel_AllReduce_RING_LL_Sum_float(...) (NCCL <= 2.18),
// ncclDevKernel_AllGather_RING_LL(...) (2.19+), ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...),
// rcclKernel_... (older RCCL), ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16 (symmetric kernels, 2.27+).
// Generic kernels (ncclDevKernel_Generic) carry no operation: op is empty. std::nullopt when the name is not
// an NCCL/RCCL kernel's.
struct NcclKernelName {
  std::string op;         // normalised, empty when the name does not say
  std::string algorithm;  // RING, TREE, NVLS, NVLS_TREE, COLLNET_DIRECT, COLLNET_CHAIN, PAT, or empty
  std::string protocol;   // LL, LL128, SIMPLE, or empty
};
std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view kernel_name);

// Bytes per element of a dtype as PyTorch ("Float", "BFloat16", "c10::Half", "torch.float8_e4m3fn",
// "ComplexFloat"), C ("int8_t", "uint64_t") or NCCL ("ncclFloat16", "Float8e4m3", "Bfloat16") names it; 0
// when unknown. Packed sub-byte types count their storage element (Float4_e2m1fn_x2: 1 byte for two values).
int dtype_bytes(std::string_view dtype);

}  // namespace meshscope::vocabulary
