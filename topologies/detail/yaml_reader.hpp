#pragma once
// Reading YAML with messages that point at the problem: every failure is an InputError of the
// form "<file>:<line>: <entry>: <problem>; expected <what>". yaml-cpp is the parser; this only
// adds strict scalar conversions (no silent truncation, no "0x..." read as 0) and the context.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace cclmesh::topo::detail {

class YamlReader {
 public:
  // source is what messages name: a file path, or "<string>" for in-memory text.
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  // Throws InputError "<source>:<line>:<col>: malformed YAML: ..." on a syntax error.
  YAML::Node parse(std::string_view text) const;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view entry,
                         std::string_view problem) const;

  // `key` of `map`, which must be a map; fails when the key is missing.
  YAML::Node require(const YAML::Node& map, std::string_view key, std::string_view entry) const;
  void expect_map(const YAML::Node& node, std::string_view entry) const;
  void expect_sequence(const YAML::Node& node, std::string_view entry) const;
  // Fails on a key of map outside `allowed` (a typo would otherwise be ignored silently).
  void expect_keys(const YAML::Node& map, std::string_view entry,
                   std::initializer_list<std::string_view> allowed) const;

  std::int64_t to_int(const YAML::Node& node, std::string_view entry, std::int64_t min,
                      std::int64_t max) const;
  std::uint64_t to_uint(const YAML::Node& node, std::string_view entry) const;
  bool to_bool(const YAML::Node& node, std::string_view entry) const;
  std::string to_string(const YAML::Node& node, std::string_view entry) const;

 private:
  std::string source_;
};

// The whole file; throws InputError "<path>: cannot read ..." when it cannot.
std::string read_text_file(const std::filesystem::path& path);

// A short rendering of a node for messages: the scalar (quoted), or "a map" / "a list".
std::string describe(const YAML::Node& node);

// A scalar quoted for a message: 'text', or its first 60 bytes and "...' (N bytes)" when longer,
// line breaks and tabs shown as spaces, so one message line stays one line whatever the file
// holds (bug bash, session 28: `--system big.txt`, 200000 lines of numbers, is one YAML scalar,
// and its error quoted all 1.3 MB of it).
std::string quote_scalar(std::string_view text);

}  // namespace cclmesh::topo::detail
