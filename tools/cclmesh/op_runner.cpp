#include "tools/cclmesh/op_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/fabric_options.hpp"
#include "runtime/device/profile_range.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/disconnected_system_hint.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"
#include "tools/cclmesh/fabric_reach_hint.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/mirror_choice.hpp"
#include "tools/cclmesh/group_faults.hpp"
#include "tools/cclmesh/noc_usage_dump.hpp"
#include "tools/cclmesh/host_memory_check.hpp"
#include "tools/cclmesh/op_buffers.hpp"
#include "tools/cclmesh/op_result.hpp"
#include "tools/cclmesh/prepare_op.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/run_option_checks.hpp"
#include "tools/cclmesh/shard_grid_fit.hpp"
#include "tools/cclmesh/sim_device_options.hpp"
#include "tools/cclmesh/workload_cache.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/link_whatif.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

// The op's preparation, checks and result are in the files of cclmesh::cli::detail; this file
// runs them in order.
using namespace detail;

namespace {

topo::Topology load_topology(const std::string& spec) {
  try {
    return topo::load_system(spec);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
}

}  // namespace

// --topology auto: a ring where the groups the run would use close into rings of 3 or more
// chips, else a line. tt-metal's all_gather runs 2 devices as a line itself (REFERENCE 3.2); an
// explicit --topology ring on 2 chips, or on a row with no closing link, is still refused.
std::string resolve_topology(const RunOptions& options, const topo::Topology& topology) {
  if (options.topology != "auto") return options.topology;
  const auto links = static_cast<std::int32_t>(options.links);
  try {
    if (!options.chips.empty()) {
      // A ring where the chips close into one of 3 or more: the last one's neighbour is the first,
      // over the --links asked (as the whole-system ring is looked for on them).
      const bool closes = options.chips.size() >= 3 &&
                          topology.links_between(static_cast<topo::ChipId>(options.chips.back()),
                                                 static_cast<topo::ChipId>(options.chips.front())) >= options.links;
      return closes ? "ring" : "line";
    }
    if (options.cluster_axis) {
      for (const auto& group : topo::axis_groups(topology, *options.cluster_axis)) {
        if (group.size() < 3) return "line";
      }
      topo::find_axis_rings(topology, *options.cluster_axis, links);
    } else {
      if (topology.chips().size() < 3) return "line";
      topo::find_system_ring(topology, links);
    }
    return "ring";
  } catch (const topo::EmbeddingError&) {
    return "line";
  } catch (const topo::InputError&) {
    return "line";  // a bad --cluster-axis or --links: reported below with the option named, as for a line
  }
}

namespace {

// The options that decide the buffers, for a refusal of them.
const char* memory_options_named(const RunOptions& options) {
  if (options.output_memory) return "--memory/--shard/--out-shard";
  if (options.shard) return "--memory/--shard";
  return options.shape ? "--shape/--memory" : "--size/--memory";
}

// The options that decide the fabric's plan, for a refusal of it: --system, and the others only
// when given, as a plan they size (the topology, links, payload, receiver, the ERISC's L1, the
// ring's flow control, its acks) is refused for them too. (New-user pass, session 41: `--links 2`
// on a T3K was refused as "--system/--topology/--links/--fabric-payload/--fabric-rx-in-flight",
// three options the user had not typed.)
std::string fabric_options_named(const RunOptions& options) {
  std::string named = "--system";
  if (!options.chips.empty()) named += "/--chips";
  if (!options.topology_chosen_by_auto) named += "/--topology";
  if (options.links != 1) named += "/--links";
  if (options.fabric_typed.payload) named += "/--fabric-payload";
  if (options.fabric_typed.rx_in_flight) named += "/--fabric-rx-in-flight";
  if (options.erisc_unreserved_bytes) named += "/--erisc-unreserved-kib";
  if (options.ring_flow_control != runtime::RingFlowControl::Bubble) named += "/--ring-flow-control";
  if (options.first_level_acks) named += "/--first-level-acks";
  return named;
}

// The op's workloads enqueued and finished. A CB the device cannot place beside the buffers
// asked for (CBs that do not fit below large L1 buffers) is the memory config, not a fault of
// the run; any other placement error is a builder's bug and stays an internal error.
void run_op(runtime::MeshDevice& device, const PreparedOp& op, const RunOptions& requested) {
  try {
    device.enqueue_workloads(*op.workloads);  // all or none: a refusal leaves nothing to run
  } catch (const runtime::WorkloadPlacementError& e) {
    throw UsageError(fmt::format("{}: the device cannot place the op: {}", memory_options_named(requested), e.what()));
  }
  device.finish();
}

// What a run with data holds (host_memory_check.hpp), from the op's buffers and groups and,
// once made, its expected outputs (none yet on the planning device).
HostMemoryNeed data_run_need(const RunOptions& options, const PreparedOp& op, const OpBuffers& buffers,
                             std::uint32_t n_chips) {
  HostMemoryNeed need;
  need.chips = n_chips;
  need.buffers_per_chip = buffers.bytes_per_chip();
  const std::uint64_t input = buffers.first_buffer_bytes_per_chip();
  if (options.op == CollectiveOp::SendRecv || options.op == CollectiveOp::Broadcast) {
    // One source per group, whose input is the reference itself (prepare_pair_op).
    need.input_pages = input * op.groups.size();
    // Written: the sources' inputs and the outputs of broadcast's every group chip (its root writes
    // its own) or of send_recv's receivers; the other chips' buffers make no page (session 42:
    // counted whole, a T3K send_recv along --cluster-axis 1 peaked at 0.37x the count).
    std::uint64_t outputs_written = 0;
    for (const std::vector<ChipId>& group : op.groups) {
      outputs_written += options.op == CollectiveOp::Broadcast ? group.size() : 1;
    }
    const std::uint64_t output = need.buffers_per_chip - input;  // the op's two buffers: input, output
    const std::uint64_t written = need.input_pages + output * outputs_written;
    const std::uint64_t all = need.buffers_per_chip * n_chips;
    need.unwritten_buffers = all > written ? all - written : 0;
  } else {
    std::uint64_t chips_with_input = 0;
    std::uint64_t largest_group = 0;
    for (const std::vector<ChipId>& group : op.groups) {
      chips_with_input += group.size();
      largest_group = std::max<std::uint64_t>(largest_group, group.size());
    }
    need.input_pages = input * chips_with_input;
    need.host_inputs = need.input_pages;
    // reduce_scatter's reference cuts each of a group's inputs into slices: a second copy of them
    // (measured: t3k 64 MiB along --cluster-axis 1 peaked 1.71 GiB, its count 1.41 without it).
    const std::uint64_t copies = options.op == CollectiveOp::ReduceScatter ? 2 : 1;
    need.group_inputs = input * largest_group * copies;
  }
  const ReferenceBytes reference = reference_bytes(op.verify);
  need.reference = reference.held;
  need.read_back = reference.read_back;
  need.expected_outputs_counted = static_cast<bool>(op.verify);
  return need;
}

// The memory a run with data is checked against, read once before anything is held: one run, what
// the host can give now; sweep -j's points, a share of the physical memory, as what is available
// when a point starts already lacks what its running siblings hold. (Read again after the inputs
// and references are made, MemAvailable would lack this run's own bytes: counted twice.)
std::uint64_t host_bytes_for_data(const RunOptions& options) {
  if (options.no_data) return 0;
  if (options.host_memory_given != 0) return options.host_memory_given;
  return options.data_runs_at_once > 1 ? host_memory_bytes() : host_memory_available_bytes();
}

// The option a host-memory refusal names, and its value as typed: --shape's extents or --size's bytes.
std::string size_option(const RunOptions& options) { return options.shape ? "--shape" : "--size"; }
std::string size_value(const RunOptions& options) {
  return options.shape ? fmt::format("{}", fmt::join(*options.shape, ",")) : fmt::format("{} B", options.size_bytes);
}

// A run with data past `host_bytes` (host_bytes_for_data; its share with sweep -j) refused, naming
// the size.
void reject_run_past_host_memory(const RunOptions& options, const HostMemoryNeed& need, std::uint64_t host_bytes) {
  if (options.no_data) return;
  reject_data_past_host_memory(size_option(options), size_value(options), need, host_bytes,
                               options.data_runs_at_once);
}

// What a served device's client holds of a run with data (host_memory_check.hpp), from the op
// prepared timing-only: the host's inputs and a group's copy of them, the expected outputs counted
// before they are made (expected_reference_bytes) and one output read back. No chips: the
// buffers are the server's.
HostMemoryNeed served_client_need(const RunOptions& options, const PreparedOp& planned, const OpBuffers& buffers,
                                  std::uint32_t n_chips) {
  const HostMemoryNeed run = data_run_need(options, planned, buffers, n_chips);
  const ReferenceBytes reference = expected_reference_bytes(
      options.op, planned.groups, buffers.buffer_bytes_per_chip(0), buffers.buffer_bytes_per_chip(1));
  HostMemoryNeed client;
  client.host_inputs = run.host_inputs;
  client.group_inputs = run.group_inputs;
  client.reference = reference.held;
  client.read_back = reference.read_back;
  client.expected_outputs_counted = true;
  return client;
}

// Bad input found while the op is prepared, named by the options that decide it.
template <class Prepare>
PreparedOp prepared_or_usage_error(const RunOptions& requested, const RunOptions& options,
                                   const topo::Topology& topology, std::uint32_t n_chips, Prepare prepare) {
  try {
    return prepare();
  } catch (const topo::InputError& e) {
    // A system of unlinked groups run whole is the system's doing, not --topology's or --cluster-axis'.
    const std::string hint = disconnected_system_hint(requested, topology);
    throw UsageError(fmt::format("{}: {}{}", hint.empty() ? "--system/--topology/--cluster-axis" : "--system",
                                 e.what(), hint));
  } catch (const runtime::BufferConfigError& e) {
    if (const auto grid_past_chips = shard_grid_past_chips(requested, topology)) throw UsageError(*grid_past_chips);
    throw UsageError(fmt::format("{}: {}", memory_options_named(requested), e.what()));
  } catch (const runtime::FabricPlanError& e) {
    throw UsageError(fmt::format("{}: {}", fabric_options_named(options), e.what()));
  } catch (const ccl::RingRunsAsLineError& e) {
    std::string specs;
    for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
      if (fault.at == sim::SimTime::zero()) specs += (specs.empty() ? "" : ", ") + fault.spec;
    }
    // A client does not choose the served fabric's shape (run --device refuses --topology).
    const std::string served =
        options.device.empty() ? "" : " (on a served device the server lays the fabric: cclmesh serve --topology line)";
    throw runtime::DeviceError(runtime::DeviceError::Kind::Fault,
                               fmt::format("fault {} at 0 s: {}{}", specs, e.what(), served));
  } catch (const ccl::PageExceedsPacketError& e) {
    // A page above the largest payload --fabric-payload takes is the tensor's to change, not the
    // fabric's: a tile page always fits, a row-major page is one row. (Since session 35 every op
    // moves wider rows in pieces and none gets here; an op that moves whole pages again would.)
    if (e.page_size_bytes() > runtime::kMaxFabricPayloadBytes) {
      throw UsageError(fmt::format("--layout/{}: {}, and --fabric-payload takes at most {} B (REFERENCE 6.2); "
                                   "expected a page of at most {} B: --layout tile, or shorter rows",
                                   requested.shape ? "--shape" : "--size", e.what(), runtime::kMaxFabricPayloadBytes,
                                   runtime::kMaxFabricPayloadBytes));
    }
    throw UsageError(fmt::format("--fabric-payload: {}; expected a payload of at least the page", e.what()));
  } catch (const runtime::remote::HostBytesLimitError& e) {
    // A served device's tensor its server would not take or send back whole (checked by the
    // client before the op runs: a write of an input, or the read of a result).
    throw UsageError(fmt::format("{}: {}; expected a tensor whose every buffer holds at most that per chip, or a "
                                 "server started with a larger --max-enqueued-host",
                                 requested.shape ? "--shape" : "--size", e.what()));
  } catch (const ccl::TooFewLinksError& e) {
    // A group's hop with fewer links than --links (a torus row with a hop of 1 link, along its
    // axis on --links 2; bug bash, session 44: the refusal named the library's num_links only).
    if (e.links_allowed() == 0) throw UsageError(fmt::format("--links: {}", e.what()));
    throw UsageError(fmt::format("--links: {}; expected 1 to {}", e.what(), e.links_allowed()));
  } catch (const std::invalid_argument& e) {  // CclParamsError
    throw UsageError(fmt::format("{}{}", e.what(), route_length_hint(options, topology, n_chips, e.what())));
  }
}

// The op prepared timing-only on a device that places it as the simulator would but builds no
// chip, and its workloads placed there: every refusal the topology and the options decide (links
// a hop lacks, a ring without its closing link, a route past the fabric's reach, a buffer or CB
// that does not fit, a fabric no line avoids a down link by) comes, with the device's message,
// before the simulated device is built: a 64x64 mesh's took ~20 s and ~6.7 GB first.
// Returns the planned workloads (the simulated device's, from the cache); a run with data whose
// planned buffers are more than the host's memory is refused (host_memory_check.hpp).
WorkloadCache::Workloads plan_before_building(const RunOptions& requested, const RunOptions& options,
                                              const topo::Topology& topology, std::uint32_t n_chips, bool ring,
                                              WorkloadCache& cache, std::uint64_t host_bytes) {
  RunOptions timing_only = options;
  timing_only.no_data = true;  // the planning device holds no data: nothing is written or checked
  std::unique_ptr<sim::device::PlanningMeshDevice> planner;
  std::unique_ptr<OpBuffers> planned_buffers;
  const PreparedOp planned = prepared_or_usage_error(requested, options, topology, n_chips, [&] {
    const sim::device::SimMeshDeviceOptions config = device_options(options, ring, nullptr);
    planner = std::make_unique<sim::device::PlanningMeshDevice>(topology, config.fabric, config.faults,
                                                                config.data_mode);
    planned_buffers = std::make_unique<OpBuffers>(*planner);  // not freed: the planner is dropped after
    return prepare_op(timing_only, *planner, *planned_buffers, ring, cache);
  });
  run_op(*planner, planned, requested);
  // The expected outputs are not made yet: counted when they are (reject_run_past_host_memory).
  reject_run_past_host_memory(options, data_run_need(options, planned, *planned_buffers, n_chips), host_bytes);
  return planned.workloads;
}

// A served device's client makes a run's inputs and expected outputs in its own process: one past
// the memory this host has available is refused (exit 2) before anything is sent, counted from the
// op prepared timing-only on a planning device of the served topology and fabric (session 42: a
// big run swapped or was killed on the client, where a local run is refused). What the planner
// refuses is left to the served device's preparation, which reports it in its own words.
void reject_client_past_host_memory(const RunOptions& options, const runtime::MeshDevice& served, std::uint32_t n_chips,
                                    bool ring) {
  const std::uint64_t host_bytes = host_bytes_for_data(options);
  if (host_bytes == 0) return;
  RunOptions timing_only = options;
  timing_only.no_data = true;
  HostMemoryNeed need;
  try {
    sim::device::PlanningMeshDevice planner(served.topology(), served.fabric(), options.faults.plan,
                                            sim::DataMode::TimingOnly);
    OpBuffers buffers(planner);
    WorkloadCache cache;  // its own: the served run's preparations and builds are counted as before
    const PreparedOp planned = prepare_op(timing_only, planner, buffers, ring, cache);
    need = served_client_need(options, planned, buffers, n_chips);
  } catch (const std::exception&) {
    return;
  }
  reject_client_data_past_host_memory(size_option(options), size_value(options), need, host_bytes,
                                      options.data_runs_at_once);
}

// The topology the op runs as on a served fabric: the fabric's own shape, or along a per-axis
// fabric (serve --fabric-scope axes) the shape of the lines along --cluster-axis (a ring where
// every one of them is one). A device without a fabric (legacy mode) runs as `--topology` says.
std::string served_topology(const RunOptions& options, const topo::Topology& topology,
                            const runtime::FabricOptions& fabric) {
  if (fabric.mode == runtime::FabricMode::None) return resolve_topology(options, topology);
  if (fabric.scope == runtime::FabricScope::System) {
    if (options.cluster_axis) {
      throw UsageError(fmt::format("--cluster-axis: the served device's fabric is one {} through every chip; ops "
                                   "along a mesh axis need a fabric per axis (cclmesh serve --fabric-scope axes)",
                                   runtime::to_string(fabric.mode)));
    }
    return fabric.mode == runtime::FabricMode::Ring ? "ring" : "line";
  }
  if (!options.cluster_axis) {
    throw UsageError("--cluster-axis: the served device's fabric runs one line or ring per mesh row and column "
                     "(serve --fabric-scope axes); give --cluster-axis 0 or 1, the axis the op runs along");
  }
  const runtime::FabricPlan plan = [&] {
    try {
      return runtime::FabricPlan(topology, fabric);
    } catch (const std::invalid_argument& e) {  // the server built it, so this is the server's bug
      throw std::runtime_error(fmt::format("the served fabric does not plan here: {}", e.what()));
    }
  }();
  // A ring opened into a line around a down link (FabricLine::opened_at) counts as a ring: the
  // device laid the rings a local `run --topology ring` lays, and that run's op runs such a
  // group as a line and the others as rings (groups_by_shape). Counted as a line, it made the
  // op run every group as a line on the ring fabric, which no local run does (20.89 us against
  // the local 20.87 at 256 KiB, torus:4x4 all_gather along axis 1 with 3-0 down). On a line
  // fabric (serve --topology line) a line run over its closing link is opened too, and stays a
  // line (review: counted as a ring, the client's refusals of it read as a ring's).
  const bool ring_fabric = fabric.mode == runtime::FabricMode::Ring;
  bool any = false;
  bool every_one_a_ring = true;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (line.axis != *options.cluster_axis) continue;
    any = true;
    every_one_a_ring = every_one_a_ring && (line.mode == runtime::FabricMode::Ring ||
                                            (ring_fabric && line.opened_at.has_value()));
  }
  return any && every_one_a_ring ? "ring" : "line";
}

