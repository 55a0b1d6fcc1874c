#include "topologies/export_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "topologies/link_whatif.hpp"

namespace cclmesh::topo {
namespace {

constexpr double kCellPx = 140.0;
constexpr double kMarginPx = 90.0;
constexpr double kChipWidthPx = 100.0;
constexpr double kChipHeightPx = 52.0;
constexpr double kStrokePerLinkPx = 1.5;
// A wraparound leaves each end outwards along its dimension and runs in the gap beside its
// row or column: a cubic's sideways reach is 3/4 of kWrapSidePx, between the chip's half
// size and the gap's middle.
constexpr double kWrapOutPx = 60.0;
constexpr double kTitleBandPx = 30.0;
constexpr double kWrapSidePx = 90.0;

struct Point {
  double x = 0.0;
  double y = 0.0;
};

std::string escape_xml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Chip positions in pixels (before the margin), by chip index.
std::vector<Point> layout(const Topology& topology) {
  const auto n = topology.chip_count();
  std::vector<Point> at(n);
  std::vector<bool> placed(n, false);
  const auto& shape = topology.mesh_shape();
  bool any_placed = false;
  if (shape) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto& coord = topology.chips()[i].mesh_coord;
      if (!coord) continue;
      const auto& c = *coord;
      at[i] = Point{(c[1] + c[2] * (shape->extent(1) + 1)) * kCellPx, c[0] * kCellPx};
      placed[i] = true;
      any_placed = true;
    }
  }
  if (!any_placed) {
    // No mesh: a circle, chips in id order.
    const double radius =
        std::max(kCellPx, kCellPx * static_cast<double>(n) / (2 * std::numbers::pi));
    for (std::size_t i = 0; i < n; ++i) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n) -
                           std::numbers::pi / 2;
      at[i] = Point{radius + radius * std::cos(angle), radius + radius * std::sin(angle)};
    }
    return at;
  }
  // Off-mesh chips: one row above the mesh, each over the mean of its placed neighbours,
  // pushed apart to at least a cell.
  std::vector<std::size_t> extras;
  for (std::size_t i = 0; i < n; ++i) {
    if (placed[i]) continue;
    double sum = 0.0;
    int count = 0;
    for (const ChipId peer : topology.neighbours(topology.chips()[i].id)) {
      const auto j = topology.chip_index(peer);
      if (!placed[j]) continue;
      sum += at[j].x;
      ++count;
    }
    at[i] = Point{count > 0 ? sum / count : static_cast<double>(extras.size()) * kCellPx, -kCellPx};
    extras.push_back(i);
  }
  std::stable_sort(extras.begin(), extras.end(),
                   [&at](std::size_t a, std::size_t b) { return at[a].x < at[b].x; });
  for (std::size_t k = 1; k < extras.size(); ++k) {
    at[extras[k]].x = std::max(at[extras[k]].x, at[extras[k - 1]].x + kCellPx);
  }
  return at;
}

enum class EdgeShape { Straight, Wraparound, AcrossLayers };

// Straight between chips next to each other in one layer; layers are drawn side by side, so
// an edge between layers would run over the chips in between and is bent instead.
EdgeShape edge_shape(const Topology& topology, const NeighbourEdge& edge) {
  const auto& a = topology.chip(edge.a).mesh_coord;
  const auto& b = topology.chip(edge.b).mesh_coord;
  if (!a || !b) return EdgeShape::Straight;
  int distance = 0;
  for (std::size_t d = 0; d < a->size(); ++d) distance += std::abs((*a)[d] - (*b)[d]);
  if (distance > 1) return EdgeShape::Wraparound;
  return (*a)[2] != (*b)[2] ? EdgeShape::AcrossLayers : EdgeShape::Straight;
}

constexpr double kLaneOffsetPx = 4.0;
constexpr double kLaneStrokePx = 6.0;
constexpr double kLaneLabelPx = 16.0;

struct Curve {
  Point a;
  Point control_a;
  Point control_b;
  Point b;
};

Point shifted(Point p, Point by, double distance) { return Point{p.x + by.x * distance, p.y + by.y * distance}; }

