#pragma once
// `--device HOST:PORT` (run, sweep): what a command takes beside a served device. The op and its
// tensor are the client's; the system and its fabric are the served device's, and so are the
// device-shaping simulator options (faults, watchdogs, link what-ifs, fabric settings, the data
// mode), which `cclmesh serve` takes; a trace records a simulation this process does not run
// (`serve --trace-dir` writes them). `run --report` is accepted: the served device's link
// figures cross the wire. One place, so run and sweep refuse the same options with the same words.

#include "tools/cclmesh/cli11_fwd.hpp"

#include <initializer_list>
#include <set>
#include <string>

namespace cclmesh::cli {

// The options of an op that run and sweep both take beside --device: the op, its tensor and
// memory, its algorithm choices, the axis it runs along on a per-axis fabric and the inputs'
// seed, with `extra` (the command's own: its sizes and outputs) added.
std::set<std::string> op_options_beside_device(std::initializer_list<const char*> extra);

// Throws UsageError ("--device: OPTION ...; not accepted with --device") for the first option
// given on `command` that is not in `accepted` (names as CLI11's get_name() gives them: the
// first long name).
void reject_options_beside_device(const CLI::App& command, const std::set<std::string>& accepted);

}  // namespace cclmesh::cli
