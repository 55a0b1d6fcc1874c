#include "tools/cclmesh/fault_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdint>
#include <optional>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/size_parse.hpp"

namespace cclmesh::cli {
namespace {

constexpr const char* kAccepted =
    "expected link-down:A-B[@T], link-slow:A-B:F, skew:MAX[:SEED], drop:P[:SEED], dup:P[:SEED], "
    "corrupt:A-B[@T][:SEED] or no-bubble";

[[noreturn]] void reject(std::string_view spec, const std::string& why) {
  throw UsageError(fmt::format("--fault: '{}': {}", spec, why));
}

std::optional<std::uint64_t> parse_uint(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A decimal in (0, 1] as an exact fraction numerator / 10^k: "0.5" -> 5/10, "1" -> 1/1.
struct Fraction {
  std::uint64_t numerator = 0;
  std::uint64_t denominator = 1;
};

std::optional<Fraction> parse_unit_fraction(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view decimals = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && decimals.empty()) || decimals.size() > 9) return std::nullopt;
  const auto w = parse_uint(whole);
  const auto d = decimals.empty() ? std::optional<std::uint64_t>{0} : parse_uint(decimals);
  if (!w || !d || *w > 1) return std::nullopt;
  Fraction f;
  for (std::size_t i = 0; i < decimals.size(); ++i) f.denominator *= 10;
  f.numerator = *w * f.denominator + *d;
  if (f.numerator == 0 || f.numerator > f.denominator) return std::nullopt;
  return f;
}

// "A-B": two different chip ids.
std::pair<runtime::ChipId, runtime::ChipId> parse_pair(std::string_view spec, std::string_view text) {
  const std::size_t dash = text.find('-');
  const auto a = parse_uint(text.substr(0, dash));
  const auto b = dash == std::string_view::npos ? std::nullopt : parse_uint(text.substr(dash + 1));
  if (!a || !b || *a > 0xFFFFFFFFu || *b > 0xFFFFFFFFu) reject(spec, fmt::format("'{}' is not a chip pair A-B", text));
  if (*a == *b) reject(spec, fmt::format("'{}' names the same chip twice", text));
  return {static_cast<runtime::ChipId>(*a), static_cast<runtime::ChipId>(*b)};
}

std::uint64_t parse_seed(std::string_view spec, std::string_view text) {
  const auto seed = parse_uint(text);
  if (!seed) reject(spec, fmt::format("seed '{}' is not a non-negative integer", text));
  return *seed;
}

sim::SimTime parse_time(std::string_view spec, std::string_view text) {
  // 0 is the start in any unit: link-down:A-B@0 and corrupt:A-B@0 as without @T.
  if (text == "0") return sim::SimTime::zero();
  try {
    return parse_sim_time(text, "--fault");
  } catch (const UsageError&) {
    reject(spec, fmt::format("time '{}' is not a number with a unit ps, ns, us, ms or s (e.g. 50us)", text));
  }
}

sim::device::FrameFault parse_frame_fault(std::string_view spec, std::string_view args) {
  const std::size_t colon = args.find(':');
  const std::string_view p = args.substr(0, colon);
  const auto fraction = parse_unit_fraction(p);
  if (!fraction) reject(spec, fmt::format("probability '{}' is not a decimal in (0, 1]", p));
  sim::device::FrameFault fault;
  fault.per_2p32 = (fraction->numerator << 32) / fraction->denominator;  // numerator <= 10^9 < 2^32
  fault.seed = colon == std::string_view::npos ? 1 : parse_seed(spec, args.substr(colon + 1));
  fault.spec = std::string(spec);
  return fault;
}

bool same_link(runtime::ChipId a, runtime::ChipId b, runtime::ChipId c, runtime::ChipId d) {
  return (a == c && b == d) || (a == d && b == c);
}

// A link named twice by one kind of fault (bug bash, session 28): two link-downs (from the start
// the second was refused late as "chips 0 and 2 are not neighbours", at two times the later did
// nothing), two link-slows (the second factor did not multiply the first: the run took one) or
// two corrupts from the same time (both hit the same packet; with one seed the second flip undid
// the first and the run said verified, exit 0). Refused here, naming the earlier spec.
template <typename Fault, typename Same>
void refuse_second_on_link(std::string_view spec, const std::vector<Fault>& earlier, runtime::ChipId a,
                           runtime::ChipId b, Same same, std::string_view expected) {
  for (const Fault& fault : earlier) {
    if (same_link(fault.a, fault.b, a, b) && same(fault)) {
      reject(spec, fmt::format("link {}-{} is already named by '{}'; expected {}", fault.a, fault.b, fault.spec,
                               expected));
    }
  }
}

}  // namespace

