#include "runtime/ccl/all_gather/all_gather.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/all_gather_legacy.hpp"
#include "runtime/ccl/all_gather/broadcast_fallback.hpp"
#include "runtime/ccl/all_gather/ring_relay.hpp"
#include "runtime/ccl/common/op_buffers.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::runtime::ccl::all_gather {
namespace {

constexpr const char* kOp = "all_gather";

// What one worker core of a chip sends: the whole input both ways (FULL_TENSOR, and lines), or
// half of it toward higher or lower ranks (SPLIT_TENSOR).
enum class Role : std::uint8_t { Both, Up, Down };

using Reach = FabricGroup::Reach;

// The input in the pages the relay's size rule counts (kPagesForSeveralRelayWorkers, measured on
// tiles): its own pages, except that ROW_MAJOR rows wider than a fabric payload count as the tiles
// of their dtype that their bytes fill. Counted as one page a row of 8192 B took 1 worker where
// the same bytes as tiles take 2 (T3K 8-ring, 16 rows a chip: 64.74 against 54.22 us); counted in
// pieces, 4384 B rows (137 pieces of 32 B) would take 2 from 8 rows a chip, where 1 is faster
// (21.08 against 26.59 us).
std::uint64_t pages_for_the_size_rule(const Params& p) {
  const std::uint64_t pages = api::volume(shape_in_pages(p.input));
  const std::uint32_t page = page_size_bytes(p.input);
  if (p.input.layout != Layout::RowMajor || page <= p.fabric.max_payload_bytes) return pages;
  TensorSpec as_tiles = p.input;
  as_tiles.layout = Layout::Tile;
  return pages * page / page_size_bytes(as_tiles);
}

// The relay's workers per link and direction: Params::workers_per_link checked, or the size
// rule (all_gather.hpp, kDefaultRelayWorkersPerLink).
std::uint32_t relay_workers_per_direction(const Params& p) {
  if (p.workers_per_link) {
    if (*p.workers_per_link == 0 || *p.workers_per_link > kernels::fabric_mux::kMaxClients) {
      throw CclParamsError(fmt::format("all_gather: workers_per_link is {}; expected 1 to {} (a fabric mux's clients)",
                                       *p.workers_per_link, kernels::fabric_mux::kMaxClients));
    }
    return *p.workers_per_link;
  }
  // Input pages in each link and direction's run (SPLIT_TENSOR halves the input between the
  // directions; FULL_TENSOR sends all of it both ways).
  const std::uint64_t pages = pages_for_the_size_rule(p);
  const std::uint64_t runs = (resolved_bidirectional_mode(p) == BidirectionalMode::SplitTensor ? 2 : 1) *
                             std::uint64_t{std::max<std::uint32_t>(p.num_links, 1)};
  return pages / runs >= kPagesForSeveralRelayWorkers ? kDefaultRelayWorkersPerLink : 1;
}

// The op's groups placed on the fabric (place_groups), and what this op works out from them.
struct Resolved : PlacedGroups {
  BidirectionalMode mode = BidirectionalMode::FullTensor;
  bool relay = false;                // ring_relay.hpp; else each chip multicasts (roles below)
  std::vector<Role> roles;           // per worker, link-major
  std::vector<std::uint32_t> runs;   // per worker: its run of the input
  std::vector<std::uint32_t> links;  // per worker: its link
  std::vector<CoreCoord> cores;      // per worker (relay: then its muxes, ring_relay::ChipGather::cores)
  std::uint32_t workers_per_direction = 1;  // relay only
  std::uint32_t grid_width = 0;             // of the common worker grid
  TensorSpec output;
  std::uint32_t page_size = 0;       // of the pages the workers move (a row piece for row pieces)
  // ROW_MAJOR: pieces each input row moves in; along dim 3 the row is cut anyway, along an outer
  // dim only a row wider than a fabric payload is (outer_row_pieces).
  std::uint32_t row_pieces = 1;
  std::uint32_t last_piece_bytes = 0;  // of a row's last piece along an outer dim when shorter (fabric_pages)
  std::uint32_t packet_pages = 0;
};

Reach reach_of(const FabricGroup& g, std::uint32_t rank, Role role) {
  const std::uint32_t n = g.size();
  switch (role) {
    case Role::Up:
      return Reach{n - 1, 0};
    case Role::Down:
      return Reach{0, n - 1};
    case Role::Both:
      break;
  }
  return g.full_reach(rank);
}

// Does a multicast from rank `from` with `reach` write on rank `to` (to != from)?
bool covers(const FabricGroup& g, std::uint32_t from, Reach reach, std::uint32_t to) {
  const std::uint32_t n = g.size();
  if (g.topology == CclTopology::Ring) {
    const std::uint32_t ahead = (to + n - from) % n;  // 1..n-1 for to != from
    return ahead != 0 && (ahead <= reach.up || n - ahead <= reach.down);
  }
  if (to > from) return to - from <= reach.up;
  return from - to <= reach.down;
}

// Increments the done semaphore of `rank` receives: one per worker of every chip whose
// multicast reaches it, and one per local worker (a multicast increment is also local).
std::uint32_t expected_done(const FabricGroup& g, const std::vector<Role>& roles, std::uint32_t rank) {
  std::uint32_t count = 0;
  for (std::uint32_t from = 0; from < g.size(); ++from) {
    for (Role role : roles) {
      count += (from == rank || covers(g, from, reach_of(g, from, role), rank)) ? 1 : 0;
    }
  }
  return count;
}

// Barrier increments worker `role` of `rank` receives: its own and those of the same worker on
// every chip that writes to it.
std::uint32_t expected_barrier(const FabricGroup& g, Role role, std::uint32_t rank) {
  std::uint32_t count = 1;
  for (std::uint32_t from = 0; from < g.size(); ++from) {
    if (from != rank && covers(g, from, reach_of(g, from, role), rank)) count += 1;
  }
  return count;
}

// ROW_MAJOR along dim 3 (row_pieces.hpp): each chip's input row becomes one of N equal parts of
// an output row. The workers address the input in q pieces per row and the output in N x q, and
// every piece lands at its byte offset of the output row on every chip. q > 1 when a row is wider
// than a fabric payload, or when it fits one but not two: such rows go one a packet, and a 3072 B
// row leaves 29 % of a 4352 B payload empty where 3 x 1024 B pieces go 4 a packet (measured
// faster on every system; narrower rows, several a packet, were not: docs/collectives.md, "Rows
// that fit a payload, all_gather along dim 3 (session 39)").
std::uint32_t pieces_per_row(std::uint32_t row_bytes, std::uint32_t max_payload_bytes) {
  require_row_piece_alignment(row_bytes, kOp,
                              fmt::format("writes each chip's {} B row at an offset of a multiple of it in the "
                                          "output rows",
                                          row_bytes));
  if (row_bytes <= max_payload_bytes && std::uint64_t{row_bytes} * 2 > max_payload_bytes) {
    return fill_payload_pieces_of_fitting_row(row_bytes, max_payload_bytes);
  }
  return fabric_row_pieces(row_bytes, max_payload_bytes, RowPieceChoice::FillPayload, kOp, "ROW_MAJOR row");
}

// ROW_MAJOR along dims 0-2: whole rows are gathered, so a row moves whole unless it is wider than
// a fabric payload; then in 32 B-aligned pieces that fill one (fabric_pages, FillPayload), the
// input and output both addressed q pieces per row and sliced like tiles, q per row.
FabricPages outer_row_pieces(const Params& p) {
  if (p.input.layout != Layout::RowMajor) return FabricPages{page_size_bytes(p.input), 1, 1, 0};
  return fabric_pages(page_size_bytes(p.input), 1, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  r.page_size = page_size_bytes(p.input);
  if (cuts_rows(p.input, p.dim)) {
    r.row_pieces = pieces_per_row(r.page_size, p.fabric.max_payload_bytes);
    r.page_size /= r.row_pieces;
  } else {
    require_page_aligned_dim(p.input, p.dim, kOp, "input");
    const FabricPages pieces = outer_row_pieces(p);
    r.row_pieces = pieces.pieces_per_page;
    r.page_size = pieces.page_bytes;
    r.last_piece_bytes = pieces.last_piece_bytes;
  }
  static_cast<PlacedGroups&>(r) = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);

  if (p.topology == CclTopology::Line && p.bidirectional == BidirectionalMode::SplitTensor) {
    throw CclParamsError("all_gather: SPLIT_TENSOR needs a ring; a line is inherently FULL_TENSOR (REFERENCE 7.3)");
  }
  r.mode = resolved_bidirectional_mode(p);
  r.relay = resolved_ring_algorithm(p) == RingAlgorithm::Relay;
  for (std::uint32_t link = 0; link < p.num_links && !r.relay; ++link) {
    if (r.mode == BidirectionalMode::SplitTensor) {
      r.roles.insert(r.roles.end(), {Role::Up, Role::Down});
      r.runs.insert(r.runs.end(), {link, p.num_links + link});
      r.links.insert(r.links.end(), {link, link});
    } else {
      r.roles.push_back(Role::Both);
      r.runs.push_back(link);
      r.links.push_back(link);
    }
  }
  if (r.relay) {
    const std::uint32_t slices = ring_relay::slices_per_worker(r.mode, r.group_size);
    if (slices > kMaxInlineValue) {
      const bool split = r.mode == BidirectionalMode::SplitTensor;
      const std::uint32_t split_limit = kMaxInlineValue + 1;
      const std::uint32_t full_limit = 2 * kMaxInlineValue + 1;
      throw CclParamsError(fmt::format(
          "all_gather: the ring relay on {} chips sends {} slices per worker ({}), each at least one chunk, but a "
          "worker counts the chunks landing in an inline wait of at most {} (REFERENCE 4.11): it relays at most {}",
          r.group_size, slices,
          split ? "SPLIT_TENSOR, chosen for an input over twice the ERISC L1 per chip: all the way round"
                : "FULL_TENSOR: half-way round",
          kMaxInlineValue,
          split ? fmt::format("{} chips with such an input, {} with a smaller one", split_limit, full_limit)
                : fmt::format("{} chips ({} with SPLIT_TENSOR)", full_limit, split_limit)));
    }
  }
  for (const FabricGroup& g : r.groups) {
    for (std::uint32_t rank = 0; rank < g.size(); ++rank) {
      for (Role role : r.roles) {
        const Reach reach = reach_of(g, rank, role);
        if (reach.up > kMaxFabricHops || reach.down > kMaxFabricHops) {
          throw CclParamsError(
              fmt::format("all_gather: chip {} would multicast {} hops; a fabric route holds at most {} "
                          "(REFERENCE 6.5)",
                          g.chips[rank], std::max(reach.up, reach.down), kMaxFabricHops));
        }
        const std::uint32_t barrier = expected_barrier(g, role, rank);
        if (p.barrier_semaphore && barrier > kMaxInlineValue) {
          throw CclParamsError(
              fmt::format("all_gather: barrier target {} does not fit an 8-bit inline wait (REFERENCE "
                          "4.11)",
                          barrier));
        }
      }
      const std::uint32_t done = expected_done(g, r.roles, rank);
      if (done > kMaxInlineValue) {
        throw CclParamsError(
            fmt::format("all_gather: chip {} waits for {} increments; an inline wait target holds at most "
                        "{} (REFERENCE 4.11)",
                        g.chips[rank], done, kMaxInlineValue));
      }
    }
  }

  r.output = with_dim_scaled(p.input, p.dim, r.group_size, true);
  require_fabric_input_output_buffers(topology, r.all_chips, p.input_buffer, p.input, p.output_buffer, r.output, kOp);
  if (p.workers_per_link && !r.relay) {
    throw CclParamsError(fmt::format("all_gather: workers_per_link is {}; it applies to the ring relay only (this "
                                     "gather multicasts)",
                                     *p.workers_per_link));
  }
  r.workers_per_direction = r.relay ? relay_workers_per_direction(p) : 1;
  const std::uint32_t workers = r.relay ? ring_relay::kDirectionsPerLink * r.workers_per_direction * p.num_links
                                        : static_cast<std::uint32_t>(r.roles.size());
  r.grid_width = common_worker_grid(topology).x;
  r.cores = worker_cores(
      topology, p.first_worker,
      r.relay ? ring_relay::cores_needed(p.num_links, r.workers_per_direction, r.grid_width) : workers, kOp);
  const std::vector<CoreCoord> worker_cores_only(r.cores.begin(), r.cores.begin() + workers);
  // Relay: every worker counts its landed chunks in it; multicast: the done core only.
  require_semaphore_on(p.done_semaphore, r.relay ? worker_cores_only : std::vector<CoreCoord>{r.cores.front()}, kOp,
                       "done_semaphore");
  if (p.barrier_semaphore) require_semaphore_on(p.barrier_semaphore, worker_cores_only, kOp, "barrier_semaphore");
  if (p.cb_packets == 0) throw CclParamsError("all_gather: cb_packets is 0; expected at least 1");
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  return r;
}

// The program of the chip at `position` of group `g`: its input lands at its rank's offset.
Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t position) {
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const BufferLayout in_layout = buffers.layout(p.input_buffer);
  const BufferLayout out_layout = buffers.layout(p.output_buffer);

  api::Shape4D in_pages = shape_in_pages(p.input);
  api::Shape4D out_pages = shape_in_pages(r.output);
  kargs::TensorArgs in_args = in_layout.interpreter_args(map);
  kargs::TensorArgs out_args = out_layout.interpreter_args(map);
  if (cuts_rows(p.input, p.dim)) {
    // Rows seen in pieces: q per input row, N x q per output row, rank r's at x = r x q.
    in_pages.x = r.row_pieces;
    out_pages.x = r.group_size * r.row_pieces;
    in_args = in_row_pieces(in_args, r.page_size, r.row_pieces);
    out_args = in_row_pieces(out_args, r.page_size, r.group_size * r.row_pieces);
  } else if (r.row_pieces > 1) {
    // Wide rows gathered along an outer dim: q pieces per row in and out, sliced as q tiles a row.
    in_pages.x = r.row_pieces;
    out_pages.x = r.row_pieces;
    in_args = in_row_pieces(in_args, r.page_size, r.row_pieces, r.last_piece_bytes);
    out_args = in_row_pieces(out_args, r.page_size, r.row_pieces, r.last_piece_bytes);
  }
  if (r.relay) {
    ring_relay::ChipGather view;
    view.params = &p;
    view.plan = &r.plan;
    view.group = &g;
    view.rank = position;  // a ring: positions are ranks
    view.mode = r.mode;
    view.cores = r.cores;
    view.workers_per_direction = r.workers_per_direction;
    view.grid_width = r.grid_width;
    view.in_args = in_args;
    view.out_args = out_args;
    view.in_pages = in_pages;
    view.out_pages = out_pages;
    view.page_size = r.page_size;
    view.packet_pages = r.packet_pages;
    return ring_relay::chip_program(view, topology);
  }
  const api::TensorSlice in_whole{in_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}};
  api::TensorSlice out_slice{out_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}};
  set_dim(out_slice.tensor_slice_offset, p.dim, g.rank_at(position) * dim_of(in_pages, p.dim));
  const auto num_runs = static_cast<std::uint32_t>(r.roles.size());
  const std::vector<api::TensorSlice> in_runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(in_whole, num_runs);
  const std::vector<api::TensorSlice> out_runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(out_slice, num_runs);

  const Noc0Coord done_core = map.tensix_noc0(r.cores.front());
  Program program;
  for (std::size_t w = 0; w < r.roles.size(); ++w) {
    const CoreCoord core = r.cores[w];
    const Noc0Coord noc = map.tensix_noc0(core);
    const Reach reach = reach_of(g, position, r.roles[w]);
    const cmd::ChipMulticast mcast = g.multicast(position, reach.up, reach.down);
    const std::uint32_t run = r.runs[w];
    const bool has_data = api::volume(in_runs[run].worker_slice_shape) > 0;

    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kPacketHeaderCbId;
    spec.packet_size_in_pages = r.packet_pages;
    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(data_cb(core, r.page_size, r.packet_pages * p.cb_packets));
    connect_to_fabric(program, spec, r.plan, g.port(r.links[w]), chip, core, mcast.num_targets_forward > 0,
                      mcast.num_targets_backward > 0);

    std::vector<cmd::Command> writer;
    if (p.barrier_semaphore) {
      const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
      writer.push_back(cmd::fabric_multicast_semaphore_inc(barrier, 1, noc.x, noc.y, mcast));
      writer.push_back(cmd::local_semaphore_wait(barrier, expected_barrier(g, r.roles[w], position)));
      writer.push_back(cmd::local_core_semaphore_set(barrier, 0));
    }
    if (has_data) writer.push_back(cmd::fabric_write_cb_to_tensor_slice(out_runs[run], kDataCbId, mcast));
    const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
    writer.push_back(cmd::fabric_multicast_semaphore_inc(done, 1, done_core.x, done_core.y, mcast));
    if (w == 0) {
      writer.push_back(cmd::local_semaphore_wait(done, expected_done(g, r.roles, position)));
      writer.push_back(cmd::local_core_semaphore_set(done, 0));
    }
    const kargs::InterpreterStreamSpec writer_stream{out_args, cmd::encode_stream(writer),
                                                     static_cast<std::uint32_t>(writer.size())};
    add_slice_copy_kernels(program, core, spec, in_args, in_runs[run], writer_stream, p.split_reader_writer,
                           has_data);
  }
  return program;
}

}  // namespace

