#include "tests/fuzz/fuzz_bodies.hpp"

// What `cclmesh run --device` decodes from a server: the body says how (fuzz_bodies.hpp).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cclmesh::fuzz::fuzz_remote_replies(data, size);
}
