#include "tools/cclmesh/sweep_refusals.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace cclmesh::cli {
namespace {

// `reason` with every number (decimal, or hex as 0x16e000) folded to one mark, so that the
// refusals of two sizes for one reason compare equal. Within a sweep the points differ only by op
// and size, so words alike whose numbers differ are one reason: the size itself, said once or
// more, or figures derived from it (a core's share of a buffer, an L1 range left: session 40's
// review found an L1 sweep of 6 points listed as 6 reasons when only the point's own size was
// masked).
std::string without_numbers(const std::string& reason) {
  std::string folded;
  for (std::size_t at = 0; at < reason.size();) {
    const auto digit = [&](std::size_t i) { return std::isdigit(static_cast<unsigned char>(reason[i])) != 0; };
    if (!digit(at)) {
      folded += reason[at++];
      continue;
    }
    const bool hex = reason[at] == '0' && at + 2 < reason.size() && reason[at + 1] == 'x' &&
                     std::isxdigit(static_cast<unsigned char>(reason[at + 2])) != 0;
    at += hex ? 2 : 0;
    while (at < reason.size() &&
           (hex ? std::isxdigit(static_cast<unsigned char>(reason[at])) != 0 : digit(at))) {
      ++at;
    }
    folded += '\x01';
  }
  return folded;
}

// One reason of several points: their refusals with numbers folded (without_numbers), and the points.
struct Reason {
  std::string folded;
  std::vector<std::size_t> points;  // indices into `refused`, in sweep order
};

// "all_gather at 1024 B to 8192 B, 65536 B, reduce_scatter at 1024 B": each op's sizes, a run
// of the sweep's consecutive sizes as a range.
std::string points_text(const std::vector<RefusedPoint>& refused, const std::vector<std::size_t>& points,
                        const std::vector<std::uint64_t>& sizes) {
  const auto position = [&](std::uint64_t size) {
    return static_cast<std::size_t>(std::find(sizes.begin(), sizes.end(), size) - sizes.begin());
  };
  std::string text;
  std::string op;
  for (std::size_t k = 0; k < points.size();) {
    const RefusedPoint& first = refused[points[k]];
    std::size_t end = k + 1;  // past the run of consecutive sizes of one op from k
    while (end < points.size() && refused[points[end]].op == first.op &&
           position(refused[points[end]].size_bytes) == position(refused[points[end - 1]].size_bytes) + 1) {
      ++end;
    }
    if (first.op != op) {
      text += fmt::format("{}{} at ", text.empty() ? "" : ", ", first.op);
      op = first.op;
    } else {
      text += ", ";
    }
    text += end - k == 1 ? fmt::format("{} B", first.size_bytes)
                         : fmt::format("{} B to {} B", first.size_bytes, refused[points[end - 1]].size_bytes);
    k = end;
  }
  return text;
}

}  // namespace

std::string every_point_refused(const std::vector<RefusedPoint>& refused, const std::vector<std::uint64_t>& sizes) {
  const bool alike = std::all_of(refused.begin(), refused.end(),
                                 [&](const RefusedPoint& point) { return point.reason == refused.front().reason; });
  if (alike) return refused.front().reason;
  std::vector<Reason> reasons;  // in the order of their first point
  for (std::size_t i = 0; i < refused.size(); ++i) {
    std::string folded = without_numbers(refused[i].reason);
    auto same = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.folded == folded; });
    if (same == reasons.end()) same = reasons.insert(reasons.end(), Reason{std::move(folded), {}});
    same->points.push_back(i);
  }
  if (reasons.size() == 1) {
    const RefusedPoint& last = refused.back();
    return fmt::format("none of the sweep's {} points can run; the last, {} at {} B: {}", refused.size(), last.op,
                       last.size_bytes, last.reason);
  }
  std::string text =
      fmt::format("none of the sweep's {} points can run, for {} reasons:", refused.size(), reasons.size());
  for (std::size_t n = 0; n < reasons.size(); ++n) {
    const std::vector<std::size_t>& points = reasons[n].points;
    const RefusedPoint& last = refused[points.back()];
    const bool words_differ = std::any_of(points.begin(), points.end(),
                                          [&](std::size_t i) { return refused[i].reason != last.reason; });
    const bool one_op =
        std::all_of(points.begin(), points.end(), [&](std::size_t i) { return refused[i].op == last.op; });
    // Sizes refused alike in their own words: the last's, whose "expected" is the nearest.
    const std::string said_for = !words_differ ? ""
                                 : one_op      ? fmt::format(" (said for {} B)", last.size_bytes)
                                               : fmt::format(" (said for {} at {} B)", last.op, last.size_bytes);
    text += fmt::format("{} ({}) {}{}: {}", n == 0 ? "" : ";", n + 1, points_text(refused, points, sizes), said_for,
                        last.reason);
  }
  return text;
}

}  // namespace cclmesh::cli
