#pragma once
// The command interpreter's runtime args, parsed and validated (layout: kernel_args.hpp,
// namespace interpreter). Pure: it reads an array of words, so the host builder's output is
// checked against exactly what the kernel will accept.
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/kernel_args.hpp"

namespace cclmesh::kernels {

struct InterpreterTensor {
  bool present;
  uint32_t address;
  uint32_t page_size_bytes;
  api::BufferType buffer_type;
  api::AddrGenParams addrgen;
  uint32_t core_table_offset;  // sharded: runtime-arg index of the core table
};

struct InterpreterStream {
  InterpreterTensor tensor;
  uint32_t num_commands;
  uint32_t commands_offset;
  uint32_t commands_words;
};

struct InterpreterArgs {
  uint32_t num_streams;
  uint32_t packet_size_in_pages;
  uint32_t semaphore_id_mask;
  uint32_t forward_connection_offset;   // 0 = none
  uint32_t backward_connection_offset;  // 0 = none
  InterpreterStream streams[interpreter::kMaxStreams];
};

// A fault to report: `code` 0 means none; `word` is the runtime-arg index at fault.
struct ArgsFault {
  uint32_t code;
  uint32_t word;
  constexpr bool ok() const { return code == 0; }
};

constexpr ArgsFault args_ok() { return ArgsFault{0, 0}; }
constexpr ArgsFault bad_args(uint32_t word) { return ArgsFault{api::fault_code(api::KernelFaultCode::BAD_ARGS), word}; }

// [offset, offset + n) lies inside the args.
constexpr bool arg_range_fits(uint32_t num_words, uint32_t offset, uint32_t n) {
  return offset <= num_words && num_words - offset >= n;
}

// k pieces of the stream's page size, the last `last` bytes long when not 0 (only for k > 1,
// and no longer than the others), fit in one buffer page of `buffer_page_bytes`.
constexpr bool pieces_fit(uint32_t pieces, uint32_t last, uint32_t page_size, uint32_t buffer_page_bytes) {
  if (pieces == 0 || (last != 0 && (pieces == 1 || last > page_size))) {
    return false;
  }
  const uint64_t last_bytes = last == 0 ? page_size : last;
  return uint64_t{pieces - 1} * page_size + last_bytes <= buffer_page_bytes;
}

constexpr ArgsFault parse_addrgen(const uint32_t* words, uint32_t num_words, uint32_t offset, uint32_t tensor_address,
                                  uint32_t page_size, InterpreterTensor& t) {
  namespace ia = interpreter;
  if (!arg_range_fits(num_words, offset, ia::kAddrGenInterleavedWords)) {
    return bad_args(offset);
  }
  const uint32_t layout = words[offset + ia::kAddrGenLayout];
  const uint32_t buffer_type = words[offset + ia::kAddrGenBufferType];
  if (buffer_type > static_cast<uint32_t>(api::BufferType::L1)) {
    return bad_args(offset + ia::kAddrGenBufferType);
  }
  t.buffer_type = static_cast<api::BufferType>(buffer_type);
  if (layout == static_cast<uint32_t>(api::TensorMemoryLayout::INTERLEAVED)) {
    const uint32_t banks = words[offset + ia::kAddrGenInterleavedNumBanks];
    const uint32_t aligned = words[offset + ia::kAddrGenInterleavedAlignedPageSize];
    const uint32_t pieces = words[offset + ia::kAddrGenInterleavedPiecesPerPage];
    const uint32_t last = words[offset + ia::kAddrGenInterleavedLastPieceBytes];
    if (banks == 0) {
      return bad_args(offset + ia::kAddrGenInterleavedNumBanks);
    }
    if (aligned < page_size) {
      return bad_args(offset + ia::kAddrGenInterleavedAlignedPageSize);
    }
    if (!pieces_fit(pieces, last, page_size, aligned)) {
      return bad_args(offset + (pieces_fit(pieces, 0, page_size, aligned) ? ia::kAddrGenInterleavedLastPieceBytes
                                                                          : ia::kAddrGenInterleavedPiecesPerPage));
    }
    t.addrgen.layout = api::TensorMemoryLayout::INTERLEAVED;
    t.addrgen.interleaved = api::InterleavedAddrGenParams{tensor_address, banks, aligned, pieces, page_size, last};
    t.addrgen.sharded = api::ShardedAddrGenParams{};
    t.core_table_offset = 0;
    return args_ok();
  }
  if (layout != static_cast<uint32_t>(api::TensorMemoryLayout::HEIGHT_SHARDED) &&
      layout != static_cast<uint32_t>(api::TensorMemoryLayout::WIDTH_SHARDED) &&
      layout != static_cast<uint32_t>(api::TensorMemoryLayout::BLOCK_SHARDED)) {
    return bad_args(offset + ia::kAddrGenLayout);
  }
  if (!arg_range_fits(num_words, offset, ia::kAddrGenShardedCoreTable)) {
    return bad_args(offset);
  }
  const uint32_t contiguity = words[offset + ia::kAddrGenShardedContiguity];
  if (contiguity > static_cast<uint32_t>(api::ShardingContiguityMode::NO_SHARD_PADDING)) {
    return bad_args(offset + ia::kAddrGenShardedContiguity);
  }
  api::ShardedAddrGenParams s{static_cast<api::TensorMemoryLayout>(layout),
                              words[offset + ia::kAddrGenShardedNumCores],
                              words[offset + ia::kAddrGenShardedPageStride],
                              words[offset + ia::kAddrGenShardedPagesPerTensorRow],
                              static_cast<api::ShardingContiguityMode>(contiguity),
                              words[offset + ia::kAddrGenShardedPagesPerShardWidth],
                              words[offset + ia::kAddrGenShardedRowsPerShardHeight],
                              tensor_address};
  if (!api::sharded_params_are_valid(s)) {
    return bad_args(offset);
  }
  if (s.page_size_jump_bytes < page_size) {
    return bad_args(offset + ia::kAddrGenShardedPageStride);
  }
  const uint32_t pieces = words[offset + ia::kAddrGenShardedPiecesPerPage];
  const uint32_t last = words[offset + ia::kAddrGenShardedLastPieceBytes];
  if (!pieces_fit(pieces, last, page_size, s.page_size_jump_bytes)) {
    return bad_args(offset + (pieces_fit(pieces, 0, page_size, s.page_size_jump_bytes)
                                  ? ia::kAddrGenShardedLastPieceBytes
                                  : ia::kAddrGenShardedPiecesPerPage));
  }
  s.pieces_per_page = pieces;
  s.piece_bytes = page_size;
  s.last_piece_bytes = last;
  if (!arg_range_fits(num_words, offset, ia::sharded_addrgen_words(s.number_of_cores))) {
    return bad_args(offset + ia::kAddrGenShardedNumCores);
  }
  t.addrgen.layout = s.shard_type;
  t.addrgen.interleaved = api::InterleavedAddrGenParams{};
  t.addrgen.sharded = s;
  t.core_table_offset = offset + ia::kAddrGenShardedCoreTable;
  return args_ok();
}

constexpr ArgsFault parse_connection_offset(const uint32_t* words, uint32_t num_words, uint32_t at, uint32_t& out) {
  out = words[at];
  if (out == 0) {
    return args_ok();
  }
  if (!arg_range_fits(num_words, out, api::kFabricConnectionArgWords)) {
    return bad_args(at);
  }
  if (!api::fabric_connection_config_is_valid(api::read_fabric_connection_config(words + out))) {
    return bad_args(out);
  }
  return args_ok();
}

constexpr ArgsFault parse_interpreter_args(uint32_t num_streams, const uint32_t* words, uint32_t num_words,
                                           InterpreterArgs& out) {
  namespace ia = interpreter;
  out = InterpreterArgs{};
  if (num_streams == 0 || num_streams > ia::kMaxStreams) {
    return ArgsFault{api::fault_code(api::KernelFaultCode::BAD_ARGS), ia::kCtNumStreams};
  }
  if (num_words < ia::header_words(num_streams)) {
    return bad_args(num_words);
  }
  out.num_streams = num_streams;
  out.packet_size_in_pages = words[ia::kRtPacketSizeInPages];
  if (out.packet_size_in_pages == 0) {
    return bad_args(ia::kRtPacketSizeInPages);
  }
  out.semaphore_id_mask = words[ia::kRtSemaphoreIdMask];
  ArgsFault f = parse_connection_offset(words, num_words, ia::kRtForwardConnectionOffset, out.forward_connection_offset);
  if (!f.ok()) {
    return f;
  }
  f = parse_connection_offset(words, num_words, ia::kRtBackwardConnectionOffset, out.backward_connection_offset);
  if (!f.ok()) {
    return f;
  }
  for (uint32_t s = 0; s < num_streams; ++s) {
    const uint32_t b = ia::stream_block(s);
    InterpreterStream& st = out.streams[s];
    st.num_commands = words[b + ia::kStreamNumCommands];
    st.commands_offset = words[b + ia::kStreamCommandsOffset];
    st.commands_words = words[b + ia::kStreamCommandsWords];
    if (!arg_range_fits(num_words, st.commands_offset, st.commands_words)) {
      return bad_args(b + ia::kStreamCommandsOffset);
    }
    const uint32_t addrgen_offset = words[b + ia::kStreamAddrGenOffset];
    st.tensor.present = addrgen_offset != 0;
    st.tensor.address = words[b + ia::kStreamTensorAddress];
    st.tensor.page_size_bytes = words[b + ia::kStreamTensorPageSize];
    if (st.tensor.present) {
      if (st.tensor.page_size_bytes == 0) {
        return bad_args(b + ia::kStreamTensorPageSize);
      }
      f = parse_addrgen(words, num_words, addrgen_offset, st.tensor.address, st.tensor.page_size_bytes, st.tensor);
      if (!f.ok()) {
        return f;
      }
    }
  }
  return args_ok();
}

}  // namespace cclmesh::kernels
