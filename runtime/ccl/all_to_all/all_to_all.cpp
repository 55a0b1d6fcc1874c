#include "runtime/ccl/all_to_all/all_to_all.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/all_to_all/round_pieces.hpp"
#include "runtime/ccl/common/dim_split.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/ccl/common/op_buffers.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_to_all {
namespace {

constexpr const char* kOp = "all_to_all";
// REFERENCE 7.6: all_to_all_async coalesces 2 tiles per packet.
constexpr std::uint32_t kDefaultPagesPerPacket = 2;
// Rounds a sender interleaves its destinations over by default (Params::rounds; pieces keep at
// least one packet). Measured (docs/performance.md): a 4-line's middle link idled while the end
// chips sent their last, one-hop chunks, and 256 rounds took the 256 MiB calibration row from
// 40150 to 34440 us; finer pieces are faster still (16 MiB: 2185 us in 16 rounds, 1813 us in
// one-packet pieces), and 256 keeps a stream at 512 commands per destination, the scale of
// reduce's 255 synchronised chunks. Until session 29 only lines of at most 4 chips interleaved:
// the routers sent their acks for the other direction only when their own data left the TX
// queue idle, so a direction that every sender saturated at once starved the other. With acks
// before data (kernels/fabric_router.cpp) 256 rounds win on every shape measured, 16 MiB
// --no-data: T3K 8-line 5087.78 -> 4035.52 us, 8-ring 2310.79 -> 1530.10 (256 MiB: 40784.04 ->
// 29124.47), Galaxy columns 2357.89 -> 1697.89, rows 5202.45 -> 3993.19, ring:8/2 on 2 links
// 985.94 -> 936.12, torus:4x4 rows 875.91 -> 763.66 (docs/performance.md).
constexpr std::uint32_t kDefaultRounds = 256;
// The worker cores from `first` on that the op may take: the rest of the common worker grid.
std::uint32_t available_cores(const topo::Topology& topology, CoreCoord first) {
  const CoreCoord grid = common_worker_grid(topology);
  const std::uint64_t start = std::uint64_t{first.y} * grid.x + first.x;
  const std::uint64_t all = std::uint64_t{grid.x} * grid.y;
  return first.x >= grid.x || start >= all ? 0 : static_cast<std::uint32_t>(all - start);
}

// The op's groups placed on the fabric (place_groups), and what this op works out from them.
struct Resolved : PlacedGroups {
  std::uint32_t page_size = 0;   // of the pages the workers move (a row piece for row pieces)
  // ROW_MAJOR: pieces each chunk of a row moves in along dim 3; along dims 0-2, pieces each row
  // moves in (outer_row_pieces).
  std::uint32_t row_pieces = 1;
  std::uint32_t last_piece_bytes = 0;  // dims 0-2: a row's last piece when shorter than page_size (fabric_pages)
  api::Shape4D pages;            // the tensor in those pages
  std::uint32_t packet_pages = 0;
  std::uint32_t rounds = 0;
  SenderPlan senders;
  std::vector<CoreCoord> cores;  // SenderPlan::core_count(): senders, the copy workers, muxes
};

// Increments the done core at `position` receives: one per chunk (or half) each link's sender
// sends to it, and its own after its share of the local copy. The other links' copy workers send
// none: a kernel ends only once its writes have landed (the interpreter's closing write barrier),
// and the op with its last kernel.
std::uint32_t expected_done(const FabricGroup& g, std::uint32_t position, std::uint32_t num_links) {
  std::uint32_t count = 0;
  for (std::uint32_t from = 0; from < g.size(); ++from) {
    for (const bool up : {true, false}) {
      for (const Send& s : sends_of(g, from, up)) count += s.dest == position ? 1 : 0;
    }
  }
  return count * num_links + 1;
}

// ROW_MAJOR along dim 3 (row_pieces.hpp): every row holds one chunk for each of the N ranks. The
// workers address input and output rows alike in N x q pieces, chunk j being pieces [j q, (j+1) q)
// of every row (q > 1 only when a chunk is wider than a fabric payload), and the exchange is then
// sliced like a TILE one along dim 3 with q tiles per chunk.
std::uint32_t pieces_per_chunk_row(std::uint32_t row_bytes, std::uint32_t n, std::uint32_t max_payload_bytes) {
  const std::uint32_t chunk_bytes = row_bytes / n;
  require_row_piece_alignment(
      chunk_bytes, kOp, fmt::format("cuts each {} B row into {} chunks, one per chip: a chunk is {} B", row_bytes, n,
                                    chunk_bytes));
  // Pieces that fill a payload, as every copy's: a sender's rounds are whole packets
  // (round_pieces.hpp), so a 4416 B chunk's 23 pieces of 192 B go 22 a packet, not 2 x 2208 B.
  // T3K 8-line 4416 B chunks 2566.64 -> 2173.78 us (docs/collectives.md "Rounds in whole packets
  // (session 39)"); with rounds cut at rows, every row ended in a packet of one piece and
  // FillPayload ran slower than Fewest (session 38).
  return fabric_row_pieces(chunk_bytes, max_payload_bytes, RowPieceChoice::FillPayload, kOp,
                           "chunk of a ROW_MAJOR row");
}

// ROW_MAJOR along dims 0-2: chunks are whole rows, so a row moves whole unless it is wider than a
// fabric payload; then in 32 B-aligned pieces that fill one (fabric_pages, FillPayload), input and
// output addressed q pieces per row and sliced like tiles, q per row.
FabricPages outer_row_pieces(const Params& p) {
  if (p.tensor.layout != Layout::RowMajor) return FabricPages{page_size_bytes(p.tensor), 1, 1, 0};
  return fabric_pages(page_size_bytes(p.tensor), 1, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  if (p.mode == CclMode::Legacy) {
    throw CclParamsError(
        "all_to_all: legacy EDM mode is not supported: the 2024 per-op EDMs carried only all_gather, "
        "reduce_scatter and all_reduce; all_to_all is a fabric-era op (REFERENCE 5, 7.6); use mode fabric");
  }
  Resolved r;
  r.page_size = page_size_bytes(p.tensor);
  r.pages = shape_in_pages(p.tensor);
  const bool rows = cuts_rows(p.tensor, p.dim);
  if (!rows) require_page_aligned_dim(p.tensor, p.dim, kOp, "tensor");
  static_cast<PlacedGroups&>(r) = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);
  const std::uint32_t n = r.group_size;
  const std::uint32_t farthest = p.topology == CclTopology::Ring ? n / 2 : n - 1;
  if (farthest > kMaxFabricHops) {
    throw CclParamsError(fmt::format("all_to_all: a {} of {} chips sends over {} hops; a fabric route holds at most "
                                     "{} (REFERENCE 6.5)",
                                     to_string(p.topology), n, farthest, kMaxFabricHops));
  }
  require_dim_splits_evenly(p.tensor, p.dim, n, kOp, "dim", "chunks");
  if (rows) {
    r.row_pieces = pieces_per_chunk_row(r.page_size, n, p.fabric.max_payload_bytes);
    r.page_size /= n * r.row_pieces;
    r.pages.x = n * r.row_pieces;
  } else {
    const FabricPages pieces = outer_row_pieces(p);
    r.row_pieces = pieces.pieces_per_page;
    r.page_size = pieces.page_bytes;
    r.last_piece_bytes = pieces.last_piece_bytes;
    r.pages.x *= r.row_pieces;
  }
  for (const FabricGroup& g : r.groups) {
    for (std::uint32_t position = 0; position < n; ++position) {
      const std::uint32_t done = expected_done(g, position, p.num_links);
      if (done > kMaxInlineValue) {
        throw CclParamsError(fmt::format("all_to_all: chip {} waits for {} increments; an inline wait target holds "
                                         "at most {} (REFERENCE 4.11)",
                                         g.chips[position], done, kMaxInlineValue));
      }
    }
  }
  require_fabric_input_output_buffers(topology, r.all_chips, p.input_buffer, p.tensor, p.output_buffer, p.tensor, kOp);
  if (p.cb_packets == 0) throw CclParamsError("all_to_all: cb_packets is 0; expected at least 1");
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  // tt-metal's 2 tiles per packet fill a payload (2 x 2 KiB bf16 tiles of a 4352 B one); 2 row
  // pieces, as small as 32 B each, would not: a packet of them would pay a header and a router
  // slot for 64 B (REFERENCE 6.4). Row pieces fill a payload as all_gather's do, and the writer
  // still cuts a packet where its pieces are not contiguous (a scatter write of at most 4 runs).
  // Measured (docs/collectives.md): T3K 8-ring, 256 B chunks, 2 MiB: 1243.24 -> 732.45 us. So do
  // the pieces of rows wider than a payload (T3K 8-ring, 32 rows of 4384 B, 137 x 32 B, along dim
  // 2: 719.18 -> 25.26 us).
  if (p.packet_size_in_pages == 0 && !rows && r.row_pieces == 1) {
    r.packet_pages = std::min(r.packet_pages, kDefaultPagesPerPacket);
  }
  r.rounds = rounds_choice(p, r.group_size).rounds;
  r.senders = senders_choice(p, topology, r.group_size).plan;
  r.cores = worker_cores(topology, p.first_worker, r.senders.core_count(), kOp);
  require_semaphore_on(p.done_semaphore, {r.cores[r.senders.done_worker()]}, kOp, "done_semaphore");
  return r;
}

// The program of the chip at `position` of group `g`, whose rank is `rank`: chunk j of its input
// goes to the chip of rank j, into chunk `rank` there.
Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t position) {
  const std::uint32_t n = g.size();
  const std::uint32_t rank = g.rank_at(position);
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const BufferLayout in_layout = buffers.layout(p.input_buffer);
  const BufferLayout out_layout = buffers.layout(p.output_buffer);
  kargs::TensorArgs in_args = in_layout.interpreter_args(map);
  kargs::TensorArgs out_args = out_layout.interpreter_args(map);
  if (cuts_rows(p.tensor, p.dim) || r.row_pieces > 1) {  // x is the pieces a row moves in
    in_args = in_row_pieces(in_args, r.page_size, r.pages.x, r.last_piece_bytes);
    out_args = in_row_pieces(out_args, r.page_size, r.pages.x, r.last_piece_bytes);
  }
  // Input and output have the same shape, so chunk j of either is the same slice.
  const std::vector<api::TensorSlice> chunks = cmd::compute_page_aligned_slices(n, r.pages, p.dim);
  // Link k's share of a chunk: pages [first, first + count) of it, part k of L (of its half:
  // part h * L + k of 2L), split as the interpreter's workers split a slice.
  const std::uint32_t links = p.num_links;
  const auto share = [&](std::uint32_t index, std::optional<std::uint32_t> half, std::uint32_t link) {
    const PageSpan whole{0, static_cast<std::uint32_t>(api::volume(chunks[index].tensor_slice_shape))};
    return half ? part_of(whole, 2 * links, *half * links + link) : part_of(whole, links, link);
  };
  // Pages of chunk `index` as a slice: the chunk itself when the run is all of it.
  const auto slice_of = [&](std::uint32_t index, PageSpan run) {
    api::TensorSlice slice = chunks[index];
    if (run.first == 0 && run.count == api::volume(slice.tensor_slice_shape)) return slice;
    slice.worker_slice_shape = api::Shape4D{1, 1, 1, run.count};
    slice.worker_slice_offset = api::Shape4D{0, 0, 0, run.first};
    return slice;
  };
  const std::uint32_t done_index = r.senders.done_worker();
  const Noc0Coord done_core = map.tensix_noc0(r.cores[done_index]);
  const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
  const std::vector<Sender> senders = senders_at(g, position, r.senders);

  // The workers in core order: per link its senders, then per link a local-copy worker (no sends).
  struct Worker {
    std::uint32_t core_index = 0;
    std::uint32_t link = 0;
    const Sender* sender = nullptr;  // nullptr: link `link`'s copy worker
  };
  std::vector<Worker> workers;
  for (std::uint32_t link = 0; link < links; ++link) {
    for (const Sender& s : senders) workers.push_back({link * r.senders.slots_per_link + s.slot, link, &s});
  }
  for (std::uint32_t link = 0; link < links; ++link) workers.push_back({r.senders.copy_worker(link), link, nullptr});

  Program program;
  // More than one sender of a link and direction share the router's worker channel through a
  // fabric mux (REFERENCE 6.3), as reduce_scatter's workers_per_link > 1 do. The muxes come first
  // (their slot CBs' addresses are fixed before the senders' CBs).
  std::vector<std::optional<api::FabricConnectionConfig>> mux_client(workers.size());
  for (std::uint32_t link = 0; link < links; ++link) {
    for (const bool up : {true, false}) {
      std::vector<std::size_t> clients;
      for (std::size_t w = 0; w < workers.size(); ++w) {
        const Sender* s = workers[w].sender;
        if (s != nullptr && workers[w].link == link && s->up == up) clients.push_back(w);
      }
      if (clients.size() < 2) continue;
      const CoreCoord mux_core = r.cores[r.senders.mux_core(link, up)];
      const std::vector<api::FabricConnectionConfig> configs =
          add_fabric_mux(program, r.plan, g.port(link), chip, mux_core, up == g.up_is_forward,
                         map.tensix_noc0(mux_core), static_cast<std::uint32_t>(clients.size()));
      for (std::size_t c = 0; c < clients.size(); ++c) mux_client[clients[c]] = configs[c];
    }
  }
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const bool is_copy_worker = workers[w].sender == nullptr;
    const bool is_done_worker = workers[w].core_index == done_index;
    const bool up = is_copy_worker || workers[w].sender->up;
    const std::uint32_t link = workers[w].link;
    const std::vector<Send> sends = is_copy_worker ? std::vector<Send>{} : workers[w].sender->sends;
    const CoreCoord core = r.cores[workers[w].core_index];
    std::vector<cmd::Command> reader;
    std::vector<cmd::Command> writer;
    bool forward = false;
    bool backward = false;
    // Each destination's share is cut into at most `rounds` pieces of whole packets
    // (round_pieces.hpp) and the sender takes one piece of every destination per round (farthest
    // first within a round), so every link a sender feeds carries its flows at once, as
    // tt-metal's several workers per link do, instead of one destination after another (then a
    // line's middle link idles while the end chips send their last, one-hop chunks). A
    // destination's increment follows its last piece on the same route, so it still arrives
    // after all of its data.
    struct Flow {
      cmd::ChipUnicast way;
      std::vector<api::TensorSlice> from;
      std::vector<api::TensorSlice> to;
    };
    std::vector<Flow> flows;
    std::uint32_t rounds = 1;
    for (const Send& s : sends) {
      const cmd::ChipUnicast route = g.route(position, s.dest);
      // The split farthest chunk of an even ring goes this worker's way, whatever route() picks.
      const cmd::ChipUnicast way{route.distance_in_hops, s.half ? up == g.up_is_forward : route.forward};
      (way.forward ? forward : backward) = true;
      const std::uint32_t dest_rank = g.rank_at(s.dest);
      const PageSpan run = share(dest_rank, s.half, link);  // the same pages of chunk `dest_rank` and chunk `rank`
      const std::vector<PageSpan> pieces = round_pieces(run, r.rounds, r.packet_pages);
      rounds = std::max(rounds, static_cast<std::uint32_t>(pieces.size()));
      Flow flow{way, {}, {}};
      for (const PageSpan& piece : pieces) {
        flow.from.push_back(slice_of(dest_rank, piece));
        flow.to.push_back(slice_of(rank, piece));
      }
      flows.push_back(std::move(flow));
    }
    for (std::uint32_t round = 0; round < rounds; ++round) {
      for (const Flow& flow : flows) {
        if (round >= flow.from.size()) continue;
        if (api::volume(flow.from[round].worker_slice_shape) > 0) {
          reader.push_back(cmd::read_tensor_slice_to_cb(flow.from[round], kDataCbId));
          writer.push_back(cmd::fabric_write_cb_to_tensor_slice(flow.to[round], kDataCbId, flow.way));
        }
        if (round + 1 == flow.from.size()) {
          writer.push_back(cmd::fabric_unicast_semaphore_inc(done, 1, done_core.x, done_core.y, flow.way));
        }
      }
    }
    if (is_copy_worker) {
      // Link k's part of the chip's own chunk, the part link k's senders take of every other one.
      const PageSpan part = share(rank, std::nullopt, link);
      if (part.count > 0) {
        reader.push_back(cmd::read_tensor_slice_to_cb(slice_of(rank, part), kDataCbId));
        writer.push_back(cmd::local_write_cb_to_tensor_slice(slice_of(rank, part), kDataCbId));
      }
    }
    if (is_done_worker) {
      writer.push_back(cmd::local_core_semaphore_inc(done, 1));
      writer.push_back(cmd::local_semaphore_wait(done, expected_done(g, position, links)));
      writer.push_back(cmd::local_core_semaphore_set(done, 0));
    }
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kPacketHeaderCbId;
    spec.packet_size_in_pages = r.packet_pages;
    if (mux_client[w]) {
      CCLMESH_CHECK(forward != backward && forward == (up == g.up_is_forward),
                    "an all_to_all sender on a mux sends its mux's way only");
      connect_to_fabric_mux(program, spec, core, forward, *mux_client[w]);
    } else {
      connect_to_fabric(program, spec, r.plan, g.port(link), chip, core, forward, backward);
    }
    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(data_cb(core, r.page_size, r.packet_pages * p.cb_packets));
    const kargs::InterpreterStreamSpec reader_stream{in_args, cmd::encode_stream(reader),
                                                     static_cast<std::uint32_t>(reader.size())};
    const kargs::InterpreterStreamSpec writer_stream{out_args, cmd::encode_stream(writer),
                                                     static_cast<std::uint32_t>(writer.size())};
    add_copy_kernels(program, core, spec, reader_stream, writer_stream, true);
  }
  return program;
}

