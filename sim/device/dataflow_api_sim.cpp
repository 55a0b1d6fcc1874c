// The dataflow API (kernels/api/dataflow_api.hpp) on the simulated chip models. Every function
// finds its kernel through the running fiber's context (current_kernel()); non-blocking calls
// go straight to the models, blocking calls park the fiber on a model awaiter (block_on), so a
// kernel that can never continue shows in the hang report with what it waits for.
//
// Core time: a call that issues a NoC request first spends KernelCosts::noc_issue_cycles;
// spend_cycles and run_routing spend theirs; everything else is free (the models time the
// transfers themselves). All definitions live in this one file on purpose: the device
// references run_kernel() here, which makes the linker keep every API definition for the
// kernel programs that come later on the link line (kernels/ is a static library).

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/noc_address.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/device/fabric_route_check.hpp"
#include "sim/device/kernel_context.hpp"
#include "sim/engine/cycle_counter.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/exception_message.hpp"
#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim::device {
namespace {

// The core time of NoC issues not yet spent (see charge_noc_issue): spent before anything
// else the kernel does, which may observe or change state at its own time.
[[gnu::noinline]] void settle_issue_debt(KernelContext& k) {
  const SimTime debt = k.issue_debt;
  k.issue_debt = SimTime::zero();
  block_on(delay(debt));
}

// The running kernel, its issue debt spent: how every API call but the NoC issues starts.
KernelContext& K() {
  KernelContext& k = current_kernel();
  if (k.issue_debt > SimTime::zero()) [[unlikely]] settle_issue_debt(k);
  return k;
}

// For the NoC issues: the kernel as it is, the debt left to grow.
KernelContext& K_issuing() { return current_kernel(); }

NocId noc_of(std::uint8_t noc) {
  if (noc > 1) throw DataflowApiError(fmt::format("NoC index {} (expected 0 or 1)", noc));
  return noc == 0 ? NocId::Noc0 : NocId::Noc1;
}

Noc& noc_model(KernelContext& k, std::uint8_t noc) {
  // The TRISCs have no NoC interface: a compute kernel that issues a NoC request is a bug.
  if (k.processor == runtime::DataMovementProcessor::Compute) {
    throw DataflowApiError(fmt::format("{}: a compute kernel cannot issue NoC requests", k.name()));
  }
  return k.chip->noc(noc_of(noc));
}

NocPort& own_port(KernelContext& k, std::uint8_t noc) {
  NocPort*& port = k.noc_ports[index_of(noc_of(noc))];
  if (port == nullptr) port = &noc_model(k, noc).port(k.noc0);
  return *port;
}

NocAddress decode(std::uint64_t noc_addr) {
  return NocAddress{CoreCoord{static_cast<std::int32_t>(api::noc_addr_x(noc_addr)),
                              static_cast<std::int32_t>(api::noc_addr_y(noc_addr))},
                    api::noc_addr_local(noc_addr)};
}

// A read or write at `target` must lie inside a live allocation where it lands in buffer space
// (noc_access_check.hpp); otherwise the issuing kernel fails, naming the target and the nearest
// buffers (its command is appended by failure_description).
[[noreturn, gnu::noinline]] void refuse_access(const KernelContext& k, const char* call, const NocAddress& target,
                                               std::uint64_t bytes) {
  throw DataflowApiError(fmt::format("{} of {} B outside the buffers at {}", call, bytes,
                                     k.noc_access_check->describe_refusal(target.core, target.address, bytes)));
}

// Inline: the remembered spans answer most accesses in a few instructions, less than a call.
[[gnu::always_inline]] inline void check_access(const KernelContext& k, const char* call, const NocAddress& target,
                                                std::uint64_t bytes) {
  if (k.noc_access_check != nullptr && !k.noc_access_check->allows(target.core, target.address, bytes)) [[unlikely]] {
    refuse_access(k, call, target, bytes);
  }
}

std::uint32_t address_of(volatile std::uint32_t* pointer) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(pointer));
}

// A NoC issue costs the core noc_issue_cycles before the request leaves. Instead of parking
// the kernel for them at every issue, the cost becomes a debt: the request is issued at the
// kernel's own time (now + debt) through its port's issue floor, and the debt is spent at the
// kernel's next call that is not a NoC issue (K()), before it can observe anything. A run of
// issues (a packet's forward, local writes and increment) so costs one park instead of one
// each, at the same simulated times: between the issues the kernel observes nothing.
void charge_noc_issue(KernelContext& k, NocPort& port) {
  if (k.costs->noc_issue_cycles <= 0) return;
  k.issue_debt += k.chip->params().cycles(k.costs->noc_issue_cycles);
  port.hold_issue_until(Engine::current().now() + k.issue_debt);
}

