#include "collectors/import/kineto/kineto_importer.hpp"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "collectors/import/collective_names.hpp"
#include "collectors/import/input_file.hpp"
#include "collectors/import/kineto/op_work_links.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::kineto {

namespace od = simdjson::ondemand;

struct ReadScratch::Impl {
  import::ByteBuffer buffer;
  od::parser parser;
};
ReadScratch::ReadScratch() : impl_(std::make_unique<Impl>()) {}
ReadScratch::~ReadScratch() = default;

bool parse_microseconds(std::string_view token, std::int64_t& nanoseconds, bool* out_of_range) {
  if (out_of_range) *out_of_range = false;
  auto too_large = [&] {
    if (out_of_range) *out_of_range = true;
    return false;
  };
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return false;
  const bool negative = token.front() == '-';
  std::string_view digits = negative ? token.substr(1) : token;
  // One pass (find_first_of calls memchr on "eE" for every digit: 3.5 % of an import's CPU time).
  const bool exponent =
      std::any_of(digits.begin(), digits.end(), [](char c) { return c == 'e' || c == 'E'; });
  if (exponent) {
    double value = 0;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec == std::errc::result_out_of_range) return too_large();
    if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) return false;
    const double ns = value * 1000.0;
    // Compared as doubles before any conversion: llround of 1e308 (or of infinity) is undefined.
    if (!(std::fabs(ns) <= static_cast<double>(kTimeLimitNs))) return too_large();
    nanoseconds = static_cast<std::int64_t>(std::llround(ns));
    if (!time_in_range(nanoseconds)) return too_large();
    return true;
  }
  const auto dot = digits.find('.');
  const std::string_view whole = digits.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : digits.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return false;
  std::int64_t micros = 0;
  bool large = false;
  for (const char c : whole) {
    if (c < '0' || c > '9') return false;
    if (micros > kTimeLimitNs / 1000) {
      large = true;  // keep checking that the rest is digits
      continue;
    }
    micros = micros * 10 + (c - '0');
  }
  std::int64_t sub = 0;  // nanoseconds from the first three fractional digits
  int used = 0;
  bool round_up = false;
  for (std::size_t i = 0; i < fraction.size(); ++i) {
    const char c = fraction[i];
    if (c < '0' || c > '9') return false;
    if (used < 3) {
      sub = sub * 10 + (c - '0');
      ++used;
    } else if (i == 3) {
      round_up = c >= '5';  // picoseconds beyond the nanosecond: round half up
    }
  }
  while (used < 3) {
    sub *= 10;
    ++used;
  }
  if (large || micros > kTimeLimitNs / 1000) return too_large();
  const std::int64_t value = micros * 1000 + sub + (round_up ? 1 : 0);
  if (value > kTimeLimitNs) return too_large();
  nanoseconds = negative ? -value : value;
  return true;
}

namespace {

constexpr std::int32_t kProvisionalRankBase = 900'000'000;
// The longest single JSON value (event or metadata object) the streaming reader accepts.
constexpr std::size_t kMaxStreamedValueBytes = std::size_t{64} << 20;
// The longest string (name, category, argument) stored: what Profile::load reads back (sqlite_util.hpp).
constexpr std::size_t kMaxStringBytes = static_cast<std::size_t>(sql::kMaxValueBytes);

enum class Category : std::uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kSync,
  kRuntime,
  kDriver,
  kCpuOp,
  kAnnotation,
  kGpuAnnotation,
  kPython,
  kProfilerSpan,  // "Trace": the profiler's own bookkeeping spans
  kOtherRange,
};

// TEXT == LITERAL, compared inline (string_view's == calls memcmp for every key of every event of the same
// length as the literal: 3 % of an import's CPU time).
template <std::size_t N>
inline bool is(std::string_view text, const char (&literal)[N]) {
  if (text.size() != N - 1) return false;
  for (std::size_t i = 0; i + 1 < N; ++i) {
    if (text[i] != literal[i]) return false;
  }
  return true;
}

Category classify_category(std::string_view cat) {
  // By first letter, then the whole name (CUPTI range-profiler measurements, cuda_profiler_range, are one per
  // kernel replayed under the profiler, on the GPU's track).
  if (cat.empty()) return Category::kOtherRange;
  switch (cat[0]) {
    case 'k':
      if (is(cat, "kernel")) return Category::kKernel;
      break;
    case 'K':
      if (is(cat, "Kernel")) return Category::kKernel;
      break;
    case 'g':
      if (is(cat, "gpu_memcpy")) return Category::kMemcpy;
      if (is(cat, "gpu_memset")) return Category::kMemset;
      if (is(cat, "gpu_user_annotation")) return Category::kGpuAnnotation;
      break;
    case 'M':
      if (is(cat, "Memcpy")) return Category::kMemcpy;
      if (is(cat, "Memset")) return Category::kMemset;
      break;
    case 'c':
      if (is(cat, "cuda_sync")) return Category::kSync;
      if (is(cat, "cuda_runtime")) return Category::kRuntime;
      if (is(cat, "cuda_driver")) return Category::kDriver;
      if (is(cat, "cpu_op")) return Category::kCpuOp;
      if (is(cat, "cuda_profiler_range")) return Category::kKernel;
      break;
    case 'R':
      if (is(cat, "Runtime")) return Category::kRuntime;
      break;
    case 'D':
      if (is(cat, "Driver")) return Category::kDriver;
      break;
    case 'O':
      if (is(cat, "Operator")) return Category::kCpuOp;
      break;
    case 'o':
      if (is(cat, "operator")) return Category::kCpuOp;
      break;
    case 'u':
      if (is(cat, "user_annotation")) return Category::kAnnotation;
      break;
    case 'U':
      if (is(cat, "User annotation")) return Category::kAnnotation;
      break;
    case 'p':
      if (is(cat, "python_function")) return Category::kPython;
      break;
    case 'P':
      if (is(cat, "Python function")) return Category::kPython;
      break;
    case 'T':
      if (is(cat, "Trace")) return Category::kProfilerSpan;
      break;
    default:
      break;
  }
  return Category::kOtherRange;
}

// The key of FIELD as written in the file, without copying. Keys meshscope reads contain no escapes; a key
// that does is compared in its escaped form and so simply matches nothing.
std::string_view raw_key(simdjson::simdjson_result<od::field>& field) {
  const char* start = field.key().value().raw();
  // A key is followed by its closing quote within the document; keys are short, so a byte loop beats two
  // memchr calls per key (4 % of an import's CPU time). Keys with escapes are rare and take the careful scan.
  const char* end = start;
  while (*end != '"' && *end != '\\') ++end;
  if (*end == '\\') {
    end = start;
    while (*end != '"') end += *end == '\\' ? 2 : 1;
  }
  return {start, static_cast<std::size_t>(end - start)};
}

bool is_launch_flow(std::string_view cat) {
  return cat == "ac2g" || cat == "async_cpu_to_gpu" || cat == "async";
}

// An id that may be written as a number or a string.
struct IdValue {
  bool present = false;
  bool numeric = false;
  std::int64_t number = 0;
  std::string_view text;
};

