// `cclmesh serve --system S [--port P] [--bind ADDR] [--mode fabric|legacy] [--hardware modelled|ideal]
//   [--topology auto|ring|line] [--fabric-scope system|axes] [--chips A,B,...] [--links N] [--no-data]
//   [--idle-timeout S] [--link-rate R] [--link-latency T] [--fabric-payload B]
//   [--fabric-rx-in-flight N] [--erisc-unreserved-kib N] [--fault SPEC]... [--max-sim-time T]
//   [--max-wall S] [--max-enqueued-host SIZE] [--max-host-memory SIZE] [--max-profile-entries N]
//   [--trace-dir DIR [--trace-limit N]]`:
// a simulated mesh served to RemoteMeshDevice clients (docs/remote_device.md), one session at a
// time, until SIGINT / SIGTERM or a client's shutdown request (exit 0; bad options exit 2, a
// device whose fabric cannot start exits 3 with the report, as `run`); a session that leaves
// the device failed or with work unfinished is followed by a reset (RemoteServerOptions). The
// first line on stdout names the address and port listened on (port 0: an ephemeral one). What shapes
// the device (its fabric, faults, watchdogs) is given here, as `cclmesh run` takes it for a local
// run: a client's `run --device` cannot change the served device. --trace-dir writes a trace of
// each client session, or of the start-up when the fabric cannot start (session_traces.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "runtime/device/fabric_options.hpp"
#include "runtime/device/fabric_payload_bounds.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/host_memory_check.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/run_option_checks.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/served_fault_effects.hpp"
#include "tools/cclmesh/session_traces.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/whole_number_option.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/link_whatif.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {

constexpr std::uint16_t kDefaultPort = 5170;

struct ServeOptions {
  std::string system;
  std::uint32_t port = kDefaultPort;
  std::string bind = "127.0.0.1";
  std::string mode = "fabric";
  // modelled | ideal: the chips served, as `run --hardware` (the hello tells clients, whose rows say so)
  std::string hardware = "modelled";
  std::string topology = "auto";
  std::string fabric_scope = "system";
  // The fabric's chips, in order (one line or ring through them alone); empty: every chip.
  std::vector<std::uint32_t> chips;
  std::string chips_given;  // as typed (RunOptions::chips_given)
  std::uint32_t links = 1;
  // Typed, whatever the value: a refusal of the device names only the options typed (as run's
  // fabric_options_named: `serve --system t3k --links 2` named a --mode fabric never typed).
  bool mode_typed = false;
  bool topology_typed = false;
  bool links_typed = false;
  bool fabric_payload_typed = false;
  bool no_data = false;
  double idle_timeout_s = 300;
  topo::LinkWhatIf link_whatif;
  // The fabric settings `cclmesh run` takes (the same ranges and defaults).
  std::uint32_t fabric_payload_bytes = runtime::FabricOptions{}.max_payload_bytes;
  std::optional<std::uint32_t> fabric_rx_in_flight;
  std::optional<std::uint32_t> erisc_unreserved_kib;
  runtime::RingFlowControl ring_flow_control = runtime::RingFlowControl::Bubble;
  bool ring_flow_control_typed = false;  // bubble too: refused off a ring fabric, as `run` refuses it
  std::optional<bool> first_level_acks;  // --first-level-acks; unset: on
  // What-ifs the served device runs under (run --fault's specs), and its watchdogs, each op's.
  std::vector<std::string> faults;
  std::string max_sim_time;
  std::string max_wall;
  // What one client may hold queued in the server (enqueued writes' bytes and reads' bytes until
  // its finish()), as a size ("1GiB").
  std::string max_enqueued_host = "1GiB";
  // The bytes of buffers the clients of a device with data may hold at once (each on every
  // chip), as a size; empty: the host's physical memory (host_memory_check.hpp).
  std::string max_host_memory;
  // A session's kernel profile keeps its last N entries (RemoteServerOptions::max_profile_entries).
  std::size_t max_profile_entries = runtime::remote::kDefaultMaxProfileEntries;
  // One Perfetto trace per client session into this directory (empty: none).
  std::string trace_dir;
  std::size_t trace_limit = sim::trace::TraceLimits{}.max_spans_per_track;
};

