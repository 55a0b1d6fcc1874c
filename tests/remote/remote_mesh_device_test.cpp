// RemoteMeshDevice against a RemoteDeviceServer on an ephemeral localhost port (a thread of this
// test) serving a SimMeshDevice: collectives built by the op builders on the client give the
// same output bytes and the same profile as on a local SimMeshDevice; DeviceError,
// WorkloadPlacementError and std::invalid_argument come back as themselves; a server that
// closes, stalls, or speaks another protocol or version is a RemoteDeviceError naming
// host:port, never a hang. Fake servers play the misbehaving side with the real frames.
#include "runtime/remote/remote_mesh_device.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <mutex>
#include <regex>
#include <thread>

#include "kernels/host/interpreter_stream.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/served_requests.hpp"
#include "runtime/remote/wire_codec.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"
#include "tests/refusal.hpp"
#include "tests/remote/forwarding_mesh_device.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::runtime::remote {
namespace {

using cclmesh::testing::refusal;
using ccltest::Bytes;
namespace ag = ccl::all_gather;
namespace ar = ccl::all_reduce;
namespace rs = ccl::reduce_scatter;
using namespace std::chrono_literals;

sim::device::SimMeshDeviceOptions ring_options() {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  return options;
}

// A server for `device` on 127.0.0.1, serving from its own thread until destroyed.
struct Served {
  RemoteDeviceServer server;
  std::thread thread;
  Served(MeshDevice& device, RemoteServerOptions options) : server(device, std::move(options)), thread([this] { server.serve(); }) {}
  ~Served() {
    server.stop();
    if (thread.joinable()) thread.join();
  }
};

RemoteServerOptions server_options(const sim::device::SimMeshDevice& device) {
  RemoteServerOptions o;
  o.description = "simulated " + device.topology().name();
  return o;
}

// A simulated T3K with a ring fabric, served.
struct ServedSim {
  sim::device::SimMeshDevice device{topo::load_system("t3k"), ring_options()};
  Served served{device, server_options(device)};
  std::uint16_t port() const { return served.server.port(); }
};

// What a run leaves to compare: every chip's output and the device's whole profile.
struct OpResult {
  std::map<ChipId, Bytes> outputs;
  std::vector<KernelProfile> profile;
};

std::vector<std::vector<ChipId>> groups_of(const ccl::GroupSelection& selection, const MeshDevice& device,
                                           const FabricOptions& fabric) {
  return ccl::resolve_groups(selection, device.topology(), FabricPlan(device.topology(), fabric));
}

std::vector<Bytes> write_inputs(MeshDevice& device, const std::vector<ChipId>& group, const BufferHandle& input) {
  std::vector<Bytes> inputs;
  for (ChipId chip : group) {
    inputs.push_back(ccltest::pattern(input.config.size_bytes, 100 + chip));
    device.write_buffer(chip, input, inputs.back());
  }
  return inputs;
}

Bytes read_back(MeshDevice& device, ChipId chip, const BufferHandle& buffer) {
  Bytes out(buffer.config.size_bytes);
  device.read_buffer(chip, buffer, out);
  return out;
}

ag::Params all_gather_params(MeshDevice& device, const FabricOptions& fabric,
                             const ccl::TensorSpec& input = ccltest::tile({1, 1, 64, 128})) {
  ag::Params p;
  p.input = input;
  p.dim = 3;
  p.topology = ccl::CclTopology::Ring;
  p.fabric = fabric;
  p.input_buffer = device.create_buffer(ccl::interleaved_buffer_config(p.input, BufferType::Dram));
  p.output_buffer =
      device.create_buffer(ccl::interleaved_buffer_config(ag::output_spec(p, device.topology()), BufferType::Dram));
  p.done_semaphore = device.create_global_semaphore(ag::semaphore_cores(p, device.topology()), CoreKind::Tensix, 0);
  return p;
}

// An all_gather on the ring through `device` only (MeshDevice's calls), checked against the
// host reference.
OpResult run_all_gather(MeshDevice& device, const FabricOptions& fabric) {
  const ag::Params p = all_gather_params(device, fabric);
  OpResult result;
  for (const auto& group : groups_of(p.groups, device, fabric)) {
    const Bytes expected = ccl::reference::concat(write_inputs(device, group, p.input_buffer), p.input, p.dim);
    ag::run(device, p);
    for (ChipId chip : group) {
      result.outputs[chip] = read_back(device, chip, p.output_buffer);
      EXPECT_TRUE(result.outputs[chip] == expected) << "all_gather output of chip " << chip;
    }
  }
  result.profile = device.profile();
  return result;
}

OpResult run_reduce_scatter(MeshDevice& device, const FabricOptions& fabric) {
  rs::Params p;
  p.input = ccltest::tile({1, 1, 64, 256});
  p.dim = 3;
  p.topology = ccl::CclTopology::Ring;
  p.fabric = fabric;
  p.input_buffer = device.create_buffer(ccl::interleaved_buffer_config(p.input, BufferType::Dram));
  p.output_buffer =
      device.create_buffer(ccl::interleaved_buffer_config(rs::output_spec(p, device.topology()), BufferType::Dram));
  if (rs::needs_intermediate(p, device.topology())) {
    p.intermediate_buffer = device.create_buffer(
        ccl::interleaved_buffer_config(rs::intermediate_spec(p, device.topology()), BufferType::Dram));
  }
  p.barrier_semaphore = device.create_global_semaphore(rs::semaphore_cores(p, device.topology()), CoreKind::Tensix, 0);
  OpResult result;
  const auto groups = groups_of(p.groups, device, fabric);
  EXPECT_EQ(groups.size(), 1u);
  const std::vector<Bytes> inputs = write_inputs(device, groups.front(), p.input_buffer);
  rs::run(device, p);
  const std::vector<Bytes> expected = rs::reference_outputs(p, device.topology(), inputs);
  for (std::size_t rank = 0; rank < groups.front().size(); ++rank) {
    const ChipId chip = groups.front()[rank];
    result.outputs[chip] = read_back(device, chip, p.output_buffer);
    EXPECT_TRUE(result.outputs[chip] == expected[rank]) << "reduce_scatter output of chip " << chip;
  }
  result.profile = device.profile();
  return result;
}

void expect_same_profile(const std::vector<KernelProfile>& remote, const std::vector<KernelProfile>& local) {
  ASSERT_EQ(remote.size(), local.size());
  ASSERT_FALSE(local.empty());
  for (std::size_t i = 0; i < local.size(); ++i) {
    const KernelProfile& r = remote[i];
    const KernelProfile& l = local[i];
    EXPECT_TRUE(r.chip == l.chip && r.core_kind == l.core_kind && r.core == l.core && r.kernel == l.kernel &&
                r.start_ns == l.start_ns && r.end_ns == l.end_ns && r.ready_ns == l.ready_ns)
        << "profile entry " << i << ": " << r.kernel << " chip " << r.chip << " [" << r.start_ns << ", " << r.end_ns
        << "] remotely, " << l.kernel << " chip " << l.chip << " [" << l.start_ns << ", " << l.end_ns << "] locally";
  }
}

std::string local_error_of(const std::function<void(MeshDevice&)>& body, DeviceError::Kind* kind = nullptr) {
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  try {
    body(local);
  } catch (const DeviceError& e) {
    if (kind != nullptr) *kind = e.kind();
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(RemoteMeshDevice, DescribesTheServedDevice) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  EXPECT_EQ(remote.endpoint(), "127.0.0.1:" + std::to_string(served.port()));
  EXPECT_EQ(remote.description(), "simulated t3k");
  // The topology crossed as the project's YAML and loads back equal, link rates and all.
  EXPECT_TRUE(remote.topology() == served.device.topology());
  // The hello carried the served device's fabric(), options and all.
  EXPECT_EQ(remote.fabric(), served.device.fabric());
  EXPECT_EQ(remote.fabric().mode, FabricMode::Ring);
  EXPECT_TRUE(remote.faults().empty());
  EXPECT_EQ(remote.chips(), served.device.chips());
  EXPECT_EQ(remote.worker_grid(), served.device.worker_grid());
  for (ChipId chip : served.device.chips()) {
    EXPECT_EQ(remote.active_ethernet_channels(chip), served.device.active_ethernet_channels(chip));
  }
  // A chip the topology does not have: topo::InputError, as locally, with the same message.
  try {
    remote.active_ethernet_channels(99);
    FAIL() << "chip 99 of a T3K answered";
  } catch (const topo::InputError& e) {
    EXPECT_EQ(std::string(e.what()), local_error_of([](MeshDevice& d) { d.active_ethernet_channels(99); }));
  }
}

TEST(RemoteMeshDevice, AllGatherSameBytesAndProfileAsLocal) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const OpResult over_the_wire = run_all_gather(remote, remote.fabric());
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  const OpResult here = run_all_gather(local, local.options().fabric);
  EXPECT_EQ(over_the_wire.outputs.size(), 8u);
  EXPECT_TRUE(over_the_wire.outputs == here.outputs);
  expect_same_profile(over_the_wire.profile, here.profile);
}

TEST(RemoteMeshDevice, ReduceScatterSameBytesAndProfileAsLocal) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const OpResult over_the_wire = run_reduce_scatter(remote, remote.fabric());
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  const OpResult here = run_reduce_scatter(local, local.options().fabric);
  EXPECT_EQ(over_the_wire.outputs.size(), 8u);
  EXPECT_TRUE(over_the_wire.outputs == here.outputs);
  expect_same_profile(over_the_wire.profile, here.profile);
}

// An op's entries, asked for from the profile_size() taken before it (as `run --device` reads
// them), are a local device's for the same op after the same op; a range past the end is refused
// as the local device refuses it.
TEST(RemoteMeshDevice, ProfileSinceCarriesAnOpsEntriesAsLocally) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  EXPECT_EQ(remote.profile_size(), 0u);
  run_all_gather(remote, remote.fabric());
  run_all_gather(local, local.options().fabric);
  const std::size_t begin = remote.profile_size();
  ASSERT_EQ(begin, local.profile_size());
  ASSERT_GT(begin, 0u);
  run_all_gather(remote, remote.fabric());
  run_all_gather(local, local.options().fabric);
  EXPECT_EQ(remote.profile_size(), 2 * begin);
  expect_same_profile(remote.profile_since(begin), local.profile_since(begin));
  EXPECT_TRUE(remote.profile_since(2 * begin).empty());
  const std::string refused = refusal([&] { (void)remote.profile_since(2 * begin + 1); });
  EXPECT_EQ(refused, refusal([&] { (void)local.profile_since(2 * begin + 1); }));
  EXPECT_NE(refused, "");
}