std::string to_string(BidirectionalMode mode) {
  switch (mode) {
    case BidirectionalMode::Auto:
      return "AUTO";
    case BidirectionalMode::SplitTensor:
      return "SPLIT_TENSOR";
    case BidirectionalMode::FullTensor:
      return "FULL_TENSOR";
  }
  return "unknown";
}

std::string to_string(RingAlgorithm algorithm) {
  switch (algorithm) {
    case RingAlgorithm::Auto:
      return "auto";
    case RingAlgorithm::Relay:
      return "relay";
    case RingAlgorithm::Multicast:
      return "multicast";
  }
  return "unknown";
}

RingAlgorithmChoice ring_algorithm_choice(const Params& params) {
  const bool fabric_ring = params.topology == CclTopology::Ring && params.mode == CclMode::Fabric;
  if (params.ring_algorithm == RingAlgorithm::Relay && !fabric_ring) {
    throw CclParamsError(fmt::format("all_gather: ring_algorithm relay relays through workers on a fabric ring; this "
                                     "is a {} in {} mode (a line multicasts, REFERENCE 7.4; legacy mode relays "
                                     "through its EDMs)",
                                     to_string(params.topology), params.mode == CclMode::Fabric ? "fabric" : "legacy"));
  }
  if (params.ring_algorithm != RingAlgorithm::Auto) return {params.ring_algorithm, "asked for"};
  if (fabric_ring) return {RingAlgorithm::Relay, "auto: a fabric ring relays"};
  return {RingAlgorithm::Multicast,
          params.mode == CclMode::Fabric ? "auto: a line multicasts" : "auto: legacy mode does not relay"};
}

