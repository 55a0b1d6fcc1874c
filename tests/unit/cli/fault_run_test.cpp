// `cclmesh run` with faults, end to end through run_collective (issue 8): faults that must not
// change the result complete verified with matching per-chip checksums; faults that lose data
// stop with a DeviceError naming the fault; nothing is ever reported verified with a wrong
// output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/device/mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunOptions all_gather(std::initializer_list<const char*> faults, const char* topology = "ring") {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = 256 * 1024;
  options.topology = topology;
  for (const char* spec : faults) add_fault_spec(options.faults, spec);
  return options;
}

void expect_verified_with_matching_checksums(const RunResult& r) {
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  ASSERT_EQ(r.checksums.size(), 8u);
  for (const OutputChecksum& c : r.checksums) {
    EXPECT_EQ(c.crc32, c.expected_crc32) << "chip " << c.chip;
    EXPECT_EQ(c.buffer, "output");
  }
}

TEST(FaultRun, NoFaultChecksumsEveryChipsOutput) {
  const RunResult r = run_collective(all_gather({}));
  expect_verified_with_matching_checksums(r);
  EXPECT_NE(r.checksums[0].crc32, 0u);
  EXPECT_TRUE(r.faults.empty());
}

TEST(FaultRun, SkewAndSlowLinksCompleteVerifiedButLater) {
  const RunResult plain = run_collective(all_gather({}));
  const RunResult skewed = run_collective(all_gather({"skew:40us:7"}));
  const RunResult slow = run_collective(all_gather({"link-slow:4-0:0.25"}));
  expect_verified_with_matching_checksums(skewed);
  expect_verified_with_matching_checksums(slow);
  EXPECT_GT(skewed.time_us, plain.time_us);
  EXPECT_GT(slow.time_us, plain.time_us);
  EXPECT_EQ(skewed.faults, std::vector<std::string>{"skew:40us:7"});
  // Seeded: the same run again gives the same simulated time and events.
  const RunResult again = run_collective(all_gather({"skew:40us:7"}));
  EXPECT_EQ(again.time_us, skewed.time_us);
  EXPECT_EQ(again.sim_events, skewed.sim_events);
}

TEST(FaultRun, LineIsReembeddedAroundALinkDownFromTheStart) {
  const RunResult plain = run_collective(all_gather({}, "line"));
  const RunResult r = run_collective(all_gather({"link-down:0-2"}, "line"));
  expect_verified_with_matching_checksums(r);
  EXPECT_NE(r.fabric_order, plain.fabric_order);
  EXPECT_EQ(r.fabric_order.find("0-2"), std::string::npos) << r.fabric_order;
  EXPECT_EQ(r.fabric_order.find("2-0"), std::string::npos) << r.fabric_order;
}

TEST(FaultRun, DroppedFramesStopWithADiagnosisNamingTheLoss) {
  try {
    const RunResult r = run_collective(all_gather({"drop:0.05:3"}));
    ADD_FAILURE() << "completed; verified=" << (r.verified && *r.verified);
  } catch (const runtime::DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("drop:0.05:3")) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("injected frame loss")) << e.what();
  }
}

// Duplicated frames may or may not hurt; whatever happens is reported honestly: a device error,
// or a result whose verdict agrees with the checksums and whose mismatch names chip, buffer,
// page and byte.
TEST(FaultRun, DuplicatedFramesNeverGiveAWrongResultReportedAsVerified) {
  for (const char* spec : {"dup:0.2:1", "dup:1"}) {
    try {
      const RunResult r = run_collective(all_gather({spec}));
      ASSERT_TRUE(r.verified.has_value());
      bool all_match = true;
      for (const OutputChecksum& c : r.checksums) all_match = all_match && c.crc32 == c.expected_crc32;
      EXPECT_EQ(*r.verified, all_match) << spec;
      EXPECT_EQ(*r.verified, r.wrong_elements == 0) << spec;
      if (!*r.verified) {
        EXPECT_THAT(r.mismatch, ::testing::MatchesRegex("chip [0-9]+ buffer 'output' page [0-9]+ byte [0-9]+: .*"));
      }
    } catch (const runtime::DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr(spec)) << e.what();
    }
  }
}

// A link that goes down while the builders' all-gather runs: every waiting kernel's chain ends
// at the down link, not at the kernel's own reset of its semaphore after the wait (a command
// that cannot release it) mistaken for a cycle.
TEST(FaultRun, ALinkDownMidRunIsWhereEveryChainEnds) {
  try {
    const RunResult r = run_collective(all_gather({"link-down:0-2@12us"}));
    ADD_FAILURE() << "completed; verified=" << (r.verified && *r.verified);
  } catch (const runtime::DeviceError& e) {
    const std::string text = e.what();
    EXPECT_THAT(text, HasSubstr("link-down:0-2@12us: every link between chips 0 and 2 down at 12.000 us")) << text;
    EXPECT_THAT(text, HasSubstr("which is down (see the injected faults)")) << text;
    EXPECT_THAT(text, Not(HasSubstr("cycle"))) << text;
    EXPECT_THAT(text, Not(HasSubstr("would be written by"))) << text;
  }
}

// A corrupted packet is caught by the output check: the run completes, is not verified, the
// checksums of the chips it reached differ, the first mismatch names chip, buffer, page and
// byte, and the fault says which bit of which packet it flipped. Seeded: the same every time.
TEST(FaultRun, ACorruptedPacketIsAMismatchNamingChipBufferPageAndByte) {
  for (const char* topology : {"ring", "line"}) {
    const RunResult r = run_collective(all_gather({"corrupt:0-2:5"}, topology));
    ASSERT_TRUE(r.verified.has_value()) << topology;
    EXPECT_FALSE(*r.verified) << topology;
    EXPECT_GT(r.wrong_elements, 0u) << topology;
    EXPECT_THAT(r.mismatch, ::testing::MatchesRegex("chip [0-9]+ buffer 'output' page [0-9]+ byte [0-9]+: "
                                                    "expected 0x[0-9a-f]+, got 0x[0-9a-f]+"))
        << topology;
    std::size_t differing = 0;
    for (const OutputChecksum& c : r.checksums) differing += c.crc32 != c.expected_crc32 ? 1 : 0;
    EXPECT_GT(differing, 0u) << topology;
    ASSERT_EQ(r.fault_effects.size(), 1u) << topology;
    EXPECT_THAT(r.fault_effects[0], ::testing::StartsWith("corrupt:0-2:5: flipped bit ")) << topology;
    const RunResult again = run_collective(all_gather({"corrupt:0-2:5"}, topology));
    EXPECT_EQ(again.mismatch, r.mismatch) << topology;
    EXPECT_EQ(again.fault_effects, r.fault_effects) << topology;
  }
}

// A corruption armed after the op has finished flips nothing, and the run says so.
TEST(FaultRun, ACorruptionThatMeetsNoPacketChangesNothing) {
  const RunResult r = run_collective(all_gather({"corrupt:0-2@1ms"}));
  expect_verified_with_matching_checksums(r);
  ASSERT_EQ(r.fault_effects.size(), 1u);
  EXPECT_THAT(r.fault_effects[0], HasSubstr("no packet of at least 81 B with data started on the link(s) from 1.000 ms"));
}

TEST(FaultRun, CorruptionNeedsData) {
  RunOptions options = all_gather({"corrupt:0-2"});
  options.no_data = true;
  try {
    run_collective(options);
    ADD_FAILURE() << "a --no-data run accepted a corrupt fault";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--fault: 'corrupt:0-2' flips a bit of payload data")) << e.what();
  }
}

}  // namespace
}  // namespace cclmesh::cli
