#include "topologies/detail/hamiltonian.hpp"

#include <algorithm>
#include <limits>

#include "topologies/errors.hpp"

namespace cclmesh::topo::detail {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// Above this size the O(n) connectivity check per step costs more than it prunes.
constexpr std::size_t kConnectivityCheckMaxVertices = 512;

class HamiltonSearch {
 public:
  HamiltonSearch(const LocalAdjacency& adjacency, bool cycle, std::int64_t budget)
      : adj_(adjacency), n_(adjacency.size()), cycle_(cycle), budget_(budget) {}

  // One search from `start`, continuing the shared step count.
  SearchOutcome run_from(std::size_t start) {
    visited_.assign(n_, 0);
    free_degree_.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) free_degree_[v] = adj_[v].size();
    path_.clear();
    start_ = start;

    struct Frame {
      std::vector<std::size_t> candidates;
      std::size_t next = 0;
    };
    std::vector<Frame> stack;
    visit(start);
    stack.push_back(Frame{expand(kNone), 0});
    while (!stack.empty()) {
      if (path_.size() == n_) {
        if (!cycle_ || adjacent(path_.back(), start_)) return SearchOutcome::Found;
      }
      Frame& frame = stack.back();
      if (frame.next >= frame.candidates.size()) {
        stack.pop_back();
        unvisit();
        continue;
      }
      if (++steps_ > budget_) return SearchOutcome::GaveUp;
      const std::size_t previous_end = path_.back();
      visit(frame.candidates[frame.next++]);
      stack.push_back(Frame{expand(previous_end), 0});
    }
    return SearchOutcome::None;
  }

  const std::vector<std::size_t>& path() const { return path_; }
  std::int64_t steps() const { return steps_; }

 private:
  bool adjacent(std::size_t a, std::size_t b) const {
    return std::binary_search(adj_[a].begin(), adj_[a].end(), b);
  }

  void visit(std::size_t v) {
    visited_[v] = 1;
    for (const auto w : adj_[v]) --free_degree_[w];
    path_.push_back(v);
  }

  void unvisit() {
    const auto v = path_.back();
    path_.pop_back();
    visited_[v] = 0;
    for (const auto w : adj_[v]) ++free_degree_[w];
  }

  // Partners w can still have in its final position: unvisited neighbours, the current end,
  // and (for a cycle) the start, which the last vertex must close to.
  std::size_t available(std::size_t w, std::size_t end) const {
    return free_degree_[w] + (adjacent(w, end) ? 1 : 0) +
           (cycle_ && w != start_ && adjacent(w, start_) && end != start_ ? 1 : 0);
  }

  // The moves from the current end, best first; empty when the partial path cannot be
  // completed.
  std::vector<std::size_t> expand(std::size_t previous_end) const {
    const std::size_t end = path_.back();
    const std::size_t remaining = n_ - path_.size();
    if (remaining == 0) return {};
    if (cycle_ && path_.size() > 1 && free_degree_[start_] == 0) return {};

    // Vertices whose partners changed with this move: neighbours of the old and new end.
    const auto infeasible = [&](std::size_t w) {
      if (visited_[w]) return false;
      // On a cycle every remaining vertex has two partners; on a path at least one.
      return available(w, end) < (cycle_ ? 2u : 1u);
    };
    if (previous_end != kNone) {
      for (const auto w : adj_[previous_end]) {
        if (infeasible(w)) return {};
      }
    }
    for (const auto w : adj_[end]) {
      if (infeasible(w)) return {};
    }

    std::vector<std::size_t> moves;
    std::size_t forced = kNone;
    std::size_t forced_count = 0;
    for (const auto w : adj_[end]) {
      if (visited_[w]) continue;
      moves.push_back(w);
      // w needs `end` as a partner now: after this move `end` is interior for good.
      const auto other_partners =
          free_degree_[w] + (cycle_ && w != start_ && adjacent(w, start_) ? 1 : 0);
      const bool needs_end = cycle_ ? other_partners <= 1 && remaining > 1 : other_partners == 0;
      if (needs_end) {
        forced = w;
        ++forced_count;
      }
    }
    if (forced_count > 1) return {};
    // On a path, a forced vertex has no way on: it can only be the last one.
    if (!cycle_ && forced_count == 1 && remaining > 1) return {};
    if (!cycle_ && n_ <= kConnectivityCheckMaxVertices) {
      // A vertex with one unvisited neighbour and not next to the end can be entered but not
      // left, so it must be the path's last vertex; two of them cannot both be.
      std::size_t dead_ends = 0;
      for (std::size_t w = 0; w < n_; ++w) {
        if (visited_[w] || adjacent(w, end)) continue;
        if (free_degree_[w] == 0) return {};
        if (free_degree_[w] == 1) ++dead_ends;
      }
      if (dead_ends > 1) return {};
    }
    if (forced_count == 1) moves = {forced};
    if (n_ <= kConnectivityCheckMaxVertices && !unvisited_connected(remaining)) return {};
    std::stable_sort(moves.begin(), moves.end(), [this](std::size_t a, std::size_t b) {
      return free_degree_[a] < free_degree_[b];
    });
    return moves;
  }

