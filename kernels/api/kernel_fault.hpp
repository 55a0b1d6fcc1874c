#pragma once
// Fault codes a kernel reports through kernel_fault(code, command_index, word_offset)
// (dataflow_api.hpp) when its input is bad: a malformed command stream, a packet header no
// router can route, arguments that do not describe a usable configuration. They are the
// "bad input" tier of DESIGN.md's errors: the simulator ends the run with a message naming
// chip, core, command and code; it never crashes and never runs on.
//
// Code ranges:
//   1 .. 0xFF            KernelFaultCode below
//   0x100 + DecodeStatus the command stream reader rejected the stream (command_stream_reader.hpp)
//   0x200 + SliceCheck   a streaming command's tensor slice failed check_command_tensor
//
// Device-clean: <cstdint> only.

#include <cstdint>

#include "kernels/api/command_stream_reader.hpp"
#include "kernels/api/tensor_slice.hpp"

namespace cclmesh::api {

// command_index of a fault that is not about a command (router, EDM, reduce, argument blocks).
constexpr uint32_t kFaultNoCommand = 0xFFFFFFFFu;

// X(name, value, description). word_offset meaning per code is given in the description.
#define CCLMESH_KERNEL_FAULT_CODES(X)                                                                  \
  X(BAD_ARGS, 1, "compile-time or runtime args do not describe a valid configuration (word_offset = arg index)") \
  X(UNSUPPORTED_COMMAND, 2, "opcode is valid but this kernel does not execute it")                   \
  X(UNSUPPORTED_OPERAND, 3, "address type, core descriptor or destination not usable for this opcode") \
  X(UNKNOWN_SEMAPHORE, 4, "semaphore id not allocated on this core")                                 \
  X(NO_TENSOR, 5, "streaming command on a stream that has no tensor")                               \
  X(NO_FABRIC_CONNECTION, 6, "fabric destination in a direction this kernel has no connection for")   \
  X(BAD_ROUTE, 7, "fabric route of 0 hops")                                                          \
  X(PAYLOAD_TOO_LARGE, 8, "packet larger than the fabric slot, or burst group larger than a CB packet") \
  X(CB_PAGE_SIZE_MISMATCH, 9, "circular-buffer page smaller than the tensor page")                   \
  X(PAGE_OUTSIDE_SHARD_GRID, 10, "sharded page maps to a core outside the core table")                \
  X(BAD_PACKET_HEADER, 20, "packet header with an invalid routing byte, send type or size (word_offset = slot)") \
  X(ROUTE_PAST_END, 21, "packet routed past its fabric line's end: the router at the end has no downstream (word_offset = slot), or the simulator found it at the sender") \
  X(UNSUPPORTED_NOC_SEND_TYPE, 22, "NoC command the 1D router does not carry, e.g. multicast atomic inc") \
  X(BAD_HANDSHAKE, 23, "unexpected value in a handshake mailbox (word_offset = the value)")           \
  X(WORKER_PROTOCOL_VIOLATION, 24, "a worker broke the connection protocol: more packets than the channel has credits, or a connection_live value other than 0, 1, 2 (word_offset = channel | value << 8, fabric_connection.hpp)") \
  X(ROUTE_WRAPS_RING, 25, "packet asks for as many hops as its fabric ring has chips, or more: it would pass its sender (found by the simulator at the sender; no router can tell)") \
  X(UNSUPPORTED_DATA_FORMAT, 30, "reduction data format is not fp32 or bf16 (word_offset = format)")

enum class KernelFaultCode : uint32_t {
#define CCLMESH_X(name, value, description) name = value,
  CCLMESH_KERNEL_FAULT_CODES(CCLMESH_X)
#undef CCLMESH_X
};

constexpr uint32_t kFaultDecodeBase = 0x100;
constexpr uint32_t kFaultSliceBase = 0x200;
constexpr uint32_t kFaultRangeSize = 0x100;

constexpr uint32_t fault_code(KernelFaultCode code) { return static_cast<uint32_t>(code); }
constexpr uint32_t fault_code(DecodeStatus status) { return kFaultDecodeBase + static_cast<uint32_t>(status); }
constexpr uint32_t fault_code(SliceCheck check) { return kFaultSliceBase + static_cast<uint32_t>(check); }

constexpr bool is_decode_fault(uint32_t code) { return code >= kFaultDecodeBase && code < kFaultDecodeBase + kFaultRangeSize; }
constexpr bool is_slice_fault(uint32_t code) { return code >= kFaultSliceBase && code < kFaultSliceBase + kFaultRangeSize; }

constexpr bool is_known_kernel_fault_code(uint32_t code) {
  switch (code) {
#define CCLMESH_X(name, value, description) case value:
    CCLMESH_KERNEL_FAULT_CODES(CCLMESH_X)
#undef CCLMESH_X
    return true;
    default:
      return false;
  }
}

// "BAD_ARGS", "DECODE:UNKNOWN_OPCODE", "SLICE:SLICE_OUTSIDE_TENSOR", or "UNKNOWN_FAULT".
constexpr const char* kernel_fault_name(uint32_t code) {
  if (is_decode_fault(code)) {
    return decode_status_name(static_cast<DecodeStatus>(code - kFaultDecodeBase));
  }
  if (is_slice_fault(code)) {
    return slice_check_name(static_cast<SliceCheck>(code - kFaultSliceBase));
  }
  switch (code) {
#define CCLMESH_X(name, value, description) \
  case value:                               \
    return #name;
    CCLMESH_KERNEL_FAULT_CODES(CCLMESH_X)
#undef CCLMESH_X
    default:
      return "UNKNOWN_FAULT";
  }
}

constexpr const char* kernel_fault_description(uint32_t code) {
  if (is_decode_fault(code)) {
    return decode_status_description(static_cast<DecodeStatus>(code - kFaultDecodeBase));
  }
  if (is_slice_fault(code)) {
    return "tensor slice does not fit its tensor (or the worker run does not fit the slice)";
  }
  switch (code) {
#define CCLMESH_X(name, value, description) \
  case value:                               \
    return description;
    CCLMESH_KERNEL_FAULT_CODES(CCLMESH_X)
#undef CCLMESH_X
    default:
      return "unknown fault code";
  }
}

}  // namespace cclmesh::api
