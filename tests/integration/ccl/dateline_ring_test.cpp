// The mid-2025 dateline-VC ring fabric (FabricOptions::ring_flow_control Dateline, REFERENCE 6.1,
// 6.2, 6.7) end to end with real data: every fabric collective on the T3K's 8-chip ring, each
// output bit for bit against the host reference. Every op sends packets across the dateline
// (the ring's closing hop), so each exercises the VC switch, the VC1 receivers and sender
// channel 2 on its way.
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::ccltest {
namespace {

using runtime::ccl::DataType;
using runtime::ccl::Layout;
using runtime::ccl::TensorSpec;

std::unique_ptr<sim::device::SimMeshDevice> dateline_t3k() {
  runtime::FabricOptions fabric = fabric_of(FabricMode::Ring, runtime::FabricScope::System);
  fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
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
