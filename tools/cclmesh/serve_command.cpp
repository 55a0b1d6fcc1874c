// `cclmesh serve --system S [--port P] [--bind ADDR] [--mode fabric|legacy]
//   [--topology auto|ring|line] [--links N] [--no-data] [--idle-timeout S] [--link-rate R]
//   [--link-latency T]`:
// a simulated mesh served to RemoteMeshDevice clients (docs/remote_device.md), one session at a
// time, until SIGINT / SIGTERM or a client's shutdown request (exit 0). The first line on
// stdout names the address and port listened on (port 0 takes an ephemeral one).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "runtime/remote/remote_device_server.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/link_whatif.hpp"
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
  std::string topology = "auto";
  std::uint32_t links = 1;
  bool no_data = false;
  double idle_timeout_s = 300;
  topo::LinkWhatIf link_whatif;
};

// The server a signal stops: stop() is one lock-free atomic store.
std::atomic<runtime::remote::RemoteDeviceServer*> signalled_server{nullptr};

extern "C" void stop_on_signal(int) {
  if (runtime::remote::RemoteDeviceServer* server = signalled_server.load()) server->stop();
}

// The fabric a served device runs: clients build their ops for it (the hello tells them).
runtime::FabricMode fabric_mode(const ServeOptions& options, const topo::Topology& topology) {
  if (options.mode == "legacy") return runtime::FabricMode::None;
  if (options.topology == "line") return runtime::FabricMode::Line;
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

int run_serve(const ServeOptions& options) {
  topo::Topology topology;
  try {
    topology = topo::with_every_link(topo::load_system(options.system), options.link_whatif);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
  sim::device::SimMeshDeviceOptions device_options;
  device_options.data_mode = options.no_data ? sim::DataMode::TimingOnly : sim::DataMode::Functional;
  device_options.fabric.mode = fabric_mode(options, topology);
  device_options.fabric.num_links = options.links;
  std::unique_ptr<sim::device::SimMeshDevice> device;
  try {
    device = std::make_unique<sim::device::SimMeshDevice>(topology, device_options);
  } catch (const std::invalid_argument& e) {  // the fabric or model cannot be built as asked
    throw UsageError(fmt::format("--system {} --mode {} --links {}: {}", options.system, options.mode, options.links,
                                 e.what()));
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system {} --links {}: {}", options.system, options.links, e.what()));
  }

  runtime::remote::RemoteServerOptions server_options;
  server_options.bind_address = options.bind;
  server_options.port = static_cast<std::uint16_t>(options.port);
  server_options.fabric = device->options().fabric;
  server_options.data_mode =
      options.no_data ? runtime::remote::ServedDataMode::TimingOnly : runtime::remote::ServedDataMode::Functional;
  server_options.description =
      fmt::format("simulated {} ({} chips), {}, {}", topology.name(), topology.chip_count(),
                  device_options.fabric.mode == runtime::FabricMode::None
                      ? std::string("legacy mode (no fabric)")
                      : fmt::format("fabric {} x{}", runtime::to_string(device_options.fabric.mode), options.links),
                  options.no_data ? "timing only" : "functional");
  server_options.device_time_ps = [&device] { return static_cast<std::uint64_t>(device->now().ps()); };
  // A client gets the session only while it talks: silent for idle_timeout (or not saying hello
  // within 10 s, or the idle timeout when shorter), it is dropped and the next client served.
  const auto idle = std::chrono::milliseconds(static_cast<std::int64_t>(options.idle_timeout_s * 1000.0));
  server_options.idle_timeout = idle;
  server_options.hello_timeout =
      idle.count() == 0 ? server_options.hello_timeout : std::min(server_options.hello_timeout, idle);
  server_options.log = [](const std::string& line) { std::fprintf(stderr, "cclmesh serve: %s\n", line.c_str()); };
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
  std::cout << fmt::format("cclmesh serve: {} listening on {}:{}", server_options.description, options.bind,
                           server->port())
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
  command->add_option("--system", options->system,
                      "built-in name (n150, n300, t3k, tg, galaxy, ...), parametric (mesh:RxC, torus:RxC, ring:N) "
                      "or a YAML file")
      ->required();
  command->add_option("--port", options->port, "TCP port to listen on (0: any free port, printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command->add_option("--bind", options->bind, "address to listen on (0.0.0.0: every interface)")
      ->capture_default_str();
  command->add_option("--mode", options->mode, "fabric: persistent fabric routers; legacy: none (ops bring EDMs)")
      ->check(CLI::IsMember({"fabric", "legacy"}))
      ->capture_default_str();
  command->add_option("--topology", options->topology,
                      "the fabric's shape: auto (a ring through every chip where one exists), ring or line")
      ->check(CLI::IsMember({"auto", "ring", "line"}))
      ->capture_default_str();
  command->add_option("--links", options->links, "fabric routing planes (links per hop)")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  command->add_flag("--no-data", options->no_data, "timing only: buffers hold no bytes (what-if sizes beyond memory)");
  command
      ->add_option("--idle-timeout", options->idle_timeout_s,
                   "seconds a client may stay silent between requests before its session is ended, so that the next "
                   "client is not locked out (0: never)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  add_link_whatif_options(*command, options->link_whatif);
  command->callback([options, &outcome] { outcome.exit_code = run_serve(*options); });
}

}  // namespace cclmesh::cli