void add_fault_spec(RunFaults& faults, std::string_view spec) {
  // No spec holds a ',' or a space: two specs in one value (new-user pass, session 41: said
  // "'0-2,link-down:1-3' is not a chip pair A-B").
  if (spec.find_first_of(", ") != std::string_view::npos) {
    reject(spec, "one --fault takes one spec; expected --fault given once for each (--fault link-down:0-2 "
                 "--fault drop:0.01)");
  }
  sim::device::FaultPlan& plan = faults.plan;
  const std::size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view args = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  const bool has_args = colon != std::string_view::npos;
  const auto once = [&](bool already) {
    if (already) reject(spec, fmt::format("'{}' may be given once", kind));
  };

  if (kind == "no-bubble" && !has_args) {
    once(faults.no_bubble);
    faults.no_bubble = true;
  } else if (kind == "link-down" && has_args) {
    const std::size_t at = args.find('@');
    const auto [a, b] = parse_pair(spec, args.substr(0, at));
    sim::device::LinkDownFault fault{a, b, sim::SimTime::zero(), std::string(spec)};
    if (at != std::string_view::npos) fault.at = parse_time(spec, args.substr(at + 1));
    refuse_second_on_link(
        spec, plan.link_down, a, b, [](const auto&) { return true; }, "each link down once (it goes down once)");
    plan.link_down.push_back(fault);
  } else if (kind == "link-slow" && has_args) {
    const std::size_t sep = args.find(':');
    if (sep == std::string_view::npos) reject(spec, "missing the factor F in link-slow:A-B:F");
    const auto [a, b] = parse_pair(spec, args.substr(0, sep));
    const auto fraction = parse_unit_fraction(args.substr(sep + 1));
    if (!fraction) reject(spec, fmt::format("factor '{}' is not a decimal in (0, 1]", args.substr(sep + 1)));
    refuse_second_on_link(
        spec, plan.link_slow, a, b, [](const auto&) { return true; },
        "one link-slow per link (factors do not multiply; give the one you mean)");
    plan.link_slow.push_back({a, b, static_cast<std::int64_t>(fraction->numerator),
                              static_cast<std::int64_t>(fraction->denominator), std::string(spec)});
  } else if (kind == "skew" && has_args) {
    once(plan.skew.has_value());
    const std::size_t sep = args.find(':');
    sim::device::LaunchSkewFault fault;
    fault.max = parse_time(spec, args.substr(0, sep));
    fault.seed = sep == std::string_view::npos ? 1 : parse_seed(spec, args.substr(sep + 1));
    fault.spec = std::string(spec);
    plan.skew = fault;
  } else if (kind == "corrupt" && has_args) {
    // A-B[@T][:SEED]: the seed comes last, after the optional time.
    const std::size_t sep = args.find(':');
    const std::string_view where = args.substr(0, sep);
    const std::size_t at = where.find('@');
    const auto [a, b] = parse_pair(spec, where.substr(0, at));
    sim::device::PacketCorruptFault fault{a, b, sim::SimTime::zero(), 1, std::string(spec)};
    if (at != std::string_view::npos) fault.at = parse_time(spec, where.substr(at + 1));
    if (sep != std::string_view::npos) fault.seed = parse_seed(spec, args.substr(sep + 1));
    refuse_second_on_link(
        spec, plan.corrupt, a, b, [&fault](const sim::device::PacketCorruptFault& other) { return other.at == fault.at; },
        "one corrupt per link and time (two from one time flip bits of the same packet, the same seed the same bit "
        "back); give the second another @T");
    plan.corrupt.push_back(fault);
  } else if (kind == "drop" && has_args) {
    once(plan.drop.has_value());
    plan.drop = parse_frame_fault(spec, args);
  } else if (kind == "dup" && has_args) {
    once(plan.dup.has_value());
    plan.dup = parse_frame_fault(spec, args);
  } else {
    reject(spec, kAccepted);
  }
  faults.specs.emplace_back(spec);
}

void require_fault_links_on(const RunFaults& faults, const topo::Topology& topology) {
  const sim::device::FaultPlan& plan = faults.plan;
  const auto require_link = [&](runtime::ChipId a, runtime::ChipId b, const std::string& spec) {
    for (const runtime::ChipId chip : {a, b}) {
      if (topology.has_chip(static_cast<topo::ChipId>(chip))) continue;
      const std::vector<topo::ChipId> ids = topology.chip_ids();
      const bool contiguous = !ids.empty() && static_cast<std::size_t>(ids.back() - ids.front() + 1) == ids.size();
      reject(spec, fmt::format("chip {} is not on {}; expected chips {}", chip, topology.name(),
                               contiguous ? fmt::format("{}..{}", ids.front(), ids.back())
                                          : fmt::format("{}", fmt::join(ids, ","))));
    }
    if (topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b)) != 0) return;
    reject(spec, fmt::format("chips {} and {} are not neighbours on {}; expected two linked chips (chip {}'s "
                             "neighbours: {})",
                             a, b, topology.name(), a,
                             fmt::join(topology.neighbours(static_cast<topo::ChipId>(a)), ",")));
  };
  for (const auto& f : plan.link_down) require_link(f.a, f.b, f.spec);
  for (const auto& f : plan.link_slow) require_link(f.a, f.b, f.spec);
  for (const auto& f : plan.corrupt) require_link(f.a, f.b, f.spec);
}

void require_data_for_corruption(const sim::device::FaultPlan& plan, bool no_data, std::string_view what,
                                 std::string_view command) {
  if (!no_data || plan.corrupt.empty()) return;
  throw UsageError(fmt::format("--fault: '{}' flips a bit of payload data, which {} does not carry; {} it without "
                               "--no-data",
                               plan.corrupt.front().spec, what, command));
}

}  // namespace cclmesh::cli
