#include "runtime/ccl/common/host_reference.hpp"

#include <fmt/format.h>

#include <cstring>

#include "kernels/reduce/bfp8_math.hpp"
#include "kernels/reduce/reduce_math.hpp"

namespace cclmesh::runtime::ccl::reference {
namespace {

// Pages of `shape` form outer x [extent along dim] x inner blocks; inner = pages per step of dim.
struct Blocks {
  std::uint64_t outer = 1;
  std::uint64_t extent = 1;
  std::uint64_t inner = 1;
};

Blocks blocks_of(const api::Shape4D& s, std::uint32_t dim) {
  const std::uint32_t dims[4] = {s.w, s.z, s.y, s.x};
  Blocks b;
  for (std::uint32_t d = 0; d < 4; ++d) {
    if (d < dim) b.outer *= dims[d];
    if (d > dim) b.inner *= dims[d];
  }
  b.extent = dim_of(s, dim);
  return b;
}

}  // namespace

Bytes concat(const std::vector<Bytes>& parts, const TensorSpec& part, std::uint32_t dim) {
  const std::uint32_t page = page_size_bytes(part);
  const Blocks b = blocks_of(shape_in_pages(part), dim);
  const std::uint64_t part_bytes = b.outer * b.extent * b.inner * page;
  const std::uint64_t run = b.extent * b.inner * page;  // one outer step of one part
  Bytes out(part_bytes * parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].size() != part_bytes) {
      throw CclParamsError(
          fmt::format("reference concat: part {} is {} B; expected {} B", i, parts[i].size(), part_bytes));
    }
    for (std::uint64_t o = 0; o < b.outer; ++o) {
      std::memcpy(out.data() + (o * parts.size() + i) * run, parts[i].data() + o * run, run);
    }
  }
  return out;
}

Bytes slice(const Bytes& whole, const TensorSpec& whole_spec, std::uint32_t dim, std::uint32_t count,
            std::uint32_t index) {
  const std::uint32_t page = page_size_bytes(whole_spec);
  const Blocks b = blocks_of(shape_in_pages(whole_spec), dim);
  if (count == 0 || b.extent % count != 0 || index >= count) {
    throw CclParamsError(fmt::format("reference slice: {} pages along dim {} do not split into {} pieces (piece {})",
                                     b.extent, dim, count, index));
  }
  if (whole.size() != b.outer * b.extent * b.inner * page) {
    throw CclParamsError(
        fmt::format("reference slice: {} B for a tensor of {} B", whole.size(), b.outer * b.extent * b.inner * page));
  }
  const std::uint64_t piece = b.extent / count * b.inner * page;
  Bytes out(piece * b.outer);
  for (std::uint64_t o = 0; o < b.outer; ++o) {
    std::memcpy(out.data() + o * piece, whole.data() + o * b.extent * b.inner * page + index * piece, piece);
  }
  return out;
}

Bytes sum_in_order(const std::vector<std::span<const std::byte>>& parts, DataType dtype) {
  if (parts.empty()) throw CclParamsError("reference sum: no parts");
  const std::size_t bytes = parts.front().size();
  if (dtype == DataType::Bfloat8B && bytes % kernels::kBfp8TileBytes != 0) {
    throw CclParamsError(fmt::format("reference sum: {} B of bfp8_b is not whole {} B tiles", bytes,
                                     kernels::kBfp8TileBytes));
  }
  Bytes acc(parts.front().begin(), parts.front().end());
  for (std::size_t k = 1; k < parts.size(); ++k) {
    if (parts[k].size() != bytes) throw CclParamsError("reference sum: parts differ in size");
    switch (dtype) {
      case DataType::Float32:
        for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
          std::uint32_t a = 0;
          std::uint32_t b = 0;
          std::memcpy(&a, acc.data() + i, 4);
          std::memcpy(&b, parts[k].data() + i, 4);
          const std::uint32_t s = kernels::fp32_add_bits(a, b);
          std::memcpy(acc.data() + i, &s, 4);
        }
        break;
      case DataType::Bfloat16:
        for (std::size_t i = 0; i + 2 <= bytes; i += 2) {
          std::uint16_t a = 0;
          std::uint16_t b = 0;
          std::memcpy(&a, acc.data() + i, 2);
          std::memcpy(&b, parts[k].data() + i, 2);
          const std::uint16_t s = kernels::bf16_add(a, b);
          std::memcpy(acc.data() + i, &s, 2);
        }
        break;
      case DataType::Bfloat8B: {
        std::uint8_t sum[kernels::kBfp8TileBytes];
        for (std::size_t i = 0; i < bytes; i += kernels::kBfp8TileBytes) {
          kernels::add_bfp8_tile(reinterpret_cast<const std::uint8_t*>(acc.data() + i),
                                 reinterpret_cast<const std::uint8_t*>(parts[k].data() + i), sum);
          std::memcpy(acc.data() + i, sum, kernels::kBfp8TileBytes);
        }
        break;
      }
    }
  }
  return acc;
}

void bound_bfp8_exponents(std::span<std::byte> tiles) {
  if (tiles.size() % kernels::kBfp8TileBytes != 0) {
    throw CclParamsError(fmt::format("bfp8_b inputs: {} B is not whole {} B tiles", tiles.size(),
                                     kernels::kBfp8TileBytes));
  }
  constexpr unsigned kLowestExponent = 120;
  for (std::size_t tile = 0; tile < tiles.size(); tile += kernels::kBfp8TileBytes) {
    for (std::size_t k = 0; k < kernels::kBfp8ExponentBytes; ++k) {
      std::byte& e = tiles[tile + k];
      e = static_cast<std::byte>(kLowestExponent + (static_cast<unsigned>(e) & 0x0Fu));
    }
  }
}

}  // namespace cclmesh::runtime::ccl::reference
