// Memory regions: lazy pages, released ranges, bounds checks, timing-only storage, and word watches.
#include "sim/model/memory_region.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "sim/engine/check.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/process.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::Log;
using testing::pattern;

MemoryId l1_id() { return MemoryId{3, {4, 5}, MemoryKind::TensixL1, -1}; }

// Runs body(listener) in a fiber named `name`, after attaching that fiber's listener (of the
// same name) to `memory`'s activity: a poller, as a router or interpreter kernel polls its L1.
template <class Body>
void spawn_listening_fiber(Engine& engine, MemoryRegion& memory, const char* name, Body body) {
  engine.spawn_fiber(name, [&memory, name, body] {
    ActivityListener listener(name);
    memory.activity().attach(listener);
    body(listener);
  });
}

TEST(MemoryRegion, PagesAreAllocatedOnlyWhenWritten) {
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, std::uint64_t{2} << 30, StorageMode::Stored);
  EXPECT_EQ(dram.resident_pages(), 0u);
  EXPECT_EQ(dram.read_u32(0x7fff'fffc), 0u);  // untouched memory reads as zero, allocates nothing
  const auto data = pattern(10000, 4);
  dram.write(0x4000'0ff0, data);  // spans 4 pages
  EXPECT_EQ(dram.resident_pages(), 4u);
  EXPECT_EQ(dram.read(0x4000'0ff0, 10000), data);
  dram.fill(0x1000'0000, 8192, 0);  // zeros into untouched pages need no storage
  EXPECT_EQ(dram.resident_pages(), 4u);
  dram.fill(0x4000'0ff0, 16, 0xab);
  EXPECT_EQ(dram.read(0x4000'0ff0, 1)[0], 0xab);
}

// Small pages (a timing-only ERISC L1's) store only what is written, one small page per
// scattered word, and read exactly as 4 KiB pages do: unwritten bytes as zero, writes that
// cross page boundaries, overlapping writes (the later bytes win), fills and atomics.
TEST(MemoryRegion, SmallPagesStoreOnlyTheWordsWritten) {
  MemoryRegion erisc(MemoryId{0, {9, 0}, MemoryKind::EriscL1, -1}, 256 * 1024, StorageMode::Stored, 256);
  EXPECT_EQ(erisc.page_bytes(), 256u);
  EXPECT_EQ(erisc.page_count(), 1024u);
  EXPECT_EQ(erisc.read_u32(0x1000), 0u);
  EXPECT_EQ(erisc.read(0x0ff0, 600), std::vector<std::uint8_t>(600, 0));  // unwritten, across pages
  for (std::uint64_t slot = 0; slot < 8; ++slot) erisc.write_u32(0x10000 + slot * 4128, 0x5a5a0000u + slot);
  EXPECT_EQ(erisc.resident_pages(), 8u);  // one 256 B page per word, where 4 KiB pages need as many
  for (std::uint64_t slot = 0; slot < 8; ++slot) EXPECT_EQ(erisc.read_u32(0x10000 + slot * 4128), 0x5a5a0000u + slot);
  EXPECT_EQ(erisc.read_u32(0x10004), 0u);  // the rest of a written page still reads as zero
  // The one page table a direct reader may keep: a slot per page, set only where written.
  const MemoryRegion::Page* slots = erisc.page_slots();
  ASSERT_NE(slots, nullptr);
  EXPECT_NE(slots[0x10000 / 256].get(), nullptr);
  EXPECT_EQ(slots[0x10000 / 256 + 1].get(), nullptr);
  std::uint32_t word = 0;
  std::memcpy(&word, slots[(0x10000 + 4128) / 256].get() + (0x10000 + 4128) % 256, sizeof word);
  EXPECT_EQ(word, 0x5a5a0001u);
}

// Bulk accesses step over runs of pages never written (by the tables' residency bits, 64 pages
// a step): they must stop at the first written page, whether it sits at either end of a bit
// word, in a table after one with no page written, or on the region's last page, and never
// make an absent page resident for zeros.
TEST(MemoryRegion, BulkAccessesStopAtEveryWrittenPageAcrossTablesAndBitWords) {
  constexpr std::uint64_t kPage = 64;
  constexpr std::uint64_t kPages = 3 * MemoryRegion::kPagesPerTable + 100;  // the last table partial
  constexpr std::uint64_t kBytes = kPages * kPage;
  MemoryRegion region(l1_id(), kBytes, StorageMode::Stored, kPage);
  std::vector<std::uint8_t> reference(kBytes, 0);
  // After page 2 the next is 64, the start of the next bit word; 127 and 1023 end a word (1023
  // the first table); the second table has none; 2053 and 3071 are in the third; the region's
  // last page is in the fourth.
  const std::uint64_t written_pages[] = {2, 64, 127, 1023, 2053, 3071, kPages - 1};
  std::uint32_t value = 0x11223344u;
  for (const std::uint64_t page : written_pages) {
    const std::uint64_t at = page * kPage + 8;
    region.write_u32(at, value);
    std::memcpy(reference.data() + at, &value, sizeof value);
    value += 0x01010101u;
  }
  const std::size_t resident = region.resident_pages();
  EXPECT_EQ(resident, std::size(written_pages));
  EXPECT_EQ(region.read(0, kBytes), reference);
  // Payloads sampled from every written page's neighbourhood and across the whole region land
  // the bytes a read gives; only the written pages' blocks are copied.
  for (const std::uint64_t from : {std::uint64_t{0}, std::uint64_t{65 * kPage}, std::uint64_t{1024 * kPage + 4}}) {
    const std::uint64_t bytes = kBytes - from;
    const PayloadBuffer payload = region.sample(from, static_cast<std::uint32_t>(bytes));
    std::size_t zero_bytes = 0;
    for (const auto& [offset, length] : payload.zero_runs()) zero_bytes += length;
    std::size_t written_after = 0;
    for (const std::uint64_t page : written_pages) written_after += page * kPage >= from ? 1 : 0;
    EXPECT_EQ(zero_bytes, bytes - written_after * MemoryRegion::kZeroBlockBytes) << "sampled from " << from;
    MemoryRegion target(l1_id(), kBytes, StorageMode::Stored, kPage);
    target.land(from, payload, static_cast<std::uint32_t>(bytes));
    EXPECT_EQ(target.read(from, bytes), region.read(from, bytes)) << "sampled from " << from;
    EXPECT_EQ(target.resident_pages(), written_after) << "sampled from " << from;
  }
  // Zeros over everything clear every written page and make no other page resident.
  region.fill(0, kBytes, 0);
  EXPECT_EQ(region.read(0, kBytes), std::vector<std::uint8_t>(kBytes, 0));
  EXPECT_EQ(region.resident_pages(), resident);
}

TEST(MemoryRegion, PageSlotsOnlyForARegionOfOneTableOnceWritten) {
  MemoryRegion fresh(l1_id(), 1499136, StorageMode::Stored);
  EXPECT_EQ(fresh.page_slots(), nullptr);  // no table before the first write
  fresh.write_u32(0x100, 1);
  EXPECT_NE(fresh.page_slots(), nullptr);
  MemoryRegion two_tables(l1_id(), 8 << 20, StorageMode::Stored);  // 2048 pages of 4 KiB
  two_tables.write_u32(0x100, 1);
  EXPECT_EQ(two_tables.page_slots(), nullptr);
  EXPECT_EQ(two_tables.read_u32(0x100), 1u);
}

// The same accesses on pages of 64 B, 256 B and 4 KiB read back the same bytes as a plain
// byte array given them: the page size changes the storage only.
TEST(MemoryRegion, EveryPageSizeReadsWhatAByteArrayWould) {
  constexpr std::uint64_t kBytes = 64 * 1024;
  std::vector<std::uint8_t> reference(kBytes, 0);
  std::vector<std::unique_ptr<MemoryRegion>> regions;
  for (const std::uint64_t page : {std::uint64_t{64}, std::uint64_t{256}, std::uint64_t{4096}}) {
    regions.push_back(std::make_unique<MemoryRegion>(l1_id(), kBytes, StorageMode::Stored, page));
  }
  const auto all = [&](auto&& access) {
    for (auto& region : regions) access(*region);
  };
  // Writes across several page boundaries of every size, not aligned to any.
  const auto written = pattern(5000, 11);
  all([&](MemoryRegion& r) { r.write(0x0fc3, written); });
  std::copy(written.begin(), written.end(), reference.begin() + 0x0fc3);
  // An overlapping later write wins where it overlaps.
  const auto later = pattern(700, 99);
  all([&](MemoryRegion& r) { r.write(0x1100, later); });
  std::copy(later.begin(), later.end(), reference.begin() + 0x1100);
  // A zero fill over part of it, a non-zero fill past it, a word and an atomic at page ends.
  all([&](MemoryRegion& r) { r.fill(0x13f0, 0x230, 0); });
  std::fill_n(reference.begin() + 0x13f0, 0x230, std::uint8_t{0});
  all([&](MemoryRegion& r) { r.fill(0x3ff0, 0x40, 0xcd); });
  std::fill_n(reference.begin() + 0x3ff0, 0x40, std::uint8_t{0xcd});
  all([&](MemoryRegion& r) { r.write_u32(0x80fc, 0x01020304); });
  const std::uint8_t word[4] = {0x04, 0x03, 0x02, 0x01};
  std::copy(word, word + 4, reference.begin() + 0x80fc);
  all([&](MemoryRegion& r) { EXPECT_EQ(r.atomic_add_u32(0x80fc, 0x10), 0x01020304u); });
  reference[0x80fc] = 0x14;
  for (auto& region : regions) {
    EXPECT_EQ(region->read(0, kBytes), reference) << region->page_bytes() << " B pages";
    std::vector<std::uint8_t> inline_read(300);
    region->read(0x0ff0, inline_read);
    EXPECT_TRUE(std::equal(inline_read.begin(), inline_read.end(), reference.begin() + 0x0ff0));
    // A payload sampled across pages (zero runs and bytes) lands the same bytes elsewhere.
    MemoryRegion target(l1_id(), kBytes, StorageMode::Stored, region->page_bytes());
    target.write(0x9000, pattern(6000, 5));
    target.land(0x9003, region->sample(0x0f00, 6000), 6000);
    const std::vector<std::uint8_t> sampled(reference.begin() + 0x0f00, reference.begin() + 0x0f00 + 6000);
    EXPECT_EQ(target.read(0x9003, 6000), sampled)
        << region->page_bytes() << " B pages";
  }
}

TEST(MemoryRegion, APageSizeMustBeAPowerOfTwoFromABlockToFourKiB) {
  for (const std::uint64_t page : {std::uint64_t{0}, std::uint64_t{32}, std::uint64_t{384}, std::uint64_t{8192}}) {
    EXPECT_THROW(MemoryRegion(l1_id(), 1 << 20, StorageMode::Stored, page), InvariantError) << page;
  }
}

// A sampled payload lands the same bytes as a plain read and write would, whatever mix of
// zero-filled, written and partly overwritten blocks it spans (across a page boundary, at
// offsets that are not block-aligned), and only blocks known to be zero become zero runs.
TEST(MemoryRegion, SampledPayloadsLandTheBytesTheSourceHeld) {
  MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
  MemoryRegion target(MemoryId{3, {5, 5}, MemoryKind::TensixL1, -1}, 1 << 20, StorageMode::Stored);
  source.write(0x2000, pattern(12000, 7));   // non-zero bytes over three pages
  source.fill(0x2100, 3000, 0);              // zeros over whole and partial blocks
  source.write_u32(0x2400, 0x12345678);      // one word inside the zeros
  source.atomic_add_u32(0x2800, 5);
  source.fill(0x3000, 0x40, 0xab);           // a non-zero fill
  target.write(0x10000, pattern(12000, 9));  // the target holds other bytes first
  for (const std::uint64_t at : {std::uint64_t{0x2000}, std::uint64_t{0x2013}, std::uint64_t{0x20fc}}) {
    const PayloadBuffer payload = source.sample(at, 9000);
    target.land(0x10000 + (at % 64), payload, 9000);
    EXPECT_EQ(target.read(0x10000 + (at % 64), 9000), source.read(at, 9000)) << "sampled at " << at;
  }
  // Fresh memory and zero fills are known zero: a payload from there is all zero runs.
  const PayloadBuffer zeros = source.sample(0x80000, 5000);
  ASSERT_EQ(zeros.zero_runs().size(), 1u);
  EXPECT_EQ(zeros.zero_runs()[0], (std::pair<std::size_t, std::size_t>{0, 5000}));
  // Landing zeros over written bytes clears them; a later write over them is seen.
  target.land(0x10000, zeros, 5000);
  EXPECT_EQ(target.read(0x10000, 5000), std::vector<std::uint8_t>(5000, 0));
  target.write(0x10010, pattern(100, 3));
  EXPECT_EQ(target.read(0x10010, 100), pattern(100, 3));
  const PayloadBuffer mixed = target.sample(0x10000, 5000);
  PayloadBuffer copy = mixed.clone();
  copy.materialise();
  EXPECT_TRUE(copy.zero_runs().empty());
  EXPECT_EQ(std::vector<std::uint8_t>(copy.span().begin(), copy.span().end()), target.read(0x10000, 5000));
}

// A deferred landing (a NoC write whose landing event was skipped) is applied, in place order,
// before any access after its place, and not before: a read at an earlier place sees the old
// bytes, a write in between is overwritten by a landing placed after it.
TEST(MemoryRegion, DeferredLandingsApplyInPlaceOrderWhenTheirPlacePassed) {
  Engine engine;
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
  source.write(0x0, pattern(256, 1));
  source.write(0x1000, pattern(256, 2));
  std::vector<std::uint8_t> at_3ns;
  std::vector<std::uint8_t> at_6ns;
  std::vector<std::uint8_t> at_9ns;
  engine.schedule_at(1_ns, [&] {
    ASSERT_TRUE(dram.can_defer_landings());
    const std::uint64_t second = engine.skip_event(8_ns);  // booked first, lands later
    const std::uint64_t first = engine.skip_event(5_ns);
    dram.defer_land(engine, 8_ns, second, 0x100, source.sample(0x1000, 256), 256);
    dram.defer_land(engine, 5_ns, first, 0x100, source.sample(0x0, 256), 256);
  });
  engine.schedule_at(3_ns, [&] { at_3ns = dram.read(0x100, 256); });
  engine.schedule_at(6_ns, [&] {
    at_6ns = dram.read(0x100, 256);
    dram.write_u32(0x100, 0xdeadbeef);  // between the two landings
  });
  engine.schedule_at(9_ns, [&] { at_9ns = dram.read(0x100, 256); });
  engine.run();
  EXPECT_EQ(at_3ns, std::vector<std::uint8_t>(256, 0));
  EXPECT_EQ(at_6ns, pattern(256, 1));
  EXPECT_EQ(at_9ns, pattern(256, 2));
}

// The lazy application at the picosecond: a landing deferred to (10 ns, sequence) is seen by an
// access in an event placed after it at 10 ns, not by one placed before it at 10 ns nor by one
// at 10 ns less 1 ps; two landings on the same bytes at the same time apply in sequence order
// (the later place's bytes win) even when deferred in the other order, and a landing booked
// before both but placed later (20 ns) overwrites them only at its own place. Read through
// both inline paths (a word, a span inside one page) and the spanning one.
TEST(MemoryRegion, DeferredLandingsApplyAtTheirPicosecondInSequenceOrder) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1 << 20, StorageMode::Stored);
  MemoryRegion source(MemoryId{3, {1, 1}, MemoryKind::TensixL1, -1}, 1 << 20, StorageMode::Stored);
  source.write(0x0, pattern(8192, 1));
  source.write(0x4000, pattern(8192, 2));
  source.write(0x8000, pattern(8192, 3));
  constexpr std::uint64_t kAt = 0xff0;  // the 8 KiB span crosses pages 0-2
  struct Seen {
    std::uint32_t word = 0;
    std::vector<std::uint8_t> head;   // 64 B inside the first page
    std::vector<std::uint8_t> whole;  // all 8 KiB
  };
  const auto look = [&](Seen& seen) {
    seen.word = l1.read_u32(0x1000);  // bytes 16..19 of each payload
    seen.head.resize(64);
    l1.read(kAt, std::span<std::uint8_t>(seen.head));
    seen.whole = l1.read(kAt, 8192);
  };
  Seen before_ps, same_ps_before, between, after_both, before_third, after_third;
  const SimTime t = 10_ns;
  engine.schedule_at(1_ns, [&] {
    const std::uint64_t third = engine.skip_event(20_ns);  // booked first, placed last
    engine.schedule_at(t - 1_ps, [&] { look(before_ps); });
    engine.schedule_at(t, [&] { look(same_ps_before); });
    const std::uint64_t first = engine.skip_event(t);
    engine.schedule_at(t, [&] { look(between); });
    const std::uint64_t second = engine.skip_event(t);
    engine.schedule_at(t, [&] { look(after_both); });
    engine.schedule_at(20_ns - 1_ps, [&] { look(before_third); });
    engine.schedule_at(20_ns, [&] { look(after_third); });  // scheduled after the skip: placed after it
    ASSERT_TRUE(l1.can_defer_landings());
    l1.defer_land(engine, 20_ns, third, kAt, source.sample(0x8000, 8192), 8192);
    l1.defer_land(engine, t, second, kAt, source.sample(0x4000, 8192), 8192);
    l1.defer_land(engine, t, first, kAt, source.sample(0x0, 8192), 8192);
    EXPECT_EQ(l1.deferred_landings(), 3u);
  });
  engine.run();
  const auto word_of = [](const std::vector<std::uint8_t>& bytes) {
    std::uint32_t word = 0;
    std::memcpy(&word, bytes.data() + (0x1000 - kAt), sizeof word);
    return word;
  };
  const std::vector<std::uint8_t> zeros(8192, 0);
  for (const Seen* unseen : {&before_ps, &same_ps_before}) {
    EXPECT_EQ(unseen->word, 0u);
    EXPECT_EQ(unseen->head, std::vector<std::uint8_t>(64, 0));
    EXPECT_EQ(unseen->whole, zeros);
  }
  const std::vector<std::uint8_t> payloads[] = {pattern(8192, 1), pattern(8192, 2), pattern(8192, 3)};
  const std::pair<const Seen*, int> seen_payload[] = {{&between, 0}, {&after_both, 1}, {&before_third, 1}, {&after_third, 2}};
  for (const auto& [seen, payload] : seen_payload) {
    const std::vector<std::uint8_t>& expected = payloads[payload];
    EXPECT_EQ(seen->word, word_of(expected)) << "payload " << payload + 1;
    EXPECT_EQ(seen->head, std::vector<std::uint8_t>(expected.begin(), expected.begin() + 64)) << "payload " << payload + 1;
    EXPECT_EQ(seen->whole, expected) << "payload " << payload + 1;
  }
  EXPECT_EQ(l1.deferred_landings(), 0u);
}

// Deferred landings follow the places of the engine whose events were skipped, not of
// whichever engine is current on the thread: a host read of one simulation's DRAM while another
// simulation exists (a second device, a reference run) sees the first one's state.
TEST(MemoryRegion, DeferredLandingsFollowTheEngineThatSkippedThem) {
  auto first = std::make_unique<Engine>();
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
  source.write(0x0, pattern(256, 1));
  first->schedule_at(1_ns, [&] {
    dram.defer_land(*first, 5_ns, first->skip_event(5_ns), 0x100, source.sample(0x0, 256), 256);
  });
  first->run_until(2_ns);  // the landing is still in flight
  {
    Engine second;  // current on this thread from now on, and far ahead of the first
    second.schedule_at(10_ns, [] {});
    second.run();
    EXPECT_EQ(dram.read(0x100, 256), std::vector<std::uint8_t>(256, 0)) << "landed before its place";
  }
  first->run();
  Engine third;  // current, at time zero: the first engine's landing has still happened
  EXPECT_EQ(dram.read(0x100, 256), pattern(256, 1)) << "not landed after its place";
}

// A region that nothing reads keeps only the landings in flight, not every one since the last
// read (a long run writing the same DRAM buffer over and over would otherwise hold every
// payload it ever wrote).
TEST(MemoryRegion, DeferredLandingsDoNotPileUpWhileNothingReads) {
  Engine engine;
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
  source.write(0x0, pattern(256, 1));
  std::size_t most = 0;
  for (int i = 0; i < 1000; ++i) {
    engine.schedule_at(SimTime::from_ps(i * 1000), [&, i] {
      const SimTime lands = SimTime::from_ps(i * 1000 + 2500);  // three in flight at a time
      dram.defer_land(engine, lands, engine.skip_event(lands), 0x100, source.sample(0x0, 256), 256);
      most = std::max(most, dram.deferred_landings());
    });
  }
  engine.run();
  EXPECT_LE(most, 4u);
  EXPECT_EQ(dram.read(0x100, 256), pattern(256, 1));
  EXPECT_EQ(dram.deferred_landings(), 0u);
  // A timing-only region (--no-data) keeps none at all.
  MemoryRegion discarded(MemoryId{0, {0, 0}, MemoryKind::Dram, 3}, 1 << 20, StorageMode::Discarded);
  engine.schedule_at(engine.now() + 1_ns, [&] {
    const SimTime lands = engine.now() + 5_ns;
    discarded.defer_land(engine, lands, engine.skip_event(lands), 0x100, source.sample(0x0, 256), 256);
    EXPECT_EQ(discarded.deferred_landings(), 0u);
  });
  engine.run();
}

// A host read between runs (read_buffer after a device's finish()) sees the landings whose
// place the stopped run passed, down to the order within the landing's picosecond.
TEST(MemoryRegion, AHostReadBetweenRunsSeesTheLandingsTheRunPassed) {
  for (bool stop_after_landing_place : {false, true}) {
    Engine engine;
    MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
    MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
    source.write(0x0, pattern(256, 1));
    bool stop = false;
    engine.schedule_at(1_ns, [&] {
      if (!stop_after_landing_place) engine.schedule_at(5_ns, [&] { stop = true; });  // before the landing
      dram.defer_land(engine, 5_ns, engine.skip_event(5_ns), 0x100, source.sample(0x0, 256), 256);
      if (stop_after_landing_place) engine.schedule_at(5_ns, [&] { stop = true; });  // after it
      engine.schedule_at(9_ns, [] {});
    });
    const RunResult result = engine.run_while([&] { return !stop; });
    EXPECT_EQ(result.reason, StopReason::Predicate);
    EXPECT_EQ(result.now, 5_ns);
    EXPECT_EQ(dram.read(0x100, 256), stop_after_landing_place ? pattern(256, 1) : std::vector<std::uint8_t>(256, 0));
    engine.run();
    EXPECT_EQ(dram.read(0x100, 256), pattern(256, 1));
  }
}

// The little-endian word at `offset` of `bytes`.
std::uint32_t word_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + offset, sizeof word);
  return word;
}

// release_storage: the pages wholly inside the range are dropped (the resident count goes down
// by them), an edge page the range only partly covers keeps the bytes outside the range and
// reads zeros inside it, and everything around the range reads as before.
TEST(MemoryRegion, ReleasingARangeDropsItsWholePagesAndZeroesItsEdges) {
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  const std::vector<std::uint8_t> data = pattern(0x10000, 7);  // pages 0-15
  dram.write(0x0, data);
  ASSERT_EQ(dram.resident_pages(), 16u);
  dram.release_storage(0x1800, 0xE800 - 0x1800);  // pages 2-13 whole, 1 and 14 in part
  EXPECT_EQ(dram.resident_pages(), 4u);
  std::vector<std::uint8_t> expected = data;
  std::fill(expected.begin() + 0x1800, expected.begin() + 0xE800, std::uint8_t{0});
  EXPECT_EQ(dram.read(0x0, 0x10000), expected);
  // Every read path and a sampled payload see the zeros.
  EXPECT_EQ(dram.read_u32(0x1800), 0u);
  EXPECT_EQ(dram.read_u32(0x17fc), word_at(data, 0x17fc));  // the word before the range kept
  PayloadBuffer sampled = dram.sample(0x1000, 0xE000);
  sampled.materialise();
  EXPECT_EQ(std::vector<std::uint8_t>(sampled.span().begin(), sampled.span().end()),
            std::vector<std::uint8_t>(expected.begin() + 0x1000, expected.begin() + 0xF000));
  // Written again, the range holds the new bytes in new pages.
  dram.write(0x4000, pattern(0x1000, 9));
  EXPECT_EQ(dram.resident_pages(), 5u);
  EXPECT_EQ(dram.read(0x4000, 0x1000), pattern(0x1000, 9));
}

// An edge page whose every block is known zero once its part is zeroed holds nothing worth
// keeping: it goes too, so freeing the buffers of a page one after another leaves no page.
TEST(MemoryRegion, AnEdgePageLeftAllZeroIsDropped) {
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  dram.write(0x20000, pattern(0x100, 3));
  dram.write(0x20800, pattern(0x100, 4));
  ASSERT_EQ(dram.resident_pages(), 1u);
  dram.release_storage(0x20000, 0x100);
  EXPECT_EQ(dram.resident_pages(), 1u);  // the second write's bytes are still there
  EXPECT_EQ(dram.read(0x20800, 0x100), pattern(0x100, 4));
  EXPECT_EQ(dram.read(0x20000, 0x100), std::vector<std::uint8_t>(0x100, 0));
  dram.release_storage(0x207f0, 0x120);  // from the page before into this one, past the bytes
  EXPECT_EQ(dram.resident_pages(), 0u);
  EXPECT_EQ(dram.read(0x1f000, 0x2000), std::vector<std::uint8_t>(0x2000, 0));
  // A range in pages never written, or of no bytes, changes nothing.
  dram.release_storage(0x80000, 0x10000);
  dram.release_storage(0x20000, 0);
  EXPECT_EQ(dram.resident_pages(), 0u);
}

// Buffers are 32 B aligned and the zero-block bits cover 64 B blocks: two buffers can share a
// block that neither release covers whole. Once both are given back the block's bytes are all
// zero, so the page holds nothing worth keeping and goes; while one lives, its bytes stay.
TEST(MemoryRegion, ReleasingTwoRangesThatShareABlockLeavesNoPage) {
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  dram.write(0x20000, pattern(0x20, 3));
  dram.write(0x20020, pattern(0x60, 4));  // into the next block
  dram.release_storage(0x20000, 0x20);
  EXPECT_EQ(dram.resident_pages(), 1u);
  EXPECT_EQ(dram.read(0x20020, 0x60), pattern(0x60, 4));
  EXPECT_EQ(dram.read(0x20000, 0x20), std::vector<std::uint8_t>(0x20, 0));
  dram.release_storage(0x20020, 0x60);
  EXPECT_EQ(dram.resident_pages(), 0u);
  EXPECT_EQ(dram.read(0x20000, 0x1000), std::vector<std::uint8_t>(0x1000, 0));
  // The same with the region's partial last page, whose bytes past the region's end are zero.
  MemoryRegion region(l1_id(), 0x1000 + 40, StorageMode::Stored, 256);
  region.write(0x1000, pattern(40, 5));
  region.release_storage(0x1000 + 8, 32);
  EXPECT_EQ(region.resident_pages(), 1u);
  region.release_storage(0x1000, 8);
  EXPECT_EQ(region.resident_pages(), 0u);
}

// Small pages over several page tables, a region whose last page is partial (a range up to the
// region's end takes it whole), and the direct reader's page slots set back to nullptr.
TEST(MemoryRegion, ReleasingWorksForSmallPagesAcrossTablesAndTheRegionsPartialLastPage) {
  constexpr std::uint64_t kPage = 64;
  constexpr std::uint64_t kBytes = 2 * MemoryRegion::kPagesPerTable * kPage + 40;  // 2049 pages, the last 40 B
  MemoryRegion region(l1_id(), kBytes, StorageMode::Stored, kPage);
  region.write(0x0, pattern(kBytes, 5));
  ASSERT_EQ(region.resident_pages(), 2049u);
  const std::uint64_t from = (MemoryRegion::kPagesPerTable - 2) * kPage + 8;  // into table 0's page 1022
  region.release_storage(from, kBytes - from);
  EXPECT_EQ(region.resident_pages(), 1023u);  // pages 0-1022, 1022 with its first 8 B
  std::vector<std::uint8_t> expected = pattern(kBytes, 5);
  std::fill(expected.begin() + static_cast<std::ptrdiff_t>(from), expected.end(), std::uint8_t{0});
  EXPECT_EQ(region.read(0x0, kBytes), expected);
  region.release_storage(0x0, kBytes);
  EXPECT_EQ(region.resident_pages(), 0u);
  EXPECT_EQ(region.read(0x0, kBytes), std::vector<std::uint8_t>(kBytes, 0));

  MemoryRegion l1(l1_id(), 1 << 16, StorageMode::Stored, kPage);  // one table: page slots
  l1.write(0x100, pattern(0x100, 6));
  const MemoryRegion::Page* slots = l1.page_slots();
  ASSERT_NE(slots, nullptr);
  ASSERT_NE(slots[0x100 / kPage].get(), nullptr);
  l1.release_storage(0x100, 0x100);
  EXPECT_EQ(l1.page_slots(), slots);  // the table stays where it was
  for (std::uint64_t page = 0x100 / kPage; page < 0x200 / kPage; ++page) EXPECT_EQ(slots[page].get(), nullptr);
  EXPECT_EQ(l1.read_u32(0x100), 0u);
}

// Deferred landings: those whose place has passed are applied before the release (the range
// then reads zeros, not their bytes); one still in flight lands at its place after it, as a
// write issued before a free lands on hardware.
TEST(MemoryRegion, ReleasingSettlesPassedLandingsAndKeepsThoseInFlight) {
  Engine engine;
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 2}, 1 << 20, StorageMode::Stored);
  MemoryRegion source(l1_id(), 1 << 20, StorageMode::Stored);
  source.write(0x0, pattern(0x2000, 1));
  source.write(0x4000, pattern(0x1000, 2));
  engine.schedule_at(1_ns, [&] {
    dram.defer_land(engine, 5_ns, engine.skip_event(5_ns), 0x10000, source.sample(0x0, 0x2000), 0x2000);
    dram.defer_land(engine, 50_ns, engine.skip_event(50_ns), 0x30000, source.sample(0x4000, 0x1000), 0x1000);
  });
  engine.run_until(10_ns);  // the first landed, the second in flight
  ASSERT_EQ(dram.deferred_landings(), 2u);  // not applied yet: nothing read since
  dram.release_storage(0x10000, 0x2000);
  EXPECT_EQ(dram.deferred_landings(), 1u);
  EXPECT_EQ(dram.resident_pages(), 0u);
  EXPECT_EQ(dram.read(0x10000, 0x2000), std::vector<std::uint8_t>(0x2000, 0));
  dram.release_storage(0x30000, 0x1000);  // before the second's place: it still lands
  EXPECT_EQ(dram.deferred_landings(), 1u);
  EXPECT_EQ(dram.read(0x30000, 0x1000), std::vector<std::uint8_t>(0x1000, 0));
  engine.run();
  EXPECT_EQ(dram.read(0x30000, 0x1000), pattern(0x1000, 2));
  EXPECT_EQ(dram.resident_pages(), 1u);
  EXPECT_EQ(dram.deferred_landings(), 0u);
}

// Out of range: the access error a write there gets. A timing-only region has nothing to give
// back but checks the range the same. A word a waiter watches inside the range is an internal
// error: what frees the memory must wait for its users first.
TEST(MemoryRegion, ReleasingChecksTheRangeAndRefusesAWatchedWord) {
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  EXPECT_THROW(l1.release_storage(1499136 - 8, 16), AccessError);
  MemoryRegion discarded(MemoryId{0, {0, 0}, MemoryKind::Dram, 0}, 1 << 20, StorageMode::Discarded);
  EXPECT_NO_THROW(discarded.release_storage(0x0, 1 << 20));
  EXPECT_THROW(discarded.release_storage(1 << 20, 4), AccessError);

  Engine engine;
  l1.write(0x1000, pattern(0x1000, 1));
  engine.spawn_fiber("kernel", [&] { l1.wait_word_blocking(0x1800, WordCondition::Equal, 1); });
  ASSERT_EQ(engine.run().reason, StopReason::Hang);
  EXPECT_NO_THROW(l1.release_storage(0x1000, 0x800));  // up to the watched word, not over it
  EXPECT_THROW(l1.release_storage(0x1800, 4), InvariantError);
  EXPECT_EQ(l1.read_u32(0x1800), word_at(pattern(0x1000, 1), 0x800));
}

TEST(MemoryRegion, WordsAreLittleEndianAndAtomicsWrap) {
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  l1.write_u32(0x100, 0x11223344);
  EXPECT_EQ(l1.read(0x100, 4), (std::vector<std::uint8_t>{0x44, 0x33, 0x22, 0x11}));
  l1.write_u32(0x104, 0xffff'fffe);
  EXPECT_EQ(l1.atomic_add_u32(0x104, 3), 0xffff'fffeu);
  EXPECT_EQ(l1.read_u32(0x104), 1u);
}

TEST(MemoryRegion, OutOfRangeAndMisalignedAccessesThrowAccessError) {
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  try {
    l1.write(1499136 - 8, pattern(16, 0));
    FAIL() << "expected AccessError";
  } catch (const AccessError& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulated fault at 0 ps: chip 3 core (4,5) Tensix L1: write of 16 B at address 0x16dff8 out of "
              "range (memory is 0x16e000 B)");
    EXPECT_EQ(e.details().access, AccessKind::Write);
  }
  EXPECT_THROW(l1.read(std::uint64_t{1} << 40, 1), AccessError);
  EXPECT_THROW(l1.read(8, std::numeric_limits<std::uint64_t>::max()), AccessError);  // no wrap-around
  EXPECT_THROW(l1.read_u32(2), AccessError);
  EXPECT_THROW(l1.atomic_add_u32(1499136, 1), AccessError);
  EXPECT_NO_THROW(l1.read(1499136, 0));
  MemoryRegion dram(MemoryId{1, {0, 0}, MemoryKind::Dram, 4}, 1 << 20, StorageMode::Discarded);
  try {
    dram.read(1 << 20, 4);
  } catch (const AccessError& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulated fault at 0 ps: chip 1 DRAM channel 4 (core (0,0)): read of 4 B at address 0x100000 out of "
              "range (memory is 0x100000 B)");
  }
}

TEST(MemoryRegion, DiscardedRegionsStoreNothingButStillCheckBounds) {
  MemoryRegion dram(MemoryId{0, {0, 0}, MemoryKind::Dram, 0}, std::uint64_t{2} << 30, StorageMode::Discarded);
  dram.write(0x1000, pattern(4096, 1));
  EXPECT_EQ(dram.resident_pages(), 0u);
  EXPECT_EQ(dram.read(0x1000, 4), (std::vector<std::uint8_t>{0, 0, 0, 0}));
  EXPECT_THROW(dram.write((std::uint64_t{2} << 30) - 4, pattern(8, 0)), AccessError);
}

TEST(MemoryRegion, WatchWakesWhenTheWordReachesTheValue) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  engine.spawn_fiber("waiter", [&] {
    const std::uint32_t seen = l1.wait_word_blocking(0x40, WordCondition::AtLeast, 3);
    log.add(fmt::format("at least 3 (saw {})", seen));
  });
  auto waiter = [](MemoryRegion& memory, Log& log) -> Process<> {
    co_await memory.wait_word(0x40, WordCondition::Equal, 2);
    log.add("exactly 2");
  };
  engine.spawn(waiter(l1, log), "process");
  auto bumper = [](MemoryRegion& memory) -> Process<> {
    for (int i = 0; i < 4; ++i) {
      co_await delay(10_ns);
      memory.atomic_add_u32(0x40, 1);
    }
  };
  engine.spawn(bumper(l1), "bumper");
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{20_ns, "exactly 2"}, {30_ns, "at least 3 (saw 3)"}}));
  EXPECT_EQ(l1.watcher_count(), 0u);
}