// The op per shape its groups run as (groups_by_shape): one part, `params`, unless a ring group
// runs as a line around a down link; that part sends as a line (its senders are a ring's: an up
// and a down one per link, so the done semaphore's cores are the same), and its `rounds` default
// is a line's.
std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  return params_by_shape(params, topology, [](Params&) {});
}

}  // namespace

RoundsChoice rounds_choice(const Params& params, std::uint32_t group_size) {
  if (params.rounds != 0) {
    return {params.rounds, fmt::format("asked for: {} round{}", params.rounds, params.rounds == 1 ? "" : "s")};
  }
  if (params.topology == CclTopology::Ring) {
    return {kDefaultRounds, fmt::format("auto: a ring interleaves its destinations over {} rounds", kDefaultRounds)};
  }
  return {kDefaultRounds,
          fmt::format("auto: a line of {} chips interleaves its destinations over {} rounds", group_size, kDefaultRounds)};
}

std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology, std::uint32_t group_size) {
  std::vector<PartChoice> choices;
  for (const Params& part : parts_by_shape(params, topology)) {
    choices.push_back({part.topology, rounds_choice(part, group_size), senders_choice(part, topology, group_size)});
  }
  return choices;
}

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.tensor, p.dim, p.input_buffer, p.output_buffer, p.topology, p.num_links, p.groups, p.mode,
                     p.fabric, p.done_semaphore, p.first_worker, p.packet_size_in_pages, p.cb_packets, p.rounds,
                     p.senders);
}

