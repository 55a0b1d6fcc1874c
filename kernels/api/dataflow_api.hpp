#pragma once
// The device dataflow API kernels are written against. Names and signatures mirror tt-metal's
// `dataflow_api.h` (and the ERISC `eth_*` calls), so a kernel written here is handed to
// tt-metal's kernel compiler unchanged on hardware, where these declarations come from
// tt-metal; in the simulator the backend defines them (sim/device/dataflow_api_sim.cpp) and
// every blocking call parks the kernel's fiber.
//
// Device-clean: <cstdint> only; declarations only.
//
// Portability rules for kernels (the simulator enforces them):
//  * L1 is never dereferenced through a raw pointer: use l1_read_u32 / l1_write_u32 and the
//    semaphore calls. Pointers such as `volatile uint32_t* sem` carry an L1 ADDRESS (the value
//    of get_semaphore(id)) and are only passed back into this API.
//  * NoC coordinates in addresses are NoC0 coordinates on every NoC (REFERENCE §1.2, §4.11);
//    the `noc` argument selects the network the transfer travels on.
//  * A kernel that polls (a router's main loop, the interpreter's round robin) calls
//    wait_for_activity() / wait_for_l1_activity() when a pass made no progress. On hardware it
//    is a cheap no-op (plus the periodic context switch on ERISC); in the simulator it parks
//    the fiber until an event the kernel acts on happens on this core (a write to a word it
//    watches, a kind of NoC transaction all complete, ...), so idle loops cost no events and a
//    loop that can never progress shows up in the hang report.

#include <cstdint>

// ---- Arguments ----------------------------------------------------------------------------
uint32_t get_arg_val_u32(int arg_index);
template <typename T>
inline T get_arg_val(int arg_index) {
  return static_cast<T>(get_arg_val_u32(arg_index));
}
uint32_t get_num_args();
// On hardware a constexpr; in the simulator read from the kernel's compile-time args.
uint32_t get_compile_time_arg_val(int arg_index);
uint32_t get_num_compile_time_args();

// ---- Identity -------------------------------------------------------------------------------
uint8_t my_noc_index();          // the kernel's default NoC (tt-metal's `noc_index`)
uint32_t my_x(uint8_t noc = 0);  // this core's NoC0 coordinates
uint32_t my_y(uint8_t noc = 0);
uint32_t my_chip_id();
// Address of per-program semaphore `id` in this core's L1.
uint32_t get_semaphore(uint32_t semaphore_id);

// ---- NoC addresses (NoC0 coordinates) ------------------------------------------------------
uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_address, uint8_t noc = 0);
uint64_t get_noc_addr_local(uint32_t local_address);  // this core
uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                uint32_t local_address, uint8_t noc = 0);

// ---- NoC transfers ---------------------------------------------------------------------------
// Asynchronous; the barriers wait for this core's outstanding transactions on `noc`.
void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size_bytes, uint8_t noc = 0);
void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes, uint8_t noc = 0);
void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_multicast_addr, uint32_t size_bytes,
                               uint32_t num_dests, bool linked = false, uint8_t noc = 0);
void noc_async_read_barrier(uint8_t noc = 0);
void noc_async_write_barrier(uint8_t noc = 0);
// Writes have left this core (the source buffer may be reused); not necessarily landed.
void noc_async_writes_flushed(uint8_t noc = 0);
void noc_async_atomic_barrier(uint8_t noc = 0);
// Non-blocking probes, for polling kernels.
bool noc_reads_done(uint8_t noc = 0);
bool noc_writes_done(uint8_t noc = 0);

