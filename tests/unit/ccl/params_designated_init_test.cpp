// Every op's Params built with C++20 designated initializers that name only what a user sets
// (the tensor, the buffers, the fabric, a root or groups), compiled with
// -Werror=missing-field-initializers (tests/unit/ccl/CMakeLists.txt): a field without a default
// member initializer makes such a user's code fail to build under -Wextra -Werror (session 44:
// send_recv::Params::groups did; docs/sim_device.md's example had to assign field by field).
// The run checks that the fields left out hold the same defaults as a default-constructed Params.
#include <gtest/gtest.h>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"

namespace cclmesh::runtime::ccl {
namespace {

using test::dram_buffer;

const TensorSpec kTensor{.shape = {1, 1, 32, 2048}};
// As a user has it: the device's (MeshDevice::fabric()).
const FabricOptions kFabric = [] {
  FabricOptions fabric;
  fabric.mode = FabricMode::Ring;
  return fabric;
}();

TEST(ParamsDesignatedInit, AllGather) {
  const all_gather::Params p{.input = kTensor,
                             .input_buffer = dram_buffer(1, kTensor),
                             .output_buffer = dram_buffer(2, kTensor),
                             .groups = {.cluster_axis = 1},
                             .fabric = kFabric};
  all_gather::Params q;
  q.input = kTensor;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffer = dram_buffer(2, kTensor);
  q.groups.cluster_axis = 1;
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, AllBroadcast) {
  const all_broadcast::Params p{.input = kTensor,
                                .input_buffer = dram_buffer(1, kTensor),
                                .output_buffers = {dram_buffer(2, kTensor), dram_buffer(3, kTensor)},
                                .fabric = kFabric};
  all_broadcast::Params q;
  q.input = kTensor;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffers = {dram_buffer(2, kTensor), dram_buffer(3, kTensor)};
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, ReduceScatter) {
  const reduce_scatter::Params p{.input = kTensor,
                                 .input_buffer = dram_buffer(1, kTensor),
                                 .output_buffer = dram_buffer(2, kTensor),
                                 .fabric = kFabric};
  reduce_scatter::Params q;
  q.input = kTensor;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffer = dram_buffer(2, kTensor);
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, AllReduce) {
  const all_reduce::Params p{.tensor = kTensor,
                             .input_buffer = dram_buffer(1, kTensor),
                             .output_buffer = dram_buffer(2, kTensor),
                             .intermediate_buffer = dram_buffer(3, kTensor),
                             .fabric = kFabric};
  all_reduce::Params q;
  q.tensor = kTensor;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffer = dram_buffer(2, kTensor);
  q.intermediate_buffer = dram_buffer(3, kTensor);
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, Reduce) {
  const reduce::Params p{.tensor = kTensor,
                         .root = 2,
                         .input_buffer = dram_buffer(1, kTensor),
                         .output_buffer = dram_buffer(2, kTensor),
                         .fabric = kFabric};
  reduce::Params q;
  q.tensor = kTensor;
  q.root = 2;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffer = dram_buffer(2, kTensor);
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, AllToAll) {
  const all_to_all::Params p{.tensor = kTensor,
                             .input_buffer = dram_buffer(1, kTensor),
                             .output_buffer = dram_buffer(2, kTensor),
                             .fabric = kFabric};
  all_to_all::Params q;
  q.tensor = kTensor;
  q.input_buffer = dram_buffer(1, kTensor);
  q.output_buffer = dram_buffer(2, kTensor);
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, Broadcast) {
  const broadcast::Params p{.root = 3,
                            .input = dram_buffer(1, kTensor),
                            .output = dram_buffer(2, kTensor),
                            .groups = {.chips = {{0, 1, 2, 3}}},
                            .fabric = kFabric};
  broadcast::Params q;
  q.root = 3;
  q.input = dram_buffer(1, kTensor);
  q.output = dram_buffer(2, kTensor);
  q.groups.chips = {{0, 1, 2, 3}};
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

TEST(ParamsDesignatedInit, SendRecv) {
  // docs/sim_device.md's example.
  const send_recv::Params p{.sender = 4,
                            .receiver = 6,
                            .input = dram_buffer(1, kTensor),
                            .output = dram_buffer(2, kTensor),
                            .fabric = kFabric};
  send_recv::Params q;
  q.sender = 4;
  q.receiver = 6;
  q.input = dram_buffer(1, kTensor);
  q.output = dram_buffer(2, kTensor);
  q.fabric = kFabric;
  EXPECT_EQ(p, q);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