RingAlgorithm resolved_ring_algorithm(const Params& params) { return ring_algorithm_choice(params).algorithm; }

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.input, p.dim, p.input_buffer, p.output_buffer, p.topology, p.num_links, p.groups, p.mode,
                     p.bidirectional, p.ring_algorithm, p.chunks_per_sync, p.workers_per_link, p.fabric, p.done_semaphore, p.barrier_semaphore, p.first_worker,
                     p.packet_size_in_pages, p.cb_packets, p.split_reader_writer, p.legacy, p.broadcast_buffers);
}

TensorSpec output_spec(const Params& params, const topo::Topology& topology) {
  if (params.mode == CclMode::Legacy) return legacy::output_spec(params, topology);
  const FabricPlan plan(topology, params.fabric);
  const auto groups = resolve_groups(params.groups, topology, plan);
  return with_dim_scaled(params.input, params.dim, static_cast<std::uint32_t>(groups.front().size()), true);
}

BidirectionalChoice bidirectional_choice(const Params& params) {
  if (params.topology == CclTopology::Line) return {BidirectionalMode::FullTensor, "a line multicasts both ways"};
  if (params.bidirectional != BidirectionalMode::Auto) return {params.bidirectional, "asked for"};
  if (params.mode == CclMode::Legacy) return {BidirectionalMode::FullTensor, "legacy mode's ring is full-tensor"};
  // REFERENCE 7.3 choose_bidirectional_mode: SPLIT when the input is larger than twice the
  // ERISC L1 an EDM can buffer (the code's own "guestimate").
  const std::uint64_t eth_l1_capacity = params.fabric.erisc_l1_map().unreserved_bytes;
  const std::uint64_t input = size_bytes(params.input);
  const bool split = input > 2 * eth_l1_capacity;
  return {split ? BidirectionalMode::SplitTensor : BidirectionalMode::FullTensor,
          fmt::format("auto: each chip's input ({} B) is {} twice the ERISC's unreserved L1 ({} B)", input,
                      split ? "over" : "at most", eth_l1_capacity)};
}