// A workload kernel's packet header written into a fabric slot: its route is checked against
// the fabric (fabric_route_check.hpp), and a route that runs past a line's end or round a ring
// faults the kernel here, at its sender, rather than at a router or not at all.
[[gnu::noinline, noreturn]] void fault_route(KernelContext& k, const FabricEntryPoint& e, std::uint32_t header_address) {
  api::PacketHeader header{};
  k.l1->read(header_address, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(&header), sizeof header));
  RouteMistake mistake = describe_route_mistake(e, header);
  // The interpreter's command (debug_set_current_command is reported before every attempt);
  // another kernel's fault carries the route's last hop.
  k.fault = KernelFaultReport{api::fault_code(mistake.code), k.has_command ? k.command_index : api::kFaultNoCommand,
                              k.has_command ? k.header_arg : mistake.last_hop, std::move(mistake.detail)};
  throw KernelFaultSignal(k.name() + ": " + k.failure_description());
}

const std::uint8_t* direct_l1(const KernelContext& k, std::uint64_t address, std::uint64_t bytes);

inline void check_fabric_route(KernelContext& k, std::uint32_t src_local_l1_addr, const NocAddress& destination,
                               std::uint32_t size_bytes) {
  const FabricEntryPoint* e =
      k.fabric_entry_points->packet_slot_written(destination.core, destination.address, size_bytes);
  if (e == nullptr) return;
  // The routing byte, from the sender's L1: directly where its page is at hand (an L1 region
  // defers no landing, so its slots hold what the region would read), else through the region.
  const std::uint64_t routing_address = src_local_l1_addr + offsetof(api::PacketHeader, routing_fields);
  std::uint8_t routing = 0;
  if (const std::uint8_t* direct = direct_l1(k, routing_address, 1)) [[likely]] {
    routing = *direct;
  } else {
    k.l1->read(routing_address, std::span<std::uint8_t>(&routing, 1));
  }
  if (!route_fits(*e, routing)) fault_route(k, *e, src_local_l1_addr);
}

// A change this kernel makes to its own core's L1 or CBs is not news to it: it must not make
// its next wait_for_activity() return at once. (Nothing else can happen during the change: it
// does not block.)
template <typename Change>
void own_change(KernelContext& k, Change&& change) {
  const cclmesh::sim::ActivityListener::Pending before = k.activity->pending_state();
  change();
  k.activity->set_pending_state(before);
}

// Marks the kernel blocked (for hang reports) and, while the chip's busy window is armed, sums
// the time it spends blocked inside the window by kind of wait (a diagnostic: reads only the
// clock, so it changes no simulated figure).
class BlockedScope {
 public:
  BlockedScope(KernelContext& k, BlockedIn what, std::uint64_t a = 0, std::uint64_t b = 0) : k_(k) {
    k_.blocked = what;
    k_.blocked_a = a;
    k_.blocked_b = b;
    k_.blocked_since = Engine::current().now();
    if (window_armed()) since_ = k_.blocked_since;
  }
  ~BlockedScope() {
    if (window_armed()) {
      k_.blocked_in_window[static_cast<std::size_t>(k_.blocked)] +=
          overlap_with(k_.chip->busy_window(), since_, Engine::current().now());
    }
    k_.blocked = BlockedIn::Nothing;
  }
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  bool window_armed() const { return k_.chip->busy_window().begin < k_.chip->busy_window().end; }

  KernelContext& k_;
  SimTime since_;
};

CircularBuffer& cb(KernelContext& k, std::int64_t cb_id) {
  if (k.core != nullptr) {
    const auto it = k.core->cbs.find(static_cast<std::uint32_t>(cb_id));
    if (it != k.core->cbs.end()) return *it->second;
  }
  throw DataflowApiError(fmt::format("circular buffer {} does not exist on this core in this program", cb_id));
}

std::uint32_t semaphore_address(const KernelContext& k, runtime::CoreKind kind, std::uint32_t id) {
  return kind == runtime::CoreKind::Tensix ? runtime::tensix_program_semaphore_address(id)
                                           : k.erisc_l1.program_semaphore_address(id);
}

[[noreturn]] void unknown_semaphore(const KernelContext& k, std::uint32_t id) {
  kernel_fault(api::fault_code(api::KernelFaultCode::UNKNOWN_SEMAPHORE),
               k.has_command ? k.command_index : api::kFaultNoCommand, id);
}

EthCore& eth(KernelContext& k, const char* call) {
  if (k.eth == nullptr) throw DataflowApiError(fmt::format("{} called on a Tensix core", call));
  return *k.eth;
}

// The direct L1 read path: bytes [address, address + bytes) inside one whole resident page of
// the kernel's L1, or nullptr (the page slots not looked up yet, the page not resident, or the
// read leaves the page or the region's whole pages): the caller then reads through the region,
// which checks the access, and find_l1_pages() looks the slots up for the next read. Only
// reads take this path; writes go through the region, which tells the core's watchers and
// listeners.
const std::uint8_t* direct_l1(const KernelContext& k, std::uint64_t address, std::uint64_t bytes) {
  const std::uint64_t page_bytes = std::uint64_t{1} << k.l1_page_shift;
  const std::uint64_t page = address >> k.l1_page_shift;
  const std::uint64_t offset = address & (page_bytes - 1);
  if (page >= k.l1_whole_pages || offset + bytes > page_bytes) return nullptr;
  const std::uint8_t* storage = k.l1_pages[page].get();
  return storage == nullptr ? nullptr : storage + offset;
}

