#include "sim/model/soc_descriptor.hpp"

#include <fmt/format.h>

#include "sim/model/sim_fault.hpp"
#include "topologies/errors.hpp"
#include "topologies/soc_descriptor.hpp"

namespace cclmesh::sim {

namespace {

std::vector<CoreCoord> convert(const std::vector<topo::NocCoord>& cores) {
  std::vector<CoreCoord> out;
  out.reserve(cores.size());
  for (const topo::NocCoord& c : cores) out.push_back(CoreCoord{c.x, c.y});
  return out;
}

std::string arch_label(topo::Arch arch) { return arch == topo::Arch::Wormhole ? "WORMHOLE_B0" : "BLACKHOLE"; }

}  // namespace

std::vector<TileKind> SocDescriptor::tile_map() const {
  std::vector<TileKind> map(static_cast<std::size_t>(grid_x) * static_cast<std::size_t>(grid_y), TileKind::None);
  auto mark = [&](const std::vector<CoreCoord>& cores, TileKind kind) {
    for (CoreCoord c : cores) map[static_cast<std::size_t>(c.y * grid_x + c.x)] = kind;
  };
  mark(tensix, TileKind::Tensix);
  mark(eth, TileKind::Eth);
  for (const auto& channel : dram) mark(channel, TileKind::Dram);
  mark(arc, TileKind::Arc);
  mark(pcie, TileKind::Pcie);
  mark(router_only, TileKind::RouterOnly);
  mark(security, TileKind::Security);
  mark(l2cpu, TileKind::L2Cpu);
  return map;
}

SocDescriptor load_soc_descriptor(const std::filesystem::path& path) {
  topo::SocDescriptor file;
  try {
    file = topo::load_soc_descriptor(path);
  } catch (const topo::InputError& e) {
    throw ModelConfigError(e.what());
  }
  SocDescriptor soc;
  soc.arch_name = arch_label(file.arch);
  soc.grid_x = file.grid_x_size;
  soc.grid_y = file.grid_y_size;
  soc.tensix = convert(file.tensix);
  soc.eth = convert(file.eth);
  for (const auto& channel : file.dram) soc.dram.push_back(convert(channel));
  soc.arc = convert(file.arc);
  soc.pcie = convert(file.pcie);
  soc.router_only = convert(file.router_only);
  soc.security = convert(file.security);
  soc.l2cpu = convert(file.l2cpu);
  soc.noc0_x_to_noc1_x = file.noc0_x_to_noc1_x;
  soc.noc0_y_to_noc1_y = file.noc0_y_to_noc1_y;
  soc.worker_l1_bytes = static_cast<std::uint64_t>(file.worker_l1_size_bytes);
  soc.eth_l1_bytes = static_cast<std::uint64_t>(file.eth_l1_size_bytes);
  soc.dram_channel_bytes = static_cast<std::uint64_t>(file.dram_bank_size_bytes);

  // The models need 6-bit NoC coordinates (kernels/api/noc_address.hpp), DRAM channels with
  // endpoints, and every node claimed by at most one list.
  if (soc.grid_x > 64 || soc.grid_y > 64) {
    throw ModelConfigError(fmt::format("{}: grid {}x{} is larger than 6-bit NoC coordinates allow (64x64)",
                                       path.string(), soc.grid_x, soc.grid_y));
  }
  for (std::size_t c = 0; c < soc.dram.size(); ++c) {
    if (soc.dram[c].empty()) throw ModelConfigError(fmt::format("{}: dram[{}] has no endpoints", path.string(), c));
  }
  std::vector<std::string> owner(static_cast<std::size_t>(soc.grid_x * soc.grid_y));
  auto claim = [&](const std::vector<CoreCoord>& cores, const std::string& list) {
    for (CoreCoord c : cores) {
      std::string& slot = owner[static_cast<std::size_t>(c.y * soc.grid_x + c.x)];
      if (!slot.empty()) {
        throw ModelConfigError(fmt::format("{}: core {}-{} is listed in both '{}' and '{}'", path.string(), c.x, c.y,
                                           slot, list));
      }
      slot = list;
    }
  };
  claim(soc.tensix, "functional_workers");
  claim(soc.eth, "eth");
  for (const auto& channel : soc.dram) claim(channel, "dram");
  claim(soc.arc, "arc");
  claim(soc.pcie, "pcie");
  claim(soc.router_only, "router_only");
  claim(soc.security, "security");
  claim(soc.l2cpu, "l2cpu");
  return soc;
}

}  // namespace cclmesh::sim
