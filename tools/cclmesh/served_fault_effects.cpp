#include "tools/cclmesh/served_fault_effects.hpp"

#include <fmt/format.h>

namespace cclmesh::cli {

ServedFaultEffects::ServedFaultEffects(const sim::device::SimMeshDevice& device) : device_(device) { session_started(); }

void ServedFaultEffects::session_started() {
  life_ = device_.life();
  since_ = device_.now();
  dropped_before_ = device_.frames_dropped();
}

std::vector<std::string> ServedFaultEffects::effects() {
  // A reset since the last call (the client's, in this session): the new life's flips are all
  // after it, whatever its clock says.
  if (device_.life() != life_) {
    life_ = device_.life();
    since_ = sim::SimTime::zero();
    dropped_before_ = 0;
  }
  // This op's lost frames: those since the last call (or the reset).
  std::vector<std::string> lines = device_.fault_effects(dropped_before_);
  dropped_before_ = device_.frames_dropped();
  const auto& corruptions = device_.corruptions();
  for (std::size_t i = 0; i < corruptions.size() && i < lines.size(); ++i) {
    const sim::PacketCorruption& corruption = *corruptions[i];
    if (!corruption.corrupted() || corruption.corrupted()->when >= since_) continue;
    lines[i] = fmt::format("{}: flipped nothing in this op (the fault flips one packet per device life: it {}, in an "
                           "earlier op)",
                           corruption.spec(), corruption.describe());
  }
  since_ = device_.now();
  return lines;
}

}  // namespace cclmesh::cli
