// A RemoteDeviceServer against clients that do not play by the protocol, from a raw socket:
// frames announcing huge lengths, data on calls that carry none, a forged buffer handle, garbage
// instead of frames, frames cut short, silence. The server allocates nothing it was not going
// to need, answers a refused frame with one error naming the length and the limit, ends that
// session only, and serves the next client; a write it refuses as a device would (a stale
// handle, another size) it reads past, and the session goes on.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <future>
#include <memory>
#include <sys/socket.h>
#include <string>
#include <thread>
#include <vector>

#include "forwarding_mesh_device.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::remote {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// A simulated N300 served from a thread of this test until destroyed.
struct ServedN300 {
  sim::device::SimMeshDevice device{topo::load_system("n300"), {}};
  RemoteDeviceServer server;
  std::thread thread;
  explicit ServedN300(RemoteServerOptions options = {})
      : server(device, std::move(options)), thread([this] { server.serve(); }) {}
  ~ServedN300() {
    server.stop();
    thread.join();
  }
  std::uint16_t port() const { return server.port(); }
};

// The 16 B that open a frame, as a hostile client writes them.
std::vector<std::uint8_t> lead(std::uint32_t header_bytes, std::uint64_t blob_bytes, std::uint32_t magic = kFrameMagic) {
  std::vector<std::uint8_t> out(kFrameLeadBytes);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(magic >> (8 * i));
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<std::uint8_t>(header_bytes >> (8 * i));
  for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<std::uint8_t>(blob_bytes >> (8 * i));
  return out;
}

// A client that writes whatever bytes it likes, and reads frames back.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port)
      : socket_(connect_socket(io_, "127.0.0.1", port, 5000ms)), fd_(socket_.native_handle()), frames_(io_, std::move(socket_)) {}
  void write(const std::vector<std::uint8_t>& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server closed first: what it answered is still to be read
      sent += static_cast<std::size_t>(n);
    }
  }
  // A frame with `header` and a blob length of `blob_bytes`, of which nothing is sent.
  void write_frame(const Json& header, std::uint64_t blob_bytes = 0) {
    const std::vector<std::uint8_t> cbor = to_wire(header);
    std::vector<std::uint8_t> bytes = lead(static_cast<std::uint32_t>(cbor.size()), blob_bytes);
    bytes.insert(bytes.end(), cbor.begin(), cbor.end());
    write(bytes);
  }
  // A frame with `header` and `blob_bytes` of data, all sent.
  void write_frame_and_data(const Json& header, std::size_t blob_bytes) {
    write_frame(header, blob_bytes);
    write(std::vector<std::uint8_t>(blob_bytes, 0x5A));
  }
  Json read_reply() { return from_wire(frames_.receive(5000ms, 5000ms).header); }
  // True when the server ends the session (end of stream or reset) within 5 s.
  bool closed_by_server() {
    try {
      frames_.receive(5000ms, 5000ms);
      return false;
    } catch (const ConnectionError& e) {
      return std::string(e.what()).find("by the other side") != std::string::npos;
    }
  }
  // Says hello; false when the server is still busy with the previous session.
  bool hello() {
    write_frame(Json{{"type", "hello"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}});
    const Json reply = read_reply();
    if (reply.at("type") == "error" && reply.at("kind") == "busy") return false;
    EXPECT_EQ(reply.at("type"), "ok");
    return true;
  }
  void close() { frames_.close(); }
  // Gone at once with a reset (SO_LINGER 0), as a killed client is.
  void reset() {
    const linger now{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &now, sizeof now);
    frames_.close();
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  int fd_;
  FrameConnection frames_;
};

// A client past its hello, once the previous session (the test's last client) has ended.
std::unique_ptr<RawClient> greeted(std::uint16_t port) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto client = std::make_unique<RawClient>(port);
    if (client->hello()) return client;
    std::this_thread::sleep_for(100ms);
  }
  throw std::runtime_error("the server stayed busy for 5 s");
}

// The refusal a hostile frame gets: one protocol error with `message`, then the end of the session.
void expect_refused(RawClient& client, const std::string& message) {
  const Json reply = client.read_reply();
  EXPECT_EQ(reply.at("type"), "error");
  EXPECT_EQ(reply.at("kind"), "protocol");
  EXPECT_EQ(reply.at("message"), message);
  EXPECT_TRUE(client.closed_by_server());
}

