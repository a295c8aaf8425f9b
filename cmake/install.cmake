# cmake/install.cmake — what `cmake --install` puts where, and the two ways other projects
# find it: a CMake package (find_package(polis)) and a pkg-config file (polis.pc).
#
#   include/polis/*.h                     public headers
#   lib/libpolis.so*, lib/libpolis.a      the engine (kernel and modules), shared and static
#   lib/libpolis-record.{so*,a}           recordings (polis/record.h; needs zlib)
#   lib/libpolis-pixels.{so*,a}           frames (polis/pixels.h)
#   lib/polis/plugins/*.so                built-in plugins (polis_add_plugin installs them)
#   bin/polis                             the CLI
#   bin/polis-lua-test                    the Lua script test runner (docs/lua.md)
#   lib/pkgconfig/polis.pc, polis-record.pc, polis-pixels.pc
#   lib/cmake/polis/                      polisConfig.cmake, version file, exported targets
include(CMakePackageConfigHelpers)

set(POLIS_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/polis")

# Consumers link polis::polis (shared) or polis::polis_static, and polis::record,
# polis::pixels (or their _static variants) for recordings and frames.
set_target_properties(polis_shared PROPERTIES EXPORT_NAME polis)
set_target_properties(polis_static PROPERTIES EXPORT_NAME polis_static)
foreach(lib record pixels)
  set_target_properties(polis_${lib}_shared PROPERTIES EXPORT_NAME ${lib})
  set_target_properties(polis_${lib}_static PROPERTIES EXPORT_NAME ${lib}_static)
endforeach()

install(TARGETS polis_shared polis_static polis_record_shared polis_record_static
                polis_pixels_shared polis_pixels_static EXPORT polisTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS polis polis_lua_test RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/polis
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

install(EXPORT polisTargets NAMESPACE polis:: DESTINATION ${POLIS_CMAKE_INSTALL_DIR})
# The static library's private dependencies (Lua, cJSON, libffi) appear in the exported
# link interface as PkgConfig:: targets; polisConfig.cmake recreates them.
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/polisConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/polisConfig.cmake
  INSTALL_DESTINATION ${POLIS_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/polisConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/polisConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/polisConfigVersion.cmake
        DESTINATION ${POLIS_CMAKE_INSTALL_DIR})

# pkg-config paths are written relative to ${prefix} when they are under it, so a staged
# install (DESTDIR) or a moved prefix keeps working.
foreach(var LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${var}}")
    set(POLIS_PC_${var} "${CMAKE_INSTALL_${var}}")
  else()
    set(POLIS_PC_${var} "\${prefix}/${CMAKE_INSTALL_${var}}")
  endif()
endforeach()
# The prefix itself is found from the .pc file's own location, so `cmake --install --prefix`
# and a moved install give correct flags too.
file(RELATIVE_PATH POLIS_PC_PREFIX_REL "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" POLIS_PC_PREFIX_REL "${POLIS_PC_PREFIX_REL}")
set(POLIS_PC_PREFIX "\${pcfiledir}/${POLIS_PC_PREFIX_REL}")
foreach(pc polis polis-record polis-pixels)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${CMAKE_BINARY_DIR}/cmake/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/cmake/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
