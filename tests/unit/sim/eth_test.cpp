// Ethernet cores and links: exact times of sends on an idle N300-style pair of Wormhole chips
// (chip 0 channel 8 <-> chip 1 channel 0), worked out from sim/model/arch/wormhole_b0.yaml:
//   ERISC issue 59 ns per data packet, handling 21 ns per received data packet;
//   wire bytes = payload + 16 B header + 50 B per 1500 B frame, at 12.5 GB/s; then 500 ns.
#include "sim/model/eth_core.hpp"

#include <gtest/gtest.h>

#include "sim/model/eth_link.hpp"
#include "sim/model/packet_corruption.hpp"
#include "sim/model/sim_system.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::Log;
using testing::pattern;

constexpr std::uint64_t kBuf = 0x25800;  // ERISC unreserved base (REFERENCE 1.4)

SystemConfig pair_config(DataMode mode = DataMode::Functional) {
  SystemConfig config;
  config.chips = {{0, ChipArch::WormholeB0, {}}, {1, ChipArch::WormholeB0, {}}};
  config.links = {{{0, 8}, {1, 0}, std::nullopt, std::nullopt}};
  config.mode = mode;
  return config;
}

TEST(EthWire, WireBytesPayFrameOverheadPerFragment) {
  const EthParams& eth = testing::wormhole()->params.eth;
  EXPECT_EQ(eth.wire_bytes(16), 16 + 16 + 50);
  EXPECT_EQ(eth.wire_bytes(1024), 1040 + 50);
  EXPECT_EQ(eth.wire_bytes(1484), 1500 + 50);      // exactly one full frame
  EXPECT_EQ(eth.wire_bytes(1485), 1501 + 2 * 50);  // one byte more: a second frame
  EXPECT_EQ(eth.wire_bytes(8192), 8208 + 6 * 50);
}

// A timing-only run's ERISC L1 holds what the routers write there, a header or a flag every
// few KiB, in small pages (8 words: 2 KiB, not 32 KiB); a run with data keeps 4 KiB pages for
// its payloads. The bytes read back the same either way.
TEST(EthCoreL1, TimingOnlyKeepsScatteredWordsInSmallPages) {
  for (const DataMode mode : {DataMode::TimingOnly, DataMode::Functional}) {
    Engine engine;
    ChipOptions options;
    options.mode = mode;
    Chip chip(engine, 0, testing::wormhole(), options);
    MemoryRegion& l1 = chip.eth(0).l1();
    for (std::uint64_t slot = 0; slot < 8; ++slot) {
      l1.write_u32(kBuf + slot * 4128, static_cast<std::uint32_t>(slot + 1));
    }
    for (std::uint64_t slot = 0; slot < 8; ++slot) EXPECT_EQ(l1.read_u32(kBuf + slot * 4128), slot + 1);
    const std::uint64_t held = l1.resident_pages() * l1.page_bytes();
    if (mode == DataMode::TimingOnly) {
      EXPECT_LE(held, 2048u);
    } else {
      EXPECT_EQ(held, 8u * 4096);
    }
  }
}

TEST(EthSend, OnePacketLandsAtIssuePlusWirePlusLatency) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EthCore& rx = system.chip(1).eth(0);
  const auto data = pattern(1024, 11);
  tx.l1().write(kBuf, data);
  Log log;
  engine.spawn_fiber("sender", [&] {
    tx.send_packet(kBuf, kBuf, 1024);
    log.add(tx.txq_busy() ? "busy" : "queued");
  });
  engine.spawn_fiber("receiver", [&] {
    rx.l1().wait_word_blocking(kBuf + 1020, WordCondition::Equal, tx.l1().read_u32(kBuf + 1020));
    log.add("landed");
  });
  engine.run();
  // Issue 0..59 ns; wire 1090 B = 87.2 ns, 59..146.2; then 500 ns.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{0_ns, "queued"}, {646'200_ps, "landed"}}));
  EXPECT_EQ(rx.l1().read(kBuf, 1024), data);
  EXPECT_EQ(tx.txq_outstanding(), 0);
  EXPECT_EQ(rx.stats().packets_received, 1);
  EXPECT_EQ(rx.stats().erisc_busy, 21_ns);
  EXPECT_EQ(tx.stats().erisc_busy, 59_ns);
}

TEST(EthSend, BackToBackSmallPacketsArePacedByTheIssueCost) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EthCore& rx = system.chip(1).eth(0);
  tx.l1().write_u32(kBuf, 1);
  tx.l1().write_u32(kBuf + 16, 2);
  Log log;
  engine.spawn_fiber("sender", [&] {
    tx.send_packet(kBuf, kBuf + 0x100, 16);
    tx.send_packet(kBuf + 16, kBuf + 0x110, 16);
  });
  engine.spawn_fiber("first", [&] {
    rx.l1().wait_word_blocking(kBuf + 0x100, WordCondition::Equal, 1);
    log.add("first");
  });
  engine.spawn_fiber("second", [&] {
    rx.l1().wait_word_blocking(kBuf + 0x110, WordCondition::Equal, 2);
    log.add("second");
  });
  engine.run();
  // 82 wire bytes = 6.56 ns. Issues 0..59 and 59..118; wires 59..65.56 and 118..124.56.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{565'560_ps, "first"}, {624'560_ps, "second"}}));
}

