#pragma once
// Values the collectives' builder tests share: buffers and global semaphores as a device would
// hand them out (made up addresses; builders never touch a device), and a stream's disassembly.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/host/disassembler.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::runtime::ccl::test {

inline BufferHandle dram_buffer(std::uint32_t id, const TensorSpec& spec) {
  return BufferHandle{id, 0x10000ull * id, interleaved_buffer_config(spec, BufferType::Dram)};
}

inline GlobalSemaphore semaphore(std::uint32_t id, CoreRange cores) {
  return GlobalSemaphore{id, 0x100000u + 32 * id, {cores}};
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
