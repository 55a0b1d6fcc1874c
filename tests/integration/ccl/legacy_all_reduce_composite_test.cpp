// all_reduce's composite in legacy EDM mode (REFERENCE 7.6: pages that do not divide by the
// chips fall back to all-gather, then a local reduce): the legacy all_gather (per-op EDMs,
// neighbour to neighbour) of every chip's whole input into the intermediate buffer, then each
// chip's local sum, ((g0 + g1) + g2) + ... in rank order. End to end on a device without a
// persistent fabric, every chip's output compared bit for bit with reference_outputs: N300, the
// T3K 8-chip ring and line, the T3K MMIO square on 2 links; DRAM and L1; bf16, fp32 and bfp8_b;
// 3 tiles on 4 chips and 100 on 8; back to back; a tensor whose sums exceed 512 KiB (one workload per local
// pass); the composite forced on a size that divides. Then Auto's legacy rule, at the legacy
// reduce_scatter's own limits, and the one-shot's refusal.
#include <gtest/gtest.h>

#include <string>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ar = runtime::ccl::all_reduce;
using runtime::ccl::CclMode;

// The T3K's MMIO-attached chips as a ring: no dispatch tunnel on its hops, so 2 legacy links.
const std::vector<ChipId> kT3kMmioSquare{0, 1, 3, 2};

struct Case {
  TensorSpec tensor;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::vector<ChipId> group;  // empty: the system's ring / line
  std::uint32_t num_links = 1;
  ar::Algorithm algorithm = ar::Algorithm::Auto;
  std::uint32_t repeats = 1;  // enqueued back to back, one finish()
};

struct Outcome {
  ar::Algorithm algorithm = ar::Algorithm::Auto;
  std::size_t workloads = 0;
  std::size_t edms = 0;  // legacy EDM kernels the op launched
  std::uint32_t group_size = 0;
};

ar::Params params_of(const sim::device::SimMeshDevice& device, const Case& c) {
  ar::Params p;
  p.tensor = c.tensor;
  p.topology = c.topology;
  p.num_links = c.num_links;
  if (!c.group.empty()) p.groups.chips = {c.group};
  p.mode = CclMode::Legacy;
  p.fabric = device.options().fabric;
  p.algorithm = c.algorithm;
  return p;
}

// Runs `c` in legacy mode through run_all_reduce (buffers in c.memory, every chip's output
// checked against reference_outputs), and reports what ran.
Outcome run_case(sim::device::SimMeshDevice& device, const Case& c) {
  const ar::Params p = params_of(device, c);
  Outcome outcome;
  outcome.algorithm = ar::resolved_algorithm(p, device.topology());
  const std::size_t profile_begin = device.profile().size();
  const RunOutcome run = run_all_reduce(device, p, Memory{c.memory, std::nullopt}, RunOptions{c.repeats});
  EXPECT_TRUE(run.verified);
  outcome.group_size = run.group_size;
  const std::vector<runtime::KernelProfile> profile = device.profile();
  for (std::size_t i = profile_begin; i < profile.size(); ++i) {
    if (profile[i].kernel == kernels::kLegacyEdmKernelName) ++outcome.edms;
  }
  // The workloads build() returns for these params (the buffers only matter to validate()).
  ar::Params built = p;
  built.input_buffer = device.create_buffer(runtime::ccl::interleaved_buffer_config(p.tensor, c.memory));
  built.output_buffer = built.input_buffer;
  built.intermediate_buffer = device.create_buffer(
      runtime::ccl::interleaved_buffer_config(ar::intermediate_spec(built, device.topology()), c.memory));
  const std::vector<runtime::MeshWorkload> workloads = ar::build(built, device.topology());
  outcome.workloads = workloads.size();
  return outcome;
}

// One legacy EDM on each end of every hop the gather uses, per link.
std::size_t edms_of(CclTopology topology, std::uint32_t n, std::uint32_t links) {
  return 2 * links * (topology == CclTopology::Ring ? n : n - 1);
}

TEST(LegacyAllReduceComposite, N300PagesNotDividingDramAndL1) {
  for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
    SCOPED_TRACE(memory == BufferType::Dram ? "dram" : "l1");
    auto device = legacy_device(topo::build_n300());
    Case c;
    c.tensor = tile({1, 1, 32, 32 * 3});  // 3 tiles on 2 chips
    c.topology = CclTopology::Line;
    c.memory = memory;
    const Outcome o = run_case(*device, c);
    EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
    EXPECT_EQ(o.group_size, 2u);
    EXPECT_EQ(o.edms, edms_of(c.topology, 2, 1));
    EXPECT_EQ(o.workloads, 2u);
  }
}

