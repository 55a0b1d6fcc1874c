#include "runtime/ccl/common/legacy_op.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/legacy_links.hpp"
#include "runtime/ccl/common/op_buffers.hpp"
#include "runtime/ccl/common/row_pieces.hpp"

namespace cclmesh::runtime::ccl {

namespace {

// REFERENCE 6.9: a legacy op had min(requested, active ethernet cores between the pair) links;
// here asking for more than that is refused rather than silently clamped, so a run's link count
// is the one asked for.
void require_legacy_links(const topo::Topology& topology, const std::vector<ChipId>& group, CclTopology shape,
                          std::uint32_t num_links, const std::string& op) {
  const std::uint32_t usable = legacy_usable_links(topology, group, shape);
  if (num_links <= usable) return;
  const auto [a, b] = legacy_narrowest_hop(topology, group, shape);
  const std::size_t physical =
      topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b));
  const std::string why = physical > usable ? fmt::format(" ({} physical, one carries fast dispatch's ethernet "
                                                          "tunnel to a chip that is not host-attached)",
                                                          physical)
                                            : "";
  throw CclParamsError(fmt::format("{}: num_links {} in legacy mode on [{}]: hop {}-{} leaves {} usable link(s){}; "
                                   "expected 1 to {} (REFERENCE 6.9: min(requested, active ethernet cores between "
                                   "the pair))",
                                   op, num_links, fmt::join(group, ", "), a, b, usable, why, usable));
}

}  // namespace

std::string fewer_chips_options(const topo::Topology& topology) {
  int axes_of_several_chips = 0;
  if (const auto& shape = topology.mesh_shape()) {
    for (int axis = 0; axis < shape->rank(); ++axis) axes_of_several_chips += shape->extent(axis) >= 2 ? 1 : 0;
  }
  return axes_of_several_chips >= 2 ? "--cluster-axis, --chips" : "--chips";
}

LegacyOp resolve_legacy_op(const LegacyOpRequest& q, const topo::Topology& topology, const std::string& op) {
  LegacyOp r;
  r.page_size = page_size_bytes(q.input);
  if (q.moved_page_bytes != 0) {
    r.page_size = q.moved_page_bytes;
  } else {
    require_page_aligned_dim(q.input, q.dim, op, "input");
    const LegacyRowCut cut = legacy_outer_dim_row_pieces(q.input, q.dim, q.legacy, q.fabric, op);
    r.outer_row_pieces = cut.pieces;
    r.outer_last_piece_bytes = cut.last_piece_bytes;
    r.page_size = cut.piece_bytes;
  }
  if (q.fabric.mode != FabricMode::None) {
    throw CclParamsError(fmt::format("{}: legacy EDM mode needs a device without a persistent fabric "
                                     "(fabric.mode none, not {}): the op's EDMs run on the ethernet cores the "
                                     "routers would hold",
                                     op, to_string(q.fabric.mode)));
  }
  if (q.num_links == 0) throw CclParamsError(fmt::format("{}: num_links is 0; expected at least 1", op));
  r.groups = legacy_groups(q.groups, topology, q.topology, q.fabric.down_edges, op);
  r.n = r.groups.front().size();
  for (const LegacyGroup& g : r.groups) {
    if (g.size() != r.n) {
      throw CclParamsError(fmt::format("{}: groups of {} and {} chips; every group must have the same size", op, r.n,
                                       g.size()));
    }
    if (g.shape != q.topology) {
      throw RingRunsAsLineError(fmt::format("{}: legacy group {} runs as the line {} around the down link {}-{}; "
                                            "build its rings and lines apart (groups_by_shape)",
                                            op, fmt::join(g.chips_by_rank(), "-"), fmt::join(g.chips, "-"),
                                            g.opened_at->first, g.opened_at->second));
    }
    // The hops the EDMs chain (positions), not the down link between two ranks.
    require_group_shape(topology, g.chips, q.topology, q.num_links, op);  // neighbours; the physical links
    require_legacy_links(topology, g.chips, q.topology, q.num_links, op);  // less dispatch's tunnels
  }
  r.num_links = q.num_links;
  r.cores = legacy_worker_cores(topology, q.first_worker, q.num_links, op);
  r.page_stride = legacy_page_stride_bytes(r.page_size);
  r.erisc = q.fabric.erisc_l1_map();
  r.pages_per_message = legacy_pages_per_message(q.legacy, r.page_stride, kLegacyHopChannels, op, r.erisc);
  return r;
}

std::optional<std::uint32_t> legacy_widest_whole_row(const LegacyEdmOptions& legacy, const FabricOptions& fabric) {
  const EriscL1Map erisc = fabric.erisc_l1_map();
  LegacyEdmOptions one_page = legacy;
  one_page.pages_per_message = 1;
  const auto fits = [&](std::uint32_t stride) {
    return legacy_message_fits(one_page, stride, kLegacyHopChannels, erisc);
  };
  if (!fits(kRowPieceAlignment)) return std::nullopt;
  // Bisected over multiples of 32 B: `widest` fits, `too_wide` does not (no buffer outgrows the region).
  std::uint32_t widest = kRowPieceAlignment;
  std::uint32_t too_wide = (erisc.kernel_bytes() / kRowPieceAlignment + 1) * kRowPieceAlignment;
  while (too_wide - widest > kRowPieceAlignment) {
    const std::uint32_t mid = (widest + (too_wide - widest) / 2) / kRowPieceAlignment * kRowPieceAlignment;
    (fits(mid) ? widest : too_wide) = mid;
  }
  return widest;
}

