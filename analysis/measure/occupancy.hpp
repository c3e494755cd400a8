// The theoretical occupancy of a kernel launch, as NVIDIA's occupancy calculator computes it (CUDA C++ Best
// Practices Guide, "Calculating Occupancy"; the toolkit's cuda_occupancy.h): how many of its blocks one SM
// holds at once, limited by the SM's warp and block slots, its registers and its shared memory, and what
// share of the SM's warp slots they fill. Also how many waves the grid takes over the GPU's SMs, which says
// when a launch leaves SMs idle (a grid of 16 blocks on a 132-SM GPU uses 12 % of it whatever its occupancy).
#pragma once

#include <cstdint>
#include <optional>

#include "profiler/profile.hpp"

namespace meshscope::measure {

// What one SM of a compute capability offers (CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability"; allocation granularities as the toolkit's occupancy calculator states them).
struct SmLimits {
  int max_warps = 0;         // resident warps per SM
  int max_blocks = 0;        // resident blocks per SM
  int max_shared_bytes = 0;  // shared memory per SM, the carve-out at its largest
  int max_block_shared = 0;  // shared memory one block may use
  int reserved_shared = 0;   // shared memory the driver reserves per block (1 KB from compute capability 8.0)
  int shared_granularity = 0;  // shared memory is allocated per block in units of this
  int registers = 65536;       // 32-bit registers per SM, split over 4 sub-partitions
  int max_thread_registers = 255;
  int register_granularity = 256;  // registers are allocated per warp in units of this
  int max_block_threads = 1024;
};

// The limits of compute capability MAJOR.MINOR: Volta (7.0, 7.2), Turing (7.5), Ampere (8.0, 8.6, 8.7), Ada
// (8.9), Hopper (9.0) and Blackwell (10.0, 10.3, 12.0); nullopt for others (and for AMD GPUs, whose
// compute-unit model differs).
std::optional<SmLimits> sm_limits(std::int64_t major, std::int64_t minor);

enum class OccupancyLimit { kWarps, kBlocks, kRegisters, kSharedMemory };
const char* to_string(OccupancyLimit limit);

struct Occupancy {
  int blocks_per_sm = 0;  // 0: the launch cannot run as recorded (too many threads, registers or bytes)
  int warps_per_sm = 0;   // active warps when the SM holds blocks_per_sm blocks
  double fraction = 0;    // warps_per_sm / SmLimits::max_warps
  OccupancyLimit limit = OccupancyLimit::kWarps;  // the resource that sets blocks_per_sm (ties: first here)
  double waves = 0;     // grid blocks / (blocks_per_sm x SMs); 0 when sm_count is unknown
  double sms_used = 0;  // share of the GPU's SMs the grid's blocks occupy in its first wave
};

// KERNEL's theoretical occupancy on an SM with LIMITS; SM_COUNT SMs (0 when unknown) for the waves.
// SHARED_BYTES is what the kernel uses per block, static and dynamic (as Kineto and CUPTI record it).
Occupancy theoretical_occupancy(const KernelDetail& kernel, const SmLimits& limits, std::int64_t sm_count);

}  // namespace meshscope::measure
