#include "sim/model/sim_fault.hpp"

#include <fmt/format.h>

#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

std::string to_string(TileKind kind) {
  switch (kind) {
    case TileKind::None: return "none";
    case TileKind::Tensix: return "Tensix";
    case TileKind::Eth: return "ethernet";
    case TileKind::Dram: return "DRAM";
    case TileKind::Pcie: return "PCIe";
    case TileKind::Arc: return "ARC";
    case TileKind::RouterOnly: return "router-only";
    case TileKind::Security: return "security";
    case TileKind::L2Cpu: return "L2CPU";
  }
  return "unknown";
}

std::string to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::TensixL1: return "Tensix L1";
    case MemoryKind::EriscL1: return "ERISC L1";
    case MemoryKind::Dram: return "DRAM";
    case MemoryKind::None: return "(no memory)";
  }
  return "unknown";
}

std::string to_string(AccessKind kind) {
  switch (kind) {
    case AccessKind::Read: return "read";
    case AccessKind::Write: return "write";
    case AccessKind::Atomic: return "atomic";
    case AccessKind::Watch: return "watch";
  }
  return "unknown";
}

SimFault::SimFault(SimTime when, const std::string& what)
    : std::runtime_error(fmt::format("simulated fault at {}: {}", to_string(when), what)), when_(when) {}

namespace {
std::string describe_access(const AccessError::Details& d) {
  const std::string place =
      d.memory == MemoryKind::Dram
          ? fmt::format("chip {} DRAM channel {} (core {})", d.chip, d.unit, to_string(d.core))
          : fmt::format("chip {} core {} {}", d.chip, to_string(d.core), to_string(d.memory));
  return fmt::format("{}: {} of {} B at address {:#x} {} (memory is {:#x} B)", place, to_string(d.access), d.bytes,
                     d.address, d.reason, d.memory_bytes);
}
}  // namespace

AccessError::AccessError(SimTime when, Details details)
    : SimFault(when, describe_access(details)), details_(std::move(details)) {}

SimTime fault_time_now() {
  Engine* engine = Engine::current_or_null();
  return engine != nullptr ? engine->now() : SimTime::zero();
}

}  // namespace cclmesh::sim