// 100 tiles on the 8-chip ring (REFERENCE 7.6's fallback), several local-sum chunks; fp32 and
// bfp8_b as the reduce kernel sums them.
TEST(LegacyAllReduceComposite, T3kRingEveryDtype) {
  auto device = legacy_device(topo::build_t3k());
  for (const auto& [dtype, tiles] : {std::pair{DataType::Bfloat16, 100u}, std::pair{DataType::Float32, 5u},
                                     std::pair{DataType::Bfloat8B, 13u}}) {
    SCOPED_TRACE(tiles);
    Case c;
    c.tensor = tile({1, 1, 32, 32 * tiles}, dtype);
    const Outcome o = run_case(*device, c);
    EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
    EXPECT_EQ(o.group_size, 8u);
    EXPECT_EQ(o.edms, edms_of(c.topology, 8, 1));
    EXPECT_EQ(o.workloads, 2u);
  }
}

TEST(LegacyAllReduceComposite, T3kLineInL1) {
  auto device = legacy_device(topo::build_t3k());
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 13});
  c.topology = CclTopology::Line;
  c.memory = BufferType::L1;
  const Outcome o = run_case(*device, c);
  EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
  EXPECT_EQ(o.edms, edms_of(c.topology, 8, 1));
}

// REFERENCE 8 #36's 3 tiles on 4 chips, on the MMIO square's 2 legacy links: each link carries
// its share of every chip's input (2 pages and 1), through its own EDMs.
TEST(LegacyAllReduceComposite, T3kMmioSquareOnTwoLinks) {
  for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
    auto device = legacy_device(topo::build_t3k());
    Case c;
    c.tensor = tile({1, 1, 1, 96});
    c.group = kT3kMmioSquare;
    c.num_links = 2;
    c.memory = memory;
    const Outcome o = run_case(*device, c);
    EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
    EXPECT_EQ(o.group_size, 4u);
    EXPECT_EQ(o.edms, edms_of(c.topology, 4, 2));
    expect_every_link_carried(*device, kT3kMmioSquare, CclTopology::Ring, 2, 0);
  }
}

// 257 bf16 tiles: 514 KiB of running sums, above kMaxReducedCbBytes, so the local sum runs one
// workload per pass (3 on 4 chips), each reading back the previous pass's acked writes.
TEST(LegacyAllReduceComposite, SumsAboveL1RunOneWorkloadPerPass) {
  auto device = legacy_device(topo::build_t3k());
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 257});
  c.group = kT3kMmioSquare;
  const Outcome o = run_case(*device, c);
  EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
  EXPECT_EQ(o.workloads, 1u + 3u);
}

// Back to back with one finish(): a chip's next gather cannot overwrite copies its local sum
// still reads, since in legacy mode a copy lands only through that chip's own receiver, which
// runs in its next gather workload, after its local sum (a chip runs its programs in order).
TEST(LegacyAllReduceComposite, BackToBack) {
  auto device = legacy_device(topo::build_t3k());
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 45});
  c.repeats = 3;
  const Outcome o = run_case(*device, c);
  EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
  EXPECT_EQ(o.edms, 3 * edms_of(c.topology, 8, 1));
}

// Forced on a size that divides (8 tiles per chip), where Auto takes reduce_scatter + all_gather:
// same bytes as the reference's rank order, not the reduce_scatter's chains.
TEST(LegacyAllReduceComposite, ForcedOnADividingSize) {
  auto device = legacy_device(topo::build_t3k());
  Case c;
  c.tensor = tile({1, 1, 64, 32 * 32});
  EXPECT_EQ(ar::resolved_algorithm(params_of(*device, c), device->topology()), ar::Algorithm::ReduceScatterAllGather);
  c.algorithm = ar::Algorithm::Composite;
  const Outcome o = run_case(*device, c);
  EXPECT_EQ(o.algorithm, ar::Algorithm::Composite);
  EXPECT_EQ(o.workloads, 2u);
}

