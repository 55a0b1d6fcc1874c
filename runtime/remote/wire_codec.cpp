#include "runtime/remote/wire_codec.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

namespace cclmesh::runtime::remote {

namespace {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

constexpr EnumNames<CoreKind, 2> kCoreKinds{{{CoreKind::Tensix, "tensix"}, {CoreKind::Ethernet, "ethernet"}}};
constexpr EnumNames<BufferType, 2> kBufferTypes{{{BufferType::Dram, "dram"}, {BufferType::L1, "l1"}}};
constexpr EnumNames<TensorMemoryLayout, 4> kLayouts{{{TensorMemoryLayout::Interleaved, "interleaved"},
                                                     {TensorMemoryLayout::HeightSharded, "height_sharded"},
                                                     {TensorMemoryLayout::WidthSharded, "width_sharded"},
                                                     {TensorMemoryLayout::BlockSharded, "block_sharded"}}};
constexpr EnumNames<ShardOrientation, 2> kOrientations{
    {{ShardOrientation::RowMajor, "row_major"}, {ShardOrientation::ColMajor, "col_major"}}};
constexpr EnumNames<DataMovementProcessor, 3> kProcessors{{{DataMovementProcessor::Riscv0, "riscv0"},
                                                          {DataMovementProcessor::Riscv1, "riscv1"},
                                                          {DataMovementProcessor::Compute, "compute"}}};
constexpr EnumNames<NocIndex, 2> kNocs{{{NocIndex::Noc0, "noc0"}, {NocIndex::Noc1, "noc1"}}};
constexpr EnumNames<FabricMode, 3> kFabricModes{
    {{FabricMode::None, "none"}, {FabricMode::Line, "line"}, {FabricMode::Ring, "ring"}}};
constexpr EnumNames<FabricScope, 2> kFabricScopes{{{FabricScope::System, "system"}, {FabricScope::Axes, "axes"}}};
constexpr EnumNames<RingFlowControl, 2> kRingFlowControls{
    {{RingFlowControl::Bubble, "bubble"}, {RingFlowControl::Dateline, "dateline"}}};

template <class E, std::size_t N>
Json enum_name(const EnumNames<E, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return std::string(name);
  }
  throw ProtocolError(fmt::format("enum value {} has no protocol name", static_cast<int>(value)));
}

template <class E, std::size_t N>
E enum_value(const EnumNames<E, N>& names, const Json& j, const std::string& path) {
  std::string accepted;
  for (const auto& [e, name] : names) {
    if (j.is_string() && j.get_ref<const std::string&>() == name) return e;
    accepted += accepted.empty() ? std::string(name) : fmt::format(", {}", name);
  }
  throw ProtocolError(fmt::format("{}: expected one of {}, got {}", path, accepted, shown(j)));
}

template <class E, std::size_t N>
E enum_field(const EnumNames<E, N>& names, const Json& j, const char* key, const std::string& path) {
  return enum_value(names, field(j, key, path), path + "." + key);
}

Json u32_array(const std::vector<std::uint32_t>& v) { return Json(v); }

std::vector<std::uint32_t> decode_u32_array(const Json& j, const std::string& path) {
  if (!j.is_array()) throw ProtocolError(fmt::format("{}: expected an array, got {}", path, j.type_name()));
  std::vector<std::uint32_t> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    out.push_back(static_cast<std::uint32_t>(
        unsigned_value(j[i], std::numeric_limits<std::uint32_t>::max(), fmt::format("{}[{}]", path, i))));
  }
  return out;
}

template <class T, class Decode>
std::vector<T> decode_array(const Json& j, const std::string& path, Decode decode) {
  if (!j.is_array()) throw ProtocolError(fmt::format("{}: expected an array, got {}", path, j.type_name()));
  std::vector<T> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(decode(j[i], fmt::format("{}[{}]", path, i)));
  return out;
}

template <class T>
Json encode_array(const std::vector<T>& v) {
  Json out = Json::array();
  for (const T& x : v) out.push_back(encode(x));
  return out;
}

std::optional<std::uint32_t> optional_u32(const Json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return unsigned_field<std::uint32_t>(j, key, path);
}

Json encode_optional(const std::optional<std::uint32_t>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

const Json& field(const Json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw ProtocolError(fmt::format("{}: expected an object, got {}", path, j.type_name()));
  const auto it = j.find(key);
  if (it == j.end()) throw ProtocolError(fmt::format("{}: missing field '{}'", path, key));
  return *it;
}

std::uint64_t unsigned_value(const Json& j, std::uint64_t max, const std::string& path) {
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0)) {
    throw ProtocolError(fmt::format("{}: expected an unsigned integer, got {}", path, shown(j)));
  }
  const std::uint64_t v = j.get<std::uint64_t>();
  if (v > max) throw ProtocolError(fmt::format("{}: {} is above the field's maximum {}", path, v, max));
  return v;
}

