#include "runtime/ccl/all_broadcast/all_broadcast.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_broadcast {
namespace {

constexpr const char* kOp = "all_broadcast";

// The op's groups placed on the fabric (place_groups), and what this op works out from them.
struct Resolved : PlacedGroups {
  std::vector<CoreCoord> cores;  // one per link
  // The pages the workers move: the input's, or its ROW_MAJOR rows wider than a fabric payload in
  // equal 32 B-aligned pieces that fill one (row_pieces.hpp, FillPayload), as broadcast moves them.
  FabricPages pages;
  std::uint32_t packet_pages = 0;
};

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  if (p.cb_packets == 0) throw CclParamsError("all_broadcast: cb_packets is 0; expected at least 1");
  static_cast<PlacedGroups&>(r) = place_groups(p.groups, topology, p.fabric, p.topology, p.num_links, kOp);
  const std::uint32_t n = r.group_size;
  for (const FabricGroup& g : r.groups) {
    for (std::uint32_t position = 0; position < n; ++position) {
      const FabricGroup::Reach reach = g.full_reach(position);
      if (reach.up > kMaxFabricHops || reach.down > kMaxFabricHops) {
        throw CclParamsError(fmt::format("all_broadcast: chip {} would multicast {} hops; a fabric route holds at "
                                         "most {} (REFERENCE 6.5)",
                                         g.chips[position], std::max(reach.up, reach.down), kMaxFabricHops));
      }
    }
  }
  if (n * p.num_links > kMaxInlineValue) {
    throw CclParamsError(fmt::format("all_broadcast: every chip waits for {} increments; an inline wait target holds "
                                     "at most {} (REFERENCE 4.11)",
                                     n * p.num_links, kMaxInlineValue));
  }
  if (p.output_buffers.size() != n) {
    throw CclParamsError(fmt::format("all_broadcast: {} output buffers for groups of {} chips; expected one per rank",
                                     p.output_buffers.size(), n));
  }
  require_buffer_holds(p.input_buffer, p.input, kOp, "input");
  for (std::uint32_t i = 0; i < n; ++i) {
    require_buffer_holds(p.output_buffers[i], p.input, kOp, fmt::format("output {}", i));
    if (p.output_buffers[i].id == p.input_buffer.id) {
      throw CclParamsError(fmt::format("all_broadcast: output {} is the input buffer; expected distinct buffers", i));
    }
    for (std::uint32_t j = 0; j < i; ++j) {
      if (p.output_buffers[j].id == p.output_buffers[i].id) {
        throw CclParamsError(fmt::format("all_broadcast: outputs {} and {} are the same buffer", j, i));
      }
    }
  }
  require_uniform_core_maps(topology, r.all_chips, kOp);
  require_buffer_layouts(topology, r.all_chips, {&p.input_buffer});
  for (const BufferHandle& b : p.output_buffers) require_buffer_layouts(topology, r.all_chips, {&b});
  r.cores = worker_cores(topology, p.first_worker, p.num_links, kOp);
  require_semaphore_on(p.done_semaphore, {r.cores.front()}, kOp, "done_semaphore");
  if (p.barrier_semaphore) require_semaphore_on(p.barrier_semaphore, r.cores, kOp, "barrier_semaphore");
  r.pages = fabric_pages(p.input_buffer.config, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
  r.packet_pages = packet_size_in_pages(p.packet_size_in_pages, r.pages.page_bytes, p.fabric.max_payload_bytes);
  return r;
}

// The program of the chip at `position` of group `g`: the multicast reaches out from the position,
// the data lands in the buffer of the position's rank.
Program chip_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                     std::uint32_t position) {
  const ChipId chip = g.chips[position];
  const ChipBuffers buffers(topology, chip);
  const ChipCoreMap& map = buffers.map();
  const kargs::TensorArgs in_args = in_fabric_pages(buffers.interpreter_args(p.input_buffer), r.pages);
  // My rank's buffer, on this chip and (through the multicast) on every other one.
  const kargs::TensorArgs out_args =
      in_fabric_pages(buffers.interpreter_args(p.output_buffers[g.rank_at(position)]), r.pages);
  const std::vector<api::TensorSlice> runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(all_fabric_pages(r.pages), p.num_links);
  const FabricGroup::Reach reach = g.full_reach(position);
  const cmd::ChipMulticast mcast = g.multicast(position, reach.up, reach.down);
  const Noc0Coord done_core = map.tensix_noc0(r.cores.front());

  Program program;
  for (std::uint32_t link = 0; link < p.num_links; ++link) {
    const CoreCoord core = r.cores[link];
    const Noc0Coord noc = map.tensix_noc0(core);
    const bool has_data = api::volume(runs[link].worker_slice_shape) > 0;
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kPacketHeaderCbId;
    spec.packet_size_in_pages = r.packet_pages;
    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(data_cb(core, r.pages.page_bytes, r.packet_pages * p.cb_packets));
    connect_to_fabric(program, spec, r.plan, g.port(link), chip, core, mcast.num_targets_forward > 0,
                      mcast.num_targets_backward > 0);

    std::vector<cmd::Command> writer;
    if (p.barrier_semaphore) {
      // Every chip writes to every other, so each worker hears from all N (itself included).
      const cmd::GlobalSemaphoreAddress barrier{p.barrier_semaphore->address};
      writer.push_back(cmd::fabric_multicast_semaphore_inc(barrier, 1, noc.x, noc.y, mcast));
      writer.push_back(cmd::local_semaphore_wait(barrier, g.size()));
      writer.push_back(cmd::local_core_semaphore_set(barrier, 0));
    }
    if (has_data) writer.push_back(cmd::fabric_write_cb_to_tensor_slice(runs[link], kDataCbId, mcast));
    const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
    writer.push_back(cmd::fabric_multicast_semaphore_inc(done, 1, done_core.x, done_core.y, mcast));
    if (link == 0) {
      writer.push_back(cmd::local_semaphore_wait(done, g.size() * p.num_links));
      writer.push_back(cmd::local_core_semaphore_set(done, 0));
    }
    const kargs::InterpreterStreamSpec writer_stream{out_args, cmd::encode_stream(writer),
                                                     static_cast<std::uint32_t>(writer.size())};
    add_slice_copy_kernels(program, core, spec, in_args, runs[link], writer_stream, p.split_reader_writer, has_data);
  }
  return program;
}

