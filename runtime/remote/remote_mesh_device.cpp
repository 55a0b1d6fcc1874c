#include "runtime/remote/remote_mesh_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <thread>

#include "runtime/device/host_copy_check.hpp"
#include "runtime/remote/served_fabric_check.hpp"
#include "topologies/errors.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::runtime::remote {

namespace {

// While the server is busy: the first pause before asking again, doubled each time up to the last.
constexpr std::chrono::milliseconds kFirstBusyRetry{50};
constexpr std::chrono::milliseconds kLongestBusyRetry{1'000};

// A hello that fails at the connection: a cclmesh server answers one at once (ok, or busy), so
// another protocol's bytes or silence most likely mean the address is some other service's.
std::string why_hello_failed(const ConnectionError& e, const std::string& endpoint) {
  if (const auto* foreign = dynamic_cast<const NotThisProtocol*>(&e)) {
    return fmt::format("{} does not speak the cclmesh remote device protocol: it sent \"{}\" (a cclmesh frame "
                       "starts with \"CCLM\"); is it a cclmesh serve's address?",
                       endpoint, foreign->seen());
  }
  if (dynamic_cast<const NothingReceived*>(&e) != nullptr) {
    return fmt::format("{}; a cclmesh serve answers a hello at once: {} may not be a cclmesh serve", e.what(),
                       endpoint);
  }
  return e.what();
}

Json request_of(std::string_view type, Json fields) {
  if (fields.is_null()) fields = Json::object();
  fields["type"] = type;
  return fields;
}

}  // namespace

RemoteMeshDevice::RemoteMeshDevice(std::string host, std::uint16_t port, RemoteDeviceOptions options)
    : host_(std::move(host)),
      port_(port),
      endpoint_(host_.find(':') != std::string::npos ? fmt::format("[{}]:{}", host_, port_)
                                                    : fmt::format("{}:{}", host_, port_)),
      options_(options),
      io_(std::make_unique<boost::asio::io_context>()) {
  // A server busy with another client's session says so; it is asked again, sooner at first
  // (a script's next run started as the previous one ends gets in at once) and less often as the
  // wait goes on, until busy_wait has passed. Host time only: what the device computes is the same.
  const auto started = std::chrono::steady_clock::now();
  std::chrono::milliseconds pause = kFirstBusyRetry;
  bool told_busy = false;
  Json hello;
  for (;;) {
    connect(started);
    try {
      hello = call(request::kHello, Json{{"protocol", kProtocolName}, {"version", kProtocolVersion}});
      break;
    } catch (const ServerBusyError& e) {
      connection_->close();
      const auto waited = std::chrono::steady_clock::now() - started;
      if (waited >= options_.busy_wait) {
        throw ServerBusyError(fmt::format("{}; waited {:g} s for it", e.what(),
                                          static_cast<double>(options_.busy_wait.count()) / 1000.0));
      }
      if (options_.on_busy && !told_busy) options_.on_busy(e.what());
      told_busy = true;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(pause, options_.busy_wait - waited));
      pause = std::min(2 * pause, kLongestBusyRetry);
    }
  }
  decoded(request::kHello, [&] {
    // The server checked the version; a reply of another protocol or version is still refused.
    const std::string protocol = string_field(hello, "protocol", "hello reply");
    const auto version = unsigned_field<std::uint32_t>(hello, "version", "hello reply");
    if (protocol != kProtocolName || version != kProtocolVersion) {
      connection_->close();
      fail(request::kHello, fmt::format("the server speaks {} version {}, this client {} version {}", protocol, version,
                                        kProtocolName, kProtocolVersion));
    }
    description_ = string_field(hello, "device", "hello reply");
    data_mode_ = decode_data_mode(field(hello, "data_mode", "hello reply"), "hello reply.data_mode");
    hardware_ = decode_hardware(field(hello, "hardware", "hello reply"), "hello reply.hardware");
    fabric_ = decode_fabric_options(field(hello, "fabric", "hello reply"), "hello reply.fabric");
    faults_ = string_list_field(hello, "faults", "hello reply");
    system_name_ = string_field(hello, "system", "hello reply");
    if (hello.contains("max_host_bytes")) max_host_bytes_ = unsigned_field<std::uint64_t>(hello, "max_host_bytes", "hello reply");
    if (hello.contains("idle_timeout_ms")) {
      // Compared with the time since the server was last heard from, in the host clock's own
      // units: at most what they hold (292 years in ns), or that comparison overflows (session 32,
      // fuzz_remote_replies).
      constexpr std::int64_t kLongestIdleTimeoutMs =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::duration::max()).count();
      server_idle_timeout_ = std::chrono::milliseconds(static_cast<std::int64_t>(unsigned_value(
          field(hello, "idle_timeout_ms", "hello reply"), kLongestIdleTimeoutMs, "hello reply.idle_timeout_ms")));
    }
    return 0;
  });
  const Json topology = call(request::kTopology, Json::object());
  const std::string yaml = decoded(request::kTopology, [&] { return string_field(topology, "yaml", "topology reply"); });
  try {
    topology_ = topo::parse_topology_yaml(yaml, endpoint_ + " topology");
  } catch (const topo::InputError& e) {
    connection_->close();
    fail(request::kTopology, fmt::format("the topology sent does not load: {}", e.what()));
  }
  // The hello's fabric, now that there is a topology to hold it to: ops are built for it on this
  // side, so one the served device could not run is refused here, not met midway through a run.
  try {
    check_served_fabric(fabric_, topology_, "hello reply.fabric");
  } catch (const ProtocolError& e) {
    connection_->close();
    fail(request::kHello, fmt::format("protocol error: {}; expected the fabric of a device serving that topology (a "
                                      "cclmesh serve's)",
                                      e.what()));
  }
}

