#pragma once
// Bounded, validating walk over an encoded command stream. The device interpreter and the host
// decoder / disassembler both decode through this one reader, so the field extraction and the
// validation rules exist once. It never reads a word at or past `num_words`: a malformed or
// truncated stream yields a DecodeStatus, never an out-of-bounds read (the host decoder is
// fuzzed through this code).
//
// Device-clean: <cstdint> only, no heap, no exceptions. Errors are status codes; the host turns
// them into a typed DecodeError.
//
// Use:
//   CommandStreamReader r(words, n);
//   while (!r.at_end()) {
//     CommandHeader h;            if (r.begin_command(h) != DecodeStatus::OK) fail;
//     for (i < h.arg_count) { ArgView a; if (r.next_arg(a) != OK) fail; apply(a); }
//     if (r.end_command() != OK) fail;
//   }

#include <cstdint>

#include "kernels/api/ccl_command.hpp"

namespace cclmesh::api {

// X(name, description)
#define CCLMESH_DECODE_STATUSES(X)                                                        \
  X(OK, "ok")                                                                             \
  X(TRUNCATED, "the stream ends inside a command")                                        \
  X(ILLEGAL_OPCODE, "opcode ILLEGAL (0)")                                                 \
  X(UNKNOWN_OPCODE, "unknown opcode")                                                     \
  X(UNKNOWN_DESTINATION_TYPE, "unknown destination type")                                 \
  X(RESERVED_BITS_SET, "reserved or unused bits are not zero")                            \
  X(HOPS_OUT_OF_RANGE, "fabric hop count exceeds 15")                                     \
  X(ARG_COUNT_MISMATCH, "argument count outside the opcode table's range")                \
  X(UNKNOWN_ARG_CODE, "unknown argument code")                                            \
  X(ARG_NOT_ALLOWED, "argument code not accepted by this opcode")                         \
  X(DUPLICATE_ARG, "argument given twice")                                                \
  X(MISSING_REQUIRED_ARG, "required argument missing")                                    \
  X(INCOMPLETE_TENSOR_SLICE, "tensor slice not fully specified by this or earlier commands") \
  X(UNKNOWN_ADDRESS_OPERAND, "unknown address operand (not source or destination)")       \
  X(UNKNOWN_ADDRESS_TYPE, "unknown address type")                                         \
  X(UNKNOWN_CORE_DESCRIPTOR_TYPE, "unknown core descriptor type")                         \
  X(NOT_INLINE_VALUE, "value argument is not in inline form")                             \
  X(MALFORMED_BURST, "malformed NoC transfer burst")                                      \
  X(READER_MISUSE, "reader called out of sequence")

enum class DecodeStatus : uint8_t {
#define CCLMESH_X(name, description) name,
  CCLMESH_DECODE_STATUSES(CCLMESH_X)
#undef CCLMESH_X
};

constexpr const char* decode_status_name(DecodeStatus status) {
  switch (status) {
#define CCLMESH_X(name, description) \
  case DecodeStatus::name:           \
    return #name;
    CCLMESH_DECODE_STATUSES(CCLMESH_X)
#undef CCLMESH_X
  }
  return "UNKNOWN_STATUS";
}

constexpr const char* decode_status_description(DecodeStatus status) {
  switch (status) {
#define CCLMESH_X(name, description) \
  case DecodeStatus::name:           \
    return description;
    CCLMESH_DECODE_STATUSES(CCLMESH_X)
#undef CCLMESH_X
  }
  return "unknown status";
}

// Decodes and validates a command header word (code known and not ILLEGAL, destination type
// known, reserved bits zero, hops and multicast targets <= 15, argument count within the
// opcode's range). `out` is filled only on OK.
constexpr DecodeStatus decode_command_header(uint32_t word, CommandHeader& out) {
  const uint32_t code = header_code_bits(word);
  if (code == static_cast<uint32_t>(CommandCode::ILLEGAL)) {
    return DecodeStatus::ILLEGAL_OPCODE;
  }
  if (!is_known_command_code(code)) {
    return DecodeStatus::UNKNOWN_OPCODE;
  }
  const uint32_t dest = header_dest_bits(word);
  if (dest > static_cast<uint32_t>(DestinationType::CHIP_LOCAL_ONLY)) {
    return DecodeStatus::UNKNOWN_DESTINATION_TYPE;
  }
  if (header_reserved_bits(word) != 0) {
    return DecodeStatus::RESERVED_BITS_SET;
  }
  CommandHeader h{static_cast<CommandCode>(code), static_cast<DestinationType>(dest),
                  static_cast<uint8_t>(header_arg_count(word)), 0, 0, 0, 0};
  switch (h.dest_type) {
    case DestinationType::CHIP_UNICAST:
      if (header_is_forward_direction(word) > 1) {
        return DecodeStatus::RESERVED_BITS_SET;
      }
      if (header_distance_in_hops(word) > kMaxFabricHops) {
        return DecodeStatus::HOPS_OUT_OF_RANGE;
      }
      h.distance_in_hops = static_cast<uint8_t>(header_distance_in_hops(word));
      h.is_forward_direction = static_cast<uint8_t>(header_is_forward_direction(word));
      break;
    case DestinationType::CHIP_MULTICAST:
      if (header_num_targets_forward(word) > kMaxFabricHops ||
          header_num_targets_backward(word) > kMaxFabricHops) {
        return DecodeStatus::HOPS_OUT_OF_RANGE;
      }
      h.num_targets_forward = static_cast<uint8_t>(header_num_targets_forward(word));
      h.num_targets_backward = static_cast<uint8_t>(header_num_targets_backward(word));
      break;
    case DestinationType::CHIP_LOCAL_ONLY:
      if ((word >> kHeaderHopsShift) != 0) {
        return DecodeStatus::RESERVED_BITS_SET;
      }
      break;
  }
  const CommandInfo info = command_info(h.code);
  if (h.arg_count < info.min_args || h.arg_count > info.max_args) {
    return DecodeStatus::ARG_COUNT_MISMATCH;
  }
  out = h;
  return DecodeStatus::OK;
}

// Validates an argument header on its own: known code, and the inline fields that code uses
// are in range while the ones it does not use are zero.
constexpr DecodeStatus validate_arg_header(CommandArgHeader h) {
  if (!is_known_arg_code(h.code)) {
    return DecodeStatus::UNKNOWN_ARG_CODE;
  }
  switch (static_cast<CommandArgCode>(h.code)) {
    case CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES:
    case CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES:
    case CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES:
    case CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES:
    case CommandArgCode::SET_WORKER_PAGES_PER_SLICE:
    case CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES:
      return (h.inline0 | h.inline1 | h.inline2) == 0 ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    case CommandArgCode::SET_TARGET_VALUE:
    case CommandArgCode::SET_ATOMIC_INC_VALUE:
      if (h.inline0 != kInlineValueFlag) {
        return DecodeStatus::NOT_INLINE_VALUE;
      }
      return h.inline2 == 0 ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    case CommandArgCode::SET_ADDRESS_INFO: {
      if (h.inline0 >= kNumAddressOperands) {
        return DecodeStatus::UNKNOWN_ADDRESS_OPERAND;
      }
      if (h.inline1 >= kNumAddressTypes) {
        return DecodeStatus::UNKNOWN_ADDRESS_TYPE;
      }
      const auto type = static_cast<AddressType>(h.inline1);
      const bool uses_id = type == AddressType::SEMAPHORE_ID || type == AddressType::CIRCULAR_BUFFER_ID;
      return (uses_id || h.inline2 == 0) ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    }
    case CommandArgCode::SET_CORE_DESCRIPTOR_INFO:
      if (h.inline0 >= kNumCoreDescriptorTypes) {
        return DecodeStatus::UNKNOWN_CORE_DESCRIPTOR_TYPE;
      }
      if (static_cast<CoreDescriptorType>(h.inline0) == CoreDescriptorType::NOC_XY) {
        return DecodeStatus::OK;
      }
      return (h.inline1 | h.inline2) == 0 ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    case CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO:
      return (h.inline1 | h.inline2) == 0 ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    case CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET:
      if (h.inline0 == 0) {
        return DecodeStatus::MALFORMED_BURST;
      }
      return (h.inline1 | h.inline2) == 0 ? DecodeStatus::OK : DecodeStatus::RESERVED_BITS_SET;
    case CommandArgCode::INVALID:
      break;
  }
  return DecodeStatus::UNKNOWN_ARG_CODE;
}

// Number of words in [offset, offset + n) that exist in a stream of `num_words` words.
constexpr bool words_available(uint32_t num_words, uint32_t offset, uint32_t n) {
  return offset <= num_words && num_words - offset >= n;
}

// Measures (and, for a burst, structurally validates) the payload of a validated argument
// header whose payload starts at `payload_offset`. Reads only words inside the stream.
constexpr DecodeStatus measure_arg_payload(const uint32_t* words, uint32_t num_words, uint32_t payload_offset,
                                           CommandArgHeader h, uint32_t& payload_words) {
  const auto code = static_cast<CommandArgCode>(h.code);
  uint32_t n = arg_fixed_payload_words(code);
  if (code == CommandArgCode::SET_ADDRESS_INFO) {
    n = address_payload_words(static_cast<AddressType>(h.inline1));
  } else if (code == CommandArgCode::SET_CORE_DESCRIPTOR_INFO) {
    n = core_descriptor_payload_words(static_cast<CoreDescriptorType>(h.inline0));
  } else if (code == CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO) {
    // bank base address, then groups until inline0 transfers are listed.
    uint32_t pos = payload_offset;
    if (!words_available(num_words, pos, 1)) {
      return DecodeStatus::TRUNCATED;
    }
    pos += 1;
    uint32_t transfers_left = h.inline0;
    while (transfers_left > 0) {
      if (!words_available(num_words, pos, 1)) {
        return DecodeStatus::TRUNCATED;
      }
      const uint32_t in_group = words[pos];
      pos += 1;
      if (in_group == 0 || in_group > transfers_left) {
        return DecodeStatus::MALFORMED_BURST;
      }
      if (!words_available(num_words, pos, in_group * kNocTransferRecordWords)) {
        return DecodeStatus::TRUNCATED;
      }
      for (uint32_t t = 0; t < in_group; ++t) {
        if (!noc_yx_is_canonical(words[pos + t * kNocTransferRecordWords + 1])) {
          return DecodeStatus::RESERVED_BITS_SET;
        }
      }
      pos += in_group * kNocTransferRecordWords;
      transfers_left -= in_group;
    }
    payload_words = pos - payload_offset;
    return DecodeStatus::OK;
  }
  if (!words_available(num_words, payload_offset, n)) {
    return DecodeStatus::TRUNCATED;
  }
  payload_words = n;
  return DecodeStatus::OK;
}

// One argument as found in the stream; its payload is words[payload_offset, +payload_words).
struct ArgView {
  CommandArgHeader header;
  uint32_t payload_offset;
  uint32_t payload_words;

