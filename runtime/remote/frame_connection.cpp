#include "runtime/remote/frame_connection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <cstring>
#include <optional>

namespace cclmesh::runtime::remote {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

// How often a wait without a deadline of its own looks at the stop flag.
constexpr std::chrono::milliseconds kStopPollInterval{100};

void put_u32(std::byte* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(v >> (8 * i));
}
void put_u64(std::byte* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(v >> (8 * i));
}
std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{std::to_integer<std::uint8_t>(at[i])} << (8 * i);
  return v;
}
std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(at[i])} << (8 * i);
  return v;
}

// The most of another protocol's bytes an error shows: enough to recognise it ("HTTP/1.1 400
// Bad Request", "SSH-2.0-OpenSSH_9.6"), not a page of it.
constexpr std::size_t kShownForeignBytes = 32;

// Printable ASCII as is, anything else escaped, so an error line stays one line.
std::string shown_bytes(std::span<const std::byte> bytes) {
  std::string shown;
  for (const std::byte b : bytes) {
    const auto c = std::to_integer<unsigned char>(b);
    if (c == '\r') {
      shown += "\\r";
    } else if (c == '\n') {
      shown += "\\n";
    } else if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      shown += fmt::format("\\x{:02x}", c);
    }
  }
  return shown;
}

bool starts_with_magic(std::span<const std::byte, 4> first) { return get_u32(first.data()) == kFrameMagic; }

std::string seconds_text(std::chrono::milliseconds t) { return fmt::format("{:g} s", static_cast<double>(t.count()) / 1000.0); }

// Runs `io` until `done` is set, `deadline` passes or `stop` is set; true when done. A zero
// deadline (time_point::max()) waits without bound, polling `stop`.
bool run_until(asio::io_context& io, const std::optional<error_code>& done, FrameConnection::Clock::time_point deadline,
               const std::atomic<bool>* stop) {
  io.restart();
  while (!done) {
    if (stop != nullptr && stop->load()) return false;
    const auto now = FrameConnection::Clock::now();
    if (now >= deadline) return false;
    const auto slice = std::min<FrameConnection::Clock::duration>(deadline - now, kStopPollInterval);
    // One handler at a time: other work on `io` (the server's accept of clients it turns away
    // while a session runs) must not keep this wait going once `done` is set.
    io.run_one_for(slice);
    if (io.stopped()) io.restart();
  }
  return true;
}

FrameConnection::Clock::time_point deadline_after(std::chrono::milliseconds t) {
  return t.count() == 0 ? FrameConnection::Clock::time_point::max() : FrameConnection::Clock::now() + t;
}

std::string describe(const error_code& ec) {
  if (ec == asio::error::eof) return "the connection was closed by the other side";
  if (ec == asio::error::connection_reset) return "the connection was reset by the other side";
  if (ec == asio::error::broken_pipe) return "the connection was closed by the other side (broken pipe)";
  return ec.message();
}

}  // namespace

NotThisProtocol::NotThisProtocol(std::string seen)
    : ConnectionError(fmt::format("the peer does not speak the cclmesh remote device protocol (it sent \"{}\", a frame "
                                  "starts with \"CCLM\")",
                                  seen)),
      seen_(std::move(seen)) {}

FrameConnection::FrameConnection(asio::io_context& io, tcp::socket socket) : io_(io), socket_(std::move(socket)) {
  error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
  socket_.set_option(asio::socket_base::keep_alive(true), ignored);
}

void FrameConnection::write_all(std::span<const std::byte> from, std::chrono::milliseconds timeout) {
  while (!from.empty()) {
    std::optional<error_code> done;
    std::size_t moved = 0;
    socket_.async_write_some(asio::buffer(from.data(), from.size()), [&](const error_code& ec, std::size_t n) {
      done = ec;
      moved = n;
    });
    if (!run_until(io_, done, deadline_after(timeout), nullptr)) {
      error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      while (!done) io_.run_one();
      if (!*done) {  // the write completed while being cancelled
        from = from.subspan(moved);
        continue;
      }
      throw ConnectionError(fmt::format("no byte could be sent for {}", seconds_text(timeout)));
    }
    if (*done) throw ConnectionError(describe(*done));
    from = from.subspan(moved);
  }
}

