#pragma once
// What the neighbour-only legacy-EDM builders (all_gather, reduce_scatter; REFERENCE 5) resolve
// and build the same way: the checks a legacy op makes of its mode, links, groups and buffers,
// its message sizing and its worker cores (one per link and direction), a rank's neighbours,
// the EDM of each link's hop end, and the worker kernels' processors. The EDMs themselves are
// legacy_edm_plan.hpp's. Pure functions of values and a topology: no device, no engine.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// What a legacy op asks for, as its params carry it.
struct LegacyOpRequest {
  TensorSpec input;
  std::uint32_t dim = 3;
  CclTopology topology = CclTopology::Ring;
  GroupSelection groups;
  FabricOptions fabric;
  std::uint32_t num_links = 1;
  CoreCoord first_worker{0, 0};
  LegacyEdmOptions legacy;
  // 0: the workers move the tensor's pages, which must not cut `dim` (require_page_aligned_dim),
  // ROW_MAJOR rows wider than an EDM buffer along dims 0-2 in pieces (legacy_outer_dim_row_pieces).
  // Else they move pages of this many bytes, and the op has checked its dim itself: ROW_MAJOR rows
  // along dim 3, moved as row pieces (all_gather_legacy.hpp, scattered_rows.hpp).
  std::uint32_t moved_page_bytes = 0;
};

struct LegacyOp {
  // Chips by position with their ranks (legacy_groups.hpp): the builders chain positions and
  // place data by rank.
  std::vector<LegacyGroup> groups;
  std::uint32_t n = 0;                      // chips per group
  std::uint32_t page_size = 0;          // of the pages the workers move
  // ROW_MAJOR along dims 0-2: the pieces each row (a page of the slices) moves in, page_size bytes
  // each but the last, outer_last_piece_bytes when that is not 0; 1 unless a row is wider than an
  // EDM buffer (legacy_outer_dim_row_pieces). The op then addresses its buffers in that many
  // pieces a row and slices them as that many pages a row.
  std::uint32_t outer_row_pieces = 1;
  std::uint32_t outer_last_piece_bytes = 0;
  std::uint32_t page_stride = 0;        // a page's stride inside an EDM message
  std::uint32_t pages_per_message = 0;  // per EDM buffer
  std::uint32_t num_links = 1;
  // The worker cores, per link: [link 0 up, link 0 down, link 1 up, link 1 down, ...] (see
  // legacy_worker_cores). Each link has its own workers.
  std::vector<CoreCoord> cores;
  EriscL1Map erisc;  // the device's ERISC L1 (request.fabric), for the EDMs

  CoreCoord core(std::uint32_t link, bool up) const { return cores[2 * link + (up ? 0 : 1)]; }
};

// Checks the device has no persistent fabric (the EDMs take its ethernet cores), groups of one
// size that are neighbour chains of `topology`'s shape laid around request.fabric.down_edges
// (legacy_groups; a group that runs as another shape, a ring opened by a down link, is refused
// with RingRunsAsLineError: an op builds its rings and lines apart, per groups_by_shape), 1 to legacy_usable_links links on every
// group (legacy_links.hpp), a page-aligned dim (unless request.moved_page_bytes) and an EDM
// that fits; throws CclParamsError (or topo::InputError) naming what is wrong. Without
// request.moved_page_bytes, ROW_MAJOR rows along dims 0-2 wider than an EDM buffer move in
// LegacyOp::outer_row_pieces pieces.
LegacyOp resolve_legacy_op(const LegacyOpRequest& request, const topo::Topology& topology, const std::string& op);

// ROW_MAJOR along dim 3 (row_pieces.hpp) in legacy mode: the fewest equal pieces, each a multiple
// of 32 B, that a `row_bytes` row (a multiple of 32 B) splits into so that one of them fits an EDM
// buffer (legacy_message_fits with one page a message, `legacy`'s buffers in `fabric`'s ERISC
// region); q = 1 whenever a row does. 1 when not even 32 B pieces fit (bad buffers_per_channel, a
// tiny region): resolve_legacy_op then refuses that piece, saying why. An explicit
// legacy.pages_per_message counts pieces and does not make them smaller. The fabric ops size their
// pieces by the fabric payload instead.
std::uint32_t legacy_row_pieces(std::uint32_t row_bytes, const LegacyEdmOptions& legacy, const FabricOptions& fabric);

// The widest ROW_MAJOR row (a multiple of 32 B) one EDM buffer of `legacy` in `fabric`'s ERISC
// region holds whole, as a page of its own (38080 B at the defaults: 2 buffers x 2 channels in
// 152576 B); nullopt when not even 32 B fit. Along dims 0-2 a wider row moves in pieces
// (legacy_outer_dim_row_pieces).
std::optional<std::uint32_t> legacy_widest_whole_row(const LegacyEdmOptions& legacy, const FabricOptions& fabric);

// How legacy_outer_dim_row_pieces cuts each row: `pieces` pieces of `piece_bytes`, the last one
// `last_piece_bytes` long when not 0 (a row that is not a multiple of 32 B), each its own page.
struct LegacyRowCut {
  std::uint32_t pieces = 1;
  std::uint32_t piece_bytes = 0;       // the row's bytes when pieces is 1
  std::uint32_t last_piece_bytes = 0;  // 0: as long as the others
};