  constexpr CommandArgCode code() const { return static_cast<CommandArgCode>(header.code); }
};

// Tensor-slice fields a streaming command needs. They are sticky across the commands of one
// stream, as in the device interpreter's command context, so a stream may send only the fields
// that changed (tt-metal's delta encoding).
constexpr uint8_t kSliceFieldTensorShape = 1u << 0;
constexpr uint8_t kSliceFieldSliceShape = 1u << 1;
constexpr uint8_t kSliceFieldSliceOffset = 1u << 2;
constexpr uint8_t kSliceFieldWorkerOffset = 1u << 3;
constexpr uint8_t kSliceFieldWorkerPages = 1u << 4;
constexpr uint8_t kSliceFieldsAll = 0x1F;

constexpr uint8_t slice_fields_set_by(CommandArgCode code) {
  switch (code) {
    case CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES:
      return kSliceFieldTensorShape;
    case CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES:
      return kSliceFieldSliceShape;
    case CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES:
      return kSliceFieldSliceOffset;
    case CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES:
      return kSliceFieldWorkerOffset;
    case CommandArgCode::SET_WORKER_PAGES_PER_SLICE:
      return kSliceFieldWorkerPages;
    case CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES:
      return kSliceFieldsAll;
    default:
      return 0;
  }
}

constexpr bool is_streaming_command(CommandCode code) {
  return code == CommandCode::STREAM_TENSOR_TO_CB || code == CommandCode::STREAM_CB_TO_TENSOR ||
         code == CommandCode::STREAM_EDM_TO_TENSOR;
}

class CommandStreamReader {
 public:
  constexpr CommandStreamReader(const uint32_t* words, uint32_t num_words) : words_(words), num_words_(num_words) {}

