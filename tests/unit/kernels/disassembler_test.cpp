// Disassembler golden text.
#include "kernels/host/disassembler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "sample_commands.hpp"

namespace cclmesh::cmd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The writer stream of the first interpreter all-gather's teardown (REFERENCE §4.12), shortened.
std::vector<Command> teardown_stream() {
  const api::TensorSlice slice{{1, 1, 1, 8}, {1, 1, 1, 1}, {0, 0, 0, 3}, {1, 1, 1, 1}, {0, 0, 0, 0}};
  return {
      fabric_write_cb_to_tensor_slice(slice, 0, ChipUnicast{2, true}),
      fabric_multicast_semaphore_inc(SemaphoreId{3}, 1, 1, 1, ChipMulticast{3, 4}),
      local_semaphore_wait(SemaphoreId{3}, 17),
      fabric_unicast_semaphore_inc(GlobalSemaphoreAddress{0x1000}, 1, 1, 1, ChipUnicast{1, false}),
      local_chip_noc_absolute_address_semaphore_inc(9, 0, 0x7060, 1),
      local_core_semaphore_set(SemaphoreId{3}, 0),
  };
}

TEST(Disassembler, GoldenTextForASmallStream) {
  const std::vector<uint32_t> words = encode_stream(teardown_stream());
  EXPECT_EQ(disassemble(words),
            "#0 STREAM_CB_TO_TENSOR dest=UNICAST hops=2 fwd src=CB(0) core=ADDRGEN "
            "slice{shape=(1,1,1,8) slice=(1,1,1,1) off=(0,0,0,3) worker_off=(0,0,0,0) pages=1}\n"
            "#1 ATOMIC_INC dest=MCAST fwd=3 bwd=4 dst=SEM(3) core=XY(1,1) inc=1\n"
            "#2 WAIT_VALUE dest=LOCAL src=SEM(3) core=LOCAL value=17\n"
            "#3 ATOMIC_INC dest=UNICAST hops=1 bwd dst=ABS(0x1000) core=XY(1,1) inc=1\n"
            "#4 ATOMIC_INC dest=LOCAL dst=ABS(0x7060) core=XY(9,0) inc=1\n"
            "#5 SET_SEMAPHORE_VALUE dest=LOCAL dst=SEM(3) core=LOCAL value=0\n");
}

TEST(Disassembler, GoldenTextForBurstsAndPartialSlices) {
  EXPECT_EQ(format_command(testing::sample_command(api::CommandCode::NOC_WRITE_AND_ATOMIC_INC)),
            "NOC_WRITE_AND_ATOMIC_INC dest=UNICAST hops=2 bwd src=CB(3) dst=SEM(2) core=XY(2,3) "
            "burst{base=0x20000 groups=[+0x0@XY(1,2):2048B +0x800@XY(1,3):2048B] [+0x1000@XY(6,7):1024B]} inc=1");
  EXPECT_EQ(format_command(testing::sample_command(api::CommandCode::STREAM_EDM_TO_TENSOR)),
            "STREAM_EDM_TO_TENSOR dest=UNICAST hops=7 bwd shape=(1,2,4,8) slice=(1,1,4,2) off=(0,1,0,3) "
            "worker_off=(0,0,0,1) pages=5 src=CB(4) dst=REL(0x40) core=ADDRGEN");
  EXPECT_EQ(format_command(testing::sample_command(api::CommandCode::ATOMIC_INC)),
            "ATOMIC_INC dest=UNICAST hops=15 fwd dst=ABS(0x1230) core=RECT((1,1)..(4,5)) inc=2");
}

TEST(Disassembler, OneCommandByIndex) {
  const std::vector<uint32_t> words = encode_stream(teardown_stream());
  EXPECT_EQ(disassemble_one(words, 2), "#2 WAIT_VALUE dest=LOCAL src=SEM(3) core=LOCAL value=17");
  EXPECT_EQ(disassemble_one(words, 6), "#6 <past the end of the stream: 6 commands in " +
                                           std::to_string(words.size()) + " words>");
}

TEST(Disassembler, MalformedCommandsAreDescribedNotThrown) {
  const std::vector<Command> commands = teardown_stream();
  std::vector<uint32_t> words = encode_stream(commands);
  const std::size_t third = encode_stream(std::span<const Command>(commands).first(2)).size();
  words[third] = 0x0000073Fu;  // opcode 63
  EXPECT_THAT(disassemble_one(words, 2), StartsWith("#2 <malformed at word " + std::to_string(third) +
                                                    ": UNKNOWN_OPCODE: unknown opcode (opcode 63, header word 0x0000073f)> words: 0x0000073f"));
  EXPECT_THAT(disassemble_one(words, 4), HasSubstr("#4 <unreachable: command #2 before it is malformed"));
  EXPECT_EQ(disassemble_one(words, 1), "#1 ATOMIC_INC dest=MCAST fwd=3 bwd=4 dst=SEM(3) core=XY(1,1) inc=1");
  const std::string text = disassemble(words);
  EXPECT_THAT(text, HasSubstr("#1 ATOMIC_INC"));
  EXPECT_THAT(text, HasSubstr("#2 <malformed"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("#3")));
}

}  // namespace
}  // namespace cclmesh::cmd
