#include "runtime/ccl/broadcast/broadcast.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/link_senders.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::broadcast {
namespace {

constexpr const char* kOp = "broadcast";

// The groups on the fabric, the rank that is every group's root, and how the ring groups run.
struct Placed {
  PlacedGroups placed;
  std::uint32_t root_rank = 0;
  bool split = false;  // RingAlgorithm::Split
  std::string reason;  // why (RingAlgorithmChoice)
};

// The algorithm of groups that run as `shape`, and why: below (RingAlgorithm).
RingAlgorithmChoice ring_choice(const Params& p, const FabricPlan& plan, const std::vector<std::vector<ChipId>>& groups,
                                CclTopology shape) {
  if (shape == CclTopology::Line) {
    // A ring the per-axis fabric opened around a down link runs as a line, as every op's does.
    const bool opened_ring = std::any_of(plan.lines().begin(), plan.lines().end(),
                                         [](const FabricLine& line) { return line.opened_at.has_value(); });
    if (p.ring_algorithm == RingAlgorithm::Split && !opened_ring) {
      throw CclParamsError(fmt::format(
          "broadcast: ring_algorithm split multicasts half the tensor each way round a whole fabric ring; these "
          "groups ({} of {} chips) run as a line on a {} fabric (a group is a ring only where it is the whole "
          "of a fabric ring of 3 or more chips); expected ring_algorithm auto or both_ways",
          groups.size(), groups.front().size(), p.fabric.mode == FabricMode::Ring ? "ring" : "line"));
    }
    return {RingAlgorithm::BothWays, "the groups run as a line: the root multicasts to both of its ends"};
  }
  if (p.ring_algorithm == RingAlgorithm::BothWays) return {RingAlgorithm::BothWays, "asked for"};
  std::size_t largest = 0;
  for (const std::vector<ChipId>& group : groups) largest = std::max(largest, group.size());
  const auto hops = static_cast<std::uint32_t>(largest - 1);  // the longest ring's multicast
  if (hops > kMaxFabricHops) {
    if (p.ring_algorithm == RingAlgorithm::Split) {
      throw CclParamsError(fmt::format("broadcast: ring_algorithm split multicasts round the whole ring, {} hops "
                                       "on a ring of {} chips; a multicast reaches at most {} (expected "
                                       "ring_algorithm auto or both_ways, or a ring of at most {} chips)",
                                       hops, hops + 1, kMaxFabricHops, kMaxFabricHops + 1));
    }
    return {RingAlgorithm::BothWays,
            fmt::format("auto: a split's {} hops on a ring of {} chips are past a multicast's {}", hops, hops + 1,
                        kMaxFabricHops)};
  }
  if (p.ring_algorithm == RingAlgorithm::Split) return {RingAlgorithm::Split, "asked for"};
  const std::uint64_t bytes = p.input.config.size_bytes;
  const std::uint64_t threshold = std::uint64_t{p.num_links} * hops * kSplitMinBytesPerLinkAndHop;
  if (bytes >= threshold) {
    return {RingAlgorithm::Split,
            fmt::format("auto: {} B reach the split's {} B ({} link(s) x {} hops x {} B)", bytes, threshold,
                        p.num_links, hops, kSplitMinBytesPerLinkAndHop)};
  }
  return {RingAlgorithm::BothWays, fmt::format("auto: {} B are below the split's {} B ({} link(s) x {} hops x {} B)",
                                               bytes, threshold, p.num_links, hops, kSplitMinBytesPerLinkAndHop)};
}

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
  // The groups multicast round their rings when every group is a whole fabric ring; else every
  // group multicasts as a line, to both of its ends and no further (a line multicast reaches every
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
  const RingAlgorithmChoice choice = ring_choice(p, plan, groups, shape);
  Placed result{place_groups(p.groups, topology, p.fabric, shape, p.num_links, kOp), 0,
                choice.algorithm == RingAlgorithm::Split, choice.reason};
  result.root_rank = static_cast<std::uint32_t>(std::find(root_group->begin(), root_group->end(), p.root) -
                                                root_group->begin());
  return result;
}

// The multicasts a root at `root` makes, one set of num_links workers each, in fabric terms. A
// line: one, to both of its ends. A ring, both ways: one, n/2 chips forward and (n - 1)/2
// backward. A ring, split: n - 1 chips forward and n - 1 backward, each with half the pages.
std::vector<cmd::ChipMulticast> multicasts(const FabricGroup& g, std::uint32_t root, bool split) {
  const std::uint32_t n = g.size();
  if (split) return {cmd::ChipMulticast{n - 1, 0}, cmd::ChipMulticast{0, n - 1}};
  if (g.topology == CclTopology::Ring) return {g.multicast(root, n / 2, (n - 1) / 2)};
  return {g.multicast(root, g.reach_up(root), g.reach_down(root))};
}

// The root's worker cores, num_links per multicast: multicast d's along the row from `worker`
// moved d rows down. NoC0 runs east then south (REFERENCE 1.2), so workers side by side on one
// row share its eastward links with every local and router write they make: a split's two
// directions on one row ran at 13.36 GB/s together (ring:8, 16 MiB; that row's link 91% busy),
// on two rows at 17.38, each at a line root's pace.
std::vector<CoreCoord> root_cores(const Params& p, const topo::Topology& topology, std::uint32_t multicast_count) {
  std::vector<CoreCoord> cores;
  for (std::uint32_t d = 0; d < multicast_count; ++d) {
    for (const CoreCoord core : worker_cores(topology, CoreCoord{p.worker.x, p.worker.y + d}, p.num_links, kOp)) {
      if (std::find(cores.begin(), cores.end(), core) != cores.end()) {
        throw CclParamsError(fmt::format("broadcast: {} links' workers per direction from ({},{}) run into the next "
                                         "direction's row, which starts at ({},{}); expected at most a row's width "
                                         "of links",
                                         p.num_links, p.worker.x, p.worker.y, p.worker.x, p.worker.y + d));
      }
      cores.push_back(core);
    }
  }
  return cores;
}

