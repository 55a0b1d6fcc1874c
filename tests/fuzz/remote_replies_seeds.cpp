// Writes fuzz_remote_replies' seeds (tests/data/fuzz/remote_replies/seed-*): what a server
// sends a client running remote_client_script (fuzz_bodies.hpp), recorded in the fuzz input's
// record format while the script runs against the peer answering each request with the
// server's own ServedRequests on a simulated n300, as `cclmesh serve --system n300` would. Run
// again when kProtocolVersion changes, since every seed opens with a hello reply of that version:
//   build/tests/remote_replies_seeds tests/data/fuzz/remote_replies
// It also writes idle-timeout-past-the-clock, a finding kept as a seed-shaped session (below).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "runtime/device/profile_range.hpp"
#include "tests/fuzz/fuzz_bodies.hpp"

namespace {

namespace remote = cclmesh::runtime::remote;
namespace rt = cclmesh::runtime;
namespace fuzz = cclmesh::fuzz;
using remote::Json;

// A fuzz input being written: records, each also sent to the client as the body would send it.
class Recording {
 public:
  // The reply `header` (and `data_bytes` of data when not 0) as one record; its bytes on the wire.
  std::vector<std::byte> reply(const Json& header, std::uint64_t data_bytes = 0) {
    std::string record;
    if (!bytes_.empty()) record += fuzz::kReplySeparator;
    const std::size_t first = record.size();
    record += static_cast<char>(data_bytes == 0 ? 0 : 1);
    if (data_bytes != 0) {
      for (int i = 0; i < 8; ++i) record += static_cast<char>((data_bytes >> (8 * i)) & 0xFF);
    }
    for (const std::uint8_t b : remote::to_wire(header)) record += static_cast<char>(b);
    if (record.find(fuzz::kReplySeparator, first) != std::string::npos) {
      throw std::logic_error("a reply holds the record separator; the seed would not replay");
    }
    bytes_ += record;
    const auto* begin = reinterpret_cast<const std::uint8_t*>(record.data() + first);
    return fuzz::remote_reply_stream(std::span(begin, record.size() - first));
  }
  void write(const std::filesystem::path& path) const { std::ofstream(path, std::ios::binary) << bytes_; }

