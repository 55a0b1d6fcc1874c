// SimMeshDevice's construction, open/close/reset, buffers, host commands, workloads, programs and runs.

#include "sim/device/sim_mesh_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/profile_range.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/cycle_counter.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/process.hpp"
#include "sim/model/arch_params.hpp"
#include "sim/device/sim_mesh_device_detail.hpp"
#include "sim/device/simulated_system_config.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::sim::device {
namespace {

std::uint64_t to_ns(SimTime t) { return static_cast<std::uint64_t>(t.ps() / 1000); }

std::uint32_t kind_index(CoreKind kind) { return kind == CoreKind::Tensix ? 0u : 1u; }

const char* kind_name(CoreKind kind) { return kind == CoreKind::Tensix ? "tensix" : "ethernet"; }

[[noreturn]] void bad_workload(const std::string& workload, runtime::ChipId chip, const std::string& what) {
  throw std::invalid_argument(fmt::format("workload '{}' chip {}: {}", workload, chip, what));
}

}  // namespace

// An enqueued host write or read of one chip's part of a buffer, or a global semaphore's reset
// on one chip's cores.
struct SimMeshDevice::HostCommand {
  runtime::ChipId chip = 0;
  runtime::BufferHandle buffer;
  struct SemaphoreReset {
    runtime::GlobalSemaphore semaphore;
    runtime::CoreKind kind = runtime::CoreKind::Tensix;
    std::uint32_t value = 0;
  };
  std::optional<SemaphoreReset> semaphore_reset;  // set: a reset (no buffer), else a write or read
  bool read = false;
  std::vector<std::byte> bytes;  // a write's data, copied at the call; a read's, taken at its turn
  std::span<std::byte> out;      // a read's destination, written by finish()
  bool ran = false;
};

// --- construction ----------------------------------------------------------------------------

SimMeshDevice::SimMeshDevice(topo::Topology topology, SimMeshDeviceOptions options)
    : topology_(std::move(topology)), opened_with_(std::move(options)) {
  if (topology_.chip_count() == 0) throw std::invalid_argument("simulated device: the topology has no chip");
  require_one_architecture(topology_);
  core_maps_ = chip_core_maps(topology_);
  worker_grid_ = runtime::common_worker_grid(topology_);
  open();
}

void SimMeshDevice::open() {
  options_ = opened_with_;
  wall_watchdog_ = WallWatchdog(options_.max_wall_seconds);
  reembed_around_down_links();
  fabric_ = runtime::FabricPlan(topology_, options_.fabric);

  const SystemConfig config = simulated_system_config(topology_, core_maps_, options_.data_mode);
  engine_ = std::make_unique<Engine>();
  if (options_.progress) engine_->set_progress_report(options_.progress_every_events, options_.progress);
  // run_engine's keep-going check stops at the first event past the limit: skipped events too.
  simulated_time_limit_ = options_.max_simulated_time;
  if (simulated_time_limit_) engine_->set_keep_going_time_cap(*simulated_time_limit_);
  if (options_.hardware == HardwareModel::Ideal) {
    system_ = std::make_unique<SimSystem>(*engine_, config, builtin_ideal_arch_spec);
  } else {
    system_ = std::make_unique<SimSystem>(*engine_, config);
  }
  system_->set_busy_window(options_.busy_window);
  if (options_.trace != nullptr) {
    for (const auto& link : system_->links()) {
      link->a().set_trace(options_.trace);
      link->b().set_trace(options_.trace);
    }
  }

  const DeviceMemorySizes sizes = device_memory_sizes(topology_, options_.fabric);
  for (const auto& chip_map : core_maps_) {
    // Named, not structured bindings: CCLMESH_CHECK's message lambda captures them, which
    // clang before 16 refuses for bindings.
    const runtime::ChipId id = chip_map.first;
    const runtime::ChipCoreMap& map = chip_map.second;
    Chip& chip = system_->chip(id);
    CCLMESH_CHECK(static_cast<std::uint32_t>(chip.dram_bank_count()) == map.dram_bank_count(),
                  fmt::format("chip {}: the core map counts {} DRAM banks, the chip model {}", id,
                              map.dram_bank_count(), chip.dram_bank_count()));
    const runtime::CoreCoord grid = map.worker_grid();
    CCLMESH_CHECK(chip.tensix_cores().size() == std::size_t{grid.x} * grid.y,
                  fmt::format("chip {}: the core map has a {}x{} grid, the chip model {} Tensix cores", id, grid.x,
                              grid.y, chip.tensix_cores().size()));
    // The allocator's sizes come from the specs the chips are built from, not the chips.
    CCLMESH_CHECK(chip.params().l1.tensix_bytes >= sizes.tensix_l1_bytes &&
                      chip.params().dram.bank_bytes() == sizes.dram_bank_bytes,
                  fmt::format("chip {}: the model's L1 or DRAM bank size differs from its arch spec's", id));
  }
  allocator_.emplace(sizes);
  for (const auto& [id, map] : core_maps_) {
    noc_access_checks_.try_emplace(id, system_->chip(id), map, allocator_->buffer_space());
  }

  apply_faults();
  mirror_identical_groups();
  // Every router, a mirrored chip's too: the start-up is the same as with every group simulated,
  // and a router with no traffic runs no event after it.
  if (fabric_.enabled()) launch_fabric();
  if (mirrored_) crossing_at_open_ = traffic_between_groups();
}

