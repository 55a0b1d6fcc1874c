// DRAM: interleaved page placement (REFERENCE 4.10, 3.8), bytes landing in the right banks, and
// exact times of a single DRAM write and read on an idle Wormhole chip. Serialisations: 2080 B
// (2048 + header) at 28.1 B/c = 74022 ps, at 30 = 69334, at the DRAM NIU's 24.0 absorb = 86667,
// 23.2 inject = 89656; 2048 B at the channel's 43 GB/s = 47628 ps; a 32 B header at 24.0 = 1334.
#include "sim/model/dram.hpp"

#include <gtest/gtest.h>

#include "sim/engine/fiber.hpp"
#include "sim/model/chip.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::pattern;

constexpr CoreCoord kCore{1, 1};

TEST(DramBanks, WormholeHasTwelveBanksTwoPerChannel) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  ASSERT_EQ(chip.dram_bank_count(), 12);
  EXPECT_EQ(chip.dram_bank(0).channel, 0);
  EXPECT_EQ(chip.dram_bank(0).endpoint, (CoreCoord{0, 0}));
  EXPECT_EQ(chip.dram_bank(0).channel_offset, 0u);
  EXPECT_EQ(chip.dram_bank(1).channel, 0);
  EXPECT_EQ(chip.dram_bank(1).endpoint, (CoreCoord{0, 1}));
  EXPECT_EQ(chip.dram_bank(1).channel_offset, std::uint64_t{1} << 30);
  EXPECT_EQ(chip.dram_bank(11).channel, 5);
  EXPECT_EQ(chip.dram_bank(11).endpoint, (CoreCoord{5, 6}));
  // Page i -> bank i mod 12 at base + (i div 12) * page.
  EXPECT_EQ(chip.dram_page(0, 2048, 0x1000).core, (CoreCoord{0, 0}));
  EXPECT_EQ(chip.dram_page(13, 2048, 0x1000).core, (CoreCoord{0, 1}));
  EXPECT_EQ(chip.dram_page(13, 2048, 0x1000).address, (std::uint64_t{1} << 30) + 0x1000 + 2048);
  EXPECT_EQ(chip.l1_page(81, 2048, 0x8000).core, (CoreCoord{2, 1}));  // 80 banks, one per core
  EXPECT_EQ(chip.l1_page(81, 2048, 0x8000).address, 0x8000u + 2048);
}

TEST(DramBanks, BlackholeHasOneBankPerChannel) {
  Engine engine;
  Chip chip(engine, 0, testing::blackhole());
  EXPECT_EQ(chip.dram_bank_count(), 8);
  EXPECT_EQ(chip.dram_bank(7).endpoint, (CoreCoord{9, 5}));
}

TEST(DramData, InterleavedPagesLandIntactInTheirBanksAndReadBack) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  constexpr int kPages = 30;
  constexpr std::uint32_t kPage = 2048;
  const auto data = pattern(kPages * kPage, 42);
  chip.l1(kCore).write(0x10000, data);
  engine.spawn_fiber("writer", [&] {
    Noc& noc = chip.noc(NocId::Noc0);
    for (int i = 0; i < kPages; ++i) {
      noc.write(kCore, 0x10000 + i * kPage, chip.dram_page(static_cast<std::uint64_t>(i), kPage, 0x2000), kPage);
    }
    block_on(noc.write_barrier(kCore));
    Noc& back = chip.noc(NocId::Noc1);
    for (int i = 0; i < kPages; ++i) {
      back.read({3, 3}, chip.dram_page(static_cast<std::uint64_t>(i), kPage, 0x2000), 0x40000 + i * kPage, kPage);
    }
    block_on(back.read_barrier({3, 3}));
  });
  engine.run();
  // Page 25 is bank 1 (channel 0, second GiB), row 2: channel 0 at 1 GiB + 0x2000 + 2 pages.
  const std::uint64_t at = (std::uint64_t{1} << 30) + 0x2000 + 2 * kPage;
  const std::vector<std::uint8_t> page25(data.begin() + 25 * kPage, data.begin() + 26 * kPage);
  EXPECT_EQ(chip.dram_channel(0).memory().read(at, kPage), page25);
  // Page 6 is bank 6: channel 3, first GiB, row 0.
  const std::vector<std::uint8_t> page6(data.begin() + 6 * kPage, data.begin() + 7 * kPage);
  EXPECT_EQ(chip.dram_channel(3).memory().read(0x2000, kPage), page6);
  EXPECT_EQ(chip.l1({3, 3}).read(0x40000, kPages * kPage), data);
}

