#include "sim/device/sim_mesh_device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/cycle_counter.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/process.hpp"
#include "sim/model/arch_params.hpp"
#include "sim/model/eth_link.hpp"
#include "sim/device/fabric_reembed.hpp"
#include "sim/device/fault_headline.hpp"
#include "sim/device/hang_timing.hpp"
#include "sim/device/simulated_system_config.hpp"
#include "sim/device/wait_chain.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::sim::device {
namespace {

using runtime::CoreKind;

std::uint64_t to_ns(SimTime t) { return static_cast<std::uint64_t>(t.ps() / 1000); }

std::uint32_t kind_index(CoreKind kind) { return kind == CoreKind::Tensix ? 0u : 1u; }

const char* kind_name(CoreKind kind) { return kind == CoreKind::Tensix ? "tensix" : "ethernet"; }

[[noreturn]] void bad_workload(const std::string& workload, runtime::ChipId chip, const std::string& what) {
  throw std::invalid_argument(fmt::format("workload '{}' chip {}: {}", workload, chip, what));
}

struct CoreKey {
  CoreKind kind;
  runtime::CoreCoord core;
  auto operator<=>(const CoreKey&) const = default;
};

}  // namespace

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
};

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
  // run_engine's keep-going check stops at the first event past the limit: skipped events too.
  simulated_time_limit_ = options_.max_simulated_time;
  if (simulated_time_limit_) engine_->set_keep_going_time_cap(*simulated_time_limit_);
  system_ = std::make_unique<SimSystem>(*engine_, config);
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

  apply_faults();
  mirror_identical_groups();
  // Every router, a mirrored chip's too: the start-up is the same as with every group simulated,
  // and a router with no traffic runs no event after it.
  if (fabric_.enabled()) launch_fabric();
  if (mirrored_) crossing_at_open_ = traffic_between_groups();
}

void SimMeshDevice::mirror_identical_groups() {
  mirrored_.reset();
  if (options_.mirrored_groups.empty()) return;
  if (options_.data_mode != DataMode::TimingOnly || !options_.faults.empty() || options_.trace != nullptr ||
      options_.adjust_router_config) {
    throw std::invalid_argument(
        "simulated device: mirrored groups need a timing-only device without faults, a trace or a router "
        "adjustment (each chip's data, a fault's place, a trace's tracks and an adjusted router are a group's own)");
  }
  MirroredGroups groups(options_.mirrored_groups);
  if (const std::optional<std::string> why = groups.why_systems_differ(topology_, fabric_)) {
    throw std::invalid_argument(fmt::format("simulated device: the groups cannot be mirrored: {}", *why));
  }
  mirrored_.emplace(std::move(groups));
}

bool SimMeshDevice::simulated(runtime::ChipId chip) const { return !mirrored_ || !mirrored_->mirrored(chip); }

SimMeshDevice::TrafficBetweenGroups SimMeshDevice::traffic_between_groups() const {
  TrafficBetweenGroups traffic;
  for (const auto& link : system_->links()) {
    const auto a = static_cast<runtime::ChipId>(link->a().chip().id());
    const auto b = static_cast<runtime::ChipId>(link->b().chip().id());
    if (mirrored_->same_group(a, b)) continue;
    for (const EthCore* from : {&link->a(), &link->b()}) {
      const EthCoreStats stats = from->stats();
      traffic.packets += stats.packets_sent;
      traffic.payload_bytes += stats.payload_bytes_sent;
      traffic.words += stats.words_sent;  // credits and acks written across the link
      traffic.wire_busy_ps += link->wire_from(*from).server().busy.ps();
    }
  }
  return traffic;
}

std::string SimMeshDevice::traffic_since_open_between_groups() const {
  const TrafficBetweenGroups now = traffic_between_groups();
  if (now == crossing_at_open_) return {};
  return fmt::format("{} packets ({} B of payload) and {} words crossed links between groups since the fabric started",
                     now.packets - crossing_at_open_.packets, now.payload_bytes - crossing_at_open_.payload_bytes,
                     now.words - crossing_at_open_.words);
}

