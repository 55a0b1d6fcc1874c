#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <utility>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/dim_split.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/ccl/common/op_buffers.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/ccl/reduce_scatter/half_way_ring.hpp"
#include "runtime/ccl/reduce_scatter/one_shot.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_legacy.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/ccl/reduce_scatter/scattered_rows.hpp"
#include "runtime/ccl/reduce_scatter/two_sided_line.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter {
using namespace plan;
namespace {
// One part of the op, all its groups of one shape (parts_by_shape below).
bool part_needs_intermediate(const Params& part);
TensorSpec part_intermediate_spec(const Params& part, const topo::Topology& topology);

bool is_up(const Resolved& r, std::uint32_t run) { return !r.ring || run < r.runs / 2; }

// The chain runs along the fabric, by position (FabricGroup): the next and previous position of a
// worker's chain, up workers sending to position + 1. A chain slice s is the input slice of the
// rank at position s.
std::uint32_t next_position(std::uint32_t n, std::uint32_t position, bool up) {
  return up ? (position + 1) % n : (position + n - 1) % n;
}
std::uint32_t prev_position(std::uint32_t n, std::uint32_t position, bool up) {
  return next_position(n, position, !up);
}

// The chain slice a worker at `position` sends raw (message 0), and the slice of received message m.
std::uint32_t raw_slice(std::uint32_t n, std::uint32_t position, bool up) { return prev_position(n, position, up); }
std::uint32_t received_slice(std::uint32_t n, std::uint32_t position, bool up, std::uint32_t m) {
  return up ? (position + 2 * n - 2 - m) % n : (position + 2 + m) % n;
}

// ROW_MAJOR along dim 3 (scattered_rows.hpp): the fewest pieces an output row moves in, each
// fitting one fabric payload (1 unless a row is wider than a payload).
std::uint32_t pieces_per_output_row(const Params& p, std::uint32_t n) {
  const std::uint32_t row_bytes = scattered_row_bytes(p.input, n);
  return fabric_row_pieces(row_bytes, p.fabric.max_payload_bytes, RowPieceChoice::Fewest, kOp,
                           "ROW_MAJOR output row");
}

// ROW_MAJOR along dims 0-2: whole rows are scattered, so a row moves whole unless it is wider
// than a fabric payload; then in the fewest 32 B-aligned pieces that fit one (fabric_pages),
// every buffer addressed q pieces per row and sliced like tiles, q per row. nullopt: whole pages.
std::optional<FabricPages> outer_row_fabric_pages(const Params& p) {
  if (p.input.layout != Layout::RowMajor || cuts_rows(p.input, p.dim)) return std::nullopt;
  const FabricPages pages =
      fabric_pages(page_size_bytes(p.input), 1, p.fabric.max_payload_bytes, RowPieceChoice::Fewest, kOp);
  if (pages.pieces_per_page == 1) return std::nullopt;
  return pages;
}
// outer_row_fabric_pages' pieces a row (q), 0 for whole pages.
std::uint32_t outer_row_pieces(const Params& p) {
  const std::optional<FabricPages> pages = outer_row_fabric_pages(p);
  return pages ? pages->pieces_per_page : 0;
}

// The output's pages as the workers move them (row pieces for ROW_MAJOR along dim 3 and for wide
// rows) on `n` chips.
std::uint64_t moved_output_pages(const Params& p, std::uint32_t n) {
  const std::uint64_t pages = num_pages(with_dim_scaled(p.input, p.dim, n, false));
  if (cuts_rows(p.input, p.dim)) return pages * pieces_per_output_row(p, n);
  return pages * std::max<std::uint32_t>(outer_row_pieces(p), 1);
}

// The output's pages as the size rule (kLinkPagesForSeveralWorkers, measured on tiles) counts them:
// the moved pages, except that ROW_MAJOR rows wider than a payload count as the tiles of their dtype
// that their bytes fill (rounded up), as all_gather's relay counts them. Counted as one page, a
// 4096 B piece of an 8192 B row gave half the workers of the same bytes as tiles (N300
// [1,1,16,4096] along dim 2: 15.87 us, 14.11 with 4; T3K 8-line [1,1,64,4096]: 110.13, 63.16).
// Counted one page each, a 4384 B row's 137 pieces of 32 B took 4 or 6 workers where 1 is faster
// (session 36, --no-data, dim 2: N300 [1,1,2,2192] 5.14 us with 1, 6.48 with 4, 8.54 with 6;
// [1,1,8,2192] 7.32 with 1, 9.38 with 6); by their bytes they take 1 there and still 4 where 4
// win ([1,1,32,2192]: 19.23 with 1, 17.26 with 4).
std::uint64_t size_rule_output_pages(const Params& p, std::uint32_t n) {
  if (outer_row_pieces(p) == 0) return moved_output_pages(p, n);
  TensorSpec as_tiles = p.input;
  as_tiles.layout = Layout::Tile;
  const std::uint64_t bytes = num_pages(with_dim_scaled(p.input, p.dim, n, false)) * page_size_bytes(p.input);
  const std::uint64_t tile_bytes = page_size_bytes(as_tiles);
  return (bytes + tile_bytes - 1) / tile_bytes;
}

// What each link and direction carries over the op in the size rule's pages: the output's pages
// times the N - 1 slices every link direction passes on, shared by the ring's two directions and
// by the links.
std::uint64_t link_pages(const Params& p, std::uint32_t n) {
  const std::uint64_t directions = p.topology == CclTopology::Ring ? 2 : 1;
  return size_rule_output_pages(p, n) * (n - 1) / (directions * std::max<std::uint32_t>(p.num_links, 1));
}

// A CB packet of the op in the pages the workers move (pages or row pieces), as the chain cuts
// its chunks.
std::uint32_t moved_packet_pages(const Params& p, std::uint32_t n) {
  std::uint32_t page_bytes = page_size_bytes(p.input);
  if (cuts_rows(p.input, p.dim)) {
    page_bytes = page_size_bytes(with_dim_scaled(p.input, p.dim, n, false)) / pieces_per_output_row(p, n);
  } else if (const std::optional<FabricPages> pieces = outer_row_fabric_pages(p)) {
    page_bytes = pieces->page_bytes;
  }
  std::uint32_t packet_pages = packet_size_in_pages(p.packet_size_in_pages, page_bytes, p.fabric.max_payload_bytes);
  if (p.packet_size_in_pages == 0) packet_pages *= kReductionPayloadsPerPacket;
  return packet_pages;
}

// The output's moved pages (pages or row pieces) each link's runs share: a worker's message is its
// run, this over the workers per link.
std::uint64_t moved_output_pages_per_link(const Params& p, std::uint32_t n) {
  return moved_output_pages(p, n) / std::max<std::uint32_t>(p.num_links, 1);
}

// The size rule on 2 chips (kTwoChipWorkersPerLink): 1, 3 or 6 by the chunks a run of 3 workers
// gets, counted as the workers move them (pages or row pieces, in the op's CB packets; a link carries
// the output once).
std::uint32_t two_chip_workers_per_link(const Params& p) {
  constexpr std::uint32_t n = 2;
  const std::uint32_t packet_pages = moved_packet_pages(p, n);
  const std::uint64_t link_pages = moved_output_pages_per_link(p, n);
  const std::uint64_t run_pages = (link_pages + kTwoChipWorkersPerLink - 1) / kTwoChipWorkersPerLink;
  if ((run_pages + packet_pages - 1) / packet_pages < kMinChunksPerMessage) return 1;
  const std::uint32_t chunk = fitted_reduction_chunk_packets(
      static_cast<std::uint32_t>(std::min<std::uint64_t>(run_pages, UINT32_MAX)), packet_pages);
  return chunk >= kDefaultReductionChunkPackets ? kManyWorkersPerLink : kTwoChipWorkersPerLink;
}

// kLongLineWorkersPerLink on a two-sided line of kMinLongLineChips chips or more on one link where
// that many workers' messages are kLongLineMessagePacketsFrom packets up to (not including)
// kLongLineMessagePacketsBelow; else none (the size rule's count stands).
std::optional<std::uint32_t> long_line_workers_per_link(const Params& p, std::uint32_t n) {
  if (p.topology != CclTopology::Line || p.line_algorithm != LineAlgorithm::TwoSided) return std::nullopt;
  if (n < kMinLongLineChips || p.num_links != 1) return std::nullopt;
  const std::uint64_t message_pages = moved_output_pages_per_link(p, n) / kLongLineWorkersPerLink;
  const std::uint64_t packet_pages = moved_packet_pages(p, n);
  if (message_pages < kLongLineMessagePacketsFrom * packet_pages) return std::nullopt;
  if (message_pages >= kLongLineMessagePacketsBelow * packet_pages) return std::nullopt;
  return kLongLineWorkersPerLink;
}

// Params::workers_per_link checked, or the size rule (kDefaultWorkersPerLink) on link_pages().
std::uint32_t workers_per_link_for(const Params& p, std::uint32_t n) {
  if (p.workers_per_link) {
    if (*p.workers_per_link == 0 || *p.workers_per_link > kernels::fabric_mux::kMaxClients) {
      throw CclParamsError(
          fmt::format("reduce_scatter: workers_per_link is {}; expected 1 to {} (a fabric mux's clients)",
                      *p.workers_per_link, kernels::fabric_mux::kMaxClients));
    }
    return *p.workers_per_link;
  }
  static_assert(kManyWorkersPerLink <= kernels::fabric_mux::kMaxClients, "the size rule's most workers share a mux");
  const std::uint64_t pages = link_pages(p, n);
  if (n == 2) return two_chip_workers_per_link(p);
  if (pages >= kLinkPagesForManyWorkers) return kManyWorkersPerLink;
  if (pages < kLinkPagesForSeveralWorkers) return 1;
  return long_line_workers_per_link(p, n).value_or(kDefaultWorkersPerLink);
}

// The workers per link and direction a part of `n`-chip groups runs. Params::workers_per_link is
// checked either way (0 or too many is refused); the one-shot runs one sender per direction.
std::uint32_t part_workers_per_link(const Params& p, std::uint32_t n) {
  const std::uint32_t chain_workers = workers_per_link_for(p, n);
  const RingAlgorithm ring = resolved_ring_algorithm(p);
  if (ring == RingAlgorithm::OneShot) return 1;
  return ring == RingAlgorithm::HalfWay ? half_way_workers_per_link(n, chain_workers) : chain_workers;
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  r.page_size = page_size_bytes(p.input);
  // ROW_MAJOR along dim 3 moves row pieces (scattered_rows.hpp), checked once the group size is known.
  if (!cuts_rows(p.input, p.dim)) require_page_aligned_dim(p.input, p.dim, kOp, "input");
  static_cast<PlacedGroups&>(r) = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);
  const std::uint32_t n = r.group_size;
  r.ring = p.topology == CclTopology::Ring;
  r.two_sided = !r.ring && p.line_algorithm == LineAlgorithm::TwoSided;
  r.one_shot = resolved_ring_algorithm(p) == RingAlgorithm::OneShot;
  r.half_way = resolved_ring_algorithm(p) == RingAlgorithm::HalfWay;
  if (r.one_shot && n / 2 > kMaxFabricHops) {
    throw CclParamsError(fmt::format("reduce_scatter: the one-shot ring of {} chips sends over {} hops; a fabric "
                                     "route holds at most {} (REFERENCE 6.5)",
                                     n, n / 2, kMaxFabricHops));
  }
  if (r.one_shot && kOneShotFirstCopySemaphoreId + n - 1 > kMaxProgramSemaphores) {
    // Not the chain instead: a ring this long chains over n - 1 hops, past a route's reach.
    static_assert(kMaxProgramSemaphores - kOneShotFirstCopySemaphoreId + 1 > kMaxFabricHops + 1,
                  "a ring too long for the one-shot's copy semaphores is too long for the chain's route");
    throw CclParamsError(fmt::format("reduce_scatter: the one-shot ring of {} chips needs {} copy semaphores on its "
                                     "reduce core from id {}; a program has {} (expected at most {} chips), and the "
                                     "chain's {} hops are past the at most {} a fabric route holds (REFERENCE 6.5)",
                                     n, n - 1, kOneShotFirstCopySemaphoreId, kMaxProgramSemaphores,
                                     kMaxProgramSemaphores - kOneShotFirstCopySemaphoreId + 1, n - 1, kMaxFabricHops));
  }
  if (!r.two_sided && !r.one_shot && !r.half_way && n - 1 > kMaxFabricHops) {
    throw CclParamsError(
        fmt::format("reduce_scatter: a {} of {} chips sends over {} hops (the line's wrap, the ring's "
                    "credits); a fabric route holds at most {} (REFERENCE 6.5){}",
                    to_string(p.topology), n, n - 1, kMaxFabricHops,
                    r.ring ? "; the half-way ring (ring_algorithm half_way, Auto's choice past the one-shot) sends "
                             "every message one hop"
                           : ""));
  }
  r.output = with_dim_scaled(p.input, p.dim, n, false);
  r.in_pages = shape_in_pages(p.input);
  r.out_pages = shape_in_pages(r.output);
  if (cuts_rows(p.input, p.dim)) {
    r.row_pieces = pieces_per_output_row(p, n);
    r.rows_cut = true;
    r.page_size = page_size_bytes(r.output) / r.row_pieces;
    r.in_pages.x = n * r.row_pieces;
    r.out_pages.x = r.row_pieces;
  } else {
    require_dim_splits_evenly(p.input, p.dim, n, kOp, "input dim", "slices");
    if (const std::optional<FabricPages> pieces = outer_row_fabric_pages(p)) {
      r.row_pieces = pieces->pieces_per_page;
      r.page_size = pieces->page_bytes;
      r.last_piece_bytes = pieces->last_piece_bytes;
      r.in_pages.x = r.row_pieces;
      r.out_pages.x = r.row_pieces;
    }
  }
  require_fabric_input_output_buffers(topology, r.all_chips, p.input_buffer, p.input, p.output_buffer, r.output, kOp);
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  if (p.packet_size_in_pages == 0) r.packet_pages *= kReductionPayloadsPerPacket;
  if (r.two_sided || r.one_shot || r.half_way) {
    if (!p.intermediate_buffer) {
      throw CclParamsError(
          r.two_sided  ? "reduce_scatter: a two-sided line needs intermediate_buffer (intermediate_spec(): the partials' "
                         "receive buffer); expected a buffer, or line_algorithm wrap"
          : r.one_shot ? "reduce_scatter: the one-shot ring needs intermediate_buffer (intermediate_spec(): N copies "
                         "of the output, one per sending rank); expected a buffer, or ring_algorithm chain"
                       : "reduce_scatter: the half-way ring needs intermediate_buffer (intermediate_spec(): the "
                         "partials' receive buffer); expected a buffer, or ring_algorithm chain");
    }
    r.intermediate = part_intermediate_spec(p, topology);
    r.mid_pages = shape_in_pages(r.intermediate);
    if (r.row_pieces != 0) r.mid_pages.x = r.row_pieces;
    // At least intermediate_spec: a larger buffer is accepted. Its pages are the tensor's (rows,
    // not the pieces the workers move).
    const BufferHandle& mid = *p.intermediate_buffer;
    const std::uint32_t mid_page_bytes = page_size_bytes(r.intermediate);
    if (mid.config.page_size_bytes != mid_page_bytes || mid.config.size_bytes < size_bytes(r.intermediate)) {
      throw CclParamsError(fmt::format(
          "reduce_scatter: intermediate buffer is {} B in pages of {} B; the {} need at least {} B in pages of {} "
          "B (intermediate_spec)",
          mid.config.size_bytes, mid.config.page_size_bytes,
          r.two_sided ? "two-sided line's partials" : r.one_shot ? "one-shot ring's copies" : "half-way ring's partials",
          size_bytes(r.intermediate),
          mid_page_bytes));
    }
    if (p.intermediate_buffer->id == p.input_buffer.id || p.intermediate_buffer->id == p.output_buffer.id) {
      throw CclParamsError("reduce_scatter: the intermediate buffer is the input or output; expected its own buffer");
    }
    require_buffer_layouts(topology, r.all_chips, {&mid});
  }
  r.workers_per_link = part_workers_per_link(p, n);
  // 2 ceil(W / 2) <= W + 1, and even, so at most kMaxClients (even) when W is.
  static_assert(kernels::fabric_mux::kMaxClients % 2 == 0, "a half-way ring's workers round up to even");
  if (p.cb_packets == 0 || p.chunk_packets == 0u) {
    throw CclParamsError("reduce_scatter: cb_packets and chunk_packets must be at least 1");
  }
  // Runs of the output: 2 per link on a ring, 1 on a line; runs without pages get no worker.
  const api::TensorSlice whole{r.out_pages, r.out_pages, {0, 0, 0, 0}, r.out_pages, {0, 0, 0, 0}};
  // The chain's up and down workers take half the pages each; the half-way ring's rightward and
  // leftward workers (as the two-sided line's) the same pages.
  const std::uint32_t page_runs = (r.ring && !r.one_shot && !r.half_way ? 2 : 1) * p.num_links * r.workers_per_link;
  r.runs = (r.one_shot ? 1 : r.ring || r.two_sided ? 2 : 1) * p.num_links * r.workers_per_link;
  const std::vector<api::TensorSlice> page_run_slices =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(whole, page_runs);
  for (std::uint32_t run = 0; run < r.runs; ++run) {
    r.run_pages.push_back(static_cast<std::uint32_t>(api::volume(page_run_slices[run % page_runs].worker_slice_shape)));
  }
  const std::uint32_t muxes = r.workers_per_link > 1 ? 2 * p.num_links : 0;
  const std::uint32_t run_cores = r.one_shot ? kOneShotCoresPerLink * r.runs : r.runs;
  r.cores = worker_cores(topology, p.first_worker, run_cores + muxes, kOp);
  r.mux_cores.assign(r.cores.begin() + run_cores, r.cores.end());
  r.cores.resize(run_cores);
  for (std::uint32_t run = 0; run < r.runs; ++run) {
    // Each message is the run's pages of one slice.
    const std::uint32_t asked =
        p.chunk_packets ? *p.chunk_packets : fitted_reduction_chunk_packets(r.run_pages[run], r.packet_pages);
    r.chunk_packets.push_back(
        reduction_chunk_packets(r.run_pages[run], r.packet_pages, r.page_size, asked, "reduce_scatter"));
  }
  if (r.two_sided) require_two_sided_line_fits_l1(p, topology, r);
  if (r.half_way) require_half_way_fits_l1(p, topology, r);
  for (std::uint32_t run = 0; r.one_shot && run < r.runs; ++run) {
    // The reduce core keeps its run's running sums in L1 (one_shot.hpp).
    const std::uint64_t sums_bytes =
        std::uint64_t{ceil_div(r.run_pages[run], r.packet_pages)} * r.packet_pages * r.page_size;
    if (sums_bytes > kMaxReducedCbBytes) {
      throw CclParamsError(fmt::format(
          "reduce_scatter: the one-shot ring keeps each link's run of the output in L1 while it sums the copies: {} B "
          "on link {}, above {} B; expected a smaller input, more links, or ring_algorithm chain",
          sums_bytes, run, kMaxReducedCbBytes));
    }
  }
  require_semaphore_on(p.barrier_semaphore, r.cores, kOp, "barrier_semaphore");
  return r;
}

Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t position) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const kargs::TensorArgs in_args = input_args(r, buffers.layout(p.input_buffer), map);
  const kargs::TensorArgs out_args = output_args(r, buffers.layout(p.output_buffer), map);
  const api::Shape4D& in_pages = r.in_pages;
  const api::Shape4D& out_pages = r.out_pages;
  const api::TensorSlice out_whole{out_pages, out_pages, {0, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
  const std::vector<api::TensorSlice> out_runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(out_whole, r.runs);
  // By chain slice: the slices of the ranks at positions 0, 1, ... .
  const std::vector<api::TensorSlice> in_slices =
      g.by_position(cmd::compute_page_aligned_slices(n, in_pages, p.dim));

  // A worker core holds one connection per direction, and a router's worker channel one
  // worker: on a ring each worker uses one direction only, so credits and barrier increments
  // to the previous position go the long way round (N - 1 hops); a line's workers use both
  // directions (the chain wraps back over N - 1 hops).
  const auto routes = [&](std::uint32_t run) {
    const bool up = is_up(r, run);
    const cmd::ChipUnicast to_next = g.route(position, next_position(n, position, up));
    const cmd::ChipUnicast to_prev =
        r.ring ? cmd::ChipUnicast{n - 1, to_next.forward} : g.route(position, prev_position(n, position, up));
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
    const std::uint32_t next = next_position(n, position, up);
    const std::uint32_t prev = prev_position(n, position, up);
    // Named copies, not a structured binding: the lambdas below capture them, which clang 14
    // (a C++20 feature it lacks) cannot do with structured bindings.
    const auto next_and_prev = routes(run);
    const cmd::ChipUnicast to_next = next_and_prev.first;
    const cmd::ChipUnicast to_prev = next_and_prev.second;
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
    // the writer owns the core's fabric connections, so it sends the credit to the previous position.

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
    const api::TensorSlice raw_run = in_run(raw_slice(n, position, up));
    const api::TensorSlice first_run = in_run(received_slice(n, position, up, 0));
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
      inputs.push_back(cmd::read_tensor_slice_to_cb(in_run(received_slice(n, position, up, m)), kLocalCbId));
    }

    // Writer stream 0: the entry barrier, then every message's chunks to the next position (the last
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
    // Writer stream 1: a credit to the previous position for every chunk the reader has taken out
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
    const auto stream_of = [](const kargs::TensorArgs& args, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{args, cmd::encode_stream(cmds), static_cast<std::uint32_t>(cmds.size())};
    };
    reader.streams = {stream_of(out_args, partials), stream_of(in_args, inputs)};
    writer.streams = {stream_of(out_args, sends)};
    if (!credits.empty()) writer.streams.push_back(stream_of(out_args, credits));
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
    add_reduction_chain_cbs(program.circular_buffers, core,
                            {.packet_pages = r.packet_pages, .local_packets = p.cb_packets,
                             .chunk_pages = chunk_pages, .page_size = r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kRawCbId, {CoreRange{core, core}}, p.cb_packets * r.packet_pages, r.page_size});
  }
  return program;
}


}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.input, p.dim, p.input_buffer, p.output_buffer, p.intermediate_buffer, p.topology,
                     p.line_algorithm, p.ring_algorithm, p.num_links, p.workers_per_link,
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

