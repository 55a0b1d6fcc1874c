#include "runtime/ccl/common/reduction_chain_cbs.hpp"

namespace cclmesh::runtime::ccl {

void add_reduction_chain_cbs(std::vector<CircularBufferSpec>& cbs, CoreCoord core, const ReductionChainCbSizes& sizes) {
  const std::vector<CoreRange> here{CoreRange{core, core}};
  cbs.push_back(CircularBufferSpec{kChainPartialCbId, here, 2 * sizes.packet_pages, sizes.page_size});
  cbs.push_back(CircularBufferSpec{kChainLocalCbId, here, sizes.local_packets * sizes.packet_pages, sizes.page_size});
  cbs.push_back(CircularBufferSpec{kChainReducedCbId, here, sizes.chunk_pages, sizes.page_size});
}

}  // namespace cclmesh::runtime::ccl
