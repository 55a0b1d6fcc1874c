// num_links > 1 for reduce, all_to_all, broadcast and send_recv, end to end with real data: each
// link (routing plane, REFERENCE 3.5) gets its own workers and its own share of the pages, as
// all_gather's and reduce_scatter's do. On Galaxy columns (4 usable links), TG rows (3) and an
// all-MMIO 8-ring with 2 links per hop; every output compared bit for bit with the op's host
// reference, and every plane of every hop the data crosses must have carried some of it.
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rd = runtime::ccl::reduce;
namespace a2a = runtime::ccl::all_to_all;
namespace bc = runtime::ccl::broadcast;
namespace sr = runtime::ccl::send_recv;
using runtime::FabricScope;

TensorSpec tiles(std::uint32_t count, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{{1, 1, 32, 32 * count}, dtype, Layout::Tile};
}

// How many of the links from `from` to `to` sent more than one page of payload: the planes the
// data crossed that hop on (control packets alone carry a few bytes at most).
std::uint32_t planes_with_data(sim::device::SimMeshDevice& device, ChipId from, ChipId to) {
  std::uint32_t planes = 0;
  for (const auto& link : device.system().links()) {
    for (const sim::EthCore* side : {&link->a(), &link->b()}) {
      if (static_cast<ChipId>(side->chip().id()) == from && static_cast<ChipId>(side->peer()->chip().id()) == to &&
          side->stats().payload_bytes_sent > 2048) {
        ++planes;
      }
    }
  }
  return planes;
}

// The Galaxy's first column (cluster_axis 0 group 0), in rank order.
std::vector<ChipId> galaxy_column(const topo::Topology& galaxy) { return to_runtime(topo::axis_groups(galaxy, 0).front()); }

// --- reduce ----------------------------------------------------------------------------------

// Galaxy columns on the per-axis fabric with 4 links: 8 columns of 4 at once, root 0 (the down
// chain, no wrap) and root 2 (the up chain and its wrap), 4 chains per column, one per plane.
TEST(MultiLinkE2e, ReduceGalaxyColumnsFourLinks) {
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes, 4));
  const std::vector<ChipId> column = galaxy_column(device->topology());
  for (const std::uint32_t root : {0u, 2u}) {
    SCOPED_TRACE(root);
    rd::Params p;
    p.tensor = tiles(4 * 9 + 3);  // runs of 10, 10, 10 and 9 pages
    p.root = root;
    p.topology = CclTopology::Line;
    p.num_links = 4;
    p.groups.cluster_axis = 0;
    p.chunk_packets = 1;
    const RunOutcome out = run_reduce(*device, p, Memory{});
    EXPECT_TRUE(out.verified);
    EXPECT_EQ(out.group_size, 4u);
    EXPECT_EQ(out.groups, 8u);
  }
  // Root 0's chain runs down the column: every plane of every hop carried partial sums.
  for (std::size_t r = 1; r < column.size(); ++r) EXPECT_EQ(planes_with_data(*device, column[r], column[r - 1]), 4u);
}

// A ring on 2 links: an up and a down chain per plane, fp32.
TEST(MultiLinkE2e, ReduceRingTwoLinks) {
  auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, FabricScope::System, 2));
  rd::Params p;
  p.tensor = tiles(8 * 4 + 1, DataType::Float32);
  p.root = 5;
  p.topology = CclTopology::Ring;
  p.num_links = 2;
  EXPECT_TRUE(run_reduce(*device, p, Memory{}).verified);
}

// --- all_to_all ------------------------------------------------------------------------------

TEST(MultiLinkE2e, AllToAllGalaxyColumnsFourLinks) {
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes, 4));
  a2a::Params p;
  p.tensor = tiles(4 * 5);  // chunks of 5 tiles: link shares of 2, 1, 1, 1
  p.topology = CclTopology::Line;
  p.num_links = 4;
  p.groups.cluster_axis = 0;
  const RunOutcome out = run_all_to_all(*device, p, Memory{});
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.groups, 8u);
  const std::vector<ChipId> column = galaxy_column(device->topology());
  for (std::size_t r = 1; r < column.size(); ++r) {
    EXPECT_EQ(planes_with_data(*device, column[r - 1], column[r]), 4u);
    EXPECT_EQ(planes_with_data(*device, column[r], column[r - 1]), 4u);
  }
}

// A line's senders interleave their destinations in pieces (all_to_all::Params::rounds): uneven
// link shares (37 tiles per chunk on 2 links: 19 and 18) cut into 9 uneven pieces, against one
// destination after another (rounds 1); both bit for bit.
TEST(MultiLinkE2e, AllToAllLineInterleavedPiecesTwoLinks) {
  for (const std::uint32_t rounds : {0u, 1u}) {
    SCOPED_TRACE(rounds);
    auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes, 2));
    a2a::Params p;
    p.tensor = tiles(4 * 37);
    p.topology = CclTopology::Line;
    p.num_links = 2;
    p.rounds = rounds;
    p.groups.cluster_axis = 0;
    EXPECT_TRUE(run_all_to_all(*device, p, Memory{}).verified);
  }
}

// TG rows (8 chips) on 3 links, ROW_MAJOR pages along dim 2 in L1.
TEST(MultiLinkE2e, AllToAllTgRowsThreeLinksRowMajorL1) {
  auto device = make_device(topo::build_tg(), fabric_of(FabricMode::Line, FabricScope::Axes, 3));
  a2a::Params p;
  p.tensor = TensorSpec{{1, 1, 8 * 4, 64}, DataType::Bfloat16, Layout::RowMajor};
  p.dim = 2;
  p.topology = CclTopology::Line;
  p.num_links = 3;
  p.groups.cluster_axis = 1;
  const RunOutcome out = run_all_to_all(*device, p, Memory{runtime::BufferType::L1, std::nullopt});
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.group_size, 8u);
}

