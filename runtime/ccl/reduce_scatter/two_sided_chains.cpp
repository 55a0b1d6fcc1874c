#include "runtime/ccl/reduce_scatter/two_sided_chains.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

Program two_sided_chains_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                                 const FabricGroup& g, std::uint32_t position, std::span<const ChainWorkers> workers) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const kargs::TensorArgs in_args = input_args(r, buffers.layout(p.input_buffer), map);
  const kargs::TensorArgs out_args = output_args(r, buffers.layout(p.output_buffer), map);
  const kargs::TensorArgs mid_args = output_args(r, buffers.layout(*p.intermediate_buffer), map);
  const api::Shape4D& in_pages = r.in_pages;
  const api::Shape4D& out_pages = r.out_pages;
  const api::Shape4D& mid_pages = r.mid_pages;
  const std::uint32_t page_runs = r.runs / 2;
  CCLMESH_CHECK(workers.size() == page_runs,
                fmt::format("reduce_scatter: {} chain workers' descriptions for {} page runs", workers.size(),
                            page_runs));
  // Runs of an output-sized region of a tensor: the output, or region A / B of the intermediate.
  const auto region_runs = [&](const api::Shape4D& tensor, std::uint32_t first_w) {
    const api::TensorSlice region{tensor, out_pages, {first_w, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
    return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(region, page_runs);
  };
  const std::vector<api::TensorSlice> out_runs = region_runs(out_pages, 0);
  const std::vector<api::TensorSlice> a_runs = region_runs(mid_pages, 0);
  const std::vector<api::TensorSlice> b_runs = region_runs(mid_pages, out_pages.w);
  // By chain slice: the slices of the ranks at positions 0, 1, ... (the chains run by position).
  const std::vector<api::TensorSlice> in_slices =
      g.by_position(cmd::compute_page_aligned_slices(n, in_pages, p.dim));
  const auto worker_of = [&](std::uint32_t page_run, bool rightward) -> const ChainWorker& {
    return rightward ? workers[page_run].rightward : workers[page_run].leftward;
  };
  const auto route_to_next = [&](bool rightward) {
    return g.route(position, rightward ? (position + 1) % n : (position + n - 1) % n);
  };

  Program program;
  // workers_per_link > 1: a mux per link and direction with a next position, its clients that
  // direction's workers on the link (each worker sends one way only).
  std::map<std::uint32_t, api::FabricConnectionConfig> mux_client;  // by run
  if (r.workers_per_link > 1) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      for (const bool rightward : {true, false}) {
        std::vector<std::uint32_t> clients;
        for (std::uint32_t i = link; i < page_runs; i += p.num_links) {
          if (r.run_pages[i] != 0 && worker_of(i, rightward).has_next) clients.push_back(rightward ? i : i + page_runs);
        }
        if (clients.empty()) continue;
        const bool forward = route_to_next(rightward).forward;
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
    const ChainWorker& me = worker_of(i, rightward);
    const ChainWorker& other = worker_of(i, !rightward);
    CCLMESH_CHECK(me.slices.size() == me.raw_messages + me.receives && me.sends <= me.slices.size(),
                  fmt::format("reduce_scatter: a chain worker with {} slices for {} raw and {} received messages ({} "
                              "sent)",
                              me.slices.size(), me.raw_messages, me.receives, me.sends));
    const cmd::ChipUnicast to_next = me.has_next ? route_to_next(rightward) : cmd::ChipUnicast{};
    // The result goes to the output from the writer's credit stream when its sends stream is bound
    // to the intermediate buffer (a stream writes one tensor).
    const bool result_in_credit_stream = me.keeps_result && me.sends > 0;
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
    // partial, a whole chunk first (its CB holds one), so the two reads of one stream never wait
    // for each other.
    std::vector<cmd::Command> partials;
    for (std::uint32_t m = 0; m < me.receives; ++m) {
      const bool last = m + 1 == me.receives;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        if (last && me.adds_left_partial) {
          partials.push_back(cmd::local_semaphore_wait(left_partial, c + 1));
          partials.push_back(cmd::read_tensor_slice_to_cb(chunk(b_runs[i], c), kLeftPartialCbId));
        }
        partials.push_back(cmd::local_semaphore_wait(receive[m % 2], c + 1));
        partials.push_back(cmd::read_tensor_slice_to_cb(chunk(receive_run, c), kPartialCbId));
        if (m < me.credited) {
          partials.push_back(cmd::local_chip_noc_semaphore_inc(other_noc.x, other_noc.y, consumed[m % 2], 1));
        }
      }
      partials.push_back(cmd::local_core_semaphore_set(receive[m % 2], 0));
    }
    // Reader stream 1 (input): the raw messages' slices, then the slice of each received message.
    std::vector<cmd::Command> inputs;
    for (std::uint32_t m = 0; m < me.slices.size(); ++m) {
      const bool raw = m < me.raw_messages;
      inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(me.slices[m]), raw ? kRawCbId : kLocalCbId));
    }

    // Writer stream 0 (intermediate, or the output when it sends nothing): the entry barrier with
    // both neighbouring chips (this worker tells both workers of the next chip; the previous
    // chip's worker of the other chain tells this one), then the messages.
    std::vector<cmd::Command> sends;
    if (me.has_next) {
      sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, to_next));
      sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, other_noc.x, other_noc.y, to_next));
    }
    // One increment from each neighbouring chip: the one each of this chip's workers sends to.
    const std::uint32_t neighbours = (me.has_next ? 1 : 0) + (other.has_next ? 1 : 0);
    sends.push_back(cmd::local_semaphore_wait(barrier, neighbours));
    sends.push_back(cmd::local_core_semaphore_set(barrier, 0));
    for (std::uint32_t m = 0; m < me.sends; ++m) {
      const bool to_owner_step = me.last_to_owner_step && m + 1 == me.sends;
      const std::uint32_t source_cb = m < me.raw_messages ? kRawCbId : kReducedCbId;
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
    if (me.keeps_result && !result_in_credit_stream) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        sends.push_back(cmd::local_write_cb_to_tensor_slice(chunk(out_runs[i], c), kReducedCbId));
      }
    }
    if (result_in_credit_stream) sends.push_back(cmd::local_core_semaphore_inc(sends_done, 1));
    // Writer stream 1 (output): the other chain's credits to its previous position (this worker's
    // next one), for what the other worker's reader took out of its receive region; then, when
    // stream 0 is bound to the intermediate, this worker's result.
    std::vector<cmd::Command> credits;
    for (std::uint32_t m = 0; m < other.credited; ++m) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        credits.push_back(cmd::local_semaphore_wait(consumed[m % 2], c + 1));
        credits.push_back(cmd::fabric_unicast_semaphore_inc(credit[m % 2], 1, other_noc.x, other_noc.y, to_next));
      }
      credits.push_back(cmd::local_core_semaphore_set(consumed[m % 2], 0));
    }
    if (result_in_credit_stream) {
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
    if (me.has_next) {
      if (r.workers_per_link == 1) {
        connect_to_fabric(program, writer, r.plan, g.port(i % p.num_links), chip, core, to_next.forward,
                          !to_next.forward);
      } else {
        connect_to_fabric_mux(program, writer, core, to_next.forward, mux_client.at(run));
      }
    }
    kargs::InterpreterSpec reader;
    reader.packet_header_cb_id = kPacketHeaderCbId;
    reader.packet_size_in_pages = r.packet_pages;
    reader.semaphore_ids = writer.semaphore_ids;
    const auto stream_of = [&](const kargs::TensorArgs& args, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{args, cmd::encode_stream(cmds), static_cast<std::uint32_t>(cmds.size())};
    };
    if (!partials.empty()) reader.streams.push_back(stream_of(mid_args, partials));
    reader.streams.push_back(stream_of(in_args, inputs));
    writer.streams = {stream_of(me.sends > 0 ? mid_args : out_args, sends)};
    if (!credits.empty()) writer.streams.push_back(stream_of(out_args, credits));
    // The owner's step reads three chunks for every one it writes. On NoC1 (north first, then
    // west) the read responses from both DRAM columns (x = 0 and 5) reach a row of workers along
    // that row, so the owners of a chip, which sit side by side, share one NoC1 link for all their
    // reads; on NoC0 (east, then south) they travel along each DRAM endpoint's row and then down
    // the worker's column. So that worker swaps the convention (reader NoC0, writer NoC1; still
    // one kernel per NoC). docs/performance.md "reduce_scatter on the 4-line" has the figures.
    const NocIndex reader_noc = me.adds_left_partial ? NocIndex::Noc0 : NocIndex::Noc1;
    const NocIndex writer_noc = me.adds_left_partial ? NocIndex::Noc1 : NocIndex::Noc0;
    program.kernels.push_back(interpreter_kernel(core, writer, DataMovementProcessor::Riscv0, writer_noc));
    program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, reader_noc));

    if (me.receives > 0) {
      kargs::ReduceSpec reduce;
      reduce.in0_cb_id = kPartialCbId;
      reduce.in1_cb_id = kLocalCbId;
      reduce.out_cb_id = kReducedCbId;
      reduce.data_format = reduce_data_format(p.input.dtype);
      reduce.num_blocks = me.receives * packets;
      reduce.pages_per_block = r.packet_pages;
      if (me.adds_left_partial) {
        reduce.in2_cb_id = kLeftPartialCbId;
        reduce.in2_blocks = packets;
      }
      program.kernels.push_back(reduce_kernel(core, reduce));
    }

    for (const CircularBufferSpec& cb : two_sided_worker_cbs(p, r, run, me)) program.circular_buffers.push_back(cb);
  }
  return program;
}

