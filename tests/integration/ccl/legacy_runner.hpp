#pragma once
// One case and one runner for the legacy EDM end-to-end tests (all_gather_legacy_test,
// reduce_scatter_legacy_test, legacy_links_test): a device without a persistent fabric, a case (tensor, dim, ring
// or line, memory, groups, EDM options, optional sharded buffers), and a run that creates the
// op's buffers, writes a distinct input on every chip of every group, runs the op, compares
// every chip's output bit for bit with the op's host reference, and reports the kernel time,
// how many EDMs the op launched and when the last was ready (each EDM must report ready after
// its handshake).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"

namespace cclmesh::ccltest {

// Legacy mode has no persistent fabric: each op launches its own EDMs.
inline std::unique_ptr<sim::device::SimMeshDevice> legacy_device(topo::Topology topology) {
  return make_device(std::move(topology), runtime::FabricMode::None);
}

struct LegacyCase {
  runtime::ccl::TensorSpec input;
  std::uint32_t dim = 3;
  runtime::ccl::CclTopology topology = runtime::ccl::CclTopology::Ring;
  runtime::BufferType memory = runtime::BufferType::Dram;
  std::vector<std::vector<ChipId>> groups;  // empty: the system's ring / line
  std::uint32_t num_links = 1;               // an EDM per link per hop end, each link its own workers
  runtime::ccl::LegacyEdmOptions legacy;
  std::optional<runtime::BufferConfig> input_config;   // default: interleaved in `memory`
  std::optional<runtime::BufferConfig> output_config;  // default: interleaved in `memory`
};

struct LegacyRun {
  std::uint64_t kernel_ns = 0;  // first Tensix kernel start to last end (simulated)
  std::uint64_t launch_ns = 0;  // enqueue to the last EDM ready
  std::size_t edms = 0;
};

// Runs `c` as the legacy op whose Params type is `Params` (all_gather::Params,
// reduce_scatter::Params). The op's output_spec() and build() are found by argument-dependent
// lookup in Params' namespace, where every op builder declares them. `reference(p, topology,
// inputs_by_rank)` gives each rank's expected output; inputs are pattern(seed_base + chip).
template <class Params, class Reference>
LegacyRun run_legacy_case(sim::device::SimMeshDevice& device, const LegacyCase& c, std::uint32_t seed_base,
                          const Reference& reference) {
  Params p;
  p.input = c.input;
  p.dim = c.dim;
  p.topology = c.topology;
  p.num_links = c.num_links;
  p.mode = runtime::ccl::CclMode::Legacy;
  p.groups.chips = c.groups;
  p.fabric = device.options().fabric;
  p.legacy = c.legacy;
  const runtime::ccl::TensorSpec out = output_spec(p, device.topology());
  p.input_buffer =
      device.create_buffer(c.input_config.value_or(runtime::ccl::interleaved_buffer_config(c.input, c.memory)));
  p.output_buffer =
      device.create_buffer(c.output_config.value_or(runtime::ccl::interleaved_buffer_config(out, c.memory)));
  const auto groups = runtime::ccl::resolve_legacy_groups(p.groups, device.topology(), c.topology);
  std::map<ChipId, Bytes> inputs;
  for (const auto& g : groups) {
    for (ChipId chip : g) {
      inputs[chip] = pattern(p.input_buffer.config.size_bytes, seed_base + chip);
      device.write_buffer(chip, p.input_buffer, inputs[chip]);
    }
  }
  const runtime::MeshWorkload workload = build(p, device.topology());
  const std::size_t profile_begin = device.profile().size();
  const auto enqueued_ns = static_cast<std::uint64_t>(device.now().ps() / 1000);
  device.enqueue_workload(workload);
  device.finish();
  for (const auto& g : groups) {
    std::vector<Bytes> by_rank;
    for (ChipId chip : g) by_rank.push_back(inputs[chip]);
    const std::vector<Bytes> expected = reference(p, device.topology(), by_rank);
    EXPECT_EQ(expected.size(), g.size());
    for (std::size_t rank = 0; rank < std::min(expected.size(), g.size()); ++rank) {
      EXPECT_TRUE(read_back(device, g[rank], p.output_buffer) == expected[rank])
          << "chip " << g[rank] << " (rank " << rank << ")";
    }
  }
  LegacyRun run;
  run.kernel_ns = last_kernel_span_ns(device, profile_begin);
  const std::vector<runtime::KernelProfile> profile = device.profile();
  for (std::size_t i = profile_begin; i < profile.size(); ++i) {
    if (profile[i].kernel != kernels::kLegacyEdmKernelName) continue;
    ++run.edms;
    EXPECT_TRUE(profile[i].ready_ns.has_value());
    if (profile[i].ready_ns) run.launch_ns = std::max(run.launch_ns, *profile[i].ready_ns - enqueued_ns);
  }
  return run;
}

// The legacy all_gather: every rank ends with reference::concat of the group's inputs
// (inputs pattern(500 + chip)).
inline LegacyRun run_legacy_all_gather(sim::device::SimMeshDevice& device, const LegacyCase& c) {
  namespace ag = runtime::ccl::all_gather;
  return run_legacy_case<ag::Params>(
      device, c, 500, [](const ag::Params& p, const topo::Topology&, const std::vector<Bytes>& by_rank) {
        return std::vector<Bytes>(by_rank.size(), runtime::ccl::reference::concat(by_rank, p.input, p.dim));
      });
}

// The legacy reduce_scatter: each rank against reduce_scatter::reference_outputs (inputs
// pattern(700 + chip)).
inline LegacyRun run_legacy_reduce_scatter(sim::device::SimMeshDevice& device, const LegacyCase& c) {
  namespace rs = runtime::ccl::reduce_scatter;
  return run_legacy_case<rs::Params>(device, c, 700, [](const rs::Params& p, const topo::Topology& topology,
                                                        const std::vector<Bytes>& by_rank) {
    return rs::reference_outputs(p, topology, by_rank);
  });
}

// The legacy all_reduce as reduce_scatter + all_gather (each launching its own EDMs), forced:
// Auto takes the composite at small sizes (all_reduce.hpp), and these tests are of rs-ag. Of
// `tensor` over `group` (empty: the system's ring / line of `shape`) on `links` links, every
// buffer in DRAM; every rank's output against all_reduce::reference_outputs (inputs
// pattern(900 + chip)). Returns the group it ran on, in rank order.
inline std::vector<ChipId> run_legacy_all_reduce(sim::device::SimMeshDevice& device, runtime::ccl::CclTopology shape,
                                                 const runtime::ccl::TensorSpec& tensor,
                                                 const std::vector<ChipId>& group = {}, std::uint32_t links = 1) {
  namespace ar = runtime::ccl::all_reduce;
  ar::Params p;
  p.tensor = tensor;
  p.topology = shape;
  p.num_links = links;
  if (!group.empty()) p.groups.chips = {group};
  p.mode = runtime::ccl::CclMode::Legacy;
  p.fabric = device.options().fabric;
  p.algorithm = runtime::ccl::all_reduce::Algorithm::ReduceScatterAllGather;
  const auto config = [&](const runtime::ccl::TensorSpec& t) {
    return runtime::ccl::interleaved_buffer_config(t, runtime::BufferType::Dram);
  };
  p.input_buffer = device.create_buffer(config(tensor));
  p.output_buffer = device.create_buffer(config(tensor));
  p.intermediate_buffer = device.create_buffer(config(ar::intermediate_spec(p, device.topology())));
  EXPECT_EQ(ar::resolved_algorithm(p, device.topology()), ar::Algorithm::ReduceScatterAllGather);
  const std::vector<ChipId> ranks =
      group.empty() ? runtime::ccl::resolve_legacy_groups(p.groups, device.topology(), shape).front() : group;
  std::map<ChipId, Bytes> inputs;
  for (ChipId chip : ranks) {
    inputs[chip] = pattern(p.input_buffer.config.size_bytes, 900 + chip);
    device.write_buffer(chip, p.input_buffer, inputs[chip]);
  }
  for (const auto& w : ar::build(p, device.topology())) device.enqueue_workload(w);
  device.finish();
  std::vector<Bytes> by_rank;
  for (ChipId chip : ranks) by_rank.push_back(inputs[chip]);
  const std::vector<Bytes> expected = ar::reference_outputs(p, device.topology(), by_rank);
  for (std::size_t rank = 0; rank < by_rank.size(); ++rank) {
    EXPECT_TRUE(read_back(device, ranks[rank], p.output_buffer) == expected[rank]) << "rank " << rank;
  }
  return ranks;
}

// Payload bytes each ethernet core sent, by (chip, logical channel).
inline std::map<std::pair<ChipId, std::uint32_t>, std::int64_t> payload_by_channel(sim::device::SimMeshDevice& device) {
  std::map<std::pair<ChipId, std::uint32_t>, std::int64_t> sent;
  for (const auto& link : device.system().links()) {
    for (const sim::EthCore* side : {&link->a(), &link->b()}) {
      sent[{static_cast<ChipId>(side->chip().id()), static_cast<std::uint32_t>(side->channel())}] +=
          side->stats().payload_bytes_sent;
    }
  }
  return sent;
}

// Every one of the first `num_links` links of every hop of `group` (a ring's closing hop too)
// sent more than `at_least` payload bytes in both directions: each link's EDMs carried their
// share, none sat out.
inline void expect_every_link_carried(sim::device::SimMeshDevice& device, const std::vector<ChipId>& group,
                                      runtime::ccl::CclTopology shape, std::uint32_t num_links,
                                      std::int64_t at_least) {
  const auto sent = payload_by_channel(device);
  const std::size_t hops = shape == runtime::ccl::CclTopology::Ring ? group.size() : group.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const ChipId a = group[i];
    const ChipId b = group[(i + 1) % group.size()];
    for (std::uint32_t link = 0; link < num_links; ++link) {
      const runtime::ccl::LegacyHop hop = runtime::ccl::legacy_hop(device.topology(), a, b, "test", link);
      EXPECT_GT(sent.at({a, hop.from_channel}), at_least) << "chip " << a << " ch " << hop.from_channel << " -> " << b;
      EXPECT_GT(sent.at({b, hop.to_channel}), at_least) << "chip " << b << " ch " << hop.to_channel << " -> " << a;
    }
  }
}

}  // namespace cclmesh::ccltest