// The direct path's copy. The polls read a few words at a time (a router's 16-byte ack and sync
// words, its 48-byte packet headers: ~0.6 reads an event on a T3K): two overlapping fixed-size
// moves for 16-64 bytes instead of a memcpy call through the PLT, whose size dispatch missed.
inline void copy_from_l1(void* dst, const std::uint8_t* src, std::uint32_t size_bytes) {
  auto* out = static_cast<std::uint8_t*>(dst);
  if (size_bytes >= 16 && size_bytes <= 32) {
    std::memcpy(out, src, 16);
    std::memcpy(out + size_bytes - 16, src + size_bytes - 16, 16);
  } else if (size_bytes > 32 && size_bytes <= 64) {
    std::memcpy(out, src, 32);
    std::memcpy(out + size_bytes - 32, src + size_bytes - 32, 32);
  } else {
    std::memcpy(out, src, size_bytes);
  }
}

void find_l1_pages(KernelContext& k) {
  if (k.l1_pages != nullptr) return;
  k.l1_pages = k.l1->page_slots();
  if (k.l1_pages == nullptr) return;  // nothing written yet (or several tables: no direct path)
  k.l1_page_shift = k.l1->page_shift();
  k.l1_whole_pages = k.l1->size_bytes() >> k.l1_page_shift;
}

// The slow paths of l1_read_u32 / l1_read_bytes: the issue debt spent, the access checked by
// the region, the page slots looked up for the direct path.
[[gnu::noinline]] std::uint32_t l1_read_u32_through_region(std::uint32_t address) {
  KernelContext& k = K();
  const std::uint32_t value = k.l1->read_u32(address);
  find_l1_pages(k);
  return value;
}

[[gnu::noinline]] void l1_read_bytes_through_region(std::uint32_t address, void* dst, std::uint32_t size_bytes) {
  KernelContext& k = K();
  k.l1->read(address, std::span<std::uint8_t>(static_cast<std::uint8_t*>(dst), size_bytes));
  find_l1_pages(k);
}

}  // namespace

void run_kernel(KernelContext& k) {
  Engine& engine = Engine::current();
  k.started = true;
  k.start = engine.now();
  // The kernel's view of its core's activity lives as long as it runs (it detaches itself,
  // also when the fiber is torn down parked).
  ActivityListener activity(k.l1->name() + " activity");
  k.l1->activity().attach(activity);
  k.activity = &activity;
  struct ListenerEnd {
    KernelContext& k;
    ~ListenerEnd() { k.activity = nullptr; }
  } listener_end{k};
  if (k.trace) k.trace->started(k.start);
  try {
    k.entry();
    if (k.issue_debt > SimTime::zero()) settle_issue_debt(k);  // its last issues end the kernel
  } catch (const std::exception&) {
    if (k.trace) k.trace->finished(engine.now());
    k.failed = true;
    if (!k.fault) k.error = exception_message(std::current_exception(), engine.host_memory_use());
    if (k.on_failure) k.on_failure(k);
    throw;
  }
  k.done = true;
  k.end = engine.now();
  if (k.trace) k.trace->finished(k.end);
  if (k.on_done) k.on_done(k);
}

}  // namespace cclmesh::sim::device

using cclmesh::sim::device::K;
namespace sd = cclmesh::sim::device;
namespace api = cclmesh::api;

// ---- Arguments ------------------------------------------------------------------------------

uint32_t get_arg_val_u32(int arg_index) {
  sd::KernelContext& k = K();
  if (arg_index < 0 || static_cast<std::size_t>(arg_index) >= k.runtime_args.size()) {
    kernel_fault(api::fault_code(api::KernelFaultCode::BAD_ARGS), api::kFaultNoCommand,
                 static_cast<uint32_t>(arg_index));
  }
  return k.runtime_args[static_cast<std::size_t>(arg_index)];
}

uint32_t get_num_args() { return static_cast<uint32_t>(K().runtime_args.size()); }

uint32_t get_compile_time_arg_val(int arg_index) {
  sd::KernelContext& k = K();
  if (arg_index < 0 || static_cast<std::size_t>(arg_index) >= k.compile_time_args.size()) {
    kernel_fault(api::fault_code(api::KernelFaultCode::BAD_ARGS), api::kFaultNoCommand,
                 static_cast<uint32_t>(arg_index));
  }
  return k.compile_time_args[static_cast<std::size_t>(arg_index)];
}

uint32_t get_num_compile_time_args() { return static_cast<uint32_t>(K().compile_time_args.size()); }

const uint32_t* get_arg_ptr(int arg_index) {
  sd::KernelContext& k = K();
  if (arg_index < 0 || static_cast<std::size_t>(arg_index) > k.runtime_args.size()) {
    kernel_fault(api::fault_code(api::KernelFaultCode::BAD_ARGS), api::kFaultNoCommand,
                 static_cast<uint32_t>(arg_index));
  }
  return k.runtime_args.data() + arg_index;
}