void SimMeshDevice::close() {
  record_faults_in_trace();
  // The engine first: it unwinds parked kernel fibers while chips and contexts still exist.
  engine_.reset();
  system_.reset();
}

void SimMeshDevice::reset() {
  close();
  ++life_;
  // Everything open() and the calls since built, in the order that leaves no dangling pointer:
  // kernels point at their programs' cores, the links (gone with the system) at the corruptions.
  kernels_.clear();
  queues_.clear();
  host_commands_.clear();  // never run: their reads' `out` stays untouched
  programs_.clear();
  outstanding_programs_ = 0;
  stop_at_last_program_ = false;
  first_failure_ = nullptr;
  broken_.reset();
  profile_.clear();
  profile_forgotten_ = 0;
  fabric_ready_time_ = SimTime::zero();
  launch_skew_.clear();
  corruptions_.clear();
  semaphore_settled_.clear();
  noc_access_checks_.clear();
  allocator_.reset();
  faults_traced_ = 0;
  // Between the old life's last records (close(): its fault log) and the new life's first.
  if (opened_with_.trace != nullptr) opened_with_.trace->device_reset();
  open();
}

SimMeshDevice::~SimMeshDevice() { close(); }

// --- topology --------------------------------------------------------------------------------

std::vector<runtime::ChipId> SimMeshDevice::chips() const { return topology_chip_ids(topology_); }

std::vector<std::uint32_t> SimMeshDevice::active_ethernet_channels(runtime::ChipId chip) const {
  return topology_ethernet_channels(topology_, chip);
}

const runtime::ChipCoreMap& SimMeshDevice::core_map(runtime::ChipId chip) const {
  const auto it = core_maps_.find(chip);
  if (it == core_maps_.end()) throw std::invalid_argument(fmt::format("simulated device: no chip {}", chip));
  return it->second;
}

MemoryRegion& SimMeshDevice::tensix_l1(runtime::ChipId chip, runtime::CoreCoord logical) {
  const runtime::Noc0Coord n = core_map(chip).tensix_noc0(logical);
  return system_->chip(chip).l1(CoreCoord{static_cast<std::int32_t>(n.x), static_cast<std::int32_t>(n.y)});
}

// --- buffers and global semaphores -------------------------------------------------------------

runtime::BufferHandle SimMeshDevice::create_buffer(const runtime::BufferConfig& config) {
  return allocator_->create_buffer(config);
}

void SimMeshDevice::deallocate_buffer(const runtime::BufferHandle& buffer) {
  allocator_->deallocate_buffer(buffer);  // refuses a buffer work not finished may use: nothing reads it after this
  // Except on a failed device: a hung kernel stays parked until reset(), perhaps on a word of a
  // buffer its workload did not name (a wait at an absolute address), and the allocator frees
  // such a buffer. Its storage then goes at reset(), with every other page.
  if (!broken_) release_buffer_storage(buffer);
}

void SimMeshDevice::release_buffer_storage(const runtime::BufferHandle& buffer) {
  for (const auto& chip_map : core_maps_) {
    const runtime::ChipId id = chip_map.first;
    const std::uint32_t banks = chip_map.second.dram_bank_count();
    const std::uint64_t bytes = runtime::buffer_layout(buffer, worker_grid_, banks).bytes_per_target();
    Chip& chip = system_->chip(id);
    if (buffer.config.type == runtime::BufferType::Dram) {
      // The allocator reserves the range in every bank (one free list for all), so every bank
      // gives it back: a sharded buffer's unused banks hold nothing there, which costs a look.
      for (std::uint32_t b = 0; b < banks; ++b) {
        const DramBank bank = chip.dram_bank(static_cast<std::int32_t>(b));
        chip.dram_channel(bank.channel).memory().release_storage(bank.channel_offset + buffer.address, bytes);
      }
    } else {
      // L1 buffers sit on the common worker grid's cores. Safe to release: finished programs'
      // kernels keep no page pointer, and a CB or a global semaphore never overlaps a buffer.
      for (std::uint32_t y = 0; y < worker_grid_.y; ++y) {
        for (std::uint32_t x = 0; x < worker_grid_.x; ++x) {
          tensix_l1(id, runtime::CoreCoord{x, y}).release_storage(buffer.address, bytes);
        }
      }
    }
  }
}

