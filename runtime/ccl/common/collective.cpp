#include "runtime/ccl/common/collective.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "kernels/host/slicing.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::runtime::ccl {
namespace {

std::string shape_string(const std::array<std::uint32_t, 4>& s) {
  return fmt::format("[{},{},{},{}]", s[0], s[1], s[2], s[3]);
}

std::string group_string(const std::vector<ChipId>& group) {
  const std::vector<topo::ChipId> ids(group.begin(), group.end());
  return topo::chip_list_to_string(ids);
}

}  // namespace

std::string to_string(DataType dtype) {
  switch (dtype) {
    case DataType::Bfloat16:
      return "bf16";
    case DataType::Float32:
      return "fp32";
    case DataType::Bfloat8B:
      return "bfp8_b";
  }
  return "unknown dtype";
}

std::string to_string(Layout layout) { return layout == Layout::Tile ? "TILE" : "ROW_MAJOR"; }
std::string to_string(CclTopology topology) { return topology == CclTopology::Ring ? "ring" : "line"; }
std::string to_string(CclMode mode) { return mode == CclMode::Fabric ? "fabric" : "legacy"; }

std::size_t hash_value(const TensorSpec& spec) {
  return hash_fields(0, spec.shape, spec.dtype, spec.layout, spec.viewed_row_pages);
}

std::uint32_t element_bytes(DataType dtype) {
  switch (dtype) {
    case DataType::Bfloat16:
      return 2;
    case DataType::Float32:
      return 4;
    case DataType::Bfloat8B:
      return 1;
  }
  return 0;
}

namespace {

std::string empty_dimension_refusal(const TensorSpec& spec) {
  for (std::size_t i = 0; i < 4; ++i) {
    if (spec.shape[i] == 0) {
      return fmt::format("tensor shape {}: dimension {} is 0; expected >= 1", shape_string(spec.shape), i);
    }
  }
  return {};
}

}  // namespace

void require_no_empty_dimension(const TensorSpec& spec, const std::string& op, const std::string& what) {
  const std::string refusal = empty_dimension_refusal(spec);
  if (!refusal.empty()) throw CclParamsError(fmt::format("{}: {} {}", op, what, refusal));
}

std::uint32_t page_size_bytes(const TensorSpec& spec) {
  if (const std::string refusal = empty_dimension_refusal(spec); !refusal.empty()) throw CclParamsError(refusal);
  if (spec.layout == Layout::Tile) {
    switch (spec.dtype) {
      case DataType::Bfloat16:
        return kTilePageBytesBf16;
      case DataType::Float32:
        return kTilePageBytesFp32;
      case DataType::Bfloat8B:
        return kTilePageBytesBfp8;
    }
  }
  if (spec.dtype == DataType::Bfloat8B) {
    throw CclParamsError("tensor: ROW_MAJOR bfp8_b is invalid (bfp8_b exists only as tiles, REFERENCE 7.1); use TILE");
  }
  return spec.shape[3] * element_bytes(spec.dtype);
}

api::Shape4D shape_in_pages(const TensorSpec& spec) {
  page_size_bytes(spec);  // rejects zero dimensions and ROW_MAJOR bfp8_b
  return cmd::shape_in_pages(spec.shape,
                             spec.layout == Layout::Tile ? api::PageLayout::TILE : api::PageLayout::ROW_MAJOR);
}

std::uint32_t dim_of(const api::Shape4D& shape, std::uint32_t dim) {
  switch (dim) {
    case 0:
      return shape.w;
    case 1:
      return shape.z;
    case 2:
      return shape.y;
    default:
      return shape.x;
  }
}

void set_dim(api::Shape4D& shape, std::uint32_t dim, std::uint32_t value) {
  switch (dim) {
    case 0:
      shape.w = value;
      break;
    case 1:
      shape.z = value;
      break;
    case 2:
      shape.y = value;
      break;
    default:
      shape.x = value;
      break;
  }
}

std::uint64_t num_pages(const TensorSpec& spec) { return api::volume(shape_in_pages(spec)); }

