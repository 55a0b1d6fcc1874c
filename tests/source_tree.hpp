#pragma once
// Where the tests find this checkout's source tree (fixtures, built-in systems, headers) and
// the shared/ folder beside it, from any working directory. The paths are compiled into
// source_tree.cpp alone: they differ per checkout, so on every test's command line they would
// keep the compiler cache (CCACHE_BASEDIR) from sharing any test object between checkouts.

#include <filesystem>

namespace cclmesh::testing {

std::filesystem::path source_dir();
std::filesystem::path shared_dir();

}  // namespace cclmesh::testing