TEST(MemoryRegion, BulkWritesAndFillsTouchingAWordWakeItsWatchers) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  engine.spawn_fiber("w1", [&] {
    l1.wait_word_blocking(0x88, WordCondition::Equal, 0x0d0c0b0a);
    log.add("write");
  });
  engine.spawn_fiber("w2", [&] {
    l1.wait_word_blocking(0x200, WordCondition::Equal, 0x01010101);
    log.add("fill");
  });
  engine.schedule_at(5_ns, [&] {
    std::vector<std::uint8_t> bytes(16);
    for (int i = 0; i < 16; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i + 2);
    l1.write(0x80, bytes);  // bytes 8..11 of this write are the watched word
  });
  engine.schedule_at(7_ns, [&] { l1.fill(0x1f0, 0x20, 1); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{5_ns, "write"}, {7_ns, "fill"}}));
}

TEST(MemoryRegion, UnsatisfiedWatchIsReportedInTheHangReport) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  engine.spawn_fiber("kernel", [&] { l1.wait_word_blocking(0x1000, WordCondition::AtLeast, 4); });
  engine.schedule_at(1_ns, [&] { l1.write_u32(0x1000, 2); });
  const RunResult result = engine.run();
  ASSERT_EQ(result.reason, StopReason::Hang);
  EXPECT_EQ(result.hang->parked.at(0).waiting_for, "chip 3 core (4,5) Tensix L1 word 0x1000 to be >= 4 (now 2)");
}

