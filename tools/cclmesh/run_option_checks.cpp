#include "tools/cclmesh/run_option_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/run_tensors.hpp"
#include "tools/cclmesh/sim_device_options.hpp"

namespace cclmesh::cli::detail {

std::string chips_as_given(const std::vector<std::uint32_t>& chips, const std::string& typed) {
  return typed.empty() ? fmt::format("{}", fmt::join(chips, ",")) : typed;
}

std::string topology_as_given(const RunOptions& options) {
  if (!options.topology_chosen_by_auto) return fmt::format("--topology {}", options.topology);
  return fmt::format("the {} --topology auto chose for {}", options.topology, options.system);
}

void reject_unsupported(const RunOptions& options, std::uint32_t n_chips) {
  const bool legacy_op = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                         options.op == CollectiveOp::AllReduce;
  if (legacy_mode(options) && !legacy_op && !options.device.empty()) {
    // The mode is the server's: `run --device` refuses --mode (session 31: this said "use --mode
    // fabric", an option the client cannot give).
    throw UsageError(fmt::format("--op: the served device runs legacy mode (cclmesh serve --mode legacy: the 2024 "
                                 "per-op EDMs, which carried only all_gather, reduce_scatter and all_reduce); {} is a "
                                 "fabric-era op (REFERENCE 5, 7.6); expected one of those three, or a server started "
                                 "with --mode fabric",
                                 to_string(options.op)));
  }
  if (legacy_mode(options) && !legacy_op) {
    throw UsageError(fmt::format("--mode: 'legacy' runs the 2024 per-op EDMs, which carried only all_gather, "
                                 "reduce_scatter and all_reduce; {} is a fabric-era op (REFERENCE 5, 7.6); use "
                                 "--mode fabric",
                                 to_string(options.op)));
  }
  // Legacy mode runs no fabric router: its EDMs size their buffers from the ERISC's L1
  // (legacy_edm_plan.hpp), and only the composite all_reduce's local sum sizes its CB packet by the
  // fabric payload (docs/collectives.md, the legacy composite). Typed where it does nothing, either
  // option would print figures the user reads as its effect.
  if ((options.ring_flow_control == runtime::RingFlowControl::Dateline || options.ring_flow_control_typed) &&
      (legacy_mode(options) || options.topology != "ring")) {
    const bool dateline = options.ring_flow_control == runtime::RingFlowControl::Dateline;
    throw UsageError(fmt::format("--ring-flow-control: '{}' given for {}; {} (REFERENCE 6.7), expected --topology "
                                 "ring in fabric mode",
                                 dateline ? "dateline" : "bubble",
                                 legacy_mode(options) ? std::string("legacy mode, which runs no fabric router")
                                                      : fmt::format("{}, which has no buffer cycle to break",
                                                                    topology_as_given(options)),
                                 dateline ? "the dateline VC is how a ring fabric's routers avoid deadlock"
                                          : "bubble flow control is how a ring fabric's routers avoid deadlock"));
  }
  // The no-bubble fault turns off a ring fabric's bubble flow control; legacy EDMs, a line's
  // routers and the dateline VC's run none, so there it ran the unfaulted op under a "# faults:
  // no-bubble" line (bug bash, session 38). A served device's faults are its server's, checked there.
  if (options.faults.no_bubble && options.device.empty() &&
      (legacy_mode(options) || options.topology != "ring" ||
       options.ring_flow_control == runtime::RingFlowControl::Dateline)) {
    throw UsageError(fmt::format(
        "--fault: 'no-bubble' given for {}; it turns off the bubble flow control of a ring fabric's routers "
        "(REFERENCE 6.7), expected a ring (--topology ring) in fabric mode with --ring-flow-control bubble (the "
        "default)",
        legacy_mode(options) ? std::string("legacy mode, which runs no fabric router")
        : options.topology != "ring"
            ? std::string("a line, whose routers run no bubble flow control (no buffer cycle to break)")
            : std::string("--ring-flow-control dateline, whose routers avoid deadlock by the dateline VC and run no "
                          "bubble flow control")));
  }
  if (options.first_level_acks && legacy_mode(options)) {
    throw UsageError(fmt::format("--first-level-acks: '{}' given in legacy mode, which runs no fabric router (the "
                                 "op's own EDMs carry its packets, REFERENCE 5); it applies in fabric mode (--mode "
                                 "fabric)",
                                 *options.first_level_acks ? "on" : "off"));
  }
  // Bubble flow control's free slot is a receiver slot; without first-level acks a forwarded
  // packet also holds its sender channel 1 slot until the peer has forwarded it on, so the
  // forwarding channels around the ring form the full cycle the rule was to keep open
  // (REFERENCE 6.7: "it needs first-level acks"). The no-bubble fault runs a ring without it.
  if (!options.first_level_acks.value_or(true) && !legacy_mode(options) && options.topology == "ring" &&
      options.ring_flow_control == runtime::RingFlowControl::Bubble && !options.faults.no_bubble) {
    throw UsageError("--first-level-acks: 'off' given for a ring with bubble flow control (--ring-flow-control "
                     "bubble, the default), which needs them (REFERENCE 6.7, PR #33222): without them a forwarded "
                     "packet holds its sender slot until the next router has passed it on, and the ring's forwarding "
                     "channels can fill to a deadlock; expected --ring-flow-control dateline (the mid-2025 ring, "
                     "which ran without them) or --topology line");
  }
  if (legacy_mode(options) && options.fabric_typed.rx_in_flight) {
    throw UsageError(fmt::format("--fabric-rx-in-flight: {} given in legacy mode, which runs no fabric router (the "
                                 "op's own EDMs carry its packets); it applies in fabric mode (--mode fabric)",
                                 options.fabric_rx_in_flight.value_or(0)));
  }
  if (legacy_mode(options) && options.fabric_typed.payload &&
      (options.op != CollectiveOp::AllReduce || options.all_reduce_algo == "rs-ag")) {
    throw UsageError(fmt::format(
        "--fabric-payload: {} B given for {}{} in legacy mode, which runs no fabric: its EDMs size their buffers from "
        "the ERISC's L1 (--erisc-unreserved-kib); it applies in fabric mode, and in legacy mode to all_reduce's "
        "composite local sum (--all-reduce-algo composite or auto)",
        options.fabric_payload_bytes, to_string(options.op),
        options.op == CollectiveOp::AllReduce ? " --all-reduce-algo rs-ag" : ""));
  }
  const bool has_workers_per_link = options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce;
  const bool relays = options.op == CollectiveOp::AllGather && options.topology == "ring" && !legacy_mode(options) &&
                      options.ag_ring_algorithm != "multicast";
  if (options.workers_per_link && (!(has_workers_per_link || relays) || legacy_mode(options))) {
    // An all_gather on a fabric ring is refused for its algorithm alone: name it, or the refusal
    // reads "(ring, fabric mode)", which is where the option applies (session 37's fuzzing).
    const std::string algorithm =
        options.op == CollectiveOp::AllGather && !legacy_mode(options) && options.topology == "ring"
            ? fmt::format(", --ag-ring-algorithm {}", options.ag_ring_algorithm)
            : "";
    throw UsageError(fmt::format("--workers-per-link: {} asked for {} ({}, {} mode{}); it applies to reduce_scatter, "
                                 "all_reduce and all_gather relaying on a ring, in fabric mode",
                                 *options.workers_per_link, to_string(options.op), options.topology, options.mode,
                                 algorithm));
  }
  // Each algorithm option typed, or set to other than its default (by a caller other than the CLI).
  const RunOptions::AlgorithmsTyped& typed = options.algorithms_typed;
  const bool ag_ring_asked = typed.ag_ring || options.ag_ring_algorithm != "auto";
  const bool rs_line_asked = typed.rs_line || options.rs_line_algorithm != "two_sided";
  const bool rs_ring_asked = typed.rs_ring || options.rs_ring_algorithm != "auto";
  const bool bcast_ring_asked = typed.bcast_ring || options.bcast_ring_algorithm != "auto";
  const bool all_reduce_algo_asked = typed.all_reduce || options.all_reduce_algo != "auto";
  if (ag_ring_asked) {
    const bool gathers = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::AllReduce;
    if (!gathers) {
      throw UsageError(fmt::format("--ag-ring-algorithm: '{}' asked for {}; it applies to all_gather and all_reduce",
                                   options.ag_ring_algorithm, to_string(options.op)));
    }
    if (options.ag_ring_algorithm == "relay" && (options.topology != "ring" || legacy_mode(options))) {
      // On a served device the fabric is the server's: `run --device` refuses --topology and
      // --mode, so the message names the server's (session 31: it asked for those options).
      const bool served = !options.device.empty();
      throw UsageError(fmt::format("--ag-ring-algorithm: 'relay' relays through workers on a fabric ring; {} a {} in "
                                   "{} mode ({}a line multicasts, legacy mode relays through its EDMs); expected {}",
                                   served ? "the served device runs" : "this is", options.topology, options.mode,
                                   served ? "its cclmesh serve's --system, --topology and --mode decide; " : "",
                                   served ? "a server started with --topology ring --mode fabric"
                                          : "--topology ring --mode fabric"));
    }
    if (legacy_mode(options)) {
      // The legacy all_gather (all_reduce's gather too) relays through its per-op EDMs whatever
      // is asked: taken, any value ran the same op (session 31's review). On a served device the
      // mode is the server's (`run --device` refuses --mode).
      throw UsageError(fmt::format("--ag-ring-algorithm: '{}' given in legacy mode, whose all_gather relays through "
                                   "its per-op EDMs whatever the algorithm; it applies in fabric mode ({})",
                                   options.ag_ring_algorithm,
                                   options.device.empty() ? "--mode fabric" : "a server started with --mode fabric"));
    }
  }
  if (typed.ag_bidirectional || options.ag_bidirectional_mode != "auto") {
    if (options.op != CollectiveOp::AllGather) {
      throw UsageError(fmt::format("--ag-bidirectional-mode: '{}' asked for {}; it applies to all_gather (all_reduce's "
                                   "all_gather half takes the rule)",
                                   options.ag_bidirectional_mode, to_string(options.op)));
    }
    if (options.topology != "ring") {
      throw UsageError(fmt::format("--ag-bidirectional-mode: '{}' asked on a {}; a line is always full-tensor (each "
                                   "chip sends its input to the chips before and after it, REFERENCE 7.3); it applies "
                                   "on a ring{}",
                                   options.ag_bidirectional_mode,
                                   options.device.empty() ? "line" : "line (the served device's)",
                                   options.device.empty() ? " (--topology ring)" : ""));
    }
    if (legacy_mode(options)) {
      throw UsageError(fmt::format("--ag-bidirectional-mode: '{}' given in legacy mode, whose ring all_gather is "
                                   "always full-tensor (REFERENCE 7.3); it applies in fabric mode ({})",
                                   options.ag_bidirectional_mode,
                                   options.device.empty() ? "--mode fabric" : "a server started with --mode fabric"));
    }
  }
  if (options.chunks_per_sync) {
    if (!relays) {
      throw UsageError(fmt::format("--chunks-per-sync: {} given for {} ({}, {} mode, --ag-ring-algorithm {}); it "
                                   "applies to all_gather relaying on a fabric ring",
                                   *options.chunks_per_sync, to_string(options.op), options.topology, options.mode,
                                   options.ag_ring_algorithm));
    }
  }
  if (n_chips < 2) {
    throw UsageError(fmt::format("--system: {} needs at least 2 chips, the system has {}", to_string(options.op), n_chips));
  }
  if (options.topology == "ring" && n_chips == 2 && !options.cluster_axis) {
    throw UsageError("--topology: a ring of 2 chips does not work (tt-metal issue #12770); use --topology line");
  }
  const bool has_dim = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                       options.op == CollectiveOp::AllToAll;
  if (options.dim && !has_dim) {
    throw UsageError(fmt::format("--dim: {} given for {}, which has no dim; --dim applies to all_gather, "
                                 "reduce_scatter and all_to_all",
                                 *options.dim, to_string(options.op)));
  }
  require_data_for_corruption(options.faults.plan, options.no_data, "a --no-data run", "run");
  if (options.simulate_every_group && (!options.no_data || !options.cluster_axis)) {
    throw UsageError(fmt::format("--simulate-every-group: given for a run {}; it applies to a --no-data run along "
                                 "--cluster-axis (a run with data, or over the whole system, simulates every chip)",
                                 options.no_data ? "over the whole system" : "with data"));
  }
  if (options.seed_typed && options.no_data) {
    throw UsageError(fmt::format("--seed: {} given for {}, which makes no input data to seed; leave out --seed, or "
                                 "{} to run with data",
                                 options.seed,
                                 options.device.empty() ? "a --no-data run" : "a device served with --no-data",
                                 options.device.empty() ? "--no-data" : "use a server started without --no-data"));
  }
  if (options.root && options.op != CollectiveOp::Reduce) {
    throw UsageError(fmt::format("--root: {} given for {}; --root applies to --op reduce", *options.root,
                                 to_string(options.op)));
  }
  if (options.rounds && options.op != CollectiveOp::AllToAll) {
    throw UsageError(fmt::format("--rounds: {} given for {}; --rounds applies to --op all_to_all", *options.rounds,
                                 to_string(options.op)));
  }
  if (options.a2a_senders != "auto" && options.op != CollectiveOp::AllToAll) {
    throw UsageError(fmt::format("--a2a-senders: '{}' given for {}; --a2a-senders applies to --op all_to_all",
                                 options.a2a_senders, to_string(options.op)));
  }
  if (rs_line_asked &&
      (!has_workers_per_link || legacy_mode(options) || options.topology != "line")) {
    throw UsageError(fmt::format("--rs-line-algorithm: '{}' given for {} on a {} in {} mode; it applies to "
                                 "reduce_scatter and all_reduce on a line in fabric mode",
                                 options.rs_line_algorithm, to_string(options.op), options.topology, options.mode));
  }
  const bool reduces_scatter = options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce;
  if (rs_ring_asked && (!reduces_scatter || legacy_mode(options) || options.topology != "ring")) {
    throw UsageError(fmt::format("--rs-ring-algorithm: '{}' given for {} on a {} in {} mode; it applies to "
                                 "reduce_scatter and all_reduce on a ring in fabric mode",
                                 options.rs_ring_algorithm, to_string(options.op), options.topology, options.mode));
  }
  if (rs_ring_asked && options.op == CollectiveOp::AllReduce &&
      options.all_reduce_algo != "auto" && options.all_reduce_algo != "rs-ag") {
    throw UsageError(fmt::format("--rs-ring-algorithm: '{}' given with --all-reduce-algo {}; it chooses the reduce_scatter "
                                 "half of rs-ag (expected --all-reduce-algo rs-ag or auto)",
                                 options.rs_ring_algorithm, options.all_reduce_algo));
  }
  if (options.rs_ring_algorithm == "one-shot" && options.workers_per_link && *options.workers_per_link > 1) {
    throw UsageError(fmt::format("--workers-per-link: {} given with --rs-ring-algorithm one-shot; the one-shot runs "
                                 "one sender per link and direction (expected 1, or --rs-ring-algorithm half-way "
                                 "or chain)",
                                 *options.workers_per_link));
  }
  if (bcast_ring_asked && (options.op != CollectiveOp::Broadcast || options.topology != "ring")) {
    throw UsageError(fmt::format("--bcast-ring-algorithm: '{}' given for {} on a {}; it applies to broadcast on a "
                                 "ring",
                                 options.bcast_ring_algorithm, to_string(options.op), options.topology));
  }
  if (all_reduce_algo_asked && options.op != CollectiveOp::AllReduce) {
    throw UsageError(fmt::format("--all-reduce-algo: '{}' given for {}; it applies to --op all_reduce",
                                 options.all_reduce_algo, to_string(options.op)));
  }
  // Legacy all_reduce: rs-ag or the composite (legacy all_gather + local sum); Auto picks by the pages.
  if (options.all_reduce_algo == "one-shot" && legacy_mode(options)) {
    throw UsageError("--all-reduce-algo: 'one-shot' in legacy mode; the one-shot multicasts through the persistent "
                     "fabric's routers, and the legacy EDMs carry neighbour to neighbour only (expected auto, rs-ag "
                     "or composite)");
  }
}

void check_chips(const RunOptions& options, const topo::Topology& topology) {
  if (options.chips.empty()) return;
  const std::string given = chips_as_given(options.chips, options.chips_given);
  if (options.cluster_axis) {
    throw UsageError(fmt::format("--chips: '{}' given with --cluster-axis {}, whose groups are the mesh's rows or "
                                 "columns; give one of them",
                                 given, *options.cluster_axis));
  }
  if (options.chips.size() < 2) {
    throw UsageError(fmt::format("--chips: '{}' is one chip; a collective needs at least 2, in line or ring order",
                                 given));
  }
  std::vector<std::uint32_t> seen;
  for (const std::uint32_t chip : options.chips) {
    if (!topology.has_chip(static_cast<topo::ChipId>(chip))) {
      throw UsageError(fmt::format("--chips: chip {} is not on {}; expected chip ids of the system (cclmesh topo "
                                   "--system {} lists them)",
                                   chip, options.system, options.system));
    }
    if (std::find(seen.begin(), seen.end(), chip) != seen.end()) {
      throw UsageError(fmt::format("--chips: chip {} appears twice in '{}'; expected each chip once", chip, given));
    }
    seen.push_back(chip);
  }
  // Checked here for both modes: legacy mode has no fabric plan to say it, and its link count
  // check would blame --links for a hop with no link at all.
  const auto linked = [&](std::uint32_t a, std::uint32_t b) {
    return topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b)) > 0;
  };
  const std::size_t hops = options.topology == "ring" ? options.chips.size() : options.chips.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const std::uint32_t a = options.chips[i];
    const std::uint32_t b = options.chips[(i + 1) % options.chips.size()];
    if (linked(a, b)) continue;
    throw UsageError(fmt::format("--chips: '{}': chips {} and {} are not neighbours on {}; expected consecutive chips "
                                 "that share a link{} (cclmesh topo --system {} lists the links)",
                                 given, a, b, options.system,
                                 options.topology == "ring" ? ", the last and the first too (a ring)" : "",
                                 options.system));
  }
}

