#include "runtime/ccl/reduce/reduce.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <span>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/op_buffers.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/reduction_chain_cbs.hpp"
#include "runtime/ccl/common/reduction_chunks.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::reduce {
namespace {

constexpr const char* kOp = "reduce";

// The chain's CBs (reduction_chain_cbs.hpp); the reduced one is also the chain start's raw input.
constexpr std::uint32_t kPartialCbId = kChainPartialCbId;
constexpr std::uint32_t kLocalCbId = kChainLocalCbId;
constexpr std::uint32_t kReducedCbId = kChainReducedCbId;
// Per-program semaphore: chunks of the previous chip's partial that have landed (1..6 are the
// fabric connections', ccl_common.hpp).
constexpr std::uint32_t kReceiveSemaphoreId = 7;
// The chunk when Params::chunk_packets is unset. A chip sends a chunk on only once it has landed
// whole and been summed, so the chain fills over N - 1 chunk times before the root's link is busy;
// nothing is credited back (the run is the receive buffer), so reduce_scatter's one-chunk credit
// stall cannot happen and its 3-chunk fit (fitted_reduction_chunk_packets) is not the rule here:
// the smallest chunk is. Measured (docs/collectives.md, reduce): 1 packet is within 1.5% of the
// fastest of 1, 2, 4, 8 and the 3-chunk fit at every point of 64 KiB..64 MiB on n300, 1x4, T3K line
// and ring, Galaxy axes (T3K 8-line 1 MiB: 229.53 us with 8, 229.53 fitted, 152.21 with 1).
constexpr std::uint32_t kFillChunkPackets = 1;

// The op's groups placed on the fabric (place_groups), and what this op works out from them.
struct Resolved : PlacedGroups {
  // The pages the chains move and sum: the tensor's, or a ROW_MAJOR row wider than a fabric
  // payload in pieces (FabricPages), each a page to the workers and the reduce kernel.
  FabricPages fabric_pages;
  std::uint32_t page_size = 0;  // fabric_pages.page_bytes
  std::uint32_t packet_pages = 0;
  bool ring = false;
  std::vector<bool> ring_up;         // per run of a ring: the chain moves toward higher positions
  std::vector<std::uint32_t> links;  // per run: its routing plane
  std::vector<CoreCoord> cores;
  std::vector<std::uint32_t> run_pages;
  std::vector<std::uint32_t> chunk_packets;
};

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// The chains of a run's pages: a ring splits the tensor between an up and a down chain, a line
// runs one.
std::uint32_t chains_of(CclTopology topology) { return topology == CclTopology::Ring ? 2 : 1; }

// The chains run along the fabric, by position (FabricGroup); the root is a rank, found at its
// position, so a ring run as a line from mid-ring (positions 1-2-3-0 holding ranks 1, 2, 3, 0)
// ends its chain at the root's chip wherever the line starts. Whether run `run`'s chain in `g`
// moves toward higher positions: a ring's as the run's half, a line's down when the root is at
// position 0 (no wrap), else up.
bool chain_up(const Resolved& r, const FabricGroup& g, std::uint32_t root, std::uint32_t run) {
  return r.ring ? r.ring_up[run] : g.position_of(root) != 0;
}

// The index on a chain ending at position `root_position` of the chip at `position`: 0 = the
// start, n - 1 = the root.
std::uint32_t chain_index(std::uint32_t n, std::uint32_t root_position, std::uint32_t position, bool up) {
  return up ? (position + 2 * n - root_position - 1) % n : (root_position + 2 * n - position - 1) % n;
}
std::uint32_t neighbour(std::uint32_t n, std::uint32_t position, bool toward_higher) {
  return toward_higher ? (position + 1) % n : (position + n - 1) % n;
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  if (p.mode == CclMode::Legacy) {
    throw CclParamsError(
        "reduce: legacy EDM mode is not supported: the 2024 per-op EDMs carried only all_gather, "
        "reduce_scatter and all_reduce; reduce is a fabric-era op (REFERENCE 5, 7.6); use mode fabric");
  }
  Resolved r;
  r.page_size = page_size_bytes(p.tensor);
  r.fabric_pages = FabricPages{r.page_size, 1, static_cast<std::uint32_t>(num_pages(p.tensor))};
  static_cast<PlacedGroups&>(r) = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);
  const std::uint32_t n = r.group_size;
  if (p.root >= n) {
    throw CclParamsError(fmt::format("reduce: root {} is not a rank of a group of {} chips; expected 0..{}", p.root,
                                     n, n - 1));
  }
  if (n - 1 > kMaxFabricHops) {
    throw CclParamsError(
        fmt::format("reduce: a {} of {} chips sends over {} hops (the line's wrap, the ring's barrier "
                    "increments); a fabric route holds at most {} (REFERENCE 6.5)",
                    to_string(p.topology), n, n - 1, kMaxFabricHops));
  }
  require_fabric_input_output_buffers(topology, r.all_chips, p.input_buffer, p.tensor, p.output_buffer, p.tensor, kOp);
  if (p.cb_packets == 0 || p.chunk_packets == 0u) {
    throw CclParamsError("reduce: cb_packets and chunk_packets must be at least 1");
  }
  // A TILE page always fits a payload (bfp8_b's shared exponents could not be cut); a wide row
  // moves in pieces of whole elements, which the kernel sums as it sums pages.
  if (p.tensor.layout == Layout::RowMajor) {
    r.fabric_pages =
        fabric_pages(r.page_size, num_pages(p.tensor), p.fabric.max_payload_bytes, RowPieceChoice::Fewest, kOp);
    r.page_size = r.fabric_pages.page_bytes;
  }
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  if (p.packet_size_in_pages == 0) r.packet_pages *= kReductionPayloadsPerPacket;
  r.ring = p.topology == CclTopology::Ring;
  // Runs of pages, direction-major: every chain direction's share of the tensor is split again
  // among the links, each run a chain of its own on its own worker core and routing plane
  // (REFERENCE 3.5), so with L links every link direction carries 1/L of what it carried.
  for (std::uint32_t chain = 0; chain < chains_of(p.topology); ++chain) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      r.ring_up.push_back(chain == 0);
      r.links.push_back(link);
    }
  }
  const std::uint32_t pages = r.fabric_pages.count;
  const auto runs = static_cast<std::uint32_t>(r.links.size());
  for (const api::TensorSlice& run :
       cmd::split_tensor_slice_across_workers_wrapped_page_aligned(flat_run(pages, 0, pages), runs)) {
    r.run_pages.push_back(static_cast<std::uint32_t>(api::volume(run.worker_slice_shape)));
  }
  r.cores = worker_cores(topology, p.first_worker, runs, kOp);
  for (std::uint32_t run = 0; run < runs; ++run) {
    r.chunk_packets.push_back(reduction_chunk_packets(r.run_pages[run], r.packet_pages, r.page_size,
                                                      p.chunk_packets.value_or(kFillChunkPackets), kOp));
  }
  require_semaphore_on(p.barrier_semaphore, r.cores, kOp, "barrier_semaphore");
  return r;
}