void SimMeshDevice::write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                 std::span<const std::byte> data) {
  allocator_->require_no_unfinished_user(buffer, "write_buffer");
  require_host_copy(topology_, "write_buffer", chip, buffer, data.size());
  copy_to_chip(chip, buffer, data);
}

void SimMeshDevice::read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> data) {
  allocator_->require_no_unfinished_user(buffer, "read_buffer");
  require_host_copy(topology_, "read_buffer", chip, buffer, data.size());
  copy_from_chip(chip, buffer, data);
}

void SimMeshDevice::copy_to_chip(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                 std::span<const std::byte> data) {
  const runtime::BufferLayout layout = runtime::buffer_layout(buffer, worker_grid_, core_map(chip).dram_bank_count());
  Chip& c = system_->chip(chip);
  const std::uint32_t page_size = layout.page_size();
  for (std::uint32_t i = 0; i < layout.num_pages(); ++i) {
    const runtime::PageLocation at = layout.page(i);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data()) + std::size_t{i} * page_size;
    const std::span<const std::uint8_t> page(bytes, page_size);
    if (at.dram) {
      const DramBank bank = c.dram_bank(static_cast<std::int32_t>(at.bank));
      c.dram_channel(bank.channel).memory().write(bank.channel_offset + at.address, page);
    } else {
      tensix_l1(chip, at.core).write(at.address, page);
    }
  }
}

void SimMeshDevice::copy_from_chip(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> out) {
  const runtime::BufferLayout layout = runtime::buffer_layout(buffer, worker_grid_, core_map(chip).dram_bank_count());
  Chip& c = system_->chip(chip);
  const std::uint32_t page_size = layout.page_size();
  for (std::uint32_t i = 0; i < layout.num_pages(); ++i) {
    const runtime::PageLocation at = layout.page(i);
    auto* bytes = reinterpret_cast<std::uint8_t*>(out.data()) + std::size_t{i} * page_size;
    const std::span<std::uint8_t> page(bytes, page_size);
    if (at.dram) {
      const DramBank bank = c.dram_bank(static_cast<std::int32_t>(at.bank));
      c.dram_channel(bank.channel).memory().read(bank.channel_offset + at.address, page);
    } else {
      tensix_l1(chip, at.core).read(at.address, page);
    }
  }
}

void SimMeshDevice::enqueue_write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                         std::span<const std::byte> data) {
  if (broken_) throw *broken_;
  require_host_copy(topology_, "enqueue_write_buffer", chip, buffer, data.size());
  allocator_->hold_buffer_for_host_command(buffer, "enqueue_write_buffer", chip);
  auto command = std::make_unique<HostCommand>();
  command->chip = chip;
  command->buffer = buffer;
  command->bytes.assign(data.begin(), data.end());
  enqueue_host_command(std::move(command));
}

void SimMeshDevice::enqueue_read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                        std::span<std::byte> out) {
  if (broken_) throw *broken_;
  require_host_copy(topology_, "enqueue_read_buffer", chip, buffer, out.size());
  allocator_->hold_buffer_for_host_command(buffer, "enqueue_read_buffer", chip);
  auto command = std::make_unique<HostCommand>();
  command->chip = chip;
  command->buffer = buffer;
  command->read = true;
  command->out = out;
  enqueue_host_command(std::move(command));
}

void SimMeshDevice::enqueue_host_command(std::unique_ptr<HostCommand> command) {
  HostCommand* c = command.get();
  host_commands_.push_back(std::move(command));
  queues_[c->chip].pending.push_back(ChipQueue::Entry{nullptr, c});
  start_next_program(c->chip, DispatchedBy::Host);  // an idle chip runs it now
}

void SimMeshDevice::run_host_command(HostCommand& command) {
  if (command.semaphore_reset) {
    const HostCommand::SemaphoreReset& reset = *command.semaphore_reset;
    write_global_semaphore(command.chip, reset.semaphore, reset.kind, reset.value);
  } else if (command.read) {
    command.bytes.resize(command.buffer.config.size_bytes);
    copy_from_chip(command.chip, command.buffer, command.bytes);
  } else {
    copy_to_chip(command.chip, command.buffer, command.bytes);
    std::vector<std::byte>().swap(command.bytes);  // written: its copy is not needed any more
  }
  command.ran = true;
}

