# Rules of the source tree (docs/ARCHITECTURE.md), each violation printed with its file and line:
# - the layers point one way: app -> job -> collectors -> analysis -> profiler, and the model is pure. Each
#   rule names a folder and the include prefixes its sources must not use;
# - comments say why, never which of this project's issues asked for the code (an issue number means nothing
#   to a reader of the tree; a cited source's own issue, "nccl-tests issue #267", is a citation and stays).
#   cmake -DSOURCE_DIR=<repository> -P check_tree.cmake
set(rules
    "profiler|app/ job/ collectors/ analysis/"
    "collectors|app/ job/ analysis/"
    # analysis/ takes its inputs in memory: none of profiler/'s readers and writers of files.
    "analysis|app/ job/ collectors/ sqlite3.h profiler/sqlite_util.hpp profiler/summary_store.hpp profiler/work_store.hpp profiler/rank_rows.hpp profiler/summarised_ranks.hpp profiler/profile_load.hpp profiler/profile_writer.hpp profiler/table_reader.hpp profiler/output_file.hpp"
    "analysis/model|profiler/ analysis/measure/ analysis/compare/"
    "job|app/"
    # The front ends speak no SQL: the user's query runs in profiler/user_query.hpp.
    "app|sqlite3.h profiler/sqlite_util.hpp")
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
file(GLOB_RECURSE sources "${SOURCE_DIR}/app/*" "${SOURCE_DIR}/analysis/*" "${SOURCE_DIR}/job/*"
     "${SOURCE_DIR}/collectors/*" "${SOURCE_DIR}/profiler/*" "${SOURCE_DIR}/tools/*" "${SOURCE_DIR}/tests/*.cpp"
     "${SOURCE_DIR}/tests/*.hpp" "${SOURCE_DIR}/tests/*.py" "${SOURCE_DIR}/tests/*.sh" "${SOURCE_DIR}/tests/*.cmake"
     "${SOURCE_DIR}/tests/*CMakeLists.txt")
foreach(source IN LISTS sources)
  if(NOT source MATCHES "\\.(cpp|hpp|h|py|sh|cmake|sql|txt)$")
    continue()
  endif()
  file(STRINGS "${source}" cited REGEX "[Ii]ssue #[0-9]")
  foreach(line IN LISTS cited)
    if(line MATCHES "[a-z]-tests issue #")
      continue()
    endif()
    file(RELATIVE_PATH shown "${SOURCE_DIR}" "${source}")
    message("${shown}: ${line}: a comment cites an issue number")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} line(s) against the rules of the tree")
endif()
message(STATUS "the layers point one way; no comment cites an issue number")