void FrameConnection::read_exactly(std::span<std::byte> into, std::chrono::milliseconds idle_timeout,
                                   std::chrono::milliseconds timeout, const std::atomic<bool>* stop) {
  bool first = true;
  while (!into.empty()) {
    std::optional<error_code> done;
    std::size_t moved = 0;
    socket_.async_read_some(asio::buffer(into.data(), into.size()), [&](const error_code& ec, std::size_t n) {
      done = ec;
      moved = n;
    });
    const std::chrono::milliseconds limit = first ? idle_timeout : timeout;
    if (!run_until(io_, done, deadline_after(limit), stop)) {
      error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      while (!done) io_.run_one();
      if (!*done) {  // the read completed while being cancelled
        into = into.subspan(moved);
        first = false;
        continue;
      }
      if (stop != nullptr && stop->load()) throw ConnectionError("stopped");
      throw NothingReceived(fmt::format("nothing was received for {}", seconds_text(limit)));
    }
    if (*done) throw ConnectionError(describe(*done));
    into = into.subspan(moved);
    first = false;
  }
}

void FrameConnection::send(std::span<const std::uint8_t> header, std::span<const std::byte> blob,
                           std::chrono::milliseconds timeout) {
  if (header.size() > kMaxHeaderBytes) {
    throw ConnectionError(fmt::format("a message of {} B is larger than the protocol's {} B", header.size(), kMaxHeaderBytes));
  }
  std::vector<std::byte> lead_and_header = frame_bytes(header);
  put_u64(lead_and_header.data() + 8, blob.size());
  write_all(lead_and_header, timeout);
  write_all(blob, timeout);
}

FrameLead parse_frame_lead(std::span<const std::byte, kFrameLeadBytes> lead) {
  if (!starts_with_magic(lead.first<4>())) throw NotThisProtocol(shown_bytes(lead));
  const std::uint32_t header_bytes = get_u32(lead.data() + 4);
  const std::uint64_t blob_bytes = get_u64(lead.data() + 8);
  if (header_bytes > kMaxHeaderBytes) {
    throw FrameTooLarge(fmt::format("a frame's header length is {} B, above the limit of {} B", header_bytes,
                                    kMaxHeaderBytes));
  }
  if (blob_bytes > kMaxBlobBytes) {
    throw FrameTooLarge(fmt::format("a frame's data length is {} B, above the limit of {} B", blob_bytes, kMaxBlobBytes));
  }
  return FrameLead{header_bytes, blob_bytes};
}

Frame FrameConnection::receive(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds timeout,
                               const BlobTarget& blob_target, const std::atomic<bool>* stop) {
  std::byte lead[kFrameLeadBytes];
  // The magic first: a peer of another protocol that sent a few bytes and waits (an HTTP server
  // answering half a request, a banner shorter than a frame's lead) is told apart at once.
  read_exactly(std::span(lead).first(4), idle_timeout, timeout, stop);
  if (!starts_with_magic(std::span(lead).first<4>())) throw_not_this_protocol(std::span(lead).first<4>());
  read_exactly(std::span(lead).subspan(4), timeout, timeout, nullptr);
  const FrameLead sizes = parse_frame_lead(lead);
  const std::uint32_t header_bytes = sizes.header_bytes;
  const std::uint64_t blob_bytes = sizes.blob_bytes;
  Frame frame;
  // Grown as the header arrives: a peer that announces 64 MiB and sends 16 B costs 1 MiB.
  constexpr std::size_t kHeaderChunk = std::size_t{1} << 20;
  while (frame.header.size() < header_bytes) {
    const std::size_t at = frame.header.size();
    frame.header.resize(std::min<std::size_t>(header_bytes, at + kHeaderChunk));
    read_exactly(std::as_writable_bytes(std::span(frame.header)).subspan(at), timeout, timeout, nullptr);
  }
  std::span<std::byte> target;
  if (blob_target) {
    try {
      target = blob_target(frame.header, blob_bytes);
    } catch (const BlobRefused&) {
      skip_exactly(blob_bytes, timeout);
      throw;
    }
  }
  if (!target.empty()) {
    read_exactly(target, timeout, timeout, nullptr);
    return frame;
  }
  // Collected in Frame::blob, grown as the data arrives, doubling from 1 MiB: a peer that
  // announces 1 GiB and sends 16 B costs 1 MiB, one that sends it all at most twice what it sent.
  constexpr std::uint64_t kFirstBlobChunk = std::uint64_t{1} << 20;
  while (frame.blob.size() < blob_bytes) {
    const std::size_t at = frame.blob.size();
    const std::uint64_t grown = at + std::max<std::uint64_t>(at, kFirstBlobChunk);
    frame.blob.resize(static_cast<std::size_t>(std::min(blob_bytes, grown)));
    read_exactly(std::span(frame.blob).subspan(at), timeout, timeout, nullptr);
  }
  return frame;
}

