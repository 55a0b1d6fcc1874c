#include "runtime/device/host_copy_check.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cclmesh::runtime {

void require_whole_buffer(std::string_view call, const BufferHandle& buffer, std::uint64_t bytes) {
  if (bytes != buffer.config.size_bytes) {
    throw std::invalid_argument(fmt::format("{}: {} B for a buffer of {} B", call, bytes, buffer.config.size_bytes));
  }
}

}  // namespace cclmesh::runtime
