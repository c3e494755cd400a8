// What the generated description of schema.sql (schema_declared.hpp, written at build time by
// schema_codegen.cpp) is made of: a column, a table's role in a profile, a table.
#pragma once

#include <span>

#include "profiler/sqlite_util.hpp"

namespace meshscope::schema {

struct Column {
  const char* name;
  sql::Affinity affinity;
  // Profile::load refuses a profile whose table lacks it; an optional column a profile lacks reads as NULL
  // (profiles of another schema version load what meshscope knows).
  bool required;
  // A time on the profile clock: it moves when a rank's clock is shifted.
  bool clock;
  // Added after profiles were first written ([optional] in schema.sql): a file may lack it, and reads it as
  // NULL.
  bool optional;
};

// What a table holds, and so what happens to it when ranks are renumbered, parts are merged or events
// dropped.
enum class Role {
  kJob,          // facts of the whole profile (meta, enums, strings)
  kDescription,  // what each rank is (ranks, devices, groups, streams, threads, diagnostics): kept in a part
  kEvents,       // what each rank did, with times on its clock: dropped from a part
  kSummary,      // the measured analysis per rank: kept in a part, copied by a merge
};

struct TableDescription {
  const char* name;
  Role role;
  std::span<const Column> columns;
  const char* create_sql;  // its CREATE TABLE statement in schema.sql, comments included
};

}  // namespace meshscope::schema