KernelSpec reduce_kernel_for(CoreCoord core, DataType dtype, std::uint32_t blocks, std::uint32_t pages_per_block) {
  kargs::ReduceSpec reduce;
  reduce.in0_cb_id = kPartialCbId;
  reduce.in1_cb_id = kLocalCbId;
  reduce.out_cb_id = kReducedCbId;
  reduce.data_format = reduce_data_format(dtype);
  reduce.num_blocks = blocks;
  reduce.pages_per_block = pages_per_block;
  return reduce_kernel(core, reduce);
}

// The program of the chip at `position` of group `g`.
Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t position) {
  const std::uint32_t n = g.size();
  const std::uint32_t root_position = g.position_of(p.root);
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const BufferLayout in_layout = buffers.layout(p.input_buffer);
  const BufferLayout out_layout = buffers.layout(p.output_buffer);
  const std::uint32_t tensor_pages = r.fabric_pages.count;
  const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
  const cmd::SemaphoreId receive{kReceiveSemaphoreId};

  Program program;
  std::uint32_t first_page = 0;
  for (std::uint32_t run = 0; run < r.links.size(); ++run) {
    const std::uint32_t pages = r.run_pages[run];
    const std::uint32_t run_first = first_page;
    first_page += pages;
    if (pages == 0) continue;
    const bool up = chain_up(r, g, p.root, run);
    const CoreCoord core = r.cores[run];
    const Noc0Coord noc = map.tensix_noc0(core);
    const std::uint32_t k = chain_index(n, root_position, position, up);
    const bool start = k == 0;
    const bool root = k + 1 == n;
    const std::uint32_t next = neighbour(n, position, up);
    const std::uint32_t prev = neighbour(n, position, !up);
    // On a ring both chains run on every chip, and a router's worker channel takes one worker
    // (REFERENCE 6.3): each worker keeps to its chain's direction, so its barrier increment to
    // the previous chip goes the long way round (N - 1 hops). A line has one worker.
    const cmd::ChipUnicast toward_next = g.route(position, next);
    const std::optional<cmd::ChipUnicast> to_next =
        root ? std::nullopt : std::optional<cmd::ChipUnicast>(toward_next);
    std::optional<cmd::ChipUnicast> to_prev;
    if (!start) to_prev = r.ring ? cmd::ChipUnicast{n - 1, toward_next.forward} : g.route(position, prev);
    const std::uint32_t chunk_pages = r.chunk_packets[run] * r.packet_pages;
    const std::uint32_t chunks = ceil_div(pages, chunk_pages);
    const auto chunk = [&](std::uint32_t c) {
      const std::uint32_t first = c * chunk_pages;
      return flat_run(tensor_pages, run_first + first, std::min(chunk_pages, pages - first));
    };

    // As reduce_scatter's workers (docs/collectives.md): a reader interpreter (RISC-V 1, NoC1)
    // takes the received partials and this chip's input into CBs, the reduce kernel on the
    // compute processor sums them, and a writer interpreter (RISC-V 0, NoC0) holds the fabric
    // connections and sends the sums on, so a chunk's reads overlap the previous chunk's sends.
    std::vector<cmd::Command> sends;
    if (to_prev) sends.push_back(cmd::fabric_unicast_semaphore_inc(barrier, 1, noc.x, noc.y, *to_prev));
    if (to_next) {
      sends.push_back(cmd::local_semaphore_wait(barrier, 1));
      sends.push_back(cmd::local_core_semaphore_set(barrier, 0));
    }
    std::vector<cmd::Command> partials;
    for (std::uint32_t c = 0; c < chunks; ++c) {
      if (!start) {
        partials.push_back(cmd::local_semaphore_wait(receive, c + 1));
        partials.push_back(cmd::read_tensor_slice_to_cb(chunk(c), kPartialCbId));
      }
      if (root) {
        sends.push_back(cmd::local_write_cb_to_tensor_slice(chunk(c), kReducedCbId));
      } else {
        sends.push_back(cmd::fabric_write_cb_to_tensor_slice(chunk(c), kReducedCbId, *to_next));
        sends.push_back(cmd::fabric_unicast_semaphore_inc(receive, 1, noc.x, noc.y, *to_next));
      }
    }
    if (!start) partials.push_back(cmd::local_core_semaphore_set(receive, 0));
    const std::vector<cmd::Command> inputs{
        cmd::read_tensor_slice_to_cb(flat_run(tensor_pages, run_first, pages), start ? kReducedCbId : kLocalCbId)};

    kargs::InterpreterSpec writer;
    writer.packet_header_cb_id = kPacketHeaderCbId;
    writer.packet_size_in_pages = r.packet_pages;
    writer.semaphore_ids = {kReceiveSemaphoreId};
    program.semaphores.push_back(tensix_semaphore(core, kReceiveSemaphoreId));
    const bool forward = (to_next && to_next->forward) || (to_prev && to_prev->forward);
    const bool backward = (to_next && !to_next->forward) || (to_prev && !to_prev->forward);
    connect_to_fabric(program, writer, r.plan, g.port(r.links[run]), chip, core, forward, backward);
    kargs::InterpreterSpec reader;
    reader.packet_header_cb_id = kPacketHeaderCbId;
    reader.packet_size_in_pages = r.packet_pages;
    reader.semaphore_ids = writer.semaphore_ids;
    const auto stream_of = [&map, &r](const BufferLayout& layout, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{in_fabric_pages(layout.interpreter_args(map), r.fabric_pages),
                                          cmd::encode_stream(cmds),
                                          static_cast<std::uint32_t>(cmds.size())};
    };
    writer.streams = {stream_of(out_layout, sends)};
    reader.streams = {stream_of(in_layout, inputs)};
    if (!partials.empty()) reader.streams.insert(reader.streams.begin(), stream_of(out_layout, partials));
    program.kernels.push_back(interpreter_kernel(core, writer));
    program.kernels.push_back(interpreter_kernel(core, reader, DataMovementProcessor::Riscv1, NocIndex::Noc1));
    if (!start) {
      program.kernels.push_back(reduce_kernel_for(core, p.tensor.dtype, ceil_div(pages, r.packet_pages), r.packet_pages));
    }
    program.circular_buffers.push_back(packet_header_cb(core));
    add_reduction_chain_cbs(program.circular_buffers, core,
                            {.packet_pages = r.packet_pages, .local_packets = p.cb_packets,
                             .chunk_pages = chunk_pages, .page_size = r.page_size});
  }
  return program;
}

