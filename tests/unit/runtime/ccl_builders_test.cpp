// The op builders as pure functions of (params, topology): what they validate and what the
// workloads they build contain. No device and no engine.
#include <gtest/gtest.h>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime {
namespace {

BufferHandle dram(std::uint32_t id, std::uint64_t bytes = 8192, std::uint32_t page = 2048) {
  return BufferHandle{id, 0x10000 * id, BufferConfig{BufferType::Dram, bytes, page, TensorMemoryLayout::Interleaved, {}}};
}

ccl::send_recv::Params send_recv(ChipId from, ChipId to, FabricMode mode = FabricMode::Line) {
  ccl::send_recv::Params p;
  p.sender = from;
  p.receiver = to;
  p.input = dram(1);
  p.output = dram(2);
  p.fabric.mode = mode;
  return p;
}

std::vector<std::uint32_t> semaphore_ids(const Program& program) {
  std::vector<std::uint32_t> ids;
  for (const SemaphoreSpec& s : program.semaphores) ids.push_back(s.id);
  return ids;
}

TEST(SendRecvBuilder, SenderStreamsOverTheFabricAndTheReceiverWaits) {
  const topo::Topology t3k = topo::build_t3k();
  const FabricPlan plan(t3k, send_recv(0, 1).fabric);
  const ChipId from = plan.chips()[5];
  const ChipId to = plan.chips()[2];  // 3 hops backward
  const MeshWorkload w = ccl::send_recv::build(send_recv(from, to), t3k);
  EXPECT_EQ(w.name, "send_recv");
  ASSERT_EQ(w.programs.size(), 2u);
  const Program& sender = w.programs.at(from);
  const Program& receiver = w.programs.at(to);
  EXPECT_EQ(semaphore_ids(sender), (std::vector<std::uint32_t>{0, 4, 5, 6}));  // done + backward connection
  EXPECT_EQ(semaphore_ids(receiver), (std::vector<std::uint32_t>{0}));
  // A reader on RISC-V 1 / NoC1 and a writer on RISC-V 0 / NoC0, sharing the data CB.
  ASSERT_EQ(sender.kernels.size(), 2u);
  const KernelSpec& reader = sender.kernels[0];
  const KernelSpec& writer = sender.kernels[1];
  EXPECT_EQ(reader.kernel, kernels::kCclInterpreterKernelName);
  EXPECT_EQ(reader.processor, DataMovementProcessor::Riscv1);
  EXPECT_EQ(reader.noc, NocIndex::Noc1);
  EXPECT_EQ(writer.processor, DataMovementProcessor::Riscv0);
  const std::vector<std::uint32_t>& read_rt = reader.runtime_args.at(CoreCoord{0, 0});
  EXPECT_NE(kargs::describe_interpreter_command(read_rt, 0, 0).find("STREAM_TENSOR_TO_CB"), std::string::npos);
  EXPECT_EQ(read_rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
  const std::vector<std::uint32_t>& rt = writer.runtime_args.at(CoreCoord{0, 0});
  EXPECT_EQ(rt[kernels::interpreter::kRtForwardConnectionOffset], 0u);
  EXPECT_NE(rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
  const std::string write = kargs::describe_interpreter_command(rt, 0, 0);
  EXPECT_NE(write.find("STREAM_CB_TO_TENSOR"), std::string::npos) << write;
  EXPECT_NE(write.find("dest=UNICAST hops=3 bwd"), std::string::npos) << write;
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 1).find("ATOMIC_INC"), std::string::npos);
  // 4352 B payloads hold two 2 KiB pages; the CB holds two packets.
  EXPECT_EQ(rt[kernels::interpreter::kRtPacketSizeInPages], 2u);
  EXPECT_EQ(read_rt[kernels::interpreter::kRtPacketSizeInPages], 2u);
  ASSERT_EQ(sender.circular_buffers.size(), 2u);
  EXPECT_EQ(sender.circular_buffers[1].num_pages, 4u);
}

TEST(SendRecvBuilder, OneChipIsALocalCopy) {
  const MeshWorkload w = ccl::send_recv::build(send_recv(3, 3, FabricMode::None), topo::build_t3k());
  ASSERT_EQ(w.programs.size(), 1u);
  EXPECT_TRUE(w.programs.at(3).semaphores.empty());
  const std::vector<std::uint32_t>& rt = w.programs.at(3).kernels[1].runtime_args.at(CoreCoord{0, 0});
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 0).find("dest=LOCAL"), std::string::npos)
      << kargs::describe_interpreter_command(rt, 0, 0);
  auto one_kernel = send_recv(3, 3, FabricMode::None);
  one_kernel.split_reader_writer = false;
  EXPECT_EQ(ccl::send_recv::build(one_kernel, topo::build_t3k()).programs.at(3).kernels.size(), 1u);
}