std::string read_reply_message(RawClient& client) {
  const Json reply = client.read_reply();
  EXPECT_EQ(reply.at("type"), "error");
  return reply.value("message", std::string());
}

// The server still serves: a real client's call after the hostile one.
void expect_serves_next_client(std::uint16_t port) {
  RemoteMeshDevice device("127.0.0.1", port, {.connect_timeout = 5s, .io_timeout = 5s});
  EXPECT_EQ(device.chips(), (std::vector<ChipId>{0, 1}));
}

TEST(HostileClient, HugeHeaderLengthIsRefusedUnread) {
  ServedN300 served;
  RawClient client(served.port());
  client.write(lead(0xFFFFFFFFu, 0));
  expect_refused(client, "a frame's header length is 4294967295 B, above the limit of 67108864 B");
  expect_serves_next_client(served.port());
}

TEST(HostileClient, HugeDataLengthIsRefusedUnread) {
  ServedN300 served;
  RawClient client(served.port());
  client.write(lead(16, ~std::uint64_t{0}));
  expect_refused(client, "a frame's data length is 18446744073709551615 B, above the limit of 68719476736 B");
  expect_serves_next_client(served.port());
}

TEST(HostileClient, DataOnACallThatCarriesNoneIsRefused) {
  ServedN300 served;
  {
    RawClient client(served.port());
    client.write_frame(Json{{"type", "hello"}, {"protocol", kProtocolName}, {"version", kProtocolVersion}}, 1ull << 30);
    expect_refused(client, "hello request's data length is 1073741824 B; it carries no data (limit 0 B)");
  }
  {
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", "topology"}}, 10);
    expect_refused(client, "topology request's data length is 10 B; it carries no data (limit 0 B)");
  }
  expect_serves_next_client(served.port());
}

// A write the server will not make, sent anyway by a client that does not check first (as
// RemoteMeshDevice does): a size other than the buffer's, a buffer freed, one from before a
// reset. Its bytes are read past, the refusal is the device's (std::invalid_argument) and the
// session goes on; for both write calls.
TEST(HostileClient, RefusedWritesAreReadPastAndTheSessionGoesOn) {
  ServedN300 served;
  BufferHandle buffer;
  {
    RemoteMeshDevice device("127.0.0.1", served.port());
    buffer = device.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  }
  auto greeted_client = greeted(served.port());
  RawClient& client = *greeted_client;
  const auto expect_invalid_argument = [&](const std::string& message) {
    const Json reply = client.read_reply();
    EXPECT_EQ(reply.at("type"), "error");
    EXPECT_EQ(reply.value("kind", std::string()), "invalid_argument");
    EXPECT_EQ(reply.value("message", std::string()), message);
    client.write_frame(Json{{"type", "chips"}});
    EXPECT_EQ(client.read_reply().at("type"), "ok");  // the same session, served
  };
  const std::string id = std::to_string(buffer.id);
  for (const std::string call : {"write_buffer", "enqueue_write_buffer"}) {
    client.write_frame_and_data(Json{{"type", call}, {"chip", 0}, {"buffer", encode(buffer)}}, 4097);
    expect_invalid_argument(call + ": 4097 B for a buffer of 4096 B");
    client.write_frame_and_data(Json{{"type", call}, {"chip", 0}, {"buffer", encode(buffer)}}, 100);
    expect_invalid_argument(call + ": 100 B for a buffer of 4096 B");
  }
  client.write_frame(Json{{"type", "deallocate_buffer"}, {"buffer", encode(buffer)}});
  EXPECT_EQ(client.read_reply().at("type"), "ok");
  for (const std::string call : {"write_buffer", "enqueue_write_buffer"}) {
    client.write_frame_and_data(Json{{"type", call}, {"chip", 0}, {"buffer", encode(buffer)}}, 4096);
    expect_invalid_argument(call + ": buffer " + id + " was freed already (deallocate_buffer)");
  }
  client.write_frame(Json{{"type", "create_buffer"}, {"config", encode(buffer.config)}});
  const BufferHandle before = decode_buffer_handle(client.read_reply().at("buffer"), "buffer");
  client.write_frame(Json{{"type", "reset"}});
  EXPECT_EQ(client.read_reply().at("type"), "ok");
  for (const std::string call : {"write_buffer", "enqueue_write_buffer"}) {
    client.write_frame_and_data(Json{{"type", call}, {"chip", 0}, {"buffer", encode(before)}}, 4096);
    expect_invalid_argument(call + ": buffer " + std::to_string(before.id) +
                            " is not one this server created (or not as it was created)");
  }
}

