// A served device with data holds its clients' buffers as real bytes in the server's process, so
// the server bounds them (RemoteServerOptions::max_buffer_host_bytes, `serve --max-host-memory`,
// its host's physical memory by default): a create_buffer past the bound is refused as
// std::invalid_argument naming the bytes, those held and the bound, and the session and the
// server go on (session 41: a client could make the server allocate past its RAM, and a
// bad_alloc came back as "simulation error"). The bounds here are injected, never this
// machine's memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"
#include "tests/refusal.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::remote {
namespace {

using cclmesh::testing::refusal;

// A server for `device` on 127.0.0.1, serving from its own thread until destroyed.
struct Served {
  RemoteDeviceServer server;
  std::thread thread;
  Served(MeshDevice& device, RemoteServerOptions options)
      : server(device, std::move(options)), thread([this] { server.serve(); }) {}
  ~Served() {
    server.stop();
    if (thread.joinable()) thread.join();
  }
};

sim::device::SimMeshDeviceOptions fabric_of(FabricMode mode, sim::DataMode data_mode = sim::DataMode::Functional) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = mode;
  options.data_mode = data_mode;
  return options;
}

sim::device::SimMeshDeviceOptions ring_fabric(sim::DataMode data_mode = sim::DataMode::Functional) {
  return fabric_of(FabricMode::Ring, data_mode);
}

BufferConfig dram(std::uint64_t bytes) {
  return {BufferType::Dram, bytes, 2048, TensorMemoryLayout::Interleaved, std::nullopt};
}

// A library user's loop on a served device (session 43 bug bash): create, read before writing,
// write, read, free, again with other shapes at the same addresses, in one session and across
// sessions. A buffer where a freed one was reads zeros, never the freed one's bytes (the device
// gives the freed pages back), and what was written reads back.
TEST(ServedHostMemory, ABufferWhereAFreedOneWasReadsZerosInASessionAndTheNext) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_fabric());
  Served served(device, RemoteServerOptions{});
  const BufferConfig configs[] = {dram(96 * 2048), dram(24 * 2048), {BufferType::L1, 64 * 4096, 4096},
                                  {BufferType::L1, 130 * 1024, 1024}, dram(200 * 2048)};
  std::uint32_t seed = 1;
  for (int session = 0; session < 2; ++session) {
    RemoteMeshDevice remote("127.0.0.1", served.server.port());
    for (const BufferConfig& config : configs) {
      const BufferHandle buffer = remote.create_buffer(config);
      for (const ChipId chip : {ChipId{0}, ChipId{5}}) {
        ccltest::Bytes back(config.size_bytes, std::byte{0xee});
        remote.read_buffer(chip, buffer, back);
        EXPECT_TRUE(back == ccltest::Bytes(config.size_bytes))
            << "session " << session << ", " << config.size_bytes << " B at " << buffer.address << ", chip " << chip;
        const ccltest::Bytes data = ccltest::pattern(config.size_bytes, seed++);
        remote.write_buffer(chip, buffer, data);
        remote.read_buffer(chip, buffer, back);
        EXPECT_TRUE(back == data) << "session " << session << ", chip " << chip;
      }
      remote.deallocate_buffer(buffer);
    }
  }
}

// T3K: 8 chips, so a buffer of N B holds 8N B; the bound is two 8 KiB buffers' worth.
TEST(ServedHostMemory, CreateBufferPastTheBoundIsRefusedAndTheSessionGoesOn) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_fabric());
  RemoteServerOptions options;
  options.max_buffer_host_bytes = 2 * 8 * 8192;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferHandle first = remote.create_buffer(dram(8192));
  const BufferHandle second = remote.create_buffer(dram(8192));  // exactly the bound
  EXPECT_THROW(remote.create_buffer(dram(2048)), std::invalid_argument);
  EXPECT_EQ(refusal([&] { remote.create_buffer(dram(2048)); }),
            "create_buffer: a buffer of 2048 B on each of 8 chips with the 131072 B of buffers held would pass this "
            "server's host memory for buffers, 131072 B (serve --max-host-memory); free buffers first, or ask for "
            "fewer bytes (a device served with --no-data holds none)");
  // A size no bound holds, without overflowing the count.
  EXPECT_THROW(remote.create_buffer(dram(std::uint64_t{1} << 62)), std::invalid_argument);
  // Freed, its bytes are free again, and the session's buffers work as before.
  remote.deallocate_buffer(first);
  const BufferHandle third = remote.create_buffer(dram(8192));
  const ccltest::Bytes data = ccltest::pattern(8192, 7);
  remote.write_buffer(3, third, data);
  ccltest::Bytes back(8192);
  remote.read_buffer(3, third, back);
  EXPECT_TRUE(back == data);
  remote.deallocate_buffer(second);
  remote.deallocate_buffer(third);
}