std::string string_field(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_string()) throw ProtocolError(fmt::format("{}.{}: expected a string, got {}", path, key, v.type_name()));
  return v.get<std::string>();
}

const Json& array_field(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_array()) throw ProtocolError(fmt::format("{}.{}: expected an array, got {}", path, key, v.type_name()));
  return v;
}

std::vector<std::string> string_list_field(const Json& j, const char* key, const std::string& path) {
  const Json& list = array_field(j, key, path);
  std::vector<std::string> strings;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw ProtocolError(fmt::format("{}.{}[{}]: expected a string, got {}", path, key, i, list[i].type_name()));
    }
    strings.push_back(list[i].get<std::string>());
  }
  return strings;
}

bool bool_field(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_boolean()) throw ProtocolError(fmt::format("{}.{}: expected true or false, got {}", path, key, shown(v)));
  return v.get<bool>();
}

// --- cores -------------------------------------------------------------------------------------

Json encode(const CoreCoord& v) { return Json::array({v.x, v.y}); }

CoreCoord decode_core_coord(const Json& j, const std::string& path) {
  if (!j.is_array() || j.size() != 2) throw ProtocolError(fmt::format("{}: expected [x, y], got {}", path, shown(j)));
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  return CoreCoord{static_cast<std::uint32_t>(unsigned_value(j[0], kMax, path + ".x")),
                   static_cast<std::uint32_t>(unsigned_value(j[1], kMax, path + ".y"))};
}

Json encode(const CoreRange& v) { return Json::array({encode(v.start), encode(v.end)}); }

CoreRange decode_core_range(const Json& j, const std::string& path) {
  if (!j.is_array() || j.size() != 2) {
    throw ProtocolError(fmt::format("{}: expected [[x, y], [x, y]], got {}", path, shown(j)));
  }
  return CoreRange{decode_core_coord(j[0], path + ".start"), decode_core_coord(j[1], path + ".end")};
}

Json encode_core_ranges(const std::vector<CoreRange>& ranges) { return encode_array(ranges); }

std::vector<CoreRange> decode_core_ranges(const Json& j, const std::string& path) {
  return decode_array<CoreRange>(j, path, decode_core_range);
}

Json encode(CoreKind v) { return enum_name(kCoreKinds, v); }

CoreKind decode_core_kind(const Json& j, const std::string& path) { return enum_value(kCoreKinds, j, path); }

// --- buffers and semaphores --------------------------------------------------------------------

Json encode(const ShardSpec& v) {
  return Json{{"grid", encode_core_ranges(v.grid)},
              {"shard_height_pages", v.shard_height_pages},
              {"shard_width_pages", v.shard_width_pages},
              {"tensor_width_pages", v.tensor_width_pages},
              {"orientation", enum_name(kOrientations, v.orientation)}};
}

ShardSpec decode_shard_spec(const Json& j, const std::string& path) {
  ShardSpec v;
  v.grid = decode_core_ranges(array_field(j, "grid", path), path + ".grid");
  v.shard_height_pages = unsigned_field<std::uint32_t>(j, "shard_height_pages", path);
  v.shard_width_pages = unsigned_field<std::uint32_t>(j, "shard_width_pages", path);
  v.tensor_width_pages = unsigned_field<std::uint32_t>(j, "tensor_width_pages", path);
  v.orientation = enum_field(kOrientations, j, "orientation", path);
  return v;
}

Json encode(const BufferConfig& v) {
  return Json{{"type", enum_name(kBufferTypes, v.type)},
              {"size_bytes", v.size_bytes},
              {"page_size_bytes", v.page_size_bytes},
              {"layout", enum_name(kLayouts, v.layout)},
              {"shard", v.shard ? encode(*v.shard) : Json(nullptr)}};
}

BufferConfig decode_buffer_config(const Json& j, const std::string& path) {
  BufferConfig v;
  v.type = enum_field(kBufferTypes, j, "type", path);
  v.size_bytes = unsigned_field<std::uint64_t>(j, "size_bytes", path);
  v.page_size_bytes = unsigned_field<std::uint32_t>(j, "page_size_bytes", path);
  v.layout = enum_field(kLayouts, j, "layout", path);
  const Json& shard = field(j, "shard", path);
  if (!shard.is_null()) v.shard = decode_shard_spec(shard, path + ".shard");
  return v;
}

