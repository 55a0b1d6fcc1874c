#include "runtime/remote/remote_device_server.hpp"

#include <fmt/format.h>

#include <boost/asio/ip/address.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "topologies/topology_yaml.hpp"

namespace cclmesh::runtime::remote {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

constexpr std::chrono::milliseconds kAcceptPollInterval{100};

Json ok(Json fields = Json::object()) {
  fields["type"] = reply::kOk;
  return fields;
}

// Sends a "working" frame every `interval` while a call runs (between begin_call and end_call),
// from one thread for the whole session, so that a call costs no thread start and no wake-up.
// It sends holding its mutex, which end_call takes: once end_call returns, the caller has the
// connection to itself again.
class Heartbeat {
 public:
  Heartbeat(FrameConnection& connection, std::chrono::milliseconds interval, std::chrono::milliseconds io_timeout)
      : thread_([this, &connection, interval, io_timeout] {
          const std::vector<std::uint8_t> working = to_wire(Json{{"type", reply::kWorking}});
          std::unique_lock lock(mutex_);
          while (!cv_.wait_for(lock, interval, [this] { return done_; })) {
            if (!in_call_ || failure_) continue;
            try {
              connection.send(working, {}, io_timeout);
            } catch (const ConnectionError& e) {
              failure_ = e.what();
            }
          }
        }) {}
  void begin_call() {
    std::lock_guard lock(mutex_);
    in_call_ = true;
  }
  // The connection's failure while heartbeating during the call, if any.
  std::optional<std::string> end_call() {
    std::lock_guard lock(mutex_);
    in_call_ = false;
    return failure_;
  }
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  bool in_call_ = false;
  std::optional<std::string> failure_;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace

RemoteDeviceServer::RemoteDeviceServer(MeshDevice& device, RemoteServerOptions options)
    : device_(device), options_(std::move(options)), acceptor_(io_) {
  const std::string where = fmt::format("{}:{}", options_.bind_address, options_.port);
  error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.bind_address, ec);
  if (ec) throw RemoteDeviceError(fmt::format("cannot listen on {}: '{}' is not an IP address", where, options_.bind_address));
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw RemoteDeviceError(fmt::format("cannot listen on {}: {}", where, ec.message()));
  port_ = acceptor_.local_endpoint().port();
}

RemoteDeviceServer::~RemoteDeviceServer() = default;

void RemoteDeviceServer::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void RemoteDeviceServer::serve() {
  while (!stop_.load()) {
    tcp::socket socket(io_);
    std::optional<error_code> accepted;
    acceptor_.async_accept(socket, [&](const error_code& ec) { accepted = ec; });
    io_.restart();
    while (!accepted && !stop_.load()) {
      io_.run_for(kAcceptPollInterval);
      if (io_.stopped()) io_.restart();
    }
    if (!accepted) {
      error_code ignored;
      acceptor_.cancel(ignored);
      io_.restart();
      while (!accepted) io_.run_one();
      break;
    }
    if (*accepted) {
      log(fmt::format("accept failed: {}", accepted->message()));
      continue;
    }
    FrameConnection connection(io_, std::move(socket));
    const std::string peer = connection.peer();
    log(fmt::format("session with {} started", peer));
    bool shutdown = false;
    try {
      shutdown = serve_session(connection);
      log(fmt::format("session with {} ended{}", peer, shutdown ? ": the client asked the server to shut down" : ""));
    } catch (const ConnectionError& e) {
      log(fmt::format("session with {} ended: {}", peer, e.what()));
    } catch (const ProtocolError& e) {
      log(fmt::format("session with {} ended: {}", peer, e.what()));
    } catch (const std::exception& e) {
      // e.g. a frame too large to hold: that client's session ends, the server goes on.
      log(fmt::format("session with {} ended: {}", peer, e.what()));
    }
    connection.close();
    if (shutdown) break;
  }
  log("server stopped");
}

bool RemoteDeviceServer::serve_session(FrameConnection& connection) {
  const auto send = [&](const Json& reply, std::span<const std::byte> blob = {}) {
    connection.send(to_wire(reply), blob, options_.io_timeout);
  };
  // The hello: the client's protocol and version must be this server's, else one error reply
  // saying both and the session ends.
  {
    const Frame frame = connection.receive(options_.io_timeout, options_.io_timeout, {}, &stop_);
    try {
      const Json hello = from_wire(frame.header);
      const std::string type = string_field(hello, "type", "hello");
      if (type != request::kHello) throw ProtocolError(fmt::format("the first request is '{}', not hello", type));
      const std::string protocol = string_field(hello, "protocol", "hello");
      const auto version = unsigned_field<std::uint32_t>(hello, "version", "hello");
      if (protocol != kProtocolName || version != kProtocolVersion) {
        throw ProtocolError(fmt::format("the client speaks {} version {}, this server {} version {}", protocol, version,
                                        kProtocolName, kProtocolVersion));
      }
    } catch (const ProtocolError&) {
      send(error_reply(std::current_exception()));
      throw;
    }
    send(ok(Json{{"protocol", kProtocolName},
                 {"version", kProtocolVersion},
                 {"device", options_.description},
                 {"fabric", options_.fabric ? encode(*options_.fabric) : Json(nullptr)}}));
  }
  Heartbeat heartbeat(connection, options_.heartbeat_interval, options_.io_timeout);
  for (;;) {
    Frame frame = connection.receive(options_.idle_timeout, options_.io_timeout, {}, &stop_);
    Json request;
    std::string type;
    try {
      request = from_wire(frame.header);
      type = string_field(request, "type", "request");
    } catch (const ProtocolError&) {
      send(error_reply(std::current_exception()));
      continue;
    }
    if (type == request::kGoodbye) {
      send(ok());
      return false;
    }
    if (type == request::kShutdown) {
      send(ok());
      stop();
      return true;
    }
    std::vector<std::byte> reply_blob;
    Json reply;
    heartbeat.begin_call();
    reply = handle(request, frame.blob, reply_blob);
    if (const std::optional<std::string> failure = heartbeat.end_call()) throw ConnectionError(*failure);
    send(reply, reply_blob);
  }
}

Json RemoteDeviceServer::handle(const Json& request, std::vector<std::byte>& blob, std::vector<std::byte>& reply_blob) {
  const std::string type = request.at("type").get<std::string>();
  const std::string path = type;
  try {
    if (type == request::kTopology) return ok(Json{{"yaml", topo::to_yaml(device_.topology())}});
    if (type == request::kChips) return ok(Json{{"chips", device_.chips()}});
    if (type == request::kWorkerGrid) return ok(Json{{"grid", encode(device_.worker_grid())}});
    if (type == request::kActiveEthernetChannels) {
      return ok(Json{{"channels", device_.active_ethernet_channels(unsigned_field<ChipId>(request, "chip", path))}});
    }
    if (type == request::kCreateBuffer) {
      const BufferConfig config = decode_buffer_config(field(request, "config", path), path + ".config");
      return ok(Json{{"buffer", encode(device_.create_buffer(config))}});
    }
    if (type == request::kWriteBuffer) {
      const auto chip = unsigned_field<ChipId>(request, "chip", path);
      const BufferHandle buffer = decode_buffer_handle(field(request, "buffer", path), path + ".buffer");
      device_.write_buffer(chip, buffer, blob);
      return ok();
    }
    if (type == request::kReadBuffer) {
      const auto chip = unsigned_field<ChipId>(request, "chip", path);
      const BufferHandle buffer = decode_buffer_handle(field(request, "buffer", path), path + ".buffer");
      const auto size = static_cast<std::size_t>(
          unsigned_value(field(request, "size_bytes", path), kMaxBlobBytes, path + ".size_bytes"));
      reply_blob.resize(size);
      device_.read_buffer(chip, buffer, reply_blob);
      return ok();
    }
    if (type == request::kCreateGlobalSemaphore) {
      const std::vector<CoreRange> cores = decode_core_ranges(array_field(request, "cores", path), path + ".cores");
      const CoreKind kind = decode_core_kind(field(request, "core_kind", path), path + ".core_kind");
      const auto initial = unsigned_field<std::uint32_t>(request, "initial_value", path);
      return ok(Json{{"semaphore", encode(device_.create_global_semaphore(cores, kind, initial))}});
    }
    if (type == request::kResetGlobalSemaphore) {
      const GlobalSemaphore semaphore = decode_global_semaphore(field(request, "semaphore", path), path + ".semaphore");
      device_.reset_global_semaphore(semaphore, unsigned_field<std::uint32_t>(request, "value", path));
      return ok();
    }
    if (type == request::kEnqueueWorkload) {
      device_.enqueue_workload(decode_workload(field(request, "workload", path), path + ".workload"));
      return ok();
    }
    if (type == request::kFinish) {
      device_.finish();
      return ok();
    }
    if (type == request::kProfile) {
      Json profile = Json::array();
      for (const KernelProfile& p : device_.profile()) profile.push_back(encode(p));
      return ok(Json{{"profile", std::move(profile)}});
    }
    if (type == request::kDeviceTime) {
      return ok(Json{{"time_ps", options_.device_time_ps ? Json(options_.device_time_ps()) : Json(nullptr)}});
    }
    if (type == request::kHello) throw ProtocolError("hello sent twice in one session");
    throw ProtocolError(fmt::format("unknown request type '{}'", type));
  } catch (...) {
    reply_blob.clear();
    return error_reply(std::current_exception());
  }
}

}  // namespace cclmesh::runtime::remote
