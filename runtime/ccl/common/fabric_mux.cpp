#include "runtime/ccl/common/fabric_mux.hpp"

#include <fmt/format.h>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::runtime::ccl {

std::vector<api::FabricConnectionConfig> add_fabric_mux(Program& program, const FabricPlan& plan,
                                                        const FabricPort& port, ChipId chip, CoreCoord mux_core,
                                                        bool forward, Noc0Coord mux_noc0,
                                                        std::uint32_t num_clients) {
  namespace m = kernels::fabric_mux;
  if (num_clients == 0 || num_clients > m::kMaxClients) {
    throw CclParamsError(
        fmt::format("fabric mux: {} clients; a mux takes 1 to {} workers", num_clients, m::kMaxClients));
  }
  const std::uint32_t* router_sems = forward ? kForwardConnectionSemaphoreIds : kBackwardConnectionSemaphoreIds;
  const api::FabricConnectionConfig router =
      plan.worker_connection(port, chip, forward, router_sems[0], router_sems[1], router_sems[2]);
  const std::uint32_t slots = router.num_slots;
  const std::uint32_t slot_bytes = api::fabric_slot_size_bytes(router.max_payload_bytes);

  program.circular_buffers.push_back(
      CircularBufferSpec{kFabricMuxSlotsCbId, {CoreRange{mux_core, mux_core}}, 1, num_clients * slots * slot_bytes});
  const auto slots_base = static_cast<std::uint32_t>(circular_buffer_addresses(program.circular_buffers).back());
  for (std::uint32_t i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(mux_core, router_sems[i]));
  for (std::uint32_t c = 0; c < num_clients; ++c) {
    for (std::uint32_t f = 0; f < m::kSemaphoresPerClient; ++f) {
      program.semaphores.push_back(tensix_semaphore(mux_core, m::client_semaphore_id(c, f)));
    }
  }

  KernelSpec k;
  k.kernel = kernels::kFabricMuxKernelName;
  k.core_kind = CoreKind::Tensix;
  k.cores = {CoreRange{mux_core, mux_core}};
  k.compile_time_args.resize(m::kNumCompileTimeArgs);
  k.compile_time_args[m::kCtNumClients] = num_clients;
  k.compile_time_args[m::kCtSlotsPerClient] = slots;
  k.compile_time_args[m::kCtMaxPayloadBytes] = router.max_payload_bytes;
  k.compile_time_args[m::kCtSlotsCbId] = kFabricMuxSlotsCbId;
  k.compile_time_args[m::kCtSlotsBase] = slots_base;
  std::vector<std::uint32_t> rt(m::kRtRouterConnection + api::kFabricConnectionArgWords);
  api::write_fabric_connection_config(router, rt.data() + m::kRtRouterConnection);
  k.runtime_args[mux_core] = rt;
  program.kernels.push_back(std::move(k));

  std::vector<api::FabricConnectionConfig> clients;
  for (std::uint32_t c = 0; c < num_clients; ++c) {
    clients.push_back(api::FabricConnectionConfig{
        mux_noc0.x, mux_noc0.y, m::client_slots_base(slots_base, c, slots, router.max_payload_bytes), slots,
        slot_bytes, router.max_payload_bytes,
        tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientConnectionLive)),
        tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientWorkerLocationInfo)),
        tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientPacketsWritten)),
        tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientPacketsFreed)),
        router_sems[0], router_sems[1], router_sems[2]});
  }
  return clients;
}

void connect_to_fabric_mux(Program& program, kargs::InterpreterSpec& spec, CoreCoord core, bool forward,
                           const api::FabricConnectionConfig& client) {
  const std::uint32_t* s = forward ? kForwardConnectionSemaphoreIds : kBackwardConnectionSemaphoreIds;
  api::FabricConnectionConfig c = client;
  c.worker_flow_control_sem = s[0];
  c.worker_teardown_sem = s[1];
  c.worker_buffer_index_sem = s[2];
  (forward ? spec.forward_connection : spec.backward_connection) = c;
  for (int i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(core, s[i]));
}

}  // namespace cclmesh::runtime::ccl
