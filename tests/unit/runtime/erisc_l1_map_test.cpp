// The ERISC unreserved L1 size as a parameter (REFERENCE 1.4, unconfirmed: 106..150 KiB): the
// layout, the fabric routers' slot choice, the legacy EDMs' buffers and all_gather's
// SPLIT/FULL_TENSOR threshold all follow FabricOptions::erisc_unreserved_bytes, at both ends.
#include <gtest/gtest.h>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime {
namespace {

constexpr std::uint32_t kMin = 106 * 1024;
constexpr std::uint32_t kMax = 150 * 1024;

FabricOptions ring_options(std::uint32_t unreserved_bytes, std::uint32_t payload) {
  FabricOptions o;
  o.mode = FabricMode::Ring;
  o.max_payload_bytes = payload;
  o.erisc_unreserved_bytes = unreserved_bytes;
  return o;
}

// The default is [CDG]'s ~150 KB (l1_map.hpp says why); [ETHMAP]'s 106 KB is the what-if.
TEST(EriscL1Map, DefaultIsTheCdgFigureAndTheAddressMapFigureIsTheWhatIf) {
  EXPECT_EQ(FabricOptions{}.erisc_unreserved_bytes, kMax);
  EXPECT_EQ(kDefaultEriscL1Map.unreserved_bytes, kMax);
  EXPECT_EQ(kDefaultEriscL1Map.unreserved_base(), 0x1A800u);
  EXPECT_EQ(kDefaultEriscL1Map.kernel_base(), 0x1AC00u);
  EXPECT_EQ(EriscL1Map{kMin}.unreserved_base(), 0x25800u);  // REFERENCE 1.4 [ETHMAP]
  EXPECT_EQ(EriscL1Map{kMin}.kernel_base(), 0x25C00u);
}

// Reason 1 for the default (l1_map.hpp): REFERENCE 6.2 [TCO]'s typical 2025-26 line fabric, 2
// sender channels x 8 slots + one 16-slot receiver, fits the 150 KiB kernel region at the default
// 4352 B payload and not the 106 KiB one, which falls back to {8, 8}.
TEST(EriscL1Map, TheTypicalLineRouterFitsTheDefaultButNot106KiB) {
  const topo::Topology t3k = topo::build_t3k();
  struct Case {
    std::uint32_t bytes;
    std::uint32_t receiver_slots;
  };
  for (const Case c : {Case{kMax, 16}, Case{kMin, 8}}) {
    SCOPED_TRACE(c.bytes);
    FabricOptions o;
    o.mode = FabricMode::Line;
    o.erisc_unreserved_bytes = c.bytes;
    EXPECT_EQ(o.max_payload_bytes, 4352u);  // REFERENCE 6.2's default payload
    const FabricPlan plan(t3k, o);
    ASSERT_FALSE(plan.routers().empty());
    for (const FabricRouterSite& site : plan.routers()) {
      EXPECT_EQ(site.config.sender_slots[0], 8u);
      EXPECT_EQ(site.config.sender_slots[1], 8u);
      EXPECT_EQ(site.config.receiver_slots, c.receiver_slots);
    }
    EXPECT_LE(plan.layout().end, kEriscL1Bytes);
  }
  // The default FabricOptions (a line at 4352 B) take the typical router as they are.
  FabricOptions line;
  line.mode = FabricMode::Line;
  EXPECT_EQ(FabricPlan(t3k, line).routers().front().config.receiver_slots, 16u);
}

TEST(EriscL1Map, RegionsTileTheUnreservedL1WithoutOverlapAtBothEnds) {
  for (const std::uint32_t bytes : {kMin, kMax}) {
    SCOPED_TRACE(bytes);
    const EriscL1Map m{bytes};
    EXPECT_EQ(m.unreserved_base() + bytes, kEriscL1Bytes);  // runs to the end of L1
    EXPECT_EQ(m.program_semaphore_address(0), m.unreserved_base());
    EXPECT_EQ(m.program_semaphore_address(kMaxProgramSemaphores - 1) + kProgramSemaphoreStride,
              m.global_semaphore_base());
    EXPECT_EQ(m.global_semaphore_base() + kEriscGlobalSemaphoreBytes, m.kernel_base());
    EXPECT_EQ(m.kernel_base() + m.kernel_bytes(), kEriscL1Bytes);
    EXPECT_EQ(m.unreserved_base() % kProgramSemaphoreStride, 0u);
  }
  // 150 KiB moves the whole region (semaphores included) 44 KiB down, below 106 KiB's 0x25800.
  EXPECT_EQ(EriscL1Map{kMax}.unreserved_base(), 0x1A800u);
  EXPECT_EQ(EriscL1Map{kMax}.kernel_bytes() - EriscL1Map{kMin}.kernel_bytes(), 44u * 1024);
}

TEST(EriscL1Map, AcceptsOnly106To150KiBInSemaphoreWords) {
  EXPECT_TRUE(valid_erisc_unreserved_bytes(kMin));
  EXPECT_TRUE(valid_erisc_unreserved_bytes(kMax));
  EXPECT_TRUE(valid_erisc_unreserved_bytes(128 * 1024));
  EXPECT_FALSE(valid_erisc_unreserved_bytes(kMin - 16));
  EXPECT_FALSE(valid_erisc_unreserved_bytes(kMax + 16));
  EXPECT_FALSE(valid_erisc_unreserved_bytes(kMin + 8));
  const topo::Topology t3k = topo::build_t3k();
  for (const std::uint32_t bad : {kMin - 16, kMax + 16}) {
    try {
      FabricPlan(t3k, ring_options(bad, 4352));
      ADD_FAILURE() << bad << " accepted";
    } catch (const FabricPlanError& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("108544..153600"), std::string::npos) << e.what();
    }
  }
  // Checked without a fabric too: legacy ops size their EDMs from it.
  FabricOptions none;
  none.erisc_unreserved_bytes = kMax + 16;
  EXPECT_THROW(FabricPlan(t3k, none), FabricPlanError);
}

