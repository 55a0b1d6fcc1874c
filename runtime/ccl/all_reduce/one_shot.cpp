#include "runtime/ccl/all_reduce/one_shot.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_reduce/local_sum.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_reduce::one_shot {
namespace {

constexpr const char* kOp = "all_reduce";

// The gather core's CB (kDataCbId) holds this many packets.
constexpr std::uint32_t kGatherCbPackets = 3;
// The local chain's CB packets hold this many fabric payloads: its one interpreter reads and
// writes with a barrier per packet, so bigger packets mean fewer DRAM round trips (as the
// reduce_scatter's, reduce_scatter.cpp). No fabric packet is cut from them.
constexpr std::uint32_t kLocalPayloadsPerPacket = 4;

// The multicast reach of `position`: the whole group once (ring: N/2 up, (N-1)/2 down).
cmd::ChipMulticast reach(const FabricGroup& g, std::uint32_t position) {
  const std::uint32_t n = g.size();
  if (g.topology == CclTopology::Ring) return g.multicast(position, n / 2, (n - 1) / 2);
  return g.multicast(position, g.reach_up(position), g.reach_down(position));
}

// The gather core's CB packet in pages. The interpreter sends a CB packet of interleaved pages as
// scatter writes of at most kNocScatterWriteMaxChunks pages each (consecutive interleaved pages sit
// in different banks, REFERENCE 4.10, 6.5), so a CB packet that is not a whole number of them
// ends in a short fabric packet: 34 rows of 128 B (the 4352 B payload's worth) went out as 8
// packets of 4 rows and one of 2. The default is rounded down to whole scatter writes, as
// tt-metal's writers pack min(4, payload / page) pages into every packet (REFERENCE 7.1). Pages
// of which fewer than 4 fit a payload (bf16 and fp32 tiles) and an explicit packet_size_in_pages
// are left as they are.
std::uint32_t gather_packet(const Params& p) {
  const std::uint32_t packet =
      packet_size_in_pages(p.packet_size_in_pages, moved_pages(p).page_bytes, p.fabric.max_payload_bytes);
  constexpr std::uint32_t kChunks = api::kNocScatterWriteMaxChunks;
  if (p.packet_size_in_pages != 0 || packet < kChunks) return packet;
  return packet - packet % kChunks;
}

void add_gather(Program& program, const Params& p, const FabricPlan& plan, const FabricGroup& g,
                std::uint32_t position,
                const ChipBuffers& buffers, CoreCoord core, Noc0Coord reduce_core, std::uint32_t packet) {
  const ChipId chip = g.chips[position];
  const FabricPages moved = moved_pages(p);
  const std::uint32_t page = moved.page_bytes;
  const std::uint32_t pages = moved.count;
  const std::uint32_t n = g.size();
  const cmd::ChipMulticast mcast = reach(g, position);
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kPacketHeaderCbId;
  spec.packet_size_in_pages = packet;
  program.circular_buffers.push_back(packet_header_cb(core));
  program.circular_buffers.push_back(data_cb(core, page, packet * kGatherCbPackets));
  connect_to_fabric(program, spec, plan, g.port(0), chip, core, mcast.num_targets_forward > 0,
                    mcast.num_targets_backward > 0);
  const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
  const std::vector<cmd::Command> writer{
      // Every chip's input lands in its rank's slot, so the sums run in rank order on any line.
      cmd::fabric_write_cb_to_tensor_slice(flat_run(n * pages, g.rank_at(position) * pages, pages), kDataCbId,
                                           mcast),
      cmd::fabric_multicast_semaphore_inc(done, 1, reduce_core.x, reduce_core.y, mcast)};
  const kargs::InterpreterStreamSpec reader_stream{
      in_fabric_pages(buffers.interpreter_args(p.input_buffer), moved),
      cmd::encode_command(cmd::read_tensor_slice_to_cb(flat_run(pages, 0, pages), kDataCbId)), 1};
  const kargs::InterpreterStreamSpec writer_stream{
      in_fabric_pages(buffers.interpreter_args(p.intermediate_buffer), moved),
      cmd::encode_stream(writer), static_cast<std::uint32_t>(writer.size())};
  add_copy_kernels(program, core, spec, reader_stream, writer_stream, true);
}


// The local sum's CB packet in pages.
std::uint32_t local_sum_packet(const Params& p) {
  return packet_size_in_pages(p.packet_size_in_pages, moved_pages(p).page_bytes, p.fabric.max_payload_bytes) *
         kLocalPayloadsPerPacket;
}

}  // namespace

bool sums_fit(const Params& params) { return sums_fit_in_l1(params, local_sum_packet(params)); }

void validate_reach(const Params& p, const topo::Topology& topology) {
  const FabricPlan plan(topology, p.fabric);
  for (const auto& chips : resolve_groups(p.groups, topology, plan)) {
    const FabricGroup g = map_group_onto_fabric(plan, chips, group_runs_as(plan, chips, p.topology), kOp);
    for (std::uint32_t position = 0; position < g.size(); ++position) {
      const cmd::ChipMulticast mcast = reach(g, position);
      const std::uint32_t farthest = std::max(mcast.num_targets_forward, mcast.num_targets_backward);
      if (farthest > kMaxFabricHops) {
        throw CclParamsError(fmt::format("all_reduce: the one-shot's multicast from chip {} reaches {} hops; a fabric "
                                         "route holds at most {} (REFERENCE 6.5)",
                                         g.chips[position], farthest, kMaxFabricHops));
      }
    }
  }
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  const FabricPlan plan(topology, p.fabric);
  const std::vector<CoreCoord> cores = worker_cores(topology, p.first_worker, 2, kOp);
  require_semaphore_on(p.done_semaphore, cores, kOp, "done_semaphore");
  if (p.chunk_packets == 0u) throw CclParamsError("all_reduce: chunk_packets must be at least 1");
  const std::uint32_t packet = gather_packet(p);
  MeshWorkload workload;
  workload.name = "one_shot";
  for (const auto& chips : resolve_groups(p.groups, topology, plan)) {
    // A ring run as a line around a down link multicasts along the line (per group, as here).
    const FabricGroup g = map_group_onto_fabric(plan, chips, group_runs_as(plan, chips, p.topology), kOp);
    for (std::uint32_t position = 0; position < g.size(); ++position) {
      const ChipBuffers buffers(topology, g.chips[position]);
      Program program;
      add_gather(program, p, plan, g, position, buffers, cores[0], buffers.map().tensix_noc0(cores[1]), packet);
      add_local_sum(program, p, topology, g.chips[position], cores[1], g.size(), local_sum_packet(p),
                    cmd::GlobalSemaphoreAddress{p.done_semaphore->address});
      workload.programs[g.chips[position]] = std::move(program);
    }
  }
  return workload;
}

}  // namespace cclmesh::runtime::ccl::all_reduce::one_shot
