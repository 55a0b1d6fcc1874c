#include "sim/device/fabric_reembed.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::sim::device {
namespace {

bool embedding_uses_edge(const topo::Embedding& embedding, runtime::ChipId a, runtime::ChipId b) {
  const std::size_t n = embedding.chips.size();
  const std::size_t hops = embedding.kind == topo::EmbeddingKind::Ring ? n : n - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const auto x = static_cast<runtime::ChipId>(embedding.chips[i]);
    const auto y = static_cast<runtime::ChipId>(embedding.chips[(i + 1) % n]);
    if ((x == a && y == b) || (x == b && y == a)) return true;
  }
  return false;
}

// A per-axis fabric's rows and columns are fixed by the mesh: a ring (a torus row or column)
// with one down link runs as a line around it (the plan lays it, FabricOptions::down_edges); a
// down link on a line that does not close, or a second one on a ring, cuts a group, and the
// fabric spans every row and column whichever axis the op runs along, so the run stops there.
runtime::FabricOptions axis_fabric_around_down_links(const topo::Topology& topology, runtime::FabricOptions fabric,
                                                     const std::vector<const LinkDownFault*>& from_start) {
  for (const LinkDownFault* fault : from_start) {
    if (!topology.edge_between(static_cast<topo::ChipId>(fault->a), static_cast<topo::ChipId>(fault->b))) {
      throw std::invalid_argument(fmt::format("fault {}: chips {} and {} share no link", fault->spec, fault->a, fault->b));
    }
    fabric.down_edges.emplace_back(fault->a, fault->b);
  }
  const auto& shape = topology.mesh_shape();
  if (!shape) return fabric;  // the plan refuses a per-axis fabric without a mesh, saying so
  const bool ring = fabric.mode == runtime::FabricMode::Ring;
  for (int axis = shape->rank() - 1; axis >= 0; --axis) {
    for (const std::vector<topo::ChipId>& coordinates : topo::axis_groups(topology, axis)) {
      if (coordinates.size() < 2) continue;
      const std::vector<runtime::ChipId> group(coordinates.begin(), coordinates.end());
      const runtime::GroupRun run = runtime::group_run(topology, group, ring, fabric.down_edges);
      if (run.runs()) continue;
      std::string specs;
      for (const LinkDownFault* fault : from_start) {
        const bool cuts = std::any_of(run.cut_by.begin(), run.cut_by.end(), [&](const auto& e) {
          return (e.first == fault->a && e.second == fault->b) || (e.first == fault->b && e.second == fault->a);
        });
        if (cuts) specs += (specs.empty() ? "" : ", ") + fault->spec;
      }
      const std::string path = fmt::format("{}", fmt::join(group, "-")) + (run.ring ? fmt::format("-{}", group.front()) : "");
      throw runtime::DeviceError(
          runtime::DeviceError::Kind::Fault,
          fmt::format("fault {} at 0 s: the per-axis fabric's axis {} {} {} is cut by the down link(s) and cannot run: "
                      "{}; the per-axis fabric spans every row and column whichever axis the op runs along: run one "
                      "group on a fabric of its own chips (run --chips, in order) or on the whole system (run "
                      "without --cluster-axis)",
                      specs, axis, run.ring ? "ring" : "line", path,
                      run.ring ? "a ring runs as a line around one down link, not two"
                               : "a line with a down link has no path through its chips (a torus row or column runs "
                                 "as a line around one)"));
    }
  }
  return fabric;
}

// Without a fabric (legacy mode) each op lays its own groups over their own links: the device
// names every link down from the start (FabricOptions::down_edges), so that an op's builder,
// local or a served device's client, lays a ring with one on it as the line around it
// (runtime/ccl/common/legacy_groups.hpp) as the fabric would. Which groups the links cut depends
// on the op's groups: the run refuses those, not the device.
runtime::FabricOptions legacy_down_edges(const topo::Topology& topology, runtime::FabricOptions fabric,
                                         const std::vector<const LinkDownFault*>& from_start) {
  for (const LinkDownFault* fault : from_start) {
    if (!topology.edge_between(static_cast<topo::ChipId>(fault->a), static_cast<topo::ChipId>(fault->b))) {
      throw std::invalid_argument(fmt::format("fault {}: chips {} and {} share no link", fault->spec, fault->a, fault->b));
    }
    fabric.down_edges.emplace_back(fault->a, fault->b);
  }
  return fabric;
}

}  // namespace