// The op per shape its groups run as (groups_by_shape): one part, `params`, unless a ring group
// runs as a line around a down link; that part is a line reduce (nothing of a ring's to clear).
std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  return params_by_shape(params, topology, [](Params&) {});
}

// The ranks in the order run `run` of group `g` adds them: along its chain, from the chip after
// the root's position round to the root.
std::vector<std::uint32_t> chain_ranks(const Params& p, const Resolved& r, const FabricGroup& g, std::uint32_t run) {
  if (run >= r.links.size()) {
    throw CclParamsError(fmt::format("reduce: run {} of {}", run, r.links.size()));
  }
  const std::uint32_t n = g.size();
  const std::uint32_t root_position = g.position_of(p.root);
  const bool up = chain_up(r, g, p.root, run);
  std::vector<std::uint32_t> order;
  for (std::uint32_t k = 1; k <= n; ++k) {
    order.push_back(g.rank_at(up ? (root_position + k) % n : (root_position + n * k - k) % n));
  }
  return order;
}

// The chips of `g` in rank order, as the caller gave the group.
std::vector<ChipId> chips_by_rank(const FabricGroup& g) {
  std::vector<ChipId> chips;
  for (std::uint32_t rank = 0; rank < g.size(); ++rank) chips.push_back(g.chips[g.position_of(rank)]);
  return chips;
}