// ---- Identity -------------------------------------------------------------------------------

uint8_t my_noc_index() { return static_cast<uint8_t>(cclmesh::sim::index_of(K().noc)); }
uint32_t my_x(uint8_t) { return static_cast<uint32_t>(K().noc0.x); }
uint32_t my_y(uint8_t) { return static_cast<uint32_t>(K().noc0.y); }
uint32_t my_chip_id() { return static_cast<uint32_t>(K().chip->id()); }

uint32_t get_semaphore(uint32_t semaphore_id) {
  sd::KernelContext& k = K();
  if (k.core == nullptr || semaphore_id >= 32 || ((k.core->semaphore_ids >> semaphore_id) & 1u) == 0) {
    sd::unknown_semaphore(k, semaphore_id);
  }
  return sd::semaphore_address(k, k.kind, semaphore_id);
}

uint32_t get_semaphore_on_core_type(ProgrammableCoreType type, uint32_t semaphore_id) {
  sd::KernelContext& k = K();
  const cclmesh::runtime::CoreKind kind =
      type == ProgrammableCoreType::TENSIX ? cclmesh::runtime::CoreKind::Tensix : cclmesh::runtime::CoreKind::Ethernet;
  const std::uint32_t ids = k.program_semaphore_ids[kind == cclmesh::runtime::CoreKind::Tensix ? 0 : 1];
  if (semaphore_id >= 32 || ((ids >> semaphore_id) & 1u) == 0) sd::unknown_semaphore(k, semaphore_id);
  return sd::semaphore_address(k, kind, semaphore_id);
}

// ---- NoC addresses --------------------------------------------------------------------------

uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_address, uint8_t) {
  return api::noc_xy_addr(noc_x, noc_y, local_address);
}

uint64_t get_noc_addr_local(uint32_t local_address) {
  const sd::KernelContext& k = K();
  return api::noc_xy_addr(static_cast<uint32_t>(k.noc0.x), static_cast<uint32_t>(k.noc0.y), local_address);
}

uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                uint32_t local_address, uint8_t) {
  return api::noc_multicast_addr(x_start, y_start, x_end, y_end, local_address);
}

uint64_t get_bank_noc_addr(bool dram, uint32_t bank_id, uint32_t bank_address_offset, uint8_t) {
  sd::KernelContext& k = K();
  if (dram) {
    if (bank_id >= static_cast<uint32_t>(k.chip->dram_bank_count())) {
      throw sd::DataflowApiError(
          fmt::format("get_bank_noc_addr: DRAM bank {} does not exist ({} banks)", bank_id, k.chip->dram_bank_count()));
    }
    const cclmesh::sim::DramBank bank = k.chip->dram_bank(static_cast<std::int32_t>(bank_id));
    return api::noc_xy_addr(static_cast<uint32_t>(bank.endpoint.x), static_cast<uint32_t>(bank.endpoint.y),
                            bank.channel_offset + bank_address_offset);
  }
  const cclmesh::runtime::Noc0Coord core = k.core_map->l1_bank_core(k.worker_grid, bank_id);
  return api::noc_xy_addr(core.x, core.y, bank_address_offset);
}

// ---- NoC transfers --------------------------------------------------------------------------

void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size_bytes, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  if (size_bytes == 0) return;
  const cclmesh::sim::NocAddress source = sd::decode(src_noc_addr);
  sd::check_access(k, "noc_async_read", source, size_bytes);
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  sd::noc_model(k, noc).read(k.noc0, source, dst_local_l1_addr, size_bytes);
}

void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  if (size_bytes == 0) return;
  const cclmesh::sim::NocAddress destination = sd::decode(dst_noc_addr);
  if (k.fabric_entry_points != nullptr) sd::check_fabric_route(k, src_local_l1_addr, destination, size_bytes);
  sd::check_access(k, "noc_async_write", destination, size_bytes);
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  sd::noc_model(k, noc).write(k.noc0, src_local_l1_addr, destination, size_bytes);
}

void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_multicast_addr, uint32_t size_bytes,
                               uint32_t, bool, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  if (size_bytes == 0) return;
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  const cclmesh::sim::CoreRect rect{
      cclmesh::sim::CoreCoord{static_cast<std::int32_t>(api::noc_mcast_addr_x_start(dst_noc_multicast_addr)),
                              static_cast<std::int32_t>(api::noc_mcast_addr_y_start(dst_noc_multicast_addr))},
      cclmesh::sim::CoreCoord{static_cast<std::int32_t>(api::noc_addr_x(dst_noc_multicast_addr)),
                              static_cast<std::int32_t>(api::noc_addr_y(dst_noc_multicast_addr))}};
  const std::uint32_t local = api::noc_addr_local(dst_noc_multicast_addr);
  if (k.noc_access_check != nullptr) {
    for (std::int32_t y = rect.start.y; y <= rect.end.y; ++y) {
      for (std::int32_t x = rect.start.x; x <= rect.end.x; ++x) {
        const cclmesh::sim::NocAddress target{cclmesh::sim::CoreCoord{x, y}, local};
        if (!k.noc_access_check->allows_multicast(target.core, local, size_bytes)) [[unlikely]] {
          sd::refuse_access(k, "noc_async_write_multicast", target, size_bytes);
        }
      }
    }
  }
  sd::noc_model(k, noc).multicast_write(k.noc0, src_local_l1_addr, rect, local, size_bytes);
}