std::uint64_t size_bytes(const TensorSpec& spec) { return num_pages(spec) * page_size_bytes(spec); }

TensorSpec with_dim_scaled(const TensorSpec& spec, std::uint32_t dim, std::uint32_t factor, bool multiply) {
  // Reached before an op's validate() by its output_spec() (all_gather::allocate's first step):
  // a bad dim is the caller's, named as validate() names it, not std::array::at's out_of_range.
  if (dim > 3) throw CclParamsError(fmt::format("dim {} is out of range; expected 0..3 (w, z, y, x)", dim));
  TensorSpec out = spec;
  out.shape.at(dim) = multiply ? spec.shape.at(dim) * factor : spec.shape.at(dim) / factor;
  return out;
}

BufferConfig interleaved_buffer_config(const TensorSpec& spec, BufferType type) {
  return BufferConfig{type, size_bytes(spec), page_size_bytes(spec), TensorMemoryLayout::Interleaved, std::nullopt};
}

void require_buffer_holds(const BufferHandle& buffer, const TensorSpec& spec, const std::string& op,
                          const std::string& what) {
  const std::uint32_t page = page_size_bytes(spec);
  const std::uint64_t bytes = size_bytes(spec);
  if (buffer.config.page_size_bytes != page || buffer.config.size_bytes != bytes) {
    throw CclParamsError(
        fmt::format("{}: {} buffer is {} B in pages of {} B; the {} {} {} tensor {} needs {} B in pages "
                    "of {} B",
                    op, what, buffer.config.size_bytes, buffer.config.page_size_bytes, to_string(spec.layout),
                    to_string(spec.dtype), what, shape_string(spec.shape), bytes, page));
  }
  // A sharded buffer places page i by its row (i / tensor_width_pages) and column: rows of
  // another width hold the same pages, but its shards are not the tensor's (review 9).
  // A view's buffer may be the viewed tensor's (rows of viewed_row_pages: all_reduce's caller's
  // input and output, which all_reduce checked against the tensor itself) or one holding the
  // view as a tensor of its own (all_reduce's intermediates: its own rows).
  if (buffer.config.layout != TensorMemoryLayout::Interleaved && buffer.config.shard) {
    const std::uint32_t row_pages = shape_in_pages(spec).x;
    const std::uint32_t laid_out = buffer.config.shard->tensor_width_pages;
    if (laid_out != row_pages && laid_out != spec.viewed_row_pages.value_or(row_pages)) {
      throw CclParamsError(fmt::format(
          "{}: {} buffer's shards are laid out in rows of {} pages (ShardSpec::tensor_width_pages {}); the {} {} {} "
          "tensor {} has rows of {} pages{}, so its shards would not be the tensor's",
          op, what, laid_out, laid_out, to_string(spec.layout), to_string(spec.dtype), what, shape_string(spec.shape),
          row_pages,
          spec.viewed_row_pages ? fmt::format(" (or {}, the rows of the tensor it views)", *spec.viewed_row_pages)
                                : ""));
    }
  }
}

void require_page_aligned_dim(const TensorSpec& spec, std::uint32_t dim, const std::string& op,
                              const std::string& what) {
  if (dim > 3) throw CclParamsError(fmt::format("{}: dim {} is out of range; expected 0..3 (w, z, y, x)", op, dim));
  if (spec.layout == Layout::Tile && dim >= 2 && spec.shape[dim] % kTileSide != 0) {
    throw CclParamsError(
        fmt::format("{}: {} dim {} is {} elements, not whole 32-element tiles; {} cuts and joins a TILE "
                    "tensor along dims 2 and 3 only at tile boundaries (only all_gather has tt-metal's "
                    "all_broadcast + concat fallback for padded dims, REFERENCE 7.6)",
                    op, what, dim, spec.shape[dim], op));
  }
  if (spec.layout == Layout::RowMajor && dim == 3) {
    throw CclParamsError(
        fmt::format("{}: ROW_MAJOR along dim 3 is not supported: a ROW_MAJOR page is a whole row, and "
                    "{} moves whole pages (only all_gather writes rows in pieces); use TILE or "
                    "another dim",
                    op, op));
  }
}

