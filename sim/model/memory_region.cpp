#include "sim/model/memory_region.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

WordWait::WordWait(MemoryRegion& region, std::uint64_t address, WordCondition condition, std::uint32_t value)
    : region_(region), address_(address), condition_(condition), value_(value) {
  region_.check_word(address_, AccessKind::Watch);
  record_.wait = this;
}

bool WordWait::await_ready() const { return satisfied_by(region_.read_u32(address_)); }

void WordWait::await_suspend(std::coroutine_handle<>) { region_.park(*this); }

std::uint32_t WordWait::await_resume() const { return region_.read_u32(address_); }

std::string WordWait::describe_wait(std::int64_t) const {
  return fmt::format("{} word {:#x} to be {} {} (now {})", region_.name(), address_,
                     condition_ == WordCondition::Equal ? "==" : ">=", value_, region_.read_u32(address_));
}

MemoryRegion::MemoryRegion(MemoryId id, std::uint64_t size_bytes, StorageMode mode, std::uint64_t page_bytes)
    : id_(id),
      size_bytes_(size_bytes),
      mode_(mode),
      page_shift_(static_cast<unsigned>(std::countr_zero(page_bytes))),
      page_count_(0) {
  CCLMESH_CHECK(size_bytes > 0, "a memory region needs a positive size");
  CCLMESH_CHECK(std::has_single_bit(page_bytes) && page_bytes >= kZeroBlockBytes && page_bytes <= kLargestPageBytes,
                fmt::format("a memory region's page is a power of two from {} to {} bytes, not {}", kZeroBlockBytes,
                            kLargestPageBytes, page_bytes));
  page_count_ = (size_bytes + page_bytes - 1) >> page_shift_;
  if (mode_ == StorageMode::Stored) {
    tables_.resize((page_count_ + kPagesPerTable - 1) / kPagesPerTable);
    resident_bits_.resize(tables_.size());
  }
}

std::string MemoryRegion::name() const {
  if (id_.kind == MemoryKind::Dram) return fmt::format("chip {} DRAM channel {}", id_.chip, id_.unit);
  return fmt::format("chip {} core {} {}", id_.chip, to_string(id_.core), to_string(id_.kind));
}

void MemoryRegion::fail(std::uint64_t address, std::uint64_t bytes, AccessKind access, std::string reason) const {
  AccessError::Details d;
  d.chip = id_.chip;
  d.core = id_.core;
  d.memory = id_.kind;
  d.unit = id_.unit;
  d.access = access;
  d.address = address;
  d.bytes = bytes;
  d.memory_bytes = size_bytes_;
  d.reason = std::move(reason);
  throw AccessError(fault_time_now(), std::move(d));
}

void MemoryRegion::check(std::uint64_t address, std::uint64_t bytes, AccessKind access) const {
  if (address > size_bytes_ || bytes > size_bytes_ - address) fail(address, bytes, access, "out of range");
}

void MemoryRegion::check_word(std::uint64_t address, AccessKind access) const {
  check(address, 4, access);
  if (address % 4 != 0) fail(address, 4, access, "misaligned (32-bit words need 4 B alignment)");
}

std::uint8_t* MemoryRegion::make_resident(std::uint64_t page_index) {
  const std::uint64_t table_index = page_index / kPagesPerTable;
  PageTable& table = tables_[table_index];
  // Sized to the pages it covers: an ERISC L1 of 64 pages needs 64 pointers, not 1024.
  if (!table) {
    const std::uint64_t pages = std::min(kPagesPerTable, page_count_ - table_index * kPagesPerTable);
    table = std::make_unique<Page[]>(pages);
    resident_bits_[table_index] = std::make_unique<std::uint64_t[]>((pages + 63) / 64);  // zeros: none resident
  }
  const std::uint64_t in_table = page_index % kPagesPerTable;
  Page& page = table[in_table];
  if (!page) {
    // Value-initialised: zeros, followed by the page's zero-block bits (all blocks zero).
    page = std::make_unique<std::uint8_t[]>(page_bytes() + sizeof(std::uint64_t));
    set_zero_bits(page.get(), ~std::uint64_t{0});
    resident_bits_[table_index][in_table / 64] |= std::uint64_t{1} << (in_table % 64);
    ++resident_pages_;
  }
  return page.get();
}

