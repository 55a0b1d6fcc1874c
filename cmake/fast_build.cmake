# The "fast" build of the simulator (scripts/build_fast.sh, `make fast`): link-time optimisation
# and profile-guided optimisation (GCC's -fprofile-generate / -fprofile-use). Neither changes
# what the simulator computes (same source, same IEEE arithmetic: -O3 without -ffast-math, and
# no -march so the binary runs on any x86-64), only how fast it runs: measured on the T3K
# 256 MiB timing-only all_gather, LTO alone 6% less host time, LTO + PGO 21% less
# (docs/performance.md, "The fast build").
#
#   CCLMESH_LTO=ON          interprocedural optimisation of every target
#   CCLMESH_PGO=generate    instrument: each run adds to the .gcda files next to the objects
#   CCLMESH_PGO=use         optimise with those profiles (objects without one compile as usual)
option(CCLMESH_LTO "Link-time optimisation (the fast build)" OFF)
set(CCLMESH_PGO "" CACHE STRING "Profile-guided optimisation stage: empty, generate or use")
set_property(CACHE CCLMESH_PGO PROPERTY STRINGS "" generate use)

if(CCLMESH_LTO)
  include(CheckIPOSupported)
  check_ipo_supported(RESULT lto_supported OUTPUT lto_error LANGUAGES CXX)
  if(NOT lto_supported)
    message(FATAL_ERROR "CCLMESH_LTO=ON, but the compiler cannot do link-time optimisation: ${lto_error}")
  endif()
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
endif()

if(CCLMESH_PGO STREQUAL "generate")
  # The simulator is single-threaded (DESIGN.md): plain counter updates are enough.
  add_compile_options(-fprofile-generate -fprofile-update=single)
  add_link_options(-fprofile-generate)
elseif(CCLMESH_PGO STREQUAL "use")
  # Partial training: code the training runs never reached is optimised as without a profile,
  # not as cold. -Wno-missing-profile: objects the training did not link (tests) have none.
  add_compile_options(-fprofile-use -fprofile-partial-training -fprofile-correction -Wno-missing-profile)
elseif(NOT CCLMESH_PGO STREQUAL "")
  message(FATAL_ERROR "CCLMESH_PGO is '${CCLMESH_PGO}'; expected empty, generate or use")
endif()