// Both lanes of one edge: each is the edge's line or curve moved sideways by kLaneOffsetPx to
// the right of its own direction, with its label further out at its middle.
std::string lanes_svg(const NeighbourEdge& edge, const EdgeLanes& lanes, Point a, Point b, bool curved,
                      const Curve& curve) {
  const double length = std::max(1.0, std::hypot(b.x - a.x, b.y - a.y));
  const Point side{-(b.y - a.y) / length, (b.x - a.x) / length};  // right of a -> b on screen
  std::string svg;
  for (int direction = 0; direction < 2; ++direction) {
    const EdgeLane& lane = direction == 0 ? lanes.a_to_b : lanes.b_to_a;
    const double sign = direction == 0 ? 1.0 : -1.0;
    const ChipId from = direction == 0 ? edge.a : edge.b;
    const ChipId to = direction == 0 ? edge.b : edge.a;
    Point middle;
    if (curved) {
      const Curve c{shifted(curve.a, side, sign * kLaneOffsetPx), shifted(curve.control_a, side, sign * kLaneOffsetPx),
                    shifted(curve.control_b, side, sign * kLaneOffsetPx), shifted(curve.b, side, sign * kLaneOffsetPx)};
      svg += fmt::format(
          "<path class=\"lane\" d=\"M {:.1f} {:.1f} C {:.1f} {:.1f} {:.1f} {:.1f} {:.1f} {:.1f}\" fill=\"none\" "
          "stroke=\"{}\" stroke-width=\"{:.1f}\"><title>{}</title></path>\n",
          c.a.x, c.a.y, c.control_a.x, c.control_a.y, c.control_b.x, c.control_b.y, c.b.x, c.b.y,
          escape_xml(lane.colour), kLaneStrokePx, escape_xml(lane.tooltip));
      middle = Point{(c.a.x + 3 * c.control_a.x + 3 * c.control_b.x + c.b.x) / 8,
                     (c.a.y + 3 * c.control_a.y + 3 * c.control_b.y + c.b.y) / 8};
    } else {
      const Point from_at = shifted(a, side, sign * kLaneOffsetPx);
      const Point to_at = shifted(b, side, sign * kLaneOffsetPx);
      svg += fmt::format(
          "<line class=\"lane\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"{:.1f}\"><title>{}</title></line>\n",
          from_at.x, from_at.y, to_at.x, to_at.y, escape_xml(lane.colour), kLaneStrokePx, escape_xml(lane.tooltip));
      middle = Point{(from_at.x + to_at.x) / 2, (from_at.y + to_at.y) / 2};
    }
    const Point label = shifted(middle, side, sign * kLaneLabelPx);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#333\" stroke=\"none\" "
        "text-anchor=\"middle\" dominant-baseline=\"middle\">{}<title>{} to {}</title></text>\n",
        label.x, label.y, escape_xml(lane.label), from, to);
  }
  return svg;
}

