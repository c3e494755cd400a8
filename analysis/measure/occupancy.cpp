#include "analysis/measure/occupancy.hpp"

#include <algorithm>
#include <climits>

namespace meshscope::measure {

namespace {

constexpr int kWarpSize = 32;
constexpr int kSubPartitions = 4;  // an SM's registers are four banks, one per warp scheduler
constexpr int kKiB = 1024;

std::int64_t round_up(std::int64_t value, std::int64_t unit) {
  return (value + unit - 1) / unit * unit;
}

}  // namespace

std::optional<SmLimits> sm_limits(std::int64_t major, std::int64_t minor) {
  SmLimits l;
  // Volta and Turing allocate shared memory in 256-byte units and reserve none per block; Ampere and later
  // allocate 128-byte units and reserve 1 KB per block for the system.
  const bool ampere_or_later = major >= 8;
  l.shared_granularity = ampere_or_later ? 128 : 256;
  l.reserved_shared = ampere_or_later ? kKiB : 0;
  auto set = [&](int warps, int blocks, int shared_kib, int block_shared_kib) {
    l.max_warps = warps;
    l.max_blocks = blocks;
    l.max_shared_bytes = shared_kib * kKiB;
    l.max_block_shared = block_shared_kib * kKiB;
  };
  if (major == 7 && (minor == 0 || minor == 2)) {
    set(64, 32, 96, 96);
  } else if (major == 7 && minor == 5) {
    set(32, 16, 64, 64);
  } else if (major == 8 && (minor == 0 || minor == 7)) {
    set(minor == 0 ? 64 : 48, minor == 0 ? 32 : 16, 164, 163);
  } else if (major == 8 && minor == 6) {
    set(48, 16, 100, 99);
  } else if (major == 8 && minor == 9) {
    set(48, 24, 100, 99);
  } else if ((major == 9 && minor == 0) || (major == 10 && (minor == 0 || minor == 3))) {
    set(64, 32, 228, 227);
  } else if (major == 12 && minor == 0) {
    set(48, 24, 100, 99);
  } else {
    return std::nullopt;
  }
  return l;
}

const char* to_string(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::kWarps:
      return "warp slots";
    case OccupancyLimit::kBlocks:
      return "block slots";
    case OccupancyLimit::kRegisters:
      return "registers";
    case OccupancyLimit::kSharedMemory:
      return "shared memory";
  }
  return "?";
}

Occupancy theoretical_occupancy(const KernelDetail& kernel, const SmLimits& limits, std::int64_t sm_count) {
  Occupancy o;
  const std::int64_t threads = std::int64_t{kernel.block[0]} * kernel.block[1] * kernel.block[2];
  if (threads <= 0 || threads > limits.max_block_threads || limits.max_warps <= 0) return o;
  const std::int64_t warps_per_block = round_up(threads, kWarpSize) / kWarpSize;

  // Each limit in blocks per SM; the smallest wins.
  const std::int64_t by_warps = limits.max_warps / warps_per_block;
  const std::int64_t by_blocks = limits.max_blocks;

  std::int64_t by_registers = INT_MAX;
  const std::int64_t registers = std::max(kernel.registers, 0);
  if (registers > limits.max_thread_registers) {
    by_registers = 0;
  } else if (registers > 0) {
    // Registers go to warps in units of the granularity, and each warp's from one sub-partition's bank: a
    // bank holds a whole number of warps.
    const std::int64_t per_warp = round_up(registers * kWarpSize, limits.register_granularity);
    const std::int64_t per_block = per_warp * warps_per_block;
    const std::int64_t per_block_as_scheduled = per_warp * round_up(warps_per_block, kSubPartitions);
    if (per_block > limits.registers || per_block_as_scheduled > limits.registers) {
      by_registers = 0;
    } else {
      const std::int64_t warps = (limits.registers / kSubPartitions) / per_warp * kSubPartitions;
      by_registers = warps / warps_per_block;
    }
  }

  std::int64_t by_shared = INT_MAX;
  const std::int64_t shared = round_up(
      std::max(kernel.shared_bytes, 0) + std::int64_t{limits.reserved_shared}, limits.shared_granularity);
  if (shared > limits.max_block_shared + std::int64_t{limits.reserved_shared}) {
    by_shared = 0;
  } else if (shared > 0) {
    by_shared = limits.max_shared_bytes / shared;
  }

  std::int64_t blocks = by_warps;
  o.limit = OccupancyLimit::kWarps;
  auto take = [&](std::int64_t candidate, OccupancyLimit why) {
    if (candidate < blocks) {
      blocks = candidate;
      o.limit = why;
    }
  };
  take(by_blocks, OccupancyLimit::kBlocks);
  take(by_registers, OccupancyLimit::kRegisters);
  take(by_shared, OccupancyLimit::kSharedMemory);
  o.blocks_per_sm = static_cast<int>(std::max<std::int64_t>(blocks, 0));
  o.warps_per_sm = static_cast<int>(o.blocks_per_sm * warps_per_block);
  o.fraction = static_cast<double>(o.warps_per_sm) / limits.max_warps;
  const double grid = static_cast<double>(std::max(kernel.grid[0], 0)) * std::max(kernel.grid[1], 0) *
                      std::max(kernel.grid[2], 0);
  if (sm_count > 0 && o.blocks_per_sm > 0 && grid > 0) {
    o.waves = grid / (static_cast<double>(o.blocks_per_sm) * static_cast<double>(sm_count));
    o.sms_used = std::min(1.0, grid / static_cast<double>(sm_count));
  }
  return o;
}

}  // namespace meshscope::measure
