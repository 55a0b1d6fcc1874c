// all_to_all's two sender layouts (all_to_all::Params::senders, sender_layout.hpp) end to end
// with real data, each compared bit for bit with all_to_all::reference_outputs: one sender per
// destination (a fabric mux per link and direction), and one per direction. N300, the T3K ring
// (its farthest chunk split) and line (senders capped at a mux's 6 clients, the first with two
// destinations), mesh:1x4, Galaxy columns on 4 links, TG and Galaxy rows, ring:8 on 2 links,
// ROW_MAJOR along dims 2 and 3, a ring run as a line around a down link, a 16-ring on 4 links
// whose worker grid caps the senders at 3 per link and direction, and ring:30 and a 16-line on
// 4 links, capped at a mux's 6. Since session 42 every link has its own local-copy worker for its
// part of the chip's own chunk (sender_layout.hpp), so a plan's cores are per link its sender
// slots and a copy worker, then the muxes; the local copy per link is verified on 2-chip columns
// of torus:2x8/2 on 2 links and Galaxy columns on 4, with uneven and empty parts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace a2a = runtime::ccl::all_to_all;
using a2a::SenderLayout;
using runtime::FabricScope;

constexpr SenderLayout kLayouts[] = {SenderLayout::PerDestination, SenderLayout::PerDirection};

TensorSpec row_major(std::array<std::uint32_t, 4> shape) {
  return TensorSpec{shape, DataType::Bfloat16, Layout::RowMajor};
}

a2a::Params params(const TensorSpec& tensor, CclTopology shape, SenderLayout senders) {
  a2a::Params p;
  p.tensor = tensor;
  p.topology = shape;
  p.senders = senders;
  return p;
}

void expect_verified(sim::device::SimMeshDevice& device, const a2a::Params& p, Memory memory = {}) {
  const RunOutcome out = run_all_to_all(device, p, memory, RunOptions{2});  // twice: the semaphores reset
  EXPECT_TRUE(out.verified);
}

TEST(AllToAllSendersE2e, N300AndMeshOneByFour) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto n300 = make_device(topo::build_n300(), FabricMode::Line);
    expect_verified(*n300, params(tile({2, 2, 64, 64}), CclTopology::Line, layout));
    auto mesh = make_device(topo::load_system("mesh:1x4"), FabricMode::Line);
    expect_verified(*mesh, params(tile({1, 1, 32, 32 * 4 * 5}), CclTopology::Line, layout));
  }
}

TEST(AllToAllSendersE2e, T3kRingAndLine) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto ring = make_device(topo::build_t3k(), FabricMode::Ring);
    // 3 tiles per chunk: the split farthest chunk's halves are uneven.
    expect_verified(*ring, params(tile({1, 1, 32, 32 * 24}), CclTopology::Ring, layout));
    auto line = make_device(topo::build_t3k(), FabricMode::Line);
    a2a::Params p = params(tile({1, 1, 64, 32 * 16}), CclTopology::Line, layout);
    p.rounds = 1;  // one destination after another: a capped sender's two in turn
    expect_verified(*line, p);
    expect_verified(*line, params(tile({1, 1, 64, 32 * 16}), CclTopology::Line, layout));
  }
}

TEST(AllToAllSendersE2e, GalaxyColumnsFourLinks) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes, 4));
    a2a::Params p = params(tile({1, 1, 32, 32 * 8 * 5}), CclTopology::Line, layout);  // link shares 2, 1, 1, 1
    p.num_links = 4;
    p.groups.cluster_axis = 0;
    expect_verified(*device, p);
  }
}

// TG and Galaxy rows (8-chip lines) on 3 and 4 links: an end chip's 7 destinations one way go to
// 6 senders per link; per link 7 sender slots (6 up and 1 down at position 1), a local-copy worker
// and 2 muxes (3 x 7 + 3 + 6 = 30 and 4 x 7 + 4 + 8 = 40 cores).
TEST(AllToAllSendersE2e, TgAndGalaxyRowsCappedAtAMuxsClients) {
  const std::pair<topo::Topology, std::uint32_t> systems[] = {{topo::build_tg(), 3u}, {topo::build_galaxy(), 4u}};
  for (const auto& [system, links] : systems) {
    SCOPED_TRACE(links);
    auto device = make_device(system, fabric_of(FabricMode::Line, FabricScope::Axes, links));
    a2a::Params p = params(tile({1, 1, 32, 32 * 8 * 3}), CclTopology::Line, SenderLayout::PerDestination);
    p.num_links = links;
    p.groups.cluster_axis = 1;
    const a2a::SenderPlan plan = a2a::senders_choice(p, device->topology(), 8).plan;
    EXPECT_EQ(plan.senders_per_direction, 6u);
    EXPECT_EQ(plan.core_count(), links * 7 + links + 2 * links);
    expect_verified(*device, p);
  }
}

TEST(AllToAllSendersE2e, RingOfEightTwoLinks) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, FabricScope::System, 2));
    a2a::Params p = params(tile({1, 1, 32, 32 * 8 * 5}), CclTopology::Ring, layout);
    p.num_links = 2;
    expect_verified(*device, p);
  }
}