void reject_links_above_every_edge(const RunOptions& options, const topo::Topology& topology) {
  if (legacy_mode(options)) return;
  std::size_t most = 0;
  for (const topo::NeighbourEdge& edge : topology.edges()) most = std::max(most, edge.multiplicity());
  if (options.links <= most || most == 0) return;
  throw UsageError(fmt::format("--links: {} link(s) per hop asked; {}'s neighbour edges have at most {} link(s) "
                               "each; expected 1 to {}",
                               options.links, topology.name(), most, most));
}

void reject_size_below_a_page_per_chip(const RunOptions& options, const topo::Topology& topology,
                                       std::uint32_t n_chips) {
  const bool split_per_chip = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::AllBroadcast ||
                              options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllToAll;
  // reduce_scatter and all_to_all cutting ROW_MAJOR rows along dim 3 need only one row (prepare_op).
  const bool cuts_rows = (options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllToAll) &&
                         options.layout == "row_major" && options.dim == 3u;
  if (options.shape || !split_per_chip || cuts_rows) return;
  const auto& shape = topology.mesh_shape();
  const bool whole_mesh = shape && static_cast<std::int64_t>(topology.chip_count()) == shape->chip_count();
  std::uint64_t n = n_chips;
  if (options.cluster_axis) {
    if (!whole_mesh || *options.cluster_axis < 0 || *options.cluster_axis >= shape->rank()) return;
    n = static_cast<std::uint64_t>(shape->extent(*options.cluster_axis));
  } else if (options.chips.empty() && !whole_mesh) {
    return;
  }
  if (n < 2) return;
  const std::uint64_t page_bytes = page_bytes_of(options);
  if (options.size_bytes / (page_bytes * n) == 0) {
    throw_size_below_a_page_per_chip(options.size_bytes, page_bytes, n);
  }
}

}  // namespace cclmesh::cli::detail
