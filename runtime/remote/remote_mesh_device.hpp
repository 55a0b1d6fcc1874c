#pragma once
// A MeshDevice served by another process, possibly on another machine (`cclmesh serve`, or any
// program running a RemoteDeviceServer over its backend): every call is one request and one
// reply over TCP (docs/remote_device.md), synchronous, so the client's view of the device is
// the server's. enqueue_workload returns once the server has accepted the workload (placement
// errors come back from it, as locally); finish() returns when the server's finish() does.
//
//   RemoteMeshDevice device("simbox", 5170);
//   params.fabric = device.fabric();                  // the fabric the server's device runs
//   device.enqueue_workload(all_gather::build(params, device.topology()));
//   device.finish();                                   // DeviceError as the backend threw it
//
// Errors: DeviceError, WorkloadPlacementError and std::invalid_argument arrive as the server's
// backend threw them (type, kind, message). A connection that cannot be made, drops, stalls
// past its timeout or speaks another protocol or version is a RemoteDeviceError naming
// host:port, the call and what happened; the device is then unusable (later calls throw the
// same error). Not thread-safe: one caller at a time, as any MeshDevice.

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/remote/frame_connection.hpp"
#include "runtime/remote/host_bytes_limit.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "runtime/remote/served_handles.hpp"

namespace cclmesh::runtime::remote {

struct RemoteDeviceOptions {
  // For each attempt at the connection.
  std::chrono::milliseconds connect_timeout{10'000};
  // How long the constructor waits while the server serves another client's session (one at a
  // time): it asks again after 50 ms, then twice as long each time up to 1 s, until that session
  // ends or this has passed, and then throws ServerBusyError saying how long it waited. Zero:
  // asks once.
  std::chrono::milliseconds busy_wait{10'000};
  // Called once, with the server's busy reply (a ServerBusyError's message), when the first
  // hello is turned away and the constructor is going to wait: a client can say why it waits
  // (`run --device` prints it) and a test can tell that it did.
  std::function<void(const std::string&)> on_busy{};
  // How long the constructor tries to connect while nothing accepts at the address (refused,
  // unreachable, no answer: a server still starting), on the same backoff as busy_wait, then
  // throws ServerNotAcceptingError saying what it tried and for how long. Zero (the default):
  // tries once. A name that does not resolve is not retried. Under a wait one attempt lasts at
  // most what is left of it (a silent host does not hold it for the whole connect_timeout).
  std::chrono::milliseconds connect_wait{0};
  // Called once, with why the first attempt failed ("remote device HOST:PORT: cannot connect:
  // Connection refused"), when the constructor is going to try again: as on_busy.
  std::function<void(const std::string&)> on_not_accepting{};
  // The longest the server may stay silent: between the bytes of a transfer, or between its
  // heartbeats while a call (a long finish()) runs. Above the server's heartbeat interval.
  std::chrono::milliseconds io_timeout{60'000};
};

class RemoteMeshDevice final : public MeshDevice {
 public:
  // Connects (trying again while nothing accepts, up to options.connect_wait), says hello
  // (protocol name and version), waiting while the server is busy (up to options.busy_wait), and
  // fetches the topology; throws RemoteDeviceError when any of it fails.
  RemoteMeshDevice(std::string host, std::uint16_t port, RemoteDeviceOptions options = {});
  // Says goodbye when the session is still up (the server then takes its next client).
  ~RemoteMeshDevice() override;
  RemoteMeshDevice(const RemoteMeshDevice&) = delete;
  RemoteMeshDevice& operator=(const RemoteMeshDevice&) = delete;

  // --- MeshDevice ----------------------------------------------------------------------------
  const topo::Topology& topology() const override { return topology_; }
  std::vector<ChipId> chips() const override;
  CoreCoord worker_grid() const override;
  std::vector<std::uint32_t> active_ethernet_channels(ChipId chip) const override;
  // As the hello said (the server's device's fabric(); mode None when it runs none).
  const FabricOptions& fabric() const override { return fabric_; }
  BufferHandle create_buffer(const BufferConfig& config) override;
  void deallocate_buffer(const BufferHandle& buffer) override;
  void write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) override;
  void read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> data) override;
  // The write's bytes travel with the request (so they are copied at the call); the read's come
  // back in finish()'s reply, which puts them into `out` (none of them when finish() throws).
  // Refused here, in the server's words and sending nothing, past max_host_bytes(): one of more
  // bytes (HostBytesLimitError), or one whose bytes with those this session enqueued since its
  // last finish() or reset() would pass it (EnqueuedHostBytesError; host_bytes_limit.hpp).
  void enqueue_write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) override;
  void enqueue_read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> out) override;
  GlobalSemaphore create_global_semaphore(const std::vector<CoreRange>& cores, CoreKind kind,
                                          std::uint32_t initial_value) override;
  void reset_global_semaphore(const GlobalSemaphore& semaphore, std::uint32_t value) override;
  void deallocate_global_semaphore(const GlobalSemaphore& semaphore) override;
  // One request for them all (the server's device enqueues all or none).
  void enqueue_workloads(std::span<const MeshWorkload> workloads) override;
  using MeshDevice::enqueue_workload;
  void finish() override;
  // This session's kernels (the server keeps no earlier session's), counted from its start or
  // its last reset(); profile_since() carries only the entries asked for.
  std::size_t profile_size() const override;
  std::vector<KernelProfile> profile_since(std::size_t first_entry) const override;
  // The served device's link_traffic(); nullopt when its backend does not measure its links.
  std::optional<std::vector<LinkTraffic>> link_traffic() const override;
  // The served device reset (the server's backend's reset()); the buffers and semaphores this
  // client created are gone with it, and the reads it enqueued (their `out` untouched); the
  // connection stays.
  void reset() override;

