// The remote device protocol's structured fields: every value a MeshDevice call carries goes to
// CBOR and back unchanged (optional fields set and unset, maps, every enum value), a malformed
// message is refused naming the field, and every error kind crosses as its own type.
#include "runtime/remote/wire_codec.hpp"

#include <gtest/gtest.h>

#include "runtime/remote/remote_protocol.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::runtime::remote {
namespace {

// What crossed the wire: encode, CBOR bytes, decode.
template <class T, class Decode>
T round_trip(const T& value, Decode decode) {
  return decode(from_wire(to_wire(encode(value))), "value");
}

bool same(const KernelSpec& a, const KernelSpec& b) {
  return a.kernel == b.kernel && a.core_kind == b.core_kind && a.cores == b.cores && a.processor == b.processor &&
         a.noc == b.noc && a.compile_time_args == b.compile_time_args && a.runtime_args == b.runtime_args &&
         a.common_runtime_args == b.common_runtime_args && a.defines == b.defines;
}
bool same(const CircularBufferSpec& a, const CircularBufferSpec& b) {
  return a.cb_id == b.cb_id && a.cores == b.cores && a.num_pages == b.num_pages && a.page_size_bytes == b.page_size_bytes;
}
bool same(const SemaphoreSpec& a, const SemaphoreSpec& b) {
  return a.id == b.id && a.core_kind == b.core_kind && a.cores == b.cores && a.initial_value == b.initial_value;
}
template <class T>
bool same_list(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}
bool same(const Program& a, const Program& b) {
  return same_list(a.kernels, b.kernels) && same_list(a.circular_buffers, b.circular_buffers) &&
         same_list(a.semaphores, b.semaphores);
}
bool same(const KernelProfile& a, const KernelProfile& b) {
  return a.chip == b.chip && a.core_kind == b.core_kind && a.core == b.core && a.kernel == b.kernel &&
         a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.ready_ns == b.ready_ns;
}

KernelSpec ethernet_kernel() {
  KernelSpec k;
  k.kernel = "fabric_router";
  k.core_kind = CoreKind::Ethernet;
  k.cores = {{{8, 0}, {9, 0}}};
  k.processor = DataMovementProcessor::Riscv1;
  k.noc = NocIndex::Noc1;
  k.compile_time_args = {0, 1, 0xFFFFFFFFu};
  k.runtime_args[{8, 0}] = {7, 8, 9};
  k.runtime_args[{9, 0}] = {};
  k.common_runtime_args = {42};
  k.defines = {{"ROUTER", "1"}, {"DIRECTION", "east"}};
  return k;
}

TEST(WireCodec, CoresAndRanges) {
  const CoreCoord c{7, 0xFFFFFFFFu};
  EXPECT_EQ(round_trip(c, decode_core_coord), c);
  const CoreRange r{{1, 2}, {3, 4}};
  EXPECT_EQ(round_trip(r, decode_core_range), r);
  const std::vector<CoreRange> ranges{{{0, 0}, {7, 0}}, {{0, 1}, {0, 9}}};
  EXPECT_EQ(decode_core_ranges(from_wire(to_wire(encode_core_ranges(ranges))), "ranges"), ranges);
  for (CoreKind k : {CoreKind::Tensix, CoreKind::Ethernet}) EXPECT_EQ(round_trip(k, decode_core_kind), k);
}

TEST(WireCodec, BufferConfigsInterleavedAndEveryShardLayout) {
  BufferConfig interleaved{BufferType::Dram, 1ull << 33, 2048, TensorMemoryLayout::Interleaved, std::nullopt};
  EXPECT_EQ(round_trip(interleaved, decode_buffer_config), interleaved);
  for (TensorMemoryLayout layout :
       {TensorMemoryLayout::HeightSharded, TensorMemoryLayout::WidthSharded, TensorMemoryLayout::BlockSharded}) {
    for (ShardOrientation o : {ShardOrientation::RowMajor, ShardOrientation::ColMajor}) {
      BufferConfig sharded{BufferType::L1, 65536, 2048, layout,
                           ShardSpec{{{{0, 0}, {3, 1}}, {{5, 5}, {5, 5}}}, 2, 3, 12, o}};
      EXPECT_EQ(round_trip(sharded, decode_buffer_config), sharded);
      const BufferHandle handle{17, 0x1234'5678'9ABCull, sharded};
      EXPECT_EQ(round_trip(handle, decode_buffer_handle), handle);
    }
  }
}

TEST(WireCodec, GlobalSemaphore) {
  const GlobalSemaphore s{3, 0x1000, {{{0, 0}, {1, 1}}}};
  EXPECT_EQ(round_trip(s, decode_global_semaphore), s);
}

TEST(WireCodec, KernelSpecWithRuntimeArgsMapAndDefines) {
  const KernelSpec k = ethernet_kernel();
  EXPECT_TRUE(same(round_trip(k, decode_kernel_spec), k));
  KernelSpec tensix;
  tensix.kernel = "ccl_interpreter";
  tensix.processor = DataMovementProcessor::Compute;
  EXPECT_TRUE(same(round_trip(tensix, decode_kernel_spec), tensix));
  // The comparison itself can fail: a changed arg is seen.
  KernelSpec other = k;
  other.runtime_args[{8, 0}][2] = 10;
  EXPECT_FALSE(same(round_trip(other, decode_kernel_spec), k));
}

TEST(WireCodec, WorkloadWithProgramsOnSeveralChips) {
  Program p;
  p.kernels = {ethernet_kernel()};
  p.circular_buffers = {{0, {{{0, 0}, {2, 0}}}, 3, 4096}, {16, {}, 1, 32}};
  p.semaphores = {{0, CoreKind::Tensix, {{{0, 0}, {0, 0}}}, 5}, {1, CoreKind::Ethernet, {{{8, 0}, {8, 0}}}, 0}};
  MeshWorkload w;
  w.name = "all_gather";
  w.programs[0] = p;
  w.programs[7] = Program{};
  w.buffers = {BufferHandle{3, 0x10000, {BufferType::Dram, 4096, 2048}},
               BufferHandle{4, 0x1F0000, {BufferType::L1, 8192, 2048}}};
  w.global_semaphores = {GlobalSemaphore{2, 0x1AA10, {{{0, 0}, {0, 0}}}},
                         GlobalSemaphore{5, 0x15FFE0, {{{0, 0}, {3, 0}}, {{1, 1}, {1, 1}}}}};
  const MeshWorkload back = round_trip(w, decode_workload);
  EXPECT_EQ(back.name, "all_gather");
  ASSERT_EQ(back.programs.size(), 2u);
  EXPECT_TRUE(same(back.programs.at(0), p));
  EXPECT_TRUE(same(back.programs.at(7), Program{}));
  EXPECT_EQ(back.buffers, w.buffers);                      // since protocol version 5
  EXPECT_EQ(back.global_semaphores, w.global_semaphores);  // since protocol version 8
}

TEST(WireCodec, KernelProfileWithAndWithoutReady) {
  KernelProfile p{3, CoreKind::Ethernet, {9, 0}, "legacy_edm", 100, 0xFFFF'FFFF'FFFFull, 250};
  EXPECT_TRUE(same(round_trip(p, decode_kernel_profile), p));
  p.ready_ns.reset();
  EXPECT_TRUE(same(round_trip(p, decode_kernel_profile), p));
}

TEST(WireCodec, LinkTrafficFullRangeAndMalformed) {
  const LinkTraffic t{7, 15, 0xFFFF'FFFFu, 0, 0xFFFF'FFFF'FFFF'FFFFull, 83'886'080'000ull};
  EXPECT_EQ(round_trip(t, decode_link_traffic), t);
  Json j = encode(t);
  j["busy_ps"] = -1;  // a count never goes below zero
  try {
    decode_link_traffic(j, "link_traffic reply.links[3]");
    ADD_FAILURE() << "a negative busy time was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("link_traffic reply.links[3].busy_ps"), std::string::npos) << e.what();
  }
  j = encode(t);
  j.erase("peer_channel");
  try {
    decode_link_traffic(j, "links[0]");
    ADD_FAILURE() << "a missing field was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "links[0]: missing field 'peer_channel'");
  }
}

TEST(WireCodec, FabricOptionsWithOptionalsSetAndUnset) {
  FabricOptions f;
  EXPECT_EQ(round_trip(f, decode_fabric_options), f);
  f.mode = FabricMode::Ring;
  f.scope = FabricScope::Axes;
  f.num_links = 3;
  f.max_payload_bytes = 7616;
  f.chip_order = {4, 0, 2, 6};
  f.bubble_flow_control = false;
  f.first_level_acks = false;
  f.switch_interval = 12;
  f.sender_slots = 8;
  f.receiver_slots = 16;
  f.receiver_packets_in_flight = 1;
  f.erisc_unreserved_bytes = 150 * 1024;
  f.down_edges = {{3, 0}, {12, 13}};  // a served per-axis fabric's down links: the client's groups need them
  EXPECT_EQ(round_trip(f, decode_fabric_options), f);
  f.ring_flow_control = RingFlowControl::Dateline;  // since version 14
  EXPECT_EQ(round_trip(f, decode_fabric_options), f);
  f.mode = FabricMode::Line;
  EXPECT_EQ(round_trip(f, decode_fabric_options), f);
}

// The hello's hardware (since version 15): each value back as itself, anything else refused by path.
TEST(WireCodec, ServedHardwareRoundTripsAndUnknownNamesAreRefused) {
  for (ServedHardware hardware : {ServedHardware::Modelled, ServedHardware::Ideal}) {
    EXPECT_EQ(decode_hardware(from_wire(to_wire(Json(hardware_name(hardware)))), "hello reply.hardware"), hardware);
  }
  EXPECT_EQ(hardware_name(ServedHardware::Ideal), "ideal");  // the word `run --hardware` takes
  try {
    decode_hardware(Json("Ideal"), "hello reply.hardware");
    ADD_FAILURE() << "a hardware name in another case was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "hello reply.hardware: expected one of modelled, ideal, got \"Ideal\"");
  }
}

TEST(WireCodec, FabricOptionsDownEdgesAreOptionalAndChecked) {
  FabricOptions f;
  f.down_edges = {{3, 0}};
  Json j = encode(f);
  j.erase("down_edges");  // a server from before the field
  EXPECT_TRUE(decode_fabric_options(j, "fabric").down_edges.empty());
  j["down_edges"] = Json::array({Json::array({3, 0, 1})});
  try {
    decode_fabric_options(j, "fabric");
    ADD_FAILURE() << "a down edge of three chips was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "fabric.down_edges[0]: expected a pair of chips, got 3 values");
  }
}

TEST(WireCodec, MalformedFieldsAreRefusedByPath) {
  Json j = encode(ethernet_kernel());
  j["noc"] = "noc2";
  EXPECT_THROW(
      {
        try {
          decode_kernel_spec(j, "workload.programs[0].kernels[0]");
        } catch (const ProtocolError& e) {
          EXPECT_STREQ(e.what(), "workload.programs[0].kernels[0].noc: expected one of noc0, noc1, got \"noc2\"");
          throw;
        }
      },
      ProtocolError);
  Json c = encode(CircularBufferSpec{0, {}, 1, 32});
  c["num_pages"] = 1ull << 32;
  EXPECT_THROW(decode_circular_buffer_spec(c, "cb"), ProtocolError);
  c["num_pages"] = -1;
  EXPECT_THROW(decode_circular_buffer_spec(c, "cb"), ProtocolError);
  c.erase("num_pages");
  try {
    decode_circular_buffer_spec(c, "cb");
    ADD_FAILURE() << "a missing field was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "cb: missing field 'num_pages'");
  }
  Json k = encode(ethernet_kernel());
  k["runtime_args"].push_back(k["runtime_args"][0]);
  EXPECT_THROW(decode_kernel_spec(k, "k"), ProtocolError);
  EXPECT_THROW(from_wire({0xFF, 0x00, 0x13}), ProtocolError);
  // An array announcing 0xF0 << 56 elements, more than a vector holds: nlohmann throws
  // out_of_range even when asked not to throw (found by fuzz_remote_protocol); a protocol error,
  // as any other bad CBOR.
  EXPECT_THROW(from_wire({0x9B, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}), ProtocolError);
  // A peer's string is bytes: one that is not UTF-8 is shown (U+FFFD for the bad byte) where
  // dump() would throw (found by fuzz_remote_protocol, in an enum field).
  try {
    (void)decode_core_kind(Json(std::string("tensi\xFF")), "kind");
    ADD_FAILURE() << "a core kind of bytes that are not UTF-8 decoded";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "kind: expected one of tensix, ethernet, got \"tensi\xEF\xBF\xBD\"");
  }
}

