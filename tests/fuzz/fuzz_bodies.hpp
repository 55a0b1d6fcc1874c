#pragma once
// The bodies of the libFuzzer targets, shared with fuzz_regression_test, which replays the
// inputs kept in tests/data/fuzz/<target>/ in the normal test suite.

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/remote/frame_connection.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "runtime/remote/served_requests.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "topologies/builtin_systems.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/tensor_flags.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/parametric.hpp"
#include "topologies/topology_yaml.hpp"
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
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

}  // namespace cclmesh::fuzz