// ---- Transaction ids (REFERENCE §1.1: 16 per NoC) ---------------------------------------------
// A write tagged with a transaction id is counted by the NIU per id as well, so a kernel can
// tell when one group of its writes (one receiver slot's, say) has left or landed while later
// groups are still in flight. Names as tt-metal's; the probes keep tt-metal's words: "sent" =
// every write of the id has left this core (its source L1 may be reused), "flushed" = every
// write of the id is acked (none outstanding). A trid of NOC_MAX_TRANSACTION_ID_COUNT or more,
// or a size above the NoC's maximum packet, ends the kernel with an error (tt-metal: the id is
// a 4-bit register field and the call issues one packet).
constexpr uint32_t NOC_MAX_TRANSACTION_ID_COUNT = 16;
// tt-metal's (src, dst, size, trid, cmd_buf, noc, vc) without the command buffer and VC.
void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size_bytes,
                                          uint32_t trid, uint8_t noc = 0);
bool ncrisc_noc_nonposted_write_with_transaction_id_sent(uint32_t noc, uint32_t trid);
bool ncrisc_noc_nonposted_write_with_transaction_id_flushed(uint32_t noc, uint32_t trid);

// ---- Semaphores (32-bit L1 words) -----------------------------------------------------------
void noc_semaphore_inc(uint64_t dst_noc_addr, uint32_t increment, uint8_t noc = 0);
void noc_semaphore_set(volatile uint32_t* local_sem_addr, uint32_t value);
void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t noc = 0);
void noc_inline_dw_write(uint64_t dst_noc_addr, uint32_t value, uint8_t noc = 0);
// Blocks until *sem == value.
void noc_semaphore_wait(volatile uint32_t* local_sem_addr, uint32_t value);
// Blocks until *sem >= value ("wait-min", REFERENCE §4.8).
void noc_semaphore_wait_min(volatile uint32_t* local_sem_addr, uint32_t value);

// ---- Local L1 ----------------------------------------------------------------------------------
uint32_t l1_read_u32(uint32_t local_l1_addr);
void l1_write_u32(uint32_t local_l1_addr, uint32_t value);
void l1_copy(uint32_t dst_local_l1_addr, uint32_t src_local_l1_addr, uint32_t size_bytes);
// Copies bytes between L1 and the kernel's own stack (packet headers, small structs).
void l1_read_bytes(uint32_t local_l1_addr, void* dst, uint32_t size_bytes);
void l1_write_bytes(uint32_t local_l1_addr, const void* src, uint32_t size_bytes);

// ---- Circular buffers (per core, shared by the core's kernels) -------------------------------
void cb_reserve_back(int32_t cb_id, int32_t num_pages);
void cb_push_back(int32_t cb_id, int32_t num_pages);
void cb_wait_front(int32_t cb_id, int32_t num_pages);
void cb_pop_front(int32_t cb_id, int32_t num_pages);
bool cb_pages_reservable_at_back(int32_t cb_id, int32_t num_pages);
bool cb_pages_available_at_front(int32_t cb_id, int32_t num_pages);
uint32_t get_write_ptr(uint32_t cb_id);
uint32_t get_read_ptr(uint32_t cb_id);
uint32_t get_cb_page_size(uint32_t cb_id);

// ---- Ethernet (ERISC kernels) -----------------------------------------------------------------
// Queues a send of `size_bytes` (a multiple of 16) from this ERISC's L1 to the peer ERISC's L1
// across this core's link; non-blocking and in order (REFERENCE §1.4).
void eth_send_bytes(uint32_t src_local_l1_addr, uint32_t dst_remote_l1_addr, uint32_t size_bytes);
bool eth_txq_is_busy();
// The base firmware's periodic slice of the core (REFERENCE §1.4); costs time on hardware.
void run_routing();

