#pragma once
// What a RemoteDeviceServer is told (remote_device_server.hpp): where it listens, what it tells
// clients about the device, its limits and timeouts, and its hooks. Its own header, so that the
// server's socket-free request side (served_requests.hpp) takes the same options.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/remote/remote_protocol.hpp"

namespace cclmesh::runtime::remote {

// A write the server will not make (a handle it did not give or that names nothing any more, a
// size other than the buffer's) is refused as std::invalid_argument and the session goes on, as
// a local device's refusal: its bytes are read and dropped first, up to the larger of the named
// buffer's size and this. A longer one is refused unread and ends the session, so that a stray
// client cannot make the server read gigabytes. RemoteMeshDevice checks first and sends none.
inline constexpr std::uint64_t kMaxRefusedWriteBytes = std::uint64_t{64} << 20;

// RemoteServerOptions::max_profile_entries's default: about 100 MB of a simulator's entries
// (~100 B each; a t3k all_gather's 32 kernels, ~3 KB), where hours of a training loop's
// collectives are GBs, and far more than any op's entries (a 32-chip Galaxy op's are hundreds).
inline constexpr std::size_t kDefaultMaxProfileEntries = std::size_t{1} << 20;

struct RemoteServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: an ephemeral port (port() says which)
  // Told to clients in the hello: what is served (the hello carries the device's fabric() too,
  // which their op builders must name).
  std::string description = "a cclmesh device";
  // The system as the server was asked for it (`serve --system torus:4x4`), so that a client's
  // row names it as a local run of the same --system does; empty: the topology's own name
  // (`torus:4x4/4@wh`, which the served topology carries).
  std::string system_name;
  // The faults the device was opened with (a simulator's what-ifs, as their specs were typed:
  // "link-down:0-1@20us"), so that a client's report names them as a local run's does; none for
  // hardware.
  std::vector<std::string> faults;
  // Whether the device keeps buffer bytes (a client checks what it reads back only if so).
  ServedDataMode data_mode = ServedDataMode::Functional;
  // The chips it simulates (a client's rows and --json name ideal hardware as a local run's do).
  ServedHardware hardware = ServedHardware::Modelled;
  // The device's clock in ps (a simulator's simulated time), for clients that measure the gap
  // between their enqueue and a kernel's start; unset: clients are told the backend has none.
  std::function<std::uint64_t()> device_time_ps;
  // The simulator's events executed so far (a simulator's EngineStats::events_executed), for
  // clients that report an op's event count as a local run does; unset (hardware): clients are
  // told the backend has none.
  std::function<std::uint64_t()> device_events;
  // What the device's faults did so far, one line each ("corrupt:0-2:5: flipped bit 0 of byte
  // ..."), as a local run reports them; unset: none.
  std::function<std::vector<std::string>()> fault_effects;
  // A session that ends with the device failed (a call threw DeviceError: a hang, fault or
  // timeout, and no reset since) or with workloads enqueued and not finished (they would run in
  // the next client's finish) resets the device before the next client is served, so that the
  // next client gets it as just opened. Off: the next client gets the device as it was left.
  bool reset_after_failed_session = true;
  // The most bytes of enqueued host writes and reads the device and this server may hold for
  // clients until a finish() (the server keeps each read's bytes until then), and the most one
  // write_buffer or read_buffer may move (the server holds its bytes whole for the call; a
  // timing-only device's buffers have any size): past it a request is refused with
  // std::invalid_argument, so that a client cannot fill the server's memory.
  std::uint64_t max_enqueued_host_bytes = std::uint64_t{1} << 30;
  // The most bytes of buffers a device that keeps their bytes (data_mode Functional) may hold
  // for clients at once, a buffer counting its size on every chip: its memories make a page as
  // it is written, so a client's buffers can take the server past its host's memory (session
  // 41: a bad_alloc, which the client got as "simulation error", or swapping until the kernel's
  // OOM killer ended the server). A create_buffer past it is refused with std::invalid_argument
  // naming the bytes, those held and the bound (host_memory_limit_refusal); the session goes on.
  // 0: no bound (a timing-only device's buffers hold nothing). `cclmesh serve` sets its host's
  // physical memory, or --max-host-memory.
  std::uint64_t max_buffer_host_bytes = 0;
  // A session's kernel profile keeps its last max_profile_entries entries: past them the server
  // has the backend drop the oldest (forget_profile_before, in the device's numbering), so that a
  // session running ops for hours holds a bounded profile. profile_size() still counts every
  // entry of the session (indices stay stable); profile_since() of a range that starts at a
  // dropped entry is refused with std::invalid_argument naming the entries dropped and `serve
  // --max-profile-entries`, never answered with fewer entries. A client that reads each op's
  // entries right after it finished (`cclmesh run --device`) works with any bound of at least one
  // op's entries. Unset hook (a backend that cannot drop entries): no bound, as before.
  std::size_t max_profile_entries = kDefaultMaxProfileEntries;
  std::function<void(std::size_t entry)> forget_profile_before;
  std::chrono::milliseconds heartbeat_interval{2'000};
  // Called from the heartbeat's thread when a call's client cannot be reached any more (a
  // heartbeat could not be sent: it died or closed), while the call still runs: nobody will
  // read its reply, so a backend that can stop it does (`cclmesh serve`: the simulator's
  // SimMeshDeviceOptions::abandon). Unset: the call runs to its end, holding the server.
  std::function<void()> call_abandoned;
  // A client that connects and does not say hello within hello_timeout, or is silent for
  // idle_timeout between requests (zero: never), is dropped, so that it cannot hold the one
  // session against the next client; io_timeout is the longest stall inside a frame.
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds idle_timeout{300'000};
  std::chrono::milliseconds io_timeout{60'000};
  // Told when a session begins (its hello accepted, before any call of its reaches the device)
  // and when it ends, however it ends (goodbye, shutdown, a closed or stalled connection, a
  // timeout, stop()), before the device is reset for the next client; `how` says how. Sessions
  // count from 1; a connection turned away or refused at its hello is none. For what a backend
  // records per session (`cclmesh serve --trace-dir`); an exception from either is logged, and
  // serving goes on. Unset: nothing.
  std::function<void(std::uint64_t session)> session_started;
  std::function<void(std::uint64_t session, const std::string& how)> session_ended;
  // Told about sessions (connected, ended and why); unset: silent.
  std::function<void(const std::string&)> log;
};

}  // namespace cclmesh::runtime::remote