// ROW_MAJOR along dims 0-2 in legacy mode, where a page of the slices is a whole row: the pieces
// each row moves in, each its own page of a message. 1 when a row fits an EDM buffer whole
// (legacy_widest_whole_row; its streams are those of whole rows), for TILE and along dim 3 (the
// ops cut dim 3's rows themselves), and when not even 32 B fit (legacy_pages_per_message then
// refuses, saying why); else, for a row of a multiple of 32 B, legacy_row_pieces' q equal pieces
// (a 65536 B row: 2 x 32768 B at the defaults), and for any other row the cut fabric_pages makes
// of a page wider than a payload, an EDM buffer's widest row in place of the payload: the fewest
// pieces that each start 32 B-aligned (DRAM, REFERENCE 6.5), all the same multiple of 32 B but the
// last, which is what is left (38114 B: 19072 + 19042 B; session 40). all_reduce, whose ROW_MAJOR
// halves run along dim 2 whatever its tensor, asks with dim 2 (`op` names it in the refusals).
LegacyRowCut legacy_outer_dim_row_pieces(const TensorSpec& input, std::uint32_t dim, const LegacyEdmOptions& legacy,
                                         const FabricOptions& fabric, const std::string& op);
// "2 buffers x 2 channels in the 152576 B ERISC kernel region": what bounds that row, for a refusal.
std::string legacy_edm_buffers_text(const LegacyEdmOptions& legacy, const FabricOptions& fabric);

// The options a group too large for a legacy kernel shrinks with, as cclmesh run names them:
// "--cluster-axis, --chips" on a mesh of two or more axes of 2+ chips (an axis is then fewer
// chips than the whole), "--chips" elsewhere (ring:N, a line, a 1xN mesh: no axis is smaller).
std::string fewer_chips_options(const topo::Topology& topology);

// The worker cores of a legacy op, as LegacyOp::cores orders them: link l's two cores (up, down)
// side by side on worker row first.y + l, from column first.x. REFERENCE 7.3: the legacy
// all-gather laid its workers out "per (link, direction) as a row"; a row per link also keeps
// each link's worker <-> EDM traffic off the other links' NoC rows (measured: with every link's
// workers on one row, 4 links were hardly faster than 1 on a Galaxy column, which we take to be
// that row's NoC links). Throws CclParamsError when they do not fit the worker grid.
std::vector<CoreCoord> legacy_worker_cores(const topo::Topology& topology, CoreCoord first, std::uint32_t num_links,
                                           const std::string& op);

// Checks the buffers hold the input and the output exactly, are two buffers, and lay out on
// every chip of every group.
void require_legacy_buffers(const LegacyOp& resolved, const topo::Topology& topology, const BufferHandle& input,
                            const TensorSpec& input_spec, const BufferHandle& output, const TensorSpec& output_spec,
                            const std::string& op);

// Rank `rank` moved `steps` ranks up or down a group of `n` (wrapping, as a ring does).
std::uint32_t legacy_step(std::uint32_t n, std::uint32_t rank, bool up, std::uint32_t steps);

// One chip of a legacy op at `position` of its group (the EDM chain's order, which directions
// and hop counts go by), its core map and its buffers' layouts there. Data goes by rank: the
// rank at a position is group.rank_at(position).
struct LegacyChip {
  const LegacyGroup& group;
  std::uint32_t position = 0;
  ChipCoreMap map;
  BufferLayout input;
  BufferLayout output;

  LegacyChip(const LegacyGroup& group, std::uint32_t position, const topo::Topology& topology,
             const BufferHandle& input_buffer, const BufferHandle& output_buffer);
  LegacyChip(const LegacyGroup& group, std::uint32_t position, const ChipBuffers& buffers,
             const BufferHandle& input_buffer, const BufferHandle& output_buffer);
  ChipId chip() const { return group.chips[position]; }
  std::uint32_t rank() const { return group.rank_at(position); }
  ChipId neighbour(bool up) const { return group.chips[legacy_step(group.size(), position, up, 1)]; }
};

// The EDM on this chip's end of link `link` of the hop toward its neighbour `up` (or down), in
// `program`: channel 0 carries `sender_messages` from that link's `up` worker, channel 1 brings
// `receiver_messages` to the link's worker of the other direction.
LegacyEdmSite add_legacy_edm_toward(Program& program, const topo::Topology& topology, const LegacyChip& chip,
                                    const LegacyOp& resolved, std::uint32_t link, bool up,
                                    std::uint32_t sender_semaphore_id,
                                    std::uint32_t sender_messages, std::uint32_t receiver_semaphore_id,
                                    std::uint32_t receiver_messages, const LegacyEdmOptions& options,
                                    const std::string& op);

// A legacy worker kernel on `core`: the sender on RISC-V 0 / NoC0 (it feeds the EDM), the
// receiver on RISC-V 1 / NoC1, as tt-metal's 2024 CCL workers.
KernelSpec legacy_worker_kernel(const std::string& kernel, CoreCoord core, const kargs::KernelArgs& args, bool sender);

}  // namespace cclmesh::runtime::ccl