// The server a signal stops: stop() is one lock-free atomic store.
std::atomic<runtime::remote::RemoteDeviceServer*> signalled_server{nullptr};

// Set to stop the served device's run in progress (SimMeshDeviceOptions::abandon): a signal
// stops the server, and a call whose client has gone is not worth finishing. A lock-free store.
std::atomic<bool> abandon_served_run{false};

extern "C" void stop_on_signal(int) {
  abandon_served_run.store(true);
  if (runtime::remote::RemoteDeviceServer* server = signalled_server.load()) server->stop();
}

// Per axis (--fabric-scope axes) with --topology auto: a ring mode when the groups along some
// axis all close into rings of 3 or more chips (the fabric then rings each row or column that
// closes and runs a line along the others), else lines.
bool some_axis_closes(const topo::Topology& topology, std::int32_t links) {
  for (int axis = 0; axis < 2; ++axis) {
    try {
      const auto groups = topo::axis_groups(topology, axis);
      if (groups.empty() ||
          std::any_of(groups.begin(), groups.end(), [](const auto& group) { return group.size() < 3; })) {
        continue;
      }
      topo::find_axis_rings(topology, axis, links);
      return true;
    } catch (const topo::EmbeddingError&) {
    } catch (const topo::InputError&) {  // no such axis (or no mesh): the fabric plan says so
    }
  }
  return false;
}

// --chips: a line or ring through those chips alone, as `run --chips` lays it (--topology auto: a
// ring where the last chip neighbours the first over --links, and there are 3 or more).
runtime::FabricMode fabric_mode_through_chips(const ServeOptions& options, const topo::Topology& topology) {
  const std::string given = detail::chips_as_given(options.chips, options.chips_given);
  if (options.mode == "legacy") {
    throw UsageError(fmt::format("--chips: '{}' given with --mode legacy, which runs no fabric to lay through them "
                                 "(each op brings its own EDMs); serve --mode fabric",
                                 given));
  }
  if (options.fabric_scope != "system") {
    throw UsageError(fmt::format("--chips: '{}' given with --fabric-scope {}, whose fabrics are the mesh's rows and "
                                 "columns; a fabric through chips of your choice is one line or ring (--fabric-scope "
                                 "system)",
                                 given, options.fabric_scope));
  }
  RunOptions run;
  run.topology = options.topology;
  run.links = options.links;
  run.chips = options.chips;
  return resolve_topology(run, topology) == "ring" ? runtime::FabricMode::Ring : runtime::FabricMode::Line;
}

// The fabric a served device runs: clients build their ops for it (the hello tells them).
runtime::FabricMode fabric_mode(const ServeOptions& options, const topo::Topology& topology) {
  if (!options.chips.empty()) return fabric_mode_through_chips(options, topology);
  if (options.mode == "legacy") return runtime::FabricMode::None;
  if (options.topology == "line") return runtime::FabricMode::Line;
  if (options.fabric_scope == "axes") {
    return options.topology == "ring" || some_axis_closes(topology, static_cast<std::int32_t>(options.links))
               ? runtime::FabricMode::Ring
               : runtime::FabricMode::Line;
  }
  if (options.topology == "ring") {
    if (topology.chip_count() < 3) {
      throw UsageError(fmt::format("--topology: ring on {} ({} chips) does not work; a ring needs 3 or more chips "
                                   "(use line or auto)",
                                   options.system, topology.chip_count()));
    }
    return runtime::FabricMode::Ring;
  }
  if (topology.chip_count() < 3) return runtime::FabricMode::Line;
  try {
    topo::find_system_ring(topology, static_cast<std::int32_t>(options.links));
    return runtime::FabricMode::Ring;
  } catch (const topo::EmbeddingError&) {
    return runtime::FabricMode::Line;
  }
}