// An error reply, thrown on the client side.
template <class E>
E thrown_from(std::exception_ptr on_server) {
  const Json reply = from_wire(to_wire(error_reply(on_server)));
  try {
    throw_error_reply(reply, "simbox:5170", "finish");
  } catch (const E& e) {
    return e;
  }
  throw std::logic_error("no exception of the expected type");
}

TEST(WireCodec, ErrorsCrossAsTheirOwnTypes) {
  for (DeviceError::Kind kind : {DeviceError::Kind::Hang, DeviceError::Kind::Fault, DeviceError::Kind::Timeout}) {
    const DeviceError e = thrown_from<DeviceError>(std::make_exception_ptr(DeviceError(kind, "report\nline 2")));
    EXPECT_EQ(e.kind(), kind);
    EXPECT_STREQ(e.what(), "report\nline 2");
  }
  const WorkloadPlacementError placement =
      thrown_from<WorkloadPlacementError>(std::make_exception_ptr(WorkloadPlacementError("CB 0 ends above L1")));
  EXPECT_STREQ(placement.what(), "CB 0 ends above L1");
  // A plain invalid_argument is not a placement error on the client either.
  EXPECT_THROW(thrown_from<WorkloadPlacementError>(std::make_exception_ptr(std::invalid_argument("x"))),
               std::invalid_argument);
  const std::invalid_argument bad =
      thrown_from<std::invalid_argument>(std::make_exception_ptr(std::invalid_argument("unknown kernel 'k'")));
  EXPECT_STREQ(bad.what(), "unknown kernel 'k'");
  const topo::InputError input = thrown_from<topo::InputError>(std::make_exception_ptr(topo::InputError("no chip 99")));
  EXPECT_STREQ(input.what(), "no chip 99");
  const RemoteDeviceError other = thrown_from<RemoteDeviceError>(std::make_exception_ptr(std::runtime_error("disk full")));
  EXPECT_STREQ(other.what(), "remote device simbox:5170: finish: disk full");
  const RemoteDeviceError protocol = thrown_from<RemoteDeviceError>(std::make_exception_ptr(ProtocolError("bad field")));
  EXPECT_STREQ(protocol.what(), "remote device simbox:5170: finish: the server did not accept the request: bad field");
}

}  // namespace
}  // namespace cclmesh::runtime::remote
