// JsonWriter: a small streaming JSON writer (objects, arrays, escaped strings, numbers) used by every --json
// output and the Perfetto exporter. It inserts commas itself; the caller only nests begin/end calls
// correctly.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace meshscope {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  JsonWriter& begin_object() {
    value_prefix();
    out_ += '{';
    first_.push_back(true);
    return *this;
  }
  JsonWriter& end_object() {
    close('}');
    return *this;
  }
  JsonWriter& begin_array() {
    value_prefix();
    out_ += '[';
    first_.push_back(true);
    return *this;
  }
  JsonWriter& end_array() {
    close(']');
    return *this;
  }
  JsonWriter& key(std::string_view name) {
    separator();
    write_string(name);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view text) {
    value_prefix();
    write_string(text);
    return *this;
  }
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag) {
    value_prefix();
    out_ += flag ? "true" : "false";
    return *this;
  }
  JsonWriter& value(std::int64_t number) {
    value_prefix();
    fmt::format_to(std::back_inserter(out_), "{}", number);
    return *this;
  }
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(std::uint64_t number) {
    value_prefix();
    fmt::format_to(std::back_inserter(out_), "{}", number);
    return *this;
  }
  JsonWriter& value(double number) {
    value_prefix();
    if (std::isfinite(number)) {
      fmt::format_to(std::back_inserter(out_), "{}", number);
    } else {
      out_ += "null";
    }
    return *this;
  }
  JsonWriter& null() {
    value_prefix();
    out_ += "null";
    return *this;
  }
  // Writes pre-formatted JSON text as one value.
  JsonWriter& raw(std::string_view json) {
    value_prefix();
    out_ += json;
    return *this;
  }
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& str() const { return out_; }
  std::string& buffer() { return out_; }
  void clear() { out_.clear(); }

  static void escape_to(std::string& out, std::string_view text) {
    for (const char c : text) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
          } else {
            out += c;
          }
      }
    }
  }

 private:
  void write_string(std::string_view text) {
    out_ += '"';
    escape_to(out_, text);
    out_ += '"';
  }
  void separator() {
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    if (pretty_) newline();
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    separator();
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (pretty_ && !empty) newline();
    out_ += bracket;
  }
  void newline() {
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
  }

  bool pretty_;
  bool after_key_ = false;
  std::vector<bool> first_;
  std::string out_;
};

}  // namespace meshscope
