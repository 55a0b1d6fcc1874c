#pragma once
// Hashing of the plain values op params are made of (program-cache keys).

#include <boost/container_hash/hash.hpp>

#include <cstddef>

#include "runtime/device/types.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime {

inline std::size_t hash_value(const CoreCoord& c) {
  std::size_t seed = 0;
  boost::hash_combine(seed, c.x);
  boost::hash_combine(seed, c.y);
  return seed;
}

inline std::size_t hash_value(const CoreRange& r) {
  std::size_t seed = hash_value(r.start);
  boost::hash_combine(seed, hash_value(r.end));
  return seed;
}

inline std::size_t hash_value(const BufferHandle& b) {
  std::size_t seed = 0;
  boost::hash_combine(seed, b.id);
  boost::hash_combine(seed, b.address);
  boost::hash_combine(seed, b.config.size_bytes);
  boost::hash_combine(seed, b.config.page_size_bytes);
  boost::hash_combine(seed, static_cast<int>(b.config.type));
  boost::hash_combine(seed, static_cast<int>(b.config.layout));
  if (b.config.shard) {
    for (const CoreRange& r : b.config.shard->grid) boost::hash_combine(seed, hash_value(r));
    boost::hash_combine(seed, b.config.shard->shard_height_pages);
    boost::hash_combine(seed, b.config.shard->shard_width_pages);
    boost::hash_combine(seed, b.config.shard->tensor_width_pages);
    boost::hash_combine(seed, static_cast<int>(b.config.shard->orientation));
  }
  return seed;
}

inline std::size_t hash_value(const FabricOptions& f) {
  std::size_t seed = 0;
  boost::hash_combine(seed, static_cast<int>(f.mode));
  boost::hash_combine(seed, static_cast<int>(f.scope));
  boost::hash_combine(seed, f.num_links);
  boost::hash_combine(seed, f.max_payload_bytes);
  for (ChipId c : f.chip_order) boost::hash_combine(seed, c);
  boost::hash_combine(seed, f.bubble_flow_control ? (*f.bubble_flow_control ? 2 : 1) : 0);
  boost::hash_combine(seed, f.first_level_acks);
  boost::hash_combine(seed, f.switch_interval);
  boost::hash_combine(seed, f.sender_slots.value_or(0));
  boost::hash_combine(seed, f.receiver_slots.value_or(0));
  return seed;
}

}  // namespace cclmesh::runtime
