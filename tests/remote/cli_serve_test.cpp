// `cclmesh serve` as a user runs it: the real binary in a child process, its port read from its
// first stdout line, a RemoteMeshDevice client in this process; it exits 0 on SIGTERM and on a
// client's shutdown request, and bad options exit 2 with one line naming the option. And
// `cclmesh run --device` against it: the local run's row, and what it refuses. And `serve
// --trace-dir`: each session's trace, the local run's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/remote/remote_mesh_device.hpp"

namespace cclmesh::runtime::remote {
namespace {

// A child `cclmesh <args>` with stdout and stderr on pipes.
class Child {
 public:
  // `address_space_bytes` (0: none) bounds the child's address space (ulimit -v), so that a client
  // runs out of host memory at a size this machine has.
  explicit Child(std::vector<std::string> args, rlim_t address_space_bytes = 0) {
    int out[2];
    int err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      if (address_space_bytes != 0) {
        const rlimit limit{address_space_bytes, address_space_bytes};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
      }
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

  // The first line the child prints on stdout / stderr (waiting at most 60 s, then empty).
  std::string first_stdout_line() { return first_line(out_); }
  std::string first_stderr_line() { return first_line(err_); }
  std::string all_stdout() { return drain(out_); }
  std::string all_stderr() { return drain(err_); }

 private:
  static std::string first_line(int fd) {
    std::string line;
    char c = 0;
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 60'000) == 1 && ::read(fd, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
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
    if (!reaped_) ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  // Whether it has not exited yet.
  bool running() {
    if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    return !reaped_;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
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
    EXPECT_EQ(device.fabric().mode, FabricMode::Line);
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

// An IPv6 bind address is printed in brackets, as `run --device` takes it: the printed address
// copied into --device runs (session 41: it printed "::1:PORT", which --device refuses).
TEST(CliServe, PrintsAnIpv6AddressAsRunDeviceTakesIt) {
  Child serve({"serve", "--system", "n300", "--port", "0", "--bind", "::1"});
  const std::string line = serve.first_stdout_line();
  const std::string prefix = "cclmesh serve: simulated n300 (2 chips), fabric line x1, functional listening on ";
  ASSERT_EQ(line.rfind(prefix + "[::1]:", 0), 0u) << line;
  Child run({"run", "--device", line.substr(prefix.size()), "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(run.wait(), 0) << run.all_stderr();
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
  EXPECT_EQ(device.fabric().mode, FabricMode::None);
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
      {"serve", "--system", "t3k", "--max-enqueued-host", "0"},
      {"serve", "--system", "t3k", "--max-enqueued-host", "lots"},
      {"serve", "--system", "t3k", "--max-profile-entries", "0"},
      {"serve", "--system", "t3k", "--max-profile-entries", "-5"},
      // Legacy mode runs no fabric router, so no receiver to set (session 31's review: taken).
      {"serve", "--system", "t3k", "--mode", "legacy", "--fabric-rx-in-flight", "2"},
  };
  for (const auto& args : cases) {
    Child serve(args);
    EXPECT_EQ(serve.wait(), 2) << args[3] << " " << args.back();
    const std::string err = serve.all_stderr();
    EXPECT_EQ(err.rfind("cclmesh: error: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// serve's whole-number options read decimal digits, as run's and sweep's do (session 31: CLI11's
// Range read `--port 010000` as octal 4096, `--port 0x1F90` as 8080 and `--fabric-payload 04352`
// as 2282, and called "abc" or "5s" "not in range").
TEST(CliServe, NumbersAreDecimalAndBadOnesAreNamed) {
  Child leading_zero({"serve", "--system", "n300", "--port", "0", "--fabric-payload", "04352"});
  const std::uint16_t port = port_of(leading_zero.first_stdout_line());
  ASSERT_NE(port, 0);
  {
    RemoteMeshDevice device("127.0.0.1", port);
    EXPECT_EQ(device.fabric().max_payload_bytes, 4352u);
  }
  leading_zero.signal(SIGTERM);
  EXPECT_EQ(leading_zero.wait(), 0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--port", "0x1F90"}, "cclmesh: error: --port: '0x1F90' is not a whole number; expected 0 to 65535\n"},
      {{"--links", "abc"}, "cclmesh: error: --links: 'abc' is not a whole number; expected 1 to 4\n"},
      {{"--fabric-rx-in-flight", "1.5"},
       "cclmesh: error: --fabric-rx-in-flight: '1.5' is not a whole number; expected 1 to 16\n"},
      {{"--idle-timeout", "5s"},
       "cclmesh: error: --idle-timeout: invalid value '5s': expected a number of seconds from 0 (never) to 86400, e.g. "
       "30 or 0.5\n"},
  };
  for (const auto& [option, error] : cases) {
    std::vector<std::string> args{"serve", "--system", "n300"};
    args.insert(args.end(), option.begin(), option.end());
    Child serve(args);
    EXPECT_EQ(serve.wait(), 2) << option[0];
    EXPECT_EQ(serve.all_stderr(), error);
  }
}

// --max-enqueued-host bounds what a client may hold queued in the server until its finish():
// past it the request is refused naming the limit, and the session goes on.
TEST(CliServe, MaxEnqueuedHostBoundsAClientsQueuedBytes) {
  Child serve({"serve", "--system", "n300", "--port", "0", "--max-enqueued-host", "6000"});
  const std::uint16_t port = port_of(serve.first_stdout_line());
  ASSERT_NE(port, 0);
  {
    RemoteMeshDevice device("127.0.0.1", port);
    const BufferHandle b =
        device.create_buffer({BufferType::Dram, 4096, 2048, TensorMemoryLayout::Interleaved, std::nullopt});
    const std::vector<std::byte> data(4096, std::byte{0x3C});
    device.enqueue_write_buffer(1, b, data);
    std::vector<std::byte> back(4096);
    try {
      device.enqueue_read_buffer(1, b, back);
      ADD_FAILURE() << "a read past the server's limit was queued";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("this server's limit of 6000 B"), std::string::npos) << e.what();
    }
    device.finish();
    device.enqueue_read_buffer(1, b, back);
    device.finish();
    EXPECT_EQ(back, data);
  }
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
}

// A run whose tensors pass the server's limit on one host write or read (--max-enqueued-host)
// is bad input: exit 2 naming --size and the server's option, before the op runs, and the server
// serves the next run. Review (session 30): an all_gather's read-back past it ran the whole op
// first, then said "internal error" (exit 4); a reduce_scatter's input write said exit 2 with the
// server's words alone.
TEST(CliRunDevice, TensorsPastTheServersHostLimitExitTwoNamingIt) {
  Child serve({"serve", "--system", "t3k", "--port", "0", "--max-enqueued-host", "1MiB"});
  const std::uint16_t port = port_of(serve.first_stdout_line());
  ASSERT_NE(port, 0);
  const std::string device = "127.0.0.1:" + std::to_string(port);
  for (const std::string op : {"all_gather", "reduce_scatter"}) {
    Child run({"run", "--device", device, "--op", op, "--size", "2MiB"});
    EXPECT_EQ(run.all_stdout(), "") << op;
    EXPECT_EQ(run.wait(), 2) << op;
    const std::string call = op == "all_gather" ? "read_buffer" : "write_buffer";
    EXPECT_EQ(run.all_stderr(), "cclmesh: error: --size: " + call +
                                    ": 2097152 B is more than this server holds for a client's host write or read "
                                    "(1048576 B, serve --max-enqueued-host); expected a tensor whose every buffer "
                                    "holds at most that per chip, or a server started with a larger "
                                    "--max-enqueued-host\n")
        << op;
  }
  // The session of each refused run ended as usual: the next run is served.
  Child ok({"run", "--device", device, "--op", "all_gather", "--size", "1MiB"});
  EXPECT_EQ(ok.wait(), 0) << ok.all_stderr();
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
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

// One session at a time: `run --device` started while another client holds the served device
// waits, asking again, and runs once that session ends (the local run's row); one whose
// --device-wait passes first exits 5 (the device unavailable: not bad input, worth trying again)
// naming the server and how long it waited. The waiting run
// says it waits (its first stderr line, printed when the server first turns it away), and the
// session is released only once it has: the run that then gets in was turned away first, on
// any host, however slow. The server counts the connections it turned away.
TEST(CliRunDevice, WaitsWhileAnotherClientsSessionRuns) {
  Child serve({"serve", "--system", "t3k", "--port", "0"});
  const std::uint16_t port = port_of(serve.first_stdout_line());
  ASSERT_NE(port, 0);
  const std::string device = "127.0.0.1:" + std::to_string(port);
  auto first = std::make_unique<RemoteMeshDevice>("127.0.0.1", port);
  {
    Child impatient({"run", "--device", device, "--device-wait", "0.5", "--op", "all_gather", "--size", "64KiB"});
    EXPECT_EQ(impatient.wait(), 5);
    const std::string said = impatient.all_stderr();
    // It says it waits (as the patient run below), then gives up.
    const std::size_t first_end = said.find('\n');
    ASSERT_NE(first_end, std::string::npos) << said;
    const std::string waiting = said.substr(0, first_end);
    const std::string says = "; waiting up to 0.5 s for it to end (--device-wait)";
    EXPECT_TRUE(waiting.size() > says.size() && waiting.compare(waiting.size() - says.size(), says.size(), says) == 0)
        << said;
    const std::string error = said.substr(first_end + 1);
    EXPECT_EQ(error.rfind("cclmesh: error: --device: remote device " + device +
                              ": hello: the server is serving another client (127.0.0.1:",
                          0),
              0u)
        << error;
    const std::string end = "); one session at a time, try again when it ends; waited 0.5 s for it (--device-wait "
                            "SECONDS waits longer)\n";
    EXPECT_TRUE(error.size() > end.size() && error.compare(error.size() - end.size(), end.size(), end) == 0) << error;
  }
  Child patient({"run", "--device", device, "--device-wait", "120", "--op", "all_gather", "--size", "64KiB"});
  const std::string waiting = patient.first_stderr_line();
  EXPECT_EQ(waiting.rfind("cclmesh: remote device " + device + ": hello: the server is serving another client (127.0.0.1:",
                          0),
            0u)
      << waiting;
  const std::string says = "); one session at a time, try again when it ends; waiting up to 120 s for it to end "
                           "(--device-wait)";
  EXPECT_TRUE(waiting.size() > says.size() && waiting.compare(waiting.size() - says.size(), says.size(), says) == 0)
      << waiting;
  EXPECT_TRUE(patient.running());  // turned away, and waiting
  first.reset();                   // the first session ends
  const std::string remote_table = patient.all_stdout();
  EXPECT_EQ(patient.wait(), 0) << patient.all_stderr();
  EXPECT_EQ(patient.all_stderr(), "");  // the one line above, and nothing more
  Child local({"run", "--system", "t3k", "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(remote_table, local.all_stdout());
  EXPECT_EQ(local.wait(), 0);
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
  EXPECT_NE(serve.all_stderr().find(" turned away (busy) during that session\n"), std::string::npos);
}

// A free port on 127.0.0.1 (bound, then released).
std::uint16_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

// A script's `cclmesh serve ... &` then `cclmesh run --device ... --device-wait 120`: the run,
// started first, says once that it waits for the address to accept; the server is started
// only once it has said so, and the run gets in and prints the local run's row.
TEST(CliRunDevice, DeviceWaitCoversAServerStillStarting) {
  const std::uint16_t port = free_port();
  const std::string device = "127.0.0.1:" + std::to_string(port);
  for (const std::string command : {"run", "sweep"}) {
    Child client(command == "run" ? std::vector<std::string>{"run", "--device", device, "--device-wait", "120", "--op",
                                                             "all_gather", "--size", "64KiB"}
                                  : std::vector<std::string>{"sweep", "--device", device, "--device-wait", "120", "--op",
                                                             "all_gather", "-b", "64KiB", "-e", "64KiB"});
    EXPECT_EQ(client.first_stderr_line(), "cclmesh: remote device " + device +
                                              ": cannot connect: Connection refused; trying again for up to 120 s "
                                              "(--device-wait)");
    Child serve({"serve", "--system", "n300", "--port", std::to_string(port)});
    ASSERT_EQ(port_of(serve.first_stdout_line()), port);
    const std::string table = client.all_stdout();
    EXPECT_EQ(client.wait(), 0) << client.all_stderr();
    EXPECT_EQ(client.all_stderr(), "");  // the one line above, and nothing more
    EXPECT_NE(table.find("all_gather on n300"), std::string::npos) << table;
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait(), 0);
  }
}

// Past --device-wait with nothing accepting: exit 5 (unavailable, as a busy server), naming the
// address, what was tried, for how long, and the option.
TEST(CliRunDevice, DeviceWaitForAServerThatNeverListensRunsOut) {
  const std::string device = "127.0.0.1:" + std::to_string(free_port());
  Child run({"run", "--device", device, "--device-wait", "0.3", "--op", "all_gather"});
  EXPECT_EQ(run.wait(), 5);
  EXPECT_EQ(run.all_stderr(), "cclmesh: remote device " + device +
                                  ": cannot connect: Connection refused; trying again for up to 0.3 s (--device-wait)\n"
                                  "cclmesh: error: --device: remote device " + device +
                                  ": cannot connect: Connection refused; tried for 0.3 s (--device-wait SECONDS waits "
                                  "longer)\n");
}

// HOST:PORT or [IPv6]:PORT, nothing else: a third ':' is not read as part of a host name.
TEST(CliRunDevice, DeviceOfNeitherFormExitsTwoNamingTheForms) {
  for (const std::string command : {"run", "sweep"}) {
    Child extra({command, "--device", "127.0.0.1:5170:1"});
    EXPECT_EQ(extra.wait(), 2);
    EXPECT_EQ(extra.all_stderr(), "cclmesh: error: --device: '127.0.0.1:5170:1' is not HOST:PORT or [IPv6]:PORT (more "
                                  "than one ':'; an IPv6 address goes in brackets, as [::1]:5170)\n");
  }
}

TEST(CliRunDevice, BadDeviceWaitExitsTwoWithOneLine) {
  for (const std::string command : {"run", "sweep"}) {
    Child negative({command, "--device", "127.0.0.1:1", "--device-wait", "-1"});
    EXPECT_EQ(negative.wait(), 2);
    EXPECT_EQ(negative.all_stderr(), "cclmesh: error: --device-wait: invalid value '-1': expected a number of seconds "
                                     "from 0 (do not wait) to 86400, e.g. 30 or 0.5\n");
    Child word({command, "--device", "127.0.0.1:1", "--device-wait", "soon"});
    EXPECT_EQ(word.wait(), 2);
    EXPECT_EQ(word.all_stderr(), "cclmesh: error: --device-wait: invalid value 'soon': expected a number of seconds "
                                 "from 0 (do not wait) to 86400, e.g. 30 or 0.5\n");
    Child alone({command, "--device-wait", "5"});
    EXPECT_EQ(alone.wait(), 2);
    EXPECT_EQ(alone.all_stderr(), "cclmesh: error: --device-wait requires --device\n");
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
            "cclmesh: error: --device: --fault shapes the simulated device, which runs on the server (faults, "
            "watchdogs, link what-ifs, fabric settings and the data mode are given to cclmesh serve); not accepted "
            "with --device\n");
  Child watchdog({"run", "--device", device, "--max-sim-time", "1ms"});
  EXPECT_EQ(watchdog.wait(), 2);
  EXPECT_NE(watchdog.all_stderr().find("--device: --max-sim-time shapes the simulated device"), std::string::npos);
  Child trace({"run", "--device", device, "--trace", "-"});
  EXPECT_EQ(trace.wait(), 2);
  EXPECT_EQ(trace.all_stderr(),
            "cclmesh: error: --device: --trace records the simulation, which runs on the server (cclmesh serve "
            "--trace-dir DIR writes a trace of each client session); not accepted with --device\n");
  // --hardware is held to the served device's once connected (since session 35, serve --hardware:
  // CliServeIdeal below); the connection is what fails here.
  Child hardware({"run", "--device", device, "--hardware", "ideal"});
  EXPECT_EQ(hardware.wait(), 5);
  EXPECT_EQ(hardware.all_stderr().find("--hardware"), std::string::npos) << hardware.all_stderr();
  // --report is taken (the served device's link figures cross the wire): the connection is what fails.
  Child report({"run", "--device", device, "--op", "all_gather", "--report", "unwritten.html"});
  EXPECT_EQ(report.wait(), 5);  // the device unavailable, not bad input
  EXPECT_EQ(report.all_stderr(),
            "cclmesh: error: --device: remote device 127.0.0.1:1: cannot connect: Connection refused (is cclmesh serve "
            "running there? --device-wait SECONDS waits for one still starting)\n");
  Child system({"run", "--device", device, "--system", "galaxy"});
  EXPECT_EQ(system.wait(), 2);
  EXPECT_EQ(system.all_stderr(),
            "cclmesh: error: --device: --system is the served device's to decide (cclmesh serve --system, --mode, "
            "--topology, --fabric-scope, --links); not accepted with --device\n");
  Child unreachable({"run", "--device", device, "--op", "all_gather"});
  EXPECT_EQ(unreachable.wait(), 5);
  EXPECT_EQ(unreachable.all_stderr(),
            "cclmesh: error: --device: remote device 127.0.0.1:1: cannot connect: Connection refused (is cclmesh serve "
            "running there? --device-wait SECONDS waits for one still starting)\n");
  Child malformed({"run", "--device", "simbox"});
  EXPECT_EQ(malformed.wait(), 2);
  EXPECT_EQ(malformed.all_stderr(), "cclmesh: error: --device: 'simbox' is not HOST:PORT or [IPv6]:PORT (no ':PORT')\n");
}

// `cclmesh serve ARGS --port 0`, listening: its first line and endpoint.
struct ServeChild {
  explicit ServeChild(std::vector<std::string> args) : child(with_ephemeral_port(std::move(args))) {
    line = child.first_stdout_line();
    port = port_of(line);
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
  int stop() {
    child.signal(SIGTERM);
    return child.wait();
  }
  static std::vector<std::string> with_ephemeral_port(std::vector<std::string> args) {
    args.insert(args.begin(), "serve");
    args.insert(args.end(), {"--port", "0"});
    return args;
  }

  Child child;
  std::string line;
  std::uint16_t port = 0;
};

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Outcome cclmesh(std::vector<std::string> args) {
  Child c(std::move(args));
  Outcome o;
  o.out = c.all_stdout();
  o.err = c.all_stderr();
  o.exit_code = c.wait();
  return o;
}

// The table's data rows (every line not a '#' comment).
std::string data_rows(const std::string& table) {
  std::string rows;
  std::size_t begin = 0;
  while (begin < table.size()) {
    const std::size_t end = table.find('\n', begin);
    const std::string line = table.substr(begin, end == std::string::npos ? std::string::npos : end + 1 - begin);
    if (line.rfind("#", 0) != 0) rows += line;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return rows;
}

// A --device client out of its own host memory (past the check before it sends, under a ulimit or
// squeezed by others) is told what this process holds and the way out a client has: the buffers are
// the server's, and --no-data is refused with --device (review42: it was told "every chip's
// buffers ... or --no-data", a local run's message). A 128 MiB all_gather's client holds ~400 MB of
// inputs and reference; bounded at 200 MB it runs out, where a 16 KiB one runs.
TEST(CliRunDevice, ClientOutOfHostMemoryNamesWhatTheClientHolds) {
#if defined(CCLMESH_ASAN) || defined(__SANITIZE_ADDRESS__)
  // ASan's shadow memory needs far more address space than the bound: the client would die
  // before it ran (signal 11), as the golden tests under `ulimit -v` are left out of such builds.
  GTEST_SKIP() << "an address-space bound and AddressSanitizer do not mix";
#endif
  ServeChild served({"--system", "t3k"});
  ASSERT_NE(served.port, 0) << served.line;
  constexpr rlim_t kClientAddressSpace = 200'000'000;
  const auto client = [&](std::vector<std::string> args) {
    Child c(std::move(args), kClientAddressSpace);
    Outcome o;
    o.out = c.all_stdout();
    o.err = c.all_stderr();
    o.exit_code = c.wait();
    return o;
  };
  const std::string out_of_memory =
      "out of host memory: a --device client holds the host's inputs and the op's expected outputs as real bytes in "
      "this process (the op's buffers are the server's); expected a smaller size, or a device served timing-only "
      "(cclmesh serve --no-data)";
  const Outcome small = client({"run", "--device", served.endpoint(), "--op", "all_gather", "--size", "16KiB"});
  EXPECT_EQ(small.exit_code, 0) << small.err;
  const Outcome run = client({"run", "--device", served.endpoint(), "--op", "all_gather", "--size", "128MiB"});
  EXPECT_EQ(run.exit_code, 4);
  EXPECT_EQ(run.err, "cclmesh: error: " + out_of_memory + "\n");
  const Outcome sweep =
      client({"sweep", "--device", served.endpoint(), "--op", "all_gather", "-b", "16KiB", "-e", "128MiB", "-f",
              "8192"});
  EXPECT_EQ(sweep.exit_code, 4);
  EXPECT_EQ(sweep.err, "cclmesh: all_gather at 134217728 B did not complete: " + out_of_memory + "\n");
  EXPECT_EQ(std::count(sweep.out.begin(), sweep.out.end(), '\n'), 3 + 1) << sweep.out;  // the 16 KiB row ran
  EXPECT_EQ(served.stop(), 0);
}

// `cclmesh sweep --device`: the points run in order on the served device, in one session, each as
// `run --device` runs it; a second fresh server given the same runs one by one prints the same
// table (its first row also a fresh local run's).
TEST(CliSweepDevice, RunsThePointsInOrderAsRunDeviceDoes) {
  ServeChild swept({"--system", "t3k"});
  ASSERT_NE(swept.port, 0) << swept.line;
  const Outcome sweep =
      cclmesh({"sweep", "--device", swept.endpoint(), "--op", "all_gather", "-b", "64KiB", "-e", "256KiB"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_EQ(swept.stop(), 0);

  ServeChild one_by_one({"--system", "t3k"});
  ASSERT_NE(one_by_one.port, 0) << one_by_one.line;
  std::string expected;
  for (const std::string size : {"64KiB", "128KiB", "256KiB"}) {
    const Outcome run = cclmesh({"run", "--device", one_by_one.endpoint(), "--op", "all_gather", "--size", size});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    expected += expected.empty() ? run.out : data_rows(run.out);
  }
  EXPECT_EQ(one_by_one.stop(), 0);
  EXPECT_EQ(sweep.out, expected);
  EXPECT_EQ(std::count(sweep.out.begin(), sweep.out.end(), '\n'), 3 + 3) << sweep.out;  // title, header, 3 rows

  const Outcome local = cclmesh({"run", "--system", "t3k", "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(local.exit_code, 0);
  EXPECT_EQ(data_rows(sweep.out).substr(0, data_rows(sweep.out).find('\n') + 1), data_rows(local.out));
}

// A sweep's points run in one session, each reading its op's kernel profile entries right after
// the op: under `serve --max-profile-entries` of the largest point's entries (the session's
// older ones dropped as it goes, session 31) its rows are a default server's.
TEST(CliSweepDevice, RunsUnderAProfileBoundOfOneOp) {
  const std::vector<std::string> points{"--op", "all_gather,reduce_scatter", "-b", "64KiB", "-e", "256KiB"};
  // reduce_scatter 256 KiB's kernels, the most of the points' (all_gather's are 32 each): 55 makes
  // its profile read refused.
  const std::vector<std::vector<std::string>> bounds{{}, {"--max-profile-entries", "56"}};
  std::vector<Outcome> sweeps;
  for (const std::vector<std::string>& bound : bounds) {
    std::vector<std::string> serve_args{"--system", "t3k"};
    serve_args.insert(serve_args.end(), bound.begin(), bound.end());
    ServeChild serve(serve_args);
    ASSERT_NE(serve.port, 0) << serve.line;
    std::vector<std::string> sweep{"sweep", "--device", serve.endpoint()};
    sweep.insert(sweep.end(), points.begin(), points.end());
    sweeps.push_back(cclmesh(sweep));
    EXPECT_EQ(sweeps.back().exit_code, 0) << sweeps.back().err;
    EXPECT_EQ(serve.stop(), 0);
  }
  EXPECT_EQ(sweeps[1].out, sweeps[0].out);
  EXPECT_EQ(std::count(sweeps[1].out.begin(), sweeps[1].out.end(), '\n'), 2 * (3 + 3)) << sweeps[1].out;
}

// Under a bound below one op's kernels the op's own entries are gone when `run --device` reads
// them: exit 2 naming the server's option (ProfileEntriesDroppedError, protocol 13), not an
// internal error, and the server serves the next client.
TEST(CliRunDevice, AProfileBoundBelowOneOpsEntriesExitsTwoNamingIt) {
  ServeChild serve({"--system", "t3k", "--max-profile-entries", "31"});  // an all_gather's are 32
  ASSERT_NE(serve.port, 0) << serve.line;
  for (int client = 0; client < 2; ++client) {
    const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "16KiB"});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err,
              "cclmesh: error: --device: profile_since: entry 0 was dropped: this server keeps the last 31 kernel "
              "profile entries of a session (serve --max-profile-entries), and this session's entries 0 .. 0 of 32 "
              "are gone; read an op's entries right after it finishes, or serve with a larger --max-profile-entries; "
              "expected a server that keeps at least one op's entries\n");
  }
  EXPECT_EQ(serve.stop(), 0);
}

// The same sweep on a fresh `serve --system SYSTEM` and locally (-j 1), both completed.
struct SweptAndLocal {
  Outcome swept;
  Outcome local;
};

SweptAndLocal sweep_served_and_local(const std::string& system, const std::vector<std::string>& sweep_args) {
  SweptAndLocal both;
  ServeChild serve({"--system", system});
  EXPECT_NE(serve.port, 0) << serve.line;
  std::vector<std::string> on_device{"sweep", "--device", serve.endpoint()};
  on_device.insert(on_device.end(), sweep_args.begin(), sweep_args.end());
  both.swept = cclmesh(on_device);
  EXPECT_EQ(both.swept.exit_code, 0) << both.swept.err;
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> here{"sweep", "--system", system, "-j", "1"};
  here.insert(here.end(), sweep_args.begin(), sweep_args.end());
  both.local = cclmesh(here);
  EXPECT_EQ(both.local.exit_code, 0) << both.local.err;
  return both;
}

// The device's state carries over from point to point, but no row shows it (docs/sim_device.md,
// "What persists between ops"): the table is the local sweep's, whose points each get a fresh
// device. Before programs launched on the cycle counter's grid (session 17) two rows differed,
// all_gather 128 KiB (10.38 against 10.39 GB/s) and reduce_scatter 64 KiB (17.50 against 17.48 us).
TEST(CliSweepDevice, EveryRowIsTheLocalSweepsFreshDeviceRow) {
  const SweptAndLocal t3k =
      sweep_served_and_local("t3k", {"--op", "all_gather,reduce_scatter", "-b", "64KiB", "-e", "256KiB"});
  EXPECT_EQ(t3k.swept.out, t3k.local.out);
  EXPECT_EQ(std::count(t3k.swept.out.begin(), t3k.swept.out.end(), '\n'), 2 * (3 + 3))  // per op: title, header, 3 rows
      << t3k.swept.out;
}

TEST(CliSweepDevice, RefusesJobsAndWhatTheServerDecides) {
  const std::string device = "127.0.0.1:1";  // nothing listens: refused before any connection is tried
  const Outcome jobs = cclmesh({"sweep", "--device", device, "-j", "2"});
  EXPECT_EQ(jobs.exit_code, 2);
  EXPECT_EQ(jobs.err,
            "cclmesh: error: -j: '2' with --device: a served device runs one op at a time, so a sweep on it runs its "
            "points one after another in one session; drop -j (or give -j 1), or run several servers and sweeps\n");
  const Outcome all_cores = cclmesh({"sweep", "--device", device, "-j", "0"});
  EXPECT_EQ(all_cores.exit_code, 2);
  EXPECT_EQ(all_cores.err.rfind("cclmesh: error: -j: '0' with --device", 0), 0u) << all_cores.err;
  const Outcome fault = cclmesh({"sweep", "--device", device, "--fault", "link-down:0-1"});
  EXPECT_EQ(fault.exit_code, 2);  // sweep has no --fault: CLI11 refuses it
  const Outcome wall = cclmesh({"sweep", "--device", device, "--max-wall", "10"});
  EXPECT_EQ(wall.exit_code, 2);
  EXPECT_NE(wall.err.find("--device: --max-wall shapes the simulated device"), std::string::npos) << wall.err;
  const Outcome system = cclmesh({"sweep", "--device", device, "--system", "galaxy"});
  EXPECT_EQ(system.exit_code, 2);
  EXPECT_NE(system.err.find("--device: --system is the served device's to decide"), std::string::npos) << system.err;
  // -j 1 is the sweep --device runs: accepted, so the connection is what fails.
  const Outcome unreachable = cclmesh({"sweep", "--device", device, "-j", "1", "--op", "all_gather"});
  EXPECT_EQ(unreachable.exit_code, 5);
  EXPECT_EQ(unreachable.err, "cclmesh: error: --device: remote device 127.0.0.1:1: cannot connect: Connection refused (is cclmesh serve "
            "running there? --device-wait SECONDS waits for one still starting)\n");
}

// A point that hangs on the served device ends the sweep there (exit 3, the report on stderr, as a
// local sweep's hang), and the server resets the device after that session: the next client's op
// runs as on a fresh device with the same fault (the local run's row; a 64 KiB all_gather ends
// before the link goes down at 30 us). Before the reset it got the hang report again.
TEST(CliSweepDevice, HangEndsTheSweepAndTheServerResetsTheDevice) {
  ServeChild serve({"--system", "t3k", "--fault", "link-down:0-2@30us"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome sweep =
      cclmesh({"sweep", "--device", serve.endpoint(), "--op", "all_gather", "-b", "512KiB", "-e", "1MiB"});
  const Outcome next = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(serve.stop(), 0);
  const std::string serve_log = serve.child.all_stderr();
  EXPECT_EQ(sweep.exit_code, 3) << sweep.err;
  EXPECT_EQ(sweep.out, "");  // the first point hung: no row
  const std::string first_line = "cclmesh: all_gather at 524288 B did not complete:\n";
  ASSERT_EQ(sweep.err.rfind(first_line, 0), 0u) << sweep.err;
  EXPECT_EQ(sweep.err.substr(first_line.size()).rfind("hang at ", 0), 0u) << sweep.err;
  EXPECT_NE(serve_log.find("cclmesh serve: device reset (the device failed in that session): the next client gets it "
                           "as just opened\n"),
            std::string::npos)
      << serve_log;
  const Outcome local =
      cclmesh({"run", "--system", "t3k", "--fault", "link-down:0-2@30us", "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, local.out);
}

// One op run twice on a T3K built with `device_args`: on `cclmesh serve --system t3k
// device_args` by `run --device`, and by a local `run --system t3k device_args` (serve takes the
// device's options under the names run does).
struct ServedAndLocal {
  std::string serve_line;  // serve's first stdout line
  Outcome remote;
  Outcome local;
};

ServedAndLocal served_and_local(const std::vector<std::string>& device_args, const std::vector<std::string>& op_args) {
  std::vector<std::string> serve_args{"--system", "t3k"};
  serve_args.insert(serve_args.end(), device_args.begin(), device_args.end());
  ServeChild serve(serve_args);
  ServedAndLocal result;
  result.serve_line = serve.line;
  EXPECT_NE(serve.port, 0) << serve.line;
  std::vector<std::string> remote_args{"run", "--device", serve.endpoint()};
  remote_args.insert(remote_args.end(), op_args.begin(), op_args.end());
  result.remote = cclmesh(remote_args);
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run", "--system", "t3k"};
  local_args.insert(local_args.end(), device_args.begin(), device_args.end());
  local_args.insert(local_args.end(), op_args.begin(), op_args.end());
  result.local = cclmesh(local_args);
  return result;
}

// A served device with a link down from the start: its fabric line is laid around it, and a
// client's run prints what a local run with the same --fault prints (the row and its note, which
// names the fault and the line's order: the hello carries both).
TEST(CliServeFaults, DeadLinkServedAsLocally) {
  const auto [serve_line, remote, local] =
      served_and_local({"--topology", "line", "--fault", "link-down:0-2"}, {"--op", "all_gather", "--size", "1MiB"});
  EXPECT_NE(serve_line.find(", faults link-down:0-2"), std::string::npos) << serve_line;
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(local.out.find("# faults: link-down:0-2; fabric chips in order: 0-4-5-1-3-2-6-7"), std::string::npos)
      << local.out;
}

// The ring a served t3k runs crosses a down 0-2 and no other ring avoids it: the device runs it as
// the line 2-6-7-3-1-5-4-0, and a client's ops run as a local run's with the fault do, ranks in
// the ring's order, with the same note (session 22; until then serve refused to start, exit 2,
// with the local run's refusal). Two links down cut the ring: the device cannot start, a
// simulated fault, so serve exits 3 with the device's report as a local run does (session 29;
// before, exit 2 and the report's first line, as if the options were bad).
TEST(CliServeFaults, WholeSystemRingOpenedByADownLinkRunsAsLocally) {
  for (const char* op : {"all_gather", "reduce_scatter", "send_recv"}) {
    SCOPED_TRACE(op);
    const auto [serve_line, remote, local] =
        served_and_local({"--fault", "link-down:0-2"}, {"--op", op, "--size", "256KiB"});
    EXPECT_EQ(local.exit_code, 0) << local.err;
    EXPECT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(remote.out, local.out);
    EXPECT_NE(remote.out.find("\n# ring 4-0-2-6-7-3-1-5-4 ran as line 2-6-7-3-1-5-4-0: link 0-2 is down "
                              "(link-down:0-2); the op's group, which ran as that line"),
              std::string::npos)
        << remote.out;
  }
  const Outcome cut = cclmesh({"serve", "--system", "ring:8", "--fault", "link-down:0-1", "--fault", "link-down:4-5",
                               "--port", "0"});
  EXPECT_EQ(cut.exit_code, 3);
  EXPECT_EQ(cut.err.rfind("cclmesh: the simulated device did not start (--system ring:8 "
                          "--fault link-down:0-1 --fault link-down:4-5):\nfault link-down:0-1, link-down:4-5 at 0 s: "
                          "the ring fabric 0-1-2-3-4-5-6-7-0 crosses",
                          0),
            0u)
      << cut.err;
  EXPECT_NE(cut.err.find("the ring runs as a line around one down link, not 2 (0-1, 4-5)"), std::string::npos) << cut.err;
  EXPECT_EQ(cut.out, "");  // never listened
}

// The report after a "did not ..." header line: what a local run and serve both print.
std::string report_after_header(const std::string& err) {
  const std::size_t at = err.find(":\n");
  return at == std::string::npos ? "no report in: " + err : err.substr(at + 2);
}

// A fabric whose start-up hangs (a lost handshake) or runs past --max-sim-time: not bad input
// but the simulation's outcome, so serve exits 3 with the whole report on stderr, word for word
// the report of a local run with the same fault (README's exit codes; before session 29, exit 2
// and the report's first line).
TEST(CliServeFaults, AFabricThatCannotStartExitsThreeWithTheReportAsRun) {
  const Outcome hung = cclmesh({"serve", "--system", "n300", "--fault", "drop:0.5", "--port", "0"});
  const Outcome local = cclmesh({"run", "--system", "n300", "--fault", "drop:0.5", "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(local.exit_code, 3) << local.err;
  EXPECT_EQ(hung.exit_code, 3) << hung.err;
  EXPECT_EQ(hung.out, "");  // never listened
  EXPECT_EQ(hung.err.rfind("cclmesh: the simulated device did not start (--system n300 "
                           "--fault drop:0.5):\nhang at 3.559 us: the line fabric's start-up cannot complete",
                           0),
            0u)
      << hung.err;
  EXPECT_EQ(report_after_header(hung.err), report_after_header(local.err));

  const Outcome timeout = cclmesh({"serve", "--system", "n300", "--max-sim-time", "1us", "--port", "0"});
  EXPECT_EQ(timeout.exit_code, 3) << timeout.err;
  EXPECT_EQ(timeout.err.rfind("cclmesh: the simulated device did not start (--system n300 "
                              "--max-sim-time 1us):\ntimeout: simulated time passed the limit of 1.000 us",
                              0),
            0u)
      << timeout.err;
  EXPECT_NE(timeout.err.find("fabric routers:\n  chip 0 core (9,6) [eth ch 8] fabric_router (persistent): blocked in "
                             "noc_semaphore_wait"),
            std::string::npos)
      << timeout.err;
}

// The report from "cclmesh: the simulated op did not complete:" on (the simulator's warnings
// before it go to the stderr of the process that simulates: the server's, when served).
std::string report_of(const std::string& err) {
  const std::size_t at = err.find("cclmesh: the simulated op did not complete:");
  return at == std::string::npos ? "no report in: " + err : err.substr(at);
}

// A link that goes down mid-op hangs it: over the wire, the same exit code (3) and the same hang
// report, word for word, as the local run with that fault.
TEST(CliServeFaults, HangOverTheWireReportsAsLocally) {
  const auto [serve_line, remote, local] =
      served_and_local({"--fault", "link-down:0-2@30us"}, {"--op", "all_gather", "--size", "1MiB"});
  EXPECT_EQ(local.exit_code, 3) << local.err;
  EXPECT_EQ(remote.exit_code, 3) << remote.err;
  EXPECT_EQ(report_of(remote.err), report_of(local.err));
  EXPECT_NE(local.err.find(" us: the enqueued workloads cannot complete; no event is left"), std::string::npos)
      << local.err;
}

// A served `corrupt` fault: the client's run lists what the corruption did, as a local run does
// (the "# corrupt:..." line after the row and its mismatch), exit 1, the same stdout byte for
// byte (golden run_fault_corrupt). Before fault_effects crossed the wire the line was missing.
TEST(CliServeFaults, CorruptionEffectsListedAsLocally) {
  const auto [serve_line, remote, local] =
      served_and_local({"--fault", "corrupt:0-2:5"}, {"--op", "all_gather", "--size", "256KiB"});
  EXPECT_EQ(local.exit_code, 1) << local.err;
  EXPECT_EQ(remote.exit_code, 1) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(remote.out.find("\n# corrupt:0-2:5: flipped bit 0 of byte 3958 "), std::string::npos) << remote.out;
  // A timing-only device carries no payload to flip: serve refuses, as run does.
  const Outcome no_data = cclmesh({"serve", "--system", "t3k", "--no-data", "--fault", "corrupt:0-2", "--port", "0"});
  EXPECT_EQ(no_data.exit_code, 2);
  EXPECT_EQ(no_data.err, "cclmesh: error: --fault: 'corrupt:0-2' flips a bit of payload data, which a --no-data device "
                         "does not carry; serve it without --no-data\n");
}

// A served `corrupt` fault flips one packet per device life: the next client's op, whose data
// arrive intact, is told that the flip was an earlier op's (it used to get the first op's
// "flipped bit ..." line under its row of 0 wrong, as if its own).
TEST(CliServeFaults, CorruptionLineIsTheOpsOwn) {
  ServeChild serve({"--system", "t3k", "--fault", "corrupt:0-2:5"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const std::vector<std::string> run{"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "256KiB"};
  const Outcome first = cclmesh(run);
  const Outcome second = cclmesh(run);
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_NE(first.out.find("\n# corrupt:0-2:5: flipped bit 0 of byte 3958 "), std::string::npos) << first.out;
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("\n# corrupt:0-2:5: flipped nothing in this op (the fault flips one packet per device "
                            "life: it flipped bit 0 of byte 3958 "),
            std::string::npos)
      << second.out;
  EXPECT_NE(second.out.find(", in an earlier op)\n"), std::string::npos) << second.out;
}

// A sweep on a served faulty device says so in its table, as `run --device` does under its row:
// the faults under each op's header, and what they did to a point after that point's row
// (session 31: the table named neither, though its --csv has a faults column; the corrupted
// 256 KiB point's #wrong was the only sign).
TEST(CliServeFaults, SweepTableNamesTheFaultsAndWhatTheyDid) {
  ServeChild serve({"--system", "t3k", "--fault", "corrupt:0-2:5"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome sweep = cclmesh(
      {"sweep", "--device", serve.endpoint(), "--op", "all_gather,reduce_scatter", "-b", "256KiB", "-e", "512KiB"});
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(sweep.exit_code, 1) << sweep.err;
  const std::string faults = "# faults: corrupt:0-2:5; fabric chips in order: 4-0-2-6-7-3-1-5\n";
  // Once per op, right under its header.
  const std::string header_end = "(us)    (us)\n";
  std::size_t sections = 0;
  for (std::size_t at = sweep.out.find(header_end); at != std::string::npos; at = sweep.out.find(header_end, at + 1)) {
    EXPECT_EQ(sweep.out.compare(at + header_end.size(), faults.size(), faults), 0) << sweep.out;
    ++sections;
  }
  EXPECT_EQ(sections, 2u) << sweep.out;
  // The first point's flip after its row and mismatch (the local run's line, between it and the
  // next row), each later point told that the flip was an earlier op's.
  const std::size_t first_row = sweep.out.find("\n       262144 ");
  const std::size_t second_row = sweep.out.find("\n       524288 ");
  const std::size_t flip = sweep.out.find("\n# corrupt:0-2:5: flipped bit 0 of byte 3958 ");
  ASSERT_NE(flip, std::string::npos) << sweep.out;
  EXPECT_LT(first_row, flip);
  EXPECT_LT(flip, second_row);
  std::size_t earlier = 0;
  for (std::size_t at = sweep.out.find("\n# corrupt:0-2:5: flipped nothing in this op"); at != std::string::npos;
       at = sweep.out.find("\n# corrupt:0-2:5: flipped nothing in this op", at + 1)) {
    ++earlier;
  }
  EXPECT_EQ(earlier, 3u) << sweep.out;
}

// serve --chips: the fabric through those chips alone (t3k's MMIO square 0,1,3,2 closes into a
// ring); a client's run is the local `run --chips`'s, row and title. Beside --mode legacy or
// --fabric-scope axes, and for chips that are not neighbours, serve exits 2 with one line.
TEST(CliServeFaults, FabricThroughSomeChipsServedAsLocally) {
  const auto [serve_line, remote, local] =
      served_and_local({"--chips", "0,1,3,2"}, {"--op", "all_gather", "--size", "1MiB"});
  EXPECT_NE(serve_line.find("fabric ring x1 through chips 0,1,3,2, functional"), std::string::npos) << serve_line;
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(local.out.find("(4 chips"), std::string::npos) << local.out;
  const Outcome legacy = cclmesh({"serve", "--system", "t3k", "--chips", "0,1,3,2", "--mode", "legacy", "--port", "0"});
  EXPECT_EQ(legacy.exit_code, 2);
  EXPECT_EQ(legacy.err, "cclmesh: error: --chips: '0,1,3,2' given with --mode legacy, which runs no fabric to lay "
                        "through them (each op brings its own EDMs); serve --mode fabric\n");
  const Outcome axes =
      cclmesh({"serve", "--system", "t3k", "--chips", "0,1,3,2", "--fabric-scope", "axes", "--port", "0"});
  EXPECT_EQ(axes.exit_code, 2);
  EXPECT_EQ(axes.err.rfind("cclmesh: error: --chips: '0,1,3,2' given with --fabric-scope axes", 0), 0u) << axes.err;
  const Outcome apart = cclmesh({"serve", "--system", "t3k", "--chips", "0,7", "--port", "0"});
  EXPECT_EQ(apart.exit_code, 2);
  EXPECT_EQ(apart.err.rfind("cclmesh: error: --system t3k --chips 0,7: ", 0), 0u) << apart.err;
  EXPECT_EQ(std::count(apart.err.begin(), apart.err.end(), '\n'), 1) << apart.err;
}

// serve --max-sim-time: each client's op gets the budget from its own start (the served device's
// clock runs on across clients): two 1 MiB all_gathers (~55 us each) complete on a device whose
// clock passes 100 us during the second, and a 4 MiB one, longer than 100 us, ends with the
// timeout report, exit 3.
TEST(CliServeFaults, SimulatedTimeWatchdogPerOp) {
  ServeChild serve({"--system", "t3k", "--max-sim-time", "100us"});
  ASSERT_NE(serve.port, 0) << serve.line;
  EXPECT_NE(serve.line.find(", max-sim-time 100us per op"), std::string::npos) << serve.line;
  const std::vector<std::string> op{"run", "--device", serve.endpoint(), "--op", "all_gather", "--size"};
  auto with_size = [&op](const std::string& size) {
    std::vector<std::string> args = op;
    args.push_back(size);
    return args;
  };
  const Outcome first = cclmesh(with_size("1MiB"));
  const Outcome second = cclmesh(with_size("1MiB"));
  const Outcome longer = cclmesh(with_size("4MiB"));
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(longer.exit_code, 3) << longer.err;
  EXPECT_EQ(longer.err.rfind("cclmesh: the simulated op did not complete:\ntimeout: simulated time passed the limit of ",
                             0),
            0u)
      << longer.err;
  EXPECT_NE(longer.err.find(" (a budget of 100.000 us from "), std::string::npos) << longer.err;
  EXPECT_NE(longer.err.find(") while running the enqueued workloads\n"), std::string::npos) << longer.err;
  // A budget the fabric's start-up does not fit in: the device does not start, a timeout as a
  // local run's, so exit 3 with the report naming the budget (session 29; before, exit 2 and
  // the report's first line).
  const Outcome tiny = cclmesh({"serve", "--system", "t3k", "--max-sim-time", "1us", "--port", "0"});
  EXPECT_EQ(tiny.exit_code, 3);
  EXPECT_EQ(tiny.err.rfind("cclmesh: the simulated device did not start (--system t3k "
                           "--max-sim-time 1us):\ntimeout: simulated time passed the limit of 1.000 us (a budget of "
                           "1.000 us from 0 ps) while running the ring fabric's start-up\n",
                           0),
            0u)
      << tiny.err;
  EXPECT_EQ(tiny.out, "");  // never listened
}

// serve --fabric-scope axes: one fabric line per mesh row and column, and a client's op runs along
// the --cluster-axis it gives, as a local run along that axis does.
TEST(CliServeFaults, PerAxisFabricServesClusterAxisRuns) {
  ServeChild serve({"--system", "t3k", "--fabric-scope", "axes"});
  ASSERT_NE(serve.port, 0) << serve.line;
  EXPECT_NE(serve.line.find("per-axis fabric line x1"), std::string::npos) << serve.line;
  const Outcome remote = cclmesh(
      {"run", "--device", serve.endpoint(), "--cluster-axis", "1", "--op", "all_gather", "--size", "256KiB"});
  const Outcome no_axis = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "256KiB"});
  EXPECT_EQ(serve.stop(), 0);
  const Outcome local =
      cclmesh({"run", "--system", "t3k", "--cluster-axis", "1", "--op", "all_gather", "--size", "256KiB"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_EQ(no_axis.exit_code, 2);
  EXPECT_EQ(no_axis.err,
            "cclmesh: error: --cluster-axis: the served device's fabric runs one line or ring per mesh row and column "
            "(serve --fabric-scope axes); give --cluster-axis 0 or 1, the axis the op runs along\n");

  ServeChild whole({"--system", "t3k"});
  const Outcome along = cclmesh(
      {"run", "--device", whole.endpoint(), "--cluster-axis", "0", "--op", "all_gather", "--size", "256KiB"});
  EXPECT_EQ(whole.stop(), 0);
  EXPECT_EQ(along.exit_code, 2);
  EXPECT_EQ(along.err,
            "cclmesh: error: --cluster-axis: the served device's fabric is one ring through every chip; ops along a "
            "mesh axis need a fabric per axis (cclmesh serve --fabric-scope axes)\n");
}

// A served per-axis fabric with a torus row's closing link down (session 21): the client's op
// runs as a local `run --topology ring` with that fault does (the device is the same: rows laid
// as rings, row 0 opened into the line 0-1-2-3), with the same time and the same note naming the
// fault, and the same title (since protocol 10 the hello names the system as served,
// `torus:4x4`; before, the client's title named the topology, `torus:4x4/4@wh`). Before, the note read "... link 3-0 is down (); ..." (the client had the served fault's
// spec but did not parse it, and the note looks the fault up by its link), and the client ran
// every row as a line on the ring fabric (an opened ring counted as a line fabric): 20.89 us
// against the local 20.87. reduce, which builds its ring and line groups apart since session 21
// (before, it was refused, exit 3, naming 'cclmesh serve --topology line'), runs as locally too.
TEST(CliServeFaults, PerAxisRingOpenedByADownLinkRunsAsLocally) {
  ServeChild serve({"--system", "torus:4x4", "--fabric-scope", "axes", "--fault", "link-down:3-0"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const std::vector<std::string> op{"--cluster-axis", "1", "--op", "all_gather", "--size", "256KiB"};
  std::vector<std::string> remote_args{"run", "--device", serve.endpoint()};
  remote_args.insert(remote_args.end(), op.begin(), op.end());
  const Outcome remote = cclmesh(remote_args);
  const Outcome reduce =
      cclmesh({"run", "--device", serve.endpoint(), "--cluster-axis", "1", "--op", "reduce", "--size", "256KiB"});
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run", "--system", "torus:4x4", "--topology", "ring", "--fault", "link-down:3-0"};
  local_args.insert(local_args.end(), op.begin(), op.end());
  const Outcome local = cclmesh(local_args);
  const Outcome local_reduce = cclmesh({"run", "--system", "torus:4x4", "--topology", "ring", "--fault",
                                        "link-down:3-0", "--cluster-axis", "1", "--op", "reduce", "--size", "256KiB"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(remote.out.find("\n# axis 1 ring 0-1-2-3-0 ran as line 0-1-2-3: link 3-0 is down (link-down:3-0); one of "
                            "the op's groups, which ran as that line\n"),
            std::string::npos)
      << remote.out;
  EXPECT_EQ(reduce.exit_code, 0) << reduce.err;
  EXPECT_EQ(local_reduce.exit_code, 0) << local_reduce.err;
  EXPECT_EQ(reduce.out, local_reduce.out);
}

// A served legacy device with a link down from the start on the system's ring: the client lays
// the op's EDMs on another ring through every chip, as a local run does (session 22; before,
// the served op hung across the link), with the same note; where no other ring exists (ring:8)
// the ring runs as the line around the link, as locally (session 25; before, refused, exit 3):
// the client learns the down link from the served device's fabric options (FabricOptions::
// down_edges, on the wire since the fabric's own), so its builders lay the line the local run
// lays, with the same time, outputs and note.
TEST(CliServeFaults, LegacyRingAroundADownLinkRunsAsLocally) {
  const std::vector<std::string> op{"--op", "all_gather", "--size", "256KiB"};
  ServeChild serve({"--system", "mesh:4x4", "--mode", "legacy", "--fault", "link-down:6-5"});
  ASSERT_NE(serve.port, 0) << serve.line;
  std::vector<std::string> remote_args{"run", "--device", serve.endpoint()};
  remote_args.insert(remote_args.end(), op.begin(), op.end());
  const Outcome remote = cclmesh(remote_args);
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run", "--system", "mesh:4x4", "--mode", "legacy", "--fault", "link-down:6-5"};
  local_args.insert(local_args.end(), op.begin(), op.end());
  const Outcome local = cclmesh(local_args);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(remote.out.find("\n# legacy mode ran its ring as 0-1-2-3-7-6-10-11-15-14-13-12-8-9-5-4-0: the system's own "
                            "crosses a link down from the start\n"),
            std::string::npos)
      << remote.out;

  for (const char* op_name : {"all_gather", "reduce_scatter"}) {
    SCOPED_TRACE(op_name);
    ServeChild closed({"--system", "ring:8", "--mode", "legacy", "--fault", "link-down:2-3"});
    ASSERT_NE(closed.port, 0) << closed.line;
    const Outcome opened =
        cclmesh({"run", "--device", closed.endpoint(), "--op", op_name, "--size", "256KiB"});
    EXPECT_EQ(closed.stop(), 0);
    const Outcome opened_locally = cclmesh({"run", "--system", "ring:8", "--mode", "legacy", "--fault",
                                            "link-down:2-3", "--op", op_name, "--size", "256KiB"});
    EXPECT_EQ(opened_locally.exit_code, 0) << opened_locally.err;
    EXPECT_EQ(opened.exit_code, 0) << opened.err;
    EXPECT_EQ(opened.out, opened_locally.out);
    EXPECT_NE(opened.out.find("\n# legacy mode ran its ring as the line 3-4-5-6-7-0-1-2 around link 2-3, down from "
                              "the start (link-down:2-3)"),
              std::string::npos)
        << opened.out;
  }
}

// Opened mid-ring (0-1 down: the line 1-2-3-0), the group keeps its ranks on the served device
// as locally (session 21), reduce's too (before, it placed data by position and was refused,
// exit 3).
TEST(CliServeFaults, PerAxisRingOpenedMidRingRunsAsLocally) {
  ServeChild serve({"--system", "torus:4x4", "--fabric-scope", "axes", "--fault", "link-down:0-1"});
  ASSERT_NE(serve.port, 0) << serve.line;
  std::vector<Outcome> remote;
  for (const char* op : {"all_gather", "reduce_scatter", "reduce"}) {
    remote.push_back(
        cclmesh({"run", "--device", serve.endpoint(), "--cluster-axis", "1", "--op", op, "--size", "256KiB"}));
  }
  EXPECT_EQ(serve.stop(), 0);
  std::size_t i = 0;
  for (const char* op : {"all_gather", "reduce_scatter", "reduce"}) {
    SCOPED_TRACE(op);
    const Outcome local = cclmesh({"run", "--system", "torus:4x4", "--topology", "ring", "--fault", "link-down:0-1",
                                   "--cluster-axis", "1", "--op", op, "--size", "256KiB"});
    EXPECT_EQ(local.exit_code, 0) << local.err;
    EXPECT_EQ(remote[i].exit_code, 0) << remote[i].err;
    EXPECT_EQ(remote[i].out, local.out);
    EXPECT_NE(remote[i].out.find("\n# axis 1 ring 0-1-2-3-0 ran as line 1-2-3-0: link 0-1 is down (link-down:0-1)"),
              std::string::npos)
        << remote[i].out;
    ++i;
  }
}

// On a served line fabric a line that runs over its closing link (every row opened mid-line)
// is still a line: the client runs or refuses the op exactly as the local `run --topology line`
// does (review: it counted such rows as rings, and refused reduce in a ring's words).
TEST(CliServeFaults, PerAxisLineFabricOpenedMidLineRunsAsLocally) {
  const std::vector<std::string> faults{"--fault", "link-down:1-2",  "--fault", "link-down:5-6",
                                        "--fault", "link-down:9-10", "--fault", "link-down:13-14"};
  std::vector<std::string> serve_args{"--system", "torus:4x4", "--fabric-scope", "axes", "--topology", "line"};
  serve_args.insert(serve_args.end(), faults.begin(), faults.end());
  ServeChild serve(serve_args);
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome remote =
      cclmesh({"run", "--device", serve.endpoint(), "--cluster-axis", "1", "--op", "reduce", "--size", "256KiB"});
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run",  "--system", "torus:4x4", "--topology", "line", "--cluster-axis",
                                      "1",    "--op",     "reduce",    "--size",     "256KiB"};
  local_args.insert(local_args.end(), faults.begin(), faults.end());
  const Outcome local = cclmesh(local_args);
  EXPECT_EQ(remote.exit_code, local.exit_code) << remote.err << local.err;
  EXPECT_EQ(remote.err, local.err);
  EXPECT_EQ(remote.out, local.out);
}

TEST(CliServeFaults, BadDeviceOptionsExitTwoWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"serve", "--system", "t3k", "--fault", "link-down:0"}, "cclmesh: error: --fault: 'link-down:0': "},
      {{"serve", "--system", "t3k", "--fault", "meteor"}, "cclmesh: error: --fault: 'meteor': "},
      {{"serve", "--system", "t3k", "--max-sim-time", "5parsecs"}, "cclmesh: error: --max-sim-time: "},
      {{"serve", "--system", "t3k", "--max-wall", "-3"}, "cclmesh: error: --max-wall: "},
      {{"serve", "--system", "t3k", "--fabric-scope", "diagonal"}, "cclmesh: error: --fabric-scope: "},
      {{"serve", "--system", "t3k", "--erisc-unreserved-kib", "151"}, "cclmesh: error: --erisc-unreserved-kib: "},
      {{"serve", "--system", "t3k", "--fault", "link-down:0-7"},
       "cclmesh: error: --fault: 'link-down:0-7': chips 0 and 7 are not neighbours on t3k"},
  };
  for (const auto& [args, prefix] : cases) {
    const Outcome serve = cclmesh(args);
    EXPECT_EQ(serve.exit_code, 2) << args[3] << " " << args.back();
    EXPECT_EQ(serve.err.rfind(prefix, 0), 0u) << serve.err;
    EXPECT_EQ(std::count(serve.err.begin(), serve.err.end(), '\n'), 1) << serve.err;
  }
}

}  // namespace
}  // namespace cclmesh::runtime::remote

namespace cclmesh::runtime::remote {
namespace {

// --- serve --trace-dir ------------------------------------------------------------------------

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh, empty directory of this test's, removed with it.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("cclmesh_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path path;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The kernels' spans of `workload` (the op's name), and whether any of them is unfinished.
struct KernelSpans {
  int count = 0;
  int unfinished = 0;
};
KernelSpans kernel_spans(const json& trace, const std::string& workload) {
  KernelSpans spans;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("cat") != "kernel" || e.at("args").value("workload", "") != workload) continue;
    ++spans.count;
    if (e.at("args").contains("unfinished")) ++spans.unfinished;
  }
  return spans;
}

// `serve --system t3k --trace-dir DIR`, `run --device` of each op in turn (1 MiB), and what DIR
// then holds, by file name.
std::vector<std::pair<std::string, std::string>> served_traces(const std::vector<std::string>& ops,
                                                               const std::string& dir_name) {
  TempDir dir(dir_name);
  ServeChild serve({"--system", "t3k", "--trace-dir", dir.path.string()});
  EXPECT_NE(serve.port, 0) << serve.line;
  for (const std::string& op : ops) {
    const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", op, "--size", "1MiB"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
  }
  EXPECT_EQ(serve.stop(), 0);  // every session's file is written by then
  const std::string log = serve.child.all_stderr();
  EXPECT_NE(log.find("cclmesh serve: session 1: trace written to " + dir.file("session-000001.json") + "\n"),
            std::string::npos)
      << log;
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& name : dir.names()) files.emplace_back(name, read_file(dir.file(name)));
  return files;
}

// Each session's trace is the local `run --trace` of what it ran: a fresh server's first session
// holds the fabric's start-up and the op, event for event as a local run of the op; the second
// session what it ran after it (on the device's clock, running on), the routers still running.
// The same requests to another fresh server give the same files, byte for byte.
TEST(CliServeTrace, EachSessionIsTracedAsTheLocalRun) {
  const auto files = served_traces({"all_gather", "reduce_scatter"}, "serve_trace_a");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "session-000001.json");
  EXPECT_EQ(files[1].first, "session-000002.json");
  EXPECT_TRUE(files == served_traces({"all_gather", "reduce_scatter"}, "serve_trace_b")) << "not deterministic";

  TempDir local_dir("serve_trace_local");
  const Outcome local = cclmesh({"run", "--system", "t3k", "--op", "all_gather", "--size", "1MiB", "--trace",
                                 local_dir.file("local.json")});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const json local_trace = json::parse(read_file(local_dir.file("local.json")));
  const json first = json::parse(files[0].second);
  EXPECT_GT(kernel_spans(first, "all_gather").count, 0);
  // Every event equal (a failure would print megabytes: counted instead).
  EXPECT_EQ(first.at("traceEvents").size(), local_trace.at("traceEvents").size());
  EXPECT_TRUE(first.at("traceEvents") == local_trace.at("traceEvents"));
  // otherData: what was run differs (the server knows no op), the trace's own figures do not.
  const json& about = first.at("otherData");
  EXPECT_EQ(about.at("tool"), "cclmesh serve");
  EXPECT_EQ(about.at("session"), "1");
  EXPECT_EQ(about.at("device_life"), "1");
  EXPECT_EQ(about.at("resets_in_session"), "0");
  EXPECT_EQ(about.at("session_ended"), "the client said goodbye");
  EXPECT_EQ(about.at("system"), "t3k");
  for (const char* key : {"dropped_spans", "counter_bucket_us", "max_spans_per_track"}) {
    EXPECT_EQ(about.at(key), local_trace.at("otherData").at(key)) << key;
  }

  // Session 2: its op, from where session 1 ended; the routers' spans from the start-up still open.
  const json second = json::parse(files[1].second);
  EXPECT_EQ(second.at("otherData").at("session"), "2");
  EXPECT_EQ(kernel_spans(second, "all_gather").count, 0);
  EXPECT_GT(kernel_spans(second, "reduce_scatter").count, 0);
  const double start_us = std::stod(second.at("otherData").at("session_start_us").get<std::string>());
  EXPECT_GE(start_us, std::stod(first.at("otherData").at("session_end_us").get<std::string>()));
  EXPECT_EQ(second.at("otherData").at("counter_origin_us").get<double>() > 0, true);
  int routers = 0;
  for (const json& e : second.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    if (e.at("args").value("workload", "") == "fabric (persistent)") {
      ++routers;
      EXPECT_TRUE(e.at("args").contains("unfinished"));
      continue;
    }
    EXPECT_GE(e.at("ts").get<double>(), start_us) << e.dump();
  }
  EXPECT_EQ(routers, kernel_spans(first, "fabric (persistent)").count);
}

// A session whose op hangs (a link goes down mid-op) is traced up to the hang, as the local run's
// trace: the parked kernels' spans unfinished, the fault's instant. The server then resets the
// device, and the next session's trace is a fresh device's (the local run's of its op).
TEST(CliServeTrace, HungSessionIsTracedAndTheNextIsAFreshDevices) {
  TempDir dir("serve_trace_hang");
  ServeChild serve({"--system", "t3k", "--fault", "link-down:0-2@30us", "--trace-dir", dir.path.string()});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome hung = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "1MiB"});
  EXPECT_EQ(hung.exit_code, 3) << hung.err;
  const Outcome next = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "64KiB"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(serve.stop(), 0);
  ASSERT_EQ(dir.names(), (std::vector<std::string>{"session-000001.json", "session-000002.json"}));

  TempDir local_dir("serve_trace_hang_local");
  const std::vector<std::string> local_run{"run", "--system", "t3k", "--fault", "link-down:0-2@30us", "--op",
                                           "all_gather"};
  std::vector<std::string> local_hung = local_run;
  local_hung.insert(local_hung.end(), {"--size", "1MiB", "--trace", local_dir.file("hung.json")});
  EXPECT_EQ(cclmesh(local_hung).exit_code, 3);
  std::vector<std::string> local_next = local_run;
  local_next.insert(local_next.end(), {"--size", "64KiB", "--trace", local_dir.file("next.json")});
  EXPECT_EQ(cclmesh(local_next).exit_code, 0);

  const json first = json::parse(read_file(dir.file("session-000001.json")));
  const KernelSpans hung_spans = kernel_spans(first, "all_gather");
  EXPECT_GT(hung_spans.unfinished, 0);
  bool link_down = false;
  for (const json& e : first.at("traceEvents")) link_down |= e.at("ph") == "i" && e.at("cat") == "fault";
  EXPECT_TRUE(link_down);
  const json local_first = json::parse(read_file(local_dir.file("hung.json")));
  EXPECT_TRUE(first.at("traceEvents") == local_first.at("traceEvents"));

  const json second = json::parse(read_file(dir.file("session-000002.json")));
  EXPECT_EQ(second.at("otherData").at("device_life"), "2");
  EXPECT_EQ(second.at("otherData").at("resets_in_session"), "0");
  EXPECT_EQ(kernel_spans(second, "all_gather").unfinished, 0);
  const json local_second = json::parse(read_file(local_dir.file("next.json")));
  EXPECT_TRUE(second.at("traceEvents") == local_second.at("traceEvents"));
}

// A client's reset() inside its session: one file, the old life's routers ended at a "device
// reset" marker, the new life's after it.
TEST(CliServeTrace, ResetInsideASessionIsMarked) {
  TempDir dir("serve_trace_reset");
  ServeChild serve({"--system", "n300", "--trace-dir", dir.path.string()});
  ASSERT_NE(serve.port, 0) << serve.line;
  {
    RemoteMeshDevice device("127.0.0.1", serve.port);
    device.reset();
  }
  EXPECT_EQ(serve.stop(), 0);
  ASSERT_EQ(dir.names(), std::vector<std::string>{"session-000001.json"});
  const json trace = json::parse(read_file(dir.file("session-000001.json")));
  EXPECT_EQ(trace.at("otherData").at("resets_in_session"), "1");
  double reset_us = -1;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "i" && e.at("name") == "device reset") {
      EXPECT_EQ(e.at("args").at("life"), 2);
      reset_us = e.at("ts").get<double>();
    }
  }
  ASSERT_GT(reset_us, 0);
  int ended_by_reset = 0;
  int after_reset = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("args").value("workload", "") != "fabric (persistent)") continue;
    if (e.at("args").value("ended_by", "") == "device reset") {
      ++ended_by_reset;
      EXPECT_NEAR(e.at("ts").get<double>() + e.at("dur").get<double>(), reset_us, 1e-6) << e.dump();
    } else {
      ++after_reset;
      EXPECT_GT(e.at("ts").get<double>(), reset_us) << e.dump();
    }
  }
  EXPECT_GT(ended_by_reset, 0);
  EXPECT_EQ(after_reset, ended_by_reset);  // the same routers, started again
}

// A session whose file cannot be written (here its name is taken by a directory) is logged and
// its trace dropped: the next session's file holds that session's work alone, not the lost one's.
TEST(CliServeTrace, AnUnwritableSessionFileIsLoggedAndTheNextIsItsOwn) {
  TempDir dir("serve_trace_unwritable");
  ServeChild serve({"--system", "n300", "--trace-dir", dir.path.string()});
  ASSERT_NE(serve.port, 0) << serve.line;
  fs::create_directories(dir.path / "session-000001.json");  // after start-up: the server checked an empty dir
  for (const char* op : {"all_gather", "reduce_scatter"}) {
    const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", op, "--size", "64KiB"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
  }
  EXPECT_EQ(serve.stop(), 0);
  const std::string log = serve.child.all_stderr();
  EXPECT_NE(log.find("cclmesh serve: session 1: --trace-dir"), std::string::npos) << log;
  EXPECT_EQ(log.find("session 1: trace written"), std::string::npos) << log;
  EXPECT_NE(log.find("session 2: trace written to " + dir.file("session-000002.json")), std::string::npos) << log;
  EXPECT_TRUE(fs::is_empty(dir.path / "session-000001.json"));  // nothing half-written beside it either
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"session-000001.json", "session-000002.json"}));
  const json second = json::parse(read_file(dir.file("session-000002.json")));
  EXPECT_EQ(second.at("otherData").at("session"), "2");
  EXPECT_GT(kernel_spans(second, "reduce_scatter").count, 0);
  EXPECT_EQ(kernel_spans(second, "all_gather").count, 0);
}

// A device whose fabric cannot start serves no session: its start-up goes to DIR/startup.json,
// the trace the local `run --trace` writes of the same start-up, event for event: the routers'
// spans (unfinished: they never got past it) and the fault's instant. A fabric that starts writes
// no such file: its start-up is in session 1's (EachSessionIsTracedAsTheLocalRun,
// ResetInsideASessionIsMarked: the directory then holds session files alone).
TEST(CliServeTrace, AFabricThatCannotStartIsTracedInStartupJson) {
  struct Case {
    std::vector<std::string> device_options;
    std::string ended;
    int routers;  // n300: a router per chip; by the 1 us budget only chip 0's had started (as locally)
  };
  const std::vector<Case> cases{
      {{"--fault", "drop:0.5"}, "hang: the device did not start", 2},
      {{"--max-sim-time", "1us"}, "timeout: the device did not start", 1},
  };
  for (const auto& [device_options, ended, routers_started] : cases) {
    TempDir dir("serve_trace_startup");
    std::vector<std::string> serve_args{"serve", "--system", "n300", "--port", "0", "--trace-dir", dir.path.string()};
    serve_args.insert(serve_args.end(), device_options.begin(), device_options.end());
    const Outcome serve = cclmesh(serve_args);
    EXPECT_EQ(serve.exit_code, 3) << serve.err;
    EXPECT_EQ(serve.out, "");
    EXPECT_NE(serve.err.find("\ncclmesh serve: start-up trace written to " + dir.file("startup.json") + "\n"),
              std::string::npos)
        << serve.err;
    ASSERT_EQ(dir.names(), std::vector<std::string>{"startup.json"}) << device_options[0];

    std::vector<std::string> local_args{"run", "--system", "n300", "--op", "all_gather", "--size", "64KiB",
                                        "--trace", dir.file("local.json")};
    local_args.insert(local_args.end(), device_options.begin(), device_options.end());
    EXPECT_EQ(cclmesh(local_args).exit_code, 3);

    const json startup = json::parse(read_file(dir.file("startup.json")));
    const json local = json::parse(read_file(dir.file("local.json")));
    const KernelSpans routers = kernel_spans(startup, "fabric (persistent)");
    EXPECT_EQ(routers.count, routers_started) << device_options[0];
    EXPECT_EQ(routers.unfinished, routers_started) << device_options[0];  // none got past the start-up
    EXPECT_EQ(startup.at("traceEvents").size(), local.at("traceEvents").size()) << device_options[0];
    EXPECT_TRUE(startup.at("traceEvents") == local.at("traceEvents")) << device_options[0];
    const json& about = startup.at("otherData");
    EXPECT_EQ(about.at("tool"), "cclmesh serve");
    EXPECT_EQ(about.at("system"), "n300");
    EXPECT_EQ(about.at("startup_ended"), ended);
    // The report below its first line (a served budget's headline says it is per op).
    const auto below_headline = [](const json& text) {
      const std::string report = text.get<std::string>();
      return report.substr(report.find('\n'));
    };
    EXPECT_EQ(below_headline(about.at("error")), below_headline(local.at("otherData").at("error")));
    EXPECT_EQ(about.contains("session"), false);
  }
  // The drop's lost frame is in the file as a fault instant.
  TempDir dir("serve_trace_startup_fault");
  EXPECT_EQ(cclmesh({"serve", "--system", "n300", "--port", "0", "--fault", "drop:0.5", "--trace-dir",
                     dir.path.string()})
                .exit_code,
            3);
  const json startup = json::parse(read_file(dir.file("startup.json")));
  int faults = 0;
  for (const json& e : startup.at("traceEvents")) faults += e.at("ph") == "i" && e.at("cat") == "fault";
  EXPECT_EQ(faults, 1);
  // Deterministic: a second server's file, byte for byte.
  TempDir again("serve_trace_startup_again");
  EXPECT_EQ(cclmesh({"serve", "--system", "n300", "--port", "0", "--fault", "drop:0.5", "--trace-dir",
                     again.path.string()})
                .exit_code,
            3);
  EXPECT_EQ(read_file(dir.file("startup.json")), read_file(again.file("startup.json")));
}

TEST(CliServeTrace, BadTraceDirExitsTwoNamingIt) {
  TempDir dir("serve_trace_bad");
  std::ofstream(dir.file("a_file")) << "x";
  const fs::path used = dir.path / "used";
  fs::create_directories(used);
  std::ofstream(used / "session-000001.json") << "{}";
  const fs::path failed = dir.path / "failed";  // an earlier server's start-up that failed
  fs::create_directories(failed);
  std::ofstream(failed / "startup.json") << "{}";
  const std::string prefix = "cclmesh: error: --trace-dir: cannot write session traces into '";
  const std::vector<std::pair<std::string, std::string>> cases{
      {dir.file("missing"), "no such directory"},
      {dir.file("a_file"), "it is not a directory"},
      {used.string(), "it already holds session traces (session-000001.json); give an empty directory, or move them"},
      {failed.string(), "it already holds session traces (startup.json); give an empty directory, or move them"},
  };
  for (const auto& [path, why] : cases) {
    const Outcome o = cclmesh({"serve", "--system", "n300", "--port", "0", "--trace-dir", path});
    EXPECT_EQ(o.exit_code, 2) << path;
    EXPECT_EQ(o.err, prefix + path + "': " + why + "\n");
    EXPECT_EQ(o.out, "");
  }
  const Outcome limit =
      cclmesh({"serve", "--system", "n300", "--port", "0", "--trace-dir", dir.path.string(), "--trace-limit", "0"});
  EXPECT_EQ(limit.exit_code, 2);
  EXPECT_EQ(limit.err, "cclmesh: error: --trace-limit: 0 keeps no span; give a positive number of spans per track\n");
  if (::geteuid() != 0) {  // root writes anywhere
    const fs::path read_only = dir.path / "read_only";
    fs::create_directories(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
    const Outcome o = cclmesh({"serve", "--system", "n300", "--port", "0", "--trace-dir", read_only.string()});
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_EQ(o.err, prefix + read_only.string() + "': Permission denied\n");
  }
}

// --- run --device --report, and each op's buffers freed ----------------------------------------

// The page from "<h2>nccl-tests row</h2>" on: the result table, the topology coloured by each
// link's use, and every link direction's payload, busy time and utilisation. (The summary above
// it differs: a served run does not count the server's simulated events.)
std::string report_from_result_table(const std::string& page) {
  const std::size_t at = page.find("<h2>nccl-tests row</h2>");
  return at == std::string::npos ? "" : page.substr(at);
}

// A fabric-era op on a served legacy-mode device is refused naming the server's mode and how to
// get one that runs it (session 31: "use --mode fabric", an option `run --device` refuses).
TEST(CliRunDevice, AFabricEraOpOnALegacyServerNamesTheServersMode) {
  ServeChild serve({"--system", "t3k", "--mode", "legacy"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", "broadcast", "--size", "256KiB"});
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err,
            "cclmesh: error: --op: the served device runs legacy mode (cclmesh serve --mode legacy: the 2024 per-op "
            "EDMs, which carried only all_gather, reduce_scatter and all_reduce); broadcast is a fabric-era op "
            "(REFERENCE 5, 7.6); expected one of those three, or a server started with --mode fabric\n");
}

// --ag-ring-algorithm relay on a served line (or legacy) fabric is refused naming the server's
// topology and mode and the server that runs it (session 31: "expected --topology ring --mode
// fabric", options `run --device` refuses).
TEST(CliRunDevice, RelayOnAServedLineNamesTheServersFabric) {
  // A legacy-mode device's op runs as a ring, relaying through its EDMs: still not this relay.
  for (const auto& [mode, topology] : {std::pair<std::string, std::string>{"fabric", "line"}, {"legacy", "ring"}}) {
    ServeChild serve({"--system", "t3k", "--topology", topology, "--mode", mode});
    ASSERT_NE(serve.port, 0) << serve.line;
    const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "64KiB",
                                 "--ag-ring-algorithm", "relay"});
    EXPECT_EQ(serve.stop(), 0);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(run.err, "cclmesh: error: --ag-ring-algorithm: 'relay' relays through workers on a fabric ring; the served "
                       "device runs a " + topology + " in " + mode + " mode (its cclmesh serve's --system, --topology and --mode "
                       "decide; a line multicasts, legacy mode relays through its EDMs); expected a server started "
                       "with --topology ring --mode fabric\n");
  }
}

// `run --device --report` on a fresh served T3K writes the local run's report: the same row, the
// same colour and figures for every link direction (its payload, busy time and utilisation).
TEST(CliRunDevice, ReportHasTheLocalRunsLinkFigures) {
  TempDir dir("run_device_report");
  ServeChild serve({"--system", "t3k"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome remote = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "1MiB",
                                  "--report", dir.file("remote.html")});
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(serve.stop(), 0);
  const Outcome local =
      cclmesh({"run", "--system", "t3k", "--op", "all_gather", "--size", "1MiB", "--report", dir.file("local.html")});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.out, local.out);
  const std::string remote_page = read_file(dir.file("remote.html"));
  const std::string local_page = read_file(dir.file("local.html"));
  const std::string links = report_from_result_table(local_page);
  ASSERT_NE(links.find("<h2>Every link direction</h2>"), std::string::npos) << local_page;
  EXPECT_NE(links.find("% busy"), std::string::npos);  // lanes coloured, not idle
  EXPECT_EQ(report_from_result_table(remote_page), links);
  EXPECT_EQ(remote_page.find("No link statistics"), std::string::npos);
}

// A served run counts its op's simulated events on the server (protocol 9's device_events):
// --json's sim_events is the local run's, not 0; every other figure but the wall time too.
TEST(CliRunDevice, JsonCountsTheLocalRunsEvents) {
  TempDir dir("run_device_events");
  ServeChild serve({"--system", "t3k"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const std::vector<std::string> op{"--op", "all_gather", "--size", "1MiB", "--json"};
  std::vector<std::string> remote_args{"run", "--device", serve.endpoint()};
  remote_args.insert(remote_args.end(), op.begin(), op.end());
  remote_args.push_back(dir.file("remote.json"));
  const Outcome remote = cclmesh(remote_args);
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run", "--system", "t3k"};
  local_args.insert(local_args.end(), op.begin(), op.end());
  local_args.push_back(dir.file("local.json"));
  const Outcome local = cclmesh(local_args);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  json remote_json = json::parse(read_file(dir.file("remote.json")));
  json local_json = json::parse(read_file(dir.file("local.json")));
  ASSERT_TRUE(local_json.at("sim_events").is_number_unsigned()) << local_json.dump();
  EXPECT_GT(local_json.at("sim_events").get<std::uint64_t>(), 0u);
  EXPECT_EQ(remote_json.at("sim_events"), local_json.at("sim_events"));
  remote_json.erase("wall_s");
  local_json.erase("wall_s");
  EXPECT_EQ(remote_json, local_json);
}

// --json's settings are what the served device ran with, not the client's defaults (session 19
// review: no_data false, erisc 150, payload 4352 from a --no-data, 106 KiB, 2048 B server): the
// same object as a local run with the server's options writes, in run's and sweep's --json.
TEST(CliRunDevice, JsonSettingsAreTheServedDevicesOwn) {
  TempDir dir("run_device_settings");
  const std::vector<std::string> device{"--system", "n300", "--no-data", "--erisc-unreserved-kib", "106",
                                        "--fabric-payload", "2048", "--fabric-rx-in-flight", "2"};
  ServeChild serve(device);
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome remote = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "64KiB",
                                  "--json", dir.file("remote.json")});
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  const Outcome swept = cclmesh({"sweep", "--device", serve.endpoint(), "--op", "all_gather", "-b", "64KiB", "-e",
                                 "64KiB", "--json", dir.file("sweep.json")});
  EXPECT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_EQ(serve.stop(), 0);
  std::vector<std::string> local_args{"run"};
  local_args.insert(local_args.end(), device.begin(), device.end());
  for (const char* arg : {"--op", "all_gather", "--size", "64KiB", "--json"}) local_args.emplace_back(arg);
  local_args.push_back(dir.file("local.json"));
  const Outcome local = cclmesh(local_args);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  const json local_settings = json::parse(read_file(dir.file("local.json"))).at("settings");
  EXPECT_EQ(local_settings.at("no_data"), true);
  EXPECT_EQ(local_settings.at("erisc_unreserved_bytes"), 106 * 1024);
  EXPECT_EQ(local_settings.at("fabric_payload_bytes"), 2048);
  EXPECT_EQ(local_settings.at("fabric_rx_in_flight"), 2);
  EXPECT_EQ(json::parse(read_file(dir.file("remote.json"))).at("settings"), local_settings);
  const json sweep_json = json::parse(read_file(dir.file("sweep.json")));
  ASSERT_EQ(sweep_json.size(), 1u) << sweep_json.dump();
  EXPECT_EQ(sweep_json.at(0).at("settings"), local_settings);
}

// A served run that did not complete: its --json names the served device's settings and
// faults too, in run's and sweep's --json.
TEST(CliRunDevice, IncompleteJsonHasTheServedDevicesSettingsAndFaults) {
  TempDir dir("run_device_incomplete");
  ServeChild serve({"--system", "t3k", "--fabric-payload", "2048", "--fault", "link-down:0-2@30us"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome run = cclmesh({"run", "--device", serve.endpoint(), "--op", "all_gather", "--size", "512KiB",
                               "--json", dir.file("run.json")});
  const Outcome sweep = cclmesh({"sweep", "--device", serve.endpoint(), "--op", "all_gather", "-b", "512KiB", "-e",
                                 "512KiB", "--json", dir.file("sweep.json")});
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(sweep.exit_code, 3) << sweep.err;
  const json run_json = json::parse(read_file(dir.file("run.json")));
  EXPECT_EQ(run_json.at("outcome"), "did not complete");
  EXPECT_EQ(run_json.at("settings").at("fabric_payload_bytes"), 2048);
  EXPECT_EQ(run_json.at("faults"), json::array({"link-down:0-2@30us"}));
  const json sweep_json = json::parse(read_file(dir.file("sweep.json")));
  ASSERT_EQ(sweep_json.size(), 1u) << sweep_json.dump();
  EXPECT_EQ(sweep_json.at(0).at("outcome"), "did not complete");
  EXPECT_EQ(sweep_json.at(0).at("settings").at("fabric_payload_bytes"), 2048);
  EXPECT_EQ(sweep_json.at(0).at("faults"), json::array({"link-down:0-2@30us"}));  // session 20: was missing
}

// Each op's buffers are freed once its result is read back: a sweep of send_recv in L1 whose
// points together need more L1 than a chip has (8 + 16 + 32 MiB, input and output each: 112 MiB
// per chip; before the frees the 32 MiB point was refused, "do not fit in L1") runs every point,
// and each row is a fresh device's, the local sweep's table exactly.
TEST(CliSweepDevice, FreesEachPointsBuffersSoL1DoesNotFillUp) {
  const SweptAndLocal n300 =
      sweep_served_and_local("n300", {"--op", "send_recv", "--memory", "l1", "-b", "8MiB", "-e", "32MiB"});
  EXPECT_EQ(n300.swept.out, n300.local.out);
  EXPECT_EQ(n300.swept.out.find("skipped"), std::string::npos) << n300.swept.out;
  // title, its tensor line (--memory given), header, 3 rows
  EXPECT_EQ(std::count(n300.swept.out.begin(), n300.swept.out.end(), '\n'), 4 + 3) << n300.swept.out;
}

// An op refused midway for bad input gives back what it created: a 48 MiB send_recv in L1 gets
// its input (768 KiB per core) and is refused its output ("do not fit in L1", exit 2); the input
// freed, a 32 MiB one (512 KiB per core, twice) still fits on that device, the local run's row.
TEST(CliRunDevice, OpRefusedMidwayFreesWhatItCreated) {
  ServeChild serve({"--system", "n300"});
  ASSERT_NE(serve.port, 0) << serve.line;
  const Outcome refused =
      cclmesh({"run", "--device", serve.endpoint(), "--op", "send_recv", "--memory", "l1", "--size", "48MiB"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("786432 B per core do not fit in L1"), std::string::npos) << refused.err;
  const Outcome next =
      cclmesh({"run", "--device", serve.endpoint(), "--op", "send_recv", "--memory", "l1", "--size", "32MiB"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(serve.stop(), 0);
  const Outcome local = cclmesh({"run", "--system", "n300", "--op", "send_recv", "--memory", "l1", "--size", "32MiB"});
  EXPECT_EQ(next.out, local.out);
}


// `serve --hardware ideal` (session 35): its first line says so, and `run --device` and `sweep
// --device` print and record what a local `--hardware ideal` run prints: the title, the row (the
// same simulated times), the alpha-beta note, --json's hardware and alpha_beta_us. `--hardware
// ideal` beside --device is taken against it, and changes nothing.
TEST(CliServeIdeal, RunAndSweepPrintTheLocalIdealRuns) {
  TempDir dir("serve_ideal");
  ServeChild serve({"--system", "t3k", "--hardware", "ideal"});
  ASSERT_NE(serve.port, 0) << serve.line;
  EXPECT_EQ(serve.line.rfind("cclmesh serve: simulated t3k (8 chips), fabric ring x1, functional, ideal hardware "
                             "listening on 127.0.0.1:",
                             0),
            0u)
      << serve.line;
  const Outcome remote = cclmesh({"run", "--device", serve.endpoint(), "--op", "reduce_scatter", "--size", "1MiB",
                                  "--json", dir.file("remote.json")});
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  const Outcome asked = cclmesh({"run", "--device", serve.endpoint(), "--hardware", "ideal", "--op", "reduce_scatter",
                                 "--size", "1MiB"});
  EXPECT_EQ(asked.exit_code, 0) << asked.err;
  const std::vector<std::string> points{"--op", "all_gather,all_reduce", "-b", "64KiB", "-e", "256KiB", "-f", "4"};
  std::vector<std::string> sweep_args{"sweep", "--device", serve.endpoint()};
  sweep_args.insert(sweep_args.end(), points.begin(), points.end());
  const Outcome swept = cclmesh(sweep_args);
  EXPECT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_EQ(serve.stop(), 0);

  const Outcome local = cclmesh({"run", "--system", "t3k", "--hardware", "ideal", "--op", "reduce_scatter", "--size",
                                 "1MiB", "--json", dir.file("local.json")});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_EQ(asked.out, local.out);
  EXPECT_NE(local.out.find("fabric mode, ideal hardware)"), std::string::npos) << local.out;
  EXPECT_NE(local.out.find("# alpha-beta (REFERENCE 10"), std::string::npos) << local.out;
  const json remote_json = json::parse(read_file(dir.file("remote.json")));
  const json local_json = json::parse(read_file(dir.file("local.json")));
  EXPECT_EQ(remote_json.at("settings").at("hardware"), "ideal");
  EXPECT_EQ(remote_json.at("settings"), local_json.at("settings"));
  EXPECT_EQ(remote_json.at("alpha_beta_us"), local_json.at("alpha_beta_us"));
  EXPECT_EQ(remote_json.at("time_us"), local_json.at("time_us"));

  std::vector<std::string> local_sweep{"sweep", "--system", "t3k", "--hardware", "ideal"};
  local_sweep.insert(local_sweep.end(), points.begin(), points.end());
  const Outcome local_swept = cclmesh(local_sweep);
  EXPECT_EQ(local_swept.exit_code, 0) << local_swept.err;
  EXPECT_EQ(swept.out, local_swept.out);
  EXPECT_NE(swept.out.find("ideal hardware"), std::string::npos) << swept.out;
}

// The hardware is the server's to decide: `--hardware` other than the served device's exits 2
// naming both and what to do, before any op runs, in run and sweep alike (a row of the served
// chips under a request for the others would mislead: modelled and ideal times are well apart).
TEST(CliServeIdeal, HardwareOtherThanTheServersExitsTwoNamingBoth) {
  ServeChild modelled({"--system", "n300"});
  ASSERT_NE(modelled.port, 0) << modelled.line;
  for (const char* command : {"run", "sweep"}) {
    const Outcome refused = cclmesh({command, "--device", modelled.endpoint(), "--hardware", "ideal"});
    EXPECT_EQ(refused.exit_code, 2) << command;
    EXPECT_EQ(refused.out, "") << command;
    EXPECT_EQ(refused.err, "cclmesh: error: --device: --hardware ideal given, but " + modelled.endpoint() +
                               " serves modelled hardware (simulated n300 (2 chips), fabric line x1, functional); "
                               "the served device's hardware is the server's to decide: drop --hardware, or run "
                               "against a cclmesh serve started with --hardware ideal\n")
        << command;
  }
  const Outcome same = cclmesh({"run", "--device", modelled.endpoint(), "--hardware", "modelled", "--op", "all_gather",
                                "--size", "64KiB"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(modelled.stop(), 0);

  ServeChild ideal({"--system", "n300", "--hardware", "ideal"});
  ASSERT_NE(ideal.port, 0) << ideal.line;
  const Outcome refused = cclmesh({"run", "--device", ideal.endpoint(), "--hardware", "modelled"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "cclmesh: error: --device: --hardware modelled given, but " + ideal.endpoint() +
                             " serves ideal hardware (simulated n300 (2 chips), fabric line x1, functional, ideal "
                             "hardware); the served device's hardware is the server's to decide: drop --hardware, or "
                             "run against a cclmesh serve started with --hardware modelled\n");
  EXPECT_EQ(ideal.stop(), 0);
}

}  // namespace
}  // namespace cclmesh::runtime::remote
