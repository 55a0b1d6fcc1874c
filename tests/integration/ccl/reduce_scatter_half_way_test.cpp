// The half-way ring reduce_scatter (RingAlgorithm::HalfWay, half_way_ring.hpp) end to end on the
// simulated device with real data, every chip's output bit for bit against
// reduce_scatter::reference_outputs (the half-way order: per page run fold(s+kR, ..., s) +
// fold(s-kL, ..., s-1), bf16 rounded and bfp8_b re-quantised after every addition): the T3K
// 8-ring in bf16, fp32 and bfp8_b and every dim, the 4-ring (the T3K's MMIO square), the 3-ring
// (kL = kR = 1: nothing forwarded), ring:8 on 2 links, several workers per link (the mux), L1,
// one-packet chunks, back to back, and torus rows (cluster_axis 1, every row a ring at once). And
// the bytes each direction of each link carries: the same both ways.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/fabric/router_logic.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/reduce_scatter_case.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;

// A half-way ring case: one worker per link unless a test asks for more.
struct Case : ReduceScatterCase {
  Case() {
    ring_algorithm = rs::RingAlgorithm::HalfWay;
    workers_per_link = 1;
  }
};

RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) { return run_reduce_scatter_case(device, c); }

TEST(ReduceScatterHalfWayE2e, T3kRingEveryDimAndDtype) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    Case c;
    c.input = tile({dim == 0 ? 8u : 1u, dim == 1 ? 8u : 1u, dim == 2 ? 512u : 64u, dim == 3 ? 512u : 64u});
    c.dim = dim;
    run_case(*device, c);
  }
  for (const DataType dtype : {DataType::Float32, DataType::Bfloat8B}) {
    SCOPED_TRACE(fmt::format("dtype {}", static_cast<int>(dtype)));
    Case c;
    c.input = tile({1, 1, 64, 32 * 8 * 6}, dtype);  // 12 pages per slice: 6 per set
    run_case(*device, c);
  }
}

// Into L1, from L1, and one-packet chunks (many credits and resets per message, the left
// partials chunk by chunk), then three times back to back (the intermediate regions reused at
// once behind the entry barrier).
TEST(ReduceScatterHalfWayE2e, T3kRingL1OnePacketChunksAndBackToBack) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const Memory l1{BufferType::L1, std::nullopt};
  Case into_l1;
  into_l1.input = tile({1, 1, 32, 256 * 8});
  into_l1.output_memory = l1;
  run_case(*device, into_l1);
  Case from_l1 = into_l1;
  from_l1.input_memory = l1;
  from_l1.output_memory = Memory{};
  run_case(*device, from_l1);
  Case chunks;
  chunks.input = tile({1, 1, 128, 1024});
  chunks.chunk_packets = 1;
  chunks.packet_pages = 1;
  run_case(*device, chunks);
  Case repeated;
  repeated.input = tile({1, 1, 64, 1024});
  repeated.repeats = 3;
  run_case(*device, repeated);
}

// The T3K's MMIO square 0-1-3-2 as a 4-ring (sets kL, kR = 2, 1 and 1, 2) and ring:3 (kL = kR =
// 1: every worker sends its raw slice and the owner adds two received ones), DRAM and L1.
TEST(ReduceScatterHalfWayE2e, FourRingAndThreeRing) {
  auto square = make_device(topo::build_t3k(), FabricMode::Ring, {0, 1, 3, 2});
  auto three = make_device(topo::load_system("ring:3"), FabricMode::Ring);
  for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
    Case c;
    c.input = tile({1, 1, 64, 32 * 4 * 3});
    c.input_memory = Memory{memory, std::nullopt};
    c.output_memory = Memory{memory, std::nullopt};
    EXPECT_EQ(run_case(*square, c).group_size, 4u);
    Case odd = c;
    odd.input = tile({1, 1, 64, 32 * 3 * 3}, DataType::Float32);
    EXPECT_EQ(run_case(*three, odd).group_size, 3u);
  }
}

