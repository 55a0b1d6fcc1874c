#include "tools/cclmesh/sweep_plot.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cclmesh::cli {
namespace {

RunResult row(const std::string& op, const std::string& topology, std::uint64_t size, double busbw) {
  RunResult r;
  r.op = op;
  r.topology = topology;
  r.size_bytes = size;
  r.bandwidth.busbw_GBps = busbw;
  r.line_rate_GBps = 12.5;
  r.directions = topology == "ring" ? 2 : 1;
  return r;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(SweepPlot, OneLinePerOpAndTopologyWithTheLineRateMarked) {
  const std::vector<RunResult> rows = {row("all_gather", "ring", 1024, 3.0), row("all_gather", "ring", 4096, 9.0),
                                       row("all_gather", "line", 1024, 2.0), row("all_gather", "line", 4096, 6.0),
                                       row("reduce_scatter", "ring", 1024, 1.0)};
  const std::string svg = sweep_plot_svg(rows, "busbw <test> & co");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_NE(svg.find("all_gather (line)"), std::string::npos);
  EXPECT_NE(svg.find("reduce_scatter (ring)"), std::string::npos);
  EXPECT_NE(svg.find("line rate 25.0 GB/s"), std::string::npos);
  EXPECT_NE(svg.find("busbw &lt;test&gt; &amp; co"), std::string::npos);  // the title is escaped
  EXPECT_EQ(svg.find("<script"), std::string::npos);                     // self-contained
}

}  // namespace
}  // namespace cclmesh::cli
