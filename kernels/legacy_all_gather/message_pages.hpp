#pragma once
// Moving one EDM message's pages between a tensor slice and an L1 message buffer, for the
// legacy all-gather workers. A message holds up to `pages_per_message` pages of one slice, in
// slice order, each at `page_stride` bytes; the tensor side goes through the interpreter's
// address generators (interleaved or sharded, REFERENCE 4.10), one NoC transfer per
// contiguous run.
//
// Device-clean: <cstdint>, the dataflow API and kernels/ headers only.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/tensor_slice.hpp"
#include "kernels/interpreter/command_plan.hpp"
#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/kernel_args.hpp"

namespace cclmesh::kernels {

class MessagePages {
 public:
  MessagePages(const InterpreterTensor& tensor, const uint32_t* arg_words, uint32_t page_stride,
               uint32_t pages_per_message, uint8_t noc)
      : tensor_(tensor),
        arg_words_(arg_words),
        page_stride_(page_stride),
        pages_per_message_(pages_per_message),
        noc_(noc),
        dense_(page_stride_bytes(tensor.addrgen) == tensor.page_size_bytes && page_stride == tensor.page_size_bytes) {}

  // Starts a slice; returns its page count.
  uint32_t begin(const api::CclCommandTensor& slice) {
    walker_ = api::make_slice_walker(slice);
    return slice.worker_pages_per_slice;
  }
  bool done() const { return walker_.done(); }

  // Reads the next message's pages of the slice into `l1_address` (no barrier); returns the
  // page count.
  uint32_t read_next(uint32_t l1_address) { return transfer_next(l1_address, true); }
  // Writes the next message's pages from `l1_address` to the slice (no barrier).
  uint32_t write_next(uint32_t l1_address) { return transfer_next(l1_address, false); }

 private:
  uint32_t transfer_next(uint32_t l1_address, bool read) {
    const uint32_t max_run = dense_ ? pages_per_message_ : 1;
    uint32_t pages = 0;
    while (pages < pages_per_message_ && !walker_.done()) {
      const uint32_t room = pages_per_message_ - pages;
      const PageRun run =
          next_page_run(walker_, tensor_.addrgen, tensor_.page_size_bytes, room < max_run ? room : max_run);
      const uint64_t tensor_addr = page_noc_addr(run);
      const uint32_t local = l1_address + pages * page_stride_;
      const uint32_t bytes = run.bytes;
      if (read) {
        noc_async_read(tensor_addr, local, bytes, noc_);
      } else {
        noc_async_write(local, tensor_addr, bytes, noc_);
      }
      pages += run.num_pages;
    }
    return pages;
  }

  uint64_t page_noc_addr(const PageRun& run) const {
    if (tensor_.addrgen.layout == api::TensorMemoryLayout::INTERLEAVED) {
      return get_bank_noc_addr(tensor_.buffer_type == api::BufferType::DRAM, run.target, run.address, noc_);
    }
    if (run.target >= tensor_.addrgen.sharded.number_of_cores) {
      kernel_fault(api::fault_code(api::KernelFaultCode::PAGE_OUTSIDE_SHARD_GRID), api::kFaultNoCommand, run.target);
    }
    const uint32_t xy = arg_words_[tensor_.core_table_offset + run.target];
    if (tensor_.buffer_type == api::BufferType::DRAM) {
      // DRAM shards: the table holds each shard's bank id (x), not NoC coordinates.
      return get_bank_noc_addr(true, interpreter::core_xy_x(xy), run.address, noc_);
    }
    return get_noc_addr(interpreter::core_xy_x(xy), interpreter::core_xy_y(xy), run.address, noc_);
  }

  InterpreterTensor tensor_;
  const uint32_t* arg_words_;
  uint32_t page_stride_;
  uint32_t pages_per_message_;
  uint8_t noc_;
  bool dense_;
  api::SliceWalker walker_{};
};

}  // namespace cclmesh::kernels