TEST(MemoryRegion, DestroyedWaiterLeavesNoDanglingWatch) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  {
    Engine inner;
    auto waiter = [](MemoryRegion& memory) -> Process<> { co_await memory.wait_word(0x10, WordCondition::Equal, 1); };
    inner.spawn(waiter(l1), "waiter");
    inner.run();
    EXPECT_EQ(l1.watcher_count(), 1u);
  }  // the engine destroys the parked process, which unlinks its watch
  EXPECT_EQ(l1.watcher_count(), 0u);
  l1.write_u32(0x10, 1);  // must not touch freed memory
}

TEST(MemoryRegion, ActivityListenerSeesEveryWrite) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
    listener.wait_blocking(kAnyActivity);
    log.add("woken");
  });
  engine.schedule_at(3_ns, [&] { l1.write_u32(0x500, 9); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{3_ns, "woken"}}));
}

// A poller busy elsewhere must be able to tell that activity happened meanwhile (the
// lost-wake-up trap of wait_for_l1_activity): writes with no waiter stay pending, and the next
// wait for them returns at once.
TEST(MemoryRegion, ActivityWithoutWaitersStaysPendingUntilTheNextWait) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  ActivityListener listener("poller");
  l1.activity().attach(listener);
  const std::uint64_t before = l1.activity().events();
  l1.write_u32(0x500, 9);
  l1.fill(0x600, 16, 1);
  EXPECT_EQ(l1.activity().events(), before + 2);
  EXPECT_EQ(listener.pending(), activity_bit(ActivityKind::L1Write));
  Log log;
  engine.spawn_fiber("poller", [&] {
    listener.wait_blocking(kAnyActivity);  // returns at once: a write is pending
    log.add("first");
    listener.wait_blocking(kAnyActivity);  // parks: nothing new
    log.add("second");
  });
  engine.schedule_at(5_ns, [&] { l1.write_u32(0x500, 10); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{0_ns, "first"}, {5_ns, "second"}}));
}

