#pragma once
// Everything `cclmesh run` is asked to do, parsed and checked, as plain values.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/device/fabric_options.hpp"
#include "sim/engine/engine_progress.hpp"
#include "sim/engine/time.hpp"
#include "tools/cclmesh/alpha_beta.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"
#include "topologies/link_whatif.hpp"

namespace cclmesh::cli {

// One rectangle of cores (DRAM: banks x0..x1 on row 0), both corners included.
struct CoreRangeRequest {
  std::uint32_t x0 = 0;
  std::uint32_t y0 = 0;
  std::uint32_t x1 = 0;
  std::uint32_t y1 = 0;
  bool operator==(const CoreRangeRequest&) const = default;
};

// --shard, --shard-grid, --shard-orientation, --shard-shape (or their --out-shard* forms): a
// buffer sharded over a set of cores (DRAM: banks), tt-metal's ShardSpec.
struct ShardRequest {
  std::string layout;               // height | width | block
  // --shard-grid: CxR (one range from (0,0)) or ranges X0,Y0-X1,Y1[+...], tt-metal's CoreRangeSet.
  std::vector<CoreRangeRequest> grid;
  std::string orientation = "row";  // row | col: the shard order over the grid
  // --shard-shape: the per-chip input's shard, (height, width) in elements; unset: every
  // tensor's shard derived from its own shape and the grid, as tt-metal does for the layout.
  std::optional<std::array<std::uint32_t, 2>> shape;

