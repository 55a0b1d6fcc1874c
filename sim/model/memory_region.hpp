#pragma once
// A simulated memory (a Tensix L1, an ERISC L1, a DRAM channel) holding real bytes.
//
// Storage is lazy, in pages behind a two-level table, so a 32-chip mesh costs memory only for
// the pages a run touches; untouched bytes read as zero. A page is 4 KiB unless the owner asks
// for a smaller one (a power of two, down to kZeroBlockBytes): a memory that holds only a few
// scattered words (a timing-only run's ERISC L1: slot headers and flags, no payload) then
// keeps a few small pages rather than one 4 KiB page per word. The page size changes no byte
// a reader sees, only the storage and the host time a bulk access spends per page. A Discarded region (timing-only
// runs) stores nothing and reads as zero, but every access is still bounds-checked. Any access
// outside [0, size) throws AccessError naming chip, core, memory, address and size.
//
// A range can be given back (release_storage, when the device frees the buffer there): its
// pages are dropped, so a long-lived device's storage is bounded by its live buffers, not by
// every byte ever written. The range then reads as zeros. Real hardware would read the stale
// bytes, but no program may rely on them: a fresh simulated buffer reading zeros is the honest
// lazy model, as for memory never written.
//
// A 32-bit word can be watched: a process or fiber parks until the word equals, or reaches at
// least, a value (tt-metal noc_semaphore_wait / noc_semaphore_wait_min). Every write, fill or
// atomic that touches the word re-checks its watchers and schedules the satisfied ones; only
// the scheduler resumes them.

#include <array>
#include <coroutine>
#include <cstring>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/l1_activity.hpp"
#include "sim/model/payload_buffer.hpp"
#include "sim/model/sim_fault.hpp"

namespace cclmesh::sim {

class Engine;

enum class StorageMode : std::uint8_t { Stored, Discarded };

// How a watched word is compared (unsigned 32-bit).
enum class WordCondition : std::uint8_t { Equal, AtLeast };

struct MemoryId {
  ChipId chip = 0;
  CoreCoord core;           // for DRAM: the channel's first NoC endpoint
  MemoryKind kind = MemoryKind::TensixL1;
  std::int32_t unit = -1;   // DRAM channel index; -1 for L1
};

class MemoryRegion;

class WordWait final : public WaitTarget {
 public:
  WordWait(MemoryRegion& region, std::uint64_t address, WordCondition condition, std::uint32_t value);
  WordWait(const WordWait&) = delete;
  WordWait& operator=(const WordWait&) = delete;

  bool await_ready() const;
  void await_suspend(std::coroutine_handle<>);
  // The word's value when the waiter resumes.
  std::uint32_t await_resume() const;

  bool satisfied_by(std::uint32_t word) const {
    return condition_ == WordCondition::Equal ? word == value_ : word >= value_;
  }
  std::string describe_wait(std::int64_t) const override;

 private:
  friend class MemoryRegion;
  struct Record : WaitRecord {
    const WordWait* wait = nullptr;
  };
  MemoryRegion& region_;
  std::uint64_t address_;
  WordCondition condition_;
  std::uint32_t value_;
  Record record_;
};

class MemoryRegion {
 public:
  static constexpr std::uint64_t kLargestPageBytes = 4096;
  static constexpr std::uint64_t kZeroBlockBytes = 64;
  static constexpr std::uint64_t kPagesPerTable = 1024;

