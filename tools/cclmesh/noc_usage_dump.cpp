#include "tools/cclmesh/noc_usage_dump.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <system_error>

#include "sim/model/chip.hpp"
#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

namespace {

constexpr const char* kWindowVariable = "CCLMESH_NOC_STATS_WINDOW";

double us_of(sim::SimTime t) { return static_cast<double>(t.ps()) / 1e6; }
double busy_us(const sim::PacketResource& server) { return us_of(server.busy); }

bool window_armed(const sim::Chip& chip) { return chip.busy_window().begin < chip.busy_window().end; }

void print_endpoint(sim::NocId noc, const sim::Endpoint& e) {
  const sim::NocPort* made = e.port_if_made(noc);  // a port never made served nothing
  if (made == nullptr) return;
  const sim::NocPort& port = *made;
  if (port.inject().packets + port.absorb().packets == 0) return;
  fmt::print(stderr, "  {} {} NIU {}: inject {:.1f} us {} packets {} B, absorb {:.1f} us {} packets {} B\n",
             sim::to_string(noc), e.kind == sim::TileKind::Eth ? "eth " : "dram", sim::to_string(e.coord),
             busy_us(port.inject()), port.inject().packets, port.inject().bytes, busy_us(port.absorb()),
             port.absorb().packets, port.absorb().bytes);
}

// Calls visit(noc, position, endpoint or null) for every grid position of both NoCs, row by
// row: the order both dumps print in.
template <typename Visit>
void for_each_noc_position(sim::Chip& chip, Visit&& visit) {
  for (sim::NocId noc : {sim::NocId::Noc0, sim::NocId::Noc1}) {
    for (std::int32_t y = 0; y < chip.grid_y(); ++y) {
      for (std::int32_t x = 0; x < chip.grid_x(); ++x) {
        const sim::CoreCoord at{x, y};
        visit(noc, at, chip.endpoint(at));
      }
    }
  }
}

// One server's busy time inside the window, as µs and a share of the window.
std::string windowed(const sim::PacketResource& server, double window_us) {
  const double us = us_of(server.busy_in_window);
  return fmt::format("{:.1f} us ({:.0f}%)", us, 100.0 * us / window_us);
}

void print_window(sim::SimSystem& system, sim::Chip& chip) {
  const sim::BusyWindow& window = chip.busy_window();
  const double window_us = us_of(window.end - window.begin);
  fmt::print(stderr, "chip {} busy inside the window {:.2f}..{:.2f} us ({:.2f} us): NIUs, links busy >= 25%, DRAM, "
             "ERISCs, outgoing ethernet wires\n",
             chip.id(), us_of(window.begin), us_of(window.end), window_us);
  for_each_noc_position(chip, [&](sim::NocId noc, sim::CoreCoord at, sim::Endpoint* e) {
    if (const sim::NocPort* made = e != nullptr ? e->port_if_made(noc) : nullptr) {
      const sim::NocPort& port = *made;
      if (port.inject().busy_in_window + port.absorb().busy_in_window > sim::SimTime::zero()) {
        fmt::print(stderr, "  {} {} NIU {}: inject {}, absorb {}\n", sim::to_string(noc),
                   e->kind == sim::TileKind::Eth ? "eth   " : (e->kind == sim::TileKind::Tensix ? "tensix" : "dram  "),
                   sim::to_string(at), windowed(port.inject(), window_us), windowed(port.absorb(), window_us));
      }
    }
    for (int dim = 0; dim < 2; ++dim) {
      const sim::PacketResource& link = chip.noc(noc).link(at, dim);
      if (us_of(link.busy_in_window) < 0.25 * window_us) continue;
      fmt::print(stderr, "  {} link leaving {} along {}: {}\n", sim::to_string(noc), sim::to_string(at),
                 dim == 0 ? "x" : "y", windowed(link, window_us));
    }
  });
  for (std::int32_t c = 0; c < chip.dram_channel_count(); ++c) {
    fmt::print(stderr, "  DRAM channel {}: {}\n", c, windowed(chip.dram_channel(c).server(), window_us));
  }
  for (const auto& link : system.links()) {
    for (sim::EthCore* from : {&link->a(), &link->b()}) {
      if (&from->chip() != &chip) continue;
      const sim::EthCore& to = from == &link->a() ? link->b() : link->a();
      fmt::print(stderr, "  ethernet channel {} {} -> chip {} channel {}: ERISC {}, wire {}\n", from->channel(),
                 sim::to_string(from->coord()), to.chip().id(), to.channel(), windowed(from->erisc_server(), window_us),
                 windowed(link->wire_from(*from).server(), window_us));
    }
  }
}

// Per kernel of the chip: the time it spent in each kind of wait inside the window, against the
// time it was alive in it (the rest: running, issuing, or in a wait no scope marks).
void print_kernel_waits(const sim::device::SimMeshDevice& device, sim::ChipId chip) {
  const std::vector<sim::device::SimMeshDevice::KernelWaits> kernels = device.kernel_waits_in_window(chip);
  fmt::print(stderr, "  kernels: time blocked inside the window, by kind of wait (of the time each was alive in it)\n");
  for (const auto& k : kernels) {
    if (k.alive <= sim::SimTime::zero()) continue;
    const double alive_us = us_of(k.alive);
    std::string waits;
    for (std::size_t kind = 1; kind < k.blocked.size(); ++kind) {
      if (k.blocked[kind] <= sim::SimTime::zero()) continue;
      const double us = us_of(k.blocked[kind]);
      waits += fmt::format("{}{} {:.1f} us ({:.0f}%)", waits.empty() ? "" : ", ",
                           sim::device::blocked_in_name(static_cast<sim::device::BlockedIn>(kind)), us,
                           100.0 * us / alive_us);
    }
    fmt::print(stderr, "    {} ({:.1f} us alive): {}\n", k.kernel, alive_us, waits.empty() ? "never blocked" : waits);
  }
}

}  // namespace

