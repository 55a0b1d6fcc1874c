#include "runtime/ccl/common/link_senders.hpp"

#include <variant>

#include "kernels/host/command_encoder.hpp"
#include "runtime/ccl/common/ccl_common.hpp"

namespace cclmesh::runtime::ccl {

void add_link_senders(Program& program, const FabricPlan& plan, const LinkSenders& s) {
  const auto* unicast = std::get_if<cmd::ChipUnicast>(&s.destination);
  const auto* multicast = std::get_if<cmd::ChipMulticast>(&s.destination);
  const bool forward = unicast ? unicast->forward : multicast->num_targets_forward > 0;
  const bool backward = unicast ? !unicast->forward : multicast->num_targets_backward > 0;
  const cmd::SemaphoreId done{kDoneSemaphoreId};
  for (std::uint32_t link = 0; link < s.cores.size(); ++link) {
    const CoreCoord core = s.cores[link];
    const bool has_data = api::volume(s.runs[link].worker_slice_shape) > 0;
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kPacketHeaderCbId;
    spec.packet_size_in_pages = s.packet_pages;
    // The done semaphore's id resolves to its address on the sender; it must exist there too.
    spec.semaphore_ids = {kDoneSemaphoreId};
    program.circular_buffers.push_back(packet_header_cb(core));
    program.circular_buffers.push_back(data_cb(core, s.page_size_bytes, s.packet_pages * s.cb_packets));
    program.semaphores.push_back(tensix_semaphore(core, kDoneSemaphoreId));
    connect_to_fabric(program, spec, plan, FabricPort{s.fabric_line, link}, s.chip, core, forward, backward);
    std::vector<cmd::Command> writer_commands;
    if (has_data) writer_commands.push_back(cmd::fabric_write_cb_to_tensor_slice(s.runs[link], kDataCbId, s.destination));
    writer_commands.push_back(
        unicast ? cmd::fabric_unicast_semaphore_inc(done, 1, s.done_core.x, s.done_core.y, *unicast)
                : cmd::fabric_multicast_semaphore_inc(done, 1, s.done_core.x, s.done_core.y, *multicast));
    const kargs::InterpreterStreamSpec writer{s.output, cmd::encode_stream(writer_commands),
                                              static_cast<std::uint32_t>(writer_commands.size())};
    add_slice_copy_kernels(program, core, spec, s.input, s.runs[link], writer, s.split_reader_writer, has_data);
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
