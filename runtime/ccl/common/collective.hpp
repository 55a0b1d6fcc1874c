#pragma once
// What the collectives (all_gather, reduce_scatter, all_reduce) share: the tensor description
// their params carry (4D shape in elements, dtype, page layout), page sizes (REFERENCE 7.1),
// the groups a collective runs over (explicit chip lists, or every row / column of a mesh given
// a cluster_axis, REFERENCE 3.4), and how one group sits on the device's persistent 1D fabric.
// Pure functions of values and a topology: no device, no engine.
//
// Errors are bad input (DESIGN.md tier 1): CclParamsError naming the field, the value and what
// was expected.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/ccl_command.hpp"
#include "kernels/host/command.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// Element types and their TILE page sizes (REFERENCE 7.1): bf16 2048 B, fp32 4096 B, bfp8_b
// 1088 B (1024 mantissa bytes + 64 shared-exponent bytes). bfp8_b has no ROW_MAJOR form.
enum class DataType : std::uint8_t { Bfloat16, Float32, Bfloat8B };
enum class Layout : std::uint8_t { Tile, RowMajor };
// The shape a collective runs on: a line (no closing link used) or a ring (REFERENCE 6.7).
enum class CclTopology : std::uint8_t { Line, Ring };
// Fabric: the persistent 1D routers the device launched once (REFERENCE 6). Legacy: per-op EDM
// data movers launched with the op (REFERENCE 5).
enum class CclMode : std::uint8_t { Fabric, Legacy };

std::string to_string(DataType dtype);
std::string to_string(Layout layout);
std::string to_string(CclTopology topology);
std::string to_string(CclMode mode);

inline constexpr std::uint32_t kTileSide = 32;
inline constexpr std::uint32_t kTilePageBytesBf16 = 2048;
inline constexpr std::uint32_t kTilePageBytesFp32 = 4096;
inline constexpr std::uint32_t kTilePageBytesBfp8 = 1088;
// REFERENCE 6.5: the routing byte's nibble caps a route (and a multicast's reach) at 15 hops.
inline constexpr std::uint32_t kMaxFabricHops = 15;
// REFERENCE 4.11: inline wait targets and increments are 8 bits.
inline constexpr std::uint32_t kMaxInlineValue = 255;

// A tensor as the user sees it: 4D shape in elements (w, z, y, x; pad lower ranks with 1s on
// the left), element type and page layout. TILE shapes are padded to whole 32x32 tiles.
struct TensorSpec {
  std::array<std::uint32_t, 4> shape{1, 1, 32, 32};
  DataType dtype = DataType::Bfloat16;
  Layout layout = Layout::Tile;
  // Set on a view of another tensor (all_reduce hands its halves the tensor as one row of
  // pages): the width in pages of that tensor's rows, the rows a sharded buffer holding the view
  // is laid out in (ShardSpec::tensor_width_pages). Unset: this tensor's own width in pages.
  std::optional<std::uint32_t> viewed_row_pages = std::nullopt;
  bool operator==(const TensorSpec&) const = default;
};

std::size_t hash_value(const TensorSpec& spec);

std::uint32_t element_bytes(DataType dtype);  // bfp8_b: 1 (its tile page adds the exponents)
// Bytes of one page: a tile (TILE) or one row of the last dim (ROW_MAJOR). Throws
// CclParamsError for ROW_MAJOR bfp8_b (REFERENCE 7.1) and for a zero dimension.
std::uint32_t page_size_bytes(const TensorSpec& spec);
// Throws CclParamsError "OP: WHAT tensor shape [..]: dimension D is 0; expected >= 1" for an empty
// dimension: a check named on the tensor the caller gave, before a spec derived from it (an
// output scaled along a dim) would report the derived shape instead.
void require_no_empty_dimension(const TensorSpec& spec, const std::string& op, const std::string& what);
// (w, z, y, x) in pages: TILE y and x in tiles (rounded up), ROW_MAJOR x = 1 (REFERENCE 4.2).
api::Shape4D shape_in_pages(const TensorSpec& spec);
std::uint64_t num_pages(const TensorSpec& spec);
// A run of `pages` pages from `first` of a tensor of `tensor_pages` pages seen as one row.
api::TensorSlice flat_run(std::uint32_t tensor_pages, std::uint32_t first, std::uint32_t pages);
// Extent of dim 0..3 (w, z, y, x) of a page shape, and setting it.
std::uint32_t dim_of(const api::Shape4D& shape, std::uint32_t dim);
void set_dim(api::Shape4D& shape, std::uint32_t dim, std::uint32_t value);
std::uint64_t size_bytes(const TensorSpec& spec);  // pages x page size
// The same tensor with `dim` multiplied (gathered) or divided (scattered) by `factor`.
TensorSpec with_dim_scaled(const TensorSpec& spec, std::uint32_t dim, std::uint32_t factor, bool multiply);
// An interleaved buffer config for `spec` in DRAM or L1.
BufferConfig interleaved_buffer_config(const TensorSpec& spec, BufferType type);
// Checks that `buffer` holds exactly `spec` (size and page size) and, when sharded, in the
// spec's rows (ShardSpec::tensor_width_pages: the spec's width in pages, or for a view its
// viewed_row_pages too); `what` names it ("input").
void require_buffer_holds(const BufferHandle& buffer, const TensorSpec& spec, const std::string& op,
                          const std::string& what);
