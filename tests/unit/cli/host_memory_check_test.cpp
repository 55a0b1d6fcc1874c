// A run with data whose buffers are more than the host's memory is refused before the device is
// built, naming the size, the bytes and the way out (new-user pass, session 41: a Galaxy
// all_gather of 1 GiB with data was killed by the OOM killer after 3 minutes of swapping).
#include "tools/cclmesh/host_memory_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

// The Galaxy all_gather of 1 GiB: 32 chips x 1.125 GiB of buffers (an 8-chip group's 128 MiB
// input and 1 GiB output), four groups' gathered references and one output read back.
HostMemoryNeed galaxy_all_gather_1g() {
  HostMemoryNeed need;
  need.chips = 32;
  need.buffers_per_chip = 1207959552;
  need.input_pages = 32 * (kGiB / 8);
  need.host_inputs = need.input_pages;
  need.group_inputs = 8 * (kGiB / 8);
  need.reference = 4 * kGiB;
  need.read_back = kGiB;
  need.expected_outputs_counted = true;
  return need;
}

TEST(HostMemoryCheck, RefusesARunPastTheHostsMemoryNamingTheSizeTheBytesAndTheWayOut) {
  try {
    reject_data_past_host_memory("--size", "1073741824 B", galaxy_all_gather_1g(), 16 * kGiB);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: 1073741824 B with data: this process would hold 41.0 GiB as real bytes (1207959552 B in the "
              "op's buffers on each of 32 chips, 36.0 GiB, and the host's inputs and expected outputs), more than "
              "the 16.0 GiB of memory this machine has available; expected --no-data (timing only, no data held), a "
              "smaller --size or fewer chips");
  }
}

// The peak is the larger of the two: inputs written and the reference made, or every buffer's
// pages once the op ran with the reference and one output read back.
TEST(HostMemoryCheck, CountsTheLargerOfItsTwoPeaks) {
  const HostMemoryNeed all_gather = galaxy_all_gather_1g();
  EXPECT_EQ(all_gather.while_preparing(), 4 * kGiB + 4 * kGiB + kGiB + 4 * kGiB);
  EXPECT_EQ(all_gather.while_checking(), 36 * kGiB + 4 * kGiB + kGiB);
  EXPECT_EQ(all_gather.peak(), 41 * kGiB);
  HostMemoryNeed reduce_scatter;  // 8 chips, 1 GiB in, 128 MiB out each: its inputs weigh most
  reduce_scatter.chips = 8;
  reduce_scatter.buffers_per_chip = kGiB + kGiB / 8;
  reduce_scatter.input_pages = reduce_scatter.host_inputs = 8 * kGiB;
  reduce_scatter.group_inputs = 8 * kGiB;
  reduce_scatter.reference = kGiB;
  reduce_scatter.read_back = kGiB / 8;
  EXPECT_EQ(reduce_scatter.peak(), reduce_scatter.while_preparing());
  EXPECT_EQ(reduce_scatter.peak(), 25 * kGiB);
}

TEST(HostMemoryCheck, TakesARunUpToTheHostsMemoryAndAnyWhenItIsUnknown) {
  HostMemoryNeed need;
  need.chips = 32;
  need.buffers_per_chip = kGiB / 2;
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", need, 16 * kGiB));  // exactly all of it
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", galaxy_all_gather_1g(), 0));
  need.read_back = 1;
  EXPECT_THROW(reject_data_past_host_memory("--size", "x", need, 16 * kGiB), UsageError);
}

