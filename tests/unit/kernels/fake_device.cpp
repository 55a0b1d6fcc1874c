#include "tests/unit/kernels/fake_device.hpp"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/noc_address.hpp"

namespace cclmesh::fake {
namespace {

thread_local Kernel* tl_kernel = nullptr;
thread_local World* tl_world = nullptr;

struct FaultThrown {
  KernelFault fault;
};
struct Aborted {};

}  // namespace

// ---- Core ------------------------------------------------------------------------------------
void Core::check_range(uint32_t address, uint32_t size) const {
  if (uint64_t{address} + size > l1.size()) {
    std::ostringstream s;
    s << "L1 access [0x" << std::hex << address << ", +0x" << size << ") outside core chip " << std::dec << chip
      << " (" << x << "," << y << ") of " << l1.size() << " B";
    throw std::out_of_range(s.str());
  }
}
uint32_t Core::read_u32(uint32_t address) const {
  uint32_t v = 0;
  read(address, &v, 4);
  return v;
}
void Core::write_u32(uint32_t address, uint32_t value) { write(address, &value, 4); }
void Core::read(uint32_t address, void* dst, uint32_t size) const {
  check_range(address, size);
  std::memcpy(dst, l1.data() + address, size);
}
void Core::write(uint32_t address, const void* src, uint32_t size) {
  check_range(address, size);
  std::memmove(l1.data() + address, src, size);
  activity += 1;
}

// ---- World -----------------------------------------------------------------------------------
World::World() = default;

World::~World() {
  for (auto& k : kernels_) {
    if (!k->done) {
      k->abort = true;
      hand_over(*k);
    }
    if (k->thread.joinable()) {
      k->thread.join();
    }
  }
}

Core& World::add_core(uint32_t chip, uint32_t x, uint32_t y, uint32_t l1_bytes, bool ethernet) {
  auto c = std::make_unique<Core>();
  c->chip = chip;
  c->x = x;
  c->y = y;
  c->ethernet = ethernet;
  c->l1.assign(l1_bytes, 0);
  cores_.push_back(std::move(c));
  return *cores_.back();
}

Core* World::find_core(uint32_t chip, uint32_t x, uint32_t y) {
  for (auto& c : cores_) {
    if (c->chip == chip && c->x == x && c->y == y) {
      return c.get();
    }
  }
  return nullptr;
}

Core& World::core(uint32_t chip, uint32_t x, uint32_t y) {
  Core* c = find_core(chip, x, y);
  if (c == nullptr) {
    throw std::out_of_range("no core at chip " + std::to_string(chip) + " (" + std::to_string(x) + "," +
                            std::to_string(y) + ")");
  }
  return *c;
}

void World::connect_eth(Core& a, Core& b) {
  a.eth_peer = &b;
  b.eth_peer = &a;
}

void World::set_dram_banks(uint32_t num_banks, uint32_t bytes_per_bank, uint32_t num_chips) {
  num_dram_banks_ = num_banks;
  for (uint32_t chip = 0; chip < num_chips; ++chip) {
    for (uint32_t b = 0; b < num_banks; ++b) {
      add_core(chip, kDramX, b, bytes_per_bank);
    }
  }
}

uint64_t World::bank_noc_addr(uint32_t, bool dram, uint32_t bank, uint32_t offset) const {
  if (dram) {
    if (bank >= num_dram_banks_) {
      throw std::out_of_range("DRAM bank " + std::to_string(bank));
    }
    return api::noc_xy_addr(kDramX, bank, offset);
  }
  if (bank >= l1_banks_.size()) {
    throw std::out_of_range("L1 bank " + std::to_string(bank));
  }
  return api::noc_xy_addr(l1_banks_[bank].first, l1_banks_[bank].second, offset);
}

Kernel& World::launch(const std::string& name, Core& core, std::function<void()> entry, std::vector<uint32_t> ct,
                      std::vector<uint32_t> rt, bool persistent) {
  auto k = std::make_unique<Kernel>();
  k->name = name;
  k->core = &core;
  k->entry = std::move(entry);
  k->compile_time_args = std::move(ct);
  k->runtime_args = std::move(rt);
  k->persistent = persistent;
  Kernel& ref = *k;
  kernels_.push_back(std::move(k));
  ref.thread = std::thread([this, &ref] { thread_main(ref); });
  return ref;
}

void World::thread_main(Kernel& k) {
  {
    std::unique_lock lk(mutex_);
    cv_.wait(lk, [&] { return running_ == &k; });
  }
  tl_kernel = &k;
  tl_world = this;
  if (!k.abort) {
    try {
      k.entry();
    } catch (const FaultThrown& f) {
      k.fault = f.fault;
    } catch (const Aborted&) {
    } catch (const std::exception& e) {
      k.error = e.what();
    }
  }
  {
    std::lock_guard lk(mutex_);
    k.done = true;
    running_ = nullptr;
  }
  cv_.notify_all();
}

void World::hand_over(Kernel& k) {
  {
    std::lock_guard lk(mutex_);
    running_ = &k;
  }
  cv_.notify_all();
  std::unique_lock lk(mutex_);
  cv_.wait(lk, [&] { return running_ == nullptr; });
}

void World::block_until(std::function<bool()> ready, std::string what) {
  Kernel& k = current_kernel();
  if (ready()) {
    return;
  }
  k.ready = std::move(ready);
  k.blocked_in = std::move(what);
  {
    std::unique_lock lk(mutex_);
    running_ = nullptr;
    cv_.notify_all();
    cv_.wait(lk, [&] { return running_ == &k; });
  }
  if (k.abort) {
    throw Aborted{};
  }
}

RunResult World::run(const std::function<void()>& when_only_persistent_left, uint64_t max_steps) {
  return schedule(when_only_persistent_left, false, max_steps);
}

RunResult World::run_until_only_persistent_left(uint64_t max_steps) { return schedule({}, true, max_steps); }

RunResult World::schedule(const std::function<void()>& when_only_persistent_left, bool stop_when_only_persistent_left,
                          uint64_t max_steps) {
  RunResult result;
  bool hook_done = false;
  uint64_t steps = 0;
  for (;;) {
    bool any_ran = false;
    for (auto& k : kernels_) {
      if (k->done || (k->ready && !k->ready())) {
        continue;
      }
      k->ready = nullptr;
      k->blocked_in.clear();
      hand_over(*k);
      any_ran = true;
      ++steps;
    }
    bool all_done = true;
    bool transient_done = true;
    for (auto& k : kernels_) {
      all_done &= k->done;
      transient_done &= k->done || k->persistent;
    }
    if (all_done) {
      break;
    }
    if (transient_done && stop_when_only_persistent_left && !any_ran) {
      for (auto& k : kernels_) {
        if (k->fault) {
          result.faulted.push_back(k.get());
        }
        if (!k->error.empty()) {
          result.errored.push_back(k.get());
        }
      }
      return result;
    }
    if (transient_done && !hook_done && when_only_persistent_left) {
      hook_done = true;
      when_only_persistent_left();
      continue;
    }
    if (steps > max_steps) {
      result.step_limit = true;
      break;
    }
    if (!any_ran) {
      result.deadlock = true;
      std::ostringstream s;
      for (auto& k : kernels_) {
        if (!k->done) {
          s << k->name << " on chip " << k->core->chip << " (" << k->core->x << "," << k->core->y << ") blocked in "
            << k->blocked_in << " [stream " << k->current_stream << " command #" << k->current_command << "]\n";
        }
      }
      result.report = s.str();
      break;
    }
  }
  stop_all(result);
  return result;
}

void World::stop_all(RunResult& result) {
  for (auto& k : kernels_) {
    if (!k->done) {
      k->abort = true;
      hand_over(*k);
    }
  }
  for (auto& k : kernels_) {
    if (k->thread.joinable()) {
      k->thread.join();
    }
    if (k->fault) {
      result.faulted.push_back(k.get());
    }
    if (!k->error.empty()) {
      result.errored.push_back(k.get());
    }
  }
}

Kernel& World::current_kernel() {
  if (tl_kernel == nullptr) {
    throw std::logic_error("dataflow API called outside a kernel");
  }
  return *tl_kernel;
}

World& World::current_world() {
  if (tl_world == nullptr) {
    throw std::logic_error("dataflow API called outside a kernel");
  }
  return *tl_world;
}

Core& World::resolve(uint64_t noc_addr) {
  return core(current_kernel().core->chip, api::noc_addr_x(noc_addr), api::noc_addr_y(noc_addr));
}

}  // namespace cclmesh::fake