// The next client gets the bytes the last one freed; what a session left allocated stays held.
TEST(ServedHostMemory, TheServerServesTheNextClientWithWhatIsHeld) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_fabric());
  RemoteServerOptions options;
  options.max_buffer_host_bytes = 2 * 8 * 8192;
  Served served(device, options);
  {
    RemoteMeshDevice remote("127.0.0.1", served.server.port());
    remote.create_buffer(dram(8192));  // left allocated
    EXPECT_THROW(remote.create_buffer(dram(16384)), std::invalid_argument);
  }
  RemoteMeshDevice next("127.0.0.1", served.server.port());
  EXPECT_EQ(refusal([&] { next.create_buffer(dram(16384)); }),
            "create_buffer: a buffer of 16384 B on each of 8 chips with the 65536 B of buffers held would pass this "
            "server's host memory for buffers, 131072 B (serve --max-host-memory); free buffers first, or ask for "
            "fewer bytes (a device served with --no-data holds none)");
  next.reset();  // the device's buffers all freed
  next.create_buffer(dram(16384));
}

// A device that keeps no bytes has no bound: a what-if size beyond any host's memory is its use.
TEST(ServedHostMemory, ATimingOnlyDeviceHasNoBound) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), ring_fabric(sim::DataMode::TimingOnly));
  RemoteServerOptions options;
  options.data_mode = ServedDataMode::TimingOnly;
  options.max_buffer_host_bytes = 8192;
  Served served(device, options);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  remote.create_buffer(dram(std::uint64_t{1} << 30));
}

// `run --device` whose op's buffers the server will not hold: exit 2 with the server's words,
// and the server runs the next client's smaller op.
TEST(ServedHostMemory, RunDeviceIsRefusedAsBadInputAndTheNextRunRuns) {
  sim::device::SimMeshDevice device(topo::load_system("ring:8"), fabric_of(FabricMode::Line));
  RemoteServerOptions options;
  options.max_buffer_host_bytes = 300 * 1024;
  Served served(device, options);
  const std::string address = "127.0.0.1:" + std::to_string(served.server.port());
  // 64 KiB gathered: each chip's 8 KiB input fits, its 64 KiB output (512 KiB on 8 chips) does not.
  try {
    cli::testing_util::run_cli({"run", "--device", address, "--op", "all_gather", "--size", "64KiB"});
    FAIL() << "not refused";
  } catch (const cli::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "create_buffer: a buffer of 65536 B on each of 8 chips with the 65536 B of buffers held would pass this "
              "server's host memory for buffers, 307200 B (serve --max-host-memory); free buffers first, or ask for "
              "fewer bytes (a device served with --no-data holds none)");
  }
  EXPECT_EQ(cli::testing_util::run_cli({"run", "--device", address, "--op", "all_gather", "--size", "16KiB"}), 0);
}

// `run --device` with data: the client makes the inputs and the expected outputs in its own
// process, and one past the memory it has (injected here) is refused, exit 2, before anything is
// sent: the server, bounded below the op's buffers, would otherwise refuse its create_buffer
// (session 42: a big client run could swap or be killed on the client). A 1 GiB all_gather of
// 8 chips: the client holds the 1 GiB of inputs, a group's copy of them and the 1 GiB reference
// at once (3 GiB); a send_recv the 1 GiB input, which is the reference, and one read back (2 GiB).
TEST(ServedHostMemory, RunDeviceClientPastItsOwnMemoryIsRefusedBeforeAnythingIsSent) {
  sim::device::SimMeshDevice device(topo::load_system("ring:8"), fabric_of(FabricMode::Line));
  RemoteServerOptions server_options;
  server_options.max_buffer_host_bytes = 300 * 1024;
  Served served(device, server_options);
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  cli::RunOptions options;
  options.device = "127.0.0.1:" + std::to_string(served.server.port());
  options.op = cli::CollectiveOp::AllGather;
  options.size_bytes = kGiB;
  options.host_memory_given = 3 * kGiB - 1;
  try {
    cli::run_collective(options);
    FAIL() << "not refused";
  } catch (const cli::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: 1073741824 B with data on the served device: this client would hold 3.0 GiB as real bytes "
              "(the host's inputs and expected outputs; the op's buffers are the server's), more than the 3.0 GiB of "
              "memory this machine has available; expected a smaller --size, or a device served timing-only "
              "(cclmesh serve --no-data)");
  }
  options.op = cli::CollectiveOp::SendRecv;
  options.host_memory_given = 2 * kGiB - 1;
  EXPECT_THAT(refusal<cli::UsageError>([&] { cli::run_collective(options); }),
              ::testing::StartsWith("--size: 1073741824 B with data on the served device: this client would hold 2.0 "
                                    "GiB as real bytes"));
  // With what it counts available, the client goes on, and the server refuses the buffers.
  options.host_memory_given = 2 * kGiB;
  EXPECT_THAT(refusal<cli::UsageError>([&] { cli::run_collective(options); }),
              ::testing::StartsWith("create_buffer: a buffer of "));
  options.op = cli::CollectiveOp::AllGather;
  options.host_memory_given = 3 * kGiB;
  EXPECT_THAT(refusal<cli::UsageError>([&] { cli::run_collective(options); }),
              ::testing::StartsWith("create_buffer: a buffer of "));
  // And a run the server holds runs on, checked bit for bit.
  options.size_bytes = 16 * 1024;
  EXPECT_EQ(cli::run_collective(options).wrong_elements, 0u);
}

