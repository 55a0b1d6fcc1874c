#include "runtime/ccl/common/reworded_refusal.hpp"

#include "runtime/ccl/common/ccl_common.hpp"

namespace cclmesh::runtime::ccl {

void rethrow_reworded(const std::string& message) {
  try {
    throw;
  } catch (const RingRunsAsLineError&) {
    throw RingRunsAsLineError(message);
  } catch (const PageExceedsPacketError& e) {
    throw PageExceedsPacketError(message, e.page_size_bytes());
  } catch (const CclParamsError&) {
    throw CclParamsError(message);
  }
}

}  // namespace cclmesh::runtime::ccl