std::chrono::milliseconds RemoteMeshDevice::attempt_timeout(std::chrono::steady_clock::time_point started) const {
  // Under a wait, one attempt may take no longer than what is left of it (but at least the first
  // retry's pause, so a last attempt is still a real one): a host that drops the connection
  // requests silently would otherwise hold each attempt for the whole connect timeout and
  // overshoot a short --device-wait by up to that (session 31).
  if (options_.connect_wait.count() == 0) return options_.connect_timeout;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  const std::chrono::milliseconds left = std::max(options_.connect_wait - waited, kFirstBusyRetry);
  return std::min(options_.connect_timeout, left);
}

void RemoteMeshDevice::connect(std::chrono::steady_clock::time_point started) {
  // A server still starting (a script's `cclmesh serve ... &` just before) refuses until it
  // listens; tried again on the busy wait's backoff. The wait counts from the constructor's
  // start, as the busy wait does, so the two together last no longer than the longer of them.
  std::chrono::milliseconds pause = kFirstBusyRetry;
  bool told = false;
  for (;;) {
    try {
      connection_ = std::make_unique<FrameConnection>(*io_, connect_socket(*io_, host_, port_, attempt_timeout(started)));
      return;
    } catch (const NotAccepting& e) {
      const std::string why = fmt::format("remote device {}: {}", endpoint_, e.what());
      const auto waited = std::chrono::steady_clock::now() - started;
      if (options_.connect_wait.count() == 0) throw ServerNotAcceptingError(why);
      if (waited >= options_.connect_wait) {
        throw ServerNotAcceptingError(fmt::format("{}; tried for {:g} s", why,
                                                  static_cast<double>(options_.connect_wait.count()) / 1000.0));
      }
      if (options_.on_not_accepting && !told) options_.on_not_accepting(why);
      told = true;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(pause, options_.connect_wait - waited));
      pause = std::min(2 * pause, kLongestBusyRetry);
    } catch (const ConnectionError& e) {
      throw RemoteDeviceError(fmt::format("remote device {}: {}", endpoint_, e.what()));
    }
  }
}

RemoteMeshDevice::~RemoteMeshDevice() {
  if (broken_ || !connection_) return;
  try {
    call(request::kGoodbye, Json::object());
  } catch (const std::exception&) {
    // The session ends either way; a server that is already gone has nothing to be told.
  }
  connection_->close();
}

void RemoteMeshDevice::fail(std::string_view call, const std::string& what) const {
  broken_ = fmt::format("remote device {}: {}: {}", endpoint_, call, what);
  throw RemoteDeviceError(*broken_);
}

std::string RemoteMeshDevice::why_connection_lost(std::string_view call, const ConnectionError& e) const {
  if (call == request::kHello) return why_hello_failed(e, endpoint_);
  // Host time, beside the device: it decides only which words the error has.
  if (server_idle_timeout_ && server_idle_timeout_->count() > 0 &&
      std::chrono::steady_clock::now() - last_heard_ >= *server_idle_timeout_) {
    return fmt::format("{}; this client had sent nothing for longer than the server's idle timeout ({:g} s, "
                       "cclmesh serve --idle-timeout), which most likely ended the session",
                       e.what(), static_cast<double>(server_idle_timeout_->count()) / 1000.0);
  }
  return e.what();
}

