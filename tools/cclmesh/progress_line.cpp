#include "tools/cclmesh/progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace cclmesh::cli {

namespace {

std::string event_count_text(std::uint64_t events) {
  if (events < 1'000'000) return fmt::format("{}", events);
  if (events < 1'000'000'000) return fmt::format("{:.1f}M", static_cast<double>(events) / 1e6);
  return fmt::format("{:.2f}G", static_cast<double>(events) / 1e9);
}

// stdio, not fmt::print, which throws when the write fails (stderr closed): a report runs inside
// the engine's loop, where an exception would end the simulation, and a report must change nothing.
void write_out(std::FILE* out, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

}  // namespace

std::string progress_text(const sim::EngineProgress& progress) {
  return fmt::format("simulated {:.2f} us, {} events", progress.now.us(), event_count_text(progress.events_executed));
}

void ProgressLine::report(const sim::EngineProgress& progress) {
  const std::string text = "cclmesh: " + progress_text(progress);
  if (style_ == Style::Lines) {
    write_out(out_, text + "\n");
  } else {
    // Padded over the previous line's end, which a shorter text would leave showing.
    write_out(out_, fmt::format("\r{:<{}}", text, shown_width_));
    shown_width_ = std::max(shown_width_, text.size());
  }
}

void ProgressLine::clear() {
  if (shown_width_ == 0) return;
  write_out(out_, fmt::format("\r{:{}}\r", "", shown_width_));
  shown_width_ = 0;
}

ProgressLine::Style progress_style() {
  return ::isatty(STDERR_FILENO) == 1 ? ProgressLine::Style::InPlace : ProgressLine::Style::Lines;
}

bool progress_wanted(bool progress_flag, bool no_progress_flag) {
  if (progress_flag) return true;
  if (no_progress_flag) return false;
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace cclmesh::cli