void SimMeshDevice::require_groups_stayed_apart() const {
  if (!mirrored_) return;
  // The groups' programs were compared, not what they do: had the first group's traffic left
  // it, the groups would not have been independent, and the mirrors' figures would be wrong.
  const std::string crossed = traffic_since_open_between_groups();
  CCLMESH_CHECK(crossed.empty(), fmt::format("identical groups simulated once: {}, so the groups are not independent "
                                             "and cannot be mirrored",
                                             crossed));
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
  fabric_ready_time_ = SimTime::zero();
  launch_skew_.clear();
  corruptions_.clear();
  semaphore_settled_.clear();
  allocator_.reset();
  faults_traced_ = 0;
  // Between the old life's last records (close(): its fault log) and the new life's first.
  if (opened_with_.trace != nullptr) opened_with_.trace->device_reset();
  open();
}

// --- faults ------------------------------------------------------------------------------------

namespace {

std::string link_name(const EthLink& link) {
  return fmt::format("chip {} ch {} <-> chip {} ch {}", link.a().chip().id(), link.a().channel(), link.b().chip().id(),
                     link.b().channel());
}

}  // namespace

void SimMeshDevice::reembed_around_down_links() {
  try {
    options_.fabric = fabric_around_down_links(topology_, options_.fabric, options_.faults);
  } catch (const runtime::DeviceError& e) {
    fail(e.kind(), e.what());
  }
}

void SimMeshDevice::apply_faults() {
  const FaultPlan& plan = options_.faults;
  const auto links_between = [this](runtime::ChipId a, runtime::ChipId b, const std::string& spec) {
    std::vector<EthLink*> found;
    for (const auto& link : system_->links()) {
      if (joins(*link, a, b)) found.push_back(link.get());
    }
    if (found.empty()) throw std::invalid_argument(fmt::format("fault {}: chips {} and {} share no link", spec, a, b));
    return found;
  };
  for (const LinkSlowFault& fault : plan.link_slow) {
    for (EthLink* link : links_between(fault.a, fault.b, fault.spec)) link->scale_rate(fault.numerator, fault.denominator);
  }
  for (const LinkDownFault& fault : plan.link_down) {
    std::vector<EthLink*> links = links_between(fault.a, fault.b, fault.spec);
    auto take_down = [this, links, spec = fault.spec] {
      for (EthLink* link : links) {
        link->set_up(false);
        system_->faults().record(engine_->now(), link_name(*link), "link down (fault " + spec + ")");
      }
    };
    if (fault.at == SimTime::zero()) {
      take_down();
    } else {
      engine_->schedule_at(fault.at, std::move(take_down));
    }
  }
  if (plan.drop || plan.dup) {
    const FrameFaultRates base{plan.drop ? plan.drop->per_2p32 : 0, plan.dup ? plan.dup->per_2p32 : 0, 0};
    const std::uint64_t seed = (plan.drop ? plan.drop->seed : 0) * 0x9E3779B97F4A7C15ull + (plan.dup ? plan.dup->seed : 0);
    std::uint64_t index = 0;
    for (const auto& link : system_->links()) {
      FrameFaultRates rates = base;
      rates.seed = seed ^ (0xD1B54A32D192ED03ull * ++index);  // one independent stream per link
      link->set_frame_faults(rates);
    }
  }
  for (const PacketCorruptFault& fault : plan.corrupt) {
    corruptions_.push_back(std::make_unique<PacketCorruption>(fault.at, fault.seed, fault.spec));
    for (EthLink* link : links_between(fault.a, fault.b, fault.spec)) link->add_corruption(*corruptions_.back());
  }
  if (plan.skew) {
    // mt19937_64's output is fixed by the standard; the modulo keeps the draw portable.
    std::mt19937_64 random(plan.skew->seed);
    const auto span = static_cast<std::uint64_t>(plan.skew->max.ps()) + 1;
    for (const topo::ChipId id : topology_.chip_ids()) {
      launch_skew_[static_cast<runtime::ChipId>(id)] = SimTime::from_ps(static_cast<std::int64_t>(random() % span));
    }
  }
}

