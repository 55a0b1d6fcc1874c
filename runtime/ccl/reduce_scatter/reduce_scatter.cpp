#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <span>
#include <utility>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_legacy.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter {
namespace {

constexpr const char* kOp = "reduce_scatter";

constexpr std::uint32_t kPartialCbId = 0;  // received partials (reduce in0)
constexpr std::uint32_t kLocalCbId = 1;    // this chip's input (reduce in1)
constexpr std::uint32_t kReducedCbId = 2;  // reduce out
constexpr std::uint32_t kRawCbId = 3;      // message 0: this chip's raw slice, straight to the writer
// Per-program semaphores of a worker (1..6 are its fabric connections', ccl_common.hpp).
constexpr std::uint32_t kReceiveSemaphoreIds[2] = {7, 8};
constexpr std::uint32_t kCreditSemaphoreIds[2] = {9, 10};
constexpr std::uint32_t kConsumedSemaphoreIds[2] = {11, 12};  // reader -> writer's credit stream
// Two-sided line: the left partial has landed in region B (per chunk), and the writer's sends
// stream has popped its last forwarded chunk (so its credit stream may write the result).
constexpr std::uint32_t kLeftPartialSemaphoreId = 13;
constexpr std::uint32_t kSendsDoneSemaphoreId = 14;
constexpr std::uint32_t kLeftPartialCbId = 4;  // two-sided line: the owner's third input
// By default a CB packet holds 4 fabric payloads: one interpreter stream both reads and writes,
// and every read packet ends in a read barrier, so bigger packets amortise the DRAM latency
// (T3K 8-ring, 16 MiB: 4.3 GB/s busbw with 2-tile packets, 6.5-7.1 with 8-16). Fabric packets
// stay within a payload: the interpreter cuts writes at the connection's payload.
constexpr std::uint32_t kDefaultPayloadsPerPacket = 4;
// The reduce CB stays within this (a chunk must fit; our choice, a third of a core's L1).
constexpr std::uint64_t kMaxReducedCbBytes = 512 * 1024;

struct Resolved {
  FabricPlan plan;
  std::vector<FabricGroup> groups;
  std::uint32_t group_size = 0;
  TensorSpec output;
  std::uint32_t page_size = 0;
  std::uint32_t packet_pages = 0;
  bool ring = false;
  bool two_sided = false;  // a two-sided line
  TensorSpec intermediate;  // two_sided: the receive buffer's tensor
  // Ring: 2 per link and worker, up workers' runs first, then down workers'; wrap line: 1. Run r
  // is on plane r % num_links. Two-sided line: 2 per link and worker, the rightward chain's first,
  // then the leftward chain's on the same pages (run r and r + runs / 2 share their pages).
  std::uint32_t runs = 0;
  std::uint32_t workers_per_link = 1;
  std::vector<CoreCoord> cores;      // per run
  std::vector<CoreCoord> mux_cores;  // workers_per_link > 1: per link, forward then backward
  std::vector<std::uint32_t> run_pages;
  std::vector<std::uint32_t> chunk_packets;  // per run
};

bool is_up(const Resolved& r, std::uint32_t run) { return !r.ring || run < r.runs / 2; }

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// The next and previous rank of a worker's chain: up workers send to rank + 1.
std::uint32_t next_rank(std::uint32_t n, std::uint32_t rank, bool up) {
  return up ? (rank + 1) % n : (rank + n - 1) % n;
}
std::uint32_t prev_rank(std::uint32_t n, std::uint32_t rank, bool up) { return next_rank(n, rank, !up); }

// The slice a worker of `rank` sends raw (message 0), and the slice of received message m.
std::uint32_t raw_slice(std::uint32_t n, std::uint32_t rank, bool up) { return prev_rank(n, rank, up); }
std::uint32_t received_slice(std::uint32_t n, std::uint32_t rank, bool up, std::uint32_t m) {
  return up ? (rank + 2 * n - 2 - m) % n : (rank + 2 + m) % n;
}

// Params::workers_per_link checked, or the size rule of kPagesForSeveralWorkers.
std::uint32_t workers_per_link_for(const Params& p, const TensorSpec& output, bool ring) {
  if (p.workers_per_link) {
    if (*p.workers_per_link == 0 || *p.workers_per_link > kernels::fabric_mux::kMaxClients) {
      throw CclParamsError(
          fmt::format("reduce_scatter: workers_per_link is {}; expected 1 to {} (a fabric mux's clients)",
                      *p.workers_per_link, kernels::fabric_mux::kMaxClients));
    }
    return *p.workers_per_link;
  }
  const std::uint64_t pages_per_link_direction = num_pages(output) / ((ring ? 2 : 1) * std::uint64_t{p.num_links});
  return pages_per_link_direction >= kPagesForSeveralWorkers ? kDefaultWorkersPerLink : 1;
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  r.page_size = page_size_bytes(p.input);
  require_page_aligned_dim(p.input, p.dim, kOp, "input");
  PlacedGroups placed = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);
  r.plan = std::move(placed.plan);
  r.groups = std::move(placed.groups);
  r.group_size = placed.group_size;
  const std::vector<ChipId>& all_chips = placed.all_chips;
  const std::uint32_t n = r.group_size;
  r.ring = p.topology == CclTopology::Ring;
  r.two_sided = !r.ring && p.line_algorithm == LineAlgorithm::TwoSided;
  if (!r.two_sided && n - 1 > kMaxFabricHops) {
    throw CclParamsError(
        fmt::format("reduce_scatter: a {} of {} chips sends over {} hops (the line's wrap, the ring's "
                    "credits); a fabric route holds at most {} (REFERENCE 6.5)",
                    to_string(p.topology), n, n - 1, kMaxFabricHops));
  }
  const api::Shape4D in_pages = shape_in_pages(p.input);
  if (dim_of(in_pages, p.dim) % n != 0) {
    throw CclParamsError(fmt::format(
        "reduce_scatter: input dim {} is {} {} and does not split into {} equal slices "
        "(shape[dim] % N != 0, REFERENCE 11.15)",
        p.dim, dim_of(in_pages, p.dim), p.input.layout == Layout::Tile && p.dim >= 2 ? "tiles" : "pages", n));
  }
  r.output = with_dim_scaled(p.input, p.dim, n, false);
  require_buffer_holds(p.input_buffer, p.input, kOp, "input");
  require_buffer_holds(p.output_buffer, r.output, kOp, "output");
  if (p.input_buffer.id == p.output_buffer.id) {
    throw CclParamsError("reduce_scatter: input and output are the same buffer; expected two buffers");
  }
  require_uniform_core_maps(topology, all_chips, kOp);
  const CoreCoord grid = common_worker_grid(topology);
  for (ChipId chip : all_chips) {
    const std::uint32_t banks = chip_core_map(topology, chip).dram_bank_count();
    buffer_layout(p.input_buffer, grid, banks);
    buffer_layout(p.output_buffer, grid, banks);
  }
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  if (p.packet_size_in_pages == 0) r.packet_pages *= kDefaultPayloadsPerPacket;
  if (r.two_sided) {
    if (!p.intermediate_buffer) {
      throw CclParamsError(
          "reduce_scatter: a two-sided line needs intermediate_buffer (intermediate_spec(): the partials' "
          "receive buffer); expected a buffer, or line_algorithm wrap");
    }
    r.intermediate = intermediate_spec(p, topology);
    // At least: all_reduce lends its output buffer (N slices) for these two.
    const BufferHandle& mid = *p.intermediate_buffer;
    if (mid.config.page_size_bytes != r.page_size || mid.config.size_bytes < size_bytes(r.intermediate)) {
      throw CclParamsError(fmt::format(
          "reduce_scatter: intermediate buffer is {} B in pages of {} B; the two-sided line's partials need at "
          "least {} B in pages of {} B (intermediate_spec)",
          mid.config.size_bytes, mid.config.page_size_bytes, size_bytes(r.intermediate), r.page_size));
    }
    if (p.intermediate_buffer->id == p.input_buffer.id || p.intermediate_buffer->id == p.output_buffer.id) {
      throw CclParamsError("reduce_scatter: the intermediate buffer is the input or output; expected its own buffer");
    }
    for (ChipId chip : all_chips) {
      buffer_layout(*p.intermediate_buffer, grid, chip_core_map(topology, chip).dram_bank_count());
    }
  }
  r.workers_per_link = workers_per_link_for(p, r.output, r.ring);
  if (p.cb_packets == 0 || p.chunk_packets == 0) {
    throw CclParamsError("reduce_scatter: cb_packets and chunk_packets must be at least 1");
  }
  // Runs of the output: 2 per link on a ring, 1 on a line; runs without pages get no worker.
  const api::Shape4D out_pages = shape_in_pages(r.output);
  const api::TensorSlice whole{out_pages, out_pages, {0, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
  const std::uint32_t page_runs = (r.ring ? 2 : 1) * p.num_links * r.workers_per_link;
  r.runs = (r.ring || r.two_sided ? 2 : 1) * p.num_links * r.workers_per_link;
  const std::vector<api::TensorSlice> page_run_slices =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(whole, page_runs);
  for (std::uint32_t run = 0; run < r.runs; ++run) {
    r.run_pages.push_back(static_cast<std::uint32_t>(api::volume(page_run_slices[run % page_runs].worker_slice_shape)));
  }
  const std::uint32_t muxes = r.workers_per_link > 1 ? 2 * p.num_links : 0;
  r.cores = worker_cores(topology, p.first_worker, r.runs + muxes, kOp);
  r.mux_cores.assign(r.cores.begin() + r.runs, r.cores.end());
  r.cores.resize(r.runs);
  for (std::uint32_t run = 0; run < r.runs; ++run) {
    const std::uint32_t packets = ceil_div(r.run_pages[run], r.packet_pages);
    const std::uint32_t chunk = std::max(p.chunk_packets, ceil_div(packets, kMaxInlineValue));
    const std::uint64_t cb_bytes = std::uint64_t{chunk} * r.packet_pages * r.page_size;
    if (cb_bytes > kMaxReducedCbBytes) {
      throw CclParamsError(
          fmt::format("reduce_scatter: a worker's chunk of {} packets ({} B) exceeds the {} B its "
                      "reduce CB may hold; the input is too large for 255 synchronised chunks per "
                      "message",
                      chunk, cb_bytes, kMaxReducedCbBytes));
    }
    r.chunk_packets.push_back(chunk);
  }
  require_semaphore_on(p.barrier_semaphore, r.cores, kOp, "barrier_semaphore");
  return r;
}

api::TensorSlice chunk_of(const api::TensorSlice& run, std::uint32_t first_page, std::uint32_t pages) {
  api::TensorSlice c = run;
  c.worker_slice_offset = api::Shape4D{0, 0, 0, run.worker_slice_offset.x + first_page};
  c.worker_slice_shape = api::Shape4D{1, 1, 1, pages};
  return c;
}

Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t rank) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[rank];
  const ChipCoreMap map = chip_core_map(topology, chip);
  const CoreCoord grid = common_worker_grid(topology);
  const BufferLayout in_layout = buffer_layout(p.input_buffer, grid, map.dram_bank_count());
  const BufferLayout out_layout = buffer_layout(p.output_buffer, grid, map.dram_bank_count());
  const api::Shape4D in_pages = shape_in_pages(p.input);
  const api::Shape4D out_pages = shape_in_pages(r.output);
  const api::TensorSlice out_whole{out_pages, out_pages, {0, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
  const std::vector<api::TensorSlice> out_runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(out_whole, r.runs);
  const std::vector<api::TensorSlice> in_slices = cmd::compute_page_aligned_slices(n, in_pages, p.dim);

  // A worker core holds one connection per direction, and a router's worker channel one
  // worker: on a ring each worker uses one direction only, so credits and barrier increments
  // to the previous rank go the long way round (N - 1 hops); a line's workers use both
  // directions (the chain wraps back over N - 1 hops).
  const auto routes = [&](std::uint32_t run) {
    const bool up = is_up(r, run);
    const cmd::ChipUnicast to_next = g.route(rank, next_rank(n, rank, up));
    const cmd::ChipUnicast to_prev =
        r.ring ? cmd::ChipUnicast{n - 1, to_next.forward} : g.route(rank, prev_rank(n, rank, up));
    return std::pair{to_next, to_prev};
  };
  const auto sends_in = [&](std::uint32_t run, bool forward) {
    const auto [to_next, to_prev] = routes(run);
    return to_next.forward == forward || to_prev.forward == forward;
  };

  Program program;
  // workers_per_link > 1: one mux per link and direction, its clients the runs on that link that
  // send that way. The muxes come first, so their slot CBs' addresses are fixed before the
  // workers' CBs are added.
  std::map<std::pair<std::uint32_t, bool>, api::FabricConnectionConfig> mux_client;  // (run, forward)
  if (r.workers_per_link > 1) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      for (const bool forward : {true, false}) {
        std::vector<std::uint32_t> clients;
        for (std::uint32_t run = link; run < r.runs; run += p.num_links) {
          if (r.run_pages[run] != 0 && sends_in(run, forward)) clients.push_back(run);
        }
        if (clients.empty()) continue;
        const CoreCoord mux_core = r.mux_cores[2 * link + (forward ? 0 : 1)];
        const std::vector<api::FabricConnectionConfig> configs =
            add_fabric_mux(program, r.plan, g.port(link), chip, mux_core, forward, map.tensix_noc0(mux_core),
                           static_cast<std::uint32_t>(clients.size()));
        for (std::size_t i = 0; i < clients.size(); ++i) mux_client[{clients[i], forward}] = configs[i];
      }
    }
  }
  for (std::uint32_t run = 0; run < r.runs; ++run) {
    const std::uint32_t pages = r.run_pages[run];
    if (pages == 0) continue;
    const bool up = is_up(r, run);
    const CoreCoord core = r.cores[run];
    const Noc0Coord noc = map.tensix_noc0(core);
    const std::uint32_t next = next_rank(n, rank, up);
    const std::uint32_t prev = prev_rank(n, rank, up);
    const auto [to_next, to_prev] = routes(run);
    const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
    const std::uint32_t chunks = ceil_div(pages, chunk_pages);
    const std::uint32_t packets = ceil_div(pages, r.packet_pages);
    const auto in_run = [&](std::uint32_t slice) {
      return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(in_slices[slice], r.runs)[run];
    };
    const auto out_chunk = [&](std::uint32_t c) {
      return chunk_of(out_runs[run], c * chunk_pages, std::min(chunk_pages, pages - c * chunk_pages));
    };
    const cmd::SemaphoreId receive[2] = {{kReceiveSemaphoreIds[0]}, {kReceiveSemaphoreIds[1]}};
    const cmd::SemaphoreId credit[2] = {{kCreditSemaphoreIds[0]}, {kCreditSemaphoreIds[1]}};

    const cmd::SemaphoreId consumed[2] = {{kConsumedSemaphoreIds[0]}, {kConsumedSemaphoreIds[1]}};

    // Three kernels per worker core, as tt-metal's reduce-scatter: a reader interpreter (RISC-V 1,
    // NoC1) pulls the received partials and this chip's input into CBs, the reduce kernel on the
    // compute processor sums them, and a writer interpreter (RISC-V 0, NoC0) sends the sums on.
    // Reads of one chunk overlap the writes of the one before. The reader tells the writer's
    // credit stream, by a local semaphore, that a chunk's partials are out of the receive buffer;
    // the writer owns the core's fabric connections, so it sends the credit to the previous rank.

    // Reader stream 0: the received partials, chunk by chunk.
    std::vector<cmd::Command> partials;
    for (std::uint32_t m = 0; m + 1 < n; ++m) {
      const bool last = m + 2 == n;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        partials.push_back(cmd::local_semaphore_wait(receive[m % 2], c + 1));
        partials.push_back(cmd::read_tensor_slice_to_cb(out_chunk(c), kPartialCbId));
        if (!last) partials.push_back(cmd::local_core_semaphore_inc(consumed[m % 2], 1));
      }
      partials.push_back(cmd::local_core_semaphore_set(receive[m % 2], 0));
    }
    // Reader stream 1: this chip's input: the raw slice (message 0), then one slice per received
    // message. On 2 chips the raw slice goes chunk by chunk, each chunk followed by the same
    // chunk of the one received message's slice, so the reduction runs while message 0 is still
    // being sent: message 0 is half the work there, and sending all of it first left the link
    // idle for the other half (N300 64 MiB: 7270 -> 4587 us at 4 workers). With more chips
    // message 0 is 1/(N-1) of the work and interleaving it with message 1 measured slower
    // (T3K ring 64 MiB at 4 workers 4603 -> 4779 us; docs/performance.md).
    const bool interleave_first = n == 2;
    std::vector<cmd::Command> inputs;
    const api::TensorSlice raw_run = in_run(raw_slice(n, rank, up));
    const api::TensorSlice first_run = in_run(received_slice(n, rank, up, 0));
    if (interleave_first) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        const std::uint32_t first = c * chunk_pages;
        const std::uint32_t count = std::min(chunk_pages, pages - first);
        inputs.push_back(cmd::read_tensor_slice_to_cb(chunk_of(raw_run, first, count), kRawCbId));
        inputs.push_back(cmd::read_tensor_slice_to_cb(chunk_of(first_run, first, count), kLocalCbId));
      }
    } else {
      inputs.push_back(cmd::read_tensor_slice_to_cb(raw_run, kRawCbId));
      inputs.push_back(cmd::read_tensor_slice_to_cb(first_run, kLocalCbId));
    }
    for (std::uint32_t m = 1; m + 1 < n; ++m) {
      inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(received_slice(n, rank, up, m)), kLocalCbId));
    }

    // Writer stream 0: the entry barrier, then every message's chunks to the next rank (the last
    // message's sums into this chip's output).
    std::vector<cmd::Command> sends;
    const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
    sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, to_next));
    std::uint32_t neighbours = 1;
    if (prev != next) {
      sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, to_prev));
      neighbours = 2;
    }
    sends.push_back(cmd::local_semaphore_wait(barrier, neighbours));
    sends.push_back(cmd::local_core_semaphore_set(barrier, 0));
    // Message 0 (the raw slice), on 2 chips chunk by chunk in turn with the received message's
    // sums (as the reader reads them); then the messages one after another.
    const auto send_raw_chunk = [&](std::uint32_t c) {
      sends.push_back(cmd::fabric_write_cb_to_tensor_slice(out_chunk(c), kRawCbId, to_next));
      sends.push_back(cmd::fabric_unicast_semaphore_inc(receive[0], 1, noc.x, noc.y, to_next));
    };
    if (!interleave_first) {
      for (std::uint32_t c = 0; c < chunks; ++c) send_raw_chunk(c);
    }
    for (std::uint32_t m = 0; m + 1 < n; ++m) {
      const bool last = m + 2 == n;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        if (m == 0 && interleave_first) send_raw_chunk(c);
        if (last) {
          sends.push_back(cmd::local_write_cb_to_tensor_slice(out_chunk(c), kReducedCbId));
          continue;
        }
        sends.push_back(cmd::local_semaphore_wait(credit[m % 2], c + 1));
        sends.push_back(cmd::fabric_write_cb_to_tensor_slice(out_chunk(c), kReducedCbId, to_next));
        sends.push_back(cmd::fabric_unicast_semaphore_inc(receive[(m + 1) % 2], 1, noc.x, noc.y, to_next));
      }
      if (!last) sends.push_back(cmd::local_core_semaphore_set(credit[m % 2], 0));
    }
    // Writer stream 1: a credit to the previous rank for every chunk the reader has taken out
    // of the receive buffer (the last message's chunks are not overwritten again).
    std::vector<cmd::Command> credits;
    for (std::uint32_t m = 0; m + 2 < n; ++m) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        credits.push_back(cmd::local_semaphore_wait(consumed[m % 2], c + 1));
        credits.push_back(cmd::fabric_unicast_semaphore_inc(credit[m % 2], 1, noc.x, noc.y, to_prev));
      }
      credits.push_back(cmd::local_core_semaphore_set(consumed[m % 2], 0));
    }

    kargs::InterpreterSpec writer;
    writer.packet_header_cb_id = kPacketHeaderCbId;
    writer.packet_size_in_pages = r.packet_pages;
    writer.semaphore_ids = {kReceiveSemaphoreIds[0], kReceiveSemaphoreIds[1], kCreditSemaphoreIds[0],
                            kCreditSemaphoreIds[1], kConsumedSemaphoreIds[0], kConsumedSemaphoreIds[1]};
    for (std::uint32_t id : writer.semaphore_ids) program.semaphores.push_back(tensix_semaphore(core, id));
    const bool forward = to_next.forward || to_prev.forward;
    const bool backward = !to_next.forward || !to_prev.forward;
    if (r.workers_per_link == 1) {
      connect_to_fabric(program, writer, r.plan, g.port(run % p.num_links), chip, core, forward, backward);
    } else {
      if (forward) connect_to_fabric_mux(program, writer, core, true, mux_client.at({run, true}));
      if (backward) connect_to_fabric_mux(program, writer, core, false, mux_client.at({run, false}));
    }
    kargs::InterpreterSpec reader;
    reader.packet_header_cb_id = kPacketHeaderCbId;
    reader.packet_size_in_pages = r.packet_pages;
    reader.semaphore_ids = writer.semaphore_ids;
    const auto stream_of = [](const BufferLayout& layout, const ChipCoreMap& m, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{layout.interpreter_args(m), cmd::encode_stream(cmds),
                                          static_cast<std::uint32_t>(cmds.size())};
    };
    reader.streams = {stream_of(out_layout, map, partials), stream_of(in_layout, map, inputs)};
    writer.streams = {stream_of(out_layout, map, sends)};
    if (!credits.empty()) writer.streams.push_back(stream_of(out_layout, map, credits));
    program.kernels.push_back(interpreter_kernel(core, writer));
    program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, NocIndex::Noc1));

    kargs::ReduceSpec reduce;
    reduce.in0_cb_id = kPartialCbId;
    reduce.in1_cb_id = kLocalCbId;
    reduce.out_cb_id = kReducedCbId;
    reduce.data_format = reduce_data_format(p.input.dtype);
    reduce.num_blocks = (n - 1) * packets;
    reduce.pages_per_block = r.packet_pages;
    program.kernels.push_back(reduce_kernel(core, reduce));

    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(
        CircularBufferSpec{kPartialCbId, {CoreRange{core, core}}, 2 * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kLocalCbId, {CoreRange{core, core}}, p.cb_packets * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kReducedCbId, {CoreRange{core, core}}, chunk_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kRawCbId, {CoreRange{core, core}}, p.cb_packets * r.packet_pages, r.page_size});
  }
  return program;
}