// Checks dim (0..3) and, for TILE, that dims 2 and 3 are whole tiles where the op cuts or
// joins them (all_gather checks its broadcast fallback's case before it gets here); ROW_MAJOR
// cannot cut or join dim 3 (a page is a whole row; all_gather, fabric and legacy, does its own
// check instead, as it writes rows in pieces).
void require_page_aligned_dim(const TensorSpec& spec, std::uint32_t dim, const std::string& op,
                              const std::string& what);

// The chips a collective runs over: each group an independent line or ring, chips in rank
// order. `cluster_axis` set: one group per row / column of the topology's mesh
// (topo::axis_groups); else `chips` if given (one or more groups), else one group of every
// chip of the fabric, in fabric order (a whole-system fabric only; a ring it runs as a line
// around a down link in the ring's order, FabricLine::opened_from).
struct GroupSelection {
  std::optional<int> cluster_axis = {};
  std::vector<std::vector<ChipId>> chips = {};
  bool operator==(const GroupSelection&) const = default;
};

std::size_t hash_value(const GroupSelection& groups);

// Resolves the groups. Throws CclParamsError for an empty group list, a group of fewer than 2
// chips or a chip in two groups; topo::InputError for unknown chips or a bad axis.
std::vector<std::vector<ChipId>> resolve_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                const FabricPlan& fabric);
// The same on the fabric of `fabric` (the device's FabricOptions): the ranks a caller writes
// inputs for and reads outputs from, e.g. a T3K ring's 4, 0, 2, 6, 7, 3, 1, 5.
std::vector<std::vector<ChipId>> resolve_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                const FabricOptions& fabric);

// Checks one group can run as `topology` with `num_links` links per hop on the physical
// topology: a 2-chip ring must be a line (REFERENCE 3.2, 11.15), a ring needs its closing link,
// every hop needs `num_links` links (the hop with the fewest decides).
void require_group_shape(const topo::Topology& topology, const std::vector<ChipId>& group, CclTopology shape,
                         std::uint32_t num_links, const std::string& op);

// One group laid onto the device's fabric. Its chips are held by *position*, the order the
// fabric runs them in (position p + 1 is p's neighbour), which the fabric's directions and hop
// counts go by; each position's *rank* (rank_at), the order the caller gave, goes with the data:
// the tensor slice a chip contributes, owns or writes at. The two are the same except on a ring
// the fabric runs as a line around a down link that is not its closing one (a torus row or
// column, or the whole-system ring when no other ring avoids the link): ranks
// 0-1-2-3 with 0-1 down run as the line 1-2-3-0, positions 0..3 holding ranks 1, 2, 3, 0, and
// the op's result is the unfaulted one. The methods below take and return positions.
struct FabricGroup {
  CclTopology topology = CclTopology::Line;
  std::vector<ChipId> chips;         // by position
  std::vector<std::uint32_t> ranks;  // by position: the rank of chips[p]
  // True when position p + 1 is the fabric-forward neighbour of p (the same for every p).
  bool up_is_forward = true;
  // The fabric line the group runs on (FabricPlan::lines()); workers connect on it.
  std::uint32_t fabric_line = 0;

  // The port of routing plane `link` on the group's line.
  FabricPort port(std::uint32_t link) const { return FabricPort{fabric_line, link}; }