std::string to_string(RingAlgorithm algorithm) {
  switch (algorithm) {
    case RingAlgorithm::Auto:
      return "auto";
    case RingAlgorithm::OneShot:
      return "one_shot";
    case RingAlgorithm::Chain:
      return "chain";
    case RingAlgorithm::HalfWay:
      return "half_way";
  }
  return "unknown";
}

RingAlgorithmChoice ring_algorithm_choice(const Params& params) {
  const bool fabric_ring = params.mode == CclMode::Fabric && params.topology == CclTopology::Ring;
  const bool several_workers = params.workers_per_link && *params.workers_per_link > 1;
  if (params.ring_algorithm == RingAlgorithm::OneShot && (!fabric_ring || several_workers)) {
    throw CclParamsError(fmt::format(
        "reduce_scatter: ring_algorithm one_shot on a {} in {} mode with workers_per_link {}; the one-shot runs on a "
        "ring in fabric mode with one worker per link and direction",
        to_string(params.topology), params.mode == CclMode::Fabric ? "fabric" : "legacy",
        params.workers_per_link.value_or(1)));
  }
  if (params.ring_algorithm == RingAlgorithm::HalfWay && !fabric_ring) {
    throw CclParamsError(fmt::format("reduce_scatter: ring_algorithm half_way on a {} in {} mode; the half-way runs on "
                                     "a ring in fabric mode",
                                     to_string(params.topology),
                                     params.mode == CclMode::Fabric ? "fabric" : "legacy"));
  }
  if (!fabric_ring) {
    return {RingAlgorithm::Chain, params.mode == CclMode::Fabric ? "a line chains" : "legacy mode chains"};
  }
  if (params.ring_algorithm != RingAlgorithm::Auto) return {params.ring_algorithm, "asked for"};
  if (several_workers) {
    return {RingAlgorithm::HalfWay, fmt::format("auto: workers_per_link {}; the one-shot runs one worker per link and "
                                                "direction, so the half-way ring",
                                                *params.workers_per_link)};
  }
  const std::uint64_t bytes = size_bytes(params.input);
  if (bytes <= kDefaultOneShotMaxBytes) {
    return {RingAlgorithm::OneShot,
            fmt::format("auto: {} B per chip are within the one-shot's {} B", bytes, kDefaultOneShotMaxBytes)};
  }
  return {RingAlgorithm::HalfWay,
          fmt::format("auto: {} B per chip are past the one-shot's {} B, so the half-way ring", bytes,
                      kDefaultOneShotMaxBytes)};
}