  // --- remote extras -------------------------------------------------------------------------
  // "host:port" as given.
  const std::string& endpoint() const { return endpoint_; }
  // What the server says it serves ("simulated t3k, fabric ring ...").
  const std::string& description() const { return description_; }
  // The faults the served device runs under, as the server named them (the hello says).
  const std::vector<std::string>& faults() const { return faults_; }
  // The system as the server names it (`serve --system` as typed: "torus:4x4", "t3k", a file).
  const std::string& system_name() const { return system_name_; }
  // Whether the served device keeps buffer bytes; TimingOnly: read_buffer returns no data worth
  // checking (the hello says).
  ServedDataMode data_mode() const { return data_mode_; }
  // The chips the served device simulates: the modelled chip, or ideal hardware (the hello says).
  ServedHardware hardware() const { return hardware_; }
  // The most bytes one write_buffer or read_buffer may move, as the hello said (the server's
  // --max-enqueued-host); nullopt from a server that does not say (its refusal then comes back).
  std::optional<std::uint64_t> max_host_bytes() const { return max_host_bytes_; }
  // How long the server waits for this client's next request before ending the session
  // (`serve --idle-timeout`; zero: forever), as the hello said; nullopt from a server that does
  // not say.
  std::optional<std::chrono::milliseconds> server_idle_timeout() const { return server_idle_timeout_; }
  // HostBytesLimitError, in the server's words, when `bytes` is past max_host_bytes(): what
  // write_buffer and read_buffer check before sending anything, and what a client that will
  // read `bytes` back can check before it runs the op.
  void require_within_host_limit(std::string_view call, std::uint64_t bytes) const;
  // The device's clock now, in ps (simulated time on a simulator), when the server has one.
  std::optional<std::uint64_t> device_time_ps() const;
  // The events the served simulator executed so far (since it was opened or last reset), when the
  // server has a count (a hardware backend has none): an op's count is the difference of two
  // readings, as a local run's.
  std::optional<std::uint64_t> device_events() const;
  // What the served device's faults did so far (since it was opened or last reset), one line
  // each, as a local run reports them ("corrupt:0-2:5: flipped bit 0 of byte 3958 ..."); empty
  // when its faults did nothing visible or the server does not say.
  std::vector<std::string> fault_effects() const;
  // Asks the server to stop after this session (`cclmesh serve` then exits 0); the device is
  // closed afterwards.
  void shutdown_server();