std::string SimMeshDevice::fault_summary() const {
  const FaultPlan& plan = options_.faults;
  if (plan.empty() && system_->faults().empty()) return "";
  std::string text = "injected faults:\n";
  for (const LinkDownFault& fault : plan.link_down) {
    text += fmt::format("  {}: every link between chips {} and {} down {}\n", fault.spec, fault.a, fault.b,
                        fault.at == SimTime::zero() ? "from the start" : "at " + to_string(fault.at));
  }
  for (const LinkSlowFault& fault : plan.link_slow) {
    text += fmt::format("  {}: every link between chips {} and {} at {}/{} of its rate\n", fault.spec, fault.a, fault.b,
                        fault.numerator, fault.denominator);
  }
  if (plan.skew) {
    std::string delays;
    for (const auto& [chip, delay] : launch_skew_) delays += fmt::format("{}{}: {}", delays.empty() ? "" : ", ", chip, to_string(delay));
    text += fmt::format("  {}: chip launch delays {}\n", plan.skew->spec, delays);
  }
  if (plan.drop || plan.dup) {
    std::int64_t dropped = 0;
    std::int64_t duplicated = 0;
    for (const auto& link : system_->links()) {
      dropped += link->frames_dropped();
      duplicated += link->frames_duplicated();
    }
    if (plan.drop) text += fmt::format("  {}: {} frame(s) lost so far\n", plan.drop->spec, dropped);
    if (plan.dup) text += fmt::format("  {}: {} frame(s) duplicated so far\n", plan.dup->spec, duplicated);
  }
  for (const auto& corruption : corruptions_) text += fmt::format("  {}: {}\n", corruption->spec(), corruption->describe());
  // What the faults did, one line per place and cause: the log can hold thousands of packets.
  struct Group {
    SimTime first;
    std::size_t count = 0;
    std::string example;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const FaultRecord& record : system_->faults().records()) {
    const std::size_t colon = record.what.rfind(": ");
    const std::string cause = colon == std::string::npos ? record.what : record.what.substr(colon + 2);
    auto [it, inserted] = groups.try_emplace({record.place, cause});
    if (inserted) {
      it->second.first = record.when;
      it->second.example = record.what;
      order.push_back(it->first);
    }
    ++it->second.count;
  }
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    text += g.count == 1 ? fmt::format("  at {}: {}: {}\n", to_string(g.first), key.first, g.example)
                         : fmt::format("  from {}: {}: {} events, first: {}\n", to_string(g.first), key.first, g.count,
                                       g.example);
  }
  return text;
}

