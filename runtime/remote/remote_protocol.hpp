#pragma once
// The remote device protocol's messages (docs/remote_device.md): one request and one reply
// per MeshDevice call, the hello that opens a session, and how a backend's exceptions cross
// the wire so that the client throws the same type with the same message.

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "runtime/remote/wire_codec.hpp"

namespace cclmesh::runtime::remote {

inline constexpr std::string_view kProtocolName = "cclmesh-remote-device";
// Raised on any change a peer of the previous version would misread; peers must match exactly.
// 2: the hello's reply says the device's data mode.
// 3: the hello's fabric is always the device's FabricOptions (mode none: no fabric), never null;
//    the hello names the device's faults.
// 4: reset (MeshDevice::reset); fault_effects (what the device's faults did, an extra).
// 5: deallocate_buffer (MeshDevice::deallocate_buffer); a workload names its buffers.
// 6: enqueue_write_buffer, enqueue_read_buffer (MeshDevice's enqueue-ordered host I/O); finish's
//    reply carries the bytes of the reads enqueued since the last finish, in enqueue order.
// 7: link_traffic (MeshDevice::link_traffic: each link direction's payload and busy time, or null).
// 8: deallocate_global_semaphore; a workload names its global semaphores.
// 9: enqueue_workloads (several workloads, all enqueued or none) replaces enqueue_workload;
//    reset_global_semaphore is enqueue-ordered; device_events (a simulator's event count, or null).
// 10: the hello names the system as it was served (`serve --system`), for clients' rows.
// 11: error kinds for std::invalid_argument's and topo::InputError's subclasses that a device
//     call can throw (buffer_config, core_map, fabric_plan, ccl_params, page_exceeds_packet,
//     ring_runs_as_line, topology_embedding), which a version 10 client would not know.
// 12: profile {first_entry} (MeshDevice::profile_since) replaces profile, and profile_size: an
//     op's kernels without the session's history; a session's profile is its own, from entry 0.
// 13: the error kind profile_entries_dropped (ProfileEntriesDroppedError: a profile range whose
//     first entries a served session's bound dropped, `serve --max-profile-entries`).
// 14: FabricOptions carries ring_flow_control (bubble | dateline, the ring's era); a version 13
//     peer would run a dateline device's fabric as bubble flow control.
// 15: the hello's reply carries hardware (modelled | ideal, `serve --hardware`); a version 14
//     client would print an ideal device's rows as the modelled chip's.
inline constexpr std::uint32_t kProtocolVersion = 15;

// Whether the served device keeps buffer bytes. A timing-only device (a simulator's what-if
// mode) moves no payload: what a client reads back is not its data, so a client must not check
// it. The hello's reply says which ("data_mode": "functional" or "timing_only").
enum class ServedDataMode { Functional, TimingOnly };
std::string_view data_mode_name(ServedDataMode mode);
ServedDataMode decode_data_mode(const Json& j, const std::string& path);

// The chips a simulated device runs: the calibrated model, or ideal hardware (chips that cost
// nothing but their links' rate and latency, REFERENCE 10), whose times are a what-if a client
// must not print as the chip's. The hello's reply says which ("hardware": "modelled" or
// "ideal"); a hardware backend would be a third value, and a version bump.
enum class ServedHardware { Modelled, Ideal };
std::string_view hardware_name(ServedHardware hardware);
ServedHardware decode_hardware(const Json& j, const std::string& path);

// Request types ("type" of a request's header).
namespace request {
inline constexpr std::string_view kHello = "hello";
inline constexpr std::string_view kTopology = "topology";
inline constexpr std::string_view kChips = "chips";
inline constexpr std::string_view kWorkerGrid = "worker_grid";
inline constexpr std::string_view kActiveEthernetChannels = "active_ethernet_channels";
inline constexpr std::string_view kCreateBuffer = "create_buffer";
inline constexpr std::string_view kDeallocateBuffer = "deallocate_buffer";
inline constexpr std::string_view kWriteBuffer = "write_buffer";
inline constexpr std::string_view kReadBuffer = "read_buffer";
inline constexpr std::string_view kEnqueueWriteBuffer = "enqueue_write_buffer";
inline constexpr std::string_view kEnqueueReadBuffer = "enqueue_read_buffer";
inline constexpr std::string_view kCreateGlobalSemaphore = "create_global_semaphore";
inline constexpr std::string_view kResetGlobalSemaphore = "reset_global_semaphore";
inline constexpr std::string_view kDeallocateGlobalSemaphore = "deallocate_global_semaphore";
inline constexpr std::string_view kEnqueueWorkloads = "enqueue_workloads";
inline constexpr std::string_view kFinish = "finish";
inline constexpr std::string_view kProfile = "profile";  // {first_entry}: MeshDevice::profile_since
inline constexpr std::string_view kProfileSize = "profile_size";
inline constexpr std::string_view kLinkTraffic = "link_traffic";
inline constexpr std::string_view kReset = "reset";
inline constexpr std::string_view kDeviceTime = "device_time";      // not a MeshDevice call: an extra
inline constexpr std::string_view kFaultEffects = "fault_effects";  // not a MeshDevice call: an extra
inline constexpr std::string_view kDeviceEvents = "device_events";  // not a MeshDevice call: an extra
inline constexpr std::string_view kGoodbye = "goodbye";    // ends the session
inline constexpr std::string_view kShutdown = "shutdown";  // ends the session and the server
}  // namespace request

// Reply types: the call's result, a failure, or "still working" (sent every heartbeat while a
// call runs, so that a client tells a long simulation from a dead server).
namespace reply {
inline constexpr std::string_view kOk = "ok";
inline constexpr std::string_view kError = "error";
inline constexpr std::string_view kWorking = "working";
}  // namespace reply

// The connection or the protocol failed (the server went away, timed out, or speaks another
// protocol or version), or the server failed in a way that is not one of MeshDevice's own
// errors. The message names the server's host:port and what happened.
class RemoteDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The server is serving another client's session (one at a time); sent as error kind "busy"
// in answer to a hello. RemoteMeshDevice asks again until its busy_wait has passed, then throws it.
class ServerBusyError : public RemoteDeviceError {
 public:
  using RemoteDeviceError::RemoteDeviceError;
};

// Nothing accepts a connection at the server's address (refused, unreachable, no answer),
// after RemoteMeshDevice's connect_wait: not started yet, or gone. Client-side only.
class ServerNotAcceptingError : public RemoteDeviceError {
 public:
  using RemoteDeviceError::RemoteDeviceError;
};

// The error reply for the exception in flight: DeviceError (kind and report); every bad-input
// type a MeshDevice call can throw, as the most derived of WorkloadPlacementError,
// BufferConfigError, CoreMapError, FabricPlanError, ccl::CclParamsError (and its
// PageExceedsPacketError, RingRunsAsLineError), ProfileEntriesDroppedError, std::invalid_argument, topo::EmbeddingError,
// topo::InputError; ServerBusyError; ProtocolError; or anything else as "other".
Json error_reply(std::exception_ptr error);

// Throws what an error reply carries as its own type: DeviceError and the bad-input types above
// with the server's message unchanged (so a caller's catch works as around a local device); a
// protocol or other failure as RemoteDeviceError("<endpoint>: <call>: <message>").
[[noreturn]] void throw_error_reply(const Json& reply, const std::string& endpoint, std::string_view call);

}  // namespace cclmesh::runtime::remote
