#include "runtime/ccl/reduce_scatter/one_shot.hpp"

#include <algorithm>
#include <span>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {
namespace {

// The reduce core's CBs (the senders use kDataCbId).
constexpr std::uint32_t kOwnCbId = 0;      // this chip's own slice (reduce in0)
constexpr std::uint32_t kNextCbId = 1;     // the next rank's copy (reduce in1)
constexpr std::uint32_t kSumCbId = 2;      // the running sums of the whole run (reduce out)

// The direction chip `rank` sends to chip `to` (!= rank): the shorter way round; the antipode
// upward from even ranks, downward from odd ones, so the two directions carry the same bytes.
cmd::ChipUnicast one_shot_route(const FabricGroup& g, std::uint32_t rank, std::uint32_t to) {
  const std::uint32_t n = g.size();
  const std::uint32_t ahead = (to + n - rank) % n;
  const bool up = 2 * ahead < n || (2 * ahead == n && rank % 2 == 0);
  return cmd::ChipUnicast{up ? ahead : n - ahead, up == g.up_is_forward};
}

// The ranks whose copies chip `owner` sums, in its fold order after its own slice: nearest
// first, up before down (owner + 1, owner - 1, owner + 2, ...), the antipode (N even) once, last.
std::vector<std::uint32_t> fold_sources(std::uint32_t n, std::uint32_t owner) {
  std::vector<std::uint32_t> sources;
  for (std::uint32_t distance = 1; 2 * distance <= n; ++distance) {
    sources.push_back((owner + distance) % n);
    if (2 * distance < n) sources.push_back((owner + n - distance) % n);
  }
  return sources;
}

// The position of `source`'s copy in `owner`'s fold (0 = the first copy added).
std::uint32_t fold_position(std::uint32_t n, std::uint32_t owner, std::uint32_t source) {
  const std::vector<std::uint32_t> sources = fold_sources(n, owner);
  return static_cast<std::uint32_t>(std::find(sources.begin(), sources.end(), source) - sources.begin());
}

kargs::InterpreterStreamSpec stream_of(const kargs::TensorArgs& args, const std::vector<cmd::Command>& cmds) {
  return kargs::InterpreterStreamSpec{args, cmd::encode_stream(cmds), static_cast<std::uint32_t>(cmds.size())};
}

}  // namespace

