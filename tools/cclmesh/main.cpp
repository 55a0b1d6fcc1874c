// cclmesh command line: `cclmesh run | sweep | topo ...`. Bad input prints one line and exits 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "topologies/data_paths.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"
#include "tools/cclmesh/unknown_option_message.hpp"

namespace {

// CLI11 says "--size: At Most 1 required but received 2" of an option given twice, naming neither
// the values nor what to do (bug bash, session 31): the values given, and that it is taken once.
std::optional<std::string> repeated_option_message(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  if (e.get_name() != "ArgumentMismatch" || what.find(": At Most 1 required but received ") == std::string::npos) {
    return std::nullopt;
  }
  const std::string name = what.substr(0, what.find(':'));
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      if (option->get_name() != name || option->results().size() < 2) continue;
      std::string values;
      for (const std::string& value : option->results()) values += fmt::format("{}'{}'", values.empty() ? "" : ", ", value);
      return fmt::format("{}: given {} times ({}); expected it once", option->get_name(false, true),
                         option->results().size(), values);
    }
  }
  return std::nullopt;
}

// `cclmesh help [COMMAND]`, as git and pip take it, as `cclmesh [COMMAND] --help` (new-user pass,
// session 41: `cclmesh help run` said "The following argument was not expected: help"). A word
// after `help` that is not a command is left alone, so that it is said to be none.
std::vector<char*> help_word_as_flag(const CLI::App& app, int argc, char** argv) {
  static char help_flag[] = "--help";
  std::vector<char*> arguments(argv, argv + argc);
  if (argc < 2 || std::string(argv[1]) != "help") return arguments;
  arguments = {argv[0]};
  if (argc >= 3) arguments.push_back(argv[2]);
  bool names_a_command = argc == 2;
  for (const CLI::App* command : app.get_subcommands({})) names_a_command |= argc > 2 && command->get_name() == argv[2];
  if (names_a_command) arguments.push_back(help_flag);
  return arguments;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cclmesh::cli;
  CLI::App app{"cclmesh: collective communication on simulated and real Tenstorrent meshes", "cclmesh"};
  app.set_version_flag("--version", "cclmesh 0.1.0");
  app.require_subcommand(1);
  CommandOutcome outcome;
  register_commands(app, outcome);
  // The process ends when its command returns: a run's device need not be torn down first.
  allow_exit_without_teardown();
  if (const auto problem = cclmesh::topo::data_dir_variable_problem()) {
    std::fprintf(stderr, "cclmesh: error: %s\n", problem->c_str());
    return kExitBadInput;
  }
  // What `cclmesh help` and CLI11 would take silently or misname (review, session 41).
  if (argc > 3 && std::string(argv[1]) == "help") {
    std::fprintf(stderr, "cclmesh: error: help: '%s' after the command; expected one command (cclmesh help %s)\n",
                 argv[3], argv[2]);
    return kExitBadInput;
  }
  const bool options_ended = std::find(argv + 1, argv + argc, std::string("--")) != argv + argc;
  std::vector<char*> arguments = help_word_as_flag(app, argc, argv);
  argc = static_cast<int>(arguments.size());
  argv = arguments.data();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // No command, a word that is not one, or an option before any command (`cclmesh --system t3k
    // ...`, the command left out; session 41): name the commands rather than CLI11's "A
    // subcommand is required".
    if (app.get_subcommands().empty()) {
      std::string commands;
      for (const CLI::App* command : app.get_subcommands({})) {
        commands += fmt::format("{}{}", commands.empty() ? "" : ", ", command->get_name());
      }
      if (argc == 1) {
        std::fprintf(stderr,
                     "cclmesh: error: no command given; expected one of %s (e.g. cclmesh run --system t3k --op "
                     "all_gather --size 1MiB; cclmesh --help lists them)\n",
                     commands.c_str());
      } else if (argv[1][0] == '-') {
        const std::string option = std::string(argv[1]).substr(0, std::string(argv[1]).find('='));
        std::string example;
        for (const CLI::App* command : app.get_subcommands({})) {
          for (const CLI::Option* taken : command->get_options()) {
            if (example.empty() && taken->check_name(option)) {
              example = fmt::format("e.g. cclmesh {} {} ...; ", command->get_name(), option);
            }
          }
        }
        std::fprintf(stderr,
                     "cclmesh: error: %s: given before any command; expected a command first, one of %s (%scclmesh "
                     "--help lists them)\n",
                     option.c_str(), commands.c_str(), example.c_str());
      } else {
        std::fprintf(stderr, "cclmesh: error: '%s' is not a command; expected one of %s (cclmesh --help lists them)\n",
                     argv[1], commands.c_str());
      }
      return kExitBadInput;
    }
    std::optional<std::string> message = repeated_option_message(app, e);
    if (!message && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !app.get_subcommands().empty()) {
      // CLI11 hands a command's arguments it does not take up to the top level, which throws.
      const CLI::App& command = *app.get_subcommands().back();
      const std::vector<std::string> unexpected = app.remaining(true);
      // After `--` CLI11 reads no option: `run -- --size 1MiB` is not an option before the command.
      if (options_ended) {
        message = fmt::format("--: ends the options, so what follows it ('{}') is read as none; expected the "
                              "options without '--' (`cclmesh {} --help` lists them)",
                              unexpected.empty() ? std::string() : unexpected.front(), command.get_name());
      }
      if (!message) message = unknown_option_message(command, unexpected);
      if (!message) message = stray_value_message(command, unexpected);
    }
    std::fprintf(stderr, "cclmesh: error: %s\n", message ? message->c_str() : e.what());
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "cclmesh: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const DeviceUnavailableError& e) {
    std::fprintf(stderr, "cclmesh: error: %s\n", e.what());
    return kExitDeviceUnavailable;
  } catch (const std::bad_alloc& e) {
    // Not a bug of cclmesh's but the host's memory, with the way out: a timing-only run's is a
    // smaller mesh or size, not the --no-data it was given; a --device client's its own.
    const CLI::Option* no_data =
        app.get_subcommands().empty() ? nullptr : app.get_subcommands().front()->get_option_no_throw("--no-data");
    const bool timing_only = no_data != nullptr && no_data->count() > 0;
    std::fprintf(stderr, "cclmesh: error: %s\n", out_of_host_memory_message(e, timing_only));
    return kExitInternalError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cclmesh: internal error: %s\n", e.what());
    return kExitInternalError;
  }
  return outcome.exit_code;
}
