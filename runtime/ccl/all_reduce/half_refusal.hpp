#pragma once
// A refusal one of all_reduce's halves gave, in all_reduce's name.

#include <string>
#include <string_view>

namespace cclmesh::runtime::ccl::all_reduce {

// all_reduce runs a reduce_scatter and an all_gather (rs-ag), or an all_gather and a local sum
// (the composite, the one-shot's fallback), and each half's builder names itself: "reduce_scatter:
// the one-shot ring of 32 chips ..." reads as if the caller had run a reduce_scatter. A refusal
// that begins with a half's name becomes "all_reduce (its reduce_scatter half): ..."; any other
// is returned as it is. (Until session 39 only the CLI renamed them; runtime callers saw the half's.)
std::string refusal_in_all_reduce_name(std::string_view refusal);

// A refusal already in all_reduce's name, as it reads after words that name all_reduce
// themselves ("all_reduce: its groups that run as lines (0-1-2-3): ..."): "all_reduce (its
// reduce_scatter half): X" becomes "its reduce_scatter half: X", "all_reduce: X" becomes "X";
// any other is returned as it is.
std::string refusal_after_all_reduce_name(std::string_view refusal);

// Called in a catch of a CclParamsError (a function-try-block of all_reduce's entry points):
// rethrows it in all_reduce's name, its type kept (rethrow_reworded), as a caller tells a ring
// run as a line, or a page past the payload, by the type.
[[noreturn]] void rethrow_in_all_reduce_name();

}  // namespace cclmesh::runtime::ccl::all_reduce
