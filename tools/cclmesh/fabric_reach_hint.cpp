#include "tools/cclmesh/fabric_reach_hint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "sim/device/fabric_reembed.hpp"
#include "tools/cclmesh/sim_device_options.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;

std::string route_length_hint(const RunOptions& options, const topo::Topology& topology, std::uint32_t n_chips,
                              std::string_view refusal) {
  const bool whole_system = !options.cluster_axis && options.chips.empty();
  const bool past_reach = refusal.find(fmt::format("at most {}", ccl::kMaxFabricHops)) != std::string_view::npos;
  if (!whole_system || !past_reach || n_chips <= ccl::kMaxFabricHops + 1) return "";
  // --cluster-axis A groups the chips along mesh dimension A (0 or 1), extent(A) chips each.
  std::vector<int> axes;
  if (const auto& shape = topology.mesh_shape()) {
    for (int axis = 0; axis < std::min(shape->rank(), 2); ++axis) {
      const std::int32_t extent = shape->extent(axis);
      if (extent >= 2 && extent <= static_cast<std::int32_t>(ccl::kMaxFabricHops) + 1) axes.push_back(axis);
    }
  }
  // A ring no other ring avoids a down link by runs as a line around it (fabric_reembed.hpp),
  // whose multicasts reach further than a ring's: say why the group is a line.
  std::string as_line;
  if (options.topology == "ring") {
    const sim::device::SimMeshDeviceOptions config = device_options(options, true, nullptr);
    try {
      const runtime::FabricOptions fabric = sim::device::fabric_around_down_links(topology, config.fabric, config.faults);
      if (fabric.scope == runtime::FabricScope::System && !fabric.down_edges.empty()) {
        std::string specs;
        for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
          if (fault.at == sim::SimTime::zero()) specs += (specs.empty() ? "" : ", ") + fault.spec;
        }
        as_line = fmt::format(" (a line: the ring runs as one around {}, which no other ring avoids)", specs);
      }
    } catch (const std::exception&) {  // a fabric that cannot be laid was refused before the op was built
    }
  }
  const std::string past = fmt::format("; {}'s whole-system group of {} chips{} is past the 1D fabric's reach: ",
                                       options.system, n_chips, as_line);
  if (axes.size() == 2) return past + "run it along one axis of the mesh (--cluster-axis 0 or 1) or on fewer chips (--chips)";
  if (axes.size() == 1) {
    return past + fmt::format("run it along axis {} of the mesh (--cluster-axis {}: groups of {} chips) or on fewer "
                              "chips (--chips)",
                              axes.front(), axes.front(), topology.mesh_shape()->extent(axes.front()));
  }
  return past + fmt::format("run it on at most {} chips (--chips); no --cluster-axis of it has groups of 2 to {}",
                            ccl::kMaxFabricHops + 1, ccl::kMaxFabricHops + 1);
}

}  // namespace cclmesh::cli::detail