// ---- The dataflow API ----------------------------------------------------------------------------
using cclmesh::fake::Core;
using cclmesh::fake::Kernel;
using cclmesh::fake::World;

namespace {

Kernel& K() { return World::current_kernel(); }
World& W() { return World::current_world(); }
Core& here() { return *K().core; }
uint32_t local(uint64_t noc_addr) { return static_cast<uint32_t>(cclmesh::api::noc_addr_local(noc_addr)); }
uint32_t ptr_address(volatile uint32_t* p) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)); }

cclmesh::fake::CircularBuffer& cb(int32_t id) {
  auto it = here().cbs.find(static_cast<uint32_t>(id));
  if (it == here().cbs.end()) {
    throw std::out_of_range("no CB " + std::to_string(id) + " on this core");
  }
  return it->second;
}

}  // namespace

uint32_t get_arg_val_u32(int arg_index) { return K().runtime_args.at(static_cast<std::size_t>(arg_index)); }
uint32_t get_num_args() { return static_cast<uint32_t>(K().runtime_args.size()); }
uint32_t get_compile_time_arg_val(int arg_index) { return K().compile_time_args.at(static_cast<std::size_t>(arg_index)); }
uint32_t get_num_compile_time_args() { return static_cast<uint32_t>(K().compile_time_args.size()); }
const uint32_t* get_arg_ptr(int arg_index) {
  if (static_cast<std::size_t>(arg_index) > K().runtime_args.size()) {
    throw std::out_of_range("get_arg_ptr past the args");
  }
  return K().runtime_args.data() + arg_index;
}

