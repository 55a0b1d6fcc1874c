#include "tools/cclmesh/size_parse.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <charconv>
#include <limits>
#include <string>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

namespace {

struct Number {
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;      // digits after the point
  std::uint64_t fraction_scale = 1;  // 10^(number of fraction digits)
  std::string_view suffix;
};

bool split_number(std::string_view text, Number& out) {
  std::size_t i = 0;
  const auto digits = [&](std::uint64_t& value, std::uint64_t* scale) {
    const std::size_t begin = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
      value = value * 10 + digit;
      if (scale != nullptr) {
        if (*scale > std::numeric_limits<std::uint64_t>::max() / 10) return false;
        *scale *= 10;
      }
      ++i;
    }
    return i > begin;
  };
  if (!digits(out.whole, nullptr)) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits(out.fraction, &out.fraction_scale)) return false;
  }
  out.suffix = text.substr(i);
  return true;
}

// whole.fraction * multiplier, exactly; false on overflow or a non-integral result.
bool scale_exact(const Number& n, std::uint64_t multiplier, std::uint64_t& out) {
  __extension__ typedef unsigned __int128 Wide;
  const Wide total = (Wide{n.whole} * n.fraction_scale + n.fraction) * multiplier;
  if (total % n.fraction_scale != 0) return false;
  const Wide value = total / n.fraction_scale;
  if (value > std::numeric_limits<std::uint64_t>::max()) return false;
  out = static_cast<std::uint64_t>(value);
  return true;
}

// Why text is not a number split_number reads: a sign, or a number in exponent notation, said
// as such (the bug bash of session 28: `--size -1` said "not a number" and `1e6` "unknown
// suffix"). The caller says what is expected, once (session 32: a sign's reason said "expected a
// positive number" before the caller's own "expected ...").
const char* why_not_a_number(std::string_view text, const Number& number, bool split) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) return "a sign is not accepted";
  if (split && number.suffix.size() >= 2 && (number.suffix[0] == 'e' || number.suffix[0] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(number.suffix[1])) || number.suffix[1] == '-' || number.suffix[1] == '+')) {
    return "exponent notation is not accepted (write the digits, or a suffix)";
  }
  return split ? nullptr : "not a number";
}

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

}  // namespace

std::uint64_t parse_size_bytes(std::string_view text, std::string_view option) {
  const auto reject = [&](const char* why) {
    return UsageError(fmt::format("{}: invalid size '{}': {}; expected bytes with an optional suffix "
                                  "K, M, G, KiB, MiB or GiB (powers of two), e.g. 16MiB",
                                  option, text, why));
  };
  Number number;
  const bool split = split_number(text, number);
  if (const char* why = why_not_a_number(text, number, split)) throw reject(why);
  const std::string suffix = lower(number.suffix);
  std::uint64_t multiplier = 0;
  if (suffix.empty() || suffix == "b") multiplier = 1;
  else if (suffix == "k" || suffix == "kib" || suffix == "kb") multiplier = 1ull << 10;
  else if (suffix == "m" || suffix == "mib" || suffix == "mb") multiplier = 1ull << 20;
  else if (suffix == "g" || suffix == "gib" || suffix == "gb") multiplier = 1ull << 30;
  else throw reject("unknown suffix");
  std::uint64_t bytes = 0;
  if (!scale_exact(number, multiplier, bytes)) throw reject("not a whole number of bytes or too large");
  if (bytes == 0) throw reject("must be positive");
  return bytes;
}

sim::SimTime parse_sim_time(std::string_view text, std::string_view option, std::string_view expected) {
  const auto reject = [&](const char* why) {
    return UsageError(fmt::format("{}: invalid time '{}': {}; expected {}", option, text, why, expected));
  };
  Number number;
  const bool split = split_number(text, number);
  if (const char* why = why_not_a_number(text, number, split)) throw reject(why);
  const std::string unit = lower(number.suffix);
  std::uint64_t ps_per_unit = 0;
  if (unit == "ps") ps_per_unit = 1;
  else if (unit == "ns") ps_per_unit = 1'000;
  else if (unit == "us") ps_per_unit = 1'000'000;
  else if (unit == "ms") ps_per_unit = 1'000'000'000;
  else if (unit == "s") ps_per_unit = 1'000'000'000'000;
  else throw reject(unit.empty() ? "missing unit" : "unknown unit");
  std::uint64_t ps = 0;
  if (!scale_exact(number, ps_per_unit, ps) || ps > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw reject("not a whole number of picoseconds or too large");
  }
  return sim::SimTime::from_ps(static_cast<std::int64_t>(ps));
}

namespace {

// `text` as a finite number, or NaN when it is not one.
double seconds_value(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double seconds = copy.empty() ? NAN : std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(seconds) ? seconds : NAN;
}

}  // namespace

double parse_wall_seconds(std::string_view text, std::string_view option) {
  const double seconds = seconds_value(text);
  if (!(seconds > 0.0)) {
    throw UsageError(fmt::format("{}: invalid value '{}': expected a positive number of seconds, e.g. 30 or 0.5", option,
                                 text));
  }
  return seconds;
}

double parse_wait_seconds(std::string_view text, std::string_view option, std::string_view zero_means) {
  constexpr double kDay = 86400.0;
  const double seconds = seconds_value(text);
  if (!(seconds >= 0.0 && seconds <= kDay)) {
    throw UsageError(fmt::format("{}: invalid value '{}': expected a number of seconds from 0 ({}) to {:g}, "
                                 "e.g. 30 or 0.5",
                                 option, text, zero_means, kDay));
  }
  return seconds;
}

std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min,
                                 std::string_view what, std::string_view expected) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())) || error != std::errc{} ||
      end != text.data() + text.size() || value < min) {
    throw UsageError(fmt::format("{}: invalid {} '{}': expected {}", option, what, text, expected));
  }
  return value;
}

}  // namespace cclmesh::cli