runtime::GlobalSemaphore SimMeshDevice::create_global_semaphore(const std::vector<runtime::CoreRange>& cores,
                                                                runtime::CoreKind kind, std::uint32_t initial_value) {
  const std::vector<runtime::CoreCoord> list = runtime::cores_of(cores);
  if (list.empty()) throw std::invalid_argument("create_global_semaphore: no cores");
  for (const auto& [chip, map] : core_maps_) {
    for (const runtime::CoreCoord& c : list) map.noc0(kind, c);  // throws CoreMapError
  }
  const runtime::GlobalSemaphore semaphore = allocator_->create_global_semaphore(cores, kind);
  // At the call: no work enqueued before can use a semaphore that did not exist (a freed one's
  // word was not freed while any could).
  for (const auto& chip_map : core_maps_) write_global_semaphore(chip_map.first, semaphore, kind, initial_value);
  return semaphore;
}

void SimMeshDevice::reset_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint32_t value) {
  if (broken_) throw *broken_;
  const runtime::CoreKind kind = allocator_->hold_semaphore_for_reset(semaphore, "reset_global_semaphore");
  // Enqueue-ordered, one host command per chip: an idle chip writes it now, a busy one after
  // the work enqueued before it and before the work enqueued after it.
  for (const auto& chip_map : core_maps_) {
    auto command = std::make_unique<HostCommand>();
    command->chip = chip_map.first;
    command->semaphore_reset = HostCommand::SemaphoreReset{semaphore, kind, value};
    enqueue_host_command(std::move(command));
  }
}

void SimMeshDevice::write_global_semaphore(runtime::ChipId chip, const runtime::GlobalSemaphore& semaphore,
                                           runtime::CoreKind kind, std::uint32_t value) {
  const runtime::ChipCoreMap& map = core_maps_.at(chip);
  for (const runtime::CoreCoord& c : runtime::cores_of(semaphore.cores)) {
    const runtime::Noc0Coord n = map.noc0(kind, c);
    system_->chip(chip).l1(CoreCoord{static_cast<std::int32_t>(n.x), static_cast<std::int32_t>(n.y)})
        .write_u32(semaphore.address, value);
  }
}

void SimMeshDevice::deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore) {
  allocator_->deallocate_global_semaphore(semaphore);
}

// --- kernels ---------------------------------------------------------------------------------

void SimMeshDevice::register_kernel(std::string name, kernels::KernelFn entry, bool runs_on_ethernet_core) {
  extra_kernel_names_.push_back(name);
  extra_kernels_[name] = kernels::KernelInfo{extra_kernel_names_.back(), entry, "", runs_on_ethernet_core};
}

const kernels::KernelInfo* SimMeshDevice::find_kernel(const std::string& name) const {
  const auto it = extra_kernels_.find(name);
  if (it != extra_kernels_.end()) return &it->second;
  return kernels::find_kernel_info(name);
}

