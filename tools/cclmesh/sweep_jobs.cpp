#include "tools/cclmesh/sweep_jobs.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <numeric>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "sim/engine/check.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"

namespace cclmesh::cli {

std::size_t parse_jobs(std::string_view text, std::string_view option) {
  std::size_t jobs = 0;
  const char* const last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, jobs);
  if (text.empty() || error != std::errc{} || end != last) {
    throw UsageError(fmt::format("{}: '{}' is not a number of processes; expected 0 (one per core of this host) or a "
                                 "positive count (1: every point in this process, one after another)",
                                 option, text));
  }
  if (jobs > kMaxSweepJobs) {
    throw UsageError(fmt::format("{}: '{}' is more processes than a sweep starts (at most {}: past the host's cores they "
                                 "add no speed, only points held in memory at once); expected 0 (one per core of this "
                                 "host) or a count from 1 to {}",
                                 option, text, kMaxSweepJobs, kMaxSweepJobs));
  }
  if (jobs > 0) return jobs;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : std::min<std::size_t>(cores, kMaxSweepJobs);
}

namespace {

// A child's exit codes when it has no result to send (a signal says more, and is reported as such).
constexpr int kChildThrew = 1;
constexpr int kChildWriteFailed = 2;
constexpr int kChildOrphaned = 3;

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::string ending_text(int status) {
  if (status >= 0 && WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = ::strsignal(signal);
    return fmt::format("was killed by signal {} ({})", signal, name != nullptr ? name : "unknown");
  }
  if (status >= 0 && WIFEXITED(status)) return fmt::format("exited with code {} without a result", WEXITSTATUS(status));
  return "ended without a result";
}

[[noreturn]] void child_main(int write_fd, int stderr_fd, pid_t parent, std::size_t index,
                             const std::function<std::string(std::size_t)>& run) {
  // What the point prints on stderr (warnings, CCLMESH_NOC_STATS) goes to the parent, which
  // replays it when the point's turn comes, so stderr reads as -j 1's.
  if (::dup2(stderr_fd, STDERR_FILENO) < 0) ::_exit(kChildWriteFailed);
  ::close(stderr_fd);
#ifdef __linux__
  // If the sweep itself dies, its children go with it rather than simulating on as orphans.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kChildOrphaned);
#else
  (void)parent;
#endif
  process_exits_after_its_run();  // this point's, then _exit
  std::string payload;
  try {
    payload = run(index);
  } catch (...) {
    ::_exit(kChildThrew);
  }
  const bool sent = write_all(write_fd, payload);
  std::fflush(nullptr);
  // _exit, not exit: the parent's atexit handlers and static destructors must not run twice.
  ::_exit(sent ? 0 : kChildWriteFailed);
}

struct RunningChild {
  std::size_t index = 0;
  pid_t pid = -1;
  int result_fd = -1;  // the read end of the child's result pipe; -1 once at its end
  int stderr_fd = -1;  // the read end of the child's stderr; -1 once at its end
  std::string payload;
  std::string diagnostics;
};

// The children running. Whatever ends the run early (a stop, an exception) kills and reaps
// them here, so none is left running or as a zombie.
class RunningChildren {
 public:
  RunningChildren() = default;
  RunningChildren(const RunningChildren&) = delete;
  RunningChildren& operator=(const RunningChildren&) = delete;
  ~RunningChildren() { kill_all(); }

  std::size_t size() const { return children_.size(); }

  void start(std::size_t index, const std::function<std::string(std::size_t)>& run) {
    Pipe result;
    Pipe diagnostics;
    // Nothing buffered here may be written twice, once by the child.
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw_errno("sweep -j: fork");
    if (pid == 0) {
      ::close(result.read);
      ::close(diagnostics.read);
      child_main(result.write, diagnostics.write, parent, index, run);
    }
    RunningChild child{index, pid, result.release_read(), diagnostics.release_read(), {}, {}};
    children_.push_back(std::move(child));
  }

  // Waits until at least one child has ended; returns those that have, with their reports.
  std::vector<std::pair<std::size_t, ForkedPointReport>> wait_for_endings() {
    CCLMESH_CHECK(!children_.empty(), "sweep -j: waiting with no child running");
    std::vector<pollfd> polled;
    for (const RunningChild& child : children_) {
      polled.push_back({child.result_fd, POLLIN, 0});  // -1 once closed: poll skips it
      polled.push_back({child.stderr_fd, POLLIN, 0});
    }
    while (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno != EINTR) throw_errno("sweep -j: poll");
    }
    std::vector<std::pair<std::size_t, ForkedPointReport>> ended;
    std::vector<RunningChild> still_running;
    for (std::size_t i = 0; i < children_.size(); ++i) {
      RunningChild& child = children_[i];
      if (polled[2 * i].revents != 0) read_some(child, child.result_fd, child.payload);
      if (polled[2 * i + 1].revents != 0) read_some(child, child.stderr_fd, child.diagnostics);
      if (child.result_fd >= 0 || child.stderr_fd >= 0) {
        still_running.push_back(std::move(child));
        continue;
      }
      ended.emplace_back(child.index, reap(child));
    }
    children_ = std::move(still_running);
    return ended;
  }

