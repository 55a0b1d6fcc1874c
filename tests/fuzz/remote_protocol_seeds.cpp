// Writes fuzz_remote_protocol's seeds (tests/data/fuzz/remote_protocol/seed-*): what a client
// sends on one connection, a few valid sessions encoded with the protocol's own encoder, the
// handles in them those the fuzzer's device gives (the same device, built the same way). Run
// again when kProtocolVersion changes, since every seed opens with a hello of that version:
//   build/tests/remote_protocol_seeds tests/data/fuzz/remote_protocol
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "tests/fuzz/fuzz_bodies.hpp"

namespace {

namespace remote = cclmesh::runtime::remote;
namespace rt = cclmesh::runtime;
using remote::Json;

// One client's bytes: frames appended in order.
class Session {
 public:
  Session() { send({{"type", remote::request::kHello}, {"protocol", remote::kProtocolName}, {"version", remote::kProtocolVersion}}); }
  void send(Json header, std::size_t blob_bytes = 0) {
    const std::vector<std::byte> frame = remote::frame_bytes(remote::to_wire(header));
    bytes_.insert(bytes_.end(), frame.begin(), frame.end());
    last_frame_ = frame.size();
    for (int i = 0; i < 8; ++i) bytes_[bytes_.size() - frame.size() + 8 + i] = std::byte((blob_bytes >> (8 * i)) & 0xFF);
    for (std::size_t i = 0; i < blob_bytes; ++i) bytes_.push_back(std::byte(i & 0xFF));
  }
  // A frame whose lead announces `blob_bytes` of data, none of which follows.
  void announce(std::string_view type, Json fields, std::uint64_t blob_bytes) {
    fields["type"] = type;
    send(std::move(fields));
    for (int i = 0; i < 8; ++i) bytes_[bytes_.size() - last_frame_ + 8 + i] = std::byte((blob_bytes >> (8 * i)) & 0xFF);
  }
  void call(std::string_view type, Json fields = Json::object(), std::size_t blob_bytes = 0) {
    fields["type"] = type;
    send(std::move(fields), blob_bytes);
  }
  void write(const std::filesystem::path& path, bool goodbye = true) {
    if (goodbye) call(remote::request::kGoodbye);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  }

 private:
  std::vector<std::byte> bytes_;
  std::size_t last_frame_ = 0;  // the last frame's lead and header
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: remote_protocol_seeds <directory>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  namespace req = remote::request;

  {  // Every query, no state.
    Session s;
    for (std::string_view type : {req::kTopology, req::kChips, req::kWorkerGrid, req::kProfileSize, req::kLinkTraffic,
                                  req::kDeviceTime, req::kDeviceEvents, req::kFaultEffects}) {
      s.call(type);
    }
    s.call(req::kProfile, {{"first_entry", 0}});
    s.call(req::kActiveEthernetChannels, {{"chip", 1}});
    s.write(dir / "seed-queries");
  }
  {  // A buffer's host I/O, direct and enqueued, then freed; a write refused (an unknown handle).
    cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n300(), cclmesh::fuzz::served_fuzz_device_options());
    const rt::BufferConfig config{rt::BufferType::Dram, 4096, 1024};
    const rt::BufferHandle buffer = device.create_buffer(config);
    Session s;
    s.call(req::kCreateBuffer, {{"config", remote::encode(config)}});
    s.call(req::kWriteBuffer, {{"chip", 0}, {"buffer", remote::encode(buffer)}}, 4096);
    s.call(req::kReadBuffer, {{"chip", 1}, {"buffer", remote::encode(buffer)}, {"size_bytes", 4096}});
    s.call(req::kEnqueueWriteBuffer, {{"chip", 1}, {"buffer", remote::encode(buffer)}}, 4096);
    s.call(req::kEnqueueReadBuffer, {{"chip", 0}, {"buffer", remote::encode(buffer)}, {"size_bytes", 4096}});
    s.call(req::kFinish);
    rt::BufferHandle unknown = buffer;
    unknown.id += 7;
    s.call(req::kWriteBuffer, {{"chip", 0}, {"buffer", remote::encode(unknown)}}, 64);
    s.call(req::kDeallocateBuffer, {{"buffer", remote::encode(buffer)}});
    s.write(dir / "seed-buffer-io");
  }
  {  // An all_gather on the line: its buffers and semaphore, the workload, finish, then a reset.
    cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n300(), cclmesh::fuzz::served_fuzz_device_options());
    namespace ag = rt::ccl::all_gather;
    ag::Params p;
    p.input = rt::ccl::TensorSpec{{1, 1, 64, 128}, rt::ccl::DataType::Bfloat16, rt::ccl::Layout::Tile};
    p.dim = 3;
    p.topology = rt::ccl::CclTopology::Line;
    p.fabric = device.fabric();
    const rt::BufferConfig input = rt::ccl::interleaved_buffer_config(p.input, rt::BufferType::Dram);
    const rt::BufferConfig output =
        rt::ccl::interleaved_buffer_config(ag::output_spec(p, device.topology()), rt::BufferType::Dram);
    const std::vector<rt::CoreRange> cores = ag::semaphore_cores(p, device.topology());
    p.input_buffer = device.create_buffer(input);
    p.output_buffer = device.create_buffer(output);
    p.done_semaphore = device.create_global_semaphore(cores, rt::CoreKind::Tensix, 0);
    Session s;
    s.call(req::kCreateBuffer, {{"config", remote::encode(input)}});
    s.call(req::kCreateBuffer, {{"config", remote::encode(output)}});
    s.call(req::kCreateGlobalSemaphore,
           {{"cores", remote::encode_core_ranges(cores)}, {"core_kind", remote::encode(rt::CoreKind::Tensix)}, {"initial_value", 0}});
    s.call(req::kEnqueueWorkloads, {{"workloads", Json::array({remote::encode(ag::build(p, device.topology()))})}});
    s.call(req::kFinish);
    s.call(req::kProfileSize);
    s.call(req::kProfile, {{"first_entry", 0}});
    s.call(req::kProfile, {{"first_entry", 1}});
    s.call(req::kLinkTraffic);
    s.call(req::kResetGlobalSemaphore, {{"semaphore", remote::encode(*p.done_semaphore)}, {"value", 0}});
    s.call(req::kFinish);
    s.call(req::kDeallocateGlobalSemaphore, {{"semaphore", remote::encode(*p.done_semaphore)}});
    s.call(req::kReset);
    s.write(dir / "seed-all-gather");
  }
  {  // Found by review (session 30): a 32 MiB buffer (any size fits a timing-only device) read
     // whole, and written with a frame announcing 32 MiB and sending none: the server allocated
     // both, past its 16 MiB limit on host bytes held for a client.
    cclmesh::sim::device::SimMeshDevice device(cclmesh::topo::build_n300(), cclmesh::fuzz::served_fuzz_device_options());
    const rt::BufferConfig config{rt::BufferType::Dram, std::uint64_t{32} << 20, 1024};
    const rt::BufferHandle buffer = device.create_buffer(config);
    Session read;
    read.call(req::kCreateBuffer, {{"config", remote::encode(config)}});
    read.call(req::kReadBuffer, {{"chip", 0}, {"buffer", remote::encode(buffer)}, {"size_bytes", config.size_bytes}});
    read.write(dir / "read-past-host-limit");
    Session write;
    write.call(req::kCreateBuffer, {{"config", remote::encode(config)}});
    write.announce(req::kWriteBuffer, {{"chip", 0}, {"buffer", remote::encode(buffer)}}, config.size_bytes);
    write.write(dir / "write-past-host-limit", false);
  }
  return 0;
}
