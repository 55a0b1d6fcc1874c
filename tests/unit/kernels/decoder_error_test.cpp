// The decoder on malformed streams: typed errors with the command index and word offset, and
// never a read past the end of the stream (every prefix, random mutations, random words).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "sample_commands.hpp"

namespace cclmesh::cmd {
namespace {

using api::CommandArgCode;
using api::CommandCode;
using api::DecodeStatus;
using ::testing::HasSubstr;

DecodeError expect_decode_error(std::span<const uint32_t> words) {
  try {
    decode_stream(words);
  } catch (const DecodeError& e) {
    return e;
  }
  ADD_FAILURE() << "expected DecodeError";
  return DecodeError(DecodeStatus::OK, 0, 0, "");
}

std::vector<uint32_t> two_commands() {
  return encode_stream(std::vector<Command>{local_core_semaphore_inc(SemaphoreId{1}, 1),
                                            local_semaphore_wait(SemaphoreId{1}, 2)});
}

TEST(DecodeErrors, UnknownOpcodeNamesIndexAndOffset) {
  std::vector<uint32_t> words = two_commands();
  const std::size_t second = encode_command(local_core_semaphore_inc(SemaphoreId{1}, 1)).size();
  words[second] = (words[second] & ~0x3Fu) | 40u;
  const DecodeError e = expect_decode_error(words);
  EXPECT_EQ(e.status(), DecodeStatus::UNKNOWN_OPCODE);
  EXPECT_EQ(e.command_index(), 1u);
  EXPECT_EQ(e.word_offset(), second);
  EXPECT_THAT(e.what(), HasSubstr("command #1"));
  EXPECT_THAT(e.what(), HasSubstr("opcode 40"));
}

TEST(DecodeErrors, IllegalOpcodeAndZeroWords) {
  const std::vector<uint32_t> zeros(4, 0u);
  EXPECT_EQ(expect_decode_error(zeros).status(), DecodeStatus::ILLEGAL_OPCODE);
}

TEST(DecodeErrors, ArgumentCountMismatchVsTheOpcodeTable) {
  std::vector<uint32_t> words = two_commands();
  words[0] = (words[0] & ~(0xFu << 8)) | (7u << 8);  // ATOMIC_INC allows 1..4
  const DecodeError e = expect_decode_error(words);
  EXPECT_EQ(e.status(), DecodeStatus::ARG_COUNT_MISMATCH);
  EXPECT_EQ(e.command_index(), 0u);
  EXPECT_THAT(e.what(), HasSubstr("ATOMIC_INC has 7 arguments, the opcode table allows 1..4"));
}

TEST(DecodeErrors, ArgumentCountLargerThanTheArgumentsPresent) {
  // Header claims 4 arguments but only 3 follow before the next command: the next command's
  // header is read as an argument and rejected.
  std::vector<uint32_t> words = two_commands();
  words[0] = (words[0] & ~(0xFu << 8)) | (4u << 8);
  const DecodeError e = expect_decode_error(words);
  EXPECT_EQ(e.command_index(), 0u);
  EXPECT_NE(e.status(), DecodeStatus::OK);
}

TEST(DecodeErrors, UnknownArgumentCode) {
  std::vector<uint32_t> words = encode_command(local_core_semaphore_inc(SemaphoreId{1}, 1));
  words[1] = (words[1] & ~0xFFu) | 0x42u;
  const DecodeError e = expect_decode_error(words);
  EXPECT_EQ(e.status(), DecodeStatus::UNKNOWN_ARG_CODE);
  EXPECT_EQ(e.word_offset(), 1u);
  EXPECT_THAT(e.what(), HasSubstr("argument code 66"));
}

TEST(DecodeErrors, ArgumentNotAcceptedDuplicateAndMissing) {
  // WAIT_VALUE with an atomic-inc value instead of a target.
  std::vector<uint32_t> words = encode_command(local_semaphore_wait(SemaphoreId{1}, 2));
  words.back() = api::encode_arg_header(CommandArgCode::SET_ATOMIC_INC_VALUE, api::kInlineValueFlag, 2);
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::ARG_NOT_ALLOWED);
  // Core descriptor given twice.
  words = encode_command(local_semaphore_wait(SemaphoreId{1}, 2));
  words.back() = api::encode_arg_header(CommandArgCode::SET_CORE_DESCRIPTOR_INFO,
                                        static_cast<uint8_t>(api::CoreDescriptorType::LOCAL));
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::DUPLICATE_ARG);
  // Target missing: drop the last argument and say so in the header.
  words = encode_command(local_semaphore_wait(SemaphoreId{1}, 2));
  words.pop_back();
  words[0] = (words[0] & ~(0xFu << 8)) | (2u << 8);
  const DecodeError e = expect_decode_error(words);
  EXPECT_EQ(e.status(), DecodeStatus::MISSING_REQUIRED_ARG);
  EXPECT_THAT(e.what(), HasSubstr("SET_TARGET_VALUE"));
}

