#include <gtest/gtest.h>

#include "topologies/arch.hpp"
#include "topologies/board.hpp"

namespace cclmesh::topo {
namespace {

TEST(Arch, ParsesTtUmdAndCommandLineSpellings) {
  EXPECT_EQ(parse_arch("wormhole_b0"), Arch::Wormhole);
  EXPECT_EQ(parse_arch("Wormhole"), Arch::Wormhole);
  EXPECT_EQ(parse_arch("WORMHOLE_B0"), Arch::Wormhole);
  EXPECT_EQ(parse_arch("wh"), Arch::Wormhole);
  EXPECT_EQ(parse_arch("blackhole"), Arch::Blackhole);
  EXPECT_EQ(parse_arch("BLACKHOLE"), Arch::Blackhole);
  EXPECT_EQ(parse_arch("bh"), Arch::Blackhole);
  EXPECT_FALSE(parse_arch("quasar").has_value());
  EXPECT_FALSE(parse_arch("").has_value());
}

TEST(Arch, TraitsFollowReference) {
  // REFERENCE 1.1 / 2: channel counts and per-direction line rates.
  EXPECT_EQ(arch_traits(Arch::Wormhole).eth_channel_count, 16);
  EXPECT_EQ(arch_traits(Arch::Blackhole).eth_channel_count, 14);
  EXPECT_EQ(arch_traits(Arch::Wormhole).link_rate_bytes_per_s, 12'500'000'000);
  EXPECT_EQ(arch_traits(Arch::Blackhole).link_rate_bytes_per_s, 25'000'000'000);
  EXPECT_EQ(arch_traits(Arch::Wormhole).link_latency_ps, 600'000);
  EXPECT_EQ(arch_name(Arch::Wormhole), "wormhole_b0");
  EXPECT_EQ(arch_name(Arch::Blackhole), "blackhole");
  EXPECT_EQ(default_link_rate_bytes_per_s(Arch::Wormhole, Arch::Blackhole), 12'500'000'000);
  EXPECT_EQ(default_link_latency_ps(Arch::Wormhole, Arch::Blackhole), 600'000);
}

TEST(Board, ParsesTtUmdBoardTypes) {
  EXPECT_EQ(parse_board_type("n150"), BoardType::N150);
  EXPECT_EQ(parse_board_type("n300"), BoardType::N300);
  EXPECT_EQ(parse_board_type("p150"), BoardType::P150);
  EXPECT_EQ(parse_board_type("ubb"), BoardType::Galaxy);
  EXPECT_EQ(parse_board_type("ubb_blackhole"), BoardType::Galaxy);
  EXPECT_FALSE(parse_board_type("quasar").has_value());
  EXPECT_EQ(board_type_name(BoardType::Galaxy), "galaxy");
  for (const auto board : {BoardType::Unknown, BoardType::N150, BoardType::N300, BoardType::P100,
                           BoardType::P150, BoardType::P300, BoardType::Galaxy}) {
    EXPECT_EQ(parse_board_type(board_type_name(board)), board);
  }
}

}  // namespace
}  // namespace cclmesh::topo