// A session's profile is its own (MeshDevice's contract for a served device): a second session on
// the same device starts at entry 0 and holds its own op's kernels alone, those of a local
// device's second op, and is refused a range in the first session's numbering. So whether the
// backend forgets a session's kernels when it ends, as `cclmesh serve` has its SimMeshDevice do
// (then the server keeps one session's at most), or keeps them all (the server counts from the
// session's start). A reset inside a session starts it at 0 again.
TEST(RemoteMeshDevice, ASessionsProfileIsItsOwn) {
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  run_all_gather(local, local.options().fabric);
  const std::size_t one_op = local.profile_size();
  run_all_gather(local, local.options().fabric);
  const std::vector<KernelProfile> second_op = local.profile_since(one_op);
  for (const bool forget : {true, false}) {
    SCOPED_TRACE(forget ? "the device forgets a session's kernels at its end" : "the device keeps every kernel");
    sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
    RemoteServerOptions options = server_options(device);
    if (forget) options.session_ended = [&device](std::uint64_t, const std::string&) { device.forget_profile(); };
    Served served(device, options);
    {
      RemoteMeshDevice first("127.0.0.1", served.server.port());
      EXPECT_EQ(run_all_gather(first, first.fabric()).profile.size(), one_op);
    }
    {
      RemoteMeshDevice second("127.0.0.1", served.server.port());
      EXPECT_EQ(second.profile_size(), 0u);
      EXPECT_EQ(refusal([&] { (void)second.profile_since(one_op); }),
                fmt::format("profile_since: entry {} is past the profile's 0 entries; expected at most profile_size() "
                            "(an index taken before a reset?)",
                            one_op));
      // The server's device holds the first session's kernels only if it did not forget them.
      EXPECT_EQ(device.profile_size(), forget ? 0u : one_op);
      expect_same_profile(run_all_gather(second, second.fabric()).profile, second_op);
      EXPECT_EQ(second.profile_size(), one_op);
      second.reset();
      EXPECT_EQ(second.profile_size(), 0u);
    }
  }
}

// A client started once the previous one has said goodbye and exited is never turned away as
// busy: the server stops turning arrivals away before it answers the goodbye, so the next one
// waits in the listen backlog while the session ends (session 41: back-to-back `run --device`
// runs sometimes printed "the server is serving another client ... waiting" first, which made
// cli_serve_test flaky on a loaded machine). A session end slowed to 300 ms (its callback)
// makes the old race certain; with busy_wait 0 a turned-away client fails its hello.
TEST(RemoteMeshDevice, TheNextClientAfterAGoodbyeIsNotTurnedAway) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  RemoteServerOptions options = server_options(device);
  options.session_ended = [](std::uint64_t, const std::string&) { std::this_thread::sleep_for(300ms); };
  Served served(device, options);
  for (int session = 0; session < 3; ++session) {
    SCOPED_TRACE(fmt::format("session {}", session));
    std::unique_ptr<RemoteMeshDevice> client;
    EXPECT_NO_THROW(client = std::make_unique<RemoteMeshDevice>("127.0.0.1", served.server.port(),
                                                               RemoteDeviceOptions{.busy_wait = 0ms}));
  }
}

// A session's profile is bounded (RemoteServerOptions::max_profile_entries, `serve
// --max-profile-entries`): past the bound the backend drops the oldest entries, so a client
// running ops for hours in one session does not make the server hold every kernel it ran
// (session 31). profile_size() still counts every entry of the session, an op's entries read
// right after it (as `cclmesh run --device` reads them) are those of a local device, and a range
// starting at a dropped entry is refused naming the option, never answered short.
TEST(RemoteMeshDevice, ASessionsProfileKeepsItsLastEntriesAndRefusesDroppedOnes) {
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  // An all_gather on fresh buffers, its profile not read (run_all_gather reads it all).
  const auto all_gather = [](MeshDevice& on, const FabricOptions& fabric) { ag::run(on, all_gather_params(on, fabric)); };
  all_gather(local, local.options().fabric);
  const std::size_t one_op = local.profile_size();
  ASSERT_GT(one_op, 1u);
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  RemoteServerOptions options = server_options(device);
  options.max_profile_entries = one_op;
  options.forget_profile_before = [&device](std::size_t entry) { device.forget_profile_before(entry); };
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  all_gather(remote, remote.fabric());
  for (std::size_t op = 2; op <= 4; ++op) {
    SCOPED_TRACE(fmt::format("op {}", op));
    const std::size_t begin = remote.profile_size();
    EXPECT_EQ(begin, (op - 1) * one_op);
    all_gather(remote, remote.fabric());
    all_gather(local, local.options().fabric);
    EXPECT_EQ(remote.profile_size(), op * one_op);
    expect_same_profile(remote.profile_since(begin), local.profile_since(begin));
    // The server's device holds the last op's entries alone, numbered as before.
    EXPECT_EQ(device.profile_size(), op * one_op);
    EXPECT_EQ(device.profile_since(begin).size(), one_op);
    EXPECT_THROW((void)device.profile_since(begin - 1), std::invalid_argument);
  }
  EXPECT_EQ(refusal([&] { (void)remote.profile_since(0); }),
            fmt::format("profile_since: entry 0 was dropped: this server keeps the last {} kernel profile entries of "
                        "a session (serve --max-profile-entries), and this session's entries 0 .. {} of {} are gone; "
                        "read an op's entries right after it finishes, or serve with a larger --max-profile-entries",
                        one_op, 3 * one_op - 1, 4 * one_op));
  EXPECT_THROW((void)remote.profile_since(3 * one_op - 1), std::invalid_argument);
  EXPECT_TRUE(remote.profile_since(4 * one_op).empty());
  // A reset starts the session's numbering, and its bound, afresh.
  remote.reset();
  EXPECT_EQ(remote.profile_size(), 0u);
  EXPECT_TRUE(remote.profile().empty());
}

// The served device's link counters cross the wire as they are: on a fresh device (the fabric's
// start-up only) and after an all_gather, those of a local device that did the same (so `run
// --device --report` colours the links as a local run does); a backend that does not measure its
// links says so (nullopt).
TEST(RemoteMeshDevice, LinkTrafficIsTheServedDevicesOrNone) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  const std::optional<std::vector<LinkTraffic>> fresh = remote.link_traffic();
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->size(), 2 * served.device.topology().links().size());  // both directions of each
  EXPECT_EQ(fresh, local.link_traffic());
  run_all_gather(remote, remote.fabric());
  const std::optional<std::vector<LinkTraffic>> after = remote.link_traffic();
  EXPECT_EQ(after, served.device.link_traffic());
  run_all_gather(local, local.options().fabric);
  EXPECT_EQ(after, local.link_traffic());
  std::uint64_t op_payload = 0;
  for (std::size_t i = 0; i < after->size(); ++i) op_payload += (*after)[i].payload_bytes - (*fresh)[i].payload_bytes;
  EXPECT_GT(op_payload, 0u);

  sim::device::PlanningMeshDevice planner(topo::load_system("n300"), FabricOptions{}, {}, sim::DataMode::Functional);
  Served unmeasured(planner, RemoteServerOptions{});
  RemoteMeshDevice no_counters("127.0.0.1", unmeasured.server.port());
  EXPECT_FALSE(no_counters.link_traffic().has_value());
}

// An all_gather whose chip 0 runs nothing: its peers wait forever for chip 0's data.
MeshWorkload all_gather_without_chip_0(MeshDevice& device, const FabricOptions& fabric) {
  const ag::Params p = all_gather_params(device, fabric);
  MeshWorkload w = ag::build(p, device.topology());
  w.programs.erase(0);
  return w;
}

TEST(RemoteMeshDevice, HangComesBackAsDeviceErrorWithTheReport) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  remote.enqueue_workload(all_gather_without_chip_0(remote, remote.fabric()));
  DeviceError::Kind local_kind = DeviceError::Kind::Fault;
  const std::string local_report = local_error_of(
      [](MeshDevice& d) {
        d.enqueue_workload(all_gather_without_chip_0(d, ring_options().fabric));
        d.finish();
      },
      &local_kind);
  ASSERT_EQ(local_kind, DeviceError::Kind::Hang);
  try {
    remote.finish();
    FAIL() << "finish() returned on a workload that cannot complete";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.kind(), DeviceError::Kind::Hang);
    EXPECT_EQ(std::string(e.what()), local_report);
  }
  // The broken device says so again, as locally.
  EXPECT_THROW(remote.finish(), DeviceError);
}

TEST(RemoteMeshDevice, PlacementAndBadInputComeBackAsTheirTypes) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  MeshWorkload too_big;
  too_big.name = "too_big";
  too_big.programs[0].circular_buffers = {{0, {{{0, 0}, {0, 0}}}, 1000, 4096}};
  const std::string local_message = local_error_of([&](MeshDevice& d) { d.enqueue_workload(too_big); });
  try {
    remote.enqueue_workload(too_big);
    FAIL() << "a CB above L1 was accepted";
  } catch (const WorkloadPlacementError& e) {
    EXPECT_EQ(std::string(e.what()), local_message);
  }
  MeshWorkload unknown;
  unknown.name = "unknown";
  KernelSpec k;
  k.kernel = "no_such_kernel";
  k.cores = {{{0, 0}, {0, 0}}};
  unknown.programs[1].kernels = {k};
  try {
    remote.enqueue_workload(unknown);
    FAIL() << "an unknown kernel was accepted";
  } catch (const WorkloadPlacementError&) {
    FAIL() << "an unknown kernel is not a placement error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), local_error_of([&](MeshDevice& d) { d.enqueue_workload(unknown); }));
  }
  // The session goes on after errors: the device is still usable.
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  Bytes too_short(100);
  EXPECT_THROW(remote.read_buffer(0, b, too_short), std::invalid_argument);
  Bytes data = ccltest::pattern(4096, 7);
  remote.write_buffer(3, b, data);
  EXPECT_TRUE(read_back(remote, 3, b) == data);
}

// A MeshDevice whose finish() takes `delay` of host time before the simulator's.
class SlowFinish final : public ForwardingMeshDevice {
 public:
  SlowFinish(MeshDevice& inner, std::chrono::milliseconds delay) : ForwardingMeshDevice(inner), delay_(delay) {}
  void finish() override {
    std::this_thread::sleep_for(delay_);
    ForwardingMeshDevice::finish();
  }

 private:
  std::chrono::milliseconds delay_;
};

