#pragma once
// `cclmesh run`'s progress report on stderr: where a long simulation has got to (simulated time,
// events), so that a long run is told from a hang. It says only what is known, never an ETA. On a
// terminal one line is rewritten in place; elsewhere (`--progress` into a log) each report is a
// line of its own. It is driven by the engine's event count (SimMeshDeviceOptions::progress),
// never by a clock, so a run's output and its reports are the same run after run.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/engine/engine_progress.hpp"

namespace cclmesh::cli {

// One report as it is printed: "simulated 1234.56 us, 12.3M events".
std::string progress_text(const sim::EngineProgress& progress);

class ProgressLine {
 public:
  enum class Style : std::uint8_t { InPlace, Lines };
  ProgressLine(std::FILE* out, Style style) : out_(out), style_(style) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  void report(const sim::EngineProgress& progress);
  // In place: erases the line, so that what is printed next (the table, an error) starts at
  // the left margin of a clean line. Lines: nothing to erase.
  void clear();

 private:
  std::FILE* out_;
  Style style_;
  std::size_t shown_width_ = 0;  // of the line in place now (0: none)
};

// In place on a terminal (stderr), else a line per report.
ProgressLine::Style progress_style();

// Whether a run shows its progress: --progress always, --no-progress never, else when stderr
// is a terminal.
bool progress_wanted(bool progress_flag, bool no_progress_flag);

}  // namespace cclmesh::cli