std::size_t hash_value(const GroupSelection& groups) {
  return hash_fields(0, groups.cluster_axis, groups.chips);
}

std::vector<std::vector<ChipId>> resolve_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                const FabricOptions& fabric) {
  return resolve_groups(selection, topology, FabricPlan(topology, fabric));
}

std::vector<std::vector<ChipId>> resolve_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                const FabricPlan& fabric) {
  std::vector<std::vector<ChipId>> groups;
  if (selection.cluster_axis) {
    if (!selection.chips.empty()) {
      throw CclParamsError("groups: give cluster_axis or chips, not both");
    }
    for (const auto& g : topo::axis_groups(topology, *selection.cluster_axis)) {
      // Ranks in coordinate order, whatever the fabric runs the row or column as (fabric_order).
      groups.emplace_back(g.begin(), g.end());
    }
  } else if (!selection.chips.empty()) {
    groups = selection.chips;
  } else if (fabric.enabled() && fabric.lines().size() == 1) {
    // Ranks in the ring's order when it runs as a line around a down link (fabric_order).
    const FabricLine& line = fabric.lines().front();
    groups.push_back(line.opened_at ? line.opened_from : line.chips);
  } else if (fabric.enabled()) {
    throw CclParamsError(fmt::format("groups: the device's {} fabric has {} lines; give cluster_axis or chips",
                                     to_string(fabric.scope()), fabric.lines().size()));
  } else {
    throw CclParamsError(
        "groups: no chips, no cluster_axis and no fabric to take the chips from; expected one of them");
  }
  std::set<ChipId> seen;
  for (const auto& g : groups) {
    if (g.size() < 2) {
      throw CclParamsError(
          fmt::format("groups: group [{}] has {} chip(s); a collective needs at least 2", group_string(g), g.size()));
    }
    for (ChipId c : g) {
      topology.chip(static_cast<topo::ChipId>(c));  // InputError for an unknown chip
      if (!seen.insert(c).second) {
        throw CclParamsError(fmt::format("groups: chip {} appears twice; groups must be disjoint", c));
      }
    }
  }
  return groups;
}

void require_group_shape(const topo::Topology& topology, const std::vector<ChipId>& group, CclTopology shape,
                         std::uint32_t num_links, const std::string& op) {
  const std::size_t n = group.size();
  if (num_links == 0) throw CclParamsError(fmt::format("{}: num_links is 0; expected at least 1", op));
  if (shape == CclTopology::Ring && n == 2) {
    throw CclParamsError(fmt::format("{}: a 2-chip ring ({}) must run as a line (tt-metal issue #12770, REFERENCE 3.2)",
                                     op, group_string(group)));
  }
  const std::size_t hops = shape == CclTopology::Ring ? n : n - 1;
  std::size_t fewest = SIZE_MAX;
  std::string fewest_hop;
  for (std::size_t i = 0; i < hops; ++i) {
    const ChipId a = group[i];
    const ChipId b = group[(i + 1) % n];
    const std::size_t links = topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b));
    if (links == 0) {
      if (shape == CclTopology::Ring && i + 1 == n) {
        throw CclParamsError(
            fmt::format("{}: ring {} has no closing link: chips {} and {} are not neighbours; run it as "
                        "a line",
                        op, group_string(group), a, b));
      }
      throw CclParamsError(fmt::format("{}: chips {} and {} are consecutive in group {} but not neighbours", op, a, b,
                                       group_string(group)));
    }
    if (links < fewest) {
      fewest = links;
      fewest_hop = fmt::format("{}-{}", a, b);
    }
  }
  if (num_links > fewest) {
    throw TooFewLinksError(
        fmt::format("{}: num_links {} is more than the {} link(s) of hop {}, the hop of {} {} with the "
                    "fewest",
                    op, num_links, fewest, fewest_hop, to_string(shape), group_string(group)),
        static_cast<std::uint32_t>(fewest));
  }
}

