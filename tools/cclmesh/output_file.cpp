#include "tools/cclmesh/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

namespace {

namespace fs = std::filesystem;

UsageError cannot_write(std::string_view option, const std::string& path, const std::string& why) {
  return UsageError(fmt::format("{}: cannot write '{}': {}", option, path, why));
}

// The file a write replaces: a symlink's target (resolved through every link), so the link the
// user made stays a link; the path itself otherwise.
fs::path replaced_file(const std::string& path) {
  std::error_code error;
  if (!fs::is_symlink(fs::symlink_status(path, error))) return path;
  const fs::path target = fs::canonical(path, error);
  return error ? fs::path(path) : target;  // a dangling link is replaced like a missing file
}

// What the path names, refused as a UsageError naming `option` when it can never be written:
// a directory, or a file in a directory that does not exist or cannot be written.
void require_writable(const std::string& path, std::string_view option) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status)) throw cannot_write(option, path, "it is a directory; expected a file name");
  if (fs::exists(status) && ::access(path.c_str(), W_OK) != 0) throw cannot_write(option, path, std::strerror(errno));
  if (fs::exists(status) && !fs::is_regular_file(status)) return;  // a pipe or device, written in place
  // A regular file is replaced by renaming a temporary over it, which needs its directory.
  const fs::path target = replaced_file(path);
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(parent, error)) {
    throw cannot_write(option, path, fmt::format("no directory '{}'", parent.string()));
  }
  if (::access(parent.c_str(), W_OK) != 0) throw cannot_write(option, path, std::strerror(errno));
  // access() answers from the mode bits, which root passes everywhere: a directory that takes no
  // new file all the same (/proc, an NFS export that squashes root) was found only when the
  // result was written, after the whole run (bug bash, session 44: `--json /proc/r.json`). So a
  // file is made there and removed, under a hidden name carrying the process id, as the temporary.
  const fs::path probe = parent / fmt::format(".{}.cclmesh-{}.probe", target.filename().string(), ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return;  // made, so the directory takes files
    throw cannot_write(option, path, std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

// The standard stream whose open file `path` names (the same file: /dev/stdout while stdout goes to
// a file, or the file's own name), or null. Such a path is written through the stream, after
// what the stream already carries, as on a terminal: replacing the file by a renamed temporary
// would drop what was printed before (the table, a `>>` log's earlier lines; bug bash, session 31).
std::ostream* own_standard_stream(const std::string& path) {
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) return nullptr;
  const auto is_open_as = [&named](int fd) {
    struct stat open {};
    return ::fstat(fd, &open) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino;
  };
  if (is_open_as(STDOUT_FILENO)) return &std::cout;
  if (is_open_as(STDERR_FILENO)) return &std::cerr;
  return nullptr;
}

}  // namespace

void check_output_path(const std::string& path, std::string_view option) {
  if (path == "-" || own_standard_stream(path) != nullptr) return;
  require_writable(path, option);
}

void require_output_extension(const std::string& path, std::string_view option,
                              const std::vector<std::string_view>& extensions, std::string_view format) {
  if (path == "-") return;
  std::string extension = fs::path(path).extension().string();
  if (extension.empty()) return;
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (std::find(extensions.begin(), extensions.end(), extension) != extensions.end()) return;
  throw UsageError(fmt::format("{}: '{}' names a {} file, and {} writes {}; expected a name ending in {} (or no extension)",
                               option, path, extension, option, format, fmt::join(extensions, " or ")));
}

void require_distinct_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string& a = outputs[i].first;
      const std::string& b = outputs[j].first;
      if (a.empty() || b.empty()) continue;
      if (a == "-" || b == "-") {
        // Two outputs on stdout would come out one after the other, which no reader parses.
        if (a == b) {
          throw UsageError(fmt::format("{}: '-' (stdout) cannot be used together with {} -; write one of them "
                                       "to a file",
                                       outputs[i].second, outputs[j].second));
        }
        continue;
      }
      if (fs::path(a).lexically_normal() == fs::path(b).lexically_normal()) {
        throw UsageError(fmt::format("{}: '{}' is also {}'s file; give each output its own file", outputs[i].second, a,
                                     outputs[j].second));
      }
    }
  }
}

void write_output(const std::string& path, std::string_view content, std::string_view option) {
  std::ostream* const stream = path == "-" ? &std::cout : own_standard_stream(path);
  if (stream != nullptr) {
    if (stream == &std::cerr) std::cout.flush();  // what stdout printed before comes first where both go
    *stream << content;
    if (!content.empty() && content.back() != '\n') *stream << '\n';  // what follows starts its own line
    stream->flush();
    if (path != "-" && !*stream) throw cannot_write(option, path, "the standard stream it names failed");
    return;
  }
  require_writable(path, option);
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A pipe or a device (a shell's >(...), /dev/null, a terminal): written in place, as
    // renaming a file over it would replace the pipe or device itself.
    std::ofstream out(path, std::ios::binary);
    if (!out || !out.write(content.data(), static_cast<std::streamsize>(content.size())) || !out.flush()) {
      throw cannot_write(option, path, std::strerror(errno));
    }
    return;
  }
  // A regular or new file: the content goes to a temporary beside the file replaced, then is
  // renamed over it, so a failure never leaves a half-written file. The temporary's name is
  // hidden and carries the process id, so it never collides with a file of the user's.
  const fs::path target = replaced_file(path);
  const fs::path temporary =
      target.parent_path() / fmt::format(".{}.cclmesh-{}.tmp", target.filename().string(), ::getpid());
  const auto fail = [&](const std::string& why) {
    fs::remove(temporary, error);
    return cannot_write(option, path, why);
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw fail(std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) throw fail(std::strerror(errno));
  }
  // An existing file keeps its permissions (a private results file stays private).
  if (fs::is_regular_file(status)) {
    fs::permissions(temporary, status.permissions() & fs::perms::mask, fs::perm_options::replace, error);
    if (error) throw fail(error.message());
  }
  fs::rename(temporary, target, error);
  if (error) throw fail(error.message());
}

}  // namespace cclmesh::cli
