#include "tools/cclmesh/result_table.hpp"

#include <fmt/format.h>

namespace cclmesh::cli {

nlohmann::json result_json(const RunResult& r) {
  nlohmann::json j;
  j["op"] = r.op;
  j["system"] = r.system;
  j["n_chips"] = r.n_chips;
  j["topology"] = r.topology;
  j["links"] = r.links;
  j["mode"] = r.mode;
  j["dtype"] = r.dtype;
  j["size_bytes"] = r.size_bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["launch_us"] = r.launch_us;
  j["algbw_GBps"] = r.bandwidth.algbw_GBps;
  j["busbw_GBps"] = r.bandwidth.busbw_GBps;
  j["linkbw_GBps"] = r.bandwidth.linkbw_GBps;
  j["pct_line_rate"] = r.bandwidth.pct_line_rate;
  j["line_rate_GBps"] = r.line_rate_GBps;
  j["verified"] = r.verified ? nlohmann::json(*r.verified) : nlohmann::json(nullptr);
  j["wrong_elements"] = r.wrong_elements;
  if (!r.mismatch.empty()) j["first_mismatch"] = r.mismatch;
  if (!r.checksums.empty()) {
    nlohmann::json sums = nlohmann::json::array();
    for (const OutputChecksum& c : r.checksums) {
      sums.push_back({{"chip", c.chip},
                      {"buffer", c.buffer},
                      {"crc32", fmt::format("{:08x}", c.crc32)},
                      {"expected_crc32", fmt::format("{:08x}", c.expected_crc32)},
                      {"match", c.crc32 == c.expected_crc32}});
    }
    j["checksums"] = sums;
  }
  if (!r.faults.empty()) {
    j["faults"] = r.faults;
    j["fabric_order"] = r.fabric_order;
  }
  j["sim_events"] = r.sim_events;
  j["wall_s"] = r.wall_s;
  return j;
}

std::string table_title(const RunResult& r) {
  return fmt::format(
      "# cclmesh: {} on {} ({} chips, {}, {} link{}, {} mode); time = simulated device kernel time, GB = 1e9 B\n",
      r.op, r.system, r.n_chips, r.topology, r.links, r.links == 1 ? "" : "s", r.mode);
}

std::string table_header() {
  std::string text = fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7} {:>8} {:>6} {:>10}\n", "size",
                                 "count", "type", "redop", "time", "algbw", "busbw", "#wrong", "linkbw", "%line", "launch");
  text += fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7} {:>8} {:>6} {:>10}\n", "(B)", "(elements)", "",
                      "", "(us)", "(GB/s)", "(GB/s)", "", "(GB/s)", "", "(us)");
  return text;
}

std::string table_row(const RunResult& r) {
  const std::string wrong = r.verified ? fmt::format("{}", r.wrong_elements) : "N/A";
  std::string text = fmt::format(" {:>12} {:>13} {:>9} {:>6} {:>11.2f} {:>8.2f} {:>8.2f} {:>7} {:>8.2f} {:>6.1f} {:>10.2f}\n",
                                 r.size_bytes, r.count, r.dtype == "bf16" ? "bfloat16" : r.dtype, r.redop, r.time_us,
                                 r.bandwidth.algbw_GBps, r.bandwidth.busbw_GBps, wrong, r.bandwidth.linkbw_GBps,
                                 r.bandwidth.pct_line_rate, r.launch_us);
  if (!r.mismatch.empty()) text += fmt::format("# MISMATCH: {}\n", r.mismatch);
  return text;
}

std::string fault_note(const RunResult& r) {
  std::string specs;
  for (const std::string& spec : r.faults) specs += (specs.empty() ? "" : ", ") + spec;
  return fmt::format("# faults: {}; fabric chips in order: {}\n", specs, r.fabric_order);
}

std::string csv_header() {
  return "op,system,n_chips,topology,links,mode,dtype,size_bytes,count,time_us,algbw_GBps,busbw_GBps,linkbw_GBps,"
         "pct_line_rate,launch_us,verified,wrong_elements,sim_events\n";
}

std::string csv_row(const RunResult& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.4f},{:.4f},{:.2f},{:.3f},{},{},{}\n", r.op, r.system,
                     r.n_chips, r.topology, r.links, r.mode, r.dtype, r.size_bytes, r.count, r.time_us,
                     r.bandwidth.algbw_GBps, r.bandwidth.busbw_GBps, r.bandwidth.linkbw_GBps, r.bandwidth.pct_line_rate,
                     r.launch_us, r.verified ? (*r.verified ? "true" : "false") : "", r.wrong_elements, r.sim_events);
}

}  // namespace cclmesh::cli
