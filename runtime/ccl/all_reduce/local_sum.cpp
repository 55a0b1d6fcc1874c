#include "runtime/ccl/all_reduce/local_sum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/reduction_chunks.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_reduce {
namespace {

constexpr std::uint32_t kAccCbId = 0;      // the first copy, or the running sum read back (reduce in0)
constexpr std::uint32_t kNextCbId = 1;     // the next chip's copy (reduce in1)
constexpr std::uint32_t kReducedCbId = 2;  // reduce out: the sums

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// The tensor's pages and how the local sum cuts them.
struct Cut {
  std::uint32_t page = 0;
  std::uint32_t pages = 0;
  std::uint32_t chunk = 0;   // pages per synchronised chunk
  std::uint32_t chunks = 0;
  std::uint32_t packets = 0;  // CB packets of the whole tensor

  // Run `c` of the chunks (its first page and count).
  std::uint32_t first(std::uint32_t c) const { return c * chunk; }
  std::uint32_t count(std::uint32_t c) const { return std::min(chunk, pages - first(c)); }
};

Cut cut_of(const Params& p, std::uint32_t packet) {
  const FabricPages moved = moved_pages(p);
  Cut cut;
  cut.page = moved.page_bytes;
  cut.pages = moved.count;
  cut.chunk = p.chunk_packets.value_or(kDefaultReductionChunkPackets) * packet;
  cut.chunks = ceil_div(cut.pages, cut.chunk);
  cut.packets = ceil_div(cut.pages, packet);
  return cut;
}

void add_kernels_and_cbs(Program& program, const Params& p, const ChipBuffers& buffers, CoreCoord core,
                         std::uint32_t packet, const std::vector<cmd::Command>& s0, const std::vector<cmd::Command>& s1,
                         const kargs::ReduceSpec& reduce, std::uint32_t acc_pages, std::uint32_t reduced_pages) {
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kPacketHeaderCbId;
  spec.packet_size_in_pages = packet;
  const FabricPages moved = moved_pages(p);
  spec.streams = {kargs::InterpreterStreamSpec{in_fabric_pages(buffers.interpreter_args(p.intermediate_buffer), moved),
                                               cmd::encode_stream(s0), static_cast<std::uint32_t>(s0.size())},
                  kargs::InterpreterStreamSpec{in_fabric_pages(buffers.interpreter_args(p.output_buffer), moved),
                                               cmd::encode_stream(s1), static_cast<std::uint32_t>(s1.size())}};
  program.kernels.push_back(interpreter_kernel(core, spec));
  program.kernels.push_back(reduce_kernel(core, reduce));
  const std::uint32_t page = moved.page_bytes;
  program.circular_buffers.push_back(packet_header_cb(core));
  program.circular_buffers.push_back(CircularBufferSpec{kAccCbId, {CoreRange{core, core}}, acc_pages, page});
  program.circular_buffers.push_back(CircularBufferSpec{kNextCbId, {CoreRange{core, core}}, 3 * packet, page});
  program.circular_buffers.push_back(CircularBufferSpec{kReducedCbId, {CoreRange{core, core}}, reduced_pages, page});
}

kargs::ReduceSpec reduce_spec(const Params& p, std::uint32_t num_blocks, std::uint32_t packet, std::uint32_t passes) {
  kargs::ReduceSpec reduce;
  reduce.in0_cb_id = kAccCbId;
  reduce.in1_cb_id = kNextCbId;
  reduce.out_cb_id = kReducedCbId;
  reduce.data_format = reduce_data_format(p.tensor.dtype);
  reduce.num_blocks = num_blocks;
  reduce.pages_per_block = packet;
  reduce.passes = passes;
  return reduce;
}

}  // namespace

FabricPages moved_pages(const Params& p) {
  // Only ROW_MAJOR rows are cut, as reduce cuts them: a bfp8_b tile's shared exponents cannot be,
  // so a TILE page above the payload stays whole and packet_size_in_pages refuses it.
  if (p.tensor.layout != Layout::RowMajor) {
    return FabricPages{page_size_bytes(p.tensor), 1, static_cast<std::uint32_t>(num_pages(p.tensor))};
  }
  return fabric_pages(page_size_bytes(p.tensor), num_pages(p.tensor), p.fabric.max_payload_bytes,
                      RowPieceChoice::Fewest, "all_reduce");
}

