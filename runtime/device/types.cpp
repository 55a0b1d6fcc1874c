#include "runtime/device/types.hpp"

namespace cclmesh::runtime {

std::vector<CoreCoord> cores_of(const std::vector<CoreRange>& ranges) {
  std::vector<CoreCoord> cores;
  for (const CoreRange& range : ranges) {
    for (std::uint32_t y = range.start.y; y <= range.end.y; ++y) {
      for (std::uint32_t x = range.start.x; x <= range.end.x; ++x) {
        cores.push_back(CoreCoord{x, y});
      }
    }
  }
  return cores;
}

std::string to_string(BufferType type) {
  switch (type) {
    case BufferType::Dram: return "DRAM";
    case BufferType::L1: return "L1";
  }
  return "unknown buffer type";
}

std::string to_string(TensorMemoryLayout layout) {
  switch (layout) {
    case TensorMemoryLayout::Interleaved: return "interleaved";
    case TensorMemoryLayout::HeightSharded: return "height sharded";
    case TensorMemoryLayout::WidthSharded: return "width sharded";
    case TensorMemoryLayout::BlockSharded: return "block sharded";
  }
  return "unknown layout";
}

}  // namespace cclmesh::runtime
