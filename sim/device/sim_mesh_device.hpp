#pragma once
// The simulated backend of runtime::MeshDevice: a SimSystem of chips and links built from a
// topo::Topology, its own discrete-event engine, and the kernels of kernels/ running on fibers
// against the dataflow API of sim/device/dataflow_api_sim.cpp.
//
//   SimMeshDevice device(topo::load_system("t3k"), {.fabric = {.mode = FabricMode::Line}});
//   BufferHandle in = device.create_buffer({BufferType::Dram, 1 << 20, 2048});
//   device.write_buffer(0, in, bytes);                  // host side, zero simulated time
//   device.enqueue_workload(send_recv::build(params, device.topology()));
//   device.enqueue_read_buffer(3, out, result);          // on chip 3's queue, behind its program
//   device.finish();                                     // runs the engine; DeviceError on hang/fault
//                                                        // result holds chip 3's output now
//   device.profile(); device.stats(); device.now();
//
// Dispatch: per chip, programs run one after another in enqueue order; each starts
// `program_dispatch_latency` after the previous one on that chip finished (or after it was
// enqueued on an idle chip, then moved up to the next point of a launch grid, by under a
// nanosecond on a Wormhole, so that every op reads the cycle counter at a fresh device's
// sub-cycle phase: docs/sim_device.md, "Dispatch"): REFERENCE 1.8's op-to-op gap. Enqueued
// host writes and reads sit in the same per-chip queue and run at their turn, in zero
// simulated time (REFERENCE has no host-to-device figure): a program behind one starts as it
// would behind the program before. In fabric mode the routers are launched once at
// construction (one dispatch latency, then their handshakes), and the constructor returns
// once every router reads READY_FOR_TRAFFIC; in legacy mode (no fabric)
// a workload's ERISC kernels (legacy EDMs) start `erisc_launch_extra` after its Tensix kernels
// and handshake inside the op, so the two modes' launch costs differ measurably.
//
// Errors: a workload that cannot be placed (unknown kernel, core outside the chip, L1
// overflow, a core the fabric occupies) is bad input: std::invalid_argument from
// enqueue_workload; runtime::WorkloadPlacementError (one of them) when only L1 overflowed. A run that cannot complete is a DeviceError from finish(): Hang (the report
// lists every parked kernel and what it waits for), Fault (a kernel_fault or a model
// AccessError, one line naming chip, core, kernel and command) or Timeout (max_simulated_time).
// After a DeviceError the device is broken: later calls throw the same error again, until
// reset() rebuilds it as constructed (the same topology and options: fabric, faults, watchdogs,
// trace recorder; kernels registered with register_kernel stay registered).

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/kernel_registry.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/device_allocator.hpp"
#include "sim/device/noc_access_check.hpp"
#include "sim/device/fault_plan.hpp"
#include "sim/device/fabric_route_check.hpp"
#include "sim/device/kernel_context.hpp"
#include "sim/device/mirrored_groups.hpp"
#include "sim/device/wall_watchdog.hpp"
#include "sim/engine/engine.hpp"
#include "sim/model/ideal_hardware.hpp"
#include "sim/model/packet_corruption.hpp"
#include "sim/model/sim_system.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::sim::device {

struct DispatchOptions {
  // REFERENCE 1.8: the traced T3K all-gather perf test's OP TO OP LATENCY reference, 3.5 us.
  SimTime program_dispatch_latency = SimTime::from_ns(3500);
  // (unconfirmed, REFERENCE 1.8 gives no figure) extra launch time of a workload's ERISC
  // kernels (legacy EDMs); their handshake is simulated on top.
  SimTime erisc_launch_extra = SimTime::zero();
};

