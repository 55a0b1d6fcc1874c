#pragma once
// `cclmesh serve`: what the served device's faults did, for the client that asks after its op
// (RemoteServerOptions::fault_effects; a client's `run --device` prints each as a "# corrupt:..."
// line after its row). A `corrupt` fault flips one packet per device life, and a served device
// runs many clients' ops in one life: a flip from before the asking client's op (before that
// client's previous question, or before its session began) is named as an earlier op's, instead
// of being passed off as this op's. A local run, one op on a fresh device, never sees the
// difference; neither does the first op on a fresh (or reset) served device.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/device/sim_mesh_device.hpp"

namespace cclmesh::cli {

class ServedFaultEffects {
 public:
  explicit ServedFaultEffects(const sim::device::SimMeshDevice& device);

  // A client's session begins: what its ops' faults do is counted from here.
  void session_started();
  // One line per `corrupt` fault, in plan order, then a drop fault's lost frames when it lost
  // any, as SimMeshDevice::fault_effects() but for the ops since the last call (or the
  // session's start); the next call counts from now.
  std::vector<std::string> effects();

 private:
  const sim::device::SimMeshDevice& device_;
  std::uint32_t life_ = 0;  // the device life `since_` is a time of
  sim::SimTime since_;
  std::int64_t dropped_before_ = 0;  // frames a drop fault had lost at `since_`
};

}  // namespace cclmesh::cli