std::vector<std::string> SimMeshDevice::fault_effects() const {
  std::vector<std::string> effects;
  for (const auto& corruption : corruptions_) effects.push_back(fmt::format("{}: {}", corruption->spec(), corruption->describe()));
  return effects;
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

void SimMeshDevice::deallocate_buffer(const runtime::BufferHandle& buffer) { allocator_->deallocate_buffer(buffer); }

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
      k->erisc_l1 = options_.fabric.erisc_l1_map();
      k->worker_grid = worker_grid_;
      k->costs = &options_.costs;
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
  for (auto& program : placed) {
    Program* p = program.get();
    programs_.push_back(std::move(program));
    queues_[p->chip].pending.push_back(ChipQueue::Entry{p, nullptr});
    ++outstanding_programs_;
    start_next_program(p->chip, DispatchedBy::Host);
  }
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

std::vector<runtime::KernelProfile> SimMeshDevice::profile() const {
  return mirrored_ ? mirrored_->mirrored_profile(profile_) : profile_;
}

std::optional<std::vector<runtime::LinkTraffic>> SimMeshDevice::link_traffic() const {
  std::vector<runtime::LinkTraffic> traffic;
  for (const auto& link : system_->links()) {
    for (const EthCore* from : {&link->a(), &link->b()}) {
      // A mirrored chip's port inside its group carried what its counterpart's did (the same
      // channel: the groups' ports were compared when the device opened); a port between groups
      // carried only its routers' start-up, on every chip (require_groups_stayed_apart).
      const auto chip = static_cast<runtime::ChipId>(from->chip().id());
      const bool mirrored_port =
          !simulated(chip) && mirrored_->same_group(chip, static_cast<runtime::ChipId>(from->peer()->chip().id()));
      const EthCore& counted =
          mirrored_port ? system_->chip(*mirrored_->counterpart(chip)).eth(from->channel()) : *from;
      CCLMESH_CHECK(counted.link() != nullptr, fmt::format("chip {} channel {}: a mirrored port's counterpart has no link",
                                                           chip, from->channel()));
      traffic.push_back(runtime::LinkTraffic{chip, static_cast<std::uint32_t>(from->channel()),
                                             static_cast<runtime::ChipId>(from->peer()->chip().id()),
                                             static_cast<std::uint32_t>(from->peer()->channel()),
                                             static_cast<std::uint64_t>(counted.stats().payload_bytes_sent),
                                             static_cast<std::uint64_t>(counted.link()->wire_from(counted).server().busy.ps())});
    }
  }
  return traffic;
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

// What the injected faults did, into the trace where it happened, once a part of the log is
// complete (a finish() returned, the run failed, or the device closes): a trace of a hung or
// corrupted run shows each lost, duplicated or flipped frame and each link that went down, not
// only the traffic around them. Each record goes in once, so a trace written in pieces
// (`cclmesh serve`, one per session) has each finish()'s faults in that session's piece.
void SimMeshDevice::record_faults_in_trace() {
  if (options_.trace == nullptr || system_ == nullptr) return;
  const std::vector<FaultRecord>& records = system_->faults().records();
  for (; faults_traced_ < records.size(); ++faults_traced_) {
    const FaultRecord& record = records[faults_traced_];
    trace::SpanArgs args;
    args.text_key = "place";
    args.text = record.place;
    options_.trace->instant(record.when, record.what, args);
  }
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
  throw *broken_;
}

void SimMeshDevice::drain() {
  finish();
  run_engine([] { return true; }, "the enqueued workloads and the fabric traffic in flight", true);
}

template <typename KeepGoing>
void SimMeshDevice::run_engine(const KeepGoing& keep_going, const std::string& what, bool idle_is_done,
                               StopsItself stops_itself) {
  bool timed_out = false;
  bool wall_expired = false;
  RunResult result;
  try {
    // Without a simulated-time limit or a wall-time watchdog (the default), the engine asks the
    // caller's predicate alone: the limits' tests cost ~17 instructions per event for nothing.
    // A predicate that only the last program's end makes false is not asked at all: that end
    // stops the engine after its event (program_done), which is where the predicate, asked
    // before the next event, would have ended the run (~8 instructions per event).
    if (!simulated_time_limit_ && !wall_watchdog_.armed() && stops_itself == StopsItself::AtLastProgram) {
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
    } else if (!simulated_time_limit_ && !wall_watchdog_.armed()) {
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
        return keep_going();
      });
    }
  } catch (const ProcessFailure& e) {
    if (first_failure_ != nullptr) {
      fail(runtime::DeviceError::Kind::Fault, fmt::format("fault at {}: {}: {}", to_string(e.when()),
                                                          first_failure_->name(),
                                                          first_failure_->failure_description()));
    }
    fail(runtime::DeviceError::Kind::Fault, fmt::format("simulation failed: {}", e.what()));
  } catch (const std::exception& e) {
    fail(runtime::DeviceError::Kind::Fault, fmt::format("simulation error at {}: {}", to_string(engine_->now()), e.what()));
  }
  if (timed_out) {
    fail(runtime::DeviceError::Kind::Timeout,
         hang_report(fmt::format("timeout: simulated time passed the limit of {}{} while running {}",
                                 to_string(*simulated_time_limit_),
                                 options_.watchdogs_per_finish
                                     ? fmt::format(" (a budget of {} from {})", to_string(*options_.max_simulated_time),
                                                   to_string(*simulated_time_limit_ - *options_.max_simulated_time))
                                     : std::string(),
                                 what)));
  }
  if (wall_expired) {
    fail(runtime::DeviceError::Kind::Timeout,
         hang_report(fmt::format("timeout: the wall-time limit of {} s{} passed at simulated time {} while running {}",
                                 wall_watchdog_.limit_seconds(), options_.watchdogs_per_finish ? " (this run's own)" : "",
                                 to_string(engine_->now()), what)));
  }
  if (result.reason == StopReason::Predicate) return;
  if (idle_is_done && outstanding_programs_ == 0) return;  // only persistent routers are parked
  fail(runtime::DeviceError::Kind::Hang,
       hang_report(fmt::format("hang at {}: {} cannot complete; no event is left to wake the kernels below",
                               to_string(engine_->now()), what)));
}

