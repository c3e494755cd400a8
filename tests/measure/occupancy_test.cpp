// Theoretical occupancy (analysis/measure/occupancy.hpp) against NVIDIA's worked numbers and, where the CUDA
// toolkit is installed, against its own occupancy calculator (cuda_occupancy.h) over a sweep of launches.
#include "analysis/measure/occupancy.hpp"

#include <gtest/gtest.h>

#ifdef MESHSCOPE_CUDA_OCCUPANCY_HEADER
#include MESHSCOPE_CUDA_OCCUPANCY_HEADER
#endif

using namespace meshscope;
using namespace meshscope::measure;

namespace {

KernelDetail launch(int grid, int threads, int registers, int shared_bytes) {
  return KernelDetail{{grid, 1, 1}, {threads, 1, 1}, registers, shared_bytes, kNull};
}

}  // namespace

// CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0, 128-thread blocks using
// 37 registers per thread reach 75 % occupancy with 12 active blocks per multiprocessor; 320-thread blocks
// with the same 37 registers reach 63 %, "because only four 320-thread blocks can reside on a
// multiprocessor".
TEST(Occupancy, BestPracticesGuideWorkedExample) {
  const SmLimits volta = *sm_limits(7, 0);
  const Occupancy small = theoretical_occupancy(launch(80, 128, 37, 0), volta, 80);
  EXPECT_EQ(small.blocks_per_sm, 12);
  EXPECT_DOUBLE_EQ(small.fraction, 0.75);
  EXPECT_EQ(small.limit, OccupancyLimit::kRegisters);
  const Occupancy large = theoretical_occupancy(launch(80, 320, 37, 0), volta, 80);
  EXPECT_EQ(large.blocks_per_sm, 4);
  EXPECT_NEAR(large.fraction, 0.63, 0.01);
  EXPECT_EQ(large.limit, OccupancyLimit::kRegisters);
}

// Each resource sets the limit in its turn on an H100 (compute capability 9.0: 64 warps, 32 blocks, 228 KB of
// shared memory per SM, 1 KB reserved per block, 132 SMs), and the waves say how much of the GPU a grid
// fills.
TEST(Occupancy, EachLimitAndTheWaves) {
  const SmLimits hopper = *sm_limits(9, 0);
  // 1024 threads of few registers: 2 blocks fill the 64 warp slots.
  Occupancy o = theoretical_occupancy(launch(264, 1024, 32, 0), hopper, 132);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limit, OccupancyLimit::kWarps);
  EXPECT_DOUBLE_EQ(o.waves, 1.0);
  // 32-thread blocks: the 32 block slots hold 32 warps, half the SM.
  o = theoretical_occupancy(launch(16, 32, 16, 0), hopper, 132);
  EXPECT_EQ(o.limit, OccupancyLimit::kBlocks);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_NEAR(o.sms_used, 16.0 / 132.0, 1e-12);  // a 16-block grid leaves 116 of 132 SMs idle
  // 100 KB of shared memory per block (+1 KB reserved): two blocks in 228 KB.
  o = theoretical_occupancy(launch(132, 128, 32, 100 * 1024), hopper, 132);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limit, OccupancyLimit::kSharedMemory);
  // 255 registers per thread: 8160 per warp, 2 warps per register bank, 8 warps of 256 threads' blocks.
  o = theoretical_occupancy(launch(132, 256, 255, 0), hopper, 132);
  EXPECT_EQ(o.limit, OccupancyLimit::kRegisters);
  EXPECT_EQ(o.warps_per_sm, 8);
  // What cannot launch: more threads than a block holds, more registers than a thread may have.
  EXPECT_EQ(theoretical_occupancy(launch(1, 2048, 32, 0), hopper, 132).blocks_per_sm, 0);
  EXPECT_EQ(theoretical_occupancy(launch(1, 128, 300, 0), hopper, 132).blocks_per_sm, 0);
  // No SM count: no waves.
  EXPECT_EQ(theoretical_occupancy(launch(264, 1024, 32, 0), hopper, 0).waves, 0.0);
}

TEST(Occupancy, KnownComputeCapabilitiesOnly) {
  for (auto [major, minor] : {std::pair{7, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}})
    EXPECT_TRUE(sm_limits(major, minor).has_value()) << major << "." << minor;
  EXPECT_FALSE(sm_limits(6, 0).has_value());          // Pascal: not modelled
  EXPECT_FALSE(sm_limits(9, 4).has_value());          // no such GPU
  EXPECT_FALSE(sm_limits(kNull, kNull).has_value());  // the profile did not say (an AMD GPU, a CPU trace)
  EXPECT_EQ(sm_limits(8, 6)->max_warps, 48);
  EXPECT_EQ(sm_limits(8, 9)->max_blocks, 24);
  EXPECT_EQ(sm_limits(7, 5)->max_shared_bytes, 64 * 1024);
}

#ifdef MESHSCOPE_CUDA_OCCUPANCY_HEADER
// The toolkit's calculator, given the same SM figures, agrees on blocks per SM for every launch of a sweep
// over block sizes, registers and shared memory on each modelled compute capability.
TEST(Occupancy, AgreesWithTheToolkitsCalculator) {
  int compared = 0;
  for (auto [major, minor] : {std::pair{7, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}}) {
    const SmLimits l = *sm_limits(major, minor);
    cudaOccDeviceProp props;
    props.computeMajor = major;
    props.computeMinor = minor;
    props.maxThreadsPerBlock = l.max_block_threads;
    props.maxThreadsPerMultiprocessor = l.max_warps * 32;
    props.regsPerBlock = l.registers;
    props.regsPerMultiprocessor = l.registers;
    props.warpSize = 32;
    props.sharedMemPerBlock = 48 * 1024;
    props.sharedMemPerMultiprocessor = static_cast<std::size_t>(l.max_shared_bytes);
    props.numSms = 100;
    props.sharedMemPerBlockOptin = static_cast<std::size_t>(l.max_block_shared);
    props.reservedSharedMemPerBlock = static_cast<std::size_t>(l.reserved_shared);
    const cudaOccDeviceState state;
    for (int threads : {32, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024}) {
      for (int registers : {16, 24, 32, 37, 40, 48, 56, 64, 72, 96, 128, 168, 255}) {
        for (int shared_kib : {0, 1, 4, 12, 16, 24, 33, 48, 64, 96}) {
          cudaOccFuncAttributes attributes;
          attributes.maxThreadsPerBlock = 1024;
          attributes.numRegs = registers;
          attributes.sharedSizeBytes = 0;
          attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
          attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
          attributes.maxDynamicSharedSizeBytes = l.max_block_shared;
          cudaOccResult result;
          const std::size_t dynamic = static_cast<std::size_t>(shared_kib) * 1024;
          if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &props, &attributes, &state, threads,
                                                      dynamic) != CUDA_OCC_SUCCESS)
            continue;
          const Occupancy o = theoretical_occupancy(launch(1, threads, registers, shared_kib * 1024), l, 100);
          EXPECT_EQ(o.blocks_per_sm, result.activeBlocksPerMultiprocessor)
              << major << "." << minor << " threads " << threads << " registers " << registers << " shared "
              << shared_kib << " KiB";
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 8000);
}
#endif