Json encode(const BufferHandle& v) {
  return Json{{"id", v.id}, {"address", v.address}, {"config", encode(v.config)}};
}

BufferHandle decode_buffer_handle(const Json& j, const std::string& path) {
  BufferHandle v;
  v.id = unsigned_field<std::uint32_t>(j, "id", path);
  v.address = unsigned_field<std::uint64_t>(j, "address", path);
  v.config = decode_buffer_config(field(j, "config", path), path + ".config");
  return v;
}

Json encode(const GlobalSemaphore& v) {
  return Json{{"id", v.id}, {"address", v.address}, {"cores", encode_core_ranges(v.cores)}};
}

GlobalSemaphore decode_global_semaphore(const Json& j, const std::string& path) {
  GlobalSemaphore v;
  v.id = unsigned_field<std::uint32_t>(j, "id", path);
  v.address = unsigned_field<std::uint32_t>(j, "address", path);
  v.cores = decode_core_ranges(array_field(j, "cores", path), path + ".cores");
  return v;
}

// --- workloads ---------------------------------------------------------------------------------

Json encode(const KernelSpec& v) {
  Json runtime_args = Json::array();
  for (const auto& [core, args] : v.runtime_args) runtime_args.push_back(Json{{"core", encode(core)}, {"args", u32_array(args)}});
  Json defines = Json::array();
  for (const auto& [name, value] : v.defines) defines.push_back(Json::array({name, value}));
  return Json{{"kernel", v.kernel},
              {"core_kind", encode(v.core_kind)},
              {"cores", encode_core_ranges(v.cores)},
              {"processor", enum_name(kProcessors, v.processor)},
              {"noc", enum_name(kNocs, v.noc)},
              {"compile_time_args", u32_array(v.compile_time_args)},
              {"runtime_args", std::move(runtime_args)},
              {"common_runtime_args", u32_array(v.common_runtime_args)},
              {"defines", std::move(defines)}};
}

KernelSpec decode_kernel_spec(const Json& j, const std::string& path) {
  KernelSpec v;
  v.kernel = string_field(j, "kernel", path);
  v.core_kind = decode_core_kind(field(j, "core_kind", path), path + ".core_kind");
  v.cores = decode_core_ranges(array_field(j, "cores", path), path + ".cores");
  v.processor = enum_field(kProcessors, j, "processor", path);
  v.noc = enum_field(kNocs, j, "noc", path);
  v.compile_time_args = decode_u32_array(field(j, "compile_time_args", path), path + ".compile_time_args");
  const Json& runtime_args = array_field(j, "runtime_args", path);
  for (std::size_t i = 0; i < runtime_args.size(); ++i) {
    const std::string at = fmt::format("{}.runtime_args[{}]", path, i);
    const CoreCoord core = decode_core_coord(field(runtime_args[i], "core", at), at + ".core");
    if (!v.runtime_args.emplace(core, decode_u32_array(field(runtime_args[i], "args", at), at + ".args")).second) {
      throw ProtocolError(fmt::format("{}: core [{}, {}] given twice", at, core.x, core.y));
    }
  }
  v.common_runtime_args = decode_u32_array(field(j, "common_runtime_args", path), path + ".common_runtime_args");
  const Json& defines = array_field(j, "defines", path);
  for (std::size_t i = 0; i < defines.size(); ++i) {
    const Json& d = defines[i];
    if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_string()) {
      throw ProtocolError(fmt::format("{}.defines[{}]: expected [name, value] strings, got {}", path, i, shown(d)));
    }
    if (!v.defines.emplace(d[0].get<std::string>(), d[1].get<std::string>()).second) {
      throw ProtocolError(fmt::format("{}.defines[{}]: '{}' given twice", path, i, d[0].get<std::string>()));
    }
  }
  return v;
}

Json encode(const CircularBufferSpec& v) {
  return Json{{"cb_id", v.cb_id},
              {"cores", encode_core_ranges(v.cores)},
              {"num_pages", v.num_pages},
              {"page_size_bytes", v.page_size_bytes}};
}

CircularBufferSpec decode_circular_buffer_spec(const Json& j, const std::string& path) {
  CircularBufferSpec v;
  v.cb_id = unsigned_field<std::uint32_t>(j, "cb_id", path);
  v.cores = decode_core_ranges(array_field(j, "cores", path), path + ".cores");
  v.num_pages = unsigned_field<std::uint32_t>(j, "num_pages", path);
  v.page_size_bytes = unsigned_field<std::uint32_t>(j, "page_size_bytes", path);
  return v;
}

