#include "runtime/ccl/broadcast/broadcast.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/link_senders.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::broadcast {
namespace {

constexpr const char* kOp = "broadcast";

// The groups on the fabric and the rank that is every group's root.
struct Placed {
  PlacedGroups placed;
  std::uint32_t root_rank = 0;
};

Placed place(const Params& p, const topo::Topology& topology) {
  topology.chip(p.root);
  if (p.fabric.mode == FabricMode::None) throw CclParamsError("broadcast: needs a fabric; fabric mode is none");
  if (p.num_links == 0) throw CclParamsError("broadcast: num_links is 0; expected at least 1");
  const FabricPlan plan(topology, p.fabric);
  const std::vector<std::vector<ChipId>> groups = resolve_groups(p.groups, topology, plan);
  const auto root_group = std::find_if(groups.begin(), groups.end(), [&p](const std::vector<ChipId>& g) {
    return std::find(g.begin(), g.end(), p.root) != g.end();
  });
  if (root_group == groups.end()) {
    throw CclParamsError(fmt::format("broadcast: root chip {} is in none of the {} group(s); expected a chip of one",
                                     p.root, groups.size()));
  }
  // The groups multicast both ways round their rings when every group is a whole fabric ring;
  // else every group multicasts as a line, to both of its ends (a line multicast reaches every
  // chip of an intact ring too). So a per-axis ring opened into a line around a down link
  // (FabricOptions::down_edges) runs every group as a line, whichever group the root is in:
  // choosing by the root's group alone ran them so when the down link was on the root's group,
  // and refused the op (a ring group run as a line) when it was on another group.
  const auto whole_ring = [&plan](const std::vector<ChipId>& group) {
    const std::optional<std::uint32_t> line = plan.line_containing(group);
    if (!line) return false;
    const FabricLine& fabric_line = plan.lines()[*line];
    return fabric_line.mode == FabricMode::Ring && fabric_line.chips.size() == group.size() && group.size() > 2;
  };
  const CclTopology shape =
      std::all_of(groups.begin(), groups.end(), whole_ring) ? CclTopology::Ring : CclTopology::Line;
  Placed result{place_groups(p.groups, topology, p.fabric, shape, p.num_links, kOp), 0};
  result.root_rank = static_cast<std::uint32_t>(std::find(root_group->begin(), root_group->end(), p.root) -
                                                root_group->begin());
  return result;
}

// Ranks the multicast reaches upward and downward from the root: a ring n/2 one way and
// (n - 1)/2 the other, a line both of its ends.
cmd::ChipMulticast targets(const FabricGroup& g, std::uint32_t root) {
  const std::uint32_t n = g.size();
  if (g.topology == CclTopology::Ring) return g.multicast(root, n / 2, (n - 1) / 2);
  return g.multicast(root, g.reach_up(root), g.reach_down(root));
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.root, p.input, p.output, p.groups, p.fabric, p.worker, p.num_links, p.packet_size_in_pages,
                     p.cb_packets, p.split_reader_writer);
}

void validate(const Params& p, const topo::Topology& topology) {
  require_same_shape(p.input, p.output, kOp);
  require_worker_core(topology, p.worker, kOp);
  if (p.cb_packets == 0) throw CclParamsError("broadcast: cb_packets is 0; expected at least 1");
  const Placed placed = place(p, topology);
  worker_cores(topology, p.worker, p.num_links, kOp);  // throws when the root's workers do not fit
  require_uniform_core_maps(topology, placed.placed.all_chips, kOp);
  require_buffer_layouts(topology, placed.placed.all_chips, {&p.output, &p.input});
  for (const FabricGroup& g : placed.placed.groups) {
    const cmd::ChipMulticast t = targets(g, g.position_of(placed.root_rank));
    if (t.num_targets_forward > kMaxFabricHops || t.num_targets_backward > kMaxFabricHops) {
      throw CclParamsError(fmt::format("broadcast: a multicast reaches at most {} chips per direction; root {} needs "
                                       "{} forward and {} backward",
                                       kMaxFabricHops, g.chips[g.position_of(placed.root_rank)],
                                       t.num_targets_forward,
                                       t.num_targets_backward));
    }
  }
  packet_size_in_pages(p.packet_size_in_pages, p.input.config.page_size_bytes, p.fabric.max_payload_bytes);
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  validate(p, topology);
  const Placed placed = place(p, topology);
  const std::uint32_t page_size = p.input.config.page_size_bytes;
  const std::uint32_t packet_pages = packet_size_in_pages(p.packet_size_in_pages, page_size, p.fabric.max_payload_bytes);
  // One root worker per link, each multicasting its own run of the pages on its own routing plane.
  const std::vector<CoreCoord> senders = worker_cores(topology, p.worker, p.num_links, kOp);
  const std::vector<api::TensorSlice> runs =
      cmd::split_tensor_slice_across_workers_wrapped_page_aligned(whole_buffer_slice(p.input), p.num_links);

  // The root's position on its group's line: its rank's, unless the line starts mid-ring.
  MeshWorkload workload = per_rank_workload(kOp, placed.placed.groups, [&](const FabricGroup& g, std::uint32_t position) {
    if (g.rank_at(position) != placed.root_rank) return done_waiter_program(p.worker, p.num_links);
    const ChipBuffers root(topology, g.chips[position]);
    Program root_program;
    add_link_senders(root_program, placed.placed.plan,
                     LinkSenders{g.chips[position], g.fabric_line, senders, runs, root.interpreter_args(p.input),
                                 root.interpreter_args(p.output), targets(g, position), root.map().tensix_noc0(p.worker), page_size, packet_pages, p.cb_packets,
                                 p.split_reader_writer});
    return root_program;
  });
  workload.buffers = workload_buffers({&p.input, &p.output});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

}  // namespace cclmesh::runtime::ccl::broadcast
