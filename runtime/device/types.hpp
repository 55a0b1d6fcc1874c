#pragma once
// Plain value types of the device abstraction: cores, buffers, semaphores. They mirror
// tt-metal's host API (CoreCoord, CoreRange, InterleavedBufferConfig / ShardSpec, semaphores)
// closely enough that the hardware backend is a field-by-field translation.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cclmesh::runtime {

using ChipId = std::uint32_t;

// A logical core: Tensix workers as (x, y) over the harvested worker grid; ethernet cores as
// (channel, 0). Backends translate to NoC0 coordinates with the chip's SoC descriptor.
enum class CoreKind : std::uint8_t { Tensix, Ethernet };

struct CoreCoord {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  constexpr auto operator<=>(const CoreCoord&) const = default;
};

// Inclusive rectangle, as tt-metal's CoreRange.
struct CoreRange {
  CoreCoord start;
  CoreCoord end;
  constexpr auto operator<=>(const CoreRange&) const = default;
  std::uint32_t size() const { return (end.x - start.x + 1) * (end.y - start.y + 1); }
  bool contains(CoreCoord c) const { return c.x >= start.x && c.x <= end.x && c.y >= start.y && c.y <= end.y; }
};

// Cores in row-major order within each range, ranges in the given order (deterministic).
std::vector<CoreCoord> cores_of(const std::vector<CoreRange>& ranges);

enum class BufferType : std::uint8_t { Dram, L1 };
enum class TensorMemoryLayout : std::uint8_t { Interleaved, HeightSharded, WidthSharded, BlockSharded };
enum class ShardOrientation : std::uint8_t { RowMajor, ColMajor };

std::string to_string(BufferType type);
std::string to_string(TensorMemoryLayout layout);

// Shard geometry in pages (tiles for TILE layout, rows for ROW_MAJOR).
struct ShardSpec {
  std::vector<CoreRange> grid;
  std::uint32_t shard_height_pages = 0;  // pages per shard along the tensor's rows
  std::uint32_t shard_width_pages = 0;   // pages per shard along a tensor row
  std::uint32_t tensor_width_pages = 0;  // pages per tensor row
  ShardOrientation orientation = ShardOrientation::RowMajor;
  bool operator==(const ShardSpec&) const = default;
};

struct BufferConfig {
  BufferType type = BufferType::Dram;
  std::uint64_t size_bytes = 0;
  std::uint32_t page_size_bytes = 0;
  TensorMemoryLayout layout = TensorMemoryLayout::Interleaved;
  // Required for sharded layouts. The explicit initializer lets {type, size, page size} make an
  // interleaved config without -Wextra's missing-field-initializers warning.
  std::optional<ShardSpec> shard = std::nullopt;
  bool operator==(const BufferConfig&) const = default;
};

// A buffer allocated at the same address on every chip of the mesh (a MeshBuffer).
struct BufferHandle {
  std::uint32_t id = 0;
  std::uint64_t address = 0;  // bank-relative base address, as kernels see it
  BufferConfig config;
  bool operator==(const BufferHandle&) const = default;
};

// A semaphore at the same L1 address on a set of cores of every chip, allocated once and reused
// across ops until freed (tt-metal's GlobalSemaphore; MeshDevice::deallocate_global_semaphore).
struct GlobalSemaphore {
  std::uint32_t id = 0;
  std::uint32_t address = 0;
  std::vector<CoreRange> cores;
  bool operator==(const GlobalSemaphore&) const = default;
};

}  // namespace cclmesh::runtime
