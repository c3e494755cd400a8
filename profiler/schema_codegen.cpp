// Build-time generator: reads profiler/schema.sql, the one declaration of the profile's tables, and writes
// the C++ description of every table (profiler/schema_declared.hpp in the build tree): its name, role, CREATE
// statement, and per column the name, affinity, whether Profile::load requires it, and whether it is a time
// on the profile clock. SQLite itself parses the schema (an in-memory database runs it), so the columns,
// their types and constraints are SQLite's reading of the file; only the tags in the comments are read as
// text:
//   -- @role ROLE          on the line before CREATE TABLE: job, description, events or summary
//   -- [optional] ...      a column a profile may lack (written before it existed): a NOT NULL one is then
//   not required by Profile::load, and a reader takes it as NULL
//   -- [clock] ...         a time on the profile clock, moved when a rank's clock is shifted
// Any table or column it cannot account for stops the build with a message naming the line.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "schema_codegen: %s\n", message.c_str());
  std::exit(1);
}

struct ColumnDecl {
  std::string name, type;
  bool not_null = false, primary_key = false, optional = false, clock = false;
};

struct TableDecl {
  std::string name, role, create_sql;
  std::vector<ColumnDecl> columns;
};

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// SQLite's affinity rules (datatype3.html, 3.1), in the order SQLite applies them.
std::string affinity_of(std::string type) {
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (type.find("INT") != std::string::npos) return "kInteger";
  if (type.find("CHAR") != std::string::npos || type.find("CLOB") != std::string::npos ||
      type.find("TEXT") != std::string::npos)
    return "kText";
  if (type.empty() || type.find("BLOB") != std::string::npos) return "kBlob";
  if (type.find("REAL") != std::string::npos || type.find("FLOA") != std::string::npos ||
      type.find("DOUB") != std::string::npos)
    return "kReal";
  return "kNumeric";
}

// The column definitions of one line of a CREATE TABLE body ("a INTEGER, b TEXT NOT NULL,"): their names, in
// order. Table constraints (PRIMARY KEY (...), UNIQUE, CHECK, FOREIGN KEY) name no column.
std::vector<std::string> defined_names(std::string_view code) {
  std::vector<std::string> names;
  int depth = 0;
  std::string part;
  auto flush = [&] {
    const std::string definition = trim(part);
    part.clear();
    if (definition.empty() || definition == "(" || definition == ")" || definition == ");") return;
    const std::string first = definition.substr(0, definition.find_first_of(" \t("));
    for (const char* constraint : {"PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "CONSTRAINT"})
      if (first == constraint) return;
    names.push_back(first);
  };
  for (char c : code) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      flush();
    } else {
      part.push_back(c);
    }
  }
  flush();
  return names;
}

// The tags at the start of a column's comment: "[optional] [clock] text".
void read_tags(std::string_view comment, ColumnDecl& column, int line) {
  std::string text = trim(comment);
  while (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) die("line " + std::to_string(line) + ": an unclosed [tag]");
    const std::string tag = text.substr(1, close - 1);
    if (tag == "optional") {
      column.optional = true;
    } else if (tag == "clock") {
      column.clock = true;
    } else {
      die("line " + std::to_string(line) + ": unknown tag [" + tag + "] on column " + column.name);
    }
    text = trim(std::string_view(text).substr(close + 1));
  }
}

// Matches each line of TABLE's CREATE statement (starting at FIRST_LINE of the file) to the columns SQLite
// reported, in order, and reads their tags.
void read_column_tags(TableDecl& table, int first_line) {
  std::istringstream lines(table.create_sql);
  std::string line;
  std::size_t next = 0;
  int number = first_line;
  bool in_body = false;
  while (std::getline(lines, line)) {
    const auto comment_at = line.find("--");
    std::string code = line.substr(0, comment_at);
    const std::string comment = comment_at == std::string::npos ? "" : line.substr(comment_at + 2);
    if (!in_body) {
      const auto open = code.find('(');
      if (open != std::string::npos) {
        in_body = true;
        code = code.substr(open + 1);
      }
    }
    if (in_body) {
      for (const std::string& name : defined_names(code)) {
        if (next >= table.columns.size() || table.columns[next].name != name)
          die("line " + std::to_string(number) + ": column " + name + " of " + table.name +
              " is not the one SQLite reports next");
        read_tags(comment, table.columns[next], number);
        ++next;
      }
    }
    ++number;
  }
  if (next != table.columns.size())
    die("table " + table.name + ": " + std::to_string(table.columns.size() - next) +
        " columns not found in its text");
}

void read_columns(sqlite3* db, TableDecl& table) {
  sqlite3_stmt* s = nullptr;
  const std::string sql = "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) die(sqlite3_errmsg(db));
  sqlite3_bind_text(s, 1, table.name.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW) {
    ColumnDecl c;
    c.name = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    c.type = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    c.not_null = sqlite3_column_int(s, 2) != 0;
    c.primary_key = sqlite3_column_int(s, 3) != 0;
    table.columns.push_back(c);
  }
  sqlite3_finalize(s);
}