Json encode(const SemaphoreSpec& v) {
  return Json{{"id", v.id},
              {"core_kind", encode(v.core_kind)},
              {"cores", encode_core_ranges(v.cores)},
              {"initial_value", v.initial_value}};
}

SemaphoreSpec decode_semaphore_spec(const Json& j, const std::string& path) {
  SemaphoreSpec v;
  v.id = unsigned_field<std::uint32_t>(j, "id", path);
  v.core_kind = decode_core_kind(field(j, "core_kind", path), path + ".core_kind");
  v.cores = decode_core_ranges(array_field(j, "cores", path), path + ".cores");
  v.initial_value = unsigned_field<std::uint32_t>(j, "initial_value", path);
  return v;
}

Json encode(const Program& v) {
  return Json{{"kernels", encode_array(v.kernels)},
              {"circular_buffers", encode_array(v.circular_buffers)},
              {"semaphores", encode_array(v.semaphores)}};
}

Program decode_program(const Json& j, const std::string& path) {
  Program v;
  v.kernels = decode_array<KernelSpec>(array_field(j, "kernels", path), path + ".kernels", decode_kernel_spec);
  v.circular_buffers = decode_array<CircularBufferSpec>(array_field(j, "circular_buffers", path),
                                                        path + ".circular_buffers", decode_circular_buffer_spec);
  v.semaphores =
      decode_array<SemaphoreSpec>(array_field(j, "semaphores", path), path + ".semaphores", decode_semaphore_spec);
  return v;
}

Json encode(const MeshWorkload& v) {
  Json programs = Json::array();
  for (const auto& [chip, program] : v.programs) programs.push_back(Json{{"chip", chip}, {"program", encode(program)}});
  return Json{{"name", v.name},
              {"programs", std::move(programs)},
              {"buffers", encode_array(v.buffers)},
              {"global_semaphores", encode_array(v.global_semaphores)}};
}

MeshWorkload decode_workload(const Json& j, const std::string& path) {
  MeshWorkload v;
  v.name = string_field(j, "name", path);
  const Json& programs = array_field(j, "programs", path);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const std::string at = fmt::format("{}.programs[{}]", path, i);
    const ChipId chip = unsigned_field<ChipId>(programs[i], "chip", at);
    if (!v.programs.emplace(chip, decode_program(field(programs[i], "program", at), at + ".program")).second) {
      throw ProtocolError(fmt::format("{}: chip {} given twice", at, chip));
    }
  }
  v.buffers = decode_array<BufferHandle>(array_field(j, "buffers", path), path + ".buffers", decode_buffer_handle);
  v.global_semaphores = decode_array<GlobalSemaphore>(array_field(j, "global_semaphores", path),
                                                      path + ".global_semaphores", decode_global_semaphore);
  return v;
}

// --- profile and fabric ------------------------------------------------------------------------

Json encode(const KernelProfile& v) {
  return Json{{"chip", v.chip},
              {"core_kind", encode(v.core_kind)},
              {"core", encode(v.core)},
              {"kernel", v.kernel},
              {"start_ns", v.start_ns},
              {"end_ns", v.end_ns},
              {"ready_ns", v.ready_ns ? Json(*v.ready_ns) : Json(nullptr)}};
}

KernelProfile decode_kernel_profile(const Json& j, const std::string& path) {
  KernelProfile v;
  v.chip = unsigned_field<ChipId>(j, "chip", path);
  v.core_kind = decode_core_kind(field(j, "core_kind", path), path + ".core_kind");
  v.core = decode_core_coord(field(j, "core", path), path + ".core");
  v.kernel = string_field(j, "kernel", path);
  v.start_ns = unsigned_field<std::uint64_t>(j, "start_ns", path);
  v.end_ns = unsigned_field<std::uint64_t>(j, "end_ns", path);
  if (!field(j, "ready_ns", path).is_null()) v.ready_ns = unsigned_field<std::uint64_t>(j, "ready_ns", path);
  return v;
}

Json encode(const LinkTraffic& v) {
  return Json{{"chip", v.chip},
              {"channel", v.channel},
              {"peer_chip", v.peer_chip},
              {"peer_channel", v.peer_channel},
              {"payload_bytes", v.payload_bytes},
              {"busy_ps", v.busy_ps}};
}

