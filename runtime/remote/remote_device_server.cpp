#include "runtime/remote/remote_device_server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/write.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "runtime/device/host_copy_check.hpp"
#include "runtime/remote/freed_heap.hpp"
#include "topologies/topology_yaml.hpp"

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
// reply. The accept's handler runs inside the session's own waits on `io`.
class TurnAway {
 public:
  TurnAway(tcp::acceptor& acceptor, asio::io_context& io, std::string serving,
           std::function<void(const std::string&)> log)
      : acceptor_(acceptor), io_(io), incoming_(io), log_(std::move(log)) {
    const std::string message = fmt::format("the server is serving another client ({}); one session at a time, try "
                                            "again when it ends",
                                            serving);
    busy_frame_ = frame_bytes(to_wire(error_reply(std::make_exception_ptr(ServerBusyError(message)))));
    arm();
  }
  ~TurnAway() {
    closing_ = true;  // a connection accepted as the cancel lands is answered, not waited for again
    error_code ignored;
    acceptor_.cancel(ignored);
    io_.restart();
    while (pending_) io_.run_one();
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
    pending_ = true;
    acceptor_.async_accept(incoming_, [this](const error_code& ec) {
      pending_ = false;
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

  tcp::acceptor& acceptor_;
  asio::io_context& io_;
  tcp::socket incoming_;
  std::function<void(const std::string&)> log_;
  std::vector<std::byte> busy_frame_;
  std::vector<tcp::socket> turned_away_;
  bool pending_ = false;
  bool closing_ = false;
  std::size_t turned_away_count_ = 0;
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
    bool shutdown = false;
    {
      FrameConnection connection(io_, std::move(socket));
      const std::string peer = connection.peer();
      log(fmt::format("session with {} started", peer));
      const TurnAway turn_away(acceptor_, io_, peer, [this](const std::string& line) { log(line); });
      std::string how;
      try {
        shutdown = serve_session(connection);
        how = shutdown ? "the client asked the server to shut down" : "the client said goodbye";
        log(fmt::format("session with {} ended{}", peer, shutdown ? ": " + how : ""));
      } catch (const std::exception& e) {
        // The connection closed, stalled or spoke no protocol, a frame was too large to hold...:
        // that client's session ends, the server goes on.
        how = e.what();
        log(fmt::format("session with {} ended: {}", peer, how));
      }
      end_session(how);
      connection.close();
    }
    if (shutdown) break;
    // Clients arriving meanwhile wait in the listen backlog for the device, not turned away.
    reset_if_left_unusable();
    // What the session and the reset freed, back to the OS: else the resident set creeps
    // (freed_heap.hpp). Between sessions, so no client's call waits for it.
    return_freed_heap_to_os();
  }
  log("server stopped");
}

void RemoteDeviceServer::begin_session() {
  ++sessions_begun_;
  in_session_ = true;
  if (!options_.session_started) return;
  try {
    options_.session_started(sessions_begun_);
  } catch (const std::exception& e) {
    log(fmt::format("session {}: {}", sessions_begun_, e.what()));
  }
}

void RemoteDeviceServer::end_session(const std::string& how) {
  if (!in_session_) return;  // the connection ended before its hello was accepted
  in_session_ = false;
  if (!options_.session_ended) return;
  try {
    options_.session_ended(sessions_begun_, how);
  } catch (const std::exception& e) {
    log(fmt::format("session {}: {}", sessions_begun_, e.what()));
  }
}

void RemoteDeviceServer::reset_if_left_unusable() {
  if (!options_.reset_after_failed_session || (!device_failed_ && !work_unfinished_)) return;
  const std::string why = device_failed_ ? "the device failed in that session" : "that session left work unfinished";
  try {
    device_.reset();
    buffers_.clear();
    semaphores_.clear();
    forget_enqueued();
    device_failed_ = false;
    work_unfinished_ = false;
    log(fmt::format("device reset ({}): the next client gets it as just opened", why));
  } catch (const std::exception& e) {
    // The next client meets the device as it is, and may reset it itself.
    log(fmt::format("device reset ({}) failed: {}", why, e.what()));
  }
}

void RemoteDeviceServer::require_room_for_enqueued(std::uint64_t bytes, std::string_view call) const {
  if (enqueued_host_bytes_ + bytes > options_.max_enqueued_host_bytes) {
    throw std::invalid_argument(fmt::format("{}: {} B more would pass this server's limit of {} B of enqueued host "
                                            "writes and reads ({} B held until finish()); call finish() first",
                                            call, bytes, options_.max_enqueued_host_bytes, enqueued_host_bytes_));
  }
}

void RemoteDeviceServer::forget_enqueued() {
  staged_reads_.clear();
  enqueued_host_bytes_ = 0;
}

void RemoteDeviceServer::check_blob(const std::vector<std::uint8_t>& header, std::uint64_t bytes, bool greeted) const {
  if (bytes == 0) return;
  Json request;
  std::string type;
  try {
    request = from_wire(header);
    type = string_field(request, "type", "request");
  } catch (const ProtocolError& e) {
    throw FrameTooLarge(fmt::format("a frame's data length is {} B but its request does not decode ({}); limit 0 B",
                                    bytes, e.what()));
  }
  if (type != request::kWriteBuffer && type != request::kEnqueueWriteBuffer) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B; it carries no data (limit 0 B)", type, bytes));
  }
  if (!greeted) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B; a session's first request is its hello, which "
                                    "carries no data (limit 0 B)",
                                    type, bytes));
  }
  BufferHandle claimed;
  try {
    claimed = decode_buffer_handle(field(request, "buffer", type), type + ".buffer");
  } catch (const ProtocolError& e) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, but {} (limit 0 B)", type, bytes, e.what()));
  }
  // Refused as the device would refuse it, the session going on, where reading the bytes past
  // costs no more than a write the server would make, or kMaxRefusedWriteBytes.
  const BufferHandle* buffer = nullptr;
  try {
    buffer = &buffers_.served(claimed, type);
  } catch (const std::invalid_argument& e) {
    if (bytes <= kMaxRefusedWriteBytes) throw BlobRefused(e.what());
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, but {} (limit {} B, what this server reads "
                                    "to refuse a write)",
                                    type, bytes, e.what(), kMaxRefusedWriteBytes));
  }
  try {
    runtime::require_whole_buffer(type, *buffer, bytes);
  } catch (const std::invalid_argument& e) {
    const std::uint64_t limit = std::max(buffer->config.size_bytes, kMaxRefusedWriteBytes);
    if (bytes <= limit) throw BlobRefused(e.what());
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, above the limit of {} B (the larger of "
                                    "buffer {}'s size per chip, {} B, and what this server reads to refuse a write)",
                                    type, bytes, limit, buffer->id, buffer->config.size_bytes));
  }
}

