#include "runtime/ccl/common/reworded_refusal.hpp"

#include <exception>

#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl {

void rethrow_reworded(const std::string& message) {
  // `throw;` with nothing in flight would end the process (std::terminate) without a word.
  CCLMESH_CHECK(std::current_exception() != nullptr, "rethrow_reworded called outside a catch block");
  try {
    throw;
  } catch (const RingRunsAsLineError&) {
    throw RingRunsAsLineError(message);
  } catch (const PageExceedsPacketError& e) {
    throw PageExceedsPacketError(message, e.page_size_bytes());
  } catch (const TooFewLinksError& e) {
    throw TooFewLinksError(message, e.links_allowed());
  } catch (const CclParamsError&) {
    throw CclParamsError(message);
  }
}

}  // namespace cclmesh::runtime::ccl
