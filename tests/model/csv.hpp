// Reads the published-figure CSVs of ../shared/calibration: '#' comment lines, a header row, quoted fields.
#pragma once

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshscope::model::testing {

using Row = std::map<std::string, std::string>;

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  return fields;
}

inline std::vector<Row> read_csv_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> header;
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto fields = split_csv_line(line);
    if (header.empty()) {
      header = fields;
      continue;
    }
    Row row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

inline std::vector<Row> read_calibration_csv(const std::string& name) {
  return read_csv_file(std::string(MESHSCOPE_SHARED_DIR) + "/calibration/" + name);
}

// Published runs gathered for out-of-sample validation (tests/model/data/, each row cited there).
inline std::vector<Row> read_published_runs(const std::string& name) {
  return read_csv_file(std::string(MESHSCOPE_SOURCE_DIR) + "/tests/model/data/" + name);
}

}  // namespace meshscope::model::testing