// `group` (chips in rank order) as its part of the op placed it: the part and its group.
struct PlacedGroup {
  Params part;
  Resolved resolved;
  FabricGroup group;
};
PlacedGroup placed_group(const Params& params, const topo::Topology& topology, const std::vector<ChipId>& group) {
  for (const Params& part : parts_by_shape(params, topology)) {
    Resolved r = resolve(part, topology);
    for (const FabricGroup& g : r.groups) {
      if (chips_by_rank(g) == group) return PlacedGroup{part, r, g};
    }
  }
  throw CclParamsError(fmt::format("reduce: group {} is none of the op's groups", fmt::join(group, ",")));
}

reference::Bytes reference_for(const PlacedGroup& placed, const std::vector<reference::Bytes>& inputs_by_rank) {
  const Resolved& r = placed.resolved;
  if (inputs_by_rank.size() != r.group_size) {
    throw CclParamsError(
        fmt::format("reduce reference: {} inputs for a group of {}", inputs_by_rank.size(), r.group_size));
  }
  reference::Bytes out(inputs_by_rank.front().size());
  std::uint64_t first_page = 0;
  for (std::uint32_t run = 0; run < r.links.size(); ++run) {
    const std::uint64_t offset = r.fabric_pages.image_offset(first_page);
    const std::uint64_t bytes = r.fabric_pages.image_offset(first_page + r.run_pages[run]) - offset;
    first_page += r.run_pages[run];
    if (bytes == 0) continue;
    std::vector<std::span<const std::byte>> parts;
    for (std::uint32_t rank : chain_ranks(placed.part, r, placed.group, run)) {
      parts.push_back(std::span<const std::byte>(inputs_by_rank.at(rank)).subspan(offset, bytes));
    }
    const reference::Bytes sum = reference::sum_in_order(parts, placed.part.tensor.dtype);
    std::memcpy(out.data() + offset, sum.data(), bytes);
  }
  return out;
}