std::string legacy_edm_buffers_text(const LegacyEdmOptions& legacy, const FabricOptions& fabric) {
  return fmt::format("{} buffers x {} channels in the {} B ERISC kernel region", legacy.buffers_per_channel,
                     kLegacyHopChannels, fabric.erisc_l1_map().kernel_bytes());
}

std::uint32_t legacy_row_pieces(std::uint32_t row_bytes, const LegacyEdmOptions& legacy, const FabricOptions& fabric) {
  const EriscL1Map erisc = fabric.erisc_l1_map();
  LegacyEdmOptions one_page = legacy;
  one_page.pages_per_message = 1;
  return fewest_row_pieces(row_bytes, [&](std::uint32_t piece) {
           return legacy_message_fits(one_page, piece, kLegacyHopChannels, erisc);
         }).value_or(1);
}

LegacyRowCut legacy_outer_dim_row_pieces(const TensorSpec& input, std::uint32_t dim, const LegacyEdmOptions& legacy,
                                         const FabricOptions& fabric, const std::string& op) {
  const std::uint32_t row_bytes = page_size_bytes(input);
  const LegacyRowCut whole{1, row_bytes, 0};
  if (input.layout != Layout::RowMajor || dim == 3) return whole;
  const std::optional<std::uint32_t> widest = legacy_widest_whole_row(legacy, fabric);
  if (!widest || legacy_page_stride_bytes(row_bytes) <= *widest) return whole;
  if (row_bytes % kRowPieceAlignment == 0) {
    const std::uint32_t pieces = legacy_row_pieces(row_bytes, legacy, fabric);
    return LegacyRowCut{pieces, row_bytes / pieces, 0};
  }
  // `widest` is a multiple of 32 B whose page stride fits a buffer, so every piece fits one; the
  // workers move a short last piece's run_bytes only (page_run_bytes), its slot's tail unused.
  const FabricPages cut = fabric_pages(row_bytes, 1, *widest, RowPieceChoice::Fewest, op);
  return LegacyRowCut{cut.pieces_per_page, cut.page_bytes, cut.last_piece_bytes};
}

std::vector<CoreCoord> legacy_worker_cores(const topo::Topology& topology, CoreCoord first, std::uint32_t num_links,
                                           const std::string& op) {
  const CoreCoord grid = common_worker_grid(topology);
  if (first.x + 1 >= grid.x || std::uint64_t{first.y} + num_links > grid.y) {
    throw CclParamsError(fmt::format("{}: legacy workers for {} link(s) take 2 cores on each of {} rows from ({},{}); "
                                     "they do not fit the {}x{} worker grid{}",
                                     op, num_links, num_links, first.x, first.y, grid.x, grid.y,
                                     worker_grid_harvest_note(topology)));
  }
  std::vector<CoreCoord> cores;
  for (std::uint32_t link = 0; link < num_links; ++link) {
    cores.push_back(CoreCoord{first.x, first.y + link});
    cores.push_back(CoreCoord{first.x + 1, first.y + link});
  }
  return cores;
}

void require_legacy_buffers(const LegacyOp& r, const topo::Topology& topology, const BufferHandle& input,
                            const TensorSpec& input_spec, const BufferHandle& output, const TensorSpec& output_spec,
                            const std::string& op) {
  require_input_output_buffers(input, input_spec, output, output_spec, op);
  for (const LegacyGroup& g : r.groups) require_buffer_layouts(topology, g.chips, {&input, &output});
}

std::uint32_t legacy_step(std::uint32_t n, std::uint32_t rank, bool up, std::uint32_t steps) {
  return up ? (rank + steps) % n : (rank + n - steps % n) % n;
}

LegacyChip::LegacyChip(const LegacyGroup& group_, std::uint32_t position_, const topo::Topology& topology,
                       const BufferHandle& input_buffer, const BufferHandle& output_buffer)
    : LegacyChip(group_, position_, ChipBuffers(topology, group_.chips.at(position_)), input_buffer, output_buffer) {}

LegacyChip::LegacyChip(const LegacyGroup& group_, std::uint32_t position_, const ChipBuffers& buffers,
                       const BufferHandle& input_buffer, const BufferHandle& output_buffer)
    : group(group_),
      position(position_),
      map(buffers.map()),
      input(buffers.layout(input_buffer)),
      output(buffers.layout(output_buffer)) {}

LegacyEdmSite add_legacy_edm_toward(Program& program, const topo::Topology& topology, const LegacyChip& chip,
                                    const LegacyOp& r, std::uint32_t link, bool up,
                                    std::uint32_t sender_semaphore_id,
                                    std::uint32_t sender_messages, std::uint32_t receiver_semaphore_id,
                                    std::uint32_t receiver_messages, const LegacyEdmOptions& options,
                                    const std::string& op) {
  return add_legacy_hop_edm(program, topology, chip.chip(), chip.neighbour(up), link,
                            LegacyEdmChannel{r.core(link, up), sender_semaphore_id, sender_messages},
                            LegacyEdmChannel{r.core(link, !up), receiver_semaphore_id, receiver_messages},
                            r.pages_per_message, r.page_stride, options, r.erisc, op);
}

KernelSpec legacy_worker_kernel(const std::string& kernel, CoreCoord core, const kargs::KernelArgs& args, bool sender) {
  KernelSpec k;
  k.kernel = kernel;
  k.cores = {CoreRange{core, core}};
  k.processor = sender ? DataMovementProcessor::Riscv0 : DataMovementProcessor::Riscv1;
  k.noc = sender ? NocIndex::Noc0 : NocIndex::Noc1;
  k.compile_time_args = args.compile_time;
  k.runtime_args[core] = args.runtime;
  return k;
}

}  // namespace cclmesh::runtime::ccl