TEST(MemoryRegion, WritesOutsideWatchedRangesDoNotWakeButStillReachWordWatches) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  bool word_seen = false;
  spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
    listener.watch(0x1000, 0x1010);
    listener.watch(0x3000, 0x3004);
    listener.wait_blocking(kAnyActivity);
    log.add("woken");
  });
  engine.spawn(
      [](MemoryRegion& r, bool& flag) -> Process<> {
        co_await r.wait_word(0x2000, WordCondition::Equal, 5);
        flag = true;
      }(l1, word_seen),
      "watcher");
  engine.schedule_at(1_ns, [&] { l1.fill(0x1010, 0x1000, 7); });   // just past the first range
  engine.schedule_at(2_ns, [&] { l1.write_u32(0x2000, 5); });      // unwatched: only the word watch
  engine.schedule_at(3_ns, [&] { l1.write_u32(0x2ffc, 1); });      // just before the second range
  engine.schedule_at(4_ns, [&] { l1.fill(0x0ff0, 0x14, 1); });     // overlaps the first range's first word
  engine.run();
  EXPECT_TRUE(word_seen);
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{4_ns, "woken"}}));
}

TEST(MemoryRegion, WritesEntirelyInsideAnIgnoredRangeDoNotWake) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
    listener.ignore(0x1000, 0x2000);
    listener.wait_blocking(kAnyActivity);
    log.add("woken");
  });
  engine.schedule_at(1_ns, [&] { l1.fill(0x1000, 0x1000, 7); });  // the whole range
  engine.schedule_at(2_ns, [&] { l1.write_u32(0x1ffc, 1); });     // its last word
  engine.schedule_at(3_ns, [&] { l1.fill(0x1ff0, 0x20, 0); });    // runs past its end
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{3_ns, "woken"}}));
}

