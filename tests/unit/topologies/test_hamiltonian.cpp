#include <gtest/gtest.h>

#include <set>

#include "topologies/detail/hamiltonian.hpp"

namespace cclmesh::topo::detail {
namespace {

LocalAdjacency from_edges(std::size_t n,
                          std::initializer_list<std::pair<std::size_t, std::size_t>> edges) {
  LocalAdjacency adjacency(n);
  for (const auto& [a, b] : edges) {
    adjacency[a].push_back(b);
    adjacency[b].push_back(a);
  }
  for (auto& list : adjacency) std::sort(list.begin(), list.end());
  return adjacency;
}

bool adjacent(const LocalAdjacency& g, std::size_t a, std::size_t b) {
  return std::binary_search(g[a].begin(), g[a].end(), b);
}

void expect_hamiltonian(const LocalAdjacency& g, const HamiltonianResult& r, bool cycle) {
  ASSERT_EQ(r.outcome, SearchOutcome::Found);
  ASSERT_EQ(r.order.size(), g.size());
  EXPECT_EQ(std::set<std::size_t>(r.order.begin(), r.order.end()).size(), g.size());
  for (std::size_t i = 0; i + 1 < r.order.size(); ++i) {
    EXPECT_TRUE(adjacent(g, r.order[i], r.order[i + 1]));
  }
  if (cycle) {
    EXPECT_TRUE(adjacent(g, r.order.back(), r.order.front()));
  }
}

TEST(Hamiltonian, Cycles) {
  const auto square = from_edges(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}});
  expect_hamiltonian(square, find_hamiltonian_cycle(square), true);
  const auto path = from_edges(3, {{0, 1}, {1, 2}});
  EXPECT_EQ(find_hamiltonian_cycle(path).outcome, SearchOutcome::None);
  EXPECT_EQ(find_hamiltonian_cycle(from_edges(2, {{0, 1}})).outcome, SearchOutcome::None);
}

// The Petersen graph: an outer 5-cycle, an inner pentagram, spokes between them. It has a
// Hamiltonian path but no Hamiltonian cycle.
LocalAdjacency petersen_graph() {
  return from_edges(10, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0},    // outer cycle
                         {0, 5}, {1, 6}, {2, 7}, {3, 8}, {4, 9},    // spokes
                         {5, 7}, {7, 9}, {9, 6}, {6, 8}, {8, 5}});  // inner pentagram
}

TEST(Hamiltonian, PetersenGraphHasAPathButNoCycle) {
  const auto petersen = petersen_graph();
  EXPECT_EQ(find_hamiltonian_cycle(petersen).outcome, SearchOutcome::None);
  expect_hamiltonian(petersen, find_hamiltonian_path(petersen), false);
}

TEST(Hamiltonian, Paths) {
  const auto star = from_edges(4, {{0, 1}, {0, 2}, {0, 3}});
  EXPECT_EQ(find_hamiltonian_path(star).outcome, SearchOutcome::None);
  const auto single = LocalAdjacency(1);
  expect_hamiltonian(single, find_hamiltonian_path(single), false);
  const auto split = from_edges(4, {{0, 1}, {2, 3}});
  EXPECT_EQ(find_hamiltonian_path(split).outcome, SearchOutcome::None);
  // A path forced to start at its degree-1 end.
  const auto tadpole = from_edges(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 1}});
  const auto result = find_hamiltonian_path(tadpole);
  expect_hamiltonian(tadpole, result, false);
  EXPECT_EQ(result.order.front(), 0u);
}

TEST(Hamiltonian, GridsFoundWithinBudget) {
  // A 6x6 grid: Warnsdorff plus pruning finds a cycle quickly.
  LocalAdjacency grid(36);
  for (std::size_t r = 0; r < 6; ++r) {
    for (std::size_t c = 0; c < 6; ++c) {
      const auto v = r * 6 + c;
      if (c + 1 < 6) {
        grid[v].push_back(v + 1);
        grid[v + 1].push_back(v);
      }
      if (r + 1 < 6) {
        grid[v].push_back(v + 6);
        grid[v + 6].push_back(v);
      }
    }
  }
  for (auto& list : grid) std::sort(list.begin(), list.end());
  expect_hamiltonian(grid, find_hamiltonian_cycle(grid), true);
  expect_hamiltonian(grid, find_hamiltonian_path(grid), false);
}

TEST(Hamiltonian, BudgetIsReported) {
  const auto petersen = petersen_graph();
  EXPECT_EQ(find_hamiltonian_cycle(petersen, 1).outcome, SearchOutcome::GaveUp);
}

}  // namespace
}  // namespace cclmesh::topo::detail
