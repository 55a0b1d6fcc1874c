// broadcast round a fabric ring, end to end with real data, by both ring algorithms: both ways
// (every packet n/2 chips one way and (n-1)/2 the other) and split (the first half of the pages
// n-1 chips forward round the whole ring, the second half n-1 chips backward). Even and odd
// rings, the whole-system fabric and a torus axis (every row a ring, all at once). Every chip's
// output is its own group's root input bit for bit (run_broadcast); the link bytes show which
// way each algorithm sent the tensor and that a split's root injects it once.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/embedding.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace bc = runtime::ccl::broadcast;
using runtime::FabricScope;

constexpr std::int64_t kPageBytes = 2048;
constexpr std::uint32_t kPages = 13;  // halves of 7 and 6 pages

struct RingCase {
  std::string name;
  std::string system;
  std::optional<int> cluster_axis;  // per-axis fabric: every row (1) or column (0) a ring
  std::uint32_t root_rank = 0;
};

struct BroadcastRingParam {
  RingCase ring;
  bc::RingAlgorithm algorithm = bc::RingAlgorithm::BothWays;
};

void PrintTo(const BroadcastRingParam& param, std::ostream* os) {
  *os << param.ring.name << " " << bc::to_string(param.algorithm);
}

class BroadcastRingE2e : public ::testing::TestWithParam<BroadcastRingParam> {};

TEST_P(BroadcastRingE2e, EveryChipHoldsItsRootsInputSentTheAlgorithmsWay) {
  const BroadcastRingParam& param = GetParam();
  const bool split = param.algorithm == bc::RingAlgorithm::Split;
  const FabricScope scope = param.ring.cluster_axis ? FabricScope::Axes : FabricScope::System;
  auto device = make_device(topo::load_system(param.ring.system), fabric_of(FabricMode::Ring, scope));
  bc::Params p;
  p.ring_algorithm = param.algorithm;
  p.groups.cluster_axis = param.ring.cluster_axis;
  const std::vector<std::vector<ChipId>> groups = detail::fabric_groups(*device, p.groups);
  p.root = groups.front().at(param.ring.root_rank);
  p.fabric = device->options().fabric;
  p.input = runtime::BufferHandle{1, 0x10000, tile_pages_config(kPages)};
  p.output = runtime::BufferHandle{2, 0x20000, tile_pages_config(kPages)};
  ASSERT_EQ(bc::resolved_ring_algorithm(p, device->topology()), param.algorithm);

  const RunOutcome out = run_broadcast(*device, p, kPages);
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.groups, groups.size());
  const std::int64_t tensor = std::int64_t{kPages} * kPageBytes;
  for (const std::vector<ChipId>& g : groups) {
    const std::size_t n = g.size();
    const ChipId root = g.at(param.ring.root_rank);
    // Directed ring hops that carried pages: n-1 both ways (n/2 + (n-1)/2), 2(n-1) split (each
    // way round all but the hop back into the root). No hop brings the tensor back to the root.
    std::size_t hops_with_data = 0;
    for (std::size_t r = 0; r < n; ++r) {
      for (const auto& [from, to] : {std::make_pair(g[r], g[(r + 1) % n]), std::make_pair(g[(r + 1) % n], g[r])}) {
        const std::int64_t bytes = out.link_payload_bytes.at({from, to});
        if (to == root) {
          EXPECT_LT(bytes, kPageBytes) << from << "->" << to;
        }
        if (bytes > kPageBytes) ++hops_with_data;
      }
    }
    EXPECT_EQ(hops_with_data, split ? 2 * (n - 1) : n - 1) << "group of root " << root;
    // The root's two hops out carry the whole tensor each both ways (every packet goes both
    // ways), one half each split.
    const std::int64_t out_of_root = out.link_payload_bytes.at({root, g[(param.ring.root_rank + 1) % n]}) +
                                     out.link_payload_bytes.at({root, g[(param.ring.root_rank + n - 1) % n]});
    if (split) {
      EXPECT_GE(out_of_root, tensor);
      EXPECT_LT(out_of_root, tensor + 2 * kPageBytes);  // headers and the done increments
    } else {
      EXPECT_GE(out_of_root, 2 * tensor);
    }
  }
}

std::vector<BroadcastRingParam> cases() {
  const std::vector<RingCase> rings = {
      {"T3kRing8Root3", "t3k", std::nullopt, 3},
      {"Ring5Root2", "ring:5", std::nullopt, 2},
      {"Torus4x4RowsRank1", "torus:4x4", 1, 1},
      {"Torus3x5RowsRank4", "torus:3x5", 1, 4},
  };
  std::vector<BroadcastRingParam> result;
  for (const RingCase& ring : rings) {
    for (const bc::RingAlgorithm algorithm : {bc::RingAlgorithm::BothWays, bc::RingAlgorithm::Split}) {
      result.push_back({ring, algorithm});
    }
  }
  return result;
}

INSTANTIATE_TEST_SUITE_P(Rings, BroadcastRingE2e, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BroadcastRingParam>& info) {
                           return info.param.ring.name +
                                  (info.param.algorithm == bc::RingAlgorithm::Split ? "Split" : "BothWays");
                         });

}  // namespace
}  // namespace cclmesh::ccltest