TEST(EthSend, OneEriscServesBothDirections) {
  // Each side sends a 16 B packet at 0, then another as soon as the peer's first one lands.
  // The second issue waits for the ERISC to finish handling the packet that just arrived.
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& a = system.chip(0).eth(8);
  EthCore& b = system.chip(1).eth(0);
  Log log;
  auto side = [&](EthCore& self, const char* name) {
    engine.spawn_fiber(name, [&self, &log, name] {
      self.l1().write_u32(kBuf, 7);
      self.send_packet(kBuf, kBuf + 0x200, 16);
      self.l1().wait_word_blocking(kBuf + 0x200, WordCondition::Equal, 7);
      self.l1().write_u32(kBuf, 8);
      self.send_packet(kBuf, kBuf + 0x210, 16);
      self.l1().wait_word_blocking(kBuf + 0x210, WordCondition::Equal, 8);
      log.add(name);
    });
  };
  side(a, "a");
  side(b, "b");
  engine.run();
  // First packets land at 565.56 ns and keep each ERISC busy until 586.56; the second issues
  // 586.56..645.56, wire ..652.12, + 500 ns = 1152.12 ns.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{1'152'120_ps, "a"}, {1'152'120_ps, "b"}}));
}

TEST(EthSend, RemoteWordWriteSkipsTheIssueCostButKeepsQueueOrder) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EthCore& rx = system.chip(1).eth(0);
  Log log;
  engine.spawn_fiber("alone", [&] { tx.write_remote_word(kBuf, 5); });
  engine.spawn_fiber("watch", [&] {
    rx.l1().wait_word_blocking(kBuf, WordCondition::Equal, 5);
    log.add("word");
    tx.send_packet(kBuf, kBuf + 0x400, 1024);  // then a packet and a word behind it
    tx.write_remote_word(kBuf + 4, 6);
  });
  engine.spawn_fiber("watch2", [&] {
    rx.l1().wait_word_blocking(kBuf + 4, WordCondition::Equal, 6);
    log.add("word behind packet");
  });
  engine.run();
  // A word is 16 B: 82 wire bytes, 6.56 ns, lands at 506.56 ns. At that time the packet issues
  // for 59 ns, holds the wire 87.2 ns; the word follows it: 506.56 + 59 + 87.2 + 6.56 + 500.
  EXPECT_EQ(log.entries,
            (std::vector<testing::Stamp>{{506'560_ps, "word"}, {1'159'320_ps, "word behind packet"}}));
}

TEST(EthSend, TxQueueReportsBusyAndDrains) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  Log log;
  engine.spawn_fiber("sender", [&] {
    for (int i = 0; i < 8; ++i) tx.send_packet(kBuf, kBuf, 4096);
    log.add(tx.txq_busy() ? "busy" : "free");
    tx.wait_txq_ready_blocking();
    log.add("ready");
  });
  engine.run();
  // 4096 B: 4112 + 3 * 50 = 4262 wire bytes = 340.96 ns; the first leaves the wire at
  // 59 + 340.96 = 399.96 ns, freeing a queue entry.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{0_ns, "busy"}, {399'960_ps, "ready"}}));
}

// The queue drains by time: commands leaving the wire cost no event unless a kernel waits for
// room (one alarm then); a polling kernel parked for TxqReady wakes at the next drain.
TEST(EthSend, TxQueueDrainsWithoutEventsUnlessAKernelWaits) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  engine.schedule_at(SimTime::zero(), [&] { tx.write_remote_word(kBuf, 1); });
  engine.run();
  EXPECT_EQ(engine.stats().events_executed, 2u);  // the call (the wire starts at once), the landing
  EXPECT_EQ(tx.txq_outstanding(), 0);

  Log log;
  engine.spawn_fiber("poller", [&] {
    ActivityListener listener("poller");
    tx.l1().activity().attach(listener);
    for (int i = 0; i < 2; ++i) tx.send_packet(kBuf, kBuf, 4096);
    listener.wait_blocking(activity_bit(ActivityKind::TxqReady));  // room already: the next drain
    log.add("drained");
  });
  const SimTime start = engine.now();
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{start + 399'960_ps, "drained"}}));
}

TEST(EthFaults, DownLinkDropsPacketsAndRecordsThem) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EthCore& rx = system.chip(1).eth(0);
  system.link_at({0, 8})->set_up(false);
  tx.l1().write_u32(kBuf, 1);
  engine.spawn_fiber("sender", [&] { tx.send_packet(kBuf, kBuf, 16); });
  engine.spawn_fiber("receiver", [&] { rx.l1().wait_word_blocking(kBuf, WordCondition::Equal, 1); });
  const RunResult result = engine.run();
  ASSERT_EQ(result.reason, StopReason::Hang);
  ASSERT_EQ(result.hang->parked.size(), 1u);
  EXPECT_EQ(result.hang->parked[0].waiting_for,
            "chip 1 core (9,0) ERISC L1 word 0x25800 to be == 1 (now 0)");
  ASSERT_EQ(system.faults().records().size(), 1u);
  EXPECT_EQ(system.faults().records()[0].when, 59_ns);
  EXPECT_EQ(system.faults().records()[0].place, "chip 0 eth channel 8 core (9,6)");
  EXPECT_EQ(tx.stats().packets_dropped, 1);
}

// A corruption flips exactly one bit of the first packet long enough to carry a payload, past
// the front 64 B and before the last 16 B; shorter packets and later packets pass untouched.
TEST(EthFaults, CorruptionFlipsOneBitOfOnePacketsPayload) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EthCore& rx = system.chip(1).eth(0);
  PacketCorruption corruption(SimTime::zero(), 5, "corrupt:0-1:5");
  system.link_at({0, 8})->add_corruption(corruption);
  const std::vector<std::uint8_t> bytes = pattern(1024, 3);
  tx.l1().write(kBuf, bytes);
  engine.spawn_fiber("sender", [&] {
    tx.send_packet(kBuf, kBuf + 0x1000, 80);   // too short to carry a payload: untouched
    tx.send_packet(kBuf, kBuf + 0x2000, 1024);  // flipped
    tx.send_packet(kBuf, kBuf + 0x3000, 1024);  // one-shot: untouched
  });
  engine.run();
  EXPECT_EQ(rx.l1().read(kBuf + 0x1000, 80), std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 80));
  EXPECT_EQ(rx.l1().read(kBuf + 0x3000, 1024), bytes);
  const std::vector<std::uint8_t> got = rx.l1().read(kBuf + 0x2000, 1024);
  std::size_t differing_bits = 0;
  std::size_t differing_byte = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto x = static_cast<unsigned>(got[i] ^ bytes[i]);
    if (x != 0) differing_byte = i;
    differing_bits += static_cast<std::size_t>(__builtin_popcount(x));
  }
  EXPECT_EQ(differing_bits, 1u);
  EXPECT_GE(differing_byte, PacketCorruption::kSkipFrontBytes);
  EXPECT_LT(differing_byte, 1024 - PacketCorruption::kSkipBackBytes);
  ASSERT_TRUE(corruption.corrupted().has_value());
  EXPECT_EQ(corruption.corrupted()->byte, differing_byte);
  EXPECT_EQ(corruption.corrupted()->packet_bytes, 1024u);
  EXPECT_EQ(corruption.corrupted()->destination_address, kBuf + 0x2000);
  ASSERT_EQ(system.faults().records().size(), 1u);
  EXPECT_NE(system.faults().records()[0].what.find("injected corruption (corrupt:0-1:5)"), std::string::npos);
  // The same seed picks the same bit on another run.
  PacketCorruption again(SimTime::zero(), 5, "corrupt:0-1:5");
  std::vector<std::uint8_t> copy = bytes;
  const auto hit = again.maybe_corrupt(SimTime::zero(), copy, 0, "a", "b");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->byte, corruption.corrupted()->byte);
  EXPECT_EQ(hit->bit, corruption.corrupted()->bit);
}

