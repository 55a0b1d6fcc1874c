#pragma once
// Internal to sim/device, not installed: what SimMeshDevice's sim_mesh_device*.cpp files share.
// The class is one; its members are defined by what they do:
// - sim_mesh_device.cpp: construction, open/close/reset, buffers and host commands, workloads and
//   programs, the profile, finish() and drain();
// - sim_mesh_device_faults.cpp: the injected faults applied, summarised and put into the trace;
// - sim_mesh_device_fabric.cpp: the fabric routers' start-up, status and termination;
// - sim_mesh_device_hang.cpp: the hang report and the kernels' waits inside the busy window;
// - sim_mesh_device_mirrored.cpp: identical groups simulated once (docs/sim_device.md).
// run_engine is here, not in a .cpp: a template, instantiated for each caller's predicate (finish()
// and drain() in sim_mesh_device.cpp, the fabric's start-up and termination).

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/device/sim_mesh_device.hpp"
#include "sim/engine/exception_message.hpp"
#include "sim/device/wait_chain.hpp"

namespace cclmesh::sim::device {

using runtime::CoreKind;

struct CoreKey {
  CoreKind kind;
  runtime::CoreCoord core;
  auto operator<=>(const CoreKey&) const = default;
};

// One chip's program of one workload: its cores' CBs and semaphores, and the kernels to start.
struct SimMeshDevice::Program {
  std::string workload;
  runtime::ChipId chip = 0;
  std::map<CoreKey, std::unique_ptr<CoreProgram>> cores;
  struct SemaphoreInit {
    MemoryRegion* l1;
    std::uint32_t address;
    std::uint32_t value;
    CoreProgram* core;
  };
  std::vector<SemaphoreInit> semaphore_inits;
  std::vector<std::unique_ptr<KernelContext>> to_launch;
  std::size_t remaining = 0;
  // The chip's routers' worker channels and this program's fabric muxes' client channels: where
  // its kernels' packets have their routes checked (fabric_route_check.hpp).
  FabricEntryPoints fabric_entry_points;
};

template <typename KeepGoing>
void SimMeshDevice::run_engine(const KeepGoing& keep_going, const std::string& what, bool idle_is_done,
                               StopsItself stops_itself) {
  bool timed_out = false;
  bool wall_expired = false;
  bool abandoned = false;
  const bool watched = wall_watchdog_.armed() || options_.abandon != nullptr;
  RunResult result;
  try {
    // Without a simulated-time limit or a wall-time watchdog (the default), the engine asks the
    // caller's predicate alone: the limits' tests cost ~17 instructions per event for nothing.
    // A predicate that only the last program's end makes false is not asked at all: that end
    // stops the engine after its event (program_done), which is where the predicate, asked
    // before the next event, would have ended the run (~8 instructions per event).
    if (!simulated_time_limit_ && !watched && stops_itself == StopsItself::AtLastProgram) {
      if (!keep_going()) {
        result.reason = StopReason::Predicate;
      } else {
        struct StopAtLastProgram {
          bool& flag;
          explicit StopAtLastProgram(bool& f) : flag(f) { flag = true; }
          ~StopAtLastProgram() { flag = false; }
        } stop_at_last_program{stop_at_last_program_};
        result = engine_->run();
        if (result.reason == StopReason::Stopped && !keep_going()) result.reason = StopReason::Predicate;
      }
    } else if (!simulated_time_limit_ && !watched) {
      result = engine_->run_while(keep_going);
    } else {
      result = engine_->run_while([&] {
        if (simulated_time_limit_ && engine_->now() > *simulated_time_limit_) {
          timed_out = true;
          return false;
        }
        if (wall_watchdog_.expired()) {
          wall_expired = true;
          return false;
        }
        if (options_.abandon != nullptr && options_.abandon->load(std::memory_order_relaxed)) {
          abandoned = true;
          return false;
        }
        return keep_going();
      });
    }
  } catch (const ProcessFailure& e) {
    if (first_failure_ != nullptr) {
      fail(runtime::DeviceError::Kind::Fault,
           fmt::format("fault at {}: {}: {}{}", to_string(e.when()), first_failure_->name(),
                       first_failure_->failure_description(),
                       workers_sharing_an_overrun_channel(*first_failure_, kernels_of_interest())));
    }
    fail(runtime::DeviceError::Kind::Fault, fmt::format("simulation failed: {}", e.what()));
  } catch (const std::exception&) {
    fail(runtime::DeviceError::Kind::Fault,
         fmt::format("simulation error at {}: {}", to_string(engine_->now()),
                     exception_message(std::current_exception(), engine_->host_memory_use())));
  }
  if (timed_out) {
    fail(runtime::DeviceError::Kind::Timeout,
         hang_report(fmt::format("timeout: simulated time passed the limit of {}{} while running {}",
                                 to_string(*simulated_time_limit_),
                                 options_.watchdogs_per_finish
                                     ? fmt::format(" (a budget of {} from {})", to_string(*options_.max_simulated_time),
                                                   to_string(*simulated_time_limit_ - *options_.max_simulated_time))
                                     : std::string(),
                                 what),
                     true));
  }
  if (wall_expired) {
    fail(runtime::DeviceError::Kind::Timeout,
         hang_report(fmt::format("timeout: the wall-time limit of {} s{} passed at simulated time {} while running {}",
                                 wall_watchdog_.limit_seconds(), options_.watchdogs_per_finish ? " (this run's own)" : "",
                                 to_string(engine_->now()), what),
                     true));
  }
  if (abandoned) {
    fail(runtime::DeviceError::Kind::Timeout,
         hang_report(fmt::format("abandoned at simulated time {} while running {}: stopped from outside the "
                                 "simulation (SimMeshDeviceOptions::abandon; `cclmesh serve`: the client went away "
                                 "or the server is stopping)",
                                 to_string(engine_->now()), what),
                     true));
  }
  if (result.reason == StopReason::Predicate) return;
  if (idle_is_done && outstanding_programs_ == 0) return;  // only persistent routers are parked
  fail(runtime::DeviceError::Kind::Hang,
       hang_report(fmt::format("hang at {}: {} cannot complete; no event is left to wake the kernels below",
                               to_string(engine_->now()), what),
                   false));
}

}  // namespace cclmesh::sim::device
