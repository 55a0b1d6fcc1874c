#include "runtime/device/fabric_options.hpp"

namespace cclmesh::runtime {

std::string to_string(FabricMode mode) {
  switch (mode) {
    case FabricMode::None: return "none";
    case FabricMode::Line: return "line";
    case FabricMode::Ring: return "ring";
  }
  return "unknown";
}

std::string to_string(RingFlowControl flow_control) {
  return flow_control == RingFlowControl::Dateline ? "dateline" : "bubble";
}

std::string to_string(FabricScope scope) { return scope == FabricScope::Axes ? "per-axis" : "system"; }

}  // namespace cclmesh::runtime
