#include "runtime/ccl/all_gather/allocate.hpp"

namespace cclmesh::runtime::ccl::all_gather {

void allocate(MeshDevice& device, Params& params, BufferType memory) {
  const topo::Topology& topology = device.topology();
  // The input as the caller gave it first: an empty dimension would otherwise be reported on the
  // output's shape below, scaled along the gather dim, which the caller never wrote.
  require_no_empty_dimension(params.input, "all_gather", "input");
  // The output's spec first: params it refuses (a dim out of range, groups the fabric cannot
  // run) then leave nothing created on the device.
  const BufferConfig output = interleaved_buffer_config(output_spec(params, topology), memory);
  params.input_buffer = device.create_buffer(interleaved_buffer_config(params.input, memory));
  params.output_buffer = device.create_buffer(output);
  // broadcast_buffer_config() takes the output's memory, so the output comes first.
  params.broadcast_buffers.clear();
  for (std::uint32_t i = 0; i < broadcast_buffer_count(params, topology); ++i) {
    params.broadcast_buffers.push_back(device.create_buffer(broadcast_buffer_config(params)));
  }
  if (params.mode == CclMode::Fabric && !params.done_semaphore) {
    params.done_semaphore = device.create_global_semaphore(semaphore_cores(params, topology), CoreKind::Tensix, 0);
  }
}

void deallocate(MeshDevice& device, Params& params) {
  device.deallocate_buffer(params.input_buffer);
  device.deallocate_buffer(params.output_buffer);
  for (const BufferHandle& buffer : params.broadcast_buffers) device.deallocate_buffer(buffer);
  params.input_buffer = {};
  params.output_buffer = {};
  params.broadcast_buffers.clear();
}

}  // namespace cclmesh::runtime::ccl::all_gather
