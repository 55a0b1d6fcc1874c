#pragma once
// What a kernel fiber carries: the kernel's place (chip, core), its arguments, the per-program
// state of its core (CBs, semaphores), and what it is doing right now (the command it reported
// with debug_set_current_command, the call it is blocked in, a fault). The simulated device
// hangs a KernelContext on every kernel fiber (Actor::set_user_context); the dataflow API finds
// it with current_kernel(). Hang and fault reports are rendered from it.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "sim/device/circular_buffer.hpp"
#include "sim/device/fabric_route_check.hpp"
#include "sim/device/kernel_trace.hpp"
#include "sim/device/noc_access_check.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/time.hpp"
#include "sim/model/chip.hpp"

namespace cclmesh::sim::device {

// Core time the dataflow API charges for work the models do not see (documented in
// docs/sim_device.md).
struct KernelCosts {
  // A call that issues a NoC request (read, write, multicast, atomic, inline write) spends
  // this long writing a command buffer's registers before the request is issued.
  std::int64_t noc_issue_cycles = 8;
  // run_routing(): the base firmware's slice of an ERISC (REFERENCE 1.4).
  std::int64_t run_routing_cycles = 100;
};

// A program semaphore word that was written between the end of the previous program to use it
// (or the start of the run) and this program's launch, whose initialisation then overwrote it:
// writes that arrived early and were lost (a peer that launched sooner, REFERENCE 11.12).
struct SemaphoreOverwrittenAtLaunch {
  std::uint32_t settled = 0;  // what the word held when it was last in use (0: never used)
  std::uint32_t found = 0;    // what it held at the launch
  std::uint32_t initial = 0;  // what the launch wrote
  SimTime launch;
};

// One core's share of a running program: its per-program semaphores and circular buffers.
struct CoreProgram {
  runtime::CoreKind kind = runtime::CoreKind::Tensix;
  runtime::CoreCoord logical;
  CoreCoord noc0;
  std::uint32_t semaphore_ids = 0;  // bit i: per-program semaphore id i exists on this core
  std::map<std::uint32_t, std::unique_ptr<CircularBuffer>> cbs;
  std::map<std::uint64_t, SemaphoreOverwrittenAtLaunch> overwritten_at_launch;  // by L1 address
};

enum class BlockedIn : std::uint8_t {
  Nothing,
  SemaphoreEqual,    // a = address, b = value
  SemaphoreAtLeast,  // a = address, b = value
  CbReserve,         // a = cb id, b = pages
  CbWait,            // a = cb id, b = pages
  ReadBarrier,       // a = noc
  WriteBarrier,
  WritesFlushed,
  AtomicBarrier,
  L1Activity,
};
inline constexpr std::size_t kBlockedInKinds = static_cast<std::size_t>(BlockedIn::L1Activity) + 1;
// "read barrier", "cb_wait_front", ...: the kind of wait, for per-kernel wait-time reports.
const char* blocked_in_name(BlockedIn what);

struct KernelFaultReport {
  std::uint32_t code = 0;
  std::uint32_t command_index = 0;
  std::uint32_t word_offset = 0;
  std::string detail;  // what a check of the simulator adds (fabric_route_check.hpp), or ""
};

struct KernelContext {
  // --- identity ----------------------------------------------------------------------------
  Chip* chip = nullptr;
  runtime::CoreKind kind = runtime::CoreKind::Tensix;
  runtime::CoreCoord logical;
  CoreCoord noc0;
  runtime::DataMovementProcessor processor = runtime::DataMovementProcessor::Riscv0;
  std::string kernel;
  kernels::KernelFn entry = nullptr;
  bool persistent = false;  // a fabric router launched at open, not part of any workload
  std::string workload;
  std::vector<std::uint32_t> compile_time_args;
  std::vector<std::uint32_t> runtime_args;
  NocId noc = NocId::Noc0;
  MemoryRegion* l1 = nullptr;
  EthCore* eth = nullptr;  // ERISC kernels only
  NocPort* noc_ports[2] = {nullptr, nullptr};  // this core's ports, looked up on first use (polls ask often)
  // Direct L1 reads (dataflow_api_sim.cpp): l1's page slots (MemoryRegion::page_slots), its
  // page size and how many of its pages are whole, looked up by the first read that finds the
  // slots made (nullptr, 0 before). Polling kernels read their control words millions of
  // times; this skips the region's table walk and checks.
  const MemoryRegion::Page* l1_pages = nullptr;
  std::uint64_t l1_whole_pages = 0;
  unsigned l1_page_shift = 0;
  CoreProgram* core = nullptr;
  std::uint32_t program_semaphore_ids[2] = {0, 0};  // per CoreKind: ids on any core of that kind
  const runtime::ChipCoreMap* core_map = nullptr;
  // Its chip's check of NoC reads and writes against the buffers (noc_access_check.hpp); none
  // in tests that build a context by hand.
  const NocAccessCheck* noc_access_check = nullptr;
  runtime::EriscL1Map erisc_l1;  // where ERISC semaphores sit (the device's FabricOptions)
  runtime::CoreCoord worker_grid;
  const KernelCosts* costs = nullptr;
  // Where a workload kernel on this chip hands packets to the fabric (fabric_route_check.hpp):
  // its writes there have their headers' routes checked. nullptr for the routers themselves.
  const FabricEntryPoints* fabric_entry_points = nullptr;
  std::function<void(KernelContext&)> on_done;
  std::function<void(KernelContext&)> on_failure;
  std::unique_ptr<KernelTrace> trace;  // only when the device records a trace