LinkTraffic decode_link_traffic(const Json& j, const std::string& path) {
  LinkTraffic v;
  v.chip = unsigned_field<ChipId>(j, "chip", path);
  v.channel = unsigned_field<std::uint32_t>(j, "channel", path);
  v.peer_chip = unsigned_field<ChipId>(j, "peer_chip", path);
  v.peer_channel = unsigned_field<std::uint32_t>(j, "peer_channel", path);
  v.payload_bytes = unsigned_field<std::uint64_t>(j, "payload_bytes", path);
  v.busy_ps = unsigned_field<std::uint64_t>(j, "busy_ps", path);
  return v;
}

Json encode(const FabricOptions& v) {
  return Json{{"mode", enum_name(kFabricModes, v.mode)},
              {"scope", enum_name(kFabricScopes, v.scope)},
              {"num_links", v.num_links},
              {"max_payload_bytes", v.max_payload_bytes},
              {"chip_order", Json(v.chip_order)},
              {"down_edges", Json(v.down_edges)},
              {"bubble_flow_control", v.bubble_flow_control ? Json(*v.bubble_flow_control) : Json(nullptr)},
              {"ring_flow_control", enum_name(kRingFlowControls, v.ring_flow_control)},
              {"first_level_acks", v.first_level_acks},
              {"switch_interval", v.switch_interval},
              {"sender_slots", encode_optional(v.sender_slots)},
              {"receiver_slots", encode_optional(v.receiver_slots)},
              {"receiver_packets_in_flight", encode_optional(v.receiver_packets_in_flight)},
              {"erisc_unreserved_bytes", v.erisc_unreserved_bytes}};
}

FabricOptions decode_fabric_options(const Json& j, const std::string& path) {
  FabricOptions v;
  v.mode = enum_field(kFabricModes, j, "mode", path);
  v.scope = enum_field(kFabricScopes, j, "scope", path);
  v.num_links = unsigned_field<std::uint32_t>(j, "num_links", path);
  v.max_payload_bytes = unsigned_field<std::uint32_t>(j, "max_payload_bytes", path);
  for (std::uint32_t chip : decode_u32_array(field(j, "chip_order", path), path + ".chip_order")) v.chip_order.push_back(chip);
  // Optional on the wire: a server from before session 20 sends none (no per-axis line then).
  if (j.contains("down_edges")) {
    v.down_edges = decode_array<std::pair<ChipId, ChipId>>(
        j["down_edges"], path + ".down_edges", [](const Json& edge, const std::string& at) {
          const std::vector<std::uint32_t> chips = decode_u32_array(edge, at);
          if (chips.size() != 2) {
            throw ProtocolError(fmt::format("{}: expected a pair of chips, got {} values", at, chips.size()));
          }
          return std::pair<ChipId, ChipId>{chips[0], chips[1]};
        });
  }
  const Json& bubble = field(j, "bubble_flow_control", path);
  if (!bubble.is_null()) v.bubble_flow_control = bool_field(j, "bubble_flow_control", path);
  v.ring_flow_control = enum_field(kRingFlowControls, j, "ring_flow_control", path);  // since version 14
  v.first_level_acks = bool_field(j, "first_level_acks", path);
  v.switch_interval = unsigned_field<std::uint32_t>(j, "switch_interval", path);
  v.sender_slots = optional_u32(j, "sender_slots", path);
  v.receiver_slots = optional_u32(j, "receiver_slots", path);
  v.receiver_packets_in_flight = optional_u32(j, "receiver_packets_in_flight", path);
  v.erisc_unreserved_bytes = unsigned_field<std::uint32_t>(j, "erisc_unreserved_bytes", path);
  return v;
}

// --- bytes -------------------------------------------------------------------------------------

std::vector<std::uint8_t> to_wire(const Json& j) { return Json::to_cbor(j); }

std::string shown(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json from_wire(const std::vector<std::uint8_t>& bytes) {
  Json j;
  try {
    j = Json::from_cbor(bytes, /*strict=*/true, /*allow_exceptions=*/false);
  } catch (const Json::exception& e) {
    // allow_exceptions does not cover everything: nlohmann's DOM builder still throws
    // out_of_range for an array or map announcing more elements than a vector can hold (found by
    // fuzz_remote_protocol: the session ended with no refusal sent).
    throw ProtocolError(fmt::format("a message of {} B is not valid CBOR ({})", bytes.size(), e.what()));
  }
  if (j.is_discarded()) throw ProtocolError(fmt::format("a message of {} B is not valid CBOR", bytes.size()));
  return j;
}

}  // namespace cclmesh::runtime::remote
