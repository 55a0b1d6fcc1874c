#include "runtime/ccl/common/link_senders.hpp"

#include <variant>

#include "kernels/host/command_encoder.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl {

std::vector<LinkSender> one_sender_per_link(const std::vector<CoreCoord>& cores,
                                            const std::vector<api::TensorSlice>& runs,
                                            const cmd::FabricDestination& destination) {
  CCLMESH_CHECK(cores.size() == runs.size(), "one sender per link needs one run per core");
  std::vector<LinkSender> senders;
  for (std::uint32_t link = 0; link < cores.size(); ++link) senders.push_back({cores[link], runs[link], link, destination});
  return senders;
}

void add_link_senders(Program& program, const FabricPlan& plan, const LinkSenders& s) {
  const cmd::SemaphoreId done{kDoneSemaphoreId};
  for (const LinkSender& sender : s.senders) {
    const auto* unicast = std::get_if<cmd::ChipUnicast>(&sender.destination);
    const auto* multicast = std::get_if<cmd::ChipMulticast>(&sender.destination);
    const bool forward = unicast ? unicast->forward : multicast->num_targets_forward > 0;
    const bool backward = unicast ? !unicast->forward : multicast->num_targets_backward > 0;
    const CoreCoord core = sender.core;
    const bool has_data = api::volume(sender.run.worker_slice_shape) > 0;
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kPacketHeaderCbId;
    spec.packet_size_in_pages = s.packet_pages;
    // The done semaphore's id resolves to its address on the sender; it must exist there too.
    spec.semaphore_ids = {kDoneSemaphoreId};
    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(data_cb(core, s.page_size_bytes, s.packet_pages * s.cb_packets));
    program.semaphores.push_back(tensix_semaphore(core, kDoneSemaphoreId));
    connect_to_fabric(program, spec, plan, FabricPort{s.fabric_line, sender.plane}, s.chip, core, forward, backward);
    std::vector<cmd::Command> writer_commands;
    if (has_data) {
      writer_commands.push_back(cmd::fabric_write_cb_to_tensor_slice(sender.run, kDataCbId, sender.destination));
    }
    writer_commands.push_back(
        unicast ? cmd::fabric_unicast_semaphore_inc(done, 1, s.done_core.x, s.done_core.y, *unicast)
                : cmd::fabric_multicast_semaphore_inc(done, 1, s.done_core.x, s.done_core.y, *multicast));
    const kargs::InterpreterStreamSpec writer{s.output, cmd::encode_stream(writer_commands),
                                              static_cast<std::uint32_t>(writer_commands.size())};
    add_slice_copy_kernels(program, core, spec, s.input, sender.run, writer, s.split_reader_writer, has_data);
  }
}

Program done_waiter_program(CoreCoord core, std::uint32_t increments) {
  kargs::InterpreterSpec waiter;
  waiter.packet_header_cb_id = kPacketHeaderCbId;
  waiter.semaphore_ids = {kDoneSemaphoreId};
  waiter.streams = {kargs::InterpreterStreamSpec{
      std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{kDoneSemaphoreId}, increments)),
      1}};
  Program program;
  program.circular_buffers.push_back(packet_header_cb(core));
  program.semaphores.push_back(tensix_semaphore(core, kDoneSemaphoreId));
  program.kernels.push_back(interpreter_kernel(core, waiter));
  return program;
}

}  // namespace cclmesh::runtime::ccl