SenderLayoutChoice senders_choice(const Params& params, const topo::Topology& topology, std::uint32_t group_size) {
  return sender_layout_choice(params.senders, params.topology, group_size, params.num_links,
                              available_cores(topology, params.first_worker), size_bytes(params.tensor));
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  // Every part's workers start at first_worker; the part with the most covers the others'.
  const FabricPlan plan(topology, params.fabric);
  const auto n = static_cast<std::uint32_t>(resolve_groups(params.groups, topology, plan).front().size());
  return most_semaphore_cores(parts_by_shape(params, topology), [&](const Params& part) {
    return one_core_ranges(
        worker_cores(topology, part.first_worker, senders_choice(part, topology, n).plan.worker_cores(), kOp));
  });
}

void validate(const Params& params, const topo::Topology& topology) {
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  MeshWorkload workload = workload_by_shape(kOp, parts_by_shape(params, topology), topology, resolve, chip_program);
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  workload.global_semaphores = workload_semaphores({&params.done_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  // Chunks move by rank whatever shape or order a group runs in: every group's outputs are alike.
  validate(params, topology);
  const FabricPlan plan(topology, params.fabric);
  const auto n = static_cast<std::uint32_t>(resolve_groups(params.groups, topology, plan).front().size());
  if (inputs_by_rank.size() != n) {
    throw CclParamsError(fmt::format("all_to_all reference: {} inputs for a group of {}", inputs_by_rank.size(), n));
  }
  const TensorSpec chunk = with_dim_scaled(params.tensor, params.dim, n, false);
  std::vector<reference::Bytes> out;
  for (std::uint32_t j = 0; j < n; ++j) {
    std::vector<reference::Bytes> parts;
    for (std::uint32_t i = 0; i < n; ++i) {
      parts.push_back(reference::slice(inputs_by_rank[i], params.tensor, params.dim, n, j));
    }
    out.push_back(reference::concat(parts, chunk, params.dim));
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::all_to_all
