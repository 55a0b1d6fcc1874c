#pragma once
// A peer that plays a cclmesh server to one RemoteMeshDevice in the same process, over a loopback
// TCP connection, for fuzz_remote_replies and its seeds. RemoteMeshDevice connects by host and
// port itself (there is no socket to hand it), so the peer is a real listener on 127.0.0.1.
// Plain POSIX sockets, not the FrameConnection under test, on a thread of its own per session.
//
// Two ways to answer:
// - send_all: every byte of a session's replies sent at once, then the sending side shut; the
//   client reads them whatever it asked (a hostile or broken server), and once they run out it
//   reads end of stream at once: no wait anywhere, however the bytes end.
// - answer_each: one request read at a time (lead, header, blob) and answered with what the
//   given function returns for it (the seeds: a real ServedRequests' replies, recorded).
// Either way the peer then reads until the client closes, so that closing never resets a
// connection whose last replies the client has not read yet.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cclmesh::fuzz {

class ScriptedPeer {
 public:
  // One request as it arrived: its CBOR header and its blob.
  struct Request {
    std::vector<std::uint8_t> header;
    std::vector<std::byte> blob;
  };
  using Answer = std::function<std::vector<std::byte>(const Request&)>;

  ScriptedPeer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener_ < 0) throw std::runtime_error("scripted peer: socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;  // an ephemeral port
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ::close(listener_);
      throw std::runtime_error("scripted peer: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
  }
  ~ScriptedPeer() {
    join();
    ::close(listener_);
  }
  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;

  std::uint16_t port() const { return port_; }

  // The next session gets `bytes`, whatever it sends.
  void send_all(std::vector<std::byte> bytes) {
    join();
    session_ = std::thread([this, bytes = std::move(bytes)] {
      const int connection = accept_one();
      if (connection < 0) return;
      write_all(connection, bytes);
      ::shutdown(connection, SHUT_WR);
      drain(connection);
      ::close(connection);
    });
  }

  // The next session gets answer(request) for each request, until the client closes.
  void answer_each(Answer answer) {
    join();
    session_ = std::thread([this, answer = std::move(answer)] {
      const int connection = accept_one();
      if (connection < 0) return;
      Request request;
      while (read_request(connection, request)) write_all(connection, answer(request));
      ::close(connection);
    });
  }

  // Waits for the session's end (the client closed, or never connected within a second).
  void join() {
    if (session_.joinable()) session_.join();
  }

 private:
  int accept_one() const {
    pollfd waiting{listener_, POLLIN, 0};
    if (::poll(&waiting, 1, 1000) != 1) return -1;
    return ::accept(listener_, nullptr, nullptr);
  }
  static void write_all(int connection, std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(connection, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return;  // the client closed: what it did not read it does not need
      bytes = bytes.subspan(static_cast<std::size_t>(sent));
    }
  }
  static bool read_exactly(int connection, std::span<std::byte> into) {
    while (!into.empty()) {
      const ssize_t got = ::recv(connection, into.data(), into.size(), 0);
      if (got <= 0) return false;
      into = into.subspan(static_cast<std::size_t>(got));
    }
    return true;
  }
  static void drain(int connection) {
    std::byte sink[4096];
    while (::recv(connection, sink, sizeof sink, 0) > 0) {
    }
  }
  // A request frame: "CCLM", u32 header bytes, u64 blob bytes (little-endian), header, blob.
  static bool read_request(int connection, Request& request) {
    std::byte lead[16];
    if (!read_exactly(connection, lead)) return false;
    std::uint64_t header_bytes = 0;
    std::uint64_t blob_bytes = 0;
    for (int i = 0; i < 4; ++i) header_bytes |= std::uint64_t{std::to_integer<std::uint8_t>(lead[4 + i])} << (8 * i);
    for (int i = 0; i < 8; ++i) blob_bytes |= std::uint64_t{std::to_integer<std::uint8_t>(lead[8 + i])} << (8 * i);
    if (header_bytes > (1u << 20) || blob_bytes > (64u << 20)) return false;  // not the script's client
    request.header.resize(header_bytes);
    request.blob.resize(blob_bytes);
    return read_exactly(connection, std::as_writable_bytes(std::span(request.header))) &&
           read_exactly(connection, request.blob);
  }

  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread session_;
};

}  // namespace cclmesh::fuzz
