#pragma once
// Sizes and times as users type them: "16777216", "16M", "16MiB", "1.5GiB", "64K"; "50us",
// "2ms". Sizes follow nccl-tests: K/M/G and KiB/MiB/GiB are powers of two.

#include <cstdint>
#include <string_view>

#include "sim/engine/time.hpp"

namespace cclmesh::cli {

// Throws UsageError naming `option`, the value and what is accepted.
std::uint64_t parse_size_bytes(std::string_view text, std::string_view option);
// `expected`: what the message says is accepted, for an option that takes a narrower range.
sim::SimTime parse_sim_time(std::string_view text, std::string_view option,
                            std::string_view expected = "a number with a unit ps, ns, us, ms or s, e.g. 50us");
// A positive number of seconds of wall time ("30", "0.5").
double parse_wall_seconds(std::string_view text, std::string_view option);
// A number of seconds to wait, from 0 (do not wait; or what `zero_means` says) to a day ("30",
// "0.5", "0").
double parse_wait_seconds(std::string_view text, std::string_view option, std::string_view zero_means = "do not wait");
// A whole number of at least `min`, digits only: "-2" is refused, not read as 2^64 - 2. Throws
// UsageError "<option>: invalid <what> '<text>': expected <expected>".
std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min,
                                 std::string_view what, std::string_view expected);

}  // namespace cclmesh::cli