BidirectionalMode resolved_bidirectional_mode(const Params& params) { return bidirectional_choice(params).mode; }

namespace {
bool relays(const Params& params) {
  return params.mode == CclMode::Fabric && !needs_broadcast_fallback(params) &&
         resolved_ring_algorithm(params) == RingAlgorithm::Relay;
}
}  // namespace

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  const std::uint32_t per_link =
      relays(params) ? ring_relay::kDirectionsPerLink * workers_per_link(params)
                     : (resolved_bidirectional_mode(params) == BidirectionalMode::SplitTensor ? 2 : 1);
  return one_core_ranges(worker_cores(topology, params.first_worker, per_link * params.num_links, kOp));
}

std::uint32_t workers_per_link(const Params& params) { return relays(params) ? relay_workers_per_direction(params) : 1; }

bool needs_broadcast_fallback(const Params& params) { return broadcast_fallback::applies(params); }

std::string broadcast_fallback_reason(const Params& params) {
  if (!needs_broadcast_fallback(params)) return "";
  const std::uint32_t extent = params.input.shape[params.dim];
  return fmt::format("input dim {} is {} element{}, not whole 32-element tiles, so it runs as all_broadcast + concat "
                     "(REFERENCE 7.6): two ops, every chip's whole padded input to every chip, then a concat",
                     params.dim, extent, extent == 1 ? "" : "s");
}

