// The object of cclmesh_test_pch, the target that owns the tests' precompiled header
// (tests/CMakeLists.txt). CMake needs a source to build a target; nothing links this one.