sim::BusyWindow parse_busy_window(const std::string& text) {
  const auto refuse = [&]() {
    return UsageError(fmt::format("{}={}: expected <begin_us>:<end_us>, two decimal simulated times in us with "
                                  "0 <= begin < end",
                                  kWindowVariable, text));
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) throw refuse();
  const auto parse = [&](const std::string& part) {
    char* end = nullptr;
    const double us = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(us) || us < 0 || us > 1e12) {
      throw refuse();
    }
    return sim::SimTime::from_ps(std::llround(us * 1e6));
  };
  const sim::BusyWindow window{parse(text.substr(0, colon)), parse(text.substr(colon + 1))};
  if (!(window.begin < window.end)) throw refuse();
  return window;
}

sim::BusyWindow requested_busy_window() {
  const char* env = std::getenv(kWindowVariable);
  return env == nullptr ? sim::BusyWindow{} : parse_busy_window(env);
}

std::optional<sim::ChipId> requested_noc_stats_chip(const topo::Topology& topology) {
  const char* env = std::getenv("CCLMESH_NOC_STATS");
  if (env == nullptr) return std::nullopt;
  const std::string_view text(env);
  topo::ChipId id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !topology.has_chip(id)) {
    std::string ids;
    for (const topo::Chip& c : topology.chips()) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", c.id);
    if (topology.chips().size() > 16) ids = fmt::format("{} chips", topology.chips().size());
    throw UsageError(fmt::format("CCLMESH_NOC_STATS={}: not a chip of {}; expected a chip id ({})", text,
                                 topology.name(), ids));
  }
  return static_cast<sim::ChipId>(id);
}

void print_noc_usage(sim::device::SimMeshDevice& device, sim::ChipId id, double op_start_us, double op_us) {
  sim::SimSystem& system = device.system();
  sim::Chip& chip = system.chip(id);
  fmt::print(stderr,
             "chip {} NoC use (op time {:.2f} us, from {:.2f} to {:.2f} us on the simulated clock): ethernet and DRAM "
             "NIUs, links busy >= 25%\n",
             chip.id(), op_us, op_start_us, op_start_us + op_us);
  for_each_noc_position(chip, [&](sim::NocId noc, sim::CoreCoord at, sim::Endpoint* e) {
    if (e != nullptr && e->kind != sim::TileKind::Tensix) print_endpoint(noc, *e);
    for (int dim = 0; dim < 2; ++dim) {
      const sim::PacketResource& link = chip.noc(noc).link(at, dim);
      const double us = busy_us(link);
      if (op_us <= 0 || us < 0.25 * op_us) continue;
      fmt::print(stderr, "  {} link leaving {} along {}: {:.1f} us ({:.0f}% of the op) {} packets {} B\n",
                 sim::to_string(noc), sim::to_string(at), dim == 0 ? "x" : "y", us, 100.0 * us / op_us,
                 link.packets, link.bytes);
    }
  });
  if (window_armed(chip)) {
    print_window(system, chip);
    print_kernel_waits(device, chip.id());
  }
}

}  // namespace cclmesh::cli
