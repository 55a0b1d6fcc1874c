#include "runtime/ccl/reduce_scatter/half_way_ring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <span>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

std::uint32_t half_way_workers_per_link(std::uint32_t n, std::uint32_t workers_per_link) {
  return half_way_sets(n) == 1 ? workers_per_link : 2 * ((workers_per_link + 1) / 2);
}

HalfWayChains half_way_chains(std::uint32_t n, std::uint32_t page_run, std::uint32_t num_links) {
  if (half_way_sets(n) == 1) return {(n - 1) / 2, (n - 1) / 2};
  const bool opposite_goes_right = (page_run / num_links) % 2 == 0;
  return opposite_goes_right ? HalfWayChains{n / 2, n / 2 - 1} : HalfWayChains{n / 2 - 1, n / 2};
}

namespace {
// A half-way worker's CBs: the packet headers; the chain's (received partial, local input,
// reduced) when it forwards or finishes a partial; the left partial (a chunk) for the owner's step;
// the raw slice of its first message.
std::vector<CircularBufferSpec> half_way_worker_cbs(const Params& p, const Resolved& r, std::uint32_t run, bool reduces,
                                                    bool owner_step) {
  const CoreCoord core = r.cores[run];
  const std::vector<CoreRange> here{CoreRange{core, core}};
  const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
  std::vector<CircularBufferSpec> cbs{packet_header_cb(core)};
  if (reduces) {
    add_reduction_chain_cbs(cbs, core,
                            {.packet_pages = r.packet_pages, .local_packets = p.cb_packets,
                             .chunk_pages = chunk_pages, .page_size = r.page_size});
  }
  if (owner_step) cbs.push_back(CircularBufferSpec{kLeftPartialCbId, here, chunk_pages, r.page_size});
  cbs.push_back(CircularBufferSpec{kRawCbId, here, p.cb_packets * r.packet_pages, r.page_size});
  return cbs;
}
}  // namespace

