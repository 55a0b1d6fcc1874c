// The mid-2025 dateline-VC ring fabric (FabricOptions::ring_flow_control Dateline, REFERENCE 6.1,
// 6.2, 6.7) end to end with real data: every fabric collective on the T3K's 8-chip ring, each
// output bit for bit against the host reference. Every op sends packets across the dateline
// (the ring's closing hop), so each exercises the VC switch, the VC1 receivers and sender
// channel 2 on its way.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::ccltest {
namespace {

using runtime::ccl::DataType;
using runtime::ccl::Layout;
using runtime::ccl::TensorSpec;

// `receiver_packets_in_flight`: --fabric-rx-in-flight (unset: the routers' default).
std::unique_ptr<sim::device::SimMeshDevice> dateline_t3k(
    std::optional<std::uint32_t> receiver_packets_in_flight = std::nullopt) {
  runtime::FabricOptions fabric = fabric_of(FabricMode::Ring, runtime::FabricScope::System);
  fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
  fabric.receiver_packets_in_flight = receiver_packets_in_flight;
  auto device = make_device(topo::build_t3k(), fabric);
  const runtime::FabricRouterSite& site = device->fabric_plan().routers().front();
  EXPECT_TRUE(site.config.dateline_vcs);
  return device;
}

TensorSpec tiles(std::uint32_t height, std::uint32_t width) {
  return TensorSpec{{1, 1, height, width}, DataType::Bfloat16, Layout::Tile};
}

TEST(DatelineRingE2e, AllGather) {
  auto device = dateline_t3k();
  runtime::ccl::all_gather::Params p;
  p.input = tiles(64, 256);
  p.dim = 3;
  p.topology = CclTopology::Ring;
  const RunOutcome out = run_all_gather(*device, p, Memory{}, Memory{});
  EXPECT_TRUE(out.verified);
}

// Receivers that keep 1 or 2 packets' writes in flight (--fabric-rx-in-flight) on both VCs:
// the VC1 receivers forward and land with the same transaction-id bound as VC0's.
TEST(DatelineRingE2e, AllGatherAndReduceScatterWithFewPacketsInFlightPerReceiver) {
  for (const std::uint32_t in_flight : {1u, 2u}) {
    SCOPED_TRACE(in_flight);
    auto device = dateline_t3k(in_flight);
    // Every receiver takes the bound; a dateline-kind router's dropped receiver (0 slots) none.
    for (const runtime::FabricRouterSite& site : device->fabric_plan().routers()) {
      EXPECT_EQ(site.config.receiver_packets_in_flight, site.config.receiver_slots == 0 ? 0 : in_flight);
      EXPECT_EQ(site.config.vc1_receiver_packets_in_flight, site.config.vc1_receiver_slots == 0 ? 0 : in_flight);
    }
    runtime::ccl::all_gather::Params gather;
    gather.input = tiles(64, 256);
    gather.dim = 3;
    gather.topology = CclTopology::Ring;
    EXPECT_TRUE(run_all_gather(*device, gather, Memory{}, Memory{}).verified);
    runtime::ccl::reduce_scatter::Params scatter;
    scatter.input = tiles(64, 32 * 16);
    scatter.dim = 3;
    scatter.topology = CclTopology::Ring;
    EXPECT_TRUE(run_reduce_scatter(*device, scatter, Memory{}, Memory{}).verified);
  }
}

TEST(DatelineRingE2e, ReduceScatter) {
  auto device = dateline_t3k();
  runtime::ccl::reduce_scatter::Params p;
  p.input = tiles(64, 32 * 16);
  p.dim = 3;
  p.topology = CclTopology::Ring;
  const RunOutcome out = run_reduce_scatter(*device, p, Memory{}, Memory{});
  EXPECT_TRUE(out.verified);
}

TEST(DatelineRingE2e, AllReduce) {
  auto device = dateline_t3k();
  runtime::ccl::all_reduce::Params p;
  p.tensor = tiles(64, 32 * 16);
  p.topology = CclTopology::Ring;
  const RunOutcome out = run_all_reduce(*device, p, Memory{});
  EXPECT_TRUE(out.verified);
}

TEST(DatelineRingE2e, AllToAll) {
  auto device = dateline_t3k();
  runtime::ccl::all_to_all::Params p;
  p.tensor = tiles(64, 32 * 16);
  p.dim = 3;
  p.topology = CclTopology::Ring;
  const RunOutcome out = run_all_to_all(*device, p, Memory{});
  EXPECT_TRUE(out.verified);
}

// Every root: the packets of a root next to the dateline cross it at once, the others' later.
TEST(DatelineRingE2e, BroadcastFromEveryRoot) {
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    auto device = dateline_t3k();
    namespace bc = runtime::ccl::broadcast;
    bc::Params p;
    p.root = device->fabric_plan().chips().at(rank);
    p.fabric = device->options().fabric;
    p.input = runtime::BufferHandle{1, 0x10000, tile_pages_config(13)};
    p.output = runtime::BufferHandle{2, 0x20000, tile_pages_config(13)};
    const RunOutcome out = run_broadcast(*device, p, 13);
    EXPECT_TRUE(out.verified) << "root rank " << rank;
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
