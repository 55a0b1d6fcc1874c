#pragma once
// Arguments of the legacy-EDM reduce-scatter workers (REFERENCE 5, 7.5 "legacy ring"): the
// receiver (EDM receiver channel + this chip's operand -> two CBs for the reduce kernel) and
// the sender (raw input or the reduce kernel's sums -> EDM sender channel, or the sums -> this
// chip's output) of one direction on one worker core. Parsed and validated here so the host
// builder (kargs::build_legacy_reduce_scatter_worker_args) checks exactly what the kernels take.
//
// Every step moves one slice run of the same page count, cut into messages of
// `pages_per_message` pages; the kernels walk message index outermost and steps innermost
// (chunk-lockstep), so a chain never waits on a later message of another chain (deadlock-free
// with any EDM / CB depth of at least one message).
//
// CT:  [0] partial CB (receiver -> reduce in0), [1] local CB (receiver -> reduce in1),
//      [2] reduced CB (reduce out -> sender), [3] sender's raw scratch CB (two messages).
//      Every CB page is one message (pages_per_message x page stride bytes).
// RT:  [0] page size in bytes, [1] page stride in a message (page size rounded up to 32 B),
//      [2] pages per message
//      [3] offset of the EDM channel block (api::kLegacyEdmChannelArgWords words), or 0 for a
//          sender with only kWriteReduced steps (a line's end has no EDM onward)
//      [4] EDM termination semaphore id, or kNoTermination (MESSAGE_COUNT_REACHED EDMs)
//      [5] output tensor address, [6] offset of its address-generator block
//      [7] input tensor address,  [8] offset of its address-generator block
//      [9] number of step records, [10] offset of the first record
//      [11] ready semaphore id or kNoReadySemaphore. Receiver: a per-program semaphore on this
//           core that counts the messages of this chip's output the other direction's sender
//           has written (kReduceWithOutput waits for it). Sender: that semaphore on the core at
//           NoC0 ([12], [13]), +1 after each kWriteReduced message has landed.
//      [12] [13] sender only: the ready semaphore's core (NoC0 x, y)
//   Step records (kStepRecordWords words: the kind, then an api::CclCommandTensor):
//      sender:   kSendRaw (input run -> EDM), kSendReduced (next sums -> EDM; the record's
//                page count only), kWriteReduced (next sums -> output run)
//      receiver: kReduceWithInput (EDM -> partial CB, input run -> local CB),
//                kReduceWithOutput (the same with this chip's output run as the operand)
// Address-generator blocks: the interpreter's layout (kernel_args.hpp, namespace interpreter).
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/api/ccl_command.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/api/tensor_slice.hpp"
#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"

