#include "tools/cclmesh/noc_usage_dump.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "sim/model/chip.hpp"

namespace cclmesh::cli {

namespace {

double busy_us(const sim::PacketResource& server) { return static_cast<double>(server.busy.ps()) / 1e6; }

void print_endpoint(sim::NocId noc, sim::Endpoint& e) {
  const sim::NocPort& port = e.port(noc);
  if (port.inject().packets + port.absorb().packets == 0) return;
  fmt::print(stderr, "  {} {} NIU {}: inject {:.1f} us {} packets {} B, absorb {:.1f} us {} packets {} B\n",
             sim::to_string(noc), e.kind == sim::TileKind::Eth ? "eth " : "dram", sim::to_string(e.coord),
             busy_us(port.inject()), port.inject().packets, port.inject().bytes, busy_us(port.absorb()),
             port.absorb().packets, port.absorb().bytes);
}

}  // namespace

void print_noc_usage_if_requested(sim::SimSystem& system, double op_us) {
  const char* env = std::getenv("CCLMESH_NOC_STATS");
  if (env == nullptr) return;
  char* end = nullptr;
  const long id = std::strtol(env, &end, 10);
  bool known = false;
  for (sim::ChipId c : system.chip_ids()) known |= (end != env && *end == '\0' && static_cast<long>(c) == id);
  if (!known) {
    fmt::print(stderr, "CCLMESH_NOC_STATS={}: not a chip id of this system; no NoC usage printed\n", env);
    return;
  }
  sim::Chip& chip = system.chip(static_cast<sim::ChipId>(id));
  fmt::print(stderr, "chip {} NoC use (op time {:.2f} us): ethernet and DRAM NIUs, links busy >= 25%\n", chip.id(),
             op_us);
  for (sim::NocId noc : {sim::NocId::Noc0, sim::NocId::Noc1}) {
    const sim::Noc& model = chip.noc(noc);
    for (std::int32_t y = 0; y < chip.grid_y(); ++y) {
      for (std::int32_t x = 0; x < chip.grid_x(); ++x) {
        const sim::CoreCoord at{x, y};
        sim::Endpoint* e = chip.endpoint(at);
        if (e != nullptr && e->kind != sim::TileKind::Tensix) print_endpoint(noc, *e);
        for (int dim = 0; dim < 2; ++dim) {
          const sim::PacketResource& link = model.link(at, dim);
          const double us = busy_us(link);
          if (op_us <= 0 || us < 0.25 * op_us) continue;
          fmt::print(stderr, "  {} link leaving {} along {}: {:.1f} us ({:.0f}% of the op) {} packets {} B\n",
                     sim::to_string(noc), sim::to_string(at), dim == 0 ? "x" : "y", us, 100.0 * us / op_us,
                     link.packets, link.bytes);
        }
      }
    }
  }
}

}  // namespace cclmesh::cli