// The first group of an op whose every group adds in rank order (one shape, positions are ranks),
// so that its order is every group's; else CclParamsError asking for the group.
PlacedGroup group_in_rank_order(const Params& params, const topo::Topology& topology) {
  const std::vector<Params> parts = parts_by_shape(params, topology);
  if (parts.size() > 1) {
    throw CclParamsError("reduce: the op's groups run as rings and lines (a ring run as a line around a "
                         "down link), which add in different orders; give the group");
  }
  const Resolved r = resolve(parts.front(), topology);
  for (const FabricGroup& g : r.groups) {
    if (!g.positions_are_ranks()) {
      throw CclParamsError(fmt::format("reduce: group {} runs as a line from mid-ring, so it adds in "
                                       "another order than the op's other groups; give the group",
                                       fmt::join(chips_by_rank(g), ",")));
    }
  }
  return PlacedGroup{parts.front(), r, r.groups.front()};
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.tensor, p.root, p.input_buffer, p.output_buffer, p.topology, p.num_links, p.groups, p.mode,
                     p.fabric, p.barrier_semaphore, p.first_worker, p.packet_size_in_pages, p.chunk_packets,
                     p.cb_packets);
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  // A ring's 2 workers per link, or a line's 1: the ring's cover a line part's too.
  return one_core_ranges(
      worker_cores(topology, params.first_worker, chains_of(params.topology) * params.num_links, kOp));
}

void validate(const Params& params, const topo::Topology& topology) {
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  MeshWorkload workload = workload_by_shape(kOp, parts_by_shape(params, topology), topology, resolve, chip_program);
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  workload.global_semaphores = workload_semaphores({&params.barrier_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

std::vector<std::uint32_t> chain_order(const Params& params, const topo::Topology& topology, std::uint32_t run) {
  const PlacedGroup placed = group_in_rank_order(params, topology);
  return chain_ranks(placed.part, placed.resolved, placed.group, run);
}

std::vector<std::uint32_t> chain_order(const Params& params, const topo::Topology& topology,
                                       const std::vector<ChipId>& group, std::uint32_t run) {
  const PlacedGroup placed = placed_group(params, topology, group);
  return chain_ranks(placed.part, placed.resolved, placed.group, run);
}

reference::Bytes reference_output(const Params& params, const topo::Topology& topology,
                                  const std::vector<reference::Bytes>& inputs_by_rank) {
  return reference_for(group_in_rank_order(params, topology), inputs_by_rank);
}

reference::Bytes reference_output(const Params& params, const topo::Topology& topology,
                                  const std::vector<ChipId>& group,
                                  const std::vector<reference::Bytes>& inputs_by_rank) {
  return reference_for(placed_group(params, topology, group), inputs_by_rank);
}

}  // namespace cclmesh::runtime::ccl::reduce