// ring:8 on 2 links (each link's workers on their runs, both sets on each link), and several
// workers per link and direction through the fabric mux: 2 and 3 (an even ring runs 2 and 4:
// ceil(W/2) per set) on the 8-ring, 3 on ring:5 (one set, 3 workers).
TEST(ReduceScatterHalfWayE2e, TwoLinksAndSeveralWorkersPerLink) {
  auto two_links =
      make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  Case links;
  links.input = tile({1, 1, 64, 32 * 8 * 4});
  links.num_links = 2;
  run_case(*two_links, links);
  links.workers_per_link = 2;
  run_case(*two_links, links);
  auto t3k = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const std::uint32_t workers : {2u, 3u}) {
    SCOPED_TRACE(fmt::format("{} workers", workers));
    Case c;
    c.input = tile({1, 1, 64, 32 * 8 * 8});
    c.workers_per_link = workers;
    run_case(*t3k, c);
  }
  auto five = make_device(topo::load_system("ring:5"), FabricMode::Ring);
  Case odd;
  odd.input = tile({1, 1, 64, 32 * 5 * 6});
  odd.workers_per_link = 3;
  run_case(*five, odd);
}

// torus:4x4 rows (cluster_axis 1): four 4-rings at once, each on its own axis ring.
TEST(ReduceScatterHalfWayE2e, TorusRowsAllAtOnce) {
  auto device = make_device(topo::load_system("torus:4x4"), fabric_of(FabricMode::Ring, runtime::FabricScope::Axes));
  Case c;
  c.input = tile({1, 1, 64, 32 * 4 * 2});
  c.cluster_axis = 1;
  const RunOutcome r = run_case(*device, c);
  EXPECT_EQ(r.group_size, 4u);
  EXPECT_EQ(r.groups, 4u);
}

// Both directions of every 8-ring link carry the same bytes: each set's opposite slice heads the
// rightward chain in one set and the leftward one in the other, so 3.5 slices go each way (the
// chain's half slice over 7 hops each way). Exactly, per link direction (every chip sends the same,
// one hop): 28 data packets of two 2048 B pages (3.5 slices of 16 pages; per set one worker each
// way, on half of each slice, 4 messages in one set and 3 in the other, one 8-page chunk each) and
// 16 header-only semaphore increments (2 barrier increments per worker, one per message, and the
// credits for the other chain's 2 + 3 messages written over again). A router sends each packet as
// its header and payload, then its 16 B sync word apart (none fills its slot); besides, it sends
// its start-up handshake word (kernels/common/eth_handshake.hpp) and 16 B ack words (first-level
// and completion) for the packets coming the other way, batching them while its TX queue is busy,
// so their count, and only theirs, follows the timing: the directions of a link differ by a few
// ack words (tens of bytes). Everything but the acks is exact.
TEST(ReduceScatterHalfWayE2e, T3kEveryLinkDirectionCarriesTheSameBytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 128, 1024});  // 256 KiB per chip, 16 pages per slice
  const RunOutcome r = run_case(*device, c);
  const std::int64_t page = 2048;
  const std::int64_t packet_payload = runtime::FabricOptions{}.max_payload_bytes / page * page;  // 2 pages
  const std::int64_t data_packets = 7 * 16 * page / 2 / packet_payload;
  const std::int64_t increments = 2 * 2 + (4 + 3) + (2 + 3);
  const std::int64_t header = api::kPacketHeaderSizeBytes;
  const std::int64_t sync = api::kEthChannelSyncBytes;
  const std::int64_t ack = sizeof(kernels::FabricAckWord);
  const std::int64_t handshake = api::kEthWordBytes;  // one status word
  ASSERT_EQ(data_packets, 28);
  ASSERT_LT(packet_payload, runtime::FabricOptions{}.max_payload_bytes);  // the sync word goes apart
  const std::int64_t packets = data_packets + increments;
  const std::int64_t packet_sends = 2 * packets;  // header and payload, then the sync word
  const std::int64_t packet_bytes = data_packets * (header + packet_payload + sync) + increments * (header + sync);
  std::size_t directions = 0;
  for (const auto& [hop, bytes] : r.link_payload_bytes) {
    if (bytes == 0) continue;
    SCOPED_TRACE(fmt::format("link {}->{}", hop.first, hop.second));
    ++directions;
    const std::int64_t acks = r.link_sends.at(hop) - packet_sends - 1;  // less the handshake
    EXPECT_EQ(bytes - handshake - acks * ack, packet_bytes);
    // At least one ack, at most a first-level and a completion ack per packet the other way.
    EXPECT_GE(acks, 1);
    EXPECT_LE(acks, 2 * packets);
  }
  EXPECT_EQ(directions, 16u);  // the 8 ring links, both ways
}

}  // namespace
}  // namespace cclmesh::ccltest
