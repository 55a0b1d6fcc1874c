#include "tools/bench/calibration_csv.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/tokenizer.hpp>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::bench {
namespace {

using Tokenizer = boost::tokenizer<boost::escaped_list_separator<char>>;

// Where a field sits, for messages: "<file>:<line>: <column>".
struct FieldPlace {
  const std::string& file;
  std::size_t line;
  std::string column;
  std::string text() const { return fmt::format("{}:{}: {}", file, line, column); }
};

// A CSV record's fields, quotes removed and commas inside quotes kept (Boost's escaped list
// separator: ',' between fields, '"' quotes, '\' escapes).
// Boost's separator takes a quote left open as running to the record's end; a record is one line
// here, so an odd number of (unescaped) quotes is a quoted field not closed on its line.
bool has_open_quote(const std::string& record) {
  bool open = false;
  for (std::size_t i = 0; i < record.size(); ++i) {
    if (record[i] == '\\') {
      ++i;
    } else if (record[i] == '"') {
      open = !open;
    }
  }
  return open;
}

std::vector<std::string> split_record(const std::string& record, const std::string& file, std::size_t line) {
  if (has_open_quote(record)) {
    throw cli::UsageError(fmt::format("{}:{}: malformed CSV record (a quoted field is not closed on its line); "
                                      "expected comma-separated fields, quoted where they hold commas",
                                      file, line));
  }
  try {
    const Tokenizer fields(record, boost::escaped_list_separator<char>('\\', ',', '"'));
    return {fields.begin(), fields.end()};
  } catch (const boost::escaped_list_error& e) {
    throw cli::UsageError(
        fmt::format("{}:{}: malformed CSV record ({}); expected comma-separated fields, quoted where they hold commas",
                    file, line, e.what()));
  }
}

std::string without_carriage_return(std::string record) {
  if (!record.empty() && record.back() == '\r') record.pop_back();
  return record;
}

template <typename Number>
Number parse_number(const std::string& text, const FieldPlace& place, std::string_view expected) {
  Number value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc{} || stop != end) {
    throw cli::UsageError(fmt::format("{}: '{}' is not a number; expected {}", place.text(), text, expected));
  }
  return value;
}

std::uint64_t parse_positive_whole(const std::string& text, const FieldPlace& place, std::string_view expected) {
  const auto value = parse_number<std::uint64_t>(text, place, expected);
  if (value == 0) throw cli::UsageError(fmt::format("{}: '{}' is 0; expected {}", place.text(), text, expected));
  return value;
}

double parse_positive_decimal(const std::string& text, const FieldPlace& place, std::string_view expected) {
  const auto value = parse_number<double>(text, place, expected);
  if (!(value > 0.0)) throw cli::UsageError(fmt::format("{}: '{}' is not positive; expected {}", place.text(), text, expected));
  return value;
}

std::uint32_t parse_count(const std::string& text, const FieldPlace& place, std::uint32_t min, std::string_view expected) {
  const auto value = parse_number<std::uint64_t>(text, place, expected);
  if (value < min || value > 0xFFFF) {
    throw cli::UsageError(fmt::format("{}: '{}' is out of range; expected {}", place.text(), text, expected));
  }
  return static_cast<std::uint32_t>(value);
}

// The model's name for a topology or memory field, matched without regard to case ("DRAM").
std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string parse_choice(const std::string& text, const FieldPlace& place, const std::vector<std::string>& choices,
                         std::string_view what) {
  const std::string value = lower_case(text);
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    throw cli::UsageError(fmt::format("{}: '{}' is a {} the model has no run for; expected one of {}", place.text(),
                                      text, what, fmt::join(choices, ", ")));
  }
  return value;
}

// The column of each required name in the header; UsageError naming the first one missing.
std::map<std::string, std::size_t> required_column_indices(const std::vector<std::string>& header,
                                                           const std::string& file) {
  std::map<std::string, std::size_t> indices;
  for (const std::string& name : required_calibration_columns()) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      throw cli::UsageError(fmt::format("{}:1: {}: column missing from the header; expected the columns {}", file, name,
                                        fmt::join(required_calibration_columns(), ", ")));
    }
    indices[name] = static_cast<std::size_t>(it - header.begin());
  }
  return indices;
}

CalibrationRow parse_row(const std::vector<std::string>& fields, const std::map<std::string, std::size_t>& columns,
                         const std::string& file, std::size_t line) {
  const auto field = [&](const char* column) -> std::pair<const std::string&, FieldPlace> {
    return {fields[columns.at(column)], FieldPlace{file, line, column}};
  };
  CalibrationRow row;
  row.line = line;
  {
    const auto [text, place] = field("op");
    row.op = cli::parse_collective_op(text, place.text());
  }
  {
    const auto [text, place] = field("n_devices");
    row.n_devices = parse_count(text, place, 2, "a whole number of chips, 2 or more");
  }
  {
    const auto [text, place] = field("topology");
    row.topology = parse_choice(text, place, {"line", "ring"}, "topology");
  }
  {
    const auto [text, place] = field("num_links");
    row.num_links = parse_count(text, place, 1, "a whole number of links, 1 or more");
  }
  {
    const auto [text, place] = field("size_bytes");
    row.size_bytes = parse_positive_whole(text, place, "a whole number of bytes above 0");
  }
  {
    const auto [text, place] = field("time_us");
    row.time_us = parse_positive_decimal(text, place, "microseconds above 0");
  }
  {
    const auto [text, place] = field("busbw_GBps");
    row.busbw_GBps = parse_positive_decimal(text, place, "GB/s above 0");
  }
  {
    const auto [text, place] = field("memory");
    row.memory = parse_choice(text, place, {"dram", "l1"}, "memory");
  }
  return row;
}

}  // namespace

const std::vector<std::string>& required_calibration_columns() {
  static const std::vector<std::string> kColumns = {"op",         "n_devices", "topology",   "num_links",
                                                    "size_bytes", "time_us",   "busbw_GBps", "memory"};
  return kColumns;
}

std::vector<CalibrationRow> parse_calibration_csv(std::istream& in, const std::string& file_name) {
  std::string record;
  if (!std::getline(in, record)) {
    throw cli::UsageError(fmt::format("{}:1: the file is empty; expected a header row naming the columns {}", file_name,
                                      fmt::join(required_calibration_columns(), ", ")));
  }
  const std::vector<std::string> header = split_record(without_carriage_return(record), file_name, 1);
  const std::map<std::string, std::size_t> columns = required_column_indices(header, file_name);
  std::vector<CalibrationRow> rows;
  for (std::size_t line = 2; std::getline(in, record); ++line) {
    record = without_carriage_return(record);
    if (record.empty()) continue;
    const std::vector<std::string> fields = split_record(record, file_name, line);
    if (fields.size() != header.size()) {
      throw cli::UsageError(fmt::format("{}:{}: {} fields; expected {}, one for each column of the header (quote a "
                                        "field that holds commas)",
                                        file_name, line, fields.size(), header.size()));
    }
    rows.push_back(parse_row(fields, columns, file_name, line));
  }
  if (rows.empty()) {
    throw cli::UsageError(fmt::format("{}: no rows under the header; expected one measured collective a row", file_name));
  }
  return rows;
}

std::vector<CalibrationRow> read_calibration_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw cli::UsageError(fmt::format("{}: cannot be read; expected a calibration CSV (columns {})", path.string(),
                                      fmt::join(required_calibration_columns(), ", ")));
  }
  return parse_calibration_csv(in, path.string());
}

}  // namespace cclmesh::bench
