// Errors across the wire (docs/remote_device.md, "Errors across the wire"): every exception type
// a MeshDevice call can throw locally comes back from a served device as that very type, with
// the local message, so that a library user's catch around a call works the same on both
// backends. Two ways: a served device whose create_buffer throws each type (every kind of the
// protocol's table, subclasses included), and a served SimMeshDevice refusing a buffer it has no
// room for, a buffer config it cannot lay out and a semaphore on a core it does not have, each
// compared with a local SimMeshDevice's refusal.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/profile_range.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/remote/forwarding_mesh_device.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::remote {
namespace {

// The simulated device, except that create_buffer throws what `refusal_` throws while it is set:
// a backend refusing with a type the simulator never throws from that call.
class RefusingCreateBuffer final : public ForwardingMeshDevice {
 public:
  using ForwardingMeshDevice::ForwardingMeshDevice;
  void refuse_with(std::function<void()> refusal) { refusal_ = std::move(refusal); }
  BufferHandle create_buffer(const BufferConfig& c) override {
    if (refusal_) refusal_();
    return ForwardingMeshDevice::create_buffer(c);
  }

 private:
  std::function<void()> refusal_;
};

// A server for `device` on 127.0.0.1, serving from its own thread until destroyed.
struct Served {
  RemoteDeviceServer server;
  std::thread thread;
  explicit Served(MeshDevice& device) : server(device, RemoteServerOptions{}), thread([this] { server.serve(); }) {}
  ~Served() {
    server.stop();
    if (thread.joinable()) thread.join();
  }
};

// One exception type: how to throw it, and how to tell it from every other type.
struct ErrorType {
  std::string name;
  std::function<void(const std::string&)> raise;
};

template <typename E>
ErrorType error_type(std::string name) {
  return {std::move(name), [](const std::string& message) { throw E(message); }};
}

// What `call` throws: its dynamic type and message ("" and void when it throws nothing).
struct Thrown {
  const std::type_info* type = &typeid(void);
  std::string message;
};

Thrown thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return {&typeid(e), e.what()};
  }
  return {};
}

std::string type_name(const std::type_info& type) { return type == typeid(void) ? "nothing" : type.name(); }

// Every type that MeshDevice's contract names or that a call of a backend in this project can
// throw: its own refusals and the bad-input types of the runtime and topology layers it uses.
std::vector<ErrorType> device_error_types() {
  return {
      error_type<std::invalid_argument>("std::invalid_argument"),
      error_type<WorkloadPlacementError>("WorkloadPlacementError"),
      error_type<BufferConfigError>("BufferConfigError"),
      error_type<CoreMapError>("CoreMapError"),
      error_type<FabricPlanError>("FabricPlanError"),
      error_type<ccl::CclParamsError>("CclParamsError"),
      error_type<ccl::PageExceedsPacketError>("PageExceedsPacketError"),
      error_type<ccl::RingRunsAsLineError>("RingRunsAsLineError"),
      error_type<ProfileEntriesDroppedError>("ProfileEntriesDroppedError"),
      error_type<topo::InputError>("topo::InputError"),
      error_type<topo::EmbeddingError>("topo::EmbeddingError"),
  };
}

TEST(RemoteErrorTypes, EveryDeviceErrorTypeComesBackAsItself) {
  sim::device::SimMeshDevice sim(topo::load_system("n300"));
  RefusingCreateBuffer device(sim);
  Served served(device);
  RemoteMeshDevice remote("127.0.0.1", served.server.port());
  const BufferConfig config{BufferType::Dram, 4096, 2048};
  for (const ErrorType& type : device_error_types()) {
    const std::string message = "create_buffer refused as " + type.name + " (field x: 7; expected 1..3)";
    device.refuse_with([&] { type.raise(message); });
    const Thrown local = thrown_by([&] { device.create_buffer(config); });
    const Thrown over_the_wire = thrown_by([&] { remote.create_buffer(config); });
    EXPECT_EQ(type_name(*over_the_wire.type), type_name(*local.type)) << type.name;
    EXPECT_EQ(over_the_wire.message, local.message) << type.name;
  }
  // The session went on through every refusal.
  device.refuse_with(nullptr);
  EXPECT_EQ(remote.create_buffer(config).config, config);
}

