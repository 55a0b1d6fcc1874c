#pragma once
// Shared set-up for the sim/model tests: a Wormhole chip on an engine, and (from
// engine_test_util.hpp) a log of what happened when.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/model/chip.hpp"
#include "tests/unit/engine/engine_test_util.hpp"

namespace cclmesh::sim::testing {

inline std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint8_t seed) {
  std::vector<std::uint8_t> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::uint8_t>(seed + i * 7);
  return data;
}

inline std::shared_ptr<const ArchSpec> wormhole() { return builtin_arch_spec(ChipArch::WormholeB0); }
inline std::shared_ptr<const ArchSpec> blackhole() { return builtin_arch_spec(ChipArch::Blackhole); }

}  // namespace cclmesh::sim::testing
