#include "profiler/text_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace meshscope {

const char* duration_text(char* buf, std::size_t size, double ns) {
  const double a = std::abs(ns);
  if (a >= 2 * 86400e9)
    std::snprintf(buf, size, "%.1f days", ns / 86400e9);
  else if (a >= 7200e9)
    std::snprintf(buf, size, "%.2f h", ns / 3600e9);
  else if (a >= 120e9)
    std::snprintf(buf, size, "%.1f min", ns / 60e9);
  else if (a >= 1e9)
    std::snprintf(buf, size, "%.3f s", ns / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, size, "%.3f ms", ns / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, size, "%.1f \xC2\xB5s", ns / 1e3);
  else
    std::snprintf(buf, size, "%.0f ns", ns);
  return buf;
}

std::string duration_text(TimeNs ns) {
  char buf[48];
  return duration_text(buf, sizeof buf, static_cast<double>(ns));
}

std::string ms_text(TimeNs ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

const char* bytes_text(char* buf, std::size_t size, double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (std::abs(bytes) >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  std::snprintf(buf, size, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return buf;
}

std::string bytes_text(std::int64_t bytes, std::string_view unknown) {
  if (bytes <= 0) return std::string(unknown);
  char buf[48];
  return bytes_text(buf, sizeof buf, static_cast<double>(bytes));
}

namespace {

// VALUE with three significant digits and the largest of PREFIXES (each 1000 times the one before, the first
// 1) that keeps it at or above 1, followed by UNIT.
const char* decimal_rate(char* buf, std::size_t size, double value, const char* const* prefixes, int count,
                         const char* unit) {
  int prefix = 0;
  while (std::abs(value) >= 999.5 && prefix + 1 < count) {
    value /= 1000.0;
    ++prefix;
  }
  const double a = std::abs(value);
  const char* format = a >= 99.95 || a == 0 ? "%.0f %s%s" : a >= 9.995 ? "%.1f %s%s" : "%.2f %s%s";
  std::snprintf(buf, size, format, value, prefixes[prefix], unit);
  return buf;
}

}  // namespace

const char* bandwidth_text(char* buf, std::size_t size, double bytes_per_second) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P"};
  return decimal_rate(buf, size, bytes_per_second, prefixes, 6, "B/s");
}

const char* flop_rate_text(char* buf, std::size_t size, double flop_per_second) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  return decimal_rate(buf, size, flop_per_second, prefixes, 7, "FLOP/s");
}

std::filesystem::path user_cache_dir() {
  const char* cache_home = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path base = cache_home && *cache_home ? std::filesystem::path(cache_home)
                                     : home && *home           ? std::filesystem::path(home) / ".cache"
                                                               : std::filesystem::temp_directory_path();
  return base / "meshscope";
}

std::string seconds_text(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  const auto whole = static_cast<long long>(seconds + 0.5);
  return fmt::format("{} min {} s", whole / 60, whole % 60);
}

std::string import_progress_text(std::size_t files_done, std::size_t files_total, double fraction,
                                 double elapsed_seconds) {
  const char* plural = files_total == 1 ? "" : "s";
  if (files_total > 0 && files_done == files_total) {
    return fmt::format("{} of {} file{} read, finishing the profile, {} elapsed", files_done, files_total,
                       plural, seconds_text(elapsed_seconds));
  }
  std::string text = fmt::format("{} of {} file{}, {:.1f} %, {} elapsed", files_done, files_total, plural,
                                 100 * fraction, seconds_text(elapsed_seconds));
  if (fraction > 0.02 && fraction < 1) {
    const double left = elapsed_seconds * (1 - fraction) / fraction;
    text += left < 1 ? std::string(", less than a second left")
                     : fmt::format(", about {} left", seconds_text(left));
  }
  return text;
}

}  // namespace meshscope
