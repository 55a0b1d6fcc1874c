#include "sim/model/endpoint.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

void Endpoint::make_ports() {
  if (ports_[0] != nullptr) return;
  CCLMESH_CHECK(rates != nullptr && memory != nullptr, "an endpoint's ports need its NIU rates and memory");
  const std::string owner = fmt::format("chip {} core {}", chip, to_string(coord));
  for (int n = 0; n < kNocCount; ++n) {
    auto port = std::make_unique<NocPort>(owner, static_cast<NocId>(n), rates->inject, rates->absorb, request_slots);
    if (kind != TileKind::Dram) {
      port->set_activity(&memory->activity());
      memory->activity().add_source(*port);
    }
    ports_[static_cast<std::size_t>(n)] = std::move(port);
  }
}

}  // namespace cclmesh::sim