std::vector<CircularBufferSpec> two_sided_worker_cbs(const Params& p, const Resolved& r, std::uint32_t run,
                                                     const ChainWorker& worker) {
  const CoreCoord core = r.cores[run];
  const std::vector<CoreRange> here{CoreRange{core, core}};
  const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
  std::vector<CircularBufferSpec> cbs{packet_header_cb(core)};
  if (worker.receives > 0) {
    add_reduction_chain_cbs(cbs, core,
                            {.packet_pages = r.packet_pages, .local_packets = p.cb_packets,
                             .chunk_pages = chunk_pages, .page_size = r.page_size});
  }
  if (worker.adds_left_partial) cbs.push_back(CircularBufferSpec{kLeftPartialCbId, here, chunk_pages, r.page_size});
  if (worker.raw_messages > 0) {
    cbs.push_back(CircularBufferSpec{kRawCbId, here, p.cb_packets * r.packet_pages, r.page_size});
  }
  return cbs;
}

void require_owner_step_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r,
                                const std::function<ChainWorker(std::uint32_t page_run)>& owner_step,
                                std::string_view algorithm) {
  // Core maps are uniform over the op's chips (resolve checks), so one chip's L1 size holds for all.
  const std::uint64_t l1_bytes = chip_core_map(topology, r.groups.front().chips.front()).tensix_l1_bytes();
  for (std::uint32_t run = r.runs / 2; run < r.runs; ++run) {
    if (r.run_pages[run] == 0) continue;
    const ChainWorker worker = owner_step(run - r.runs / 2);
    const std::vector<CircularBufferSpec> cbs = two_sided_worker_cbs(p, r, run, worker);
    const std::vector<std::uint64_t> addresses = circular_buffer_addresses(cbs);
    const std::uint64_t end = addresses.back() + std::uint64_t{cbs.back().num_pages} * cbs.back().page_size_bytes;
    if (end <= l1_bytes) continue;
    const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
    const std::uint64_t chunk_bytes = std::uint64_t{chunk_pages} * r.page_size;
    const std::uint64_t reduced_bytes =
        std::uint64_t{reduced_cb_pages({.packet_pages = r.packet_pages, .local_packets = p.cb_packets,
                                        .chunk_pages = chunk_pages, .page_size = r.page_size})} *
        r.page_size;
    const std::uint64_t local_bytes = std::uint64_t{p.cb_packets} * r.packet_pages * r.page_size;
    // The half-way ring's owner also holds the raw CB of its first message.
    const std::string local_cbs =
        worker.raw_messages > 0 ? fmt::format("{}-packet local and raw CBs of {} B each", p.cb_packets, local_bytes)
                                : fmt::format("a {}-packet local CB of {} B", p.cb_packets, local_bytes);
    throw CclParamsError(fmt::format(
        "reduce_scatter: the {}'s owner step on worker core ({},{}) needs {} B of CBs from L1 address {:#x} (the "
        "reduced CB of {} B and the left-partial CB of a {}-packet chunk, {} B, and {}), ending at {:#x}, above the "
        "{} B of a Tensix L1; expected smaller chunk_packets or cb_packets",
        algorithm, r.cores[run].x, r.cores[run].y, end - kTensixCircularBufferBase, kTensixCircularBufferBase,
        reduced_bytes, r.chunk_packets[run], chunk_bytes, local_cbs, end, l1_bytes));
  }
}

