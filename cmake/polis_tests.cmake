# cmake/polis_tests.cmake — one recipe for the C tests of the tree (docs/c-games.md, "Tests
# and the README"). Included by the top CMakeLists.txt before the plugins, rulesets and tests/.
#
#   polis_c_test(<target> SOURCES <src>...
#                [LABELS <label>...] [TIMEOUT <seconds>] [WORKING_DIRECTORY <dir>]
#                [INCLUDES <dir>...] [LIBS <lib>...] [DEFINES <def>...] [DEPENDS <target>...]
#                [PLUGIN_DIR <dir>])
#     A test program linked against the static libpolis, registered as the CTest test
#     <target>, run in WORKING_DIRECTORY (default: the source root). It sees tests/ (check.h,
#     testutil.h), include/ and the calling folder (a game's own headers), plus INCLUDES; it
#     links polis_static, Lua, cJSON, libffi, threads, libdl and libm, plus LIBS (e.g.
#     polis_pixels_static); it is compiled with
#       POLIS_TEST_PLUGIN_DIR  PLUGIN_DIR (default: build/plugins, the tree's plugins)
#       POLIS_PLUGIN_DIR       build/plugins
#       POLIS_SOURCE_DIR       the source root
#       POLIS_BINARY_DIR       the build root
#     as string literals, plus DEFINES; DEPENDS are built first (the plugins it loads).
#
#   polis_c_tests(DIR <dir> [PREFIX <prefix>] [EXCLUDE <stem>...] [EXTRA_SOURCES <src>...]
#                 <any option of polis_c_test but SOURCES>)
#     Every <dir>/test_*.c is one polis_c_test named <prefix><stem> (test_foo.c with PREFIX
#     gather_: gather_test_foo), compiled with EXTRA_SOURCES (a game's rules core) and the
#     same options. EXCLUDE leaves out stems (test_oracle without GLPK). A test that needs
#     more than the others gets it after the call: target_sources(gather_test_foo ...).
#
#   polis_test_program(<target> SOURCES <src>... <the build options of polis_c_test>)
#     The program alone, registered by the caller (a runner such as run_lua_tests, or a test
#     named apart from its program).
#
#   polis_test_plugin(<target> DIR <output dir> SOURCES <src>... [OUTPUT_NAME <name>])
#     A plugin the tests load (<name>.so in DIR, default name <target>): like
#     polis_add_plugin, but not installed and kept out of build/plugins.

set(POLIS_TEST_BUILD_ONE PLUGIN_DIR)
set(POLIS_TEST_BUILD_MULTI SOURCES INCLUDES LIBS DEFINES DEPENDS)
set(POLIS_TEST_RUN_ONE TIMEOUT WORKING_DIRECTORY)
set(POLIS_TEST_RUN_MULTI LABELS)

function(polis_test_program target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "${POLIS_TEST_BUILD_ONE}" "${POLIS_TEST_BUILD_MULTI}")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "polis_test_program(${target}): unknown ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "polis_test_program(${target}): no SOURCES given")
  endif()
  if(NOT DEFINED ARG_PLUGIN_DIR)
    set(ARG_PLUGIN_DIR "${POLIS_PLUGIN_BUILD_DIR}")
  endif()
  add_executable(${target} ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${ARG_INCLUDES} ${CMAKE_SOURCE_DIR}/tests
                             ${CMAKE_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} polis_static PkgConfig::LUA
                        PkgConfig::CJSON PkgConfig::FFI Threads::Threads ${CMAKE_DL_LIBS} m)
  target_compile_definitions(${target} PRIVATE
    POLIS_TEST_PLUGIN_DIR="${ARG_PLUGIN_DIR}"
    POLIS_PLUGIN_DIR="${POLIS_PLUGIN_BUILD_DIR}"
    POLIS_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    POLIS_BINARY_DIR="${CMAKE_BINARY_DIR}"
    ${ARG_DEFINES})
  if(ARG_DEPENDS)
    add_dependencies(${target} ${ARG_DEPENDS})
  endif()
