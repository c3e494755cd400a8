// The plain-text output of `report` and `diff`: lines, underlined headings and word-wrapped bullets,
// gathered in one string that the command writes at the end.
#pragma once

#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace meshscope::app {

// TEXT word-wrapped at spaces to WIDTH columns onto OUT: the first line starts with FIRST, the others with
// REST; a word longer than a line stands alone.
inline void append_wrapped(std::string& out, std::string_view text, std::string_view first,
                           std::string_view rest, std::size_t width = 120) {
  std::string line(first);
  std::size_t prefix = first.size();
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto space = text.find(' ', pos);
    if (space == std::string_view::npos) space = text.size();
    const std::string_view word = text.substr(pos, space - pos);
    if (line.size() > prefix && line.size() + 1 + word.size() > width) {
      out += line;
      out += '\n';
      line = rest;
      prefix = rest.size();
    } else if (line.size() > prefix) {
      line += ' ';
    }
    line += word;
    pos = space + 1;
  }
  out += line;
  out += '\n';
}

class TextReport {
 public:
  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
    out_ += '\n';
  }
  void blank() { out_ += '\n'; }
  void heading(std::string_view title) {
    out_ += '\n';
    out_ += title;
    out_ += '\n';
    out_.append(title.size(), '-');
    out_ += '\n';
  }
  // A "* " bullet, word-wrapped to 120 columns with a hanging indent.
  void bullet(std::string_view text) { append_wrapped(out_, text, "* ", "  "); }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

}  // namespace meshscope::app
