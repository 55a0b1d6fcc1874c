// Identical groups simulated once (sim/device/mirrored_groups.hpp): a timing-only per-axis op on
// the simulated Galaxy gives, group by group, the kernel profile and link counters it gives with
// every group simulated, from a quarter (axis 1) or an eighth (axis 0) of the events; and what
// the device refuses: data, groups whose systems or programs differ, a workload whose traffic
// crosses between the groups it was told are independent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <tuple>

#include "sim/device/mirrored_groups.hpp"
#include "sim/engine/check.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/embedding.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
using sim::device::MirroredGroups;
using sim::device::SimMeshDevice;
using sim::device::SimMeshDeviceOptions;

std::vector<std::vector<ChipId>> groups_along(const topo::Topology& topology, int axis) {
  std::vector<std::vector<ChipId>> groups;
  for (const auto& group : topo::axis_groups(topology, axis)) groups.push_back(to_runtime(group));
  return groups;
}

SimMeshDeviceOptions timing_only_axes_device(std::vector<std::vector<ChipId>> mirrored) {
  SimMeshDeviceOptions options;
  options.data_mode = sim::DataMode::TimingOnly;
  options.fabric = fabric_of(FabricMode::Line, runtime::FabricScope::Axes);
  options.mirrored_groups = std::move(mirrored);
  return options;
}