// Runs an op (`run`: prepare, run, read back and check) and gives its buffers back after: once
// it completed, and when bad input stopped it midway, so that a skipped sweep point leaves a
// served device as it found it. Not after a DeviceError: the device is failed until its reset,
// which frees everything; nor after a RemoteDeviceError: the session is gone.
template <class Run>
RunResult with_buffers_given_back(OpBuffers& buffers, Run run) {
  RunResult result;
  try {
    result = run();
  } catch (const UsageError&) {
    buffers.free_all_quietly();
    throw;
  }
  buffers.free_all();
  return result;
}

// --hardware beside --device: the server decides the hardware (serve --hardware), as it decides
// the system, so a run asking for the other hardware is refused before any op (exit 2): its row
// would be the served chips' under a request for others, and modelled and ideal times differ by
// well apart. The same hardware is taken, so a script can pass the options of a local
// run and have the server's hardware checked; it changes nothing else.
void require_served_hardware(const RunOptions& options, const runtime::remote::RemoteMeshDevice& device) {
  const std::string_view served = runtime::remote::hardware_name(device.hardware());
  if (!options.hardware_given || options.hardware == served) return;
  throw UsageError(fmt::format("--device: --hardware {} given, but {} serves {} hardware ({}); the served device's "
                               "hardware is the server's to decide: drop --hardware, or run against a cclmesh serve "
                               "started with --hardware {}",
                               options.hardware, device.endpoint(), served, device.description(), options.hardware));
}

}  // namespace

