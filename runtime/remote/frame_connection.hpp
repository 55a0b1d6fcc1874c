#pragma once
// One TCP connection carrying the remote device protocol's frames (docs/remote_device.md):
//
//   magic "CCLM" | u32 header bytes | u64 blob bytes | header (CBOR) | blob (raw bytes)
//
// little-endian lengths. The header is a small structured message; the blob carries bulk
// buffer bytes as they are, so a 1 GiB tensor crosses as 1 GiB. Every wait has a deadline
// that restarts whenever bytes move ("no progress for `timeout`"), so a large transfer on a
// slow link is not cut short while a dead peer is still noticed. Nothing here reads a clock
// inside a simulation: the connection lives beside the device, never inside it.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace cclmesh::runtime::remote {

inline constexpr std::uint32_t kFrameMagic = 0x4D4C4343;        // "CCLM" read as a little-endian u32
// A header's length is checked before anything is allocated for it, and its buffer grows only
// as its bytes arrive, so a peer announcing a large header costs what it sends, not what it says.
inline constexpr std::uint32_t kMaxHeaderBytes = 64u << 20;     // a message; bulk bytes go in the blob
inline constexpr std::uint64_t kMaxBlobBytes = 64ull << 30;     // larger than any chip's DRAM
inline constexpr std::size_t kFrameLeadBytes = 16;              // magic, header size, blob size

// The connection failed: closed by the peer, reset, timed out, or the bytes are not this
// protocol's frames. The message says what happened, without the endpoint (callers add it).
class ConnectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nothing accepts a connection at the address (refused, unreachable, or no answer within the
// connect timeout): a server still starting may accept later, where a name that does not
// resolve will not. RemoteMeshDevice retries these for its connect_wait.
class NotAccepting : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};

// The peer's first bytes are not this protocol's magic: some other service (an HTTP server, an
// SSH daemon) answered. The message shows what it sent, briefly.
class NotThisProtocol : public ConnectionError {
 public:
  // `seen`: the bytes received, printable ASCII as is and others escaped ("HTTP/1.1 400 ...").
  explicit NotThisProtocol(std::string seen);
  const std::string& seen() const { return seen_; }

 private:
  std::string seen_;
};

// No byte arrived within the timeout. Before a reply's first byte at hello, a peer that accepts
// and says nothing: likely not a cclmesh server, which answers a hello at once.
class NothingReceived : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};

// A frame announces more than the receiver accepts (a header above kMaxHeaderBytes, or a blob
// the message does not carry or larger than the call needs): refused before its bytes are
// allocated or read. The message names the length field and the limit.
class FrameTooLarge : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};

// Thrown by a BlobTarget to refuse a blob the receiver will not use but can afford to read past
// (a write naming a buffer it will not write, of no more bytes than the receiver allows for
// that): receive() reads and drops the blob, so that the connection is at the next frame, then
// throws it on, and the session can go on. The message says why the request is refused.
class BlobRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Frame {
  std::vector<std::uint8_t> header;  // CBOR
  std::vector<std::byte> blob;       // empty unless the message carries bulk bytes
};

// A frame's lengths, from its first kFrameLeadBytes.
struct FrameLead {
  std::uint32_t header_bytes = 0;
  std::uint64_t blob_bytes = 0;
};
// Reads a frame's lead as it arrived, before anything is allocated for the frame: NotThisProtocol
// when it does not start with the magic, FrameTooLarge when a length passes its limit.
FrameLead parse_frame_lead(std::span<const std::byte, kFrameLeadBytes> lead);

// Where an incoming blob of `bytes` goes, decided once the frame's header (CBOR, not yet
// decoded) has arrived: a caller-owned span of exactly that size (read straight into, no copy),
// or an empty span to collect it in Frame::blob (grown as its bytes arrive, as the header). It throws FrameTooLarge to refuse a blob the
// message cannot carry, before any of it is allocated or read, or BlobRefused to have it read and
// dropped.
using BlobTarget = std::function<std::span<std::byte>(const std::vector<std::uint8_t>& header, std::uint64_t bytes)>;

class FrameConnection {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes a connected socket bound to `io`, which this connection runs (one thread at a time).
  FrameConnection(boost::asio::io_context& io, boost::asio::ip::tcp::socket socket);

  // Sends header and blob; throws ConnectionError when no byte moves for `timeout`.
  void send(std::span<const std::uint8_t> header, std::span<const std::byte> blob, std::chrono::milliseconds timeout);

  // Waits for the next frame. `idle_timeout` bounds the wait for its first byte (zero: no
  // bound), `timeout` every later stall. While waiting, `stop` (when given) is polled: once
  // set, the wait ends with ConnectionError("stopped").
  Frame receive(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds timeout,
                const BlobTarget& blob_target = {}, const std::atomic<bool>* stop = nullptr);

  // Reads and drops whatever the peer still sends, until it closes or `for_at_most` has passed
  // (after refusing a frame: the peer, still sending, then reads the reply instead of a reset).
  void discard_incoming(std::chrono::milliseconds for_at_most);
  // No more bytes from this side: the peer reads what was sent, then end of stream.
  void shutdown_send();

  // "127.0.0.1:5170" of the peer, or "unknown peer".
  std::string peer() const;
  void close();

 private:
  void read_exactly(std::span<std::byte> into, std::chrono::milliseconds idle_timeout, std::chrono::milliseconds timeout,
                    const std::atomic<bool>* stop);
  void write_all(std::span<const std::byte> from, std::chrono::milliseconds timeout);
  // Throws NotThisProtocol showing `first` (a frame's first bytes, not the magic) and what
  // else has already arrived, up to a short line of it.
  [[noreturn]] void throw_not_this_protocol(std::span<const std::byte> first);
  // Reads `bytes` and drops them, a bounded chunk at a time (nothing of their size is allocated).
  void skip_exactly(std::uint64_t bytes, std::chrono::milliseconds timeout);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::socket socket_;
};

// The bytes of one frame without a blob (lead and header), for a caller writing it itself.
std::vector<std::byte> frame_bytes(std::span<const std::uint8_t> header);

// Connects to host:port within `timeout`; throws ConnectionError naming what failed (name
// resolution), NotAccepting when the address is refused, unreachable or silent for `timeout`.
boost::asio::ip::tcp::socket connect_socket(boost::asio::io_context& io, const std::string& host, std::uint16_t port,
                                            std::chrono::milliseconds timeout);

}  // namespace cclmesh::runtime::remote