Json RemoteMeshDevice::call(std::string_view type, Json request, std::span<const std::byte> blob,
                            std::span<std::byte> read_into) const {
  if (broken_) throw RemoteDeviceError(fmt::format("{} (the connection is closed; {} not sent)", *broken_, type));
  Json reply_json;
  std::uint64_t blob_bytes = 0;
  try {
    connection_->send(to_wire(request_of(type, std::move(request))), blob, options_.io_timeout);
    for (;;) {
      // A reply's blob goes straight into the caller's span; one of another size (any blob,
      // for a call that reads nothing) is refused before anything is allocated for it.
      const Frame frame = connection_->receive(
          options_.io_timeout, options_.io_timeout, [&](const std::vector<std::uint8_t>&, std::uint64_t bytes) {
            blob_bytes = bytes;
            if (bytes != 0 && bytes != read_into.size()) {
              throw ProtocolError(
                  fmt::format("the reply carries {} B of data, {} B were asked for", bytes, read_into.size()));
            }
            return bytes == 0 ? std::span<std::byte>{} : read_into;
          });
      last_heard_ = std::chrono::steady_clock::now();
      reply_json = from_wire(frame.header);
      const std::string reply_type = string_field(reply_json, "type", fmt::format("{} reply", type));
      if (reply_type == reply::kWorking) continue;
      if (reply_type == reply::kError) break;
      if (reply_type != reply::kOk) throw ProtocolError(fmt::format("unknown reply type '{}'", reply_type));
      if (blob_bytes != read_into.size()) {
        throw ProtocolError(fmt::format("the reply carries {} B, {} B were asked for", blob_bytes, read_into.size()));
      }
      return reply_json;
    }
  } catch (const ConnectionError& e) {
    connection_->close();
    fail(type, why_connection_lost(type, e));
  } catch (const ProtocolError& e) {
    connection_->close();
    fail(type, fmt::format("protocol error: {}", e.what()));
  }
  // An error reply leaves the session usable (the backend decides whether the device is).
  try {
    throw_error_reply(reply_json, endpoint_, type);
  } catch (const ProtocolError& e) {
    connection_->close();
    fail(type, fmt::format("protocol error: {}", e.what()));
  }
}

std::vector<ChipId> RemoteMeshDevice::chips() const {
  const Json reply = call(request::kChips, Json::object());
  return decoded(request::kChips, [&] {
    std::vector<ChipId> chips;
    const Json& list = array_field(reply, "chips", "chips reply");
    for (std::size_t i = 0; i < list.size(); ++i) {
      chips.push_back(static_cast<ChipId>(unsigned_value(list[i], UINT32_MAX, fmt::format("chips reply.chips[{}]", i))));
    }
    return chips;
  });
}

CoreCoord RemoteMeshDevice::worker_grid() const {
  const Json reply = call(request::kWorkerGrid, Json::object());
  return decoded(request::kWorkerGrid,
                 [&] { return decode_core_coord(field(reply, "grid", "worker_grid reply"), "worker_grid reply.grid"); });
}

std::vector<std::uint32_t> RemoteMeshDevice::active_ethernet_channels(ChipId chip) const {
  const Json reply = call(request::kActiveEthernetChannels, Json{{"chip", chip}});
  return decoded(request::kActiveEthernetChannels, [&] {
    std::vector<std::uint32_t> channels;
    const Json& list = array_field(reply, "channels", "active_ethernet_channels reply");
    for (std::size_t i = 0; i < list.size(); ++i) {
      channels.push_back(static_cast<std::uint32_t>(
          unsigned_value(list[i], UINT32_MAX, fmt::format("active_ethernet_channels reply.channels[{}]", i))));
    }
    return channels;
  });
}

BufferHandle RemoteMeshDevice::create_buffer(const BufferConfig& config) {
  const Json reply = call(request::kCreateBuffer, Json{{"config", encode(config)}});
  const BufferHandle buffer = decoded(request::kCreateBuffer, [&] {
    return decode_buffer_handle(field(reply, "buffer", "create_buffer reply"), "create_buffer reply.buffer");
  });
  own_buffers_.given(buffer);
  if (first_own_buffer_id_ == 0) first_own_buffer_id_ = buffer.id;
  return buffer;
}

