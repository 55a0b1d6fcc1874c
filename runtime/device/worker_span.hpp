#pragma once
// How long an op ran on a device, from the kernel profile every MeshDevice keeps: from the first
// worker (Tensix) kernel's start to the last one's end, over the profile entries the op added.
// That is what `cclmesh run` prints as an op's time ("simulated device kernel time"); the
// fabric routers, launched with the device and never ending, are not in it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"

namespace cclmesh::runtime {

struct WorkerSpan {
  std::uint64_t start_ns = 0;  // device time, ns since the device epoch
  std::uint64_t end_ns = 0;
  std::uint64_t duration_ns() const { return end_ns - start_ns; }
};

// Over profile[first_entry ..]: take device.profile_size() before enqueueing the op (or pass
// device.profile_since(that) and 0, which a served device sends without its history). Throws
// std::invalid_argument when those entries hold no worker kernel.
inline WorkerSpan worker_span(const std::vector<KernelProfile>& profile, std::size_t first_entry) {
  WorkerSpan span{std::numeric_limits<std::uint64_t>::max(), 0};
  for (std::size_t i = first_entry; i < profile.size(); ++i) {
    if (profile[i].core_kind != CoreKind::Tensix) continue;
    span.start_ns = std::min(span.start_ns, profile[i].start_ns);
    span.end_ns = std::max(span.end_ns, profile[i].end_ns);
  }
  if (span.start_ns == std::numeric_limits<std::uint64_t>::max()) {
    throw std::invalid_argument("worker_span: no worker kernel in the profile's " +
                                std::to_string(profile.size() - std::min(first_entry, profile.size())) +
                                " entries from entry " + std::to_string(first_entry));
  }
  return span;
}

}  // namespace cclmesh::runtime