// An even ring on 2 links: the opposite chip's chunk is split in halves, and each half between
// the links (4 pieces, one per sender).
TEST(MultiLinkE2e, AllToAllRingTwoLinksSplitsTheFarthestChunk) {
  auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, FabricScope::System, 2));
  a2a::Params p;
  p.tensor = tiles(8 * 5);
  p.topology = CclTopology::Ring;
  p.num_links = 2;
  EXPECT_TRUE(run_all_to_all(*device, p, Memory{}).verified);
  for (const auto& link : device->system().links()) {
    EXPECT_GT(link->a().stats().payload_bytes_sent, 2048) << "chip " << link->a().chip().id();
    EXPECT_GT(link->b().stats().payload_bytes_sent, 2048) << "chip " << link->b().chip().id();
  }
}

// --- broadcast and send_recv (whole-system fabric: a Galaxy column as the fabric line) --------

TEST(MultiLinkE2e, BroadcastGalaxyColumnFourLinks) {
  const topo::Topology galaxy = topo::build_galaxy();
  const std::vector<ChipId> column = galaxy_column(galaxy);
  runtime::FabricOptions fabric = fabric_of(FabricMode::Line, FabricScope::System, 4);
  fabric.chip_order = column;
  auto device = make_device(galaxy, fabric);
  bc::Params p;
  p.root = column[1];  // multicasts both ways
  p.num_links = 4;
  const RunOutcome out = run_broadcast(*device, p, 4 * 3 + 2);
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.group_size, 4u);
  EXPECT_EQ(planes_with_data(*device, column[1], column[0]), 4u);
  for (std::size_t r = 2; r < column.size(); ++r) EXPECT_EQ(planes_with_data(*device, column[r - 1], column[r]), 4u);
}

// Both ring algorithms on 2 links: both ways, plane k's worker multicasts run k both ways; split,
// 4 root workers (a direction's 2 on each row), and every hop of the ring but the two into the
// root carries pages on both planes.
TEST(MultiLinkE2e, BroadcastRingTwoLinks) {
  for (const bc::RingAlgorithm algorithm : {bc::RingAlgorithm::BothWays, bc::RingAlgorithm::Split}) {
    SCOPED_TRACE(bc::to_string(algorithm));
    auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, FabricScope::System, 2));
    bc::Params p;
    p.root = 3;
    p.num_links = 2;
    p.ring_algorithm = algorithm;
    EXPECT_TRUE(run_broadcast(*device, p, 4 * 4 + 3).verified);  // runs of 5, 5, 5 and 4 pages split
    if (algorithm != bc::RingAlgorithm::Split) continue;
    for (ChipId chip = 0; chip < 8; ++chip) {
      const ChipId next = (chip + 1) % 8;
      EXPECT_EQ(planes_with_data(*device, chip, next), next == p.root ? 0u : 2u) << chip << "->" << next;
      EXPECT_EQ(planes_with_data(*device, next, chip), chip == p.root ? 0u : 2u) << next << "->" << chip;
    }
  }
}

TEST(MultiLinkE2e, SendRecvGalaxyColumnFourLinksThreeHops) {
  const topo::Topology galaxy = topo::build_galaxy();
  const std::vector<ChipId> column = galaxy_column(galaxy);
  runtime::FabricOptions fabric = fabric_of(FabricMode::Line, FabricScope::System, 4);
  fabric.chip_order = column;
  auto device = make_device(galaxy, fabric);
  sr::Params p;
  p.sender = column[3];
  p.receiver = column[0];
  p.num_links = 4;
  EXPECT_TRUE(run_send_recv(*device, p, 4 * 4 + 1).verified);
  for (std::size_t r = 1; r < column.size(); ++r) EXPECT_EQ(planes_with_data(*device, column[r], column[r - 1]), 4u);
}

// More links than the fabric's routing planes: refused by name, for every op.
TEST(MultiLinkE2e, MoreLinksThanTheFabricsPlanesAreRefused) {
  const topo::Topology ring = topo::load_system("ring:8/2");
  runtime::FabricOptions fabric = fabric_of(FabricMode::Ring, FabricScope::System, 1);
  const auto refused = [](const auto& validate, const std::string& op) {
    try {
      validate();
      ADD_FAILURE() << op << ": expected a rejection";
    } catch (const runtime::ccl::CclParamsError& e) {
      EXPECT_NE(std::string(e.what()).find(op + ": num_links 2 but the device's fabric runs one routing plane"),
                std::string::npos)
          << e.what();
    }
  };
  auto device = make_device(ring, fabric);
  const runtime::BufferHandle in = device->create_buffer(tile_pages_config(8));
  const runtime::BufferHandle out = device->create_buffer(tile_pages_config(8));
  bc::Params b;
  b.input = in;
  b.output = out;
  b.fabric = fabric;
  b.num_links = 2;
  refused([&] { bc::validate(b, ring); }, "broadcast");
  sr::Params s;
  s.input = in;
  s.output = out;
  s.fabric = fabric;
  s.num_links = 2;
  refused([&] { sr::validate(s, ring); }, "send_recv");
}

}  // namespace
}  // namespace cclmesh::ccltest