// ---- Polling and time ----------------------------------------------------------------------------
// What may end a wait_for_activity(): the events of this core a polling kernel acts on.
enum WakeOn : uint32_t {
  WAKE_ON_L1_WRITE = 1u << 0,            // a write to this core's L1 (to a watched word, see below)
  WAKE_ON_NOC_READS_DONE = 1u << 1,      // noc_reads_done() turns true
  WAKE_ON_NOC_WRITES_DONE = 1u << 2,     // noc_writes_done() turns true
  WAKE_ON_NOC_WRITES_FLUSHED = 1u << 3,  // noc_nonposted_writes_flushed() turns true
  WAKE_ON_NOC_ATOMICS_DONE = 1u << 4,    // every atomic of this core is acked
  WAKE_ON_CB_CHANGE = 1u << 5,           // cb_push_back / cb_pop_front by another kernel of this core
  WAKE_ON_TXQ_READY = 1u << 6,           // eth_txq_is_busy() turns false (ERISC)
  WAKE_ON_L1_WRITE_SECONDARY = 1u << 7,  // a write to a word watched as secondary (see below)
  WAKE_ON_NOC_TRID_SENT = 1u << 8,       // ..._with_transaction_id_sent() turns true for some trid
  WAKE_ON_ANY = (1u << 9) - 1u,
};
// See the rules above: park until one of the `wake_on` events happens on this core (at once if
// one happened since the previous return). Returns the device cycles spent parked: the time
// in which the kernel, on hardware, would have run idle passes of its loop (0 on hardware,
// where the call does not park). A kernel whose loop counts passes (a router's sender-channel
// alternation, its run_routing() interval) adds the passes that fit in that time.
uint32_t wait_for_activity(uint32_t wake_on);
// wait_for_activity(WAKE_ON_ANY).
void wait_for_l1_activity();
// A watched word some of whose values are not news to a parked kernel: those v with
// (v - base) mod 2^32 <= limit.
struct QuietWord {
  uint32_t address;  // 4-byte aligned, in this core's L1
  uint32_t base;
  uint32_t limit;
};
// A polling loop begins a round of passes that together read every word and flag it acts on
// (one pass per sender channel, say). If the round finds nothing to do and ends in a
// wait_for_activity_hinted() with `since_poll_mark`, only activity from this call on is news to
// that wait: what came before (events while the kernel spent time in earlier passes), the
// round has seen. A simulator hint; a no-op on hardware.
void l1_activity_poll_mark();
// Hints for one wait (see wait_for_activity_hinted()).
struct WaitHints {
  // In the first `quiet_cycles` device cycles of the park, a write that lies inside one of these
  // words (at most 4) and leaves it holding a quiet value does not end the wait: for a word whose
  // value, within that window, cannot change what the kernel's next passes do (a router's
  // packets_written while the channel cannot send anyway: only its overrun check reads the
  // value then), up to the time at which a wake-up's idle passes would matter for another reason
  // (the run_routing() interval of a loop that counts them).
  const QuietWord* quiet_words;
  uint32_t quiet_word_count;
  uint32_t quiet_cycles;
  // Only activity since l1_activity_poll_mark() ends the wait at once (see there).
  bool since_poll_mark;
};
// wait_for_activity() with simulator hints (on hardware the same call): each is a promise the
// kernel makes that the wake-ups it removes would have found nothing to do.
uint32_t wait_for_activity_hinted(uint32_t wake_on, const WaitHints& hints);
// Declares that this kernel acts only on writes to its watched L1 ranges: from the first call
// on, a write to this core's L1 that overlaps no watched range does not end its waits (data
// landing in a slot whose arrival a counter or sync word announces, another kernel's buffers).
// A simulator hint that saves wake-ups; a no-op on hardware.
void l1_activity_watch_range(uint32_t begin, uint32_t end);
// Words the kernel reads only in some states (a router's downstream credit, read only while a
// packet waits for a downstream slot): from the first watch call on, a write to them is
// WAKE_ON_L1_WRITE_SECONDARY activity, which wakes the kernel only when it asks for it.
void l1_activity_watch_range_secondary(uint32_t begin, uint32_t end);
// The opposite hint: writes landing entirely inside [begin, end) never wake this kernel (a
// kernel that acts on most of its L1 but not on its packet slots). Also a no-op on hardware.
void l1_activity_ignore_range(uint32_t begin, uint32_t end);
// Spends `cycles` of core time (the cost of work the simulator does not model instruction by
// instruction, e.g. a reduction's arithmetic).
void spend_cycles(uint32_t cycles);
// Device time in cycles (tt-metal's wall clock read on the core; used by profiling kernels).
uint64_t read_device_cycles();

