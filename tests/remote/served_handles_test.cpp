// ServedHandles, the server's record of the handles it gave: a live handle is served as given;
// a freed one, a never-given one and an altered one are refused with their own messages (which
// clients and tests read), without a record kept per freed handle (ids only grow until reset).
#include "runtime/remote/served_handles.hpp"

#include <gtest/gtest.h>

#include "runtime/device/types.hpp"
#include "tests/refusal.hpp"

namespace cclmesh::runtime::remote {
namespace {

using cclmesh::testing::refusal;

BufferHandle buffer(std::uint32_t id, std::uint64_t address) {
  return BufferHandle{id, address, BufferConfig{BufferType::Dram, 4096, 2048}};
}

TEST(ServedHandles, LiveFreedNeverGivenAndAlteredAreToldApart) {
  ServedHandles<BufferHandle> handles("buffer", "deallocate_buffer");
  for (std::uint32_t id = 1; id <= 3; ++id) handles.given(buffer(id, 0x1000 * id));
  EXPECT_EQ(handles.served(buffer(2, 0x2000), "write_buffer").address, 0x2000u);
  handles.freed(2);
  EXPECT_EQ(refusal([&] { handles.served(buffer(2, 0x2000), "write_buffer"); }),
            "write_buffer: buffer 2 was freed already (deallocate_buffer)");
  EXPECT_EQ(handles.served(buffer(1, 0x1000), "write_buffer").id, 1u);  // its neighbours stay live
  EXPECT_EQ(handles.served(buffer(3, 0x3000), "write_buffer").id, 3u);
  const std::string not_given = "is not one this server created (or not as it was created)";
  EXPECT_EQ(refusal([&] { handles.served(buffer(4, 0x4000), "read_buffer"); }), "read_buffer: buffer 4 " + not_given);
  EXPECT_EQ(refusal([&] { handles.served(buffer(0, 0x1000), "read_buffer"); }), "read_buffer: buffer 0 " + not_given);
  EXPECT_EQ(refusal([&] { handles.served(buffer(3, 0x3020), "read_buffer"); }), "read_buffer: buffer 3 " + not_given);
  // A later id given: the ones freed below it still read as freed, the one above it as never given.
  handles.given(buffer(5, 0x5000));
  handles.freed(1);
  EXPECT_EQ(refusal([&] { handles.served(buffer(1, 0x1000), "x"); }), "x: buffer 1 was freed already (deallocate_buffer)");
  EXPECT_EQ(refusal([&] { handles.served(buffer(6, 0x6000), "x"); }), "x: buffer 6 " + not_given);
  // After the device's reset nothing given before names anything, not even as freed.
  handles.clear();
  EXPECT_EQ(refusal([&] { handles.served(buffer(1, 0x1000), "x"); }), "x: buffer 1 " + not_given);
  EXPECT_EQ(refusal([&] { handles.served(buffer(3, 0x3000), "x"); }), "x: buffer 3 " + not_given);
  handles.given(buffer(1, 0x1000));
  EXPECT_EQ(handles.served(buffer(1, 0x1000), "x").id, 1u);
}

}  // namespace
}  // namespace cclmesh::runtime::remote