// The two-sided line (reduce_scatter.hpp): per page run a rightward worker (run i) and a
// leftward worker (run i + runs / 2). In a chain's own terms a worker at position q (the rank
// for the rightward chain, N - 1 - rank for the leftward one) sends N - 1 - q messages, message
// m being slice N - 1 - m (rightward) or m (leftward), and receives what position q - 1 sends.
// Position 0 sends its raw slices. The rightward chain's partials land in region B of the
// next rank's intermediate buffer; its last message (slice r + 1, the left partial of the owner
// r + 1) goes to the owner's leftward worker, except on the last rank, which keeps it. The
// leftward chain's land in region A; its last message at a rank is the owner's step:
// (received + own slice) + left partial, into the output.
Program two_sided_line_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                               const FabricGroup& g, std::uint32_t rank) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[rank];
  const ChipCoreMap map = chip_core_map(topology, chip);
  const CoreCoord grid = common_worker_grid(topology);
  const BufferLayout in_layout = buffer_layout(p.input_buffer, grid, map.dram_bank_count());
  const BufferLayout out_layout = buffer_layout(p.output_buffer, grid, map.dram_bank_count());
  const BufferLayout mid_layout = buffer_layout(*p.intermediate_buffer, grid, map.dram_bank_count());
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
  const std::vector<api::TensorSlice> in_slices = cmd::compute_page_aligned_slices(n, in_pages, p.dim);
  const bool has_right = rank + 1 < n;
  const bool has_left = rank > 0;
  const cmd::ChipUnicast to_right = has_right ? g.route(rank, rank + 1) : cmd::ChipUnicast{};
  const cmd::ChipUnicast to_left = has_left ? g.route(rank, rank - 1) : cmd::ChipUnicast{};

  Program program;
  // workers_per_link > 1: a mux per link and direction with a neighbour, its clients that
  // direction's workers on the link (each worker sends one way only).
  std::map<std::uint32_t, api::FabricConnectionConfig> mux_client;  // by run
  if (r.workers_per_link > 1) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      for (const bool rightward : {true, false}) {
        if (!(rightward ? has_right : has_left)) continue;
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
  // A chain at a rank: its position, and how many messages it sends, receives and credits (a
  // received message is credited when the sender writes another one over it).
  struct Chain {
    std::uint32_t position = 0;
    std::uint32_t sends = 0;
    std::uint32_t receives = 0;
    std::uint32_t credited = 0;
  };
  const auto chain_at = [&](bool rightward) {
    Chain c;
    c.position = rightward ? rank : n - 1 - rank;
    c.sends = n - 1 - c.position;
    if (rightward) {
      // Middle ranks forward every message (the last one goes to the leftward worker's third
      // input); the last rank receives its result's partial.
      c.receives = rank == 0 ? 0 : (rank == n - 1 ? 1 : n - 1 - rank);
      c.credited = rank == 0 || rank == n - 1 ? 0 : c.receives;
    } else {
      c.receives = rank == n - 1 ? 0 : rank + 1;
      c.credited = rank == n - 1 ? 0 : rank;
    }
    return c;
  };

  for (std::uint32_t run = 0; run < r.runs; ++run) {
    const std::uint32_t pages = r.run_pages[run];
    if (pages == 0) continue;
    const bool rightward = run < page_runs;
    const std::uint32_t i = run % page_runs;
    const CoreCoord core = r.cores[run];
    const CoreCoord other_core = r.cores[rightward ? run + page_runs : run - page_runs];
    const Noc0Coord noc = map.tensix_noc0(core);
    const Noc0Coord other_noc = map.tensix_noc0(other_core);
    const Chain me = chain_at(rightward);
    const Chain other = chain_at(!rightward);
    const bool has_next = rightward ? has_right : has_left;
    const cmd::ChipUnicast to_next = rightward ? to_right : to_left;
    const auto slice_of = [&](std::uint32_t m) { return rightward ? n - 1 - m : m; };
    // The owner's step adds the left partial (region B) as the reduction's third input.
    const bool adds_left_partial = !rightward && rank > 0 && rank + 1 < n;
    // The result goes to the output from the writer's credit stream when its sends stream is bound
    // to the intermediate buffer (a stream writes one tensor).
    const bool keeps_result = rightward ? rank == n - 1 : rank + 1 < n;
    const bool result_in_credit_stream = keeps_result && me.sends > 0;
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
        if (last && adds_left_partial) {
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
    // Reader stream 1 (input): position 0 its raw slices, the others the slice of each received
    // message.
    std::vector<cmd::Command> inputs;
    if (me.position == 0) {
      for (std::uint32_t m = 0; m < me.sends; ++m) inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(slice_of(m)), kRawCbId));
    } else {
      for (std::uint32_t m = 0; m < me.receives; ++m) inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(slice_of(m)), kLocalCbId));
    }

    // Writer stream 0 (intermediate, or the output when it sends nothing): the entry barrier with
    // both neighbouring chips (this worker tells both workers of the next chip; the previous
    // chip's worker of the other chain tells this one), then the messages.
    std::vector<cmd::Command> sends;
    if (has_next) {
      sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, to_next));
      sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, other_noc.x, other_noc.y, to_next));
    }
    sends.push_back(cmd::local_semaphore_wait(barrier, (has_left ? 1 : 0) + (has_right ? 1 : 0)));
    sends.push_back(cmd::local_core_semaphore_set(barrier, 0));
    const std::uint32_t source_cb = me.position == 0 ? kRawCbId : kReducedCbId;
    for (std::uint32_t m = 0; m < me.sends; ++m) {
      // The rightward chain's last message is the next rank's left partial, unless the next rank is
      // the last (it keeps the rightward chain's result).
      const bool to_owner_step = rightward && m + 1 == me.sends && rank + 2 < n;
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
    if (keeps_result && !result_in_credit_stream) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        sends.push_back(cmd::local_write_cb_to_tensor_slice(chunk(out_runs[i], c), kReducedCbId));
      }
    }
    if (result_in_credit_stream) sends.push_back(cmd::local_core_semaphore_inc(sends_done, 1));
    // Writer stream 1 (output): the other chain's credits to its previous rank (this worker's next
    // one), for what the other worker's reader took out of its receive region; then, when stream 0
    // is bound to the intermediate, this worker's result.
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
    if (has_next) {
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
    const auto stream_of = [&](const BufferLayout& layout, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{layout.interpreter_args(map), cmd::encode_stream(cmds),
                                          static_cast<std::uint32_t>(cmds.size())};
    };
    if (!partials.empty()) reader.streams.push_back(stream_of(mid_layout, partials));
    reader.streams.push_back(stream_of(in_layout, inputs));
    writer.streams = {stream_of(me.sends > 0 ? mid_layout : out_layout, sends)};
    if (!credits.empty()) writer.streams.push_back(stream_of(out_layout, credits));
    program.kernels.push_back(interpreter_kernel(core, writer));
    program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, NocIndex::Noc1));

    if (me.receives > 0) {
      kargs::ReduceSpec reduce;
      reduce.in0_cb_id = kPartialCbId;
      reduce.in1_cb_id = kLocalCbId;
      reduce.out_cb_id = kReducedCbId;
      reduce.data_format = reduce_data_format(p.input.dtype);
      reduce.num_blocks = me.receives * packets;
      reduce.pages_per_block = r.packet_pages;
      if (adds_left_partial) {
        reduce.in2_cb_id = kLeftPartialCbId;
        reduce.in2_blocks = packets;
      }
      program.kernels.push_back(reduce_kernel(core, reduce));
    }

    program.circular_buffers.push_back(packet_header_cb(core));
    const std::vector<CoreRange> here{CoreRange{core, core}};
    if (me.position == 0) {
      program.circular_buffers.push_back(CircularBufferSpec{kRawCbId, here, p.cb_packets * r.packet_pages, r.page_size});
      continue;
    }
    program.circular_buffers.push_back(CircularBufferSpec{kPartialCbId, here, 2 * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kLocalCbId, here, p.cb_packets * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(CircularBufferSpec{kReducedCbId, here, chunk_pages, r.page_size});
    if (adds_left_partial) {
      program.circular_buffers.push_back(CircularBufferSpec{kLeftPartialCbId, here, chunk_pages, r.page_size});
    }
  }
  return program;
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.input, p.dim, p.input_buffer, p.output_buffer, p.intermediate_buffer, p.topology,
                     p.line_algorithm, p.num_links, p.workers_per_link,
                     p.groups, p.mode, p.fabric, p.barrier_semaphore, p.legacy, p.first_worker, p.packet_size_in_pages,
                     p.chunk_packets, p.cb_packets);
}