// The client's timeout measures the server's silence: heartbeats keep a call longer than it
// alive, and without them the same call times out with a clear error.
TEST(RemoteMeshDevice, HeartbeatsKeepALongCallAliveAndSilenceTimesOut) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  // Margins wide enough for a loaded CI machine (or a sanitizer build): a heartbeat every 50 ms
  // against a 1.5 s timeout, in a call that lasts 3 s.
  SlowFinish slow(device, 3000ms);
  for (const auto heartbeat : {50ms, 10'000ms}) {
    RemoteServerOptions options = server_options(device);
    options.heartbeat_interval = heartbeat;
    Served served(slow, options);
    RemoteMeshDevice remote("127.0.0.1", served.server.port(), {.connect_timeout = 5s, .io_timeout = 1500ms});
    if (heartbeat == 50ms) {
      EXPECT_NO_THROW(remote.finish());
    } else {
      try {
        remote.finish();
        FAIL() << "a silent server did not time out";
      } catch (const RemoteDeviceError& e) {
        EXPECT_EQ(std::string(e.what()), "remote device 127.0.0.1:" + std::to_string(served.server.port()) +
                                             ": finish: nothing was received for 1.5 s");
      }
      // The server finishes the call for a client that left, ends that session and serves the next.
      RemoteMeshDevice next("127.0.0.1", served.server.port());
      EXPECT_EQ(next.chips().size(), 8u);
    }
  }
}

// A client that leaves during a call (killed, or timed out) is found out by the heartbeat that
// cannot reach it, and the server says so (RemoteServerOptions::call_abandoned) while the call
// runs, so that a backend can stop it: `cclmesh serve` stops its simulation, where it used to
// run the op to its end for nobody (17 s of a 256 MiB all_reduce) while the next client waited.
TEST(RemoteMeshDevice, ACallWhoseClientLeftIsReportedAbandoned) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  SlowFinish slow(device, 6000ms);
  std::atomic<bool> abandoned{false};
  RemoteServerOptions options = server_options(device);
  options.heartbeat_interval = 200ms;
  options.call_abandoned = [&abandoned] { abandoned = true; };
  Served served(slow, options);
  {
    RemoteMeshDevice remote("127.0.0.1", served.server.port(), {.connect_timeout = 5s, .io_timeout = 100ms});
    EXPECT_THROW(remote.finish(), RemoteDeviceError);
  }  // gone: its socket is closed, and the server's next heartbeats fail
  RemoteMeshDevice next("127.0.0.1", served.server.port(), {.busy_wait = 60s});  // once the call has ended
  EXPECT_TRUE(abandoned.load());
}

// A current-version hello's reply from the server at `port`, read off the wire (a session then
// ended with goodbye): what the hello carries, not what RemoteMeshDevice makes of it.
Json raw_hello_reply(std::uint16_t port) {
  boost::asio::io_context io;
  FrameConnection raw(io, connect_socket(io, "127.0.0.1", port, 5000ms));
  raw.send(to_wire(Json{{"type", "hello"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}}), {}, 5000ms);
  Json reply = from_wire(raw.receive(5000ms, 5000ms).header);
  raw.send(to_wire(Json{{"type", "goodbye"}}), {}, 5000ms);
  from_wire(raw.receive(5000ms, 5000ms).header);
  return reply;
}

// The hello says whether the device keeps bytes, so that a client of a timing-only device does
// not check what it reads back (`cclmesh run --device` against `cclmesh serve --no-data`).
TEST(RemoteMeshDevice, HelloSaysTheDataMode) {
  {
    ServedSim functional;
    RemoteMeshDevice remote("127.0.0.1", functional.port());
    EXPECT_EQ(remote.data_mode(), ServedDataMode::Functional);
  }
  sim::device::SimMeshDeviceOptions timing = ring_options();
  timing.data_mode = sim::DataMode::TimingOnly;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), timing);
  RemoteServerOptions options = server_options(device);
  options.data_mode = ServedDataMode::TimingOnly;
  Served served(device, options);
  const Json reply = raw_hello_reply(served.server.port());
  EXPECT_EQ(reply.at("type"), "ok");
  EXPECT_EQ(reply.at("data_mode"), "timing_only");
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  EXPECT_EQ(remote.data_mode(), ServedDataMode::TimingOnly);
}

// The hello says which chips the device simulates (protocol 15), so that a client's rows name
// ideal hardware as a local `run --hardware ideal`'s do (`cclmesh serve --hardware ideal`).
TEST(RemoteMeshDevice, HelloSaysTheHardware) {
  {
    ServedSim modelled;
    RemoteMeshDevice remote("127.0.0.1", modelled.port());
    EXPECT_EQ(remote.hardware(), ServedHardware::Modelled);
  }
  sim::device::SimMeshDeviceOptions ideal = ring_options();
  ideal.hardware = sim::HardwareModel::Ideal;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ideal);
  RemoteServerOptions options = server_options(device);
  options.hardware = ServedHardware::Ideal;
  Served served(device, options);
  const Json reply = raw_hello_reply(served.server.port());
  EXPECT_EQ(reply.at("type"), "ok");
  EXPECT_EQ(reply.at("hardware"), "ideal");
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  EXPECT_EQ(remote.hardware(), ServedHardware::Ideal);
}

TEST(RemoteMeshDevice, ShutdownRequestEndsServe) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  remote.shutdown_server();
  served.served.thread.join();  // serve() returned without stop()
  EXPECT_THROW(remote.chips(), RemoteDeviceError);
}

// --- reset -----------------------------------------------------------------------------------

// A T3K ring whose link between chips 0 and 2 goes down at 30 us (the device's clock): a 1 MiB
// all_gather (~55 us) hangs on it, the 16 KiB one of run_all_gather (~8 us) does not.
sim::device::SimMeshDeviceOptions ring_losing_a_link_at_30us() {
  sim::device::SimMeshDeviceOptions options = ring_options();
  options.faults.link_down.push_back({0, 2, sim::SimTime::from_us(30), "link-down:0-2@30us"});
  return options;
}

// The 1 MiB all_gather that the link going down strands: DeviceError(Hang).
void expect_the_long_all_gather_hangs(MeshDevice& device) {
  const ag::Params p = all_gather_params(device, device.fabric(), ccltest::tile({1, 1, 512, 1024}));
  try {
    ag::run(device, p);
    FAIL() << "the all_gather completed across a link that went down under it";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.kind(), DeviceError::Kind::Hang) << e.what();
  }
}

// The all_gather run_all_gather runs, on a device just built with ring_losing_a_link_at_30us().
OpResult fresh_all_gather() {
  sim::device::SimMeshDevice fresh(topo::load_system("t3k"), ring_losing_a_link_at_30us());
  return run_all_gather(fresh, fresh.fabric());
}

// A client resets the device its op hung: the session goes on, the handles of before are
// refused, and an all_gather then gives a fresh device's bytes (the host reference's) and profile.
TEST(RemoteMeshDevice, ResetRecoversADeviceAnOpHung) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_losing_a_link_at_30us());
  RemoteServerOptions options = server_options(device);
  options.device_time_ps = [&device] { return static_cast<std::uint64_t>(device.now().ps()); };
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle before = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  expect_the_long_all_gather_hangs(remote);
  EXPECT_THROW(remote.finish(), DeviceError);  // failed until reset, as locally
  remote.reset();
  EXPECT_EQ(remote.profile().size(), 0u);
  EXPECT_EQ(*remote.device_time_ps(), static_cast<std::uint64_t>(device.fabric_ready_time().ps()));
  Bytes data(4096);
  try {
    remote.read_buffer(0, before, data);
    FAIL() << "a buffer created before the reset was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "read_buffer: buffer 1 is not one this server created (or not as it was created)");
  }
  const OpResult after_reset = run_all_gather(remote, remote.fabric());
  const OpResult fresh = fresh_all_gather();
  EXPECT_EQ(after_reset.outputs.size(), 8u);
  EXPECT_TRUE(after_reset.outputs == fresh.outputs);
  expect_same_profile(after_reset.profile, fresh.profile);
}

// A session that leaves the device failed ends with the server resetting it: the next client
// gets a fresh device's all_gather. With the reset off, the next client finds it failed.
TEST(RemoteMeshDevice, ServerResetsADeviceLeftFailedBeforeTheNextClient) {
  for (const bool reset : {true, false}) {
    SCOPED_TRACE(reset ? "reset after a failed session" : "no reset");
    sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_losing_a_link_at_30us());
    RemoteServerOptions options = server_options(device);
    options.reset_after_failed_session = reset;
    std::mutex log_mutex;  // written by the serving thread
    std::vector<std::string> log;
    options.log = [&](const std::string& line) {
      const std::lock_guard lock(log_mutex);
      log.push_back(line);
    };
    Served served(device, options);
    {
      RemoteMeshDevice first("127.0.0.1", served.server.port());
      expect_the_long_all_gather_hangs(first);
    }
    RemoteMeshDevice next("127.0.0.1", served.server.port());
    if (reset) {
      const OpResult after_reset = run_all_gather(next, next.fabric());
      const OpResult fresh = fresh_all_gather();
      EXPECT_TRUE(after_reset.outputs == fresh.outputs);
      expect_same_profile(after_reset.profile, fresh.profile);
      const std::lock_guard lock(log_mutex);
      EXPECT_TRUE(std::find(log.begin(), log.end(),
                            "device reset (the device failed in that session): the next client gets it as just "
                            "opened") != log.end());
    } else {
      EXPECT_THROW(next.finish(), DeviceError);
    }
  }
}

// A client that enqueues and leaves without finish() leaves work the next client's finish() would
// run: the server resets the device, so the next client's profile is its own op's alone.
TEST(RemoteMeshDevice, ServerResetsADeviceLeftWithWorkUnfinished) {
  ServedSim served;
  {
    RemoteMeshDevice first("127.0.0.1", served.port());
    first.enqueue_workload(all_gather_without_chip_0(first, first.fabric()));  // would hang the next finish()
  }
  RemoteMeshDevice next("127.0.0.1", served.port());
  const OpResult over_the_wire = run_all_gather(next, next.fabric());
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  expect_same_profile(over_the_wire.profile, run_all_gather(local, local.options().fabric).profile);
}

// fault_effects: what the server's callback says, as it says it; nothing without one.
TEST(RemoteMeshDevice, FaultEffectsAreTheServers) {
  {
    ServedSim served;
    RemoteMeshDevice remote("127.0.0.1", served.port());
    EXPECT_TRUE(remote.fault_effects().empty());
  }
  sim::device::SimMeshDeviceOptions corrupting = ring_options();
  corrupting.faults.corrupt.push_back({0, 2, sim::SimTime::zero(), 5, "corrupt:0-2:5"});
  sim::device::SimMeshDevice device(topo::load_system("t3k"), corrupting);
  RemoteServerOptions options = server_options(device);
  options.fault_effects = [&device] { return device.fault_effects(); };
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const std::vector<std::string> waiting = remote.fault_effects();
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting, device.fault_effects());
  ag::run(remote, all_gather_params(remote, remote.fabric()));
  const std::vector<std::string> flipped = remote.fault_effects();
  EXPECT_EQ(flipped, device.fault_effects());
  EXPECT_NE(flipped, waiting);
  EXPECT_EQ(flipped.front().rfind("corrupt:0-2:5: flipped bit ", 0), 0u) << flipped.front();
}