void FrameConnection::throw_not_this_protocol(std::span<const std::byte> first) {
  // Shows what else already arrived with the first bytes, without waiting for more.
  std::vector<std::byte> seen(first.begin(), first.end());
  error_code ec;
  const std::size_t ready = std::min(socket_.available(ec), kShownForeignBytes - seen.size());
  if (!ec && ready > 0) {
    seen.resize(first.size() + ready);
    seen.resize(first.size() + socket_.read_some(asio::buffer(seen.data() + first.size(), ready), ec));
  }
  throw NotThisProtocol(shown_bytes(seen));
}

void FrameConnection::skip_exactly(std::uint64_t bytes, std::chrono::milliseconds timeout) {
  std::vector<std::byte> sink(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, 64 * 1024)));
  while (bytes > 0) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, sink.size()));
    read_exactly(std::span(sink).first(n), timeout, timeout, nullptr);
    bytes -= n;
  }
}

void FrameConnection::discard_incoming(std::chrono::milliseconds for_at_most) {
  const Clock::time_point deadline = Clock::now() + for_at_most;
  std::vector<std::byte> sink(64 * 1024);
  for (;;) {
    std::optional<error_code> done;
    socket_.async_read_some(asio::buffer(sink.data(), sink.size()),
                            [&](const error_code& ec, std::size_t) { done = ec; });
    if (!run_until(io_, done, deadline, nullptr)) {
      error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      while (!done) io_.run_one();
      return;
    }
    if (*done) return;  // closed or reset: nothing more will come
  }
}

void FrameConnection::shutdown_send() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
}

std::string FrameConnection::peer() const {
  error_code ec;
  const tcp::endpoint ep = socket_.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

void FrameConnection::close() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

std::vector<std::byte> frame_bytes(std::span<const std::uint8_t> header) {
  std::vector<std::byte> bytes(kFrameLeadBytes + header.size());
  put_u32(bytes.data(), kFrameMagic);
  put_u32(bytes.data() + 4, static_cast<std::uint32_t>(header.size()));
  put_u64(bytes.data() + 8, 0);
  if (!header.empty()) std::memcpy(bytes.data() + kFrameLeadBytes, header.data(), header.size());
  return bytes;
}

tcp::socket connect_socket(asio::io_context& io, const std::string& host, std::uint16_t port,
                           std::chrono::milliseconds timeout) {
  tcp::resolver resolver(io);
  error_code ec;
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) throw ConnectionError(fmt::format("cannot resolve host '{}': {}", host, ec.message()));
  tcp::socket socket(io);
  std::optional<error_code> done;
  asio::async_connect(socket, endpoints, [&](const error_code& e, const tcp::endpoint&) { done = e; });
  if (!run_until(io, done, deadline_after(timeout), nullptr)) {
    error_code ignored;
    socket.close(ignored);
    io.restart();
    while (!done) io.run_one();
    throw NotAccepting(fmt::format("no connection within {}", seconds_text(timeout)));
  }
  if (*done == asio::error::connection_refused || *done == asio::error::host_unreachable ||
      *done == asio::error::network_unreachable || *done == asio::error::timed_out) {
    throw NotAccepting(fmt::format("cannot connect: {}", done->message()));
  }
  if (*done) throw ConnectionError(fmt::format("cannot connect: {}", done->message()));
  return socket;
}

}  // namespace cclmesh::runtime::remote