TEST(DramTiming, SingleWriteAndReadOnAnIdleChip) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  std::vector<SimTime> times;
  engine.spawn_fiber("kernel", [&] {
    noc.write(kCore, 0x10000, {{0, 0}, 0x100}, 2048);
    block_on(noc.writes_flushed(kCore));
    times.push_back(engine.now());
    block_on(noc.write_barrier(kCore));
    times.push_back(engine.now());
  });
  engine.spawn_fiber("reader", [&] {
    noc.read({2, 2}, {{5, 0}, 0x100000}, 0x10000, 2048);  // channel 2: no path or server shared
    block_on(noc.read_barrier({2, 2}));
    times.push_back(engine.now());
  });
  engine.run();
  // Write (1,1) -> DRAM (0,0): 9 + 11 = 20 hops. Inject 40..114.022; links carry the tail at
  // the NIU rate: +5 +180 +5 -> head 230, tail 304.022; the DRAM NIU absorbs at 24.0 B/c:
  // 230 + 86.667 = 316.667 ns, landed (the channel serves it meanwhile). The slow absorber holds
  // the source: flushed at 316.667 - 190 = 126.667 ns. Ack over 2 hops: + 28 ns.
  // Read (2,2) <- DRAM (5,0) on NoC0: request 3 + 10 = 13 hops, arrives 40 + 5 + 117 + 5 +
  // 1.334 = 168.334; channel 47.628 -> 215.962; response 7 + 2 = 9 hops at the DRAM NIU's
  // 23.2 B/c: 215.962 + 89.656 + 5 + 81 + 5 = 396.618 ns.
  EXPECT_EQ(times, (std::vector<SimTime>{126'667_ps, 316'667_ps + 28_ns, 396'618_ps}));
}

TEST(DramTiming, EndpointsOfOneChannelShareItsBandwidth) {
  // Two writers into channel 0 through different endpoints: each NIU absorbs 24 B/c, the
  // channel serves 43 GB/s, so together they are held to the channel's rate.
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  constexpr int kPackets = 100;
  // On NoC1 (north, then west) these three routes share no link.
  auto writer = [&](CoreCoord core, CoreCoord endpoint) {
    engine.spawn_fiber("writer", [&, core, endpoint] {
      for (int i = 0; i < kPackets; ++i) chip.noc(NocId::Noc1).write(core, 0, {endpoint, 0}, 8192);
      block_on(chip.noc(NocId::Noc1).write_barrier(core));
    });
  };
  writer({1, 1}, {0, 0});
  writer({1, 2}, {0, 1});
  writer({1, 11}, {0, 11});
  engine.run();
  const PacketResource& channel = chip.dram_channel(0).server();
  EXPECT_EQ(channel.packets, 3 * kPackets);
  EXPECT_EQ(channel.busy, transfer_time(8192, Bandwidth::bytes_per_second(43'000'000'000)) * (3 * kPackets));
  // Three 24 B/c NIUs would take 72 B/c; the channel takes 43 GB/s, so it is busy nearly all
  // the time: the run lasts about 3 * 100 * 8192 B / 43 GB/s = 57.2 us.
  EXPECT_GT(engine.now(), channel.busy);
  EXPECT_LT(engine.now(), channel.busy + 2_us);
}

TEST(DramData, TimingOnlyModeStoresNoDramBytesButChecksBounds) {
  Engine engine;
  ChipOptions options;
  options.mode = DataMode::TimingOnly;
  Chip chip(engine, 0, testing::wormhole(), options);
  chip.l1(kCore).write(0x10000, pattern(4096, 3));
  engine.spawn_fiber("kernel", [&] {
    Noc& noc = chip.noc(NocId::Noc0);
    noc.write(kCore, 0x10000, {{0, 0}, 0x100}, 4096);
    noc.read(kCore, {{0, 0}, 0x100}, 0x20000, 4096);
    block_on(noc.read_barrier(kCore));
    EXPECT_THROW(noc.write(kCore, 0, {{5, 0}, std::uint64_t{2} << 30}, 4), AccessError);
  });
  engine.run();
  EXPECT_EQ(chip.dram_channel(0).memory().resident_pages(), 0u);
  EXPECT_EQ(chip.l1(kCore).read_u32(0x20000), 0u);  // DRAM reads as zero
}

}  // namespace
}  // namespace cclmesh::sim
