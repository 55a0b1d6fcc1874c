#pragma once
// A range of a device's kernel profile (MeshDevice::profile_since) starts at an entry the
// profile has reached. One check and one message for every side that makes it: each backend,
// and a served device's server in its session's numbering (docs/remote_device.md).

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cclmesh::runtime {

// std::invalid_argument "profile_since: entry K is past the profile's N entries ..." unless
// first_entry <= size (first_entry == size: the empty range, an op that ran no kernel yet).
inline void require_profile_entry(std::size_t first_entry, std::size_t size) {
  if (first_entry <= size) return;
  throw std::invalid_argument("profile_since: entry " + std::to_string(first_entry) + " is past the profile's " +
                              std::to_string(size) +
                              " entries; expected at most profile_size() (an index taken before a reset?)");
}

}  // namespace cclmesh::runtime