struct SimMeshDeviceOptions {
  DataMode data_mode = DataMode::Functional;
  runtime::FabricOptions fabric;
  DispatchOptions dispatch;
  KernelCosts costs;
  // Ideal: chips without on-chip throughput limits, links as they are (sim/model/ideal_hardware.hpp,
  // REFERENCE 10).
  HardwareModel hardware = HardwareModel::Modelled;
  // Watchdog: finish() stops with DeviceError(Timeout) once simulated time passes this.
  std::optional<SimTime> max_simulated_time;
  // Watchdog: a run stops with DeviceError(Timeout) once this much host wall time has passed
  // since construction. Checked between events, never an input to the simulation.
  std::optional<double> max_wall_seconds;
  // The watchdogs' budgets counted from the start of each finish() (simulated time from the
  // clock then, wall time from then) as well as from construction (the fabric's start-up)
  // rather than from construction for the device's whole life: a served device (`cclmesh
  // serve`) runs op after op for its clients, its clock running on.
  bool watchdogs_per_finish = false;
  // Set (from another thread, or a signal handler) to stop the run in progress: it stops at its
  // next event with DeviceError(Timeout), as the wall-time watchdog's, and the device stays
  // failed until reset(). Checked between events, never an input to the simulation. `cclmesh
  // serve` sets it when the client of a call has gone or the server is stopping, so that a long
  // op nobody will read does not hold the server. Not owned; null: never.
  const std::atomic<bool>* abandon = nullptr;
  // Faults to run with (docs/faults.md); a fabric whose line or ring crosses a link that is
  // down from the start is re-embedded around it (options().fabric.chip_order then shows the
  // order used).
  FaultPlan faults;
  // Test and what-if hook: edits a router's configuration before it is launched, to reproduce
  // misconfigured fabrics (REFERENCE 11.3 asymmetric first-level acks, mismatched slot counts).
  std::function<void(const runtime::FabricRouterSite&, kernels::FabricRouterConfig&)> adjust_router_config;
  // A progress display (`cclmesh run --progress`): called between events after every
  // progress_every_events events of the engine's (Engine::set_progress_report) with the simulated
  // time and the count. It only looks; nothing simulated depends on it. Empty: none.
  std::function<void(const EngineProgress&)> progress;
  std::uint64_t progress_every_events = std::uint64_t{1} << 20;
  std::size_t fiber_stack_bytes = 256 * 1024;
  // When set, kernels, interpreter commands and ethernet packets are recorded into it (owned
  // by the caller, outliving the device). Recording never changes the simulation.
  trace::TraceRecorder* trace = nullptr;
  // Every chip's busy window (Chip::busy_window; a diagnostic that changes nothing simulated),
  // set before the fabric starts so that its start-up counts as any other traffic.
  BusyWindow busy_window;
  // Identical groups simulated once (mirrored_groups.hpp): each group's source runs, the group's
  // chips get its kernel profile and link counters. Empty: every chip is simulated. Only for a
  // timing-only device without faults or a trace; the constructor throws std::invalid_argument
  // when the topology or the fabric does not make the groups identical and independent, and
  // enqueue_workloads() when a workload does not run the same programs on each; finish() stops
  // with an internal check failure when anything crossed a link between groups. A mirrored
  // chip's own state (read_buffer, L1, its routers) is not the op's: it ran nothing.
  std::vector<std::vector<runtime::ChipId>> mirrored_groups;
  // The group each of mirrored_groups takes its figures from (itself: simulated); empty: group 0
  // for all (MirroredGroups::fewest_sources finds the fewest simulated).
  std::vector<std::size_t> mirrored_group_sources;
};

class SimMeshDevice final : public runtime::MeshDevice {
 public:
  // Throws topo::InputError / runtime::FabricPlanError / ModelConfigError for a topology or
  // options the simulator cannot build, DeviceError when the fabric does not come up.
  explicit SimMeshDevice(topo::Topology topology, SimMeshDeviceOptions options = {});
  ~SimMeshDevice() override;
  SimMeshDevice(const SimMeshDevice&) = delete;
  SimMeshDevice& operator=(const SimMeshDevice&) = delete;

  // --- runtime::MeshDevice -------------------------------------------------------------------
  const topo::Topology& topology() const override { return topology_; }
  std::vector<runtime::ChipId> chips() const override;
  runtime::CoreCoord worker_grid() const override { return worker_grid_; }
  std::vector<std::uint32_t> active_ethernet_channels(runtime::ChipId chip) const override;
  // The options the device was opened with (options().fabric), after a re-embedding around
  // links down from the start.
  const runtime::FabricOptions& fabric() const override { return options_.fabric; }

