#pragma once
// A CclParamsError rethrown in other words, its type kept.

#include <string>

namespace cclmesh::runtime::ccl {

// Called in a catch of a CclParamsError: throws one of the same type (a RingRunsAsLineError, a
// PageExceedsPacketError with its page size, a TooFewLinksError with its links, else a
// CclParamsError) whose message is `message`.
// A caller that says more about a refusal (in whose name, for which of its groups) keeps it what
// it was: callers tell a ring run as a line, or a page past the payload, by the type (the CLI
// names the fault, or --fabric-payload; a served device's client gets the kind back).
[[noreturn]] void rethrow_reworded(const std::string& message);

}  // namespace cclmesh::runtime::ccl
