#pragma once
// The text of a captured exception, for a failure report: the engine's when a process or fiber
// fails, a fiber's when an exception leaves it during its teardown.

#include <cstdint>
#include <exception>
#include <string>

namespace cclmesh::sim {

// What the simulation holds as host bytes, so that a std::bad_alloc gives the way out that applies:
// a device with data can run timing-only; one without (timing only) holds no data to drop.
enum class HostMemoryUse : std::uint8_t { WithData, TimingOnly };

// what() of a std::exception, else "unknown exception"; a std::bad_alloc says it is the host's
// memory and the way out for `use`.
std::string exception_message(const std::exception_ptr& error, HostMemoryUse use = HostMemoryUse::WithData);

}  // namespace cclmesh::sim