// A quiet word (a router's packets_written while its channel cannot send): while parked, a
// write inside it that leaves a value in the quiet window does not wake; one that leaves a value
// outside (an overrun), one that also touches another watched word, one after the quiet window
// (1 GHz clock: 10 cycles = 10 ns) and any write once the wait has returned all do.
TEST(MemoryRegion, QuietWordsDoNotWakeAParkedListenerWithinTheirValuesAndWindow) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
    listener.watch(0x1000, 0x1010);
    const auto park_quietly = [&](const char* what) {
      listener.quiet_word(0x1008, 100, 4);  // 100 .. 104 are not news
      listener.set_quiet_window(10, 1'000'000'000);
      listener.wait_blocking(activity_bit(ActivityKind::L1Write));
      log.add(what);
    };
    park_quietly("overrun");      // 1 ns: 102 is quiet; 2 ns: 105 is not
    park_quietly("two words");    // 3 ns: 103 quiet; 4 ns: a write over 0x1004 .. 0x100c is not
    park_quietly("window over");  // parked at 4 ns: 104 at 5 ns quiet, 101 at 14 ns (10 cycles on) not
    listener.wait_blocking(activity_bit(ActivityKind::L1Write));  // returned: nothing quiet now
    log.add("plain");
  });
  engine.schedule_at(1_ns, [&] { l1.write_u32(0x1008, 102); });
  engine.schedule_at(2_ns, [&] { l1.write_u32(0x1008, 105); });
  engine.schedule_at(3_ns, [&] { l1.write_u32(0x1008, 103); });
  engine.schedule_at(4_ns, [&] {
    // 0x1004 (7) and the quiet word (103, a quiet value), little-endian.
    const std::uint8_t bytes[8] = {7, 0, 0, 0, 103, 0, 0, 0};
    l1.write(0x1004, bytes);
  });
  engine.schedule_at(5_ns, [&] { l1.write_u32(0x1008, 104); });
  engine.schedule_at(13_ns + 999_ps, [&] { l1.write_u32(0x1008, 101); });  // cycle 13: 9 after the park
  engine.schedule_at(14_ns, [&] { l1.write_u32(0x1008, 101); });
  engine.schedule_at(16_ns, [&] { l1.write_u32(0x1008, 102); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{
                             {2_ns, "overrun"}, {4_ns, "two words"}, {14_ns, "window over"}, {16_ns, "plain"}}));
}