// An all_gather along `axis` on every group of the Galaxy at once: 4 pages per chip.
std::vector<runtime::MeshWorkload> axis_all_gather(SimMeshDevice& device, int axis) {
  ag::Params p;
  p.input = runtime::ccl::TensorSpec{{1, 1, 32, 4 * 32}, DataType::Bfloat16, Layout::Tile};
  p.dim = 3;
  p.topology = CclTopology::Line;
  p.groups.cluster_axis = axis;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(buffer_config(p.input, Memory{}));
  p.output_buffer = device.create_buffer(buffer_config(ag::output_spec(p, device.topology()), Memory{}));
  p.done_semaphore =
      device.create_global_semaphore(ag::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
  return ag::build_workloads(p, device.topology());
}

struct Outcome {
  std::vector<runtime::KernelProfile> profile;
  std::vector<runtime::LinkTraffic> links;
  std::uint64_t events = 0;
};

Outcome run_all_gather(const topo::Topology& topology, int axis, std::vector<std::vector<ChipId>> mirrored) {
  SimMeshDevice device(topology, timing_only_axes_device(std::move(mirrored)));
  const std::vector<runtime::MeshWorkload> workloads = axis_all_gather(device, axis);
  const std::uint64_t before = device.stats().events_executed;
  device.enqueue_workloads(workloads);
  device.finish();
  Outcome outcome{device.profile(), *device.link_traffic(), device.stats().events_executed - before};
  // Indices count the mirrors' copies: the size and a range are those of the list as read whole.
  EXPECT_EQ(device.profile_size(), outcome.profile.size());
  const std::size_t half = outcome.profile.size() / 2;
  EXPECT_EQ(device.profile_since(half),
            std::vector<runtime::KernelProfile>(outcome.profile.begin() + static_cast<std::ptrdiff_t>(half),
                                                outcome.profile.end()));
  const auto order = [](const runtime::KernelProfile& a, const runtime::KernelProfile& b) {
    return std::tie(a.chip, a.core_kind, a.core, a.kernel, a.start_ns, a.end_ns, a.ready_ns) <
           std::tie(b.chip, b.core_kind, b.core, b.kernel, b.start_ns, b.end_ns, b.ready_ns);
  };
  std::sort(outcome.profile.begin(), outcome.profile.end(), order);
  return outcome;
}

void expect_mirroring_changes_no_figure(int axis) {
  const topo::Topology galaxy = topo::load_system("galaxy");
  const std::vector<std::vector<ChipId>> groups = groups_along(galaxy, axis);
  const Outcome every_group = run_all_gather(galaxy, axis, {});
  const Outcome mirrored = run_all_gather(galaxy, axis, groups);
  ASSERT_FALSE(every_group.profile.empty());
  EXPECT_EQ(mirrored.profile, every_group.profile);
  EXPECT_EQ(mirrored.links, every_group.links);
  std::uint64_t carried = 0;
  for (const runtime::LinkTraffic& t : every_group.links) carried += t.payload_bytes;
  EXPECT_GT(carried, 0u);
  // The op's events of one group, not of every group's (at 4 pages a chip: ~1.1/G of them).
  EXPECT_LT(mirrored.events * 2, every_group.events);
}

TEST(MirroredGroups, GalaxyRowsGiveEveryChipTheProfileAndLinkCountersOfAFullRun) { expect_mirroring_changes_no_figure(1); }
TEST(MirroredGroups, GalaxyColumnsGiveEveryChipTheProfileAndLinkCountersOfAFullRun) {
  expect_mirroring_changes_no_figure(0);
}

TEST(MirroredGroups, ACountedRunNamesTheChipsItMirrors) {
  const MirroredGroups groups({{0, 1}, {2, 3}, {4, 5}});
  EXPECT_EQ(groups.counterpart(3), ChipId{1});
  EXPECT_EQ(groups.counterpart(4), ChipId{0});
  EXPECT_EQ(groups.counterpart(1), std::nullopt);
  EXPECT_EQ(groups.counterpart(9), std::nullopt);
  EXPECT_EQ(groups.mirrors_of(1), (std::vector<ChipId>{3, 5}));
  EXPECT_TRUE(groups.mirrors_of(3).empty());
  EXPECT_TRUE(groups.same_group(2, 3));
  EXPECT_FALSE(groups.same_group(1, 2));
  EXPECT_FALSE(groups.same_group(1, 9));
  const std::deque<runtime::KernelProfile> simulated{{1, runtime::CoreKind::Tensix, {0, 0}, "k", 10, 20, std::nullopt},
                                                      {9, runtime::CoreKind::Tensix, {0, 0}, "k", 11, 21, std::nullopt}};
  const std::vector<runtime::KernelProfile> profile = groups.mirrored_profile(simulated);
  ASSERT_EQ(profile.size(), 4u);
  EXPECT_EQ(profile[0].chip, ChipId{1});
  EXPECT_EQ(profile[1].chip, ChipId{3});
  EXPECT_EQ(profile[2].chip, ChipId{5});
  EXPECT_EQ(profile[2].end_ns, 20u);
  EXPECT_EQ(profile[3].chip, ChipId{9});  // outside every group: once
  EXPECT_EQ(groups.mirrored_profile_size(simulated), 4u);  // SimMeshDevice::profile_size()'s count
}

TEST(MirroredGroups, ClassesOfIdenticalGroupsEachRunOneGroup) {
  const MirroredGroups groups({{0, 1}, {2, 3}, {4, 5}, {6, 7}}, {0, 1, 1, 0});
  EXPECT_EQ(groups.mirrored_count(), 2u);
  EXPECT_EQ(groups.counterpart(7), ChipId{1});
  EXPECT_EQ(groups.counterpart(4), ChipId{2});
  EXPECT_EQ(groups.counterpart(2), std::nullopt);
  EXPECT_EQ(groups.mirrors_of(3), (std::vector<ChipId>{5}));
  EXPECT_EQ(groups.mirrors_of(0), (std::vector<ChipId>{6}));
  EXPECT_EQ(groups.simulated_chips(), "0-1, 2-3");
}

TEST(MirroredGroups, T3kColumnsFormTwoClassesOfIdenticalColumns) {
  // The T3K's columns (4-5, 0-1, 2-3, 6-7) link over channels 6/7 at the ends and 14/15 in the
  // middle: the end columns are one class, the middle ones another.
  const topo::Topology t3k = topo::load_system("t3k");
  const std::vector<std::vector<ChipId>> columns = groups_along(t3k, 0);
  SimMeshDevice device(t3k, timing_only_axes_device({}));
  const std::vector<runtime::MeshWorkload> workloads = axis_all_gather(device, 0);
  EXPECT_EQ(MirroredGroups::fewest_sources(columns, t3k, device.fabric_plan(), workloads),
            (std::vector<std::size_t>{0, 1, 1, 0}));
  // The rows (4-0-2-6, 5-1-3-7) reach their neighbours over other channels: both run.
  const std::vector<std::vector<ChipId>> rows = groups_along(t3k, 1);
  EXPECT_EQ(MirroredGroups::fewest_sources(rows, t3k, device.fabric_plan(), axis_all_gather(device, 1)),
            (std::vector<std::size_t>{0, 1}));
}

TEST(MirroredGroups, GroupsOfOneOrOfDifferentSizesOrSharingAChipAreRefused) {
  EXPECT_THROW(MirroredGroups({{0, 1}}), std::invalid_argument);
  EXPECT_THROW(MirroredGroups({{0, 1}, {2}}), std::invalid_argument);
  EXPECT_THROW(MirroredGroups({{0, 1}, {1, 2}}), std::invalid_argument);
  EXPECT_THROW(MirroredGroups(std::vector<std::vector<ChipId>>{{}, {}}), std::invalid_argument);
  // A source must be a simulated group of the same size.
  EXPECT_THROW(MirroredGroups({{0, 1}, {2, 3}, {4, 5}}, {0, 0, 1}), std::invalid_argument);
  EXPECT_THROW(MirroredGroups({{0, 1}, {2, 3}}, {0, 2}), std::invalid_argument);
  EXPECT_THROW(MirroredGroups({{0, 1}, {2, 3}}, {0}), std::invalid_argument);
}

TEST(MirroredGroups, ADeviceWithDataOrAnAdjustedRouterRefusesThem) {
  const topo::Topology galaxy = topo::load_system("galaxy");
  SimMeshDeviceOptions with_data = timing_only_axes_device(groups_along(galaxy, 1));
  with_data.data_mode = sim::DataMode::Functional;
  EXPECT_THROW(SimMeshDevice(galaxy, with_data), std::invalid_argument);
  SimMeshDeviceOptions adjusted = timing_only_axes_device(groups_along(galaxy, 1));
  adjusted.adjust_router_config = [](const runtime::FabricRouterSite&, kernels::FabricRouterConfig&) {};
  EXPECT_THROW(SimMeshDevice(galaxy, adjusted), std::invalid_argument);
}

TEST(MirroredGroups, GroupsWhoseLinksDifferAreNotMirrored) {
  const topo::Topology galaxy = topo::load_system("galaxy");
  const std::vector<std::vector<ChipId>> rows = groups_along(galaxy, 1);
  const runtime::FabricPlan plan(galaxy, fabric_of(FabricMode::Line, runtime::FabricScope::Axes));
  const MirroredGroups mirrored(rows);
  EXPECT_EQ(mirrored.why_systems_differ(galaxy, plan), std::nullopt);
  // One hop of row 2 twice as slow: that row is another system.
  std::vector<topo::EthLink> links(galaxy.links().begin(), galaxy.links().end());
  const ChipId a = rows[2][3];
  const ChipId b = rows[2][4];
  for (topo::EthLink& link : links) {
    if (static_cast<ChipId>(link.a.chip) == std::min(a, b) && static_cast<ChipId>(link.b.chip) == std::max(a, b)) {
      link.rate_bytes_per_s /= 2;
    }
  }
  const topo::Topology slower("galaxy-slow-hop", std::vector<topo::Chip>(galaxy.chips().begin(), galaxy.chips().end()),
                              links, galaxy.mesh_shape());
  const std::optional<std::string> why =
      mirrored.why_systems_differ(slower, runtime::FabricPlan(slower, fabric_of(FabricMode::Line, runtime::FabricScope::Axes)));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find(fmt::format("chip {}'s links (group 2)", a)), std::string::npos) << *why;
  EXPECT_THROW(SimMeshDevice(slower, timing_only_axes_device(rows)), std::invalid_argument);
}

