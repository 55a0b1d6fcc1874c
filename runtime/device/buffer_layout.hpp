#pragma once
// Where every page of a mesh buffer lives, from its config and address alone: one formula for
// backends (host writes and reads) and op builders (the interpreter's address-generator args),
// both built on kernels/api/addrgen.hpp, which the kernels use on the device.
//
// - Interleaved (DRAM or L1): page i in bank i mod B at address + (i div B) x aligned page.
//   DRAM banks: the chip's interleaving banks (ChipCoreMap::dram_bank_count); L1 banks: the
//   cores of the mesh's common worker grid, row-major (ChipCoreMap::l1_bank_core).
// - Sharded: tt-metal's ShardedAddrGen over the shard grid's cores in shard order
//   (row-major over the grid's ranges, or column-major for ShardOrientation::ColMajor), one
//   shard per core at the buffer's address. L1 shards sit on worker cores; DRAM shards on DRAM
//   banks, grid "core" (x, 0) being bank x, and the interpreter's core table then carries bank
//   ids, which the kernels turn into NoC addresses with get_bank_noc_addr.
// Pages are stored at kBufferAlignment (l1_map.hpp).

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/api/addrgen.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::runtime {

// A buffer config that cannot be laid out (bad input): the message names the field.
class BufferConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct PageLocation {
  bool dram = false;
  std::uint32_t bank = 0;  // DRAM bank, L1 bank, or shard (core) index
  CoreCoord core;          // L1: the logical Tensix core holding the page
  std::uint32_t address = 0;
};

class BufferLayout {
 public:
  // Throws BufferConfigError when the config does not describe a buffer on `worker_grid` with
  // `dram_banks` DRAM banks.
  BufferLayout(const BufferConfig& config, std::uint64_t address, CoreCoord worker_grid, std::uint32_t dram_banks);

  const BufferConfig& config() const { return config_; }
  std::uint32_t num_pages() const { return num_pages_; }
  std::uint32_t page_size() const { return config_.page_size_bytes; }
  std::uint32_t aligned_page_size() const { return aligned_page_size_; }
  bool sharded() const { return config_.layout != TensorMemoryLayout::Interleaved; }
  // Interleaved: banks; sharded: cores of the shard grid.
  std::uint32_t num_targets() const { return num_targets_; }
  // Bytes the buffer occupies in each bank / on each shard core.
  std::uint64_t bytes_per_target() const { return bytes_per_target_; }
  // Logical cores in shard order (sharded buffers only).
  const std::vector<CoreCoord>& shard_cores() const { return shard_cores_; }

  PageLocation page(std::uint32_t index) const;

  // The addrgen the interpreter needs for this buffer on a chip (NoC0 shard table of `chip`).
  kargs::TensorArgs interpreter_args(const ChipCoreMap& chip) const;

 private:
  api::AddrGenParams addrgen_params() const;

  BufferConfig config_;
  std::uint32_t address_ = 0;
  CoreCoord worker_grid_;
  std::uint32_t num_pages_ = 0;
  std::uint32_t aligned_page_size_ = 0;
  std::uint32_t num_targets_ = 0;
  std::uint64_t bytes_per_target_ = 0;
  std::vector<CoreCoord> shard_cores_;
};

inline BufferLayout buffer_layout(const BufferHandle& buffer, CoreCoord worker_grid, std::uint32_t dram_banks) {
  return BufferLayout(buffer.config, buffer.address, worker_grid, dram_banks);
}

}  // namespace cclmesh::runtime
