#include "tests/fuzz/fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cclmesh::fuzz::fuzz_command_interpreter(data, size);
}