// Every position runs the same program, rotated. In a worker's own terms, with k its chain length
// (HalfWayChains: rightward for the rightward worker, leftward for the leftward one), it sends k
// messages to its next position, message m being the partial of slice position + k - m
// (rightward) or position - k + m (leftward): message 0 its raw slice, message m > 0 what it
// received as message m - 1 plus its own slice. The next position's message k - 1 is of this
// position's own slice: the leftward chain's lands with the leftward worker, which adds its own
// slice and then the rightward chain's (the left partial, in region B) and keeps the result; the
// rightward worker only forwards. Partials land in the next position's intermediate buffer, region
// A (leftward chain) or B (rightward chain and left partial), as on the two-sided line; each
// worker uses one fabric direction, and a chain's credits to its previous position are sent by
// the other chain's worker on the same chip, one hop.
Program half_way_ring_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                              const FabricGroup& g, std::uint32_t position) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const BufferLayout in_layout = buffers.layout(p.input_buffer);
  const BufferLayout out_layout = buffers.layout(p.output_buffer);
  const BufferLayout mid_layout = buffers.layout(*p.intermediate_buffer);
  const api::Shape4D in_pages = shape_in_pages(p.input);
  const api::Shape4D out_pages = shape_in_pages(r.output);
  const api::Shape4D mid_pages = shape_in_pages(r.intermediate);
  const std::uint32_t page_runs = r.runs / 2;
  // Runs of an output-sized region of a tensor: the output, or region A / B of the intermediate.
  const auto region_runs = [&](const api::Shape4D& tensor, std::uint32_t first_w) {
    const api::TensorSlice region{tensor, out_pages, {first_w, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
    return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(region, page_runs);
  };
  const std::vector<api::TensorSlice> out_runs = region_runs(out_pages, 0);
  const std::vector<api::TensorSlice> a_runs = region_runs(mid_pages, 0);
  const std::vector<api::TensorSlice> b_runs = region_runs(mid_pages, out_pages.w);
  // By chain slice: the slices of the ranks at positions 0, 1, ... (the ring runs by position).
  const std::vector<api::TensorSlice> in_slices =
      g.by_position(cmd::compute_page_aligned_slices(n, in_pages, p.dim));
  const cmd::ChipUnicast to_right = g.route(position, (position + 1) % n);
  const cmd::ChipUnicast to_left = g.route(position, (position + n - 1) % n);

  Program program;
  // workers_per_link > 1: a mux per link and direction, its clients that direction's workers on
  // the link (each worker sends one way only).
  std::map<std::uint32_t, api::FabricConnectionConfig> mux_client;  // by run
  if (r.workers_per_link > 1) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      for (const bool rightward : {true, false}) {
        const bool forward = (rightward ? to_right : to_left).forward;
        std::vector<std::uint32_t> clients;
        for (std::uint32_t i = link; i < page_runs; i += p.num_links) {
          if (r.run_pages[i] != 0) clients.push_back(rightward ? i : i + page_runs);
        }
        if (clients.empty()) continue;
        const CoreCoord mux_core = r.mux_cores[2 * link + (forward ? 0 : 1)];
        const std::vector<api::FabricConnectionConfig> configs =
            add_fabric_mux(program, r.plan, g.port(link), chip, mux_core, forward, map.tensix_noc0(mux_core),
                           static_cast<std::uint32_t>(clients.size()));
        for (std::size_t k = 0; k < clients.size(); ++k) mux_client[clients[k]] = configs[k];
      }
    }
  }
  const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
  const cmd::SemaphoreId receive[2] = {{kReceiveSemaphoreIds[0]}, {kReceiveSemaphoreIds[1]}};
  const cmd::SemaphoreId credit[2] = {{kCreditSemaphoreIds[0]}, {kCreditSemaphoreIds[1]}};
  const cmd::SemaphoreId consumed[2] = {{kConsumedSemaphoreIds[0]}, {kConsumedSemaphoreIds[1]}};
  const cmd::SemaphoreId left_partial{kLeftPartialSemaphoreId};
  const cmd::SemaphoreId sends_done{kSendsDoneSemaphoreId};

  for (std::uint32_t run = 0; run < r.runs; ++run) {
    const std::uint32_t pages = r.run_pages[run];
    if (pages == 0) continue;
    const bool rightward = run < page_runs;
    const std::uint32_t i = run % page_runs;
    const CoreCoord core = r.cores[run];
    const CoreCoord other_core = r.cores[rightward ? run + page_runs : run - page_runs];
    const Noc0Coord noc = map.tensix_noc0(core);
    const Noc0Coord other_noc = map.tensix_noc0(other_core);
    const HalfWayChains chains = half_way_chains(n, i, p.num_links);
    const std::uint32_t k = rightward ? chains.rightward : chains.leftward;
    const std::uint32_t other_k = rightward ? chains.leftward : chains.rightward;
    // Received messages this worker adds its slice to: the rightward worker's k - 1 (the k-th, of
    // this position's slice, is the left partial: the leftward worker's), the leftward worker's k,
    // the last its owner's step. Every one but the owner's step is written over again, so credited.
    const std::uint32_t reduces = rightward ? k - 1 : k;
    const std::uint32_t credited = k - 1;
    const std::uint32_t other_credited = other_k - 1;
    const bool owner_step = !rightward;
    const cmd::ChipUnicast to_next = rightward ? to_right : to_left;
    // The slice of message m; m = k is this position's own.
    const auto slice_of = [&](std::uint32_t m) {
      return rightward ? (position + k - m) % n : (position + n - k + m) % n;
    };
    const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
    const std::uint32_t chunks = ceil_div(pages, chunk_pages);
    const std::uint32_t packets = ceil_div(pages, r.packet_pages);
    const auto chunk = [&](const api::TensorSlice& run_slice, std::uint32_t c) {
      return chunk_of(run_slice, c * chunk_pages, std::min(chunk_pages, pages - c * chunk_pages));
    };
    const api::TensorSlice& receive_run = rightward ? b_runs[i] : a_runs[i];
    const auto in_run = [&](std::uint32_t slice) {
      return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(in_slices[slice], page_runs)[i];
    };

    // Reader stream 0 (intermediate): the received partials; the owner's step also reads the left
    // partial, a whole chunk first (its CB holds one), so the two reads never wait for each other.
    std::vector<cmd::Command> partials;
    for (std::uint32_t m = 0; m < reduces; ++m) {
      const bool last = m + 1 == reduces;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        if (last && owner_step) {
          partials.push_back(cmd::local_semaphore_wait(left_partial, c + 1));
          partials.push_back(cmd::read_tensor_slice_to_cb(chunk(b_runs[i], c), kLeftPartialCbId));
        }
        partials.push_back(cmd::local_semaphore_wait(receive[m % 2], c + 1));
        partials.push_back(cmd::read_tensor_slice_to_cb(chunk(receive_run, c), kPartialCbId));
        if (m < credited) {
          partials.push_back(cmd::local_chip_noc_semaphore_inc(other_noc.x, other_noc.y, consumed[m % 2], 1));
        }
      }
      partials.push_back(cmd::local_core_semaphore_set(receive[m % 2], 0));
    }
    // Reader stream 1 (input): the raw slice of message 0, then the slice of each received message.
    std::vector<cmd::Command> inputs{cmd::read_tensor_slice_to_cb(in_run(slice_of(0)), kRawCbId)};
    for (std::uint32_t m = 0; m < reduces; ++m) {
      inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(slice_of(m + 1)), kLocalCbId));
    }

    // Writer stream 0 (intermediate): the entry barrier with both neighbouring chips (this worker
    // tells both workers of the next chip; the previous chip's worker of the other chain tells this
    // one), then the messages.
    std::vector<cmd::Command> sends{
        cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, to_next),
        cmd::fabric_unicast_semaphore_inc(barrier, 1, other_noc.x, other_noc.y, to_next),
        cmd::local_semaphore_wait(barrier, 2),
        cmd::local_core_semaphore_set(barrier, 0),
    };
    for (std::uint32_t m = 0; m < k; ++m) {
      // The rightward chain's last message is the next position's left partial.
      const bool to_owner_step = rightward && m + 1 == k;
      const std::uint32_t source_cb = m == 0 ? kRawCbId : kReducedCbId;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        if (m > 0) sends.push_back(cmd::local_semaphore_wait(credit[(m - 1) % 2], c + 1));
        sends.push_back(cmd::fabric_write_cb_to_tensor_slice(chunk(receive_run, c), source_cb, to_next));
        if (to_owner_step) {
          sends.push_back(cmd::fabric_unicast_semaphore_inc(left_partial, 1, other_noc.x, other_noc.y, to_next));
        } else {
          sends.push_back(cmd::fabric_unicast_semaphore_inc(receive[m % 2], 1, noc.x, noc.y, to_next));
        }
      }
      if (m > 0) sends.push_back(cmd::local_core_semaphore_set(credit[(m - 1) % 2], 0));
    }
    if (owner_step) sends.push_back(cmd::local_core_semaphore_inc(sends_done, 1));
    // Writer stream 1 (output): the other chain's credits to its previous position (this worker's
    // next one), for what the other worker's reader took out of its receive region; then, for the
    // owner's step, the result (stream 0 is bound to the intermediate buffer).
    std::vector<cmd::Command> credits;
    for (std::uint32_t m = 0; m < other_credited; ++m) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        credits.push_back(cmd::local_semaphore_wait(consumed[m % 2], c + 1));
        credits.push_back(cmd::fabric_unicast_semaphore_inc(credit[m % 2], 1, other_noc.x, other_noc.y, to_next));
      }
      credits.push_back(cmd::local_core_semaphore_set(consumed[m % 2], 0));
    }
    if (owner_step) {
      credits.push_back(cmd::local_semaphore_wait(sends_done, 1));
      credits.push_back(cmd::local_core_semaphore_set(sends_done, 0));
      for (std::uint32_t c = 0; c < chunks; ++c) {
        credits.push_back(cmd::local_write_cb_to_tensor_slice(chunk(out_runs[i], c), kReducedCbId));
      }
    }

    kargs::InterpreterSpec writer;
    writer.packet_header_cb_id = kPacketHeaderCbId;
    writer.packet_size_in_pages = r.packet_pages;
    writer.semaphore_ids = {kReceiveSemaphoreIds[0],  kReceiveSemaphoreIds[1],  kCreditSemaphoreIds[0],
                            kCreditSemaphoreIds[1],   kConsumedSemaphoreIds[0], kConsumedSemaphoreIds[1],
                            kLeftPartialSemaphoreId, kSendsDoneSemaphoreId};
    for (std::uint32_t id : writer.semaphore_ids) program.semaphores.push_back(tensix_semaphore(core, id));
    if (r.workers_per_link == 1) {
      connect_to_fabric(program, writer, r.plan, g.port(i % p.num_links), chip, core, to_next.forward,
                        !to_next.forward);
    } else {
      connect_to_fabric_mux(program, writer, core, to_next.forward, mux_client.at(run));
    }
    kargs::InterpreterSpec reader;
    reader.packet_header_cb_id = kPacketHeaderCbId;
    reader.packet_size_in_pages = r.packet_pages;
    reader.semaphore_ids = writer.semaphore_ids;
    const auto stream_of = [&](const BufferLayout& layout, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{layout.interpreter_args(map), cmd::encode_stream(cmds),
                                          static_cast<std::uint32_t>(cmds.size())};
    };
    if (!partials.empty()) reader.streams.push_back(stream_of(mid_layout, partials));
    reader.streams.push_back(stream_of(in_layout, inputs));
    writer.streams = {stream_of(mid_layout, sends)};
    if (!credits.empty()) writer.streams.push_back(stream_of(out_layout, credits));
    // The owner's step reads three chunks for every one it writes: reader on NoC0, writer on NoC1,
    // as the two-sided line's owner (two_sided_line.cpp says why).
    const NocIndex reader_noc = owner_step ? NocIndex::Noc0 : NocIndex::Noc1;
    const NocIndex writer_noc = owner_step ? NocIndex::Noc1 : NocIndex::Noc0;
    program.kernels.push_back(interpreter_kernel(core, writer, DataMovementProcessor::Riscv0, writer_noc));
    program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, reader_noc));

    if (reduces > 0) {
      kargs::ReduceSpec reduce;
      reduce.in0_cb_id = kPartialCbId;
      reduce.in1_cb_id = kLocalCbId;
      reduce.out_cb_id = kReducedCbId;
      reduce.data_format = reduce_data_format(p.input.dtype);
      reduce.num_blocks = reduces * packets;
      reduce.pages_per_block = r.packet_pages;
      if (owner_step) {
        reduce.in2_cb_id = kLeftPartialCbId;
        reduce.in2_blocks = packets;
      }
      program.kernels.push_back(reduce_kernel(core, reduce));
    }

    for (const CircularBufferSpec& cb : half_way_worker_cbs(p, r, run, reduces > 0, owner_step)) {
      program.circular_buffers.push_back(cb);
    }
  }
  return program;
}

