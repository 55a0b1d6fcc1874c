#include "tools/cclmesh/run_option_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/fabric_options.hpp"
#include "runtime/device/fabric_payload_bounds.hpp"
#include "runtime/device/l1_map.hpp"
#include "topologies/system_loader.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/whole_number_option.hpp"

namespace cclmesh::cli {

std::vector<std::uint32_t> parse_chip_list(std::string_view text, std::string_view option) {
  // Commas, or the dashes cclmesh prints chip orders with ("fabric chips in order: 0-4-5-1-..."),
  // which a user copies back (bug bash, session 38: refused); one kind per list.
  const bool dashes = text.find('-') != std::string_view::npos && text.find(',') == std::string_view::npos;
  const char separator = dashes ? '-' : ',';
  std::vector<std::uint32_t> chips;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != separator) continue;
    const std::string_view field = text.substr(begin, i - begin);
    std::uint32_t chip = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), chip);
    if (field.empty() || error != std::errc{} || end != field.data() + field.size()) {
      throw UsageError(fmt::format("{}: '{}' is not a chip list; expected chip ids separated by ',' (or each by '-', "
                                   "as cclmesh prints chip orders) in line or ring order (e.g. 0,1,9,8 or 0-1-9-8)",
                                   option, text));
    }
    chips.push_back(chip);
    begin = i + 1;
  }
  return chips;
}

CLI::Option* add_trace_limit_option(CLI::App& command, std::size_t& limit, CLI::Option* trace) {
  CLI::Option* option =
      command.add_option_function<std::string>(
          "--trace-limit",
          [&limit](const std::string& text) {
            limit = parse_whole_number(text, "--trace-limit", 0, "number", "a positive whole number of spans per track");
          },
          "spans kept per trace track; later ones are counted, not kept");
  option->type_name("UINT")->default_str(std::to_string(limit));
  if (trace != nullptr) option->needs(trace);
  return option;
}

void add_device_wait_option(CLI::App& command, RunOptions& options, CLI::Option* device) {
  command
      .add_option_function<std::string>(
          "--device-wait",
          [&options](const std::string& text) {
            options.device_wait_s = parse_wait_seconds(text, "--device-wait");
            options.device_wait_given = true;
          },
          "seconds to wait while the served device is busy with another client's session (one at a time), asking "
          "again with backoff, before giving up (0: ask once); given, also how long to keep trying to connect "
          "while nothing accepts at HOST:PORT (a server still starting)")
      ->type_name("SECONDS")
      ->default_str(fmt::format("{:g}", options.device_wait_s))
      ->needs(device);
}