std::string render(const Topology& topology, const EdgeLaneMap* lanes) {
  std::vector<Point> at = layout(topology);
  double max_x = 0.0;
  double max_y = 0.0;
  double min_x = 0.0;
  double min_y = 0.0;
  for (const Point& p : at) {
    max_x = std::max(max_x, p.x);
    max_y = std::max(max_y, p.y);
    min_x = std::min(min_x, p.x);
    min_y = std::min(min_y, p.y);
  }
  for (Point& p : at) {
    p.x += kMarginPx - min_x;
    p.y += kTitleBandPx + kMarginPx - min_y;
  }
  const double width = max_x - min_x + 2 * kMarginPx;
  const double height = max_y - min_y + 2 * kMarginPx + kTitleBandPx;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n",
      width, height);
  svg += fmt::format("<title>{}</title>\n", escape_xml(topology.name()));
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // A what-if (--link-rate / --link-latency, or a YAML file's own figures) is never drawn as the
  // hardware: the text, JSON and report say so, and so does the picture.
  const std::optional<LinkSpread> what_if = links_off_arch_defaults(topology);
  svg += fmt::format(
      "<text x=\"{:.0f}\" y=\"24\" font-size=\"16\">{}: {} chips, {} links, {} neighbour "
      "edges{}</text>\n",
      kMarginPx / 4, escape_xml(topology.name()), topology.chip_count(), topology.links().size(),
      topology.edges().size(),
      what_if ? fmt::format("; what-if links: {} of {} off the arch's default rate or latency",
                            what_if->links_off_default, what_if->links)
              : "");

  svg += "<g stroke=\"#4a6fa5\" fill=\"none\">\n";
  for (const NeighbourEdge& edge : topology.edges()) {
    const Point a = at[topology.chip_index(edge.a)];
    const Point b = at[topology.chip_index(edge.b)];
    const double stroke = kStrokePerLinkPx * static_cast<double>(edge.multiplicity());
    Point label{(a.x + b.x) / 2, (a.y + b.y) / 2};
    const EdgeShape shape = edge_shape(topology, edge);
    const auto lane = lanes != nullptr ? lanes->find({edge.a, edge.b}) : EdgeLaneMap::const_iterator{};
    const bool with_lanes = lanes != nullptr && lane != lanes->end();
    if (shape != EdgeShape::Straight) {
      // Wraparounds bend below their row (or beside their column), edges across layers above.
      const bool wrap = shape == EdgeShape::Wraparound;
      const double out = wrap ? kWrapOutPx : 0.0;
      const double reach = wrap ? kWrapSidePx : -kWrapSidePx;
      const double dx = b.x - a.x;
      const double dy = b.y - a.y;
      const double length = std::max(1.0, std::hypot(dx, dy));
      const Point along{dx / length, dy / length};
      const Point side{-along.y, along.x};
      const Point control_a{a.x - along.x * out + side.x * reach,
                            a.y - along.y * out + side.y * reach};
      const Point control_b{b.x + along.x * out + side.x * reach,
                            b.y + along.y * out + side.y * reach};
      if (with_lanes) {
        svg += lanes_svg(edge, lane->second, a, b, true, Curve{a, control_a, control_b, b});
        continue;
      }
      svg += fmt::format(
          "<path d=\"M {:.1f} {:.1f} C {:.1f} {:.1f} {:.1f} {:.1f} {:.1f} {:.1f}\" "
          "stroke-width=\"{:.1f}\"{}><title>{}-{}: {} links{}</title></path>\n",
          a.x, a.y, control_a.x, control_a.y, control_b.x, control_b.y, b.x, b.y, stroke,
          wrap ? " stroke-dasharray=\"6 3\"" : "", edge.a, edge.b, edge.multiplicity(),
          wrap ? " (wraparound)" : "");
      label = Point{(a.x + 3 * control_a.x + 3 * control_b.x + b.x) / 8,
                    (a.y + 3 * control_a.y + 3 * control_b.y + b.y) / 8 + 12};
    } else if (with_lanes) {
      svg += lanes_svg(edge, lane->second, a, b, false, Curve{});
      continue;
    } else {
      // The count beside the line: above a horizontal one, right of a vertical one.
      const double length = std::max(1.0, std::hypot(b.x - a.x, b.y - a.y));
      label.x += std::abs(b.y - a.y) / length * 8;
      label.y -= std::abs(b.x - a.x) / length * 4;
      svg += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke-width=\"{:.1f}\">"
          "<title>{}-{}: {} links</title></line>\n",
          a.x, a.y, b.x, b.y, stroke, edge.a, edge.b, edge.multiplicity());
    }
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#4a6fa5\" stroke=\"none\" "
        "text-anchor=\"middle\">{}</text>\n",
        label.x, label.y - 4, edge.multiplicity());
  }
  svg += "</g>\n";

  for (std::size_t i = 0; i < topology.chip_count(); ++i) {
    const Chip& chip = topology.chips()[i];
    const Point p = at[i];
    const bool wormhole = chip.arch == Arch::Wormhole;
    svg += fmt::format(
        "<g><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" rx=\"8\" "
        "fill=\"{}\" stroke=\"#222\" stroke-width=\"{}\"/>\n",
        p.x - kChipWidthPx / 2, p.y - kChipHeightPx / 2, kChipWidthPx, kChipHeightPx,
        wormhole ? "#dce8f7" : "#e2e2e2", chip.mmio() ? 3 : 1);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n", p.x,
        p.y - 2, chip.id);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}{}{}</text>"
        "</g>\n",
        p.x, p.y + 15, wormhole ? "WH" : "BH",
        chip.board == BoardType::Unknown ? "" : fmt::format(" {}", board_type_name(chip.board)),
        chip.mmio() ? " MMIO" : "");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace

std::string to_svg(const Topology& topology) { return render(topology, nullptr); }

std::string to_svg(const Topology& topology, const EdgeLaneMap& lanes) { return render(topology, &lanes); }

}  // namespace cclmesh::topo