// A client of the previous protocol version (as of 9, version 8: enqueue_workload one at a time,
// resets at the call, no device_events) is refused with both versions named.
TEST(RemoteMeshDevice, PreviousVersionClientIsRefused) {
  ServedSim served;
  boost::asio::io_context io;
  FrameConnection raw(io, connect_socket(io, "127.0.0.1", served.port(), 5000ms));
  const std::uint32_t previous = kProtocolVersion - 1;
  raw.send(to_wire(Json{{"type", "hello"}, {"protocol", kProtocolName}, {"version", previous}}), {}, 5000ms);
  const Json reply = from_wire(raw.receive(5000ms, 5000ms).header);
  EXPECT_EQ(reply.at("type"), "error");
  EXPECT_EQ(reply.at("message"), fmt::format("the client speaks cclmesh-remote-device version {}, this server "
                                             "cclmesh-remote-device version {}",
                                             previous, kProtocolVersion));
}

// Freeing through the wire: the served device frees (the next buffer gets the memory), its
// refusals come back as std::invalid_argument with its messages, the server refuses a freed
// handle itself, and an all_gather whose buffers are freed and made again gives the same bytes.
TEST(RemoteMeshDevice, FreedBuffersRoundTrip) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const BufferConfig config{BufferType::Dram, 4096, 2048};
  const BufferHandle a = remote.create_buffer(config);
  remote.write_buffer(0, a, ccltest::pattern(4096, 1));
  remote.deallocate_buffer(a);
  EXPECT_EQ(served.device.allocator().live_buffer_count(), 0u);
  Bytes data(4096);
  EXPECT_EQ(refusal([&] { remote.read_buffer(0, a, data); }),
            "read_buffer: buffer 1 was freed already (deallocate_buffer)");
  EXPECT_EQ(refusal([&] { remote.deallocate_buffer(a); }),
            "deallocate_buffer: buffer 1 was freed already (deallocate_buffer)");
  const BufferHandle b = remote.create_buffer(config);
  EXPECT_EQ(b.address, a.address);

  // The workload names its buffers on the wire: the served device holds them until finish().
  const ag::Params p = all_gather_params(remote, remote.fabric());
  for (const auto& group : groups_of(p.groups, remote, remote.fabric())) write_inputs(remote, group, p.input_buffer);
  remote.enqueue_workload(ag::build(p, remote.topology()));
  EXPECT_EQ(refusal([&] { remote.deallocate_buffer(p.output_buffer); }),
            fmt::format("deallocate_buffer: buffer {} is used by workload 'all_gather', enqueued and not finished; call "
                        "finish() first",
                        p.output_buffer.id));
  remote.finish();
  const OpResult first = run_all_gather(remote, remote.fabric());
  remote.deallocate_buffer(p.input_buffer);
  remote.deallocate_buffer(p.output_buffer);
  const OpResult again = run_all_gather(remote, remote.fabric());
  EXPECT_TRUE(again.outputs == first.outputs);
}

// A write a local device refuses (a size other than the buffer's, a buffer freed or from before a
// reset) is std::invalid_argument in the local device's words over the wire too, and the session
// goes on; for both write calls. (It ended the session: the server could not size the write.)
TEST(RemoteMeshDevice, ARefusedWriteIsInvalidArgumentAndTheSessionGoesOn) {
  ServedSim served;
  sim::device::SimMeshDevice local{topo::load_system("t3k"), ring_options()};
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const BufferConfig config{BufferType::Dram, 4096, 2048};
  const BufferHandle r = remote.create_buffer(config);
  const BufferHandle l = local.create_buffer(config);
  ASSERT_EQ(r, l);
  const Bytes longer = ccltest::pattern(4097, 1);
  const Bytes data = ccltest::pattern(4096, 2);
  for (const bool enqueued : {false, true}) {
    SCOPED_TRACE(enqueued ? "enqueue_write_buffer" : "write_buffer");
    const std::string call = enqueued ? "enqueue_write_buffer" : "write_buffer";
    const auto write = [&](MeshDevice& device, const BufferHandle& buffer, const Bytes& bytes) {
      if (enqueued) {
        device.enqueue_write_buffer(0, buffer, bytes);
        device.finish();
      } else {
        device.write_buffer(0, buffer, bytes);
      }
    };
    const std::string local_says = refusal([&] { write(local, l, longer); });
    EXPECT_EQ(local_says, call + ": 4097 B for a buffer of 4096 B");
    EXPECT_EQ(refusal([&] { write(remote, r, longer); }), local_says);
    write(remote, r, data);  // served on the same session
    EXPECT_TRUE(read_back(remote, 0, r) == data);
  }
  remote.deallocate_buffer(r);
  local.deallocate_buffer(l);
  for (const bool enqueued : {false, true}) {
    const auto write = [&](MeshDevice& device, const BufferHandle& buffer) {
      if (enqueued) return device.enqueue_write_buffer(0, buffer, data);
      device.write_buffer(0, buffer, data);
    };
    const std::string local_says = refusal([&] { write(local, l); });
    EXPECT_EQ(local_says, fmt::format("{}: buffer 1 was freed already (deallocate_buffer)",
                                      enqueued ? "enqueue_write_buffer" : "write_buffer"));
    EXPECT_EQ(refusal([&] { write(remote, r); }), local_says);
    EXPECT_EQ(remote.chips().size(), 8u);
  }
  // After a reset the handles from before name nothing (the server forgot them).
  const BufferHandle before = remote.create_buffer(config);
  remote.reset();
  EXPECT_EQ(refusal([&] { remote.write_buffer(0, before, data); }),
            fmt::format("write_buffer: buffer {} is not one this server created (or not as it was created)", before.id));
  EXPECT_EQ(refusal([&] { remote.enqueue_write_buffer(0, before, data); }),
            fmt::format("enqueue_write_buffer: buffer {} is not one this server created (or not as it was created)",
                        before.id));
  const BufferHandle after = remote.create_buffer(config);
  remote.write_buffer(0, after, data);
  EXPECT_TRUE(read_back(remote, 0, after) == data);
}

// The client refuses such a write before it sends the bytes: a write longer than the server reads
// past to refuse one (it would end the session there) is refused all the same, the session going on.
TEST(RemoteMeshDevice, TheClientRefusesAWriteBeforeSendingItsBytes) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const std::uint64_t size = kMaxRefusedWriteBytes + (16u << 20);
  const BufferHandle buffer = remote.create_buffer({BufferType::Dram, size, 2048});
  const Bytes longer(size + 1);
  EXPECT_EQ(refusal([&] { remote.write_buffer(0, buffer, longer); }),
            fmt::format("write_buffer: {} B for a buffer of {} B", size + 1, size));
  remote.deallocate_buffer(buffer);
  const Bytes whole(size);
  EXPECT_EQ(refusal([&] { remote.enqueue_write_buffer(0, buffer, whole); }),
            fmt::format("enqueue_write_buffer: buffer {} was freed already (deallocate_buffer)", buffer.id));
  EXPECT_EQ(remote.chips().size(), 8u);
}

// The client refuses only writes to buffers it knows are its own (it created them in its session):
// a buffer an earlier session created is the server's to judge, and it is written.
TEST(RemoteMeshDevice, AnEarlierSessionsBufferIsWritten) {
  ServedSim served;
  const BufferConfig config{BufferType::Dram, 4096, 2048};
  BufferHandle earlier;
  {
    RemoteMeshDevice first("127.0.0.1", served.port());
    earlier = first.create_buffer(config);
  }
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const BufferHandle own = remote.create_buffer(config);
  ASSERT_GT(own.id, earlier.id);
  const Bytes data = ccltest::pattern(4096, 3);
  remote.write_buffer(0, earlier, data);
  EXPECT_TRUE(read_back(remote, 0, earlier) == data);
}

// Freeing global semaphores through the wire (protocol 8): the served device frees (the next
// semaphore gets the word), the server refuses a freed handle itself, the workload names its
// semaphores on the wire so the device holds them until finish(), and after the device's reset
// the old handles name nothing.
TEST(RemoteMeshDevice, FreedGlobalSemaphoresRoundTrip) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const std::vector<CoreRange> channel0{CoreRange{{0, 0}, {0, 0}}};
  const GlobalSemaphore erisc = remote.create_global_semaphore(channel0, CoreKind::Ethernet, 0);
  remote.deallocate_global_semaphore(erisc);
  EXPECT_EQ(served.device.allocator().live_global_semaphore_count(), 0u);
  const std::string freed = fmt::format("global semaphore {} was freed already (deallocate_global_semaphore)", erisc.id);
  EXPECT_EQ(refusal([&] { remote.reset_global_semaphore(erisc, 1); }), "reset_global_semaphore: " + freed);
  EXPECT_EQ(refusal([&] { remote.deallocate_global_semaphore(erisc); }), "deallocate_global_semaphore: " + freed);
  EXPECT_EQ(remote.create_global_semaphore(channel0, CoreKind::Ethernet, 0).address, erisc.address);

  ag::Params p = all_gather_params(remote, remote.fabric());
  GlobalSemaphore forged = *p.done_semaphore;
  forged.address += 32;  // a client describing its semaphore elsewhere is refused by the server
  EXPECT_EQ(refusal([&] { remote.reset_global_semaphore(forged, 1); }),
            fmt::format("reset_global_semaphore: global semaphore {} is not one this server created (or not as it "
                        "was created)",
                        forged.id));
  for (const auto& group : groups_of(p.groups, remote, remote.fabric())) write_inputs(remote, group, p.input_buffer);
  remote.enqueue_workload(ag::build(p, remote.topology()));
  EXPECT_EQ(refusal([&] { remote.deallocate_global_semaphore(*p.done_semaphore); }),
            fmt::format("deallocate_global_semaphore: global semaphore {} is used by workload 'all_gather', enqueued "
                        "and not finished; call finish() first",
                        p.done_semaphore->id));
  remote.finish();
  const GlobalSemaphore done = *p.done_semaphore;
  remote.deallocate_global_semaphore(done);
  EXPECT_EQ(refusal([&] { remote.enqueue_workload(ag::build(p, remote.topology())); }),
            fmt::format("workload 'all_gather': global semaphore {} was freed already (deallocate_global_semaphore)",
                        done.id));
  // A new done semaphore takes the freed word, and the op runs right with it.
  p.done_semaphore = remote.create_global_semaphore(ag::semaphore_cores(p, remote.topology()), CoreKind::Tensix, 0);
  EXPECT_EQ(p.done_semaphore->address, done.address);
  for (const auto& group : groups_of(p.groups, remote, remote.fabric())) {
    const Bytes expected = ccl::reference::concat(write_inputs(remote, group, p.input_buffer), p.input, p.dim);
    ag::run(remote, p);
    for (ChipId chip : group) EXPECT_TRUE(read_back(remote, chip, p.output_buffer) == expected) << chip;
  }

  remote.reset();
  EXPECT_EQ(refusal([&] { remote.reset_global_semaphore(*p.done_semaphore, 0); }),
            fmt::format("reset_global_semaphore: global semaphore {} is not one this server created (or not as it "
                        "was created)",
                        p.done_semaphore->id));
  EXPECT_EQ(served.device.allocator().live_global_semaphore_count(), 0u);
}