// Everything in an event's args that meshscope keeps.
struct Args {
  std::int64_t device = kNull, stream = kNull, correlation = kNull, external_id = kNull, cbid = kNull;
  std::int64_t grid[3] = {kNull, kNull, kNull}, block[3] = {kNull, kNull, kNull};
  std::int64_t registers = kNull, shared_bytes = kNull, bytes = kNull;
  std::string_view collective_name, dtype, pg_name, pg_desc, pg_ranks, meta_name, labels;
  std::string pg_name_storage, pg_ranks_storage;
  std::int64_t in_nelems = kNull, out_nelems = kNull, in_bytes = kNull, out_bytes = kNull, group_size = kNull;
  std::int64_t seq = kNull;
  std::string_view algorithm, protocol;
  std::int64_t channels = kNull;
  std::int64_t pid = kNull;  // meshscope exports: the original process id of a CPU event
  // CPU operators recorded with shapes: the JSON text of "Input Dims", "Input type", "Concrete Inputs".
  std::string_view input_dims, input_types, concrete_inputs;
  bool has_input_dims = false;  // "Input Dims" present
  // The operator's name, when read before its args, has a work formula: its "Concrete Inputs" are kept (the
  // shapes and types of every operator are, for the Details of any operator).
  bool concrete_wanted = true;
};

class FileImporter {
 public:
  FileImporter(const std::filesystem::path& path, RecordSink& writer, const RankResolver& resolver,
               const ImportSettings& settings)
      : path_(path),
        writer_(writer),
        resolver_(resolver),
        settings_(settings),
        work_(settings.operator_work) {}

  FileResult run() {
    const std::uint64_t size = import::content_size_hint(path_);
    total_bytes_ = size;
    try {
      if (size > settings_.streaming_threshold_bytes) {
        result_.streamed = true;
        run_streaming();
      } else {
        run_in_memory();
      }
    } catch (const simdjson::simdjson_error& e) {
      bad_json(e.error());
    }
    finish();
    return std::move(result_);
  }

 private:
  [[noreturn]] void bad_json(simdjson::error_code code) {
    if (code == simdjson::INCORRECT_TYPE || code == simdjson::NUMBER_ERROR ||
        code == simdjson::NUMBER_OUT_OF_RANGE) {
      fail("{}: event {}: a field has the wrong type ({})", path_.string(), event_index_,
           simdjson::error_message(code));
    }
    fail("{}: truncated or malformed JSON ({})", path_.string(), simdjson::error_message(code));
  }

  [[noreturn]] void bad_event(std::string_view problem) {
    fail("{}: event {}: {}", path_.string(), event_index_, problem);
  }

  // ---- top level ----

  void run_in_memory() {
    import::ByteBuffer own_buffer;
    od::parser own_parser;
    import::ByteBuffer& buffer = settings_.scratch ? settings_.scratch->impl().buffer : own_buffer;
    od::parser& parser = settings_.scratch ? settings_.scratch->impl().parser : own_parser;
    {
      PhaseTimer timer("kineto: read + decompress");
      import::read_whole_file(path_, buffer, simdjson::SIMDJSON_PADDING);
    }
    PhaseTimer timer("kineto: parse + hand over");
    if (buffer.view().find_first_not_of(" \t\r\n") == std::string_view::npos) {
      fail("{}: empty file", path_.string());
    }
    simdjson::padded_string_view view(buffer.data(), buffer.size(),
                                      buffer.size() + simdjson::SIMDJSON_PADDING);
    od::document doc = parser.iterate(view);
    od::json_type top = doc.type();
    auto expect_end = [&] {
      if (!doc.current_location().error())
        fail("{}: truncated or malformed JSON (content after the end of the trace)", path_.string());
    };
    if (top == od::json_type::array) {  // a bare array of events is valid Chrome-trace JSON
      begin_events();
      for (auto event : doc.get_array()) handle_event(event.value());
      expect_end();
      return;
    }
    if (top != od::json_type::object) fail("{}: not a Chrome-trace JSON object", path_.string());
    // Metadata usually precedes traceEvents; when some of it follows the events (baseTimeNanoseconds often
    // does), read the metadata first so that every event is written with its final rank and clock.
    if (metadata_follows_events(buffer.view())) {
      for (auto field : doc.get_object()) {
        const std::string_view key = field.unescaped_key();
        if (key != "traceEvents") handle_metadata(key, field.value());
      }
      doc.rewind();
      metadata_read_ = true;
    }
    bool has_events = false;
    for (auto field : doc.get_object()) {
      const std::string_view key = field.unescaped_key();
      if (key != "traceEvents") {
        if (!metadata_read_) handle_metadata(key, field.value());
        continue;
      }
      has_events = true;
      od::value events = field.value();
      if (events.type() != od::json_type::array) fail("{}: traceEvents is not an array", path_.string());
      begin_events();
      std::size_t since_progress = 0;
      for (auto event : events.get_array()) {
        handle_event(event.value());
        if (settings_.progress && ++since_progress == 65536) {
          since_progress = 0;
          settings_.progress(static_cast<std::uint64_t>(doc.current_location().value() - buffer.data()),
                             total_bytes_);
        }
      }
    }
    if (!has_events) fail("{}: not a Kineto trace (no traceEvents)", path_.string());
    expect_end();
  }

  // True when a metadata key that affects how events are written appears only after the events: a cheap look
  // at the text before "traceEvents" and at the last megabyte of the file.
  static bool metadata_follows_events(std::string_view buffer) {
    // memmem, not string_view::find: find stops at every '"' of the megabyte to compare (a tenth of the CPU
    // time of an import of many small files went there).
    auto contains = [](std::string_view text, std::string_view key) {
      return ::memmem(text.data(), text.size(), key.data(), key.size()) != nullptr;
    };
    const void* events = ::memmem(buffer.data(), buffer.size(), "\"traceEvents\"", 13);
    if (!events) return false;
    const std::size_t events_at = static_cast<std::size_t>(static_cast<const char*>(events) - buffer.data());
    const std::string_view head(buffer.data(), events_at);
    const std::size_t tail_start =
        buffer.size() > (std::size_t{1} << 20) ? buffer.size() - (std::size_t{1} << 20) : events_at;
    const std::string_view tail(buffer.data() + std::max(tail_start, events_at),
                                buffer.size() - std::max(tail_start, events_at));
    for (const std::string_view key : {"\"baseTimeNanoseconds\"", "\"distributedInfo\"", "\"meshscope\""}) {
      if (!contains(head, key) && contains(tail, key)) return true;
    }
    return false;
  }

