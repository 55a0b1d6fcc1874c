#pragma once
// `--device HOST:PORT` (run, sweep): what a command takes beside a served device. The op and its
// tensor are the client's; the system and its fabric are the served device's, and so are the
// device-shaping simulator options (faults, watchdogs, link what-ifs, fabric settings, the data
// mode), which `cclmesh serve` takes; traces and reports record a simulation this process does
// not run. One place, so run and sweep refuse the same options with the same words.

#include <CLI/CLI.hpp>

#include <set>
#include <string>

namespace cclmesh::cli {

// Throws UsageError ("--device: OPTION ...; not accepted with --device") for the first option
// given on `command` that is not in `accepted` (names as CLI11's get_name() gives them: the
// first long name).
void reject_options_beside_device(const CLI::App& command, const std::set<std::string>& accepted);

}  // namespace cclmesh::cli