void RemoteMeshDevice::deallocate_buffer(const BufferHandle& buffer) {
  call(request::kDeallocateBuffer, Json{{"buffer", encode(buffer)}});
  own_buffers_.freed(buffer.id);
}

void RemoteMeshDevice::require_writable(std::string_view call, const BufferHandle& buffer, std::size_t bytes) const {
  if (broken_) return;  // the call says the connection is closed
  if (reset_in_session_ || (first_own_buffer_id_ != 0 && buffer.id >= first_own_buffer_id_)) {
    own_buffers_.served(buffer, call);
  }
  require_whole_buffer(call, buffer, bytes);
}

void RemoteMeshDevice::require_within_host_limit(std::string_view call, std::uint64_t bytes) const {
  if (max_host_bytes_ && bytes > *max_host_bytes_) {
    throw HostBytesLimitError(host_bytes_limit_refusal(call, bytes, *max_host_bytes_));
  }
}

void RemoteMeshDevice::write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) {
  require_writable(request::kWriteBuffer, buffer, data.size());
  if (!broken_) require_within_host_limit(request::kWriteBuffer, data.size());
  call(request::kWriteBuffer, Json{{"chip", chip}, {"buffer", encode(buffer)}}, data);
}

void RemoteMeshDevice::read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> data) {
  if (!broken_) require_within_host_limit(request::kReadBuffer, data.size());
  call(request::kReadBuffer, Json{{"chip", chip}, {"buffer", encode(buffer)}, {"size_bytes", data.size()}}, {}, data);
}

void RemoteMeshDevice::require_room_for_enqueued(std::string_view call, std::uint64_t bytes) const {
  if (broken_) return;  // the call says the connection is closed
  require_within_host_limit(call, bytes);
  if (max_host_bytes_ && enqueued_host_bytes_ + bytes > *max_host_bytes_) {
    throw EnqueuedHostBytesError(enqueued_host_bytes_refusal(call, bytes, *max_host_bytes_, enqueued_host_bytes_));
  }
}

void RemoteMeshDevice::enqueue_write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) {
  require_writable(request::kEnqueueWriteBuffer, buffer, data.size());
  require_room_for_enqueued(request::kEnqueueWriteBuffer, data.size());
  call(request::kEnqueueWriteBuffer, Json{{"chip", chip}, {"buffer", encode(buffer)}}, data);
  enqueued_host_bytes_ += data.size();
}

void RemoteMeshDevice::enqueue_read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> out) {
  require_room_for_enqueued(request::kEnqueueReadBuffer, out.size());
  call(request::kEnqueueReadBuffer, Json{{"chip", chip}, {"buffer", encode(buffer)}, {"size_bytes", out.size()}});
  enqueued_reads_.push_back(out);  // the server accepted it: its bytes come with finish()'s reply
  enqueued_host_bytes_ += out.size();
}

GlobalSemaphore RemoteMeshDevice::create_global_semaphore(const std::vector<CoreRange>& cores, CoreKind kind,
                                                          std::uint32_t initial_value) {
  const Json reply = call(request::kCreateGlobalSemaphore,
                          Json{{"cores", encode_core_ranges(cores)}, {"core_kind", encode(kind)},
                               {"initial_value", initial_value}});
  return decoded(request::kCreateGlobalSemaphore, [&] {
    return decode_global_semaphore(field(reply, "semaphore", "create_global_semaphore reply"),
                                   "create_global_semaphore reply.semaphore");
  });
}

void RemoteMeshDevice::reset_global_semaphore(const GlobalSemaphore& semaphore, std::uint32_t value) {
  call(request::kResetGlobalSemaphore, Json{{"semaphore", encode(semaphore)}, {"value", value}});
}

void RemoteMeshDevice::deallocate_global_semaphore(const GlobalSemaphore& semaphore) {
  call(request::kDeallocateGlobalSemaphore, Json{{"semaphore", encode(semaphore)}});
}

void RemoteMeshDevice::enqueue_workloads(std::span<const MeshWorkload> workloads) {
  // One request for the lot: the server's device checks them all before it enqueues any.
  Json list = Json::array();
  for (const MeshWorkload& workload : workloads) list.push_back(encode(workload));
  call(request::kEnqueueWorkloads, Json{{"workloads", std::move(list)}});
}

