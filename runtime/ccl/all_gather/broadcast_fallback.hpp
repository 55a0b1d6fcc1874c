#pragma once
// all_gather's fallback for a TILE gather dim (2 or 3) that is not whole 32-element tiles, as
// tt-metal runs it (REFERENCE 7.6 "Broadcast fallback"): two ops over command streams,
//   1. all_broadcast (runtime/ccl/all_broadcast): every chip's whole tile-padded input lands in
//      broadcast_buffers[rank] on every chip of its group;
//   2. concat (kernels/concat.cpp) on up to kConcatCores Tensix cores of every chip: the N
//      padded tensors joined along `dim` into the output, each rank's real elements at their
//      place, zeros in the output's padding (reference::concat states the same).
// Each is its own workload, so each pays the host's dispatch gap, as two tt-metal ops do.
// Fabric mode only. bf16, fp32 and bfp8_b: a bfp8_b block shares one exponent per 16 values,
// so the concat unpacks the pieces to fp32 and packs every output block again, as tt-metal's
// concat does through the unpacker and packer (kernels/concat.cpp). The output and the
// broadcast buffers may be interleaved or sharded (DRAM or L1); the broadcast buffers all share
// one config.

#include <cstdint>
#include <vector>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"

namespace cclmesh::runtime::ccl::all_gather::broadcast_fallback {

// Cores per chip the concat spreads its output tiles over (one row of the worker grid;
// inferred: tt-metal's concat is multi-core, with a grid this model does not take from it).
inline constexpr std::uint32_t kConcatCores = 8;

// TILE and dim 2 or 3 not whole tiles.
bool applies(const Params& params);
// The all_broadcast half: params's input, groups, fabric, links, workers and semaphores.
all_broadcast::Params broadcast_params(const Params& params);
// Throws CclParamsError naming what the fallback cannot run.
void validate(const Params& params, const topo::Topology& topology);
// validate(), then {all_broadcast, concat}.
std::vector<MeshWorkload> build(const Params& params, const topo::Topology& topology);

}  // namespace cclmesh::runtime::ccl::all_gather::broadcast_fallback
