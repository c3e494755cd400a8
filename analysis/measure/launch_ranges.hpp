// Which CUDA calls a thread made from inside a CPU range of a given kind: the backward pass (the pipeline
// schedule's forward and backward blocks), the optimizer step (what-if edits that leave the optimizer's work
// out of the batch's).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

// Per Rank::api_calls of rank RANK_INDEX of PROFILE: 1 when the call started inside a CPU range of its own
// thread whose name NAMED accepts (at any depth), else 0. NAMED is asked once per distinct name.
std::vector<std::uint8_t> calls_inside_ranges(const Profile& profile, std::size_t rank_index,
                                              const std::function<bool(std::string_view)>& named);

// A range of the backward pass: autograd's "autograd::engine::evaluate_function: MmBackward0", or any range
// whose name holds "backward" and not "forward" (case-insensitive: "MmBackward0", Megatron's
// "backward-compute"; not a range that holds both passes, "forward_backward_no_pipelining").
bool backward_range_name(std::string_view name);

// A range of the optimizer's step or gradient reset: PyTorch's "Optimizer.step#AdamW.step",
// "Optimizer.zero_grad#SGD.zero_grad"; any range whose name starts with "optimizer" or holds
// "optimizer.step", "optimizer_step" or "optimizer.zero_grad" (case-insensitive). Not
// "train_step_with_optimizer": a range that holds the whole step is not the optimizer's.
bool optimizer_range_name(std::string_view name);

}  // namespace meshscope::measure
