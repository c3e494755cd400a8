# Finds what the in-process collectors need from the CUDA toolkit — CUPTI's headers and library — without CMake's
# FindCUDAToolkit: Debian 12's stock module (CMake 3.25.1) stops at configure on CUDA 13, which ships no
# libnvToolsExt (its line 1088 sets a property on a target it never made), and it looks for nvcc on PATH first.
# The NCCL profiler plugin needs nothing from here (its ABI is in collectors/nccl/nccl_profiler_abi.h).
#
# Roots, in order: -DMESHSCOPE_CUDA_ROOT=..., $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, then the system folders
# (Debian's nvidia-cuda-toolkit and libcupti-dev install there). Sets:
#   MESHSCOPE_CUPTI_FOUND        TRUE when both the header and the library were found
#   MESHSCOPE_CUPTI_INCLUDE_DIR  the folder holding cupti.h
#   MESHSCOPE_CUPTI_LIBRARY      libcupti.so
#   MESHSCOPE_CUPTI_SONAME       libcupti.so.N, the name the dynamic loader looks for (CUDA's major version)
#   MESHSCOPE_CUPTI_LIBRARY_DIR  the folder of libcupti (the injection library's RUNPATH)
#   MESHSCOPE_CUDA_LIBRARY_DIR   the toolkit's library folder (where libnccl may be), or empty
# and the imported targets meshscope::cupti (library and headers) and meshscope::cupti_headers.
set(MESHSCOPE_CUDA_ROOT "" CACHE PATH "CUDA toolkit root (default: \$CUDA_HOME, \$CUDA_PATH, /usr/local/cuda)")
option(MESHSCOPE_CUDA "Build the CUDA collector when CUPTI is found" ON)

set(MESHSCOPE_CUPTI_FOUND FALSE)
if(NOT MESHSCOPE_CUDA)
  return()
endif()

set(_meshscope_cuda_roots)
foreach(_root "${MESHSCOPE_CUDA_ROOT}" "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}" /usr/local/cuda)
  if(_root AND IS_DIRECTORY "${_root}")
    list(APPEND _meshscope_cuda_roots "${_root}")
  endif()
endforeach()

find_path(MESHSCOPE_CUPTI_INCLUDE_DIR cupti.h
  HINTS ${_meshscope_cuda_roots}
  PATH_SUFFIXES include extras/CUPTI/include targets/x86_64-linux/include targets/sbsa-linux/include)
find_library(MESHSCOPE_CUPTI_LIBRARY NAMES cupti
  HINTS ${_meshscope_cuda_roots}
  PATH_SUFFIXES lib64 lib extras/CUPTI/lib64 targets/x86_64-linux/lib targets/sbsa-linux/lib)
# cupti.h includes the driver API's cuda.h, which sits in the toolkit's include folder when CUPTI is in extras/.
find_path(MESHSCOPE_CUDA_INCLUDE_DIR cuda.h
  HINTS ${_meshscope_cuda_roots}
  PATH_SUFFIXES include targets/x86_64-linux/include targets/sbsa-linux/include)
mark_as_advanced(MESHSCOPE_CUPTI_INCLUDE_DIR MESHSCOPE_CUPTI_LIBRARY MESHSCOPE_CUDA_INCLUDE_DIR)

set(MESHSCOPE_CUDA_LIBRARY_DIR "")
foreach(_root IN LISTS _meshscope_cuda_roots)
  foreach(_suffix lib64 lib)
    if(NOT MESHSCOPE_CUDA_LIBRARY_DIR AND IS_DIRECTORY "${_root}/${_suffix}")
      set(MESHSCOPE_CUDA_LIBRARY_DIR "${_root}/${_suffix}")
    endif()
  endforeach()
endforeach()

if(NOT MESHSCOPE_CUPTI_INCLUDE_DIR OR NOT MESHSCOPE_CUDA_INCLUDE_DIR OR NOT MESHSCOPE_CUPTI_LIBRARY)
  message(STATUS "CUPTI not found (looked in: ${_meshscope_cuda_roots} and the system folders): "
                 "the CUDA collector is not built")
  return()
endif()

# The soname is libcupti.so.<CUDA major>; the real file may carry a year-based version (CUDA 12: libcupti.so.2024.x),
# so take the shortest libcupti.so.N beside the library rather than resolving the symlink.
get_filename_component(MESHSCOPE_CUPTI_LIBRARY_DIR "${MESHSCOPE_CUPTI_LIBRARY}" DIRECTORY)
file(GLOB _meshscope_cupti_names RELATIVE "${MESHSCOPE_CUPTI_LIBRARY_DIR}" "${MESHSCOPE_CUPTI_LIBRARY_DIR}/libcupti.so.*")
set(MESHSCOPE_CUPTI_SONAME "")
foreach(_name IN LISTS _meshscope_cupti_names)
  if(_name MATCHES "^libcupti\\.so\\.[0-9]+$")
    string(LENGTH "${_name}" _length)
    string(LENGTH "${MESHSCOPE_CUPTI_SONAME}" _best)
    if(NOT MESHSCOPE_CUPTI_SONAME OR _length LESS _best)
      set(MESHSCOPE_CUPTI_SONAME "${_name}")
    endif()
  endif()
endforeach()
if(NOT MESHSCOPE_CUPTI_SONAME)
  message(STATUS "CUPTI at ${MESHSCOPE_CUPTI_LIBRARY} has no libcupti.so.N beside it: the CUDA collector is not built")
  return()
endif()
string(REGEX REPLACE "^libcupti\\.so\\." "" MESHSCOPE_CUPTI_SONAME_VERSION "${MESHSCOPE_CUPTI_SONAME}")

if(NOT TARGET meshscope::cupti)
  add_library(meshscope::cupti SHARED IMPORTED)
  set_target_properties(meshscope::cupti PROPERTIES
    IMPORTED_LOCATION "${MESHSCOPE_CUPTI_LIBRARY}"
    IMPORTED_SONAME "${MESHSCOPE_CUPTI_SONAME}"
    INTERFACE_INCLUDE_DIRECTORIES "${MESHSCOPE_CUPTI_INCLUDE_DIR};${MESHSCOPE_CUDA_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${MESHSCOPE_CUPTI_INCLUDE_DIR};${MESHSCOPE_CUDA_INCLUDE_DIR}")
  # The headers alone, for code that reads CUPTI records but must not load libcupti (translation, test doubles).
  add_library(meshscope::cupti_headers INTERFACE IMPORTED)
  set_target_properties(meshscope::cupti_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MESHSCOPE_CUPTI_INCLUDE_DIR};${MESHSCOPE_CUDA_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${MESHSCOPE_CUPTI_INCLUDE_DIR};${MESHSCOPE_CUDA_INCLUDE_DIR}")
endif()
set(MESHSCOPE_CUPTI_FOUND TRUE)
message(STATUS "CUPTI: ${MESHSCOPE_CUPTI_LIBRARY} (${MESHSCOPE_CUPTI_SONAME}), headers in ${MESHSCOPE_CUPTI_INCLUDE_DIR}")
