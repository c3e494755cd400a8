// The importers' names for the shared vocabulary of collective operations, NCCL kernel names and element
// types. The definitions live once in profiler/vocabulary.hpp (the NCCL profiler plugin and the analysis use
// the same functions); these declarations keep the importers' spelling.
#pragma once

#include "profiler/vocabulary.hpp"

namespace meshscope::import {

using vocabulary::dtype_bytes;
using vocabulary::NcclKernelName;
using vocabulary::normalise_collective_op;
using vocabulary::parse_nccl_kernel_name;

}  // namespace meshscope::import