// serve --trace-dir when the fabric cannot start: DIR/startup.json, or one line saying why not
// (the exit stays 3: the start-up's failure is the outcome, the trace a help to see it).
void write_startup_trace(SessionTraces& traces, const std::string& asked, const runtime::DeviceError& error) {
  try {
    const std::string path = traces.startup_failed(asked, error);
    std::fprintf(stderr, "cclmesh serve: start-up trace written to %s\n", path.c_str());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "cclmesh serve: %s\n", e.what());
  }
}

int run_serve(const ServeOptions& options) {
  // Before anything is built: a directory that cannot take the traces costs no start-up.
  std::unique_ptr<SessionTraces> traces;
  if (!options.trace_dir.empty() && options.trace_limit == 0) {
    throw UsageError("--trace-limit: 0 keeps no span; give a positive number of spans per track");
  }
  if (!options.trace_dir.empty()) traces = std::make_unique<SessionTraces>(options.trace_dir, options.trace_limit);
  topo::Topology topology;
  try {
    topology = topo::with_every_link(topo::load_system(options.system), options.link_whatif);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
  sim::device::SimMeshDeviceOptions device_options;
  device_options.data_mode = options.no_data ? sim::DataMode::TimingOnly : sim::DataMode::Functional;
  device_options.hardware = options.hardware == "ideal" ? sim::HardwareModel::Ideal : sim::HardwareModel::Modelled;
  device_options.fabric.mode = fabric_mode(options, topology);
  if (options.fabric_scope == "axes") device_options.fabric.scope = runtime::FabricScope::Axes;
  device_options.fabric.num_links = options.links;
  device_options.fabric.chip_order.assign(options.chips.begin(), options.chips.end());
  device_options.fabric.max_payload_bytes = options.fabric_payload_bytes;
  if (options.mode == "legacy" && options.links != 1) {
    // A served legacy device's clients run their ops' EDMs on one link per hop (`run --device`
    // takes --links from the server, which has no fabric to give it): taken, it was dropped.
    throw UsageError(fmt::format("--links: {} given with --mode legacy, which runs no fabric: a served legacy "
                                 "device's ops lay their own EDMs over 1 link per hop (run --device takes its links "
                                 "from the server); it applies with --mode fabric",
                                 options.links));
  }
  if (options.mode == "legacy" && options.fabric_rx_in_flight) {
    // As `run --mode legacy` refuses it (run_option_checks.cpp): no router, so no receiver to set.
    throw UsageError(fmt::format("--fabric-rx-in-flight: {} given with --mode legacy, which runs no fabric router "
                                 "(each op's own EDMs carry its packets); it applies with --mode fabric",
                                 *options.fabric_rx_in_flight));
  }
  device_options.fabric.receiver_packets_in_flight = options.fabric_rx_in_flight;
  if (options.erisc_unreserved_kib) device_options.fabric.erisc_unreserved_bytes = *options.erisc_unreserved_kib * 1024;
  if ((options.ring_flow_control == runtime::RingFlowControl::Dateline || options.ring_flow_control_typed) &&
      device_options.fabric.mode != runtime::FabricMode::Ring) {
    // As `run` refuses it (run_option_checks.cpp): only a ring fabric has a cycle to break.
    const bool dateline = options.ring_flow_control == runtime::RingFlowControl::Dateline;
    throw UsageError(fmt::format("--ring-flow-control: '{}' given for a {} device; {} is how a ring fabric's routers "
                                 "avoid deadlock (REFERENCE 6.7), expected --topology ring with --mode fabric",
                                 dateline ? "dateline" : "bubble",
                                 device_options.fabric.mode == runtime::FabricMode::None ? "legacy-mode" : "line",
                                 dateline ? "the dateline VC" : "bubble flow control"));
  }
  device_options.fabric.ring_flow_control = options.ring_flow_control;
  RunFaults faults;
  for (const std::string& spec : options.faults) add_fault_spec(faults, spec);
  require_data_for_corruption(faults.plan, options.no_data, "a --no-data device", "serve");
  require_fault_links_on(faults, topology);
  device_options.faults = faults.plan;
  if (faults.no_bubble && (device_options.fabric.mode != runtime::FabricMode::Ring ||
                           options.ring_flow_control == runtime::RingFlowControl::Dateline)) {
    // As `run` refuses it (run_option_checks.cpp): only a bubble ring has the rule to turn off.
    throw UsageError(fmt::format(
        "--fault: 'no-bubble' given for {}; it turns off the bubble flow control of a ring fabric's routers "
        "(REFERENCE 6.7), expected --topology ring with --mode fabric and --ring-flow-control bubble (the default)",
        device_options.fabric.mode == runtime::FabricMode::None ? "a legacy-mode device, which runs no fabric router"
        : device_options.fabric.mode != runtime::FabricMode::Ring
            ? "a line device, whose routers run no bubble flow control (no buffer cycle to break)"
            : "--ring-flow-control dateline, whose routers avoid deadlock by the dateline VC and run no bubble flow "
              "control"));
  }
  if (faults.no_bubble) device_options.fabric.bubble_flow_control = false;
  if (options.first_level_acks && device_options.fabric.mode == runtime::FabricMode::None) {
    // As `run --mode legacy` refuses it (run_option_checks.cpp): no router, so no credits to set.
    throw UsageError(fmt::format("--first-level-acks: '{}' given with --mode legacy, which runs no fabric router "
                                 "(each op's own EDMs carry its packets); it applies with --mode fabric",
                                 *options.first_level_acks ? "on" : "off"));
  }
  if (!options.first_level_acks.value_or(true) && device_options.fabric.mode == runtime::FabricMode::Ring &&
      options.ring_flow_control == runtime::RingFlowControl::Bubble && !faults.no_bubble) {
    // As `run` refuses it (run_option_checks.cpp, REFERENCE 6.7).
    throw UsageError("--first-level-acks: 'off' given for a ring with bubble flow control (--ring-flow-control "
                     "bubble, the default), which needs them (REFERENCE 6.7, PR #33222); expected --ring-flow-control "
                     "dateline (the mid-2025 ring, which ran without them) or --topology line");
  }
  device_options.fabric.first_level_acks = options.first_level_acks.value_or(true);
  if (!options.max_sim_time.empty()) device_options.max_simulated_time = parse_sim_time(options.max_sim_time, "--max-sim-time");
  if (!options.max_wall.empty()) device_options.max_wall_seconds = parse_wall_seconds(options.max_wall, "--max-wall");
  device_options.abandon = &abandon_served_run;  // a client gone mid-call, or SIGINT / SIGTERM
  const std::uint64_t max_enqueued_host_bytes = parse_size_bytes(options.max_enqueued_host, "--max-enqueued-host");
  if (options.no_data && !options.max_host_memory.empty()) {
    throw UsageError("--max-host-memory: a --no-data device's buffers hold no bytes; expected one of the two");
  }
  const std::uint64_t max_host_memory_bytes = options.max_host_memory.empty()
                                                  ? host_memory_bytes()
                                                  : parse_size_bytes(options.max_host_memory, "--max-host-memory");
  // The device serves op after op, its clock running on: each finish() gets the budgets.
  device_options.watchdogs_per_finish = true;
  if (traces) device_options.trace = &traces->recorder();
  // What the device is built from, for a refusal (the device names the fault or the setting).
  std::string asked = fmt::format("--system {}", options.system);
  if (options.mode_typed) asked += " --mode " + options.mode;
  if (options.hardware != "modelled") asked += " --hardware " + options.hardware;
  if (options.topology_typed) asked += " --topology " + options.topology;
  if (options.fabric_scope != "system") asked += " --fabric-scope " + options.fabric_scope;
  if (!options.chips.empty()) asked += fmt::format(" --chips {}", fmt::join(options.chips, ","));
  if (options.links_typed) asked += fmt::format(" --links {}", options.links);
  // The fabric settings typed, which size the routers as --links does (review42: left out, a
  // payload the ERISC's L1 cannot hold was blamed on --system alone).
  if (options.fabric_payload_typed) asked += fmt::format(" --fabric-payload {}", options.fabric_payload_bytes);
  if (options.fabric_rx_in_flight) asked += fmt::format(" --fabric-rx-in-flight {}", *options.fabric_rx_in_flight);
  if (options.erisc_unreserved_kib) asked += fmt::format(" --erisc-unreserved-kib {}", *options.erisc_unreserved_kib);
  if (options.ring_flow_control_typed) {
    asked += options.ring_flow_control == runtime::RingFlowControl::Dateline ? " --ring-flow-control dateline"
                                                                             : " --ring-flow-control bubble";
  }
  if (options.first_level_acks) asked += *options.first_level_acks ? " --first-level-acks on" : " --first-level-acks off";
  for (const std::string& spec : options.faults) asked += " --fault " + spec;
  if (!options.max_sim_time.empty()) asked += " --max-sim-time " + options.max_sim_time;
  if (!options.max_wall.empty()) asked += " --max-wall " + options.max_wall;
  const std::string fault_list = fmt::format("{}", fmt::join(faults.specs, " "));
  // What a start-up trace says of the device; the served description follows once it starts.
  if (traces) traces->set_device_info({{"system", options.system}, {"faults", fault_list}});
  std::unique_ptr<sim::device::SimMeshDevice> device;
  try {
    device = std::make_unique<sim::device::SimMeshDevice>(topology, device_options);
  } catch (const std::invalid_argument& e) {  // the fabric, a fault or the model cannot be built as asked
    throw UsageError(fmt::format("{}: {}", asked, e.what()));
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("{}: {}", asked, e.what()));
  } catch (const runtime::DeviceError& e) {
    // The fabric's start-up hung, failed or ran past a watchdog (a fault from the start, a budget
    // below the start-up's): a simulated outcome, not bad input, so exit 3 with the whole report
    // as `cclmesh run` does for the same device (README's exit codes).
    std::fprintf(stderr, "cclmesh: the simulated device did not start (%s):\n%s\n", asked.c_str(), e.what());
    // The trace up to the failure is what one needs to see why, as `run --trace` writes it.
    if (traces) write_startup_trace(*traces, asked, e);
    return kExitHangOrFault;
  }

  runtime::remote::RemoteServerOptions server_options;
  server_options.bind_address = options.bind;
  server_options.port = static_cast<std::uint16_t>(options.port);
  server_options.max_enqueued_host_bytes = max_enqueued_host_bytes;
  if (!options.no_data) server_options.max_buffer_host_bytes = max_host_memory_bytes;
  server_options.max_profile_entries = options.max_profile_entries;
  server_options.forget_profile_before = [&device](std::size_t entry) { device->forget_profile_before(entry); };
  server_options.data_mode =
      options.no_data ? runtime::remote::ServedDataMode::TimingOnly : runtime::remote::ServedDataMode::Functional;
  server_options.description =
      fmt::format("simulated {} ({} chips), {}, {}", topology.name(), topology.chip_count(),
                  device->fabric().mode == runtime::FabricMode::None
                      ? std::string("legacy mode (no fabric)")
                      : fmt::format("{}fabric {} x{}{}", options.fabric_scope == "axes" ? "per-axis " : "",
                                    runtime::to_string(device->fabric().mode), options.links,
                                    options.chips.empty() ? "" : fmt::format(" through chips {}", fmt::join(options.chips, ","))),
                  options.no_data ? "timing only" : "functional");
  if (device->fabric().ring_flow_control == runtime::RingFlowControl::Dateline) {
    server_options.description += ", dateline-VC ring routers (mid 2025)";
  }
  if (device->fabric().mode != runtime::FabricMode::None && !device->fabric().first_level_acks) {
    server_options.description += ", first-level acks off (mid 2025)";
  }
  if (options.hardware == "ideal") {
    server_options.hardware = runtime::remote::ServedHardware::Ideal;
    server_options.description += ", ideal hardware";
  }
  server_options.system_name = options.system;
  server_options.faults = faults.specs;  // clients' rows name them, as a local run's
  if (!faults.specs.empty()) server_options.description += fmt::format(", faults {}", fmt::join(faults.specs, " "));
  if (device_options.max_simulated_time) {
    server_options.description += fmt::format(", max-sim-time {} per op", options.max_sim_time);
  }
  if (device_options.max_wall_seconds) server_options.description += fmt::format(", max-wall {} s per op", options.max_wall);
  server_options.device_time_ps = [&device] { return static_cast<std::uint64_t>(device->now().ps()); };
  // A client's row counts its op's events as a local run's does (the difference of two readings).
  server_options.device_events = [&device] { return device->stats().events_executed; };
  // Each client's op's own corruption, not an earlier op's in the same device life.
  ServedFaultEffects fault_effects(*device);
  server_options.fault_effects = [&fault_effects] { return fault_effects.effects(); };
  // A client gets the session only while it talks: silent for idle_timeout (or not saying hello
  // within 10 s, or the idle timeout when shorter), it is dropped and the next client served.
  const auto idle = std::chrono::milliseconds(static_cast<std::int64_t>(options.idle_timeout_s * 1000.0));
  server_options.idle_timeout = idle;
  server_options.hello_timeout =
      idle.count() == 0 ? server_options.hello_timeout : std::min(server_options.hello_timeout, idle);
  server_options.log = [](const std::string& line) { std::fprintf(stderr, "cclmesh serve: %s\n", line.c_str()); };
  // A client killed mid-call (or gone silent under a heartbeat) used to hold the server until the
  // call's op had run to its end (17 s for a 256 MiB all_reduce); now the op stops, the device is
  // failed and reset after the session, and the next client is served at once.
  server_options.call_abandoned = [] { abandon_served_run.store(true); };
  server_options.session_started = [&traces, &device, &fault_effects](std::uint64_t session) {
    abandon_served_run.store(false);
    fault_effects.session_started();
    if (traces) traces->session_started(session, device->now());
  };
  if (traces) {
    traces->set_device_info({{"system", options.system},
                             {"device", server_options.description},
                             {"faults", fault_list}});
  }
  server_options.session_ended = [&traces, &device, log = server_options.log](std::uint64_t session,
                                                                               const std::string& how) {
    // Before the reset that may follow: its fabric start-up is not abandoned too.
    abandon_served_run.store(false);
    // No later session sees this one's kernels (MeshDevice's contract for a served device), so
    // the server need not keep them: a long-lived server's profile is one session's at most.
    device->forget_profile();
    if (!traces) return;
    const std::string path = traces->session_ended(session, how, device->now());
    log(fmt::format("session {}: trace written to {}", session, path));
  };
  std::unique_ptr<runtime::remote::RemoteDeviceServer> server;
  try {
    server = std::make_unique<runtime::remote::RemoteDeviceServer>(*device, server_options);
  } catch (const runtime::remote::RemoteDeviceError& e) {
    throw UsageError(fmt::format("--bind {} --port {}: {}", options.bind, options.port, e.what()));
  }
  signalled_server.store(server.get());
  std::signal(SIGINT, stop_on_signal);
  std::signal(SIGTERM, stop_on_signal);
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error on that session, not the end
  // An IPv6 address in brackets, the form `--device` takes (new-user pass, session 41: it printed
  // "::1:46427", which `run --device` refuses).
  const bool ipv6 = options.bind.find(':') != std::string::npos;
  std::cout << fmt::format("cclmesh serve: {} listening on {}{}{}:{}", server_options.description, ipv6 ? "[" : "",
                           options.bind, ipv6 ? "]" : "", server->port())
            << std::endl;
  server->serve();
  signalled_server.store(nullptr);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return kExitOk;
}

}  // namespace

