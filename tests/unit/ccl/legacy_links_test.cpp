// Legacy EDM mode on several links: the usable-link rule (legacy_links.hpp: the hop's links less
// one where fast dispatch tunnels, REFERENCE 6.9 / 3.1 / 3.3), and what the all_gather and
// reduce_scatter builders build per link: one EDM per link per hop end on that link's ethernet
// channel, two worker cores per link, each link's workers moving their own share of every slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "kernels/kernel_args.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_gather/all_gather_legacy.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_links.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_legacy.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ag = all_gather;
namespace rs = reduce_scatter;
namespace la = kernels::legacy_all_gather;
namespace le = kernels::legacy_edm;

// REFERENCE 3.3: "4-chip rings are the 2x2 squares, e.g. the MMIO square 0-1-3-2-0".
const std::vector<ChipId> kT3kMmioSquare{0, 1, 3, 2};

std::string expect_invalid(const std::function<void()>& f) {
  try {
    f();
  } catch (const CclParamsError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(LegacyLinks, DispatchTunnels) {
  using Hops = std::set<std::pair<ChipId, ChipId>>;
  // N300: R is reached through L over their one edge.
  EXPECT_EQ(dispatch_tunnel_hops(topo::build_n300()), (Hops{{0, 1}}));
  // T3K: each remote chip through its own card's L chip (REFERENCE 3.3's cards (4,0) ... (7,3)).
  EXPECT_EQ(dispatch_tunnel_hops(topo::build_t3k()), (Hops{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Every chip host-attached: no tunnels.
  EXPECT_TRUE(dispatch_tunnel_hops(topo::build_galaxy()).empty());
  EXPECT_TRUE(dispatch_tunnel_hops(topo::build_p300()).empty());
  // TG: one tunnel hop into each of the 32 Galaxy chips (a tree from the 4 gateways).
  EXPECT_EQ(dispatch_tunnel_hops(topo::build_tg()).size(), 32u);
}

TEST(LegacyLinks, UsableLinks) {
  const topo::Topology n300 = topo::build_n300();
  EXPECT_EQ(legacy_usable_links(n300, {0, 1}, CclTopology::Line), 1u);  // REFERENCE 3.1: dispatch takes one
  const topo::Topology t3k = topo::build_t3k();
  const auto ring = topo::find_system_ring(t3k);
  const std::vector<ChipId> ring_chips(ring.chips.begin(), ring.chips.end());
  EXPECT_EQ(legacy_usable_links(t3k, ring_chips, CclTopology::Ring), 1u);  // crosses every card's tunnel hop
  EXPECT_EQ(legacy_hop_links(t3k, 4, 0), 1u);
  EXPECT_EQ(legacy_hop_links(t3k, 0, 1), 2u);
  // REFERENCE 8 rows 3, 4, 6, 30, 32: 4 chips on 2 links, on the MMIO square.
  EXPECT_EQ(legacy_usable_links(t3k, kT3kMmioSquare, CclTopology::Ring), 2u);
  EXPECT_EQ(legacy_usable_links(t3k, kT3kMmioSquare, CclTopology::Line), 2u);
  EXPECT_EQ(legacy_usable_links(t3k, {4, 5}, CclTopology::Line), 2u);  // two remote chips, no tunnel between
  // The narrowest hop names the tunnel.
  const auto [a, b] = legacy_narrowest_hop(t3k, ring_chips, CclTopology::Ring);
  EXPECT_EQ(legacy_hop_links(t3k, a, b), 1u);
  // Galaxy 6U: all 4 links; a single chip has no hop.
  const topo::Topology galaxy = topo::build_galaxy();
  EXPECT_EQ(legacy_usable_links(galaxy, {0, 8, 16, 24}, CclTopology::Line), 4u);
  EXPECT_EQ(legacy_usable_links(galaxy, {0}, CclTopology::Line), 0u);
}

ag::Params gather_params(const topo::Topology& t, CclTopology shape, TensorSpec input, std::uint32_t links,
                         std::vector<ChipId> group) {
  ag::Params p;
  p.input = input;
  p.topology = shape;
  p.mode = CclMode::Legacy;
  p.num_links = links;
  p.groups.chips = {std::move(group)};
  p.input_buffer = test::dram_buffer(1, input);
  p.output_buffer = test::dram_buffer(2, ag::output_spec(p, t));
  return p;
}

// The logical ethernet channel every EDM kernel of `program` runs on.
std::vector<std::uint32_t> edm_channels(const Program& program) {
  std::vector<std::uint32_t> channels;
  for (const KernelSpec& k : program.kernels) {
    if (k.kernel == kernels::kLegacyEdmKernelName) channels.push_back(k.cores.front().start.x);
  }
  std::sort(channels.begin(), channels.end());
  return channels;
}

// REFERENCE 3.3: the square's edges 0-1 and 2-3 are on channels 14/15, 1-3 on 0/1, 0-2 on 6/7.
TEST(LegacyLinks, AllGatherTwoLinksOnTheT3kSquare) {
  const topo::Topology t = topo::build_t3k();
  const std::uint32_t pages = 41;  // split 21 + 20 over the links
  ag::Params p = gather_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * pages}}, 2, kT3kMmioSquare);
  p.legacy.pages_per_message = 4;
  ag::validate(p, t);
  const std::vector<CoreCoord> cores = ag::legacy::worker_cores(p, t);
  // A worker row per link: link l's up and down cores side by side on row l.
  EXPECT_EQ(cores, (std::vector<CoreCoord>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  const MeshWorkload w = ag::build(p, t);
  ASSERT_EQ(w.programs.size(), 4u);
  // Chip 0 neighbours 1 (ch 14, 15) and 2 (ch 6, 7): an EDM on every one of them.
  EXPECT_EQ(edm_channels(w.programs.at(0)), (std::vector<std::uint32_t>{6, 7, 14, 15}));
  EXPECT_EQ(edm_channels(w.programs.at(3)), (std::vector<std::uint32_t>{0, 1, 14, 15}));
  for (const auto& [chip, program] : w.programs) {
    SCOPED_TRACE(chip);
    // Per link: the messages of the link's share. Up: 2 slices out, 1 in; down: 1 out, 2 in.
    std::multiset<std::uint32_t> sent;
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kLegacyEdmKernelName) continue;
      sent.insert(k.common_runtime_args.at(le::channel_block(0) + le::kChannelNumMessages));
    }
    // 21 pages: 6 messages per slice; 20 pages: 5.
    EXPECT_EQ(sent, (std::multiset<std::uint32_t>{6, 12, 5, 10}));
    // The senders' own-input records: the two links' worker slices tile the input.
    std::map<std::uint32_t, std::uint32_t> pages_at;  // worker offset -> pages
    std::set<CoreCoord> worker_cores;
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kLegacyAllGatherSenderKernelName) continue;
      worker_cores.insert(k.cores.front().start);
      const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
      const api::CclCommandTensor input = kernels::read_slice_record(rt.data() + rt.at(la::kRtSlicesOffset));
      const api::CclCommandTensor own =
          kernels::read_slice_record(rt.data() + rt.at(la::kRtSlicesOffset) + la::kSliceRecordWords);
      EXPECT_EQ(input.worker_pages_per_slice, own.worker_pages_per_slice);
      EXPECT_EQ(input.worker_start_offset_in_slice.x, own.worker_start_offset_in_slice.x);
      pages_at[input.worker_start_offset_in_slice.x] += input.worker_pages_per_slice;
    }
    EXPECT_EQ(worker_cores.size(), 4u);  // 2 links x 2 directions, each its own core
    // Both directions send the whole input on each link's share: offsets 0 (21 pages) and 21 (20).
    EXPECT_EQ(pages_at, (std::map<std::uint32_t, std::uint32_t>{{0, 42}, {21, 40}}));
  }
}

