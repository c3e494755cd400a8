#include "profiler/work_records.hpp"

namespace meshscope {
namespace {

bool space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

// Calls EMIT with each character of TEXT's canonical form (see canonical_list).
template <typename Emit>
void for_each_canonical_char(std::string_view text, Emit emit) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      emit(c);
      if (c == '\\' && i + 1 < text.size()) {
        emit(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      emit(c);
    } else if (!space(c)) {
      emit(c);
      if (c == ',') emit(' ');
    }
  }
}

}  // namespace

std::string canonical_list(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_canonical_char(text, [&](char c) { out += c; });
  return out;
}

bool is_canonical_list(std::string_view text) {
  // What for_each_canonical_char would change: a space outside strings not just after a comma, or a comma
  // not followed by exactly one space.
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      if (i + 1 >= text.size() || text[i + 1] != ' ') return false;
      ++i;
      if (i + 1 < text.size() && space(text[i + 1])) return false;
    } else if (space(c)) {
      return false;
    }
  }
  return true;
}

}  // namespace meshscope