  constexpr bool at_end() const { return pos_ >= num_words_; }
  constexpr uint32_t position() const { return pos_; }
  constexpr uint32_t num_words() const { return num_words_; }
  constexpr const uint32_t* words() const { return words_; }
  // Index of the command being read (or the next one, between commands).
  constexpr uint32_t command_index() const { return command_index_; }
  // Word offset of the header of the command being read (or last read).
  constexpr uint32_t command_offset() const { return command_offset_; }
  // The first failure; every call after it returns the same status.
  constexpr DecodeStatus status() const { return status_; }

  constexpr DecodeStatus begin_command(CommandHeader& out) {
    if (status_ != DecodeStatus::OK) {
      return status_;
    }
    if (in_command_) {
      return fail(DecodeStatus::READER_MISUSE);
    }
    command_offset_ = pos_;
    if (!words_available(num_words_, pos_, 1)) {
      return fail(DecodeStatus::TRUNCATED);
    }
    CommandHeader h{};
    const DecodeStatus s = decode_command_header(words_[pos_], h);
    if (s != DecodeStatus::OK) {
      return fail(s);
    }
    pos_ += 1;
    header_ = h;
    args_left_ = h.arg_count;
    args_seen_ = 0;
    operands_seen_ = 0;
    in_command_ = true;
    out = h;
    return DecodeStatus::OK;
  }