void noc_async_read_barrier(uint8_t noc) {
  sd::KernelContext& k = K();
  sd::BlockedScope blocked(k, sd::BlockedIn::ReadBarrier, noc);
  cclmesh::sim::block_on(sd::noc_model(k, noc).read_barrier(k.noc0));
}

void noc_async_write_barrier(uint8_t noc) {
  sd::KernelContext& k = K();
  sd::BlockedScope blocked(k, sd::BlockedIn::WriteBarrier, noc);
  cclmesh::sim::block_on(sd::noc_model(k, noc).write_barrier(k.noc0));
}

void noc_async_writes_flushed(uint8_t noc) {
  sd::KernelContext& k = K();
  sd::BlockedScope blocked(k, sd::BlockedIn::WritesFlushed, noc);
  cclmesh::sim::block_on(sd::noc_model(k, noc).writes_flushed(k.noc0));
}

void noc_async_atomic_barrier(uint8_t noc) {
  sd::KernelContext& k = K();
  sd::BlockedScope blocked(k, sd::BlockedIn::AtomicBarrier, noc);
  cclmesh::sim::block_on(sd::noc_model(k, noc).atomic_barrier(k.noc0));
}

bool noc_reads_done(uint8_t noc) {
  sd::KernelContext& k = K();
  return sd::own_port(k, noc).complete(cclmesh::sim::NocBarrierKind::Reads);
}

bool noc_writes_done(uint8_t noc) {
  sd::KernelContext& k = K();
  return sd::own_port(k, noc).complete(cclmesh::sim::NocBarrierKind::Writes);
}

bool noc_nonposted_writes_flushed(uint8_t noc) {
  sd::KernelContext& k = K();
  return sd::own_port(k, noc).complete(cclmesh::sim::NocBarrierKind::WritesFlushed);
}

// ---- Transaction ids ------------------------------------------------------------------------

namespace cclmesh::sim::device {
namespace {
// Always-on: a bad id would alias another group's count on hardware (the register field is 4
// bits), so it is a kernel error here rather than an invariant of the model.
void check_trid(const KernelContext& k, const char* call, uint32_t trid) {
  if (trid >= NOC_MAX_TRANSACTION_ID_COUNT) {
    throw DataflowApiError(fmt::format("{}: {}: transaction id {} (expected 0..{}, REFERENCE 1.1)", k.name(), call,
                                       trid, NOC_MAX_TRANSACTION_ID_COUNT - 1));
  }
}
}  // namespace
}  // namespace cclmesh::sim::device

static_assert(NOC_MAX_TRANSACTION_ID_COUNT == cclmesh::sim::kNocTransactionIds);

void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes,
                                          uint32_t trid, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  sd::check_trid(k, "noc_async_write_one_packet_with_trid", trid);
  cclmesh::sim::Noc& model = sd::noc_model(k, noc);
  const std::uint32_t max_packet = k.chip->params().noc.max_packet_payload_bytes;
  if (size_bytes == 0 || size_bytes > max_packet) {
    throw sd::DataflowApiError(fmt::format("{}: noc_async_write_one_packet_with_trid: {} B (expected 1..{}, one NoC "
                                           "packet)",
                                           k.name(), size_bytes, max_packet));
  }
  const cclmesh::sim::NocAddress destination = sd::decode(dst_noc_addr);
  if (k.fabric_entry_points != nullptr) sd::check_fabric_route(k, src_local_l1_addr, destination, size_bytes);
  sd::check_access(k, "noc_async_write_one_packet_with_trid", destination, size_bytes);
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  model.write_with_trid(k.noc0, src_local_l1_addr, destination, size_bytes, trid);
}

bool ncrisc_noc_nonposted_write_with_transaction_id_sent(uint32_t noc, uint32_t trid) {
  sd::KernelContext& k = K();
  sd::check_trid(k, "ncrisc_noc_nonposted_write_with_transaction_id_sent", trid);
  return sd::own_port(k, static_cast<uint8_t>(noc)).trid_writes_flushed(trid);
}

bool ncrisc_noc_nonposted_write_with_transaction_id_flushed(uint32_t noc, uint32_t trid) {
  sd::KernelContext& k = K();
  sd::check_trid(k, "ncrisc_noc_nonposted_write_with_transaction_id_flushed", trid);
  return sd::own_port(k, static_cast<uint8_t>(noc)).trid_writes_acked(trid);
}

// ---- Semaphores -----------------------------------------------------------------------------