void RemoteMeshDevice::finish() {
  // Whatever the reply, these reads are settled: delivered now, or dropped with a failed finish.
  const std::vector<std::span<std::byte>> reads = std::move(enqueued_reads_);
  enqueued_reads_.clear();
  std::size_t total = 0;
  for (const std::span<std::byte> out : reads) total += out.size();
  std::vector<std::byte> bytes(total);
  call(request::kFinish, Json::object(), {}, bytes);
  enqueued_host_bytes_ = 0;  // a finish that failed leaves them held at the server too
  std::size_t at = 0;
  for (const std::span<std::byte> out : reads) {
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), out.size(), out.begin());
    at += out.size();
  }
}

std::size_t RemoteMeshDevice::profile_size() const {
  const Json reply = call(request::kProfileSize, Json::object());
  return decoded(request::kProfileSize, [&] { return unsigned_field<std::size_t>(reply, "size", "profile_size reply"); });
}

std::vector<KernelProfile> RemoteMeshDevice::profile_since(std::size_t first_entry) const {
  const Json reply = call(request::kProfile, Json{{"first_entry", first_entry}});
  return decoded(request::kProfile, [&] {
    std::vector<KernelProfile> profile;
    const Json& list = array_field(reply, "profile", "profile reply");
    profile.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      profile.push_back(decode_kernel_profile(list[i], fmt::format("profile reply.profile[{}]", i)));
    }
    return profile;
  });
}

std::optional<std::vector<LinkTraffic>> RemoteMeshDevice::link_traffic() const {
  const Json reply = call(request::kLinkTraffic, Json::object());
  return decoded(request::kLinkTraffic, [&]() -> std::optional<std::vector<LinkTraffic>> {
    if (field(reply, "links", "link_traffic reply").is_null()) return std::nullopt;
    const Json& list = array_field(reply, "links", "link_traffic reply");
    std::vector<LinkTraffic> traffic;
    traffic.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      traffic.push_back(decode_link_traffic(list[i], fmt::format("link_traffic reply.links[{}]", i)));
    }
    return traffic;
  });
}

std::optional<std::uint64_t> RemoteMeshDevice::optional_figure(std::string_view call_type, const char* key) const {
  const Json reply = call(call_type, Json::object());
  const std::string what = fmt::format("{} reply", call_type);
  return decoded(call_type, [&]() -> std::optional<std::uint64_t> {
    if (field(reply, key, what).is_null()) return std::nullopt;
    return unsigned_field<std::uint64_t>(reply, key, what);
  });
}

std::optional<std::uint64_t> RemoteMeshDevice::device_time_ps() const {
  return optional_figure(request::kDeviceTime, "time_ps");
}

std::optional<std::uint64_t> RemoteMeshDevice::device_events() const {
  return optional_figure(request::kDeviceEvents, "events");
}

void RemoteMeshDevice::reset() {
  enqueued_reads_.clear();  // the served device drops them with its queue
  // The server forgets every handle before its device resets (whether or not the reset works).
  own_buffers_.clear();
  reset_in_session_ = true;
  call(request::kReset, Json::object());
  enqueued_host_bytes_ = 0;
}

std::vector<std::string> RemoteMeshDevice::fault_effects() const {
  const Json reply = call(request::kFaultEffects, Json::object());
  return decoded(request::kFaultEffects, [&] { return string_list_field(reply, "effects", "fault_effects reply"); });
}

void RemoteMeshDevice::shutdown_server() {
  call(request::kShutdown, Json::object());
  connection_->close();
  broken_ = fmt::format("remote device {}: the server was shut down by this client", endpoint_);
}

std::pair<std::string, std::uint16_t> parse_endpoint(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return std::invalid_argument(fmt::format("'{}' is not HOST:PORT or [IPv6]:PORT ({})", text, why));
  };
  // The port follows the last ':'; a host with a ':' of its own is an IPv6 address, which must be
  // in brackets: unbracketed, "127.0.0.1:5170:1" would be read as the host "127.0.0.1:5170".
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("no ':PORT'");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.starts_with('[') || host.ends_with(']')) {
    if (host.size() < 2 || !host.starts_with('[') || !host.ends_with(']')) throw bad("an unclosed '['");
    host = host.substr(1, host.size() - 2);
    if (host.find_first_of("[]") != std::string_view::npos) throw bad("brackets inside the brackets");
  } else if (host.find(':') != std::string_view::npos) {
    throw bad("more than one ':'; an IPv6 address goes in brackets, as [::1]:5170");
  }
  if (host.empty()) throw bad("no host");
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    throw bad("the port is a number from 1 to 65535");
  }
  return {std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace cclmesh::runtime::remote
