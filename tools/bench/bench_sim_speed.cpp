// Simulation speed (issue #6's targets; a plain program, not a test: wall time depends on the
// machine and on what else runs on it). Each scenario runs in a child process of its own, so
// the peak RSS printed is that scenario's alone.
//
//   build/tools/bench/bench_sim_speed            all scenarios
//   build/tools/bench/bench_sim_speed quick      the smaller sizes only (a minute or so)
//   build/tools/bench/bench_sim_speed run N      scenario N alone, in this process
//
// rss/T = peak RSS / the bytes of every tensor the mesh holds (inputs and outputs on all chips).
// Targets (one core): T3K 8-ring all_gather 1 GiB timing-only < 5 s; 64 MiB with real data
// < 10 s; TG all_gather along an axis, 1 GiB timing-only < 20 s; memory < 2x the tensor bytes
// with data and < 1 GiB timing-only.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace {

using cclmesh::cli::CollectiveOp;
using cclmesh::cli::RunOptions;

struct Scenario {
  std::string name;
  RunOptions options;
  double target_wall_s;  // 0: no target, a reference point
  bool quick;  // part of the `quick` subset
  int groups = 1;  // independent rings / lines running at once
};

RunOptions options_for(const std::string& system, std::uint64_t bytes, bool no_data, std::optional<int> axis = {},
                       const std::string& topology = "ring", bool simulate_every_group = false) {
  RunOptions o;
  o.topology = topology;
  o.system = system;
  o.op = CollectiveOp::AllGather;
  o.size_bytes = bytes;
  o.no_data = no_data;
  o.cluster_axis = axis;
  o.simulate_every_group = simulate_every_group;
  return o;
}

std::vector<Scenario> scenarios() {
  constexpr std::uint64_t MiB = 1ull << 20;
  return {
      {"t3k 8-ring all_gather 64 MiB, timing only", options_for("t3k", 64 * MiB, true), 0.0, true},
      {"t3k 8-ring all_gather 64 MiB, real data", options_for("t3k", 64 * MiB, false), 10.0, true},
      {"t3k 8-ring all_gather 1 GiB, timing only", options_for("t3k", 1024 * MiB, true), 5.0, false},
      {"tg all_gather along axis 1 (4 lines of 8), 1 GiB, timing only", options_for("tg", 1024 * MiB, true, 1, "line"), 20.0,
       false, 4},
      // The same on the per-axis fabric at a size that runs in seconds (the quick subset).
      {"tg all_gather along axis 1 (4 lines of 8), 16 MiB, timing only", options_for("tg", 16 * MiB, true, 1, "line"),
       0.0, true, 4},
      {"tg all_gather along axis 0 (8 lines of 4), 16 MiB, timing only", options_for("tg", 16 * MiB, true, 0, "line"),
       0.0, true, 8},
      // Large what-if meshes (docs/performance.md, "Large meshes"): per-chip set-up and memory,
      // and a dense event queue (256 and 1024 chips each running a ring at once).
      {"torus 16x16 all_gather along axis 0 (16 rings of 16), 1 MiB, timing only",
       options_for("torus:16x16", 1 * MiB, true, 0), 0.0, true, 16},
      {"torus 32x32 all_gather along axis 0 (32 rings of 32), 1 MiB, timing only",
       options_for("torus:32x32", 1 * MiB, true, 0), 0.0, false, 32},
      // The TG rows with their 4 lines all simulated (--simulate-every-group): what the target
      // measured before identical groups were simulated once (sim/device/mirrored_groups.hpp).
      {"tg all_gather along axis 1, 1 GiB, timing only, every line simulated",
       options_for("tg", 1024 * MiB, true, 1, "line", true), 20.0, false, 4},
  };
}

int run_one(const Scenario& s) {
  cclmesh::cli::RunResult r;
  try {
    r = cclmesh::cli::run_collective(s.options);
  } catch (const std::exception& e) {
    fmt::print("{:<64} failed: {}\n", s.name, e.what());
    return 1;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  // The tensors the mesh holds: every chip of the op keeps its S / N input and the whole S output
  // (all_gather). Timing-only runs store none of them, so memory must stay small at any size.
  const double tensor_mib = static_cast<double>(s.options.size_bytes) / (1 << 20) *
                            (1.0 + static_cast<double>(r.n_chips)) * static_cast<double>(s.groups);
  const std::string target = s.target_wall_s > 0 ? fmt::format("{:.1f}", s.target_wall_s) : "-";
  // Groups simulated: identical groups along an axis run once (mirror_choice.hpp).
  const std::string simulated = fmt::format("{}/{}", static_cast<std::size_t>(s.groups) - r.groups_mirrored, s.groups);
  fmt::print("{:<64} {:>9.2f} {:>9.2f} {:>9} {:>7} {:>12} {:>9.0f} {:>9.0f} {:>8.2f} {:>10.2f}\n", s.name, r.wall_s,
             r.simulate_wall_s, target, simulated, r.sim_events.value_or(0),
             static_cast<double>(r.sim_events.value_or(0)) / r.wall_s / 1e3, rss_mib,
             rss_mib / tensor_mib, r.bandwidth.busbw_GBps);
  return r.verified.value_or(true) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Scenario> all = scenarios();
  CLI::App app{"cclmesh simulation speed: every scenario (default), the quick ones, or one by index"};
  std::string mode = "all";
  std::size_t scenario_index = 0;
  app.add_option("mode", mode, "all | quick | run")->check(CLI::IsMember({"all", "quick", "run"}));
  app.add_option("index", scenario_index, "scenario index for 'run'")->check(CLI::Range(std::size_t{0}, all.size() - 1));
  try {
    app.parse(argc, argv);
    if (mode == "run" && app.count("index") == 0) throw CLI::ValidationError("index", "'run' needs a scenario index");
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (mode == "run") return run_one(all[scenario_index]);
  fmt::print("# cclmesh simulation speed; wall = host seconds for the whole run (build, op, verify), sim = the\n"
             "# part of it running the op's events (the rest is set-up: device, fabric start-up, command streams);\n"
             "# groups = groups simulated / groups of the op (identical groups along an axis run once)\n");
  fmt::print("{:<64} {:>9} {:>9} {:>9} {:>7} {:>12} {:>9} {:>9} {:>8} {:>10}\n", "# scenario", "wall_s", "sim_s",
             "target_s", "groups", "events", "kev/s", "rss_MiB", "rss/T", "busbw");
  std::fflush(stdout);
  int status = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (mode == "quick" && !all[i].quick) continue;
    const pid_t child = fork();
    if (child == 0) {
      const std::string index = std::to_string(i);
      execl("/proc/self/exe", argv[0], "run", index.c_str(), static_cast<char*>(nullptr));
      std::perror("bench_sim_speed: exec");
      std::_Exit(127);
    }
    int child_status = 0;
    waitpid(child, &child_status, 0);
    if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) status = 1;
  }
  return status;
}