RingAlgorithm resolved_ring_algorithm(const Params& params) { return ring_algorithm_choice(params).algorithm; }

namespace {
bool part_needs_intermediate(const Params& part) {
  const bool two_sided = part.mode == CclMode::Fabric && part.topology == CclTopology::Line &&
                         part.line_algorithm == LineAlgorithm::TwoSided;
  const RingAlgorithm ring = resolved_ring_algorithm(part);
  return two_sided || ring == RingAlgorithm::OneShot || ring == RingAlgorithm::HalfWay;
}

TensorSpec part_intermediate_spec(const Params& part, const topo::Topology& topology) {
  TensorSpec spec = output_spec(part, topology);
  if (resolved_ring_algorithm(part) == RingAlgorithm::OneShot) {
    const FabricPlan plan(topology, part.fabric);
    spec.shape[0] *= static_cast<std::uint32_t>(resolve_groups(part.groups, topology, plan).front().size());
  } else {
    spec.shape[0] *= 2;
  }
  return spec;
}

}  // namespace

std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  return params_by_shape(params, topology, [](Params& line) { line.ring_algorithm = RingAlgorithm::Auto; });
}

std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology) {
  std::vector<PartChoice> choices;
  for (const Params& part : parts_by_shape(params, topology)) {
    choices.push_back({part.topology, part.groups, ring_algorithm_choice(part), part.line_algorithm});
  }
  return choices;
}

