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
  if (jobs > 0) return jobs;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : cores;
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

[[noreturn]] void child_main(int write_fd, pid_t parent, std::size_t index,
                             const std::function<std::string(std::size_t)>& run) {
#ifdef __linux__
  // If the sweep itself dies, its children go with it rather than simulating on as orphans.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kChildOrphaned);
#else
  (void)parent;
#endif
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
  int fd = -1;  // the read end of the child's pipe
  std::string payload;
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
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("sweep -j: pipe");
    // Nothing buffered here may be written twice, once by the child.
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      errno = error;
      throw_errno("sweep -j: fork");
    }
    if (pid == 0) {
      ::close(fds[0]);
      child_main(fds[1], parent, index, run);
    }
    ::close(fds[1]);
    children_.push_back({index, pid, fds[0], {}});
  }

  // Waits until at least one child has ended; returns those that have, with their reports.
  std::vector<std::pair<std::size_t, ForkedPointReport>> wait_for_endings() {
    CCLMESH_CHECK(!children_.empty(), "sweep -j: waiting with no child running");
    std::vector<pollfd> polled;
    for (const RunningChild& child : children_) polled.push_back({child.fd, POLLIN, 0});
    while (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno != EINTR) throw_errno("sweep -j: poll");
    }
    std::vector<std::pair<std::size_t, ForkedPointReport>> ended;
    std::vector<RunningChild> still_running;
    for (std::size_t i = 0; i < children_.size(); ++i) {
      RunningChild& child = children_[i];
      if (polled[i].revents == 0 || !read_some(child)) {
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
    for (const RunningChild& child : children_) {
      ::close(child.fd);
      wait_status(child.pid);
    }
    children_.clear();
  }

 private:
  // Reads what the child has written; true once its pipe is at its end (the child is gone, or
  // the pipe failed and the child has been killed).
  static bool read_some(RunningChild& child) {
    char buffer[65536];
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n > 0) {
      child.payload.append(buffer, static_cast<std::size_t>(n));
      return false;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (n < 0) ::kill(child.pid, SIGKILL);
    return true;
  }

  static ForkedPointReport reap(RunningChild& child) {
    ::close(child.fd);
    const int status = wait_status(child.pid);
    ForkedPointReport report;
    report.completed = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
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
                      const std::function<bool(std::size_t index, SweepPointOutcome outcome)>& deliver) {
  if (jobs <= 1) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      SweepPointOutcome outcome = run_sweep_point(points[i]);
      finished(i);
      if (!deliver(i, std::move(outcome))) return;
    }
    return;
  }
  ForkedPointCallbacks callbacks;
  callbacks.run = [&points](std::size_t i) { return encode_sweep_point(run_sweep_point(points[i])); };
  callbacks.finished = finished;
  callbacks.deliver = [&deliver](std::size_t i, ForkedPointReport report) {
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
