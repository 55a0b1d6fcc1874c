#pragma once
// The op's tensor as the run's options describe it: --dtype and --layout, --size's pages or
// --shape, and the refusals of a size or shape the op cannot cut into its chips' parts.

#include <array>
#include <cstdint>
#include <string>

#include "runtime/ccl/common/collective.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;

// One message for --size below a page per chip, whether refused before the device is built
// (reject_size_below_a_page_per_chip) or while the op is prepared (prepare_collective).
[[noreturn]] void throw_size_below_a_page_per_chip(std::uint64_t size_bytes, std::uint64_t page_bytes,
                                                   std::uint64_t chips);

// --dtype's data type (bf16 unless fp32 or bfp8).
ccl::DataType parse_dtype(const std::string& text);

// One chip's tensor of `pages` pages: TILE pages along dim 3 ([1,1,32,32P]); ROW_MAJOR rows
// of 1024 elements along dim 2 ([1,1,P,1024]), since a ROW_MAJOR page is a whole row.
ccl::TensorSpec tensor_of_pages(const RunOptions& options, std::uint64_t pages);

// The dim --size's tensor grows along: 3 (TILE), 2 (ROW_MAJOR).
std::uint32_t gather_dim(const RunOptions& options);

// The page of --dtype and --layout; UsageError naming them when they do not go together.
std::uint64_t page_bytes_of(const RunOptions& options);

// The tensor of --shape, in the run's dtype and layout.
ccl::TensorSpec tensor_of_shape(const RunOptions& options, const std::array<std::uint32_t, 4>& shape);

// all_gather's --shape is the gathered output (REFERENCE 8's convention for its AG rows): each
// chip's input is it split N ways along dim, which must divide (tt-metal's shape[dim] % N == 0).
ccl::TensorSpec gathered_input(const RunOptions& options, std::uint32_t dim, std::uint32_t n);

// reduce_scatter and all_to_all cut each chip's tensor into N equal parts along --dim (tt-metal's
// shape[dim] % N == 0, REFERENCE 11.15). --size's tensor has whole pages along one dim only, so
// another --dim cannot split; a --shape must hold a multiple of N pages there (ROW_MAJOR along
// dim 3, whose rows the op cuts in pieces: N elements, --size's rows being 1024 wide). Refused
// here naming the option at fault; the library's refusal names only the op. Whether a part of a
// row is a multiple of 32 B is left to the op's own refusal, which names the bytes.
void require_split_along_dim(const RunOptions& options, const ccl::TensorSpec& tensor, std::uint32_t dim,
                             std::uint32_t n, const char* parts);

}  // namespace cclmesh::cli::detail