// ---- Additions for the kernels in kernels/ (declarations only; signatures above unchanged) ----

// Runtime args as a read-only array: element i is get_arg_val_u32(i), valid for
// i < get_num_args(). The command interpreter hands its command streams to the stream reader
// in place through it. Runtime args are written before launch and never change while the
// kernel runs, so this is not an L1 access in the sense of the rules above; on hardware it is
// `(const uint32_t*)get_arg_addr(arg_index)`, in the simulator a pointer into the args copy.
const uint32_t* get_arg_ptr(int arg_index);

// NoC address of `bank_address_offset` in interleaved bank `bank_id` (tt-metal's
// get_noc_addr_from_bank_id<DRAM>): the bank -> core table and the per-bank offset live in
// firmware on hardware and in the chip model in the simulator. NoC0 coordinates.
uint64_t get_bank_noc_addr(bool dram, uint32_t bank_id, uint32_t bank_address_offset, uint8_t noc = 0);
template <bool DRAM>
inline uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset, uint8_t noc = 0) {
  return get_bank_noc_addr(DRAM, bank_id, bank_address_offset, noc);
}

// Non-blocking probe: every write this core issued on `noc` has left the core, so its source
// L1 may be reused (noc_async_writes_flushed() without the wait). Routers poll it so that one
// packet's flush does not stall their other channels.
bool noc_nonposted_writes_flushed(uint8_t noc = 0);

// Where a kernel is in its command stream, for hang reports and fault messages: the
// interpreter calls it when stream `stream` starts command `command_index`, whose header word
// is runtime arg `header_arg_index`, and again before each attempt to advance it (the streams
// take turns). On hardware a no-op (or a watcher waypoint).
void debug_set_current_command(uint32_t stream, uint32_t command_index, uint32_t header_arg_index);

// The interpreter calls it when stream `stream` has finished command `command_index`, so a
// trace can show each command's span exactly (the streams interleave, so the next command's
// start says nothing about when this one ended). On hardware a no-op (or a profiler zone end).
void debug_command_done(uint32_t stream, uint32_t command_index);

// Marks the end of this kernel's set-up (a legacy EDM's handshake with its peer): the profile
// entry records the time of the first call as its ready time, so a per-op data mover's launch
// cost can be measured apart from its data movement. On hardware a device profiler marker.
void profile_mark_ready();

// Ends the kernel with a reported error instead of running on with bad input (a malformed
// command stream, a packet header no router can route, ...). `code` is a
// cclmesh::api::KernelFaultCode value or one of its ranges (kernels/api/kernel_fault.hpp);
// `command_index` is the failing command's index in its stream (kFaultNoCommand if none) and
// `word_offset` the runtime-arg index of the offending word (or the code's documented detail
// value). The simulator turns it into an error naming chip, core, command index and the
// disassembled command; on hardware it is a watcher assert.
[[noreturn]] void kernel_fault(uint32_t code, uint32_t command_index, uint32_t word_offset);

// The CB and TX-queue wake-ups exist because those states are L1 words and registers on
// hardware: a cb_push_back / cb_pop_front by another kernel on this core, and an ERISC's TX
// queue getting room (a router with an acknowledgement to send waits for it).

// L1 address of per-program semaphore `semaphore_id` on any core of kind `type` in this
// program (tt-metal's get_semaphore<ProgrammableCoreType::TENSIX>(id) called on an ERISC, and
// the reverse): per-program semaphores sit at the same address on every core of one kind, so a
// legacy EDM can signal its workers' semaphores and they its own from ids alone.
enum class ProgrammableCoreType : uint8_t { TENSIX = 0, ACTIVE_ETH = 1 };
uint32_t get_semaphore_on_core_type(ProgrammableCoreType type, uint32_t semaphore_id);
template <ProgrammableCoreType type>
inline uint32_t get_semaphore(uint32_t semaphore_id) {
  return get_semaphore_on_core_type(type, semaphore_id);
}
