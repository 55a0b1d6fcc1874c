#include "runtime/ccl/reduce/reduce.hpp"

#include <fmt/format.h>

#include <cstring>
#include <span>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/reduction_chunks.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::reduce {
namespace {

constexpr const char* kOp = "reduce";

constexpr std::uint32_t kPartialCbId = 0;  // the received partial (reduce in0)
constexpr std::uint32_t kLocalCbId = 1;    // this chip's input (reduce in1)
constexpr std::uint32_t kReducedCbId = 2;  // reduce out, and the chain start's raw input
// Per-program semaphore: chunks of the previous chip's partial that have landed (1..6 are the
// fabric connections', ccl_common.hpp).
constexpr std::uint32_t kReceiveSemaphoreId = 7;

struct Resolved {
  FabricPlan plan;
  std::vector<FabricGroup> groups;
  std::uint32_t group_size = 0;
  std::uint32_t page_size = 0;
  std::uint32_t packet_pages = 0;
  bool ring = false;
  std::vector<bool> up;              // per run: the chain moves toward higher ranks
  std::vector<std::uint32_t> links;  // per run: its routing plane
  std::vector<CoreCoord> cores;
  std::vector<std::uint32_t> run_pages;
  std::vector<std::uint32_t> chunk_packets;
};

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// The chain directions: a ring splits the tensor between an up and a down chain; a line runs
// one chain, down when the root is rank 0 (no wrap), else up.
std::vector<bool> chain_directions(CclTopology topology, std::uint32_t root) {
  if (topology == CclTopology::Ring) return {true, false};
  return {root != 0};
}

// The position of `rank` on a chain ending at `root`: 0 = the start, n - 1 = the root.
std::uint32_t position(std::uint32_t n, std::uint32_t root, std::uint32_t rank, bool up) {
  return up ? (rank + 2 * n - root - 1) % n : (root + 2 * n - rank - 1) % n;
}
std::uint32_t step(std::uint32_t n, std::uint32_t rank, bool toward_higher) {
  return toward_higher ? (rank + 1) % n : (rank + n - 1) % n;
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  if (p.mode == CclMode::Legacy) {
    throw CclParamsError(
        "reduce: legacy EDM mode is not supported: the 2024 per-op EDMs carried only all_gather, "
        "reduce_scatter and all_reduce; reduce is a fabric-era op (REFERENCE 5, 7.6); use mode fabric");
  }
  Resolved r;
  r.page_size = page_size_bytes(p.tensor);
  PlacedGroups placed = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp,
                                     RankPlacement::ByPosition);
  r.plan = std::move(placed.plan);
  r.groups = std::move(placed.groups);
  r.group_size = placed.group_size;
  const std::vector<ChipId>& all_chips = placed.all_chips;
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
  require_buffer_holds(p.input_buffer, p.tensor, kOp, "input");
  require_buffer_holds(p.output_buffer, p.tensor, kOp, "output");
  if (p.input_buffer.id == p.output_buffer.id) {
    throw CclParamsError("reduce: input and output are the same buffer; expected two buffers");
  }
  require_uniform_core_maps(topology, all_chips, kOp);
  require_buffer_layouts(topology, all_chips, {&p.input_buffer, &p.output_buffer});
  if (p.cb_packets == 0 || p.chunk_packets == 0) {
    throw CclParamsError("reduce: cb_packets and chunk_packets must be at least 1");
  }
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.page_size, p.fabric.max_payload_bytes);
  if (p.packet_size_in_pages == 0) r.packet_pages *= kReductionPayloadsPerPacket;
  r.ring = p.topology == CclTopology::Ring;
  // Runs of pages, direction-major: every chain direction's share of the tensor is split again
  // among the links, each run a chain of its own on its own worker core and routing plane
  // (REFERENCE 3.5), so with L links every link direction carries 1/L of what it carried.
  for (const bool up : chain_directions(p.topology, p.root)) {
    for (std::uint32_t link = 0; link < p.num_links; ++link) {
      r.up.push_back(up);
      r.links.push_back(link);
    }
  }
  const auto pages = static_cast<std::uint32_t>(num_pages(p.tensor));
  const auto runs = static_cast<std::uint32_t>(r.up.size());
  for (const api::TensorSlice& run :
       cmd::split_tensor_slice_across_workers_wrapped_page_aligned(flat_run(pages, 0, pages), runs)) {
    r.run_pages.push_back(static_cast<std::uint32_t>(api::volume(run.worker_slice_shape)));
  }
  r.cores = worker_cores(topology, p.first_worker, runs, kOp);
  for (std::uint32_t run = 0; run < runs; ++run) {
    r.chunk_packets.push_back(
        reduction_chunk_packets(r.run_pages[run], r.packet_pages, r.page_size, p.chunk_packets, kOp));
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

Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t rank) {
  const std::uint32_t n = g.size();
  const ChipId chip = g.chips[rank];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const BufferLayout in_layout = buffers.layout(p.input_buffer);
  const BufferLayout out_layout = buffers.layout(p.output_buffer);
  const auto tensor_pages = static_cast<std::uint32_t>(num_pages(p.tensor));
  const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
  const cmd::SemaphoreId receive{kReceiveSemaphoreId};

  Program program;
  std::uint32_t first_page = 0;
  for (std::uint32_t run = 0; run < r.up.size(); ++run) {
    const std::uint32_t pages = r.run_pages[run];
    const std::uint32_t run_first = first_page;
    first_page += pages;
    if (pages == 0) continue;
    const bool up = r.up[run];
    const CoreCoord core = r.cores[run];
    const Noc0Coord noc = map.tensix_noc0(core);
    const std::uint32_t k = position(n, p.root, rank, up);
    const bool start = k == 0;
    const bool root = k + 1 == n;
    const std::uint32_t next = step(n, rank, up);
    const std::uint32_t prev = step(n, rank, !up);
    // On a ring both chains run on every chip, and a router's worker channel takes one worker
    // (REFERENCE 6.3): each worker keeps to its chain's direction, so its barrier increment to
    // the previous chip goes the long way round (N - 1 hops). A line has one worker.
    const cmd::ChipUnicast toward_next = g.route(rank, next);
    const std::optional<cmd::ChipUnicast> to_next =
        root ? std::nullopt : std::optional<cmd::ChipUnicast>(toward_next);
    std::optional<cmd::ChipUnicast> to_prev;
    if (!start) to_prev = r.ring ? cmd::ChipUnicast{n - 1, toward_next.forward} : g.route(rank, prev);
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
    const auto stream_of = [&map](const BufferLayout& layout, const std::vector<cmd::Command>& cmds) {
      return kargs::InterpreterStreamSpec{layout.interpreter_args(map), cmd::encode_stream(cmds),
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
    program.circular_buffers.push_back(
        CircularBufferSpec{kPartialCbId, {CoreRange{core, core}}, 2 * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kLocalCbId, {CoreRange{core, core}}, p.cb_packets * r.packet_pages, r.page_size});
    program.circular_buffers.push_back(
        CircularBufferSpec{kReducedCbId, {CoreRange{core, core}}, chunk_pages, r.page_size});
  }
  return program;
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.tensor, p.root, p.input_buffer, p.output_buffer, p.topology, p.num_links, p.groups, p.mode,
                     p.fabric, p.barrier_semaphore, p.first_worker, p.packet_size_in_pages, p.chunk_packets,
                     p.cb_packets);
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  const auto runs = static_cast<std::uint32_t>(chain_directions(params.topology, params.root).size());
  return one_core_ranges(worker_cores(topology, params.first_worker, runs * params.num_links, kOp));
}

void validate(const Params& params, const topo::Topology& topology) { resolve(params, topology); }

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  const Resolved r = resolve(params, topology);
  MeshWorkload workload = per_rank_workload(kOp, r.groups, [&](const FabricGroup& g, std::uint32_t rank) {
    return chip_program(params, topology, r, g, rank);
  });
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  workload.global_semaphores = workload_semaphores({&params.barrier_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

std::vector<std::uint32_t> chain_order(const Params& params, const topo::Topology& topology, std::uint32_t run) {
  const Resolved r = resolve(params, topology);
  if (run >= r.up.size()) {
    throw CclParamsError(fmt::format("reduce: run {} of {}", run, r.up.size()));
  }
  const std::uint32_t n = r.group_size;
  std::vector<std::uint32_t> order;
  for (std::uint32_t k = 1; k <= n; ++k) {
    order.push_back(r.up[run] ? (params.root + k) % n : (params.root + n * k - k) % n);
  }
  return order;
}

reference::Bytes reference_output(const Params& params, const topo::Topology& topology,
                                  const std::vector<reference::Bytes>& inputs_by_rank) {
  const Resolved r = resolve(params, topology);
  if (inputs_by_rank.size() != r.group_size) {
    throw CclParamsError(
        fmt::format("reduce reference: {} inputs for a group of {}", inputs_by_rank.size(), r.group_size));
  }
  reference::Bytes out(inputs_by_rank.front().size());
  std::uint64_t first_page = 0;
  for (std::uint32_t run = 0; run < r.up.size(); ++run) {
    const std::uint64_t offset = first_page * r.page_size;
    const std::uint64_t bytes = std::uint64_t{r.run_pages[run]} * r.page_size;
    first_page += r.run_pages[run];
    if (bytes == 0) continue;
    std::vector<std::span<const std::byte>> parts;
    for (std::uint32_t rank : chain_order(params, topology, run)) {
      parts.push_back(std::span<const std::byte>(inputs_by_rank.at(rank)).subspan(offset, bytes));
    }
    const reference::Bytes sum = reference::sum_in_order(parts, params.tensor.dtype);
    std::memcpy(out.data() + offset, sum.data(), bytes);
  }
  return out;
}

}  // namespace cclmesh::runtime::ccl::reduce