std::unique_ptr<runtime::remote::RemoteMeshDevice> connect_device(const RunOptions& options) {
  try {
    const auto [host, port] = runtime::remote::parse_endpoint(options.device);
    runtime::remote::RemoteDeviceOptions remote;
    const auto wait = std::chrono::milliseconds(std::llround(options.device_wait_s * 1000.0));
    remote.busy_wait = wait;
    // Said once, so a run that waits for another client's session does not look stuck.
    remote.on_busy = [seconds = options.device_wait_s](const std::string& why) {
      fmt::print(stderr, "cclmesh: {}; waiting up to {:g} s for it to end (--device-wait)\n", why, seconds);
      std::fflush(stderr);
    };
    // A script's `cclmesh serve ... &` then `run --device-wait N`: the server may not listen yet.
    // Only when asked: without --device-wait, nothing listening is said at once, as before.
    if (options.device_wait_given) {
      remote.connect_wait = wait;
      remote.on_not_accepting = [seconds = options.device_wait_s](const std::string& why) {
        fmt::print(stderr, "cclmesh: {}; trying again for up to {:g} s (--device-wait)\n", why, seconds);
        std::fflush(stderr);
      };
    }
    auto device = std::make_unique<runtime::remote::RemoteMeshDevice>(host, port, remote);
    require_served_hardware(options, *device);
    return device;
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--device: {}", e.what()));
  } catch (const runtime::remote::ServerBusyError& e) {
    throw DeviceUnavailableError(fmt::format("--device: {} (--device-wait SECONDS waits longer)", e.what()));
  } catch (const runtime::remote::ServerNotAcceptingError& e) {
    throw DeviceUnavailableError(fmt::format("--device: {} ({})", e.what(),
                                             options.device_wait_given ? "--device-wait SECONDS waits longer"
                                                                       : "is cclmesh serve running there? --device-wait SECONDS waits for one still starting"));
  } catch (const runtime::remote::RemoteDeviceError& e) {
    throw UsageError(fmt::format("--device: {}", e.what()));
  }
}