TEST(SendRecvBuilder, ValidateNamesWhatIsWrong) {
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_THROW(ccl::send_recv::validate(send_recv(0, 1, FabricMode::None), t3k), ccl::CclParamsError);
  EXPECT_THROW(ccl::send_recv::validate(send_recv(0, 9), t3k), topo::InputError);
  auto mismatch = send_recv(0, 1);
  mismatch.output = dram(2, 4096);
  EXPECT_THROW(ccl::send_recv::validate(mismatch, t3k), ccl::CclParamsError);
  auto outside = send_recv(0, 1);
  outside.worker = {8, 0};
  EXPECT_THROW(ccl::send_recv::validate(outside, t3k), ccl::CclParamsError);
  // A page wider than the 4352 B payload moves in 32 B-aligned pieces since session 34 (8192 B:
  // two of 4096 B), and one that is not a multiple of 32 B since session 36 (8200 B: 4128 +
  // 4072 B); a payload under 32 B holds no such piece.
  auto big_pages = send_recv(0, 1);
  big_pages.input = dram(1, 16384, 8192);
  big_pages.output = dram(2, 16384, 8192);
  EXPECT_NO_THROW(ccl::send_recv::validate(big_pages, t3k));
  auto unaligned_big_pages = send_recv(0, 1);
  unaligned_big_pages.input = dram(1, 16400, 8200);
  unaligned_big_pages.output = dram(2, 16400, 8200);
  EXPECT_NO_THROW(ccl::send_recv::validate(unaligned_big_pages, t3k));
  unaligned_big_pages.fabric.max_payload_bytes = 16;
  EXPECT_THROW(ccl::send_recv::validate(unaligned_big_pages, t3k), ccl::CclParamsError);
  auto off_fabric = send_recv(0, 1);
  off_fabric.fabric.chip_order = {0, 2, 3};
  EXPECT_THROW(ccl::send_recv::validate(off_fabric, t3k), FabricPlanError);
}

TEST(SendRecvBuilder, ParamsHashAndCompareByValue) {
  const auto a = send_recv(0, 7);
  auto b = send_recv(0, 7);
  EXPECT_EQ(a, b);
  EXPECT_EQ(ccl::send_recv::hash_value(a), ccl::send_recv::hash_value(b));
  b.receiver = 6;
  EXPECT_NE(a, b);
  EXPECT_NE(ccl::send_recv::hash_value(a), ccl::send_recv::hash_value(b));
}