// A write past what the server reads to refuse one (the larger of its buffer's size per chip and
// kMaxRefusedWriteBytes), or naming a buffer the server did not give with more than that, is
// refused unread and ends the session: a stray client cannot make the server read gigabytes.
TEST(HostileClient, WriteBufferDataAboveTheBufferIsRefused) {
  ServedN300 served;
  BufferHandle buffer;
  {
    RemoteMeshDevice device("127.0.0.1", served.port());
    buffer = device.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  }
  for (const std::string call : {"write_buffer", "enqueue_write_buffer"}) {
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", call}, {"chip", 0}, {"buffer", encode(buffer)}}, kMaxRefusedWriteBytes + 1);
    expect_refused(client, call + " request's data length is 67108865 B, above the limit of 67108864 B (the larger "
                                  "of buffer " +
                               std::to_string(buffer.id) +
                               "'s size per chip, 4096 B, and what this server reads to refuse a write)");
  }
  {
    BufferHandle forged = buffer;
    forged.config.size_bytes = 1ull << 36;
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", "write_buffer"}, {"chip", 0}, {"buffer", encode(forged)}}, 1ull << 36);
    expect_refused(client, "write_buffer request's data length is 68719476736 B, but write_buffer: buffer " +
                               std::to_string(buffer.id) +
                               " is not one this server created (or not as it was created) (limit 67108864 B, what "
                               "this server reads to refuse a write)");
  }
  // read_buffer of a forged size: an error reply, before anything is allocated; the session goes on.
  {
    BufferHandle forged = buffer;
    forged.config.size_bytes = 1ull << 36;
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", "read_buffer"}, {"chip", 0}, {"buffer", encode(forged)}, {"size_bytes", 1ull << 36}});
    EXPECT_EQ(read_reply_message(client), "read_buffer: buffer " + std::to_string(buffer.id) +
                                              " is not one this server created (or not as it was created)");
    client.write_frame(Json{{"type", "read_buffer"}, {"chip", 0}, {"buffer", encode(buffer)}, {"size_bytes", 1ull << 36}});
    EXPECT_EQ(read_reply_message(client), "read_buffer.size_bytes: 68719476736 is above the field's maximum 4096");
    client.write_frame(Json{{"type", "chips"}});
    EXPECT_EQ(client.read_reply().at("type"), "ok");
  }
  // And the real client writes and reads it as before.
  RemoteMeshDevice device("127.0.0.1", served.port());
  std::vector<std::byte> data(4096, std::byte{0x3C});
  device.write_buffer(1, buffer, data);
  std::vector<std::byte> back(4096);
  device.read_buffer(1, buffer, back);
  EXPECT_EQ(back, data);
}

TEST(HostileClient, GarbageInsteadOfFramesEndsThatSessionOnly) {
  ServedN300 served;
  {
    RawClient client(served.port());
    const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    client.write(std::vector<std::uint8_t>(http.begin(), http.end()));
    EXPECT_TRUE(client.closed_by_server());
  }
  expect_serves_next_client(served.port());
}

// A client that disconnects in the middle of a frame (its header, or a write_buffer's data).
TEST(HostileClient, FramesCutShortEndThatSessionOnly) {
  ServedN300 served;
  {
    RawClient client(served.port());
    std::vector<std::uint8_t> bytes = lead(100, 0);
    bytes.resize(bytes.size() + 10, 0xA0);
    client.write(bytes);
    client.close();
  }
  expect_serves_next_client(served.port());
  BufferHandle buffer;
  {
    RemoteMeshDevice device("127.0.0.1", served.port());
    buffer = device.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  }
  {
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", "write_buffer"}, {"chip", 0}, {"buffer", encode(buffer)}}, 4096);
    client.write(std::vector<std::uint8_t>(1000, 0x11));
    client.close();
  }
  expect_serves_next_client(served.port());
}

