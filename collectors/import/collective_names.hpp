// Names of collective operations as different sources spell them, normalised once for every importer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshscope::import {

// "all_reduce", "_allgather_base", "reduce_scatter_tensor_coalesced", "AllReduce" -> "allreduce",
// "allgather", "reducescatter", ... Unknown names come back lower-cased without underscores.
std::string normalise_collective_op(std::string_view name);

// What an NCCL/RCCL kernel name says: ncclKernel_AllReduce_RING_LL_Sum_float(...),
// ncclDevKernel_AllGather_RING_LL(...), ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...). Generic kernels
// (ncclDevKernel_Generic) carry no operation.
struct NcclKernelName {
  std::string op;         // normalised, empty when the name does not say
  std::string algorithm;  // RING, TREE, NVLS, NVLS_TREE, COLLNET_DIRECT, COLLNET_CHAIN, PAT, or empty
  std::string protocol;   // LL, LL128, SIMPLE, or empty
};
std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view kernel_name);

// Bytes per element of a PyTorch / NCCL dtype name ("Float", "BFloat16", "c10::Half", "ncclFloat16",
// "int8_t"); 0 when unknown.
int dtype_bytes(std::string_view dtype);

}  // namespace meshscope::import