std::vector<const KernelContext*> SimMeshDevice::kernels_of_interest() const {
  std::vector<const KernelContext*> all;
  for (const auto& k : kernels_) all.push_back(k.get());
  for (const auto& program : programs_) {
    for (const auto& k : program->to_launch) all.push_back(k.get());
  }
  return all;
}

std::vector<SimMeshDevice::KernelWaits> SimMeshDevice::kernel_waits_in_window(ChipId chip) const {
  std::vector<KernelWaits> waits;
  for (const auto& k : kernels_) {
    if (k->chip->id() != chip || !k->started) continue;
    const BusyWindow& window = k->chip->busy_window();
    if (!(window.begin < window.end)) return {};
    const SimTime until = k->done ? k->end : engine_->now();
    waits.push_back(KernelWaits{k->name(), overlap_with(window, k->start, until), k->blocked_in_window});
  }
  return waits;
}

std::string SimMeshDevice::hang_report(const std::string& headline) const {
  // Every chain is followed only when the fault summary can count it: a link down or one that
  // lost frames (wait_chain.hpp, follow_every_chain).
  bool link_broken = false;
  for (const auto& link : system_->links()) link_broken = link_broken || !link->up() || link->frames_dropped() > 0;
  const std::vector<const KernelContext*> kernels = kernels_of_interest();
  const SimTime progress = last_progress(kernels, engine_->now());
  const WaitChains chains =
      wait_chains(WaitChainInput{kernels, &fabric_, link_broken, HangTiming{&options_.faults, progress}});
  std::string text = headline + "\n" +
                     fault_headline(FaultHeadlineInput{&options_.faults, engine_->now(), progress, &system_->links(),
                                                       &corruptions_, &chains.ends});
  if (mirrored_) {
    const std::string crossed = traffic_since_open_between_groups();
    text += crossed.empty()
                ? fmt::format("(identical groups simulated once: only group 0's chips ran, {}; the other {} groups "
                              "mirror it, so they stopped where it did)\n",
                              fmt::join(mirrored_->groups()[0], "-"), mirrored_->groups().size() - 1)
                : fmt::format("(identical groups simulated once: only group 0's chips ran, {}; {}, so the groups were "
                              "not independent and the others' state below is not theirs)\n",
                              fmt::join(mirrored_->groups()[0], "-"), crossed);
  }
  const auto kernel_line = [](const KernelContext& k) {
    std::string line = "  " + k.name();
    if (k.persistent) line += " (persistent)";
    const std::string blocked = k.blocked_description();
    line += blocked.empty() ? ": parked" : ": blocked in " + blocked;
    const std::string command = k.current_command();
    if (!command.empty()) line += "; command " + command;
    return line + "\n";
  };
  std::size_t parked = 0;
  for (const auto& k : kernels_) {
    if (k->started && !k->done && !k->failed && !k->persistent) {
      text += kernel_line(*k);
      ++parked;
    }
  }
  if (parked == 0) text += "  (no workload kernel is parked)\n";
  for (const auto& [chip, queue] : queues_) {
    const auto hosts = static_cast<std::size_t>(std::count_if(
        queue.pending.begin(), queue.pending.end(), [](const ChipQueue::Entry& e) { return e.host != nullptr; }));
    const std::size_t programs = queue.pending.size() - hosts;
    if (programs > 0) {
      text += fmt::format("  chip {}: {} program(s) waiting to launch behind the running one\n", chip, programs);
    }
    if (hosts > 0) {
      text += fmt::format(
          "  chip {}: {} enqueued host write(s), read(s) or semaphore reset(s) waiting behind its programs (not run)\n",
          chip, hosts);
    }
  }
  // Routers idle in their main loop are the normal state of a persistent fabric: one line for
  // all of them; a router blocked anywhere else gets its own line.
  std::string idle_routers;
  std::size_t idle = 0;
  std::string busy_routers;
  for (const auto& k : kernels_) {
    if (!k->started || k->done || k->failed || !k->persistent) continue;
    if (k->blocked == BlockedIn::L1Activity) {
      idle_routers += fmt::format("{}chip {} ch {}", idle == 0 ? "" : ", ", k->chip->id(), k->logical.x);
      ++idle;
    } else {
      busy_routers += kernel_line(*k);
    }
  }
  if (idle > 0 || !busy_routers.empty()) text += "fabric routers:\n" + busy_routers;
  if (idle > 0) text += fmt::format("  {} idle in wait_for_l1_activity: {}\n", idle, idle_routers);
  text += chains.text;
  text += fault_summary();
  const HangReport engine = engine_->hang_report();
  text += fmt::format("engine at {}: {} actor(s) parked\n", to_string(engine.when), engine.parked.size());
  for (const ParkedActor& actor : engine.parked) {
    text += fmt::format("  {} '{}' waits for {}\n", actor.kind == Actor::Kind::Fiber ? "fiber" : "process", actor.name,
                        actor.waiting_for);
  }
  return text;
}

