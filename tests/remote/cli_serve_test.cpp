// `cclmesh serve` as a user runs it: the real binary in a child process, its port read from its
// first stdout line, a RemoteMeshDevice client in this process; it exits 0 on SIGTERM and on a
// client's shutdown request, and bad options exit 2 with one line naming the option. And
// `cclmesh run --device` against it: the local run's row, and what it refuses.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "runtime/remote/remote_mesh_device.hpp"

namespace cclmesh::runtime::remote {
namespace {

// A child `cclmesh <args>` with stdout and stderr on pipes.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    int out[2];
    int err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::close(out[0]);
      ::close(err[0]);
      args.insert(args.begin(), CCLMESH_BIN);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(CCLMESH_BIN, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
    ::close(err_);
  }

  // The first line the child prints (waiting at most 60 s, then empty).
  std::string first_stdout_line() {
    std::string line;
    char c = 0;
    pollfd p{out_, POLLIN, 0};
    while (::poll(&p, 1, 60'000) == 1 && ::read(out_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  std::string all_stdout() { return drain(out_); }
  std::string all_stderr() { return drain(err_); }

 private:
  static std::string drain(int fd) {
    std::string text;
    char buf[256];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    return text;
  }

 public:
  void signal(int sig) { ::kill(pid_, sig); }
  // The exit code, or 128 + the signal that killed it.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  int err_ = -1;
};

std::uint16_t port_of(const std::string& line) {
  const std::size_t colon = line.rfind(':');
  return colon == std::string::npos ? 0 : static_cast<std::uint16_t>(std::stoul(line.substr(colon + 1)));
}

TEST(CliServe, ServesAClientAndExitsOnSigterm) {
  Child serve({"serve", "--system", "n300", "--port", "0"});
  const std::string line = serve.first_stdout_line();
  EXPECT_EQ(line.rfind("cclmesh serve: simulated n300 (2 chips), fabric line x1, functional listening on 127.0.0.1:", 0),
            0u)
      << line;
  const std::uint16_t port = port_of(line);
  ASSERT_NE(port, 0) << line;
  {
    RemoteMeshDevice device("127.0.0.1", port);
    EXPECT_EQ(device.chips(), (std::vector<ChipId>{0, 1}));
    ASSERT_TRUE(device.fabric().has_value());
    EXPECT_EQ(device.fabric()->mode, FabricMode::Line);
    const BufferHandle b =
        device.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
    std::vector<std::byte> data(4096, std::byte{0x5A});
    device.write_buffer(1, b, data);
    std::vector<std::byte> back(4096);
    device.read_buffer(1, b, back);
    EXPECT_EQ(back, data);
  }
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
}

TEST(CliServe, SigintEndsTheServerWhileAClientIsConnected) {
  Child serve({"serve", "--system", "n300", "--port", "0"});
  const std::uint16_t port = port_of(serve.first_stdout_line());
  RemoteMeshDevice device("127.0.0.1", port);
  EXPECT_EQ(device.chips().size(), 2u);
  serve.signal(SIGINT);
  EXPECT_EQ(serve.wait(), 0);
  try {
    device.worker_grid();
    FAIL() << "a stopped server answered";
  } catch (const RemoteDeviceError& e) {
    // Closed or reset, as the peer's kernel answers the request sent after the close.
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("remote device 127.0.0.1:" + std::to_string(port) + ": worker_grid: the connection was ", 0), 0u)
        << what;
    EXPECT_NE(what.find("by the other side"), std::string::npos) << what;
  }
}

TEST(CliServe, ExitsWhenAClientAsksItTo) {
  Child serve({"serve", "--system", "t3k", "--port", "0", "--mode", "legacy"});
  const std::string line = serve.first_stdout_line();
  EXPECT_NE(line.find("legacy mode (no fabric)"), std::string::npos) << line;
  RemoteMeshDevice device("127.0.0.1", port_of(line));
  EXPECT_EQ(device.fabric()->mode, FabricMode::None);
  device.shutdown_server();
  EXPECT_EQ(serve.wait(), 0);
}

// A client that connects and sends nothing does not lock the next one out: --idle-timeout.
TEST(CliServe, SilentClientIsDroppedAfterTheIdleTimeout) {
  Child serve({"serve", "--system", "n300", "--port", "0", "--idle-timeout", "0.5"});
  const std::uint16_t port = port_of(serve.first_stdout_line());
  ASSERT_NE(port, 0);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket silent = connect_socket(io, "127.0.0.1", port, std::chrono::milliseconds(5000));
  RemoteMeshDevice device("127.0.0.1", port, {.connect_timeout = std::chrono::seconds(5), .io_timeout = std::chrono::seconds(5)});
  EXPECT_EQ(device.chips().size(), 2u);
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
  EXPECT_NE(serve.all_stderr().find("nothing was received for 0.5 s"), std::string::npos);
}

TEST(CliServe, BadOptionsExitTwoWithOneLine) {
  const std::vector<std::vector<std::string>> cases{
      {"serve", "--system", "t3k", "--port", "70000"},
      {"serve", "--system", "t3k", "--bind", "not-an-address"},
      {"serve", "--system", "n300", "--topology", "ring"},
      {"serve", "--system", "no_such_system"},
      {"serve", "--system", "t3k", "--mode", "fast"},
      {"serve", "--system", "t3k", "--idle-timeout", "-1"},
  };
  for (const auto& args : cases) {
    Child serve(args);
    EXPECT_EQ(serve.wait(), 2) << args[3] << " " << args.back();
    const std::string err = serve.all_stderr();
    EXPECT_EQ(err.rfind("cclmesh: error: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

TEST(CliServe, PortInUseExitsTwoNamingIt) {
  Child first({"serve", "--system", "n300", "--port", "0"});
  const std::uint16_t port = port_of(first.first_stdout_line());
  ASSERT_NE(port, 0);
  Child second({"serve", "--system", "n300", "--port", std::to_string(port)});
  EXPECT_EQ(second.wait(), 2);
  EXPECT_EQ(second.all_stderr(), "cclmesh: error: --bind 127.0.0.1 --port " + std::to_string(port) +
                                     ": cannot listen on 127.0.0.1:" + std::to_string(port) +
                                     ": Address already in use\n");
  first.signal(SIGINT);
  EXPECT_EQ(first.wait(), 0);
}

// `cclmesh run --device`: the same op on a fresh served device prints the row a local run prints,
// every figure (simulated time, bandwidths, dispatch, launch, #wrong) equal.
TEST(CliRunDevice, PrintsTheLocalRunsRow) {
  for (const std::string op : {"all_gather", "reduce_scatter"}) {
    Child serve({"serve", "--system", "t3k", "--port", "0"});
    const std::uint16_t port = port_of(serve.first_stdout_line());
    ASSERT_NE(port, 0);
    Child remote({"run", "--device", "127.0.0.1:" + std::to_string(port), "--op", op, "--size", "1MiB"});
    const std::string remote_table = remote.all_stdout();
    EXPECT_EQ(remote.wait(), 0) << remote.all_stderr();
    Child local({"run", "--system", "t3k", "--op", op, "--size", "1MiB"});
    const std::string local_table = local.all_stdout();
    EXPECT_EQ(local.wait(), 0);
    EXPECT_EQ(remote_table, local_table);
    EXPECT_NE(remote_table.find("# cclmesh: " + op + " on t3k (8 chips, ring, 1 link, fabric mode)"), std::string::npos)
        << remote_table;
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait(), 0);
  }
}

// A timing-only server (serve --no-data): the run neither writes nor checks data, as a local
// --no-data run (#wrong N/A, exit 0), every figure equal.
TEST(CliRunDevice, TimingOnlyServerRunsAsNoData) {
  Child serve({"serve", "--system", "t3k", "--port", "0", "--no-data"});
  const std::string line = serve.first_stdout_line();
  EXPECT_NE(line.find("timing only"), std::string::npos) << line;
  const std::uint16_t port = port_of(line);
  ASSERT_NE(port, 0);
  Child remote({"run", "--device", "127.0.0.1:" + std::to_string(port), "--op", "all_gather", "--size", "1MiB"});
  const std::string remote_table = remote.all_stdout();
  EXPECT_EQ(remote.wait(), 0) << remote.all_stderr();
  Child local({"run", "--system", "t3k", "--no-data", "--op", "all_gather", "--size", "1MiB"});
  const std::string local_table = local.all_stdout();
  EXPECT_EQ(local.wait(), 0);
  EXPECT_EQ(remote_table, local_table);
  EXPECT_NE(remote_table.find("N/A"), std::string::npos) << remote_table;
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
}

TEST(CliRunDevice, RefusesWhatTheServerDecidesAndSimulatorOptions) {
  const std::string device = "127.0.0.1:1";  // refused before any connection is tried
  Child fault({"run", "--device", device, "--fault", "link-down:0-1"});
  EXPECT_EQ(fault.wait(), 2);
  EXPECT_EQ(fault.all_stderr(),
            "cclmesh: error: --device: --fault is a simulator option (faults, traces, reports, watchdogs, link "
            "what-ifs, fabric settings and the data mode belong to the simulation, which runs on the server); not "
            "accepted with --device\n");
  Child trace({"run", "--device", device, "--trace", "-"});
  EXPECT_EQ(trace.wait(), 2);
  EXPECT_NE(trace.all_stderr().find("--device: --trace is a simulator option"), std::string::npos);
  Child system({"run", "--device", device, "--system", "galaxy"});
  EXPECT_EQ(system.wait(), 2);
  EXPECT_EQ(system.all_stderr(),
            "cclmesh: error: --device: --system is the served device's to decide (cclmesh serve --system, --mode, "
            "--topology, --links); not accepted with --device\n");
  Child unreachable({"run", "--device", device, "--op", "all_gather"});
  EXPECT_EQ(unreachable.wait(), 2);
  EXPECT_EQ(unreachable.all_stderr(),
            "cclmesh: error: --device: remote device 127.0.0.1:1: cannot connect: Connection refused\n");
  Child malformed({"run", "--device", "simbox"});
  EXPECT_EQ(malformed.wait(), 2);
  EXPECT_EQ(malformed.all_stderr(), "cclmesh: error: --device: 'simbox' is not HOST:PORT (no ':PORT')\n");
}

}  // namespace
}  // namespace cclmesh::runtime::remote