bool FabricGroup::positions_are_ranks() const {
  for (std::uint32_t p = 0; p < ranks.size(); ++p) {
    if (ranks[p] != p) return false;
  }
  return true;
}

std::uint32_t FabricGroup::position_of(std::uint32_t rank) const {
  const auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) {
    throw CclParamsError(fmt::format("fabric group: no rank {} in a group of {}", rank, ranks.size()));
  }
  return static_cast<std::uint32_t>(at - ranks.begin());
}

std::uint32_t FabricGroup::reach_up(std::uint32_t position) const {
  return topology == CclTopology::Ring ? size() - 1 : size() - 1 - position;
}

std::uint32_t FabricGroup::reach_down(std::uint32_t position) const {
  return topology == CclTopology::Ring ? size() - 1 : position;
}

FabricGroup::Reach FabricGroup::full_reach(std::uint32_t position) const {
  if (topology == CclTopology::Ring) return Reach{size() / 2, (size() - 1) / 2};
  return Reach{reach_up(position), reach_down(position)};
}

std::uint32_t FabricGroup::position_toward(std::uint32_t position, bool forward, std::uint32_t steps) const {
  const bool up = forward == up_is_forward;
  const std::uint32_t n = size();
  if (topology == CclTopology::Ring) return up ? (position + steps) % n : (position + n - steps % n) % n;
  return up ? position + steps : position - steps;
}

cmd::ChipMulticast FabricGroup::multicast(std::uint32_t position, std::uint32_t up, std::uint32_t down) const {
  (void)position;
  return up_is_forward ? cmd::ChipMulticast{up, down} : cmd::ChipMulticast{down, up};
}

cmd::ChipUnicast FabricGroup::route(std::uint32_t from, std::uint32_t to) const {
  const std::uint32_t n = size();
  if (from == to || from >= n || to >= n) {
    throw CclParamsError(
        fmt::format("fabric group: no route from position {} to position {} in a group of {}", from, to, n));
  }
  bool up = to > from;
  std::uint32_t hops = up ? to - from : from - to;
  if (topology == CclTopology::Ring) {
    const std::uint32_t ahead = (to + n - from) % n;
    up = ahead <= n - ahead;
    hops = up ? ahead : n - ahead;
  }
  return cmd::ChipUnicast{hops, up == up_is_forward};
}

FabricOrder fabric_order(const FabricPlan& fabric, const std::vector<ChipId>& group, CclTopology shape) {
  const auto n = static_cast<std::uint32_t>(group.size());
  FabricOrder order{group, {}};
  for (std::uint32_t rank = 0; rank < n; ++rank) order.ranks.push_back(rank);
  const FabricLine* opened = shape == CclTopology::Line ? opened_line_holding(fabric, group) : nullptr;
  if (opened == nullptr) return order;
  // The down link between ranks k and k + 1 (mod n): the line runs from rank k + 1 round to k.
  const auto [a, b] = opened->opened_at.value();
  for (std::uint32_t k = 0; k < n; ++k) {
    const ChipId from = group[k];
    const ChipId to = group[(k + 1) % n];
    if (!((from == a && to == b) || (from == b && to == a))) continue;
    for (std::uint32_t p = 0; p < n; ++p) {
      order.ranks[p] = (k + 1 + p) % n;
      order.chips[p] = group[order.ranks[p]];
    }
    break;
  }
  return order;
}

