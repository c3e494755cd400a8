# The layers point one way (docs/ARCHITECTURE.md): app -> job -> collectors -> analysis -> profiler, and the
# model is pure. Each rule names a folder and the include prefixes its sources must not use; a violation
# prints the file, the line and the rule, and fails the test.
#   cmake -DSOURCE_DIR=<repository> -P check_layers.cmake
set(rules
    "profiler|app/ job/ collectors/ analysis/"
    "collectors|app/ job/ analysis/"
    "analysis|app/ job/ collectors/ sqlite3.h profiler/sqlite_util.hpp"
    "analysis/model|profiler/ analysis/measure/ analysis/compare/"
    "job|app/")
set(violations 0)
foreach(rule IN LISTS rules)
  string(REPLACE "|" ";" parts "${rule}")
  list(GET parts 0 folder)
  list(GET parts 1 forbidden)
  string(REPLACE " " ";" forbidden "${forbidden}")
  file(GLOB_RECURSE sources "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.h")
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^#include [\"<]")
    foreach(line IN LISTS includes)
      foreach(prefix IN LISTS forbidden)
        string(FIND "${line}" "\"${prefix}" quoted)
        string(FIND "${line}" "<${prefix}" angled)
        if(NOT quoted EQUAL -1 OR NOT angled EQUAL -1)
          file(RELATIVE_PATH shown "${SOURCE_DIR}" "${source}")
          message("${shown}: ${line}: ${folder}/ must not include ${prefix}")
          math(EXPR violations "${violations} + 1")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) against the layers")
endif()
message(STATUS "the layers point one way")
