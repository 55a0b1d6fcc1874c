#pragma once
// Values the collectives' builder tests share: buffers and global semaphores as a device would
// hand them out (made up addresses; builders never touch a device), and a stream's disassembly.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/host/disassembler.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::runtime::ccl::test {

// The op's validate() (found by argument-dependent lookup in the namespace of its Params) throws
// E with `needle` in its message.
template <class E = CclParamsError, class Params>
void expect_rejected(const Params& p, const topo::Topology& topology, const std::string& needle) {
  try {
    validate(p, topology);
    ADD_FAILURE() << "expected a rejection mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

inline BufferHandle dram_buffer(std::uint32_t id, const TensorSpec& spec) {
  return BufferHandle{id, 0x10000ull * id, interleaved_buffer_config(spec, BufferType::Dram)};
}

inline GlobalSemaphore semaphore(std::uint32_t id, CoreRange cores) {
  return GlobalSemaphore{id, 0x100000u + 32 * id, {cores}};
}

// An all_gather of `input` along `dim` on a `shape` group over a `fabric` fabric, with its input
// and output buffers and done semaphore (cores (0,0)-(1,0)).
inline all_gather::Params all_gather_params(const topo::Topology& topology, FabricMode fabric, CclTopology shape,
                                            TensorSpec input, std::uint32_t dim = 3) {
  all_gather::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = shape;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, input);
  p.output_buffer = dram_buffer(2, all_gather::output_spec(p, topology));
  p.done_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  return p;
}

// Stream `stream` of an interpreter's runtime args, disassembled ("#i ..." lines).
inline std::string stream_text(const std::vector<std::uint32_t>& rt, std::uint32_t stream) {
  namespace ia = kernels::interpreter;
  const std::uint32_t block = ia::stream_block(stream);
  const std::uint32_t offset = rt.at(block + ia::kStreamCommandsOffset);
  const std::uint32_t words = rt.at(block + ia::kStreamCommandsWords);
  return cmd::disassemble(std::span<const std::uint32_t>(rt).subspan(offset, words));
}

}  // namespace cclmesh::runtime::ccl::test
