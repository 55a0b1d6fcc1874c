#pragma once
// A functional stand-in for the simulator backend, for the kernels' end-to-end unit tests: it
// defines the dataflow API (kernels/api/dataflow_api.hpp) over plain byte arrays, with every
// NoC and ethernet transfer completing at once and no notion of time.
//
// Each launched kernel runs on its own thread, but only one runs at a time: a blocking call
// whose condition does not hold hands control back to the scheduler, which resumes kernels in
// a fixed round-robin order once their condition holds. So a run is deterministic, and when
// no kernel can run while some are unfinished the run ends as a deadlock with every blocked
// kernel's wait listed (the fake's hang report).
//
// Semaphore id i sits at kSemaphoreBase + 16 i on every core; DRAM bank b is the core at
// (kDramX, b) of the chip; interleaved L1 bank b is the chip's b-th registered L1 bank core.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cclmesh::fake {

constexpr uint32_t kSemaphoreBase = 0x100;
constexpr uint32_t kSemaphoreStride = 16;
constexpr uint32_t kDramX = 0;

constexpr uint32_t semaphore_address(uint32_t id) { return kSemaphoreBase + id * kSemaphoreStride; }

struct CircularBuffer {
  uint32_t base = 0;
  uint32_t page_size = 0;
  uint32_t num_pages = 0;
  uint32_t received = 0;  // pages pushed
  uint32_t acked = 0;     // pages popped
};

struct Core {
  uint32_t chip = 0;
  uint32_t x = 0;
  uint32_t y = 0;
  bool ethernet = false;
  std::vector<uint8_t> l1;
  std::map<uint32_t, CircularBuffer> cbs;
  Core* eth_peer = nullptr;
  uint64_t activity = 0;  // bumped by every write to this core's L1 or CB counters

  uint32_t read_u32(uint32_t address) const;
  void write_u32(uint32_t address, uint32_t value);
  void read(uint32_t address, void* dst, uint32_t size) const;
  void write(uint32_t address, const void* src, uint32_t size);
  void check_range(uint32_t address, uint32_t size) const;
};

struct KernelFault {
  uint32_t code = 0;
  uint32_t command_index = 0;
  uint32_t word_offset = 0;
};

struct Kernel {
  std::string name;
  Core* core = nullptr;
  std::vector<uint32_t> compile_time_args;
  std::vector<uint32_t> runtime_args;
  uint8_t noc = 0;
  bool persistent = false;  // a router: not waited for; terminated by the run's hook
  std::function<void()> entry;

  // Scheduler state.
  std::thread thread;
  bool done = false;
  bool abort = false;
  std::function<bool()> ready;  // the condition a blocked kernel waits for
  std::string blocked_in;       // what it waits for, for the deadlock report
  std::optional<KernelFault> fault;
  std::string error;  // an exception other than a fault (a test bug)
  uint32_t current_stream = 0;
  uint32_t current_command = 0;
  uint32_t commands_done = 0;  // debug_command_done calls
  uint64_t cycles = 0;
};

struct RunResult {
  bool deadlock = false;
  bool step_limit = false;
  std::string report;  // the blocked kernels, on deadlock
  std::vector<const Kernel*> faulted;
  std::vector<const Kernel*> errored;
  bool ok() const { return !deadlock && !step_limit && faulted.empty() && errored.empty(); }
};

class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Core& add_core(uint32_t chip, uint32_t x, uint32_t y, uint32_t l1_bytes, bool ethernet = false);
  Core* find_core(uint32_t chip, uint32_t x, uint32_t y);
  Core& core(uint32_t chip, uint32_t x, uint32_t y);
  void connect_eth(Core& a, Core& b);
  // DRAM bank b of every chip is core (kDramX, b); L1 bank b is l1_banks[b].
  void set_dram_banks(uint32_t num_banks, uint32_t bytes_per_bank, uint32_t num_chips);
  void set_l1_banks(std::vector<std::pair<uint32_t, uint32_t>> cores) { l1_banks_ = std::move(cores); }
  uint64_t bank_noc_addr(uint32_t chip, bool dram, uint32_t bank, uint32_t offset) const;

  Kernel& launch(const std::string& name, Core& core, std::function<void()> entry, std::vector<uint32_t> ct,
                 std::vector<uint32_t> rt, bool persistent = false);

  // Runs every launched kernel to the end. `when_only_persistent_left` runs (once) when every
  // non-persistent kernel is done, e.g. to send the routers their termination signal.
  RunResult run(const std::function<void()>& when_only_persistent_left = {}, uint64_t max_steps = 20'000'000);
  // Runs until every non-persistent kernel is done and leaves the persistent ones (routers)
  // parked, so more programs can be launched onto the same fabric; then run() again. On a
  // deadlock or step limit everything is stopped, as in run().
  RunResult run_until_only_persistent_left(uint64_t max_steps = 20'000'000);

  // For the API implementation: the kernel running on this thread.
  static Kernel& current_kernel();
  static World& current_world();
  Core& resolve(uint64_t noc_addr);  // on the current kernel's chip
  void block_until(std::function<bool()> ready, std::string what);

 private:
  RunResult schedule(const std::function<void()>& when_only_persistent_left, bool stop_when_only_persistent_left,
                     uint64_t max_steps);
  void stop_all(RunResult& result);
  void thread_main(Kernel& k);
  void hand_over(Kernel& k);

  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::pair<uint32_t, uint32_t>> l1_banks_;
  uint32_t num_dram_banks_ = 0;

  std::mutex mutex_;
  std::condition_variable cv_;
  Kernel* running_ = nullptr;  // the kernel holding the baton, nullptr = the scheduler
};

}  // namespace cclmesh::fake