// A client that connects and says nothing, or says hello and then nothing, cannot hold the one
// session: it is dropped after the hello / idle timeout and the waiting client is served.
TEST(HostileClient, SilentClientsAreDroppedSoTheNextIsServed) {
  RemoteServerOptions options;
  options.hello_timeout = 300ms;
  options.idle_timeout = 300ms;
  options.io_timeout = 30s;
  ServedN300 served(options);
  {
    RawClient silent(served.port());
    expect_serves_next_client(served.port());
    EXPECT_TRUE(silent.closed_by_server());
  }
  RemoteMeshDevice idle("127.0.0.1", served.port());
  expect_serves_next_client(served.port());
  try {
    idle.chips();
    FAIL() << "a dropped session answered";
  } catch (const RemoteDeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("chips: the connection was"), std::string::npos) << e.what();
  }
}

// The server writing a reply to a client that has gone (16 MiB to a reset connection): an error
// on that session, never SIGPIPE, whose default action would end the serving process.
TEST(HostileClient, ClientGoneMidReplyDoesNotKillTheServer) {
  std::signal(SIGPIPE, SIG_DFL);  // as in a program that did not think of it
  ServedN300 served;
  BufferHandle big;
  {
    RemoteMeshDevice device("127.0.0.1", served.port());
    big = device.create_buffer({BufferType::Dram, 16u << 20, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
  }
  for (int i = 0; i < 3; ++i) {
    auto greeted_client = greeted(served.port());
    RawClient& client = *greeted_client;
    client.write_frame(Json{{"type", "read_buffer"}, {"chip", 0}, {"buffer", encode(big)}, {"size_bytes", 16u << 20}});
    client.reset();
  }
  expect_serves_next_client(served.port());
}

// A client gone without its goodbye (killed: a reset connection) cannot free what it created, and
// nobody else holds those handles: the server frees its live buffers and global semaphores before
// the next session (session 43: each `run --device` killed mid-op kept its op's buffers, the
// server's memory grew by them, and later ops' buffers sat elsewhere and took other times). A
// session that says goodbye keeps its buffers for later ones (ClientGoneMidReplyDoesNotKillTheServer).
TEST(HostileClient, WhatAKilledClientLeftIsFreedForTheNext) {
  ServedN300 served;
  const BufferConfig config{BufferType::Dram, 64u << 10, 2048, TensorMemoryLayout::Interleaved, std::nullopt};
  const std::vector<CoreRange> cores{{{0, 0}, {1, 0}}};
  BufferHandle left_buffer;
  GlobalSemaphore left_semaphore;
  {
    auto client = greeted(served.port());
    client->write_frame(Json{{"type", "create_buffer"}, {"config", encode(config)}});
    left_buffer = decode_buffer_handle(client->read_reply().at("buffer"), "reply.buffer");
    client->write_frame(Json{{"type", "create_global_semaphore"}, {"cores", encode_core_ranges(cores)},
                             {"core_kind", encode(CoreKind::Tensix)}, {"initial_value", 0}});
    left_semaphore = decode_global_semaphore(client->read_reply().at("semaphore"), "reply.semaphore");
    client->reset();
  }
  RemoteMeshDevice next("127.0.0.1", served.port(), {.connect_timeout = 5s, .io_timeout = 5s});
  std::vector<std::byte> out(config.size_bytes);
  try {
    next.read_buffer(0, left_buffer, out);
    FAIL() << "the killed client's buffer is still live";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "read_buffer: buffer 1 was freed already (deallocate_buffer)");
  }
  try {
    next.reset_global_semaphore(left_semaphore, 0);
    FAIL() << "the killed client's global semaphore is still live";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "reset_global_semaphore: global semaphore 1 was freed already (deallocate_global_semaphore)");
  }
  // Its memory is the device's again: the same buffer lands where the killed client's was.
  EXPECT_EQ(next.create_buffer(config).address, left_buffer.address);
  EXPECT_EQ(next.create_global_semaphore(cores, CoreKind::Tensix, 0).address, left_semaphore.address);
}