TEST(LegacyLinks, OneLinkUnchanged) {
  // One link builds exactly what it built before several links existed: the whole slice, 2 EDMs.
  const topo::Topology t = topo::build_t3k();
  const ag::Params p = gather_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8}}, 1, kT3kMmioSquare);
  const MeshWorkload w = ag::build(p, t);
  EXPECT_EQ(edm_channels(w.programs.at(0)), (std::vector<std::uint32_t>{6, 14}));
  for (const KernelSpec& k : w.programs.at(0).kernels) {
    if (k.kernel != kernels::kLegacyAllGatherSenderKernelName) continue;
    const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
    const api::CclCommandTensor input = kernels::read_slice_record(rt.data() + rt.at(la::kRtSlicesOffset));
    EXPECT_EQ(input.worker_pages_per_slice, 8u);
    EXPECT_EQ(input.worker_start_offset_in_slice.x, 0u);
  }
}

TEST(LegacyLinks, ReduceScatterRunsPerLink) {
  const topo::Topology t = topo::build_galaxy();
  const std::vector<ChipId> column{0, 8, 16, 24};
  {
    const CclTopology shape = CclTopology::Line;
    rs::Params p;
    p.input = TensorSpec{{1, 1, 32, 32 * 4 * 9}};  // 9 tiles per slice over 4 links: 3, 2, 2, 2
    p.topology = shape;
    p.mode = CclMode::Legacy;
    p.num_links = 4;
    p.groups.chips = {column};
    p.input_buffer = test::dram_buffer(1, p.input);
    p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
    const MeshWorkload w = rs::build(p, t);
    const Program& top = w.programs.at(24);  // the line's top: only down senders, one per link
    EXPECT_EQ(edm_channels(top).size(), 4u);
    std::set<CoreCoord> sender_cores;
    for (const KernelSpec& k : top.kernels) {
      if (k.kernel == kernels::kLegacyReduceScatterSenderKernelName) sender_cores.insert(k.cores.front().start);
    }
    EXPECT_EQ(sender_cores.size(), 8u);  // per link: the down chain's start and the up chain's last write
    // Every EDM's sender channel on the top chip sends its link's run of 3 slices: 3 or 2 pages a
    // step at up to 18 pages a message, so one message per step.
    for (const KernelSpec& k : top.kernels) {
      if (k.kernel != kernels::kLegacyEdmKernelName) continue;
      EXPECT_EQ(k.common_runtime_args.at(le::channel_block(0) + le::kChannelNumMessages), 3u);
    }
  }
}