void noc_semaphore_inc(uint64_t dst_noc_addr, uint32_t increment, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  sd::noc_model(k, noc).atomic_inc(k.noc0, sd::decode(dst_noc_addr), increment);
}

void noc_semaphore_set(volatile uint32_t* local_sem_addr, uint32_t value) {
  sd::KernelContext& k = K();
  sd::own_change(k, [&] { k.l1->write_u32(sd::address_of(local_sem_addr), value); });
}

void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  sd::noc_model(k, noc).write(k.noc0, src_local_l1_addr, sd::decode(dst_noc_addr), sizeof(uint32_t));
}

void noc_inline_dw_write(uint64_t dst_noc_addr, uint32_t value, uint8_t noc) {
  sd::KernelContext& k = sd::K_issuing();
  sd::charge_noc_issue(k, sd::own_port(k, noc));
  sd::noc_model(k, noc).write_u32(k.noc0, sd::decode(dst_noc_addr), value);
}

void noc_semaphore_wait(volatile uint32_t* local_sem_addr, uint32_t value) {
  sd::KernelContext& k = K();
  const uint32_t address = sd::address_of(local_sem_addr);
  sd::BlockedScope blocked(k, sd::BlockedIn::SemaphoreEqual, address, value);
  k.l1->wait_word_blocking(address, cclmesh::sim::WordCondition::Equal, value);
}

void noc_semaphore_wait_min(volatile uint32_t* local_sem_addr, uint32_t value) {
  sd::KernelContext& k = K();
  const uint32_t address = sd::address_of(local_sem_addr);
  sd::BlockedScope blocked(k, sd::BlockedIn::SemaphoreAtLeast, address, value);
  k.l1->wait_word_blocking(address, cclmesh::sim::WordCondition::AtLeast, value);
}

// ---- Local L1 -------------------------------------------------------------------------------

// The reads polling kernels make all the time: a leaf that reads a remembered page when the
// kernel owes no issue time, everything else (and the first read of a page) out of line, so
// the common case saves no registers.
uint32_t l1_read_u32(uint32_t local_l1_addr) {
  const sd::KernelContext& k = sd::current_kernel();
  if (k.issue_debt <= cclmesh::sim::SimTime::zero() && local_l1_addr % 4 == 0) [[likely]] {
    // An aligned word never leaves its page (a page is a multiple of 4 bytes): only the page
    // needs looking up, not direct_l1()'s end-of-page test.
    using cclmesh::sim::MemoryRegion;
    static_assert(MemoryRegion::kZeroBlockBytes % sizeof(uint32_t) == 0, "the smallest page holds whole words");
    const std::uint64_t page = local_l1_addr >> k.l1_page_shift;
    if (page < k.l1_whole_pages) [[likely]] {
      if (const std::uint8_t* storage = k.l1_pages[page].get()) [[likely]] {
        uint32_t value;  // little-endian, as the region stores it
        const std::uint64_t offset = local_l1_addr & ((std::uint64_t{1} << k.l1_page_shift) - 1);
        std::memcpy(&value, storage + offset, sizeof value);
        return value;
      }
    }
  }
  return sd::l1_read_u32_through_region(local_l1_addr);
}

void l1_write_u32(uint32_t local_l1_addr, uint32_t value) {
  sd::KernelContext& k = K();
  sd::own_change(k, [&] { k.l1->write_u32(local_l1_addr, value); });
}

void l1_copy(uint32_t dst_local_l1_addr, uint32_t src_local_l1_addr, uint32_t size_bytes) {
  sd::KernelContext& k = K();
  const std::vector<std::uint8_t> bytes = k.l1->read(src_local_l1_addr, size_bytes);
  sd::own_change(k, [&] { k.l1->write(dst_local_l1_addr, bytes); });
}

void l1_read_bytes(uint32_t local_l1_addr, void* dst, uint32_t size_bytes) {
  const sd::KernelContext& k = sd::current_kernel();
  if (k.issue_debt <= cclmesh::sim::SimTime::zero()) [[likely]] {
    if (const std::uint8_t* bytes = sd::direct_l1(k, local_l1_addr, size_bytes)) [[likely]] {
      sd::copy_from_l1(dst, bytes, size_bytes);
      return;
    }
  }
  sd::l1_read_bytes_through_region(local_l1_addr, dst, size_bytes);
}

void l1_write_bytes(uint32_t local_l1_addr, const void* src, uint32_t size_bytes) {
  sd::KernelContext& k = K();
  sd::own_change(k, [&] {
    k.l1->write(local_l1_addr, std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(src), size_bytes));
  });
}

// ---- Circular buffers -----------------------------------------------------------------------

// A reserve or wait of more pages than the CB holds can never be satisfied, whatever the other
// side does (on hardware it spins forever). A hang report would show it as the producer and the
// consumer waiting for each other; it is a fault of the call instead, naming the CB's size.
namespace {
void require_cb_holds(const sd::CircularBuffer& b, const char* call, int32_t num_pages) {
  if (num_pages < 0 || static_cast<std::uint32_t>(num_pages) > b.num_pages())
    throw sd::DataflowApiError(fmt::format(
        "{}(CB {}, {} pages) on a circular buffer of {} page(s) of {} B can never be satisfied: the CB must hold at "
        "least the pages one call reserves or waits for (the interpreter: packet_size_in_pages)",
        call, b.id(), num_pages, b.num_pages(), b.page_size()));
}
}  // namespace

