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

// Element index of logical element (w, z, row, col) of a TILE tensor of logical shape `s`, in
// the tensor's tiles: tiles row-major over the padded (rows/32) x (cols/32) grid, outer dims
// flattened, 1024 elements each; inside a tile, four 16x16 faces (top-left, top-right,
// bottom-left, bottom-right), each row-major.
std::uint64_t tile_element_number(const std::array<std::uint32_t, 4>& s, std::uint64_t outer, std::uint32_t row,
                                  std::uint32_t col) {
  const std::uint64_t tiles_y = (s[2] + 31) / 32;
  const std::uint64_t tiles_x = (s[3] + 31) / 32;
  const std::uint64_t tile = (outer * tiles_y + row / 32) * tiles_x + col / 32;
  const std::uint32_t r = row % 32;
  const std::uint32_t c = col % 32;
  const std::uint32_t face = (r / 16) * 2 + c / 16;
  const std::uint32_t in_tile = face * 256 + (r % 16) * 16 + c % 16;
  return tile * 1024 + in_tile;
}

// bfp8_b element number e of a tensor's tiles (1088 B each: 64 shared exponents, one per 16
// consecutive elements, then 1024 element bytes), as fp32 bits.
std::uint32_t bfp8_value(const Bytes& tiles, std::uint64_t e) {
  const std::uint64_t tile = e / 1024 * kernels::kBfp8TileBytes;
  const std::uint64_t in_tile = e % 1024;
  const auto exponent = static_cast<std::uint8_t>(tiles[tile + in_tile / kernels::kBfp8BlockValues]);
  const auto element = static_cast<std::uint8_t>(tiles[tile + kernels::kBfp8ExponentBytes + in_tile]);
  return kernels::bfp8_element_to_fp32_bits(element, exponent);
}

// The gather of TILE parts whose dim 2 or 3 is not whole tiles, element by element: part i's
// element (w, z, y, x) goes to (w, z, y + i*Y, x) or (w, z, y, x + i*X); the output's padding
// is zeros. What each part holds in its own padding does not matter. bfp8_b: every element is
// unpacked to fp32 (exact but for flushed subnormals), placed, and each output block of 16 is
// packed again with its own shared exponent (kernels/reduce/bfp8_math.hpp's rule), as the
// device's concat re-blocks.
Bytes concat_tile_padded(const std::vector<Bytes>& parts, const TensorSpec& part, std::uint32_t dim) {
  const bool bfp8 = part.dtype == DataType::Bfloat8B;
  const std::uint32_t element = bfp8 ? 4 : element_bytes(part.dtype);  // bfp8_b: placed as fp32
  const auto n = static_cast<std::uint32_t>(parts.size());
  const TensorSpec whole = with_dim_scaled(part, dim, n, true);
  const std::uint64_t part_bytes = size_bytes(part);
  const std::uint64_t out_elements = num_pages(whole) * 1024;
  Bytes placed(out_elements * element, std::byte{0});
  const std::uint64_t outer = std::uint64_t{part.shape[0]} * part.shape[1];
  for (std::uint32_t i = 0; i < n; ++i) {
    if (parts[i].size() != part_bytes) {
      throw CclParamsError(
          fmt::format("reference concat: part {} is {} B; expected {} B", i, parts[i].size(), part_bytes));
    }
    for (std::uint64_t o = 0; o < outer; ++o) {
      for (std::uint32_t y = 0; y < part.shape[2]; ++y) {
        for (std::uint32_t x = 0; x < part.shape[3]; ++x) {
          const std::uint32_t out_y = dim == 2 ? y + i * part.shape[2] : y;
          const std::uint32_t out_x = dim == 3 ? x + i * part.shape[3] : x;
          std::byte* to = placed.data() + tile_element_number(whole.shape, o, out_y, out_x) * element;
          const std::uint64_t from = tile_element_number(part.shape, o, y, x);
          if (bfp8) {
            const std::uint32_t value = bfp8_value(parts[i], from);
            std::memcpy(to, &value, 4);
          } else {
            std::memcpy(to, parts[i].data() + from * element, element);
          }
        }
      }
    }
  }
  if (!bfp8) return placed;
  Bytes out(num_pages(whole) * kernels::kBfp8TileBytes);
  for (std::uint64_t block = 0; block < out_elements / kernels::kBfp8BlockValues; ++block) {
    std::uint32_t values[kernels::kBfp8BlockValues];
    std::memcpy(values, placed.data() + block * kernels::kBfp8BlockValues * 4, sizeof values);
    const std::uint64_t tile = block / kernels::kBfp8BlocksPerTile * kernels::kBfp8TileBytes;
    const std::uint64_t in_tile = block % kernels::kBfp8BlocksPerTile;
    kernels::pack_bfp8_block(values, reinterpret_cast<std::uint8_t*>(out.data() + tile + in_tile),
                             reinterpret_cast<std::uint8_t*>(out.data() + tile + kernels::kBfp8ExponentBytes +
                                                             in_tile * kernels::kBfp8BlockValues));
  }
  return out;
}

}  // namespace

Bytes concat(const std::vector<Bytes>& parts, const TensorSpec& part, std::uint32_t dim) {
  if (part.layout == Layout::Tile && (dim == 2 || dim == 3) && part.shape[dim] % kTileSide != 0) {
    return concat_tile_padded(parts, part, dim);
  }
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
  std::uint32_t page = page_size_bytes(whole_spec);
  Blocks b = blocks_of(shape_in_pages(whole_spec), dim);
  // ROW_MAJOR along dim 3: a page is a whole row, and its elements are what is cut (reduce_scatter's
  // row pieces, row_pieces.hpp): a row of shape[3] one-element "pages".
  const bool cuts_rows = whole_spec.layout == Layout::RowMajor && dim == 3;
  if (cuts_rows) {
    page = element_bytes(whole_spec.dtype);
    b.extent = whole_spec.shape[3];
  }
  if (count == 0 || b.extent % count != 0 || index >= count) {
    throw CclParamsError(fmt::format("reference slice: {} {} along dim {} do not split into {} pieces (piece {})",
                                     b.extent, cuts_rows ? "elements" : "pages", dim, count, index));
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
