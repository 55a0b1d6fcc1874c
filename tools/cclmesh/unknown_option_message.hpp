#pragma once
// What an option a command does not take is, and the way out (bug bash, session 38): CLI11 said
// "The following arguments were not expected: ring --topo" of `run --topo ring` (a typo) and of
// `sweep --size 64K` (run's option), naming neither the command nor what to give instead.

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace cclmesh::cli {

// The message for `command`'s arguments it did not expect (CLI11's ExtrasError), or nullopt when
// none of them is an option (a stray value: CLI11's own message names it). Names the first
// unexpected option and the command, then the way out: what the command runs instead where
// another command owns the option (sweep --size, --trace, --report, --fault; run -b, -e, --csv,
// ...), else the command's option it most likely meant (a prefix of one, or at most 2 edits
// away), and where every option is listed. The command's own option, left over only when typed
// before the command (`cclmesh --system t3k run`), is said to go after it.
std::optional<std::string> unknown_option_message(const CLI::App& command, const std::vector<std::string>& unexpected);

// The message for `command`'s arguments it did not expect when none is an option: a value given
// without its option (`run --op all_gather 16MiB`, the --size left out; new-user pass, session
// 41: CLI11 said only "The following argument was not expected: 16MiB"). Names the value and the
// command, and the option it most likely belongs to where the value says (op names: --op; a size
// with its suffix: run's --size, sweep's -b / -e), never one already given.
std::string stray_value_message(const CLI::App& command, const std::vector<std::string>& unexpected);

// The long option of `command` closest to long option `typed` (the only one it is a prefix of, or one at
// most 2 edits away; ties: the first declared), or nullopt (for a short option or one under 3 letters).
std::optional<std::string> closest_option_name(const CLI::App& command, const std::string& typed);

}  // namespace cclmesh::cli
