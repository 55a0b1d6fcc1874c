#pragma once
// How results are printed: the nccl-tests table (title, header, rows), CSV and JSON. One place,
// so `cclmesh run` and `cclmesh sweep` print the same columns.

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

std::string table_title(const RunResult& result);
// "# tensor [1,1,32,8192] tile, dim 3, l1 width_sharded on 8x4 (row-major), shard 32x32 in,
// 32x256 out": the title's second line when --shape, --dim, --shard or --out-shard* was given,
// else "". An output on another layout or grid than the input's (a reshard) gets its own
// part: "l1 in width_sharded on 6x5 (row-major), shard 32x32; out width_sharded on 4x6 ...".
std::string tensor_note(const RunResult& result);
// The shape the groups ran as, with the fabric's where it differs: "ring", "line", or e.g. "line
// on a ring fabric" (send_recv's pair on the T3K's ring).
std::string topology_text(const RunResult& result);
// The table's columns, their units and one row's cells, for other renderings (HTML report).
inline constexpr std::size_t kTableColumns = 12;
const std::array<std::string, kTableColumns>& table_column_names();
const std::array<std::string, kTableColumns>& table_column_units();
std::array<std::string, kTableColumns> table_cells(const RunResult& result);

std::string table_header();
std::string table_row(const RunResult& result);
// "# faults: SPEC, ...; fabric chips in order: 0-1-...", after the row of a run with --fault,
// then fault_effect_lines().
std::string fault_note(const RunResult& result);
// fault_note's first line alone: the faults the device runs under (a sweep prints it once under
// each op's header, the faults being the device's, not a point's).
std::string fault_specs_line(const RunResult& result);
// What the faults did to this op ("# corrupt:0-2:5: flipped bit ...", rings run as lines), one
// line each; empty when they did nothing to it.
std::string fault_effect_lines(const RunResult& result);
// A line under the table when Auto fell back from all_reduce's reduce_scatter + all_gather
// (the composite can be 10x slower): the algorithm and why; empty otherwise. Legacy all_reduce
// with rings and opened lines: one line per part that fell back, the lines' saying they are.
std::string algorithm_note(const RunResult& result);
// On ideal hardware, the run against REFERENCE 10's alpha-beta time ("alpha-beta (REFERENCE 10, a
// ring, halves each way): ... took 1.019x that"); "" without one (modelled hardware, no formula).
std::string alpha_beta_text(const RunResult& result);
// The columns sweep --csv adds after the default ones, which keep their places; each only when a
// row needs it, so a sweep that needs none writes the default CSV, as before those columns existed.
struct CsvColumns {
  // A link what-if's rows (RunResult::link_whatif): links_off_arch_default, system_links,
  // link_rate_{min,max}_GBps, link_latency_{min,max}_ns, arch_rate_GBps, arch_latency_ns (--json's
  // link_whatif object, flat).
  bool link_whatif = false;
  bool cluster_axis = false;  // cluster_axis: the mesh axis the op ran along (--cluster-axis)
  bool chips = false;         // chips: --chips as run, in order, split by '-' ("0-1-5-4")
  bool faults = false;        // faults: the --fault specs the run ran under, split by ';'
  // hardware (modelled | ideal) and alpha_beta_us (REFERENCE 10's time on ideal hardware, empty
  // for an op without a row), as --json's settings.hardware and alpha_beta_us
  bool hardware = false;
};
// The columns `rows` need: a column when any row has its setting (a row without it: empty cells).
CsvColumns csv_columns(const std::vector<RunResult>& rows);
std::string csv_header(const CsvColumns& columns = {});
std::string csv_row(const RunResult& result, const CsvColumns& columns = {});
nlohmann::json result_json(const RunResult& result);
// The simulator options a run took beyond what result_json records (--cluster-axis, --root, --no-data,
// the fabric's payload and ERISC L1, workers, chunks, algorithms asked, seed), so a results
// table built from --json can tell two runs apart: `"settings"` of run's and sweep's --json.
// null: the op's own default (the value differs by op and size, and the row does not say).
nlohmann::json settings_json(const RunOptions& options);

// A point that did not complete (a hang or fault, exit 3): what was asked (its settings and
// faults, as a completed row's), "outcome": "did not complete" and the report as "error", so a
// script never takes an older run's figures for it. Run's and sweep's, local and served.
// `groups_mirrored` (RunProgress's) is written when known, as a completed run's is.
nlohmann::json incomplete_run_json(const RunOptions& options, const std::string& report,
                                   std::optional<std::size_t> groups_mirrored);
// --json's "memory": the type, the input's layout, grid and shard (as session 8 wrote them), the
// output's shard, and each buffer's config in full ("input", "output": layout, cores as
// [[x0,y0],[x1,y1]] ranges, orientation, shard).
nlohmann::json memory_json(const RunResult& result);

}  // namespace cclmesh::cli
