#pragma once
// Serves any MeshDevice over TCP to RemoteMeshDevice clients, one session at a time
// (docs/remote_device.md). It knows nothing of the backend behind the reference: `cclmesh
// serve` hands it a simulated mesh; a hardware host would hand it a tt-metal backend.
//
//   RemoteDeviceServer server(device, {.bind_address = "0.0.0.0", .port = 5170});
//   server.port();    // the port bound (the ephemeral one when asked for port 0)
//   server.serve();   // until stop() or a client's shutdown request
//
// Each call runs on the thread that called serve(); while one runs, the session's heartbeat
// thread sends a "working" frame every heartbeat_interval, so the client's timeout measures
// silence, not the length of a simulation.
// The backend's exceptions go back as error replies and the session goes on, as do writes the
// server refuses itself (a handle it did not give, another size: their bytes read past, up to a
// bound); a client that disconnects, stalls, idles, speaks another protocol or announces more
// bytes than its request may carry (checked before anything is allocated) ends its session only. A client connecting
// while a session runs is told at once that the server is busy.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/remote/frame_connection.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "runtime/remote/served_handles.hpp"

namespace cclmesh::runtime::remote {

// A write the server will not make (a handle it did not give or that names nothing any more, a
// size other than the buffer's) is refused as std::invalid_argument and the session goes on, as
// a local device's refusal: its bytes are read and dropped first, up to the larger of the named
// buffer's size and this. A longer one is refused unread and ends the session, so that a stray
// client cannot make the server read gigabytes. RemoteMeshDevice checks first and sends none.
inline constexpr std::uint64_t kMaxRefusedWriteBytes = std::uint64_t{64} << 20;

struct RemoteServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: an ephemeral port (port() says which)
  // Told to clients in the hello: what is served (the hello carries the device's fabric() too,
  // which their op builders must name).
  std::string description = "a cclmesh device";
  // The system as the server was asked for it (`serve --system torus:4x4`), so that a client's
  // row names it as a local run of the same --system does; empty: the topology's own name
  // (`torus:4x4/4@wh`, which the served topology carries).
  std::string system_name;
  // The faults the device was opened with (a simulator's what-ifs, as their specs were typed:
  // "link-down:0-1@20us"), so that a client's report names them as a local run's does; none for
  // hardware.
  std::vector<std::string> faults;
  // Whether the device keeps buffer bytes (a client checks what it reads back only if so).
  ServedDataMode data_mode = ServedDataMode::Functional;
  // The device's clock in ps (a simulator's simulated time), for clients that measure the gap
  // between their enqueue and a kernel's start; unset: clients are told the backend has none.
  std::function<std::uint64_t()> device_time_ps;
  // The simulator's events executed so far (a simulator's EngineStats::events_executed), for
  // clients that report an op's event count as a local run does; unset (hardware): clients are
  // told the backend has none.
  std::function<std::uint64_t()> device_events;
  // What the device's faults did so far, one line each ("corrupt:0-2:5: flipped bit 0 of byte
  // ..."), as a local run reports them; unset: none.
  std::function<std::vector<std::string>()> fault_effects;
  // A session that ends with the device failed (a call threw DeviceError: a hang, fault or
  // timeout, and no reset since) or with workloads enqueued and not finished (they would run in
  // the next client's finish) resets the device before the next client is served, so that the
  // next client gets it as just opened. Off: the next client gets the device as it was left.
  bool reset_after_failed_session = true;
  // The most bytes of enqueued host writes and reads the device and this server may hold for
  // clients until a finish() (the server keeps each read's bytes until then): an enqueue past it
  // is refused with std::invalid_argument, so that a client cannot fill the server's memory.
  std::uint64_t max_enqueued_host_bytes = std::uint64_t{1} << 30;
  std::chrono::milliseconds heartbeat_interval{2'000};
  // Called from the heartbeat's thread when a call's client cannot be reached any more (a
  // heartbeat could not be sent: it died or closed), while the call still runs: nobody will
  // read its reply, so a backend that can stop it does (`cclmesh serve`: the simulator's
  // SimMeshDeviceOptions::abandon). Unset: the call runs to its end, holding the server.
  std::function<void()> call_abandoned;
  // A client that connects and does not say hello within hello_timeout, or is silent for
  // idle_timeout between requests (zero: never), is dropped, so that it cannot hold the one
  // session against the next client; io_timeout is the longest stall inside a frame.
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds idle_timeout{300'000};
  std::chrono::milliseconds io_timeout{60'000};
  // Told when a session begins (its hello accepted, before any call of its reaches the device)
  // and when it ends, however it ends (goodbye, shutdown, a closed or stalled connection, a
  // timeout, stop()), before the device is reset for the next client; `how` says how. Sessions
  // count from 1; a connection turned away or refused at its hello is none. For what a backend
  // records per session (`cclmesh serve --trace-dir`); an exception from either is logged, and
  // serving goes on. Unset: nothing.
  std::function<void(std::uint64_t session)> session_started;
  std::function<void(std::uint64_t session, const std::string& how)> session_ended;
  // Told about sessions (connected, ended and why); unset: silent.
  std::function<void(const std::string&)> log;
};

class RemoteDeviceServer {
 public:
  // Binds and listens; throws RemoteDeviceError naming the address when it cannot.
  RemoteDeviceServer(MeshDevice& device, RemoteServerOptions options);
  ~RemoteDeviceServer();
  RemoteDeviceServer(const RemoteDeviceServer&) = delete;
  RemoteDeviceServer& operator=(const RemoteDeviceServer&) = delete;

  std::uint16_t port() const { return port_; }
  // Accepts clients one after another until stop() or a shutdown request.
  void serve();
  // Thread-safe and async-signal-safe (one atomic store); serve() returns within ~0.1 s, after
  // the call in progress, if any.
  void stop() { stop_.store(true); }

 private:
  // One client's session; returns true when it asked the server to shut down.
  bool serve_session(FrameConnection& connection);
  // Runs one request, heartbeating while it does; the reply (ok or error) and its blob.
  Json handle(const Json& request, std::vector<std::byte>& blob, std::vector<std::byte>& reply_blob);
  // Whether a request (its CBOR header) may carry `bytes` of data: only a write_buffer or
  // enqueue_write_buffer of a session (`greeted`) does, of its buffer's size per chip. Throws
  // BlobRefused for a write the server refuses but reads past (kMaxRefusedWriteBytes), else
  // FrameTooLarge.
  void check_blob(const std::vector<std::uint8_t>& header, std::uint64_t bytes, bool greeted) const;
  void log(const std::string& line) const;
  // The options' session hooks, around the part of a session that may call the device.
  void begin_session();
  void end_session(const std::string& how);
  // After a session: the device reset if that session left it failed or with work unfinished.
  void reset_if_left_unusable();
  // std::invalid_argument, starting "`call`: ", when `bytes` more enqueued host I/O would pass
  // max_enqueued_host_bytes.
  void require_room_for_enqueued(std::uint64_t bytes, std::string_view call) const;
  // After the device's reset: nothing enqueued is held any more.
  void forget_enqueued();

  MeshDevice& device_;
  RemoteServerOptions options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  // Every buffer and global semaphore created through this server since the last reset, and
  // those freed since.
  ServedHandles<BufferHandle> buffers_{"buffer", "deallocate_buffer"};
  ServedHandles<GlobalSemaphore> semaphores_{"global semaphore", "deallocate_global_semaphore"};
  // What the calls since the last reset left: a DeviceError thrown (the device failed), and
  // work (workloads, host writes and reads, semaphore resets) enqueued since the last finish
  // that completed.
  bool device_failed_ = false;
  bool work_unfinished_ = false;
  // Where the device puts each enqueued read's bytes, in enqueue order, until a finish() sends
  // them to the session that enqueued it (`session`; 0 once a failed finish() dropped it). Kept
  // until the device has no use for them: a finish that completed, or a reset.
  struct StagedRead {
    std::uint64_t session = 0;
    std::vector<std::byte> bytes;
  };
  std::deque<StagedRead> staged_reads_;  // a deque: the device holds spans of its elements
  std::uint64_t enqueued_host_bytes_ = 0;  // writes' and reads' bytes since the last finish or reset
  std::uint64_t sessions_begun_ = 0;
  bool in_session_ = false;
  std::atomic<bool> stop_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "stop() is called from signal handlers");
};

}  // namespace cclmesh::runtime::remote