TEST(DecodeErrors, InlineValueFieldRules) {
  std::vector<uint32_t> words = encode_command(local_semaphore_wait(SemaphoreId{1}, 2));
  words.back() = api::encode_arg_header(CommandArgCode::SET_TARGET_VALUE, 0, 2);  // not inline
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::NOT_INLINE_VALUE);
  words.back() = api::encode_arg_header(CommandArgCode::SET_TARGET_VALUE, 1, 2, 9);
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::RESERVED_BITS_SET);
  words.back() = api::encode_arg_header(CommandArgCode::SET_ADDRESS_INFO, 2, 0, 0);
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::UNKNOWN_ADDRESS_OPERAND);
  words.back() = api::encode_arg_header(CommandArgCode::SET_ADDRESS_INFO, 1, 5, 0);
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::UNKNOWN_ADDRESS_TYPE);
  words.back() = api::encode_arg_header(CommandArgCode::SET_CORE_DESCRIPTOR_INFO, 5);
  EXPECT_EQ(expect_decode_error(words).status(), DecodeStatus::UNKNOWN_CORE_DESCRIPTOR_TYPE);
}

TEST(DecodeErrors, MalformedBurst) {
  const NocTransferBurstArg burst = testing::sample_burst();  // groups of 2 and 1
  std::vector<uint32_t> words = encode_command(noc_read_burst_to_cb(burst, 0));
  // [header][addr info][burst hdr][base][2][3 words][3 words][1][3 words]
  const std::size_t first_group = 4;
  ASSERT_EQ(words[first_group], 2u);
  std::vector<uint32_t> zero_group = words;
  zero_group[first_group] = 0;
  EXPECT_EQ(expect_decode_error(zero_group).status(), DecodeStatus::MALFORMED_BURST);
  std::vector<uint32_t> overfull = words;
  overfull[first_group] = 4;  // more than the 3 transfers declared
  EXPECT_EQ(expect_decode_error(overfull).status(), DecodeStatus::MALFORMED_BURST);
  std::vector<uint32_t> bad_yx = words;
  bad_yx[first_group + 2] |= 0x100;
  EXPECT_EQ(expect_decode_error(bad_yx).status(), DecodeStatus::RESERVED_BITS_SET);
}