// Auto in legacy mode above its composite threshold (here 0, so only this rule decides):
// reduce_scatter + all_gather exactly where the legacy reduce_scatter takes the slices (pages
// dividing by N, a page for each of a ring's two halves or a line's whole, per link), else the
// composite; checked against what the builders accept at each boundary.
TEST(LegacyAllReduceAuto, ReduceScatterWhereItsSlicesFitElseComposite) {
  auto device = legacy_device(topo::build_t3k());
  struct Rule {
    std::uint32_t tiles;
    CclTopology topology;
    std::vector<ChipId> group;
    std::uint32_t links;
    ar::Algorithm expected;
  };
  const std::vector<Rule> rules{
      {16, CclTopology::Ring, {}, 1, ar::Algorithm::ReduceScatterAllGather},  // 2 pages per slice: a page per half
      {8, CclTopology::Ring, {}, 1, ar::Algorithm::Composite},                // 1 page per slice: a half empty
      {12, CclTopology::Ring, {}, 1, ar::Algorithm::Composite},               // 12 % 8
      {8, CclTopology::Line, {}, 1, ar::Algorithm::ReduceScatterAllGather},   // a line chains the whole slice
      {7, CclTopology::Line, {}, 1, ar::Algorithm::Composite},
      {16, CclTopology::Ring, kT3kMmioSquare, 2, ar::Algorithm::ReduceScatterAllGather},  // 4 per slice: 2 x 2 runs
      {12, CclTopology::Ring, kT3kMmioSquare, 2, ar::Algorithm::Composite},                // 3 per slice
      {8, CclTopology::Line, kT3kMmioSquare, 2, ar::Algorithm::ReduceScatterAllGather},    // 2 per slice: 1 x 2 runs
      {4, CclTopology::Line, kT3kMmioSquare, 2, ar::Algorithm::Composite},
  };
  for (const Rule& rule : rules) {
    SCOPED_TRACE(testing::Message() << rule.tiles << " tiles, " << shape_name(rule.topology) << ", " << rule.links
                                    << " link(s), " << rule.group.size() << "-chip group");
    Case c;
    c.tensor = tile({1, 1, 32, 32 * rule.tiles});
    c.topology = rule.topology;
    c.group = rule.group;
    c.num_links = rule.links;
    ar::Params p = params_of(*device, c);
    p.legacy_composite_max_weighted_bytes = 0;
    EXPECT_EQ(ar::resolved_algorithm(p, device->topology()), rule.expected);
    // Whatever Auto picks builds; reduce_scatter + all_gather forced where Auto did not pick it
    // is refused by the legacy reduce_scatter (or by the slices not dividing).
    const auto builds = [&](ar::Algorithm algorithm) {
      p.algorithm = algorithm;
      p.input_buffer = device->create_buffer(runtime::ccl::interleaved_buffer_config(p.tensor, BufferType::Dram));
      p.output_buffer = p.input_buffer;
      p.intermediate_buffer = device->create_buffer(
          runtime::ccl::interleaved_buffer_config(ar::intermediate_spec(p, device->topology()), BufferType::Dram));
      (void)ar::build(p, device->topology());
    };
    EXPECT_NO_THROW(builds(ar::Algorithm::Auto));
    EXPECT_NO_THROW(builds(ar::Algorithm::Composite));
    if (rule.expected == ar::Algorithm::Composite) {
      EXPECT_THROW(builds(ar::Algorithm::ReduceScatterAllGather), runtime::ccl::CclParamsError);
    }
  }
}