void cb_reserve_back(int32_t cb_id, int32_t num_pages) {
  sd::KernelContext& k = K();
  sd::CircularBuffer& b = sd::cb(k, cb_id);
  require_cb_holds(b, "cb_reserve_back", num_pages);
  sd::BlockedScope blocked(k, sd::BlockedIn::CbReserve, static_cast<std::uint64_t>(cb_id),
                           static_cast<std::uint64_t>(num_pages));
  b.reserve_back_blocking(static_cast<std::uint32_t>(num_pages));
}

void cb_push_back(int32_t cb_id, int32_t num_pages) {
  sd::KernelContext& k = K();
  sd::CircularBuffer& b = sd::cb(k, cb_id);
  sd::own_change(k, [&] {
    b.push_back(static_cast<std::uint32_t>(num_pages));
    k.l1->activity().notify(cclmesh::sim::ActivityKind::CbChange);  // the CB counters are L1 words on hardware
  });
}

void cb_wait_front(int32_t cb_id, int32_t num_pages) {
  sd::KernelContext& k = K();
  sd::CircularBuffer& b = sd::cb(k, cb_id);
  require_cb_holds(b, "cb_wait_front", num_pages);
  sd::BlockedScope blocked(k, sd::BlockedIn::CbWait, static_cast<std::uint64_t>(cb_id),
                           static_cast<std::uint64_t>(num_pages));
  b.wait_front_blocking(static_cast<std::uint32_t>(num_pages));
}

void cb_pop_front(int32_t cb_id, int32_t num_pages) {
  sd::KernelContext& k = K();
  sd::CircularBuffer& b = sd::cb(k, cb_id);
  sd::own_change(k, [&] {
    b.pop_front(static_cast<std::uint32_t>(num_pages));
    k.l1->activity().notify(cclmesh::sim::ActivityKind::CbChange);
  });
}

bool cb_pages_reservable_at_back(int32_t cb_id, int32_t num_pages) {
  return sd::cb(K(), cb_id).reservable(static_cast<std::uint32_t>(num_pages));
}

bool cb_pages_available_at_front(int32_t cb_id, int32_t num_pages) {
  return sd::cb(K(), cb_id).available(static_cast<std::uint32_t>(num_pages));
}

uint32_t get_write_ptr(uint32_t cb_id) { return sd::cb(K(), cb_id).write_ptr(); }
uint32_t get_read_ptr(uint32_t cb_id) { return sd::cb(K(), cb_id).read_ptr(); }
uint32_t get_cb_page_size(uint32_t cb_id) { return sd::cb(K(), cb_id).page_size(); }

// ---- Ethernet -------------------------------------------------------------------------------

void eth_send_bytes(uint32_t src_local_l1_addr, uint32_t dst_remote_l1_addr, uint32_t size_bytes) {
  sd::eth(K(), "eth_send_bytes").send_packet(src_local_l1_addr, dst_remote_l1_addr, size_bytes);
}

bool eth_txq_is_busy() { return sd::eth(K(), "eth_txq_is_busy").txq_busy(); }

void run_routing() {
  sd::KernelContext& k = K();
  sd::eth(k, "run_routing");
  if (k.costs->run_routing_cycles > 0) {
    cclmesh::sim::block_on(cclmesh::sim::delay(k.chip->params().cycles(k.costs->run_routing_cycles)));
  }
}

// ---- Polling and time -----------------------------------------------------------------------

namespace {
uint32_t wait_for_activity_in(sd::KernelContext& k, uint32_t wake_on, bool since_poll_mark) {
  if ((wake_on & ~static_cast<uint32_t>(WAKE_ON_ANY)) != 0 || wake_on == 0) {
    throw sd::DataflowApiError(fmt::format("wait_for_activity: wake mask {:#x} (expected a non-empty subset of {:#x})",
                                           wake_on, static_cast<uint32_t>(WAKE_ON_ANY)));
  }
  const std::uint64_t parked_at = read_device_cycles();
  {
    sd::BlockedScope blocked(k, sd::BlockedIn::L1Activity, wake_on);
    k.activity->wait_blocking(wake_on, since_poll_mark);
  }
  const std::uint64_t parked = read_device_cycles() - parked_at;
  return parked > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(parked);
}
}  // namespace

uint32_t wait_for_activity(uint32_t wake_on) { return wait_for_activity_in(K(), wake_on, false); }

void l1_activity_poll_mark() { K().activity->mark_poll(); }

