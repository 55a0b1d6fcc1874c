# Project-wide compile options.
if(CCLMESH_SANITIZE)
  # Global, so every object (libraries, tests, tools) is instrumented alike.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(CCLMESH_ASAN=1)
endif()
if(CCLMESH_FUZZ)
  # Coverage counters in every object, not only in the fuzz targets' own files: libFuzzer steers
  # by the edges it sees, and the parsers it fuzzes live in the libraries. Without this it saw
  # only the target's file and the headers inlined there (fuzz_remote_protocol: 1576 counters).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Warnings for cclmesh's own targets (not for third-party code).
function(cclmesh_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 at -O3 reports impossible sizes inside std::string concatenation (GCC bug 105329).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CCLMESH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# cclmesh_add_test(NAME name SOURCES a.cpp ... LIBS lib ... [ARGS arg ...] [LABELS slow])
# ARGS are passed to the test executable by ctest (e.g. a --gtest_filter).
function(cclmesh_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;ARGS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  cclmesh_target_defaults(${T_NAME})
  # Test bodies pass locals into coroutine lambdas under the same names on purpose.
  target_compile_options(${T_NAME} PRIVATE -Wno-shadow)
  # Test objects at -O1 in optimised builds: two thirds of a from-scratch build's CPU went into
  # test objects, mostly gtest/gmock and fmt templates optimised at -O3 (docs/performance.md,
  # "Build time"). The libraries under test keep the build type's flags, so the simulations
  # the tests run are as fast as before. Debug and sanitizer builds keep -O0.
  target_compile_options(${T_NAME} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  # The checkout's paths come from cclmesh_test_source_tree (tests/source_tree.hpp), not from
  # defines here, so that test objects are the same in every checkout for the compiler cache.
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} cclmesh_test_source_tree GTest::gmock GTest::gtest_main)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

# cclmesh_add_test_entry(NAME name TARGET test_executable [ARGS arg ...] [LABELS slow])
# Another ctest entry of an executable made by cclmesh_add_test, e.g. its slow cases selected by
# a --gtest_filter and labelled slow, so `ctest -LE slow` skips them.
function(cclmesh_add_test_entry)
  cmake_parse_arguments(T "" "NAME;TARGET" "ARGS;LABELS" ${ARGN})
  add_test(NAME ${T_NAME} COMMAND ${T_TARGET} ${T_ARGS})
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
