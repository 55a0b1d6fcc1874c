# What `cmake --install` puts where, and the CMake package a downstream project finds with
# find_package(cclmesh) (docs/library.md, "Installing and find_package"):
#
#   bin/cclmesh                                the CLI
#   lib/libcclmesh_*.a                         the libraries, as cclmesh::<name> targets
#   include/cclmesh/{kernels,topologies,sim,runtime}/...   every header, at its source path, so
#                                              `#include "runtime/ccl/..."` reads as in the tree
#   share/cclmesh/{systems,arch,ecosystem/soc_descriptors}  the data files read at run time
#                                              (topologies/data_paths.hpp finds them)
#   lib/cmake/cclmesh/cclmesh{Config,ConfigVersion,Targets}.cmake
#
# The libraries are static, so the package also finds what they link privately (yaml-cpp):
# a consumer's link needs it even though no public header includes it.

include(CMakePackageConfigHelpers)

# The libraries a user links, lowest layer first; each exported as cclmesh::<EXPORT_NAME>,
# the same names as the in-tree ALIAS targets, so examples/ builds either way.
set(cclmesh_installed_libraries
  cclmesh_check cclmesh_kernels cclmesh_topologies cclmesh_runtime cclmesh_remote cclmesh_sim)
foreach(library IN LISTS cclmesh_installed_libraries)
  string(REPLACE "cclmesh_" "" export_name "${library}")
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${export_name})
  # The public headers are C++20 (std::span, defaulted comparisons): say so to consumers.
  target_compile_features(${library} PUBLIC cxx_std_20)
  # Objects built with the sanitizers need their runtimes in whatever links them (make test-asan
  # runs install_package too).
  if(CCLMESH_SANITIZE)
    target_link_options(${library} INTERFACE -fsanitize=address,undefined)
  endif()
endforeach()

set(cclmesh_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/cclmesh")

install(TARGETS ${cclmesh_installed_libraries}
  EXPORT cclmeshTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cclmesh)
install(TARGETS cclmesh RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: every one of the installed libraries' folders. The op builders' headers include the
# layers below them, so there is no smaller public set (docs/library.md says which are stable).
# wait_chain_builder.hpp and sim_mesh_device_detail.hpp are internal to sim/device's wait_chain*.cpp
# and sim_mesh_device*.cpp: no installed header includes them.
foreach(folder kernels topologies sim runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cclmesh/${folder}
    FILES_MATCHING PATTERN "*.hpp"
    PATTERN "wait_chain_builder.hpp" EXCLUDE
    PATTERN "sim_mesh_device_detail.hpp" EXCLUDE)
endforeach()

# Data files, laid out as topologies/data_paths.hpp's installed data folder.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/topologies/systems/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cclmesh/systems FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sim/model/arch/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cclmesh/arch FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${CCLMESH_SHARED_DIR}/ecosystem/soc_descriptors/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cclmesh/ecosystem/soc_descriptors FILES_MATCHING PATTERN "*.yaml")
# Where the SoC descriptors come from and under which licence.
install(FILES ${CCLMESH_SHARED_DIR}/ecosystem/NOTICE.md DESTINATION ${CMAKE_INSTALL_DATADIR}/cclmesh/ecosystem)

install(EXPORT cclmeshTargets NAMESPACE cclmesh:: DESTINATION ${cclmesh_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cclmeshConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cclmeshConfig.cmake INSTALL_DESTINATION ${cclmesh_cmake_dir})
# 0.x: a minor version may change the API (docs/library.md, "What is stable").
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cclmeshConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cclmeshConfig.cmake ${PROJECT_BINARY_DIR}/cclmeshConfigVersion.cmake
  DESTINATION ${cclmesh_cmake_dir})

# Installs into a scratch prefix and builds an example against it out of tree
# (cmake/install_package_test.cmake): 8 s here, so not labelled slow. It installs the built
# libraries and cclmesh, so it runs after the build as every test does.
if(CCLMESH_BUILD_TESTS AND CCLMESH_BUILD_EXAMPLES)
  add_test(NAME install_package
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DWORK_DIR=${PROJECT_BINARY_DIR}/install_package_test -DGENERATOR=${CMAKE_GENERATOR}
            "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}" -DEXAMPLES=run_all_gather,custom_command_stream
            -P ${PROJECT_SOURCE_DIR}/cmake/install_package_test.cmake)
endif()
