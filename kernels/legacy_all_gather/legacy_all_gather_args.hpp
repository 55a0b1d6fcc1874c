#pragma once
// Arguments of the legacy-EDM all-gather workers (REFERENCE 5, 7.4): the sender and the
// receiver of one direction on one worker core, parsed and validated here so the host builder
// (kargs::build_legacy_all_gather_worker_args) checks exactly what the kernels accept.
//
// CT:  [0] scratch CB id: two messages of L1 (only its base address is used)
// RT:  [0] page size in bytes (what a tensor page holds)
//      [1] page stride in bytes inside a message (the page size rounded up to 32 B)
//      [2] pages per message (one EDM buffer)
//      [3] relay semaphore id: per-program semaphore on this core; the receiver +1s it after
//          each message it wrote to the output, the sender waits on it before re-reading
//      [4] offset of the EDM channel block (api::kLegacyEdmChannelArgWords words)
//      [5] EDM termination semaphore id, or kNoTermination (MESSAGE_COUNT_REACHED EDMs)
//      [6] output tensor address, [7] offset of its address-generator block
//      [8] input tensor address,  [9] offset of its address-generator block (0 = none)
//      [10] number of slice records, [11] offset of the first record
//      [12] sender only: 1 = also write my own slice to the local output
//   Slice records (kSliceRecordWords words each, an api::CclCommandTensor: tensor shape,
//   slice shape, slice offset, worker start offset, pages):
//      sender:   [0] my input (read), [1] my slice of the output (local copy), [2..] the
//                slices I relay, in the order they arrive (re-read from the output)
//      receiver: the slices that arrive, in order (written to the output)
// Address-generator blocks: the interpreter's layout (kernel_args.hpp, namespace interpreter).
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/api/ccl_command.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/api/tensor_slice.hpp"
#include "kernels/interpreter/interpreter_args.hpp"

