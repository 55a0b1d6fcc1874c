// The concat kernel's arguments (kernels/concat/concat_args.hpp) through the host builder
// (kargs::build_concat_args), which runs the kernel's own parser: what each dtype needs (a
// bfp8_b tile is 1088 B), where the output's and the inputs' address-generator blocks go, and
// what the parser refuses, by arg index. No device.
#include <gtest/gtest.h>

#include <string>

#include "kernels/concat/concat_args.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"

namespace cclmesh::kernels::concat {
namespace {

namespace ia = interpreter;

kargs::ConcatSpec spec(uint32_t element_bytes, uint32_t tile_bytes) {
  kargs::ConcatSpec s;
  s.element_bytes = element_bytes;
  s.dim = 3;
  s.shape[2] = 5;
  s.shape[3] = 20;
  s.first_tile = 0;
  s.num_tiles = 2;  // 3 ranks of 20 columns: 2 output tiles
  s.tile_bytes = tile_bytes;
  kargs::ShardedTensorArgs out;
  out.address = 0x9000;
  out.page_size_bytes = tile_bytes;
  out.layout = api::TensorMemoryLayout::WIDTH_SHARDED;
  out.page_stride_bytes = tile_bytes;
  out.pages_per_tensor_row = 2;
  out.pages_per_shard_width = 1;
  out.rows_per_shard_height = 1;
  out.cores = {{1, 2}, {2, 2}};
  s.output = out;
  s.input = kargs::InterleavedTensorArgs{0, tile_bytes, api::BufferType::DRAM, 12, tile_bytes};
  s.in_addresses = {0x1000, 0x2000, 0x3000};
  return s;
}

uint32_t parse(const kargs::KernelArgs& args, ConcatArgs& out) {
  return parse_concat_args(args.runtime.data(), static_cast<uint32_t>(args.runtime.size()),
                           args.compile_time[kCtElementBytes], out);
}

TEST(ConcatArgs, Bfp8TilesAreTheirOwnSize) {
  EXPECT_EQ(tile_bytes_for(2), 2048u);
  EXPECT_EQ(tile_bytes_for(4), 4096u);
  EXPECT_EQ(tile_bytes_for(kBfp8ElementBytes), 1088u);
  EXPECT_EQ(tile_bytes_for(3), 0u);
  const kargs::KernelArgs args = kargs::build_concat_args(spec(kBfp8ElementBytes, 1088));
  ConcatArgs a;
  ASSERT_EQ(parse(args, a), kArgsOk);
  EXPECT_EQ(a.tile_bytes, 1088u);
  EXPECT_EQ(args.compile_time.size(), kNumCompileTimeArgs);
  // A bf16-sized tile for bfp8_b, or a dtype the kernel does not know, is refused by index.
  try {
    kargs::build_concat_args(spec(kBfp8ElementBytes, 2048));
    ADD_FAILURE() << "a 2048 B bfp8_b tile was accepted";
  } catch (const kargs::KernelArgsError& e) {
    EXPECT_NE(std::string(e.what()).find("runtime arg 8 "), std::string::npos) << e.what();
  }
  EXPECT_THROW(kargs::build_concat_args(spec(3, 3072)), kargs::KernelArgsError);
}

TEST(ConcatArgs, OutputAndInputAddressGenerators) {
  const kargs::KernelArgs args = kargs::build_concat_args(spec(2, 2048));
  ConcatArgs a;
  ASSERT_EQ(parse(args, a), kArgsOk);
  // The output's block: width sharded at its address, its core table after the block's words.
  EXPECT_EQ(a.out.addrgen.layout, api::TensorMemoryLayout::WIDTH_SHARDED);
  EXPECT_EQ(a.out.addrgen.sharded.shard_base_address, 0x9000u);
  EXPECT_EQ(a.out.core_table_offset, args.runtime[kRtOutAddrGenOffset] + ia::kAddrGenShardedCoreTable);
  EXPECT_EQ(args.runtime[a.out.core_table_offset + 1], ia::pack_core_xy(2, 2));
  // Page 1 of the output is on core 1 (2, 2), at the shard base.
  const api::PageLocation out1 = api::page_location(a.out.addrgen, 1);
  EXPECT_EQ(out1.target, 1u);
  EXPECT_EQ(out1.address, 0x9000u);
  // The inputs' block is addressed at 0; rank r's page adds in_addresses[r].
  EXPECT_EQ(a.in.addrgen.layout, api::TensorMemoryLayout::INTERLEAVED);
  EXPECT_EQ(api::page_location(a.in.addrgen, 13).address, 2048u);  // bank 1, second row of pages
  EXPECT_EQ(a.in_addresses[2], 0x3000u);
}

TEST(ConcatArgs, BlockOffsetsMustPointPastTheHeader) {
  kargs::KernelArgs args = kargs::build_concat_args(spec(2, 2048));
  ConcatArgs a;
  args.runtime[kRtOutAddrGenOffset] = kRtFirstInAddress;  // inside the input addresses
  EXPECT_EQ(parse(args, a), kRtOutAddrGenOffset);
  args = kargs::build_concat_args(spec(2, 2048));
  args.runtime[kRtInAddrGenOffset] = 3;
  EXPECT_EQ(parse(args, a), kRtInAddrGenOffset);
  // A block past the end of the args.
  args = kargs::build_concat_args(spec(2, 2048));
  args.runtime[kRtInAddrGenOffset] = static_cast<uint32_t>(args.runtime.size());
  EXPECT_NE(parse(args, a), kArgsOk);
}

}  // namespace
}  // namespace cclmesh::kernels::concat