TensorSpec output_spec(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return legacy::output_spec(params, topology);
  const FabricPlan plan(topology, params.fabric);
  const auto groups = resolve_groups(params.groups, topology, plan);
  return with_dim_scaled(params.input, params.dim, static_cast<std::uint32_t>(groups.front().size()), false);
}

std::string to_string(LineAlgorithm algorithm) {
  return algorithm == LineAlgorithm::TwoSided ? "two_sided" : "wrap";
}

bool needs_intermediate(const Params& params) {
  return params.mode == CclMode::Fabric && params.topology == CclTopology::Line &&
         params.line_algorithm == LineAlgorithm::TwoSided;
}

TensorSpec intermediate_spec(const Params& params, const topo::Topology& topology) {
  TensorSpec spec = output_spec(params, topology);
  spec.shape[0] *= 2;
  return spec;
}

std::uint32_t workers_per_link(const Params& params, const topo::Topology& topology) {
  return workers_per_link_for(params, output_spec(params, topology), params.topology == CclTopology::Ring);
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return one_core_ranges(legacy::worker_cores(params, topology));
  const std::uint32_t per_link =
      (params.topology == CclTopology::Ring || needs_intermediate(params) ? 2 : 1) * workers_per_link(params, topology);
  return one_core_ranges(worker_cores(topology, params.first_worker, per_link * params.num_links, kOp));
}