// The op on a served device (cclmesh serve), whose system, mode, fabric (device.fabric()) and
// data mode are the server's; the run path's simulator extras (wires, faults, traces) were
// refused with the option (device_options_check.cpp); the op's event count is the server's.
RunOptions served_run_options(const RunOptions& requested, const runtime::remote::RemoteMeshDevice& device) {
  const topo::Topology& topology = device.topology();
  const runtime::FabricOptions& fabric = device.fabric();
  // The server decided what `cclmesh run` takes from --system, --mode, --topology, --links,
  // --no-data (a timing-only device: nothing written, nothing checked, #wrong N/A) and the
  // fabric's settings (--fabric-payload, --fabric-rx-in-flight, --erisc-unreserved-kib).
  RunOptions options = requested;
  options.no_data = device.data_mode() == runtime::remote::ServedDataMode::TimingOnly;
  // Ideal hardware: the title, --json and the alpha-beta note say so, as a local --hardware ideal run's.
  options.hardware = runtime::remote::hardware_name(device.hardware());
  options.system = device.system_name();
  options.mode = fabric.mode == runtime::FabricMode::None ? "legacy" : "fabric";
  options.links = fabric.mode == runtime::FabricMode::None ? 1 : fabric.num_links;
  options.topology = served_topology(options, topology, fabric);
  // A fabric laid through some chips only (serve --chips): the op runs on them, as a local
  // `run --chips` does (a fabric re-embedded around a down link still runs through every chip).
  if (fabric.mode != runtime::FabricMode::None && fabric.scope == runtime::FabricScope::System &&
      !fabric.chip_order.empty() && fabric.chip_order.size() < topology.chips().size()) {
    options.chips.assign(fabric.chip_order.begin(), fabric.chip_order.end());
    options.chips_given.clear();  // the server's order, not what this client typed
  }
  // The row names the faults the device runs under, as a local run's does, and what they did
  // (the server's lines). Parsed as a local run parses --fault, so what looks a fault up by its
  // link (the note of a ring run as a line, a refusal naming the fault) finds it as locally.
  options.faults = {};
  for (const std::string& spec : device.faults()) {
    try {
      add_fault_spec(options.faults, spec);
    } catch (const UsageError& e) {  // a server that knows a fault this client does not
      throw UsageError(fmt::format("--device: the served device runs under fault '{}', which this cclmesh does not "
                                   "read ({}); expected a server of the same version",
                                   spec, e.what()));
    }
  }
  // And held to what serve checks of its own --fault: a fault on a link the topology lacks, or a
  // corruption on a device that carries no data, is no cclmesh serve's (session 32: taken, the
  // first was only named in the row, the second made a timing-only run's row say data flipped).
  try {
    require_fault_links_on(options.faults, topology);
    require_data_for_corruption(options.faults.plan, options.no_data, "the served device (timing only)", "serve");
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--device: the served device's hello: faults: {}; expected the faults of a device "
                                 "serving that topology (a cclmesh serve's)",
                                 e.what()));
  }
  options.fabric_payload_bytes = fabric.max_payload_bytes;
  options.fabric_rx_in_flight = fabric.receiver_packets_in_flight;
  options.erisc_unreserved_bytes = fabric.erisc_unreserved_bytes;
  options.ring_flow_control = fabric.ring_flow_control;
  // A legacy-mode device has no router to set: leave it unset, as a local legacy run has it.
  if (fabric.mode != runtime::FabricMode::None) options.first_level_acks = fabric.first_level_acks;
  return options;
}

