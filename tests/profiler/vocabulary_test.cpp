// The shared vocabulary: every source's spelling of an operation or element type means the same thing.
#include "profiler/vocabulary.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace meshscope::vocabulary {
namespace {

TEST(Vocabulary, LowerKeepsEverythingButAsciiCapitals) {
  EXPECT_EQ(lower("AllReduce_RING::X"), "allreduce_ring::x");
  EXPECT_EQ(lower_alnum("Float8_e4m3fn"), "float8e4m3fn");
  EXPECT_EQ(lower(""), "");
}

TEST(Vocabulary, CollectiveOpsFromEverySource) {
  // PyTorch record_param_comms "Collective name", c10d operators and nccl: records (Kineto CPU ops).
  EXPECT_EQ(normalise_collective_op("all_reduce"), "allreduce");
  EXPECT_EQ(normalise_collective_op("_allgather_base"), "allgather");
  EXPECT_EQ(normalise_collective_op("allgather_into_tensor_coalesced"), "allgather");
  EXPECT_EQ(normalise_collective_op("reduce_scatter_tensor_coalesced"), "reducescatter");
  EXPECT_EQ(normalise_collective_op("all_to_allv"), "alltoall");
  EXPECT_EQ(normalise_collective_op("c10d::alltoall_base_"), "alltoall");
  EXPECT_EQ(normalise_collective_op("c10d::_allgather_base_"), "allgather");
  EXPECT_EQ(normalise_collective_op("nccl:all_to_all"), "alltoall");
  EXPECT_EQ(normalise_collective_op("nccl:_all_gather_base"), "allgather");
  // NCCL's function names (profiler plugin descriptors, NVTX ranges, kernel names).
  EXPECT_EQ(normalise_collective_op("AllReduce"), "allreduce");
  EXPECT_EQ(normalise_collective_op("ReduceScatter"), "reducescatter");
  EXPECT_EQ(normalise_collective_op("SendRecv"), "sendrecv");
  EXPECT_EQ(normalise_collective_op("ncclAllGather"), "allgather");
  EXPECT_EQ(normalise_collective_op("Bcast"), "broadcast");
  EXPECT_EQ(normalise_collective_op("Broadcast"), "broadcast");
  EXPECT_TRUE(is_collective_op("allreduce"));
  EXPECT_TRUE(is_collective_op("sendrecv"));
  EXPECT_FALSE(is_collective_op("groupstart"));
  EXPECT_TRUE(is_point_to_point("send"));
  EXPECT_FALSE(is_point_to_point("alltoall"));
}

TEST(Vocabulary, NcclKernelNamesOfEveryGeneration) {
  const auto old =
      parse_nccl_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->op, "allreduce");
  EXPECT_EQ(old->algorithm, "RING");
  EXPECT_EQ(old->protocol, "LL");
  const auto dev =
      parse_nccl_kernel_name("void ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE(ncclDevKernelArgs)");
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->op, "allreduce");
  EXPECT_EQ(dev->algorithm, "NVLS_TREE");
  EXPECT_EQ(dev->protocol, "SIMPLE");
  const auto p2p = parse_nccl_kernel_name("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(p2p);
  EXPECT_EQ(p2p->op, "sendrecv");
  const auto generic = parse_nccl_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(generic);
  EXPECT_EQ(generic->op, "");
  const auto rccl = parse_nccl_kernel_name("rcclKernel_AllGather_RING_LL128(ncclDevComm*)");
  ASSERT_TRUE(rccl);
  EXPECT_EQ(rccl->op, "allgather");
  EXPECT_EQ(rccl->protocol, "LL128");
  EXPECT_FALSE(parse_nccl_kernel_name("void at::native::reduce_kernel<512, 1>(...)"));
}