  // `page_bytes`: a power of two in [kZeroBlockBytes, kLargestPageBytes].
  MemoryRegion(MemoryId id, std::uint64_t size_bytes, StorageMode mode, std::uint64_t page_bytes = kLargestPageBytes);
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  const MemoryId& id() const { return id_; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  StorageMode mode() const { return mode_; }
  bool stores_data() const { return mode_ == StorageMode::Stored; }
  std::string name() const;  // "chip 0 core (1,1) Tensix L1"
  std::uint64_t page_bytes() const { return std::uint64_t{1} << page_shift_; }
  unsigned page_shift() const { return page_shift_; }
  std::uint64_t page_count() const { return page_count_; }

  // Throws AccessError unless [address, address + bytes) lies inside the region (and, for word
  // accesses, `address` is 4-byte aligned).
  void check(std::uint64_t address, std::uint64_t bytes, AccessKind access) const;
  void check_word(std::uint64_t address, AccessKind access) const;

  // Inline fast path for what polling kernels do all the time: a read inside one page.
  void read(std::uint64_t address, std::span<std::uint8_t> out) const {
    const std::uint64_t offset = address & page_mask();
    if (mode_ == StorageMode::Stored && deferred_.empty() && in_range(address, out.size()) &&
        offset + out.size() <= page_bytes()) {
      if (const std::uint8_t* page = page_or_null(address >> page_shift_)) {
        std::memcpy(out.data(), page + offset, out.size());
      } else {
        std::memset(out.data(), 0, out.size());
      }
      return;
    }
    read_spanning(address, out);
  }
  std::vector<std::uint8_t> read(std::uint64_t address, std::uint64_t bytes) const;
  void write(std::uint64_t address, std::span<const std::uint8_t> data);
  void fill(std::uint64_t address, std::uint64_t bytes, std::uint8_t value);

  // A packet's payload read from [address, address + bytes): the bytes of blocks known to be
  // zero are recorded as zero runs, not copied. Every region keeps, per resident page, one bit
  // per kZeroBlockBytes block that is set only while the block is all zero (set by zero fills
  // and fresh pages, cleared by any other write), so stored bytes never depend on it.
  PayloadBuffer sample(std::uint64_t address, std::uint32_t bytes) const;
  // Lands a sampled payload at [address, address + bytes) (an empty one as zeros): the same
  // bytes and the same one write notification as write() of its materialised bytes; zero
  // runs skip blocks that are already known zero.
  void land(std::uint64_t address, const PayloadBuffer& data, std::uint32_t bytes);

  std::uint32_t read_u32(std::uint64_t address) const {
    if (mode_ == StorageMode::Stored && deferred_.empty() && address % 4 == 0 && in_range(address, 4)) {
      const std::uint8_t* page = page_or_null(address >> page_shift_);
      std::uint32_t value = 0;
      if (page != nullptr) std::memcpy(&value, page + (address & page_mask()), sizeof value);  // little-endian
      return value;
    }
    return read_u32_checked(address);
  }
  void write_u32(std::uint64_t address, std::uint32_t value);
  // Adds with 32-bit wrap-around and returns the old value (the NoC atomic increment).
  std::uint32_t atomic_add_u32(std::uint64_t address, std::uint32_t increment);

  // `co_await region.wait_word(...)` or `block_on(region.wait_word(...))`.
  WordWait wait_word(std::uint64_t address, WordCondition condition, std::uint32_t value) {
    return WordWait{*this, address, condition, value};
  }
  std::uint32_t wait_word_blocking(std::uint64_t address, WordCondition condition, std::uint32_t value) {
    return block_on(wait_word(address, condition, value));
  }

  // Every write, fill or atomic here, and (through the core's NoC ports, its CBs and its TX
  // queue) the other events a polling kernel's wait_for_activity() may wake for.
  L1Activity& activity() { return activity_; }

  // Gives back the storage of [address, address + bytes): pages wholly inside are dropped;
  // an edge page the range only partly covers is zero-filled there (the range must read as
  // zeros whatever it was; the page's other bytes may belong to a live buffer), and dropped too
  // when that leaves it all zero (a 64 B block the range covers in part counts when its bytes
  // are all zero: two 32 B aligned buffers freed one after the other leave no page). Deferred
  // landings whose place has passed are applied first; those still in flight stay and land at
  // their place, as a write issued before a free lands on hardware. Not a write: nothing is notified. Throws AccessError for a range outside
  // the region; a watched word inside it is an internal error (what frees the memory must
  // wait for its users first). Nothing for a Discarded region.
  void release_storage(std::uint64_t address, std::uint64_t bytes);

  std::size_t resident_pages() const {
    settle();
    return resident_pages_;
  }
  using Page = std::unique_ptr<std::uint8_t[]>;
  // For a reader that looks pages up itself (the dataflow API's direct L1 reads): the page
  // slots of a region of one page table (page_count() <= kPagesPerTable), slot i holding page
  // i's storage (bytes [i * page_bytes(), + page_bytes())) once a write made it resident, else
  // nullptr (the page reads as zero). Nullptr until the first write makes the table, and for a
  // Discarded region or one of several tables. The table never moves or goes away while the
  // region lives, so the reader may keep the pointer; a slot's page may (release_storage sets
  // the slot back to nullptr), so the reader looks the slot up at each access and keeps no page
  // pointer across a host call. Writes must still go through write*(). Only for a region whose
  // landings are never deferred (an L1): the slots hold the bytes as stored, without the
  // deferred ones.
  const Page* page_slots() const {
    settle();
    return tables_.size() == 1 ? tables_[0].get() : nullptr;
  }
  std::size_t watcher_count() const;

  // A landing whose event the NoC skipped (Engine::skip_event; a DRAM write nobody can observe
  // landing): it happens at its place (`when`, `sequence`) in `engine`'s run, so every access
  // to the region first applies, in place order, the deferred landings whose place that engine
  // has passed (that engine's, not the thread's current one: a host may read one simulation
  // while another exists). Only for a region nothing watches (no word waits, no activity
  // listener): a landing there notifies nobody, so applying it late is the same as at its time.
  // A region that stores no bytes keeps nothing; one that does keeps only the landings not yet
  // passed when the next one is deferred, not every one since the last read.
  bool can_defer_landings() const;
  void defer_land(const Engine& engine, SimTime when, std::uint64_t sequence, std::uint64_t address,
                  PayloadBuffer data, std::uint32_t bytes);
  // Deferred landings not applied yet (in flight, or placed before an access that has not come).
  std::size_t deferred_landings() const { return deferred_.size(); }

 private:
  friend class WordWait;
  // kPagesPerTable pages, or fewer for the region's last table (a small region's only one).
  using PageTable = std::unique_ptr<Page[]>;

  bool in_range(std::uint64_t address, std::uint64_t bytes) const {
    return address <= size_bytes_ && bytes <= size_bytes_ - address;
  }
  std::uint64_t page_mask() const { return (std::uint64_t{1} << page_shift_) - 1; }
  const std::uint8_t* page_or_null(std::uint64_t page_index) const {
    const Page* table = tables_[page_index / kPagesPerTable].get();
    return table == nullptr ? nullptr : table[page_index % kPagesPerTable].get();
  }
  // The general cases (several pages, timing-only regions, faults).
  void read_spanning(std::uint64_t address, std::span<std::uint8_t> out) const;
  void settle() const {
    if (!deferred_.empty()) [[unlikely]] apply_deferred();
  }
  void apply_deferred() const;
  void land_now(std::uint64_t address, const PayloadBuffer& data, std::uint32_t bytes);
  void fill_now(std::uint64_t address, std::uint64_t bytes, std::uint8_t value);
  std::uint32_t read_u32_checked(std::uint64_t address) const;
  // The page's storage, made resident first if no write made it so. The look-up inline: nearly
  // every store finds its page resident, and out of line the call and its frame cost more than
  // the look-up (~40 instructions a page a store).
  std::uint8_t* page_for_write(std::uint64_t page_index) {
    if (const Page* table = tables_[page_index / kPagesPerTable].get()) [[likely]] {
      if (std::uint8_t* page = table[page_index % kPagesPerTable].get()) [[likely]] return page;
    }
    return make_resident(page_index);
  }
  std::uint8_t* make_resident(std::uint64_t page_index);
  // The page's storage freed (it reads as zero again); nothing if it is not resident.
  void drop_page(std::uint64_t page_index);
  // release_storage's part of one page, [address, address + bytes) not the whole page.
  void release_part_of_page(std::uint64_t address, std::uint64_t bytes);
  // Where the run of pages not resident that holds `at` (whose page is not) ends, at most at
  // `end`: bulk accesses step over such a run at once, not a small page at a time.
  std::uint64_t end_of_absent_pages(std::uint64_t at, std::uint64_t end) const;
  // Storage updates without checks or notification (write, fill and land share them).
  void store_bytes(std::uint64_t address, const std::uint8_t* data, std::uint64_t bytes);
  void store_zeros(std::uint64_t address, std::uint64_t bytes);
  // The zero-block bits of a resident page (one word: up to 64 blocks of 64 B), after its bytes.
  std::uint64_t zero_bits(const std::uint8_t* page) const {
    std::uint64_t bits;
    std::memcpy(&bits, page + page_bytes(), sizeof bits);
    return bits;
  }
  void set_zero_bits(std::uint8_t* page, std::uint64_t bits) const {
    std::memcpy(page + page_bytes(), &bits, sizeof bits);
  }
  // Blocks of [offset, offset + bytes) within one page: every one touched, and those wholly
  // inside (bit i: block i of the page; a smaller page uses the low bits only).
  static std::uint64_t blocks_touched(std::uint64_t offset, std::uint64_t bytes);
  static std::uint64_t blocks_inside(std::uint64_t offset, std::uint64_t bytes);
  void notify(std::uint64_t address, std::uint64_t bytes);
  void park(WordWait& wait);
  [[noreturn]] void fail(std::uint64_t address, std::uint64_t bytes, AccessKind access, std::string reason) const;

  MemoryId id_;
  std::uint64_t size_bytes_;
  StorageMode mode_;
  unsigned page_shift_;
  std::uint64_t page_count_;
  std::vector<PageTable> tables_;
  // Per table, one bit per page: set while the page is resident (from the write that makes it
  // so to the release_storage that drops it), so a bulk access finds the end of a run of absent
  // pages a word at a time. Null with its table.
  std::vector<std::unique_ptr<std::uint64_t[]>> resident_bits_;
  std::size_t resident_pages_ = 0;
  // Watched word address -> its waiters in arrival order. Ordered, so notification order is
  // deterministic.
  std::map<std::uint64_t, WaitQueue::List> watches_;
  L1Activity activity_;
  struct DeferredLanding {
    SimTime when;
    std::uint64_t sequence;
    std::uint64_t address;
    std::uint32_t bytes;
    PayloadBuffer data;
  };
  mutable std::vector<DeferredLanding> deferred_;  // ascending places
  const Engine* deferring_engine_ = nullptr;       // whose places deferred_ holds
};

}  // namespace cclmesh::sim
