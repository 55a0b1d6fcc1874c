#include "runtime/ccl/all_gather/ring_relay.hpp"

#include <algorithm>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_gather::ring_relay {
namespace {

constexpr std::uint32_t kOwnCbId = kDataCbId;  // this chip's input run, read once
constexpr std::uint32_t kRelayCbId = 1;        // landed chunks re-read from the output

// Pages [first, first + count) of a worker's run of one slice.
struct Portion {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
};

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// What a worker sends of the slice k hops behind it (k = 0: its own), for k = 0 .. H-1: the
// pages the chip k + 1 hops from the slice's origin gets from this direction.
std::vector<Portion> portions(BidirectionalMode mode, std::uint32_t n, bool up, std::uint32_t run_pages) {
  const Portion whole{0, run_pages};
  if (mode == BidirectionalMode::SplitTensor) return std::vector<Portion>(n - 1, whole);
  if (n % 2 == 1) return std::vector<Portion>((n - 1) / 2, whole);
  // Even ring: N/2 slices each way, the farthest (the chip N/2 away gets it from both sides)
  // split, the first half up and the rest down (REFERENCE 7.4).
  std::vector<Portion> out(n / 2, whole);
  const std::uint32_t up_half = ceil_div(run_pages, 2);
  out.back() = up ? Portion{0, up_half} : Portion{up_half, run_pages - up_half};
  return out;
}

// Pages per synchronised chunk: chunks_per_sync packets (kFitChunksPerSync: fitted to the run),
// grown by whole packets until the whole op's chunks fit an 8-bit cumulative wait (REFERENCE 4.11).
std::uint32_t sync_pages_for(const std::vector<Portion>& sent, std::uint32_t chunks_per_sync,
                             std::uint32_t packet_pages) {
  std::uint32_t total_pages = 0;
  std::uint32_t run_pages = 0;
  for (const Portion& s : sent) {
    total_pages += s.count;
    run_pages = std::max(run_pages, s.count);
  }
  if (chunks_per_sync == kFitChunksPerSync) chunks_per_sync = fitted_chunks_per_sync(ceil_div(run_pages, packet_pages));
  std::uint32_t pages = std::max(chunks_per_sync * packet_pages,
                                 ceil_div(ceil_div(total_pages, kMaxInlineValue), packet_pages) * packet_pages);
  const auto chunks = [&](std::uint32_t size) {
    std::uint32_t total = 0;
    for (const Portion& s : sent) total += ceil_div(s.count, size);
    return total;
  };
  // Each slice sent is at least one chunk, however large: past kMaxInlineValue slices no chunk
  // size fits (resolve refuses such a ring, slices_per_worker).
  std::uint32_t slices_sent = 0;
  for (const Portion& s : sent) slices_sent += s.count > 0 ? 1 : 0;
  CCLMESH_CHECK(slices_sent <= kMaxInlineValue, "all_gather relay: more slices than an inline wait counts");
  while (chunks(pages) > kMaxInlineValue) pages += packet_pages;
  return pages;
}

api::TensorSlice chunk_of(const api::TensorSlice& run, std::uint32_t first_page, std::uint32_t pages) {
  api::TensorSlice c = run;
  c.worker_slice_offset = api::Shape4D{0, 0, 0, run.worker_slice_offset.x + first_page};
  c.worker_slice_shape = api::Shape4D{1, 1, 1, pages};
  return c;
}

kargs::InterpreterStreamSpec stream(const kargs::TensorArgs& args, const std::vector<cmd::Command>& commands) {
  return kargs::InterpreterStreamSpec{args, cmd::encode_stream(commands), static_cast<std::uint32_t>(commands.size())};
}

}  // namespace

std::uint32_t slices_per_worker(BidirectionalMode mode, std::uint32_t n) {
  if (mode == BidirectionalMode::SplitTensor) return n - 1;
  return n % 2 == 1 ? (n - 1) / 2 : n / 2;
}

std::uint32_t fitted_chunks_per_sync(std::uint32_t run_packets) {
  return std::clamp(run_packets / kMinChunksPerRun, 1u, kMaxFitChunksPerSync);
}

