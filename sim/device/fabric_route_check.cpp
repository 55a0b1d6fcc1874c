#include "sim/device/fabric_route_check.hpp"

#include <fmt/format.h>

#include "kernels/kernel_args.hpp"

namespace cclmesh::sim::device {

FabricEntryPoint router_entry_point(const runtime::FabricPlan& plan, const runtime::FabricRouterSite& site,
                                    const kernels::FabricRouterConfig& config) {
  const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(config);
  const kernels::FabricSenderChannelLayout& worker = layout.sender[kernels::fabric_router::kWorkerChannel];
  FabricEntryPoint e;
  e.core = CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)};
  e.slots_begin = worker.buffer_base;
  e.slots_end = worker.buffer_base + worker.num_slots * layout.slot_size_bytes;
  e.slot_size_bytes = layout.slot_size_bytes;
  e.chip = site.chip;
  e.line = &plan.lines().at(site.line);
  e.position = static_cast<std::uint32_t>(e.line->position(site.chip));
  e.forward = site.forward;
  const auto chips = static_cast<std::uint32_t>(e.line->chips.size());
  if (e.line->mode == runtime::FabricMode::Ring) {
    e.reach = chips - 1;
  } else {
    e.reach = site.forward ? chips - 1 - e.position : e.position;
  }
  return e;
}

RouteMistake describe_route_mistake(const FabricEntryPoint& e, const api::PacketHeader& header) {
  const std::uint8_t routing = header.routing_fields;
  const std::uint32_t start = api::routing_start_distance(routing);
  const std::uint32_t last_hop = start + api::routing_range(routing) - 1;
  const char* direction = e.forward ? "forward" : "backward";
  const bool unicast = header.get_chip_send_type() == api::ChipSendType::CHIP_UNICAST;
  const std::string asked = unicast && start == last_hop
                                ? fmt::format("unicast of {} hop{} {}", last_hop, last_hop == 1 ? "" : "s", direction)
                                : fmt::format("multicast to hops {}..{} {}", start, last_hop, direction);
  const std::string via = e.mux.empty() ? "" : fmt::format(" (through the {})", e.mux);
  const std::string where = fmt::format("{} from chip {}{} on {}", asked, e.chip, via, e.line->to_string());
  const auto chips = static_cast<std::uint32_t>(e.line->chips.size());
  if (e.line->mode == runtime::FabricMode::Ring) {
    // Where a unicast would have landed: round the ring from the sender.
    const std::uint32_t steps = last_hop % chips;
    const std::uint32_t lands = e.forward ? (e.position + steps) % chips : (e.position + chips - steps) % chips;
    return RouteMistake{api::KernelFaultCode::ROUTE_WRAPS_RING, last_hop,
                        fmt::format("{}: the ring has {} chips, so a route may go {} hops at most; {} would pass "
                                    "the sender and land on chip {} (simulator check at the sender)",
                                    where, chips, e.reach, last_hop, e.line->chips[lands])};
  }
  return RouteMistake{api::KernelFaultCode::ROUTE_PAST_END, last_hop,
                      fmt::format("{}: the line ends {} hop{} {} of chip {} (simulator check at the sender)", where,
                                  e.reach, e.reach == 1 ? "" : "s", direction, e.chip)};
}

}  // namespace cclmesh::sim::device
