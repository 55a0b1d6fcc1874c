# The "fast" build of the simulator (scripts/build_fast.sh, `make fast`): link-time optimisation
# and profile-guided optimisation. Neither changes what the simulator computes (same source, same
# IEEE arithmetic: -O3 without -ffast-math, and no -march so the binary runs on any x86-64), only
# how fast it runs: measured on the T3K 256 MiB timing-only all_gather, LTO alone 6% less host
# time, LTO + PGO 21% less (docs/performance.md, "The fast build").
#
# Two compilers, each with its own PGO scheme (docs/performance.md, "The fast build with clang"):
#   GCC    -fprofile-generate / -fprofile-use: .gcda files next to the objects; LTO via -flto.
#   Clang  -fprofile-instr-generate writes .profraw files (LLVM_PROFILE_FILE), which
#          `llvm-profdata merge` turns into one .profdata file for -fprofile-instr-use;
#          ThinLTO (CMake's IPO for Clang) linked by lld.
#
#   CCLMESH_LTO=ON          interprocedural optimisation of every target
#   CCLMESH_PGO=generate    instrument: each run adds to the profile (GCC: .gcda; Clang: .profraw)
#   CCLMESH_PGO=use         optimise with those profiles (objects without one compile as usual)
#   CCLMESH_PGO_PROFILE     Clang only: the merged .profdata file the use stage reads
#   CCLMESH_CLANG_LTO=thin  Clang only: ThinLTO (CMake's default for Clang) or full
option(CCLMESH_LTO "Link-time optimisation (the fast build)" OFF)
set(CCLMESH_PGO "" CACHE STRING "Profile-guided optimisation stage: empty, generate or use")
set_property(CACHE CCLMESH_PGO PROPERTY STRINGS "" generate use)
set(CCLMESH_CLANG_LTO "thin" CACHE STRING "Clang's link-time optimisation: thin or full")
set_property(CACHE CCLMESH_CLANG_LTO PROPERTY STRINGS thin full)
set(CCLMESH_PGO_PROFILE "${CMAKE_BINARY_DIR}/pgo/cclmesh.profdata" CACHE FILEPATH
  "Clang PGO: merged profile (llvm-profdata merge) read by CCLMESH_PGO=use")

if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(cclmesh_fast_compiler gnu)
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(cclmesh_fast_compiler clang)
elseif(CCLMESH_LTO OR NOT CCLMESH_PGO STREQUAL "")
  message(FATAL_ERROR "The fast build (CCLMESH_LTO/CCLMESH_PGO) knows GCC and Clang, not ${CMAKE_CXX_COMPILER_ID}")
endif()

if(cclmesh_fast_compiler STREQUAL "clang" AND (CCLMESH_LTO OR NOT CCLMESH_PGO STREQUAL ""))
  # Clang contracts a*b+c into an FMA by default (-ffp-contract=on) where the target has one;
  # baseline x86-64 has none, but say it: the fast build must compute bit for bit what GCC's does.
  add_compile_options(-ffp-contract=off)
endif()

if(CCLMESH_LTO)
  if(cclmesh_fast_compiler STREQUAL "clang")
    # GNU ld cannot read LLVM bitcode without the gold plugin; lld reads it natively.
    add_link_options(-fuse-ld=lld)
    set(CMAKE_REQUIRED_LINK_OPTIONS -fuse-ld=lld)
    if(CCLMESH_CLANG_LTO STREQUAL "full")
      set(CMAKE_CXX_COMPILE_OPTIONS_IPO -flto=full)
    elseif(NOT CCLMESH_CLANG_LTO STREQUAL "thin")
      message(FATAL_ERROR "CCLMESH_CLANG_LTO is '${CCLMESH_CLANG_LTO}'; expected thin or full")
    endif()
  endif()
  include(CheckIPOSupported)
  check_ipo_supported(RESULT lto_supported OUTPUT lto_error LANGUAGES CXX)
  if(NOT lto_supported)
    message(FATAL_ERROR "CCLMESH_LTO=ON, but the compiler cannot do link-time optimisation: ${lto_error}")
  endif()
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
endif()

if(CCLMESH_PGO STREQUAL "generate")
  if(cclmesh_fast_compiler STREQUAL "clang")
    # Where the .profraw files go is the run's choice (LLVM_PROFILE_FILE, build_fast.sh).
    add_compile_options(-fprofile-instr-generate)
    add_link_options(-fprofile-instr-generate)
  else()
    # The simulator is single-threaded (DESIGN.md): plain counter updates are enough.
    add_compile_options(-fprofile-generate -fprofile-update=single)
    add_link_options(-fprofile-generate)
  endif()
elseif(CCLMESH_PGO STREQUAL "use")
  if(cclmesh_fast_compiler STREQUAL "clang")
    if(NOT EXISTS "${CCLMESH_PGO_PROFILE}")
      message(FATAL_ERROR "CCLMESH_PGO=use, but there is no profile at ${CCLMESH_PGO_PROFILE} "
        "(scripts/build_fast.sh makes it with llvm-profdata merge)")
    endif()
    # -Wno-profile-instr-*: objects the training did not run (tests, other tools) have no counts.
    add_compile_options(-fprofile-instr-use=${CCLMESH_PGO_PROFILE}
      -Wno-profile-instr-unprofiled -Wno-profile-instr-missing -Wno-profile-instr-out-of-date)
    add_link_options(-fprofile-instr-use=${CCLMESH_PGO_PROFILE})
  else()
    # Partial training: code the training runs never reached is optimised as without a profile,
    # not as cold. -Wno-missing-profile: objects the training did not link (tests) have none.
    add_compile_options(-fprofile-use -fprofile-partial-training -fprofile-correction -Wno-missing-profile)
  endif()
elseif(NOT CCLMESH_PGO STREQUAL "")
  message(FATAL_ERROR "CCLMESH_PGO is '${CCLMESH_PGO}'; expected empty, generate or use")
endif()
