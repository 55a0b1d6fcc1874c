#include "runtime/ccl/common/reduction_chunks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl {

std::uint32_t fitted_reduction_chunk_packets(std::uint32_t message_pages, std::uint32_t packet_pages) {
  const std::uint32_t message_packets = (message_pages + packet_pages - 1) / packet_pages;
  const std::uint32_t packets = (message_packets + kMinChunksPerMessage - 1) / kMinChunksPerMessage;
  return std::clamp(packets, std::uint32_t{1}, kDefaultReductionChunkPackets);
}

std::uint32_t reduction_chunk_packets(std::uint32_t run_pages, std::uint32_t packet_pages, std::uint32_t page_size,
                                      std::uint32_t asked, std::string_view op) {
  const std::uint32_t packets = (run_pages + packet_pages - 1) / packet_pages;
  const std::uint32_t chunk = std::max(asked, (packets + kMaxInlineValue - 1) / kMaxInlineValue);
  const std::uint64_t cb_bytes = std::uint64_t{chunk} * packet_pages * page_size;
  if (cb_bytes > kMaxReducedCbBytes) {
    throw CclParamsError(
        fmt::format("{}: a worker's chunk of {} packets ({} B) exceeds the {} B its reduce CB may hold; the "
                    "tensor is too large for 255 synchronised chunks per worker",
                    op, chunk, cb_bytes, kMaxReducedCbBytes));
  }
  return chunk;
}

}  // namespace cclmesh::runtime::ccl