  void kill_all() {
    for (const RunningChild& child : children_) ::kill(child.pid, SIGKILL);
    for (RunningChild& child : children_) {
      close_fd(child.result_fd);
      close_fd(child.stderr_fd);
      wait_status(child.pid);
    }
    children_.clear();
  }

 private:
  // A pipe whose ends are closed unless released (a fork that fails leaks neither).
  struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("sweep -j: pipe");
      read = fds[0];
      write = fds[1];
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    ~Pipe() {
      close_fd(read);
      close_fd(write);
    }
    int release_read() {
      close_fd(write);
      return std::exchange(read, -1);
    }
  };

  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Reads what the child has written to `fd` into `into`; closes `fd` at its end (the child is
  // gone, or the pipe failed and the child has been killed).
  static void read_some(RunningChild& child, int& fd, std::string& into) {
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      return;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n < 0) ::kill(child.pid, SIGKILL);
    close_fd(fd);
  }

  static ForkedPointReport reap(RunningChild& child) {
    const int status = wait_status(child.pid);
    ForkedPointReport report;
    report.completed = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    report.diagnostics = std::move(child.diagnostics);
    if (report.completed) {
      report.payload = std::move(child.payload);
    } else {
      report.failure = ending_text(status);
      if (status >= 0 && WIFSIGNALED(status)) report.signal = WTERMSIG(status);
    }
    return report;
  }

  std::vector<RunningChild> children_;
};

}  // namespace

void run_points_forked(std::size_t count, std::size_t jobs, const ForkedPointCallbacks& callbacks,
                       const std::vector<std::size_t>& start_order) {
  CCLMESH_CHECK(jobs >= 1, "sweep -j: at least one process");
  CCLMESH_CHECK(start_order.empty() || start_order.size() == count, "sweep -j: a start order of every point");
  const auto point_to_start = [&start_order](std::size_t n) { return start_order.empty() ? n : start_order[n]; };
  std::vector<std::optional<ForkedPointReport>> reports(count);
  std::size_t next_start = 0;
  std::size_t next_deliver = 0;
  RunningChildren children;
  while (next_deliver < count) {
    while (children.size() < jobs && next_start < count) children.start(point_to_start(next_start++), callbacks.run);
    for (auto& [index, report] : children.wait_for_endings()) {
      callbacks.finished(index);
      reports[index] = std::move(report);
    }
    while (next_deliver < count && reports[next_deliver].has_value()) {
      ForkedPointReport report = std::move(*reports[next_deliver]);
      reports[next_deliver].reset();
      if (!callbacks.deliver(next_deliver++, std::move(report))) return;
    }
  }
}

SweepPointOutcome outcome_from_report(const ForkedPointReport& report) {
  SweepPointOutcome outcome;
  if (!report.completed) {
    outcome.kind = SweepPointOutcome::Kind::Crashed;
    outcome.message = "its process " + report.failure;
    // The kernel's out-of-memory killer sends SIGKILL, and N points at once need N points' memory.
    if (report.signal == SIGKILL) outcome.message += " (out of memory? each of -j's processes holds one point)";
    return outcome;
  }
  try {
    return decode_sweep_point(report.payload);
  } catch (const std::exception& e) {
    outcome.kind = SweepPointOutcome::Kind::Crashed;
    outcome.message = fmt::format("its process sent a result that could not be read ({})", e.what());
    return outcome;
  }
}

void run_sweep_points(const std::vector<RunOptions>& points, std::size_t jobs,
                      const std::function<void(std::size_t index)>& finished,
                      const std::function<bool(std::size_t index, SweepPointOutcome outcome)>& deliver,
                      const std::function<void()>& before_diagnostics) {
  if (jobs <= 1) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      SweepPointOutcome outcome = run_sweep_point(points[i]);
      finished(i);
      if (!deliver(i, std::move(outcome))) return;
    }
    return;
  }
  ForkedPointCallbacks callbacks;
  // Each point with data is checked against its share of the host's memory: the points started
  // together are the largest (below), and all of them hold their data at once.
  const auto at_once = static_cast<std::uint32_t>(std::min(jobs, points.size()));
  callbacks.run = [&points, at_once](std::size_t i) {
    RunOptions point = points[i];
    point.data_runs_at_once = at_once;
    return encode_sweep_point(run_sweep_point(point));
  };
  callbacks.finished = finished;
  callbacks.deliver = [&deliver, &before_diagnostics](std::size_t i, ForkedPointReport report) {
    // Where -j 1 would have printed it: while the point ran, before its row.
    if (!report.diagnostics.empty()) {
      if (before_diagnostics) before_diagnostics();
      std::fwrite(report.diagnostics.data(), 1, report.diagnostics.size(), stderr);
      std::fflush(stderr);
    }
    return deliver(i, outcome_from_report(report));
  };
  if (points.empty()) return;
  std::vector<std::size_t> largest_first(points.size());
  std::iota(largest_first.begin(), largest_first.end(), std::size_t{0});
  std::stable_sort(largest_first.begin(), largest_first.end(), [&points](std::size_t a, std::size_t b) {
    return points[a].size_bytes > points[b].size_bytes;
  });
  run_points_forked(points.size(), std::min(jobs, points.size()), callbacks, largest_first);
}

}  // namespace cclmesh::cli
