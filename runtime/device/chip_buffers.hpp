#pragma once
// Buffers as one chip of a mesh lays them out: over the mesh's common worker grid (L1
// interleaving and shard grids) and that chip's DRAM banks. Every op builder asks this per chip,
// for its program's address generators; one place keeps them laying out buffers alike.

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime {

class ChipBuffers {
 public:
  // Throws what chip_core_map throws for a chip the topology does not describe.
  ChipBuffers(const topo::Topology& topology, ChipId chip)
      : map_(chip_core_map(topology, chip)), grid_(common_worker_grid(topology)) {}

  const ChipCoreMap& map() const { return map_; }
  CoreCoord worker_grid() const { return grid_; }

  // Throws BufferConfigError when the buffer's config cannot be laid out on this chip.
  BufferLayout layout(const BufferHandle& buffer) const { return buffer_layout(buffer, grid_, map_.dram_bank_count()); }
  // The interpreter's address-generator args for the buffer on this chip.
  kargs::TensorArgs interpreter_args(const BufferHandle& buffer) const { return layout(buffer).interpreter_args(map_); }

 private:
  ChipCoreMap map_;
  CoreCoord grid_;
};

}  // namespace cclmesh::runtime
