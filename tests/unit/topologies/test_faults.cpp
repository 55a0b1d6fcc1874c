#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

TEST(Faults, RemoveALink) {
  const Topology t3k = build_t3k();
  const Topology t = without_link(t3k, {4, 0});  // the 0.ch8 <-> 4.ch0 link, named from 4
  EXPECT_EQ(t.links().size(), 19u);
  EXPECT_EQ(t.links_between(0, 4), 1u);
  EXPECT_FALSE(t.link_at({0, 8}).has_value());
  EXPECT_EQ(t.chip_count(), 8u);
  EXPECT_EQ(t.mesh_shape(), t3k.mesh_shape());
  EXPECT_EQ(t.name(), "t3k without link 4.ch0");
  EXPECT_EQ(build_t3k(), t3k);  // the original is untouched
}

TEST(Faults, RemoveAnEdgeOrAChip) {
  const Topology no_edge = without_edge(build_t3k(), 1, 0);
  EXPECT_EQ(no_edge.links().size(), 18u);
  EXPECT_EQ(no_edge.links_between(0, 1), 0u);

  const Topology no_chip = without_chip(build_t3k(), 3);
  EXPECT_EQ(no_chip.chip_count(), 7u);
  EXPECT_FALSE(no_chip.has_chip(3));
  EXPECT_EQ(no_chip.links().size(), 20u - 6u);
  EXPECT_FALSE(no_chip.chip_at(MeshCoord{1, 2, 0}).has_value());
  EXPECT_EQ(no_chip.chip(7).mesh_coord, (MeshCoord{1, 3, 0}));  // ids and places kept
}

TEST(Faults, ScaleALinkRate) {
  const Topology t = with_link_rate_scaled(build_n300(), {1, 1}, 0.25);
  EXPECT_EQ(t.links()[t.link_at({0, 9}).value()].rate_bytes_per_s, 3'125'000'000);
  EXPECT_EQ(t.links()[t.link_at({0, 8}).value()].rate_bytes_per_s, 12'500'000'000);
}

TEST(Faults, BadEditsAreInputErrors) {
  const Topology t = build_t3k();
  EXPECT_THAT(
      [&] {
        try {
          (void)without_link(t, {0, 3});
        } catch (const InputError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("port 0.ch3 has no link"));
  EXPECT_THROW((void)without_edge(t, 0, 7), InputError);
  EXPECT_THROW((void)without_chip(t, 8), InputError);
  EXPECT_THROW((void)with_link_rate_scaled(t, {0, 8}, 0.0), InputError);
  EXPECT_THROW((void)with_link_rate_scaled(t, {0, 8}, -1.0), InputError);
  EXPECT_THROW((void)with_link_rate_scaled(t, {0, 8}, std::nan("")), InputError);
}

TEST(Faults, CommandLineSpecs) {
  const Topology t = build_t3k();
  EXPECT_EQ(apply_fault(t, "link:0.8"), without_link(t, {0, 8}));
  EXPECT_EQ(apply_fault(t, "edge:0-1"), without_edge(t, 0, 1));
  EXPECT_EQ(apply_fault(t, "chip:5"), without_chip(t, 5));
  EXPECT_EQ(apply_fault(t, "slow:0.8*0.5"), with_link_rate_scaled(t, {0, 8}, 0.5));
  for (const char* bad :
       {"link:0", "link:a.8", "edge:01", "slow:0.8", "slow:0.8*fast", "melt:3", "chip3"}) {
    EXPECT_THROW((void)apply_fault(t, bad), InputError) << bad;
  }
}

}  // namespace
}  // namespace cclmesh::topo