Program chip_program(const ChipGather& chip, const topo::Topology& topology) {
  const Params& p = *chip.params;
  const FabricGroup& g = *chip.group;
  const std::uint32_t n = g.size();
  const std::uint32_t rank = chip.rank;
  // Only a line's positions can differ from its ranks (fabric_order); the relay runs on rings.
  CCLMESH_CHECK(g.positions_are_ranks(), "all_gather relay: a ring group whose positions are not its ranks");
  const ChipId chip_id = g.chips[rank];
  const ChipCoreMap map = chip_core_map(topology, chip_id);
  const bool split = chip.mode == BidirectionalMode::SplitTensor;
  const std::uint32_t workers = chip.workers_per_direction;
  // SPLIT_TENSOR: up and down workers own different runs of the input; FULL_TENSOR: the same run.
  // Each link and direction's run is cut again among its workers.
  const std::uint32_t num_runs = (split ? 2 : 1) * p.num_links * workers;

  const api::TensorSlice in_whole{chip.in_pages, chip.in_pages, {0, 0, 0, 0}, chip.in_pages, {0, 0, 0, 0}};
  const std::vector<api::TensorSlice> in_runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(in_whole, num_runs);
  // The output runs of the slice from `origin`, the same split as the input's.
  const auto out_runs = [&](std::uint32_t origin) {
    api::TensorSlice slice{chip.out_pages, chip.in_pages, {0, 0, 0, 0}, chip.in_pages, {0, 0, 0, 0}};
    set_dim(slice.tensor_slice_offset, p.dim, origin * dim_of(chip.in_pages, p.dim));
    return cmd::split_tensor_slice_across_workers_wrapped_page_aligned(slice, num_runs);
  };
  const cmd::GlobalSemaphoreAddress recv{p.done_semaphore->address};

  // Worker (link, direction, i) and its run of the input.
  const auto worker_index = [&](std::uint32_t link, bool up, std::uint32_t i) {
    return (kDirectionsPerLink * link + (up ? 0 : 1)) * workers + i;
  };
  const auto run_of = [&](std::uint32_t link, bool up, std::uint32_t i) {
    return (split && !up ? p.num_links + link : link) * workers + i;
  };
  const auto pages_of = [&](std::uint32_t run) {
    return static_cast<std::uint32_t>(api::volume(in_runs[run].worker_slice_shape));
  };
  const auto sends_anything = [&](std::uint32_t link, bool up, std::uint32_t i) {
    std::uint32_t sent_pages = 0;
    for (const Portion& s : portions(chip.mode, n, up, pages_of(run_of(link, up, i)))) sent_pages += s.count;
    return sent_pages > 0 || p.barrier_semaphore.has_value();
  };

  Program program;
  // Several workers per link and direction share the router's one worker channel through a
  // fabric mux (REFERENCE 6.3, 7.4: links x 2 directions x (1 mux + N workers)), its clients the
  // workers of that direction that run. The muxes come first (their slot CBs' addresses).
  std::vector<api::FabricConnectionConfig> mux_client(chip.cores.size());
  if (workers > 1) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      for (const bool up : {true, false}) {
        std::vector<std::uint32_t> clients;
        for (std::uint32_t i = 0; i < workers; ++i) {
          if (sends_anything(link, up, i)) clients.push_back(worker_index(link, up, i));
        }
        if (clients.empty()) continue;
        const CoreCoord mux_core = chip.cores[cores_before_muxes(p.num_links, workers, chip.grid_width) +
                                              kDirectionsPerLink * link + (up ? 0 : 1)];
        const std::vector<api::FabricConnectionConfig> configs =
            add_fabric_mux(program, *chip.plan, g.port(link), chip_id, mux_core, up == g.up_is_forward,
                           map.tensix_noc0(mux_core), static_cast<std::uint32_t>(clients.size()));
        for (std::size_t c = 0; c < clients.size(); ++c) mux_client[clients[c]] = configs[c];
      }
    }
  }
  for (std::uint32_t link = 0; link < p.num_links; ++link) {
    for (const bool up : {true, false}) {
      for (std::uint32_t i = 0; i < workers; ++i) {
        const std::uint32_t w = worker_index(link, up, i);
        const CoreCoord core = chip.cores[w];
        const std::uint32_t run = run_of(link, up, i);
        const std::uint32_t run_pages = pages_of(run);
        const std::vector<Portion> sent = portions(chip.mode, n, up, run_pages);
        const std::vector<Portion> up_sent = portions(chip.mode, n, true, run_pages);
        if (!sends_anything(link, up, i)) continue;  // nothing to send or to synchronise

        // Up sends to rank + 1, down to rank - 1; the fabric direction follows the group's order.
        const bool forward = up == g.up_is_forward;
        const cmd::ChipUnicast to_next{1, forward};
        const cmd::ChipMulticast to_next_and_here = g.multicast(rank, up ? 1 : 0, up ? 0 : 1);
        // The own run is written here once: by the up worker, and by the down worker for the pages
        // the up worker does not own (all of its run in SPLIT_TENSOR, its half on a 2-chip ring).
        const bool writes_own_here = up || split || up_sent.front().count < run_pages;
        const std::uint32_t next = up ? (rank + 1) % n : (rank + n - 1) % n;
        const std::uint32_t opposite = worker_index(link, !up, i);
        const Noc0Coord next_opposite = chip_core_map(topology, g.chips[next]).tensix_noc0(chip.cores[opposite]);
        const Noc0Coord noc = map.tensix_noc0(core);
        const std::uint32_t sync_pages = sync_pages_for(sent, p.chunks_per_sync, chip.packet_pages);

        std::vector<cmd::Command> own_reads;   // reader stream 0, on the input
        std::vector<cmd::Command> relay_reads;  // reader stream 1, on the output
        std::vector<cmd::Command> writes;       // writer, on the output
        if (p.barrier_semaphore) {
          // The chip written to has started this op (its previous op is done with the output): its
          // opposite worker, which writes back to this chip, tells this one.
          const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
          writes.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, next_opposite.x, next_opposite.y, to_next));
          writes.push_back(cmd::local_semaphore_wait(barrier, 1));
          writes.push_back(cmd::local_core_semaphore_set(barrier, 0));
        }
        std::uint32_t landed_before = 0;  // chunks of the slices before k the previous chip sent
        for (std::uint32_t k = 0; k < sent.size(); ++k) {
          const Portion s = sent[k];
          const std::uint32_t origin = up ? (rank + n - k) % n : (rank + k) % n;
          const api::TensorSlice out_run = out_runs(origin)[run];
          if (k == 0 && s.count > 0) {
            own_reads.push_back(cmd::read_tensor_slice_to_cb(chunk_of(in_runs[run], s.first, s.count), kOwnCbId));
          }
          const Portion received = k > 0 ? sent[k - 1] : Portion{};
          CCLMESH_CHECK(k == 0 || (s.first >= received.first && s.first + s.count <= received.first + received.count),
                        "all_gather relay: a chip forwards only pages it received");
          for (std::uint32_t first = s.first; first < s.first + s.count; first += sync_pages) {
            const std::uint32_t count = std::min(sync_pages, s.first + s.count - first);
            const api::TensorSlice chunk = chunk_of(out_run, first, count);
            if (k > 0) {
              // Every received chunk up to the one holding this chunk's last page has landed.
              relay_reads.push_back(
                  cmd::local_semaphore_wait(recv, landed_before + ceil_div(first + count - received.first,
                                                                           sync_pages)));
              relay_reads.push_back(cmd::read_tensor_slice_to_cb(chunk, kRelayCbId));
            }
            if (k == 0 && writes_own_here) {
              writes.push_back(cmd::fabric_write_cb_to_tensor_slice(chunk, kOwnCbId, to_next_and_here));
            } else {
              writes.push_back(cmd::fabric_write_cb_to_tensor_slice(chunk, k == 0 ? kOwnCbId : kRelayCbId, to_next));
            }
            // recv of the same worker on the next chip (every chip has the same core map).
            writes.push_back(cmd::fabric_unicast_semaphore_inc(recv, 1, noc.x, noc.y, to_next));
          }
          if (k > 0) landed_before += ceil_div(received.count, sync_pages);
        }
        // The previous chip's last slice is not forwarded: wait for all of it, then reset for the
        // next op (waits never reset, REFERENCE 4.11).
        const std::uint32_t all_landed = landed_before + ceil_div(sent.back().count, sync_pages);
        if (all_landed > 0) {
          relay_reads.push_back(cmd::local_semaphore_wait(recv, all_landed));
          relay_reads.push_back(cmd::local_core_semaphore_set(recv, 0));
        }

        kargs::InterpreterSpec writer;
        writer.packet_header_cb_id = kPacketHeaderCbId;
        writer.packet_size_in_pages = chip.packet_pages;
        if (workers == 1) {
          connect_to_fabric(program, writer, *chip.plan, g.port(link), chip_id, core, forward, !forward);
        } else {
          connect_to_fabric_mux(program, writer, core, forward, mux_client[w]);
        }
        program.circular_buffers.push_back(packet_header_cb(core));
        const std::uint32_t cb_pages = chip.packet_pages * p.cb_packets;
        program.circular_buffers.push_back(
            CircularBufferSpec{kOwnCbId, {CoreRange{core, core}}, cb_pages, chip.page_size});
        program.circular_buffers.push_back(
            CircularBufferSpec{kRelayCbId, {CoreRange{core, core}}, cb_pages, chip.page_size});

        std::vector<kargs::InterpreterStreamSpec> reader_streams;
        if (!own_reads.empty()) reader_streams.push_back(stream(chip.in_args, own_reads));
        if (!relay_reads.empty()) reader_streams.push_back(stream(chip.out_args, relay_reads));
        const kargs::InterpreterStreamSpec writer_stream = stream(chip.out_args, writes);
        if (!p.split_reader_writer) {
          // One interpreter runs every stream round robin (REFERENCE 4.8).
          writer.streams = reader_streams;
          writer.streams.push_back(writer_stream);
          program.kernels.push_back(interpreter_kernel(core, writer));
          continue;
        }
        if (!reader_streams.empty()) {
          kargs::InterpreterSpec reader;
          reader.packet_header_cb_id = kPacketHeaderCbId;
          reader.packet_size_in_pages = chip.packet_pages;
          reader.streams = reader_streams;
          program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, NocIndex::Noc1));
        }
        writer.streams = {writer_stream};
        program.kernels.push_back(interpreter_kernel(core, writer));
      }
    }
  }
  return program;
}

}  // namespace cclmesh::runtime::ccl::all_gather::ring_relay
