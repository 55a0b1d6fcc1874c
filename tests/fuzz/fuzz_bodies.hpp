#pragma once
// The bodies of the libFuzzer targets, shared with fuzz_regression_test, which replays the
// inputs kept in tests/data/fuzz/<target>/ in the normal test suite.

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/remote/frame_connection.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "runtime/remote/served_requests.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "topologies/builtin_systems.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/tensor_flags.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/parametric.hpp"
#include "topologies/topology_yaml.hpp"
#include "tests/fuzz/scripted_peer.hpp"
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cclmesh::fuzz {

// Any byte string, read as a command stream, either decodes or throws DecodeError; the
// disassembler never throws. Nothing may read past the stream (ASan checks).
inline int fuzz_command_decoder(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  try {
    (void)cclmesh::cmd::decode_stream(words);
  } catch (const cclmesh::cmd::DecodeError&) {
  }
  (void)cclmesh::cmd::disassemble(words);
  return 0;
}

// Any text handed to the tt-umd cluster-descriptor loader yields a topology or InputError.
inline int fuzz_cluster_descriptor(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cclmesh::topo::parse_cluster_descriptor(text, "<fuzz>", "fuzz");
  } catch (const cclmesh::topo::InputError&) {
  }
  return 0;
}

// Any text handed to the own-format loader yields a topology or InputError.
inline int fuzz_topology_yaml(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cclmesh::topo::parse_topology_yaml(text, "<fuzz>");
  } catch (const cclmesh::topo::InputError&) {
  }
  return 0;
}

// The CLI's option value parsers (--size, --max-sim-time, --max-wall, --link-rate, --link-latency, the parametric
// --system spec such as torus:8x8/4@bh, --shape, the shard grids' CxR and core ranges, and
// --chips) accept a value or throw their bad-input error (UsageError, InputError), never
// anything else.
inline int fuzz_cli_size(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cclmesh::cli::parse_size_bytes(text, "--size");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_sim_time(text, "--max-sim-time");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_wall_seconds(text, "--max-wall");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_link_rate(text, "--link-rate");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_link_latency(text, "--link-latency");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::topo::parse_parametric_spec(text);
  } catch (const cclmesh::topo::InputError&) {
  }
  try {
    (void)cclmesh::cli::parse_shape(text, "--shape");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_grid(text, "--shard-grid");
  } catch (const cclmesh::cli::UsageError&) {
  }
  try {
    (void)cclmesh::cli::parse_chip_list(text, "--chips");
  } catch (const cclmesh::cli::UsageError&) {
  }
  return 0;
}

// Every --fault spec is added to the plan or rejected with a UsageError, never anything else.
inline int fuzz_cli_fault_spec(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cclmesh::cli::RunFaults faults;
  try {
    cclmesh::cli::add_fault_spec(faults, text);
  } catch (const cclmesh::cli::UsageError&) {
  }
  return 0;
}

