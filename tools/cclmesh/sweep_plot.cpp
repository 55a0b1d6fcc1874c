#include "tools/cclmesh/sweep_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace cclmesh::cli {

namespace {
constexpr double kWidth = 760;
constexpr double kHeight = 440;
constexpr double kLeft = 70;
constexpr double kRight = 190;  // room for the legend
constexpr double kTop = 40;
constexpr double kBottom = 60;
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"};

std::string size_label(double bytes) {
  if (bytes >= double(1ull << 30)) return fmt::format("{:g}G", bytes / double(1ull << 30));
  if (bytes >= double(1ull << 20)) return fmt::format("{:g}M", bytes / double(1ull << 20));
  if (bytes >= 1024) return fmt::format("{:g}K", bytes / 1024);
  return fmt::format("{:g}", bytes);
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}
}  // namespace

std::string sweep_plot_svg(const std::vector<RunResult>& rows, const std::string& title) {
  std::map<std::string, std::vector<const RunResult*>> series;  // ordered: stable colours
  double min_size = 1e300, max_size = 0, max_bw = 0, line_rate = 0;
  for (const RunResult& row : rows) {
    series[row.op + " (" + row.topology + ")"].push_back(&row);
    min_size = std::min(min_size, double(row.size_bytes));
    max_size = std::max(max_size, double(row.size_bytes));
    max_bw = std::max(max_bw, row.bandwidth.busbw_GBps);
    line_rate = std::max(line_rate, row.line_rate_GBps * row.links * row.directions);
  }
  if (rows.empty()) min_size = max_size = 1;  // a sweep stopped at its first point: empty axes, not 2^996
  const double y_max = std::max({max_bw, line_rate, 1.0}) * 1.1;
  const double lo = std::log2(std::max(min_size, 1.0));
  const double hi = std::max(std::log2(std::max(max_size, 1.0)), lo + 1);
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  const auto x_of = [&](double size) { return kLeft + (std::log2(size) - lo) / (hi - lo) * plot_w; };
  const auto y_of = [&](double bw) { return kTop + plot_h - bw / y_max * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
      kWidth, kHeight, kLeft, escape(title));
  // Axes and grid.
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", kLeft, kTop, kTop + plot_h);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", kLeft, kTop + plot_h,
                     kLeft + plot_w);
  for (double e = std::floor(lo); e <= hi; e += std::max(1.0, std::floor((hi - lo) / 8))) {
    if (e < lo) continue;
    const double x = x_of(std::exp2(e));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", x, kTop, kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, kTop + plot_h + 16,
                       size_label(std::exp2(e)));
  }
  for (int i = 0; i <= 5; ++i) {
    const double bw = y_max * i / 5;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.1f}</text>\n", kLeft - 6, y_of(bw) + 4, bw);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">size (B)</text>\n", kLeft + plot_w / 2,
                     kHeight - 20);
  svg += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">busbw (GB/s, 1e9 B)</text>\n",
                     kTop + plot_h / 2, kTop + plot_h / 2);
  // The line rate of the links in use (links x directions x rate).
  if (line_rate > 0) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"gray\" stroke-dasharray=\"6 4\"/>\n",
                       kLeft, y_of(line_rate), kLeft + plot_w, y_of(line_rate));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"gray\">line rate {:.1f} GB/s</text>\n", kLeft + 4,
                       y_of(line_rate) - 4, line_rate);
  }
  int index = 0;
  for (const auto& [name, points] : series) {
    const char* colour = kColours[index % std::size(kColours)];
    std::string coords;
    for (const RunResult* row : points) {
      coords += fmt::format("{:.1f},{:.1f} ", x_of(double(row->size_bytes)), y_of(row->bandwidth.busbw_GBps));
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", colour, coords);
    const double legend_y = kTop + 10 + 18 * index;
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       kLeft + plot_w + 12, legend_y, kLeft + plot_w + 32, colour);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLeft + plot_w + 38, legend_y + 4, escape(name));
    ++index;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace cclmesh::cli
