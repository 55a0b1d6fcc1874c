#include "topologies/detail/yaml_reader.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "topologies/errors.hpp"

namespace cclmesh::topo::detail {

YAML::Node YamlReader::parse(std::string_view text) const {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}:{}: malformed YAML: {}", source_, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: malformed YAML: {}", source_, e.msg));
  }
}

void YamlReader::fail(const YAML::Node& at, std::string_view entry,
                      std::string_view problem) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  if (mark.line >= 0) {
    throw InputError(fmt::format("{}:{}: {}: {}", source_, mark.line + 1, entry, problem));
  }
  throw InputError(fmt::format("{}: {}: {}", source_, entry, problem));
}

YAML::Node YamlReader::require(const YAML::Node& map, std::string_view key,
                               std::string_view entry) const {
  expect_map(map, entry);
  YAML::Node value = map[std::string(key)];
  if (!value.IsDefined()) fail(map, entry, fmt::format("missing key '{}'", key));
  return value;
}

void YamlReader::expect_map(const YAML::Node& node, std::string_view entry) const {
  if (!node.IsMap()) fail(node, entry, fmt::format("got {}; expected a map", describe(node)));
}

void YamlReader::expect_sequence(const YAML::Node& node, std::string_view entry) const {
  if (!node.IsSequence()) fail(node, entry, fmt::format("got {}; expected a list", describe(node)));
}

void YamlReader::expect_keys(const YAML::Node& map, std::string_view entry,
                             std::initializer_list<std::string_view> allowed) const {
  expect_map(map, entry);
  std::set<std::string> seen;
  for (const auto& item : map) {
    const std::string key = to_string(item.first, entry);
    if (!seen.insert(key).second) {
      fail(item.first, entry, fmt::format("key '{}' appears twice; expected it once", key));
    }
    bool known = false;
    for (const auto allowed_key : allowed) known = known || key == allowed_key;
    if (known) continue;
    std::string list;
    for (const auto allowed_key : allowed) {
      list += list.empty() ? "" : ", ";
      list += allowed_key;
    }
    fail(item.first, entry, fmt::format("unknown key '{}'; expected one of {}", key, list));
  }
}

std::int64_t YamlReader::to_int(const YAML::Node& node, std::string_view entry, std::int64_t min,
                                std::int64_t max) const {
  if (!node.IsScalar()) {
    fail(node, entry,
         fmt::format("got {}; expected an integer in {}..{}", describe(node), min, max));
  }
  const std::string& text = node.Scalar();
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value < min ||
      value > max) {
    fail(node, entry, fmt::format("got {}; expected an integer in {}..{}", quote_scalar(text), min, max));
  }
  return value;
}

std::uint64_t YamlReader::to_uint(const YAML::Node& node, std::string_view entry) const {
  if (!node.IsScalar()) {
    fail(node, entry, fmt::format("got {}; expected a non-negative integer", describe(node)));
  }
  const std::string& text = node.Scalar();
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
    fail(node, entry, fmt::format("got {}; expected a non-negative integer", quote_scalar(text)));
  }
  return value;
}

bool YamlReader::to_bool(const YAML::Node& node, std::string_view entry) const {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  fail(node, entry, fmt::format("got {}; expected true or false", describe(node)));
}

std::string YamlReader::to_string(const YAML::Node& node, std::string_view entry) const {
  if (!node.IsScalar()) fail(node, entry, fmt::format("got {}; expected a string", describe(node)));
  return node.Scalar();
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("{}: is a directory; expected a YAML file", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: cannot read the file", path.string()));
  return text.str();
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "an empty value";
    case YAML::NodeType::Scalar:
      return quote_scalar(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "nothing";
}

std::string quote_scalar(std::string_view text) {
  constexpr std::size_t kShown = 60;
  std::size_t end = text.size();
  if (end > kShown + 4) {  // a few bytes over the limit are shown rather than elided
    end = kShown;
    // Not inside a UTF-8 sequence: back off its continuation bytes.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0u) == 0x80u) --end;
  }
  std::string shown(text.substr(0, end));
  for (char& c : shown) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (end == text.size()) return fmt::format("'{}'", shown);
  return fmt::format("'{}...' ({} bytes)", shown, text.size());
}

}  // namespace cclmesh::topo::detail