// --- fabric ----------------------------------------------------------------------------------

std::uint32_t SimMeshDevice::router_status(const runtime::FabricRouterSite& site) {
  return system_->chip(site.chip)
      .l1(CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)})
      .read_u32(kernels::make_fabric_router_layout(site.config).status);
}

void SimMeshDevice::launch_fabric() {
  const kernels::KernelInfo* info = kernels::find_kernel_info(kernels::kFabricRouterKernelName);
  CCLMESH_CHECK(info != nullptr, "the fabric router kernel is not registered");
  for (const runtime::FabricRouterSite& site : fabric_.routers()) {
    Chip& chip = system_->chip(site.chip);
    auto k = std::make_unique<KernelContext>();
    k->chip = &chip;
    k->kind = CoreKind::Ethernet;
    k->logical = runtime::CoreCoord{site.channel, 0};
    k->noc0 = CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)};
    k->kernel = kernels::kFabricRouterKernelName;
    k->entry = info->entry;
    k->persistent = true;
    k->workload = "fabric";
    kernels::FabricRouterConfig config = site.config;
    if (options_.adjust_router_config) options_.adjust_router_config(site, config);
    k->compile_time_args = kargs::build_fabric_router_args(config).compile_time;
    k->l1 = &chip.l1(k->noc0);
    k->eth = &chip.eth(static_cast<std::int32_t>(site.channel));
    k->core_map = &core_maps_.at(site.chip);
    k->erisc_l1 = options_.fabric.erisc_l1_map();
    k->worker_grid = worker_grid_;
    k->costs = &options_.costs;
    spawn_kernel(std::move(k), options_.dispatch.program_dispatch_latency);
  }
  // The check runs after every event of the start-up. A router stays READY_FOR_TRAFFIC until it
  // is told to terminate, so the routers before `first_not_ready` need no second look: asking all
  // of them after every event made the start-up quadratic in the routers (docs/topologies.md,
  // "Review (session 11)").
  std::size_t first_not_ready = 0;
  run_engine(
      [this, &first_not_ready] {
        const std::vector<runtime::FabricRouterSite>& routers = fabric_.routers();
        while (first_not_ready < routers.size() &&
               router_status(routers[first_not_ready]) == static_cast<std::uint32_t>(api::EdmStatus::READY_FOR_TRAFFIC)) {
          ++first_not_ready;
        }
        return first_not_ready < routers.size();
      },
      fmt::format("the {} fabric's start-up", fabric_.lines().size() == 1
                                                    ? runtime::to_string(fabric_.mode())
                                                    : runtime::to_string(fabric_.scope()) + " " +
                                                          runtime::to_string(fabric_.mode())));
  fabric_ready_time_ = engine_->now();
}

void SimMeshDevice::terminate_fabric(api::TerminationSignal signal) {
  if (broken_) throw *broken_;
  if (!fabric_.enabled()) return;
  for (const runtime::FabricRouterSite& site : fabric_.routers()) {
    system_->chip(site.chip)
        .l1(CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)})
        .write_u32(kernels::make_fabric_router_layout(site.config).termination_signal, static_cast<std::uint32_t>(signal));
  }
  run_engine(
      [this] {
        for (const auto& k : kernels_) {
          if (k->persistent && !k->done) return true;
        }
        return false;
      },
      "the fabric's termination");
}

}  // namespace cclmesh::sim::device