// A legacy reduce_scatter of `input` on one group of `chips` over `links` links.
rs::Params scatter_params(const topo::Topology& t, CclTopology shape, TensorSpec input, std::uint32_t links,
                          const std::vector<ChipId>& chips) {
  rs::Params p;
  p.input = input;
  p.topology = shape;
  p.mode = CclMode::Legacy;
  p.num_links = links;
  p.groups.chips = {chips};
  p.input_buffer = test::dram_buffer(1, p.input);
  p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
  return p;
}

// A ring: the slice's up half and down half (as on one link) are each shared out over the links,
// so a page's direction, and its reduction order, does not depend on the link count. 11 pages a
// slice on 2 links: up 6 = 3 + 3 (pages 0-2 link 0, 3-5 link 1), down 5 = 3 + 2 (6-8, 9-10).
TEST(LegacyLinks, ReduceScatterRingSharesEachHalfOverTheLinks) {
  namespace lrs = kernels::legacy_reduce_scatter;
  const topo::Topology t = topo::build_galaxy();
  const rs::Params p = scatter_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 4 * 11}}, 2, {0, 1, 9, 8});
  const MeshWorkload w = rs::build(p, t);
  // (first page, pages) of each sender's raw run, by core: up (0, link), down (1, 2 + link).
  std::map<CoreCoord, std::pair<std::uint32_t, std::uint32_t>> runs;
  for (const KernelSpec& k : w.programs.at(0).kernels) {
    if (k.kernel != kernels::kLegacyReduceScatterSenderKernelName) continue;
    const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
    const std::uint32_t* first = rt.data() + rt.at(lrs::kRtStepsOffset);
    ASSERT_EQ(first[0], lrs::kSendRaw);
    const api::CclCommandTensor run = kernels::read_slice_record(first + 1);
    runs[k.cores.front().start] = {run.worker_start_offset_in_slice.x, run.worker_pages_per_slice};
  }
  using Run = std::pair<std::uint32_t, std::uint32_t>;
  EXPECT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[(CoreCoord{0, 0})], (Run{0, 3}));
  EXPECT_EQ(runs[(CoreCoord{0, 1})], (Run{3, 3}));
  EXPECT_EQ(runs[(CoreCoord{1, 2})], (Run{6, 3}));
  EXPECT_EQ(runs[(CoreCoord{1, 3})], (Run{9, 2}));
}