void validate(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return legacy::validate(params, topology);
  resolve(params, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return legacy::build(params, topology);
  const Resolved r = resolve(params, topology);
  MeshWorkload workload;
  workload.name = kOp;
  for (const FabricGroup& g : r.groups) {
    for (std::uint32_t rank = 0; rank < g.size(); ++rank) {
      workload.programs[g.chips[rank]] = r.two_sided ? two_sided_line_program(params, topology, r, g, rank)
                                                     : chip_program(params, topology, r, g, rank);
    }
  }
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  if (params.mode == CclMode::Legacy) return legacy::reference_outputs(params, topology, inputs_by_rank);
  const Resolved r = resolve(params, topology);
  const std::uint32_t n = r.group_size;
  if (inputs_by_rank.size() != n) {
    throw CclParamsError(
        fmt::format("reduce_scatter reference: {} inputs for a group of {}", inputs_by_rank.size(), n));
  }
  // slices[rank][s]: rank's input slice s, in the output's page order.
  std::vector<std::vector<reference::Bytes>> slices(n);
  for (std::uint32_t rank = 0; rank < n; ++rank) {
    for (std::uint32_t s = 0; s < n; ++s)
      slices[rank].push_back(reference::slice(inputs_by_rank[rank], params.input, params.dim, n, s));
  }
  std::vector<reference::Bytes> out(n);
  if (r.two_sided) {
    // fold(N-1, ..., s), then + fold(0, ..., s-1) for 0 < s; the last slice fold(0, ..., N-1).
    const auto fold = [&](std::uint32_t s, std::uint32_t first, std::uint32_t last) {
      std::vector<std::span<const std::byte>> parts;
      for (std::uint32_t k = first;; k = first < last ? k + 1 : k - 1) {
        parts.push_back(slices[k][s]);
        if (k == last) break;
      }
      return reference::sum_in_order(parts, params.input.dtype);
    };
    for (std::uint32_t s = 0; s < n; ++s) {
      if (s == n - 1) {
        out[s] = fold(s, 0, n - 1);
        continue;
      }
      out[s] = fold(s, n - 1, s);
      if (s > 0) {
        const reference::Bytes left = fold(s, 0, s - 1);
        out[s] = reference::sum_in_order({out[s], left}, params.input.dtype);
      }
    }
    return out;
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    out[s].resize(slices[0][s].size());
    std::uint64_t first_page = 0;
    for (std::uint32_t run = 0; run < r.runs; ++run) {
      const bool up = is_up(r, run);
      const std::uint64_t offset = first_page * r.page_size;
      const std::uint64_t bytes = std::uint64_t{r.run_pages[run]} * r.page_size;
      first_page += r.run_pages[run];
      if (bytes == 0) continue;
      std::vector<std::span<const std::byte>> parts;
      for (std::uint32_t k = 1; k <= n; ++k) {
        const std::uint32_t rank = up ? (s + k) % n : (s + n * k - k) % n;
        parts.push_back(std::span<const std::byte>(slices[rank][s]).subspan(offset, bytes));
      }
      const reference::Bytes sum = reference::sum_in_order(parts, params.input.dtype);
      std::memcpy(out[s].data() + offset, sum.data(), bytes);
    }
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter
