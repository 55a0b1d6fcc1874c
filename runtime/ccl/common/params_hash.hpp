#pragma once
// Hashing of the plain values op params are made of (program-cache keys). Every field of a
// params struct goes through hash_fields, so a hash function reads as the list of its fields and
// a field missing from it shows against the struct.

#include <boost/container_hash/hash.hpp>

#include <cstddef>
#include <optional>

#include "runtime/device/types.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime {

namespace detail {

template <class T>
void combine_field(std::size_t& seed, const T& field) {
  boost::hash_combine(seed, field);  // hash_value found by ADL, or boost's own (integers, enums, vectors)
}

// boost 1.74 does not hash std::optional: whether it is set, then its value.
template <class T>
void combine_field(std::size_t& seed, const std::optional<T>& field) {
  boost::hash_combine(seed, field.has_value());
  if (field) combine_field(seed, *field);
}

}  // namespace detail

// `seed` with every field combined into it, in order.
template <class... Fields>
std::size_t hash_fields(std::size_t seed, const Fields&... fields) {
  (detail::combine_field(seed, fields), ...);
  return seed;
}

inline std::size_t hash_value(const CoreCoord& c) { return hash_fields(0, c.x, c.y); }

inline std::size_t hash_value(const CoreRange& r) { return hash_fields(0, r.start, r.end); }

inline std::size_t hash_value(const ShardSpec& s) {
  return hash_fields(0, s.grid, s.shard_height_pages, s.shard_width_pages, s.tensor_width_pages, s.orientation);
}

inline std::size_t hash_value(const BufferConfig& c) {
  return hash_fields(0, c.type, c.size_bytes, c.page_size_bytes, c.layout, c.shard);
}

inline std::size_t hash_value(const BufferHandle& b) { return hash_fields(0, b.id, b.address, b.config); }

inline std::size_t hash_value(const GlobalSemaphore& s) { return hash_fields(0, s.id, s.address, s.cores); }

inline std::size_t hash_value(const FabricOptions& f) {
  const std::size_t h = hash_fields(0, f.mode, f.scope, f.num_links, f.max_payload_bytes, f.chip_order, f.down_edges,
                                    f.bubble_flow_control, f.first_level_acks, f.switch_interval, f.sender_slots,
                                    f.receiver_slots, f.receiver_packets_in_flight, f.erisc_unreserved_bytes);
  // Folded in only when not the default, so every bubble-flow-control hash stays what it was.
  return f.ring_flow_control == RingFlowControl::Bubble ? h : hash_fields(h, f.ring_flow_control);
}

}  // namespace cclmesh::runtime