 private:
  std::string bytes_;
};

Json ok_reply() { return Json{{"type", remote::reply::kOk}}; }

// Runs the script against a served simulated n300 (`data_mode` as `serve` with or without
// --no-data), each reply passed through `shape` (which may replace it), and writes the seed.
template <class Shape>
void record_session(const std::filesystem::path& path, remote::ServedDataMode data_mode, Shape shape) {
  cclmesh::sim::device::SimMeshDeviceOptions device_options = fuzz::served_fuzz_device_options();
  device_options.data_mode = data_mode == remote::ServedDataMode::TimingOnly ? cclmesh::sim::DataMode::TimingOnly
                                                                            : cclmesh::sim::DataMode::Functional;
  cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n300(), device_options);
  remote::RemoteServerOptions options;
  options.description = "simulated n300 (fuzz seed)";
  options.system_name = "n300";
  options.data_mode = data_mode;
  options.max_enqueued_host_bytes = std::uint64_t{16} << 20;
  remote::ServedRequests requests(device, options);
  Recording recording;
  bool greeted = false;
  fuzz::ScriptedPeer& peer = fuzz::remote_replies_peer();
  peer.answer_each([&](const fuzz::ScriptedPeer::Request& request) {
    if (!greeted) {
      greeted = true;
      requests.session_begun();
      return shape(recording, remote::request::kHello, requests.hello(request.header), 0);
    }
    const Json json = remote::from_wire(request.header);
    const std::string type = remote::string_field(json, "type", "request");
    if (type == remote::request::kGoodbye) return shape(recording, type, ok_reply(), 0);
    std::vector<std::byte> blob = request.blob;
    std::vector<std::byte> reply_blob;
    const Json reply = requests.handle(json, blob, reply_blob);
    return shape(recording, type, reply, reply_blob.size());
  });
  fuzz::remote_client_script(peer.port());
  peer.join();
  recording.write(path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: remote_replies_seeds <directory>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const auto as_served = [](Recording& r, std::string_view, const Json& reply, std::uint64_t data_bytes) {
    return r.reply(reply, data_bytes);
  };
  // The whole script served, functional and timing-only.
  record_session(dir / "seed-session", remote::ServedDataMode::Functional, as_served);
  record_session(dir / "seed-session-timing-only", remote::ServedDataMode::TimingOnly, as_served);
  // A profile with entries (the script runs no kernels): two, one with a ready time.
  record_session(dir / "seed-profile", remote::ServedDataMode::Functional,
                 [](Recording& r, std::string_view type, const Json& reply, std::uint64_t data_bytes) {
                   if (type == remote::request::kProfileSize) return r.reply(Json{{"type", remote::reply::kOk}, {"size", 2}});
                   if (type != remote::request::kProfile) return r.reply(reply, data_bytes);
                   rt::KernelProfile first{0, rt::CoreKind::Tensix, {1, 2}, "all_gather:reader", 1000, 5000, std::nullopt};
                   rt::KernelProfile second{1, rt::CoreKind::Ethernet, {9, 0}, "all_gather:edm", 1200, 5400, 1100};
                   return r.reply(Json{{"type", remote::reply::kOk},
                                       {"profile", Json::array({remote::encode(first), remote::encode(second)})}});
                 });
  // A heartbeat ("working") before every reply, as a server sends while a call runs.
  record_session(dir / "seed-working", remote::ServedDataMode::Functional,
                 [](Recording& r, std::string_view, const Json& reply, std::uint64_t data_bytes) {
                   std::vector<std::byte> bytes = r.reply(Json{{"type", remote::reply::kWorking}});
                   const std::vector<std::byte> rest = r.reply(reply, data_bytes);
                   bytes.insert(bytes.end(), rest.begin(), rest.end());
                   return bytes;
                 });
  // Every call after the topology refused, in turn with each kind of error reply a server sends.
  int refused = 0;
  record_session(dir / "seed-error-replies", remote::ServedDataMode::Functional,
                 [&](Recording& r, std::string_view type, const Json& reply, std::uint64_t data_bytes) {
                   if (type == remote::request::kHello || type == remote::request::kTopology ||
                       type == remote::request::kGoodbye) {
                     return r.reply(reply, data_bytes);
                   }
                   std::exception_ptr errors[] = {
                       std::make_exception_ptr(rt::DeviceError(rt::DeviceError::Kind::Hang, "hang report")),
                       std::make_exception_ptr(rt::DeviceError(rt::DeviceError::Kind::Fault, "fault report")),
                       std::make_exception_ptr(rt::DeviceError(rt::DeviceError::Kind::Timeout, "timeout report")),
                       std::make_exception_ptr(std::invalid_argument("invalid argument")),
                       std::make_exception_ptr(rt::ProfileEntriesDroppedError("entries dropped")),
                       std::make_exception_ptr(rt::WorkloadPlacementError("does not fit")),
                       std::make_exception_ptr(cclmesh::topo::InputError("bad topology")),
                       std::make_exception_ptr(remote::ProtocolError("not accepted")),
                       std::make_exception_ptr(std::runtime_error("other")),
                   };
                   const std::exception_ptr error = errors[refused++ % std::size(errors)];
                   return r.reply(remote::error_reply(error));
                 });
  // A hello whose idle timeout is past what the host clock holds (INT64_MAX ms): session 32's
  // finding (it overflowed the client's idle comparison), written here rather than kept as the
  // fuzzer found it so that it follows the hello's fields as the protocol grows; the client
  // refuses the hello (RemoteMeshDevice.HelloIdleTimeoutPastTheHostClockIsRefused).
  record_session(dir / "idle-timeout-past-the-clock", remote::ServedDataMode::Functional,
                 [](Recording& r, std::string_view type, const Json& reply, std::uint64_t data_bytes) {
                   if (type != remote::request::kHello) return r.reply(reply, data_bytes);
                   Json past_the_clock = reply;
                   past_the_clock["idle_timeout_ms"] = std::numeric_limits<std::int64_t>::max();
                   return r.reply(past_the_clock);
                 });
  // The hello turned away: the server is busy with another client's session.
  record_session(dir / "seed-busy", remote::ServedDataMode::Functional,
                 [](Recording& r, std::string_view, const Json&, std::uint64_t) {
                   return r.reply(remote::error_reply(std::make_exception_ptr(
                       remote::ServerBusyError("the server is serving another client's session"))));
                 });
  return 0;
}