  // Streaming: a small scanner finds where each top-level value and each event ends; complete events are
  // parsed a batch at a time with simdjson.
  void run_streaming() {
    import::ChunkReader reader(path_);
    std::string buffer;
    std::size_t pos = 0;
    bool eof = false;
    auto fill = [&]() -> bool {
      if (eof) return false;
      if (pos > (std::size_t{64} << 20) || (pos > 0 && pos * 2 > buffer.size())) {
        buffer.erase(0, pos);
        pos = 0;
      }
      if (reader.read(buffer, settings_.stream_chunk_bytes) == 0) eof = true;
      if (settings_.progress) settings_.progress(reader.bytes_read(), total_bytes_);
      return !eof;
    };
    auto skip_space = [&]() -> bool {
      for (;;) {
        while (pos < buffer.size() && std::isspace(static_cast<unsigned char>(buffer[pos]))) ++pos;
        if (pos < buffer.size()) return true;
        if (!fill()) return false;
      }
    };
    auto expect = [&](char c) {
      if (!skip_space()) fail("{}: truncated or malformed JSON (unexpected end of file)", path_.string());
      if (buffer[pos] != c) {
        fail("{}: truncated or malformed JSON (expected '{}' at byte {})", path_.string(), c,
             reader.bytes_read() - (buffer.size() - pos));
      }
      ++pos;
    };
    // Returns the end of the value starting at pos, reading more input as needed. No single value (an event,
    // a metadata object) may exceed kMaxStreamedValueBytes: a damaged or hostile file with a gigabyte string
    // is refused after reading that much, not after minutes and gigabytes of memory.
    auto value_end = [&]() -> std::size_t {
      for (;;) {
        const std::size_t end = scan_value(buffer, pos);
        if (end != std::string::npos && end - pos <= kMaxStreamedValueBytes) return end;
        if (buffer.size() - pos > kMaxStreamedValueBytes) {
          if (in_events_) {
            fail("{}: event {}: a JSON value longer than {} MiB (a damaged or hostile file?)", path_.string(),
                 scanned_events_ + 1, kMaxStreamedValueBytes >> 20);
          }
          fail("{}: a JSON value longer than {} MiB outside traceEvents (a damaged or hostile file?)",
               path_.string(), kMaxStreamedValueBytes >> 20);
        }
        if (!fill()) fail("{}: truncated or malformed JSON (unexpected end of file)", path_.string());
      }
    };
    // After the top-level value only white space may follow, up to a clean end of the file: reading to the
    // end is what checks a gzip file's trailer (length and CRC), so a truncated .json.gz is refused.
    auto expect_end = [&]() {
      if (skip_space()) {
        fail("{}: truncated or malformed JSON (unexpected '{}' after the end of the trace at byte {})",
             path_.string(), buffer[pos], reader.bytes_read() - (buffer.size() - pos));
      }
    };
    if (!skip_space()) fail("{}: empty file", path_.string());
    if (buffer[pos] == '[') {
      ++pos;
      begin_events();
      stream_events(buffer, pos, skip_space, value_end);
      expect_end();
      return;
    }
    expect('{');
    bool has_events = false;
    for (;;) {
      if (!skip_space()) fail("{}: truncated or malformed JSON (unexpected end of file)", path_.string());
      if (buffer[pos] == '}') {
        ++pos;
        expect_end();
        break;
      }
      if (buffer[pos] == ',') {
        ++pos;
        continue;
      }
      const std::size_t key_end = value_end();
      std::string key_text = buffer.substr(pos, key_end - pos);
      pos = key_end;
      expect(':');
      if (!skip_space()) fail("{}: truncated or malformed JSON (unexpected end of file)", path_.string());
      if (key_text == "\"traceEvents\"") {
        has_events = true;
        if (buffer[pos] != '[') fail("{}: traceEvents is not an array", path_.string());
        ++pos;
        begin_events();
        stream_events(buffer, pos, skip_space, value_end);
        continue;
      }
      const std::size_t end = value_end();
      if (end == pos) {
        fail("{}: truncated or malformed JSON (no value for key {})", path_.string(),
             key_text.substr(0, 100));
      }
      std::string wrapped = "[" + buffer.substr(pos, end - pos) + "]";
      pos = end;
      od::parser parser;
      simdjson::padded_string padded(wrapped);
      od::document doc = parser.iterate(padded);
      for (auto element : doc.get_array()) {
        handle_metadata(std::string_view(key_text).substr(1, key_text.size() - 2), element.value());
      }
    }
    if (!has_events) fail("{}: not a Kineto trace (no traceEvents)", path_.string());
  }

  template <typename SkipSpace, typename ValueEnd>
  void stream_events(std::string& buffer, std::size_t& pos, SkipSpace& skip_space, ValueEnd& value_end) {
    in_events_ = true;
    od::parser parser;
    std::string batch;
    auto flush_batch = [&]() {
      if (batch.empty()) return;
      batch.back() = ']';
      batch.insert(batch.begin(), '[');
      const std::size_t length = batch.size();
      batch.resize(length + simdjson::SIMDJSON_PADDING);
      simdjson::padded_string_view view(batch.data(), length, batch.size());
      od::document doc = parser.iterate(view);
      for (auto event : doc.get_array()) handle_event(event.value());
      batch.clear();
    };
    for (;;) {
      if (!skip_space()) fail("{}: truncated or malformed JSON (unexpected end of file)", path_.string());
      const char c = buffer[pos];
      if (c == ']') {
        ++pos;
        break;
      }
      if (c == ',') {
        ++pos;
        continue;
      }
      const std::size_t end = value_end();
      if (end == pos) {  // a stray '}' or ':' where an event should start
        fail("{}: truncated or malformed JSON (unexpected '{}' in traceEvents after event {})",
             path_.string(), c, event_index_);
      }
      batch.append(buffer, pos, end - pos);
      batch += ',';
      ++scanned_events_;
      pos = end;
      if (batch.size() >= settings_.stream_chunk_bytes) flush_batch();
    }
    flush_batch();
    in_events_ = false;
  }

