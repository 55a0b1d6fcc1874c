#include "runtime/remote/remote_device_server.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "runtime/remote/freed_heap.hpp"

namespace cclmesh::runtime::remote {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

constexpr std::chrono::milliseconds kAcceptPollInterval{100};
// After refusing a frame, how long the rest of it is read and dropped before the connection
// closes: a client still sending then reads the refusal rather than a reset; a hostile one
// holds the session no longer than this.
constexpr std::chrono::milliseconds kRefusedFrameDrain{1'000};

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
  Heartbeat(FrameConnection& connection, std::chrono::milliseconds interval, std::chrono::milliseconds io_timeout,
            std::function<void()> call_abandoned)
      : thread_([this, &connection, interval, io_timeout, call_abandoned = std::move(call_abandoned)] {
          const std::vector<std::uint8_t> working = to_wire(Json{{"type", reply::kWorking}});
          std::unique_lock lock(mutex_);
          while (!cv_.wait_for(lock, interval, [this] { return done_; })) {
            if (!in_call_ || failure_) continue;
            try {
              connection.send(working, {}, io_timeout);
            } catch (const ConnectionError& e) {
              failure_ = e.what();
              if (call_abandoned) call_abandoned();
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

// While a session runs, clients that connect are told at once that the server is busy (one
// error reply, answering the hello they send) instead of waiting silently in the listen
// backlog. Their sockets stay open until the session ends (or a newer one takes the place of
// the oldest): closing with their hello unread would reset the connection before they read the
// reply. It accepts on its own thread, through its own descriptor of the listening socket: the
// session's thread runs the server's io only between calls, so a turn-away run there waited for
// a call to end, or for the heartbeat's next send (session 39: a `--device-wait 0` client beside
// a long finish() waited seconds, and with the heartbeat off failed its hello as "not a cclmesh
// serve"). The server's own acceptor is not used until the session ends and this is gone.
class TurnAway {
 public:
  TurnAway(tcp::acceptor& listening, std::string serving, std::function<void(const std::string&)> log)
      : acceptor_(io_), incoming_(io_), log_(std::move(log)) {
    const std::string message = fmt::format("the server is serving another client ({}); one session at a time, try "
                                            "again when it ends",
                                            serving);
    busy_frame_ = frame_bytes(to_wire(error_reply(std::make_exception_ptr(ServerBusyError(message)))));
    const int descriptor = ::fcntl(listening.native_handle(), F_DUPFD_CLOEXEC, 0);
    error_code ec;
    if (descriptor >= 0) acceptor_.assign(listening.local_endpoint(ec).protocol(), descriptor, ec);
    if (descriptor < 0 || ec) {
      // Clients arriving meanwhile then wait in the backlog, as a busy server's did before it told
      // them; the session goes on.
      if (descriptor >= 0 && !acceptor_.is_open()) ::close(descriptor);
      if (log_) log_(fmt::format("busy clients will not be told during this session: {}",
                                 descriptor < 0 ? std::string(std::strerror(errno)) : ec.message()));
      return;
    }
    arm();
    thread_ = std::thread([this] { io_.run(); });
  }
  // Arrivals from now on wait in the listen backlog for the next session. Called before the
  // goodbye's reply, so a client started once its predecessor has exited is never told "busy"
  // (session 41: back-to-back `run --device` runs sometimes printed a waiting line first, the
  // server still turning away while it ended the session). The sockets turned away stay open
  // until the session ends, so their clients read the reply.
  void stop() {
    if (thread_.joinable()) {
      // A connection accepted as the cancel lands is answered, not waited for again (closing_).
      asio::post(io_, [this] {
        closing_ = true;
        error_code ignored;
        acceptor_.cancel(ignored);
      });
      thread_.join();  // io_.run() returns once the cancelled accept's handler has run
    }
    error_code ignored;
    acceptor_.close(ignored);
  }
  ~TurnAway() {
    stop();
    error_code ignored;
    for (tcp::socket& s : turned_away_) s.close(ignored);
    // Once per session, not per attempt: a waiting client asks again after 50 ms, doubling to 1 s.
    if (log_ && turned_away_count_ > 0) {
      log_(fmt::format("{} connection{} turned away (busy) during that session", turned_away_count_,
                       turned_away_count_ == 1 ? "" : "s"));
    }
  }
  TurnAway(const TurnAway&) = delete;
  TurnAway& operator=(const TurnAway&) = delete;

 private:
  static constexpr std::size_t kMaxHeld = 16;

  void arm() {
    acceptor_.async_accept(incoming_, [this](const error_code& ec) {
      if (ec) return;  // cancelled: the session ended
      error_code ignored;
      ++turned_away_count_;
      asio::write(incoming_, asio::buffer(busy_frame_.data(), busy_frame_.size()), ignored);  // ~200 B: never blocks
      incoming_.shutdown(tcp::socket::shutdown_send, ignored);
      if (turned_away_.size() == kMaxHeld) {
        turned_away_.front().close(ignored);
        turned_away_.erase(turned_away_.begin());
      }
      turned_away_.push_back(std::move(incoming_));
      incoming_ = tcp::socket(io_);
      if (!closing_) arm();
    });
  }

  asio::io_context io_;  // first: the sockets below are bound to it
  tcp::acceptor acceptor_;
  tcp::socket incoming_;
  std::function<void(const std::string&)> log_;
  std::vector<std::byte> busy_frame_;
  std::vector<tcp::socket> turned_away_;
  bool closing_ = false;  // set and read on the turn-away's thread only
  std::size_t turned_away_count_ = 0;  // read once the thread has been joined
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace

RemoteDeviceServer::RemoteDeviceServer(MeshDevice& device, RemoteServerOptions options)
    : options_(std::move(options)), acceptor_(io_), requests_(device, options_) {
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
    bool shutdown = false;
    bool client_lost = false;  // a session begun, ended other than by its client's goodbye or shutdown
    {
      FrameConnection connection(io_, std::move(socket));
      const std::string peer = connection.peer();
      log(fmt::format("session with {} started", peer));
      TurnAway turn_away(acceptor_, peer, [this](const std::string& line) { log(line); });
      std::string how;
      try {
        shutdown = serve_session(connection, [&turn_away] { turn_away.stop(); });
        how = shutdown ? "the client asked the server to shut down" : "the client said goodbye";
        log(fmt::format("session with {} ended{}", peer, shutdown ? ": " + how : ""));
      } catch (const std::exception& e) {
        // The connection closed, stalled or spoke no protocol, a frame was too large to hold...:
        // that client's session ends, the server goes on.
        how = e.what();
        client_lost = in_session_;
        log(fmt::format("session with {} ended: {}", peer, how));
      }
      end_session(how);
      connection.close();
    }
    // A stopping server serves no next client, so it does not reset the device for one (session
    // 31: SIGTERM mid-op logged a reset "so the next client gets it as just opened" and then
    // stopped).
    if (shutdown || stop_.load()) break;
    // Clients arriving meanwhile wait in the listen backlog for the device, not turned away.
    reset_if_left_unusable();
    if (client_lost) free_what_a_lost_session_left();
    // What the session and the reset freed, back to the OS: else the resident set creeps
    // (freed_heap.hpp). Between sessions, so no client's call waits for it.
    return_freed_heap_to_os();
  }
  log("server stopped");
}

void RemoteDeviceServer::begin_session() {
  const std::uint64_t session = requests_.session_begun();
  in_session_ = true;
  if (!options_.session_started) return;
  try {
    options_.session_started(session);
  } catch (const std::exception& e) {
    log(fmt::format("session {}: {}", session, e.what()));
  }
}

void RemoteDeviceServer::end_session(const std::string& how) {
  if (!in_session_) return;  // the connection ended before its hello was accepted
  in_session_ = false;
  if (!options_.session_ended) return;
  try {
    options_.session_ended(requests_.sessions_begun(), how);
  } catch (const std::exception& e) {
    log(fmt::format("session {}: {}", requests_.sessions_begun(), e.what()));
  }
}

void RemoteDeviceServer::reset_if_left_unusable() {
  if (!options_.reset_after_failed_session) return;
  if (const std::optional<std::string> line = requests_.reset_if_left_unusable()) log(*line);
}

void RemoteDeviceServer::free_what_a_lost_session_left() {
  if (const std::optional<std::string> line = requests_.free_what_a_lost_session_left()) log(*line);
}

bool RemoteDeviceServer::serve_session(FrameConnection& connection, const std::function<void()>& before_goodbye_reply) {
  const auto send = [&](const Json& reply, std::span<const std::byte> blob = {}) {
    connection.send(to_wire(reply), blob, options_.io_timeout);
  };
  // A frame announcing more than its request may carry is refused unread: one error reply
  // naming the length and the limit, and the session ends (but a write refused as the device
  // would refuse it, below: check_blob).
  bool greeted = false;
  const BlobTarget blob_target = [this, &greeted](const std::vector<std::uint8_t>& header, std::uint64_t bytes) {
    requests_.check_blob(header, bytes, greeted);
    return std::span<std::byte>{};
  };
  const auto receive = [&](std::chrono::milliseconds wait) {
    try {
      return connection.receive(wait, options_.io_timeout, blob_target, &stop_);
    } catch (const FrameTooLarge& e) {
      send(error_reply(std::make_exception_ptr(ProtocolError(e.what()))));
      connection.shutdown_send();
      connection.discard_incoming(kRefusedFrameDrain);
      throw;
    }
  };
  // The hello: the client's protocol and version must be this server's, else one error reply
  // saying both and the session ends.
  {
    const Frame frame = receive(options_.hello_timeout);
    try {
      send(requests_.hello(frame.header));
    } catch (const ProtocolError&) {
      send(error_reply(std::current_exception()));
      throw;
    }
  }
  greeted = true;
  begin_session();
  Heartbeat heartbeat(connection, options_.heartbeat_interval, options_.io_timeout, options_.call_abandoned);
  for (;;) {
    Frame frame;
    try {
      frame = receive(options_.idle_timeout);
    } catch (const BlobRefused& e) {
      // A write the server will not make, its bytes read past: refused as a local device
      // refuses it, and the session goes on.
      send(error_reply(std::make_exception_ptr(std::invalid_argument(e.what()))));
      continue;
    }
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
      before_goodbye_reply();
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
    reply = requests_.handle(request, frame.blob, reply_blob);
    if (const std::optional<std::string> failure = heartbeat.end_call()) throw ConnectionError(*failure);
    if (stop_.load() && reply.value("type", "") == reply::kError) {
      // The call failed because the server is stopping (cclmesh serve abandons the op in progress
      // on SIGINT / SIGTERM): the server went away, not the client's op, which would otherwise
      // read as a simulated timeout (exit 3) with the whole device's report.
      reply = error_reply(std::make_exception_ptr(std::runtime_error(
          "the server stopped while this call ran (SIGINT / SIGTERM, or a shutdown); the call did not complete")));
      reply_blob.clear();
    }
    send(reply, reply_blob);
  }
}

}  // namespace cclmesh::runtime::remote
