#include "runtime/device/buffer_layout.hpp"

#include <fmt/format.h>

#include <limits>

#include "runtime/device/l1_map.hpp"

namespace cclmesh::runtime {
namespace {

api::TensorMemoryLayout to_api(TensorMemoryLayout layout) {
  switch (layout) {
    case TensorMemoryLayout::Interleaved: return api::TensorMemoryLayout::INTERLEAVED;
    case TensorMemoryLayout::HeightSharded: return api::TensorMemoryLayout::HEIGHT_SHARDED;
    case TensorMemoryLayout::WidthSharded: return api::TensorMemoryLayout::WIDTH_SHARDED;
    case TensorMemoryLayout::BlockSharded: return api::TensorMemoryLayout::BLOCK_SHARDED;
  }
  return api::TensorMemoryLayout::INTERLEAVED;
}

std::vector<CoreCoord> cores_in_shard_order(const ShardSpec& spec) {
  if (spec.orientation == ShardOrientation::RowMajor) return cores_of(spec.grid);
  std::vector<CoreCoord> cores;
  for (const CoreRange& range : spec.grid) {
    for (std::uint32_t x = range.start.x; x <= range.end.x; ++x) {
      for (std::uint32_t y = range.start.y; y <= range.end.y; ++y) cores.push_back(CoreCoord{x, y});
    }
  }
  return cores;
}

[[noreturn]] void reject(const std::string& what) { throw BufferConfigError("buffer config: " + what); }

}  // namespace

BufferLayout::BufferLayout(const BufferConfig& config, std::uint64_t address, CoreCoord worker_grid,
                           std::uint32_t dram_banks)
    : config_(config), worker_grid_(worker_grid) {
  if (address > std::numeric_limits<std::uint32_t>::max()) {
    reject(fmt::format("address {:#x} does not fit the device's 32-bit address generators", address));
  }
  address_ = static_cast<std::uint32_t>(address);
  if (config.page_size_bytes == 0) reject("page_size_bytes is 0; expected a positive page size");
  if (config.size_bytes == 0 || config.size_bytes % config.page_size_bytes != 0) {
    reject(fmt::format("size_bytes {} is not a positive multiple of page_size_bytes {}", config.size_bytes,
                       config.page_size_bytes));
  }
  if (config.size_bytes / config.page_size_bytes > std::numeric_limits<std::uint32_t>::max()) {
    reject(fmt::format("{} pages; page ids are 32-bit", config.size_bytes / config.page_size_bytes));
  }
  num_pages_ = static_cast<std::uint32_t>(config.size_bytes / config.page_size_bytes);
  aligned_page_size_ = api::align_up(config.page_size_bytes, kBufferAlignment);

  if (config.layout == TensorMemoryLayout::Interleaved) {
    if (config.shard) reject("an interleaved buffer has no shard spec");
    num_targets_ = config.type == BufferType::Dram ? dram_banks : worker_grid.x * worker_grid.y;
    if (num_targets_ == 0) reject("no banks to interleave over");
    bytes_per_target_ = std::uint64_t{(num_pages_ + num_targets_ - 1) / num_targets_} * aligned_page_size_;
    return;
  }
  if (!config.shard) reject(fmt::format("a {} buffer needs a shard spec", to_string(config.layout)));
  const ShardSpec& s = *config.shard;
  shard_cores_ = cores_in_shard_order(s);
  if (shard_cores_.empty()) reject("shard.grid holds no core");
  for (const CoreCoord& c : shard_cores_) {
    if (config.type == BufferType::Dram) {
      // DRAM shards sit on banks: grid "core" (x, 0) is DRAM bank x, one shard per bank.
      if (c.y != 0 || c.x >= dram_banks) {
        reject(fmt::format("DRAM shard.grid core ({},{}) is not a DRAM bank; DRAM shards sit on banks (x, 0) with "
                           "x < {}",
                           c.x, c.y, dram_banks));
      }
      continue;
    }
    if (c.x >= worker_grid.x || c.y >= worker_grid.y) {
      reject(fmt::format("shard.grid core ({},{}) is outside the {}x{} worker grid", c.x, c.y, worker_grid.x,
                         worker_grid.y));
    }
  }
  if (s.shard_height_pages == 0 || s.shard_width_pages == 0 || s.tensor_width_pages == 0) {
    reject("shard_height_pages, shard_width_pages and tensor_width_pages must be positive");
  }
  if (num_pages_ % s.tensor_width_pages != 0) {
    reject(fmt::format("{} pages are not whole rows of tensor_width_pages {}", num_pages_, s.tensor_width_pages));
  }
  if (config.layout == TensorMemoryLayout::HeightSharded && s.shard_width_pages != s.tensor_width_pages) {
    reject(fmt::format("height sharding needs shard_width_pages ({}) == tensor_width_pages ({})",
                       s.shard_width_pages, s.tensor_width_pages));
  }
  num_targets_ = static_cast<std::uint32_t>(shard_cores_.size());
  bytes_per_target_ = std::uint64_t{s.shard_height_pages} * s.shard_width_pages * aligned_page_size_;
  const std::uint32_t pages_per_shard = s.shard_height_pages * s.shard_width_pages;
  const api::AddrGenParams params = addrgen_params();
  for (std::uint32_t page = 0; page < num_pages_; ++page) {
    const api::PageLocation at = api::page_location(params, page);
    if (at.target >= num_targets_ || at.page_in_target >= pages_per_shard) {
      reject(fmt::format("page {} falls outside the shard grid ({} cores of {}x{} pages)", page, num_targets_,
                         s.shard_height_pages, s.shard_width_pages));
    }
  }
}

api::AddrGenParams BufferLayout::addrgen_params() const {
  api::AddrGenParams p{};
  p.layout = to_api(config_.layout);
  if (config_.layout == TensorMemoryLayout::Interleaved) {
    p.interleaved = api::InterleavedAddrGenParams{address_, num_targets_, aligned_page_size_};
    return p;
  }
  const ShardSpec& s = *config_.shard;
  api::ShardingContiguityMode contiguity = api::ShardingContiguityMode::NO_SHARD_PADDING;
  if (aligned_page_size_ != config_.page_size_bytes) {
    contiguity = api::ShardingContiguityMode::PADDING_BETWEEN_PAGES;
  } else if (s.tensor_width_pages % s.shard_width_pages != 0) {
    contiguity = api::ShardingContiguityMode::PADDING_IN_RIGHTMOST_SHARD;
  }
  p.sharded = api::ShardedAddrGenParams{p.layout,           num_targets_,          aligned_page_size_,
                                        s.tensor_width_pages, contiguity,          s.shard_width_pages,
                                        s.shard_height_pages, address_};
  return p;
}

PageLocation BufferLayout::page(std::uint32_t index) const {
  const api::PageLocation at = api::page_location(addrgen_params(), index);
  PageLocation out;
  out.dram = config_.type == BufferType::Dram;
  out.bank = out.dram && sharded() ? shard_cores_[at.target].x : at.target;
  out.address = at.address;
  if (!out.dram) {
    out.core = sharded() ? shard_cores_[at.target] : CoreCoord{at.target % worker_grid_.x, at.target / worker_grid_.x};
  }
  return out;
}

kargs::TensorArgs BufferLayout::interpreter_args(const ChipCoreMap& chip) const {
  const api::BufferType type = config_.type == BufferType::Dram ? api::BufferType::DRAM : api::BufferType::L1;
  if (!sharded()) {
    kargs::InterleavedTensorArgs args{address_, config_.page_size_bytes, type, num_targets_, aligned_page_size_};
    args.buffer_pages = num_pages_;  // host-side: a stream reaching past them is refused
    return args;
  }
  const api::AddrGenParams p = addrgen_params();
  kargs::ShardedTensorArgs args;
  args.address = address_;
  args.page_size_bytes = config_.page_size_bytes;
  args.buffer_type = type;
  args.layout = p.layout;
  args.page_stride_bytes = aligned_page_size_;
  args.pages_per_tensor_row = p.sharded.pages_per_tensor_row;
  args.contiguity = p.sharded.contiguity;
  args.pages_per_shard_width = p.sharded.pages_per_shard_width;
  args.rows_per_shard_height = p.sharded.rows_per_shard_height;
  args.buffer_pages = num_pages_;
  for (const CoreCoord& c : shard_cores_) {
    if (config_.type == BufferType::Dram) {
      args.cores.push_back(kargs::NocCoord{c.x, 0});  // DRAM shards: the bank id (the kernels' get_bank_noc_addr)
      continue;
    }
    const Noc0Coord n = chip.tensix_noc0(c);
    args.cores.push_back(kargs::NocCoord{n.x, n.y});
  }
  return args;
}

}  // namespace cclmesh::runtime