uint8_t my_noc_index() { return K().noc; }
uint32_t my_x(uint8_t) { return here().x; }
uint32_t my_y(uint8_t) { return here().y; }
uint32_t my_chip_id() { return here().chip; }
uint32_t get_semaphore(uint32_t semaphore_id) { return cclmesh::fake::semaphore_address(semaphore_id); }
uint32_t get_semaphore_on_core_type(ProgrammableCoreType, uint32_t semaphore_id) {
  return cclmesh::fake::semaphore_address(semaphore_id);
}

uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_address, uint8_t) {
  return cclmesh::api::noc_xy_addr(noc_x, noc_y, local_address);
}
uint64_t get_noc_addr_local(uint32_t local_address) {
  return cclmesh::api::noc_xy_addr(here().x, here().y, local_address);
}
uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                uint32_t local_address, uint8_t) {
  return cclmesh::api::noc_multicast_addr(x_start, y_start, x_end, y_end, local_address);
}
uint64_t get_bank_noc_addr(bool dram, uint32_t bank_id, uint32_t bank_address_offset, uint8_t) {
  return W().bank_noc_addr(here().chip, dram, bank_id, bank_address_offset);
}

void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size_bytes, uint8_t) {
  std::vector<uint8_t> tmp(size_bytes);
  W().resolve(src_noc_addr).read(local(src_noc_addr), tmp.data(), size_bytes);
  here().write(dst_local_l1_addr, tmp.data(), size_bytes);
}
void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes, uint8_t) {
  std::vector<uint8_t> tmp(size_bytes);
  here().read(src_local_l1_addr, tmp.data(), size_bytes);
  W().resolve(dst_noc_addr).write(local(dst_noc_addr), tmp.data(), size_bytes);
}
void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst, uint32_t size_bytes, uint32_t, bool,
                               uint8_t) {
  std::vector<uint8_t> tmp(size_bytes);
  here().read(src_local_l1_addr, tmp.data(), size_bytes);
  for (uint32_t x = cclmesh::api::noc_mcast_addr_x_start(dst); x <= cclmesh::api::noc_addr_x(dst); ++x) {
    for (uint32_t y = cclmesh::api::noc_mcast_addr_y_start(dst); y <= cclmesh::api::noc_addr_y(dst); ++y) {
      if (Core* c = W().find_core(here().chip, x, y)) {
        c->write(local(dst), tmp.data(), size_bytes);
      }
    }
  }
}
void noc_async_read_barrier(uint8_t) {}
void noc_async_write_barrier(uint8_t) {}
void noc_async_writes_flushed(uint8_t) {}
void noc_async_atomic_barrier(uint8_t) {}
bool noc_reads_done(uint8_t) { return true; }
bool noc_writes_done(uint8_t) { return true; }
bool noc_nonposted_writes_flushed(uint8_t) { return true; }
// Writes complete at once here, so every transaction id is always sent and flushed; the id is
// still range-checked, as the simulator does.
void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes,
                                          uint32_t trid, uint8_t noc) {
  if (trid >= NOC_MAX_TRANSACTION_ID_COUNT) throw std::out_of_range("transaction id " + std::to_string(trid));
  noc_async_write(src_local_l1_addr, dst_noc_addr, size_bytes, noc);
}
bool ncrisc_noc_nonposted_write_with_transaction_id_sent(uint32_t, uint32_t trid) {
  if (trid >= NOC_MAX_TRANSACTION_ID_COUNT) throw std::out_of_range("transaction id " + std::to_string(trid));
  return true;
}
bool ncrisc_noc_nonposted_write_with_transaction_id_flushed(uint32_t, uint32_t trid) {
  if (trid >= NOC_MAX_TRANSACTION_ID_COUNT) throw std::out_of_range("transaction id " + std::to_string(trid));
  return true;
}

