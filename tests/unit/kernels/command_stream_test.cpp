// Encode / decode round trips over the whole opcode and argument tables, and the encoder's
// rejections (the 8-bit trap, 15 hops, argument counts and sets).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "sample_commands.hpp"

namespace cclmesh::cmd {
namespace {

using api::CommandArgCode;
using api::CommandCode;
using testing::all_sample_commands;
using testing::sample_args;
using testing::sample_command;
using testing::sample_slice;
using ::testing::HasSubstr;

std::vector<Command> round_trip(const std::vector<Command>& commands) {
  const std::vector<uint32_t> words = encode_stream(commands);
  std::vector<Command> out;
  for (const DecodedCommand& d : decode_stream(words)) {
    out.push_back(d.command);
  }
  return out;
}

std::vector<ChipDestination> all_destination_kinds() {
  return {LocalOnly{}, ChipUnicast{0, true}, ChipUnicast{15, false}, ChipMulticast{0, 0}, ChipMulticast{15, 1}};
}

TEST(RoundTrip, EveryOpcodeWithEveryDestination) {
  for (uint32_t v = 1; v < api::kNumCommandCodes; ++v) {
    const auto code = static_cast<CommandCode>(v);
    for (const ChipDestination& dest : all_destination_kinds()) {
      Command c = sample_command(code);
      ASSERT_EQ(c.code, code);
      c.destination = dest;
      const std::vector<Command> back = round_trip({c});
      ASSERT_EQ(back.size(), 1u);
      EXPECT_EQ(back[0], c) << format_command(c) << "\n vs " << format_command(back[0]);
    }
  }
}

TEST(RoundTrip, EveryArgumentCodeEveryVariant) {
  for (uint32_t a = 0; a < api::kNumCommandArgCodes; ++a) {
    const auto arg_code_value = static_cast<CommandArgCode>(a);
    const uint32_t bit = api::arg_bit(arg_code_value);
    bool some_opcode_accepts_it = false;
    for (uint32_t v = 1; v < api::kNumCommandCodes; ++v) {
      const auto code = static_cast<CommandCode>(v);
      if ((api::command_info(code).allowed_args & bit) == 0) {
        continue;
      }
      some_opcode_accepts_it = true;
      for (const CommandArg& sample : sample_args(arg_code_value)) {
        ASSERT_EQ(arg_code(sample), arg_code_value);
        // The opcode's sample with this argument swapped in (or added), after a command that
        // sets a full slice so partial slice fields are complete.
        Command c = sample_command(code);
        std::erase_if(c.args, [&](const CommandArg& x) {
          if (arg_code(x) != arg_code_value) {
            return false;
          }
          const auto* xa = std::get_if<AddressInfoArg>(&x);
          const auto* sa = std::get_if<AddressInfoArg>(&sample);
          return xa == nullptr || xa->operand == sa->operand;
        });
        c.args.push_back(sample);
        const std::vector<Command> stream{sample_command(CommandCode::STREAM_TENSOR_TO_CB), c};
        const std::vector<Command> back = round_trip(stream);
        ASSERT_EQ(back.size(), 2u);
        EXPECT_EQ(back[1], c) << format_command(c) << "\n vs " << format_command(back[1]);
      }
    }
    EXPECT_TRUE(some_opcode_accepts_it) << api::arg_code_name(arg_code_value) << " is accepted by no opcode";
  }
}

TEST(RoundTrip, WholeSampleStreamKeepsIndicesAndOffsets) {
  const std::vector<Command> commands = all_sample_commands();
  const std::vector<uint32_t> words = encode_stream(commands);
  const std::vector<DecodedCommand> decoded = decode_stream(words);
  ASSERT_EQ(decoded.size(), commands.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    EXPECT_EQ(decoded[i].index, i);
    EXPECT_EQ(decoded[i].word_offset, offset);
    EXPECT_EQ(decoded[i].command, commands[i]);
    EXPECT_EQ(encode_command(commands[i]).size(), decoded[i].word_count) << i;
    offset += decoded[i].word_count;
  }
  EXPECT_EQ(offset, words.size());
  // A stream decoded by count stops there.
  EXPECT_EQ(decode_stream(words, 2).size(), 2u);
}

TEST(RoundTrip, DeltaEncodedSliceFieldsAreStickyAcrossAStream) {
  Command first = local_write_cb_to_tensor_slice(sample_slice(), 0);
  // Second command: only the worker offset changes.
  Command second{CommandCode::STREAM_CB_TO_TENSOR,
                 LocalOnly{},
                 {AddressInfoArg{api::AddressOperand::SOURCE, CircularBufferId{0}},
                  WorkerStartOffsetArg{{0, 0, 0, 2}}}};
  EXPECT_EQ(round_trip({first, second}), (std::vector<Command>{first, second}));
  // On its own, the second command's slice is incomplete: rejected by both sides.
  EXPECT_THROW(encode_command(second), EncodeError);
  std::vector<uint32_t> words = encode_stream(std::vector<Command>{first, second});
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(encode_command(first).size()));
  try {
    decode_stream(words);
    FAIL() << "expected DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.status(), api::DecodeStatus::INCOMPLETE_TENSOR_SLICE);
  }
}

// --- Encoder rejections -------------------------------------------------------------------

template <class F>
EncodeError expect_encode_error(F&& make_and_encode) {
  try {
    make_and_encode();
  } catch (const EncodeError& e) {
    return e;
  }
  ADD_FAILURE() << "expected EncodeError";
  return EncodeError("", "", "", "");
}

TEST(EncoderRejects, InlineAtomicIncAbove255) {
  EXPECT_NO_THROW(encode_command(local_core_semaphore_inc(SemaphoreId{0}, 255)));
  const EncodeError e = expect_encode_error([] { encode_command(local_core_semaphore_inc(SemaphoreId{0}, 256)); });
  EXPECT_EQ(e.command(), "ATOMIC_INC");
  EXPECT_EQ(e.value(), "256");
  EXPECT_THAT(e.what(), HasSubstr("ATOMIC_INC"));
  EXPECT_THAT(e.what(), HasSubstr("256"));
  EXPECT_THAT(e.what(), HasSubstr("<= 255"));
}

TEST(EncoderRejects, WaitTargetAbove255) {
  // ring_size * num_links + 1 on a 32-chip ring with 8 links: the 8-bit trap (REFERENCE §4.11).
  const EncodeError e = expect_encode_error([] { encode_command(local_semaphore_wait(SemaphoreId{1}, 32 * 8 + 1)); });
  EXPECT_EQ(e.command(), "WAIT_VALUE");
  EXPECT_EQ(e.value(), "257");
  EXPECT_THAT(e.field(), HasSubstr("wait target"));
}

TEST(EncoderRejects, OtherInlineValuesAbove255) {
  EXPECT_THROW(encode_command(inline_write(0x100, 256, 1, 1, LocalOnly{})), EncodeError);
  EXPECT_THROW(encode_command(local_core_semaphore_set(SemaphoreId{0}, 300)), EncodeError);
  EXPECT_THROW(encode_command(local_core_semaphore_inc(SemaphoreId{256}, 1)), EncodeError);
  EXPECT_THROW(encode_command(local_chip_noc_semaphore_inc(256, 1, SemaphoreId{0}, 1)), EncodeError);
  EXPECT_THROW(encode_command(local_write_cb_to_tensor_slice(sample_slice(), 256)), EncodeError);
  NocTransferBurstArg big{0, {std::vector<NocTransfer>(256, NocTransfer{0, 1, 1, 32})}};
  const EncodeError e = expect_encode_error([&] { encode_command(noc_read_burst_to_cb(big, 0)); });
  EXPECT_EQ(e.value(), "256");
}

TEST(EncoderRejects, MoreThan15Hops) {
  EXPECT_NO_THROW(encode_command(fabric_unicast_semaphore_inc(SemaphoreId{0}, 1, 1, 1, ChipUnicast{15, true})));
  const EncodeError e = expect_encode_error(
      [] { encode_command(fabric_unicast_semaphore_inc(SemaphoreId{0}, 1, 1, 1, ChipUnicast{16, true})); });
  EXPECT_EQ(e.field(), "distance_in_hops");
  EXPECT_EQ(e.value(), "16");
  EXPECT_THROW(encode_command(fabric_multicast_semaphore_inc(SemaphoreId{0}, 1, 1, 1, ChipMulticast{16, 0})),
               EncodeError);
  EXPECT_THROW(encode_command(fabric_write_cb_to_tensor_slice(sample_slice(), 0, ChipMulticast{0, 16})), EncodeError);
}

TEST(EncoderRejects, TooManyOrTooFewArguments) {
  Command c = local_semaphore_wait(SemaphoreId{0}, 1);
  c.args.push_back(AddressInfoArg{api::AddressOperand::DESTINATION, NoAddress{}});  // 4: the maximum
  EXPECT_NO_THROW(encode_command(c));
  c.args.push_back(CoreDescriptorArg{LocalCore{}});
  const EncodeError e = expect_encode_error([&] { encode_command(c); });
  EXPECT_EQ(e.field(), "argument count");
  EXPECT_EQ(e.value(), "5");
  Command many = sample_command(CommandCode::STREAM_EDM_TO_TENSOR);
  while (many.args.size() <= api::kMaxArgsPerCommand) {
    many.args.push_back(WorkerPagesPerSliceArg{1});
  }
  EXPECT_THROW(encode_command(many), EncodeError);
  EXPECT_THROW(encode_command(Command{CommandCode::WAIT_VALUE, LocalOnly{}, {}}), EncodeError);
}

TEST(EncoderRejects, ArgumentSetViolations) {
  // Not accepted by the opcode.
  Command wrong = local_semaphore_wait(SemaphoreId{0}, 1);
  wrong.args.push_back(AtomicIncValueArg{1});
  EXPECT_THAT(expect_encode_error([&] { encode_command(wrong); }).value(), HasSubstr("SET_ATOMIC_INC_VALUE"));
  // Given twice.
  Command twice = local_semaphore_wait(SemaphoreId{0}, 1);
  twice.args.push_back(TargetValueArg{2});
  EXPECT_THROW(encode_command(twice), EncodeError);
  Command two_sources = local_semaphore_wait(SemaphoreId{0}, 1);
  two_sources.args.push_back(AddressInfoArg{api::AddressOperand::SOURCE, SemaphoreId{1}});
  EXPECT_THROW(encode_command(two_sources), EncodeError);
  // Missing the required value.
  EXPECT_THROW(encode_command(Command{CommandCode::ATOMIC_INC,
                                      LocalOnly{},
                                      {AddressInfoArg{api::AddressOperand::DESTINATION, SemaphoreId{0}}}}),
               EncodeError);
  // ILLEGAL and out-of-table opcodes.
  EXPECT_THROW(encode_command(Command{CommandCode::ILLEGAL, LocalOnly{}, {}}), EncodeError);
  EXPECT_THROW(encode_command(Command{CommandCode::COUNT, LocalOnly{}, {TargetValueArg{1}}}), EncodeError);
  // An empty burst group.
  EXPECT_THROW(encode_command(noc_read_burst_to_cb(NocTransferBurstArg{0, {{}}}, 0)), EncodeError);
}

TEST(EncoderRejects, LeavesTheStreamUnchanged) {
  CommandStreamEncoder encoder;
  encoder.add(local_core_semaphore_inc(SemaphoreId{0}, 1));
  const std::vector<uint32_t> before = encoder.words();
  EXPECT_THROW(encoder.add(local_core_semaphore_inc(SemaphoreId{0}, 1000)), EncodeError);
  EXPECT_EQ(encoder.words(), before);
  EXPECT_EQ(encoder.num_commands(), 1u);
}

TEST(MicroOps, SliceOutsideTheTensorIsRejectedByTheBuilder) {
  api::TensorSlice s = sample_slice();
  s.tensor_slice_offset.x = 7;  // 7 + 2 > 8
  EXPECT_THAT(expect_encode_error([&] { (void)read_tensor_slice_to_cb(s, 0); }).what(),
              HasSubstr("SLICE_OUTSIDE_TENSOR"));
  s = sample_slice();
  s.worker_slice_shape = {1, 1, 1, 8};  // 1 + 8 > 8 pages in the slice
  EXPECT_THROW((void)local_write_cb_to_tensor_slice(s, 0), EncodeError);
}

TEST(MicroOps, BuildTheReferenceCommands) {
  const Command read = read_tensor_slice_to_cb(sample_slice(), 3);
  EXPECT_EQ(read.code, CommandCode::STREAM_TENSOR_TO_CB);
  EXPECT_EQ(read.destination, ChipDestination{LocalOnly{}});
  ASSERT_NE(read.find_address(api::AddressOperand::DESTINATION), nullptr);
  EXPECT_EQ(*read.find_address(api::AddressOperand::DESTINATION), Address{CircularBufferId{3}});
  EXPECT_EQ(read.find_address(api::AddressOperand::SOURCE), nullptr);
  EXPECT_EQ(read.find_arg<CoreDescriptorArg>()->core, CoreDescriptor{AddrGenCore{}});

  const Command eventual = read_tensor_slice_to_cb_for_eventual_fabric_write(sample_slice(), 3);
  EXPECT_EQ(eventual.destination, ChipDestination{(ChipUnicast{0, true})});

  const Command wait = local_semaphore_wait(GlobalSemaphoreAddress{0x8000}, 9);
  EXPECT_EQ(*wait.find_address(api::AddressOperand::SOURCE), Address{AbsoluteAddress{0x8000}});
  EXPECT_EQ(wait.find_arg<TargetValueArg>()->value, 9u);

  const Command set = local_core_semaphore_set(SemaphoreId{2}, 0);
  EXPECT_EQ(set.code, CommandCode::SET_SEMAPHORE_VALUE);

  const Command mcast = fabric_multicast_semaphore_inc(SemaphoreId{1}, 1, 2, 3, ChipMulticast{3, 4});
  EXPECT_EQ(mcast.destination, ChipDestination{(ChipMulticast{3, 4})});
  EXPECT_EQ(mcast.find_arg<CoreDescriptorArg>()->core, CoreDescriptor{(NocXyCore{2, 3})});
}

}  // namespace
}  // namespace cclmesh::cmd
