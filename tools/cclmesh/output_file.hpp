#pragma once
// Writes an output file whole or not at all: a regular file is written to a hidden temporary
// beside it and renamed over it, so a failure never leaves a half-written file; a symlink's
// target is the file replaced (the link stays); a pipe or device (/dev/stdout, a shell's
// >(...)) is written in place. "-" means standard output; a path naming the file this process's
// stdout or stderr is open on (/dev/stdout while stdout goes to a file, or that file's name) is
// written through that stream, after what it already carries.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cclmesh::cli {

void write_output(const std::string& path, std::string_view content, std::string_view option);

// Throws UsageError naming `option` and the path when write_output could never write it (a
// directory, a missing or read-only directory): run before simulating, so a bad path costs
// no run. "-" passes.
void check_output_path(const std::string& path, std::string_view option);

// Throws UsageError naming `option` when `path` ends in an extension other than those given (any
// case; "-" and a name without an extension pass): the file holds `format`, and a viewer that goes
// by the name would not open it (bug bash, session 38: `sweep --plot x.png` wrote SVG into x.png).
void require_output_extension(const std::string& path, std::string_view option,
                              const std::vector<std::string_view>& extensions, std::string_view format);

// Throws UsageError when two of the given (path, option) outputs name one file (compared
// lexically normalised; empty ones are skipped): the last written would replace the other. Two
// given "-" (stdout) are refused too: their contents would be printed one after the other.
void require_distinct_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs);

}  // namespace cclmesh::cli
