#pragma once
// The remote device protocol's structured fields: every value type a MeshDevice call takes or
// returns (runtime/device/types.hpp, workload.hpp, KernelProfile, LinkTraffic, FabricOptions) to and from a
// nlohmann::json value, which the frames carry as CBOR (docs/remote_device.md). Enums travel as
// their names ("dram", "width_sharded"), so a reader of a dump, or a peer built from another
// revision, never misreads a renumbered value.
//
// Decoding is checking: a missing field, a wrong type, a number out of its field's range or an
// unknown enum name throws ProtocolError naming the field's path ("workload.programs[3]
// .kernels[0].noc: expected one of noc0, noc1, got \"noc2\"").

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>
#include <stdexcept>
#include <string>

#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/device/fabric_options.hpp"

namespace cclmesh::runtime::remote {

// A message that does not follow the protocol (bad input from the other side).
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Json = nlohmann::json;

Json encode(const CoreCoord& v);
Json encode(const CoreRange& v);
Json encode(const ShardSpec& v);
Json encode(const BufferConfig& v);
Json encode(const BufferHandle& v);
Json encode(const GlobalSemaphore& v);
Json encode(const KernelSpec& v);
Json encode(const CircularBufferSpec& v);
Json encode(const SemaphoreSpec& v);
Json encode(const Program& v);
Json encode(const MeshWorkload& v);
Json encode(const KernelProfile& v);
Json encode(const LinkTraffic& v);
Json encode(const FabricOptions& v);
Json encode(CoreKind v);

// `path` names the value in errors.
CoreCoord decode_core_coord(const Json& j, const std::string& path);
CoreRange decode_core_range(const Json& j, const std::string& path);
std::vector<CoreRange> decode_core_ranges(const Json& j, const std::string& path);
ShardSpec decode_shard_spec(const Json& j, const std::string& path);
BufferConfig decode_buffer_config(const Json& j, const std::string& path);
BufferHandle decode_buffer_handle(const Json& j, const std::string& path);
GlobalSemaphore decode_global_semaphore(const Json& j, const std::string& path);
KernelSpec decode_kernel_spec(const Json& j, const std::string& path);
CircularBufferSpec decode_circular_buffer_spec(const Json& j, const std::string& path);
SemaphoreSpec decode_semaphore_spec(const Json& j, const std::string& path);
Program decode_program(const Json& j, const std::string& path);
MeshWorkload decode_workload(const Json& j, const std::string& path);
KernelProfile decode_kernel_profile(const Json& j, const std::string& path);
LinkTraffic decode_link_traffic(const Json& j, const std::string& path);
FabricOptions decode_fabric_options(const Json& j, const std::string& path);
CoreKind decode_core_kind(const Json& j, const std::string& path);

Json encode_core_ranges(const std::vector<CoreRange>& ranges);

// The field `key` of object `j` (ProtocolError when `j` is not an object or lacks it).
const Json& field(const Json& j, const char* key, const std::string& path);
// An unsigned integer that fits T; a string; an array; a bool.
std::uint64_t unsigned_value(const Json& j, std::uint64_t max, const std::string& path);
template <class T>
T unsigned_field(const Json& j, const char* key, const std::string& path) {
  return static_cast<T>(unsigned_value(field(j, key, path), std::numeric_limits<T>::max(), path + "." + key));
}
std::string string_field(const Json& j, const char* key, const std::string& path);
const Json& array_field(const Json& j, const char* key, const std::string& path);
// An array of strings (the hello's faults, fault_effects' lines).
std::vector<std::string> string_list_field(const Json& j, const char* key, const std::string& path);
bool bool_field(const Json& j, const char* key, const std::string& path);

// `j` as an error message shows it: JSON text, any invalid UTF-8 in its strings replaced (a
// peer's strings are bytes; dump() throws on them).
std::string shown(const Json& j);

// CBOR bytes of `j`, and back (ProtocolError when the bytes are not CBOR).
std::vector<std::uint8_t> to_wire(const Json& j);
Json from_wire(const std::vector<std::uint8_t>& bytes);

}  // namespace cclmesh::runtime::remote
