#pragma once
// Shared set-up for the collectives' end-to-end tests on the simulated device: devices with a
// fabric on a chosen line or ring, inputs with a distinct pattern per chip, reading back, and
// the figures a run prints (simulated time, nccl-tests algbw / busbw, REFERENCE 9).

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/device/types.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::ccltest {

using runtime::ChipId;
using runtime::ccl::reference::Bytes;
// The vocabulary every end-to-end test writes its cases in.
using runtime::BufferType;
using runtime::FabricMode;
using runtime::ccl::CclTopology;
using runtime::ccl::DataType;
using runtime::ccl::Layout;
using runtime::ccl::TensorSpec;

// A TILE tensor of `shape` (elements, w z y x).
inline runtime::ccl::TensorSpec tile(std::array<std::uint32_t, 4> shape,
                                     runtime::ccl::DataType dtype = runtime::ccl::DataType::Bfloat16) {
  return runtime::ccl::TensorSpec{shape, dtype, runtime::ccl::Layout::Tile};
}

inline std::vector<ChipId> to_runtime(const std::vector<topo::ChipId>& chips) {
  return std::vector<ChipId>(chips.begin(), chips.end());
}

// A device on `topology` whose fabric runs through `chip_order` as a line or ring (empty: the
// system's line / ring).
inline std::unique_ptr<sim::device::SimMeshDevice> make_device(topo::Topology topology, runtime::FabricMode mode,
                                                               std::vector<ChipId> chip_order = {},
                                                               sim::DataMode data = sim::DataMode::Functional) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = mode;
  options.fabric.chip_order = std::move(chip_order);
  options.data_mode = data;
  return std::make_unique<sim::device::SimMeshDevice>(std::move(topology), options);
}

// A device with a fabric of any scope and link count (FabricOptions).
inline std::unique_ptr<sim::device::SimMeshDevice> make_device(topo::Topology topology, runtime::FabricOptions fabric,
                                                               sim::DataMode data = sim::DataMode::Functional) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric = std::move(fabric);
  options.data_mode = data;
  return std::make_unique<sim::device::SimMeshDevice>(std::move(topology), options);
}

// The fabric mode that carries an op of `shape` over the whole system: a ring for a ring.
inline FabricMode fabric_mode_for(CclTopology shape) {
  return shape == CclTopology::Ring ? FabricMode::Ring : FabricMode::Line;
}

inline const char* shape_name(CclTopology shape) { return shape == CclTopology::Ring ? "ring" : "line"; }

// Fabric options: a line or ring, over the whole system or per mesh row and column, on `links`
// routing planes.
inline runtime::FabricOptions fabric_of(runtime::FabricMode mode, runtime::FabricScope scope, std::uint32_t links = 1) {
  runtime::FabricOptions f;
  f.mode = mode;
  f.scope = scope;
  f.num_links = links;
  return f;
}

// Bytes whose values differ per chip and per position, with no NaN or infinity when read as
// bf16 or fp32 (the exponent byte stays below 0x7F), so sums stay ordinary numbers.
inline Bytes pattern(std::size_t bytes, std::uint32_t seed) {
  Bytes data(bytes);
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (std::size_t i = 0; i < bytes; ++i) {
    x = x * 1664525u + 1013904223u;
    std::uint8_t b = static_cast<std::uint8_t>(x >> 24);
    if (i % 2 == 1) b = static_cast<std::uint8_t>(0x38 + (b & 0x0F));  // bf16 / fp32 high byte: 2^-15 .. 2^1
    data[i] = static_cast<std::byte>(b);
  }
  return data;
}

inline Bytes read_back(sim::device::SimMeshDevice& device, ChipId chip, const runtime::BufferHandle& b) {
  Bytes out(b.config.size_bytes);
  device.read_buffer(chip, b, out);
  return out;
}

// Wall-clock-free figures of the last run: kernel time from the first kernel start to the last
// kernel end of the workload's Tensix kernels.
inline std::uint64_t last_kernel_span_ns(const sim::device::SimMeshDevice& device, std::size_t profile_begin) {
  const std::vector<runtime::KernelProfile> p = device.profile();
  std::uint64_t start = UINT64_MAX;
  std::uint64_t end = 0;
  for (std::size_t i = profile_begin; i < p.size(); ++i) {
    if (p[i].core_kind != runtime::CoreKind::Tensix) continue;
    start = std::min(start, p[i].start_ns);
    end = std::max(end, p[i].end_ns);
  }
  return end > start ? end - start : 0;
}

// The figures a figures test prints (not asserted: no timing thresholds in tests), as
// nccl-tests gives them (REFERENCE 9, GB = 1e9 B): algbw = bytes / simulated kernel time, busbw =
// algbw x the op's bus factor ((N-1)/N for all_gather, reduce_scatter, all_to_all; 2(N-1)/N for
// all_reduce; 1 for reduce). `bytes_meaning` says which bytes ("output", "input", "per chip").
// The kernel time is also recorded as the test's simulated_ns property.
inline void print_figures(const std::string& what, const char* bytes_meaning, std::uint64_t bytes,
                          std::uint64_t kernel_ns, double bus_factor) {
  const double t = static_cast<double>(kernel_ns);
  const double algbw = static_cast<double>(bytes) / t;  // B/ns = GB/s
  std::printf("%s: %llu B %s, %.2f us, algbw %.2f GB/s, busbw %.2f GB/s\n", what.c_str(),
              static_cast<unsigned long long>(bytes), bytes_meaning, t / 1e3, algbw, algbw * bus_factor);
  ::testing::Test::RecordProperty("simulated_ns", std::to_string(kernel_ns));
}

// (N-1)/N: the share of the data each of N chips has to receive (all_gather, reduce_scatter).
inline double exchange_bus_factor(std::uint32_t group_size) {
  return static_cast<double>(group_size - 1) / group_size;
}

}  // namespace cclmesh::ccltest