FabricGroup map_group_onto_fabric(const FabricPlan& fabric, const std::vector<ChipId>& rank_order, CclTopology shape,
                                  const std::string& op) {
  if (!fabric.enabled()) {
    throw CclParamsError(
        fmt::format("{}: fabric mode needs the device's persistent fabric; params.fabric.mode is none", op));
  }
  for (ChipId c : rank_order) {
    if (!fabric.contains(c)) {
      throw CclParamsError(fmt::format("{}: chip {} is not on the device's fabric ({})", op, c, fabric.describe()));
    }
  }
  const std::optional<std::uint32_t> line_index = fabric.line_containing(rank_order);
  if (!line_index) {
    throw CclParamsError(
        fmt::format("{}: group {} lies on no single line of the device's {} fabric ({}); a 1D fabric carries a "
                    "group along one of its lines (per-axis fabric: one row or one column)",
                    op, group_string(rank_order), to_string(fabric.scope()), fabric.describe()));
  }
  const FabricLine& line = fabric.lines()[*line_index];
  FabricOrder order = fabric_order(fabric, rank_order, shape);
  const std::vector<ChipId>& group = order.chips;
  const bool fabric_ring = line.mode == FabricMode::Ring;
  if (shape == CclTopology::Ring && !fabric_ring) {
    throw CclParamsError(
        fmt::format("{}: a ring needs a ring fabric (the device's fabric {} is a line, so routers do not use "
                    "the closing link)",
                    op, line.to_string()));
  }
  const auto m = static_cast<std::int64_t>(line.chips.size());
  std::vector<std::int64_t> pos;
  for (ChipId c : group) pos.push_back(static_cast<std::int64_t>(line.position(c)));
  if (shape == CclTopology::Ring && static_cast<std::int64_t>(group.size()) != m) {
    throw CclParamsError(
        fmt::format("{}: ring {} must be the device's whole fabric ring ({}); a smaller ring has no "
                    "closing router",
                    op, group_string(group), group_string(line.chips)));
  }
  FabricGroup g;
  g.topology = shape;
  g.fabric_line = *line_index;
  const std::size_t steps = shape == CclTopology::Ring ? group.size() : group.size() - 1;
  std::optional<bool> forward;
  for (std::size_t i = 0; i < steps; ++i) {
    const std::int64_t d = pos[(i + 1) % group.size()] - pos[i];
    const std::int64_t wrapped = fabric_ring ? ((d % m) + m) % m : d;
    bool fwd = false;
    if (wrapped == 1) {
      fwd = true;
    } else if (wrapped == (fabric_ring ? m - 1 : -1)) {
      fwd = false;
    } else {
      throw CclParamsError(
          fmt::format("{}: chips {} and {} are consecutive in group {} but not neighbours on the device's "
                      "fabric {} ({}); the group must be a run of consecutive fabric chips",
                      op, group[i], group[(i + 1) % group.size()], group_string(group), to_string(line.mode),
                      group_string(line.chips)));
    }
    if (forward && *forward != fwd) {
      throw CclParamsError(
          fmt::format("{}: group {} turns around on the device's fabric ({}); the group must run in one "
                      "direction",
                      op, group_string(group), group_string(line.chips)));
    }
    forward = fwd;
  }
  g.up_is_forward = forward.value_or(true);
  g.chips = std::move(order.chips);
  g.ranks = std::move(order.ranks);
  return g;
}

void require_fabric_links(const FabricPlan& fabric, std::uint32_t num_links, const std::string& op) {
  if (num_links > fabric.num_links()) {
    const std::uint32_t planes = fabric.num_links();
    throw CclParamsError(fmt::format("{}: num_links {} but the device's fabric runs {} routing plane{} "
                                     "(FabricOptions::num_links; one router per link per hop end, REFERENCE 3.5)",
                                     op, num_links, planes == 1 ? std::string("one") : std::to_string(planes),
                                     planes == 1 ? "" : "s"));
  }
}

const FabricLine* opened_line_holding(const FabricPlan& fabric, const std::vector<ChipId>& group) {
  if (!fabric.enabled()) return nullptr;
  const std::optional<std::uint32_t> index = fabric.line_containing(group);
  if (!index) return nullptr;
  const FabricLine& line = fabric.lines()[*index];
  return line.opened_at && line.chips.size() == group.size() ? &line : nullptr;
}

CclTopology group_runs_as(const FabricPlan& fabric, const std::vector<ChipId>& group, CclTopology shape) {
  return shape == CclTopology::Ring && opened_line_holding(fabric, group) != nullptr ? CclTopology::Line : shape;
}

