#pragma once
// `cclmesh sweep -j N`: a sweep's points run at most N at once, each in its own forked process,
// their results handed back in point order. A process per point (forked after the options are
// parsed, before any simulation) shares no mutable state with the others, so the engine's
// thread-local pools and the simulated device need no thread safety, and every point's result
// is the one it has in-process (DESIGN.md, determinism).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cclmesh/run_options.hpp"
#include "tools/cclmesh/sweep_point.hpp"

namespace cclmesh::cli {

// The most processes -j starts. A point is CPU-bound, so processes past the host's cores add no
// speed, only points' memory held at once; a number past any host's cores (-j 1000) is a typo,
// refused rather than forked. A sweep never starts more processes than it has points.
constexpr std::size_t kMaxSweepJobs = 256;

// -j's value: 0 is the host's core count (std::thread::hardware_concurrency, 1 if unknown), else
// a positive count up to kMaxSweepJobs. Throws UsageError naming `option` on anything else.
std::size_t parse_jobs(std::string_view text, std::string_view option);

// What one forked point sent back.
struct ForkedPointReport {
  bool completed = false;  // the child wrote its payload and exited 0
  std::string payload;     // everything the child wrote
  std::string failure;     // !completed: how the child ended ("was killed by signal 9 (Killed)")
  int signal = 0;          // the signal that ended the child, 0 if none did
  std::string diagnostics; // what the child wrote to stderr (its fd 2 is a pipe to the parent)
};

struct ForkedPointCallbacks {
  // Runs in the child: point `index`'s payload. An exception ends the child with no result.
  std::function<std::string(std::size_t index)> run;
  // In the parent, in the order the children end (a progress bar counts these).
  std::function<void(std::size_t index)> finished;
  // In the parent, in index order, as soon as every earlier point has been delivered. Returning
  // false (or throwing) stops the run: the children still running are killed and reaped.
  std::function<bool(std::size_t index, ForkedPointReport report)> deliver;
};

// Runs points 0 .. count-1, at most `jobs` (>= 1) children at once, started in `start_order` (a
// permutation of 0 .. count-1; empty: index order) whatever order they are delivered in.
// Returns when every point is delivered or deliver stopped the run; no child is left running or
// unreaped either way. Throws std::system_error if a pipe, fork or poll fails.
void run_points_forked(std::size_t count, std::size_t jobs, const ForkedPointCallbacks& callbacks,
                       const std::vector<std::size_t>& start_order = {});

// A forked point's outcome from what its child sent: the decoded outcome, or Kind::Crashed
// saying how the child ended (with a hint at memory when it was SIGKILLed, as the OOM killer
// does) or that what it sent could not be read.
SweepPointOutcome outcome_from_report(const ForkedPointReport& report);

// The sweep's points: jobs == 1 runs them one after another in this process (no fork), more run
// them through run_points_forked (each child's stderr written out before its outcome is
// delivered, so warnings and CCLMESH_NOC_STATS come in point order), the largest sizes first (a sweep's sizes grow geometrically, so
// its largest points are most of its time: started last, they would run on alone at the end).
// `finished` is called as each point ends, `deliver` in point
// order with its outcome (a child that ended without one: Kind::Crashed); deliver returns false
// to end the sweep there. `before_diagnostics` (if set) is called before a child's stderr is
// written out (a progress bar erases its line there).
void run_sweep_points(const std::vector<RunOptions>& points, std::size_t jobs,
                      const std::function<void(std::size_t index)>& finished,
                      const std::function<bool(std::size_t index, SweepPointOutcome outcome)>& deliver,
                      const std::function<void()>& before_diagnostics = {});

}  // namespace cclmesh::cli