void MemoryRegion::drop_page(std::uint64_t page_index) {
  const std::uint64_t table_index = page_index / kPagesPerTable;
  const PageTable& table = tables_[table_index];
  if (!table) return;
  const std::uint64_t in_table = page_index % kPagesPerTable;
  Page& page = table[in_table];
  if (!page) return;
  page.reset();
  resident_bits_[table_index][in_table / 64] &= ~(std::uint64_t{1} << (in_table % 64));
  --resident_pages_;
}

void MemoryRegion::release_part_of_page(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0 || page_or_null(address >> page_shift_) == nullptr) return;
  store_zeros(address, bytes);
  std::uint8_t* page = page_for_write(address >> page_shift_);
  // store_zeros marks only the blocks the range covers whole. Buffers are 32 B aligned and the
  // blocks 64 B, so two buffers can share a block neither free covers whole: without a look at
  // its bytes, freeing both would keep the page forever. Only the range's (at most two) edge
  // blocks are looked at, and marked when all zero (a neighbour freed before, never written,
  // or past the region's end).
  std::uint64_t known_zero = zero_bits(page);
  static constexpr std::uint8_t kZeroBlock[kZeroBlockBytes] = {};
  for (std::uint64_t edges = blocks_touched(address & page_mask(), bytes) & ~known_zero; edges != 0;
       edges &= edges - 1) {
    const auto block = static_cast<unsigned>(std::countr_zero(edges));
    if (std::memcmp(page + block * kZeroBlockBytes, kZeroBlock, kZeroBlockBytes) == 0) {
      known_zero |= std::uint64_t{1} << block;
    }
  }
  set_zero_bits(page, known_zero);
  // A page of fewer than 64 blocks keeps its unused high bits set (make_resident sets them all
  // and no store touches them), so "every block known zero" is all bits set either way.
  if (known_zero == ~std::uint64_t{0}) drop_page(address >> page_shift_);
}

void MemoryRegion::release_storage(std::uint64_t address, std::uint64_t bytes) {
  settle();
  check(address, bytes, AccessKind::Write);
  if (mode_ != StorageMode::Stored || bytes == 0) return;
  const std::uint64_t end = address + bytes;
  for (auto it = watches_.lower_bound(address & ~std::uint64_t{3}); it != watches_.end() && it->first < end; ++it) {
    CCLMESH_CHECK(it->second.empty(), fmt::format("{}: storage released under a watched word at {:#x} (range {:#x}, "
                                                  "{} B)", name(), it->first, address, bytes));
  }
  // Whole pages: those from the first page boundary at or above `address` to the last at or
  // below `end` (the region's last page counts as whole when the range reaches the region's end).
  const std::uint64_t first_whole = (address + page_mask()) >> page_shift_;
  const std::uint64_t end_whole = end == size_bytes_ ? page_count_ : end >> page_shift_;
  if (end_whole <= first_whole) {  // within one page, or across one boundary with no whole page
    const std::uint64_t boundary = std::min(end, first_whole << page_shift_);
    release_part_of_page(address, boundary - address);
    release_part_of_page(boundary, end - boundary);
    return;
  }
  release_part_of_page(address, (first_whole << page_shift_) - address);
  for (std::uint64_t page = first_whole; page < end_whole;) {
    if (!tables_[page / kPagesPerTable]) {  // no page of this table is resident
      page = (page / kPagesPerTable + 1) * kPagesPerTable;
      continue;
    }
    drop_page(page);
    ++page;
  }
  const std::uint64_t tail = end_whole << page_shift_;
  if (tail < end) release_part_of_page(tail, end - tail);
}

// By the tables' residency bits, 64 pages a step: a timing-only run's payloads are mostly
// zero runs over pages never written (an ERISC L1 slot of 256 B pages, a Tensix L1 CB), and
// the walk a page at a time (two loads and a test each) was ~1% of the T3K's and ~2% of the
// TG's instructions.
std::uint64_t MemoryRegion::end_of_absent_pages(std::uint64_t at, std::uint64_t end) const {
  const std::uint64_t last_page = (end - 1) >> page_shift_;
  std::uint64_t page = (at >> page_shift_) + 1;
  while (page <= last_page) {
    const std::uint64_t table_index = page / kPagesPerTable;
    const std::uint64_t* bits = resident_bits_[table_index].get();
    if (bits == nullptr) {  // no page of this table is resident
      page = (table_index + 1) * kPagesPerTable;
      continue;
    }
    const std::uint64_t in_table = page % kPagesPerTable;
    const std::uint64_t resident_from_here = bits[in_table / 64] >> (in_table % 64);
    if (resident_from_here != 0) {
      page += static_cast<std::uint64_t>(std::countr_zero(resident_from_here));
      break;
    }
    page += 64 - in_table % 64;
  }
  return std::min(end, page << page_shift_);
}