std::unique_ptr<SimMeshDevice::Program> SimMeshDevice::place_program(const std::string& workload, runtime::ChipId chip_id,
                                                                     const runtime::Program& program) {
  if (!topology_.has_chip(chip_id)) bad_workload(workload, chip_id, "no such chip in the topology");
  const runtime::ChipCoreMap& map = core_maps_.at(chip_id);
  Chip& chip = system_->chip(chip_id);
  auto placed = std::make_unique<Program>();
  placed->workload = workload;
  placed->chip = chip_id;

  auto core_of = [&](CoreKind kind, runtime::CoreCoord logical) -> CoreProgram& {
    auto& slot = placed->cores[CoreKey{kind, logical}];
    if (!slot) {
      runtime::Noc0Coord n;
      try {
        n = map.noc0(kind, logical);
      } catch (const runtime::CoreMapError& e) {
        bad_workload(workload, chip_id, e.what());
      }
      slot = std::make_unique<CoreProgram>();
      slot->kind = kind;
      slot->logical = logical;
      slot->noc0 = CoreCoord{static_cast<std::int32_t>(n.x), static_cast<std::int32_t>(n.y)};
    }
    return *slot;
  };

  std::uint32_t program_semaphores[2] = {0, 0};
  for (const runtime::SemaphoreSpec& spec : program.semaphores) {
    if (spec.id >= runtime::kMaxProgramSemaphores) {
      bad_workload(workload, chip_id, fmt::format("semaphore id {} (ids are 0..{})", spec.id,
                                                  runtime::kMaxProgramSemaphores - 1));
    }
    for (const runtime::CoreCoord& c : runtime::cores_of(spec.cores)) {
      CoreProgram& core = core_of(spec.core_kind, c);
      if (((core.semaphore_ids >> spec.id) & 1u) != 0) {
        bad_workload(workload, chip_id, fmt::format("semaphore id {} declared twice on {} core ({},{})", spec.id,
                                                    kind_name(spec.core_kind), c.x, c.y));
      }
      core.semaphore_ids |= 1u << spec.id;
      const std::uint32_t address = spec.core_kind == CoreKind::Tensix
                                        ? runtime::tensix_program_semaphore_address(spec.id)
                                        : options_.fabric.erisc_l1_map().program_semaphore_address(spec.id);
      placed->semaphore_inits.push_back({&chip.l1(core.noc0), address, spec.initial_value, &core});
    }
    program_semaphores[kind_index(spec.core_kind)] |= 1u << spec.id;
  }

  allocator_->require_circular_buffers_fit(workload, chip_id, program);
  const std::vector<std::uint64_t> cb_addresses = runtime::circular_buffer_addresses(program.circular_buffers);
  for (std::size_t cb_index = 0; cb_index < program.circular_buffers.size(); ++cb_index) {
    const runtime::CircularBufferSpec& spec = program.circular_buffers[cb_index];
    const std::uint64_t address = cb_addresses[cb_index];
    for (const runtime::CoreCoord& c : runtime::cores_of(spec.cores)) {
      CoreProgram& core = core_of(CoreKind::Tensix, c);
      if (core.cbs.count(spec.cb_id) != 0) {
        bad_workload(workload, chip_id, fmt::format("CB {} declared twice on core ({},{})", spec.cb_id, c.x, c.y));
      }
      core.cbs[spec.cb_id] = std::make_unique<CircularBuffer>(
          fmt::format("chip {} core ({},{})", chip_id, core.noc0.x, core.noc0.y), spec.cb_id,
          static_cast<std::uint32_t>(address), spec.page_size_bytes, spec.num_pages);
    }
  }

  // Where this program's kernels hand packets to the fabric: the chip's routers, and the
  // client channels of its fabric muxes, whose routes are those of the routers they feed.
  if (const auto routers = fabric_entry_points_.find(chip_id); routers != fabric_entry_points_.end()) {
    placed->fabric_entry_points = routers->second;
  }
  for (const runtime::KernelSpec& spec : program.kernels) {
    namespace mux = kernels::fabric_mux;
    if (spec.kernel != kernels::kFabricMuxKernelName || spec.compile_time_args.size() < mux::kNumCompileTimeArgs) continue;
    const std::vector<std::uint32_t>& ct = spec.compile_time_args;
    for (const runtime::CoreCoord& c : runtime::cores_of(spec.cores)) {
      const auto args = spec.runtime_args.find(c);
      const std::vector<std::uint32_t>& rt = args != spec.runtime_args.end() ? args->second : spec.common_runtime_args;
      if (rt.size() < mux::kRtRouterConnection + api::kFabricConnectionArgWords) continue;  // the mux faults BAD_ARGS
      const api::FabricConnectionConfig router =
          api::read_fabric_connection_config(rt.data() + mux::kRtRouterConnection);
      const runtime::FabricRouterSite* site = fabric_.router_at(chip_id, router.edm_noc_x, router.edm_noc_y);
      if (site == nullptr) continue;
      const CoreCoord mux_core = core_of(CoreKind::Tensix, c).noc0;
      FabricEntryPoint e = router_entry_point(fabric_, *site, site->config);
      e.core = mux_core;
      e.slot_size_bytes = api::fabric_slot_size_bytes(ct[mux::kCtMaxPayloadBytes]);
      e.slots_begin = ct[mux::kCtSlotsBase];
      e.slots_end = e.slots_begin + ct[mux::kCtNumClients] * ct[mux::kCtSlotsPerClient] * e.slot_size_bytes;
      e.mux = fmt::format("fabric mux at NoC0 ({},{})", mux_core.x, mux_core.y);
      if (e.slot_size_bytes > 0 && e.slots_end > e.slots_begin) placed->fabric_entry_points.push_back(std::move(e));
    }
  }

  std::set<std::tuple<CoreKind, runtime::CoreCoord, runtime::DataMovementProcessor>> occupied;
  for (const runtime::KernelSpec& spec : program.kernels) {
    const kernels::KernelInfo* info = find_kernel(spec.kernel);
    if (info == nullptr) bad_workload(workload, chip_id, fmt::format("unknown kernel '{}'", spec.kernel));
    const bool eth = spec.core_kind == CoreKind::Ethernet;
    if (info->runs_on_ethernet_core != eth) {
      bad_workload(workload, chip_id, fmt::format("kernel '{}' runs on {} cores, not {} cores", spec.kernel,
                                                  info->runs_on_ethernet_core ? "ethernet" : "tensix",
                                                  kind_name(spec.core_kind)));
    }
    const std::vector<runtime::CoreCoord> cores = runtime::cores_of(spec.cores);
    if (cores.empty()) bad_workload(workload, chip_id, fmt::format("kernel '{}' has no cores", spec.kernel));
    for (const auto& [core, args] : spec.runtime_args) {
      if (std::find(cores.begin(), cores.end(), core) == cores.end()) {
        bad_workload(workload, chip_id, fmt::format("kernel '{}' has runtime args for core ({},{}), which it does not "
                                                    "run on",
                                                    spec.kernel, core.x, core.y));
      }
    }
    for (const runtime::CoreCoord& c : cores) {
      const auto processor = eth ? runtime::DataMovementProcessor::Riscv0 : spec.processor;
      if (!occupied.insert({spec.core_kind, c, processor}).second) {
        bad_workload(workload, chip_id, fmt::format("two kernels on {} core ({},{}) processor {}",
                                                    kind_name(spec.core_kind), c.x, c.y, runtime::processor_name(processor)));
      }
      if (eth && fabric_.router_on_channel(chip_id, c.x) != nullptr) {
        bad_workload(workload, chip_id, fmt::format("ethernet channel {} runs the persistent fabric router", c.x));
      }
      CoreProgram& core = core_of(spec.core_kind, c);
      auto k = std::make_unique<KernelContext>();
      k->chip = &chip;
      k->kind = spec.core_kind;
      k->logical = c;
      k->noc0 = core.noc0;
      k->processor = processor;
      k->kernel = spec.kernel;
      k->entry = info->entry;
      k->workload = workload;
      k->compile_time_args = spec.compile_time_args;
      const auto args = spec.runtime_args.find(c);
      k->runtime_args = args != spec.runtime_args.end() ? args->second : spec.common_runtime_args;
      k->noc = spec.noc == runtime::NocIndex::Noc0 ? NocId::Noc0 : NocId::Noc1;
      k->l1 = &chip.l1(core.noc0);
      k->eth = eth ? &chip.eth(static_cast<std::int32_t>(c.x)) : nullptr;
      k->core = &core;
      k->core_map = &map;
      k->noc_access_check = &noc_access_checks_.at(chip_id);
      k->erisc_l1 = options_.fabric.erisc_l1_map();
      k->worker_grid = worker_grid_;
      k->costs = &options_.costs;
      if (!placed->fabric_entry_points.empty()) k->fabric_entry_points = &placed->fabric_entry_points;
      placed->to_launch.push_back(std::move(k));
    }
  }
  for (auto& k : placed->to_launch) {
    k->program_semaphore_ids[0] = program_semaphores[0];
    k->program_semaphore_ids[1] = program_semaphores[1];
  }
  return placed;
}

