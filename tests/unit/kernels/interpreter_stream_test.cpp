// kargs::interpreter_stream: the stream spec a hand-written stream needs, its three parts agreeing.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/interpreter_stream.hpp"
#include "kernels/host/micro_ops.hpp"

namespace cclmesh::kargs {
namespace {

TEST(InterpreterStream, EncodesCountsAndCarriesTheTensor) {
  const cmd::SemaphoreId done{0};
  const std::vector<cmd::Command> commands = {cmd::local_semaphore_wait(done, 2), cmd::local_core_semaphore_set(done, 0)};
  const InterleavedTensorArgs tensor{.address = 0x10000, .page_size_bytes = 2048, .num_banks = 12,
                                     .aligned_page_size_bytes = 2048};
  const InterpreterStreamSpec stream = interpreter_stream(tensor, commands);
  EXPECT_EQ(stream.commands, cmd::encode_stream(commands));
  EXPECT_EQ(stream.num_commands, 2u);
  ASSERT_TRUE(stream.tensor.has_value());
  EXPECT_EQ(std::get<InterleavedTensorArgs>(*stream.tensor).address, 0x10000u);
  EXPECT_FALSE(interpreter_stream(std::nullopt, commands).tensor.has_value());
}

TEST(InterpreterStream, RefusesWhatTheEncoderRefuses) {
  // A wait target above 8 bits would be truncated on the device (REFERENCE 4.11).
  const std::vector<cmd::Command> commands = {cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 256)};
  EXPECT_THROW((void)interpreter_stream(std::nullopt, commands), cmd::EncodeError);
}

}  // namespace
}  // namespace cclmesh::kargs
