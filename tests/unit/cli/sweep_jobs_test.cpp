// `cclmesh sweep -j N`'s process pool: points run in forked children, at most N at once, and are
// delivered in index order whatever order they finish in; a child that dies is reported with how
// it died; stopping (or an exception) kills and reaps every child still running.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/sweep_jobs.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;

// No child of this test process is left, running or unreaped.
void expect_no_children_left() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(SweepJobs, DeliversInIndexOrderWhateverOrderThePointsFinish) {
  std::vector<std::size_t> finished;
  std::vector<std::size_t> delivered;
  std::vector<std::string> payloads;
  ForkedPointCallbacks callbacks;
  // Earlier points take longer, so later ones tend to finish first; the order delivered must not care.
  callbacks.run = [](std::size_t i) {
    ::usleep(static_cast<useconds_t>((6 - i) * 20000));
    return "point " + std::to_string(i) + std::string(100000 * i, 'x');  // past a pipe's buffer
  };
  callbacks.finished = [&](std::size_t i) { finished.push_back(i); };
  callbacks.deliver = [&](std::size_t i, ForkedPointReport report) {
    // Every earlier point was delivered, and this one has finished.
    EXPECT_EQ(i, delivered.size());
    EXPECT_NE(std::find(finished.begin(), finished.end(), i), finished.end());
    EXPECT_TRUE(report.completed) << report.failure;
    delivered.push_back(i);
    payloads.push_back(std::move(report.payload));
    return true;
  };
  run_points_forked(6, 3, callbacks);
  EXPECT_EQ(delivered, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(std::set<std::size_t>(finished.begin(), finished.end()).size(), 6u);
  ASSERT_EQ(payloads.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(payloads[i], "point " + std::to_string(i) + std::string(100000 * i, 'x'));
  expect_no_children_left();
}

TEST(SweepJobs, WhatAChildWritesToStderrComesBackWithItsReport) {
  std::vector<ForkedPointReport> reports;
  ForkedPointCallbacks callbacks;
  // Past a pipe's buffer on stderr too, while the result is small: both are read as they come.
  callbacks.run = [](std::size_t i) {
    std::fprintf(stderr, "point %zu: %s\n", i, std::string(100000 * i, 'w').c_str());
    if (i == 2) std::raise(SIGKILL);  // what a dying child wrote is kept too
    return std::string("result");
  };
  callbacks.finished = [](std::size_t) {};
  callbacks.deliver = [&](std::size_t, ForkedPointReport report) {
    reports.push_back(std::move(report));
    return true;
  };
  run_points_forked(3, 3, callbacks);
  ASSERT_EQ(reports.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reports[i].diagnostics, "point " + std::to_string(i) + ": " + std::string(100000 * i, 'w') + "\n");
  }
  EXPECT_EQ(reports[0].payload, "result");
  EXPECT_FALSE(reports[2].completed);
  expect_no_children_left();
}

TEST(SweepJobs, StartsInTheOrderGivenAndStillDeliversInIndexOrder) {
  std::vector<std::size_t> finished;
  std::vector<std::size_t> delivered;
  ForkedPointCallbacks callbacks;
  callbacks.run = [](std::size_t i) { return std::to_string(i); };
  callbacks.finished = [&](std::size_t i) { finished.push_back(i); };
  callbacks.deliver = [&](std::size_t i, ForkedPointReport report) {
    EXPECT_EQ(report.payload, std::to_string(i));
    delivered.push_back(i);
    return true;
  };
  // One at a time: they finish in the order they start.
  run_points_forked(4, 1, callbacks, {3, 1, 2, 0});
  EXPECT_EQ(finished, (std::vector<std::size_t>{3, 1, 2, 0}));
  EXPECT_EQ(delivered, (std::vector<std::size_t>{0, 1, 2, 3}));
  expect_no_children_left();
}

TEST(SweepJobs, AChildThatDiesIsReportedWithHowAndTheOthersStillDeliver) {
  std::vector<ForkedPointReport> reports;
  ForkedPointCallbacks callbacks;
  callbacks.run = [](std::size_t i) -> std::string {
    if (i == 1) std::raise(SIGKILL);
    if (i == 2) throw std::runtime_error("no result");
    return "ok";
  };
  callbacks.finished = [](std::size_t) {};
  callbacks.deliver = [&](std::size_t, ForkedPointReport report) {
    reports.push_back(std::move(report));
    return true;
  };
  run_points_forked(4, 2, callbacks);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_TRUE(reports[0].completed);
  EXPECT_FALSE(reports[1].completed);
  EXPECT_EQ(reports[1].signal, SIGKILL);
  EXPECT_THAT(reports[1].failure, HasSubstr("was killed by signal 9"));
  EXPECT_EQ(reports[1].payload, "");
  EXPECT_FALSE(reports[2].completed);
  EXPECT_EQ(reports[2].signal, 0);
  EXPECT_EQ(reports[2].failure, "exited with code 1 without a result");
  EXPECT_TRUE(reports[3].completed);
  EXPECT_EQ(reports[3].payload, "ok");
  expect_no_children_left();
}

// Children that would never end: if stopping did not kill them, the test would hang.
std::string wait_forever(std::size_t i) {
  if (i == 0) return "first";
  for (;;) ::pause();
}

TEST(SweepJobs, StoppingKillsAndReapsTheChildrenStillRunning) {
  std::vector<std::size_t> delivered;
  ForkedPointCallbacks callbacks;
  callbacks.run = wait_forever;
  callbacks.finished = [](std::size_t) {};
  callbacks.deliver = [&](std::size_t i, ForkedPointReport) {
    delivered.push_back(i);
    return false;
  };
  run_points_forked(5, 4, callbacks);
  EXPECT_EQ(delivered, std::vector<std::size_t>{0});
  expect_no_children_left();
}

TEST(SweepJobs, AnExceptionFromDeliverKillsAndReapsTheChildrenToo) {
  ForkedPointCallbacks callbacks;
  callbacks.run = wait_forever;
  callbacks.finished = [](std::size_t) {};
  callbacks.deliver = [](std::size_t, ForkedPointReport) -> bool { throw std::runtime_error("printing failed"); };
  EXPECT_THROW(run_points_forked(3, 3, callbacks), std::runtime_error);
  expect_no_children_left();
}

TEST(SweepJobs, AChildWithoutAResultBecomesACrashNamingHowItEnded) {
  ForkedPointReport killed;
  killed.failure = "was killed by signal 9 (Killed)";
  killed.signal = SIGKILL;
  const SweepPointOutcome oom = outcome_from_report(killed);
  EXPECT_EQ(oom.kind, SweepPointOutcome::Kind::Crashed);
  EXPECT_EQ(oom.message, "its process was killed by signal 9 (Killed) (out of memory? each of -j's processes holds one point)");

  ForkedPointReport segfault;
  segfault.failure = "was killed by signal 11 (Segmentation fault)";
  segfault.signal = SIGSEGV;
  EXPECT_EQ(outcome_from_report(segfault).message, "its process was killed by signal 11 (Segmentation fault)");

  ForkedPointReport cut_short;
  cut_short.completed = true;
  cut_short.payload = "{\"kind\": 0";
  const SweepPointOutcome unreadable = outcome_from_report(cut_short);
  EXPECT_EQ(unreadable.kind, SweepPointOutcome::Kind::Crashed);
  EXPECT_THAT(unreadable.message, HasSubstr("its process sent a result that could not be read"));

  SweepPointOutcome skipped;
  skipped.kind = SweepPointOutcome::Kind::Skipped;
  skipped.message = "too small";
  ForkedPointReport sent;
  sent.completed = true;
  sent.payload = encode_sweep_point(skipped);
  const SweepPointOutcome got = outcome_from_report(sent);
  EXPECT_EQ(got.kind, SweepPointOutcome::Kind::Skipped);
  EXPECT_EQ(got.message, "too small");
}

TEST(SweepJobs, ParsesJobCounts) {
  EXPECT_EQ(parse_jobs("1", "-j"), 1u);
  EXPECT_EQ(parse_jobs("12", "-j"), 12u);
  EXPECT_GE(parse_jobs("0", "-j"), 1u);  // the host's cores
  EXPECT_LE(parse_jobs("0", "-j"), kMaxSweepJobs);
  EXPECT_EQ(parse_jobs("256", "-j"), kMaxSweepJobs);
  for (const char* bad : {"", "-1", "+2", "two", "2x", " 2", "99999999999999999999999", "257", "1000"}) {
    try {
      parse_jobs(bad, "-j");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("-j: '") + bad + "'"));
    }
  }
}

