// What reading an op's kernel times costs on a served device as its history grows
// (docs/remote_device.md, "A long-lived server's memory"): N small all_gathers one after another
// on one RemoteMeshDevice session, each timed as `cclmesh run --device` times it (profile_size()
// before the op, profile_since() after it; until session 30, profile().size() and profile(),
// whose replies carried the whole history), printing every STEP ops the op's host wall time, the part spent
// reading the profile, the bytes of the last profile reply, and this process's VmRSS (server and
// client: the server's profile is what grows with the session). MAX_ENTRIES bounds the session's
// profile as `serve --max-profile-entries` does (0: unbounded, the server before session 31). A
// plain program printing rows; wall-clock figures, not test assertions.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tools/bench/bench_all_gather_op.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "runtime/remote/wire_codec.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

namespace {

using namespace cclmesh;
using bench::Clock;
using bench::seconds_since;

// The CBOR bytes of a profile reply carrying `entries` (what the server sends for them).
std::size_t reply_bytes(const std::vector<runtime::KernelProfile>& entries) {
  runtime::remote::Json list = runtime::remote::Json::array();
  for (const runtime::KernelProfile& p : entries) list.push_back(runtime::remote::encode(p));
  return runtime::remote::Json::to_cbor(runtime::remote::Json{{"type", "ok"}, {"profile", std::move(list)}}).size();
}

// This process's resident set in KiB (/proc/self/status VmRSS; 0 where there is none).
long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

struct OpCost {
  double wall_s = 0;
  double profile_s = 0;
  std::size_t entries_read = 0;  // profile entries the op's two reads carried
  std::size_t reply_bytes = 0;   // of the read after the op
};

// One all_gather of `output_bytes` (bf16, interleaved DRAM), its buffers freed after, as the CLI
// runs a point; its profile read as the CLI reads it.
OpCost all_gather(runtime::remote::RemoteMeshDevice& device, std::uint64_t output_bytes) {
  const auto start = Clock::now();
  const runtime::ccl::all_gather::Params p = bench::prepare_all_gather(device, device.fabric(), output_bytes);
  OpCost cost;
  auto read_start = Clock::now();
  const std::size_t profile_begin = device.profile_size();
  cost.profile_s += seconds_since(read_start);
  runtime::ccl::all_gather::run(device, p);
  read_start = Clock::now();
  const std::vector<runtime::KernelProfile> op_entries = device.profile_since(profile_begin);
  cost.profile_s += seconds_since(read_start);
  cost.entries_read += op_entries.size();
  cost.reply_bytes = reply_bytes(op_entries);
  std::vector<std::byte> out(p.output_buffer.config.size_bytes);
  for (runtime::ChipId chip : device.chips()) device.read_buffer(chip, p.output_buffer, out);
  bench::free_all_gather(device, p);
  cost.wall_s = seconds_since(start);
  return cost;
}

}  // namespace

// Usage: bench_served_profile [OPS=800] [STEP=100] [OUTPUT_BYTES=16384] [MAX_ENTRIES=1048576]
int main(int argc, char** argv) {
  const int ops = argc > 1 ? std::stoi(argv[1]) : 800;
  const int step = argc > 2 ? std::stoi(argv[2]) : 100;
  const std::uint64_t output_bytes = argc > 3 ? std::stoull(argv[3]) : 16384;
  const std::size_t max_entries =
      argc > 4 ? std::stoull(argv[4]) : runtime::remote::kDefaultMaxProfileEntries;
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  sim::device::SimMeshDevice served_device(topo::load_system("t3k"), options);
  runtime::remote::RemoteServerOptions server_options;
  if (max_entries > 0) {
    server_options.max_profile_entries = max_entries;
    server_options.forget_profile_before = [&](std::size_t entry) { served_device.forget_profile_before(entry); };
  }
  runtime::remote::RemoteDeviceServer server(served_device, server_options);
  std::thread serving([&] { server.serve(); });
  {
    runtime::remote::RemoteMeshDevice remote("127.0.0.1", server.port());
    fmt::print("# served t3k (ring fabric, functional), all_gather {} B after all_gather, one session, "
               "max profile entries {}\n",
               output_bytes, max_entries == 0 ? std::string("unbounded") : std::to_string(max_entries));
    fmt::print("# {:>5} {:>10} {:>12} {:>8} {:>14} {:>12} {:>12} {:>10}\n", "op", "wall_ms", "profile_ms", "share",
               "entries_read", "reply_B", "held", "rss_KiB");
    double total_s = 0;
    for (int op = 1; op <= ops; ++op) {
      const OpCost cost = all_gather(remote, output_bytes);
      total_s += cost.wall_s;
      if (op == 1 || op % step == 0) {
        // The entries the served device still holds: those from its oldest kept one.
        const std::size_t held = max_entries == 0 ? served_device.profile_size()
                                                  : std::min(served_device.profile_size(), max_entries);
        fmt::print("  {:>5} {:>10.3f} {:>12.3f} {:>7.1f}% {:>14} {:>12} {:>12} {:>10}\n", op, cost.wall_s * 1e3,
                   cost.profile_s * 1e3, 100.0 * cost.profile_s / cost.wall_s, cost.entries_read, cost.reply_bytes,
                   held, resident_kib());
        std::fflush(stdout);  // a long run shows its rows as they come
      }
    }
    fmt::print("# {} ops: {:.2f} s wall in all\n", ops, total_s);
    remote.shutdown_server();
  }
  serving.join();
  return 0;
}