// The op per shape its groups run as (groups_by_shape): one part, `params`, unless a ring group
// runs as a line around a down link; that part multicasts to both ends of its line (a ring's
// workers and semaphores are a line's too: one worker per link either way).
std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology) {
  return params_by_shape(params, topology, [](Params&) {});
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.input, p.input_buffer, p.output_buffers, p.topology, p.num_links, p.groups, p.fabric,
                     p.done_semaphore, p.barrier_semaphore, p.first_worker, p.packet_size_in_pages, p.cb_packets,
                     p.split_reader_writer);
}

std::uint32_t output_buffer_count(const Params& params, const topo::Topology& topology) {
  const FabricPlan plan(topology, params.fabric);
  return static_cast<std::uint32_t>(resolve_groups(params.groups, topology, plan).front().size());
}

std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology) {
  return one_core_ranges(worker_cores(topology, params.first_worker, params.num_links, kOp));
}

void validate(const Params& params, const topo::Topology& topology) {
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  MeshWorkload workload = workload_by_shape(kOp, parts_by_shape(params, topology), topology, resolve, chip_program);
  workload.buffers = workload_buffers({&params.input_buffer});
  workload.buffers.insert(workload.buffers.end(), params.output_buffers.begin(), params.output_buffers.end());
  workload.global_semaphores = workload_semaphores({&params.done_semaphore, &params.barrier_semaphore});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

std::vector<reference::Bytes> reference_outputs(const std::vector<reference::Bytes>& inputs_by_rank) {
  return inputs_by_rank;
}

}  // namespace cclmesh::runtime::ccl::all_broadcast
