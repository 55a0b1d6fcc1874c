#pragma once
// `--link-rate RATE` and `--link-latency T` (run, sweep, topo): every ethernet link of the
// system at another rate or one-way latency, applied before the fabric is built, and how a
// result says that its links are not the hardware's (docs/topologies.md, "What-ifs from the
// command line").
//
//   --link-rate 25GB/s    per direction; a decimal with the unit GB/s (1e9 B/s) or Gb/s
//                         (1e9 bit/s): 0.1 GB/s (about 1 Gb ethernet) .. 1000 GB/s
//   --link-latency 2us    one way; the --max-sim-time syntax: 200 ns .. 1 ms

#include "tools/cclmesh/cli11_fwd.hpp"
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/engine/time.hpp"
#include "topologies/arch.hpp"
#include "topologies/link_whatif.hpp"

namespace cclmesh::cli {

// The range a simulated link accepts (topologies/arch.hpp), a system file's links' too.
using topo::kMaxLinkLatencyPs;
using topo::kMaxLinkRateBytesPerS;
using topo::kMinLinkLatencyPs;
using topo::kMinLinkRateBytesPerS;

// Throw UsageError naming `option`, the value and what is accepted (and why the range).
std::int64_t parse_link_rate(std::string_view text, std::string_view option);
sim::SimTime parse_link_latency(std::string_view text, std::string_view option);

// Adds --link-rate and --link-latency, parsed into `what_if` as they are read.
void add_link_whatif_options(CLI::App& command, topo::LinkWhatIf& what_if);

// "12.5 GB/s", "0.1 GB/s"; "600 ns", "2 us".
std::string rate_text(std::int64_t bytes_per_s);
std::string latency_text(std::int64_t ps);

// "what-if links 25 GB/s, 600 ns one way (arch default 12.5 GB/s, 600 ns)"; a range
// "12.5-25 GB/s" where the links differ, and "3 of 24 links" when only some are off default.
std::string link_whatif_text(const topo::LinkSpread& spread);
// {"links_off_arch_default": 24, "system_links": 24, "rate_GBps": {"min": 25, "max": 25},
//  "latency_ns": {"min": 600, "max": 600}, "arch_rate_GBps": 12.5, "arch_latency_ns": 600}
nlohmann::json link_whatif_json(const topo::LinkSpread& spread);

}  // namespace cclmesh::cli