bool needs_intermediate(const Params& params, const topo::Topology& topology) {
  const std::vector<Params> parts = parts_by_shape(params, topology);
  return std::any_of(parts.begin(), parts.end(), part_needs_intermediate);
}

TensorSpec intermediate_spec(const Params& params, const topo::Topology& topology) {
  std::optional<TensorSpec> largest;
  for (const Params& part : parts_by_shape(params, topology)) {
    if (!part_needs_intermediate(part)) continue;
    const TensorSpec spec = part_intermediate_spec(part, topology);
    if (!largest || size_bytes(spec) > size_bytes(*largest)) largest = spec;
  }
  // Without a part that needs one: what a two-sided line would (as before parts existed).
  return largest ? *largest : part_intermediate_spec(parts_by_shape(params, topology).front(), topology);
}

namespace {
std::uint32_t part_group_size(const Params& part, const topo::Topology& topology) {
  const FabricPlan plan(topology, part.fabric);
  return static_cast<std::uint32_t>(resolve_groups(part.groups, topology, plan).front().size());
}

}  // namespace

// Per part: a ring run as a line around a down link is a line of its own size rule (a two-sided
// line's, the long-line rule's), not the ring that was configured.
std::uint32_t workers_per_link(const Params& params, const topo::Topology& topology) {
  std::uint32_t most = 0;
  for (const Params& part : parts_by_shape(params, topology)) {
    most = std::max(most, part_workers_per_link(part, part_group_size(part, topology)));
  }
  return most;
}