std::vector<reference::Bytes> two_sided_chains_reference(
    const std::vector<std::vector<reference::Bytes>>& slices, DataType dtype,
    const std::vector<std::uint64_t>& part_bytes, const std::function<OwnerSum(std::uint32_t, std::uint32_t)>& sum_of) {
  const auto n = static_cast<std::uint32_t>(slices.size());
  std::vector<reference::Bytes> out(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    out[s].resize(slices[0][s].size());
    std::uint64_t offset = 0;
    for (std::uint32_t k = 0; k < part_bytes.size(); ++k) {
      const std::uint64_t bytes = part_bytes[k];
      const std::uint64_t first = offset;
      offset += bytes;
      if (bytes == 0) continue;
      // fold(positions): this part of slice s summed over `positions`, in that order.
      const auto fold = [&](const std::vector<std::uint32_t>& positions) {
        std::vector<std::span<const std::byte>> parts;
        for (std::uint32_t position : positions) {
          parts.push_back(std::span<const std::byte>(slices[position][s]).subspan(first, bytes));
        }
        return reference::sum_in_order(parts, dtype);
      };
      const OwnerSum sum = sum_of(s, k);
      reference::Bytes result = fold(sum.own_chain);
      if (!sum.left_partial.empty()) result = reference::sum_in_order({result, fold(sum.left_partial)}, dtype);
      std::memcpy(out[s].data() + first, result.data(), bytes);
    }
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
