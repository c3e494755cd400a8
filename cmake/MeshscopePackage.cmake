# Installation and the Debian package (`./build.sh package`, or `cpack -G DEB` in a build folder).
#   PREFIX/bin/meshscope
#   PREFIX/lib/meshscope/libnccl-profiler-meshscope.so, libmeshscope_cupti.so  (where `record` looks, beside ../lib)
#   PREFIX/share/meshscope/assets/{hardware,models,sample}                     (analysis/model/presets.cpp finds
#                                                                               them relative to the executable;
#                                                                               sample/ has the traces and the
#                                                                               imported sample_job.msdb)
include(GNUInstallDirs)

install(TARGETS meshscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS meshscope_nccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/meshscope)
if(MESHSCOPE_CUPTI_FOUND)
  # The injection library loads the toolkit's libcupti: keep its folder as RUNPATH once installed (the build tree's
  # RUNPATH is dropped at install); LD_LIBRARY_PATH still takes precedence.
  set_target_properties(meshscope_cupti PROPERTIES INSTALL_RPATH "${MESHSCOPE_CUPTI_LIBRARY_DIR}")
  install(TARGETS meshscope_cupti LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/meshscope)
endif()
install(DIRECTORY ${MESHSCOPE_SOURCE_DIR}/assets/hardware ${MESHSCOPE_SOURCE_DIR}/assets/models
                  ${MESHSCOPE_SOURCE_DIR}/assets/sample
        DESTINATION ${CMAKE_INSTALL_DATADIR}/meshscope/assets)
install(FILES ${CMAKE_BINARY_DIR}/sample_job.msdb DESTINATION ${CMAKE_INSTALL_DATADIR}/meshscope/assets/sample)
install(FILES ${MESHSCOPE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${MESHSCOPE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} PATTERN screenshots EXCLUDE)

set(CPACK_PACKAGE_NAME meshscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "meshscope developers <meshscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "where a distributed training step goes, and what another parallelism layout would do")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Library dependencies are read from the binaries (dpkg-shlibdeps). libcupti is not a Debian package: it comes with
# the CUDA toolkit the CUDA collector is loaded beside, so shlibdeps is told where it is and not to require it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(MESHSCOPE_CUPTI_FOUND)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${MESHSCOPE_CUPTI_LIBRARY_DIR}")
endif()
# What the program needs at run time besides libraries: the front end's font, and sqlite3 for users' own queries.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "sqlite3, xvfb, xauth")
set(CPACK_GENERATOR DEB)
include(CPack)
