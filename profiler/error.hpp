// Errors that reach the user. An Error carries one complete line ("FILE: problem"); the command line prints
// it unchanged and exits 1. Code throws Error only for bad input or an unusable environment, never for bugs.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace meshscope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace meshscope
