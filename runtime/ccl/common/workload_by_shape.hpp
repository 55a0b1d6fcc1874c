#pragma once
// The programs of an op built per shape its groups run as (params_by_shape), gathered into one
// workload. Every op builder, fabric and legacy, did this same loop; it lives here, not in
// collective.hpp, because that header is included everywhere and a template change there would
// rebuild every op.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// A workload named `name` holding, for each part of `parts` in turn (params_by_shape's order:
// rings before lines), the part resolved on its own, resolve(part, topology), and on every chip of
// its resolved `groups` the program chip_program(part, topology, resolved, group, index): index is
// the chip's position in a FabricGroup, or in a legacy group (add_group_programs). The caller adds
// its buffers and global semaphores, which are the whole op's, not a part's.
template <class Params, class Resolve, class ChipProgram>
MeshWorkload workload_by_shape(std::string name, const std::vector<Params>& parts, const topo::Topology& topology,
                               Resolve&& resolve, ChipProgram&& chip_program) {
  MeshWorkload workload;
  workload.name = std::move(name);
  for (const Params& part : parts) {
    const auto resolved = resolve(part, topology);
    add_group_programs(workload, resolved.groups, [&](const auto& group, std::uint32_t index) {
      return chip_program(part, topology, resolved, group, index);
    });
  }
  return workload;
}

}  // namespace cclmesh::runtime::ccl