namespace cclmesh::kernels {

namespace legacy_reduce_scatter {
constexpr uint32_t kCtPartialCbId = 0;
constexpr uint32_t kCtLocalCbId = 1;
constexpr uint32_t kCtReducedCbId = 2;
constexpr uint32_t kCtScratchCbId = 3;
constexpr uint32_t kNumCompileTimeArgs = 4;

constexpr uint32_t kRtPageSizeBytes = 0;
constexpr uint32_t kRtPageStrideBytes = 1;
constexpr uint32_t kRtPagesPerMessage = 2;
constexpr uint32_t kRtEdmChannelOffset = 3;
constexpr uint32_t kRtEdmTerminationSemaphoreId = 4;
constexpr uint32_t kRtOutputAddress = 5;
constexpr uint32_t kRtOutputAddrGenOffset = 6;
constexpr uint32_t kRtInputAddress = 7;
constexpr uint32_t kRtInputAddrGenOffset = 8;
constexpr uint32_t kRtNumSteps = 9;
constexpr uint32_t kRtStepsOffset = 10;
constexpr uint32_t kRtReadySemaphoreId = 11;
constexpr uint32_t kRtReadyNocX = 12;
constexpr uint32_t kRtReadyNocY = 13;
constexpr uint32_t kHeaderWords = 14;

enum StepKind : uint32_t {
  kSendRaw = 0,
  kSendReduced = 1,
  kWriteReduced = 2,
  kReduceWithInput = 3,
  kReduceWithOutput = 4,
};
constexpr uint32_t kStepRecordWords = 1 + legacy_all_gather::kSliceRecordWords;
constexpr uint32_t kMaxSteps = 64;
constexpr uint32_t kNoReadySemaphore = 0xFFFFFFFFu;
constexpr uint32_t kNoTermination = legacy_all_gather::kNoTermination;
}  // namespace legacy_reduce_scatter

struct LegacyReduceScatterArgs {
  uint32_t page_size_bytes;
  uint32_t page_stride_bytes;
  uint32_t pages_per_message;
  uint32_t edm_channel_offset;
  uint32_t edm_termination_semaphore_id;
  InterpreterTensor output;
  InterpreterTensor input;
  uint32_t num_steps;
  uint32_t steps_offset;
  uint32_t ready_semaphore_id;
  uint32_t ready_noc_x;
  uint32_t ready_noc_y;
  uint32_t run_pages;  // every step's page count
};

constexpr uint32_t legacy_rs_step_kind(const uint32_t* words, const LegacyReduceScatterArgs& a, uint32_t step) {
  return words[a.steps_offset + step * legacy_reduce_scatter::kStepRecordWords];
}
constexpr api::CclCommandTensor legacy_rs_step_slice(const uint32_t* words, const LegacyReduceScatterArgs& a,
                                                     uint32_t step) {
  return read_slice_record(words + a.steps_offset + step * legacy_reduce_scatter::kStepRecordWords + 1);
}

// Message `message` of a step's run: `pages_per_message` pages (fewer for the last one) from
// the run's start, as a run of its own (the walker takes a flat start offset in the slice).
constexpr api::CclCommandTensor legacy_rs_message_slice(const api::CclCommandTensor& run, uint32_t message,
                                                        uint32_t pages_per_message) {
  api::CclCommandTensor m = run;
  const uint32_t first = message * pages_per_message;
  const uint32_t left = run.worker_pages_per_slice - first;
  const uint32_t start = api::flat_index(run.tensor_slice_shape, run.worker_start_offset_in_slice) + first;
  m.worker_start_offset_in_slice = api::Shape4D{0, 0, 0, start};
  m.worker_pages_per_slice = left < pages_per_message ? left : pages_per_message;
  return m;
}

// Walks every message of every step in the order both workers must share, chunk-lockstep:
// message c of every step before message c + 1 of any. Calls visit(c, step kind, the message's
// run) for each; a worker that walked another order would pair its EDM messages with the other
// end's wrong ones.
template <typename Visit>
constexpr void for_each_legacy_rs_message(const uint32_t* words, const LegacyReduceScatterArgs& a, Visit&& visit) {
  const uint32_t messages = legacy_messages_per_slice(a.run_pages, a.pages_per_message);
  for (uint32_t c = 0; c < messages; ++c) {
    for (uint32_t s = 0; s < a.num_steps; ++s) {
      visit(c, legacy_rs_step_kind(words, a, s),
            legacy_rs_message_slice(legacy_rs_step_slice(words, a, s), c, a.pages_per_message));
    }
  }
}

// Checks the words a worker of `is_sender` role gets. A fault names the offending word.
constexpr ArgsFault parse_legacy_reduce_scatter_args(bool is_sender, const uint32_t* words, uint32_t num_words,
                                                     LegacyReduceScatterArgs& out) {
  namespace rs = legacy_reduce_scatter;
  out = LegacyReduceScatterArgs{};
  if (num_words < rs::kHeaderWords) {
    return bad_args(num_words);
  }
  out.page_size_bytes = words[rs::kRtPageSizeBytes];
  out.page_stride_bytes = words[rs::kRtPageStrideBytes];
  out.pages_per_message = words[rs::kRtPagesPerMessage];
  if (out.page_size_bytes == 0) {
    return bad_args(rs::kRtPageSizeBytes);
  }
  if (out.page_stride_bytes < out.page_size_bytes ||
      out.page_stride_bytes % legacy_all_gather::kPageAlignmentBytes != 0) {
    return bad_args(rs::kRtPageStrideBytes);
  }
  if (out.pages_per_message == 0) {
    return bad_args(rs::kRtPagesPerMessage);
  }
  out.edm_channel_offset = words[rs::kRtEdmChannelOffset];
  if (out.edm_channel_offset != 0) {
    if (out.edm_channel_offset < rs::kHeaderWords ||
        !arg_range_fits(num_words, out.edm_channel_offset, api::kLegacyEdmChannelArgWords)) {
      return bad_args(rs::kRtEdmChannelOffset);
    }
    const api::LegacyEdmChannelConfig edm = api::read_legacy_edm_channel_config(words + out.edm_channel_offset);
    if (edm.num_buffers == 0 || edm.buffer_stride_bytes < out.pages_per_message * out.page_stride_bytes) {
      return bad_args(out.edm_channel_offset + api::legacy_edm_channel_arg::kBufferStrideBytes);
    }
  }
  out.edm_termination_semaphore_id = words[rs::kRtEdmTerminationSemaphoreId];
  InterpreterTensor* tensors[2] = {&out.output, &out.input};
  const uint32_t address_word[2] = {rs::kRtOutputAddress, rs::kRtInputAddress};
  const uint32_t addrgen_word[2] = {rs::kRtOutputAddrGenOffset, rs::kRtInputAddrGenOffset};
  for (uint32_t t = 0; t < 2; ++t) {
    tensors[t]->present = true;
    tensors[t]->address = words[address_word[t]];
    tensors[t]->page_size_bytes = out.page_size_bytes;
    if (words[addrgen_word[t]] == 0) {
      return bad_args(addrgen_word[t]);
    }
    const ArgsFault f = parse_addrgen(words, num_words, words[addrgen_word[t]], tensors[t]->address,
                                      out.page_size_bytes, *tensors[t]);
    if (!f.ok()) {
      return f;
    }
  }
  out.num_steps = words[rs::kRtNumSteps];
  out.steps_offset = words[rs::kRtStepsOffset];
  if (out.num_steps == 0 || out.num_steps > rs::kMaxSteps) {
    return bad_args(rs::kRtNumSteps);
  }
  if (!arg_range_fits(num_words, out.steps_offset, out.num_steps * rs::kStepRecordWords)) {
    return bad_args(rs::kRtStepsOffset);
  }
  out.ready_semaphore_id = words[rs::kRtReadySemaphoreId];
  out.ready_noc_x = words[rs::kRtReadyNocX];
  out.ready_noc_y = words[rs::kRtReadyNocY];
  for (uint32_t s = 0; s < out.num_steps; ++s) {
    const uint32_t at = out.steps_offset + s * rs::kStepRecordWords;
    const uint32_t kind = words[at];
    const bool sender_kind = kind == rs::kSendRaw || kind == rs::kSendReduced || kind == rs::kWriteReduced;
    const bool receiver_kind = kind == rs::kReduceWithInput || kind == rs::kReduceWithOutput;
    if (is_sender ? !sender_kind : !receiver_kind) {
      return bad_args(at);
    }
    if (kind != rs::kWriteReduced && out.edm_channel_offset == 0) {
      return bad_args(rs::kRtEdmChannelOffset);
    }
    if (kind == rs::kReduceWithOutput && out.ready_semaphore_id == rs::kNoReadySemaphore) {
      return bad_args(rs::kRtReadySemaphoreId);
    }
    const api::CclCommandTensor slice = read_slice_record(words + at + 1);
    if (api::check_command_tensor(slice) != api::SliceCheck::OK) {
      return bad_args(at + 1);
    }
    if (s == 0) {
      out.run_pages = slice.worker_pages_per_slice;
    } else if (slice.worker_pages_per_slice != out.run_pages) {
      return bad_args(at + 1 + 16);
    }
  }
  return args_ok();
}

}  // namespace cclmesh::kernels