void noc_semaphore_inc(uint64_t dst_noc_addr, uint32_t increment, uint8_t) {
  Core& c = W().resolve(dst_noc_addr);
  c.write_u32(local(dst_noc_addr), c.read_u32(local(dst_noc_addr)) + increment);
}
void noc_semaphore_set(volatile uint32_t* local_sem_addr, uint32_t value) {
  here().write_u32(ptr_address(local_sem_addr), value);
}
void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t) {
  W().resolve(dst_noc_addr).write_u32(local(dst_noc_addr), here().read_u32(src_local_l1_addr));
}
void noc_inline_dw_write(uint64_t dst_noc_addr, uint32_t value, uint8_t) {
  W().resolve(dst_noc_addr).write_u32(local(dst_noc_addr), value);
}
void noc_semaphore_wait(volatile uint32_t* local_sem_addr, uint32_t value) {
  Core* c = &here();
  const uint32_t a = ptr_address(local_sem_addr);
  W().block_until([c, a, value] { return c->read_u32(a) == value; },
                  "noc_semaphore_wait(0x" + std::to_string(a) + " == " + std::to_string(value) + ")");
}
void noc_semaphore_wait_min(volatile uint32_t* local_sem_addr, uint32_t value) {
  Core* c = &here();
  const uint32_t a = ptr_address(local_sem_addr);
  W().block_until([c, a, value] { return c->read_u32(a) >= value; },
                  "noc_semaphore_wait_min(" + std::to_string(a) + " >= " + std::to_string(value) + ")");
}

uint32_t l1_read_u32(uint32_t local_l1_addr) { return here().read_u32(local_l1_addr); }
void l1_write_u32(uint32_t local_l1_addr, uint32_t value) { here().write_u32(local_l1_addr, value); }
void l1_copy(uint32_t dst, uint32_t src, uint32_t size_bytes) {
  std::vector<uint8_t> tmp(size_bytes);
  here().read(src, tmp.data(), size_bytes);
  here().write(dst, tmp.data(), size_bytes);
}
void l1_read_bytes(uint32_t local_l1_addr, void* dst, uint32_t size_bytes) {
  here().read(local_l1_addr, dst, size_bytes);
}
void l1_write_bytes(uint32_t local_l1_addr, const void* src, uint32_t size_bytes) {
  here().write(local_l1_addr, src, size_bytes);
}