  bool unvisited_connected(std::size_t remaining) const {
    std::size_t seed = kNone;
    for (std::size_t v = 0; v < n_ && seed == kNone; ++v) {
      if (!visited_[v]) seed = v;
    }
    if (seed == kNone) return true;
    std::vector<char> seen(n_, 0);
    std::vector<std::size_t> queue{seed};
    seen[seed] = 1;
    std::size_t reached = 0;
    while (!queue.empty()) {
      const auto v = queue.back();
      queue.pop_back();
      ++reached;
      for (const auto w : adj_[v]) {
        if (!visited_[w] && !seen[w]) {
          seen[w] = 1;
          queue.push_back(w);
        }
      }
    }
    return reached == remaining;
  }

  const LocalAdjacency& adj_;
  std::size_t n_;
  bool cycle_;
  std::int64_t budget_;
  std::int64_t steps_ = 0;
  std::vector<char> visited_;
  std::vector<std::size_t> free_degree_;
  std::vector<std::size_t> path_;
  std::size_t start_ = 0;
};

// Start candidates: lowest degree first (their edges are the most constrained), then index.
std::vector<std::size_t> by_degree(const LocalAdjacency& adjacency) {
  std::vector<std::size_t> order(adjacency.size());
  for (std::size_t v = 0; v < order.size(); ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&adjacency](std::size_t a, std::size_t b) {
    return adjacency[a].size() < adjacency[b].size();
  });
  return order;
}

}  // namespace

HamiltonianResult find_hamiltonian_cycle(const LocalAdjacency& adjacency,
                                         std::int64_t step_budget) {
  const std::size_t n = adjacency.size();
  if (n < 3) return {};
  for (const auto& neighbours : adjacency) {
    if (neighbours.size() < 2) return {};
  }
  // Every vertex is on a Hamiltonian cycle, so one start suffices: the most constrained.
  HamiltonSearch search(adjacency, true, step_budget);
  const auto outcome = search.run_from(by_degree(adjacency).front());
  return HamiltonianResult{
      outcome, outcome == SearchOutcome::Found ? search.path() : std::vector<std::size_t>{},
      search.steps()};
}

HamiltonianResult find_hamiltonian_path(const LocalAdjacency& adjacency, std::int64_t step_budget) {
  const std::size_t n = adjacency.size();
  if (n == 0) return {};
  if (n == 1) return HamiltonianResult{SearchOutcome::Found, {0}, 0};
  std::vector<std::size_t> ends;
  for (std::size_t v = 0; v < n; ++v) {
    if (adjacency[v].empty()) return {};
    if (adjacency[v].size() == 1) ends.push_back(v);
  }
  if (ends.size() > 2) return {};
  // A degree-1 vertex must be an end, so starting there loses nothing.
  const std::vector<std::size_t> starts = ends.empty() ? by_degree(adjacency) : ends;
  HamiltonSearch search(adjacency, false, step_budget);
  for (const auto start : starts) {
    const auto outcome = search.run_from(start);
    if (outcome == SearchOutcome::Found) {
      return HamiltonianResult{outcome, search.path(), search.steps()};
    }
    if (outcome == SearchOutcome::GaveUp) return HamiltonianResult{outcome, {}, search.steps()};
    if (!ends.empty()) break;  // a path exists iff one exists from this forced end
  }
  return HamiltonianResult{SearchOutcome::None, {}, search.steps()};
}

}  // namespace cclmesh::topo::detail