TEST(EthFaults, RateScaleSlowsTheWire) {
  Engine engine;
  SimSystem system(engine, pair_config());
  system.link_at({1, 0})->scale_rate(1, 2);
  EthCore& tx = system.chip(0).eth(8);
  engine.spawn_fiber("sender", [&] { tx.send_packet(kBuf, kBuf, 1024); });
  engine.run();
  // Issue 59 ns, wire 174.4 ns at half rate, 500 ns: the packet's bytes are in at 733.4 ns.
  EXPECT_EQ(system.chip(1).eth(0).stats().packets_received, 1);
  EXPECT_EQ(engine.now(), 733'400_ps);  // the last event: the packet landing
  EXPECT_EQ(system.link_at({0, 8})->wire_from(tx).rate().bytes_per_second(), 6'250'000'000);
  EXPECT_EQ(system.link_at({0, 8})->wire_from(tx).server().busy, 174'400_ps);  // 2 x 87.2 ns
}

TEST(EthErrors, BadSendsAreAccessErrors) {
  Engine engine;
  SimSystem system(engine, pair_config());
  EthCore& tx = system.chip(0).eth(8);
  EXPECT_THROW(tx.send_packet(kBuf, kBuf, 20), AccessError);          // not whole 16 B words
  EXPECT_THROW(tx.send_packet(kBuf + 8, kBuf, 16), AccessError);      // misaligned source
  EXPECT_THROW(tx.send_packet(kBuf, 262144 - 16, 32), AccessError);   // past the peer's L1
  EXPECT_THROW(system.chip(0).eth(0).send_packet(kBuf, kBuf, 16), SimFault);  // no link
  try {
    tx.send_packet(0x40000, kBuf, 16);
  } catch (const AccessError& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulated fault at 0 ps: chip 0 core (9,6) ERISC L1: read of 16 B at address 0x40000 out of range "
              "(memory is 0x40000 B)");
  }
}

}  // namespace
}  // namespace cclmesh::sim
