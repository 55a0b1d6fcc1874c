#include "sim/model/memory_region.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sim/engine/check.hpp"

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

MemoryRegion::MemoryRegion(MemoryId id, std::uint64_t size_bytes, StorageMode mode)
    : id_(id), size_bytes_(size_bytes), mode_(mode) {
  CCLMESH_CHECK(size_bytes > 0, "a memory region needs a positive size");
  const std::uint64_t pages = (size_bytes + kPageBytes - 1) / kPageBytes;
  if (mode_ == StorageMode::Stored) tables_.resize((pages + kPagesPerTable - 1) / kPagesPerTable);
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

std::uint8_t* MemoryRegion::page_for_write(std::uint64_t page_index) {
  auto& table = tables_[page_index / kPagesPerTable];
  if (!table) table = std::make_unique<PageTable>();
  Page& page = table->pages[page_index % kPagesPerTable];
  if (!page) {
    page = std::make_unique<std::uint8_t[]>(kPageBytes);  // value-initialised: zeros
    ++resident_pages_;
  }
  return page.get();
}

void MemoryRegion::read_spanning(std::uint64_t address, std::span<std::uint8_t> out) const {
  check(address, out.size(), AccessKind::Read);
  if (mode_ == StorageMode::Discarded) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return;
  }
  std::uint64_t done = 0;
  while (done < out.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at % kPageBytes;
    const std::uint64_t chunk = std::min<std::uint64_t>(kPageBytes - offset, out.size() - done);
    const std::uint8_t* page = page_or_null(at / kPageBytes);
    if (page != nullptr) {
      std::memcpy(out.data() + done, page + offset, chunk);
    } else {
      std::memset(out.data() + done, 0, chunk);
    }
    done += chunk;
  }
}

std::vector<std::uint8_t> MemoryRegion::read(std::uint64_t address, std::uint64_t bytes) const {
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
    const std::uint64_t offset = at % kPageBytes;
    const std::uint64_t chunk = std::min<std::uint64_t>(kPageBytes - offset, bytes - done);
    const std::uint8_t* page = page_or_null(at / kPageBytes);
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
  check(address, data.size(), AccessKind::Write);
  if (mode_ == StorageMode::Stored) {
    std::uint64_t done = 0;
    while (done < data.size()) {
      const std::uint64_t at = address + done;
      const std::uint64_t offset = at % kPageBytes;
      const std::uint64_t chunk = std::min<std::uint64_t>(kPageBytes - offset, data.size() - done);
      std::memcpy(page_for_write(at / kPageBytes) + offset, data.data() + done, chunk);
      done += chunk;
    }
  }
  notify(address, data.size());
}

void MemoryRegion::fill(std::uint64_t address, std::uint64_t bytes, std::uint8_t value) {
  check(address, bytes, AccessKind::Write);
  if (mode_ == StorageMode::Stored) {
    std::uint64_t done = 0;
    while (done < bytes) {
      const std::uint64_t at = address + done;
      const std::uint64_t offset = at % kPageBytes;
      const std::uint64_t chunk = std::min<std::uint64_t>(kPageBytes - offset, bytes - done);
      const std::uint64_t page_index = at / kPageBytes;
      // Zero-filling a page never written needs no storage: it already reads as zero.
      if (value != 0 || page_or_null(page_index) != nullptr) {
        std::memset(page_for_write(page_index) + offset, value, chunk);
      }
      done += chunk;
    }
  }
  notify(address, bytes);
}

std::uint32_t MemoryRegion::read_u32_checked(std::uint64_t address) const {
  check_word(address, AccessKind::Read);
  if (mode_ == StorageMode::Discarded) return 0;
  const std::uint8_t* page = page_or_null(address / kPageBytes);
  if (page == nullptr) return 0;
  std::uint32_t value = 0;
  std::memcpy(&value, page + address % kPageBytes, sizeof value);  // little-endian, as the RISC-V cores
  return value;
}

void MemoryRegion::write_u32(std::uint64_t address, std::uint32_t value) {
  check_word(address, AccessKind::Write);
  if (mode_ == StorageMode::Stored) {
    std::memcpy(page_for_write(address / kPageBytes) + address % kPageBytes, &value, sizeof value);
  }
  notify(address, 4);
}

std::uint32_t MemoryRegion::atomic_add_u32(std::uint64_t address, std::uint32_t increment) {
  check_word(address, AccessKind::Atomic);
  std::uint32_t old = 0;
  if (mode_ == StorageMode::Stored) {
    std::uint8_t* word = page_for_write(address / kPageBytes) + address % kPageBytes;
    std::memcpy(&old, word, sizeof old);
    const std::uint32_t updated = old + increment;  // unsigned: wraps like the hardware
    std::memcpy(word, &updated, sizeof updated);
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
  watches_[wait.address_].push_back(wait.record_);
  Engine& engine = Engine::current();
  wait.record_.actor = &engine.require_current_actor("wait_word");
  wait.record_.granted = false;
  engine.park_current(WaitInfo{&wait, 0, nullptr});
}

void MemoryRegion::notify(std::uint64_t address, std::uint64_t bytes) {
  activity_.notify_write(address, bytes);
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
