// Export of a whole profile as one Chrome-trace JSON that ui.perfetto.dev and chrome://tracing open: each
// rank is a process, each GPU stream and CPU thread a thread, collective metadata sits in the args of its
// kernel, and CPU-to-GPU launches are drawn as flows. Events are written the way PyTorch's profiler writes
// them, plus a top-level "meshscope" object describing the ranks, so `meshscope import` reads an export back
// into the same events.
#pragma once

#include <filesystem>

#include "profiler/profile.hpp"

namespace meshscope {

// Writes PROFILE to OUTPUT atomically (temporary file, then rename). Throws Error on I/O failure.
void export_perfetto(const Profile& profile, const std::filesystem::path& output);

// Track ids the export gives GPU streams (per rank), chosen to stay clear of real thread ids.
inline constexpr std::int64_t kExportStreamTidBase = 2'000'000'000;

}  // namespace meshscope