TEST(AllToAllSendersE2e, T3kRowMajor) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    expect_verified(*device, params(row_major({1, 2, 7, 8 * 192}), CclTopology::Ring, layout));  // dim 3: 384 B chunks
    a2a::Params rows = params(row_major({1, 1, 8 * 4, 64}), CclTopology::Ring, layout);
    rows.dim = 2;
    expect_verified(*device, rows, Memory{runtime::BufferType::L1, std::nullopt});
  }
}

// ring:8 with link 3-4 down runs as a line 4, 5, ..., 3 (ranks by the ring's order).
TEST(AllToAllSendersE2e, RingRunAsALineAroundADownLink) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    runtime::FabricOptions fabric = fabric_of(FabricMode::Ring, FabricScope::System);
    fabric.down_edges = {{3, 4}};
    auto device = make_device(topo::load_system("ring:8"), fabric);
    expect_verified(*device, params(tile({1, 1, 32, 32 * 8 * 2}), CclTopology::Ring, layout));
  }
}

// A 16-ring on 4 links from worker row 5 of the 8x10 grid: 40 cores, so 3 senders per link and direction (of
// 8), most with three destinations: 4 x 6 sender slots, 4 copy workers and 8 muxes are 36 cores (4 a
// direction would take 4 x 8 + 4 + 8 = 44).
TEST(AllToAllSendersE2e, SixteenRingFourLinksCappedByTheWorkerGrid) {
  auto device = make_device(topo::load_system("ring:16/4"), fabric_of(FabricMode::Ring, FabricScope::System, 4));
  a2a::Params p = params(tile({1, 1, 32, 32 * 16 * 4}), CclTopology::Ring, SenderLayout::PerDestination);
  p.num_links = 4;
  p.first_worker = {0, 5};
  const a2a::SenderLayoutChoice choice = a2a::senders_choice(p, device->topology(), 16);
  EXPECT_EQ(choice.plan.senders_per_direction, 3u);
  EXPECT_EQ(choice.plan.core_count(), 36u);
  expect_verified(*device, p);
}

// The largest groups the CLI runs: ring:30 on 4 links (15 destinations one way from every chip:
// 6 senders per link and direction, 4 x 12 + 4 copy workers + 8 muxes = 60 cores) and a 16-chip
// line on 4 links (an end chip's 15).
TEST(AllToAllSendersE2e, LargestGroupsCappedAtAMuxsClients) {
  {
    auto device = make_device(topo::load_system("ring:30/4"), fabric_of(FabricMode::Ring, FabricScope::System, 4));
    a2a::Params p = params(tile({1, 1, 32, 32 * 30 * 2}), CclTopology::Ring, SenderLayout::PerDestination);
    p.num_links = 4;
    const a2a::SenderLayoutChoice choice = a2a::senders_choice(p, device->topology(), 30);
    EXPECT_EQ(choice.plan.senders_per_direction, 6u);
    EXPECT_EQ(choice.plan.needed_per_direction, 15u);
    EXPECT_EQ(choice.plan.core_count(), 60u);
    expect_verified(*device, p);
  }
  auto device = make_device(topo::load_system("mesh:1x16/4"), fabric_of(FabricMode::Line, FabricScope::System, 4));
  a2a::Params p = params(tile({1, 1, 32, 32 * 16 * 2}), CclTopology::Line, SenderLayout::PerDestination);
  p.num_links = 4;
  EXPECT_EQ(a2a::senders_choice(p, device->topology(), 16).plan.senders_per_direction, 6u);
  expect_verified(*device, p);
}

// The local copy per link (session 42): on 2 chips the own chunk is half the tensor, and each
// link's copy worker copies its part. torus:2x8/2 columns on 2 links: 3 tiles a chunk (parts of
// 2 and 1) and 8 (4 and 4); Galaxy columns on 4 links: 1 tile a chunk (links 1-3 copy nothing)
// and 6 (2, 2, 1, 1).
TEST(AllToAllSendersE2e, LocalCopyPerLink) {
  for (const SenderLayout layout : kLayouts) {
    SCOPED_TRACE(a2a::to_string(layout));
    auto torus = make_device(topo::load_system("torus:2x8/2"), fabric_of(FabricMode::Line, FabricScope::Axes, 2));
    for (const std::uint32_t tiles : {3u, 8u}) {
      SCOPED_TRACE(tiles);
      a2a::Params p = params(tile({1, 1, 32, 32 * 2 * tiles}), CclTopology::Line, layout);
      p.num_links = 2;
      p.groups.cluster_axis = 0;
      EXPECT_EQ(a2a::senders_choice(p, torus->topology(), 2).plan.worker_cores(), 2u * 2 + 2);
      expect_verified(*torus, p);
    }
    auto galaxy = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, FabricScope::Axes, 4));
    for (const std::uint32_t tiles : {1u, 6u}) {
      SCOPED_TRACE(tiles);
      a2a::Params p = params(tile({1, 1, 32, 32 * 4 * tiles}), CclTopology::Line, layout);
      p.num_links = 4;
      p.groups.cluster_axis = 0;
      expect_verified(*galaxy, p);
    }
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
