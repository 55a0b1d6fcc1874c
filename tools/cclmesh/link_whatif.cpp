#include "tools/cclmesh/link_whatif.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/size_parse.hpp"

namespace cclmesh::cli {

namespace {

constexpr const char* kRateExpected =
    "expected a decimal with the unit GB/s (1e9 B/s) or Gb/s (1e9 bit/s), from 0.1 GB/s (about 1 Gb ethernet) to "
    "1000 GB/s (80x a Wormhole link, past any ethernet generation), e.g. 25GB/s or 200Gb/s";

// "12.5" -> 125 / 10: digits with at most 9 after the point, exactly.
struct Decimal {
  std::uint64_t digits = 0;
  std::uint64_t scale = 1;
  std::string_view unit;
};

bool parse_decimal(std::string_view text, Decimal& out) {
  std::size_t i = 0;
  bool any_digit = false;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (out.digits > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return false;
    out.digits = out.digits * 10 + static_cast<std::uint64_t>(c - '0');
    any_digit = true;
    if (point) {
      if (out.scale >= 1'000'000'000) return false;
      out.scale *= 10;
    }
  }
  if (!any_digit || (point && out.scale == 1)) return false;  // "", ".", "25."
  out.unit = text.substr(i);
  return true;
}

}  // namespace

std::int64_t parse_link_rate(std::string_view text, std::string_view option) {
  const auto reject = [&](std::string_view why) {
    return UsageError(fmt::format("{}: invalid rate '{}': {}; {}", option, text, why, kRateExpected));
  };
  Decimal number;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) throw reject("a sign is not accepted");
  if (!parse_decimal(text, number)) throw reject("not a decimal number");
  std::uint64_t bits_per_unit = 0;  // a rate in bits per second, so Gb/s stays exact
  if (number.unit == "GB/s") bits_per_unit = 8'000'000'000;
  else if (number.unit == "Gb/s") bits_per_unit = 1'000'000'000;
  else throw reject(number.unit.empty() ? "missing unit" : fmt::format("unknown unit '{}'", number.unit));
  __extension__ typedef unsigned __int128 Wide;
  const Wide bits = Wide{number.digits} * bits_per_unit;  // times scale
  const Wide bytes_scaled = bits / 8;
  const Wide bytes = (bytes_scaled + number.scale / 2) / number.scale;  // to the nearest byte per second
  if (bytes < static_cast<Wide>(kMinLinkRateBytesPerS)) throw reject("below the range");
  if (bytes > static_cast<Wide>(kMaxLinkRateBytesPerS)) throw reject("above the range");
  return static_cast<std::int64_t>(bytes);
}

sim::SimTime parse_link_latency(std::string_view text, std::string_view option) {
  const sim::SimTime latency =
      parse_sim_time(text, option, "a one-way latency from 200ns to 1ms with a unit ps, ns, us, ms or s, e.g. 2us");
  if (latency.ps() < kMinLinkLatencyPs || latency.ps() > kMaxLinkLatencyPs) {
    throw UsageError(fmt::format(
        "{}: latency '{}' is out of range; expected a one-way latency from 200ns (the chip model spends about 100 ns "
        "of a link's 600 ns in the ethernet cores, REFERENCE 1.7) to 1ms (200 km of fibre), e.g. 2us",
        option, text));
  }
  return latency;
}

void add_link_whatif_options(CLI::App& command, topo::LinkWhatIf& what_if) {
  command.add_option_function<std::string>(
      "--link-rate",
      [&what_if](const std::string& text) { what_if.rate_bytes_per_s = parse_link_rate(text, "--link-rate"); },
      "what-if: every ethernet link's rate per direction, e.g. 25GB/s or 200Gb/s (0.1..1000 GB/s; arch default: "
      "Wormhole 12.5, Blackhole 25); %line and linkbw are then of this rate")
      ->type_name("RATE");
  command.add_option_function<std::string>(
      "--link-latency",
      [&what_if](const std::string& text) { what_if.latency_ps = parse_link_latency(text, "--link-latency").ps(); },
      "what-if: every ethernet link's one-way latency, e.g. 2us or 600ns (200ns..1ms; arch default: Wormhole 600 "
      "ns, Blackhole 435 ns)")
      ->type_name("T");
}

std::string rate_text(std::int64_t bytes_per_s) {
  return fmt::format("{:g} GB/s", static_cast<double>(bytes_per_s) / 1e9);
}

std::string latency_text(std::int64_t ps) {
  if (ps >= 1'000'000) return fmt::format("{:g} us", static_cast<double>(ps) / 1e6);
  return fmt::format("{:g} ns", static_cast<double>(ps) / 1e3);
}

std::string link_whatif_text(const topo::LinkSpread& s) {
  // "6.25-12.5 GB/s"; latencies keep a unit each ("600 ns-2 us").
  std::string rates = rate_text(s.max_rate_bytes_per_s);
  if (s.min_rate_bytes_per_s != s.max_rate_bytes_per_s) {
    rates = fmt::format("{:g}-{}", static_cast<double>(s.min_rate_bytes_per_s) / 1e9, rates);
  }
  std::string latencies = latency_text(s.max_latency_ps);
  if (s.min_latency_ps != s.max_latency_ps) latencies = latency_text(s.min_latency_ps) + "-" + latencies;
  const std::string some =
      s.links_off_default == s.links ? "" : fmt::format("({} of {} off default) ", s.links_off_default, s.links);
  return fmt::format("what-if links {}{}, {} one way (arch default {}, {})", some, rates, latencies,
                     rate_text(s.default_rate_bytes_per_s), latency_text(s.default_latency_ps));
}

nlohmann::json link_whatif_json(const topo::LinkSpread& s) {
  const auto GBps = [](std::int64_t rate) { return static_cast<double>(rate) / 1e9; };
  const auto ns = [](std::int64_t ps) { return static_cast<double>(ps) / 1e3; };
  return {{"links_off_arch_default", s.links_off_default},
          {"system_links", s.links},
          {"rate_GBps", {{"min", GBps(s.min_rate_bytes_per_s)}, {"max", GBps(s.max_rate_bytes_per_s)}}},
          {"latency_ns", {{"min", ns(s.min_latency_ps)}, {"max", ns(s.max_latency_ps)}}},
          {"arch_rate_GBps", GBps(s.default_rate_bytes_per_s)},
          {"arch_latency_ns", ns(s.default_latency_ps)}};
}

}  // namespace cclmesh::cli
