#pragma once
// Bounded backtracking search for a Hamiltonian cycle or path, for chip sets without a known
// mesh structure (subsets, faulted meshes, TG with its gateways). Mesh-shaped sets never get
// here: detail/mesh_walks.hpp constructs their lines and rings directly.
//
// Pruning: Warnsdorff order (fewest unvisited neighbours first), moves forced by vertices that
// need the current end as one of their last partners, dead-end counting, and a connectivity
// check of the unvisited vertices on small graphs. The step budget keeps the worst case (the
// problem is NP-complete) from stalling a caller; running out is reported, not guessed.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cclmesh::topo::detail {

// Vertices 0..n-1; adjacency[v] sorted ascending, no self-loops, symmetric.
using LocalAdjacency = std::vector<std::vector<std::size_t>>;

enum class SearchOutcome { Found, None, GaveUp };

struct HamiltonianResult {
  SearchOutcome outcome = SearchOutcome::None;
  std::vector<std::size_t> order;  // the cycle (closing edge implied) or path, when Found
  std::int64_t steps = 0;
};

inline constexpr std::int64_t kDefaultHamiltonianBudget = 2'000'000;

HamiltonianResult find_hamiltonian_cycle(const LocalAdjacency& adjacency,
                                         std::int64_t step_budget = kDefaultHamiltonianBudget);
HamiltonianResult find_hamiltonian_path(const LocalAdjacency& adjacency,
                                        std::int64_t step_budget = kDefaultHamiltonianBudget);

}  // namespace cclmesh::topo::detail