std::uint32_t broadcast_buffer_count(const Params& params, const topo::Topology& topology) {
  // Legacy mode has no fallback (validate refuses it, saying so); its groups are not the
  // fabric's, which the broadcast's sizing would resolve and fail on first.
  if (!needs_broadcast_fallback(params) || params.mode == CclMode::Legacy) return 0;
  return all_broadcast::output_buffer_count(broadcast_fallback::broadcast_params(params), topology);
}

BufferConfig broadcast_buffer_config(const Params& params) {
  return interleaved_buffer_config(params.input, params.output_buffer.config.type);
}

namespace {
// An explicit relay where it does not apply: a line, legacy mode, the broadcast fallback.
void require_ring_algorithm_applies(const Params& params) {
  resolved_ring_algorithm(params);
  if (params.ring_algorithm == RingAlgorithm::Relay && needs_broadcast_fallback(params)) {
    throw CclParamsError(fmt::format("all_gather: ring_algorithm relay: dim {} of {} elements is not whole tiles and "
                                     "runs as all_broadcast + concat (REFERENCE 7.6), which does not relay",
                                     params.dim, params.input.shape[params.dim]));
  }
  if (params.bidirectional != BidirectionalMode::Auto && needs_broadcast_fallback(params)) {
    throw CclParamsError(fmt::format("all_gather: bidirectional {}: dim {} of {} elements is not whole tiles and runs "
                                     "as all_broadcast + concat (REFERENCE 7.6), which has no bidirectional mode",
                                     to_string(params.bidirectional), params.dim, params.input.shape[params.dim]));
  }
}
}  // namespace

