#include "tools/cclmesh/session_traces.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/output_file.hpp"

namespace cclmesh::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOption = "--trace-dir";
// Not session-*.json: no client session made it, and no session is numbered 0.
constexpr std::string_view kStartupFile = "startup.json";

// A file an earlier server wrote (a session's, or a start-up that failed): a new server's
// files would replace some of them and mix with the rest.
bool written_by_a_server(const std::string& name) {
  return (name.starts_with("session-") && name.ends_with(".json")) || name == kStartupFile;
}

std::string_view failure_name(runtime::DeviceError::Kind kind) {
  switch (kind) {
    case runtime::DeviceError::Kind::Hang:
      return "hang";
    case runtime::DeviceError::Kind::Fault:
      return "fault";
    case runtime::DeviceError::Kind::Timeout:
      return "timeout";
  }
  return "unknown";
}

sim::trace::TraceLimits limits_of(std::size_t max_spans_per_track) {
  sim::trace::TraceLimits limits;
  limits.max_spans_per_track = max_spans_per_track;
  return limits;
}

// A directory this process can create files in, holding no session trace yet.
void require_trace_dir(const std::string& dir) {
  const auto refuse = [&](const std::string& why) {
    return UsageError(fmt::format("{}: cannot write session traces into '{}': {}", kOption, dir, why));
  };
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (!fs::exists(status)) throw refuse("no such directory");
  if (!fs::is_directory(status)) throw refuse("it is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw refuse(std::strerror(errno));
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (written_by_a_server(name)) {
      throw refuse(fmt::format("it already holds session traces ({}); give an empty directory, or move them", name));
    }
  }
  if (error) throw refuse(error.message());
}

}  // namespace

SessionTraces::SessionTraces(std::string dir, std::size_t max_spans_per_track)
    : dir_(std::move(dir)), recorder_(limits_of(max_spans_per_track)) {
  require_trace_dir(dir_);
}

std::string SessionTraces::path_of(std::uint64_t session) const {
  return (fs::path(dir_) / fmt::format("session-{:06}.json", session)).string();
}

std::string SessionTraces::startup_path() const { return (fs::path(dir_) / kStartupFile).string(); }

std::string SessionTraces::startup_failed(const std::string& asked, const runtime::DeviceError& error) {
  sim::trace::TraceInfo info{{"tool", "cclmesh serve"}};
  info.insert(info.end(), device_info_.begin(), device_info_.end());
  info.insert(info.end(),
              {{"asked", asked},
               {"startup", "the device's fabric start-up, before any client session: it did not complete, so no "
                           "session was served"},
               {"startup_ended", fmt::format("{}: the device did not start", failure_name(error.kind()))},
               {"time_base", "the device's clock: simulated time since the device was opened"},
               {"error", error.what()}});
  const std::string path = startup_path();
  write_output(path, sim::trace::to_trace_event_json(recorder_, info), kOption);
  return path;
}

void SessionTraces::session_started(std::uint64_t /*session*/, sim::SimTime device_now) {
  session_start_ = device_now;
  life_at_start_ = recorder_.life();
  recorder_.piece_started();
}

std::string SessionTraces::session_ended(std::uint64_t session, const std::string& how, sim::SimTime device_now) {
  sim::trace::TraceInfo info{{"tool", "cclmesh serve"}};
  info.insert(info.end(), device_info_.begin(), device_info_.end());
  const std::uint32_t resets = recorder_.life() - life_at_start_;
  info.insert(info.end(),
              {{"session", std::to_string(session)},
               {"session_ended", how},
               {"time_base", "the device's clock: simulated time since the device was opened or last reset; a reset "
                             "inside the session continues the timeline from a 'device reset' marker, where the new "
                             "life's clock starts"},
               {"device_life", std::to_string(life_at_start_)},
               {"resets_in_session", std::to_string(resets)},
               {"session_start_us", sim::trace::microseconds_text(session_start_)},
               {"session_end_us", sim::trace::microseconds_text(recorder_.life_offset() + device_now)}});
  const std::string path = path_of(session);
  const std::string json = sim::trace::to_trace_event_json(recorder_, info);
  recorder_.forget_recorded();
  write_output(path, json, kOption);
  return path;
}

}  // namespace cclmesh::cli