// A poll mark (the start of a router's round of idle passes): a wait that asks treats only
// activity after the mark as news; a plain wait, or one after the mark was used up by a return,
// still sees everything since the last return.
TEST(MemoryRegion, APollMarkMakesOnlyLaterActivityNewsToAWaitThatAsks) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
    const ActivityMask writes = activity_bit(ActivityKind::L1Write);
    block_on(delay(2_ns));  // the 1 ns write lands meanwhile
    listener.mark_poll();
    listener.wait_blocking(writes, true);  // parks: the 1 ns write came before the mark
    log.add("marked");
    block_on(delay(2_ns));                  // to 7 ns: the 6 ns write lands meanwhile
    listener.wait_blocking(writes, false);  // at once: a plain wait sees it
    log.add("plain");
    listener.mark_poll();
    block_on(delay(2_ns));                 // to 9 ns: the 8 ns write lands after the mark
    listener.wait_blocking(writes, true);  // at once
    log.add("after the mark");
    block_on(delay(2_ns));                 // to 11 ns: the 10 ns write lands, no mark since the return
    listener.wait_blocking(writes, true);  // at once
    log.add("no mark");
  });
  for (const SimTime at : {1_ns, 5_ns, 6_ns, 8_ns, 10_ns}) {
    engine.schedule_at(at, [&] { l1.write_u32(0x500, 1); });
  }
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{
                             {5_ns, "marked"}, {7_ns, "plain"}, {9_ns, "after the mark"}, {11_ns, "no mark"}}));
}

