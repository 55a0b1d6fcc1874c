#include "tools/cclmesh/sweep_refusals.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <set>

namespace cclmesh::cli {
namespace {

// `reason` with the first mention of the point's own size ("8192 B", not inside a longer number)
// masked, so that the refusals of two sizes for one reason compare equal. The first alone: the
// size leads a refusal of it ("--size: 8192 B is less than ..."), and a later mention of that many
// bytes may be another figure's (a page of 2048 B at the 2048 B point).
std::string without_own_size(const std::string& reason, std::uint64_t size_bytes) {
  const std::string own = fmt::format("{} B", size_bytes);
  for (std::size_t at = reason.find(own); at != std::string::npos; at = reason.find(own, at + 1)) {
    if (at > 0 && std::isdigit(static_cast<unsigned char>(reason[at - 1])) != 0) continue;
    return reason.substr(0, at) + '\x01' + reason.substr(at + own.size());
  }
  return reason;
}

// One reason of several points: their refusals, as given and with each one's own size masked.
// A point is of it when its refusal is one of them either way (a number in the refusal that
// is not the size, as --fabric-payload's 1024 B at the point of 1024 B, masks differently).
struct Reason {
  std::set<std::string> given;
  std::set<std::string> masked;
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
    const std::string& given = refused[i].reason;
    const std::string masked = without_own_size(given, refused[i].size_bytes);
    auto same = std::find_if(reasons.begin(), reasons.end(),
                             [&](const Reason& r) { return r.given.contains(given) || r.masked.contains(masked); });
    if (same == reasons.end()) same = reasons.insert(reasons.end(), Reason{});
    same->given.insert(given);
    same->masked.insert(masked);
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