  std::uint32_t size() const { return static_cast<std::uint32_t>(chips.size()); }
  std::uint32_t rank_at(std::uint32_t position) const { return ranks.at(position); }
  std::uint32_t position_of(std::uint32_t rank) const;
  // False when some position holds another rank (a ring run as a line opened mid-ring).
  bool positions_are_ranks() const;
  // `by_rank` (one entry per rank) reordered by position: entry p is by_rank[rank_at(p)].
  template <class T>
  std::vector<T> by_position(const std::vector<T>& by_rank) const {
    std::vector<T> result;
    for (std::uint32_t rank : ranks) result.push_back(by_rank.at(rank));
    return result;
  }
  // Chips of the group beyond `position` toward higher / lower positions (a ring: size - 1 both).
  std::uint32_t reach_up(std::uint32_t position) const;
  std::uint32_t reach_down(std::uint32_t position) const;
  // The position `steps` hops away from `position` in fabric direction `forward` (ring: modulo
  // size; line: must stay inside).
  std::uint32_t position_toward(std::uint32_t position, bool forward, std::uint32_t steps) const;
  // How far a multicast from `position` that must reach every other chip of the group goes each
  // way: on a ring half-way round both ways (n/2 up, (n-1)/2 down: 4 and 3 at N = 8, REFERENCE
  // 7.3 FULL_TENSOR), on a line to both ends.
  struct Reach {
    std::uint32_t up = 0;
    std::uint32_t down = 0;
  };
  Reach full_reach(std::uint32_t position) const;
  // A multicast from `position` reaching `up` positions upward and `down` downward, in fabric
  // terms.
  cmd::ChipMulticast multicast(std::uint32_t position, std::uint32_t up, std::uint32_t down) const;
  // The unicast route from position `from` to position `to` (!= from): on a line the only one, on
  // a ring the shorter way (upward on a tie).
  cmd::ChipUnicast route(std::uint32_t from, std::uint32_t to) const;
};

// `group` (chips in rank order) in the order the fabric runs it, and the rank at each position:
// a line on the whole of a ring the fabric runs as a line around a down link (a torus row or
// column, or the whole-system ring: FabricLine::opened_at) starts at the chip after that link
// in the group's direction (ranks 0-1-2-3 with 0-1 down: chips 1-2-3-0, ranks 1, 2, 3, 0); any
// other group as given.
struct FabricOrder {
  std::vector<ChipId> chips;
  std::vector<std::uint32_t> ranks;
};
FabricOrder fabric_order(const FabricPlan& fabric, const std::vector<ChipId>& group, CclTopology shape);

// The group must run on consecutive chips of one fabric line (the whole-system line or ring, or
// the row or column holding it on a per-axis fabric) in fabric_order: a line on a segment of it
// (either orientation), a ring on the whole of a ring. Throws CclParamsError otherwise, and when
// num_links exceeds the fabric's routing planes.
FabricGroup map_group_onto_fabric(const FabricPlan& fabric, const std::vector<ChipId>& group, CclTopology shape,
                                  const std::string& op);
// Checks the fabric runs at least `num_links` routing planes (REFERENCE 3.5).
void require_fabric_links(const FabricPlan& fabric, std::uint32_t num_links, const std::string& op);

// The fabric line that runs `group` (in any order) around a down link (FabricLine::opened_at), or
// nullptr: the group is a torus row or column, or the whole-system ring, with a link down from
// the start.
const FabricLine* opened_line_holding(const FabricPlan& fabric, const std::vector<ChipId>& group);
// The shape `group` runs as when `shape` is asked: a line on such an opened ring, else `shape`.
CclTopology group_runs_as(const FabricPlan& fabric, const std::vector<ChipId>& group, CclTopology shape);

// The groups of a selection by the shape they run as. One entry, the selection as given, when
// every group runs as `shape` (always, without down links); else the rings and the lines each
// as explicit chips in rank order (rings first). An op asked to run rings on a fabric with a
// down link builds each entry as its own op over its groups (an algorithm, its workers
// and buffers are chosen per shape) into one workload: every group at once. Without a fabric
// (legacy mode, `fabric` mode None with its device's down_edges) each group is laid as
// legacy_groups.hpp lays it, which throws CclParamsError for a group the down links cut.
struct ShapedGroups {
  CclTopology shape = CclTopology::Ring;
  GroupSelection groups;
};
std::vector<ShapedGroups> groups_by_shape(const GroupSelection& selection, const topo::Topology& topology,
                                          const FabricOptions& fabric, CclTopology shape);

