// The command word layouts, literally as REFERENCE §4.3 / §4.5 give them, and the tables.
#include "kernels/api/ccl_command.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/api/command_stream_reader.hpp"

namespace cclmesh::api {
namespace {

CommandHeader unicast(CommandCode code, uint8_t argc, uint8_t hops, bool forward) {
  return CommandHeader{code, DestinationType::CHIP_UNICAST, argc, hops, static_cast<uint8_t>(forward ? 1 : 0), 0, 0};
}
CommandHeader multicast(CommandCode code, uint8_t argc, uint8_t fwd, uint8_t bwd) {
  return CommandHeader{code, DestinationType::CHIP_MULTICAST, argc, 0, 0, fwd, bwd};
}
CommandHeader local(CommandCode code, uint8_t argc) {
  return CommandHeader{code, DestinationType::CHIP_LOCAL_ONLY, argc, 0, 0, 0, 0};
}

TEST(CommandHeaderWord, FieldsSitAtTheReferenceBitPositions) {
  // bits 5:0 code, 7:6 destination type, 11:8 argument count, 15:12 unused,
  // unicast 23:16 hops and bit 24 forward; multicast 23:16 fwd targets, 31:24 bwd targets.
  EXPECT_EQ(encode_command_header(local(static_cast<CommandCode>(0x3F), 0)) & 0x3Fu, 0x3Fu);
  EXPECT_EQ(encode_command_header(local(CommandCode::ILLEGAL, 0xF)), (0xFu << 8) | (2u << 6));
  EXPECT_EQ(encode_command_header(unicast(CommandCode::ILLEGAL, 0, 0, false)), 0u);
  EXPECT_EQ(encode_command_header(multicast(CommandCode::ILLEGAL, 0, 0, 0)), 1u << 6);
  EXPECT_EQ(encode_command_header(local(CommandCode::ILLEGAL, 0)), 2u << 6);
  EXPECT_EQ(encode_command_header(unicast(CommandCode::ILLEGAL, 0, 0xFF, false)), 0xFFu << 16);
  EXPECT_EQ(encode_command_header(unicast(CommandCode::ILLEGAL, 0, 0, true)), 1u << 24);
  EXPECT_EQ(encode_command_header(multicast(CommandCode::ILLEGAL, 0, 0xFF, 0)), (1u << 6) | (0xFFu << 16));
  EXPECT_EQ(encode_command_header(multicast(CommandCode::ILLEGAL, 0, 0, 0xFF)), (1u << 6) | (0xFFu << 24));
}

TEST(CommandHeaderWord, WholeWordsMatchHandEncodings) {
  // STREAM_CB_TO_TENSOR (2), unicast (0), 3 args, 2 hops, forward.
  EXPECT_EQ(encode_command_header(unicast(CommandCode::STREAM_CB_TO_TENSOR, 3, 2, true)), 0x01020302u);
  // ATOMIC_INC (5), multicast (1), 3 args, 3 forward, 4 backward.
  EXPECT_EQ(encode_command_header(multicast(CommandCode::ATOMIC_INC, 3, 3, 4)), 0x04030345u);
  // WAIT_VALUE (4), local (2), 3 args.
  EXPECT_EQ(encode_command_header(local(CommandCode::WAIT_VALUE, 3)), 0x00000384u);
}

TEST(CommandHeaderWord, DecodeInvertsEncodeForEveryOpcodeAndDestination) {
  for (uint32_t v = 1; v < kNumCommandCodes; ++v) {
    const auto code = static_cast<CommandCode>(v);
    const CommandInfo info = command_info(code);
    for (const CommandHeader& h : {unicast(code, info.min_args, 15, true), unicast(code, info.max_args, 0, false),
                                   multicast(code, info.min_args, 15, 0), multicast(code, info.max_args, 0, 15),
                                   local(code, info.max_args)}) {
      CommandHeader back{};
      ASSERT_EQ(decode_command_header(encode_command_header(h), back), DecodeStatus::OK) << command_code_name(code);
      EXPECT_EQ(back.code, h.code);
      EXPECT_EQ(back.dest_type, h.dest_type);
      EXPECT_EQ(back.arg_count, h.arg_count);
      EXPECT_EQ(back.distance_in_hops, h.distance_in_hops);
      EXPECT_EQ(back.is_forward_direction, h.is_forward_direction);
      EXPECT_EQ(back.num_targets_forward, h.num_targets_forward);
      EXPECT_EQ(back.num_targets_backward, h.num_targets_backward);
    }
  }
}

TEST(CommandHeaderWord, DecodeRejectsMalformedWords) {
  CommandHeader h{};
  EXPECT_EQ(decode_command_header(0x0, h), DecodeStatus::ILLEGAL_OPCODE);
  EXPECT_EQ(decode_command_header(kNumCommandCodes | (2u << 6) | (1u << 8), h), DecodeStatus::UNKNOWN_OPCODE);
  EXPECT_EQ(decode_command_header(0x3F, h), DecodeStatus::UNKNOWN_OPCODE);
  const uint32_t wait_local = encode_command_header(local(CommandCode::WAIT_VALUE, 1));
  EXPECT_EQ(decode_command_header(wait_local, h), DecodeStatus::OK);
  EXPECT_EQ(decode_command_header((wait_local & ~(3u << 6)) | (3u << 6), h), DecodeStatus::UNKNOWN_DESTINATION_TYPE);
  EXPECT_EQ(decode_command_header(wait_local | (1u << 12), h), DecodeStatus::RESERVED_BITS_SET);
  EXPECT_EQ(decode_command_header(wait_local | (1u << 16), h), DecodeStatus::RESERVED_BITS_SET);
  EXPECT_EQ(decode_command_header(encode_command_header(unicast(CommandCode::WAIT_VALUE, 1, 16, true)), h),
            DecodeStatus::HOPS_OUT_OF_RANGE);
  EXPECT_EQ(decode_command_header(encode_command_header(multicast(CommandCode::WAIT_VALUE, 1, 1, 16)), h),
            DecodeStatus::HOPS_OUT_OF_RANGE);
  EXPECT_EQ(decode_command_header(encode_command_header(unicast(CommandCode::WAIT_VALUE, 1, 1, true)) | (2u << 24), h),
            DecodeStatus::RESERVED_BITS_SET);
  // WAIT_VALUE takes 1..4 arguments.
  EXPECT_EQ(decode_command_header(encode_command_header(local(CommandCode::WAIT_VALUE, 0)), h),
            DecodeStatus::ARG_COUNT_MISMATCH);
  EXPECT_EQ(decode_command_header(encode_command_header(local(CommandCode::WAIT_VALUE, 5)), h),
            DecodeStatus::ARG_COUNT_MISMATCH);
}

TEST(ArgHeaderWord, FieldsSitAtTheReferenceBitPositions) {
  // bits 7:0 code, 15:8 inline0, 23:16 inline1, 31:24 inline2.
  EXPECT_EQ(encode_arg_header(CommandArgCode::SET_ADDRESS_INFO, 1, 1, 3), 0x03010108u);
  EXPECT_EQ(encode_arg_header(CommandArgCode::SET_TARGET_VALUE, 1, 200, 0), 0x00C80106u);
  const CommandArgHeader h = decode_arg_header(0xDDCCBB0Bu);
  EXPECT_EQ(h.code, 0x0B);
  EXPECT_EQ(h.inline0, 0xBB);
  EXPECT_EQ(h.inline1, 0xCC);
  EXPECT_EQ(h.inline2, 0xDD);
}

TEST(OpcodeTable, ValuesNamesAndMetadataAreConsistent) {
  EXPECT_EQ(static_cast<int>(CommandCode::ILLEGAL), 0);
  std::set<std::string> names;
  for (uint32_t v = 0; v < kNumCommandCodes; ++v) {
    const auto code = static_cast<CommandCode>(v);
    const CommandInfo info = command_info(code);
    EXPECT_TRUE(names.insert(command_code_name(code)).second) << "duplicate name " << command_code_name(code);
    EXPECT_LE(info.min_args, info.max_args) << command_code_name(code);
    EXPECT_LE(info.max_args, kMaxArgsPerCommand) << command_code_name(code);
    EXPECT_EQ(info.required_args & ~info.allowed_args, 0u) << "required but not allowed: " << command_code_name(code);
    EXPECT_LE(popcount32(info.required_args), info.min_args) << command_code_name(code);
  }
  EXPECT_EQ(command_info(CommandCode::ILLEGAL).allowed_args, 0u);
  EXPECT_STREQ(command_code_name(CommandCode::SET_SEMAPHORE_VALUE), "SET_SEMAPHORE_VALUE");
  EXPECT_FALSE(is_known_command_code(kNumCommandCodes));
}

TEST(OpcodeTable, TranslatesToTtMetalMid2025Values) {
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::STREAM_TENSOR_TO_CB), 0);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::STREAM_CB_TO_TENSOR), 1);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::STREAM_EDM_TO_TENSOR), 2);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::WAIT_VALUE), 3);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::ATOMIC_INC), 4);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::RAW_INLINE_WRITE_BYTES), 5);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::NOC_READ_BURST), 6);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::NOC_WRITE_BURST), 7);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::FLOW_CONTROLLED_NOC_READ_BURST), 8);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::NOC_WRITE_AND_ATOMIC_INC), 9);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::ILLEGAL), 10);
  EXPECT_EQ(to_tt_metal_command_code(CommandCode::SET_SEMAPHORE_VALUE), kNoTtMetalCode);
  for (uint32_t v = 1; v < kNumCommandCodes; ++v) {
    const auto code = static_cast<CommandCode>(v);
    if (to_tt_metal_command_code(code) != kNoTtMetalCode) {
      EXPECT_EQ(from_tt_metal_command_code(to_tt_metal_command_code(code)), code);
    }
  }
  uint32_t tt_word = 0;
  ASSERT_TRUE(header_word_to_tt_metal(0x01020302u, tt_word));  // STREAM_CB_TO_TENSOR
  EXPECT_EQ(tt_word, 0x01020301u);
  EXPECT_FALSE(header_word_to_tt_metal(encode_command_header(local(CommandCode::SET_SEMAPHORE_VALUE, 3)), tt_word));
}

