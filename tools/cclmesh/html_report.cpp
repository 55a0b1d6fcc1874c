#include "tools/cclmesh/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "topologies/export_svg.hpp"

namespace cclmesh::cli {
namespace {

struct Rgb {
  double r, g, b;
};

// ColorBrewer YlOrRd (sequential): light for little use, dark red at the line rate.
constexpr std::array<Rgb, 5> kScale = {
    Rgb{255, 237, 160}, Rgb{254, 178, 76}, Rgb{253, 141, 60}, Rgb{240, 59, 32}, Rgb{189, 0, 38}};
constexpr const char* kIdleColour = "#c8c8c8";
// Off the utilisation scale and unlike idle grey: a link a --fault took down is never mistaken
// for one the op did not need.
constexpr const char* kDownColour = "#000000";

std::string escape_html(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string percent(double utilisation) { return fmt::format("{:.1f}%", 100.0 * utilisation); }

struct DirectionTotal {
  double busiest = 0.0;
  std::int64_t links = 0;
  std::int64_t links_used = 0;
  std::int64_t payload_bytes = 0;
  std::string tooltip;
};

// The run's link-down faults by edge {a, b}, a < b, parsed from the specs it ran with (the one
// parser of --fault, so the report reads them as the run did).
std::map<std::pair<topo::ChipId, topo::ChipId>, sim::device::LinkDownFault> links_down(const RunResult& result) {
  RunFaults faults;
  for (const std::string& spec : result.faults) add_fault_spec(faults, spec);
  std::map<std::pair<topo::ChipId, topo::ChipId>, sim::device::LinkDownFault> down;
  for (const sim::device::LinkDownFault& f : faults.plan.link_down) {
    down.emplace(std::pair{std::min(f.a, f.b), std::max(f.a, f.b)}, f);
  }
  return down;
}

// A down edge's lanes in the down colour, labelled "down"; the tooltip says since when and keeps
// what its links carried before, which a link down mid-run may have.
void mark_down(topo::EdgeLanes& lanes, const sim::device::LinkDownFault& fault) {
  const bool from_start = fault.at == sim::SimTime{};
  for (topo::EdgeLane* lane : {&lanes.a_to_b, &lanes.b_to_a}) {
    lane->colour = kDownColour;
    lane->label = "down";
    lane->tooltip = fmt::format("{}: every link down {}\n{}", fault.spec,
                                from_start ? "from the start" : "at " + sim::to_string(fault.at), lane->tooltip);
  }
}

topo::EdgeLaneMap edge_lanes(const RunResult& result) {
  std::map<std::pair<topo::ChipId, topo::ChipId>, DirectionTotal> by_direction;
  for (const LinkDirectionUse& u : result.links_used) {
    DirectionTotal& d = by_direction[{u.chip, u.peer_chip}];
    d.busiest = std::max(d.busiest, u.utilisation);
    ++d.links;
    d.links_used += u.busy_ps > 0 ? 1 : 0;
    d.payload_bytes += u.payload_bytes;
    d.tooltip += fmt::format("{}chip {} ch {} -> chip {} ch {}: {} busy, {} B payload", d.tooltip.empty() ? "" : "\n",
                             u.chip, u.channel, u.peer_chip, u.peer_channel, percent(u.utilisation), u.payload_bytes);
  }
  const auto lane = [&](topo::ChipId from, topo::ChipId to) {
    topo::EdgeLane l;
    const auto it = by_direction.find({from, to});
    if (it == by_direction.end()) return l;
    const DirectionTotal& d = it->second;
    const bool idle = d.links_used == 0;
    l.colour = idle ? kIdleColour : utilisation_colour(d.busiest);
    // Short enough for the gap between two chips; the tooltip has the details.
    l.label = idle ? "" : fmt::format("{:.0f}%", 100.0 * d.busiest);
    l.tooltip = fmt::format("chip {} to chip {}: busiest link {}, {} of {} link{} used\n{}", from, to,
                            percent(d.busiest), d.links_used, d.links, d.links == 1 ? "" : "s", d.tooltip);
    return l;
  };
  topo::EdgeLaneMap lanes;
  for (const auto& [key, total] : by_direction) {
    const topo::ChipId a = std::min(key.first, key.second);
    const topo::ChipId b = std::max(key.first, key.second);
    if (lanes.contains({a, b})) continue;
    lanes[{a, b}] = topo::EdgeLanes{lane(a, b), lane(b, a)};
  }
  for (const auto& [edge, fault] : links_down(result)) {
    if (const auto it = lanes.find(edge); it != lanes.end()) mark_down(it->second, fault);
  }
  return lanes;
}

std::string legend_svg(bool with_down) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"46\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<defs><linearGradient id=\"scale\">",
      with_down ? 480 : 420);
  for (std::size_t i = 0; i < kScale.size(); ++i) {
    svg += fmt::format("<stop offset=\"{}%\" stop-color=\"{}\"/>", 100 * i / (kScale.size() - 1),
                       utilisation_colour(static_cast<double>(i) / static_cast<double>(kScale.size() - 1)));
  }
  svg += "</linearGradient></defs>\n";
  svg += fmt::format("<rect x=\"10\" y=\"6\" width=\"24\" height=\"14\" fill=\"{}\"/>", kIdleColour);
  svg += "<text x=\"22\" y=\"36\" text-anchor=\"middle\">idle</text>\n";
  svg += "<rect x=\"60\" y=\"6\" width=\"340\" height=\"14\" fill=\"url(#scale)\"/>\n";
  for (int p = 0; p <= 100; p += 25) {
    svg += fmt::format("<text x=\"{}\" y=\"36\" text-anchor=\"middle\">{}%</text>", 60 + 340 * p / 100, p);
  }
  if (with_down) {
    svg += fmt::format("\n<rect x=\"430\" y=\"6\" width=\"24\" height=\"14\" fill=\"{}\"/>", kDownColour);
    svg += "<text x=\"442\" y=\"36\" text-anchor=\"middle\">down</text>";
  }
  svg += "\n</svg>";
  return svg;
}

std::string result_table_html(const RunResult& r) {
  std::string html = "<table class=\"nccl\"><thead><tr>";
  const auto& names = table_column_names();
  const auto& units = table_column_units();
  for (std::size_t i = 0; i < kTableColumns; ++i) {
    html += fmt::format("<th>{}{}{}</th>", escape_html(names[i]), units[i].empty() ? "" : "<br>", escape_html(units[i]));
  }
  html += "</tr></thead><tbody><tr>";
  for (const std::string& cell : table_cells(r)) html += fmt::format("<td>{}</td>", escape_html(cell));
  html += "</tr></tbody></table>\n";
  return html;
}

std::string links_table_html(const RunResult& r) {
  std::string html =
      "<table class=\"links\"><thead><tr><th>from</th><th>to</th><th>payload<br>(B)</th><th>wire busy<br>(us)</th>"
      "<th>payload rate<br>(GB/s)</th><th>utilisation</th></tr></thead><tbody>\n";
  const double op_s = r.time_us / 1e6;
  for (const LinkDirectionUse& u : r.links_used) {
    html += fmt::format(
        "<tr><td>chip {} ch {}</td><td>chip {} ch {}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td>"
        "<td><span class=\"swatch\" style=\"background:{}\"></span>{}</td></tr>\n",
        u.chip, u.channel, u.peer_chip, u.peer_channel, u.payload_bytes, static_cast<double>(u.busy_ps) / 1e6,
        op_s > 0 ? static_cast<double>(u.payload_bytes) / op_s / 1e9 : 0.0,
        u.busy_ps == 0 ? kIdleColour : utilisation_colour(u.utilisation), percent(u.utilisation));
  }
  html += "</tbody></table>\n";
  return html;
}

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px;margin-bottom:4px}h2{font-size:16px;margin-top:28px}
p.summary{color:#555;margin-top:0}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #bbb;padding:3px 8px;text-align:right}
th{background:#eef2f7;font-weight:600}
td:first-child,th:first-child{text-align:left}
table.links td:nth-child(2){text-align:left}
span.swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle;border:1px solid #888}
figure{margin:0}
.note{color:#555;font-size:13px;max-width:900px})";

}  // namespace

std::string utilisation_colour(double utilisation) {
  const double x = std::clamp(utilisation, 0.0, 1.0) * static_cast<double>(kScale.size() - 1);
  const auto low = static_cast<std::size_t>(std::min(std::floor(x), static_cast<double>(kScale.size() - 2)));
  const double t = x - static_cast<double>(low);
  const Rgb& a = kScale[low];
  const Rgb& b = kScale[low + 1];
  const auto mix = [t](double from, double to) { return static_cast<int>(std::lround(from + (to - from) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
}

std::string html_report(const RunResult& r, const topo::Topology& topology) {
  const std::string title = fmt::format("cclmesh run: {} of {} B on {}{}", r.op, r.size_bytes, r.system,
                                        r.link_whatif ? ", " + link_whatif_text(*r.link_whatif) : "");
  std::string verified = "not verified (--no-data)";
  if (r.verified) verified = *r.verified ? "verified bit for bit" : fmt::format("MISMATCH: {}", r.mismatch);
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>{}</title>\n<style>\n{}\n</style>\n</head>\n<body>\n", escape_html(title), kStyle);
  html += fmt::format("<h1>{}</h1>\n", escape_html(title));
  // A device that counts no events (served hardware) says so, as for its links.
  html += fmt::format(
      "<p class=\"summary\">{} chips, {}, {} link{}, {} mode{}{}, {}; simulated kernel time {:.2f} us, dispatch {:.2f} us, launch {:.2f} us; "
      "{}{}</p>\n",
      r.n_chips, escape_html(topology_text(r)), r.links, r.links == 1 ? "" : "s", escape_html(r.mode),
      r.fabric.empty() ? "" : ", " + escape_html(r.fabric), r.hardware == "ideal" ? ", ideal hardware" : "",
      escape_html(r.dtype),
      r.time_us, r.dispatch_us, r.launch_us, escape_html(verified),
      r.sim_events ? fmt::format("; {} simulated events{}", *r.sim_events,
                                 r.groups_mirrored == 0
                                     ? ""
                                     : fmt::format(" ({} groups mirror an identical simulated one, not simulated)",
                                                   r.groups_mirrored))
                   : "; no event count from this device");
  // --shape / --dim / --shard: the tensor and memory config, as the table's second title line says.
  if (const std::string note = tensor_note(r); !note.empty()) {
    html += fmt::format("<p class=\"summary\">{}</p>\n", escape_html(note.substr(2, note.size() - 3)));
  }
  // The algorithm the op chose, as --json records it: where a sweep's curve steps, this says why.
  if (!r.algorithm.empty()) {
    html += fmt::format("<p class=\"summary\">algorithm {}: {}</p>\n", escape_html(r.algorithm),
                        escape_html(r.algorithm_reason));
  }
  if (const std::string alpha_beta = alpha_beta_text(r); !alpha_beta.empty()) {
    html += fmt::format("<p class=\"summary\">{}</p>\n", escape_html(alpha_beta));
  }
  if (!r.algorithm_lines.empty()) {
    html += fmt::format("<p class=\"summary\">on the rings run as lines, algorithm {}: {}</p>\n",
                        escape_html(r.algorithm_lines), escape_html(r.algorithm_lines_reason));
  }
  // all_reduce's reduce_scatter + all_gather: what each half ran, as --json's "halves"; the
  // composite's all_gather alone (it has no reduce_scatter half).
  if (r.algorithm_halves) {
    std::vector<std::pair<const char*, AlgorithmRecord>> halves;
    if (r.algorithm_halves->reduce_scatter) halves.emplace_back("reduce_scatter", *r.algorithm_halves->reduce_scatter);
    halves.emplace_back("all_gather", r.algorithm_halves->all_gather);
    for (const auto& [name, half] : halves) {
      std::string text = fmt::format("{} half {}: {}", name, half.algorithm, half.reason);
      if (!half.lines_algorithm.empty()) {
        text += fmt::format("; on the rings run as lines {}: {}", half.lines_algorithm, half.lines_reason);
      }
      html += fmt::format("<p class=\"summary\">{}</p>\n", escape_html(text));
    }
  }
  // --fault: what ran besides the system, as the table's "# faults" lines say.
  if (!r.faults.empty()) {
    std::string note = fault_note(r);
    std::string lines;
    for (std::size_t at = 0; at < note.size();) {
      const std::size_t end = note.find('\n', at);
      const std::string line = note.substr(at + 2, end - at - 2);  // without "# " and the newline
      lines += (lines.empty() ? "" : "<br>") + escape_html(line);
      at = end + 1;
    }
    html += fmt::format("<p class=\"summary\">{}</p>\n", lines);
  }
  html += "<h2>nccl-tests row</h2>\n" + result_table_html(r);
  html += "<h2>Link utilisation</h2>\n";
  if (!r.links_measured) {
    html += "<p class=\"note\">No link statistics from this device: it does not measure how busy its links were, "
            "so the topology is drawn uncoloured.</p>\n";
    html += "<figure>\n" + topo::to_svg(topology) + "</figure>\n";
    html += "</body>\n</html>\n";
    return html;
  }
  html += fmt::format(
      "<p class=\"note\">Each neighbour edge is drawn as two lanes, one per direction, each on the right of its "
      "direction of travel; its colour is the share of the line rate ({:.1f} GB/s) the op kept the wire busy "
      "(packets and credit words with their framing, over the op's {:.2f} us). An edge of several links shows its "
      "busiest link. Hover a lane for every link of it.</p>\n",
      r.line_rate_GBps, r.time_us);
  html += "<figure>\n" + legend_svg(!links_down(r).empty()) + "\n</figure>\n";
  html += "<figure>\n" + topo::to_svg(topology, edge_lanes(r)) + "</figure>\n";
  html += "<h2>Every link direction</h2>\n" + links_table_html(r);
  html += "</body>\n</html>\n";
  return html;
}

std::string html_incomplete_report(const std::string& title, const std::string& report, int exit_code) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>{}</title>\n<style>\n{}\npre{{font-size:12px;white-space:pre-wrap}}\n</style>\n</head>\n<body>\n",
                      escape_html(title), kStyle);
  html += fmt::format("<h1>{}</h1>\n", escape_html(title));
  html += fmt::format(
      "<p class=\"summary\">The simulated op did not complete (exit code {}): no time, bandwidth or link "
      "utilisation to show. The report:</p>\n",
      exit_code);
  html += fmt::format("<pre>{}</pre>\n</body>\n</html>\n", escape_html(report));
  return html;
}

}  // namespace cclmesh::cli