endfunction()

# polis_test_args(<out> <prefix> <keyword>...): the parsed options <prefix>_<keyword> as an
# argument list again, to hand on to the next function.
function(polis_test_args out prefix)
  set(args)
  foreach(key ${ARGN})
    if(DEFINED ${prefix}_${key})
      list(APPEND args ${key} ${${prefix}_${key}})
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(polis_c_test target)
  # Every keyword is parsed here, so that a list ends where the next option starts.
  cmake_parse_arguments(PARSE_ARGV 1 ARG ""
    "${POLIS_TEST_BUILD_ONE};${POLIS_TEST_RUN_ONE}"
    "${POLIS_TEST_BUILD_MULTI};${POLIS_TEST_RUN_MULTI}")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "polis_c_test(${target}): unknown ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  polis_test_args(build ARG ${POLIS_TEST_BUILD_ONE} ${POLIS_TEST_BUILD_MULTI})
  polis_test_program(${target} ${build})
  if(NOT DEFINED ARG_WORKING_DIRECTORY)
    set(ARG_WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  endif()
  add_test(NAME ${target} COMMAND ${target} WORKING_DIRECTORY "${ARG_WORKING_DIRECTORY}")
  if(ARG_LABELS)
    set_tests_properties(${target} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
  if(DEFINED ARG_TIMEOUT)
    set_tests_properties(${target} PROPERTIES TIMEOUT "${ARG_TIMEOUT}")
  endif()
endfunction()

function(polis_c_tests)
  # polis_c_test's keywords are parsed here too (a list ends where the next option starts)
  # and handed on as they came.
  set(own_one DIR PREFIX)
  set(own_multi EXCLUDE EXTRA_SOURCES)
  set(pass_one ${POLIS_TEST_BUILD_ONE} ${POLIS_TEST_RUN_ONE})
  set(pass_multi ${POLIS_TEST_BUILD_MULTI} ${POLIS_TEST_RUN_MULTI})
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "${own_one};${pass_one}" "${own_multi};${pass_multi}")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "polis_c_tests: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DEFINED ARG_DIR)
    message(FATAL_ERROR "polis_c_tests: no DIR given")
  endif()
  if(DEFINED ARG_SOURCES)
    message(FATAL_ERROR "polis_c_tests: the sources are DIR's test_*.c (EXTRA_SOURCES for more)")
  endif()
  polis_test_args(pass ARG ${pass_one} ${pass_multi})
  if(NOT IS_ABSOLUTE "${ARG_DIR}")
    set(ARG_DIR "${CMAKE_CURRENT_SOURCE_DIR}/${ARG_DIR}")
  endif()
  file(GLOB tests CONFIGURE_DEPENDS "${ARG_DIR}/test_*.c")
  if(NOT tests)
    message(FATAL_ERROR "polis_c_tests: no test_*.c in ${ARG_DIR}")
  endif()
  foreach(src ${tests})
    get_filename_component(stem ${src} NAME_WE)
    if(NOT stem IN_LIST ARG_EXCLUDE)
      polis_c_test(${ARG_PREFIX}${stem} SOURCES ${src} ${ARG_EXTRA_SOURCES} ${pass})
    endif()
  endforeach()
endfunction()

function(polis_test_plugin target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "DIR;OUTPUT_NAME" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS OR NOT DEFINED ARG_DIR OR NOT ARG_SOURCES)
    message(FATAL_ERROR "polis_test_plugin(${target} DIR <dir> SOURCES <src>... [OUTPUT_NAME n])")
  endif()
  if(NOT DEFINED ARG_OUTPUT_NAME)
    set(ARG_OUTPUT_NAME ${target})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${ARG_OUTPUT_NAME}
    C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY "${ARG_DIR}")
endfunction()