KernelContext& SimMeshDevice::spawn_kernel(std::unique_ptr<KernelContext> context, SimTime start_delay) {
  KernelContext* k = context.get();
  kernels_.push_back(std::move(context));
  if (options_.trace != nullptr) k->trace = std::make_unique<KernelTrace>(*options_.trace, *k);
  if (!k->on_failure) k->on_failure = [this](KernelContext& failed) { kernel_failed(failed); };
  Fiber& fiber = engine_->spawn_fiber(k->name(), [k] { run_kernel(*k); }, FiberOptions{options_.fiber_stack_bytes},
                                      start_delay);
  fiber.set_user_context(k);
  return *k;
}

void SimMeshDevice::enqueue_workloads(std::span<const runtime::MeshWorkload> workloads) {
  if (broken_) throw *broken_;
  // Place every program of every workload first, so that a bad one enqueues nothing of any.
  // Placing one changes nothing a later placement reads (the L1 buffers, the live handles, the
  // fabric's cores), so each is checked as the device will be at its turn.
  if (mirrored_) {
    if (const std::optional<std::string> why = mirrored_->why_workloads_differ(topology_, workloads)) {
      throw std::invalid_argument(fmt::format("simulated device with mirrored groups: {}", *why));
    }
  }
  std::vector<std::unique_ptr<Program>> placed;
  for (const runtime::MeshWorkload& workload : workloads) {
    for (const auto& [chip, program] : workload.programs) {
      if (simulated(chip)) placed.push_back(place_program(workload.name, chip, program));
    }
  }
  allocator_->hold_named_by(workloads);
  retire_finished_work();
  for (auto& program : placed) {
    Program* p = program.get();
    programs_.push_back(std::move(program));
    queues_[p->chip].pending.push_back(ChipQueue::Entry{p, nullptr});
    ++outstanding_programs_;
    start_next_program(p->chip, DispatchedBy::Host);
  }
}