TEST(MirroredGroups, WorkloadsThatDifferBetweenGroupsAreRefused) {
  const topo::Topology galaxy = topo::load_system("galaxy");
  const std::vector<std::vector<ChipId>> rows = groups_along(galaxy, 1);
  SimMeshDevice device(galaxy, timing_only_axes_device(rows));
  std::vector<runtime::MeshWorkload> workloads = axis_all_gather(device, 1);
  const MirroredGroups mirrored(rows);
  EXPECT_EQ(mirrored.why_workloads_differ(galaxy, workloads), std::nullopt);
  // One runtime arg of one kernel of a chip of row 3.
  std::vector<runtime::MeshWorkload> edited = workloads;
  runtime::KernelSpec& kernel = edited[0].programs.at(rows[3][5]).kernels.at(0);
  kernel.common_runtime_args.push_back(7);
  const std::optional<std::string> why = mirrored.why_workloads_differ(galaxy, edited);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find(fmt::format("chip {}'s program (group 3) differs from chip {}'s (group 0)", rows[3][5], rows[0][5])),
            std::string::npos)
      << *why;
  EXPECT_THROW(device.enqueue_workloads(edited), std::invalid_argument);
  // A chip of row 1 without its program.
  std::vector<runtime::MeshWorkload> missing = workloads;
  missing[0].programs.erase(rows[1][0]);
  EXPECT_TRUE(mirrored.why_workloads_differ(galaxy, missing).has_value());
}

TEST(MirroredGroups, TrafficBetweenGroupsStopsTheRun) {
  // Rank 0 of every row runs the same program, a send to the chip below it over the per-axis
  // fabric's column: the programs compare equal, but the data crosses from row to row.
  const topo::Topology galaxy = topo::load_system("galaxy");
  const std::vector<std::vector<ChipId>> rows = groups_along(galaxy, 1);
  SimMeshDevice device(galaxy, timing_only_axes_device(rows));
  runtime::ccl::send_recv::Params p;
  p.sender = rows[0][0];
  p.receiver = rows[1][0];
  p.fabric = device.options().fabric;
  const runtime::ccl::TensorSpec tensor{{1, 1, 32, 4 * 32}, DataType::Bfloat16, Layout::Tile};
  p.input = device.create_buffer(buffer_config(tensor, Memory{}));
  p.output = device.create_buffer(buffer_config(tensor, Memory{}));
  runtime::MeshWorkload sends = runtime::ccl::send_recv::build(p, device.topology());
  const runtime::Program send = sends.programs.at(p.sender);
  sends.programs.clear();
  for (const std::vector<ChipId>& row : rows) sends.programs[row[0]] = send;
  device.enqueue_workload(sends);
  try {
    device.finish();
    FAIL() << "the run finished";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("crossed links between groups"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
