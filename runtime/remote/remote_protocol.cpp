#include "runtime/remote/remote_protocol.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/profile_range.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::runtime::remote {

namespace {

constexpr std::string_view kDeviceError = "device_error";
constexpr std::string_view kProtocol = "protocol";
constexpr std::string_view kBusy = "busy";
constexpr std::string_view kOther = "other";

// A bad-input type a MeshDevice call can throw, which the client throws again as itself with
// the server's message: its kind on the wire, whether an exception is one (or derives from
// it), and how to throw one.
struct BadInputKind {
  std::string_view name;
  bool (*is)(const std::exception&);
  void (*throw_it)(const std::string& message);
};

template <typename E>
bool is_a(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}

template <typename E>
[[noreturn]] void throw_as(const std::string& message) {
  throw E(message);
}

template <typename E>
constexpr BadInputKind kind_of(std::string_view name) {
  return {name, &is_a<E>, &throw_as<E>};
}

// Most derived first: an exception travels as the first entry it is one of, so a subclass must
// come before its base. workload_placement, invalid_argument and topology_input are the kinds of
// version 10 and before, under the same names.
constexpr BadInputKind kBadInputKinds[] = {
    kind_of<WorkloadPlacementError>("workload_placement"),
    kind_of<BufferConfigError>("buffer_config"),
    kind_of<CoreMapError>("core_map"),
    kind_of<FabricPlanError>("fabric_plan"),
    kind_of<ccl::PageExceedsPacketError>("page_exceeds_packet"),
    kind_of<ccl::RingRunsAsLineError>("ring_runs_as_line"),
    kind_of<ccl::CclParamsError>("ccl_params"),
    kind_of<ProfileEntriesDroppedError>("profile_entries_dropped"),
    kind_of<std::invalid_argument>("invalid_argument"),
    kind_of<topo::EmbeddingError>("topology_embedding"),
    kind_of<topo::InputError>("topology_input"),
};

std::string_view device_error_kind_name(DeviceError::Kind kind) {
  switch (kind) {
    case DeviceError::Kind::Hang: return "hang";
    case DeviceError::Kind::Fault: return "fault";
    case DeviceError::Kind::Timeout: return "timeout";
  }
  return "unknown";
}

Json error(std::string_view kind, const std::string& message) {
  return Json{{"type", reply::kError}, {"kind", kind}, {"message", message}};
}

}  // namespace

std::string_view data_mode_name(ServedDataMode mode) {
  return mode == ServedDataMode::TimingOnly ? "timing_only" : "functional";
}

ServedDataMode decode_data_mode(const Json& j, const std::string& path) {
  if (j.is_string()) {
    for (ServedDataMode mode : {ServedDataMode::Functional, ServedDataMode::TimingOnly}) {
      if (j.get<std::string>() == data_mode_name(mode)) return mode;
    }
  }
  throw ProtocolError(fmt::format("{}: expected one of functional, timing_only, got {}", path, shown(j)));
}

std::string_view hardware_name(ServedHardware hardware) {
  return hardware == ServedHardware::Ideal ? "ideal" : "modelled";
}

ServedHardware decode_hardware(const Json& j, const std::string& path) {
  if (j.is_string()) {
    for (ServedHardware hardware : {ServedHardware::Modelled, ServedHardware::Ideal}) {
      if (j.get<std::string>() == hardware_name(hardware)) return hardware;
    }
  }
  throw ProtocolError(fmt::format("{}: expected one of modelled, ideal, got {}", path, shown(j)));
}

Json error_reply(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const DeviceError& e) {
    Json j = error(kDeviceError, e.what());
    j["device_error_kind"] = device_error_kind_name(e.kind());
    return j;
  } catch (const ServerBusyError& e) {
    return error(kBusy, e.what());
  } catch (const ProtocolError& e) {
    return error(kProtocol, e.what());
  } catch (const std::exception& e) {
    for (const BadInputKind& kind : kBadInputKinds) {
      if (kind.is(e)) return error(kind.name, e.what());
    }
    return error(kOther, e.what());
  } catch (...) {
    return error(kOther, "an exception that is not a std::exception");
  }
}

void throw_error_reply(const Json& reply, const std::string& endpoint, std::string_view call) {
  const std::string path = fmt::format("{} reply", call);
  const std::string kind = string_field(reply, "kind", path);
  const std::string message = string_field(reply, "message", path);
  if (kind == kDeviceError) {
    const std::string device_kind = string_field(reply, "device_error_kind", path);
    for (DeviceError::Kind k : {DeviceError::Kind::Hang, DeviceError::Kind::Fault, DeviceError::Kind::Timeout}) {
      if (device_kind == device_error_kind_name(k)) throw DeviceError(k, message);
    }
    throw RemoteDeviceError(fmt::format("remote device {}: {}: unknown device error kind '{}': {}", endpoint, call,
                                        device_kind, message));
  }
  for (const BadInputKind& bad_input : kBadInputKinds) {
    if (kind == bad_input.name) bad_input.throw_it(message);
  }
  if (kind == kBusy) throw ServerBusyError(fmt::format("remote device {}: {}: {}", endpoint, call, message));
  if (kind == kProtocol) {
    throw RemoteDeviceError(fmt::format("remote device {}: {}: the server did not accept the request: {}", endpoint, call,
                                        message));
  }
  throw RemoteDeviceError(fmt::format("remote device {}: {}: {}", endpoint, call, message));
}

}  // namespace cclmesh::runtime::remote
