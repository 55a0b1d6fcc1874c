#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/export_svg.hpp"
#include "topologies/link_whatif.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ExportSvg, T3kHasAChipPerBoxAndALinePerEdge) {
  const std::string svg = to_svg(build_t3k());
  EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  EXPECT_EQ(count(svg, "<rect x="), 8u);
  EXPECT_EQ(count(svg, "<line "), 10u);
  // Link multiplicity: stroke width 1.5 px per link, and a label.
  EXPECT_THAT(svg, HasSubstr("stroke-width=\"3.0\"><title>0-4: 2 links</title>"));
  EXPECT_EQ(count(svg, " MMIO</text>"), 4u);
}

// A what-if's picture says so (session 19: `topo --link-rate 25GB/s --svg` drew the hardware's
// title while its text and JSON said what-if).
TEST(ExportSvg, AWhatIfSaysSoInTheTitle) {
  EXPECT_THAT(to_svg(build_t3k()), Not(HasSubstr("what-if")));
  LinkWhatIf faster;
  faster.rate_bytes_per_s = 25'000'000'000;
  EXPECT_THAT(to_svg(with_every_link(build_t3k(), faster)),
              HasSubstr("neighbour edges; what-if links: 20 of 20 off the arch's default rate or latency</text>"));
}

TEST(ExportSvg, TorusWrapsAreArcs) {
  const std::string svg = to_svg(build_parametric(parse_parametric_spec("torus:3x4/1")));
  EXPECT_EQ(count(svg, "<path "), 3u + 4u);
  EXPECT_THAT(svg, HasSubstr("(wraparound)"));
}

TEST(ExportSvg, NameIsEscapedAndUnplacedChipsAreDrawn) {
  const std::string svg = to_svg(build_tg().renamed("tg <lab & co>"));
  EXPECT_THAT(svg, HasSubstr("tg &lt;lab &amp; co&gt;"));
  EXPECT_EQ(count(svg, "<rect x="), 36u);
  Topology empty;
  EXPECT_THAT(to_svg(empty), HasSubstr("</svg>"));
}

}  // namespace
}  // namespace cclmesh::topo