// --- an op's workloads all or none; semaphore resets in queue order (protocol 9) ------------

// An all_reduce that every device refuses at its second workload, after placing its first: the
// composite (the all_gather of every chip's copy, then the local sum) of a 512 KiB tensor whose
// input and output are height-sharded on one worker's L1, 1 MiB of it. The gather's CBs fit
// below those buffers; the local sum's running sums (the whole tensor) do not. Its buffers and
// semaphores are `device`'s.
struct AllReduceRefusedAtItsSecondWorkload {
  ar::Params params;
  std::vector<BufferHandle> buffers;
  std::vector<GlobalSemaphore> semaphores;
};

AllReduceRefusedAtItsSecondWorkload all_reduce_refused_at_its_second_workload(MeshDevice& device) {
  ar::Params p;
  p.tensor = ccltest::tile({1, 1, 256, 1024});  // 8 x 32 tiles of 2 KiB
  p.topology = ccl::CclTopology::Ring;
  p.fabric = device.fabric();
  p.algorithm = ar::Algorithm::Composite;
  const BufferConfig on_one_worker{
      BufferType::L1, ccl::size_bytes(p.tensor), ccl::page_size_bytes(p.tensor), TensorMemoryLayout::HeightSharded,
      ShardSpec{{CoreRange{{0, 0}, {0, 0}}}, 8, 32, 32, ShardOrientation::RowMajor}};
  p.input_buffer = device.create_buffer(on_one_worker);
  p.output_buffer = device.create_buffer(on_one_worker);
  p.intermediate_buffer = device.create_buffer(
      ccl::interleaved_buffer_config(ar::intermediate_spec(p, device.topology()), BufferType::L1));
  const std::vector<CoreRange> cores = ar::semaphore_cores(p, device.topology());
  p.barrier_semaphore = device.create_global_semaphore(cores, CoreKind::Tensix, 0);
  p.done_semaphore = device.create_global_semaphore(cores, CoreKind::Tensix, 0);
  return {p, {p.input_buffer, p.output_buffer, p.intermediate_buffer}, {*p.barrier_semaphore, *p.done_semaphore}};
}

// The refusal names the local sum, and nothing of the op stays enqueued: its buffers and
// semaphores free at once (an enqueued all_gather would hold them until finish()), and the
// next finish() runs no kernel.
void expect_refused_whole(MeshDevice& device) {
  const AllReduceRefusedAtItsSecondWorkload op = all_reduce_refused_at_its_second_workload(device);
  try {
    ar::run(device, op.params);
    ADD_FAILURE() << "the all_reduce's local sum was placed";
  } catch (const WorkloadPlacementError& e) {
    EXPECT_NE(std::string(e.what()).find("workload 'all_reduce:all_reduce_local_reduce'"), std::string::npos)
        << e.what();
  }
  for (const BufferHandle& buffer : op.buffers) device.deallocate_buffer(buffer);
  for (const GlobalSemaphore& semaphore : op.semaphores) device.deallocate_global_semaphore(semaphore);
  device.finish();
  EXPECT_TRUE(device.profile().empty());
}

// MeshDevice::enqueue_workloads: on the simulated device, the planning one and a served one, the
// op above leaves nothing behind, and the next op runs as on a fresh device, kernel for kernel.
TEST(RemoteMeshDevice, AnOpRefusedAtItsSecondWorkloadEnqueuesNothing) {
  sim::device::SimMeshDevice fresh(topo::load_system("t3k"), ring_options());
  const OpResult expected = run_all_gather(fresh, fresh.fabric());

  sim::device::PlanningMeshDevice planner(topo::load_system("t3k"), ring_options().fabric, {},
                                          sim::DataMode::Functional);
  expect_refused_whole(planner);

  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  expect_refused_whole(local);
  const OpResult after_local = run_all_gather(local, local.fabric());
  EXPECT_TRUE(after_local.outputs == expected.outputs);
  expect_same_profile(after_local.profile, expected.profile);

  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  expect_refused_whole(remote);
  const OpResult after_remote = run_all_gather(remote, remote.fabric());
  EXPECT_TRUE(after_remote.outputs == expected.outputs);
  expect_same_profile(after_remote.profile, expected.profile);
}

// One interpreter kernel on chip 0's worker (0,0) running `commands`, which name `semaphore`.
MeshWorkload on_chip_0_worker(const std::string& name, const std::vector<cmd::Command>& commands,
                              const GlobalSemaphore& semaphore) {
  constexpr CoreCoord kWorker{0, 0};
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
  spec.streams = {kargs::interpreter_stream(std::nullopt, commands)};
  Program program;
  program.circular_buffers.push_back(ccl::packet_header_cb(kWorker));
  program.kernels.push_back(ccl::interpreter_kernel(kWorker, spec));
  MeshWorkload workload{name, {{0, program}}};
  workload.global_semaphores = {semaphore};
  return workload;
}

// reset_global_semaphore between two workloads enqueued without a finish() lands between them:
// the first (an op's teardown) sets the semaphore to 0, the host resets it to 1, the second
// waits for 1. A reset written at the call would land before the first ran, which would set it
// back to 0: the second would hang.
void expect_reset_lands_between(MeshDevice& device) {
  const GlobalSemaphore semaphore = device.create_global_semaphore({CoreRange{{0, 0}, {0, 0}}}, CoreKind::Tensix, 0);
  const cmd::GlobalSemaphoreAddress word{semaphore.address};
  device.enqueue_workload(on_chip_0_worker("teardown", {cmd::local_core_semaphore_set(word, 0)}, semaphore));
  device.reset_global_semaphore(semaphore, 1);
  device.enqueue_workload(on_chip_0_worker("wait_for_reset", {cmd::local_semaphore_wait(word, 1)}, semaphore));
  device.finish();  // DeviceError (a hang) when the second never sees 1
  ASSERT_EQ(device.profile().size(), 2u);
  EXPECT_EQ(device.profile()[1].kernel, device.profile()[0].kernel);
  EXPECT_LT(device.profile()[0].end_ns, device.profile()[1].start_ns);
}

TEST(RemoteMeshDevice, ASemaphoreResetBetweenTwoWorkloadsLandsBetweenThemAsLocally) {
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  expect_reset_lands_between(local);
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  expect_reset_lands_between(remote);
  expect_same_profile(remote.profile(), local.profile());
}

// --- enqueued host writes and reads (protocol 6) ------------------------------------------

// The loop a tt-metal user writes, through MeshDevice only: per iteration every chip's input
// enqueued, the all_gather (with its entry barrier, so that back to back it writes into a chip
// only once that chip started it), every chip's output read enqueued; one finish() at the end.
struct QueuedLoop {
  std::vector<std::vector<Bytes>> outputs;  // per iteration, per chip of the group
  std::vector<Bytes> expected;              // per iteration
  std::vector<KernelProfile> profile;
};

QueuedLoop run_queued_all_gather_loop(MeshDevice& device, int iterations) {
  ag::Params p = all_gather_params(device, device.fabric());
  p.barrier_semaphore = device.create_global_semaphore(ag::semaphore_cores(p, device.topology()), CoreKind::Tensix, 0);
  const std::vector<ChipId> group = groups_of(p.groups, device, device.fabric()).front();
  const MeshWorkload workload = ag::build(p, device.topology());
  QueuedLoop loop;
  loop.outputs.assign(static_cast<std::size_t>(iterations),
                      std::vector<Bytes>(group.size(), Bytes(p.output_buffer.config.size_bytes)));
  for (int i = 0; i < iterations; ++i) {
    std::vector<Bytes> inputs;
    for (ChipId chip : group) {
      inputs.push_back(ccltest::pattern(p.input_buffer.config.size_bytes, static_cast<std::uint32_t>(1000 * i + chip)));
      device.enqueue_write_buffer(chip, p.input_buffer, inputs.back());
    }
    loop.expected.push_back(ccl::reference::concat(inputs, p.input, p.dim));
    device.enqueue_workload(workload);
    for (std::size_t r = 0; r < group.size(); ++r) {
      device.enqueue_read_buffer(group[r], p.output_buffer, loop.outputs[static_cast<std::size_t>(i)][r]);
    }
  }
  device.finish();
  loop.profile = device.profile();
  return loop;
}

TEST(RemoteMeshDevice, EnqueuedWritesAndReadsLoopWithOneFinishAsLocally) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const QueuedLoop over_the_wire = run_queued_all_gather_loop(remote, 4);
  sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
  const QueuedLoop here = run_queued_all_gather_loop(local, 4);
  for (std::size_t i = 0; i < over_the_wire.outputs.size(); ++i) {
    for (std::size_t r = 0; r < over_the_wire.outputs[i].size(); ++r) {
      EXPECT_TRUE(over_the_wire.outputs[i][r] == over_the_wire.expected[i]) << "iteration " << i << " rank " << r;
    }
  }
  EXPECT_TRUE(over_the_wire.outputs == here.outputs);
  expect_same_profile(over_the_wire.profile, here.profile);
}