std::vector<ShapedGroups> groups_by_shape(const GroupSelection& selection, const topo::Topology& topology,
                                          const FabricOptions& fabric, CclTopology shape) {
  if (fabric.down_edges.empty() || shape != CclTopology::Ring) return {ShapedGroups{shape, selection}};
  ShapedGroups rings{CclTopology::Ring, {}};
  ShapedGroups lines{CclTopology::Line, {}};
  if (fabric.mode == FabricMode::None) {
    // Legacy mode: no fabric, each group laid around the down links on its own (legacy_groups.hpp).
    for (const LegacyGroup& group : legacy_groups(selection, topology, shape, fabric.down_edges, "groups")) {
      (group.shape == CclTopology::Line ? lines : rings).groups.chips.push_back(group.chips_by_rank());
    }
  } else {
    const FabricPlan plan(topology, fabric);
    for (std::vector<ChipId>& group : resolve_groups(selection, topology, plan)) {
      (group_runs_as(plan, group, shape) == CclTopology::Line ? lines : rings).groups.chips.push_back(std::move(group));
    }
  }
  if (lines.groups.chips.empty()) return {ShapedGroups{shape, selection}};
  if (rings.groups.chips.empty()) return {lines};
  return {rings, lines};
}

PlacedGroups place_groups(const GroupSelection& selection, const topo::Topology& topology, const FabricOptions& fabric,
                          CclTopology shape, std::uint32_t num_links, const std::string& op) {
  PlacedGroups placed;
  placed.plan = FabricPlan(topology, fabric);
  const std::vector<std::vector<ChipId>> groups = resolve_groups(selection, topology, placed.plan);
  placed.group_size = static_cast<std::uint32_t>(groups.front().size());
  for (const auto& g : groups) {
    if (g.size() != placed.group_size) {
      throw CclParamsError(fmt::format("{}: groups of {} and {} chips; every group must have the same size", op,
                                       placed.group_size, g.size()));
    }
    if (group_runs_as(placed.plan, g, shape) != shape) {
      const FabricLine& line = placed.plan.lines()[*placed.plan.line_containing(g)];
      // Asked as a line the group runs (every op places data by rank, from any position).
      throw RingRunsAsLineError(fmt::format("{}: group {} runs as the line {} around a down link; {} does not run "
                                            "ring and line groups together yet; run with --topology line, or "
                                            "without the fault",
                                            op, group_string(g), fmt::join(line.chips, "-"), op));
    }
    // The hops the fabric runs, not the down link between two ranks.
    require_group_shape(topology, fabric_order(placed.plan, g, shape).chips, shape, num_links, op);
    placed.all_chips.insert(placed.all_chips.end(), g.begin(), g.end());
  }
  require_fabric_links(placed.plan, num_links, op);
  for (const auto& g : groups) {
    placed.groups.push_back(map_group_onto_fabric(placed.plan, g, shape, op));
  }
  return placed;
}

void require_uniform_core_maps(const topo::Topology& topology, const std::vector<ChipId>& chips,
                               const std::string& op) {
  if (chips.empty()) return;
  const ChipCoreMap first = chip_core_map(topology, chips.front());
  for (ChipId c : chips) {
    const ChipCoreMap map = chip_core_map(topology, c);
    if (map.arch() != first.arch() || map.harvested_rows() != first.harvested_rows() ||
        map.dram_bank_count() != first.dram_bank_count()) {
      // Says what to run instead: a TG's whole system (its 4 gateway chips with the Galaxy's 32)
      // is refused here for every op, and users run it first (session 37's fuzzing).
      throw CclParamsError(
          fmt::format("{}: chip {} is harvested differently from chip {}; a fabric multicast carries one "
                      "NoC0 address to every chip, so the chips of a collective must agree; expected groups "
                      "without chip {} (--chips, or --cluster-axis where the mesh's axes leave it out)",
                      op, c, chips.front(), c));
    }
  }
}

std::vector<BufferHandle> workload_buffers(std::initializer_list<const BufferHandle*> buffers) {
  std::vector<BufferHandle> handles;
  for (const BufferHandle* buffer : buffers) {
    if (buffer != nullptr) handles.push_back(*buffer);
  }
  return handles;
}