// docs/performance.md "The 8-ring's forwarding chain": at the calibration's 6144 B payload a
// ring router fits {4, 8} slots in 106 KiB and {8, 8} in 150 KiB.
TEST(EriscL1Map, RingRouterSlotsAndLayoutFollowTheSize) {
  const topo::Topology t3k = topo::build_t3k();
  struct Case {
    std::uint32_t bytes;
    std::uint32_t sender_slots;
  };
  for (const Case c : {Case{kMin, 4}, Case{kMax, 8}}) {
    SCOPED_TRACE(c.bytes);
    const FabricPlan plan(t3k, ring_options(c.bytes, 6144));
    const EriscL1Map m{c.bytes};
    ASSERT_FALSE(plan.routers().empty());
    for (const FabricRouterSite& site : plan.routers()) {
      EXPECT_EQ(site.config.sender_slots[0], c.sender_slots);
      EXPECT_EQ(site.config.sender_slots[1], c.sender_slots);
      EXPECT_EQ(site.config.receiver_slots, 8u);
      EXPECT_EQ(site.config.l1_base, m.kernel_base());
    }
    EXPECT_GE(plan.layout().status, m.kernel_base());
    EXPECT_LE(plan.layout().end, kEriscL1Bytes);
  }
}

TEST(EriscL1Map, LegacyEdmBuffersFollowTheSize) {
  const ccl::LegacyEdmOptions defaults;
  const std::uint32_t small = ccl::legacy_pages_per_message(defaults, 2048, 2, "t", EriscL1Map{kMin});
  const std::uint32_t large = ccl::legacy_pages_per_message(defaults, 2048, 2, "t", EriscL1Map{kMax});
  EXPECT_GT(large, small);
  for (const std::uint32_t bytes : {kMin, kMax}) {
    const EriscL1Map m{bytes};
    const std::uint32_t pages = ccl::legacy_pages_per_message(defaults, 2048, 2, "t", m);
    const ccl::LegacyEdmSite site = ccl::legacy_edm_site(0, 0, 1, 1, 1, pages, 2048, defaults, m);
    EXPECT_EQ(site.config.l1_base, m.kernel_base());
    const auto layout = kernels::make_legacy_edm_layout(m.kernel_base(), 2, defaults.buffers_per_channel,
                                                        pages * 2048);
    EXPECT_LE(layout.end, kEriscL1Bytes);
    // One more page per message would not fit: the sizing uses the whole region it is given.
    EXPECT_GT(kernels::make_legacy_edm_layout(m.kernel_base(), 2, defaults.buffers_per_channel, (pages + 1) * 2048).end,
              kEriscL1Bytes);
  }
}

// REFERENCE 7: SPLIT_TENSOR once the input is more than 2 x eth_l1_capacity.
TEST(EriscL1Map, AllGatherModeThresholdFollowsTheSize) {
  namespace ag = ccl::all_gather;
  for (const std::uint32_t bytes : {kMin, kMax}) {
    SCOPED_TRACE(bytes);
    ag::Params p;
    p.topology = ccl::CclTopology::Ring;
    p.fabric.erisc_unreserved_bytes = bytes;
    const std::uint32_t tiles = 2 * bytes / 2048;  // bf16 tiles of 2048 B in 2 x the region
    p.input = ccl::TensorSpec{{1, 1, 32, 32 * tiles}, ccl::DataType::Bfloat16, ccl::Layout::Tile};
    EXPECT_EQ(ccl::size_bytes(p.input), 2u * bytes);
    EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
    p.input.shape[3] = 32 * (tiles + 1);
    EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::SplitTensor);
  }
}

}  // namespace
}  // namespace cclmesh::runtime