TEST(SweepJobs, ForkedPointsGiveTheInProcessOutcomes) {
  std::vector<RunOptions> points;
  for (const std::uint64_t size : {8u * 1024, 64u * 1024, 256u * 1024}) {
    RunOptions options;
    options.system = "t3k";
    options.op = CollectiveOp::ReduceScatter;
    options.size_bytes = size;
    points.push_back(options);
  }
  points[2].max_sim_time = sim::SimTime::from_us(5);  // stops: a hang report
  std::vector<std::vector<SweepPointOutcome>> by_jobs;
  for (const std::size_t jobs : {1u, 2u, 3u}) {
    std::vector<SweepPointOutcome> outcomes;
    run_sweep_points(points, jobs, [](std::size_t) {}, [&](std::size_t, SweepPointOutcome outcome) {
      outcomes.push_back(std::move(outcome));
      return true;
    });
    ASSERT_EQ(outcomes.size(), 3u);
    EXPECT_EQ(outcomes[0].kind, SweepPointOutcome::Kind::Skipped);
    EXPECT_EQ(outcomes[1].kind, SweepPointOutcome::Kind::Completed) << outcomes[1].message;
    EXPECT_EQ(outcomes[2].kind, SweepPointOutcome::Kind::DidNotComplete);
    by_jobs.push_back(std::move(outcomes));
  }
  for (std::size_t j = 1; j < by_jobs.size(); ++j) {
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(by_jobs[j][i].message, by_jobs[0][i].message) << i;
    const RunResult& forked = by_jobs[j][1].result;
    const RunResult& in_process = by_jobs[0][1].result;
    EXPECT_EQ(table_row(forked), table_row(in_process));
    EXPECT_EQ(csv_row(forked), csv_row(in_process));
    EXPECT_EQ(forked.trace_hash, in_process.trace_hash);
    EXPECT_EQ(forked.checksums.size(), in_process.checksums.size());
  }
  expect_no_children_left();
}

}  // namespace
}  // namespace cclmesh::cli