void require_half_way_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r) {
  // Core maps are uniform over the op's chips (resolve checks), so one chip's L1 size holds for all.
  const std::uint64_t l1_bytes = chip_core_map(topology, r.groups.front().chips.front()).tensix_l1_bytes();
  for (std::uint32_t run = r.runs / 2; run < r.runs; ++run) {
    if (r.run_pages[run] == 0) continue;
    const std::vector<CircularBufferSpec> cbs = half_way_worker_cbs(p, r, run, true, true);
    const std::vector<std::uint64_t> addresses = circular_buffer_addresses(cbs);
    const std::uint64_t end = addresses.back() + std::uint64_t{cbs.back().num_pages} * cbs.back().page_size_bytes;
    if (end <= l1_bytes) continue;
    const std::uint64_t chunk_bytes = std::uint64_t{r.chunk_packets[run]} * r.packet_pages * r.page_size;
    throw CclParamsError(fmt::format(
        "reduce_scatter: the half-way ring's owner step on worker core ({},{}) needs {} B of CBs from L1 address "
        "{:#x} (the reduced and the left-partial CB of a {}-packet chunk, {} B each, and {}-packet local and raw CBs "
        "of {} B each), ending at {:#x}, above the {} B of a Tensix L1; expected smaller chunk_packets or cb_packets",
        r.cores[run].x, r.cores[run].y, end - kTensixCircularBufferBase, kTensixCircularBufferBase,
        r.chunk_packets[run], chunk_bytes, p.cb_packets, std::uint64_t{p.cb_packets} * r.packet_pages * r.page_size,
        end, l1_bytes));
  }
}