// An op's params per shape its groups run as (groups_by_shape): `params` itself when every group
// runs as asked; else one copy per shape over its groups, `as_line` clearing on the line's copy
// what only a ring takes (an algorithm, a split).
template <class Params, class AsLine>
std::vector<Params> params_by_shape(const Params& params, const topo::Topology& topology, AsLine&& as_line) {
  std::vector<Params> parts;
  for (ShapedGroups& shaped : groups_by_shape(params.groups, topology, params.fabric, params.topology)) {
    Params part = params;
    part.groups = std::move(shaped.groups);
    if (shaped.shape != params.topology) {
      part.topology = shaped.shape;
      as_line(part);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

// An op's groups resolved (resolve_groups), checked (every group the same size, each runnable as
// `shape` with `num_links` links in fabric order: require_group_shape, require_fabric_links) and
// laid onto the device's fabric (map_group_onto_fabric): what every fabric op builder starts from.
// The builders take directions and hops from a FabricGroup's positions and data from its ranks
// (rank_at), so a group whose positions are not its ranks (a ring run as a line opened mid-ring)
// runs. Refused (RingRunsAsLineError, the one error for "this op cannot run this group around its
// down link"): a group that runs as another shape (group_runs_as), which every op builds apart,
// per groups_by_shape.
struct PlacedGroups {
  FabricPlan plan;
  std::vector<FabricGroup> groups;
  std::vector<ChipId> all_chips;  // every group's chips, group after group
  std::uint32_t group_size = 0;
};
PlacedGroups place_groups(const GroupSelection& selection, const topo::Topology& topology, const FabricOptions& fabric,
                          CclTopology shape, std::uint32_t num_links, const std::string& op);

// The chips of a group in rank order, or a FabricGroup's by position, whichever way a builder
// holds its groups.
inline const std::vector<ChipId>& chips_of(const std::vector<ChipId>& group) { return group; }
inline const std::vector<ChipId>& chips_of(const FabricGroup& group) { return group.chips; }

// Sets `workload`'s program on the chip at every index of every group to chip_program(group,
// index): the index is the rank of a group of chips, the fabric position of a FabricGroup. An
// op built in parts (params_by_shape) adds each part's groups in turn.
template <class Group, class ChipProgram>
void add_group_programs(MeshWorkload& workload, const std::vector<Group>& groups, ChipProgram&& chip_program) {
  for (const Group& g : groups) {
    const std::vector<ChipId>& chips = chips_of(g);
    for (std::uint32_t index = 0; index < chips.size(); ++index) workload.programs[chips[index]] = chip_program(g, index);
  }
}

// A workload named `name` whose program on the chip of every rank of every group is
// chip_program(group, rank): what an op builder that runs on every chip of its groups returns.
template <class Group, class ChipProgram>
MeshWorkload per_rank_workload(std::string name, const std::vector<Group>& groups, ChipProgram&& chip_program) {
  MeshWorkload workload;
  workload.name = std::move(name);
  add_group_programs(workload, groups, chip_program);
  return workload;
}

// An op's MeshWorkload::buffers: the handles pointed at, in order, null ones (an optional
// buffer the op does not use) left out.
std::vector<BufferHandle> workload_buffers(std::initializer_list<const BufferHandle*> buffers);
// An op's MeshWorkload::global_semaphores: the semaphores present, in order (an optional one
// the op's params leave empty left out).
std::vector<GlobalSemaphore> workload_semaphores(
    std::initializer_list<const std::optional<GlobalSemaphore>*> semaphores);

// Every chip of `chips` has the same Tensix harvesting, so a logical core (and an L1 bank or a
// shard core) has the same NoC0 coordinates on all of them; a fabric multicast carries one NoC
// address to every chip it reaches. Throws CclParamsError naming the first chip that differs.
void require_uniform_core_maps(const topo::Topology& topology, const std::vector<ChipId>& chips, const std::string& op);

// Every buffer of `buffers` lays out on every chip of `chips` over the common worker grid
// (throws BufferConfigError naming what does not fit): an op checks its buffers with this
// before it builds anything.
void require_buffer_layouts(const topo::Topology& topology, const std::vector<ChipId>& chips,
                            std::initializer_list<const BufferHandle*> buffers);

// The logical worker cores of an op: `count` cores along the row of `first`, wrapping to the
// next rows of the common worker grid. Throws CclParamsError when they do not fit.
std::vector<CoreCoord> worker_cores(const topo::Topology& topology, CoreCoord first, std::uint32_t count,
                                    const std::string& op);

// One single-core range per core: the core set a global semaphore of an op's workers covers.
std::vector<CoreRange> one_core_ranges(const std::vector<CoreCoord>& cores);

// The semaphore cores of an op built per shape (params_by_shape): every part's workers start at
// first_worker, so the part with the most cores covers the others'.
template <class Params, class CoresOf>
std::vector<CoreRange> most_semaphore_cores(const std::vector<Params>& parts, CoresOf&& cores_of) {
  std::vector<CoreRange> most;
  for (const Params& part : parts) {
    std::vector<CoreRange> cores = cores_of(part);
    if (cores.size() > most.size()) most = std::move(cores);
  }
  return most;
}

// Checks a global semaphore is present and lives on every core in `cores`.
void require_semaphore_on(const std::optional<GlobalSemaphore>& semaphore, const std::vector<CoreCoord>& cores,
                          const std::string& op, const std::string& what);

// The reduce kernel's data format for `dtype`: fp32, bf16 or bfp8_b (whole tiles, summed in
// fp32 and packed back, kernels/reduce/bfp8_math.hpp).
std::uint32_t reduce_data_format(DataType dtype);
// The reduce kernel (spec's in0 + in1 -> out) on `core`'s compute processor, beside the data
// movers of a reduce-type collective.
KernelSpec reduce_kernel(CoreCoord core, const kargs::ReduceSpec& spec);

}  // namespace cclmesh::runtime::ccl