// Auto's default in legacy mode, end to end and bit for bit: the composite at small sizes whose
// pages divide (where rs-ag would run, and lose: all_reduce.hpp), rs-ag just above the threshold.
// bf16 tiles weigh 2304 B (2048 + 256): N300 10 tiles (23040 <= 24 KiB) / 12; the T3K 4-line 20
// tiles (46080 <= 48 KiB) / 24; the 8-line 32 tiles (73728 <= 80 KiB) / 40; the 8-ring's first
// rs-ag size, 16 tiles (36864 > 30 KiB); 128 B ROW_MAJOR rows on the MMIO square as a ring, 64
// rows (64 x 384 = 24 KiB) / 96 rows (36 KiB). On 2 links the thresholds rise (all_reduce.hpp;
// session 12's re-fit): the 4-line's to 59 KiB, so 44 rows of 1 KiB (55 KiB; rs-ag on 1 link)
// and 156 rows of 128 B (58.5 KiB; rs-ag under session 11's 56 KiB) are the composite there and
// 48 rows of 1 KiB (60 KiB) rs-ag; the square ring's to 35 KiB, so 92 rows of 128 B (34.5 KiB;
// rs-ag on 1 link) are the composite and 96 rs-ag. Each pick is the faster one as measured after
// the NoC gaps (4-line 2 links, 44 rows of 1 KiB: 55.85 against rs-ag 58.55 us, 156 rows of 128 B
// 56.67 against 57.83, 48 rows of 1 KiB rs-ag 58.72 against 59.75; ring 2 links, 92 rows: 33.25
// against 33.79, 96 rows rs-ag 33.80 against 33.94).
TEST(LegacyAllReduceAuto, CompositeAtSmallDividingSizesEndToEnd) {
  struct Run {
    const char* name;
    topo::Topology topology;
    TensorSpec tensor;
    CclTopology shape;
    std::vector<ChipId> group;
    ar::Algorithm expected;
    std::uint32_t links = 1;
  };
  const TensorSpec rows64{{1, 1, 64, 64}, DataType::Bfloat16, Layout::RowMajor};
  const TensorSpec rows92{{1, 1, 92, 64}, DataType::Bfloat16, Layout::RowMajor};
  const TensorSpec rows96{{1, 1, 96, 64}, DataType::Bfloat16, Layout::RowMajor};
  const TensorSpec rows44x1k{{1, 1, 44, 512}, DataType::Bfloat16, Layout::RowMajor};
  const TensorSpec rows48x1k{{1, 1, 48, 512}, DataType::Bfloat16, Layout::RowMajor};
  const TensorSpec rows156{{1, 1, 156, 64}, DataType::Bfloat16, Layout::RowMajor};
  const std::vector<Run> runs = {
      {"n300 10 tiles", topo::build_n300(), tile({1, 1, 32, 32 * 10}), CclTopology::Line, {}, ar::Algorithm::Composite},
      {"n300 12 tiles", topo::build_n300(), tile({1, 1, 32, 32 * 12}), CclTopology::Line, {},
       ar::Algorithm::ReduceScatterAllGather},
      {"t3k 4-line 20 tiles", topo::build_t3k(), tile({1, 1, 32, 32 * 20}), CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::Composite},
      {"t3k 4-line 24 tiles", topo::build_t3k(), tile({1, 1, 32, 32 * 24}), CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather},
      {"t3k 8-line 32 tiles", topo::build_t3k(), tile({1, 1, 32, 32 * 32}), CclTopology::Line, {},
       ar::Algorithm::Composite},
      {"t3k 8-line 40 tiles", topo::build_t3k(), tile({1, 1, 32, 32 * 40}), CclTopology::Line, {},
       ar::Algorithm::ReduceScatterAllGather},
      {"t3k 8-ring 16 tiles", topo::build_t3k(), tile({1, 1, 32, 32 * 16}), CclTopology::Ring, {},
       ar::Algorithm::ReduceScatterAllGather},
      {"mmio square ring, 64 rows of 128 B", topo::build_t3k(), rows64, CclTopology::Ring, kT3kMmioSquare,
       ar::Algorithm::Composite},
      {"mmio square ring, 96 rows of 128 B", topo::build_t3k(), rows96, CclTopology::Ring, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather},
      {"mmio square ring, 92 rows of 128 B", topo::build_t3k(), rows92, CclTopology::Ring, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather},
      {"mmio square ring on 2 links, 92 rows of 128 B", topo::build_t3k(), rows92, CclTopology::Ring, kT3kMmioSquare,
       ar::Algorithm::Composite, 2},
      {"mmio square ring on 2 links, 96 rows of 128 B", topo::build_t3k(), rows96, CclTopology::Ring, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather, 2},
      {"t3k 4-line, 44 rows of 1 KiB", topo::build_t3k(), rows44x1k, CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather},
      {"t3k 4-line on 2 links, 44 rows of 1 KiB", topo::build_t3k(), rows44x1k, CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::Composite, 2},
      {"t3k 4-line on 2 links, 156 rows of 128 B", topo::build_t3k(), rows156, CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::Composite, 2},
      {"t3k 4-line on 2 links, 48 rows of 1 KiB", topo::build_t3k(), rows48x1k, CclTopology::Line, kT3kMmioSquare,
       ar::Algorithm::ReduceScatterAllGather, 2},
  };
  for (const Run& r : runs) {
    SCOPED_TRACE(r.name);
    auto device = legacy_device(r.topology);
    Case c;
    c.tensor = r.tensor;
    c.topology = r.shape;
    c.group = r.group;
    c.num_links = r.links;
    const Outcome o = run_case(*device, c);
    EXPECT_EQ(o.algorithm, r.expected);
    EXPECT_EQ(o.workloads, 2u);  // the gather and the local sum, or the two halves
    // The composite's gather is the only op with EDMs on it (one set); rs-ag launches two.
    EXPECT_EQ(o.edms, (r.expected == ar::Algorithm::Composite ? 1u : 2u) * edms_of(r.shape, o.group_size, r.links));
  }
}

// The one-shot multicasts over the fabric: refused in legacy mode, the message naming the
// composite.
TEST(LegacyAllReduceAuto, OneShotRefusedNamingTheComposite) {
  auto device = legacy_device(topo::build_t3k());
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 3});
  c.algorithm = ar::Algorithm::OneShot;
  try {
    (void)ar::resolved_algorithm(params_of(*device, c), device->topology());
    ADD_FAILURE() << "the one-shot ran in legacy mode";
  } catch (const runtime::ccl::CclParamsError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("legacy"), std::string::npos) << what;
    EXPECT_NE(what.find("composite"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
