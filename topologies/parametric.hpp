#pragma once
// Parametric systems for what-if studies, named on the command line:
//
//   mesh:RxC  mesh:RxCxD  torus:RxC  torus:RxCxD  ring:N     [/L]  [@wh|@bh]
//
// e.g. "torus:8x8/3@bh". L is the number of links per neighbour (default: the arch's links per
// direction, 4 on Wormhole and 2 on Blackhole, capped by what the channels allow); the arch
// defaults to Wormhole. ring:N is a 1xN torus. Chip ids are row-major mesh positions, every chip
// is MMIO-attached, and channels follow the grid rule of detail/grid_wiring.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/arch.hpp"
#include "topologies/mesh_shape.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::topo {

// The most chips a parametric spec may name: 128x128. A million (mesh:1000x1000, a typo for
// 10x10) ran `topo` for over ten minutes; 16384 takes ~5 s.
inline constexpr std::int64_t kMaxParametricChips = 16384;

// The kind as written: a dimension of 2 cannot wrap (the wrap is the edge already there), so the
// shape alone would name torus:2x2x2 "mesh:2x2x2" and ring:2 "mesh:1x2".
enum class ParametricKind { Mesh, Torus, Ring };

struct ParametricSpec {
  ParametricKind kind = ParametricKind::Mesh;
  MeshShape shape;
  std::int32_t links_per_neighbour = 1;
  Arch arch = Arch::Wormhole;

  // The canonical spelling, also the topology's name: "torus:8x8/3@bh", "ring:8/4@wh"; the kind
  // is the one written (torus:2x2x2 stays a torus).
  std::string to_string() const;
  bool operator==(const ParametricSpec&) const = default;
};

// True when text starts with "mesh:", "torus:" or "ring:"; says nothing about the rest.
bool looks_parametric(std::string_view text);

// Throws InputError naming the spec, the part that is wrong and what was expected.
ParametricSpec parse_parametric_spec(std::string_view text);

Topology build_parametric(const ParametricSpec& spec);

}  // namespace cclmesh::topo