void SimMeshDevice::retire_finished_work() {
  // Only between ops: with a program outstanding its kernels (and the programs' cores they
  // point at) may still run. The last op's stay until the next one is enqueued, so what looks
  // at them after finish() (the hang report's chains, noc_usage_dump) sees them as before.
  if (outstanding_programs_ != 0) return;
  // Kernels first: they point at their programs' cores. The routers run on.
  std::erase_if(kernels_, [](const std::unique_ptr<KernelContext>& k) { return k->done && !k->persistent; });
  programs_.clear();
  engine_->release_finished_fibers();
}

void SimMeshDevice::start_next_program(runtime::ChipId chip, DispatchedBy by) {
  ChipQueue& queue = queues_[chip];
  if (queue.running != nullptr) return;
  // Host commands take no simulated time: each runs as the work before it on the chip is done.
  while (!queue.pending.empty() && queue.pending.front().host != nullptr) {
    HostCommand* host = queue.pending.front().host;
    queue.pending.pop_front();
    run_host_command(*host);
  }
  if (queue.pending.empty()) return;
  Program* next = queue.pending.front().program;
  queue.pending.pop_front();
  queue.running = next;
  const auto skew = launch_skew_.find(chip);
  SimTime launch = engine_->now() + options_.dispatch.program_dispatch_latency;
  if (by == DispatchedBy::Host) {
    // The launch grid: from the first launch a fresh device can make (one dispatch latency after
    // the fabric became ready, or after the open without a fabric), in steps of the chips' cycle
    // grid period. An op the host enqueues on idle chips then reads the cycle counter at the
    // sub-cycle phase a fresh device's first op does, which launches on the origin, unchanged:
    // the routers count their idle passes in whole cycles of it, and an op enqueued a fraction
    // of a cycle off took another time (docs/sim_device.md, "What persists between ops"). A
    // program behind another launches as that one's end falls, as before: its phase is the
    // run's own, the same on every device. A skew fault's delay comes after the grid.
    const SimTime grid_origin = fabric_ready_time_ + options_.dispatch.program_dispatch_latency;
    launch = next_on_grid(launch, grid_origin, cycle_grid_period(system_->chip(chip).params().clock_hz));
  }
  engine_->schedule_at(launch + (skew != launch_skew_.end() ? skew->second : SimTime::zero()),
                       [this, next] { launch_program(*next); });
}

void SimMeshDevice::launch_program(Program& program) {
  for (const Program::SemaphoreInit& init : program.semaphore_inits) {
    // A word that changed since it was last in use received writes meant for this program
    // before it launched; the initialisation loses them. Kept for the hang report's chain.
    const auto settled = semaphore_settled_.find({init.l1, init.address});
    const std::uint32_t before = settled == semaphore_settled_.end() ? 0 : settled->second;
    const std::uint32_t found = init.l1->read_u32(init.address);
    if (found != before) init.core->overwritten_at_launch[init.address] = {before, found, init.value, engine_->now()};
    init.l1->write_u32(init.address, init.value);
  }
  std::vector<std::unique_ptr<KernelContext>> kernels = std::move(program.to_launch);
  program.remaining = kernels.size();
  if (kernels.empty()) {
    program_done(program);
    return;
  }
  for (auto& k : kernels) {
    k->on_done = [this, &program](KernelContext& done) {
      kernel_done(done);
      if (--program.remaining == 0) program_done(program);
    };
    const SimTime delay = k->kind == CoreKind::Ethernet ? options_.dispatch.erisc_launch_extra : SimTime::zero();
    spawn_kernel(std::move(k), delay);
  }
}

void SimMeshDevice::kernel_done(KernelContext& kernel) {
  std::optional<std::uint64_t> ready_ns;
  if (kernel.ready) ready_ns = to_ns(*kernel.ready);
  profile_.push_back(runtime::KernelProfile{static_cast<runtime::ChipId>(kernel.chip->id()), kernel.kind,
                                            kernel.logical, kernel.kernel, to_ns(kernel.start), to_ns(kernel.end),
                                            ready_ns});
}

