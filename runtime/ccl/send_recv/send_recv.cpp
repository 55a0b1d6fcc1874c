#include "runtime/ccl/send_recv/send_recv.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::send_recv {
namespace {

constexpr const char* kOp = "send_recv";

kargs::TensorArgs tensor_args(const BufferHandle& buffer, const topo::Topology& topology, ChipId chip) {
  const ChipCoreMap map = chip_core_map(topology, chip);
  return buffer_layout(buffer, common_worker_grid(topology), map.dram_bank_count()).interpreter_args(map);
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.sender, p.receiver, p.input, p.output, p.fabric, p.worker, p.num_links,
                     p.packet_size_in_pages, p.cb_packets, p.split_reader_writer);
}

void validate(const Params& p, const topo::Topology& topology) {
  topology.chip(p.sender);
  topology.chip(p.receiver);
  require_same_shape(p.input, p.output, kOp);
  require_worker_core(topology, p.worker, kOp);
  if (p.cb_packets == 0) throw CclParamsError("send_recv: cb_packets is 0; expected at least 1");
  const CoreCoord grid = common_worker_grid(topology);
  for (const auto& [buffer, chip] : {std::pair{&p.input, p.sender}, std::pair{&p.output, p.receiver}}) {
    buffer_layout(*buffer, grid, chip_core_map(topology, chip).dram_bank_count());  // throws BufferConfigError
  }
  if (p.num_links == 0) throw CclParamsError("send_recv: num_links is 0; expected at least 1");
  if (p.sender == p.receiver) return;
  worker_cores(topology, p.worker, p.num_links, kOp);  // throws when the senders do not fit
  if (p.fabric.mode == FabricMode::None) {
    throw CclParamsError(fmt::format("send_recv: chip {} -> chip {} needs a fabric; fabric mode is none", p.sender,
                                     p.receiver));
  }
  const FabricPlan plan(topology, p.fabric);
  plan.route(p.sender, p.receiver);  // throws when off the fabric or too far
  require_fabric_links(plan, p.num_links, kOp);
  packet_size_in_pages(p.packet_size_in_pages, p.input.config.page_size_bytes, p.fabric.max_payload_bytes);
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  validate(p, topology);
  const api::TensorSlice slice = whole_buffer_slice(p.input);
  const std::uint32_t page_size = p.input.config.page_size_bytes;
  MeshWorkload workload;
  workload.name = kOp;

  kargs::InterpreterSpec sender;
  sender.packet_header_cb_id = kPacketHeaderCbId;
  kargs::InterpreterStreamSpec reader{tensor_args(p.input, topology, p.sender),
                                      cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, kDataCbId)), 1};
  Program sender_program;
  sender_program.circular_buffers.push_back(packet_header_cb(p.worker));

  if (p.sender == p.receiver) {
    sender.packet_size_in_pages = packet_size_in_pages(p.packet_size_in_pages, page_size, page_size * 4u);
    kargs::InterpreterStreamSpec writer{tensor_args(p.output, topology, p.receiver),
                                        cmd::encode_command(cmd::local_write_cb_to_tensor_slice(slice, kDataCbId)), 1};
    sender_program.circular_buffers.push_back(data_cb(p.worker, page_size, sender.packet_size_in_pages * p.cb_packets));
    add_copy_kernels(sender_program, p.worker, sender, reader, writer, p.split_reader_writer);
    workload.programs[p.sender] = std::move(sender_program);
    return workload;
  }

  const FabricPlan plan(topology, p.fabric);
  const FabricRoute route = plan.route(p.sender, p.receiver);
  const Noc0Coord receiver_core = chip_core_map(topology, p.receiver).tensix_noc0(p.worker);
  const cmd::ChipUnicast destination{route.hops, route.forward};
  const std::uint32_t packet_pages =
      packet_size_in_pages(p.packet_size_in_pages, page_size, p.fabric.max_payload_bytes);
  // One sender per link, each with its own run of the pages on its own routing plane.
  const std::vector<CoreCoord> senders = worker_cores(topology, p.worker, p.num_links, kOp);
  const std::vector<api::TensorSlice> runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(slice, p.num_links);
  for (std::uint32_t link = 0; link < p.num_links; ++link) {
    const CoreCoord core = senders[link];
    kargs::InterpreterSpec spec = sender;
    spec.packet_size_in_pages = packet_pages;
    spec.semaphore_ids = {kDoneSemaphoreId};
    // The done semaphore's id resolves to its address on the sender; it must exist there too.
    sender_program.semaphores.push_back(tensix_semaphore(core, kDoneSemaphoreId));
    connect_to_fabric(sender_program, spec, plan, FabricPort{route.line, link}, p.sender, core, route.forward,
                      !route.forward);
    std::vector<cmd::Command> writer_commands;
    if (api::volume(runs[link].worker_slice_shape) > 0) {
      writer_commands.push_back(cmd::fabric_write_cb_to_tensor_slice(runs[link], kDataCbId, destination));
    }
    writer_commands.push_back(cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{kDoneSemaphoreId}, 1,
                                                                receiver_core.x, receiver_core.y, destination));
    const kargs::InterpreterStreamSpec writer{tensor_args(p.output, topology, p.receiver),
                                              cmd::encode_stream(writer_commands),
                                              static_cast<std::uint32_t>(writer_commands.size())};
    if (link > 0) sender_program.circular_buffers.push_back(packet_header_cb(core));
    sender_program.circular_buffers.push_back(data_cb(core, page_size, packet_pages * p.cb_packets));
    if (api::volume(runs[link].worker_slice_shape) > 0) {
      const kargs::InterpreterStreamSpec run_reader{tensor_args(p.input, topology, p.sender),
                                                    cmd::encode_command(cmd::read_tensor_slice_to_cb(runs[link], kDataCbId)),
                                                    1};
      add_copy_kernels(sender_program, core, spec, run_reader, writer, p.split_reader_writer);
    } else {
      spec.streams = {writer};
      sender_program.kernels.push_back(interpreter_kernel(core, spec));
    }
  }
  workload.programs[p.sender] = std::move(sender_program);

  kargs::InterpreterSpec receiver;
  receiver.packet_header_cb_id = kPacketHeaderCbId;
  receiver.semaphore_ids = {kDoneSemaphoreId};
  receiver.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{kDoneSemaphoreId}, p.num_links)), 1}};
  Program receiver_program;
  receiver_program.circular_buffers.push_back(packet_header_cb(p.worker));
  receiver_program.semaphores.push_back(tensix_semaphore(p.worker, kDoneSemaphoreId));
  receiver_program.kernels.push_back(interpreter_kernel(p.worker, receiver));
  workload.programs[p.receiver] = std::move(receiver_program);
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

}  // namespace cclmesh::runtime::ccl::send_recv