TEST(MemoryRegion, AParkedListenerWakesOnlyForTheKindsItWaitsFor) {
  Engine engine;
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  Log log;
  spawn_listening_fiber(engine, l1, "router", [&](ActivityListener& listener) {
    listener.watch(0x100, 0x110);
    listener.wait_blocking(activity_bit(ActivityKind::L1Write) | activity_bit(ActivityKind::NocWritesFlushed));
    log.add("flushed");
    listener.wait_blocking(activity_bit(ActivityKind::L1Write));
    log.add("word");
  });
  engine.schedule_at(1_ns, [&] { l1.activity().notify(ActivityKind::TxqReady); });
  engine.schedule_at(2_ns, [&] { l1.activity().notify(ActivityKind::NocWritesAcked); });
  engine.schedule_at(3_ns, [&] { l1.activity().notify(ActivityKind::NocWritesFlushed); });
  engine.schedule_at(4_ns, [&] { l1.activity().notify(ActivityKind::NocWritesFlushed); });  // not waited for now
  engine.schedule_at(5_ns, [&] { l1.write_u32(0x104, 1); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{3_ns, "flushed"}, {5_ns, "word"}}));
}

TEST(MemoryRegion, AListenerTornDownParkedDetachesItself) {
  MemoryRegion l1(l1_id(), 1499136, StorageMode::Stored);
  {
    Engine engine;
    spawn_listening_fiber(engine, l1, "poller", [&](ActivityListener& listener) {
      listener.wait_blocking(kAnyActivity);
    });
    engine.run();
    EXPECT_EQ(l1.activity().listeners(), 1u);
  }  // the engine destroys the parked fiber, whose listener detaches
  EXPECT_EQ(l1.activity().listeners(), 0u);
  l1.write_u32(0x10, 1);  // must not touch freed memory
}

}  // namespace
}  // namespace cclmesh::sim
