#include "tools/cclmesh/run_tensors.hpp"

#include <fmt/format.h>

#include <limits>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli::detail {

[[noreturn]] void throw_size_below_a_page_per_chip(std::uint64_t size_bytes, std::uint64_t page_bytes,
                                                   std::uint64_t chips) {
  throw UsageError(fmt::format("--size: {} B is less than one {} B page per chip on {} chips; expected at least {} B",
                               size_bytes, page_bytes, chips, page_bytes * chips));
}

ccl::DataType parse_dtype(const std::string& text) {
  if (text == "fp32") return ccl::DataType::Float32;
  if (text == "bfp8") return ccl::DataType::Bfloat8B;
  return ccl::DataType::Bfloat16;
}

ccl::TensorSpec tensor_of_pages(const RunOptions& options, std::uint64_t pages) {
  ccl::TensorSpec spec;
  spec.dtype = parse_dtype(options.dtype);
  spec.layout = options.layout == "row_major" ? ccl::Layout::RowMajor : ccl::Layout::Tile;
  // A 4D shape holds 32-bit extents: refuse what would wrap rather than run a smaller tensor.
  const std::uint64_t extent = spec.layout == ccl::Layout::Tile ? 32 * pages : pages;
  if (extent > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError(fmt::format("--size: {} pages per chip do not fit a tensor shape; use a smaller size", pages));
  }
  const auto p = static_cast<std::uint32_t>(pages);
  spec.shape = spec.layout == ccl::Layout::Tile ? std::array<std::uint32_t, 4>{1, 1, 32, 32 * p}
                                                : std::array<std::uint32_t, 4>{1, 1, p, 1024};
  return spec;
}

std::uint32_t gather_dim(const RunOptions& options) { return options.layout == "row_major" ? 2 : 3; }

std::uint64_t page_bytes_of(const RunOptions& options) {
  try {
    return ccl::page_size_bytes(tensor_of_pages(options, 1));
  } catch (const ccl::CclParamsError& e) {
    throw UsageError(fmt::format("--dtype/--layout: {}", e.what()));
  }
}

ccl::TensorSpec tensor_of_shape(const RunOptions& options, const std::array<std::uint32_t, 4>& shape) {
  page_bytes_of(options);  // an invalid --dtype/--layout pair is refused naming them
  ccl::TensorSpec spec = tensor_of_pages(options, 1);
  spec.shape = shape;
  return spec;
}

ccl::TensorSpec gathered_input(const RunOptions& options, std::uint32_t dim, std::uint32_t n) {
  const std::array<std::uint32_t, 4>& shape = *options.shape;
  if (shape[dim] % n != 0) {
    throw UsageError(fmt::format("--shape: {} has {} along dim {}, which does not split over {} chips; all_gather's "
                                 "--shape is the gathered output, expected a multiple of {} along --dim",
                                 fmt::join(shape, ","), shape[dim], dim, n, n));
  }
  std::array<std::uint32_t, 4> input = shape;
  input[dim] /= n;
  return tensor_of_shape(options, input);
}

void require_split_along_dim(const RunOptions& options, const ccl::TensorSpec& tensor, std::uint32_t dim,
                             std::uint32_t n, const char* parts) {
  const bool tile = tensor.layout == ccl::Layout::Tile;
  // ROW_MAJOR along dim 3 cuts inside the rows (row_pieces.hpp): its parts are counted in elements.
  const bool elements = ccl::cuts_rows(tensor, dim);
  const std::uint32_t extent = elements ? tensor.shape[3] : ccl::dim_of(ccl::shape_in_pages(tensor), dim);
  if (extent % n == 0) return;
  const char* unit = elements           ? (extent == 1 ? "element" : "elements")
                     : tile && dim >= 2 ? (extent == 1 ? "tile" : "tiles")
                                        : (extent == 1 ? "page" : "pages");
  const auto op = to_string(options.op);
  if (!options.shape) {
    throw UsageError(fmt::format("--dim: {} with --size: {} cuts each chip's tensor into {} equal {} along --dim, and "
                                 "--size's [{}] has {} {} along dim {}; expected --dim {} with --size, or --shape with "
                                 "a multiple of {} along --dim",
                                 dim, op, n, parts, fmt::join(tensor.shape, ","), extent, unit, dim,
                                 gather_dim(options), n));
  }
  const std::string multiple = tile && dim >= 2 ? fmt::format("{} tiles ({} elements)", n, 32 * n)
                                                : fmt::format("{}", n);
  throw UsageError(fmt::format("--shape: {} has {} {} along dim {}, which does not split into {} equal {}; {} cuts "
                               "each chip's tensor along --dim, expected a multiple of {} there",
                               fmt::join(*options.shape, ","), extent, unit, dim, n, parts,
                               op, multiple));
}

}  // namespace cclmesh::cli::detail