// sweep -j 4: four points at once, each checked against a quarter of the memory.
TEST(HostMemoryCheck, SweepPointsRunningTogetherShareTheHostsMemory) {
  HostMemoryNeed need;
  need.chips = 8;
  need.buffers_per_chip = kGiB / 2;  // 4 GiB: all of a quarter of 16 GiB, not more
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", need, 16 * kGiB, 4));
  need.buffers_per_chip = kGiB;
  need.expected_outputs_counted = true;
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", need, 16 * kGiB, 1));
  try {
    reject_data_past_host_memory("--size", "1073741824 B", need, 16 * kGiB, 4);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: 1073741824 B with data: this process would hold 8.0 GiB as real bytes (1073741824 B in the "
              "op's buffers on each of 8 chips, 8.0 GiB, and the host's inputs and expected outputs), more than 4.0 "
              "GiB, this machine's 16.0 GiB of memory shared by the 4 points sweep -j runs at once; expected --no-data "
              "(timing only, no data held), a smaller --size or fewer chips, or a smaller -j");
  }
}

// 256 chips x 8.5 GiB (each chip's 8 GiB output and 512 MiB input), far past any host: refused
// from the planning device's buffers, before a simulated chip is built.
TEST(HostMemoryCheck, RunCollectiveRefusesARunWithDataNoHostHolds) {
  RunOptions options;
  options.system = "torus:16x16";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = 8 * kGiB;
  options.cluster_axis = 0;
  try {
    run_collective(options);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--size: 8589934592 B with data: this process would hold at least 2176.0 "
                                          "GiB as real bytes (9126805504 B in the op's buffers on each of 256 "
                                          "chips, 2176.0 GiB, and the host's inputs; its expected outputs come on "
                                          "top), more than the ",
                                          0),
              0u)
        << e.what();
  }
}

// send_recv and broadcast write their input on the sources only, and send_recv its output on the
// receivers only: the rest make no page (session 42: counted whole, a T3K send_recv along
// --cluster-axis 1 peaked at 0.37x the count, broadcast 0.69x). A T3K send_recv of 4 GiB: one
// pair, 8 GiB written of the 64 GiB of buffers. The memory is given, not this host's.
TEST(HostMemoryCheck, SendRecvCountsOnlyTheBuffersItWrites) {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::SendRecv;
  options.size_bytes = 4 * kGiB;
  options.host_memory_given = 7 * kGiB;
  try {
    run_collective(options);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: 4294967296 B with data: this process would hold at least 8.0 GiB as real bytes (8589934592 B "
              "in the op's buffers on each of 8 chips, 64.0 GiB, of which the op writes 8.0 GiB, and the host's "
              "inputs; its expected outputs come on top), more than the 7.0 GiB of memory this machine has "
              "available; expected --no-data (timing only, no data held), a smaller --size or fewer chips");
  }
  // broadcast's every chip writes its output (the root its own), and the root its input: 9 x 4 GiB.
  options.op = CollectiveOp::Broadcast;
  options.host_memory_given = 35 * kGiB;
  try {
    run_collective(options);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--size: 4294967296 B with data: this process would hold at least 36.0 GiB "
                                          "as real bytes (8589934592 B in the op's buffers on each of 8 chips, "
                                          "64.0 GiB, of which the op writes 36.0 GiB,",
                                          0),
              0u)
        << e.what();
  }
}

// sweep -j N's point with data, checked against its share: a T3K all_gather sized to need about
// a sixteenth of this host's memory (its buffers 10 / 8 of S on each of 8 chips, ~13x S with the
// host's tensors) is refused as one of 256 points at once, naming the share and -j.
TEST(HostMemoryCheck, RunCollectiveRefusesASweepPointPastItsShare) {
  const std::uint64_t host = host_memory_bytes();
  if (host == 0) GTEST_SKIP() << "this system does not say its memory";
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.cluster_axis = 1;
  options.size_bytes = std::max<std::uint64_t>(host / 16 / 13 / (1 << 20), 1) << 20;
  options.data_runs_at_once = 256;
  try {
    run_collective(options);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("GiB of memory shared by the 256 points sweep -j runs at once; expected --no-data "
                           "(timing only, no data held), a smaller --size or fewer chips, or a smaller -j"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace cclmesh::cli
