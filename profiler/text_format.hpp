// Numbers and places as meshscope shows them, the same in the command line and the desktop front end:
// durations, sizes, and the user's cache folder. One definition each, so that a report and a tooltip never
// disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "profiler/records.hpp"

namespace meshscope {

// A duration in the unit that reads best, one format from a kernel to a training run: "120 ns", "850.0 µs",
// "51.513 ms", "12.854 s" (from 1 s on), "2.5 min" (from 2 min), "2.50 h" (from 2 h), "54.0 days" (from 2
// days).
std::string duration_text(TimeNs ns);
// The same into BUF (no allocation, for drawing every frame); NS may be fractional or negative.
const char* duration_text(char* buf, std::size_t size, double ns);

// Milliseconds with three decimals, for columns that keep one unit: "51.513 ms".
std::string ms_text(TimeNs ns);

// A size in 1024-based units: "512 B", "1.5 KiB", "3.0 GiB"; UNKNOWN for a size that is not positive.
std::string bytes_text(std::int64_t bytes, std::string_view unknown = "?");
// The same into BUF (no allocation); BYTES may be fractional.
const char* bytes_text(char* buf, std::size_t size, double bytes);

// Rates in decimal units with three significant digits, the prefix chosen by magnitude (as bandwidths and
// peaks are published): "850 MB/s", "50.0 GB/s", "3.35 TB/s"; "785 TFLOP/s", "1.98 PFLOP/s". Into BUF (no
// allocation, for drawing every frame).
const char* bandwidth_text(char* buf, std::size_t size, double bytes_per_second);
const char* flop_rate_text(char* buf, std::size_t size, double flop_per_second);

// Seconds at the precision a status line needs: "0.4 s", "12 s", "3 min 20 s".
std::string seconds_text(double seconds);

// An import's progress: "12 of 64 files, 18.0 %, 3.4 s elapsed, about 15 s left" (FRACTION of the bytes read;
// the time left estimated from the rate so far, once 2 % is read), or "64 of 64 files read, finishing the
// profile, 9.1 s elapsed" once every file is read (the indexes left to write are not predicted by bytes).
std::string import_progress_text(std::size_t files_done, std::size_t files_total, double fraction,
                                 double elapsed_seconds);

// The folder meshscope keeps derived files in: $XDG_CACHE_HOME/meshscope, else ~/.cache/meshscope, else the
// temporary directory's meshscope folder (not created here).
std::filesystem::path user_cache_dir();

}  // namespace meshscope
