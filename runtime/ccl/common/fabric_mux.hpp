#pragma once
// Host side of the fabric mux (kernels/fabric_mux.cpp, REFERENCE §6.3): several workers of one
// link and direction share the router's worker channel through a mux core that holds the one
// router connection. Pure functions over a Program; no device.

#include <cstdint>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl {

// The mux's slot buffer (one CB on the mux core).
inline constexpr std::uint32_t kFabricMuxSlotsCbId = 0;

// Adds a mux on `mux_core` (at `mux_noc0`) of `chip` to `program`: its kernel (RISC-V 0, NoC0), its slot CB and
// its semaphores, connected to `port`'s router in direction `forward`, with `num_clients`
// client channels of as many slots as the router's worker channel has. Returns each client's
// connection block, worker semaphores as ids (the k{Forward,Backward}ConnectionSemaphoreIds of
// the direction). The slot CB's address is where the program's CB placement puts it
// (runtime/device/cb_placement.hpp) at the time of the call: no CB may be inserted before it
// later. Throws CclParamsError for 0 or more than kernels::fabric_mux::kMaxClients clients.
std::vector<api::FabricConnectionConfig> add_fabric_mux(Program& program, const FabricPlan& plan,
                                                        const FabricPort& port, ChipId chip, CoreCoord mux_core,
                                                        bool forward, Noc0Coord mux_noc0,
                                                        std::uint32_t num_clients);

// Connects the interpreter `spec` on `core` to a mux client channel in direction `forward` (as
// connect_to_fabric does to a router): the connection block and its three semaphores.
void connect_to_fabric_mux(Program& program, kargs::InterpreterSpec& spec, CoreCoord core, bool forward,
                           const api::FabricConnectionConfig& client);

}  // namespace cclmesh::runtime::ccl