  // --- progress ----------------------------------------------------------------------------
  bool started = false;
  bool done = false;
  bool failed = false;
  SimTime start;
  SimTime end;
  std::optional<SimTime> ready;  // profile_mark_ready()
  ActivityListener* activity = nullptr;  // while it runs: its view of the core's L1 activity
  SimTime issue_debt;  // core time of NoC issues not yet spent (dataflow_api_sim.cpp)

  // --- where it is --------------------------------------------------------------------------
  bool has_command = false;
  std::uint32_t stream = 0;
  std::uint32_t command_index = 0;
  std::uint32_t header_arg = 0;
  BlockedIn blocked = BlockedIn::Nothing;
  std::uint64_t blocked_a = 0;
  std::uint64_t blocked_b = 0;
  SimTime blocked_since;  // when it entered the wait it is blocked in (hang_timing.hpp)
  // Where each command stream of an interpreter is (debug_set_current_command and
  // debug_command_done), not only the last one to report: an interpreter parked with several
  // streams left waits in every one of them (wait_chain.cpp).
  struct StreamPosition {
    bool started = false;        // it has reported a command
    std::uint32_t current = 0;   // the command it last reported
    std::uint32_t completed = 0;  // commands it has finished: 0 .. completed - 1
  };
  std::array<StreamPosition, kernels::interpreter::kMaxStreams> streams{};
  // Time spent in each kind of wait inside the chip's busy window (CCLMESH_NOC_STATS_WINDOW),
  // by BlockedIn; all zero unless the window is armed.
  std::array<SimTime, kBlockedInKinds> blocked_in_window{};
  std::optional<KernelFaultReport> fault;
  std::string error;

  // "chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter" (dm0 / dm1: the data-movement
  // RISC-V of a Tensix kernel)
  std::string name() const;
  // The interpreter command it last started ("stream 0 #2 WAIT_VALUE ..."), or "".
  std::string current_command() const;
  // "noc_semaphore_wait_min(semaphore id 0 at 0x20000 >= 4, now 3)" or "" when not blocked.
  std::string blocked_description() const;
  // The fault or error as one line (after name()).
  std::string failure_description() const;
};

[[noreturn]] void fail_outside_kernel();

// The kernel whose fiber is running; an InvariantError outside a kernel fiber. Inline: every
// dataflow API call starts here.
inline KernelContext& current_kernel() {
  Fiber* fiber = Fiber::current();
  if (fiber == nullptr || fiber->user_context() == nullptr) [[unlikely]] {
    fail_outside_kernel();
  }
  return *static_cast<KernelContext*>(fiber->user_context());
}

// Runs ctx.entry on the calling fiber (the body of every kernel fiber): records start and end,
// calls on_done; on a kernel_fault or any other exception records it, calls on_failure and
// rethrows, which stops the run (the device turns it into a DeviceError).
void run_kernel(KernelContext& ctx);

// Thrown by kernel_fault() (after the fault is recorded on the context).
class KernelFaultSignal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A dataflow API call the kernel should not make (no such CB, an ethernet call on a Tensix
// core, a bank that does not exist ...). Reported like a fault.
class DataflowApiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cclmesh::sim::device