  std::uint64_t cores() const;
  // "CxR" for one range from (0,0), else the ranges as --shard-grid takes them.
  std::string grid_text() const;
  // The grid as one range from (0,0), as (columns, rows); nullopt for any other set.
  std::optional<std::array<std::uint32_t, 2>> origin_rectangle() const;
};

// --out-shard*: the output's memory when it is not the input's. Unset shard: interleaved.
struct OutputMemoryRequest {
  std::optional<ShardRequest> shard;
};

struct RunOptions {
  std::string system = "t3k";
  // --device HOST:PORT: run on a device served by `cclmesh serve` instead of simulating here.
  std::string device;
  // --device-wait SECONDS: how long to wait while the served device serves another client's
  // session (one at a time) before giving up; 0: ask once. Given, it also covers a server that
  // does not accept connections yet (one still starting); not given, that fails at once.
  double device_wait_s = 10.0;
  bool device_wait_given = false;
  CollectiveOp op = CollectiveOp::AllGather;
  std::uint64_t size_bytes = 16ull << 20;
  // ring | line | auto (a ring where the run's groups close into rings of 3 or more chips, else a
  // line: run_collective resolves it before anything else reads it)
  std::string topology = "auto";
  // `topology` is what --topology auto chose (run_collective): a refusal says so rather than
  // "--topology line", an option the user did not give (topology_as_given).
  bool topology_chosen_by_auto = false;
  std::uint32_t links = 1;
  // --workers-per-link: reduce_scatter's (and all_reduce's) or the ring relay all_gather's
  // workers per link and direction; unset: the op's default.
  std::optional<std::uint32_t> workers_per_link;
  std::string mode = "fabric";    // fabric | legacy
  // modelled | ideal: the calibrated chip model, or chips that cost nothing but their links'
  // rate and latency (sim/model/ideal_hardware.hpp, REFERENCE 10)
  std::string hardware = "modelled";
  // --hardware typed (either value): with --device, what the served device must run (the server
  // decides; a run asking for other hardware is refused rather than printing the server's rows).
  bool hardware_given = false;
  std::string dtype = "bf16";     // bf16 | fp32 | bfp8
  std::string layout = "tile";    // tile | row_major
  std::string memory = "dram";    // dram | l1
  // --layout or --memory typed (either value): the title notes the tensor they shape, as it does
  // for --shape, --dim and --shard*; a --size tensor's layout shows nowhere else.
  bool layout_or_memory_asked = false;
  // --memory typed: a DRAM shard grid past the banks names --memory l1 only when the memory is
  // the default's (--layout typed alone leaves it so; review, session 41).
  bool memory_given = false;
  // --shape: the tensor nccl-tests' size measures (tt-metal's T: all_gather's gathered output,
  // reduce_scatter's per-chip input, the tensor of all_reduce, reduce and all_to_all;
  // all_broadcast: each chip's input), (w, z, y, x) in elements; unset: derived from size_bytes.
  std::optional<std::array<std::uint32_t, 4>> shape;
  // --dim: all_gather's, reduce_scatter's and all_to_all's dim; unset: 3, or 2 for a ROW_MAJOR
  // tensor derived from --size (whose rows are its pages).
  std::optional<std::uint32_t> dim;
  std::optional<ShardRequest> shard;  // the input's (and, without --out-shard*, the output's); unset: interleaved
  // --out-shard*: the output's own memory layout; unset: as the input's, the output's shard
  // derived from its tensor (or --shard-shape scaled along dim).
  std::optional<OutputMemoryRequest> output_memory;
  // --chips: the run's chips in order, one line or ring (fabric: FabricOptions::chip_order; legacy:
  // the group); empty: every chip of the system.
  std::vector<std::uint32_t> chips;
  // --chips as the user typed it (commas or dashes), for a refusal to quote back: the list
  // re-joined with ',' read as a value the user had not given (session 39 review: '0-1-0' was
  // refused as "chip 0 appears twice in '0,1,0'"). Empty: chips was set otherwise (chips_as_given).
  std::string chips_given;
  // Legacy mode on the whole system: its ring (or line) laid over the links left when the
  // system's own crosses a link down from the start (lay_legacy_group_around_down_links); empty:
  // the system's own. Not an option: the run sets it.
  std::vector<std::uint32_t> legacy_group;
  // Set when no other ring avoids the down link: legacy_group is the system's own ring, which the
  // op runs as the line around this link (from its second chip round to its first).
  std::optional<std::pair<std::uint32_t, std::uint32_t>> legacy_opened_at;
  std::optional<int> cluster_axis;
  // --root: reduce's root rank in each group; unset: 0. Optional, as --rounds and --dim are, so
  // that a --root typed for another op is refused whatever its value, 0 too (session 31).
  std::optional<std::uint32_t> root;
  std::string all_reduce_algo = "auto";  // --all-reduce-algo: auto | one-shot | rs-ag | composite
  // --ag-ring-algorithm: all_gather::RingAlgorithm (all_gather, and all_reduce's all_gather half).
  std::string ag_ring_algorithm = "auto";  // auto | relay | multicast
  // --ag-bidirectional-mode: all_gather::BidirectionalMode of the all_gather op on a fabric ring
  // (relay or multicast): auto | split-tensor | full-tensor (REFERENCE 7.3).
  std::string ag_bidirectional_mode = "auto";
  // --chunks-per-sync: all_gather::Params::chunks_per_sync of the relay ring all_gather (packets
  // per semaphore increment); unset: fitted to each worker's run (kFitChunksPerSync).
  std::optional<std::uint32_t> chunks_per_sync;
  // --rs-line-algorithm: reduce_scatter's (and all_reduce's) line algorithm: two_sided | wrap.
  std::string rs_line_algorithm = "two_sided";
  // --rs-ring-algorithm: reduce_scatter's ring algorithm: auto | one-shot | chain | half-way.
  std::string rs_ring_algorithm = "auto";
  // --bcast-ring-algorithm: broadcast's ring algorithm: auto | both-ways | split.
  std::string bcast_ring_algorithm = "auto";
  // Which of the algorithm options above were typed, whatever the value: one typed for an op, a
  // topology or a mode it does not apply to is refused even at its default value
  // (`--ag-ring-algorithm auto --op reduce`), as a user who typed it meant something; their
  // values alone cannot say so (session 31: `--root 0` for all_gather ran, `--root 3` was refused).
  struct AlgorithmsTyped {
    bool all_reduce = false;  // --all-reduce-algo
    bool ag_ring = false;     // --ag-ring-algorithm
    bool ag_bidirectional = false;  // --ag-bidirectional-mode
    bool rs_line = false;     // --rs-line-algorithm
    bool rs_ring = false;     // --rs-ring-algorithm
    bool bcast_ring = false;  // --bcast-ring-algorithm
  };
  AlgorithmsTyped algorithms_typed;
  // --rounds: all_to_all's Params::rounds (pieces of every destination a sender interleaves);
  // unset: the op's default (256).
  std::optional<std::uint32_t> rounds;
  // --a2a-senders: all_to_all's Params::senders: auto | per-destination | per-direction.
  std::string a2a_senders = "auto";
  bool no_data = false;
  // Runs with data that share this host's memory at once (`sweep -j N`: N), so that each is
  // checked against its share (host_memory_check.hpp).
  std::uint32_t data_runs_at_once = 1;
  // The memory a run with data is checked against in place of what this host has (0: the host's;
  // host_memory_check.hpp): tests give it, so that none depends on the machine's memory.
  std::uint64_t host_memory_given = 0;
  // --simulate-every-group: a timing-only run along --cluster-axis simulates every group even
  // when they are identical (mirror_choice.hpp); the figures are the same, the events more.
  bool simulate_every_group = false;
  std::uint64_t seed = 1;
  // --seed typed (1 too): refused with --no-data, which makes no input data to seed (bug bash,
  // session 38: it was taken, recorded in --json's settings, and changed nothing).
  bool seed_typed = false;
  std::optional<sim::SimTime> max_sim_time;
  // The fabric's maximum packet payload (REFERENCE 6.2: 4352 B by default, 7616 B at most on
  // Wormhole; the calibration runs used 6144 B).
  std::uint32_t fabric_payload_bytes = 4352;
  // --fabric-rx-in-flight: FabricOptions::receiver_packets_in_flight (unset: the default).
  std::optional<std::uint32_t> fabric_rx_in_flight;
  // Which of the two fabric options above were typed, whatever the value. Legacy mode runs no
  // fabric router, so one typed for a legacy run where it does nothing is refused
  // (run_option_checks.cpp); their values cannot say so, as a served device's are set from the
  // server's (served_run_options) whatever the client typed.
  struct FabricTyped {
    bool payload = false;       // --fabric-payload
    bool rx_in_flight = false;  // --fabric-rx-in-flight
  };
  FabricTyped fabric_typed;
  // FabricOptions::erisc_unreserved_bytes: --erisc-unreserved-kib x 1024, a what-if for the
  // unconfirmed ERISC L1 figure (REFERENCE 1.4: 106..150 KiB; unset: the default, 150 KiB), or a
  // served device's figure as the server has it (bytes: a server need not hold whole KiB).
  std::optional<std::uint32_t> erisc_unreserved_bytes;
  // --ring-flow-control: FabricOptions::ring_flow_control, the era of a ring fabric's deadlock
  // avoidance (REFERENCE 6.7, 12): bubble flow control (late 2025, the default) or the dateline
  // VC (mid 2025). Ring topology in fabric mode only.
  runtime::RingFlowControl ring_flow_control = runtime::RingFlowControl::Bubble;
  // --ring-flow-control typed (bubble too): refused where no ring fabric runs, as a typed default
  // of the algorithm options is (bug bash, session 38: `--mode legacy --ring-flow-control bubble` ran).
  bool ring_flow_control_typed = false;
  // --first-level-acks on|off: FabricOptions::first_level_acks (REFERENCE 6.4: standard from
  // 2025-11, PR #33192); off frees a sender slot only on the completion ack. Unset: on, the
  // default; set, even to on, it names a router setting, which legacy mode has none of.
  std::optional<bool> first_level_acks;
  std::optional<double> max_wall_seconds;  // --max-wall
  // --progress: the simulated device's progress report, every progress_every_events events
  // (--progress-every; progress_line.hpp). Not a setting of the run: it changes nothing
  // simulated, and --json's settings do not record it. Empty: none.
  std::function<void(const sim::EngineProgress&)> progress;
  std::uint64_t progress_every_events = std::uint64_t{1} << 20;
  RunFaults faults;                        // --fault (docs/faults.md)
  // --link-rate / --link-latency: every link of the system at this rate / latency (link_whatif.hpp).
  topo::LinkWhatIf link_whatif;
};

// One output buffer's checksum against the host reference's (CRC-32, Boost.CRC).
struct OutputChecksum {
  std::uint32_t chip = 0;
  std::string buffer;
  std::uint32_t crc32 = 0;
  std::uint32_t expected_crc32 = 0;
};

// What one direction of an ethernet link carried during the op (from the first kernel start
// to the last kernel end): for --report.
struct LinkDirectionUse {
  std::int32_t chip = 0;
  std::int32_t channel = 0;
  std::int32_t peer_chip = 0;
  std::int32_t peer_channel = 0;
  std::int64_t payload_bytes = 0;  // data packets' payload
  std::int64_t busy_ps = 0;        // wire time booked: packets and credit words with their framing
  // busy / op time: the share of the line rate the op used on this wire (above 1 only if
  // traffic booked during the op runs past its last kernel, e.g. a router's final acks).
  double utilisation = 0.0;
};

// What a reduce_scatter or an all_gather ran and why, as a run records it (the op's own, or one
// half of all_reduce's reduce_scatter + all_gather), in the names of the option that forces it
// (--rs-ring-algorithm's one-shot / chain on a ring, --rs-line-algorithm's on a line;
// --ag-ring-algorithm's relay / multicast): algorithm_by_shape.hpp.
struct AlgorithmRecord {
  std::string algorithm;
  std::string reason;
  // Where some of the op's rings ran as lines around a down link and the others as rings
  // (rings_as_lines), algorithm and reason are the rings' and these the lines'; empty otherwise.
  std::string lines_algorithm;
  std::string lines_reason;
};
// What all_reduce's halves ran: reduce_scatter + all_gather's two, or the composite's all_gather
// alone (its other step is a local sum, which chooses nothing), so reduce_scatter is unset there.
struct AllReduceHalves {
  std::optional<AlgorithmRecord> reduce_scatter;
  AlgorithmRecord all_gather;
};

// One run's result: what `cclmesh run` prints as a row or as JSON.
struct RunResult {
  std::string op;
  std::string system;
  std::uint32_t n_chips = 0;
  // The shape the op's groups ran as ("ring" or "line"), not --topology's: a 2-chip group, or a
  // group that is not a whole fabric ring, runs as a line.
  std::string topology;
  // The shape of the fabric lines holding the groups; "" in legacy mode (no fabric).
  std::string fabric_topology;
  std::uint32_t links = 1;
  std::uint32_t directions = 1;
  std::string mode;
  std::string dtype;
  std::string redop = "none";     // "sum" for the reducing ops
  std::uint64_t size_bytes = 0;   // as run (rounded down to whole pages; a --shape's tiles padded)
  std::uint64_t count = 0;        // elements (of --shape: its logical elements, padding not counted)
  // The tensor size_bytes measures (--shape's, or the one derived from --size) and the dim the op
  // ran along (unset for ops without one): what --json records with the memory config.
  std::array<std::uint32_t, 4> shape{};
  std::optional<std::uint32_t> dim;
  bool tensor_asked = false;                   // --shape, --dim or --shard given: the table notes the tensor
  // The algorithm the op's builder chose and why, as its option names it: all_reduce's
  // (--all-reduce-algo), all_gather's (--ag-ring-algorithm, or its all_broadcast + concat
  // fallback "broadcast-concat"), reduce_scatter's (--rs-ring-algorithm on a ring,
  // --rs-line-algorithm on a line, a ring run as a line around a down link too), all_to_all's ("interleaved" or "sequential", --rounds); empty
  // for ops that do not choose and in legacy mode but for all_reduce. --json records it; only a
  // fallback (all_reduce's Auto could not run reduce_scatter + all_gather, or all_gather's) gets a
  // line under the table.
  std::string algorithm;
  std::string algorithm_reason;
  // reduce_scatter and all_gather where some rings of a --cluster-axis ran as lines around a down
  // link and the others as rings (rings_as_lines): algorithm and algorithm_reason are the rings',
  // these the lines' (--json's "algorithm_lines"); empty otherwise.
  std::string algorithm_lines;
  std::string algorithm_lines_reason;
  // A fallback (see algorithm) of the rings' part, and of the lines' (all_reduce in legacy mode
  // chooses per shape): each gets its own line under the table.
  bool algorithm_fallback = false;
  bool algorithm_lines_fallback = false;
  // all_reduce running reduce_scatter + all_gather in fabric mode: what each half ran and why
  // (all_reduce::halves_choices); running the composite in fabric mode: what its all_gather ran
  // (all_reduce::composite_gather_choices, no reduce_scatter); unset otherwise. --json's "halves"
  // and --report say it.
  std::optional<AllReduceHalves> algorithm_halves;
  std::string layout;                          // tile | row_major
  std::string memory;                          // dram | l1
  std::string memory_layout = "interleaved";   // the input's: or height_sharded, width_sharded, block_sharded
  std::optional<ShardRequest> shard;           // the input's grid and orientation asked
  std::string output_memory_layout = "interleaved";
  std::optional<ShardRequest> output_shard_request;  // the output's grid and orientation
  std::array<std::uint32_t, 2> input_shard{};   // (height, width) in elements, sharded runs only
  std::array<std::uint32_t, 2> output_shard{};
  double time_us = 0.0;           // simulated device kernel time
  double dispatch_us = 0.0;       // enqueue to the first kernel start (the host's dispatch gap)
  double launch_us = 0.0;         // first kernel start until the op's data path is up
  BandwidthFigures bandwidth;
  double line_rate_GBps = 0.0;
  std::optional<bool> verified;   // nullopt with --no-data
  std::uint64_t wrong_elements = 0;
  std::string mismatch;           // first mismatch: chip, buffer, page, byte
  std::vector<OutputChecksum> checksums;  // per chip, functional runs only
  std::vector<std::string> faults;        // the --fault specs run with
  std::vector<std::string> fault_effects; // what faults with a visible effect did ("corrupt:0-2: flipped ...")
  std::string fabric_order;               // the fabric's chips as run (re-embedded around faults); lines split by " | "
  // Per-axis rows and columns, or the whole-system ring, run as lines around a link down from the
  // start, one each, in coordinate (the ring's) order: "axis 1 ring 0-1-2-3-0 ran as line 1-2-3-0:
  // link 0-1 is down (link-down:0-1); ..." (a line fabric: "axis 1 line 0-1-2-3 ran as line
  // 2-3-0-1 over its closing link 3-0: link 1-2 is down ..."; the whole-system ring: "ring
  // 0-1-2-3-4-5-6-7-0 ran as line 1-2-3-4-5-6-7-0: ...").
  std::vector<std::string> rings_as_lines;
  std::string fabric;                     // "" for the whole-system fabric, else which fabric ran
  std::string hardware = "modelled";      // --hardware as run: the title and --json name "ideal"
  // On ideal hardware, REFERENCE 10's alpha-beta time of the op (alpha_beta.hpp) to hold the run
  // against: a note under the row and --json's alpha_beta_us. Unset on modelled hardware and for
  // ops REFERENCE 10 gives no row for.
  std::optional<AlphaBetaTime> alpha_beta;
  std::vector<std::uint32_t> chips;       // --chips as run, in order; empty: every chip
  std::optional<int> cluster_axis;        // --cluster-axis as run; unset: the op ran on every chip
  // The simulator's events the op ran; nullopt from a device that counts none (a served
  // hardware backend): --json says null, the CSV leaves the cell empty, --report says so.
  std::optional<std::uint64_t> sim_events;
  // The groups along --cluster-axis that were not simulated because they mirror the first
  // (sim/device/mirrored_groups.hpp): their figures are an identical simulated group's; 0 when every chip ran.
  std::size_t groups_mirrored = 0;
  std::uint64_t trace_hash = 0;   // the engine's hash of the run's events (equal for equal runs)
  double wall_s = 0.0;
  // The part of wall_s the engine spent running the op's events; the rest is set-up (topology,
  // device, the fabric's start-up, the op's command streams) and the result's checks. Not in
  // --json (host time, like wall_s, and the output stays as it was); bench_sim_speed prints it.
  double simulate_wall_s = 0.0;
  // The run's preparations of its op (2 locally: the planning device's and the simulated
  // device's; 1 on a served device) and how many of them built its workloads: 1 when the
  // simulated device took the planning device's build (workload_cache.hpp), as it should whenever
  // the two prepare equal params. Not printed (host-side facts); tested, as a miss costs only time.
  std::size_t op_preparations = 0;
  std::size_t op_builds = 0;
  std::vector<LinkDirectionUse> links_used;  // every wire of the system, in link order
  // False when the device does not measure its links (MeshDevice::link_traffic; a served
  // hardware backend): links_used is then empty, and --report says so instead of colouring.
  bool links_measured = true;
  // Set when the links ran off their arch's defaults (--link-rate/--link-latency, or a YAML
  // system's own figures): the title and --json say so, so a what-if is not taken for hardware.
  std::optional<topo::LinkSpread> link_whatif;
  // settings_json of the options the op ran with: on a served device the server's data mode and
  // fabric settings, not the client's defaults. null in a result not made by a run (tests).
  nlohmann::json settings;
};

}  // namespace cclmesh::cli