void SimMeshDevice::kernel_failed(KernelContext& kernel) {
  if (first_failure_ == nullptr) first_failure_ = &kernel;
}

void SimMeshDevice::program_done(Program& program) {
  for (const Program::SemaphoreInit& init : program.semaphore_inits) {
    semaphore_settled_[{init.l1, init.address}] = init.l1->read_u32(init.address);
  }
  // The last one ends finish()'s run after this event, where its predicate would have.
  if (--outstanding_programs_ == 0 && stop_at_last_program_) engine_->stop();
  ChipQueue& queue = queues_[program.chip];
  queue.running = nullptr;
  start_next_program(program.chip, DispatchedBy::PreviousProgram);
}

std::size_t SimMeshDevice::profile_size() const {
  return mirrored_ ? mirrored_->mirrored_profile_size(profile_) : profile_forgotten_ + profile_.size();
}

std::vector<runtime::KernelProfile> SimMeshDevice::profile_since(std::size_t first_entry) const {
  runtime::require_profile_entry(first_entry, profile_size());
  if (first_entry < profile_forgotten_) {
    const std::string kept = profile_.empty()
                                 ? fmt::format("none of its {} entries", profile_size())
                                 : fmt::format("entries {} .. {} of {} only", profile_forgotten_, profile_size() - 1,
                                               profile_size());
    throw runtime::ProfileEntriesDroppedError(
        fmt::format("profile_since: entry {} was dropped; the profile keeps {} (forget_profile_before)", first_entry,
                    kept));
  }
  const auto from = static_cast<std::ptrdiff_t>(first_entry - profile_forgotten_);
  if (!mirrored_) return {profile_.begin() + from, profile_.end()};
  // Mirroring runs one op on a device built for it (a local run), so copying the whole mirrored
  // list to take its tail costs what reading that op's entries costs.
  const std::vector<runtime::KernelProfile> mirrored = mirrored_->mirrored_profile(profile_);
  return {mirrored.begin() + from, mirrored.end()};
}

void SimMeshDevice::forget_profile_before(std::size_t entry) {
  CCLMESH_CHECK(!mirrored_, "forget_profile_before: a device with mirrored groups numbers its profile with the "
                            "mirrors' copies");
  CCLMESH_CHECK(entry <= profile_size(), "forget_profile_before: entry past the profile's end");
  while (profile_forgotten_ < entry) {
    profile_.pop_front();
    ++profile_forgotten_;
  }
}

// --- running -----------------------------------------------------------------------------------

void SimMeshDevice::finish() {
  if (broken_) throw *broken_;
  if (options_.watchdogs_per_finish) {
    wall_watchdog_ = WallWatchdog(options_.max_wall_seconds);
    if (options_.max_simulated_time) {
      simulated_time_limit_ = engine_->now() + *options_.max_simulated_time;
      engine_->set_keep_going_time_cap(*simulated_time_limit_);
    }
  }
  run_engine([this] { return outstanding_programs_ > 0; }, "the enqueued workloads", false, StopsItself::AtLastProgram);
  require_groups_stayed_apart();
  // Every program done, so every host command behind one ran: the reads' bytes go out now, and
  // only now (a run that failed above delivers none).
  for (const auto& command : host_commands_) {
    CCLMESH_CHECK(command->ran, fmt::format("an enqueued host command on chip {} did not run by the end of finish()",
                                            command->chip));
    if (command->read) std::copy(command->bytes.begin(), command->bytes.end(), command->out.begin());
  }
  host_commands_.clear();
  record_faults_in_trace();
  allocator_->workloads_finished();
}

void SimMeshDevice::fail(runtime::DeviceError::Kind kind, const std::string& report) {
  record_faults_in_trace();
  // A hang or timeout report carries the fault summary already; a one-line fault gets it here,
  // so every way a faulted run ends names the faults.
  std::string text = report;
  if (kind == runtime::DeviceError::Kind::Fault && system_ != nullptr) {
    const std::string faults = fault_summary();
    if (!faults.empty()) text += "\n" + faults;
  }
  broken_.emplace(kind, text);
  if (allocator_) {  // a fabric that fails to start fails before there is one
    allocator_->unfinished_work_failed(kind == runtime::DeviceError::Kind::Hang    ? "a hang"
                                       : kind == runtime::DeviceError::Kind::Fault ? "a fault"
                                                                                   : "a timeout");
  }
  throw *broken_;
}

void SimMeshDevice::drain() {
  finish();
  run_engine([] { return true; }, "the enqueued workloads and the fabric traffic in flight", true);
}

}  // namespace cclmesh::sim::device
