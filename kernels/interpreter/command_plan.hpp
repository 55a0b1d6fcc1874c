#pragma once
// The interpreter's per-command planning, kept free of device calls so it is unit-tested with
// plain inputs:
//   read_command      one command through the shared CommandStreamReader into a CommandPlan
//                     (operands, core, values, burst), applying sticky slice fields
//   validate_command  what the interpreter can execute: operand kinds per opcode, semaphore
//                     ids, slice bounds, fabric routes and connections
//   next_page_run     the next run of tensor pages one NoC transfer can move
//   burst helpers     walking a NoC transfer burst group by group
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/ccl_command.hpp"
#include "kernels/api/command_stream_reader.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/tensor_slice.hpp"

namespace cclmesh::kernels {

struct OperandInfo {
  bool present;
  api::AddressType type;
  uint32_t value;  // semaphore id, CB id, or address
};

struct CoreInfo {
  bool present;
  api::CoreDescriptorType type;
  uint32_t noc_x;
  uint32_t noc_y;
  api::NocRectangleCoords rect;
};

struct BurstInfo {
  bool present;
  uint32_t bank_base_address;
  uint32_t total_transfers;
  uint32_t first_group_word;  // index into the stream's words of the first group's count
};

struct CommandPlan {
  api::CommandHeader header;
  uint32_t index;        // in the stream
  uint32_t word_offset;  // of the header word, in the stream
  OperandInfo src;
  OperandInfo dst;
  CoreInfo core;
  bool has_target;
  uint32_t target;
  bool has_inc;
  uint32_t inc;
  BurstInfo burst;
};

// Sticky across the commands of one stream, as the device interpreter's command context.
struct CommandContext {
  api::CclCommandTensor tensor;
};

// 0 = no fault; otherwise a kernel_fault code.
using FaultCode = uint32_t;
constexpr FaultCode kNoFault = 0;
constexpr FaultCode fault(api::KernelFaultCode c) { return api::fault_code(c); }

constexpr void apply_slice_arg(const uint32_t* words, const api::ArgView& a, CommandContext& ctx) {
  const uint32_t* p = words + a.payload_offset;
  switch (a.code()) {
    case api::CommandArgCode::SET_TENSOR_SHAPE_IN_PAGES:
      ctx.tensor.tensor_shape = api::read_shape4d(p);
      break;
    case api::CommandArgCode::SET_TENSOR_SLICE_SHAPE_IN_PAGES:
      ctx.tensor.tensor_slice_shape = api::read_shape4d(p);
      break;
    case api::CommandArgCode::SET_TENSOR_SLICE_OFFSET_IN_PAGES:
      ctx.tensor.tensor_slice_offset = api::read_shape4d(p);
      break;
    case api::CommandArgCode::SET_WORKER_START_OFFSET_IN_SLICE_IN_PAGES:
      ctx.tensor.worker_start_offset_in_slice = api::read_shape4d(p);
      break;
    case api::CommandArgCode::SET_WORKER_PAGES_PER_SLICE:
      ctx.tensor.worker_pages_per_slice = p[0];
      break;
    case api::CommandArgCode::SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES:
      ctx.tensor = api::read_command_tensor(p);
      break;
    default:
      break;
  }
}

// Reads the next command (the reader must not be at its end). Returns kNoFault or a decode
// fault (fault_code(DecodeStatus)); the reader's command_index()/command_offset() locate it.
constexpr FaultCode read_command(api::CommandStreamReader& r, CommandContext& ctx, CommandPlan& plan) {
  plan = CommandPlan{};
  plan.index = r.command_index();
  plan.word_offset = r.position();
  api::DecodeStatus s = r.begin_command(plan.header);
  if (s != api::DecodeStatus::OK) {
    return api::fault_code(s);
  }
  const uint32_t* words = r.words();
  for (uint32_t i = 0; i < plan.header.arg_count; ++i) {
    api::ArgView a{};
    s = r.next_arg(a);
    if (s != api::DecodeStatus::OK) {
      return api::fault_code(s);
    }
    const api::CommandArgHeader& h = a.header;
    switch (a.code()) {
      case api::CommandArgCode::SET_TARGET_VALUE:
        plan.has_target = true;
        plan.target = h.inline1;
        break;
      case api::CommandArgCode::SET_ATOMIC_INC_VALUE:
        plan.has_inc = true;
        plan.inc = h.inline1;
        break;
      case api::CommandArgCode::SET_ADDRESS_INFO: {
        OperandInfo& op = h.inline0 == static_cast<uint8_t>(api::AddressOperand::SOURCE) ? plan.src : plan.dst;
        op.present = true;
        op.type = static_cast<api::AddressType>(h.inline1);
        op.value = a.payload_words > 0 ? words[a.payload_offset] : h.inline2;
        break;
      }
      case api::CommandArgCode::SET_CORE_DESCRIPTOR_INFO:
        plan.core.present = true;
        plan.core.type = static_cast<api::CoreDescriptorType>(h.inline0);
        plan.core.noc_x = h.inline1;
        plan.core.noc_y = h.inline2;
        if (plan.core.type == api::CoreDescriptorType::RECTANGLE) {
          plan.core.noc_x = 0;
          plan.core.noc_y = 0;
          plan.core.rect = api::unpack_noc_rectangle(words[a.payload_offset]);
        }
        break;
      case api::CommandArgCode::SET_NOC_TRANSFER_BURST_START_INFO:
        plan.burst.present = true;
        plan.burst.total_transfers = h.inline0;
        plan.burst.bank_base_address = words[a.payload_offset];
        plan.burst.first_group_word = a.payload_offset + 1;
        break;
      case api::CommandArgCode::SET_NOC_TRANSFER_BURST_SIZE_PER_PACKET:
        break;  // groups already are the packets
      default:
        apply_slice_arg(words, a, ctx);
        break;
    }
  }
  s = r.end_command();
  return s == api::DecodeStatus::OK ? kNoFault : api::fault_code(s);
}

// What the interpreter has to offer a command.
struct InterpreterEnv {
  bool has_tensor;
  uint32_t semaphore_id_mask;
  bool has_forward_connection;
  bool has_backward_connection;
};

constexpr bool is_operand(const OperandInfo& op, api::AddressType type) { return op.present && op.type == type; }
constexpr bool operand_absent_or_none(const OperandInfo& op) {
  return !op.present || op.type == api::AddressType::NONE;
}
// A semaphore operand: a per-program semaphore id or an absolute (global semaphore) address.
constexpr bool is_semaphore_operand(const OperandInfo& op) {
  return is_operand(op, api::AddressType::SEMAPHORE_ID) || is_operand(op, api::AddressType::ABSOLUTE_ADDRESS);
}
constexpr bool core_is(const CoreInfo& c, api::CoreDescriptorType type) { return c.present && c.type == type; }
// LOCAL, or no descriptor at all (the default).
constexpr bool core_absent_or_local(const CoreInfo& c) {
  return !c.present || c.type == api::CoreDescriptorType::LOCAL;
}
constexpr bool core_absent_or_addrgen(const CoreInfo& c) {
  return !c.present || c.type == api::CoreDescriptorType::ADDRGEN;
}
// A single core: this one or a NoC x/y. RECTANGLE (NoC multicast atomic inc / write) is not
// supported by the interpreter (REFERENCE §4.8, §11.15).
constexpr bool core_is_single(const CoreInfo& c) {
  return core_absent_or_local(c) || core_is(c, api::CoreDescriptorType::NOC_XY);
}

constexpr FaultCode check_semaphore_id(const OperandInfo& op, uint32_t mask) {
  if (op.type != api::AddressType::SEMAPHORE_ID) {
    return kNoFault;
  }
  if (op.value >= 32 || (mask & (uint32_t{1} << op.value)) == 0) {
    return fault(api::KernelFaultCode::UNKNOWN_SEMAPHORE);
  }
  return kNoFault;
}

// Routes and connections of a command that may leave the chip.
constexpr FaultCode check_fabric_destination(const api::CommandHeader& h, const InterpreterEnv& env) {
  switch (h.dest_type) {
    case api::DestinationType::CHIP_LOCAL_ONLY:
      return kNoFault;
    case api::DestinationType::CHIP_UNICAST:
      if (h.distance_in_hops == 0) {
        return fault(api::KernelFaultCode::BAD_ROUTE);
      }
      if (h.is_forward_direction != 0 ? !env.has_forward_connection : !env.has_backward_connection) {
        return fault(api::KernelFaultCode::NO_FABRIC_CONNECTION);
      }
      return kNoFault;
    case api::DestinationType::CHIP_MULTICAST:
      if ((h.num_targets_forward > 0 && !env.has_forward_connection) ||
          (h.num_targets_backward > 0 && !env.has_backward_connection)) {
        return fault(api::KernelFaultCode::NO_FABRIC_CONNECTION);
      }
      return kNoFault;
  }
  return fault(api::KernelFaultCode::UNSUPPORTED_OPERAND);
}

constexpr FaultCode check_streaming_tensor(const CommandContext& ctx, const InterpreterEnv& env) {
  if (!env.has_tensor) {
    return fault(api::KernelFaultCode::NO_TENSOR);
  }
  const api::SliceCheck c = api::check_command_tensor(ctx.tensor);
  return c == api::SliceCheck::OK ? kNoFault : api::fault_code(c);
}

// Semantic checks on a decoded command (the reader already enforced the encoding rules).
constexpr FaultCode validate_command(const CommandPlan& p, const CommandContext& ctx, const InterpreterEnv& env) {
  using api::AddressType;
  using api::CommandCode;
  using api::DestinationType;
  const auto unsupported = fault(api::KernelFaultCode::UNSUPPORTED_OPERAND);
  const bool local_only = p.header.dest_type == DestinationType::CHIP_LOCAL_ONLY;
  FaultCode f = kNoFault;
  switch (p.header.code) {
    case CommandCode::STREAM_TENSOR_TO_CB:
      // Any destination type: the 0-hop unicast form only reserved header room in tt-metal's
      // CB pages; headers live in the packet-header pool here.
      if (!is_operand(p.dst, AddressType::CIRCULAR_BUFFER_ID) || !operand_absent_or_none(p.src) ||
          !core_absent_or_addrgen(p.core)) {
        return unsupported;
      }
      return check_streaming_tensor(ctx, env);
    case CommandCode::STREAM_CB_TO_TENSOR:
      if (!is_operand(p.src, AddressType::CIRCULAR_BUFFER_ID) || !operand_absent_or_none(p.dst) ||
          !core_absent_or_addrgen(p.core)) {
        return unsupported;
      }
      f = check_streaming_tensor(ctx, env);
      return f != kNoFault ? f : check_fabric_destination(p.header, env);
    case CommandCode::WAIT_VALUE:
      if (!local_only || !is_semaphore_operand(p.src) || p.dst.present || !core_absent_or_local(p.core)) {
        return unsupported;
      }
      return check_semaphore_id(p.src, env.semaphore_id_mask);
    case CommandCode::SET_SEMAPHORE_VALUE:
      if (!local_only || !is_semaphore_operand(p.dst) || p.src.present || !core_absent_or_local(p.core)) {
        return unsupported;
      }
      return check_semaphore_id(p.dst, env.semaphore_id_mask);
    case CommandCode::ATOMIC_INC:
    case CommandCode::RAW_INLINE_WRITE_BYTES:
      if (!is_semaphore_operand(p.dst) || p.src.present || !core_is_single(p.core)) {
        return unsupported;
      }
      f = check_semaphore_id(p.dst, env.semaphore_id_mask);
      return f != kNoFault ? f : check_fabric_destination(p.header, env);
    case CommandCode::NOC_READ_BURST:
      if (!local_only || !is_operand(p.dst, AddressType::CIRCULAR_BUFFER_ID) || p.src.present || p.core.present) {
        return unsupported;
      }
      return kNoFault;
    case CommandCode::FLOW_CONTROLLED_NOC_READ_BURST:
      if (!local_only || !is_operand(p.dst, AddressType::CIRCULAR_BUFFER_ID) || !is_semaphore_operand(p.src) ||
          p.core.present) {
        return unsupported;
      }
      return check_semaphore_id(p.src, env.semaphore_id_mask);
    case CommandCode::NOC_WRITE_BURST:
      if (!is_operand(p.src, AddressType::CIRCULAR_BUFFER_ID) || p.dst.present || p.core.present) {
        return unsupported;
      }
      return check_fabric_destination(p.header, env);
    case CommandCode::NOC_WRITE_AND_ATOMIC_INC:
      if (!is_operand(p.src, AddressType::CIRCULAR_BUFFER_ID) || !is_semaphore_operand(p.dst) ||
          !core_is_single(p.core)) {
        return unsupported;
      }
      f = check_semaphore_id(p.dst, env.semaphore_id_mask);
      return f != kNoFault ? f : check_fabric_destination(p.header, env);
    case CommandCode::STREAM_EDM_TO_TENSOR:
    case CommandCode::ILLEGAL:
    case CommandCode::COUNT:
      break;
  }
  return fault(api::KernelFaultCode::UNSUPPORTED_COMMAND);
}

// ---------------------------------------------------------------------------------------------
// Page runs
// ---------------------------------------------------------------------------------------------
struct PageRun {
  uint32_t first_page;
  uint32_t num_pages;
  uint32_t target;   // bank (interleaved) or core index (sharded)
  uint32_t address;  // in that bank / core
  uint32_t bytes;    // what the run holds: num_pages x the page size, less a short last piece's shortfall
};

// Bytes from one page to the next inside a contiguous run.
constexpr uint32_t page_stride_bytes(const api::AddrGenParams& ag) {
  if (ag.layout != api::TensorMemoryLayout::INTERLEAVED) {
    return ag.sharded.pieces_per_page > 1 ? ag.sharded.piece_bytes : ag.sharded.page_size_jump_bytes;
  }
  return ag.interleaved.pieces_per_page > 1 ? ag.interleaved.piece_bytes : ag.interleaved.aligned_page_size_bytes;
}

// The next run of at most `max_pages` pages (>= 1) from the walker's position: bounded by the
// end of the slice row, by the address generator's contiguity, and by `max_pages`, with its
// bytes for pages of `page_size`. Advances the walker past it. The walker must not be done.
constexpr PageRun next_page_run(api::SliceWalker& w, const api::AddrGenParams& ag, uint32_t page_size,
                                uint32_t max_pages) {
  const uint32_t page = w.current_page();
  const api::PageLocation loc = api::page_location(ag, page);
  uint32_t n = w.run_length_in_row();
  if (loc.contiguous_pages < n) {
    n = loc.contiguous_pages;
  }
  if (max_pages < n) {
    n = max_pages;
  }
  if (n == 0) {
    n = 1;
  }
  w.advance(n);
  return PageRun{page, n, loc.target, loc.address, api::page_run_bytes(ag, page, n, page_size)};
}

// ---------------------------------------------------------------------------------------------
// Bursts: one group = one packet. A group is [count, count x (offset, noc_yx, bytes)].
// The reader validated the structure, so these only index.
// ---------------------------------------------------------------------------------------------
constexpr uint32_t burst_group_count(const uint32_t* words, uint32_t group_word) { return words[group_word]; }
constexpr uint32_t burst_group_words(const uint32_t* words, uint32_t group_word) {
  return 1 + burst_group_count(words, group_word) * api::kNocTransferRecordWords;
}
constexpr api::NocTransferRecord burst_transfer(const uint32_t* words, uint32_t group_word, uint32_t i) {
  const uint32_t* t = words + group_word + 1 + i * api::kNocTransferRecordWords;
  return api::NocTransferRecord{t[0], t[1], t[2]};
}
constexpr uint64_t burst_group_bytes(const uint32_t* words, uint32_t group_word) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < burst_group_count(words, group_word); ++i) {
    bytes += burst_transfer(words, group_word, i).size_bytes;
  }
  return bytes;
}
// Largest group, and the largest single transfer (a fabric packet carries one transfer).
constexpr uint64_t burst_max_group_bytes(const uint32_t* words, const BurstInfo& b) {
  uint64_t best = 0;
  uint32_t word = b.first_group_word;
  for (uint32_t left = b.total_transfers; left > 0;) {
    const uint64_t g = burst_group_bytes(words, word);
    best = g > best ? g : best;
    left -= burst_group_count(words, word);
    word += burst_group_words(words, word);
  }
  return best;
}
constexpr uint32_t burst_max_transfer_bytes(const uint32_t* words, const BurstInfo& b) {
  uint32_t best = 0;
  uint32_t word = b.first_group_word;
  for (uint32_t left = b.total_transfers; left > 0;) {
    for (uint32_t i = 0; i < burst_group_count(words, word); ++i) {
      const uint32_t s = burst_transfer(words, word, i).size_bytes;
      best = s > best ? s : best;
    }
    left -= burst_group_count(words, word);
    word += burst_group_words(words, word);
  }
  return best;
}

}  // namespace cclmesh::kernels