void cb_reserve_back(int32_t cb_id, int32_t num_pages) {
  auto* b = &cb(cb_id);
  W().block_until([b, num_pages] { return b->num_pages - (b->received - b->acked) >= static_cast<uint32_t>(num_pages); },
                  "cb_reserve_back(" + std::to_string(cb_id) + ", " + std::to_string(num_pages) + ")");
}
void cb_push_back(int32_t cb_id, int32_t num_pages) {
  cb(cb_id).received += static_cast<uint32_t>(num_pages);
  here().activity += 1;
}
void cb_wait_front(int32_t cb_id, int32_t num_pages) {
  auto* b = &cb(cb_id);
  W().block_until([b, num_pages] { return b->received - b->acked >= static_cast<uint32_t>(num_pages); },
                  "cb_wait_front(" + std::to_string(cb_id) + ", " + std::to_string(num_pages) + ")");
}
void cb_pop_front(int32_t cb_id, int32_t num_pages) {
  cb(cb_id).acked += static_cast<uint32_t>(num_pages);
  here().activity += 1;
}
bool cb_pages_reservable_at_back(int32_t cb_id, int32_t num_pages) {
  const auto& b = cb(cb_id);
  return b.num_pages - (b.received - b.acked) >= static_cast<uint32_t>(num_pages);
}
bool cb_pages_available_at_front(int32_t cb_id, int32_t num_pages) {
  const auto& b = cb(cb_id);
  return b.received - b.acked >= static_cast<uint32_t>(num_pages);
}
uint32_t get_write_ptr(uint32_t cb_id) {
  const auto& b = cb(static_cast<int32_t>(cb_id));
  return b.base + (b.received % b.num_pages) * b.page_size;
}
uint32_t get_read_ptr(uint32_t cb_id) {
  const auto& b = cb(static_cast<int32_t>(cb_id));
  return b.base + (b.acked % b.num_pages) * b.page_size;
}
uint32_t get_cb_page_size(uint32_t cb_id) { return cb(static_cast<int32_t>(cb_id)).page_size; }

void eth_send_bytes(uint32_t src_local_l1_addr, uint32_t dst_remote_l1_addr, uint32_t size_bytes) {
  if (size_bytes % 16 != 0 || here().eth_peer == nullptr) {
    throw std::logic_error("eth_send_bytes: size not a multiple of 16 or no link");
  }
  std::vector<uint8_t> tmp(size_bytes);
  here().read(src_local_l1_addr, tmp.data(), size_bytes);
  here().eth_peer->write(dst_remote_l1_addr, tmp.data(), size_bytes);
}
bool eth_txq_is_busy() { return false; }
void run_routing() {}

// Any activity wakes here, whatever the mask: a superset of the simulator's wake-ups, and no
// parked time is reported (the fake has no clock while parked), as on hardware.
uint32_t wait_for_activity(uint32_t) {
  Core* c = &here();
  const uint64_t seen = c->activity;
  W().block_until([c, seen] { return c->activity != seen; }, "wait_for_l1_activity");
  return 0;
}
void wait_for_l1_activity() { wait_for_activity(WAKE_ON_ANY); }
void l1_activity_poll_mark() {}
uint32_t wait_for_activity_hinted(uint32_t wake_on, const WaitHints&) {
  return wait_for_activity(wake_on);  // hints only: every write wakes here
}
void l1_activity_watch_range(uint32_t, uint32_t) {}  // every write wakes here: a hint, not behaviour
void l1_activity_ignore_range(uint32_t, uint32_t) {}
void l1_activity_watch_range_secondary(uint32_t, uint32_t) {}
void spend_cycles(uint32_t cycles) { K().cycles += cycles; }
uint64_t read_device_cycles() { return K().cycles; }

void debug_set_current_command(uint32_t stream, uint32_t command_index, uint32_t) {
  K().current_stream = stream;
  K().current_command = command_index;
}

void debug_command_done(uint32_t, uint32_t) { K().commands_done += 1; }
void profile_mark_ready() {}

void kernel_fault(uint32_t code, uint32_t command_index, uint32_t word_offset) {
  throw cclmesh::fake::FaultThrown{cclmesh::fake::KernelFault{code, command_index, word_offset}};
}
