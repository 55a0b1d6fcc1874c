#pragma once
// The matrix the wide-row e2e tests share (sessions 34-36): ROW_MAJOR rows wider than the 4352 B
// default fabric payload, 8192 B (a 4096-wide bf16 tensor: 2 equal pieces), 4384 B (137 x 32 B:
// 137 pieces of 32 B), 4416 B (copies in 23 pieces of 192 B that fill a payload, reductions in 2 of
// 2208 B: row_pieces.hpp, RowPieceChoice) and 4400 B (not a multiple of 32 B: 2208 + 2192 B, a
// shorter last piece), on N300 and the T3K's line and ring, bf16 and fp32, DRAM and L1. Each test
// file adds its own ops (and all_reduce its algorithms).

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {

struct WideRowCase {
  const char* system = "n300";
  CclTopology shape = CclTopology::Line;
  DataType dtype = DataType::Bfloat16;
  std::uint32_t row_bytes = 8192;
  BufferType memory = BufferType::Dram;
};

inline void PrintTo(const WideRowCase& c, std::ostream* os) {
  *os << c.system << "_" << shape_name(c.shape) << "_" << (c.dtype == DataType::Float32 ? "fp32" : "bf16") << "_"
      << c.row_bytes << "B_" << (c.memory == BufferType::L1 ? "l1" : "dram");
}

// A gtest parameter name from PrintTo (INSTANTIATE_TEST_SUITE_P's last argument).
template <typename Case>
std::string wide_row_case_name(const ::testing::TestParamInfo<Case>& info) {
  std::ostringstream name;
  PrintTo(info.param, &name);
  return name.str();
}

inline topo::Topology system_of(const WideRowCase& c) {
  return std::string(c.system) == "t3k" ? topo::build_t3k() : topo::build_n300();
}

// `rows` rows of `row_bytes` in a (w, z, rows, width) tensor.
inline TensorSpec wide_rows(DataType dtype, std::uint32_t row_bytes, std::uint32_t rows, std::uint32_t w = 1,
                            std::uint32_t z = 1) {
  const std::uint32_t element_bytes = dtype == DataType::Float32 ? 4 : 2;
  return TensorSpec{{w, z, rows, row_bytes / element_bytes}, dtype, Layout::RowMajor};
}

// Every system x dtype x row width x memory of the matrix (48 cases).
inline std::vector<WideRowCase> wide_row_cases() {
  std::vector<WideRowCase> all;
  const std::pair<const char*, CclTopology> systems[] = {
      {"n300", CclTopology::Line}, {"t3k", CclTopology::Line}, {"t3k", CclTopology::Ring}};
  for (const auto& [system, shape] : systems) {
    for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
      for (const std::uint32_t row_bytes : {8192u, 4384u, 4416u, 4400u}) {
        for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
          all.push_back({system, shape, dtype, row_bytes, memory});
        }
      }
    }
  }
  return all;
}

}  // namespace cclmesh::ccltest