 private:
  // Sends one request and returns its ok reply; throws the error reply's exception, or
  // RemoteDeviceError for a connection or protocol failure. `read_into`, when not empty,
  // receives the reply's bytes.
  Json call(std::string_view type, Json request, std::span<const std::byte> blob = {},
            std::span<std::byte> read_into = {}) const;
  [[noreturn]] void fail(std::string_view call, const std::string& what) const;
  // A connection lost at `call`, in words: the server's idle timeout named when this client had
  // been silent past it (the server then ends the session, and the client sees only the close).
  std::string why_connection_lost(std::string_view call, const ConnectionError& e) const;
  // Connects, trying again while nothing accepts at the address until options_.connect_wait
  // has passed since `started`.
  void connect(std::chrono::steady_clock::time_point started);
  // One connection attempt's timeout: options_.connect_timeout, cut under a connect_wait to what
  // is left of the wait since `started`.
  std::chrono::milliseconds attempt_timeout(std::chrono::steady_clock::time_point started) const;
  // A write's checks before its bytes are sent, in the server's words (a local device's for a
  // size or a freed buffer): a buffer of this client's that is freed or from before its
  // reset(), a size other than the buffer's. std::invalid_argument, the session going on.
  void require_writable(std::string_view call, const BufferHandle& buffer, std::size_t bytes) const;
  // An enqueued write's or read's check against the server's bound, one call's and the bytes held
  // until finish() (host_bytes_limit.hpp), before anything is sent.
  void require_room_for_enqueued(std::string_view call, std::uint64_t bytes) const;
  // An extra's reply of one unsigned figure under `key`, or null when the server has none.
  std::optional<std::uint64_t> optional_figure(std::string_view call_type, const char* key) const;
  // decode() of an ok reply; a reply that does not decode is a protocol failure of `call`.
  template <class Decode>
  auto decoded(std::string_view call, Decode decode) const {
    try {
      return decode();
    } catch (const ProtocolError& e) {
      if (connection_) connection_->close();
      fail(call, fmt::format("protocol error: {}", e.what()));
    }
  }

  std::string host_;
  std::uint16_t port_;
  std::string endpoint_;
  RemoteDeviceOptions options_;
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<FrameConnection> connection_;
  // Set once the connection failed: every later call throws it again.
  mutable std::optional<std::string> broken_;
  std::string description_;
  FabricOptions fabric_;
  std::vector<std::string> faults_;
  std::string system_name_;
  ServedDataMode data_mode_ = ServedDataMode::Functional;
  ServedHardware hardware_ = ServedHardware::Modelled;
  std::optional<std::uint64_t> max_host_bytes_;
  // The server's --idle-timeout, as the hello said (zero: none; nullopt: a server that does not
  // say), and when this client last heard from it: a connection lost after a silence past it
  // was most likely ended by the server for idling, which the error says.
  std::optional<std::chrono::milliseconds> server_idle_timeout_;
  mutable std::chrono::steady_clock::time_point last_heard_{};
  topo::Topology topology_;
  std::vector<std::span<std::byte>> enqueued_reads_;  // accepted since the last finish(), in order
  // The bytes of the enqueued writes and reads the server accepted from this session since its
  // last finish() that completed or reset(): what the server holds for it (EnqueuedHostBytesError).
  std::uint64_t enqueued_host_bytes_ = 0;
  // The buffers this client created since its session began (or its last reset()) and has not
  // freed. The server's ids only grow until a reset, and only this session creates while it
  // runs, so every id from the first it was given on is this client's (every id, after its
  // reset()); a lower one is another session's, which the server judges.
  ServedHandles<BufferHandle> own_buffers_{"buffer", "deallocate_buffer"};
  std::uint32_t first_own_buffer_id_ = 0;  // 0: none created yet
  bool reset_in_session_ = false;
};

// "HOST:PORT" (a name or an IPv4 address: no ':' in HOST) or "[IPv6]:PORT" → (host, port), the
// brackets dropped; std::invalid_argument naming the text, the forms and what is wrong with it
// otherwise (an unbracketed IPv6 address among them: "::1:5170" has no one reading).
std::pair<std::string, std::uint16_t> parse_endpoint(std::string_view text);

}  // namespace cclmesh::runtime::remote
