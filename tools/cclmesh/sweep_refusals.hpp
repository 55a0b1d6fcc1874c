#pragma once
// The error of a `cclmesh sweep` whose every point was refused: each distinct reason once, with
// the points it applies to, in sweep order.

#include <cstdint>
#include <string>
#include <vector>

namespace cclmesh::cli {

// One refused point of the sweep: its op as the table names it, its size, and the refusal.
struct RefusedPoint {
  std::string op;
  std::uint64_t size_bytes = 0;
  std::string reason;
};

// `refused` in sweep order (op by op, each op's sizes ascending); `sizes` the sweep's sizes.
// Every point refused alike (an option the op does not take): that reason, as `run` says it.
// Refusals that differ only by their numbers (the point's own size, "8192 B is less than one page
// per chip", said once or more, or figures derived from it, "N B per core") are one reason, said
// in the words of its last (largest) point, whose "expected at least" is the nearest: one such
// reason reads "none of the sweep's N points can run; the last, OP at S B: ..." (session 39).
// Several: each reason once, numbered, after the points it applies to ("all_reduce at 4096 B
// to 16384 B"; a run of the sweep's consecutive sizes as a range), in the order of their first
// point. Deterministic: it depends on the points alone, not on -j.
std::string every_point_refused(const std::vector<RefusedPoint>& refused, const std::vector<std::uint64_t>& sizes);

}  // namespace cclmesh::cli