// A fuzzed command stream run by the interpreter on a tiny simulated device (one N150 chip,
// one core, two semaphores, a 4-page CB, no tensor): the run completes, or ends in a
// DeviceError (fault, hang, or the 1 ms simulated-time watchdog), or the workload is refused as
// bad input (std::invalid_argument). Never a crash and never any other exception. The first
// word picks how many commands the stream claims (1-4); the rest is the stream.
inline int fuzz_command_interpreter(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint32_t> words(std::min<std::size_t>(size / 4, 256));
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  cclmesh::sim::device::SimMeshDeviceOptions options;
  options.max_simulated_time = cclmesh::sim::SimTime::from_us(1000);
  cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n150(), options);
  namespace rt = cclmesh::runtime;
  const rt::CoreCoord core{0, 0};
  cclmesh::kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = rt::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0, 1};
  const std::uint32_t claimed = words.empty() ? 1 : words.front() % 4 + 1;
  spec.streams = {cclmesh::kargs::InterpreterStreamSpec{
      std::nullopt, words.empty() ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>(words.begin() + 1, words.end()),
      claimed}};
  try {
    rt::Program program;
    program.circular_buffers.push_back(rt::ccl::packet_header_cb(core));
    program.circular_buffers.push_back(rt::ccl::data_cb(core, 64, 4));
    program.semaphores = {rt::ccl::tensix_semaphore(core, 0), rt::ccl::tensix_semaphore(core, 1)};
    program.kernels.push_back(rt::ccl::interpreter_kernel(core, spec));
    rt::MeshWorkload workload;
    workload.name = "fuzz";
    workload.programs[0] = std::move(program);
    device.enqueue_workload(workload);
    device.finish();
  } catch (const rt::DeviceError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

// The device fuzz_remote_protocol serves: as `serve --system n300 --topology line --no-data
// --max-sim-time 1ms` (tests/fuzz/remote_protocol_seeds.cpp makes its seeds on the same).
inline cclmesh::sim::device::SimMeshDeviceOptions served_fuzz_device_options() {
  cclmesh::sim::device::SimMeshDeviceOptions options;
  options.data_mode = cclmesh::sim::DataMode::TimingOnly;
  options.fabric.mode = cclmesh::runtime::FabricMode::Line;
  options.max_simulated_time = cclmesh::sim::SimTime::from_us(1000);
  options.watchdogs_per_finish = true;
  return options;
}

// The bytes one client sends on a connection to `cclmesh serve`, met as the server meets them:
// frame after frame (lead, CBOR header, blob), the first one the hello, each later one a
// request run on a served device (served_fuzz_device_options()).
// The socket is the only part left out (FrameConnection reads from it, and waits have
// deadlines a fuzzer cannot spend): the lead is parsed by FrameConnection's own
// parse_frame_lead, and everything decided on what was read is RemoteDeviceServer's own
// ServedRequests. Where the bytes run out the connection would have stalled and timed out, so
// the session ends there, as it does on a refusal that ends it (a bad magic, a length over its
// limit, a hello that is not this protocol's, goodbye, shutdown).
//
// What the server turns into a refusal is ConnectionError (FrameTooLarge among them),
// BlobRefused and ProtocolError; handle() turns the rest into error replies itself. Any other
// exception, a crash, a sanitizer report, an allocation past libFuzzer's limit or a hang is a
// finding, and so is a frame's data or a reply's accepted past the server's limit on host bytes
// held for a client (max_enqueued_host_bytes; receive() grows a blob as its bytes arrive, so
// the body allocates one only once the input holds it). At most 64 frames per input; the device's watchdog stops each finish() after 1 ms
// of simulated time. The session's profile keeps its last 16 entries (serve --max-profile-entries).
inline int fuzz_remote_protocol(const std::uint8_t* data, std::size_t size) {
  namespace remote = cclmesh::runtime::remote;
  constexpr int kMaxFrames = 64;
  cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n300(), served_fuzz_device_options());
  remote::RemoteServerOptions options;
  options.data_mode = remote::ServedDataMode::TimingOnly;
  options.max_enqueued_host_bytes = std::uint64_t{16} << 20;
  // As `serve` bounds a session's profile, low enough that a few ops' entries pass it, so that
  // dropped entries and the refusal of a range that starts at one are reached.
  options.max_profile_entries = 16;
  options.forget_profile_before = [&device](std::size_t entry) { device.forget_profile_before(entry); };
  remote::ServedRequests requests(device, options);

  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data), size);
  bool greeted = false;
  for (int frames = 0; frames < kMaxFrames; ++frames) {
    if (rest.size() < remote::kFrameLeadBytes) break;
    remote::FrameLead lead;
    try {
      lead = remote::parse_frame_lead(rest.first<remote::kFrameLeadBytes>());
    } catch (const remote::ConnectionError&) {
      break;
    }
    rest = rest.subspan(remote::kFrameLeadBytes);
    if (lead.header_bytes > rest.size()) break;
    std::vector<std::uint8_t> header(lead.header_bytes);
    std::transform(rest.begin(), rest.begin() + lead.header_bytes, header.begin(),
                   [](std::byte b) { return std::to_integer<std::uint8_t>(b); });
    rest = rest.subspan(header.size());
    try {
      requests.check_blob(header, lead.blob_bytes, greeted);
    } catch (const remote::FrameTooLarge&) {
      break;
    } catch (const remote::BlobRefused&) {
      if (lead.blob_bytes > rest.size()) break;
      rest = rest.subspan(static_cast<std::size_t>(lead.blob_bytes));
      continue;
    }
    // What the server holds for one client's host I/O at once is bounded: a timing-only
    // device's buffers have any size.
    if (lead.blob_bytes > options.max_enqueued_host_bytes) {
      throw std::logic_error("the server accepted a frame's data of " + std::to_string(lead.blob_bytes) +
                             " B, above its limit on host bytes held");
    }
    if (lead.blob_bytes > rest.size()) break;
    std::vector<std::byte> blob(static_cast<std::size_t>(lead.blob_bytes));
    std::copy(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(blob.size()), blob.begin());
    rest = rest.subspan(blob.size());
    if (!greeted) {
      try {
        (void)remote::to_wire(requests.hello(header));
      } catch (const remote::ProtocolError&) {
        break;
      }
      greeted = true;
      requests.session_begun();
      continue;
    }
    remote::Json request;
    std::string type;
    try {
      request = remote::from_wire(header);
      type = remote::string_field(request, "type", "request");
    } catch (const remote::ProtocolError&) {
      continue;
    }
    if (type == remote::request::kGoodbye || type == remote::request::kShutdown) break;
    std::vector<std::byte> reply_blob;
    (void)remote::to_wire(requests.handle(request, blob, reply_blob));
    if (reply_blob.size() > options.max_enqueued_host_bytes) {
      throw std::logic_error(type + " replied with " + std::to_string(reply_blob.size()) +
                             " B, above the server's limit on host bytes held");
    }
  }
  (void)requests.reset_if_left_unusable();
  return 0;
}

