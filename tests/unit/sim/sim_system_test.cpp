// Systems: wiring from a plain link list, validation before time 0, the lookahead, and
// identical simulated times in functional and timing-only modes.
#include "sim/model/sim_system.hpp"

#include <gtest/gtest.h>

#include "sim/engine/fiber.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::pattern;

// The T3K edges of REFERENCE 3.3, one link per listed channel pair.
SystemConfig t3k_config(DataMode mode = DataMode::Functional) {
  SystemConfig config;
  config.mode = mode;
  for (ChipId id = 0; id < 8; ++id) config.chips.push_back({id, ChipArch::WormholeB0, {11, 1}});
  auto edge = [&](ChipId a, ChipId b, std::vector<std::pair<int, int>> channels) {
    for (auto [ca, cb] : channels) config.links.push_back({{a, ca}, {b, cb}, std::nullopt, std::nullopt});
  };
  for (ChipId c = 0; c < 4; ++c) edge(c, c + 4, {{8, 0}, {9, 1}});
  edge(0, 1, {{14, 14}, {15, 15}});
  edge(2, 3, {{14, 14}, {15, 15}});
  edge(1, 3, {{0, 0}, {1, 1}});
  edge(0, 2, {{6, 6}, {7, 7}});
  edge(4, 5, {{6, 6}, {7, 7}});
  edge(6, 7, {{6, 6}, {7, 7}});
  return config;
}

TEST(SimSystem, BuildsChipsAndLinksFromAPlainList) {
  Engine engine;
  SimSystem system(engine, t3k_config());
  EXPECT_EQ(system.chip_count(), 8u);
  EXPECT_EQ(system.links().size(), 20u);
  EXPECT_EQ(system.chip(5).tensix_cores().size(), 64u);
  EthLink* link = system.link_at({2, 8});
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(&link->b(), &system.chip(6).eth(0));
  EXPECT_EQ(system.chip(6).eth(0).peer(), &system.chip(2).eth(8));
  EXPECT_EQ(system.link_at({2, 2}), nullptr);
  EXPECT_FALSE(system.chip(2).eth(2).connected());
  EXPECT_EQ(system.lookahead(), 500_ns);
}