std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  return params_by_shape(params, topology, [](Params& line) {
    line.ring_algorithm = RingAlgorithm::Auto;
    line.bidirectional = BidirectionalMode::Auto;
    line.workers_per_link.reset();
  });
}

std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology) {
  std::vector<PartChoice> choices;
  for (const Params& part : parts_by_shape(params, topology)) {
    choices.push_back({part.topology, part.groups, ring_algorithm_choice(part), bidirectional_choice(part)});
  }
  return choices;
}

void validate(const Params& params, const topo::Topology& topology) {
  require_ring_algorithm_applies(params);
  if (needs_broadcast_fallback(params)) return broadcast_fallback::validate(params, topology);
  if (params.mode == CclMode::Legacy) return legacy::validate(params, topology);
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

std::vector<MeshWorkload> build_workloads(const Params& params, const topo::Topology& topology) {
  require_ring_algorithm_applies(params);
  if (needs_broadcast_fallback(params)) return broadcast_fallback::build(params, topology);
  return {build(params, topology)};
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  if (needs_broadcast_fallback(params)) {
    broadcast_fallback::validate(params, topology);
    throw CclParamsError(fmt::format("all_gather: dim {} of {} elements runs as all_broadcast + concat, two "
                                     "workloads; build them with build_workloads()",
                                     params.dim, params.input.shape[params.dim]));
  }
  require_ring_algorithm_applies(params);
  if (params.mode == CclMode::Legacy) return legacy::build(params, topology);
  MeshWorkload workload = workload_by_shape(kOp, parts_by_shape(params, topology), topology, resolve, chip_program);
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  workload.global_semaphores = workload_semaphores({&params.done_semaphore, &params.barrier_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) {
  device.enqueue_workloads(build_workloads(params, device.topology()));  // all or none
  device.finish();
}

}  // namespace cclmesh::runtime::ccl::all_gather