// --- fuzz_remote_replies: what a client decodes from a server ------------------------------------
//
// A fuzz input is the byte stream a server sends one RemoteMeshDevice, written as records split
// by kReplySeparator (three bytes that start no CBOR item, so a valid header does not hold
// them except inside a string or a number), so that the fuzzer can grow or shrink one reply
// without shifting the others. A record's first byte says what it is:
//   form % 3 == 0: a frame whose header is the rest of the record, without data;
//   form % 3 == 1: a frame announcing the u64 (little-endian) after the form byte as its data's
//                  length, the rest its header; the data follow (bytes 0, 1, 2, ...) when they
//                  are at most kMaxSentReplyData, else none of them;
//   form % 3 == 2: the rest of the record as raw bytes (a torn frame, a lead of the fuzzer's own,
//                  another protocol).
inline constexpr std::string_view kReplySeparator = "\xFC\xFD\xFE";
inline constexpr std::uint64_t kMaxSentReplyData = 64 * 1024;

inline std::vector<std::byte> remote_reply_stream(std::span<const std::uint8_t> input) {
  namespace remote = cclmesh::runtime::remote;
  std::vector<std::byte> stream;
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(kReplySeparator, at), text.size());
    std::string_view record = text.substr(at, end - at);
    at = end == text.size() ? end : end + kReplySeparator.size();
    if (record.empty()) continue;
    const auto form = static_cast<unsigned char>(record[0]) % 3;
    record.remove_prefix(1);
    std::uint64_t data_bytes = 0;
    if (form == 1) {
      for (int i = 0; i < 8 && !record.empty(); ++i) {
        data_bytes |= std::uint64_t{static_cast<unsigned char>(record[0])} << (8 * i);
        record.remove_prefix(1);
      }
    }
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(record.data());
    if (form == 2) {
      for (std::size_t i = 0; i < record.size(); ++i) stream.push_back(std::byte{bytes[i]});
      continue;
    }
    std::vector<std::byte> frame = remote::frame_bytes(std::span(bytes, record.size()));
    for (int i = 0; i < 8; ++i) frame[8 + i] = std::byte((data_bytes >> (8 * i)) & 0xFF);
    stream.insert(stream.end(), frame.begin(), frame.end());
    if (data_bytes <= kMaxSentReplyData) {
      for (std::uint64_t i = 0; i < data_bytes; ++i) stream.push_back(std::byte(i & 0xFF));
    }
  }
  return stream;
}

// What a client may throw at a reply it cannot use, each of which `cclmesh run --device` turns
// into its exit code (2 bad input, 3 the device failed, 4 the served device or connection
// failed, 5 busy or not accepting): true when `step` returned.
template <class Step>
bool remote_step(Step step) {
  try {
    step();
    return true;
  } catch (const cclmesh::runtime::remote::RemoteDeviceError&) {
  } catch (const cclmesh::runtime::DeviceError&) {
  } catch (const std::invalid_argument&) {
  } catch (const cclmesh::topo::InputError&) {
  } catch (const cclmesh::cli::UsageError&) {  // the CLI's own refusal of what the hello says (exit 2)
  }
  return false;
}