TEST(SimSystem, LookaheadIsTheSmallestChipToChipLatency) {
  Engine engine;
  SystemConfig config = t3k_config();
  config.links[3].latency = 420_ns;
  config.links[4].rate = Bandwidth::bytes_per_second(6'250'000'000);
  SimSystem system(engine, config);
  EXPECT_EQ(system.lookahead(), 420_ns);
  EXPECT_EQ(system.links()[4]->wire_from(system.links()[4]->a()).rate().bytes_per_second(), 6'250'000'000);
}

TEST(SimSystem, BadWiringIsRejectedBeforeTimeZero) {
  auto expect_error = [](SystemConfig config, const std::string& text) {
    Engine engine;
    try {
      SimSystem system(engine, config);
      FAIL() << "expected ModelConfigError containing: " << text;
    } catch (const ModelConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  SystemConfig unknown = t3k_config();
  unknown.links.push_back({{0, 0}, {9, 0}, std::nullopt, std::nullopt});
  expect_error(unknown, "links[20].b names chip 9, which is not in 'chips'");
  SystemConfig channel = t3k_config();
  channel.links.push_back({{0, 16}, {1, 2}, std::nullopt, std::nullopt});
  expect_error(channel, "links[20].a = chip 0 channel 16: channel must be in 0..15");
  SystemConfig twice = t3k_config();
  twice.links.push_back({{0, 8}, {1, 2}, std::nullopt, std::nullopt});
  expect_error(twice, "chip 0 channel 8 is wired twice (links[0] and links[20])");
  SystemConfig self = t3k_config();
  self.links.push_back({{3, 3}, {3, 3}, std::nullopt, std::nullopt});
  expect_error(self, "links[20] joins chip 3 channel 3 to itself");
  SystemConfig duplicate = t3k_config();
  duplicate.chips.push_back({2, ChipArch::WormholeB0, {}});
  expect_error(duplicate, "chip id 2 appears twice");
  SystemConfig mixed = t3k_config();
  mixed.chips.push_back({8, ChipArch::Blackhole, {}});
  mixed.links.push_back({{0, 2}, {8, 2}, std::nullopt, std::nullopt});
  expect_error(mixed, "joins a wormhole_b0 and a blackhole");
}

TEST(SimSystem, BlackholePair) {
  Engine engine;
  SystemConfig config;
  config.chips = {{0, ChipArch::Blackhole, {}}, {1, ChipArch::Blackhole, {}}};
  config.links = {{{0, 4}, {1, 4}, std::nullopt, std::nullopt}};
  SimSystem system(engine, config);
  EXPECT_EQ(system.lookahead(), SimTime::from_ps(362'166));
  EXPECT_EQ(system.chip(1).eth(4).coord(), (CoreCoord{3, 1}));
}

// One scenario: chip 0 reads DRAM pages into an ERISC, sends them to chip 4, whose ERISC
// writes them to its DRAM; both modes must run exactly the same events at the same times.
struct ScenarioResult {
  SimTime end;
  std::uint64_t trace_hash;
  std::vector<std::uint8_t> landed;
};

ScenarioResult run_scenario(DataMode mode) {
  Engine engine;
  SimSystem system(engine, t3k_config(mode));
  Chip& src = system.chip(0);
  Chip& dst = system.chip(4);
  EthCore& tx = src.eth(8);
  EthCore& rx = dst.eth(0);
  constexpr std::uint32_t kPage = 4096;
  constexpr int kPages = 16;
  const auto data = pattern(kPage * kPages, 17);
  src.dram_channel(1).memory().write(0, data);
  engine.spawn_fiber("sender", [&] {
    Noc& noc = src.noc(NocId::Noc0);
    for (int i = 0; i < kPages; ++i) {
      noc.read(tx.coord(), {src.dram_bank(2).endpoint, static_cast<std::uint64_t>(i) * kPage}, 0x30000, kPage);
      block_on(noc.read_barrier(tx.coord()));
      tx.wait_txq_ready_blocking();
      tx.send_packet(0x30000, 0x30000, kPage);
      tx.write_remote_word(0x2f000, static_cast<std::uint32_t>(i + 1));
      tx.l1().wait_word_blocking(0x2f000, WordCondition::Equal, static_cast<std::uint32_t>(i + 1));  // credit
    }
  });
  engine.spawn_fiber("receiver", [&] {
    Noc& noc = dst.noc(NocId::Noc1);
    for (int i = 0; i < kPages; ++i) {
      rx.l1().wait_word_blocking(0x2f000, WordCondition::Equal, static_cast<std::uint32_t>(i + 1));
      noc.write(rx.coord(), 0x30000, {dst.dram_bank(5).endpoint, dst.dram_bank(5).channel_offset + i * kPage}, kPage);
      block_on(noc.write_barrier(rx.coord()));
      rx.write_remote_word(0x2f000, static_cast<std::uint32_t>(i + 1));
    }
  });
  const RunResult result = engine.run();
  EXPECT_EQ(result.reason, StopReason::Idle);
  return ScenarioResult{engine.now(), engine.trace_hash(),
                        dst.dram_channel(2).memory().read(dst.dram_bank(5).channel_offset, kPage * kPages)};
}

TEST(SimSystem, FunctionalAndTimingOnlyRunsHaveIdenticalTimes) {
  const ScenarioResult functional = run_scenario(DataMode::Functional);
  const ScenarioResult timing = run_scenario(DataMode::TimingOnly);
  EXPECT_EQ(functional.end, timing.end);
  EXPECT_EQ(functional.trace_hash, timing.trace_hash);
  EXPECT_GT(functional.end, 16 * 1_us);
  EXPECT_EQ(functional.landed, pattern(4096 * 16, 17));   // bank 2 = channel 1, offset 0
  EXPECT_EQ(timing.landed, std::vector<std::uint8_t>(4096 * 16, 0));
  // And a second functional run is bit-for-bit the same.
  EXPECT_EQ(run_scenario(DataMode::Functional).trace_hash, functional.trace_hash);
}

}  // namespace
}  // namespace cclmesh::sim
