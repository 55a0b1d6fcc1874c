// broadcast and send_recv along a cluster axis, end to end with real data: on a Galaxy (4x8)
// with the per-axis fabric (a line per row and per column, REFERENCE 3.4), every row (axis 1)
// or every column (axis 0) runs its own broadcast or send/recv at once, from the chip at the
// same rank. Each root or sender has its own input, every output is compared bit for bit with
// its own group's source, and no data crosses from one group to another.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::ccltest {
namespace {

namespace bc = runtime::ccl::broadcast;
namespace sr = runtime::ccl::send_recv;
using runtime::FabricScope;

std::vector<std::vector<ChipId>> galaxy_axis_groups(const topo::Topology& galaxy, int axis) {
  std::vector<std::vector<ChipId>> groups;
  for (const auto& g : topo::axis_groups(galaxy, axis)) groups.push_back(to_runtime(g));
  return groups;
}

// The most payload any link between chips of different groups carried. The fabric's bring-up
// at device open leaves a few handshake bytes on every link (16 B), so independent groups mean
// less than one page on each of those links, not zero.
std::int64_t most_payload_between_groups(const RunOutcome& out, const std::vector<std::vector<ChipId>>& groups) {
  const auto group_of = [&groups](ChipId chip) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (std::find(groups[g].begin(), groups[g].end(), chip) != groups[g].end()) return g;
    }
    return groups.size();
  };
  std::int64_t most = 0;
  for (const auto& [hop, sent] : out.link_payload_bytes) {
    if (group_of(hop.first) != group_of(hop.second)) most = std::max(most, sent);
  }
  return most;
}

constexpr std::int64_t kPageBytes = 2048;

class PointToPointAxisE2e : public ::testing::TestWithParam<int> {};

// Axis 1: 4 rows of 8, each multicasting both ways from rank 3. Axis 0: 8 columns of 4, from rank 1.
TEST_P(PointToPointAxisE2e, BroadcastEveryGroupFromTheSameRank) {
  const int axis = GetParam();
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes));
  const std::vector<std::vector<ChipId>> groups = galaxy_axis_groups(device->topology(), axis);
  bc::Params p;
  p.groups.cluster_axis = axis;
  p.root = groups.front().at(axis == 1 ? 3 : 1);
  const RunOutcome out = run_broadcast(*device, p, 7);
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.groups, groups.size());
  EXPECT_EQ(out.group_size, axis == 1 ? 8u : 4u);
  EXPECT_LT(most_payload_between_groups(out, groups), kPageBytes);
  // Every hop of every group carried the tensor away from its root.
  for (const auto& g : groups) {
    const std::size_t root = axis == 1 ? 3 : 1;
    for (std::size_t r = root + 1; r < g.size(); ++r) EXPECT_GT(out.link_payload_bytes.at({g[r - 1], g[r]}), kPageBytes);
    for (std::size_t r = root; r > 0; --r) EXPECT_GT(out.link_payload_bytes.at({g[r], g[r - 1]}), kPageBytes);
  }
}

// Axis 1: in every row rank 6 sends to rank 1 (5 hops down); axis 0: in every column rank 0 to rank 3.
TEST_P(PointToPointAxisE2e, SendRecvEveryGroupBetweenTheSameRanks) {
  const int axis = GetParam();
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes));
  const std::vector<std::vector<ChipId>> groups = galaxy_axis_groups(device->topology(), axis);
  const std::size_t from = axis == 1 ? 6 : 0;
  const std::size_t to = axis == 1 ? 1 : 3;
  sr::Params p;
  p.groups.cluster_axis = axis;
  p.sender = groups.front().at(from);
  p.receiver = groups.front().at(to);
  const RunOutcome out = run_send_recv(*device, p, 5);
  EXPECT_TRUE(out.verified);
  EXPECT_LT(most_payload_between_groups(out, groups), kPageBytes);
  for (const auto& g : groups) {
    // Each receiver got its own sender's bytes (run_send_recv), over every hop between them.
    for (std::size_t r = std::min(from, to); r < std::max(from, to); ++r) {
      const auto hop = from < to ? std::make_pair(g[r], g[r + 1]) : std::make_pair(g[r + 1], g[r]);
      EXPECT_GT(out.link_payload_bytes.at(hop), kPageBytes);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Galaxy, PointToPointAxisE2e, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& info) { return "Axis" + std::to_string(info.param); });

// A sender and a receiver in different groups have no rank pair every group could repeat.
TEST(PointToPointAxis, SendRecvAcrossGroupsIsRefused) {
  const topo::Topology galaxy = topo::build_galaxy();
  const std::vector<std::vector<ChipId>> rows = galaxy_axis_groups(galaxy, 1);
  sr::Params p;
  p.groups.cluster_axis = 1;
  p.sender = rows[0][0];
  p.receiver = rows[1][0];
  p.fabric = fabric_of(FabricMode::Line, FabricScope::Axes);
  p.input = runtime::BufferHandle{1, 0x10000, tile_pages_config(2)};
  p.output = runtime::BufferHandle{2, 0x20000, tile_pages_config(2)};
  try {
    sr::validate(p, galaxy);
    ADD_FAILURE() << "expected a rejection";
  } catch (const runtime::ccl::CclParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("are not in one group"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