// A link down from the start is a topology without that edge: when the fabric's default line or
// ring would cross it, the topologies' embedding search finds another one over the links left.
// A ring that no other ring avoids it by runs as a line around it, as a torus row does (ring:N,
// the T3K without 0-2): the plan opens it (down_edges) from the chip after the link, and an op's
// ranks stay in the ring's order.
runtime::FabricOptions fabric_around_down_links(const topo::Topology& topology, runtime::FabricOptions fabric,
                                                const FaultPlan& faults) {
  std::vector<const LinkDownFault*> from_start;
  for (const LinkDownFault& fault : faults.link_down) {
    if (fault.at == SimTime::zero()) from_start.push_back(&fault);
  }
  if (from_start.empty() || !fabric.chip_order.empty()) return fabric;
  if (fabric.mode == runtime::FabricMode::None) return legacy_down_edges(topology, fabric, from_start);
  const bool ring = fabric.mode == runtime::FabricMode::Ring;
  if (fabric.scope == runtime::FabricScope::Axes) return axis_fabric_around_down_links(topology, fabric, from_start);
  topo::Topology usable = topology;
  std::string specs;
  bool crossed = false;
  std::vector<std::pair<runtime::ChipId, runtime::ChipId>> down_edges;
  const topo::Embedding original = ring ? topo::find_system_ring(topology) : topo::find_system_line(topology);
  for (const LinkDownFault* fault : from_start) {
    try {
      usable = topo::without_edge(usable, static_cast<topo::ChipId>(fault->a), static_cast<topo::ChipId>(fault->b));
    } catch (const topo::InputError& e) {
      throw std::invalid_argument(fmt::format("fault {}: {}", fault->spec, e.what()));
    }
    crossed = crossed || embedding_uses_edge(original, fault->a, fault->b);
    specs += (specs.empty() ? "" : ", ") + fault->spec;
    down_edges.emplace_back(fault->a, fault->b);
  }
  if (!crossed) return fabric;
  try {
    const topo::Embedding embedding = ring ? topo::find_system_ring(usable) : topo::find_system_line(usable);
    fabric.chip_order.assign(embedding.chips.begin(), embedding.chips.end());
    return fabric;
  } catch (const topo::EmbeddingError& e) {
    std::string why_not_a_line;
    if (ring) {
      const std::vector<runtime::ChipId> chips(original.chips.begin(), original.chips.end());
      const runtime::GroupRun opened = runtime::group_run(topology, chips, true, down_edges);
      if (opened.runs()) {
        // The ring as found, pinned: the one whose down link was checked is the one the plan opens.
        fabric.chip_order = chips;
        fabric.down_edges = std::move(down_edges);
        return fabric;
      }
      std::string cut;
      for (const auto& [a, b] : opened.cut_by) cut += fmt::format("{}{}-{}", cut.empty() ? "" : ", ", a, b);
      why_not_a_line =
          fmt::format("; the ring runs as a line around one down link, not {} ({})", opened.cut_by.size(), cut);
      // Another line may still pass through every chip (the T3K without two links): name it, as
      // the what-if the user can run next.
      try {
        why_not_a_line += fmt::format("; a line avoids them ({}): run --topology line",
                                      topo::find_system_line(usable).to_string());
      } catch (const topo::EmbeddingError&) {
      }
    }
    throw runtime::DeviceError(
        runtime::DeviceError::Kind::Fault,
        fmt::format("fault {} at 0 s: the {} fabric {} crosses the down link(s) and no other {} through all {} chips "
                    "avoids them: {}{}",
                    specs, ring ? "ring" : "line", original.to_string(), ring ? "ring" : "line",
                    topology.chip_count(), e.what(), why_not_a_line));
  }
}

}  // namespace cclmesh::sim::device