bool RemoteDeviceServer::serve_session(FrameConnection& connection) {
  const auto send = [&](const Json& reply, std::span<const std::byte> blob = {}) {
    connection.send(to_wire(reply), blob, options_.io_timeout);
  };
  // A frame announcing more than its request may carry is refused unread: one error reply
  // naming the length and the limit, and the session ends (but a write refused as the device
  // would refuse it, below: check_blob).
  bool greeted = false;
  const BlobTarget blob_target = [this, &greeted](const std::vector<std::uint8_t>& header, std::uint64_t bytes) {
    check_blob(header, bytes, greeted);
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
                 {"system", options_.system_name.empty() ? device_.topology().name() : options_.system_name},
                 {"data_mode", data_mode_name(options_.data_mode)},
                 {"fabric", encode(device_.fabric())},
                 {"faults", options_.faults}}));
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
      const BufferHandle buffer = device_.create_buffer(config);
      buffers_.given(buffer);
      return ok(Json{{"buffer", encode(buffer)}});
    }
    if (type == request::kDeallocateBuffer) {
      // The device tells a freed or unknown handle from a live one; the server then forgets it.
      const BufferHandle buffer = decode_buffer_handle(field(request, "buffer", path), path + ".buffer");
      device_.deallocate_buffer(buffer);
      buffers_.freed(buffer.id);
      return ok();
    }
    // A host write's or read's chip and buffer (the server's own copy of the handle), and a
    // read's size, bounded by the buffer's before anything is allocated for it.
    const auto io_chip = [&] { return unsigned_field<ChipId>(request, "chip", path); };
    const auto io_buffer = [&]() -> const BufferHandle& {
      return buffers_.served(decode_buffer_handle(field(request, "buffer", path), path + ".buffer"), path);
    };
    const auto read_size = [&](const BufferHandle& buffer) {
      return static_cast<std::size_t>(
          unsigned_value(field(request, "size_bytes", path), buffer.config.size_bytes, path + ".size_bytes"));
    };
    if (type == request::kWriteBuffer) {
      const auto chip = io_chip();
      device_.write_buffer(chip, io_buffer(), blob);
      return ok();
    }
    if (type == request::kReadBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      reply_blob.resize(read_size(buffer));
      device_.read_buffer(chip, buffer, reply_blob);
      return ok();
    }
    if (type == request::kEnqueueWriteBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      require_room_for_enqueued(blob.size(), path);
      device_.enqueue_write_buffer(chip, buffer, blob);  // copies the bytes
      enqueued_host_bytes_ += blob.size();
      work_unfinished_ = true;
      return ok();
    }
    if (type == request::kEnqueueReadBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      const std::size_t size = read_size(buffer);
      require_room_for_enqueued(size, path);
      StagedRead& staged = staged_reads_.emplace_back(StagedRead{sessions_begun_, std::vector<std::byte>(size)});
      try {
        device_.enqueue_read_buffer(chip, buffer, staged.bytes);
      } catch (...) {
        staged_reads_.pop_back();  // refused: the device holds no span of it
        throw;
      }
      enqueued_host_bytes_ += size;
      work_unfinished_ = true;
      return ok();
    }
    if (type == request::kCreateGlobalSemaphore) {
      const std::vector<CoreRange> cores = decode_core_ranges(array_field(request, "cores", path), path + ".cores");
      const CoreKind kind = decode_core_kind(field(request, "core_kind", path), path + ".core_kind");
      const auto initial = unsigned_field<std::uint32_t>(request, "initial_value", path);
      const GlobalSemaphore semaphore = device_.create_global_semaphore(cores, kind, initial);
      semaphores_.given(semaphore);
      return ok(Json{{"semaphore", encode(semaphore)}});
    }
    if (type == request::kResetGlobalSemaphore) {
      const GlobalSemaphore& semaphore = semaphores_.served(
          decode_global_semaphore(field(request, "semaphore", path), path + ".semaphore"), path);
      device_.reset_global_semaphore(semaphore, unsigned_field<std::uint32_t>(request, "value", path));
      work_unfinished_ = true;  // enqueue-ordered: a host command until the next finish()
      return ok();
    }
    if (type == request::kDeallocateGlobalSemaphore) {
      // As for buffers: the device tells a freed or unknown handle from a live one.
      const GlobalSemaphore semaphore =
          decode_global_semaphore(field(request, "semaphore", path), path + ".semaphore");
      device_.deallocate_global_semaphore(semaphore);
      semaphores_.freed(semaphore.id);
      return ok();
    }
    if (type == request::kEnqueueWorkloads) {
      // Every workload decoded before the device sees any: one that does not decode enqueues
      // nothing, as one the device refuses.
      const Json& list = array_field(request, "workloads", path);
      std::vector<MeshWorkload> workloads;
      workloads.reserve(list.size());
      for (std::size_t i = 0; i < list.size(); ++i) {
        workloads.push_back(decode_workload(list[i], fmt::format("{}.workloads[{}]", path, i)));
      }
      device_.enqueue_workloads(workloads);
      if (!workloads.empty()) work_unfinished_ = true;  // an empty list leaves nothing to run
      return ok();
    }
    if (type == request::kFinish) {
      try {
        device_.finish();
      } catch (...) {
        // None of the reads is delivered (the client drops them too); their bytes stay, in case
        // the device still writes them, until a finish that completes or a reset.
        for (StagedRead& staged : staged_reads_) staged.session = 0;
        throw;
      }
      work_unfinished_ = false;
      // The reads this session enqueued since its last finish, back to back in enqueue order.
      for (const StagedRead& staged : staged_reads_) {
        if (staged.session != sessions_begun_) continue;
        reply_blob.insert(reply_blob.end(), staged.bytes.begin(), staged.bytes.end());
      }
      forget_enqueued();
      return ok();
    }
    if (type == request::kReset) {
      // The handles given before name nothing now (the device may give their ids again).
      buffers_.clear();
      semaphores_.clear();
      device_.reset();
      forget_enqueued();
      device_failed_ = false;
      work_unfinished_ = false;
      return ok();
    }
    if (type == request::kProfile) {
      Json profile = Json::array();
      for (const KernelProfile& p : device_.profile()) profile.push_back(encode(p));
      return ok(Json{{"profile", std::move(profile)}});
    }
    if (type == request::kLinkTraffic) {
      // null: the backend does not measure its links (the client then says so, not zeros).
      const std::optional<std::vector<LinkTraffic>> traffic = device_.link_traffic();
      if (!traffic) return ok(Json{{"links", nullptr}});
      Json links = Json::array();
      for (const LinkTraffic& t : *traffic) links.push_back(encode(t));
      return ok(Json{{"links", std::move(links)}});
    }
    if (type == request::kDeviceTime) {
      return ok(Json{{"time_ps", options_.device_time_ps ? Json(options_.device_time_ps()) : Json(nullptr)}});
    }
    if (type == request::kDeviceEvents) {
      return ok(Json{{"events", options_.device_events ? Json(options_.device_events()) : Json(nullptr)}});
    }
    if (type == request::kFaultEffects) {
      return ok(Json{{"effects", options_.fault_effects ? Json(options_.fault_effects()) : Json::array()}});
    }
    if (type == request::kHello) throw ProtocolError("hello sent twice in one session");
    throw ProtocolError(fmt::format("unknown request type '{}'", type));
  } catch (const DeviceError&) {
    device_failed_ = true;
    reply_blob.clear();
    return error_reply(std::current_exception());
  } catch (...) {
    reply_blob.clear();
    return error_reply(std::current_exception());
  }
}

}  // namespace cclmesh::runtime::remote