// A buffer a queued read names is in use until finish(), with the served device's message; a
// failed finish() writes no read's `out` (the served device delivered none); after a reset the
// next finish() carries exactly the reads enqueued since.
TEST(RemoteMeshDevice, EnqueuedReadsAfterAFailedFinishAreDropped) {
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.port());
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  const Bytes data = ccltest::pattern(4096, 3);
  remote.write_buffer(5, b, data);
  const Bytes untouched(4096, std::byte{0xAB});
  Bytes before = untouched;
  Bytes behind = untouched;
  remote.enqueue_read_buffer(5, b, before);
  EXPECT_EQ(refusal([&] { remote.deallocate_buffer(b); }),
            "deallocate_buffer: buffer 1 is used by an enqueue_read_buffer on chip 5, enqueued and not finished; call "
            "finish() first");
  remote.enqueue_workload(all_gather_without_chip_0(remote, remote.fabric()));
  remote.enqueue_read_buffer(5, b, behind);
  EXPECT_THROW(remote.finish(), DeviceError);
  EXPECT_TRUE(before == untouched);
  EXPECT_TRUE(behind == untouched);
  remote.reset();
  const BufferHandle c = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  remote.enqueue_write_buffer(2, c, data);
  Bytes back(4096);
  remote.enqueue_read_buffer(2, c, back);
  remote.finish();
  EXPECT_TRUE(back == data);
  EXPECT_TRUE(before == untouched);
}

// The server holds at most max_enqueued_host_bytes of enqueued writes and reads until a
// finish(): past it, std::invalid_argument, and a finish() makes room again.
TEST(RemoteMeshDevice, ServerBoundsTheEnqueuedBytesItHolds) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  RemoteServerOptions options = server_options(device);
  options.max_enqueued_host_bytes = 6000;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  const Bytes data = ccltest::pattern(4096, 4);
  remote.enqueue_write_buffer(1, b, data);
  Bytes back(4096);
  EXPECT_EQ(refusal([&] { remote.enqueue_read_buffer(1, b, back); }),
            "enqueue_read_buffer: 4096 B more would pass this server's limit of 6000 B of enqueued host writes and "
            "reads (4096 B held until finish()); call finish() first");
  remote.finish();
  remote.enqueue_read_buffer(1, b, back);
  remote.finish();
  EXPECT_TRUE(back == data);
}

// One write_buffer or read_buffer moves at most max_enqueued_host_bytes: the server holds its
// bytes whole, and a timing-only device's buffer may be of any size. Past it, refused as
// std::invalid_argument (the write's bytes read past), and the session goes on. Found by review
// while fuzzing the server (session 30): a 32 MiB read or write was allocated past a 16 MiB limit.
// The hello tells the client the limit, so RemoteMeshDevice refuses such a call itself
// (HostBytesLimitError, the server's words) and sends nothing; the server's own refusal of a
// client that sends it anyway is replayed by fuzz_regression_test (read-past-host-limit,
// write-past-host-limit).
TEST(RemoteMeshDevice, ServerBoundsOneHostWriteOrRead) {
  sim::device::SimMeshDeviceOptions timing = ring_options();
  timing.data_mode = sim::DataMode::TimingOnly;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), timing);
  RemoteServerOptions options = server_options(device);
  options.data_mode = ServedDataMode::TimingOnly;
  options.max_enqueued_host_bytes = 6000;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 8192, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  Bytes data(8192);
  EXPECT_EQ(refusal([&] { remote.write_buffer(1, b, data); }),
            "write_buffer: 8192 B is more than this server holds for a client's host write or read (6000 B, serve "
            "--max-enqueued-host)");
  EXPECT_EQ(refusal([&] { remote.read_buffer(1, b, data); }),
            "read_buffer: 8192 B is more than this server holds for a client's host write or read (6000 B, serve "
            "--max-enqueued-host)");
  EXPECT_EQ(remote.max_host_bytes(), std::optional<std::uint64_t>(6000));
  EXPECT_THROW(remote.read_buffer(1, b, data), HostBytesLimitError);
  const BufferHandle small = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  Bytes four(4096);
  remote.write_buffer(1, small, four);
  remote.read_buffer(1, small, four);
}

// The enqueued host writes and reads are bounded too (max_enqueued_host_bytes: one call's bytes,
// and those held until a finish()), and the client refuses them itself as it refuses a
// write_buffer or read_buffer past the bound, in the server's words, sending nothing: one enqueue
// of more than the bound (HostBytesLimitError), or one whose bytes with those its session
// enqueued since its last finish() or reset() pass it (EnqueuedHostBytesError; the server's own
// refusal comes back as std::invalid_argument). Until session 31 only the server refused them.
TEST(RemoteMeshDevice, TheClientRefusesEnqueuedHostBytesPastTheServersBound) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  RemoteServerOptions options = server_options(device);
  options.max_enqueued_host_bytes = 6000;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle big = remote.create_buffer({BufferType::Dram, 8192, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  Bytes eight(8192);
  EXPECT_THROW(remote.enqueue_write_buffer(1, big, eight), HostBytesLimitError);
  EXPECT_EQ(refusal([&] { remote.enqueue_read_buffer(1, big, eight); }),
            "enqueue_read_buffer: 8192 B is more than this server holds for a client's host write or read (6000 B, "
            "serve --max-enqueued-host)");
  const Bytes data = ccltest::pattern(4096, 4);
  Bytes back(4096);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "from the session's start" : "after a finish()");
    remote.enqueue_write_buffer(1, b, data);
    EXPECT_THROW(remote.enqueue_read_buffer(1, b, back), EnqueuedHostBytesError);
    EXPECT_EQ(refusal([&] { remote.enqueue_write_buffer(1, b, data); }),
              "enqueue_write_buffer: 4096 B more would pass this server's limit of 6000 B of enqueued host writes and "
              "reads (4096 B held until finish()); call finish() first");
    remote.finish();
    remote.enqueue_read_buffer(1, b, back);
    remote.finish();
    EXPECT_TRUE(back == data);
  }
  // A reset drops what was held, at the server and here.
  const BufferHandle after_reset = [&] {
    remote.enqueue_write_buffer(1, b, data);
    remote.reset();
    return remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  }();
  remote.enqueue_write_buffer(1, after_reset, data);
  remote.finish();
}

// A finish() that fails leaves the enqueued bytes held at the server until a reset (or a finish()
// that completes), so the client's count keeps them too: the next enqueue past the bound is
// refused here as the server would refuse it, and the reset makes room (session 31's review: the
// client's count after a failed finish() had no test).
TEST(RemoteMeshDevice, AFailedFinishLeavesTheEnqueuedBytesCountedUntilAReset) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_options());
  RemoteServerOptions options = server_options(device);
  options.max_enqueued_host_bytes = 6000;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle b = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  Bytes back(4096);
  remote.enqueue_read_buffer(5, b, back);
  remote.enqueue_workload(all_gather_without_chip_0(remote, remote.fabric()));
  EXPECT_THROW(remote.finish(), DeviceError);
  // Refused here (EnqueuedHostBytesError), not by the server (whose refusal is std::invalid_argument).
  EXPECT_THROW(remote.enqueue_read_buffer(5, b, back), EnqueuedHostBytesError);
  EXPECT_EQ(refusal([&] { remote.enqueue_read_buffer(5, b, back); }),
            "enqueue_read_buffer: 4096 B more would pass this server's limit of 6000 B of enqueued host writes and "
            "reads (4096 B held until finish()); call finish() first");
  remote.reset();
  const BufferHandle c = remote.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  const Bytes data = ccltest::pattern(4096, 7);
  remote.enqueue_write_buffer(5, c, data);  // the reset dropped the failed finish()'s 4096 B
  EXPECT_THROW(remote.enqueue_read_buffer(5, c, back), EnqueuedHostBytesError);  // the write's are held
  remote.finish();
  remote.enqueue_read_buffer(5, c, back);
  remote.finish();
  EXPECT_TRUE(back == data);
}

// The server's own refusals, for a client that does not check first (not RemoteMeshDevice),
// through its request side without a socket: one enqueue of more than the bound is refused as a
// direct write or read past it is, not with "call finish() first", which would not help; one
// that fits alone but not with those held, with the bytes held.
TEST(RemoteMeshDevice, TheServerRefusesEnqueuedHostBytesPastItsBoundInTheClientsWords) {
  sim::device::SimMeshDevice device(topo::load_system("n300"));
  RemoteServerOptions options;
  options.max_enqueued_host_bytes = 6000;
  ServedRequests requests(device, options);
  requests.session_begun();
  std::vector<std::byte> blob;
  std::vector<std::byte> reply_blob;
  const auto handle = [&](Json request) { return requests.handle(request, blob, reply_blob); };
  const auto buffer_of = [&](std::uint64_t bytes) {
    const Json reply = handle(Json{{"type", "create_buffer"},
                                   {"config", encode(BufferConfig{BufferType::Dram, bytes, 2048})}});
    return decode_buffer_handle(reply.at("buffer"), "buffer");
  };
  const BufferHandle big = buffer_of(8192);
  const BufferHandle small = buffer_of(4096);
  const auto read = [&](const BufferHandle& b) {
    return Json{{"type", "enqueue_read_buffer"}, {"chip", 1}, {"buffer", encode(b)}, {"size_bytes", b.config.size_bytes}};
  };
  const Json too_big = handle(read(big));
  EXPECT_EQ(too_big.at("type"), "error");
  EXPECT_EQ(too_big.at("message"), host_bytes_limit_refusal("enqueue_read_buffer", 8192, 6000));
  EXPECT_EQ(handle(read(small)).at("type"), "ok");
  const Json past_held = handle(read(small));
  EXPECT_EQ(past_held.at("message"), enqueued_host_bytes_refusal("enqueue_read_buffer", 4096, 6000, 4096));
}

// --- misbehaving servers -------------------------------------------------------------------