std::uint64_t local_sums_bytes(const Params& p, std::uint32_t packet) {
  // Not through cut_of(): all_reduce's Auto asks before validate() has checked chunk_packets.
  const FabricPages moved = moved_pages(p);
  const std::uint64_t packets = (std::uint64_t{moved.count} + packet - 1) / packet;
  return packets * packet * moved.page_bytes;
}

bool sums_fit_in_l1(const Params& p, std::uint32_t packet) { return local_sums_bytes(p, packet) <= kMaxReducedCbBytes; }

void add_local_sum(Program& program, const Params& p, const topo::Topology& topology, ChipId chip, CoreCoord core,
                   std::uint32_t n, std::uint32_t packet, std::optional<cmd::GlobalSemaphoreAddress> ready) {
  if (!sums_fit_in_l1(p, packet)) {
    throw CclParamsError(fmt::format(
        "all_reduce: the local sum keeps the whole tensor's running sums in L1: {} B, above {} B; expected a smaller "
        "tensor, or the rs-ag or composite algorithm",
        local_sums_bytes(p, packet), kMaxReducedCbBytes));
  }
  CCLMESH_CHECK(n >= 2, "all_reduce local sum: a group has at least 2 copies");
  const ChipBuffers buffers(topology, chip);
  const Cut cut = cut_of(p, packet);
  const auto copy = [&](std::uint32_t part, std::uint32_t first, std::uint32_t count) {
    return flat_run(n * cut.pages, part * cut.pages + first, count);
  };
  std::vector<cmd::Command> s0;
  if (ready) {
    s0.push_back(cmd::local_semaphore_wait(*ready, n));
    s0.push_back(cmd::local_core_semaphore_set(*ready, 0));
  }
  // Pass 1 pairs copy 0 with copy 1 block by block; the acc CB holds a chunk of copy 0 so the
  // stream can read it whole before the matching chunk of copy 1.
  for (std::uint32_t c = 0; c < cut.chunks; ++c) {
    s0.push_back(cmd::read_tensor_slice_to_cb(copy(0, cut.first(c), cut.count(c)), kAccCbId));
    s0.push_back(cmd::read_tensor_slice_to_cb(copy(1, cut.first(c), cut.count(c)), kNextCbId));
  }
  for (std::uint32_t k = 2; k < n; ++k) s0.push_back(cmd::read_tensor_slice_to_cb(copy(k, 0, cut.pages), kNextCbId));
  const std::vector<cmd::Command> s1{
      cmd::local_write_cb_to_tensor_slice(flat_run(cut.pages, 0, cut.pages), kReducedCbId)};
  const std::uint32_t acc_pages = std::min(cut.chunk, cut.packets * packet);
  add_kernels_and_cbs(program, p, buffers, core, packet, s0, s1, reduce_spec(p, cut.packets, packet, n - 1), acc_pages,
                      cut.packets * packet);
}

void add_local_sum_pass(Program& program, const Params& p, const topo::Topology& topology, ChipId chip,
                        CoreCoord core, std::uint32_t n, std::uint32_t packet, std::uint32_t pass) {
  CCLMESH_CHECK(pass >= 1 && pass < n, "all_reduce local sum: passes run 1 .. N - 1");
  const ChipBuffers buffers(topology, chip);
  const Cut cut = cut_of(p, packet);
  std::vector<cmd::Command> s0;
  std::vector<cmd::Command> s1;
  for (std::uint32_t c = 0; c < cut.chunks; ++c) {
    const auto copy = [&](std::uint32_t part) {
      return flat_run(n * cut.pages, part * cut.pages + cut.first(c), cut.count(c));
    };
    const api::TensorSlice out = flat_run(cut.pages, cut.first(c), cut.count(c));
    if (pass == 1) s0.push_back(cmd::read_tensor_slice_to_cb(copy(0), kAccCbId));
    s0.push_back(cmd::read_tensor_slice_to_cb(copy(pass), kNextCbId));
    // The previous pass's program has ended, and with it its write barrier: this read is behind
    // acked writes. Within this pass a chunk is read before its sums are written.
    if (pass > 1) s1.push_back(cmd::read_tensor_slice_to_cb(out, kAccCbId));
    s1.push_back(cmd::local_write_cb_to_tensor_slice(out, kReducedCbId));
  }
  add_kernels_and_cbs(program, p, buffers, core, packet, s0, s1, reduce_spec(p, cut.packets, packet, 1), cut.chunk,
                      cut.chunk);
}

}  // namespace cclmesh::runtime::ccl::all_reduce