TEST(ArgCodeTable, ValuesMatchTtMetal) {
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES), 0);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES), 5);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_TARGET_VALUE), 6);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_ATOMIC_INC_VALUE), 7);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_ADDRESS_INFO), 8);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_CORE_DESCRIPTOR_INFO), 9);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO), 10);
  EXPECT_EQ(static_cast<int>(CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET), 11);
  EXPECT_EQ(static_cast<int>(CommandArgCode::INVALID), 0xFF);
  EXPECT_EQ(kNumCommandArgCodes, 12u);
  EXPECT_EQ(arg_fixed_payload_words(CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES), 17);
  EXPECT_EQ(arg_fixed_payload_words(CommandArgCode::SET_WORKER_PAGES_PER_SLICE), 1);
  EXPECT_FALSE(is_known_arg_code(12));
  EXPECT_FALSE(is_known_arg_code(0xFF));
}

TEST(PackedRecords, WordLayouts) {
  EXPECT_EQ(pack_noc_rectangle({1, 2, 3, 4}), 0x04030201u);
  EXPECT_EQ(pack_noc_yx(9, 11), 0x000B0009u);
  EXPECT_EQ(noc_yx_x(0x000B0009u), 9u);
  EXPECT_EQ(noc_yx_y(0x000B0009u), 11u);
  const CclCommandTensor t{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}, 17};
  uint32_t words[kCclCommandTensorWords] = {};
  write_command_tensor(t, words);
  for (uint32_t i = 0; i < kCclCommandTensorWords; ++i) {
    EXPECT_EQ(words[i], i + 1) << "word " << i;  // w, z, y, x of each shape, then pages
  }
  EXPECT_EQ(read_command_tensor(words), t);
}

}  // namespace
}  // namespace cclmesh::api