std::uint64_t link_pages_for_the_size_rule(const Params& params, const topo::Topology& topology) {
  std::uint64_t most = 0;
  for (const Params& part : parts_by_shape(params, topology)) {
    most = std::max(most, link_pages(part, part_group_size(part, topology)));
  }
  return most;
}

namespace {
std::vector<CoreRange> part_semaphore_cores(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return one_core_ranges(legacy::worker_cores(params, topology));
  if (resolved_ring_algorithm(params) == RingAlgorithm::OneShot) {
    return one_core_ranges(
        worker_cores(topology, params.first_worker, kOneShotCoresPerLink * params.num_links, kOp));
  }
  const std::uint32_t per_link =
      (params.topology == CclTopology::Ring || part_needs_intermediate(params) ? 2 : 1) * workers_per_link(params, topology);
  return one_core_ranges(worker_cores(topology, params.first_worker, per_link * params.num_links, kOp));
}
}  // namespace

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  return most_semaphore_cores(parts_by_shape(params, topology),
                              [&](const Params& part) { return part_semaphore_cores(part, topology); });
}

void validate(const Params& params, const topo::Topology& topology) {
  resolved_ring_algorithm(params);  // refuses a one-shot where it does not apply
  if (params.mode == CclMode::Legacy) return legacy::validate(params, topology);
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  resolved_ring_algorithm(params);
  if (params.mode == CclMode::Legacy) return legacy::build(params, topology);
  MeshWorkload workload = workload_by_shape(
      kOp, parts_by_shape(params, topology), topology, resolve,
      [](const Params& part, const topo::Topology& system, const Resolved& r, const FabricGroup& g,
         std::uint32_t position) {
        return r.two_sided  ? two_sided_line_program(part, system, r, g, position)
               : r.one_shot ? one_shot_program(part, system, r, g, position)
               : r.half_way ? half_way_ring_program(part, system, r, g, position)
                            : chip_program(part, system, r, g, position);
      });
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer,
                                       params.intermediate_buffer ? &*params.intermediate_buffer : nullptr});
  workload.global_semaphores = workload_semaphores({&params.barrier_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

namespace {
// The expected outputs of one group whose rank at each fabric position is `ranks` (fabric_order):
// the device sums along the fabric, so the sums are taken by position (slices[p][s]: the input of
// the rank at position p, its slice for the rank at position s), then handed back by rank.
std::vector<reference::Bytes> reference_in_fabric_order(const Params& params, const topo::Topology& topology,
                                                        const std::vector<std::uint32_t>& ranks,
                                                        const std::vector<reference::Bytes>& inputs_by_rank) {
  const Resolved r = resolve(params, topology);
  const std::uint32_t n = r.group_size;
  if (inputs_by_rank.size() != n || ranks.size() != n) {
    throw CclParamsError(
        fmt::format("reduce_scatter reference: {} inputs for a group of {}", inputs_by_rank.size(), n));
  }
  std::vector<std::vector<reference::Bytes>> slices(n);
  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t s = 0; s < n; ++s)
      slices[p].push_back(reference::slice(inputs_by_rank[ranks[p]], params.input, params.dim, n, ranks[s]));
  }
  std::vector<reference::Bytes> out(n);
  if (r.two_sided) {
    out = two_sided_line_reference(slices, params.input.dtype);
  } else if (r.half_way) {
    out = half_way_ring_reference(slices, params.input.dtype, r, params.num_links);
  } else if (r.one_shot) {
    out = one_shot_reference(slices, params.input.dtype);
  } else {
    for (std::uint32_t s = 0; s < n; ++s) {
      out[s].resize(slices[0][s].size());
      std::uint64_t first_page = 0;
      for (std::uint32_t run = 0; run < r.runs; ++run) {
        const bool up = is_up(r, run);
        const std::uint64_t offset = slice_image_offset(r, first_page);
        const std::uint64_t bytes = slice_image_offset(r, first_page + r.run_pages[run]) - offset;
        first_page += r.run_pages[run];
        if (bytes == 0) continue;
        std::vector<std::span<const std::byte>> parts;
        for (std::uint32_t k = 1; k <= n; ++k) {
          const std::uint32_t position = up ? (s + k) % n : (s + n * k - k) % n;
          parts.push_back(std::span<const std::byte>(slices[position][s]).subspan(offset, bytes));
        }
        const reference::Bytes sum = reference::sum_in_order(parts, params.input.dtype);
        std::memcpy(out[s].data() + offset, sum.data(), bytes);
      }
    }
  }
  std::vector<reference::Bytes> by_rank(n);
  for (std::uint32_t p = 0; p < n; ++p) by_rank[ranks[p]] = std::move(out[p]);
  return by_rank;
}
}  // namespace

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  if (params.mode == CclMode::Legacy) return legacy::reference_outputs(params, topology, group, inputs_by_rank);
  for (const Params& part : parts_by_shape(params, topology)) {
    const bool holds = part.groups.chips.empty() ||  // the one part
                       std::find(part.groups.chips.begin(), part.groups.chips.end(), group) != part.groups.chips.end();
    if (!holds) continue;
    const FabricPlan plan(topology, part.fabric);
    return reference_in_fabric_order(part, topology, fabric_order(plan, group, part.topology).ranks, inputs_by_rank);
  }
  throw CclParamsError(
      fmt::format("reduce_scatter reference: group {} is none of the op's groups", fmt::join(group, ",")));
}

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  if (params.mode == CclMode::Legacy) return legacy::reference_outputs(params, topology, inputs_by_rank);
  std::vector<std::uint32_t> ranks;
  for (std::uint32_t rank = 0; rank < inputs_by_rank.size(); ++rank) ranks.push_back(rank);
  {
    const FabricPlan plan(topology, params.fabric);
    const std::vector<std::vector<ChipId>> groups = resolve_groups(params.groups, topology, plan);
    // One group: its own order and shape (a ring run as a line around a down link) are known.
    if (groups.size() == 1) return reference_outputs(params, topology, groups.front(), inputs_by_rank);
    for (const std::vector<ChipId>& group : groups) {
      if (fabric_order(plan, group, params.topology).chips != group) {
        throw CclParamsError(fmt::format("reduce_scatter reference: group {} runs from mid-line (a ring run as a line "
                                         "around a down link), so its sums depend on the group; give the group",
                                         fmt::join(group, ",")));
      }
    }
  }
  return reference_in_fabric_order(params, topology, ranks, inputs_by_rank);
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter
