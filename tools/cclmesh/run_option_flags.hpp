#pragma once
// The options `cclmesh run` and `cclmesh sweep` share: what system to simulate and how to run
// the collective on it (everything in RunOptions but the op, the size and the faults). One
// place, so both commands accept the same options with the same ranges and help.

#include "tools/cclmesh/cli11_fwd.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

void add_collective_options(CLI::App& command, RunOptions& options);

// --trace-limit N (run --trace, serve --trace-dir): spans kept per trace track; 0 is refused
// where a trace is asked for (it would keep none). `trace`, when given, is the option that asks
// for the trace: --trace-limit without it is refused ("--trace-limit requires --trace") rather
// than ignored.
CLI::Option* add_trace_limit_option(CLI::App& command, std::size_t& limit, CLI::Option* trace = nullptr);

// --device-wait SECONDS (run, sweep), beside `device` (--device HOST:PORT), which it needs.
void add_device_wait_option(CLI::App& command, RunOptions& options, CLI::Option* device);

// --chips "A,B,...": chip ids in order; a UsageError naming `option` for anything else (whether
// the chips exist, repeat or neighbour each other is checked against the system later).
std::vector<std::uint32_t> parse_chip_list(std::string_view text, std::string_view option);

}  // namespace cclmesh::cli
