// Errors that reach the user. An Error carries one complete line ("FILE: problem"); the command line prints
// it unchanged and exits 1. Code throws Error only for bad input or an unusable environment, never for bugs.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace meshscope {

// MESSAGE as one line of reasonable length: what a file contributes to a message (an event name, SQLite
// quoting a damaged schema) may hold line breaks and control characters, and may be long.
inline std::string one_line(std::string_view message) {
  constexpr std::size_t kMaxLength = 2000;
  std::string line;
  line.reserve(std::min(message.size(), kMaxLength + 3));
  for (const char c : message) {
    if (line.size() >= kMaxLength) {
      line += "...";
      break;
    }
    const bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    if (control && !line.empty() && line.back() == ' ') continue;  // a run of breaks reads as one space
    line += control ? ' ' : c;
  }
  return line;
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(one_line(message)) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace meshscope
