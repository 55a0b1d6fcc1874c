#pragma once
// The smallest fabric packet payload cclmesh takes: the lower bound of run's and serve's
// --fabric-payload, and of a served device's fabric as a client holds it to the same range
// (runtime/remote/served_fabric_check.hpp). The upper bound, the hardware's, is
// kMaxFabricPayloadBytes (fabric_options.hpp, REFERENCE 6.2).

#include <cstdint>

namespace cclmesh::runtime {

inline constexpr std::uint32_t kMinFabricPayloadBytes = 64;

}  // namespace cclmesh::runtime
