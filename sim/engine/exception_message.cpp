#include "sim/engine/exception_message.hpp"

#include <new>

namespace cclmesh::sim {

std::string exception_message(const std::exception_ptr& error, HostMemoryUse use) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    // The host's memory, not the simulated mesh's (review41, session 41: "simulation error at
    // 1.130 ms: std::bad_alloc" read as a fault of the model). A timing-only device was told to
    // run without data too, which it already does (session 42).
    if (use == HostMemoryUse::TimingOnly) {
      return "the host ran out of memory (std::bad_alloc): this process holds every chip's state, its kernels and "
             "its events (timing only: no data); expected a smaller mesh (fewer chips) or a smaller size";
    }
    return "the host ran out of memory (std::bad_alloc): this process holds every chip's buffers (with data, their "
           "bytes), its kernels and its events; expected a smaller size, fewer chips, or no data (timing only)";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "unknown exception";
}

}  // namespace cclmesh::sim