// One session at a time: a client arriving during another's session is told so at once (its
// hello answered with the reason), not left waiting in the listen backlog until it times out.
TEST(HostileClient, ASecondClientIsToldTheServerIsBusy) {
  ServedN300 served;
  auto first = std::make_unique<RemoteMeshDevice>("127.0.0.1", served.port());
  const std::string prefix = "remote device 127.0.0.1:" + std::to_string(served.port()) +
                             ": hello: the server is serving another client (127.0.0.1:";
  try {
    RemoteMeshDevice second("127.0.0.1", served.port(), {.busy_wait = 500ms, .io_timeout = 5s});
    FAIL() << "a second session was opened beside the first";
  } catch (const ServerBusyError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find("); one session at a time, try again when it ends; waited 0.5 s for it"), std::string::npos)
        << what;
  }
  // A client that does not wait is told at once.
  try {
    RemoteMeshDevice second("127.0.0.1", served.port(), {.busy_wait = 0ms, .io_timeout = 5s});
    FAIL() << "a second session was opened beside the first";
  } catch (const ServerBusyError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find("try again when it ends; waited 0 s for it"), std::string::npos) << what;
  }
  EXPECT_EQ(first->chips().size(), 2u);  // the first session is undisturbed
  // A client waiting while the first leaves gets in (it asks again until its busy_wait). The
  // first leaves once the second has been turned away (on_busy), so the second did wait.
  std::promise<std::string> turned_away;
  std::thread leave([&] {
    const std::string why = turned_away.get_future().get();
    EXPECT_EQ(why.rfind(prefix, 0), 0u) << why;
    first.reset();
  });
  std::size_t told = 0;
  std::unique_ptr<RemoteMeshDevice> second;
  try {
    second = std::make_unique<RemoteMeshDevice>("127.0.0.1", served.port(),
                                                RemoteDeviceOptions{.busy_wait = 30s,
                                                                    .on_busy =
                                                                        [&](const std::string& why) {
                                                                          if (told++ == 0) turned_away.set_value(why);
                                                                        },
                                                                    .io_timeout = 5s});
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  if (told == 0) turned_away.set_value("never told it was busy");  // the first leaves all the same
  leave.join();
  EXPECT_EQ(told, 1u);  // once per wait, however many times it asked
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->chips().size(), 2u);
}

// A device whose finish() says it has begun and then holds until the test lets it go: a call
// that runs for as long as the test needs (a large op's simulation, minutes of wall time).
class HeldFinish final : public ForwardingMeshDevice {
 public:
  using ForwardingMeshDevice::ForwardingMeshDevice;
  void finish() override {
    begun.set_value();
    release.get_future().wait();
    ForwardingMeshDevice::finish();
  }
  std::promise<void> begun;
  std::promise<void> release;
};

// A client arriving while the session is inside a call is told at once that the server is busy,
// not left unanswered until the call ends (session 39's bug bash: `run --device --device-wait 0`
// beside a 128 MiB all_gather waited 2.9 s for the busy reply, and past its io_timeout it would
// have failed with "nothing was received" instead of "serving another client").
TEST(HostileClient, AClientArrivingDuringACallIsToldAtOnceTheServerIsBusy) {
  sim::device::SimMeshDevice device{topo::load_system("n300"), {}};
  HeldFinish held(device);
  // No heartbeat within the test: the heartbeat's sends ran the session's io, and with it the
  // turn-away, so the busy reply waited for the next one (2 s by default) rather than the call.
  RemoteServerOptions options;
  options.heartbeat_interval = 600s;
  RemoteDeviceServer server(held, options);
  std::thread serving([&] { server.serve(); });
  RemoteMeshDevice first("127.0.0.1", server.port());
  std::thread call([&] { first.finish(); });
  held.begun.get_future().wait();
  try {
    // 5 s of silence fails the hello with "nothing was received": what a call of the session
    // held the turn-away to, however long the call ran.
    RemoteMeshDevice second("127.0.0.1", server.port(), {.busy_wait = 0ms, .io_timeout = 5s});
    ADD_FAILURE() << "a second session was opened beside the first";
  } catch (const ServerBusyError& e) {
    EXPECT_NE(std::string(e.what()).find(": hello: the server is serving another client (127.0.0.1:"),
              std::string::npos)
        << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not told the server is busy: " << e.what();
  }
  held.release.set_value();
  call.join();
  EXPECT_EQ(first.chips().size(), 2u);  // the first session goes on after its call
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace cclmesh::runtime::remote
