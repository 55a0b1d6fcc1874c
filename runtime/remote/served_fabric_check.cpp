#include "runtime/remote/served_fabric_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/fabric_payload_bounds.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "runtime/remote/wire_codec.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::runtime::remote {

namespace {

// "t3k, chips 0..7" (or the ids listed where they are not a run).
std::string topology_named(const topo::Topology& topology) {
  const std::vector<topo::ChipId> ids = topology.chip_ids();
  const bool contiguous = !ids.empty() && static_cast<std::size_t>(ids.back() - ids.front() + 1) == ids.size();
  return fmt::format("{}, chips {}", topology.name(),
                     contiguous ? fmt::format("{}..{}", ids.front(), ids.back()) : fmt::format("{}", fmt::join(ids, ",")));
}

void require_chip(const topo::Topology& topology, ChipId chip, const std::string& field) {
  if (topology.has_chip(static_cast<topo::ChipId>(chip))) return;
  throw ProtocolError(fmt::format("{} names chip {}, which its topology ({}) lacks", field, chip,
                                  topology_named(topology)));
}

}  // namespace

void check_served_fabric(const FabricOptions& fabric, const topo::Topology& topology, const std::string& path) {
  for (const ChipId chip : fabric.chip_order) require_chip(topology, chip, path + ".chip_order");
  for (const auto& [a, b] : fabric.down_edges) {
    require_chip(topology, a, path + ".down_edges");
    require_chip(topology, b, path + ".down_edges");
  }
  // The bound of serve's and run's --fabric-payload, in every mode (legacy mode's all_reduce
  // sizes its local-sum packet by it): FabricPlan takes up to 65535, a size no Wormhole router has.
  if (fabric.max_payload_bytes < kMinFabricPayloadBytes || fabric.max_payload_bytes > kMaxFabricPayloadBytes) {
    throw ProtocolError(fmt::format("{}.max_payload_bytes: {} B; expected {}..{} B, what cclmesh serve --fabric-payload "
                                    "takes (REFERENCE 6.2)",
                                    path, fabric.max_payload_bytes, kMinFabricPayloadBytes, kMaxFabricPayloadBytes));
  }
  // The rest as the served device checked its own options when it was built: the same plan the
  // client's ops are built against (cached per thread, so the run's own plan costs nothing more).
  try {
    FabricPlan plan(topology, fabric);
  } catch (const std::invalid_argument& e) {  // FabricPlanError
    throw ProtocolError(fmt::format("{}: a fabric its topology ({}) cannot run: {}", path, topology_named(topology),
                                    e.what()));
  } catch (const topo::InputError& e) {  // EmbeddingError: no ring or line on the links asked
    throw ProtocolError(fmt::format("{}: a fabric its topology ({}) cannot run: {}", path, topology_named(topology),
                                    e.what()));
  }
}

}  // namespace cclmesh::runtime::remote
