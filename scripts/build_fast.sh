#!/usr/bin/env bash
# Builds the simulator for speed (`make fast`): link-time optimisation plus profile-guided
# optimisation, trained on a fixed set of simulated collectives (cmake/fast_build.cmake says
# what each stage sets). Three steps in one build directory:
#   1. build instrumented (CCLMESH_PGO=generate),
#   2. run the training set below: with GCC each run adds its counts to the .gcda files next to
#      the objects; with Clang each run writes a .profraw file, merged into one .profdata,
#   3. rebuild with those profiles (CCLMESH_PGO=use).
# The result computes exactly what the default build computes (the training set checks its data
# as every run does); only host time differs. The tests are not built here: `make test` is the
# project's check, in build/.
#
#   scripts/build_fast.sh [BUILD_DIR]     (default build-fast; JOBS=N for parallel jobs)
#   CXX=clang++ scripts/build_fast.sh     the compiler (default: CMake's choice, c++, i.e. GCC);
#                                         a build dir made with another compiler is reconfigured
#   TARGETS="cclmesh bench_sim_speed"     build only these in step 3 (default: every tool)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-build-fast}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
cclmesh="$dir/tools/cclmesh/cclmesh"
profile_dir="$dir/pgo"
read -r -a targets <<<"${TARGETS:-}"

# The compiler is fixed when a build dir is first configured: CXX names another one, start over.
if [[ -n "${CXX:-}" && -f "$dir/CMakeCache.txt" ]]; then
  cached="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")"
  wanted="$(command -v "$CXX" || echo "$CXX")"
  if [[ "$(realpath "$cached" 2>/dev/null || echo "$cached")" != "$(realpath "$wanted" 2>/dev/null || echo "$wanted")" ]]; then
    echo "== $dir was configured with $cached, CXX is $CXX: reconfiguring from scratch"
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
fi

configure() {
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCCLMESH_LTO=ON -DCCLMESH_PGO="$1" \
    -DCCLMESH_PGO_PROFILE="$(realpath -m "$profile_dir")/cclmesh.profdata" \
    -DCCLMESH_BUILD_TESTS=OFF >/dev/null
}

configure generate
compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")"
echo "== fast build 1/3: instrumented build in $dir with $compiler"
cmake --build "$dir" -j "$jobs" --target cclmesh
if "$compiler" --version | grep -q clang; then
  # The profile format is versioned: the llvm-profdata installed beside this clang, else clang's pick.
  profdata="$(dirname "$(realpath "$compiler")")/llvm-profdata"
  [[ -x "$profdata" ]] || profdata="$("$compiler" -print-prog-name=llvm-profdata)"
  command -v "$profdata" >/dev/null || { echo "build_fast.sh: clang's llvm-profdata not found" >&2; exit 1; }
else
  profdata=""
fi

echo "== fast build 2/3: training runs"
find "$dir" -name '*.gcda' -delete
rm -rf "$profile_dir" && mkdir -p "$profile_dir"
export LLVM_PROFILE_FILE="$profile_dir/cclmesh-%p.profraw"  # Clang's instrumented runs
# What the simulator spends its time on in users' runs: fabric rings (relay and multicast) and
# lines, the reductions, the legacy EDM, Galaxy axis groups, real data and timing-only. Sizes
# are small enough for a few seconds each, large enough for the steady state to dominate.
training=(
  "--system t3k --op all_gather --size 32MiB --no-data"
  "--system t3k --op all_gather --size 4MiB"
  "--system t3k --op all_gather --size 8MiB --ag-ring-algorithm multicast --no-data"
  "--system t3k --op all_gather --topology line --size 8MiB --no-data"
  "--system galaxy --cluster-axis 1 --topology line --op all_gather --size 32MiB --no-data"
  "--system galaxy --cluster-axis 0 --topology line --op all_gather --size 8MiB --no-data"
  "--system t3k --op reduce_scatter --topology line --size 4MiB"
  "--system t3k --op reduce_scatter --size 8MiB --no-data"
  "--system t3k --op all_reduce --size 2MiB"
  "--system n300 --op all_gather --topology line --size 8MiB"
  "--system t3k --op all_to_all --size 2MiB"
  "--system t3k --op broadcast --size 2MiB"
  "--system t3k --op all_gather --mode legacy --size 4MiB"
)
for args in "${training[@]}"; do
  echo "   cclmesh run $args"
  # shellcheck disable=SC2086  # each entry is a list of options
  "$cclmesh" run $args >/dev/null
done

if [[ -n "$profdata" ]]; then
  "$profdata" merge -o "$profile_dir/cclmesh.profdata" "$profile_dir"/*.profraw
fi

echo "== fast build 3/3: optimised build with the profiles"
configure use
cmake --build "$dir" -j "$jobs" ${targets[@]:+--target "${targets[@]}"}
echo "== fast build done: $cclmesh, $dir/tools/bench/bench_sim_speed"