TEST(DecodeErrors, EveryTruncationIsTruncatedNeverAnOverRead) {
  // Decode every prefix of a stream of all sample commands, as a view into the full buffer: a
  // decoder that read past the view's end would find valid words there and succeed.
  const std::vector<Command> commands = testing::all_sample_commands();
  const std::vector<uint32_t> words = encode_stream(commands);
  std::vector<std::size_t> boundaries{0};
  for (const Command& c : commands) {
    boundaries.push_back(boundaries.back() + encode_command(c).size());
  }
  std::size_t next_boundary = 0;
  for (std::size_t len = 0; len <= words.size(); ++len) {
    const std::span<const uint32_t> prefix(words.data(), len);
    if (len == boundaries[next_boundary]) {
      EXPECT_EQ(decode_stream(prefix).size(), next_boundary) << "prefix " << len;
      ++next_boundary;
    } else {
      const DecodeError e = expect_decode_error(prefix);
      EXPECT_EQ(e.status(), DecodeStatus::TRUNCATED) << "prefix " << len << ": " << e.what();
      EXPECT_EQ(e.command_index(), next_boundary - 1) << "prefix " << len;
    }
  }
  // A command count larger than the stream holds.
  const DecodeError e = [&] {
    try {
      decode_stream(words, commands.size() + 1);
    } catch (const DecodeError& err) {
      return err;
    }
    return DecodeError(DecodeStatus::OK, 0, 0, "");
  }();
  EXPECT_EQ(e.status(), DecodeStatus::TRUNCATED);
  EXPECT_EQ(e.command_index(), commands.size());
}

// Decoding must either succeed or throw DecodeError, whatever the words; each mutated stream is
// its own exact-size allocation so that a sanitizer build catches any over-read. A stream that
// decodes is canonical: re-encoding it gives back the same words, so the encoder accepts
// everything the device reader accepts.
struct FuzzOutcome {
  int decoded = 0;
  int failed_after_first_command = 0;
};

void decode_anything(const std::vector<uint32_t>& words, FuzzOutcome& outcome) {
  try {
    std::vector<Command> commands;
    for (const DecodedCommand& d : decode_stream(words)) {
      commands.push_back(d.command);
    }
    EXPECT_EQ(encode_stream(commands), words);
    ++outcome.decoded;
  } catch (const DecodeError& e) {
    outcome.failed_after_first_command += e.command_index() > 0 ? 1 : 0;
  }
  const std::string text = disassemble(words);
  EXPECT_FALSE(text.empty() && !words.empty());
  (void)disassemble_one(words, 3);
}

TEST(DecodeFuzz, MutatedValidStreams) {
  const std::vector<uint32_t> valid = encode_stream(testing::all_sample_commands());
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> pick(0, valid.size() - 1);
  std::uniform_int_distribution<uint32_t> any_word;
  std::uniform_int_distribution<int> small(0, 3);
  FuzzOutcome outcome;
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::vector<uint32_t> words = valid;
    const int mutations = 1 + small(rng);
    for (int m = 0; m < mutations; ++m) {
      const std::size_t at = pick(rng);
      switch (small(rng)) {
        case 0:
          words[at] = any_word(rng);
          break;
        case 1:
          words[at] ^= 1u << (any_word(rng) % 32);
          break;
        case 2:
          words[at] = any_word(rng) % 300;  // small values: plausible counts and codes
          break;
        default:
          words.resize(std::min(words.size(), at));
          break;
      }
      if (words.empty()) {
        break;
      }
      pick = std::uniform_int_distribution<std::size_t>(0, words.size() - 1);
    }
    words.shrink_to_fit();
    decode_anything(words, outcome);
    pick = std::uniform_int_distribution<std::size_t>(0, valid.size() - 1);
  }
  // The mutations reach deep into streams, and some still decode (e.g. a changed address).
  EXPECT_GT(outcome.decoded, 100);
  EXPECT_GT(outcome.failed_after_first_command, 1000);
}

TEST(DecodeFuzz, RandomWords) {
  std::mt19937 rng(777);
  std::uniform_int_distribution<uint32_t> any_word;
  std::uniform_int_distribution<std::size_t> length(0, 40);
  FuzzOutcome outcome;
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::vector<uint32_t> words(length(rng));
    for (auto& w : words) {
      // Bias toward valid-looking headers so the walk gets past the first word.
      w = (iteration % 2 == 0) ? any_word(rng) : (any_word(rng) & 0x0F0F0FFFu);
    }
    decode_anything(words, outcome);
  }
}

}  // namespace
}  // namespace cclmesh::cmd
