// A sharded buffer lays its pages out in rows of ShardSpec::tensor_width_pages: the op's
// validate must refuse a buffer whose rows are not the tensor's (the review 9 gap: such a buffer
// holds the right bytes per page, but its shards are not the tensor's shards), naming the buffer,
// the value and the width expected; all_reduce hands its halves the tensor as one row of pages
// (a view of the caller's tensor), and the caller's buffers, laid out in the tensor's rows, must
// still pass, as must an intermediate laid out in its own rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ag = all_gather;
namespace ar = all_reduce;
namespace rs = reduce_scatter;
using test::dram_buffer;
using test::semaphore;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

// `spec` width sharded in L1 over up to 8 cores of row 0, laid out in rows of `row_pages` pages
// (the tensor's own width in pages when it is right).
BufferHandle width_sharded(std::uint32_t id, const TensorSpec& spec, std::uint32_t row_pages) {
  BufferHandle b = dram_buffer(id, spec);
  b.config.type = BufferType::L1;
  b.config.layout = TensorMemoryLayout::WidthSharded;
  const auto pages = static_cast<std::uint32_t>(num_pages(spec));
  const std::uint32_t cores = std::min(row_pages, 8u);
  b.config.shard = ShardSpec{{CoreRange{{0, 0}, {cores - 1, 0}}}, pages / row_pages, row_pages / cores, row_pages,
                             ShardOrientation::RowMajor};
  return b;
}

template <typename Validate>
void expect_refused(Validate validate, const std::string& buffer, const std::string& value,
                    const std::string& expected) {
  try {
    validate();
    ADD_FAILURE() << "a " << buffer << " buffer in rows of " << value << " pages was accepted";
  } catch (const CclParamsError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(buffer + " buffer"), std::string::npos) << what;
    EXPECT_NE(what.find("tensor_width_pages " + value), std::string::npos) << what;
    EXPECT_NE(what.find("rows of " + expected + " pages"), std::string::npos) << what;
  }
}

ag::Params gather(const topo::Topology& t3k, std::uint32_t input_rows, std::uint32_t output_rows) {
  ag::Params p;
  p.input = bf16({1, 1, 64, 256});  // 2 x 8 tiles per chip; the output 2 x 64
  p.topology = CclTopology::Ring;
  p.fabric.mode = FabricMode::Ring;
  p.input_buffer = width_sharded(1, p.input, input_rows);
  p.output_buffer = width_sharded(2, ag::output_spec(p, t3k), output_rows);
  p.done_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  p.done_semaphore->cores = ag::semaphore_cores(p, t3k);
  return p;
}

TEST(BufferRows, AllGatherChecksBothBuffersRows) {
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_NO_THROW(ag::validate(gather(t3k, 8, 64), t3k));
  // 16 pages laid out 4 to a row: the same bytes per page, shards of another tensor.
  expect_refused([&] { ag::validate(gather(t3k, 4, 64), t3k); }, "input", "4", "8");
  expect_refused([&] { ag::validate(gather(t3k, 8, 32), t3k); }, "output", "32", "64");
}

TEST(BufferRows, ReduceScatterAndReduceCheckThemToo) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params p;
  p.input = bf16({1, 1, 64, 256});
  p.topology = CclTopology::Ring;
  p.fabric.mode = FabricMode::Ring;
  p.input_buffer = width_sharded(1, p.input, 2);
  p.output_buffer = dram_buffer(2, rs::output_spec(p, t3k));
  // 64 KiB per chip: Auto runs the one-shot ring, whose copies need the intermediate buffer.
  if (rs::needs_intermediate(p, t3k)) p.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(p, t3k));
  p.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  p.barrier_semaphore->cores = rs::semaphore_cores(p, t3k);
  expect_refused([&] { rs::validate(p, t3k); }, "input", "2", "8");
  p.input_buffer = width_sharded(1, p.input, 8);
  EXPECT_NO_THROW(rs::validate(p, t3k));

  reduce::Params r;
  r.tensor = bf16({1, 1, 64, 256});
  r.topology = CclTopology::Ring;
  r.fabric.mode = FabricMode::Ring;
  r.input_buffer = dram_buffer(1, r.tensor);
  r.output_buffer = width_sharded(2, r.tensor, 16);
  r.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  r.barrier_semaphore->cores = reduce::semaphore_cores(r, t3k);
  expect_refused([&] { reduce::validate(r, t3k); }, "output", "16", "8");
}

// all_reduce's halves see the 2 x 8-tile tensor as one row of 16 tiles; the caller's buffers,
// in the tensor's rows of 8, pass, and rows of 16 (the view's width) do not.
TEST(BufferRows, AllReduceChecksTheCallersTensorNotItsFlatView) {
  const topo::Topology t3k = topo::build_t3k();
  for (const ar::Algorithm algorithm : {ar::Algorithm::ReduceScatterAllGather, ar::Algorithm::Composite,
                                        ar::Algorithm::OneShot}) {
    const auto params = [&](std::uint32_t rows) {
      ar::Params p;
      p.tensor = bf16({1, 1, 64, 256});
      p.topology = CclTopology::Ring;
      p.fabric.mode = FabricMode::Ring;
      p.algorithm = algorithm;
      p.workers_per_link = 1;
      p.input_buffer = width_sharded(1, p.tensor, rows);
      p.output_buffer = width_sharded(2, p.tensor, rows);
      p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
      if (ar::needs_rs_intermediate(p, t3k)) p.rs_intermediate_buffer = dram_buffer(4, ar::rs_intermediate_spec(p, t3k));
      p.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
      p.done_semaphore = semaphore(2, {{0, 0}, {1, 0}});
      const std::vector<CoreRange> cores = ar::semaphore_cores(p, t3k);
      p.barrier_semaphore->cores = cores;
      p.done_semaphore->cores = cores;
      return p;
    };
    EXPECT_NO_THROW(ar::build(params(8), t3k)) << static_cast<int>(algorithm);
    expect_refused([&] { ar::build(params(16), t3k); }, "input", "16", "8");
    // An intermediate holds the view as a tensor of its own: sharded in its own rows, it passes.
    ar::Params p = params(8);
    const TensorSpec intermediate = ar::intermediate_spec(p, t3k);
    p.intermediate_buffer = width_sharded(3, intermediate, shape_in_pages(intermediate).x);
    EXPECT_NO_THROW(ar::build(p, t3k)) << static_cast<int>(algorithm);
    p.intermediate_buffer = width_sharded(3, intermediate, 1);
    expect_refused([&] { ar::build(p, t3k); }, "intermediate", "1", std::to_string(shape_in_pages(intermediate).x));
  }
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