const std::set<std::string>& cpp_keywords() {
  static const std::set<std::string> words = {
      "alignas",  "alignof",   "and",      "asm",      "auto",     "bool",   "break",  "case",     "catch",
      "char",     "class",     "const",    "continue", "default",  "delete", "do",     "double",   "else",
      "enum",     "explicit",  "export",   "extern",   "false",    "float",  "for",    "friend",   "goto",
      "if",       "inline",    "int",      "long",     "mutable",  "new",    "not",    "operator", "or",
      "private",  "protected", "public",   "register", "return",   "short",  "signed", "sizeof",   "static",
      "struct",   "switch",    "template", "this",     "throw",    "true",   "try",    "typedef",  "union",
      "unsigned", "using",     "virtual",  "void",     "volatile", "while",  "xor",    "kCount"};
  return words;
}

// activities -> Activities, summary_op_shapes -> SummaryOpShapes.
std::string type_name(const std::string& table) {
  std::string out;
  bool upper = true;
  for (char c : table) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    upper = false;
  }
  return out;
}

// A C++ raw string literal of TEXT.
std::string raw_literal(const std::string& text) {
  if (text.find(")schema\"") != std::string::npos) die("a statement holds the raw-string delimiter");
  return "R\"schema(" + text + ")schema\"";
}

std::string role_enumerator(const std::string& role, const std::string& table) {
  if (role == "job") return "Role::kJob";
  if (role == "description") return "Role::kDescription";
  if (role == "events") return "Role::kEvents";
  if (role == "summary") return "Role::kSummary";
  die("table " + table + ": @role " +
      (role.empty() ? "missing" : "'" + role + "' is none of job, description, events, summary"));
}

void write_table(std::ostream& out, const TableDecl& t) {
  const std::string type = type_name(t.name);
  out << "struct " << type << " {\n";
  out << "  static constexpr const char* kName = \"" << t.name << "\";\n";
  out << "  static constexpr Role kRole = " << role_enumerator(t.role, t.name) << ";\n";
  out << "  static constexpr const char* kCreate = " << raw_literal(t.create_sql) << ";\n";
  out << "  enum Index : int {";
  for (const ColumnDecl& c : t.columns)
    out << " " << c.name << (cpp_keywords().count(c.name) ? "_" : "") << ",";
  out << " kCount };\n";
  out << "  static constexpr Column kColumns[] = {\n";
  for (const ColumnDecl& c : t.columns) {
    const bool required = (c.not_null || c.primary_key) && !c.optional;
    out << "      {\"" << c.name << "\", sql::Affinity::" << affinity_of(c.type) << ", "
        << (required ? "true" : "false") << ", " << (c.clock ? "true" : "false") << ", "
        << (c.optional ? "true" : "false") << "},\n";
  }
  out << "  };\n};\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) die("usage: schema_codegen SCHEMA.sql OUTPUT.hpp");
  std::ifstream in(argv[1]);
  if (!in) die(std::string("cannot read ") + argv[1]);
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  // The index statements follow the tables; they describe access paths, not tables.
  const std::string tables_text = text.substr(0, text.find("-- @indexes"));

  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) die("cannot open an in-memory database");
  char* error = nullptr;
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK)
    die(std::string(argv[1]) + ": " + (error ? error : "does not run"));

  // Statements end where SQLite says one is complete (a ';' inside a comment does not end one).
  std::vector<TableDecl> tables;
  std::istringstream lines(tables_text);
  std::string line, statement, role;
  int number = 0, statement_line = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string trimmed = trim(line);
    if (statement.empty()) {
      if (trimmed.rfind("-- @role ", 0) == 0) role = trim(std::string_view(trimmed).substr(9));
      if (trimmed.empty() || trimmed.rfind("--", 0) == 0) continue;
      statement_line = number;
    }
    statement += line + "\n";
    if (!sqlite3_complete(statement.c_str())) continue;
    if (statement.rfind("CREATE TABLE ", 0) == 0) {
      TableDecl t;
      const auto name_start = std::string_view("CREATE TABLE ").size();
      t.name = statement.substr(name_start, statement.find_first_of(" (", name_start) - name_start);
      t.role = role;
      t.create_sql = statement.substr(0, statement.find_last_not_of("\n") + 1);
      read_columns(db, t);
      read_column_tags(t, statement_line);
      tables.push_back(std::move(t));
    } else if (statement.rfind("CREATE VIEW ", 0) != 0) {
      die("line " + std::to_string(statement_line) + ": a statement that is neither a table nor a view");
    }
    statement.clear();
    role.clear();
  }
  sqlite3_close(db);

  std::ostringstream out;
  out << "// Generated from profiler/schema.sql by profiler/schema_codegen.cpp at build time: edit "
         "schema.sql.\n"
         "#pragma once\n\n#include \"profiler/schema_column.hpp\"\n\nnamespace meshscope::schema::declared "
         "{\n\n";
  for (const TableDecl& t : tables) write_table(out, t);
  out << "// Every table, in schema order.\ninline constexpr TableDescription kAllTables[] = {\n";
  for (const TableDecl& t : tables) {
    const std::string type = type_name(t.name);
    out << "    {" << type << "::kName, " << type << "::kRole, " << type << "::kColumns, " << type
        << "::kCreate},\n";
  }
  out << "};\n\n}  // namespace meshscope::schema::declared\n";

  // Rewritten only when its text changes: an edit of schema.sql that changes no description (a table's
  // preamble) recompiles nothing (the generator then runs again at each build until the header changes: ms).
  std::ifstream old(argv[2]);
  std::stringstream previous;
  previous << old.rdbuf();
  if (old && previous.str() == out.str()) return 0;
  old.close();
  std::ofstream file(argv[2], std::ios::trunc);
  file << out.str();
  if (!file) die(std::string("cannot write ") + argv[2]);
  return 0;
}
