#pragma once
// The bodies of the libFuzzer targets, shared with fuzz_regression_test, which replays the
// inputs kept in tests/data/fuzz/<target>/ in the normal test suite.

#include "kernels/host/command_decoder.hpp"
#include "kernels/host/disassembler.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/topology_yaml.hpp"
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// The CLI's size and time parsers accept a value or throw UsageError, never anything else.
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
  return 0;
}

}  // namespace cclmesh::fuzz
