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
#include "runtime/remote/remote_server_options.hpp"
#include "runtime/remote/served_requests.hpp"

namespace cclmesh::runtime::remote {

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
  // `before_goodbye_reply` runs when the client says goodbye, before the reply that lets it exit.
  bool serve_session(FrameConnection& connection, const std::function<void()>& before_goodbye_reply);
  void log(const std::string& line) const;
  // The options' session hooks, around the part of a session that may call the device.
  void begin_session();
  void end_session(const std::string& how);
  // After a session: the device reset if that session left it failed or with work unfinished.
  void reset_if_left_unusable();
  // After a session whose client went without its goodbye: what it created and left live, freed
  // (nobody holds the handles; session 43: each killed `run --device` kept its op's buffers).
  void free_what_a_lost_session_left();

  RemoteServerOptions options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  // The requests' side of every session: the handles given, what is enqueued, the session count.
  ServedRequests requests_;
  bool in_session_ = false;
  std::atomic<bool> stop_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "stop() is called from signal handlers");
};

}  // namespace cclmesh::runtime::remote