TEST(Vocabulary, OneDtypeTableForEverySource) {
  // The three tables this replaced disagreed on these: NCCL's own fp8 names, PyTorch's fp8 and complex names.
  EXPECT_EQ(dtype_bytes("Float8e4m3"), 1);       // ncclFloat8e4m3 without its prefix (plugin descriptors)
  EXPECT_EQ(dtype_bytes("ncclFloat8e5m2"), 1);   // nccl.h
  EXPECT_EQ(dtype_bytes("Float8_e4m3fn"), 1);    // c10::ScalarType
  EXPECT_EQ(dtype_bytes("Float8_e5m2fnuz"), 1);  // ROCm fp8
  EXPECT_EQ(dtype_bytes("torch.float8_e4m3fn"), 1);
  EXPECT_EQ(dtype_bytes("ComplexFloat"), 8);
  EXPECT_EQ(dtype_bytes("ComplexDouble"), 16);
  EXPECT_EQ(dtype_bytes("ComplexHalf"), 4);
  EXPECT_EQ(dtype_bytes("torch.complex64"), 8);
  // Everyday names.
  EXPECT_EQ(dtype_bytes("Float"), 4);
  EXPECT_EQ(dtype_bytes("c10::BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("Bfloat16"), 2);  // NCCL spelling
  EXPECT_EQ(dtype_bytes("c10::Half"), 2);
  EXPECT_EQ(dtype_bytes("ncclFloat16"), 2);
  EXPECT_EQ(dtype_bytes("int8_t"), 1);
  EXPECT_EQ(dtype_bytes("uint64_t"), 8);
  EXPECT_EQ(dtype_bytes("Long"), 8);
  EXPECT_EQ(dtype_bytes("at::Bool"), 1);
  EXPECT_EQ(dtype_bytes("Float4_e2m1fn_x2"), 1);
  EXPECT_EQ(dtype_bytes("mystery"), 0);
  EXPECT_EQ(dtype_bytes(""), 0);
}

TEST(Vocabulary, ParallelDimensionsNamedByProcessGroups) {
  // Megatron-LM's group descriptions (megatron/core/parallel_state.py, group_desc=...), torch DeviceMesh
  // dimension names as torchtitan uses them (mesh_dp_shard, mesh_tp), and PyTorch's default group.
  auto only = [](std::string_view desc) {
    const ParallelDims d = parallel_dims_named(desc);
    if (d.count() != 1) return std::string("count ") + std::to_string(d.count());
    return std::string(d.tp ? "tp" : d.pp ? "pp" : d.dp ? "dp" : d.cp ? "cp" : "ep");
  };
  EXPECT_EQ(only("TENSOR_MODEL_PARALLEL_GROUP"), "tp");
  EXPECT_EQ(only("PIPELINE_MODEL_PARALLEL_GROUP"), "pp");
  EXPECT_EQ(only("DATA_PARALLEL_GROUP"), "dp");
  EXPECT_EQ(only("CONTEXT_PARALLEL_GROUP"), "cp");
  EXPECT_EQ(only("EXPERT_MODEL_PARALLEL_GROUP"), "ep");
  EXPECT_EQ(only("mesh_dp_shard"), "dp");
  EXPECT_EQ(only("mesh_tp"), "tp");
  EXPECT_EQ(only("pp_group"), "pp");
  EXPECT_EQ(only("fsdp"), "dp");
  const ParallelDims with_cp = parallel_dims_named("DATA_PARALLEL_GROUP_WITH_CP");
  EXPECT_TRUE(with_cp.dp && with_cp.cp);
  EXPECT_EQ(with_cp.count(), 2);
  // Words, not substrings: "step", "output" and "deep" name no dimension.
  EXPECT_EQ(parallel_dims_named("default_pg").count(), 0);
  EXPECT_EQ(parallel_dims_named("output_step_deep").count(), 0);
  EXPECT_EQ(parallel_dims_named("").count(), 0);
}

}  // namespace
}  // namespace meshscope::vocabulary

namespace meshscope {
namespace {

TEST(Vocabulary, OperatorNameStripsWhatPyTorchsNvtxRangesAddPerCall) {
  // torch.autograd.profiler.emit_nvtx: "name, seq = N, op_id = M" (and with record_shapes, sizes and input
  // ids).
  EXPECT_EQ(vocabulary::operator_name("aten::add, seq = 47318, op_id = 998541"), "aten::add");
  EXPECT_EQ(
      vocabulary::operator_name("aten::view, op_id = 3, sizes = [[8, 512], []], input_op_ids = [(0,-1)]"),
      "aten::view");
  EXPECT_EQ(vocabulary::operator_name("aten::mm"), "aten::mm");  // Kineto's names are already operators
  EXPECT_EQ(vocabulary::operator_name("train_step"), "train_step");
  // ProcessGroupNCCL's record names have one colon; the 2-GPU Nsight Systems export of
  // ../shared/traces/nsys_nccl shows them as "nccl:all_to_all, op_id = 993824".
  EXPECT_EQ(vocabulary::operator_name("nccl:all_to_all, op_id = 993824"), "nccl:all_to_all");
  // A range that only looks like one keeps its text: a user's annotation with a comma, a name without "::".
  EXPECT_EQ(vocabulary::operator_name("forward, layer 3"), "forward, layer 3");
  EXPECT_EQ(vocabulary::operator_name("my op::x, seq = 1"), "my op::x, seq = 1");
  EXPECT_EQ(vocabulary::operator_name("ncclx:all_reduce, seq = 1"), "ncclx:all_reduce, seq = 1");
}

// The device names of ../shared/traces (Kineto deviceProperties, Nsight's TARGET_INFO_GPU) and of the
// vendors' other products: whose major.minor a device's is.
TEST(Vocabulary, GpuVendorFromTheDriversName) {
  using vocabulary::GpuVendor;
  EXPECT_EQ(vocabulary::gpu_vendor("NVIDIA A100-PG509-200"), GpuVendor::kNvidia);
  EXPECT_EQ(vocabulary::gpu_vendor("Tesla V100-DGXS-32GB"), GpuVendor::kNvidia);
  EXPECT_EQ(vocabulary::gpu_vendor("Quadro RTX 8000"), GpuVendor::kNvidia);
  EXPECT_EQ(vocabulary::gpu_vendor("AMD Instinct MI300X"), GpuVendor::kAmd);
  EXPECT_EQ(vocabulary::gpu_vendor("AMD Radeon Graphics"), GpuVendor::kAmd);
  EXPECT_EQ(vocabulary::gpu_vendor("Intel(R) Data Center GPU Max 1550"), GpuVendor::kUnknown);
  EXPECT_EQ(vocabulary::gpu_vendor(""), GpuVendor::kUnknown);
}

}  // namespace
}  // namespace meshscope
