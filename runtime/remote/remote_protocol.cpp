#include "runtime/remote/remote_protocol.hpp"

#include <fmt/format.h>

#include "runtime/device/mesh_device.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::runtime::remote {

namespace {

constexpr std::string_view kDeviceError = "device_error";
constexpr std::string_view kPlacement = "workload_placement";
constexpr std::string_view kInvalidArgument = "invalid_argument";
constexpr std::string_view kTopologyInput = "topology_input";
constexpr std::string_view kProtocol = "protocol";
constexpr std::string_view kBusy = "busy";
constexpr std::string_view kOther = "other";

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
  throw ProtocolError(fmt::format("{}: expected one of functional, timing_only, got {}", path, j.dump()));
}

Json error_reply(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const DeviceError& e) {
    Json j = error(kDeviceError, e.what());
    j["device_error_kind"] = device_error_kind_name(e.kind());
    return j;
  } catch (const WorkloadPlacementError& e) {
    return error(kPlacement, e.what());
  } catch (const ServerBusyError& e) {
    return error(kBusy, e.what());
  } catch (const std::invalid_argument& e) {
    return error(kInvalidArgument, e.what());
  } catch (const topo::InputError& e) {
    return error(kTopologyInput, e.what());
  } catch (const ProtocolError& e) {
    return error(kProtocol, e.what());
  } catch (const std::exception& e) {
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
  if (kind == kPlacement) throw WorkloadPlacementError(message);
  if (kind == kInvalidArgument) throw std::invalid_argument(message);
  if (kind == kTopologyInput) throw topo::InputError(message);
  if (kind == kBusy) throw ServerBusyError(fmt::format("remote device {}: {}: {}", endpoint, call, message));
  if (kind == kProtocol) {
    throw RemoteDeviceError(fmt::format("remote device {}: {}: the server did not accept the request: {}", endpoint, call,
                                        message));
  }
  throw RemoteDeviceError(fmt::format("remote device {}: {}: {}", endpoint, call, message));
}

}  // namespace cclmesh::runtime::remote