namespace {

// run_collective_on's run, whose std::bad_alloc it names as the client's.
RunResult run_served_collective(const RunOptions& requested, runtime::remote::RemoteMeshDevice& device) {
  const auto wall_start = std::chrono::steady_clock::now();
  const topo::Topology& topology = device.topology();
  const runtime::FabricOptions& fabric = device.fabric();
  RunOptions options = served_run_options(requested, device);
  // A served legacy device runs the op's EDMs where the client lays them, as a local run does.
  lay_legacy_group_around_down_links(options, topology);
  const auto n_chips =
      static_cast<std::uint32_t>(options.chips.empty() ? topology.chips().size() : options.chips.size());
  reject_unsupported(options, n_chips);
  const bool ring = options.topology == "ring";
  reject_client_past_host_memory(options, device, n_chips, ring);
  OpBuffers buffers(device);
  WorkloadCache cache;  // the served device's preparation (the client's planning, if any, keeps its own)
  RunResult result = with_buffers_given_back(buffers, [&] {
    const PreparedOp op = prepared_or_usage_error(requested, options, topology, n_chips,
                                                  [&] { return prepare_op(options, device, buffers, ring, cache); });
    const std::optional<std::uint64_t> enqueued_ps = device.device_time_ps();
    const std::size_t profile_begin = device.profile_size();
    const std::optional<std::vector<runtime::LinkTraffic>> links_before = device.link_traffic();
    const std::optional<std::uint64_t> events_before = device.device_events();
    run_op(device, op, requested);
    const std::optional<std::uint64_t> events_after = device.device_events();
    std::vector<runtime::KernelProfile> entries;
    try {
      entries = device.profile_since(profile_begin);
    } catch (const runtime::ProfileEntriesDroppedError& e) {
      // The server's bound on a session's profile is below this op's kernels (session 31).
      throw UsageError(fmt::format("--device: {}; expected a server that keeps at least one op's entries", e.what()));
    }
    const OpTimes times = op_times(entries);
    // Without the device's clock the dispatch gap is unknown: NaN, printed as such.
    const double enqueued_us = enqueued_ps ? static_cast<double>(*enqueued_ps) / 1e6
                                           : std::numeric_limits<double>::quiet_NaN();
    RunResult r = op_result(options, device, runtime::FabricPlan(topology, fabric), op, topology, times, enqueued_us);
    // Counted on the server, as a local run counts them; none from a backend that counts none.
    if (events_before && events_after) r.sim_events = *events_after - *events_before;
    set_links_used(r, links_before, device.link_traffic(), times);
    check_op(op, r);
    return r;
  });
  result.settings = settings_json(options);
  result.fault_effects = with_legacy_group_note(options, device.fault_effects());
  result.op_preparations = cache.hits() + cache.builds();
  result.op_builds = cache.builds();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace

RunResult run_collective_on(const RunOptions& requested, runtime::remote::RemoteMeshDevice& device) {
  try {
    return run_served_collective(requested, device);
  } catch (const std::bad_alloc&) {
    // This process's memory, not the server's (whose bad_alloc comes back as its refusal or
    // report): a local run's message would name the chips' buffers and --no-data (review42).
    throw ClientOutOfHostMemory(device.data_mode() == runtime::remote::ServedDataMode::TimingOnly);
  }
}

RunResult run_collective(const RunOptions& requested, sim::trace::TraceRecorder* trace, RunProgress* progress) {
  if (!requested.device.empty()) {
    if (progress != nullptr) progress->groups_mirrored = 0;  // a served device simulates every chip
    return run_collective_on(requested, *connect_device(requested));
  }
  const auto wall_start = std::chrono::steady_clock::now();
  topo::Topology topology = topo::with_every_link(load_topology(requested.system), requested.link_whatif);
  RunOptions options = requested;
  options.topology = resolve_topology(requested, topology);
  options.topology_chosen_by_auto = requested.topology == "auto";
  check_chips(options, topology);
  reject_links_above_every_edge(options, topology);
  require_fault_links_on(options.faults, topology);
  reject_fixed_groups_across_down_links(options, topology);
  lay_legacy_group_around_down_links(options, topology);
  const auto n_chips =
      static_cast<std::uint32_t>(options.chips.empty() ? topology.chips().size() : options.chips.size());
  reject_unsupported(options, n_chips);
  reject_size_below_a_page_per_chip(options, topology, n_chips);
  const bool ring = options.topology == "ring";
  // The op is prepared twice, on the planning device and then on the simulated one: the second
  // takes the first's workloads when its params are the same (workload_cache.hpp).
  WorkloadCache workload_cache;
  const std::uint64_t host_bytes = host_bytes_for_data(options);
  const WorkloadCache::Workloads planned =
      plan_before_building(requested, options, topology, n_chips, ring, workload_cache, host_bytes);
  const sim::BusyWindow busy_window = requested_busy_window();
  const std::optional<sim::ChipId> noc_stats_chip = requested_noc_stats_chip(topology);

  std::unique_ptr<sim::device::SimMeshDevice> device;
  std::unique_ptr<OpBuffers> buffers;
  std::size_t groups_mirrored = 0;
  const PreparedOp op = prepared_or_usage_error(requested, options, topology, n_chips, [&] {
    sim::device::SimMeshDeviceOptions device_config = device_options(options, ring, trace);
    device_config.busy_window = busy_window;
    GroupMirroring mirroring = groups_to_mirror(options, topology, device_config.fabric, *planned, trace != nullptr,
                                                noc_stats_chip.has_value());
    groups_mirrored = mirroring.mirrored_count();
    if (progress != nullptr) progress->groups_mirrored = groups_mirrored;
    device_config.mirrored_groups = std::move(mirroring.groups);
    device_config.mirrored_group_sources = std::move(mirroring.sources);
    device = std::make_unique<sim::device::SimMeshDevice>(topology, std::move(device_config));
    buffers = std::make_unique<OpBuffers>(*device);
    return prepare_op(options, *device, *buffers, ring, workload_cache);
  });
  // Before the op writes its outputs' pages, with the expected outputs now made and counted.
  reject_run_past_host_memory(options, data_run_need(options, op, *buffers, n_chips), host_bytes);

  const sim::EngineStats before = device->stats();
  const sim::SimTime enqueued = device->now();
  const std::size_t profile_begin = device->profile_size();
  const std::optional<std::vector<runtime::LinkTraffic>> links_before = device->link_traffic();
  run_op(*device, op, requested);
  const sim::EngineStats after = device->stats();
  const OpTimes times = op_times(device->profile_since(profile_begin));

  RunResult result = op_result(options, *device, device->fabric_plan(), op, topology, times, enqueued.us());
  result.sim_events = after.events_executed - before.events_executed;
  result.groups_mirrored = groups_mirrored;
  result.simulate_wall_s = after.wall_seconds - before.wall_seconds;
  result.trace_hash = device->trace_hash();
  set_links_used(result, links_before, device->link_traffic(), times);
  if (noc_stats_chip) {
    print_noc_usage(*device, *noc_stats_chip, static_cast<double>(times.first_start_ns) / 1e3, result.time_us);
  }
  check_op(op, result);
  // The device goes with this run; freeing anyway keeps one path with a served device's run.
  buffers->free_all();
  result.settings = settings_json(options);
  result.fault_effects = with_legacy_group_note(options, device->fault_effects());
  result.op_preparations = workload_cache.hits() + workload_cache.builds();
  result.op_builds = workload_cache.builds();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // The device's teardown is not part of the run (wall_s): a process that exits next keeps it
  // (exit_without_teardown.hpp).
  buffers.reset();
  finish_with_device(std::move(device), trace != nullptr);
  return result;
}

}  // namespace cclmesh::cli