// The calls a client makes on one session, in order, each on whatever the previous replies
// said: hello and topology (the constructor), every MeshDevice query, a buffer's life with
// direct and enqueued host I/O, finish() delivering an enqueued read, the session's profile, the
// extras, a global semaphore's life and a reset; then goodbye. No waits of its own: no busy or
// connection retries, and the peer's bytes end in end of stream (io_timeout is never reached).
inline void remote_client_script(std::uint16_t port) {
  namespace remote = cclmesh::runtime::remote;
  namespace rt = cclmesh::runtime;
  remote::RemoteDeviceOptions options;
  options.connect_timeout = std::chrono::milliseconds(2'000);
  options.busy_wait = std::chrono::milliseconds(0);
  options.connect_wait = std::chrono::milliseconds(0);
  options.io_timeout = std::chrono::milliseconds(5'000);
  std::optional<remote::RemoteMeshDevice> device;
  if (!remote_step([&] { device.emplace("127.0.0.1", port, options); })) return;
  (void)device->topology().chips().size();
  (void)device->description();
  (void)device->faults();
  (void)device->system_name();
  (void)device->data_mode();
  (void)device->fabric();
  (void)device->server_idle_timeout();
  // What `run --device` takes from the hello (session 32): the op's options, as a whole-system
  // run and as one along each mesh axis.
  for (const std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}, std::optional<int>{1}}) {
    cclmesh::cli::RunOptions requested;
    requested.cluster_axis = axis;
    remote_step([&] { (void)cclmesh::cli::served_run_options(requested, *device); });
  }
  remote_step([&] { device->require_within_host_limit(remote::request::kReadBuffer, 4096); });
  remote_step([&] { (void)device->chips(); });
  remote_step([&] { (void)device->worker_grid(); });
  remote_step([&] { (void)device->active_ethernet_channels(0); });
  constexpr std::size_t kBufferBytes = 2048;
  std::optional<rt::BufferHandle> buffer;
  remote_step([&] { buffer = device->create_buffer(rt::BufferConfig{rt::BufferType::Dram, kBufferBytes, 1024}); });
  std::vector<std::byte> data(kBufferBytes, std::byte{0x5A});
  std::vector<std::byte> read_back(kBufferBytes);
  std::vector<std::byte> enqueued_back(kBufferBytes);
  if (buffer) {
    remote_step([&] { device->write_buffer(0, *buffer, data); });
    remote_step([&] { device->read_buffer(0, *buffer, read_back); });
    remote_step([&] { device->enqueue_write_buffer(0, *buffer, data); });
    remote_step([&] { device->enqueue_read_buffer(0, *buffer, enqueued_back); });
  }
  remote_step([&] { device->finish(); });
  remote_step([&] {
    const std::size_t size = device->profile_size();
    (void)device->profile_since(size > 0 ? size - 1 : 0);
  });
  remote_step([&] { (void)device->profile_since(0); });
  remote_step([&] { (void)device->link_traffic(); });
  remote_step([&] { (void)device->device_time_ps(); });
  remote_step([&] { (void)device->device_events(); });
  remote_step([&] { (void)device->fault_effects(); });
  std::optional<rt::GlobalSemaphore> semaphore;
  remote_step([&] {
    semaphore = device->create_global_semaphore({rt::CoreRange{{0, 0}, {0, 0}}}, rt::CoreKind::Tensix, 0);
  });
  if (semaphore) {
    remote_step([&] { device->reset_global_semaphore(*semaphore, 1); });
    remote_step([&] { device->deallocate_global_semaphore(*semaphore); });
  }
  if (buffer) remote_step([&] { device->deallocate_buffer(*buffer); });
  remote_step([&] { device->reset(); });
  remote_step([&] { (void)device->chips(); });
  device = std::nullopt;  // goodbye
}

// One listener for the process: its sessions run one after another.
inline ScriptedPeer& remote_replies_peer() {
  static ScriptedPeer peer;
  return peer;
}

// What `cclmesh run --device` decodes from a server, met as RemoteMeshDevice meets it: a real
// connection (the only way in: the client connects by host and port, and its decoding of
// each reply is inside its calls), to an in-process peer that sends the input's replies
// (remote_reply_stream) whatever is asked and then ends the stream, so nothing waits. The
// client may refuse any of it with the errors remote_step lists (each a CLI exit code); any
// other exception, a crash, a sanitizer report, an allocation past libFuzzer's limit or a
// hang is a finding.
inline int fuzz_remote_replies(const std::uint8_t* data, std::size_t size) {
  ScriptedPeer& peer = remote_replies_peer();
  peer.send_all(remote_reply_stream(std::span(data, size)));
  remote_client_script(peer.port());
  peer.join();
  return 0;
}

}  // namespace cclmesh::fuzz
