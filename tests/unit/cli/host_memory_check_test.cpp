// A run with data whose buffers are more than the host's memory is refused before the device is
// built, naming the size, the bytes and the way out (new-user pass, session 41: a Galaxy
// all_gather of 1 GiB with data was killed by the OOM killer after 3 minutes of swapping).
#include "tools/cclmesh/host_memory_check.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

TEST(HostMemoryCheck, RefusesBuffersPastTheHostsMemoryNamingTheSizeAndTheWayOut) {
  try {
    reject_data_past_host_memory("--size", "1073741824 B", 1207959552, 32, 16 * kGiB);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: 1073741824 B with data: the op's buffers, held as real bytes in this process, are 1207959552 "
              "B on each of 32 chips (36.0 GiB), more than this machine's 16.0 GiB of memory; expected --no-data "
              "(timing only, no data held), a smaller --size or fewer chips");
  }
}

TEST(HostMemoryCheck, TakesBuffersUpToTheHostsMemoryAndAnyWhenItIsUnknown) {
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", kGiB / 2, 32, 16 * kGiB));  // exactly all of it
  EXPECT_NO_THROW(reject_data_past_host_memory("--size", "x", 64 * kGiB, 1024, 0));
  EXPECT_THROW(reject_data_past_host_memory("--size", "x", kGiB / 2 + 1, 32, 16 * kGiB), UsageError);
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
    EXPECT_EQ(std::string(e.what()).rfind("--size: 8589934592 B with data: the op's buffers, held as real bytes in "
                                          "this process, are 9126805504 B on each of 256 chips (2176.0 GiB), more "
                                          "than this machine's ",
                                          0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace cclmesh::cli