// The client counts on a planning device of the served topology and fabric: a per-axis fabric
// (serve --fabric-scope axes) and one laid around a link down from the start are counted too.
TEST(ServedHostMemory, RunDeviceClientIsCheckedOnAPerAxisFabricAndAroundADownLink) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  const auto refused_on = [&](sim::device::SimMeshDeviceOptions device_options, std::optional<std::uint32_t> axis) {
    RemoteServerOptions server_options;
    for (const sim::device::LinkDownFault& fault : device_options.faults.link_down) {
      server_options.faults.push_back(fault.spec);  // as serve --fault tells its clients
    }
    sim::device::SimMeshDevice device(topo::load_system("t3k"), std::move(device_options));
    Served served(device, server_options);
    cli::RunOptions options;
    options.device = "127.0.0.1:" + std::to_string(served.server.port());
    options.op = cli::CollectiveOp::AllGather;
    options.cluster_axis = axis;
    options.size_bytes = kGiB;
    options.host_memory_given = kGiB;
    return refusal<cli::UsageError>([&] { cli::run_collective(options); });
  };
  sim::device::SimMeshDeviceOptions axes = ring_fabric();
  axes.fabric.scope = FabricScope::Axes;
  EXPECT_THAT(refused_on(axes, 1), ::testing::StartsWith("--size: 1073741824 B with data on the served device"));
  sim::device::SimMeshDeviceOptions down = ring_fabric();
  down.faults.link_down.push_back({0, 2, sim::SimTime::zero(), "link-down:0-2"});
  EXPECT_THAT(refused_on(down, std::nullopt),
              ::testing::StartsWith("--size: 1073741824 B with data on the served device"));
}

// The client's check is skipped where its planning device refuses the op, left to the served
// device's preparation: so the planner may refuse only what the served run refuses, in the same
// words (review42). Every op on served fabrics of each kind, legacy mode, a fabric per axis and one
// through some chips: with 1 B available the client refuses; where it does not, the run with all
// the memory it needs is refused the same way.
TEST(ServedHostMemory, RunDeviceClientCheckIsSkippedOnlyForWhatTheServedRunRefuses) {
  struct ServedKind {
    std::string name;
    sim::device::SimMeshDeviceOptions device;
    std::vector<std::optional<std::uint32_t>> axes;
  };
  std::vector<ServedKind> served_kinds;
  served_kinds.push_back({"ring", ring_fabric(), {std::nullopt, 1}});
  served_kinds.push_back({"line", fabric_of(FabricMode::Line), {std::nullopt}});
  served_kinds.push_back({"legacy", sim::device::SimMeshDeviceOptions{}, {std::nullopt, 0}});
  sim::device::SimMeshDeviceOptions axes = ring_fabric();
  axes.fabric.scope = FabricScope::Axes;
  served_kinds.push_back({"axes", axes, {0, 1}});
  sim::device::SimMeshDeviceOptions some_chips = ring_fabric();
  some_chips.fabric.chip_order = {0, 1, 3, 2};
  served_kinds.push_back({"ring through 0,1,3,2", some_chips, {std::nullopt}});
  const std::vector<cli::CollectiveOp> ops{cli::CollectiveOp::AllGather, cli::CollectiveOp::AllBroadcast,
                                           cli::CollectiveOp::ReduceScatter, cli::CollectiveOp::AllReduce,
                                           cli::CollectiveOp::Reduce,    cli::CollectiveOp::Broadcast,
                                           cli::CollectiveOp::AllToAll,  cli::CollectiveOp::SendRecv};
  std::size_t checked = 0;
  for (ServedKind& kind : served_kinds) {
    sim::device::SimMeshDevice device(topo::load_system("t3k"), kind.device);
    Served served(device, RemoteServerOptions{});
    for (const std::optional<std::uint32_t> axis : kind.axes) {
      for (const cli::CollectiveOp op : ops) {
        SCOPED_TRACE(kind.name + " " + cli::to_string(op) + (axis ? " along " + std::to_string(*axis) : ""));
        cli::RunOptions options;
        options.device = "127.0.0.1:" + std::to_string(served.server.port());
        options.op = op;
        if (axis) options.cluster_axis = static_cast<int>(*axis);
        options.size_bytes = 64 * 1024;
        options.host_memory_given = 1;
        const std::string short_of_memory = refusal<cli::UsageError>([&] { cli::run_collective(options); });
        if (short_of_memory.rfind("--size: 65536 B with data on the served device", 0) == 0) {
          ++checked;
          continue;
        }
        EXPECT_FALSE(short_of_memory.empty()) << "ran with 1 B: the check was skipped and the served run ran";
        options.host_memory_given = std::uint64_t{1} << 50;
        EXPECT_EQ(refusal<cli::UsageError>([&] { cli::run_collective(options); }), short_of_memory);
      }
    }
  }
  EXPECT_GE(checked, 30u);  // most combinations are checked, not refused
}

}  // namespace
}  // namespace cclmesh::runtime::remote