void add_collective_options(CLI::App& command, RunOptions& o) {
  command.add_option("--system", o.system, topo::system_spec_help())
      ->capture_default_str();
  command.add_option_function<std::string>(
      "--chips",
      [&o](const std::string& text) {
        o.chips = parse_chip_list(text, "--chips");
        o.chips_given = text;
      },
      "run on these chips of --system only, in order, as one line or ring, ids joined by ',' or by '-' "
      "(as cclmesh prints chip orders) (e.g. galaxy 0,1,9,8: "
      "its 2x2 block, the 4-chip stand-in on 2 links; t3k 0,1,3,2: the MMIO square); consecutive "
      "chips must be neighbours, a ring's last and first too; default: every chip");
  command.add_option("--topology", o.topology,
                     "ring, line, or auto: a ring where the groups close into rings of 3 or more chips (t3k, galaxy, a "
                     "torus axis), else a line (n300, a mesh row), as tt-metal's all_gather runs 2 chips as a line")
      ->check(CLI::IsMember({"auto", "ring", "line"}))
      ->capture_default_str();
  command.add_option("--links", o.links, "links per hop: routing planes, each link its own workers (usable: fabric 1 on n300/t3k, 3 on tg, 4 on galaxy; legacy: each hop's links less one where dispatch tunnels, e.g. 2 on t3k --cluster-axis 0)")->transform(whole_number_in(1, 16))->capture_default_str();
  command.add_option("--workers-per-link", o.workers_per_link,
                     "reduce_scatter / all_reduce: workers per link and direction, sharing the router through a fabric mux when more than 1 (default by the pages a link and direction carries over the op, output pages x (N-1): 4 from 32, 6 from 1024, else 1; on 2 chips 3 once each of 3 workers' runs holds 3 CB packets, 6 once their chunks reach 8 packets, else 1; on two-sided lines of 8+ chips on 1 link 2 instead of 4 where 2 workers' messages are 2 up to 3 CB packets); all_gather relaying on a ring: the same (default 2 once a link and direction's run holds 32 input pages, else 1)")
      ->transform(whole_number_in(1, 6));
  command.add_option("--mode", o.mode, "fabric (persistent routers) or legacy (per-op EDM)")
      ->check(CLI::IsMember({"fabric", "legacy"}))
      ->capture_default_str();
  command
      .add_option("--hardware", o.hardware,
                  "modelled (the calibrated chip model) or ideal: what-if chips whose NoC, DRAM and ERISC cost "
                  "nothing, links keeping their rate and latency (REFERENCE 10's alpha-beta model); with --device, "
                  "the served device's (cclmesh serve --hardware): asking for the other exits 2")
      ->check(CLI::IsMember({"modelled", "ideal"}))
      ->each([&o](const std::string&) { o.hardware_given = true; })
      ->capture_default_str();
  command.add_option("--dtype", o.dtype, "bf16, fp32 or bfp8")->check(CLI::IsMember({"bf16", "fp32", "bfp8"}))->capture_default_str();
  const auto asked = [&o](const std::string&) { o.layout_or_memory_asked = true; };
  command.add_option("--layout", o.layout, "tile or row_major")->check(CLI::IsMember({"tile", "row_major"}))->each(asked)->capture_default_str();
  command.add_option("--memory", o.memory, "dram or l1: where every buffer of the op lives (input, output, intermediates)")
      ->check(CLI::IsMember({"dram", "l1"}))
      ->each([&o, asked](const std::string& value) {
        asked(value);
        o.memory_given = true;
      })
      ->capture_default_str();
  // tt-metal's cluster_axis is a dimension of its 2D MeshShape; the CLI offers those two on every
  // system, a 3D one's included (the library's GroupSelection::cluster_axis takes any of the mesh's).
  command.add_option("--cluster-axis", o.cluster_axis, "run along one axis of a 2D mesh: 0 or 1")
      ->transform(whole_number_in(0, 1, "INT",
                                  "cluster_axis is a dimension of a 2D mesh, as tt-metal's (0: columns, 1: rows), "
                                  "so a 3D system such as torus:4x4x4 runs along its axes 0 and 1 only"));
  // Parsed here: CLI11 said only "Could not convert: --root = abc" (session 18).
  command
      .add_option_function<std::string>(
          "--root",
          [&o](const std::string& text) {
            const std::uint64_t root = parse_whole_number(text, "--root", 0, "rank", "a rank 0 .. N-1 of a group of N chips");
            if (root > std::numeric_limits<std::uint32_t>::max()) {
              throw UsageError(fmt::format("--root: {} is not a rank of any group; expected a rank 0 .. N-1 of a group of N chips", text));
            }
            o.root = static_cast<std::uint32_t>(root);
          },
          "reduce: the root's rank in each group (0 .. N-1)")
      ->type_name("UINT")
      ->default_str("0");
  command.add_option("--rounds", o.rounds,
                     "all_to_all: interleave each sender's destinations in N rounds, one piece of every destination per round (1: one destination after another; default: 256)")
      ->transform(whole_number_in(1, 65536));
  command.add_option("--a2a-senders", o.a2a_senders,
                     fmt::format("all_to_all: per-destination (one sender per destination and link, those of a "
                                 "direction sharing the router through a fabric mux: all_to_all_async's N-1 senders, "
                                 "REFERENCE 7.6; capped at {} per link and direction, and at what the worker grid "
                                 "holds, a capped sender taking several destinations), per-direction (one up and one "
                                 "down sender per link, the model's before session 36) or auto (per-destination from {} KiB a "
                                 "chip on, per-direction below, where the mux costs more than it gains)",
                                 kernels::fabric_mux::kMaxClients,
                                 runtime::ccl::all_to_all::kPerDestinationMinBytes / 1024))
      ->check(CLI::IsMember({"auto", "per-destination", "per-direction"}))
      ->capture_default_str();
  namespace ar = runtime::ccl::all_reduce;
  command.add_option("--all-reduce-algo", o.all_reduce_algo,
                     fmt::format("all_reduce: auto (one-shot up to {} KiB and {} pages on 2 chips; on a ring {} KiB and {} pages "
                                 "on 3-4 chips, {} KiB and {} pages on more; on a line {} KiB and {} pages on 3-4, {} "
                                 "KiB and {} pages on more; and whenever the pages do not divide by the chips while its "
                                 "sums fit L1; else rs-ag, or composite when the pages do not divide; legacy mode: "
                                 "composite while pages x (page size + {} B) is at most {} KiB on a ring, {} KiB per "
                                 "chip up to {} KiB on a line, each / (1 - s + s / links) in whole KiB with s = 0.{:02} on a "
                                 "ring, 0.{:02} on a line of up to {} chips, 0.{:02} on longer lines, else rs-ag where its "
                                 "slices fit), one-shot, rs-ag "
                                 "(reduce_scatter + all_gather) or composite",
                                 ar::kOneShotLimitsTwoChips.max_bytes / 1024, ar::kOneShotLimitsTwoChips.max_pages,
                                 ar::kOneShotLimitsShortRing.max_bytes / 1024, ar::kOneShotLimitsShortRing.max_pages,
                                 ar::kOneShotLimitsLongRing.max_bytes / 1024, ar::kOneShotLimitsLongRing.max_pages,
                                 ar::kOneShotLimitsShortLine.max_bytes / 1024, ar::kOneShotLimitsShortLine.max_pages,
                                 ar::kOneShotLimitsLongLine.max_bytes / 1024, ar::kOneShotLimitsLongLine.max_pages,
                                 ar::kLegacyCompositePageWeightBytes, ar::kLegacyCompositeMaxWeightedBytesRing / 1024,
                                 ar::kLegacyCompositeMaxWeightedBytesPerLineChip / 1024,
                                 ar::kLegacyCompositeMaxWeightedBytesLine / 1024, ar::kLegacyCompositeRingLinkSharedPercent,
                                 ar::kLegacyCompositeShortLineLinkSharedPercent, ar::kLegacyCompositeShortLineMaxChips,
                                 ar::kLegacyCompositeLongLineLinkSharedPercent))
      ->check(CLI::IsMember({"auto", "one-shot", "rs-ag", "composite"}))
      ->each([&o](const std::string&) { o.algorithms_typed.all_reduce = true; })
      ->capture_default_str();
  command.add_option("--ag-ring-algorithm", o.ag_ring_algorithm,
                     "all_gather (and all_reduce's all_gather half) on a fabric ring: relay (every chunk hops worker to worker, production's ring, REFERENCE 7.4) or multicast (each chip multicasts, the routers forward); auto: relay on a ring, multicast on a line")
      ->check(CLI::IsMember({"auto", "relay", "multicast"}))
      ->each([&o](const std::string&) { o.algorithms_typed.ag_ring = true; })
      ->capture_default_str();
  command.add_option("--ag-bidirectional-mode", o.ag_bidirectional_mode,
                     "all_gather on a fabric ring (relay or multicast): split-tensor (two workers per link, each sends half of the input all the way round one way), full-tensor (the whole input half-way round both ways) or auto (split-tensor when each chip's input is over twice the ERISC's unreserved L1, REFERENCE 7.3); a line, and legacy mode's ring, are always full-tensor")
      ->check(CLI::IsMember({"auto", "split-tensor", "full-tensor"}))
      ->each([&o](const std::string&) { o.algorithms_typed.ag_bidirectional = true; })
      ->capture_default_str();
  command.add_option("--chunks-per-sync", o.chunks_per_sync,
                     "all_gather relaying on a fabric ring: packets per chunk, one semaphore increment each (grown if a worker would need more than 255); default: fitted to the worker's run, at least 3 chunks of at most 4 packets, at least 1 packet")
      ->transform(whole_number_in(1, 255));
  command.add_option("--rs-line-algorithm", o.rs_line_algorithm,
                     "reduce_scatter / all_reduce on a line: two_sided (each slice's owner gets the partials of both sides over neighbour hops) or wrap (the ring's chain, wrapping back over N-1 hops)")
      ->check(CLI::IsMember({"two_sided", "wrap"}))
      ->each([&o](const std::string&) { o.algorithms_typed.rs_line = true; })
      ->capture_default_str();
  command.add_option("--rs-ring-algorithm", o.rs_ring_algorithm,
                     fmt::format("reduce_scatter on a fabric ring: one-shot (each chip sends slice d straight to chip d, ~2.3x the bytes on 8 chips, one step), chain (partials reduced hop by hop, half of each slice the full way round each way: the ring RS before 2026), half-way (the full slice half-way round from both sides, tt-metal's ring RS since 2026) or auto (one-shot up to {} KiB per chip with one worker per link, else half-way; REFERENCE 7.5); all_reduce: the reduce_scatter half of rs-ag (auto: the same rule on the all_reduce's tensor)",
                                 runtime::ccl::reduce_scatter::kDefaultOneShotMaxBytes / 1024))
      ->check(CLI::IsMember({"auto", "one-shot", "chain", "half-way"}))
      ->each([&o](const std::string&) { o.algorithms_typed.rs_ring = true; })
      ->capture_default_str();
  command.add_option("--bcast-ring-algorithm", o.bcast_ring_algorithm,
                     fmt::format("broadcast on a fabric ring: both-ways (every packet multicast n/2 chips one way and (n-1)/2 the other: the root injects the tensor twice), split (half the pages multicast forward round the whole ring, half backward: the root injects it once, at n-1 hops' latency; rings of at most {} chips) or auto (split from links x (n-1) x {} KiB where it fits, else both-ways)",
                                 runtime::ccl::kMaxFabricHops + 1, runtime::ccl::broadcast::kSplitMinBytesPerLinkAndHop / 1024))
      ->check(CLI::IsMember({"auto", "both-ways", "split"}))
      ->each([&o](const std::string&) { o.algorithms_typed.bcast_ring = true; })
      ->capture_default_str();
  command.add_flag("--no-data", o.no_data, "timing only: no payload bytes are stored, nothing is verified");
  command.add_flag("--simulate-every-group", o.simulate_every_group,
                   "with --no-data along --cluster-axis: simulate every group even when the groups are identical "
                   "(by default such groups are simulated once and the others take its figures, which are the same)");
  // Parsed here rather than by CLI11, which read "-1" into the 64-bit seed as 2^64 - 1 (session 18).
  command
      .add_option_function<std::string>(
          "--seed",
          [&o](const std::string& text) {
            o.seed = parse_whole_number(text, "--seed", 0, "seed", "a whole number from 0 to 18446744073709551615");
            o.seed_typed = true;
          },
          "seed of the input data (not with --no-data, which makes none)")
      ->type_name("UINT")
      ->default_str(std::to_string(o.seed));
  command.add_option("--fabric-payload", o.fabric_payload_bytes,
                     "fabric packet payload in bytes (REFERENCE 6.2 default 4352; calibration runs used 6144); in "
                     "legacy mode, which runs no fabric, it sizes only all_reduce's composite local-sum packet, and "
                     "is refused for the legacy all_gather, reduce_scatter and rs-ag, whose EDMs size their buffers "
                     "from the ERISC's L1")
      ->transform(whole_number_in(runtime::kMinFabricPayloadBytes, runtime::kMaxFabricPayloadBytes))
      ->each([&o](const std::string&) { o.fabric_typed.payload = true; })
      ->capture_default_str();
  command.add_option("--fabric-rx-in-flight", o.fabric_rx_in_flight,
                     "fabric routers' receivers: packets whose NoC writes are in flight at once, one transaction id "
                     "each (1..min(receiver slots, 16); default every receiver slot; 1 = one packet at a time); "
                     "fabric mode only (legacy mode runs no router)")
      ->transform(whole_number_in(1, 16))
      ->each([&o](const std::string&) { o.fabric_typed.rx_in_flight = true; });
  command.add_option_function<std::uint32_t>(
             "--erisc-unreserved-kib", [&o](std::uint32_t kib) { o.erisc_unreserved_bytes = kib * 1024; },
                     "what-if: the ERISC's unreserved L1 in KiB, for fabric router slots, legacy EDM buffers and "
                     "all_gather's SPLIT/FULL_TENSOR threshold (REFERENCE 1.4, unconfirmed: 106..150; default 150)")
      ->transform(whole_number_in(runtime::kEriscUnreservedMinBytes / 1024, runtime::kEriscUnreservedMaxBytes / 1024,
                                 "UINT"));
  command
      .add_option_function<std::string>(
          "--ring-flow-control",
          [&o](const std::string& name) {
            o.ring_flow_control =
                name == "dateline" ? runtime::RingFlowControl::Dateline : runtime::RingFlowControl::Bubble;
            o.ring_flow_control_typed = true;
          },
          "era what-if for a ring fabric's deadlock avoidance (REFERENCE 6.7, 12): bubble (late 2025, the default: "
          "2 sender channels, 1 receiver, injection needs 2 free downstream slots) or dateline (mid 2025: a second "
          "VC past the ring's closing hop, 3 sender channels and 2 receivers per router, REFERENCE 6.2's mid-2025 "
          "slots); --topology ring in fabric mode only")
      ->check(CLI::IsMember({"bubble", "dateline"}))
      ->default_str("bubble");
  command
      .add_option_function<std::string>(
          "--first-level-acks", [&o](const std::string& value) { o.first_level_acks = value == "on"; },
          "era what-if for the fabric routers' credits (REFERENCE 6.4, 12): on (late 2025, PR #33192, the default: a "
          "sender slot frees when the packet lands in the peer's receiver) or off (mid 2025: only when the peer has "
          "handled it, the completion ack); off is refused with bubble flow control on a ring, which needs them "
          "(REFERENCE 6.7); fabric mode only")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");
  add_link_whatif_options(command, o.link_whatif);
}

}  // namespace cclmesh::cli
