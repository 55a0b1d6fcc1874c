#include "runtime/ccl/broadcast/broadcast.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::broadcast {
namespace {

constexpr const char* kOp = "broadcast";

// Chips the multicast reaches forward and backward from the root.
cmd::ChipMulticast targets(const FabricPlan& plan, ChipId root) {
  const auto n = static_cast<std::uint32_t>(plan.chips().size());
  if (plan.mode() == FabricMode::Ring) return cmd::ChipMulticast{n / 2, (n - 1) / 2};
  return cmd::ChipMulticast{plan.reach(root, true), plan.reach(root, false)};
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.root, p.input, p.output, p.fabric, p.worker, p.num_links, p.packet_size_in_pages,
                     p.cb_packets, p.split_reader_writer);
}

void validate(const Params& p, const topo::Topology& topology) {
  topology.chip(p.root);
  require_same_shape(p.input, p.output, kOp);
  require_worker_core(topology, p.worker, kOp);
  if (p.cb_packets == 0) throw CclParamsError("broadcast: cb_packets is 0; expected at least 1");
  if (p.fabric.mode == FabricMode::None) throw CclParamsError("broadcast: needs a fabric; fabric mode is none");
  if (p.num_links == 0) throw CclParamsError("broadcast: num_links is 0; expected at least 1");
  worker_cores(topology, p.worker, p.num_links, kOp);  // throws when the root's workers do not fit
  const FabricPlan plan(topology, p.fabric);
  plan.position(p.root);
  require_fabric_links(plan, p.num_links, kOp);
  const CoreCoord grid = common_worker_grid(topology);
  for (ChipId chip : plan.chips()) {
    buffer_layout(p.output, grid, chip_core_map(topology, chip).dram_bank_count());
  }
  buffer_layout(p.input, grid, chip_core_map(topology, p.root).dram_bank_count());
  const cmd::ChipMulticast t = targets(plan, p.root);
  if (t.num_targets_forward > 15 || t.num_targets_backward > 15) {
    throw CclParamsError(fmt::format("broadcast: a multicast reaches at most 15 chips per direction; root {} needs {} "
                                     "forward and {} backward",
                                     p.root, t.num_targets_forward, t.num_targets_backward));
  }
  packet_size_in_pages(p.packet_size_in_pages, p.input.config.page_size_bytes, p.fabric.max_payload_bytes);
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  validate(p, topology);
  const FabricPlan plan(topology, p.fabric);
  const CoreCoord grid = common_worker_grid(topology);
  const api::TensorSlice slice = whole_buffer_slice(p.input);
  const std::uint32_t page_size = p.input.config.page_size_bytes;
  const cmd::ChipMulticast mcast = targets(plan, p.root);
  const ChipCoreMap root_map = chip_core_map(topology, p.root);
  const Noc0Coord worker = root_map.tensix_noc0(p.worker);

  MeshWorkload workload;
  workload.name = kOp;

  const std::uint32_t packet_pages = packet_size_in_pages(p.packet_size_in_pages, page_size, p.fabric.max_payload_bytes);
  const std::uint32_t line = *plan.line_containing({p.root});
  const BufferLayout in_layout = buffer_layout(p.input, grid, root_map.dram_bank_count());
  const BufferLayout out_layout = buffer_layout(p.output, grid, root_map.dram_bank_count());
  // One root worker per link, each multicasting its own run of the pages on its own routing plane.
  const std::vector<CoreCoord> senders = worker_cores(topology, p.worker, p.num_links, kOp);
  const std::vector<api::TensorSlice> runs = cmd::split_tensor_slice_across_workers_wrapped_page_aligned(slice, p.num_links);
  Program root_program;
  for (std::uint32_t link = 0; link < p.num_links; ++link) {
    const CoreCoord core = senders[link];
    const bool has_data = api::volume(runs[link].worker_slice_shape) > 0;
    kargs::InterpreterSpec root;
    root.packet_header_cb_id = kPacketHeaderCbId;
    root.packet_size_in_pages = packet_pages;
    root.semaphore_ids = {kDoneSemaphoreId};
    root_program.circular_buffers.push_back(packet_header_cb(core));
    root_program.circular_buffers.push_back(data_cb(core, page_size, packet_pages * p.cb_packets));
    root_program.semaphores.push_back(tensix_semaphore(core, kDoneSemaphoreId));
    connect_to_fabric(root_program, root, plan, FabricPort{line, link}, p.root, core, mcast.num_targets_forward > 0,
                      mcast.num_targets_backward > 0);
    std::vector<cmd::Command> writer_commands;
    if (has_data) writer_commands.push_back(cmd::fabric_write_cb_to_tensor_slice(runs[link], kDataCbId, mcast));
    writer_commands.push_back(
        cmd::fabric_multicast_semaphore_inc(cmd::SemaphoreId{kDoneSemaphoreId}, 1, worker.x, worker.y, mcast));
    const kargs::InterpreterStreamSpec writer{out_layout.interpreter_args(root_map), cmd::encode_stream(writer_commands),
                                              static_cast<std::uint32_t>(writer_commands.size())};
    if (has_data) {
      const kargs::InterpreterStreamSpec reader{
          in_layout.interpreter_args(root_map), cmd::encode_command(cmd::read_tensor_slice_to_cb(runs[link], kDataCbId)),
          1};
      add_copy_kernels(root_program, core, root, reader, writer, p.split_reader_writer);
    } else {
      root.streams = {writer};
      root_program.kernels.push_back(interpreter_kernel(core, root));
    }
  }
  workload.programs[p.root] = std::move(root_program);

  for (ChipId chip : plan.chips()) {
    if (chip == p.root) continue;
    kargs::InterpreterSpec receiver;
    receiver.packet_header_cb_id = kPacketHeaderCbId;
    receiver.semaphore_ids = {kDoneSemaphoreId};
    receiver.streams = {kargs::InterpreterStreamSpec{
        std::nullopt,
        cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{kDoneSemaphoreId}, p.num_links)), 1}};
    Program program;
    program.circular_buffers.push_back(packet_header_cb(p.worker));
    program.semaphores.push_back(tensix_semaphore(p.worker, kDoneSemaphoreId));
    program.kernels.push_back(interpreter_kernel(p.worker, receiver));
    workload.programs[chip] = std::move(program);
  }
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

}  // namespace cclmesh::runtime::ccl::broadcast
