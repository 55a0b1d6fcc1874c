#pragma once
// A range of a device's kernel profile (MeshDevice::profile_since) starts at an entry the
// profile has reached. One check and one message for every side that makes it: each backend,
// and a served device's server in its session's numbering (docs/remote_device.md).

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cclmesh::runtime {

// profile_since() of a range whose first entries the device dropped to bound its profile (a
// served session's, `cclmesh serve --max-profile-entries`): std::invalid_argument, as any range
// the profile cannot give, but its own type, so that a client can tell a bound set too low for
// what it reads (`run --device`: exit 2 naming the option) from a bad index of its own.
class ProfileEntriesDroppedError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// std::invalid_argument "profile_since: entry K is past the profile's N entries ..." unless
// first_entry <= size (first_entry == size: the empty range, an op that ran no kernel yet).
inline void require_profile_entry(std::size_t first_entry, std::size_t size) {
  if (first_entry <= size) return;
  throw std::invalid_argument("profile_since: entry " + std::to_string(first_entry) + " is past the profile's " +
                              std::to_string(size) +
                              " entries; expected at most profile_size() (an index taken before a reset?)");
}

}  // namespace cclmesh::runtime
