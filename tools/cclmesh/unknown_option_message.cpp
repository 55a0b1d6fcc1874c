#include "tools/cclmesh/unknown_option_message.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <map>
#include <utility>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"
#include "tools/cclmesh/size_parse.hpp"

namespace cclmesh::cli {

namespace {

// Why a command does not take another command's option, and what runs instead, where the bare
// "it is an option of X" would leave the user guessing how the two differ.
const std::map<std::pair<std::string, std::string>, std::string>& reasons_and_ways_out() {
  static const std::map<std::pair<std::string, std::string>, std::string> kReasons = {
      {{"sweep", "--size"},
       "a sweep runs the sizes -b MIN to -e MAX by -f F, so give -b and -e the same size for one point, or run "
       "one size with `cclmesh run --size`"},
      {{"sweep", "--trace"}, "a sweep writes no per-point trace; trace the point you want with `cclmesh run --trace`"},
      {{"sweep", "--trace-limit"},
       "a sweep writes no per-point trace; trace the point you want with `cclmesh run --trace`"},
      {{"sweep", "--report"},
       "a sweep writes no per-point report, --plot draws its busbw; report the point you want with `cclmesh run "
       "--report`"},
      {{"sweep", "--fault"},
       "a sweep runs without faults; run a size under faults with `cclmesh run --fault`, or sweep a faulted served "
       "device, `cclmesh serve --fault ...` then `cclmesh sweep --device`"},
  };
  return kReasons;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "--topo=ring" names the option --topo; "-j4" names -j.
std::string option_part(const std::string& argument) {
  if (argument.rfind("--", 0) == 0) return argument.substr(0, argument.find('='));
  return argument.substr(0, 2);
}

bool takes_option(const CLI::App& command, const std::string& name) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->check_name(name)) return true;
  }
  return false;
}

// The other command that takes the option, first in the order they were declared.
std::optional<std::string> command_taking(const CLI::App& command, const std::string& name) {
  const CLI::App* parent = command.get_parent();
  if (parent == nullptr) return std::nullopt;
  for (const CLI::App* other : parent->get_subcommands({})) {
    if (other != &command && takes_option(*other, name)) return other->get_name();
  }
  return std::nullopt;
}

// Whether `command` takes the option `name` and it was not given already (a value after one given
// is not its: `--size 1MiB --chips 0 4` did not leave out --size).
bool takes_option_not_given(const CLI::App& command, const std::string& name) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->check_name(name)) return option->count() == 0;
  }
  return false;
}

// Whether `value` is what --op takes: op names, comma-separated (a word with a '_' that is no op,
// such as link_down, is not guessed to be one; review, session 41).
bool names_ops(const std::string& value) {
  try {
    parse_collective_op_list(value, "--op");
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

// Whether `value` is a size with its suffix (16MiB; not a bare 4, which could be a chip, a link
// count, a root ..., nor 5s, which is no size).
bool is_size_with_suffix(const std::string& value) {
  if (value.empty() || std::isalpha(static_cast<unsigned char>(value.back())) == 0) return false;
  try {
    parse_size_bytes(value, "--size");
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

// The option a stray value most likely belongs to, with the value, or "" when it does not say:
// ops' names are --op's, and a size is run's --size or sweep's -b / -e, whichever is not given.
std::string option_for_value(const CLI::App& command, const std::string& value) {
  if (names_ops(value) && takes_option_not_given(command, "--op")) {
    // run takes one op (its --op refuses a list): the first, or the sweep that takes them all.
    const std::size_t comma = value.find(',');
    if (comma != std::string::npos && command.get_name() == "run") {
      return fmt::format("--op {} (one op a run; `cclmesh sweep --op {}` runs each)", value.substr(0, comma), value);
    }
    return fmt::format("--op {}", value);
  }
  if (!is_size_with_suffix(value)) return "";
  if (takes_option_not_given(command, "--size")) return fmt::format("--size {}", value);
  const bool min_open = takes_option_not_given(command, "-b");
  const bool max_open = takes_option_not_given(command, "-e");
  if (min_open && max_open) return fmt::format("-b {} or -e {}", value, value);
  if (min_open) return fmt::format("-b {}", value);
  if (max_open) return fmt::format("-e {}", value);
  return "";
}

}  // namespace

std::optional<std::string> closest_option_name(const CLI::App& command, const std::string& typed) {
  // A short option's one letter is a couple of edits from any short name: no guess.
  if (typed.rfind("--", 0) != 0 || typed.size() < 5) return std::nullopt;
  const std::string bare = typed.substr(2);
  std::vector<std::string> prefixed;
  std::optional<std::string> nearest;
  std::size_t nearest_distance = 3;  // at most 2 edits
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (name.rfind(bare, 0) == 0) prefixed.push_back("--" + name);
      const std::size_t distance = edit_distance(bare, name);
      if (distance < nearest_distance) {
        nearest_distance = distance;
        nearest = "--" + name;
      }
    }
  }
  if (prefixed.size() == 1) return prefixed.front();
  return nearest;
}

std::optional<std::string> unknown_option_message(const CLI::App& command, const std::vector<std::string>& unexpected) {
  const auto first_option = std::find_if(unexpected.begin(), unexpected.end(), [](const std::string& argument) {
    return argument.size() >= 2 && argument[0] == '-' && (argument[1] < '0' || argument[1] > '9');
  });
  if (first_option == unexpected.end()) return std::nullopt;
  const std::string name = option_part(*first_option);
  const std::string& command_name = command.get_name();
  // The command's own option is left over only when it came before the command (`cclmesh --system
  // t3k run ...`; review, session 41: said "not an option of `cclmesh run`, it is `cclmesh sweep`'s").
  if (takes_option(command, name)) {
    return fmt::format("{}: given before the command; expected after it, e.g. cclmesh {} {} ... (`cclmesh {} --help` "
                       "lists its options)",
                       name, command_name, name, command_name);
  }
  std::string message = fmt::format("{}: not an option of `cclmesh {}`", name, command_name);
  const auto reason = reasons_and_ways_out().find({command_name, name});
  if (reason != reasons_and_ways_out().end()) {
    message += fmt::format(": {}", reason->second);
  } else if (const std::optional<std::string> other = command_taking(command, name)) {
    message += fmt::format(", it is `cclmesh {}`'s", *other);
  } else if (const std::optional<std::string> meant = closest_option_name(command, name)) {
    message += fmt::format("; did you mean {}?", *meant);
  }
  return message + fmt::format(" (`cclmesh {} --help` lists its options)", command_name);
}

std::string stray_value_message(const CLI::App& command, const std::vector<std::string>& unexpected) {
  const std::string value = unexpected.empty() ? std::string() : unexpected.front();
  const std::string& command_name = command.get_name();
  const std::string meant = option_for_value(command, value);
  return fmt::format("'{}': a value without its option; `cclmesh {}` takes each value after the option it sets{} "
                     "(`cclmesh {} --help` lists its options)",
                     value, command_name, meant.empty() ? "" : fmt::format(": did you mean {}?", meant), command_name);
}

}  // namespace cclmesh::cli
