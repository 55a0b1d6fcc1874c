#pragma once
// The checks every op with one input and one output buffer makes of them before it builds: the
// fabric ops (all_gather, reduce_scatter, reduce, all_to_all) and the legacy ones
// (require_legacy_buffers) made them line for line alike, with the same messages. In a header of
// its own so that a change here rebuilds only the builders that call it.

#include <string>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/types.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// Checks `input` holds exactly `input_spec` and `output` exactly `output_spec`
// (require_buffer_holds), and that they are two buffers: the op reads one while it writes the
// other. Throws CclParamsError naming `op` and the buffer.
void require_input_output_buffers(const BufferHandle& input, const TensorSpec& input_spec, const BufferHandle& output,
                                  const TensorSpec& output_spec, const std::string& op);

// The same for a fabric op over `chips` (every group's), and then that the chips share one core
// map (a fabric multicast carries one NoC address, require_uniform_core_maps) and that both
// buffers lay out on every one of them (require_buffer_layouts).
void require_fabric_input_output_buffers(const topo::Topology& topology, const std::vector<ChipId>& chips,
                                         const BufferHandle& input, const TensorSpec& input_spec,
                                         const BufferHandle& output, const TensorSpec& output_spec,
                                         const std::string& op);

}  // namespace cclmesh::runtime::ccl
