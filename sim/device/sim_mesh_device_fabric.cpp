// SimMeshDevice's fabric routers: their status word, their launch and start-up, their termination.

#include "sim/device/sim_mesh_device_detail.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {

// --- fabric ----------------------------------------------------------------------------------

std::uint32_t SimMeshDevice::router_status(const runtime::FabricRouterSite& site) {
  return system_->chip(site.chip)
      .l1(CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)})
      .read_u32(kernels::make_fabric_router_layout(site.config).status);
}

void SimMeshDevice::launch_fabric() {
  const kernels::KernelInfo* info = kernels::find_kernel_info(kernels::kFabricRouterKernelName);
  CCLMESH_CHECK(info != nullptr, "the fabric router kernel is not registered");
  fabric_entry_points_.clear();
  for (const runtime::FabricRouterSite& site : fabric_.routers()) {
    Chip& chip = system_->chip(site.chip);
    auto k = std::make_unique<KernelContext>();
    k->chip = &chip;
    k->kind = CoreKind::Ethernet;
    k->logical = runtime::CoreCoord{site.channel, 0};
    k->noc0 = CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)};
    k->kernel = kernels::kFabricRouterKernelName;
    k->entry = info->entry;
    k->persistent = true;
    k->workload = "fabric";
    kernels::FabricRouterConfig config = site.config;
    if (options_.adjust_router_config) options_.adjust_router_config(site, config);
    fabric_entry_points_[site.chip].push_back(router_entry_point(fabric_, site, config));
    k->compile_time_args = kargs::build_fabric_router_args(config).compile_time;
    k->l1 = &chip.l1(k->noc0);
    k->eth = &chip.eth(static_cast<std::int32_t>(site.channel));
    k->core_map = &core_maps_.at(site.chip);
    k->noc_access_check = &noc_access_checks_.at(site.chip);
    k->erisc_l1 = options_.fabric.erisc_l1_map();
    k->worker_grid = worker_grid_;
    k->costs = &options_.costs;
    spawn_kernel(std::move(k), options_.dispatch.program_dispatch_latency);
  }
  // The check runs after every event of the start-up. A router stays READY_FOR_TRAFFIC until it
  // is told to terminate, so the routers before `first_not_ready` need no second look: asking all
  // of them after every event made the start-up quadratic in the routers (docs/topologies.md,
  // "Review (session 11)").
  std::size_t first_not_ready = 0;
  run_engine(
      [this, &first_not_ready] {
        const std::vector<runtime::FabricRouterSite>& routers = fabric_.routers();
        while (first_not_ready < routers.size() &&
               router_status(routers[first_not_ready]) == static_cast<std::uint32_t>(api::EdmStatus::READY_FOR_TRAFFIC)) {
          ++first_not_ready;
        }
        return first_not_ready < routers.size();
      },
      fmt::format("the {} fabric's start-up", fabric_.lines().size() == 1
                                                    ? runtime::to_string(fabric_.mode())
                                                    : runtime::to_string(fabric_.scope()) + " " +
                                                          runtime::to_string(fabric_.mode())));
  fabric_ready_time_ = engine_->now();
}

void SimMeshDevice::terminate_fabric(api::TerminationSignal signal) {
  if (broken_) throw *broken_;
  if (!fabric_.enabled()) return;
  for (const runtime::FabricRouterSite& site : fabric_.routers()) {
    system_->chip(site.chip)
        .l1(CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)})
        .write_u32(kernels::make_fabric_router_layout(site.config).termination_signal, static_cast<std::uint32_t>(signal));
  }
  run_engine(
      [this] {
        for (const auto& k : kernels_) {
          if (k->persistent && !k->done) return true;
        }
        return false;
      },
      "the fabric's termination");
}

}  // namespace cclmesh::sim::device