// Accepts one client on an ephemeral port and runs `script` on its socket in a thread.
class FakeServer {
 public:
  using Script = std::function<void(boost::asio::io_context&, boost::asio::ip::tcp::socket)>;
  explicit FakeServer(Script script)
      : acceptor_(io_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        thread_([this, script = std::move(script)] {
          boost::asio::ip::tcp::socket socket(io_);
          acceptor_.accept(socket);
          try {
            script(io_, std::move(socket));
          } catch (const std::exception&) {
            // The client went away first: nothing to check here.
          }
        }) {}
  ~FakeServer() { thread_.join(); }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port()); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

// Reads and drops what the client sends until it closes its end: a peer that never answers
// holds the connection open exactly as long as the client under test keeps it.
void drain_until_the_client_closes(boost::asio::ip::tcp::socket& socket) {
  char sink[64];
  boost::system::error_code error;
  while (!error) socket.read_some(boost::asio::buffer(sink), error);
}

Json receive_request(FrameConnection& c) { return from_wire(c.receive(5000ms, 5000ms).header); }
void send_reply(FrameConnection& c, Json reply) { c.send(to_wire(reply), {}, 5000ms); }

// A script speaking frames; the connection closes when it returns.
FakeServer::Script framed(std::function<void(FrameConnection&)> script) {
  return [script = std::move(script)](boost::asio::io_context& io, boost::asio::ip::tcp::socket socket) {
    FrameConnection connection(io, std::move(socket));
    script(connection);
    connection.close();
  };
}

// Answers hello (as `version`) and topology like a real server.
void greet(FrameConnection& c, std::uint32_t version = kProtocolVersion) {
  receive_request(c);
  send_reply(c, Json{{"type", "ok"}, {"protocol", kProtocolName}, {"version", version}, {"device", "fake"}, {"system", "fake"},
                     {"data_mode", "functional"}, {"hardware", "modelled"}, {"fabric", encode(FabricOptions{})},
                     {"faults", Json::array()}});
  if (version != kProtocolVersion) return;
  receive_request(c);
  send_reply(c, Json{{"type", "ok"}, {"yaml", topo::to_yaml(topo::load_system("n300"))}});
}

TEST(RemoteMeshDevice, ServerClosingMidCallIsAClearError) {
  FakeServer fake(framed([](FrameConnection& c) {
    greet(c);
    receive_request(c);  // finish: the server goes away instead of answering
  }));
  RemoteMeshDevice remote("127.0.0.1", fake.port());
  EXPECT_EQ(remote.fabric().mode, FabricMode::None);  // as the hello said
  try {
    remote.finish();
    FAIL() << "finish() returned although the server closed";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "remote device " + fake.endpoint() + ": finish: the connection was closed by the other side");
  }
  try {
    remote.chips();
    FAIL() << "a closed device answered";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                         ": finish: the connection was closed by the other side (the connection is "
                                         "closed; chips not sent)");
  }
}

TEST(RemoteMeshDevice, MalformedReplyIsAProtocolError) {
  FakeServer fake(framed([](FrameConnection& c) {
    greet(c);
    receive_request(c);
    send_reply(c, Json{{"type", "ok"}, {"chips", Json::array({0, "one"})}});
  }));
  RemoteMeshDevice remote("127.0.0.1", fake.port());
  try {
    remote.chips();
    FAIL() << "a malformed reply was accepted";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                         ": chips: protocol error: chips reply.chips[1]: expected an unsigned integer, "
                                         "got \"one\"");
  }
}

TEST(RemoteMeshDevice, SilentServerTimesOut) {
  std::atomic<bool> test_done{false};
  FakeServer fake(framed([&](FrameConnection& c) {
    greet(c);
    receive_request(c);
    while (!test_done.load()) std::this_thread::sleep_for(10ms);  // never answers
  }));
  const struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(true); }
  } release{test_done};
  RemoteMeshDevice remote("127.0.0.1", fake.port(), {.connect_timeout = 5s, .io_timeout = 300ms});
  try {
    remote.profile();
    FAIL() << "profile() returned from a silent server";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() + ": profile: nothing was received for 0.3 s");
  }
}

TEST(RemoteMeshDevice, AnotherProtocolOrVersionIsRefused) {
  {
    FakeServer http([](boost::asio::io_context&, boost::asio::ip::tcp::socket socket) {
      // What an HTTP server answers a request it does not understand.
      boost::asio::write(socket, boost::asio::buffer(std::string_view("HTTP/1.1 400 Bad Request\r\n\r\n")));
      boost::system::error_code ignored;
      socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
      drain_until_the_client_closes(socket);
    });
    try {
      RemoteMeshDevice remote("127.0.0.1", http.port());
      FAIL() << "connected to a server of another protocol";
    } catch (const RemoteDeviceError& e) {
      // Said at once, with what it sent, briefly, and that the address may be another service's.
      EXPECT_EQ(std::string(e.what()), "remote device " + http.endpoint() + ": hello: " + http.endpoint() +
                                           " does not speak the cclmesh remote device protocol: it sent \"HTTP/1.1 "
                                           "400 Bad Request\\r\\n\\r\\n\" (a cclmesh frame starts with \"CCLM\"); "
                                           "is it a cclmesh serve's address?");
    }
  }
  {
    FakeServer newer(framed([](FrameConnection& c) { greet(c, kProtocolVersion + 1); }));
    try {
      RemoteMeshDevice remote("127.0.0.1", newer.port());
      FAIL() << "connected to a server of another version";
    } catch (const RemoteDeviceError& e) {
      EXPECT_EQ(std::string(e.what()),
                "remote device " + newer.endpoint() + ": hello: the server speaks cclmesh-remote-device version " +
                    std::to_string(kProtocolVersion + 1) + ", this client cclmesh-remote-device version " +
                    std::to_string(kProtocolVersion));
    }
  }
  // The real server refuses a client of another version with one error reply saying both.
  ServedSim served;
  boost::asio::io_context io;
  FrameConnection raw(io, connect_socket(io, "127.0.0.1", served.port(), 5000ms));
  send_reply(raw, Json{{"type", "hello"}, {"protocol", kProtocolName}, {"version", 99}});
  const Json reply = receive_request(raw);
  EXPECT_EQ(reply.at("type"), "error");
  EXPECT_EQ(reply.at("kind"), "protocol");
  EXPECT_EQ(reply.at("message"), "the client speaks cclmesh-remote-device version 99, this server "
                                 "cclmesh-remote-device version " + std::to_string(kProtocolVersion));
  // ... and then takes the next client.
  raw.close();
  RemoteMeshDevice remote("127.0.0.1", served.port());
  EXPECT_EQ(remote.chips().size(), 8u);
}

TEST(RemoteMeshDevice, HelloWithAnUnknownDataModeIsRefused) {
  FakeServer fake(framed([](FrameConnection& c) {
    receive_request(c);
    send_reply(c, Json{{"type", "ok"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}, {"device", "fake"}, {"system", "fake"},
                       {"data_mode", "some"}, {"fabric", encode(FabricOptions{})}, {"faults", Json::array()}});
  }));
  try {
    RemoteMeshDevice remote("127.0.0.1", fake.port());
    FAIL() << "a hello reply with an unknown data mode was accepted";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                         ": hello: protocol error: hello reply.data_mode: expected one of functional, "
                                         "timing_only, got \"some\"");
  }
}

// Since version 15 the hello says which chips the device simulates: a hello without it (a
// version 14 server's reply under a version 15 number) or with a name this client does not know
// is refused by path, rather than read as the modelled chip and its times printed as such.
TEST(RemoteMeshDevice, HelloWithoutAKnownHardwareIsRefused) {
  const auto greeting = [](Json hardware) {
    return framed([hardware](FrameConnection& c) {
      receive_request(c);
      Json hello{{"type", "ok"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}, {"device", "fake"},
                 {"system", "fake"}, {"data_mode", "functional"}, {"fabric", encode(FabricOptions{})},
                 {"faults", Json::array()}};
      if (!hardware.is_null()) hello["hardware"] = hardware;
      send_reply(c, hello);
    });
  };
  for (const auto& [hardware, got] : std::vector<std::pair<Json, std::string>>{
           {Json("silicon"), "\"silicon\""}, {Json(1), "1"}}) {
    FakeServer fake(greeting(hardware));
    try {
      RemoteMeshDevice remote("127.0.0.1", fake.port());
      FAIL() << "a hello reply with hardware " << got << " was accepted";
    } catch (const RemoteDeviceError& e) {
      EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                           ": hello: protocol error: hello reply.hardware: expected one of modelled, "
                                           "ideal, got " + got);
    }
  }
  FakeServer fake(greeting(Json()));
  try {
    RemoteMeshDevice remote("127.0.0.1", fake.port());
    FAIL() << "a hello reply without hardware was accepted";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() + ": hello: protocol error: "
                                         "hello reply: missing field 'hardware'");
  }
}

// Since version 3 every device has a fabric() (mode none when it runs none), so a hello without
// one is a peer's bug, refused by path rather than read as "no fabric".
TEST(RemoteMeshDevice, HelloWithoutAFabricIsRefused) {
  FakeServer fake(framed([](FrameConnection& c) {
    receive_request(c);
    send_reply(c, Json{{"type", "ok"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}, {"device", "fake"}, {"system", "fake"},
                       {"data_mode", "functional"}, {"hardware", "modelled"}, {"fabric", nullptr},
                       {"faults", Json::array()}});
  }));
  try {
    RemoteMeshDevice remote("127.0.0.1", fake.port());
    FAIL() << "a hello reply with a null fabric was accepted";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                         ": hello: protocol error: hello reply.fabric: expected an object, got null");
  }
}

// The hello's idle timeout is compared with the host clock's time since the server was last heard
// from, in the clock's nanoseconds: one past what they hold (292 years) is a peer's nonsense,
// refused by path. Found by fuzz_remote_replies (session 32, `idle-timeout-past-the-clock`):
// taken as it was, INT64_MAX ms overflowed that comparison (UBSan) once the connection dropped.
TEST(RemoteMeshDevice, HelloIdleTimeoutPastTheHostClockIsRefused) {
  const std::int64_t longest =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::duration::max()).count();
  const auto greeting = [](std::int64_t idle_timeout_ms) {
    return framed([idle_timeout_ms](FrameConnection& c) {
      receive_request(c);
      send_reply(c, Json{{"type", "ok"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}, {"device", "fake"},
                         {"system", "fake"}, {"data_mode", "functional"}, {"hardware", "modelled"},
                         {"fabric", encode(FabricOptions{})}, {"faults", Json::array()},
                         {"idle_timeout_ms", idle_timeout_ms}});
      receive_request(c);
      send_reply(c, Json{{"type", "ok"}, {"yaml", topo::to_yaml(topo::load_system("n300"))}});
      receive_request(c);  // chips: the connection then drops
    });
  };
  {
    FakeServer fake(greeting(std::numeric_limits<std::int64_t>::max()));
    try {
      RemoteMeshDevice remote("127.0.0.1", fake.port());
      FAIL() << "a hello reply with an idle timeout past the host clock's range was accepted";
    } catch (const RemoteDeviceError& e) {
      EXPECT_EQ(std::string(e.what()), "remote device " + fake.endpoint() +
                                           ": hello: protocol error: hello reply.idle_timeout_ms: 9223372036854775807 "
                                           "is above the field's maximum " + std::to_string(longest));
    }
  }
  {  // The longest the clock holds is taken, and a dropped connection is still said in words.
    FakeServer fake(greeting(longest));
    RemoteMeshDevice remote("127.0.0.1", fake.port());
    EXPECT_EQ(remote.server_idle_timeout(), std::chrono::milliseconds(longest));
    EXPECT_THROW((void)remote.chips(), RemoteDeviceError);
  }
}