static_assert(MemoryRegion::kLargestPageBytes / MemoryRegion::kZeroBlockBytes == 64, "one bit word per page");

std::uint64_t MemoryRegion::blocks_touched(std::uint64_t offset, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  const std::uint64_t first = offset / kZeroBlockBytes;
  const std::uint64_t last = (offset + bytes - 1) / kZeroBlockBytes;
  const std::uint64_t upto_last = last == 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (last + 1)) - 1;
  return upto_last & (~std::uint64_t{0} << first);
}

std::uint64_t MemoryRegion::blocks_inside(std::uint64_t offset, std::uint64_t bytes) {
  const std::uint64_t first = (offset + kZeroBlockBytes - 1) / kZeroBlockBytes;
  const std::uint64_t end = (offset + bytes) / kZeroBlockBytes;  // exclusive
  if (end <= first) return 0;
  const std::uint64_t below_end = end == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << end) - 1;
  return below_end & (~std::uint64_t{0} << first);
}

void MemoryRegion::store_bytes(std::uint64_t address, const std::uint8_t* data, std::uint64_t bytes) {
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at & page_mask();
    const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, bytes - done);
    std::uint8_t* page = page_for_write(at >> page_shift_);
    std::memcpy(page + offset, data + done, chunk);
    set_zero_bits(page, zero_bits(page) & ~blocks_touched(offset, chunk));
    done += chunk;
  }
}

void MemoryRegion::store_zeros(std::uint64_t address, std::uint64_t bytes) {
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at & page_mask();
    const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, bytes - done);
    // Pages never written read as zero and need no storage.
    if (page_or_null(at >> page_shift_) == nullptr) {
      done = end_of_absent_pages(at, address + bytes) - address;
      continue;
    }
    done += chunk;
    std::uint8_t* page = page_for_write(at >> page_shift_);
    const std::uint64_t known_zero = zero_bits(page);
    // Runs of blocks not known zero are cleared; known-zero ones are left alone.
    const std::uint64_t end = offset + chunk;
    for (std::uint64_t need = blocks_touched(offset, chunk) & ~known_zero; need != 0;) {
      const unsigned first = static_cast<unsigned>(__builtin_ctzll(need));
      const std::uint64_t from_first = need >> first;
      const unsigned length = from_first == ~std::uint64_t{0} >> first ? 64 - first
                                                                       : static_cast<unsigned>(__builtin_ctzll(~from_first));
      const std::uint64_t from = std::max<std::uint64_t>(offset, first * kZeroBlockBytes);
      const std::uint64_t to = std::min<std::uint64_t>(end, (first + length) * kZeroBlockBytes);
      std::memset(page + from, 0, to - from);
      need &= length + first >= 64 ? 0 : ~std::uint64_t{0} << (first + length);
    }
    set_zero_bits(page, known_zero | blocks_inside(offset, chunk));
  }
}

PayloadBuffer MemoryRegion::sample(std::uint64_t address, std::uint32_t bytes) const {
  settle();
  check(address, bytes, AccessKind::Read);
  PayloadBuffer out = PayloadBuffer::uninitialised(bytes);
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at & page_mask();
    const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, bytes - done);
    const std::uint8_t* page = mode_ == StorageMode::Stored ? page_or_null(at >> page_shift_) : nullptr;
    if (page == nullptr) {
      const std::uint64_t zeros_end =
          mode_ == StorageMode::Stored ? end_of_absent_pages(at, address + bytes) : address + bytes;
      out.add_zero_run(done, zeros_end - at);
      done = zeros_end - address;
      continue;
    }
    const std::uint64_t known_zero = zero_bits(page);
    const std::uint64_t touched = blocks_touched(offset, chunk);
    // Maximal runs of blocks of one kind: zero runs recorded, the rest copied.
    std::uint64_t pos = offset;
    const std::uint64_t end = offset + chunk;
    while (pos < end) {
      const std::uint64_t block = pos / kZeroBlockBytes;
      const bool zero = ((known_zero >> block) & 1) != 0;
      // The next touched block of the other kind ends the run.
      std::uint64_t other = (zero ? ~known_zero : known_zero) & touched;
      other &= block == 63 ? 0 : ~std::uint64_t{0} << (block + 1);
      const std::uint64_t run_end =
          other == 0 ? end : std::min<std::uint64_t>(end, static_cast<std::uint64_t>(__builtin_ctzll(other)) * kZeroBlockBytes);
      if (zero) {
        out.add_zero_run(done + (pos - offset), run_end - pos);
      } else {
        std::memcpy(out.data() + done + (pos - offset), page + pos, run_end - pos);
      }
      pos = run_end;
    }
    done += chunk;
  }
  return out;
}

