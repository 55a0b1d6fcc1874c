# ctest's install_package test (cmake -P): installs the build tree into a fresh prefix, builds
# examples/ against it as a downstream project would (find_package(cclmesh), nothing from the
# tree), runs the examples, and checks that installed programs read the installed data files.
#
#   -DBUILD_DIR=<the build tree> -DSOURCE_DIR=<the source tree> -DWORK_DIR=<scratch folder>
#   -DGENERATOR=<CMake generator> -DCXX_COMPILER=<compiler> -DEXAMPLES=<example,targets>

foreach(variable BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER EXAMPLES)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "install_package_test.cmake: -D${variable}=... is missing")
  endif()
endforeach()

string(REPLACE "," ";" EXAMPLES "${EXAMPLES}")
set(prefix "${WORK_DIR}/prefix")
set(consumer "${WORK_DIR}/examples-build")
file(REMOVE_RECURSE "${WORK_DIR}")

# Runs a command; stops the test naming it when its exit code is not `expected` (0 by default:
# a number, or NONZERO).
function(run what)
  cmake_parse_arguments(R "" "EXPECT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT DEFINED R_EXPECT)
    set(R_EXPECT 0)
  endif()
  if((R_EXPECT STREQUAL "NONZERO" AND code EQUAL 0) OR (NOT R_EXPECT STREQUAL "NONZERO" AND NOT code EQUAL R_EXPECT))
    message(FATAL_ERROR "${what}: exit code ${code}, expected ${R_EXPECT}\n${R_COMMAND}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: exit code ${code}\n${out}${err}")
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

run("install" COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(file bin/cclmesh lib/cmake/cclmesh/cclmeshConfig.cmake lib/cmake/cclmesh/cclmeshTargets.cmake
        include/cclmesh/sim/device/sim_mesh_device.hpp include/cclmesh/kernels/api/dataflow_api.hpp
        share/cclmesh/arch/wormhole_b0.yaml share/cclmesh/systems/t3k.yaml
        share/cclmesh/ecosystem/soc_descriptors/wormhole_b0_8x10.yaml)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "install: ${prefix}/${file} is missing")
  endif()
endforeach()

# The downstream project: examples/ on its own, finding cclmesh in the prefix only.
run("configure examples against the installed package"
  COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples" -B "${consumer}" -G "${GENERATOR}"
          -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}"
          -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
# The package must hand out the installed headers only: no include path into the source tree.
file(READ "${consumer}/compile_commands.json" commands)
foreach(flag "-I${SOURCE_DIR} " "-isystem ${SOURCE_DIR} ")
  string(FIND "${commands}" "${flag}" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "configure examples: the compile commands include '${flag}', the source tree")
  endif()
endforeach()
run("build the examples" COMMAND ${CMAKE_COMMAND} --build "${consumer}" -j 1)
foreach(example IN LISTS EXAMPLES)
  run("run ${example}" COMMAND "${consumer}/${example}")
  # The installed data folder is complete: the example runs on it alone.
  run("run ${example} on the installed data" COMMAND ${CMAKE_COMMAND} -E env "CCLMESH_DATA_DIR=${prefix}/share/cclmesh"
      "${consumer}/${example}")
endforeach()

# An installed program reads the installed data, not the source tree's: the installed cclmesh
# runs, and fails naming the installed file once that file is gone.
set(cli_args run --system t3k --op all_gather --size 64KiB)
set(cli_run "${prefix}/bin/cclmesh" ${cli_args})
run("installed cclmesh" COMMAND ${cli_run})
set(installed_row "${last_output}")
run("build tree's cclmesh" COMMAND "${BUILD_DIR}/tools/cclmesh/cclmesh" ${cli_args})
if(NOT installed_row STREQUAL last_output)
  message(FATAL_ERROR "the installed cclmesh printed\n${installed_row}\nthe build tree's\n${last_output}")
endif()
set(arch_file "${prefix}/share/cclmesh/arch/wormhole_b0.yaml")
file(RENAME "${arch_file}" "${arch_file}.moved")
run("installed cclmesh without its arch file" EXPECT NONZERO COMMAND ${cli_run})
file(RENAME "${arch_file}.moved" "${arch_file}")
string(FIND "${last_output}" "${arch_file}" named)
if(named EQUAL -1)
  message(FATAL_ERROR "installed cclmesh without its arch file: the error does not name ${arch_file}:\n${last_output}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
