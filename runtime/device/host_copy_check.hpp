#pragma once
// A host write or read moves a buffer's whole size per chip (MeshDevice's contract). One check
// and one message for every side that makes it: a device at the call, a served device's client
// before it sends a write's bytes, its server before it reads them (docs/remote_device.md).

#include <cstdint>
#include <string_view>

#include "runtime/device/types.hpp"

namespace cclmesh::runtime {

// std::invalid_argument "`call`: N B for a buffer of M B" unless `bytes` is the buffer's size.
void require_whole_buffer(std::string_view call, const BufferHandle& buffer, std::uint64_t bytes);

}  // namespace cclmesh::runtime