TEST(BroadcastBuilder, LineRootMulticastsBothWaysAndEveryOtherChipWaits) {
  const topo::Topology t3k = topo::build_t3k();
  ccl::broadcast::Params p;
  p.input = dram(1);
  p.output = dram(2);
  p.fabric.mode = FabricMode::Line;
  const FabricPlan plan(t3k, p.fabric);
  p.root = plan.chips()[2];
  const MeshWorkload w = ccl::broadcast::build(p, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  const std::vector<std::uint32_t>& rt = w.programs.at(p.root).kernels[1].runtime_args.at(CoreCoord{0, 0});
  const std::string write = kargs::describe_interpreter_command(rt, 0, 0);
  EXPECT_NE(write.find("dest=MCAST fwd=5 bwd=2"), std::string::npos) << write;
  EXPECT_NE(rt[kernels::interpreter::kRtForwardConnectionOffset], 0u);
  EXPECT_NE(rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
  for (const auto& [chip, program] : w.programs) {
    if (chip == p.root) continue;
    EXPECT_EQ(semaphore_ids(program), (std::vector<std::uint32_t>{0}));
  }
  // From a line's end there is only one way to go.
  p.root = plan.chips()[0];
  const MeshWorkload end = ccl::broadcast::build(p, t3k);
  const std::vector<std::uint32_t>& end_rt = end.programs.at(p.root).kernels[1].runtime_args.at(CoreCoord{0, 0});
  EXPECT_EQ(end_rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
}

// Groups (cluster_axis): every row of a Galaxy broadcasts at once from the chip at the root's
// rank, multicasting to both ends of its own row only; every send/recv pair of the columns
// runs between the same ranks.
std::vector<std::vector<ChipId>> axis_groups_of(const topo::Topology& t, int axis) {
  std::vector<std::vector<ChipId>> groups;
  for (const auto& g : topo::axis_groups(t, axis)) groups.emplace_back(g.begin(), g.end());
  return groups;
}

TEST(BroadcastBuilder, EveryGroupBroadcastsFromTheRootsRank) {
  const topo::Topology galaxy = topo::build_galaxy();
  const auto rows = axis_groups_of(galaxy, 1);
  ccl::broadcast::Params p;
  p.input = dram(1);
  p.output = dram(2);
  p.fabric.mode = FabricMode::Line;
  p.fabric.scope = FabricScope::Axes;
  p.groups.cluster_axis = 1;
  p.root = rows[0][2];
  const MeshWorkload w = ccl::broadcast::build(p, galaxy);
  ASSERT_EQ(w.programs.size(), 32u);
  for (const auto& row : rows) {
    for (std::size_t rank = 0; rank < row.size(); ++rank) {
      const Program& program = w.programs.at(row[rank]);
      if (rank != 2) {
        EXPECT_EQ(semaphore_ids(program), (std::vector<std::uint32_t>{0})) << "chip " << row[rank];
        continue;
      }
      ASSERT_EQ(program.kernels.size(), 2u);
      const std::vector<std::uint32_t>& rt = program.kernels[1].runtime_args.at(CoreCoord{0, 0});
      const std::string write = kargs::describe_interpreter_command(rt, 0, 0);
      const bool up_forward = write.find("dest=MCAST fwd=5 bwd=2") != std::string::npos;
      EXPECT_TRUE(up_forward || write.find("dest=MCAST fwd=2 bwd=5") != std::string::npos) << write;
    }
  }
  p.root = 1000;
  EXPECT_THROW(ccl::broadcast::validate(p, galaxy), topo::InputError);
}

TEST(SendRecvBuilder, GroupsSendBetweenTheSameRanks) {
  const topo::Topology galaxy = topo::build_galaxy();
  const auto columns = axis_groups_of(galaxy, 0);
  auto p = send_recv(columns[0][0], columns[0][3]);
  p.fabric.scope = FabricScope::Axes;
  p.groups.cluster_axis = 0;
  const MeshWorkload w = ccl::send_recv::build(p, galaxy);
  ASSERT_EQ(w.programs.size(), 2 * columns.size());
  for (const auto& column : columns) {
    ASSERT_EQ(w.programs.at(column[0]).kernels.size(), 2u);
    EXPECT_EQ(w.programs.at(column[3]).kernels.size(), 1u);
    const std::vector<std::uint32_t>& rt = w.programs.at(column[0]).kernels[1].runtime_args.at(CoreCoord{0, 0});
    EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 0).find("dest=UNICAST hops=3"), std::string::npos);
  }
  auto across = send_recv(columns[0][0], columns[1][0]);
  across.fabric.scope = FabricScope::Axes;
  across.groups.cluster_axis = 0;
  EXPECT_THROW(ccl::send_recv::validate(across, galaxy), ccl::CclParamsError);
}

// A split ring: the root's first worker multicasts its half forward round the whole ring, the
// second (a row down) the other half backward, each connected to that direction's routers only;
// every other chip waits for both.
TEST(BroadcastBuilder, SplitRingMulticastsHalfEachWayRoundTheWholeRing) {
  const topo::Topology t3k = topo::build_t3k();
  ccl::broadcast::Params p;
  p.input = dram(1);
  p.output = dram(2);
  p.fabric.mode = FabricMode::Ring;
  p.ring_algorithm = ccl::broadcast::RingAlgorithm::Split;
  const FabricPlan plan(t3k, p.fabric);
  p.root = plan.chips()[2];
  const MeshWorkload w = ccl::broadcast::build(p, t3k);
  const Program& root = w.programs.at(p.root);
  ASSERT_EQ(root.kernels.size(), 4u);  // a reader and a writer per worker
  const std::vector<std::uint32_t>& forward = root.kernels[1].runtime_args.at(CoreCoord{0, 0});
  const std::vector<std::uint32_t>& backward = root.kernels[3].runtime_args.at(CoreCoord{0, 1});
  EXPECT_NE(kargs::describe_interpreter_command(forward, 0, 0).find("dest=MCAST fwd=7 bwd=0"), std::string::npos)
      << kargs::describe_interpreter_command(forward, 0, 0);
  EXPECT_NE(kargs::describe_interpreter_command(backward, 0, 0).find("dest=MCAST fwd=0 bwd=7"), std::string::npos)
      << kargs::describe_interpreter_command(backward, 0, 0);
  EXPECT_NE(forward[kernels::interpreter::kRtForwardConnectionOffset], 0u);
  EXPECT_EQ(forward[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
  EXPECT_EQ(backward[kernels::interpreter::kRtForwardConnectionOffset], 0u);
  EXPECT_NE(backward[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
  const Program& other = w.programs.at(plan.chips()[5]);
  ASSERT_EQ(other.kernels.size(), 1u);
  const std::string wait = kargs::describe_interpreter_command(other.kernels[0].runtime_args.at(CoreCoord{0, 0}), 0, 0);
  EXPECT_NE(wait.find("value=2"), std::string::npos) << wait;
}

// Auto: split from num_links x (n - 1) x 6 KiB on a ring whose n - 1 hops a multicast reaches;
// both ways below, on a line, and on a longer ring, where an explicit split is refused.
TEST(BroadcastBuilder, AutoSplitsFromLinksTimesHopsTimesSixKiB) {
  namespace bc = ccl::broadcast;
  const topo::Topology t3k = topo::build_t3k();
  bc::Params p;
  p.fabric.mode = FabricMode::Ring;
  p.root = FabricPlan(t3k, p.fabric).chips()[0];
  const std::uint64_t threshold = 7 * bc::kSplitMinBytesPerLinkAndHop;  // 42 KiB on 8 chips
  p.input = dram(1, threshold - 2048);
  p.output = dram(2, threshold - 2048);
  EXPECT_EQ(bc::resolved_ring_algorithm(p, t3k), bc::RingAlgorithm::BothWays);
  p.input = dram(1, threshold);
  p.output = dram(2, threshold);
  EXPECT_EQ(bc::resolved_ring_algorithm(p, t3k), bc::RingAlgorithm::Split);
  bc::Params two_links = p;  // twice the bytes on 2 links
  two_links.num_links = 2;
  two_links.fabric.num_links = 2;
  const topo::Topology ring2 = topo::load_system("ring:8/2");
  two_links.root = 0;
  EXPECT_EQ(bc::resolved_ring_algorithm(two_links, ring2), bc::RingAlgorithm::BothWays);
  two_links.input = dram(1, 2 * threshold);
  two_links.output = dram(2, 2 * threshold);
  EXPECT_EQ(bc::resolved_ring_algorithm(two_links, ring2), bc::RingAlgorithm::Split);
  p.ring_algorithm = bc::RingAlgorithm::BothWays;
  EXPECT_EQ(bc::resolved_ring_algorithm(p, t3k), bc::RingAlgorithm::BothWays);
  EXPECT_NE(bc::hash_value(p), bc::hash_value(two_links));

  bc::Params line = p;
  line.fabric.mode = FabricMode::Line;
  line.ring_algorithm = bc::RingAlgorithm::Auto;
  EXPECT_EQ(bc::resolved_ring_algorithm(line, t3k), bc::RingAlgorithm::BothWays);
  line.ring_algorithm = bc::RingAlgorithm::Split;
  try {
    bc::validate(line, t3k);
    ADD_FAILURE() << "a split on a line fabric was accepted";
  } catch (const ccl::CclParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("ring_algorithm split"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line fabric"), std::string::npos) << e.what();
  }

  const topo::Topology ring20 = topo::load_system("ring:20");
  bc::Params long_ring = p;
  long_ring.root = 0;
  long_ring.ring_algorithm = bc::RingAlgorithm::Auto;
  long_ring.input = dram(1, 1 << 20);
  long_ring.output = dram(2, 1 << 20);
  EXPECT_EQ(bc::resolved_ring_algorithm(long_ring, ring20), bc::RingAlgorithm::BothWays);
  long_ring.ring_algorithm = bc::RingAlgorithm::Split;
  try {
    bc::validate(long_ring, ring20);
    ADD_FAILURE() << "a split round 20 chips was accepted";
  } catch (const ccl::CclParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("19 hops on a ring of 20 chips; a multicast reaches at most 15"),
              std::string::npos)
        << e.what();
  }
}

TEST(BroadcastBuilder, NeedsAFabric) {
  ccl::broadcast::Params p;
  p.input = dram(1);
  p.output = dram(2);
  EXPECT_THROW(ccl::broadcast::validate(p, topo::build_t3k()), ccl::CclParamsError);
}

}  // namespace
}  // namespace cclmesh::runtime
