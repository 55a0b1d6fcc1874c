#pragma once
// The message of the exception of type E (std::invalid_argument unless named) a call throws, or
// "" when it throws none: the tests of the device API's refusals compare it whole, so that a
// wrong or missing refusal shows its text.

#include <functional>
#include <stdexcept>
#include <string>

namespace cclmesh::testing {

template <typename E = std::invalid_argument>
std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace cclmesh::testing