bool MemoryRegion::can_defer_landings() const { return watches_.empty() && activity_.listeners() == 0; }

void MemoryRegion::defer_land(const Engine& engine, SimTime when, std::uint64_t sequence, std::uint64_t address,
                              PayloadBuffer data, std::uint32_t bytes) {
  CCLMESH_CHECK(can_defer_landings(), name() + ": a landing deferred on a watched region");
  CCLMESH_CHECK(deferring_engine_ == nullptr || deferring_engine_ == &engine,
                name() + ": landings deferred by two engines");
  check(address, bytes, AccessKind::Write);
  if (mode_ != StorageMode::Stored) return;  // a discarded landing notifies nobody here: nothing to keep
  deferring_engine_ = &engine;
  settle();  // those passed by now: the list holds the landings in flight, not all since the last read
  auto at = deferred_.end();
  while (at != deferred_.begin() && (std::prev(at)->when > when ||
                                     (std::prev(at)->when == when && std::prev(at)->sequence > sequence))) {
    --at;
  }
  deferred_.insert(at, DeferredLanding{when, sequence, address, bytes, std::move(data)});
}

// The deferred landings whose place has passed in the deferring engine's run, in place order
// (the engine runs in order, so they are a prefix).
void MemoryRegion::apply_deferred() const {
  const Engine& engine = *deferring_engine_;
  auto* self = const_cast<MemoryRegion*>(this);  // applying past landings is not a change a reader can see
  std::size_t done = 0;
  while (done < deferred_.size() && engine.has_run(deferred_[done].when, deferred_[done].sequence)) {
    const DeferredLanding& d = deferred_[done];
    self->land_now(d.address, d.data, d.bytes);
    ++done;
  }
  deferred_.erase(deferred_.begin(), deferred_.begin() + static_cast<std::ptrdiff_t>(done));
}

void MemoryRegion::land(std::uint64_t address, const PayloadBuffer& data, std::uint32_t bytes) {
  settle();
  land_now(address, data, bytes);
}

void MemoryRegion::land_now(std::uint64_t address, const PayloadBuffer& data, std::uint32_t bytes) {
  if (data.empty()) {
    fill_now(address, bytes, 0);
    return;
  }
  check(address, bytes, AccessKind::Write);
  CCLMESH_CHECK(data.size() >= bytes, "a payload lands more bytes than it carries");
  if (mode_ == StorageMode::Stored) {
    std::uint64_t pos = 0;
    for (const auto& [offset, length] : data.zero_runs()) {
      if (offset >= bytes) break;
      if (offset > pos) store_bytes(address + pos, data.data() + pos, offset - pos);
      const std::uint64_t zero_end = std::min<std::uint64_t>(offset + length, bytes);
      store_zeros(address + offset, zero_end - offset);
      pos = zero_end;
    }
    if (pos < bytes) store_bytes(address + pos, data.data() + pos, bytes - pos);
  }
  notify(address, bytes);
}

void MemoryRegion::read_spanning(std::uint64_t address, std::span<std::uint8_t> out) const {
  settle();
  check(address, out.size(), AccessKind::Read);
  if (mode_ == StorageMode::Discarded) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return;
  }
  std::uint64_t done = 0;
  while (done < out.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at & page_mask();
    const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, out.size() - done);
    const std::uint8_t* page = page_or_null(at >> page_shift_);
    if (page != nullptr) {
      std::memcpy(out.data() + done, page + offset, chunk);
    } else {
      std::memset(out.data() + done, 0, chunk);
    }
    done += chunk;
  }
}

std::vector<std::uint8_t> MemoryRegion::read(std::uint64_t address, std::uint64_t bytes) const {
  settle();
  check(address, bytes, AccessKind::Read);
  // Appended page by page: no zero fill of bytes that are copied over at once.
  std::vector<std::uint8_t> out;
  out.reserve(bytes);
  if (mode_ == StorageMode::Discarded) {
    out.resize(bytes);
    return out;
  }
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at & page_mask();
    const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, bytes - done);
    const std::uint8_t* page = page_or_null(at >> page_shift_);
    if (page != nullptr) {
      out.insert(out.end(), page + offset, page + offset + chunk);
    } else {
      out.resize(out.size() + chunk);
    }
    done += chunk;
  }
  return out;
}