// A device without a persistent fabric (legacy mode) says so through fabric() (mode none), with
// the chip-level settings that ride in FabricOptions (the ERISC's L1) intact.
TEST(RemoteMeshDevice, DeviceWithoutAFabricSaysModeNone) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::None;
  options.fabric.erisc_unreserved_bytes = 106 * 1024;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);
  RemoteServerOptions with_faults = server_options(device);
  with_faults.faults = {"link-slow:0-1:0.5", "skew:1us"};  // named in the hello, whatever the device does
  Served served{device, with_faults};
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  EXPECT_EQ(remote.faults(), with_faults.faults);
  EXPECT_EQ(remote.fabric().mode, FabricMode::None);
  EXPECT_EQ(remote.fabric().erisc_unreserved_bytes, 106u * 1024);
  EXPECT_EQ(remote.fabric(), device.fabric());
}

TEST(RemoteMeshDevice, NothingListeningIsAClearError) {
  std::uint16_t port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    port = a.local_endpoint().port();
  }
  try {
    RemoteMeshDevice remote("127.0.0.1", port, {.connect_timeout = 2s, .io_timeout = 2s});
    FAIL() << "connected to a closed port";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device 127.0.0.1:" + std::to_string(port) + ": cannot connect: Connection refused");
  }
}

// A port nothing listens on (bound, then released).
std::uint16_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

// A script's `cclmesh serve ... &` then a client: the server listens only once the client has
// been refused (started from on_not_accepting, so the order is the test's, not a race's), and
// the client, still trying, gets in.
TEST(RemoteMeshDevice, ConnectWaitCoversAServerStillStarting) {
  const std::uint16_t port = free_port();
  sim::device::SimMeshDevice device(topo::load_system("n300"));
  RemoteServerOptions options = server_options(device);
  options.port = port;
  std::optional<Served> served;
  std::vector<std::string> told;
  RemoteDeviceOptions client;
  client.connect_wait = 60s;
  client.on_not_accepting = [&](const std::string& why) {
    told.push_back(why);
    served.emplace(device, options);
  };
  RemoteMeshDevice remote("127.0.0.1", port, client);
  EXPECT_EQ(remote.chips(), (std::vector<ChipId>{0, 1}));
  EXPECT_EQ(told, (std::vector<std::string>{"remote device 127.0.0.1:" + std::to_string(port) +
                                            ": cannot connect: Connection refused"}));
}

TEST(RemoteMeshDevice, ConnectWaitRunsOutNamingWhatWasTried) {
  const std::uint16_t port = free_port();
  int told = 0;
  try {
    RemoteMeshDevice remote("127.0.0.1", port, {.connect_wait = 300ms, .on_not_accepting = [&](const std::string&) { ++told; }});
    FAIL() << "connected to a closed port";
  } catch (const ServerNotAcceptingError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device 127.0.0.1:" + std::to_string(port) +
                                         ": cannot connect: Connection refused; tried for 0.3 s");
  }
  EXPECT_EQ(told, 1);  // said once, however many times it tried
}

// A host that drops the connection request silently (here: a listener whose accept queue is
// full, so the kernel drops the SYN) holds one attempt until its timeout. Under a wait an
// attempt lasts at most what is left of the wait: before session 31's cut the 600 s connect
// timeout held the first attempt until the kernel gave up (~2 min, "Connection timed out")
// and only then was the 0.3 s wait found spent.
TEST(RemoteMeshDevice, ConnectWaitBoundsEachAttemptOnAHostThatDropsTheRequest) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor full(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0),
                                      /*reuse_address=*/true);
  full.listen(0);  // room for one connection nobody accepts
  boost::asio::ip::tcp::socket filler(io);
  filler.connect(full.local_endpoint());
  const std::uint16_t port = full.local_endpoint().port();
  try {
    RemoteMeshDevice remote("127.0.0.1", port, {.connect_timeout = 600s, .connect_wait = 300ms});
    FAIL() << "connected to a full accept queue";
  } catch (const ServerNotAcceptingError& e) {
    // "within" what was left of the wait when the attempt started: 0.3 s, a millisecond less on
    // a loaded host.
    const std::regex expected("remote device 127\\.0\\.0\\.1:" + std::to_string(port) +
                              ": no connection within 0\\.(3|29[0-9]*) s; tried for 0\\.3 s");
    EXPECT_TRUE(std::regex_match(std::string(e.what()), expected)) << e.what();
  }
}

TEST(RemoteMeshDevice, WithoutAConnectWaitNothingListeningFailsAtOnce) {
  const std::uint16_t port = free_port();
  bool told = false;
  try {
    RemoteMeshDevice remote("127.0.0.1", port, {.on_not_accepting = [&](const std::string&) { told = true; }});
    FAIL() << "connected to a closed port";
  } catch (const ServerNotAcceptingError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device 127.0.0.1:" + std::to_string(port) + ": cannot connect: Connection refused");
  }
  EXPECT_FALSE(told);
}

// A port that accepts and says nothing (a service waiting for its own protocol's request): the
// hello's wait ends saying that the address may not be a cclmesh server.
TEST(RemoteMeshDevice, SilentPeerAtHelloMayNotBeACclmeshServer) {
  FakeServer silent([](boost::asio::io_context&, boost::asio::ip::tcp::socket socket) {
    drain_until_the_client_closes(socket);
  });
  try {
    RemoteMeshDevice remote("127.0.0.1", silent.port(), {.io_timeout = 300ms});
    FAIL() << "connected to a silent peer";
  } catch (const RemoteDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "remote device " + silent.endpoint() +
                                         ": hello: nothing was received for 0.3 s; a cclmesh serve answers a hello at "
                                         "once: " + silent.endpoint() + " may not be a cclmesh serve");
  }
}

// A peer of another protocol that sends fewer bytes than a frame's lead and waits (an SSH
// server's banner start): refused on its first bytes, not after the hello's minute.
TEST(RemoteMeshDevice, ShortForeignGreetingIsRefusedAtOnce) {
  FakeServer ssh([](boost::asio::io_context&, boost::asio::ip::tcp::socket socket) {
    boost::asio::write(socket, boost::asio::buffer(std::string_view("SSH-2.0\r\n")));
    drain_until_the_client_closes(socket);
  });
  try {
    RemoteMeshDevice remote("127.0.0.1", ssh.port(), {.io_timeout = 600s});
    FAIL() << "connected to a server of another protocol";
  } catch (const RemoteDeviceError& e) {
    const std::string what = e.what();
    // What arrived with the first bytes is shown as well, when it is there (it is sent at once).
    EXPECT_EQ(what.rfind("remote device " + ssh.endpoint() + ": hello: " + ssh.endpoint() +
                             " does not speak the cclmesh remote device protocol: it sent \"SSH-",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("\" (a cclmesh frame starts with \"CCLM\"); is it a cclmesh serve's address?"), std::string::npos)
        << what;
  }
}

// A client silent past the server's --idle-timeout (computing its host reference) loses its
// session; its next call says that the idle timeout most likely ended it, rather than only
// "connection closed (broken pipe)". The hello says the timeout. The session is known to be gone
// when a second client gets in (one session at a time), so no sleep decides the test.
TEST(RemoteMeshDevice, SessionEndedForIdlingSaysTheServersIdleTimeout) {
  sim::device::SimMeshDevice device(topo::load_system("n300"));
  RemoteServerOptions options = server_options(device);
  options.idle_timeout = 200ms;
  Served served{device, options};
  RemoteMeshDevice idle("127.0.0.1", served.server.port());
  EXPECT_EQ(idle.server_idle_timeout(), std::optional<std::chrono::milliseconds>(200ms));
  EXPECT_EQ(idle.chips().size(), 2u);
  {
    RemoteMeshDevice next("127.0.0.1", served.server.port(), {.busy_wait = 600s});  // in once `idle` is dropped
    EXPECT_EQ(next.chips().size(), 2u);
  }
  try {
    idle.chips();
    FAIL() << "a session dropped for idling answered";
  } catch (const RemoteDeviceError& e) {
    const std::string what = e.what();
    const std::string start = "remote device 127.0.0.1:" + std::to_string(served.server.port()) + ": chips: ";
    const std::string end = "; this client had sent nothing for longer than the server's idle timeout (0.2 s, cclmesh "
                            "serve --idle-timeout), which most likely ended the session";
    EXPECT_EQ(what.rfind(start, 0), 0u) << what;
    EXPECT_TRUE(what.size() > end.size() && what.compare(what.size() - end.size(), end.size(), end) == 0) << what;
  }
}

TEST(RemoteEndpoint, ParsesHostAndPort) {
  EXPECT_EQ(parse_endpoint("simbox:5170"), std::make_pair(std::string("simbox"), std::uint16_t{5170}));
  EXPECT_EQ(parse_endpoint("[::1]:80"), std::make_pair(std::string("::1"), std::uint16_t{80}));
  EXPECT_THROW(parse_endpoint("simbox"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("simbox:0"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("simbox:65536"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint(":5170"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("simbox:51x"), std::invalid_argument);
  EXPECT_EQ(parse_endpoint("10.0.0.7:5170"), std::make_pair(std::string("10.0.0.7"), std::uint16_t{5170}));
  EXPECT_EQ(parse_endpoint("[fe80::1]:5170"), std::make_pair(std::string("fe80::1"), std::uint16_t{5170}));
}

// One reading or none: a host with a ':' of its own must be a bracketed IPv6 address, so a
// stray ':1' is not taken as part of a host name that then does not resolve.
TEST(RemoteEndpoint, RefusesWhatHasNoOneReading) {
  const auto refusal = [](std::string_view text) {
    try {
      parse_endpoint(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal("127.0.0.1:5170:1"), "'127.0.0.1:5170:1' is not HOST:PORT or [IPv6]:PORT (more than one ':'; an "
                                         "IPv6 address goes in brackets, as [::1]:5170)");
  EXPECT_EQ(refusal("::1:5170"), "'::1:5170' is not HOST:PORT or [IPv6]:PORT (more than one ':'; an IPv6 address "
                                 "goes in brackets, as [::1]:5170)");
  EXPECT_EQ(refusal("[::1:5170"), "'[::1:5170' is not HOST:PORT or [IPv6]:PORT (an unclosed '[')");
  EXPECT_EQ(refusal("::1]:5170"), "'::1]:5170' is not HOST:PORT or [IPv6]:PORT (an unclosed '[')");
  EXPECT_EQ(refusal("[]:5170"), "'[]:5170' is not HOST:PORT or [IPv6]:PORT (no host)");
  EXPECT_EQ(refusal("[[::1]]:5170"), "'[[::1]]:5170' is not HOST:PORT or [IPv6]:PORT (brackets inside the brackets)");
}

}  // namespace
}  // namespace cclmesh::runtime::remote