uint32_t wait_for_activity_hinted(uint32_t wake_on, const WaitHints& hints) {
  sd::KernelContext& k = K();
  const uint32_t count = hints.quiet_word_count;
  if (count > cclmesh::sim::ActivityListener::kMaxQuietWords || (count > 0 && hints.quiet_words == nullptr)) {
    throw sd::DataflowApiError(fmt::format("wait_for_activity_hinted: {} quiet words (expected at most {})", count,
                                           cclmesh::sim::ActivityListener::kMaxQuietWords));
  }
  if (hints.quiet_cycles > 0 && count > 0) {
    for (uint32_t i = 0; i < count; ++i) {
      const QuietWord& w = hints.quiet_words[i];
      if (w.address % 4 != 0) {
        throw sd::DataflowApiError(
            fmt::format("wait_for_activity_hinted: quiet word address {:#x} (expected 4-byte aligned)", w.address));
      }
      // A word outside this core's L1 is never written: it would never be quiet, no check needed.
      k.activity->quiet_word(w.address, w.base, w.limit);
    }
    k.activity->set_quiet_window(hints.quiet_cycles, static_cast<std::uint64_t>(k.chip->params().clock_hz));
  }
  return wait_for_activity_in(k, wake_on, hints.since_poll_mark);
}

void wait_for_l1_activity() { wait_for_activity(WAKE_ON_ANY); }

// The API's wake bits are the model's activity kinds.
static_assert(WAKE_ON_L1_WRITE == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::L1Write));
static_assert(WAKE_ON_NOC_READS_DONE == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::NocReadsDone));
static_assert(WAKE_ON_NOC_WRITES_DONE == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::NocWritesAcked));
static_assert(WAKE_ON_NOC_WRITES_FLUSHED == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::NocWritesFlushed));
static_assert(WAKE_ON_NOC_ATOMICS_DONE == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::NocAtomicsDone));
static_assert(WAKE_ON_CB_CHANGE == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::CbChange));
static_assert(WAKE_ON_TXQ_READY == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::TxqReady));
static_assert(WAKE_ON_L1_WRITE_SECONDARY == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::L1WriteSecondary));
static_assert(WAKE_ON_NOC_TRID_SENT == cclmesh::sim::activity_bit(cclmesh::sim::ActivityKind::NocTridWritesFlushed));
static_assert(WAKE_ON_ANY == cclmesh::sim::kAnyActivity);

void l1_activity_watch_range(uint32_t begin, uint32_t end) {
  sd::KernelContext& k = K();
  if (end <= begin) throw sd::DataflowApiError(fmt::format("l1_activity_watch_range: empty range [{:#x}, {:#x})", begin, end));
  k.l1->check(begin, end - begin, cclmesh::sim::AccessKind::Watch);
  k.activity->watch(begin, end);
}

void l1_activity_watch_range_secondary(uint32_t begin, uint32_t end) {
  sd::KernelContext& k = K();
  if (end <= begin) {
    throw sd::DataflowApiError(fmt::format("l1_activity_watch_range_secondary: empty range [{:#x}, {:#x})", begin, end));
  }
  k.l1->check(begin, end - begin, cclmesh::sim::AccessKind::Watch);
  k.activity->watch_secondary(begin, end);
}

void l1_activity_ignore_range(uint32_t begin, uint32_t end) {
  sd::KernelContext& k = K();
  if (end <= begin) throw sd::DataflowApiError(fmt::format("l1_activity_ignore_range: empty range [{:#x}, {:#x})", begin, end));
  k.l1->check(begin, end - begin, cclmesh::sim::AccessKind::Watch);
  k.activity->ignore(begin, end);
}

void spend_cycles(uint32_t cycles) {
  sd::KernelContext& k = K();
  if (cycles > 0) cclmesh::sim::block_on(cclmesh::sim::delay(k.chip->params().cycles(cycles)));
}

uint64_t read_device_cycles() {
  return cclmesh::sim::cycles_since_zero(cclmesh::sim::Engine::current().now(), K().chip->params().clock_hz);
}

void debug_set_current_command(uint32_t stream, uint32_t command_index, uint32_t header_arg_index) {
  sd::KernelContext& k = K();
  k.has_command = true;
  k.stream = stream;
  k.command_index = command_index;
  k.header_arg = header_arg_index;
  if (stream < k.streams.size()) {
    k.streams[stream].started = true;
    k.streams[stream].current = command_index;
  }
  if (k.trace) k.trace->command_reported(k, stream, command_index, cclmesh::sim::Engine::current().now());
}

void debug_command_done(uint32_t stream, uint32_t command_index) {
  sd::KernelContext& k = K();
  if (stream < k.streams.size()) k.streams[stream].completed = command_index + 1;
  if (k.trace) k.trace->command_done(stream, command_index, cclmesh::sim::Engine::current().now());
}

void profile_mark_ready() {
  sd::KernelContext& k = K();
  if (!k.ready) k.ready = cclmesh::sim::Engine::current().now();
}

void kernel_fault(uint32_t code, uint32_t command_index, uint32_t word_offset) {
  sd::KernelContext& k = K();
  k.fault = sd::KernelFaultReport{code, command_index, word_offset, {}};
  throw sd::KernelFaultSignal(k.name() + ": " + k.failure_description());
}
