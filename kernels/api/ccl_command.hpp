#pragma once
// The CCL command encoding: THE host<->device contract for command streams (REFERENCE §4.2-4.5).
//
// One opcode table and one argument-code table (X-macros below) are the single source from
// which the enums, the name tables, the per-opcode metadata, the host encoder, the device
// interpreter and the disassembler all derive. Adding an opcode means adding one table row;
// the unit tests iterate the table, so an opcode without a round-trip test fails to compile.
//
// Device-clean: depends on <cstdint> only, compiles as C++17, no heap, no exceptions, no STL.
// Words are packed and unpacked with explicit shifts and masks, never with bitfields, so the
// layout does not depend on the compiler's bitfield ordering.

#include <cstdint>

namespace cclmesh::api {

// ---------------------------------------------------------------------------------------------
// Argument codes (REFERENCE §4.5). Values are tt-metal's, so argument words are byte-compatible.
// X(name, value, fixed_payload_words); kVariablePayloadWords means the payload size depends on
// the inline fields (address / core descriptor) or on the payload itself (burst).
// ---------------------------------------------------------------------------------------------
constexpr uint8_t kVariablePayloadWords = 0xFF;

#define CCLMESH_CCL_ARG_CODES(X)                                          \
  X(SET_TENSOR_SHAPE_IN_PAGES, 0, 4)                                      \
  X(SET_TENSOR_SLICE_SHAPE_IN_PAGES, 1, 4)                                \
  X(SET_TENSOR_SLICE_OFFSET_IN_PAGES, 2, 4)                               \
  X(SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES, 3, 4)                      \
  X(SET_WORKER_PAGES_PER_SLICE, 4, 1)                                     \
  X(SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES, 5, 17)                           \
  X(SET_TARGET_VALUE, 6, 0)                                               \
  X(SET_ATOMIC_INC_VALUE, 7, 0)                                           \
  X(SET_ADDRESS_INFO, 8, ::cclmesh::api::kVariablePayloadWords)           \
  X(SET_CORE_DESCRIPTOR_INFO, 9, ::cclmesh::api::kVariablePayloadWords)   \
  X(SET_NOC_TRANSFER_BURST_START_INFO, 10, ::cclmesh::api::kVariablePayloadWords) \
  X(SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET, 11, 0)

enum class CommandArgCode : uint8_t {
#define CCLMESH_X(name, value, payload) name = value,
  CCLMESH_CCL_ARG_CODES(CCLMESH_X)
#undef CCLMESH_X
  INVALID = 0xFF,
};

#define CCLMESH_X(name, value, payload) +1
constexpr uint32_t kNumCommandArgCodes = 0 CCLMESH_CCL_ARG_CODES(CCLMESH_X);
#undef CCLMESH_X

constexpr bool is_known_arg_code(uint32_t raw) {
  switch (raw) {
#define CCLMESH_X(name, value, payload) case value:
    CCLMESH_CCL_ARG_CODES(CCLMESH_X)
#undef CCLMESH_X
    return true;
    default:
      return false;
  }
}

constexpr const char* arg_code_name(CommandArgCode code) {
  switch (code) {
#define CCLMESH_X(name, value, payload) \
  case CommandArgCode::name:            \
    return #name;
    CCLMESH_CCL_ARG_CODES(CCLMESH_X)
#undef CCLMESH_X
    case CommandArgCode::INVALID:
      return "INVALID";
  }
  return "UNKNOWN_ARG_CODE";
}

// Fixed payload size, or kVariablePayloadWords (see measure_arg_payload in the stream reader).
constexpr uint8_t arg_fixed_payload_words(CommandArgCode code) {
  switch (code) {
#define CCLMESH_X(name, value, payload) \
  case CommandArgCode::name:            \
    return payload;
    CCLMESH_CCL_ARG_CODES(CCLMESH_X)
#undef CCLMESH_X
    case CommandArgCode::INVALID:
      return 0;
  }
  return 0;
}

// One bit per argument code, for the per-opcode "allowed" and "required" masks.
constexpr uint32_t arg_bit(CommandArgCode code) { return uint32_t{1} << static_cast<uint32_t>(code); }
static_assert(kNumCommandArgCodes <= 32, "argument masks are 32 bits");

constexpr uint32_t kTensorSliceArgs =
    arg_bit(CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES) |
    arg_bit(CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES) |
    arg_bit(CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES) |
    arg_bit(CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES) |
    arg_bit(CommandArgCode::SET_WORKER_PAGES_PER_SLICE) |
    arg_bit(CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES);
constexpr uint32_t kLocationArgs =
    arg_bit(CommandArgCode::SET_ADDRESS_INFO) | arg_bit(CommandArgCode::SET_CORE_DESCRIPTOR_INFO);
constexpr uint32_t kBurstArgs = arg_bit(CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO) |
                                arg_bit(CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET);
constexpr uint32_t kTargetValueArg = arg_bit(CommandArgCode::SET_TARGET_VALUE);
constexpr uint32_t kAtomicIncValueArg = arg_bit(CommandArgCode::SET_ATOMIC_INC_VALUE);
constexpr uint32_t kBurstStartArg = arg_bit(CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO);

// ---------------------------------------------------------------------------------------------
// Opcode table. cclmesh values differ from tt-metal's (ILLEGAL = 0, so a zeroed word never
// decodes as a command); the tt_metal column is the translation to tt-metal's mid-2025
// `CclCommandCode` values (REFERENCE §4.4), kNoTtMetalCode where tt-metal has no such opcode.
//
// X(name, value, tt_metal, min_args, required_args, allowed_args)
//   required_args: argument codes that must appear in every instance of the command.
//   allowed_args:  every argument code the command accepts; anything else is a decode error.
//   max args is derived: one per allowed code, plus one when SET_ADDRESS_INFO is allowed
//   (it appears once per operand, source and destination).
//
// Operand roles:
//   STREAM_TENSOR_TO_CB        src = tensor (NONE: stream k reads tensor k), dst = CB
//   STREAM_CB_TO_TENSOR / EDM  src = CB, dst = tensor (NONE: stream k writes tensor k)
//   WAIT_VALUE                 src = semaphore; completes when *sem >= target (never resets)
//   ATOMIC_INC                 dst = semaphore, core = LOCAL / NOC_XY / RECTANGLE
//   RAW_INLINE_WRITE_BYTES     dst = address; the 8-bit inline SET_TARGET_VALUE is written
//   NOC_*_BURST                the burst lists bank offsets, NoC x/y and sizes per transfer
//   FLOW_CONTROLLED_NOC_READ_BURST  every read first waits for src semaphore >= target
//   NOC_WRITE_AND_ATOMIC_INC   the burst writes, then dst semaphore += inc (fused packets)
//   SET_SEMAPHORE_VALUE        dst semaphore = target (local_core_semaphore_set, §4.11)
// ---------------------------------------------------------------------------------------------
constexpr uint8_t kNoTtMetalCode = 0xFF;

#define CCLMESH_CCL_COMMAND_CODES(X)                                                          \
  X(ILLEGAL, 0, 10, 0, 0, 0)                                                                  \
  X(STREAM_TENSOR_TO_CB, 1, 0, 1, 0,                                                          \
    ::cclmesh::api::kTensorSliceArgs | ::cclmesh::api::kLocationArgs)                         \
  X(STREAM_CB_TO_TENSOR, 2, 1, 1, 0,                                                          \
    ::cclmesh::api::kTensorSliceArgs | ::cclmesh::api::kLocationArgs)                         \
  X(STREAM_EDM_TO_TENSOR, 3, 2, 1, 0,                                                         \
    ::cclmesh::api::kTensorSliceArgs | ::cclmesh::api::kLocationArgs)                         \
  X(WAIT_VALUE, 4, 3, 1, ::cclmesh::api::kTargetValueArg,                                     \
    ::cclmesh::api::kTargetValueArg | ::cclmesh::api::kLocationArgs)                          \
  X(ATOMIC_INC, 5, 4, 1, ::cclmesh::api::kAtomicIncValueArg,                                  \
    ::cclmesh::api::kAtomicIncValueArg | ::cclmesh::api::kLocationArgs)                       \
  X(RAW_INLINE_WRITE_BYTES, 6, 5, 1, ::cclmesh::api::kTargetValueArg,                         \
    ::cclmesh::api::kTargetValueArg | ::cclmesh::api::kLocationArgs)                          \
  X(NOC_READ_BURST, 7, 6, 1, ::cclmesh::api::kBurstStartArg,                                  \
    ::cclmesh::api::kBurstArgs | ::cclmesh::api::kLocationArgs)                               \
  X(NOC_WRITE_BURST, 8, 7, 1, ::cclmesh::api::kBurstStartArg,                                 \
    ::cclmesh::api::kBurstArgs | ::cclmesh::api::kLocationArgs)                               \
  X(FLOW_CONTROLLED_NOC_READ_BURST, 9, 8, 2,                                                  \
    ::cclmesh::api::kBurstStartArg | ::cclmesh::api::kTargetValueArg,                         \
    ::cclmesh::api::kBurstArgs | ::cclmesh::api::kTargetValueArg |                            \
        ::cclmesh::api::kLocationArgs)                                                        \
  X(NOC_WRITE_AND_ATOMIC_INC, 10, 9, 2,                                                       \
    ::cclmesh::api::kBurstStartArg | ::cclmesh::api::kAtomicIncValueArg,                      \
    ::cclmesh::api::kBurstArgs | ::cclmesh::api::kAtomicIncValueArg |                         \
        ::cclmesh::api::kLocationArgs)                                                        \
  X(SET_SEMAPHORE_VALUE, 11, ::cclmesh::api::kNoTtMetalCode, 1,                               \
    ::cclmesh::api::kTargetValueArg,                                                          \
    ::cclmesh::api::kTargetValueArg | ::cclmesh::api::kLocationArgs)

enum class CommandCode : uint8_t {
#define CCLMESH_X(name, value, tt, min_args, required, allowed) name = value,
  CCLMESH_CCL_COMMAND_CODES(CCLMESH_X)
#undef CCLMESH_X
  COUNT,
};

#define CCLMESH_X(name, value, tt, min_args, required, allowed) +1
constexpr uint32_t kNumCommandCodes = 0 CCLMESH_CCL_COMMAND_CODES(CCLMESH_X);
#undef CCLMESH_X
static_assert(static_cast<uint32_t>(CommandCode::COUNT) == kNumCommandCodes,
              "opcode values must be dense, 0 .. COUNT-1");
static_assert(static_cast<uint32_t>(CommandCode::ILLEGAL) == 0, "DESIGN.md: ILLEGAL = 0");

constexpr bool is_known_command_code(uint32_t raw) { return raw < kNumCommandCodes; }

constexpr const char* command_code_name(CommandCode code) {
  switch (code) {
#define CCLMESH_X(name, value, tt, min_args, required, allowed) \
  case CommandCode::name:                                       \
    return #name;
    CCLMESH_CCL_COMMAND_CODES(CCLMESH_X)
#undef CCLMESH_X
    case CommandCode::COUNT:
      return "COUNT";
  }
  return "UNKNOWN_OPCODE";
}

struct CommandInfo {
  uint8_t tt_metal_code;
  uint8_t min_args;
  uint8_t max_args;
  uint32_t required_args;
  uint32_t allowed_args;
};

constexpr uint8_t popcount32(uint32_t v) {
  uint8_t n = 0;
  for (; v != 0; v &= v - 1) {
    ++n;
  }
  return n;
}

constexpr uint8_t max_args_for(uint32_t allowed_args) {
  return static_cast<uint8_t>(
      popcount32(allowed_args) +
      ((allowed_args & arg_bit(CommandArgCode::SET_ADDRESS_INFO)) != 0 ? 1 : 0));
}

constexpr CommandInfo command_info(CommandCode code) {
  switch (code) {
#define CCLMESH_X(name, value, tt, min_args, required, allowed) \
  case CommandCode::name:                                       \
    return CommandInfo{tt, min_args, max_args_for(allowed), required, allowed};
    CCLMESH_CCL_COMMAND_CODES(CCLMESH_X)
#undef CCLMESH_X
    case CommandCode::COUNT:
      break;
  }
  return CommandInfo{kNoTtMetalCode, 0, 0, 0, 0};
}

// Translation to and from tt-metal's mid-2025 CclCommandCode values (REFERENCE §4.4). The
// header word layout is otherwise identical, so translating the code field is all it takes.
constexpr uint8_t to_tt_metal_command_code(CommandCode code) { return command_info(code).tt_metal_code; }

constexpr CommandCode from_tt_metal_command_code(uint8_t tt_metal_code) {
  for (uint32_t v = 1; v < kNumCommandCodes; ++v) {
    if (command_info(static_cast<CommandCode>(v)).tt_metal_code == tt_metal_code) {
      return static_cast<CommandCode>(v);
    }
  }
  return CommandCode::ILLEGAL;
}

// ---------------------------------------------------------------------------------------------
// Command header word (REFERENCE §4.3).
//   bits  5:0  command code          bits 11:8  argument count      bits 15:12  reserved (0)
//   bits  7:6  destination type
//   unicast:   bits 23:16 distance_in_hops, bits 31:24 is_forward_direction (0 or 1)
//   multicast: bits 23:16 num_targets_forward, bits 31:24 num_targets_backward
//   local:     bits 31:16 zero
// ---------------------------------------------------------------------------------------------
enum class DestinationType : uint8_t {
  CHIP_UNICAST = 0,
  CHIP_MULTICAST = 1,
  CHIP_LOCAL_ONLY = 2,
};

constexpr const char* destination_type_name(DestinationType type) {
  switch (type) {
    case DestinationType::CHIP_UNICAST:
      return "UNICAST";
    case DestinationType::CHIP_MULTICAST:
      return "MCAST";
    case DestinationType::CHIP_LOCAL_ONLY:
      return "LOCAL";
  }
  return "UNKNOWN_DEST";
}

constexpr uint32_t kHeaderCodeShift = 0;
constexpr uint32_t kHeaderCodeMask = 0x3F;
constexpr uint32_t kHeaderDestShift = 6;
constexpr uint32_t kHeaderDestMask = 0x3;
constexpr uint32_t kHeaderArgCountShift = 8;
constexpr uint32_t kHeaderArgCountMask = 0xF;
constexpr uint32_t kHeaderReservedShift = 12;
constexpr uint32_t kHeaderReservedMask = 0xF;
constexpr uint32_t kHeaderHopsShift = 16;  // unicast distance_in_hops
constexpr uint32_t kHeaderHopsMask = 0xFF;
constexpr uint32_t kHeaderForwardShift = 24;  // unicast is_forward_direction
constexpr uint32_t kHeaderForwardMask = 0xFF;
constexpr uint32_t kHeaderTargetsForwardShift = 16;  // multicast
constexpr uint32_t kHeaderTargetsForwardMask = 0xFF;
constexpr uint32_t kHeaderTargetsBackwardShift = 24;  // multicast
constexpr uint32_t kHeaderTargetsBackwardMask = 0xFF;

constexpr uint32_t kMaxArgsPerCommand = kHeaderArgCountMask;  // 4-bit field
// The fabric routing byte has 4-bit start and range fields (fabric_packet_header.hpp), so no
// route, unicast or multicast, can reach farther than 15 chips.
constexpr uint32_t kMaxFabricHops = 15;
// Inline argument fields are one byte: the 8-bit trap of REFERENCE §4.11.
constexpr uint32_t kMaxInlineValue = 0xFF;

static_assert(kMaxFabricHops <= kHeaderHopsMask, "hops field too narrow");
static_assert(((kHeaderCodeMask << kHeaderCodeShift) & (kHeaderDestMask << kHeaderDestShift)) == 0,
              "overlapping header fields");
static_assert(kNumCommandCodes <= kHeaderCodeMask + 1, "opcode table outgrew the 6-bit field");

// The decoded form of a header word. Only the fields of `dest_type` are meaningful; the others
// are zero.
struct CommandHeader {
  CommandCode code;
  DestinationType dest_type;
  uint8_t arg_count;
  uint8_t distance_in_hops;      // unicast
  uint8_t is_forward_direction;  // unicast: 1 forward, 0 backward
  uint8_t num_targets_forward;   // multicast
  uint8_t num_targets_backward;  // multicast
};

constexpr uint32_t encode_command_header(const CommandHeader& h) {
  uint32_t word = ((static_cast<uint32_t>(h.code) & kHeaderCodeMask) << kHeaderCodeShift) |
                  ((static_cast<uint32_t>(h.dest_type) & kHeaderDestMask) << kHeaderDestShift) |
                  ((uint32_t{h.arg_count} & kHeaderArgCountMask) << kHeaderArgCountShift);
  switch (h.dest_type) {
    case DestinationType::CHIP_UNICAST:
      word |= (uint32_t{h.distance_in_hops} & kHeaderHopsMask) << kHeaderHopsShift;
      word |= (uint32_t{h.is_forward_direction != 0 ? 1u : 0u}) << kHeaderForwardShift;
      break;
    case DestinationType::CHIP_MULTICAST:
      word |= (uint32_t{h.num_targets_forward} & kHeaderTargetsForwardMask) << kHeaderTargetsForwardShift;
      word |= (uint32_t{h.num_targets_backward} & kHeaderTargetsBackwardMask) << kHeaderTargetsBackwardShift;
      break;
    case DestinationType::CHIP_LOCAL_ONLY:
      break;
  }
  return word;
}

// Raw field extraction: no validation, usable on any word.
constexpr uint32_t header_code_bits(uint32_t word) { return (word >> kHeaderCodeShift) & kHeaderCodeMask; }
constexpr uint32_t header_dest_bits(uint32_t word) { return (word >> kHeaderDestShift) & kHeaderDestMask; }
constexpr uint32_t header_arg_count(uint32_t word) { return (word >> kHeaderArgCountShift) & kHeaderArgCountMask; }
constexpr uint32_t header_reserved_bits(uint32_t word) { return (word >> kHeaderReservedShift) & kHeaderReservedMask; }
constexpr uint32_t header_distance_in_hops(uint32_t word) { return (word >> kHeaderHopsShift) & kHeaderHopsMask; }
constexpr uint32_t header_is_forward_direction(uint32_t word) { return (word >> kHeaderForwardShift) & kHeaderForwardMask; }
constexpr uint32_t header_num_targets_forward(uint32_t word) {
  return (word >> kHeaderTargetsForwardShift) & kHeaderTargetsForwardMask;
}
constexpr uint32_t header_num_targets_backward(uint32_t word) {
  return (word >> kHeaderTargetsBackwardShift) & kHeaderTargetsBackwardMask;
}

// Translate the code field of a header word to tt-metal numbering (everything else in the
// word is already byte-compatible). False when the opcode has no tt-metal equivalent.
constexpr bool header_word_to_tt_metal(uint32_t word, uint32_t& out) {
  if (!is_known_command_code(header_code_bits(word))) {
    return false;
  }
  const uint8_t tt = to_tt_metal_command_code(static_cast<CommandCode>(header_code_bits(word)));
  if (tt == kNoTtMetalCode) {
    return false;
  }
  out = (word & ~(kHeaderCodeMask << kHeaderCodeShift)) | (uint32_t{tt} << kHeaderCodeShift);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Argument header word (REFERENCE §4.5): bits 7:0 code, 15:8 inline0, 23:16 inline1,
// 31:24 inline2.
// ---------------------------------------------------------------------------------------------
constexpr uint32_t kArgCodeShift = 0;
constexpr uint32_t kArgInline0Shift = 8;
constexpr uint32_t kArgInline1Shift = 16;
constexpr uint32_t kArgInline2Shift = 24;
constexpr uint32_t kArgByteMask = 0xFF;

struct CommandArgHeader {
  uint8_t code;  // raw: may be an unknown code in a malformed stream
  uint8_t inline0;
  uint8_t inline1;
  uint8_t inline2;
};

constexpr uint32_t encode_arg_header(CommandArgCode code, uint8_t inline0 = 0, uint8_t inline1 = 0,
                                     uint8_t inline2 = 0) {
  return (static_cast<uint32_t>(code) << kArgCodeShift) | (uint32_t{inline0} << kArgInline0Shift) |
         (uint32_t{inline1} << kArgInline1Shift) | (uint32_t{inline2} << kArgInline2Shift);
}

constexpr CommandArgHeader decode_arg_header(uint32_t word) {
  return CommandArgHeader{static_cast<uint8_t>((word >> kArgCodeShift) & kArgByteMask),
                          static_cast<uint8_t>((word >> kArgInline0Shift) & kArgByteMask),
                          static_cast<uint8_t>((word >> kArgInline1Shift) & kArgByteMask),
                          static_cast<uint8_t>((word >> kArgInline2Shift) & kArgByteMask)};
}

// SET_TARGET_VALUE / SET_ATOMIC_INC_VALUE: inline0 = 1 ("is inline", the only form tt-metal's
// interpreter accepts), inline1 = the 8-bit value.
constexpr uint8_t kInlineValueFlag = 1;

// SET_ADDRESS_INFO: inline0 = operand, inline1 = address type, inline2 = semaphore / CB id;
// ABSOLUTE_ADDRESS and RELATIVE_ADDRESS carry the address in the next word.
enum class AddressOperand : uint8_t { SOURCE = 0, DESTINATION = 1 };
constexpr uint32_t kNumAddressOperands = 2;

enum class AddressType : uint8_t {
  SEMAPHORE_ID = 0,        // inline2 = id, resolved on device with get_semaphore(id)
  CIRCULAR_BUFFER_ID = 1,  // inline2 = CB id
  ABSOLUTE_ADDRESS = 2,    // payload word = L1 / bank address
  RELATIVE_ADDRESS = 3,    // payload word = offset from the operand's base address
  NONE = 4,
};
constexpr uint32_t kNumAddressTypes = 5;

constexpr const char* address_type_name(AddressType type) {
  switch (type) {
    case AddressType::SEMAPHORE_ID:
      return "SEM";
    case AddressType::CIRCULAR_BUFFER_ID:
      return "CB";
    case AddressType::ABSOLUTE_ADDRESS:
      return "ABS";
    case AddressType::RELATIVE_ADDRESS:
      return "REL";
    case AddressType::NONE:
      return "NONE";
  }
  return "UNKNOWN_ADDRESS_TYPE";
}

constexpr uint32_t address_payload_words(AddressType type) {
  return (type == AddressType::ABSOLUTE_ADDRESS || type == AddressType::RELATIVE_ADDRESS) ? 1 : 0;
}

// SET_CORE_DESCRIPTOR_INFO: inline0 = type; NOC_XY: inline1 = x, inline2 = y (NoC0);
// RECTANGLE: the next word packs start_x | start_y << 8 | end_x << 16 | end_y << 24 (NoC0).
enum class CoreDescriptorType : uint8_t {
  ADDRGEN = 0,  // the tensor's address generator picks the core
  LOCAL = 1,
  NOC_XY = 2,
  RECTANGLE = 3,
  NONE = 4,
};
constexpr uint32_t kNumCoreDescriptorTypes = 5;

constexpr const char* core_descriptor_type_name(CoreDescriptorType type) {
  switch (type) {
    case CoreDescriptorType::ADDRGEN:
      return "ADDRGEN";
    case CoreDescriptorType::LOCAL:
      return "LOCAL";
    case CoreDescriptorType::NOC_XY:
      return "XY";
    case CoreDescriptorType::RECTANGLE:
      return "RECT";
    case CoreDescriptorType::NONE:
      return "NONE";
  }
  return "UNKNOWN_CORE_DESCRIPTOR";
}

constexpr uint32_t core_descriptor_payload_words(CoreDescriptorType type) {
  return type == CoreDescriptorType::RECTANGLE ? 1 : 0;
}

struct NocRectangleCoords {
  uint8_t start_x;
  uint8_t start_y;
  uint8_t end_x;
  uint8_t end_y;
};

constexpr uint32_t pack_noc_rectangle(const NocRectangleCoords& r) {
  return uint32_t{r.start_x} | (uint32_t{r.start_y} << 8) | (uint32_t{r.end_x} << 16) |
         (uint32_t{r.end_y} << 24);
}

constexpr NocRectangleCoords unpack_noc_rectangle(uint32_t word) {
  return NocRectangleCoords{static_cast<uint8_t>(word & 0xFF), static_cast<uint8_t>((word >> 8) & 0xFF),
                            static_cast<uint8_t>((word >> 16) & 0xFF),
                            static_cast<uint8_t>((word >> 24) & 0xFF)};
}

// ---------------------------------------------------------------------------------------------
// NoC transfer bursts (mid-2025 NOC_*_BURST commands, REFERENCE §4.5).
// SET_NOC_TRANSFER_BURST_START_INFO: inline0 = total transfers (8 bits); payload = one word
// bank base address, then groups until the total is reached: one word num_transfers_in_group
// (>= 1), then one NocTransferRecord (3 words) per transfer. A group is what one packet carries.
// SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET: inline0 = max transfers per packet (>= 1).
// ---------------------------------------------------------------------------------------------
struct NocTransferRecord {
  uint32_t bank_address_offset;  // relative to the burst's bank base address
  uint32_t noc_yx;               // pack_noc_yx(x, y)
  uint32_t size_bytes;
};
static_assert(sizeof(NocTransferRecord) == 12, "NocTransferRecord is 3 words on the wire");
constexpr uint32_t kNocTransferRecordWords = 3;

constexpr uint32_t pack_noc_yx(uint32_t x, uint32_t y) { return (x & 0xFF) | ((y & 0xFF) << 16); }
constexpr uint32_t noc_yx_x(uint32_t noc_yx) { return noc_yx & 0xFF; }
constexpr uint32_t noc_yx_y(uint32_t noc_yx) { return (noc_yx >> 16) & 0xFF; }
constexpr bool noc_yx_is_canonical(uint32_t noc_yx) { return (noc_yx & 0xFF00FF00u) == 0; }

// ---------------------------------------------------------------------------------------------
// Tensor records (REFERENCE §4.2), all in pages.
// ---------------------------------------------------------------------------------------------
struct Shape4D {
  uint32_t w;
  uint32_t z;
  uint32_t y;
  uint32_t x;
};
static_assert(sizeof(Shape4D) == 16, "Shape4D is 4 words on the wire");
constexpr uint32_t kShape4DWords = 4;

constexpr bool operator==(const Shape4D& a, const Shape4D& b) {
  return a.w == b.w && a.z == b.z && a.y == b.y && a.x == b.x;
}
constexpr bool operator!=(const Shape4D& a, const Shape4D& b) { return !(a == b); }

// The device view of a worker's slice (tt-metal CclCommandTensor): what
// SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES carries, in this word order.
struct CclCommandTensor {
  Shape4D tensor_shape;
  Shape4D tensor_slice_shape;
  Shape4D tensor_slice_offset;
  Shape4D worker_start_offset_in_slice;
  uint32_t worker_pages_per_slice;
};
static_assert(sizeof(CclCommandTensor) == 68, "CclCommandTensor is 17 words on the wire");
constexpr uint32_t kCclCommandTensorWords = 17;

constexpr bool operator==(const CclCommandTensor& a, const CclCommandTensor& b) {
  return a.tensor_shape == b.tensor_shape && a.tensor_slice_shape == b.tensor_slice_shape &&
         a.tensor_slice_offset == b.tensor_slice_offset &&
         a.worker_start_offset_in_slice == b.worker_start_offset_in_slice &&
         a.worker_pages_per_slice == b.worker_pages_per_slice;
}
constexpr bool operator!=(const CclCommandTensor& a, const CclCommandTensor& b) { return !(a == b); }

constexpr Shape4D read_shape4d(const uint32_t* words) { return Shape4D{words[0], words[1], words[2], words[3]}; }

constexpr void write_shape4d(const Shape4D& s, uint32_t* words) {
  words[0] = s.w;
  words[1] = s.z;
  words[2] = s.y;
  words[3] = s.x;
}

constexpr CclCommandTensor read_command_tensor(const uint32_t* words) {
  return CclCommandTensor{read_shape4d(words), read_shape4d(words + 4), read_shape4d(words + 8),
                          read_shape4d(words + 12), words[16]};
}

constexpr void write_command_tensor(const CclCommandTensor& t, uint32_t* words) {
  write_shape4d(t.tensor_shape, words);
  write_shape4d(t.tensor_slice_shape, words + 4);
  write_shape4d(t.tensor_slice_offset, words + 8);
  write_shape4d(t.worker_start_offset_in_slice, words + 12);
  words[16] = t.worker_pages_per_slice;
}

}  // namespace cclmesh::api