Program one_shot_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                         std::uint32_t rank) {
  // Only a line's positions can differ from its ranks (fabric_order); the one-shot runs on rings.
  CCLMESH_CHECK(g.positions_are_ranks(), "reduce_scatter one-shot: a ring group whose positions are not its ranks");
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[rank];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const kargs::TensorArgs in_args = input_args(r, buffers.layout(p.input_buffer), map);
  const kargs::TensorArgs out_args = output_args(r, buffers.layout(p.output_buffer), map);
  const kargs::TensorArgs mid_args = output_args(r, buffers.layout(*p.intermediate_buffer), map);
  const api::Shape4D& out_pages = r.out_pages;
  const api::Shape4D& mid_pages = r.mid_pages;
  const std::vector<api::TensorSlice> in_slices = cmd::compute_page_aligned_slices(n, r.in_pages, p.dim);
  const cmd::GlobalSemaphoreAddress ready{p.barrier_semaphore->address};
  // Run `link` of an output-sized region: copy k of the intermediate, or the output.
  const auto region_run = [&](const api::Shape4D& tensor, std::uint32_t first_w, std::uint32_t link) {
    const api::TensorSlice region{tensor, out_pages, {first_w, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
    return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(region, r.runs)[link];
  };
  const auto in_run = [&](std::uint32_t slice, std::uint32_t link) {
    return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(in_slices[slice], r.runs)[link];
  };

  Program program;
  for (std::uint32_t link = 0; link < r.runs; ++link) {
    const std::uint32_t pages = r.run_pages[link];
    if (pages == 0) continue;
    const CoreCoord reduce_core = r.cores[kOneShotCoresPerLink * link + 2];
    const Noc0Coord reduce_noc = map.tensix_noc0(reduce_core);
    const api::TensorSlice my_copy = region_run(mid_pages, rank * out_pages.w, link);

    // The senders: one per direction, each to the chips its way, nearest first (the order the
    // owners add the copies in).
    for (const bool forward : {true, false}) {
      std::vector<std::pair<std::uint32_t, cmd::ChipUnicast>> destinations;
      for (std::uint32_t d = 0; d < n; ++d) {
        if (d == rank) continue;
        const cmd::ChipUnicast route = one_shot_route(g, rank, d);
        if (route.forward == forward) destinations.emplace_back(d, route);
      }
      if (destinations.empty()) continue;
      std::stable_sort(destinations.begin(), destinations.end(), [](const auto& a, const auto& b) {
        return a.second.distance_in_hops < b.second.distance_in_hops;
      });
      const CoreCoord core = r.cores[kOneShotCoresPerLink * link + (forward ? 0 : 1)];
      std::vector<cmd::Command> reads;
      std::vector<cmd::Command> sends;
      // Entry handshake: this chip's program runs (its reduce core's copy semaphores exist and
      // its previous run has summed its copies), so tell each destination's sender toward this
      // chip; then wait until every destination has said the same.
      for (const auto& [d, route] : destinations) {
        const bool their_direction = one_shot_route(g, d, rank).forward;
        const Noc0Coord their_sender = map.tensix_noc0(r.cores[kOneShotCoresPerLink * link + (their_direction ? 0 : 1)]);
        sends.push_back(cmd::fabric_unicast_semaphore_inc(ready, 1, their_sender.x, their_sender.y, route));
      }
      sends.push_back(cmd::local_semaphore_wait(ready, static_cast<std::uint32_t>(destinations.size())));
      sends.push_back(cmd::local_core_semaphore_set(ready, 0));
      for (const auto& [d, route] : destinations) {
        const cmd::SemaphoreId copy_landed{kOneShotFirstCopySemaphoreId + fold_position(n, d, rank)};
        reads.push_back(cmd::read_tensor_slice_to_cb(in_run(d, link), kDataCbId));
        sends.push_back(cmd::fabric_write_cb_to_tensor_slice(my_copy, kDataCbId, route));
        sends.push_back(cmd::fabric_unicast_semaphore_inc(copy_landed, 1, reduce_noc.x, reduce_noc.y, route));
      }
      kargs::InterpreterSpec writer;
      writer.packet_header_cb_id = kPacketHeaderCbId;
      writer.packet_size_in_pages = r.packet_pages;
      // A per-program semaphore is addressed by id, resolved on the sending core: the copy
      // semaphores exist here too (unused), as every core of the op has the same ids.
      for (std::uint32_t k = 0; k + 1 < n; ++k) {
        writer.semaphore_ids.push_back(kOneShotFirstCopySemaphoreId + k);
        program.semaphores.push_back(tensix_semaphore(core, kOneShotFirstCopySemaphoreId + k));
      }
      connect_to_fabric(program, writer, r.plan, g.port(link), chip, core, forward, !forward);
      add_copy_kernels(program, core, writer, stream_of(in_args, reads), stream_of(mid_args, sends), true);
      program.circular_buffers.push_back(packet_header_cb(core));
      program.circular_buffers.push_back(data_cb(core, r.page_size, p.cb_packets * r.packet_pages));
    }

    // The reduce core: own slice + the N - 1 copies in fold order, the running sums in L1.
    const std::uint32_t packets = ceil_div(pages, r.packet_pages);
    const api::TensorSlice out_run = region_run(out_pages, 0, link);
    std::vector<cmd::Command> copies;
    std::vector<std::uint32_t> copy_semaphores;
    const std::vector<std::uint32_t> sources = fold_sources(n, rank);
    for (std::uint32_t k = 0; k < sources.size(); ++k) {
      const cmd::SemaphoreId copy_landed{kOneShotFirstCopySemaphoreId + k};
      copy_semaphores.push_back(copy_landed.id);
      copies.push_back(cmd::local_semaphore_wait(copy_landed, 1));
      copies.push_back(cmd::read_tensor_slice_to_cb(region_run(mid_pages, sources[k] * out_pages.w, link), kNextCbId));
    }
    const std::vector<cmd::Command> own{cmd::read_tensor_slice_to_cb(in_run(rank, link), kOwnCbId)};
    const std::vector<cmd::Command> sums{cmd::local_write_cb_to_tensor_slice(out_run, kSumCbId)};
    kargs::InterpreterSpec reader;
    reader.packet_header_cb_id = kPacketHeaderCbId;
    reader.packet_size_in_pages = r.packet_pages;
    reader.streams = {stream_of(mid_args, copies)};
    reader.semaphore_ids = copy_semaphores;
    for (std::uint32_t id : copy_semaphores) program.semaphores.push_back(tensix_semaphore(reduce_core, id));
    kargs::InterpreterSpec writer = reader;
    writer.semaphore_ids.clear();
    writer.streams = {stream_of(in_args, own), stream_of(out_args, sums)};
    program.kernels.push_back(interpreter_kernel(reduce_core, writer));
    program.kernels.push_back(
        interpreter_kernel(reduce_core, reader, DataMovementProcessor::Riscv1, NocIndex::Noc1));
    kargs::ReduceSpec reduce;
    reduce.in0_cb_id = kOwnCbId;
    reduce.in1_cb_id = kNextCbId;
    reduce.out_cb_id = kSumCbId;
    reduce.data_format = reduce_data_format(p.input.dtype);
    reduce.num_blocks = packets;
    reduce.pages_per_block = r.packet_pages;
    reduce.passes = n - 1;
    program.kernels.push_back(reduce_kernel(reduce_core, reduce));
    const std::vector<CoreRange> here{CoreRange{reduce_core, reduce_core}};
    program.circular_buffers.push_back(packet_header_cb(reduce_core));
    program.circular_buffers.push_back(CircularBufferSpec{kOwnCbId, here, p.cb_packets * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(CircularBufferSpec{kNextCbId, here, p.cb_packets * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(CircularBufferSpec{kSumCbId, here, packets * r.packet_pages, r.page_size});
  }
  return program;
}

std::vector<reference::Bytes> one_shot_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                 DataType dtype) {
  const auto n = static_cast<std::uint32_t>(slices.size());
  std::vector<reference::Bytes> out(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    std::vector<std::span<const std::byte>> parts{slices[s][s]};
    for (std::uint32_t source : fold_sources(n, s)) parts.push_back(slices[source][s]);
    out[s] = reference::sum_in_order(parts, dtype);
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