std::vector<reference::Bytes> half_way_ring_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                      DataType dtype, const Resolved& r, std::uint32_t num_links) {
  const auto n = static_cast<std::uint32_t>(slices.size());
  const std::uint32_t page_runs = r.runs / 2;
  std::vector<reference::Bytes> out(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    out[s].resize(slices[0][s].size());
    std::uint64_t first_page = 0;
    for (std::uint32_t i = 0; i < page_runs; ++i) {
      const std::uint64_t offset = first_page * r.page_size;
      const std::uint64_t bytes = std::uint64_t{r.run_pages[i]} * r.page_size;
      first_page += r.run_pages[i];
      if (bytes == 0) continue;
      const HalfWayChains chains = half_way_chains(n, i, num_links);
      const auto part = [&](std::uint32_t position) {
        return std::span<const std::byte>(slices[position][s]).subspan(offset, bytes);
      };
      // The leftward chain from s + kR down to the owner, then the rightward chain from s - kL up to s - 1.
      std::vector<std::span<const std::byte>> leftward;
      for (std::uint32_t d = chains.leftward + 1; d-- > 0;) leftward.push_back(part((s + d) % n));
      std::vector<std::span<const std::byte>> rightward;
      for (std::uint32_t d = chains.rightward; d > 0; --d) rightward.push_back(part((s + n - d) % n));
      const reference::Bytes sum = reference::sum_in_order(
          {reference::sum_in_order(leftward, dtype), reference::sum_in_order(rightward, dtype)}, dtype);
      std::memcpy(out[s].data() + offset, sum.data(), bytes);
    }
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
