// The --report page renders in a real browser: headless Chromium loads it from a file (no
// network) and the DOM it builds has the drawing, every lane, the legend and both tables.
// Skipped, with the reason, where Debian's `chromium` package is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "tools/cclmesh/html_report.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;

constexpr const char* kChromium = "/usr/bin/chromium";

std::string run_and_capture(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) output += buffer.data();
  pclose(pipe);
  return output;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportRender, HeadlessChromiumBuildsTheWholePage) {
  if (!std::filesystem::exists(kChromium)) {
    GTEST_SKIP() << kChromium << " is not installed (Debian package 'chromium'); the HTML report render check "
                 << "needs it. Install it with: apt-get install -y chromium";
  }
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = 256 << 10;
  const RunResult result = run_collective(options);
  const topo::Topology topology = topo::load_system("t3k");
  // Per process: several checkouts run their suites on one machine, and a shared directory
  // would be removed under another run's Chromium.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("cclmesh_report_render_test_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::filesystem::path page = dir / "report.html";
  std::ofstream(page) << html_report(result, topology);
  // --no-sandbox: test runners are often root; the page has no script and needs no network.
  const std::string dom = run_and_capture(fmt::format(
      "timeout 120 {} --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir={} --dump-dom file://{} "
      "2>/dev/null",
      kChromium, (dir / "profile").string(), page.string()));
  std::filesystem::remove_all(dir);
  ASSERT_THAT(dom, HasSubstr("</html>")) << "chromium printed no DOM";
  EXPECT_THAT(dom, HasSubstr("Link utilisation"));
  EXPECT_EQ(count(dom, "class=\"lane\""), 2 * topology.edges().size());
  EXPECT_THAT(dom, HasSubstr("linearGradient"));
  EXPECT_THAT(dom, HasSubstr("<table class=\"nccl\">"));
  EXPECT_EQ(count(dom, "<tr><td>chip "), result.links_used.size());
}

}  // namespace
}  // namespace cclmesh::cli
