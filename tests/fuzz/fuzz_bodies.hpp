#pragma once
// The bodies of the libFuzzer targets, shared with fuzz_regression_test, which replays the
// inputs kept in tests/data/fuzz/<target>/ in the normal test suite.

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "kernels/host/kernel_args_builder.hpp"
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
#include <stdexcept>
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

}  // namespace cclmesh::fuzz
