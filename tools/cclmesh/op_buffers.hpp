#pragma once
// The buffers and global semaphores one op of `cclmesh run` / `sweep` creates on a device, given
// back once the op's result has been read: a served device (`cclmesh serve`) lives on across ops
// and clients, and a long `sweep --device` would otherwise fill its memory (a semaphore is only
// 32 B of L1, but a long-lived server runs ops without end). Local runs free theirs too, so both
// take one path.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::cli {

class OpBuffers {
 public:
  explicit OpBuffers(runtime::MeshDevice& device) : device_(device) {}
  OpBuffers(const OpBuffers&) = delete;
  OpBuffers& operator=(const OpBuffers&) = delete;

  // device.create_buffer(config), remembered for free_all().
  runtime::BufferHandle create(const runtime::BufferConfig& config);
  // device.create_global_semaphore(cores, kind, initial_value), remembered for free_all().
  runtime::GlobalSemaphore create_semaphore(const std::vector<runtime::CoreRange>& cores, runtime::CoreKind kind,
                                            std::uint32_t initial_value);
  // Frees every semaphore, then every buffer created, newest first, and forgets them. Throws what
  // MeshDevice's deallocate calls throw (a RemoteDeviceError when the served device went away).
  void free_all();
  // After an op given up for bad input midway (a CB that does not fit beside its buffers, a
  // parameter its builder refuses): frees what the device lets go, and never throws over the
  // error being reported. A buffer or semaphore that a workload enqueued before the refusal
  // still names stays (the device refuses to free it; a served device is reset when the session
  // ends with work unfinished).
  void free_all_quietly() noexcept;
  // The bytes of the buffers created and not freed, on each chip (a buffer is on every chip).
  std::uint64_t bytes_per_chip() const;
  // The first buffer's bytes on each chip, 0 if none: every op's input (prepare_op creates it
  // first), which a run with data writes and the host keeps a copy of (host_memory_check.hpp).
  std::uint64_t first_buffer_bytes_per_chip() const;
  // The bytes on each chip of the buffer created `index`-th (0: the first), 0 if none: every op's
  // output is its second (prepare_op), which a served device's client counts its references by.
  std::uint64_t buffer_bytes_per_chip(std::size_t index) const;

 private:
  runtime::MeshDevice& device_;
  std::vector<runtime::BufferHandle> created_;
  std::vector<runtime::GlobalSemaphore> semaphores_;
};

}  // namespace cclmesh::cli
