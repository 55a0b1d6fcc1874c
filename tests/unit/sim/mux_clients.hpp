#pragma once
// A fabric mux feeding a chip's forward router, and interpreter clients that send one-hop
// semaphore increments through it, built as a collective builds them
// (runtime::ccl::add_fabric_mux and connect_to_fabric_mux): the set-up of the mux tests
// (device_mux_wait_test, device_fabric_connection_test).

#include <cstdint>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device::testing {

// A mux on `mux_core` of `chip` with `clients` client channels, feeding the router of the
// fabric's first port (forward) on that chip.
inline std::vector<api::FabricConnectionConfig> add_forward_mux(SimMeshDevice& device, runtime::Program& program,
                                                                 runtime::ChipId chip, runtime::CoreCoord mux_core,
                                                                 std::uint32_t clients) {
  return runtime::ccl::add_fabric_mux(program, device.fabric_plan(), runtime::FabricPort{0, 0}, chip, mux_core, true,
                                      device.core_map(chip).tensix_noc0(mux_core), clients);
}

// An interpreter on `core` of `chip`, connected to the mux as `client`, that sends `packets`
// one-packet increments of semaphore 0 on the same core of the next chip (with none, it only
// opens and closes its connection, as every interpreter does at its end).
inline void add_increment_client(SimMeshDevice& device, runtime::Program& program, runtime::ChipId chip,
                                 runtime::CoreCoord core, const api::FabricConnectionConfig& client,
                                 std::uint32_t packets) {
  const runtime::Noc0Coord target = device.core_map(chip).tensix_noc0(core);
  std::vector<cmd::Command> commands;
  for (std::uint32_t i = 0; i < packets; ++i) {
    commands.push_back(
        cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, target.x, target.y, cmd::ChipUnicast{1, true}));
  }
  if (commands.empty()) commands.push_back(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 0));
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(commands),
                                               static_cast<std::uint32_t>(commands.size())}};
  runtime::ccl::connect_to_fabric_mux(program, spec, core, true, client);
  program.circular_buffers.push_back(runtime::ccl::packet_header_cb(core));
  program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, 0));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(core, spec));
}

}  // namespace cclmesh::sim::device::testing