void MemoryRegion::write(std::uint64_t address, std::span<const std::uint8_t> data) {
  settle();
  check(address, data.size(), AccessKind::Write);
  if (mode_ == StorageMode::Stored) store_bytes(address, data.data(), data.size());
  notify(address, data.size());
}

void MemoryRegion::fill(std::uint64_t address, std::uint64_t bytes, std::uint8_t value) {
  settle();
  fill_now(address, bytes, value);
}

void MemoryRegion::fill_now(std::uint64_t address, std::uint64_t bytes, std::uint8_t value) {
  check(address, bytes, AccessKind::Write);
  if (mode_ == StorageMode::Stored) {
    if (value == 0) {
      store_zeros(address, bytes);
    } else {
      std::uint64_t done = 0;
      while (done < bytes) {
        const std::uint64_t at = address + done;
        const std::uint64_t offset = at & page_mask();
        const std::uint64_t chunk = std::min<std::uint64_t>(page_bytes() - offset, bytes - done);
        std::uint8_t* page = page_for_write(at >> page_shift_);
        std::memset(page + offset, value, chunk);
        set_zero_bits(page, zero_bits(page) & ~blocks_touched(offset, chunk));
        done += chunk;
      }
    }
  }
  notify(address, bytes);
}

std::uint32_t MemoryRegion::read_u32_checked(std::uint64_t address) const {
  settle();
  check_word(address, AccessKind::Read);
  if (mode_ == StorageMode::Discarded) return 0;
  const std::uint8_t* page = page_or_null(address >> page_shift_);
  if (page == nullptr) return 0;
  std::uint32_t value = 0;
  std::memcpy(&value, page + (address & page_mask()), sizeof value);  // little-endian, as the RISC-V cores
  return value;
}

void MemoryRegion::write_u32(std::uint64_t address, std::uint32_t value) {
  settle();
  check_word(address, AccessKind::Write);
  if (mode_ == StorageMode::Stored) {
    std::uint8_t* page = page_for_write(address >> page_shift_);
    std::memcpy(page + (address & page_mask()), &value, sizeof value);
    set_zero_bits(page, zero_bits(page) & ~blocks_touched(address & page_mask(), sizeof value));
  }
  notify(address, 4);
}

std::uint32_t MemoryRegion::atomic_add_u32(std::uint64_t address, std::uint32_t increment) {
  settle();
  check_word(address, AccessKind::Atomic);
  std::uint32_t old = 0;
  if (mode_ == StorageMode::Stored) {
    std::uint8_t* page = page_for_write(address >> page_shift_);
    std::uint8_t* word = page + (address & page_mask());
    std::memcpy(&old, word, sizeof old);
    const std::uint32_t updated = old + increment;  // unsigned: wraps like the hardware
    std::memcpy(word, &updated, sizeof updated);
    set_zero_bits(page, zero_bits(page) & ~blocks_touched(address & page_mask(), sizeof updated));
  }
  notify(address, 4);
  return old;
}

std::size_t MemoryRegion::watcher_count() const {
  std::size_t count = 0;
  for (const auto& [address, list] : watches_) count += list.size();
  return count;
}

void MemoryRegion::park(WordWait& wait) {
  CCLMESH_CHECK(deferred_.empty(), name() + ": a word wait on a region with deferred landings");
  watches_[wait.address_].push_back(wait.record_);
  Engine& engine = Engine::current();
  wait.record_.actor = &engine.require_current_actor("wait_word");
  wait.record_.granted = false;
  engine.park_current(WaitInfo{&wait, 0, nullptr});
}

void MemoryRegion::notify(std::uint64_t address, std::uint64_t bytes) {
  activity_.notify_write(address, bytes, this);
  if (watches_.empty() || bytes == 0) return;
  auto it = watches_.lower_bound(address & ~std::uint64_t{3});
  while (it != watches_.end() && it->first < address + bytes) {
    WaitQueue::List& list = it->second;
    if (!list.empty()) {
      const std::uint32_t word = read_u32(it->first);
      for (auto record = list.begin(); record != list.end();) {
        auto& watch = static_cast<WordWait::Record&>(*record);
        if (watch.wait->satisfied_by(word)) {
          record = list.erase(record);
          watch.granted = true;
          watch.actor->engine()->wake(*watch.actor);
        } else {
          ++record;
        }
      }
    }
    // Records unlink themselves when a waiter is destroyed, so empty lists are swept here.
    it = list.empty() ? watches_.erase(it) : std::next(it);
  }
}

}  // namespace cclmesh::sim
