#pragma once
// The server's bound on one host write or read and on the enqueued ones held until a finish()
// (RemoteServerOptions::max_enqueued_host_bytes, `cclmesh serve --max-enqueued-host`): the
// refusals' words, one for the server and the client.
//
// The server holds a direct write_buffer's or read_buffer's bytes whole for the call, and a
// device's buffer may be far larger than what it holds (a timing-only device's have any size, a
// functional one's pages are made as they are written), so past the bound it refuses the call.
// The hello tells a client the bound (its `max_host_bytes`), and RemoteMeshDevice refuses such a
// call itself with the same words, sending nothing: a 2 GiB write is not sent only to be dropped,
// and `cclmesh run --device` refuses a tensor past it before the op runs (review, session 30).

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cclmesh::runtime::remote {

// A host write or read of more bytes than the server holds for one (std::invalid_argument, as
// the server's own refusal arrives, so a caller that takes any refusal takes this one).
class HostBytesLimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// "`call`: N B is more than this server holds for a client's host write or read (L B, serve
// --max-enqueued-host)".
inline std::string host_bytes_limit_refusal(std::string_view call, std::uint64_t bytes, std::uint64_t limit) {
  return fmt::format("{}: {} B is more than this server holds for a client's host write or read ({} B, serve "
                     "--max-enqueued-host)",
                     call, bytes, limit);
}

// An enqueue_write_buffer or enqueue_read_buffer whose bytes, with those enqueued and held until
// a finish(), pass the same bound (the server holds them all until then). The client knows the
// bytes its own session enqueued since its last finish() that completed or reset(); the server
// starts each session with none held (it resets a device an earlier session left with work
// unfinished or failed), so the client's count is the server's and it refuses such an enqueue
// itself. Where the server still held an earlier session's bytes (a server run with
// RemoteServerOptions::reset_after_failed_session off, or whose reset between sessions failed),
// the client's count is lower, never higher: the server refuses what the client lets through.
class EnqueuedHostBytesError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// "`call`: N B more would pass this server's limit of L B of enqueued host writes and reads (H B
// held until finish()); call finish() first".
inline std::string enqueued_host_bytes_refusal(std::string_view call, std::uint64_t bytes, std::uint64_t limit,
                                               std::uint64_t held) {
  return fmt::format("{}: {} B more would pass this server's limit of {} B of enqueued host writes and reads ({} B "
                     "held until finish()); call finish() first",
                     call, bytes, limit, held);
}

// A create_buffer on a device that keeps buffer bytes whose size on every chip, with the buffers
// its clients hold, passes RemoteServerOptions::max_buffer_host_bytes: "create_buffer: a buffer
// of N B on each of C chips with the H B of buffers held would pass this server's host memory
// for buffers, L B (serve --max-host-memory); free buffers first, or ask for fewer bytes ...".
inline std::string host_memory_limit_refusal(std::uint64_t bytes_per_chip, std::uint64_t chips, std::uint64_t held,
                                             std::uint64_t limit) {
  return fmt::format("create_buffer: a buffer of {} B on each of {} chips with the {} B of buffers held would pass "
                     "this server's host memory for buffers, {} B (serve --max-host-memory); free buffers first, or "
                     "ask for fewer bytes (a device served with --no-data holds none)",
                     bytes_per_chip, chips, held, limit);
}

}  // namespace cclmesh::runtime::remote