// The reduce_scatter's workers take a row each (reduce_scatter_legacy.hpp, worker_cores): link
// l's up worker at (x, y + l), its down worker at (x + 1, y + links + l), so the two directions'
// receivers read their partials out of their EDMs along different NoC1 rows. The all_gather
// keeps both of a link's workers on one row.
TEST(LegacyLinks, ReduceScatterWorkersTakeARowEach) {
  const topo::Topology t = topo::build_galaxy();
  rs::Params p = scatter_params(t, CclTopology::Line, TensorSpec{{1, 1, 32, 32 * 4 * 8}}, 4, {0, 8, 16, 24});
  p.first_worker = CoreCoord{2, 1};
  EXPECT_EQ(rs::legacy::worker_cores(p, t), (std::vector<CoreCoord>{{2, 1}, {3, 5}, {2, 2}, {3, 6}, {2, 3}, {3, 7},
                                                                    {2, 4}, {3, 8}}));
  // Every worker kernel of a middle chip runs on one of those cores, and no two cores share a row.
  const MeshWorkload w = rs::build(p, t);
  std::set<CoreCoord> cores;
  for (const KernelSpec& k : w.programs.at(8).kernels) {
    if (k.kernel != kernels::kLegacyEdmKernelName) cores.insert(k.cores.front().start);
  }
  EXPECT_EQ(cores.size(), 8u);
  std::set<std::uint32_t> rows;
  for (const CoreCoord& c : cores) rows.insert(c.y);
  EXPECT_EQ(rows.size(), 8u);
  // The rows must fit the grid: 2 x links rows from first_worker, where the all_gather needs
  // only links rows.
  const CoreCoord grid = common_worker_grid(t);
  p.first_worker = CoreCoord{0, grid.y - 4};
  const std::string m = expect_invalid([&] { rs::validate(p, t); });
  EXPECT_NE(m.find("8 rows"), std::string::npos) << m;
  EXPECT_NE(m.find("do not fit"), std::string::npos) << m;
  p.first_worker = CoreCoord{0, grid.y - 8};
  EXPECT_NO_THROW(rs::validate(p, t));
}

TEST(LegacyLinks, Refusals) {
  const topo::Topology t3k = topo::build_t3k();
  // The T3K's 8-chip ring crosses the cards' tunnel hops: 1 link.
  ag::Params ring;
  ring.input = TensorSpec{{1, 1, 32, 32 * 8}};
  ring.mode = CclMode::Legacy;
  ring.num_links = 2;
  ring.input_buffer = test::dram_buffer(1, ring.input);
  ring.output_buffer = test::dram_buffer(2, ag::output_spec(ring, t3k));
  const std::string m = expect_invalid([&] { ag::validate(ring, t3k); });
  EXPECT_NE(m.find("num_links 2 in legacy mode"), std::string::npos) << m;
  EXPECT_NE(m.find("expected 1 to 1"), std::string::npos) << m;
  EXPECT_NE(m.find("dispatch"), std::string::npos) << m;
  // The square allows 2, not 3 (REFERENCE 3.3: 2 links per neighbour).
  const ag::Params three = gather_params(t3k, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8}}, 3, kT3kMmioSquare);
  const std::string m3 = expect_invalid([&] { ag::validate(three, t3k); });
  EXPECT_NE(m3.find("num_links 3"), std::string::npos) << m3;
  // A link needs a page of every slice.
  const ag::Params tiny = gather_params(t3k, CclTopology::Ring, TensorSpec{{1, 1, 32, 32}}, 2, kT3kMmioSquare);
  EXPECT_NE(expect_invalid([&] { ag::validate(tiny, t3k); }).find("at least one page per link"), std::string::npos);
  // reduce_scatter's ring: 2 runs per link, so 4 pages per slice on 2 links.
  rs::Params r;
  r.input = TensorSpec{{1, 1, 32, 32 * 4 * 3}};  // 3 tiles per slice
  r.mode = CclMode::Legacy;
  r.num_links = 2;
  r.groups.chips = {kT3kMmioSquare};
  r.input_buffer = test::dram_buffer(1, r.input);
  r.output_buffer = test::dram_buffer(2, rs::output_spec(r, t3k));
  EXPECT_NE(expect_invalid([&] { rs::validate(r, t3k); }).find("at least 4 pages"), std::string::npos);
  r.input = TensorSpec{{1, 1, 32, 32 * 4 * 4}};
  r.input_buffer = test::dram_buffer(1, r.input);
  r.output_buffer = test::dram_buffer(2, rs::output_spec(r, t3k));
  EXPECT_NO_THROW(rs::validate(r, t3k));
  // The workers' rows must fit the grid: from the last column there is no room for the pair.
  ag::Params edge = gather_params(t3k, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8}}, 2, kT3kMmioSquare);
  edge.first_worker = CoreCoord{common_worker_grid(t3k).x - 1, 0};
  EXPECT_NE(expect_invalid([&] { ag::validate(edge, t3k); }).find("do not fit"), std::string::npos);
  // N300's one edge keeps 1 link for CCLs (REFERENCE 3.1).
  const topo::Topology n300 = topo::build_n300();
  rs::Params pair;
  pair.input = TensorSpec{{1, 1, 32, 32 * 8}};
  pair.topology = CclTopology::Line;
  pair.mode = CclMode::Legacy;
  pair.num_links = 2;
  pair.input_buffer = test::dram_buffer(1, pair.input);
  pair.output_buffer = test::dram_buffer(2, rs::output_spec(pair, n300));
  EXPECT_NE(expect_invalid([&] { rs::validate(pair, n300); }).find("expected 1 to 1"), std::string::npos);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
