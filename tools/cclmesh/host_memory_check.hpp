#pragma once
// A run with data holds every chip's buffers as real bytes in this process, so a size that is
// nothing to a simulated mesh can be more than the host has (new-user pass, session 41: a Galaxy
// all_gather of 1 GiB with data, 32 chips x 1.1 GiB, ended in "internal error: std::bad_alloc"
// under a memory limit, and without one in the kernel's OOM killer after swapping). Refused
// before the device is built, from the buffers the planning device placed.

#include <cstdint>
#include <string>

namespace cclmesh::cli {

// This machine's physical memory in bytes (0 when the system does not say).
std::uint64_t host_memory_bytes();

// Throws UsageError (exit 2) naming `size_option` and its value when `bytes_per_chip` on each of
// `n_chips` is more than `host_bytes` (0: unknown, nothing refused): the buffers alone, without
// the host's inputs and references, which need more again. The way out is --no-data, a smaller
// size or fewer chips.
void reject_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                  std::uint64_t bytes_per_chip, std::uint32_t n_chips, std::uint64_t host_bytes);

}  // namespace cclmesh::cli