std::uint32_t multicast_count(const Placed& placed) { return placed.split ? 2 : 1; }

// The root's workers: num_links per multicast, direction-major, worker d * L + k on plane k with
// the (d * L + k)-th run of the pages.
std::vector<LinkSender> root_senders(const Params& p, const topo::Topology& topology, const FabricPages& pages,
                                     const std::vector<cmd::ChipMulticast>& destinations) {
  const std::vector<CoreCoord> cores = root_cores(p, topology, static_cast<std::uint32_t>(destinations.size()));
  const std::vector<api::TensorSlice> runs = cmd::split_tensor_slice_across_workers_wrapped_page_aligned(
      all_fabric_pages(pages), static_cast<std::uint32_t>(cores.size()));
  std::vector<LinkSender> senders;
  for (std::uint32_t i = 0; i < cores.size(); ++i) {
    senders.push_back({cores[i], runs[i], i % p.num_links, destinations[i / p.num_links]});
  }
  return senders;
}

}  // namespace

std::string to_string(RingAlgorithm algorithm) {
  switch (algorithm) {
    case RingAlgorithm::Auto:
      return "auto";
    case RingAlgorithm::BothWays:
      return "both_ways";
    case RingAlgorithm::Split:
      return "split";
  }
  return "unknown";
}

RingAlgorithmChoice ring_algorithm_choice(const Params& params, const topo::Topology& topology) {
  Placed placed = place(params, topology);
  return {placed.split ? RingAlgorithm::Split : RingAlgorithm::BothWays, std::move(placed.reason)};
}

RingAlgorithm resolved_ring_algorithm(const Params& params, const topo::Topology& topology) {
  return ring_algorithm_choice(params, topology).algorithm;
}

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.root, p.input, p.output, p.groups, p.fabric, p.ring_algorithm, p.worker, p.num_links,
                     p.packet_size_in_pages, p.cb_packets, p.split_reader_writer);
}

void validate(const Params& p, const topo::Topology& topology) {
  require_same_shape(p.input, p.output, kOp);
  require_worker_core(topology, p.worker, kOp);
  if (p.cb_packets == 0) throw CclParamsError("broadcast: cb_packets is 0; expected at least 1");
  const Placed placed = place(p, topology);
  root_cores(p, topology, multicast_count(placed));  // throws when the root's workers do not fit
  require_uniform_core_maps(topology, placed.placed.all_chips, kOp);
  require_buffer_layouts(topology, placed.placed.all_chips, {&p.output, &p.input});
  for (const FabricGroup& g : placed.placed.groups) {
    const std::uint32_t root = g.position_of(placed.root_rank);
    const std::vector<cmd::ChipMulticast> destinations = multicasts(g, root, placed.split);
    for (const cmd::ChipMulticast& t : destinations) {
      if (t.num_targets_forward > kMaxFabricHops || t.num_targets_backward > kMaxFabricHops) {
        throw CclParamsError(fmt::format("broadcast: a multicast reaches at most {} chips per direction; root {} "
                                         "needs {} forward and {} backward",
                                         kMaxFabricHops, g.chips[root], t.num_targets_forward,
                                         t.num_targets_backward));
      }
    }
  }
  const FabricPages pages = fabric_pages(p.input.config, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
  packet_size_in_pages(p.packet_size_in_pages, pages.page_bytes, p.fabric.max_payload_bytes);
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  validate(p, topology);
  const Placed placed = place(p, topology);
  // A page wider than a fabric payload (a ROW_MAJOR row) moves in pieces, each a page to the workers.
  const FabricPages pages = fabric_pages(p.input.config, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
  const std::uint32_t packet_pages =
      packet_size_in_pages(p.packet_size_in_pages, pages.page_bytes, p.fabric.max_payload_bytes);
  // Every chip waits for one increment per root worker; every root has as many.
  const std::uint32_t workers = multicast_count(placed) * p.num_links;

  // The root's position on its group's line: its rank's, unless the line starts mid-ring.
  MeshWorkload workload = per_rank_workload(kOp, placed.placed.groups, [&](const FabricGroup& g, std::uint32_t position) {
    if (g.rank_at(position) != placed.root_rank) return done_waiter_program(p.worker, workers);
    const ChipBuffers root(topology, g.chips[position]);
    std::vector<LinkSender> senders = root_senders(p, topology, pages, multicasts(g, position, placed.split));
    CCLMESH_CHECK(senders.size() == workers, "every broadcast root has one worker per multicast and link");
    Program root_program;
    add_link_senders(root_program, placed.placed.plan,
                     LinkSenders{g.chips[position], g.fabric_line, std::move(senders),
                                 in_fabric_pages(root.interpreter_args(p.input), pages),
                                 in_fabric_pages(root.interpreter_args(p.output), pages),
                                 root.map().tensix_noc0(p.worker), pages.page_bytes, packet_pages, p.cb_packets,
                                 p.split_reader_writer});
    return root_program;
  });
  workload.buffers = workload_buffers({&p.input, &p.output});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

}  // namespace cclmesh::runtime::ccl::broadcast