TEST(RemoteErrorTypes, DeviceErrorKeepsItsKind) {
  for (const DeviceError::Kind kind : {DeviceError::Kind::Hang, DeviceError::Kind::Fault, DeviceError::Kind::Timeout}) {
    sim::device::SimMeshDevice sim(topo::load_system("n300"));
    RefusingCreateBuffer device(sim);
    Served served(device);
    RemoteMeshDevice remote("127.0.0.1", served.server.port());
    device.refuse_with([kind] { throw DeviceError(kind, "the report"); });
    try {
      remote.create_buffer({BufferType::Dram, 4096, 2048});
      FAIL() << "no DeviceError";
    } catch (const DeviceError& e) {
      EXPECT_EQ(e.kind(), kind);
      EXPECT_EQ(std::string(e.what()), "the report");
    }
  }
}

// The simulated device's own refusals of the types its calls throw, served and local alike.
struct ServedSim {
  sim::device::SimMeshDevice device{topo::load_system("n300")};
  Served served{device};
};

void expect_same_refusal(const std::function<void(MeshDevice&)>& call, const std::type_info& expected_type) {
  sim::device::SimMeshDevice local(topo::load_system("n300"));
  const Thrown here = thrown_by([&] { call(local); });
  ASSERT_EQ(type_name(*here.type), type_name(expected_type)) << here.message;
  ServedSim served;
  RemoteMeshDevice remote("127.0.0.1", served.served.server.port());
  const Thrown there = thrown_by([&] { call(remote); });
  EXPECT_EQ(type_name(*there.type), type_name(*here.type)) << there.message;
  EXPECT_EQ(there.message, here.message);
}

TEST(RemoteErrorTypes, ABufferThatDoesNotFitIsBufferConfigError) {
  expect_same_refusal([](MeshDevice& d) { d.create_buffer({BufferType::L1, std::uint64_t{1} << 36, 2048}); },
                      typeid(BufferConfigError));
}

TEST(RemoteErrorTypes, ABufferConfigWithoutWholePagesIsBufferConfigError) {
  expect_same_refusal([](MeshDevice& d) { d.create_buffer({BufferType::Dram, 4097, 2048}); }, typeid(BufferConfigError));
}

TEST(RemoteErrorTypes, ASemaphoreOffTheWorkerGridIsCoreMapError) {
  expect_same_refusal(
      [](MeshDevice& d) {
        const CoreCoord grid = d.worker_grid();
        d.create_global_semaphore({{{grid.x, 0}, {grid.x, 0}}}, CoreKind::Tensix, 0);
      },
      typeid(CoreMapError));
}

TEST(RemoteErrorTypes, AChipTheSystemDoesNotHaveIsTopologyInputError) {
  expect_same_refusal([](MeshDevice& d) { d.active_ethernet_channels(99); }, typeid(topo::InputError));
}

// The reply of each kind decodes as its type without a server: error_reply then
// throw_error_reply, the pair every served call goes through.
TEST(RemoteErrorTypes, ErrorReplyRoundTripsEveryType) {
  for (const ErrorType& type : device_error_types()) {
    const Thrown original = thrown_by([&] { type.raise("why"); });
    std::exception_ptr failure;
    try {
      type.raise("why");
    } catch (...) {
      failure = std::current_exception();
    }
    const Json reply = error_reply(failure);
    const Thrown decoded = thrown_by([&] { throw_error_reply(reply, "127.0.0.1:1", "create_buffer"); });
    EXPECT_EQ(type_name(*decoded.type), type_name(*original.type)) << reply.dump();
    EXPECT_EQ(decoded.message, "why");
  }
}

// The kinds of earlier versions decode as before: a reply naming only the base type still
// throws it.
TEST(RemoteErrorTypes, EarlierKindsStillDecode) {
  const auto decoded = [](const char* kind) {
    return thrown_by([&] {
      throw_error_reply(Json{{"type", "error"}, {"kind", kind}, {"message", "m"}}, "127.0.0.1:1", "call");
    });
  };
  EXPECT_EQ(type_name(*decoded("invalid_argument").type), type_name(typeid(std::invalid_argument)));
  EXPECT_EQ(type_name(*decoded("workload_placement").type), type_name(typeid(WorkloadPlacementError)));
  EXPECT_EQ(type_name(*decoded("topology_input").type), type_name(typeid(topo::InputError)));
  EXPECT_EQ(decoded("invalid_argument").message, "m");
}

}  // namespace
}  // namespace cclmesh::runtime::remote