namespace cclmesh::kernels {

namespace legacy_all_gather {
constexpr uint32_t kCtScratchCbId = 0;
constexpr uint32_t kNumCompileTimeArgs = 1;

constexpr uint32_t kRtPageSizeBytes = 0;
constexpr uint32_t kRtPageStrideBytes = 1;
constexpr uint32_t kRtPagesPerMessage = 2;
constexpr uint32_t kRtRelaySemaphoreId = 3;
constexpr uint32_t kRtEdmChannelOffset = 4;
constexpr uint32_t kRtEdmTerminationSemaphoreId = 5;
constexpr uint32_t kRtOutputAddress = 6;
constexpr uint32_t kRtOutputAddrGenOffset = 7;
constexpr uint32_t kRtInputAddress = 8;
constexpr uint32_t kRtInputAddrGenOffset = 9;
constexpr uint32_t kRtNumSlices = 10;
constexpr uint32_t kRtSlicesOffset = 11;
constexpr uint32_t kRtLocalCopy = 12;
constexpr uint32_t kHeaderWords = 13;

constexpr uint32_t kSliceRecordWords = 17;  // four Shape4Ds and the page count
constexpr uint32_t kNoTermination = 0xFFFFFFFFu;
constexpr uint32_t kSenderFixedSlices = 2;  // input, own output slice
constexpr uint32_t kMaxSlices = 64;
constexpr uint32_t kPageAlignmentBytes = 32;
}  // namespace legacy_all_gather

constexpr void write_slice_record(const api::CclCommandTensor& t, uint32_t* w) {
  const api::Shape4D* shapes[4] = {&t.tensor_shape, &t.tensor_slice_shape, &t.tensor_slice_offset,
                                   &t.worker_start_offset_in_slice};
  for (uint32_t i = 0; i < 4; ++i) {
    w[4 * i + 0] = shapes[i]->w;
    w[4 * i + 1] = shapes[i]->z;
    w[4 * i + 2] = shapes[i]->y;
    w[4 * i + 3] = shapes[i]->x;
  }
  w[16] = t.worker_pages_per_slice;
}

constexpr api::CclCommandTensor read_slice_record(const uint32_t* w) {
  return api::CclCommandTensor{api::Shape4D{w[0], w[1], w[2], w[3]}, api::Shape4D{w[4], w[5], w[6], w[7]},
                               api::Shape4D{w[8], w[9], w[10], w[11]}, api::Shape4D{w[12], w[13], w[14], w[15]},
                               w[16]};
}

struct LegacyAllGatherArgs {
  uint32_t page_size_bytes;
  uint32_t page_stride_bytes;
  uint32_t pages_per_message;
  uint32_t relay_semaphore_id;
  uint32_t edm_channel_offset;
  uint32_t edm_termination_semaphore_id;
  InterpreterTensor output;
  InterpreterTensor input;  // present only for a sender
  uint32_t num_slices;
  uint32_t slices_offset;
  bool local_copy;
};

// Checks the words a worker of `is_sender` role gets. A fault names the offending word.
constexpr ArgsFault parse_legacy_all_gather_args(bool is_sender, const uint32_t* words, uint32_t num_words,
                                                 LegacyAllGatherArgs& out) {
  namespace la = legacy_all_gather;
  out = LegacyAllGatherArgs{};
  if (num_words < la::kHeaderWords) {
    return bad_args(num_words);
  }
  out.page_size_bytes = words[la::kRtPageSizeBytes];
  out.page_stride_bytes = words[la::kRtPageStrideBytes];
  out.pages_per_message = words[la::kRtPagesPerMessage];
  if (out.page_size_bytes == 0) {
    return bad_args(la::kRtPageSizeBytes);
  }
  if (out.page_stride_bytes < out.page_size_bytes || out.page_stride_bytes % la::kPageAlignmentBytes != 0) {
    return bad_args(la::kRtPageStrideBytes);
  }
  if (out.pages_per_message == 0) {
    return bad_args(la::kRtPagesPerMessage);
  }
  out.relay_semaphore_id = words[la::kRtRelaySemaphoreId];
  out.edm_channel_offset = words[la::kRtEdmChannelOffset];
  if (out.edm_channel_offset < la::kHeaderWords ||
      !arg_range_fits(num_words, out.edm_channel_offset, api::kLegacyEdmChannelArgWords)) {
    return bad_args(la::kRtEdmChannelOffset);
  }
  const api::LegacyEdmChannelConfig edm = api::read_legacy_edm_channel_config(words + out.edm_channel_offset);
  if (edm.num_buffers == 0 || edm.buffer_stride_bytes < out.pages_per_message * out.page_stride_bytes) {
    return bad_args(out.edm_channel_offset + api::legacy_edm_channel_arg::kBufferStrideBytes);
  }
  out.edm_termination_semaphore_id = words[la::kRtEdmTerminationSemaphoreId];
  out.output.present = true;
  out.output.address = words[la::kRtOutputAddress];
  out.output.page_size_bytes = out.page_size_bytes;
  ArgsFault f = parse_addrgen(words, num_words, words[la::kRtOutputAddrGenOffset], out.output.address,
                              out.page_size_bytes, out.output);
  if (!f.ok()) {
    return f;
  }
  const uint32_t input_offset = words[la::kRtInputAddrGenOffset];
  out.input.present = input_offset != 0;
  if (is_sender != out.input.present) {
    return bad_args(la::kRtInputAddrGenOffset);
  }
  if (out.input.present) {
    out.input.address = words[la::kRtInputAddress];
    out.input.page_size_bytes = out.page_size_bytes;
    f = parse_addrgen(words, num_words, input_offset, out.input.address, out.page_size_bytes, out.input);
    if (!f.ok()) {
      return f;
    }
  }
  out.num_slices = words[la::kRtNumSlices];
  out.slices_offset = words[la::kRtSlicesOffset];
  if (out.num_slices > la::kMaxSlices || (is_sender && out.num_slices < la::kSenderFixedSlices)) {
    return bad_args(la::kRtNumSlices);
  }
  if (!arg_range_fits(num_words, out.slices_offset, out.num_slices * la::kSliceRecordWords)) {
    return bad_args(la::kRtSlicesOffset);
  }
  for (uint32_t s = 0; s < out.num_slices; ++s) {
    const uint32_t at = out.slices_offset + s * la::kSliceRecordWords;
    if (api::check_command_tensor(read_slice_record(words + at)) != api::SliceCheck::OK) {
      return bad_args(at);
    }
  }
  out.local_copy = words[la::kRtLocalCopy] != 0;
  return args_ok();
}

// Messages a slice of `pages` pages takes.
constexpr uint32_t legacy_messages_per_slice(uint32_t pages, uint32_t pages_per_message) {
  return (pages + pages_per_message - 1) / pages_per_message;
}

}  // namespace cclmesh::kernels
