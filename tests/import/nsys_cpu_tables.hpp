// The CPU side of an Nsight Systems export as `nsys export --type sqlite` declares it (2024-2026 schema): the
// OS runtime calls (--trace=osrt), thread scheduling (--cpuctxsw) and CPU samples with their call chains
// (--sample). Tests and benchmarks that build exports with a CPU side create these tables.
#pragma once

namespace meshscope::test {

inline constexpr const char* kNsysOsRuntimeTable =
    "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
    " globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER,"
    " callchainId INTEGER NOT NULL);";

inline constexpr const char* kNsysSchedulingAndSampleTables =
    "CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL, isSchedIn INTEGER NOT NULL,"
    " globalTid INTEGER);"
    "CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,"
    " threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);"
    "CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT "
    "NULL, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP "
    "INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));";

}  // namespace meshscope::test