std::vector<GlobalSemaphore> workload_semaphores(
    std::initializer_list<const std::optional<GlobalSemaphore>*> semaphores) {
  std::vector<GlobalSemaphore> handles;
  for (const std::optional<GlobalSemaphore>* semaphore : semaphores) {
    if (semaphore->has_value()) handles.push_back(**semaphore);
  }
  return handles;
}

void require_buffer_layouts(const topo::Topology& topology, const std::vector<ChipId>& chips,
                            std::initializer_list<const BufferHandle*> buffers) {
  const CoreCoord grid = common_worker_grid(topology);
  for (ChipId chip : chips) {
    const std::uint32_t banks = chip_core_map(topology, chip).dram_bank_count();
    for (const BufferHandle* buffer : buffers) buffer_layout(*buffer, grid, banks);
  }
}

std::vector<CoreCoord> worker_cores(const topo::Topology& topology, CoreCoord first, std::uint32_t count,
                                    const std::string& op) {
  const CoreCoord grid = common_worker_grid(topology);
  const std::uint64_t start = std::uint64_t{first.y} * grid.x + first.x;
  if (first.x >= grid.x || start + count > std::uint64_t{grid.x} * grid.y) {
    throw CclParamsError(fmt::format("{}: {} worker cores from ({},{}) do not fit the {}x{} worker grid{}", op, count,
                                     first.x, first.y, grid.x, grid.y, worker_grid_harvest_note(topology)));
  }
  std::vector<CoreCoord> cores;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint64_t i = start + k;
    cores.push_back(CoreCoord{static_cast<std::uint32_t>(i % grid.x), static_cast<std::uint32_t>(i / grid.x)});
  }
  return cores;
}

std::vector<CoreRange> one_core_ranges(const std::vector<CoreCoord>& cores) {
  std::vector<CoreRange> ranges;
  for (const CoreCoord& c : cores) ranges.push_back(CoreRange{c, c});
  return ranges;
}

void require_semaphore_on(const std::optional<GlobalSemaphore>& semaphore, const std::vector<CoreCoord>& cores,
                          const std::string& op, const std::string& what) {
  if (!semaphore) {
    throw CclParamsError(
        fmt::format("{}: {} is missing; create a global semaphore on the op's worker cores "
                    "(semaphore_cores()) once and pass it with every call",
                    op, what));
  }
  for (const CoreCoord& c : cores) {
    const bool on = std::any_of(semaphore->cores.begin(), semaphore->cores.end(),
                                [&c](const CoreRange& r) { return r.contains(c); });
    if (!on) {
      throw CclParamsError(
          fmt::format("{}: {} (global semaphore {}) is not on worker core ({},{})", op, what, semaphore->id, c.x, c.y));
    }
  }
}

api::TensorSlice flat_run(std::uint32_t tensor_pages, std::uint32_t first, std::uint32_t pages) {
  return api::TensorSlice{api::Shape4D{1, 1, 1, tensor_pages}, api::Shape4D{1, 1, 1, tensor_pages},
                          api::Shape4D{0, 0, 0, 0}, api::Shape4D{1, 1, 1, pages}, api::Shape4D{0, 0, 0, first}};
}

std::uint32_t reduce_data_format(DataType dtype) {
  switch (dtype) {
    case DataType::Float32: return kernels::reduce::kDataFormatFloat32;
    case DataType::Bfloat8B: return kernels::reduce::kDataFormatBfp8B;
    case DataType::Bfloat16: break;
  }
  return kernels::reduce::kDataFormatFloat16B;
}

KernelSpec reduce_kernel(CoreCoord core, const kargs::ReduceSpec& spec) {
  const kargs::KernelArgs args = kargs::build_reduce_args(spec);
  KernelSpec k;
  k.kernel = kernels::kReduceKernelName;
  k.core_kind = CoreKind::Tensix;
  k.cores = {CoreRange{core, core}};
  k.processor = DataMovementProcessor::Compute;
  k.compile_time_args = args.compile_time;
  k.runtime_args[core] = args.runtime;
  return k;
}

}  // namespace cclmesh::runtime::ccl
