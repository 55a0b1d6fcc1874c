// `cclmesh run`'s progress report (tools/cclmesh/progress_line.hpp): its text, a line per report
// into a log, one line rewritten in place and erased on a terminal.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tools/cclmesh/progress_line.hpp"

namespace cclmesh::cli {
namespace {

using sim::EngineProgress;
using sim::SimTime;

std::string written(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text.push_back(static_cast<char>(c));
  return text;
}

TEST(ProgressText, SaysTheSimulatedTimeAndTheEvents) {
  EXPECT_EQ(progress_text(EngineProgress{SimTime::from_ns(1234560), 4096}), "simulated 1234.56 us, 4096 events");
  EXPECT_EQ(progress_text(EngineProgress{SimTime::from_ns(7), 12'345'678}), "simulated 0.01 us, 12.3M events");
  EXPECT_EQ(progress_text(EngineProgress{SimTime::zero(), 2'500'000'000}), "simulated 0.00 us, 2.50G events");
}

TEST(ProgressLine, WritesALinePerReportIntoALog) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine line(file, ProgressLine::Style::Lines);
    line.report(EngineProgress{SimTime::from_ns(1000), 10});
    line.report(EngineProgress{SimTime::from_ns(2000), 20});
  }
  EXPECT_EQ(written(file), "cclmesh: simulated 1.00 us, 10 events\ncclmesh: simulated 2.00 us, 20 events\n");
  std::fclose(file);
}

TEST(ProgressLine, RewritesOneLineInPlaceAndErasesIt) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ProgressLine line(file, ProgressLine::Style::InPlace);
  line.clear();  // nothing shown: nothing to erase
  line.report(EngineProgress{SimTime::from_ns(1000), 1'000'000});
  line.report(EngineProgress{SimTime::from_ns(2000), 20});  // shorter: padded over the first's end
  line.clear();
  line.clear();  // once erased, nothing more
  const std::string first = "cclmesh: simulated 1.00 us, 1.0M events";
  const std::string second = "cclmesh: simulated 2.00 us, 20 events";
  EXPECT_EQ(written(file), "\r" + first + "\r" + second + std::string(first.size() - second.size(), ' ') + "\r" +
                               std::string(first.size(), ' ') + "\r");
  std::fclose(file);
}

}  // namespace
}  // namespace cclmesh::cli