  // End of the JSON value that starts at START (npos when BUFFER ends first).
  static std::size_t scan_value(const std::string& buffer, std::size_t start) {
    const std::size_t n = buffer.size();
    std::size_t i = start;
    if (i >= n) return std::string::npos;
    const char first = buffer[i];
    if (first == '"') {
      for (++i; i < n; ++i) {
        if (buffer[i] == '\\') {
          ++i;
        } else if (buffer[i] == '"') {
          return i + 1;
        }
      }
      return std::string::npos;
    }
    if (first == '{' || first == '[') {
      int depth = 0;
      for (; i < n; ++i) {
        const char c = buffer[i];
        if (c == '"') {
          for (++i; i < n && buffer[i] != '"'; ++i) {
            if (buffer[i] == '\\') ++i;
          }
          if (i >= n) return std::string::npos;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) return i + 1;
        }
      }
      return std::string::npos;
    }
    for (; i < n; ++i) {
      const char c = buffer[i];
      if (c == ',' || c == '}' || c == ']' || std::isspace(static_cast<unsigned char>(c))) return i;
    }
    return std::string::npos;
  }

  // ---- metadata ----

  static std::int64_t as_integer(od::value value) {
    switch (value.type()) {
      case od::json_type::number: {
        od::number_type type = value.get_number_type();
        if (type == od::number_type::floating_point_number) {
          // Converting a double beyond int64 (or NaN) is undefined: such a number is out of range.
          const double d = value.get_double();
          if (!(d >= -9.2e18 && d <= 9.2e18)) throw simdjson::simdjson_error(simdjson::NUMBER_OUT_OF_RANGE);
          return static_cast<std::int64_t>(d);
        }
        if (type == od::number_type::unsigned_integer) {
          const std::uint64_t u = value.get_uint64().value();
          if (u > static_cast<std::uint64_t>(INT64_MAX)) {
            throw simdjson::simdjson_error(simdjson::NUMBER_OUT_OF_RANGE);
          }
          return static_cast<std::int64_t>(u);
        }
        return value.get_int64();
      }
      case od::json_type::string: {
        std::string_view text = value.get_string();
        int base = 10;
        if (text.starts_with("0x") || text.starts_with("0X")) {
          text.remove_prefix(2);
          base = 16;
        }
        std::int64_t number = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number, base);
        if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
          throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
        }
        return number;
      }
      default:
        throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
    }
  }

  static std::string as_text(od::value value) {
    switch (value.type()) {
      case od::json_type::string: {
        const std::string_view text = value.get_string().value();
        // A metadata string too long to store is an argument of the wrong kind (out of range).
        if (text.size() > kMaxStringBytes) throw simdjson::simdjson_error(simdjson::NUMBER_OUT_OF_RANGE);
        return std::string(text);
      }
      case od::json_type::number: {
        std::string_view token = value.raw_json_token();
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
          token.remove_suffix(1);
        return std::string(token);
      }
      case od::json_type::null:
        return {};
      default:
        return std::string(simdjson::to_json_string(value).value());
    }
  }

  // A process group's member list: only ranks (a profile holding anything else would not load).
  void check_ranks(std::string_view text, const char* where) const {
    std::vector<std::int32_t> ranks;
    std::string bad;
    if (!parse_rank_list(text, ranks, &bad))
      fail("{}: {}: ranks holds {}, which is not a rank", path_.string(), where, bad);
  }

  void handle_metadata(std::string_view key, od::value value) {
    auto& m = result_.metadata;
    if (key == "distributedInfo") {
      if (value.type() != od::json_type::object) fail("{}: distributedInfo is not an object", path_.string());
      m.has_distributed_info = true;
      for (auto field : value.get_object()) {
        const std::string_view k = field.unescaped_key();
        od::value v = field.value();
        if (k == "rank") {
          if (v.type() != od::json_type::null) m.rank = as_integer(v);
        } else if (k == "world_size") {
          if (v.type() != od::json_type::null) m.world_size = as_integer(v);
        } else if (k == "backend") {
          m.backend = as_text(v);
        } else if (k == "nccl_version") {
          m.nccl_version = as_text(v);
        } else if (k == "pg_config") {
          if (v.type() != od::json_type::array) continue;
          for (auto pg_value : v.get_array()) {
            od::value pg_v = pg_value.value();
            if (pg_v.type() != od::json_type::object) continue;
            ProcessGroupInfo pg;
            for (auto pg_field : pg_v.get_object()) {
              const std::string_view pk = pg_field.unescaped_key();
              od::value pv = pg_field.value();
              if (pk == "pg_name") {
                pg.pg_name = as_text(pv);
              } else if (pk == "pg_desc") {
                pg.pg_desc = as_text(pv);
              } else if (pk == "backend_config") {
                pg.backend = as_text(pv);
              } else if (pk == "pg_size") {
                pg.group_size = as_integer(pv);
              } else if (pk == "ranks") {
                pg.ranks_json = as_text(pv);
                check_ranks(pg.ranks_json, "distributedInfo.pg_config");
              }
            }
            m.process_groups.push_back(std::move(pg));
          }
        }
      }
    } else if (key == "deviceProperties") {
      if (value.type() != od::json_type::array) return;
      for (auto device_value : value.get_array()) {
        od::value dv = device_value.value();
        if (dv.type() != od::json_type::object) continue;
        DeviceInfo d;
        JsonWriter props;
        props.begin_object();
        for (auto field : dv.get_object()) {
          const std::string_view k = field.unescaped_key();
          od::value v = field.value();
          const od::json_type type = v.type();
          if (k == "id") d.device = static_cast<std::int32_t>(as_integer(v));
          if (k == "totalGlobalMem") d.total_memory_bytes = as_integer(v);
          if (k == "computeMajor") d.compute_major = as_integer(v);
          if (k == "computeMinor") d.compute_minor = as_integer(v);
          if (k == "numSms") d.sm_count = as_integer(v);
          // Read once: an array or object value can be consumed only once (simdjson On-Demand), and a name
          // may be one in a damaged trace.
          const std::string text = as_text(v);
          if (k == "name") d.name = text;
          props.key(k);
          if (type == od::json_type::string) {
            props.value(text);
          } else {
            props.raw(text);
          }
        }
        props.end_object();
        d.properties_json = props.str();
        m.devices.push_back(std::move(d));
      }
    } else if (key == "meshscope") {
      read_export_metadata(value);
    } else if (key == "baseTimeNanoseconds") {
      m.base_time_ns = as_integer(value);
      if (!time_in_range(m.base_time_ns)) {
        fail("{}: baseTimeNanoseconds {} is out of range (times lie within +-2^62 ns)", path_.string(),
             m.base_time_ns);
      }
    } else if (key == "host_name" || key == "hostname") {
      m.hostname = as_text(value);
    } else if (key == "trace_id") {
      m.trace_id = as_text(value);
    }
  }

  void read_export_metadata(od::value value) {
    if (value.type() != od::json_type::object) return;
    auto& m = result_.metadata;
    for (auto field : value.get_object()) {
      if (field.unescaped_key().value() != "ranks") continue;
      od::value ranks = field.value();
      if (ranks.type() != od::json_type::array) continue;
      for (auto rank_value : ranks.get_array()) {
        od::value rv = rank_value.value();
        if (rv.type() != od::json_type::object) continue;
        ExportedRank exported;
        auto& info = exported.info;
        for (auto rf : rv.get_object()) {
          const std::string_view k = rf.unescaped_key();
          od::value v = rf.value();
          if (k == "rank") info.rank = static_cast<std::int32_t>(as_integer(v));
          if (k == "world_size") info.world_size = as_integer(v);
          if (k == "source_file") info.source_file = as_text(v);
          if (k == "rank_source") info.rank_source = as_text(v);
          if (k == "hostname") info.hostname = as_text(v);
          if (k == "backend") info.backend = as_text(v);
          if (k == "comm_version") info.comm_version = as_text(v);
          if (k == "clock_base_ns") info.clock_base_ns = as_integer(v);
          if (k == "devices" && v.type() == od::json_type::array) {
            for (auto dv : v.get_array()) {
              od::value device = dv.value();
              DeviceInfo d;
              for (auto df : device.get_object()) {
                const std::string_view dk = df.unescaped_key();
                od::value x = df.value();
                if (dk == "id") d.device = static_cast<std::int32_t>(as_integer(x));
                if (dk == "name") d.name = as_text(x);
                if (dk == "totalGlobalMem") d.total_memory_bytes = as_integer(x);
                if (dk == "computeMajor") d.compute_major = as_integer(x);
                if (dk == "computeMinor") d.compute_minor = as_integer(x);
                if (dk == "numSms") d.sm_count = as_integer(x);
              }
              exported.devices.push_back(std::move(d));
            }
          }
          if (k == "pg_config" && v.type() == od::json_type::array) {
            for (auto pv : v.get_array()) {
              od::value pg_value = pv.value();
              ProcessGroupInfo pg;
              for (auto pf : pg_value.get_object()) {
                const std::string_view pk = pf.unescaped_key();
                od::value x = pf.value();
                if (pk == "pg_name") pg.pg_name = as_text(x);
                if (pk == "pg_desc") pg.pg_desc = as_text(x);
                if (pk == "backend_config") pg.backend = as_text(x);
                if (pk == "pg_size") pg.group_size = as_integer(x);
                if (pk == "ranks") {
                  pg.ranks_json = as_text(x);
                  check_ranks(pg.ranks_json, "meshscope.ranks.pg_config");
                }
              }
              exported.process_groups.push_back(std::move(pg));
            }
          }
        }
        m.exported_ranks.push_back(std::move(exported));
      }
    }
  }

  // ---- events ----

  void begin_events() {
    const auto& m = result_.metadata;
    try {
      rank_ = resolver_(path_, m);
    } catch (const Error&) {
      // The rank may yet be stated after the events; write under a provisional rank until then.
      // Files are read on several threads at once (import.cpp): the counter is shared.
      static std::atomic<std::int32_t> provisional{kProvisionalRankBase};
      rank_ = provisional.fetch_add(1);
    }
    exported_ = !m.exported_ranks.empty();
    base_ns_ = m.base_time_ns;
    started_events_ = true;
    written_rank_ = rank_;
    written_base_ns_ = base_ns_;
    cat_ac2g_ = 0;
  }

  IdValue read_id(od::value value) {
    IdValue id;
    id.present = true;
    switch (value.type()) {
      case od::json_type::number:
        id.numeric = true;
        id.number = as_integer(value);
        break;
      case od::json_type::string: {
        id.text = value.get_string();
        std::int64_t number = 0;
        auto [end, ec] = std::from_chars(id.text.data(), id.text.data() + id.text.size(), number);
        if (ec == std::errc() && end == id.text.data() + id.text.size()) {
          id.numeric = true;
          id.number = number;
        }
        break;
      }
      default:
        bad_event("pid/tid/id is neither a number nor a string");
    }
    return id;
  }

  // Maps an id to an integer: numbers as they are, other strings to stable negative ids.
  std::int64_t id_number(const IdValue& id) {
    if (!id.present) return 0;
    if (id.numeric) return id.number;
    auto it = named_ids_.find(std::string(id.text));
    if (it != named_ids_.end()) return it->second;
    const std::int64_t value = -static_cast<std::int64_t>(named_ids_.size()) - 1;
    named_ids_.emplace(std::string(id.text), value);
    return value;
  }

  std::int64_t time_field(od::value value, const char* field) {
    if (value.type() != od::json_type::number) bad_event(fmt::format("field '{}' is not a number", field));
    std::int64_t ns = 0;
    bool out_of_range = false;
    if (!parse_microseconds(value.raw_json_token(), ns, &out_of_range)) {
      std::string_view token = value.raw_json_token();
      while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.remove_suffix(1);
      if (out_of_range) {
        bad_event(fmt::format("field '{}' ({} us) is out of range (times lie within +-2^62 ns)", field,
                              token.substr(0, 40)));
      }
      bad_event(fmt::format("field '{}' is not a number", field));
    }
    return ns;
  }

  // [TS, TS + DUR] on the profile clock (+ baseTimeNanoseconds), checked, never wrapped.
  std::pair<TimeNs, TimeNs> profile_interval(std::int64_t ts, std::string_view name, std::int64_t dur = 0) {
    TimeNs start = 0, end = 0;
    if (__builtin_add_overflow(ts, base_ns_, &start) || !time_in_range(start) ||
        __builtin_add_overflow(start, dur, &end) || !time_in_range(end)) {
      bad_event(fmt::format(
          "'{}' lies out of range: ts {} ns + dur {} ns + baseTimeNanoseconds {} ns is beyond +-2^62 ns",
          name.substr(0, 200), ts, dur, base_ns_));
    }
    return {start, end};
  }

  void read_int_triple(od::value value, std::int64_t (&out)[3]) {
    if (value.type() != od::json_type::array) return;
    int i = 0;
    for (auto element : value.get_array()) {
      if (i < 3) out[i] = as_integer(element.value());
      ++i;
    }
  }

  // The JSON text of an array value (consumed).
  static std::string_view raw_array(od::value v) {
    od::array array = v.get_array();
    return array.raw_json();
  }

  void read_args(od::value value, Args& a) {
    if (value.type() != od::json_type::object) bad_event("field 'args' is not an object");
    for (auto field : value.get_object()) {
      const std::string_view k = raw_key(field);
      if (k.empty()) continue;
      od::value v = field.value();
      try {
        read_arg(k, v, a);
      } catch (const simdjson::simdjson_error& e) {
        if (e.error() != simdjson::INCORRECT_TYPE && e.error() != simdjson::NUMBER_ERROR &&
            e.error() != simdjson::NUMBER_OUT_OF_RANGE) {
          throw;
        }
        ++ignored_args_;  // an arg of an unexpected type is not used; the event itself is kept
      }
    }
  }

  void read_arg(std::string_view k, od::value v, Args& a) {
    {
      switch (k[0]) {
        case 'd':
          if (is(k, "device")) {
            a.device = as_integer(v);
          } else if (is(k, "dtype")) {
            a.dtype = v.get_string();
          }
          break;
        case 's':
          if (is(k, "stream")) {
            a.stream = as_integer(v);
          } else if (is(k, "shared memory")) {
            a.shared_bytes = as_integer(v);
          } else if (is(k, "seq")) {
            a.seq = as_integer(v);
          }
          break;
        case 'c':
          if (is(k, "correlation")) {
            a.correlation = as_integer(v);
          } else if (is(k, "cbid")) {
            a.cbid = as_integer(v);
          } else if (is(k, "channels")) {
            a.channels = as_integer(v);
          }
          break;
        case 'E':
        case 'e':
          if (is(k, "External id") || is(k, "external id")) a.external_id = as_integer(v);
          break;
        case 'g':
          if (is(k, "grid")) read_int_triple(v, a.grid);
          break;
        case 'b':
          if (is(k, "block")) {
            read_int_triple(v, a.block);
          } else if (is(k, "bytes")) {
            a.bytes = as_integer(v);
          }
          break;
        case 'r':
          if (is(k, "registers per thread")) a.registers = as_integer(v);
          break;
        case 'a':
          if (is(k, "algorithm")) a.algorithm = v.get_string();
          break;
        case 'p':
          if (is(k, "protocol")) {
            a.protocol = v.get_string();
          } else if (is(k, "pid")) {
            a.pid = as_integer(v);
          }
          break;
        case 'C':
          if (is(k, "Collective name")) {
            a.collective_name = v.get_string();
          } else if (is(k, "Concrete Inputs") && a.concrete_wanted && v.type() == od::json_type::array) {
            a.concrete_inputs = raw_array(v);
          }
          break;
        case 'I':
          if (is(k, "In msg nelems")) {
            a.in_nelems = as_integer(v);
          } else if (is(k, "In msg size")) {
            a.in_bytes = as_integer(v);
          } else if (is(k, "Input Dims") && v.type() == od::json_type::array) {
            a.has_input_dims = true;
            a.input_dims = raw_array(v);
          } else if (is(k, "Input type") && v.type() == od::json_type::array) {
            a.input_types = raw_array(v);
          }
          break;
        case 'O':
          if (is(k, "Out msg nelems")) {
            a.out_nelems = as_integer(v);
          } else if (is(k, "Out msg size")) {
            a.out_bytes = as_integer(v);
          }
          break;
        case 'G':
          if (is(k, "Group size")) a.group_size = as_integer(v);
          break;
        case 'P':
          if (is(k, "Process Group Name")) {
            a.pg_name_storage = as_text(v);
            a.pg_name = a.pg_name_storage;
          } else if (is(k, "Process Group Description")) {
            a.pg_desc = v.get_string();
          } else if (is(k, "Process Group Ranks")) {
            a.pg_ranks_storage = as_text(v);
            a.pg_ranks = a.pg_ranks_storage;
          }
          break;
        case 'S':
          if (is(k, "Seq")) a.seq = as_integer(v);
          break;
        case 'n':
          if (is(k, "name") && v.type() == od::json_type::string) a.meta_name = v.get_string();
          break;
        case 'l':
          if (is(k, "labels") && v.type() == od::json_type::string) a.labels = v.get_string();
          break;
        default:
          break;
      }
    }
  }

  void handle_event(od::value value) {
    ++event_index_;
    if (value.type() != od::json_type::object) bad_event("not a JSON object");
    std::string_view ph, cat, name;
    IdValue pid, tid, flow_id;
    bool has_ts = false, has_dur = false;
    std::int64_t ts = 0, dur = 0;
    Args args;
    for (auto field : value.get_object()) {
      const std::string_view key = raw_key(field);
      od::value v = field.value();
      if (is(key, "ph")) {
        if (v.type() != od::json_type::string) bad_event("field 'ph' is not a string");
        ph = v.get_string();
      } else if (is(key, "cat")) {
        if (v.type() == od::json_type::string) cat = v.get_string();
      } else if (is(key, "name")) {
        if (v.type() == od::json_type::string) {
          name = v.get_string();
        } else if (v.type() != od::json_type::null) {
          bad_event("field 'name' is not a string");
        }
      } else if (is(key, "ts")) {
        ts = time_field(v, "ts");
        has_ts = true;
      } else if (is(key, "dur")) {
        dur = time_field(v, "dur");
        has_dur = true;
      } else if (is(key, "pid")) {
        pid = read_id(v);
      } else if (is(key, "tid")) {
        tid = read_id(v);
      } else if (is(key, "id")) {
        flow_id = read_id(v);
      } else if (is(key, "args")) {
        // Concrete inputs are kept only for operators with a work formula (the name precedes args in Kineto
        // files; when it does not, they are kept and the name decides later).
        args.concrete_wanted = name.empty() || work_.has_formula(name);
        read_args(v, args);
      }
    }
    if (ph.empty()) bad_event("no 'ph' field");
    for (const auto& [text, what] :
         {std::pair{name, "name"}, std::pair{cat, "cat"}, std::pair{args.collective_name, "args"},
          std::pair{args.dtype, "args"}, std::pair{args.pg_name, "args"}, std::pair{args.pg_desc, "args"},
          std::pair{args.pg_ranks, "args"}, std::pair{args.algorithm, "args"},
          std::pair{args.protocol, "args"}, std::pair{args.meta_name, "args"},
          std::pair{args.input_dims, "args"}, std::pair{args.input_types, "args"}}) {
      if (text.size() > kMaxStringBytes) {
        bad_event(fmt::format("a string in '{}' is {} bytes long; meshscope stores at most {} MiB", what,
                              text.size(), kMaxStringBytes >> 20));
      }
    }
    switch (ph[0]) {
      case 'X': {
        if (!has_ts) bad_event("complete event without 'ts'");
        if (!has_dur) dur = 0;
        if (dur < 0) bad_event(fmt::format("negative duration ({} ns) for '{}'", dur, name));
        const auto [start, end] = profile_interval(ts, name, dur);
        handle_complete(cat, name, pid, tid, start, end, args);
        break;
      }
      case 'M':
        handle_metadata_event(name, pid, tid, args);
        break;
      case 's':
      case 'f':
      case 't':
        if (!has_ts) bad_event("flow event without 'ts'");
        handle_flow(ph[0], cat, pid, tid, flow_id, profile_interval(ts, name).first);
        break;
      default:
        ++result_.skipped_events;
        break;  // instants, counters, async: not part of the profile
    }
  }

  void note_time(TimeNs start, TimeNs end) {
    if (!any_time_ || start < result_.first_ns) result_.first_ns = start;
    if (!any_time_ || end > result_.last_ns) result_.last_ns = end;
    any_time_ = true;
  }

  void handle_complete(std::string_view cat, std::string_view name, const IdValue& pid, const IdValue& tid,
                       TimeNs start, TimeNs end, const Args& args) {
    if (name.empty())
      name = "(unnamed)";  // names are NOT NULL in the profile; Chrome traces may leave them out
    const Category category = classify_category(cat);
    // A meshscope export holds every rank in one file: the pid is the rank, the original pid sits in args.
    std::int32_t rank = rank_;
    if (exported_) {  // the pid is the rank
      const std::int64_t exported_rank = id_number(pid);
      if (exported_rank < 0 || exported_rank > kMaxRank) {
        bad_event(fmt::format("pid {} is not a rank of the export", exported_rank));
      }
      rank = static_cast<std::int32_t>(exported_rank);
    }
    auto cpu_pid = [&] { return exported_ && args.pid != kNull ? args.pid : id_number(pid); };
    switch (category) {
      case Category::kKernel:
      case Category::kMemcpy:
      case Category::kMemset:
      case Category::kSync: {
        ActivityRecord a;
        a.rank = rank;
        a.kind = category == Category::kKernel   ? ActivityKind::kKernel
                 : category == Category::kMemcpy ? ActivityKind::kMemcpy
                 : category == Category::kMemset ? ActivityKind::kMemset
                                                 : ActivityKind::kSync;
        const std::int64_t device = args.device != kNull ? args.device : id_number(pid);
        if (device < INT32_MIN || device > INT32_MAX)
          bad_event(fmt::format("device {} is out of range", device));
        a.device = static_cast<std::int32_t>(device);
        a.stream = args.stream != kNull ? args.stream : id_number(tid);
        a.start_ns = start;
        a.end_ns = end;
        a.name = writer_.intern(name);
        a.correlation = args.correlation;
        a.external_id = args.external_id;
        std::copy(std::begin(args.grid), std::end(args.grid), a.grid);
        std::copy(std::begin(args.block), std::end(args.block), a.block);
        a.registers = args.registers;
        a.shared_bytes = args.shared_bytes;
        a.bytes = args.bytes;
        if (a.kind == ActivityKind::kMemcpy) a.copy_kind = writer_.intern(copy_kind(name));
        const std::int64_t id = writer_.add_activity(a);
        if (a.kind != ActivityKind::kSync)
          work_.add_activity(rank, id, start, end, a.correlation, a.external_id,
                             a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset);
        streams_.insert({rank, a.device, a.stream});
        ++result_.gpu_events;
        note_time(start, end);
        if (a.kind == ActivityKind::kKernel) add_kernel_collective(rank, id, a.name, name, start, end, args);
        break;
      }
      case Category::kRuntime:
      case Category::kDriver: {
        ApiCallRecord c;
        c.rank = rank;
        c.kind = category == Category::kDriver ? ApiKind::kDriver : ApiKind::kRuntime;
        c.pid = cpu_pid();
        c.tid = id_number(tid);
        c.start_ns = start;
        c.end_ns = end;
        c.name = writer_.intern(name);
        c.correlation = args.correlation;
        c.external_id = args.external_id;
        c.cbid = args.cbid;
        writer_.add_api_call(c);
        work_.add_call(rank, c.pid, c.tid, start, c.correlation, c.external_id);
        threads_.insert({rank, c.pid, c.tid});
        ++result_.cpu_events;
        note_time(start, end);
        break;
      }
      case Category::kProfilerSpan:
        ++result_.skipped_events;
        break;
      default: {
        RangeRecord r;
        r.rank = rank;
        r.pid = cpu_pid();
        r.tid = id_number(tid);
        r.start_ns = start;
        r.end_ns = end;
        r.name = writer_.intern(name);
        r.external_id = args.external_id;
        r.category = cat_id(cat);
        switch (category) {
          case Category::kCpuOp:
            r.kind = RangeKind::kCpuOp;
            r.input_dims = intern_list(args.input_dims);
            r.input_types = intern_list(args.input_types);
            break;
          case Category::kAnnotation:
            r.kind = RangeKind::kAnnotation;
            break;
          case Category::kGpuAnnotation:
            r.kind = RangeKind::kGpuAnnotation;
            if (args.device != kNull) r.pid = args.device;
            if (args.stream != kNull) r.tid = args.stream;
            break;
          case Category::kPython:
            r.kind = RangeKind::kPythonFunction;
            break;
          default:
            r.kind = RangeKind::kOther;
            break;
        }
        if (name.starts_with("ProfilerStep#") && r.kind != RangeKind::kGpuAnnotation) {
          std::int64_t step = 0;
          const auto digits = name.substr(13);
          auto [end_ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
          if (ec == std::errc() && end_ptr == digits.data() + digits.size()) {
            r.kind = RangeKind::kStep;
            r.step = step;
          }
        }
        writer_.add_range(r);
        if (r.kind == RangeKind::kCpuOp) {
          work_.add_op(writer_, rank, r.pid, r.tid, start, end, name, r.external_id, args.has_input_dims,
                       args.input_dims, args.input_types, args.concrete_inputs);
        }
        if (r.kind != RangeKind::kGpuAnnotation) threads_.insert({rank, r.pid, r.tid});
        ++result_.cpu_events;
        note_time(start, end);
        // "wait" is PyTorch's work.wait(): a CPU-side wait on a collective, not a collective of its own.
        if (!args.collective_name.empty() && args.collective_name != "wait") {
          CollectiveRecord c = collective_from_args(rank, args, start, end);
          c.source = "cpu_op";
          writer_.add_cpu_collective(c, r.pid, r.tid);
        }
        break;
      }
    }
  }

  static std::string_view copy_kind(std::string_view name) {
    // "Memcpy HtoD (Pageable -> Device)" -> "HtoD"
    if (!name.starts_with("Memcpy ")) return name;
    auto rest = name.substr(7);
    return rest.substr(0, rest.find(' '));
  }

  // A recorded JSON list (an operator's "Input Dims" or "Input type") as the tables store it; kNoString when
  // not recorded.
  StringId intern_list(std::string_view list) {
    if (list.empty()) return kNoString;
    return is_canonical_list(list) ? writer_.intern(list) : writer_.intern(canonical_list(list));
  }

  StringId cat_id(std::string_view cat) {
    auto it = cat_ids_.find(cat);
    if (it != cat_ids_.end()) return it->second;
    const StringId id = writer_.intern(cat);
    cat_ids_.emplace(std::string(cat), id);
    return id;
  }

  CollectiveRecord collective_from_args(std::int32_t rank, const Args& args, TimeNs start, TimeNs end) {
    CollectiveRecord c;
    c.rank = rank;
    const std::string op = import::normalise_collective_op(args.collective_name);
    c.op = writer_.intern(op.empty() ? std::string_view("(unknown)") : std::string_view(op));
    c.communicator = writer_.intern(args.pg_name);
    c.pg_desc = writer_.intern(args.pg_desc);
    c.pg_ranks = writer_.intern(args.pg_ranks);
    c.seq = args.seq;
    c.in_nelems = args.in_nelems;
    c.out_nelems = args.out_nelems;
    c.dtype = writer_.intern(args.dtype);
    const int element = import::dtype_bytes(args.dtype);
    // Element counts times element size, unknown (NULL) when the product would overflow.
    auto bytes = [&](std::int64_t stated, std::int64_t nelems) {
      std::int64_t product = 0;
      if (stated != kNull) return stated;
      if (nelems == kNull || element <= 0 ||
          __builtin_mul_overflow(nelems, std::int64_t{element}, &product)) {
        return kNull;
      }
      return product;
    };
    c.in_bytes = bytes(args.in_bytes, args.in_nelems);
    c.out_bytes = bytes(args.out_bytes, args.out_nelems);
    c.group_size = args.group_size;
    c.algorithm = writer_.intern(args.algorithm);
    c.protocol = writer_.intern(args.protocol);
    c.channels = args.channels;
    c.start_ns = start;
    c.end_ns = end;
    return c;
  }

  void add_kernel_collective(std::int32_t rank, std::int64_t activity_id, StringId name_id,
                             std::string_view name, TimeNs start, TimeNs end, const Args& args) {
    // Kernel names repeat: each is parsed once (NAME_ID is its interned id).
    auto cached = nccl_names_.find(name_id);
    if (cached == nccl_names_.end())
      cached = nccl_names_.emplace(name_id, import::parse_nccl_kernel_name(name)).first;
    const auto& parsed = cached->second;
    if (args.collective_name.empty() && (!parsed || parsed->op.empty())) return;
    CollectiveRecord c;
    if (!args.collective_name.empty()) {
      c = collective_from_args(rank, args, start, end);
      c.source = "kernel_args";
    } else {
      c.rank = rank;
      c.op = writer_.intern(parsed->op);
      c.start_ns = start;
      c.end_ns = end;
      c.source = vocabulary::kNameOnlySource;
    }
    c.activity_id = activity_id;
    if (parsed) {
      if (c.algorithm == kNoString) c.algorithm = writer_.intern(parsed->algorithm);
      if (c.protocol == kNoString) c.protocol = writer_.intern(parsed->protocol);
    }
    writer_.add_collective(c);
  }

  void handle_metadata_event(std::string_view name, const IdValue& pid, const IdValue& tid,
                             const Args& args) {
    if (name == "thread_name" && !args.meta_name.empty()) {
      thread_names_[{id_number(pid), id_number(tid)}] = std::string(args.meta_name);
    } else if (name == "process_name" && !args.meta_name.empty()) {
      process_names_[id_number(pid)] = std::string(args.meta_name);
    }
  }

  void handle_flow(char phase, std::string_view cat, const IdValue& pid, const IdValue& tid,
                   const IdValue& id, TimeNs ts) {
    if (is_launch_flow(cat)) {
      ++implied_flows_;  // CPU->GPU launch flows are implied by correlation ids
      return;
    }
    const std::int64_t flow = id_number(id);
    const auto key = std::make_pair(std::string(cat), flow);
    auto& pending = pending_flows_[key];
    if (phase == 's') {
      if (pending.has_src) emit_flow(key, pending);
      pending.has_src = true;
      pending.record.src_ns = ts;
      pending.record.src_pid = id_number(pid);
      pending.record.src_tid = id_number(tid);
    } else {
      pending.record.dst_ns = ts;
      pending.record.dst_pid = id_number(pid);
      pending.record.dst_tid = id_number(tid);
      if (pending.has_src) {
        emit_flow(key, pending);
        pending_flows_.erase(key);
      }
    }
  }

  struct PendingFlow {
    bool has_src = false;
    FlowRecord record;
  };

  void emit_flow(const std::pair<std::string, std::int64_t>& key, PendingFlow& pending) {
    FlowRecord f = pending.record;
    f.rank = rank_;
    f.category = writer_.intern(key.first);
    f.flow_id = key.second;
    writer_.add_flow(f);
    pending = PendingFlow{};
  }

  void finish() {
    auto& m = result_.metadata;
    for (auto& [key, pending] : pending_flows_) {
      if (pending.has_src) emit_flow(key, pending);
    }
    for (const auto& [rank, device, stream] : streams_) {
      StreamInfo s;
      s.rank = static_cast<std::int32_t>(rank);
      s.device = static_cast<std::int32_t>(device);
      s.stream = stream;
      auto it = thread_names_.find({device, stream});
      if (it != thread_names_.end()) {
        s.name = it->second;
        while (!s.name.empty() && s.name.back() == ' ') s.name.pop_back();
      }
      writer_.add_stream(s);
    }
    for (const auto& [rank, pid, tid] : threads_) {
      ThreadInfo t;
      t.rank = static_cast<std::int32_t>(rank);
      t.pid = pid;
      t.tid = tid;
      auto it = thread_names_.find({pid, tid});
      if (it != thread_names_.end()) t.name = it->second;
      for (const auto& [text, id] : named_ids_) {
        if (id == tid && t.name.empty()) t.name = text;
      }
      writer_.add_thread(t);
    }
    for (auto d : m.devices) {
      d.rank = rank_;
      writer_.add_device(d);
    }
    for (auto pg : m.process_groups) {
      pg.rank = rank_;
      writer_.add_process_group(pg);
    }
    for (const auto& exported : m.exported_ranks) {
      for (auto d : exported.devices) {
        d.rank = exported.info.rank;
        writer_.add_device(d);
      }
      for (auto pg : exported.process_groups) {
        pg.rank = exported.info.rank;
        writer_.add_process_group(pg);
      }
    }
    if (result_.skipped_events > 0 || implied_flows_ > 0) {
      writer_.add_diagnostic(
          rank_, "info",
          fmt::format("{}: {} profiler bookkeeping/instant/counter events not stored; {} CPU->GPU "
                      "launch flows kept as correlation ids",
                      path_.filename().string(), result_.skipped_events, implied_flows_));
    }
    if (ignored_args_ > 0) {
      writer_.add_diagnostic(rank_, "warning",
                             fmt::format("{}: {} event args of an unexpected type were ignored",
                                         path_.filename().string(), ignored_args_));
    }
    work_.finish(writer_);
    // Facts stated after the events (distributedInfo, baseTimeNanoseconds at the end of the file).
    if (started_events_) {
      const std::int32_t final_rank = resolver_(path_, m);
      const std::int64_t shift = m.base_time_ns - written_base_ns_;  // both within +-2^62: no overflow
      if (shift != 0 && any_time_ &&
          (!time_in_range(result_.first_ns + shift) || !time_in_range(result_.last_ns + shift))) {
        fail("{}: baseTimeNanoseconds {} (stated after the events) puts event times out of range",
             path_.string(), m.base_time_ns);
      }
      if (final_rank != written_rank_ || shift != 0) {
        writer_.rewrite_rank(written_rank_, final_rank, shift);
        rank_ = final_rank;
        result_.first_ns += shift;
        result_.last_ns += shift;
      }
    }
    result_.rank = rank_;
    result_.imported_rows = result_.gpu_events + result_.cpu_events;
  }

  const std::filesystem::path& path_;
  RecordSink& writer_;
  const RankResolver& resolver_;
  const ImportSettings& settings_;
  FileResult result_;
  std::uint64_t total_bytes_ = 0;
  std::uint64_t event_index_ = 0;
  std::uint64_t scanned_events_ = 0;  // streaming: events cut out of the input so far (parsed in batches)
  bool in_events_ = false;
  std::int32_t rank_ = 0, written_rank_ = 0;
  std::int64_t base_ns_ = 0, written_base_ns_ = 0;
  bool started_events_ = false;
  bool metadata_read_ = false;
  bool any_time_ = false;
  std::uint64_t implied_flows_ = 0;
  std::uint64_t ignored_args_ = 0;
  StringId cat_ac2g_ = 0;
  std::map<std::string, std::int64_t> named_ids_;
  std::map<std::string, StringId, std::less<>> cat_ids_;
  std::unordered_map<StringId, std::optional<vocabulary::NcclKernelName>> nccl_names_;  // by kernel name id
  bool exported_ = false;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> streams_, threads_;  // (rank, a, b)
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names_;
  std::map<std::int64_t, std::string> process_names_;
  std::map<std::pair<std::string, std::int64_t>, PendingFlow> pending_flows_;
  kineto::OpWorkLinker work_;
};

}  // namespace

FileResult import_file(const std::filesystem::path& path, RecordSink& writer,
                       const RankResolver& resolve_rank, const ImportSettings& settings) {
  FileImporter importer(path, writer, resolve_rank, settings);
  return importer.run();
}

}  // namespace meshscope::kineto