  constexpr DecodeStatus next_arg(ArgView& out) {
    if (status_ != DecodeStatus::OK) {
      return status_;
    }
    if (!in_command_ || args_left_ == 0) {
      return fail(DecodeStatus::READER_MISUSE);
    }
    if (!words_available(num_words_, pos_, 1)) {
      return fail(DecodeStatus::TRUNCATED);
    }
    const CommandArgHeader h = decode_arg_header(words_[pos_]);
    DecodeStatus s = validate_arg_header(h);
    if (s != DecodeStatus::OK) {
      return fail(s);
    }
    const auto code = static_cast<CommandArgCode>(h.code);
    const uint32_t bit = arg_bit(code);
    if ((command_info(header_.code).allowed_args & bit) == 0) {
      return fail(DecodeStatus::ARG_NOT_ALLOWED);
    }
    if (code == CommandArgCode::SET_ADDRESS_INFO) {
      const uint8_t operand_bit = static_cast<uint8_t>(1u << h.inline0);
      if ((operands_seen_ & operand_bit) != 0) {
        return fail(DecodeStatus::DUPLICATE_ARG);
      }
      operands_seen_ |= operand_bit;
    } else if ((args_seen_ & bit) != 0) {
      return fail(DecodeStatus::DUPLICATE_ARG);
    }
    args_seen_ |= bit;
    uint32_t payload_words = 0;
    s = measure_arg_payload(words_, num_words_, pos_ + 1, h, payload_words);
    if (s != DecodeStatus::OK) {
      return fail(s);
    }
    out = ArgView{h, pos_ + 1, payload_words};
    pos_ += 1 + payload_words;
    args_left_ -= 1;
    slice_fields_ |= slice_fields_set_by(code);
    return DecodeStatus::OK;
  }

  constexpr DecodeStatus end_command() {
    if (status_ != DecodeStatus::OK) {
      return status_;
    }
    if (!in_command_ || args_left_ != 0) {
      return fail(DecodeStatus::READER_MISUSE);
    }
    const CommandInfo info = command_info(header_.code);
    if ((args_seen_ & info.required_args) != info.required_args) {
      return fail(DecodeStatus::MISSING_REQUIRED_ARG);
    }
    if (is_streaming_command(header_.code) && slice_fields_ != kSliceFieldsAll) {
      return fail(DecodeStatus::INCOMPLETE_TENSOR_SLICE);
    }
    in_command_ = false;
    command_index_ += 1;
    return DecodeStatus::OK;
  }

  // Reads and validates a whole command without interpreting its arguments.
  constexpr DecodeStatus skip_command(CommandHeader& out) {
    DecodeStatus s = begin_command(out);
    for (uint32_t i = 0; s == DecodeStatus::OK && i < out.arg_count; ++i) {
      ArgView a{};
      s = next_arg(a);
    }
    return s == DecodeStatus::OK ? end_command() : s;
  }

 private:
  constexpr DecodeStatus fail(DecodeStatus s) {
    status_ = s;
    return s;
  }

  const uint32_t* words_;
  uint32_t num_words_;
  uint32_t pos_ = 0;
  uint32_t command_index_ = 0;
  uint32_t command_offset_ = 0;
  CommandHeader header_{};
  uint32_t args_left_ = 0;
  uint32_t args_seen_ = 0;
  uint8_t operands_seen_ = 0;
  uint8_t slice_fields_ = 0;
  bool in_command_ = false;
  DecodeStatus status_ = DecodeStatus::OK;
};

}  // namespace cclmesh::api