void register_serve_command(CLI::App& app, CommandOutcome& outcome) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command =
      app.add_subcommand("serve", "Serve a simulated system to remote clients (RemoteMeshDevice) over TCP");
  command->add_option("--system", options->system, topo::system_spec_help())
      ->required();
  // Whole-number options read decimal digits only, as run's and sweep's (whole_number_option.hpp;
  // session 31: CLI::Range read `--port 010000` as octal 4096 and `--port 0x1F90` as 8080).
  command->add_option("--port", options->port, "TCP port to listen on (0: any free port, printed)")
      ->transform(whole_number_in(0, 65535))
      ->capture_default_str();
  command->add_option("--bind", options->bind, "address to listen on (0.0.0.0: every interface)")
      ->capture_default_str();
  command->add_option("--mode", options->mode, "fabric: persistent fabric routers; legacy: none (ops bring EDMs)")
      ->check(CLI::IsMember({"fabric", "legacy"}))
      ->capture_default_str();
  command
      ->add_option("--hardware", options->hardware,
                   "modelled (the calibrated chip model) or ideal: what-if chips whose NoC, DRAM and ERISC cost "
                   "nothing, links keeping their rate and latency (as `cclmesh run --hardware`); clients' rows say so")
      ->check(CLI::IsMember({"modelled", "ideal"}))
      ->capture_default_str();
  command->add_option("--topology", options->topology,
                      "the fabric's shape: auto (a ring through every chip where one exists), ring or line")
      ->check(CLI::IsMember({"auto", "ring", "line"}))
      ->capture_default_str();
  command->add_option_function<std::string>(
      "--chips",
      [options](const std::string& text) {
        options->chips = parse_chip_list(text, "--chips");
        options->chips_given = text;
      },
      "lay the fabric through these chips of --system only, in order, as one line or ring (as `run --chips`: "
      "A,B,... or A-B-...; "
      "--topology auto: a ring where the last neighbours the first); clients' ops then run on them");
  command->add_option("--links", options->links, "fabric routing planes (links per hop)")
      ->transform(whole_number_in(1, 4))
      ->capture_default_str();
  command
      ->add_option("--fabric-scope", options->fabric_scope,
                   "system: one line or ring through every chip; axes: one per mesh row and column (tt-metal's "
                   "FABRIC_1D per axis), for clients' `run --device --cluster-axis`")
      ->check(CLI::IsMember({"system", "axes"}))
      ->capture_default_str();
  command->add_option("--fabric-payload", options->fabric_payload_bytes,
                      "fabric packet payload in bytes (REFERENCE 6.2 default 4352); with --mode legacy, which runs no "
                      "fabric, it sizes only all_reduce's composite local-sum packet")
      ->transform(whole_number_in(runtime::kMinFabricPayloadBytes, runtime::kMaxFabricPayloadBytes))
      ->capture_default_str();
  command->add_option("--fabric-rx-in-flight", options->fabric_rx_in_flight,
                      "fabric routers' receivers: packets whose NoC writes are in flight at once (1..16; default every "
                      "receiver slot); --mode fabric only (legacy mode runs no router)")
      ->transform(whole_number_in(1, 16));
  command->add_option("--erisc-unreserved-kib", options->erisc_unreserved_kib,
                      "what-if: the ERISC's unreserved L1 in KiB (REFERENCE 1.4, unconfirmed: 106..150; default 150)")
      ->transform(whole_number_in(runtime::kEriscUnreservedMinBytes / 1024, runtime::kEriscUnreservedMaxBytes / 1024,
                                  "UINT"));
  command
      ->add_option_function<std::string>(
          "--ring-flow-control",
          [options](const std::string& name) {
            options->ring_flow_control =
                name == "dateline" ? runtime::RingFlowControl::Dateline : runtime::RingFlowControl::Bubble;
            options->ring_flow_control_typed = true;
          },
          "era what-if for a ring fabric's deadlock avoidance (as `cclmesh run`; REFERENCE 6.7, 12): bubble "
          "(late 2025, the default) or dateline (mid 2025: a second VC past the ring's closing hop)")
      ->check(CLI::IsMember({"bubble", "dateline"}))
      ->default_str("bubble");
  command
      ->add_option_function<std::string>(
          "--first-level-acks", [options](const std::string& value) { options->first_level_acks = value == "on"; },
          "era what-if for the fabric routers' credits (as `cclmesh run`; REFERENCE 6.4, 12): on (late 2025, PR "
          "#33192, the default) or off (mid 2025: a sender slot frees only on the completion ack); off is refused "
          "with bubble flow control on a ring (REFERENCE 6.7); --mode fabric only")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");
  command->add_option("--fault", options->faults,
                      "serve a faulty device (repeatable; as `cclmesh run --fault`): link-down:A-B[@T], link-slow:A-B:F, "
                      "skew:MAX[:SEED], drop:P[:SEED], dup:P[:SEED], corrupt:A-B[@T][:SEED], no-bubble; times are the "
                      "device's clock, which runs on across clients (from zero again after a reset)");
  command->add_option("--max-sim-time", options->max_sim_time,
                      "each client op (finish) stops with a report once it has simulated T (e.g. 50ms); the device "
                      "then stays failed for that client, as after a hang");
  command->add_option("--max-wall", options->max_wall,
                      "each client op (finish) stops with a report once it has taken SECONDS of wall time");
  command->add_flag("--no-data", options->no_data, "timing only: buffers hold no bytes (what-if sizes beyond memory)");
  command
      ->add_option("--max-enqueued-host", options->max_enqueued_host,
                   "the bytes of enqueued host writes and reads a client may have queued before its finish(), e.g. "
                   "256MiB, and the most one write or read may move (the server holds them; a request past it is "
                   "refused, the session goes on)")
      ->type_name("SIZE")
      ->capture_default_str();
  command
      ->add_option("--max-host-memory", options->max_host_memory,
                   "the bytes of buffers (each counted on every chip) clients of a device with data may hold at "
                   "once, e.g. 8GiB; a create_buffer past it is refused, the session goes on (default: this host's "
                   "physical memory)")
      ->type_name("SIZE");
  command
      ->add_option_function<std::string>(
          "--max-profile-entries",
          [options](const std::string& text) {
            options->max_profile_entries = parse_whole_number(text, "--max-profile-entries", 1, "count",
                                                              "a whole number of kernel profile entries, at least 1");
          },
          "the kernel profile entries a session keeps, its latest (~100 B each; a t3k all_gather's are 32, a "
          "reduce_scatter's up to 56): older ones are dropped, and a client asking for them is refused naming this "
          "option, so a session that runs ops for hours holds a bounded profile; run/sweep --device need at least "
          "one op's")
      ->type_name("UINT")
      ->default_str(std::to_string(runtime::remote::kDefaultMaxProfileEntries));
  // Parsed here: CLI::Range called "abc" or "5s" "not in range 0.000000 to 86400.000000".
  command
      ->add_option_function<std::string>(
          "--idle-timeout",
          [options](const std::string& text) {
            options->idle_timeout_s = parse_wait_seconds(text, "--idle-timeout", "never");
          },
          "seconds a client may stay silent between requests before its session is ended, so that the next "
          "client is not locked out (0: never)")
      ->type_name("SECONDS")
      ->default_str(fmt::format("{:g}", options->idle_timeout_s));
  CLI::Option* trace_dir = command->add_option("--trace-dir", options->trace_dir,
                      "write a Chrome / Perfetto trace (as `run --trace`) of each client session into DIR, an existing "
                      "directory: session-000001.json, ... in session order; times are the device's clock (a reset "
                      "inside a session: the timeline goes on after a 'device reset' marker); a fabric that cannot "
                      "start: its start-up in startup.json")
      ->type_name("DIR");
  // Without --trace-dir nothing is traced: a limit then was taken and did nothing (bug bash, session 28).
  add_trace_limit_option(*command, options->trace_limit, trace_dir);
  add_link_whatif_options(*command, options->link_whatif);
  command->footer(
      "A device that hangs, faults or times out stays failed for the rest of that client's session (as a local one; "
      "the client may reset it). A session that ends with the device failed, or with work enqueued and not "
      "finished, is followed by a reset: the next client gets the device as just opened (clock at zero, no buffers, "
      "faults armed again). A device whose fabric cannot start (a fault, or a --max-sim-time below its start-up) "
      "exits 3 with the report, as `cclmesh run` does.");
  command->callback([options, command, &outcome] {
    options->mode_typed = command->get_option("--mode")->count() > 0;
    options->topology_typed = command->get_option("--topology")->count() > 0;
    options->links_typed = command->get_option("--links")->count() > 0;
    options->fabric_payload_typed = command->get_option("--fabric-payload")->count() > 0;
    outcome.exit_code = run_serve(*options);
  });
}

}  // namespace cclmesh::cli