  runtime::BufferHandle create_buffer(const runtime::BufferConfig& config) override;
  void deallocate_buffer(const runtime::BufferHandle& buffer) override;
  void write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<const std::byte> data) override;
  void read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> data) override;
  // In `chip`'s queue (runtime::MeshDevice): the write's bytes copied now, written at its turn;
  // the read's taken at its turn and put into `out` by a finish() that returns normally. Zero
  // simulated time. Timing-only: they move what write_buffer / read_buffer move there (DRAM
  // stores nothing and reads zeros; L1 keeps its bytes).
  void enqueue_write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                            std::span<const std::byte> data) override;
  void enqueue_read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> out) override;

  runtime::GlobalSemaphore create_global_semaphore(const std::vector<runtime::CoreRange>& cores, runtime::CoreKind kind,
                                                   std::uint32_t initial_value) override;
  // On every chip's queue (runtime::MeshDevice): written at its turn, in zero simulated time.
  void reset_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint32_t value) override;
  void deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore) override;

  // Every program of every workload placed, and every handle checked, before any is enqueued.
  void enqueue_workloads(std::span<const runtime::MeshWorkload> workloads) override;
  using runtime::MeshDevice::enqueue_workload;
  // Returns when every kernel of the enqueued workloads has returned (as on hardware, fabric
  // traffic the kernels left in flight, such as the routers' last acks, is still moving).
  void finish() override;
  // With mirrored groups, each simulated chip's entry followed by its mirrors' copies (indices
  // count those copies).
  std::size_t profile_size() const override;
  std::vector<runtime::KernelProfile> profile_since(std::size_t first_entry) const override;
  // Each link's sending core's payload counter and its wire's booked time, in link order (a's
  // direction, then b's).
  std::optional<std::vector<runtime::LinkTraffic>> link_traffic() const override;
  // Rebuilds the chips, links and engine as the constructor did: a run after it is a fresh
  // device's run, event for event (the clock back at zero, the fabric started again, faults at
  // their times again, a `corrupt` fault armed again). A trace recorder in the options keeps
  // recording (TraceRecorder::device_reset): the old life's running spans end at the reset and
  // the new life follows on the trace's timeline, its clock zero at the reset mark.
  void reset() override;
  // Diagnostics (CCLMESH_NOC_STATS_WINDOW): per kernel that ran on `chip`, in launch order, the
  // time it spent in each kind of wait inside the chip's busy window (options' busy_window) and
  // how much of the window it was alive for. Empty when no window is armed.
  struct KernelWaits {
    std::string kernel;  // KernelContext::name()
    SimTime alive;       // the part of [start, end or now) inside the window
    std::array<SimTime, kBlockedInKinds> blocked{};
  };
  std::vector<KernelWaits> kernel_waits_in_window(ChipId chip) const;

  // --- simulator extras ----------------------------------------------------------------------
  const SimMeshDeviceOptions& options() const { return options_; }
  // The routers fabric() runs: their sites and configurations.
  const runtime::FabricPlan& fabric_plan() const { return fabric_; }
  const runtime::ChipCoreMap& core_map(runtime::ChipId chip) const;
  // Where buffers, global semaphores and CBs go: what is free, how far allocations reached.
  const DeviceAllocator& allocator() const { return *allocator_; }
  Engine& engine() { return *engine_; }
  SimSystem& system() { return *system_; }
  SimTime now() const { return engine_->now(); }
  // Events executed, simulated time, wall time of the runs so far.
  EngineStats stats() const { return engine_->stats(); }
  std::uint64_t trace_hash() const { return engine_->trace_hash(); }
  // When the fabric's routers were all READY_FOR_TRAFFIC (zero without a fabric).
  SimTime fabric_ready_time() const { return fabric_ready_time_; }
  // finish(), then runs until no event is left: every packet in flight delivered, every
  // router idle. A fault a router meets on the way surfaces here.
  void drain();
  // Kernels a test or tool adds beside the registry's (looked up first).
  void register_kernel(std::string name, kernels::KernelFn entry, bool runs_on_ethernet_core);
  // Sends every fabric router `signal` and runs until all have terminated (REFERENCE 6.8:
  // farthest first is the host's order; here every router gets it at once and drains).
  void terminate_fabric(api::TerminationSignal signal = api::TerminationSignal::GRACEFULLY_TERMINATE);
  // The report finish() would throw for a hang, for the kernels parked right now: every
  // parked kernel, the wait-for chain of each (docs/faults.md), the injected faults.
  // `stopped_while_running`: a time limit stopped the run with events still queued (WaitChainInput's).
  std::string hang_report(const std::string& headline, bool stopped_while_running) const;
  // The injected faults and what they did so far ("" without faults).
  std::string fault_summary() const;
  // Each chip's launch delay drawn for a skew fault (empty without one).
  const std::map<runtime::ChipId, SimTime>& launch_skew() const { return launch_skew_; }
  // One per `corrupt` fault, in plan order: what each flipped, if anything yet.
  const std::vector<std::unique_ptr<PacketCorruption>>& corruptions() const { return corruptions_; }
  // What the faults with an effect worth a line of a run's report did: one "SPEC: what" per
  // `corrupt` fault ("corrupt:0-2:5: flipped bit 0 of byte 3958 ..."), in plan order, then,
  // when a `drop` fault has lost frames beyond `frames_dropped_before` (frames_dropped() at some
  // earlier moment: a served device's op counts its own), its lost_frames_effect() for them.
  std::vector<std::string> fault_effects(std::int64_t frames_dropped_before = 0) const;
  // Drops the kernel profile's entries so far, the device otherwise as it is (its clock, buffers
  // and fabric run on): the next kernel to end is entry 0. Outside MeshDevice's contract (whose
  // entries last until reset()): for a server whose sessions each see their own kernels, so
  // that a long-lived one does not keep every session's (`cclmesh serve`, at a session's end).
  void forget_profile() {
    profile_.clear();
    profile_forgotten_ = 0;
  }
  // Drops the entries before `entry` (MeshDevice's numbering), keeping the later ones and the
  // numbering: profile_size() still counts every entry, and profile_since() of a range that
  // starts before `entry` is refused (std::invalid_argument naming what was dropped). Outside
  // MeshDevice's contract too: for a server that bounds a long session's profile (`cclmesh serve
  // --max-profile-entries`, RemoteServerOptions::forget_profile_before). Not with mirrored groups
  // (a local run's, which reads its one op's entries whole).
  void forget_profile_before(std::size_t entry);
  // Frames a `drop` fault has lost on every link so far, in this device life.
  std::int64_t frames_dropped() const;
  // 1 as constructed, one more per reset(): tells one device life from the next, which the clock
  // cannot (it starts from zero again).
  std::uint32_t life() const { return life_; }

 private:
  struct Program;
  struct HostCommand;
  struct ChipQueue {
    // Programs and host commands in enqueue order: exactly one of an entry's pointers is set.
    struct Entry {
      Program* program = nullptr;
      HostCommand* host = nullptr;
    };
    std::deque<Entry> pending;
    Program* running = nullptr;
  };

  // Builds the system, the engine and the fabric from opened_with_ (the constructor, reset()).
  void open();
  // Ends the simulation: the fault log into the trace, the engine then the system destroyed.
  void close();
  const kernels::KernelInfo* find_kernel(const std::string& name) const;
  std::unique_ptr<Program> place_program(const std::string& workload, runtime::ChipId chip,
                                         const runtime::Program& program);
  void launch_program(Program& program);
  // Frees the kernels, programs and fibers of ops that finished, once none is outstanding:
  // a device that runs op after op (a long-lived `cclmesh serve`, a loop in a user's test)
  // kept every one since it was opened, ~200 KB per t3k all_gather, until reset().
  void retire_finished_work();
  void kernel_done(KernelContext& kernel);
  void kernel_failed(KernelContext& kernel);
  void program_done(Program& program);
  // Who starts the next program of a chip: the host's enqueue on an idle chip (the program
  // launches on the launch grid, docs/sim_device.md "Dispatch"), or the end of the program
  // before it (one dispatch latency after that end, as it falls).
  enum class DispatchedBy { Host, PreviousProgram };
  // Runs the host commands at the head of `chip`'s queue, then launches the program behind
  // them, if the chip runs none.
  void start_next_program(runtime::ChipId chip, DispatchedBy by);
  // The copies themselves, page by page, at the current simulated time.
  void copy_to_chip(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<const std::byte> data);
  void copy_from_chip(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> out);
  // The simulated storage of a freed buffer's range given back on every chip, in every DRAM
  // bank or on every worker core the allocator reserved it in (MemoryRegion::release_storage):
  // a long-lived device with data holds its live buffers' pages, not every page ever written.
  void release_buffer_storage(const runtime::BufferHandle& buffer);
  void enqueue_host_command(std::unique_ptr<HostCommand> command);
  // `value` into the semaphore's word on each of its cores of `chip`, now.
  void write_global_semaphore(runtime::ChipId chip, const runtime::GlobalSemaphore& semaphore, runtime::CoreKind kind,
                              std::uint32_t value);
  void run_host_command(HostCommand& command);
  KernelContext& spawn_kernel(std::unique_ptr<KernelContext> context, SimTime start_delay);
  void launch_fabric();
  // options_.mirrored_groups checked and taken (mirrored_), or none.
  void mirror_identical_groups();
  // False for a chip that mirrors another and runs nothing itself.
  bool simulated(runtime::ChipId chip) const;
  // What the links between groups (or to a chip in none) have carried, both ways.
  struct TrafficBetweenGroups {
    std::int64_t packets = 0;
    std::int64_t payload_bytes = 0;
    std::int64_t words = 0;
    std::int64_t wire_busy_ps = 0;
    bool operator==(const TrafficBetweenGroups&) const = default;
  };
  TrafficBetweenGroups traffic_between_groups() const;
  // What crossed between groups since the fabric's start-up, said in a phrase; empty: nothing.
  std::string traffic_since_open_between_groups() const;
  // Throws (an internal check) when the simulated group's traffic crossed to another group.
  void require_groups_stayed_apart() const;
  void apply_faults();
  // Every kernel: spawned ones and those of programs still waiting to launch.
  std::vector<const KernelContext*> kernels_of_interest() const;
  void reembed_around_down_links();
  // Runs the engine while `keep_going` holds; converts every way a run can fail into a
  // DeviceError (and marks the device broken).
  // (A template, defined in sim_mesh_device_detail.hpp for the .cpp files only: the predicate is
  // asked before every event.)
  // AtLastProgram: `keep_going` turns false only when the last outstanding program ends, so
  // without a watchdog the engine runs without asking it (program_done() stops the run).
  enum class StopsItself { No, AtLastProgram };
  template <typename KeepGoing>
  void run_engine(const KeepGoing& keep_going, const std::string& what, bool idle_is_done = false,
                  StopsItself stops_itself = StopsItself::No);
  [[noreturn]] void fail(runtime::DeviceError::Kind kind, const std::string& report);
  void record_faults_in_trace();
  std::uint32_t router_status(const runtime::FabricRouterSite& site);
  MemoryRegion& tensix_l1(runtime::ChipId chip, runtime::CoreCoord logical);

  // What a reset() keeps: the device's make and the kernels registered beside the registry's.
  topo::Topology topology_;
  const SimMeshDeviceOptions opened_with_;  // as given: reset() opens from it again
  std::map<runtime::ChipId, runtime::ChipCoreMap> core_maps_;
  runtime::CoreCoord worker_grid_;
  std::map<std::string, kernels::KernelInfo> extra_kernels_;
  std::deque<std::string> extra_kernel_names_;  // storage for KernelInfo::name views
  std::uint32_t life_ = 1;

  // Every member from here on is built by open() or cleared by reset() (keep both in step).
  // The options open() made of opened_with_ (the fabric re-embedded around links down from the
  // start).
  SimMeshDeviceOptions options_;
  std::size_t faults_traced_ = 0;  // the fault log's records in the trace (record_faults_in_trace)
  runtime::FabricPlan fabric_;
  // Per chip, the routers' worker channels, where workload kernels' packets have their routes
  // checked (fabric_route_check.hpp); filled by launch_fabric.
  std::map<runtime::ChipId, FabricEntryPoints> fabric_entry_points_;
  std::optional<MirroredGroups> mirrored_;  // options_.mirrored_groups, checked against the system
  TrafficBetweenGroups crossing_at_open_;  // traffic_between_groups() after the fabric's start-up

  // Buffers, global semaphores and CBs: where they go, as a PlanningMeshDevice places them.
  std::optional<DeviceAllocator> allocator_;
  // Per chip: NoC reads and writes kernels issue, checked against the allocator's buffers.
  std::map<runtime::ChipId, NocAccessCheck> noc_access_checks_;

  std::vector<std::unique_ptr<KernelContext>> kernels_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::map<runtime::ChipId, ChipQueue> queues_;
  std::vector<std::unique_ptr<HostCommand>> host_commands_;  // enqueued since the last finish(), in order
  std::size_t outstanding_programs_ = 0;
  bool stop_at_last_program_ = false;  // finish()'s run is on: program_done() stops it at the last
  KernelContext* first_failure_ = nullptr;
  std::optional<runtime::DeviceError> broken_;
  // The profile's entries from profile_forgotten_ on (forget_profile_before): a deque, as a
  // bounded served session drops its oldest entries one op at a time.
  std::deque<runtime::KernelProfile> profile_;
  std::size_t profile_forgotten_ = 0;
  SimTime fabric_ready_time_;
  std::map<runtime::ChipId, SimTime> launch_skew_;
  std::vector<std::unique_ptr<PacketCorruption>> corruptions_;  // the links point at them
  // Each program semaphore word's value when the last program using it ended (absent: never
  // used, reads 0), to tell early writes from leftovers at the next launch.
  std::map<std::pair<const MemoryRegion*, std::uint32_t>, std::uint32_t> semaphore_settled_;
  WallWatchdog wall_watchdog_;
  // Where run_engine stops with a timeout: max_simulated_time, or (watchdogs_per_finish) the
  // current finish()'s start plus it.
  std::optional<SimTime> simulated_time_limit_;

  // Destroyed first (declared last): the engine unwinds parked kernel fibers while the chips
  // and the kernel contexts they reference still exist.
  std::unique_ptr<SimSystem> system_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace cclmesh::sim::device
