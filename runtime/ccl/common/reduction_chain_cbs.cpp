#include "runtime/ccl/common/reduction_chain_cbs.hpp"

#include "runtime/ccl/common/reduction_chunks.hpp"

namespace cclmesh::runtime::ccl {

std::uint32_t reduced_cb_pages(const ReductionChainCbSizes& sizes) {
  const std::uint64_t two_chunks_bytes = std::uint64_t{2} * sizes.chunk_pages * sizes.page_size;
  return two_chunks_bytes <= kMaxReducedCbBytes ? 2 * sizes.chunk_pages : sizes.chunk_pages;
}

void add_reduction_chain_cbs(std::vector<CircularBufferSpec>& cbs, CoreCoord core, const ReductionChainCbSizes& sizes) {
  const std::vector<CoreRange> here{CoreRange{core, core}};
  cbs.push_back(CircularBufferSpec{kChainPartialCbId, here, 2 * sizes.packet_pages, sizes.page_size});
  cbs.push_back(CircularBufferSpec{kChainLocalCbId, here, sizes.local_packets * sizes.packet_pages, sizes.page_size});
  cbs.push_back(CircularBufferSpec{kChainReducedCbId, here, reduced_cb_pages(sizes), sizes.page_size});
}

}  // namespace cclmesh::runtime::ccl
