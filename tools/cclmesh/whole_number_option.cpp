#include "tools/cclmesh/whole_number_option.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <string>

namespace cclmesh::cli {

CLI::Validator whole_number_in(std::int64_t min, std::int64_t max, std::string_view type, std::string_view why) {
  return CLI::Validator(
      [min, max, why = std::string(why)](std::string& value) -> std::string {
        if (value.empty()) return "";  // refused by the empty-value check, in its words
        std::int64_t number = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, number);
        const bool digits_only = value.find_first_not_of("0123456789") == std::string::npos;
        if (!digits_only || ec == std::errc::invalid_argument || ptr != end) {
          return fmt::format("'{}' is not a whole number; expected {} to {}", value, min, max);
        }
        if (ec == std::errc::result_out_of_range || number < min || number > max) {
          return fmt::format("{} is out of range; expected {} to {}{}{}", value, min, max, why.empty() ? "" : ": ",
                             why);
        }
        value = std::to_string(number);  // what CLI11 converts next: "0150" would read as octal
        return "";
      },
      fmt::format("{} in [{} - {}]", type, min, max));
}

}  // namespace cclmesh::cli
