#pragma once
// The device side of an all_gather that every caller otherwise writes out: the input and output
// buffers sized from the params' tensor, the broadcast fallback's buffers when the gather needs
// them, and in fabric mode the done semaphore on the worker cores. For the library user
// (examples/run_all_gather.cpp); callers that shard their buffers create them themselves, as
// `cclmesh run` does (docs/library.md).

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::runtime::ccl::all_gather {

// Creates on `device` and fills into `params`: input_buffer (params.input, interleaved in
// `memory`), output_buffer (output_spec(), interleaved in `memory`), broadcast_buffers
// (broadcast_buffer_count() of them) and, in fabric mode, done_semaphore unless params holds
// one already (a global semaphore is best created once and reused: a loop of allocate, run,
// deallocate keeps the first; one freed with MeshDevice::deallocate_global_semaphore is cleared
// from params by its caller, and the next allocate creates another). Every other field is the caller's and must be set first (the
// tensor, dim, groups, mode, links and fabric decide the sizes and cores). Throws what
// output_spec() and the device's create calls throw.
void allocate(MeshDevice& device, Params& params, BufferType memory = BufferType::Dram);

// Frees the buffers allocate() created (input, output, broadcast buffers) once the op has
// finished, and clears them in `params`; the done semaphore stays for the next allocate(). A
// loop of allocate, write, run, read, deallocate leaves the device's memory as it found it
// (tests/unit/sim/device_free_test.cpp). Throws what MeshDevice::deallocate_buffer throws.
void deallocate(MeshDevice& device, Params& params);

}  // namespace cclmesh::runtime::ccl::all_gather
