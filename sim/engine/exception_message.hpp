#pragma once
// The text of a captured exception, for a failure report: the engine's when a process or fiber
// fails, a fiber's when an exception leaves it during its teardown.

#include <exception>
#include <string>

namespace cclmesh::sim {

// what() of a std::exception, else "unknown exception"; a std::bad_alloc says it is the host's
// memory and the way out.
std::string exception_message(const std::exception_ptr& error);

}  // namespace cclmesh::sim
