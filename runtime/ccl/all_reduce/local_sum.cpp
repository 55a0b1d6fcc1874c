#include "runtime/ccl/all_reduce/local_sum.hpp"

#include <algorithm>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_reduce {
namespace {

constexpr std::uint32_t kAccCbId = 0;      // the running sum (reduce in0)
constexpr std::uint32_t kNextCbId = 1;     // the next chip's copy (reduce in1)
constexpr std::uint32_t kReducedCbId = 2;  // reduce out

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

}  // namespace

void add_local_sum(Program& program, const Params& p, const topo::Topology& topology, ChipId chip, CoreCoord core,
                   std::uint32_t n, std::uint32_t packet, std::optional<cmd::GlobalSemaphoreAddress> ready) {
  const ChipBuffers buffers(topology, chip);
  const std::uint32_t page = page_size_bytes(p.tensor);
  const auto pages = static_cast<std::uint32_t>(num_pages(p.tensor));
  const std::uint32_t chunk = p.chunk_packets * packet;
  const std::uint32_t chunks = ceil_div(pages, chunk);

  std::vector<cmd::Command> s0;
  if (ready) {
    s0.push_back(cmd::local_semaphore_wait(*ready, n));
    s0.push_back(cmd::local_core_semaphore_set(*ready, 0));
  }
  std::vector<cmd::Command> s1;
  for (std::uint32_t k = 1; k < n; ++k) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const std::uint32_t first = c * chunk;
      const std::uint32_t count = std::min(chunk, pages - first);
      const auto copy = [&](std::uint32_t part) { return flat_run(n * pages, part * pages + first, count); };
      if (k == 1) s0.push_back(cmd::read_tensor_slice_to_cb(copy(0), kAccCbId));
      s0.push_back(cmd::read_tensor_slice_to_cb(copy(k), kNextCbId));
      if (k > 1) s1.push_back(cmd::read_tensor_slice_to_cb(flat_run(pages, first, count), kAccCbId));
      s1.push_back(cmd::local_write_cb_to_tensor_slice(flat_run(pages, first, count), kReducedCbId));
    }
  }
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kPacketHeaderCbId;
  spec.packet_size_in_pages = packet;
  spec.streams = {kargs::InterpreterStreamSpec{buffers.interpreter_args(p.intermediate_buffer), cmd::encode_stream(s0),
                                               static_cast<std::uint32_t>(s0.size())},
                  kargs::InterpreterStreamSpec{buffers.interpreter_args(p.output_buffer), cmd::encode_stream(s1),
                                               static_cast<std::uint32_t>(s1.size())}};
  program.kernels.push_back(interpreter_kernel(core, spec));
  kargs::ReduceSpec reduce;
  reduce.in0_cb_id = kAccCbId;
  reduce.in1_cb_id = kNextCbId;
  reduce.out_cb_id = kReducedCbId;
  reduce.data_format = reduce_data_format(p.tensor.dtype);
  reduce.num_blocks = (n - 1) * ceil_div(pages, packet);
  reduce.pages_per_block = packet;
  program.kernels.push_back(reduce_kernel(core, reduce));
  program.circular_buffers.push_back(packet_header_cb(core));
  program.circular_buffers.push_back(CircularBufferSpec{kAccCbId, {CoreRange{core, core}}, chunk, page});
  program.circular_buffers.push_back(CircularBufferSpec{kNextCbId, {CoreRange{core, core}}, 3 * packet, page});
  program.circular_buffers.push_back(CircularBufferSpec{kReducedCbId, {CoreRange{core, core}}, chunk, page});
}

}  // namespace cclmesh::runtime::ccl::all_reduce
