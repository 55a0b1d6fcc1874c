#include "runtime/ccl/all_gather/all_gather_legacy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_gather::legacy {
namespace {

constexpr const char* kOp = "all_gather";

// Per worker core: the relay semaphore, and the worker semaphores the two EDM channels signal.
constexpr std::uint32_t kRelaySemaphoreId = 0;
constexpr std::uint32_t kSenderEdmSemaphoreId = 1;
constexpr std::uint32_t kReceiverEdmSemaphoreId = 2;
constexpr std::uint32_t kSenderScratchCbId = 0;
constexpr std::uint32_t kReceiverScratchCbId = 1;
constexpr std::uint32_t kMessageSlots = 2;  // worker scratch: one message filling, one in flight

struct Resolved : LegacyOp {
  TensorSpec output;
  // The tensors in the pages the workers move: shape_in_pages, except for ROW_MAJOR along dim 3,
  // where x counts row pieces (row_pieces per input row, n x row_pieces per output row), and for
  // rows wider than an EDM buffer along dims 0-2 (outer_row_pieces per row, in and out).
  api::Shape4D in_pages;
  api::Shape4D out_pages;
  std::uint32_t row_pieces = 0;  // along dim 3; 0: whole pages
  // Per link: the part of every slice (each chip's input) that link carries, as a worker slice
  // of the input's shape, and its messages per slice. One link carries the whole slice.
  std::vector<api::TensorSlice> link_runs;
  std::vector<std::uint32_t> messages_per_slice;
};

// ROW_MAJOR along dim 3: a page is a whole row, so each chip's input row becomes one of N equal
// parts of every output row, at byte offset rank x row bytes. tt-metal's 2024 all-gather took
// ROW_MAJOR tensors along the width (REFERENCE 8 row 3); that its workers wrote each input page
// at that offset inside its output page, one NoC write per page and otherwise as REFERENCE 7.4
// describes them, is inferred (REFERENCE gives no more). Here the workers address both buffers
// in row pieces (pieces_per_page of the interleaved and sharded address generators, as the
// fabric all_gather does): q per input row and N x q per output row. The messages carry pieces
// in place of pages, and the gather is sliced like a TILE gather along dim 3 with q tiles per
// chip per row (row_pieces.hpp).
//
// The pieces of legacy_row_pieces: q = 1 whenever a row fits an EDM buffer (row 3's 16 KiB rows
// at the default 150 KiB ERISC region). A wider row moves in q pieces, each its own page of a
// message (inferred: REFERENCE 5 sizes the EDM buffers in whole pages, and does not say what the
// legacy op did with a page larger than a buffer).
std::uint32_t pieces_per_row(std::uint32_t row_bytes, const Params& p) {
  require_row_piece_alignment(row_bytes, kOp,
                              fmt::format("writes each chip's {} B row at an offset of a multiple of it in the "
                                          "output rows",
                                          row_bytes));
  return legacy_row_pieces(row_bytes, p.legacy, p.fabric);
}

// The most slice records one worker of a legacy group of n chips holds: a sender its input, its
// own output slice and the slices it relays (1 + sent), a receiver the slices it receives.
std::uint32_t most_slices_per_worker(CclTopology topology, std::uint32_t n) {
  std::uint32_t most = 0;
  for (std::uint32_t rank = 0; rank < n; ++rank) {
    for (const bool up : {true, false}) {
      const DirectionCounts c = direction_counts(topology, n, rank, up);
      most = std::max({most, c.sent > 0 ? c.sent + 1 : 0, c.received});
    }
  }
  return most;
}

// The legacy all-gather kernels take at most kMaxSlices slice records per worker; past that the
// kernel's argument check refused the group as "sender args rejected at runtime arg 10: BAD_ARGS"
// (torus:16x16, ring:128), naming neither the limit nor what would run.
void require_slices_fit(CclTopology topology, std::uint32_t n, const topo::Topology& system) {
  namespace la = kernels::legacy_all_gather;
  const std::uint32_t most = most_slices_per_worker(topology, n);
  if (most <= la::kMaxSlices) return;
  // The count grows with n: the largest group that fits, by bisection (n goes to 16384 chips).
  std::uint32_t largest = 2;  // fits
  std::uint32_t too_many = n;
  while (too_many - largest > 1) {
    const std::uint32_t mid = largest + (too_many - largest) / 2;
    (most_slices_per_worker(topology, mid) <= la::kMaxSlices ? largest : too_many) = mid;
  }
  const bool ring = topology == CclTopology::Ring;
  throw CclParamsError(fmt::format(
      "all_gather: legacy mode on a {} of {} chips: a worker would hold {} slices and the legacy all-gather kernel "
      "takes at most {} ({}), so a legacy {} gathers over at most {} chips; run it in fabric mode (--mode fabric) "
      "or on fewer chips ({})",
      ring ? "ring" : "line", n, most, la::kMaxSlices,
      ring ? "N/2 + 1 on a ring: its input, its own slice and the N/2 - 1 it relays"
           : "N on a line: its input, its own slice and the N - 2 it relays",
      ring ? "ring" : "line", largest, fewer_chips_options(system)));
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  if (p.topology == CclTopology::Ring && p.bidirectional == BidirectionalMode::SplitTensor) {
    throw CclParamsError("all_gather: SPLIT_TENSOR is not built in legacy mode; the legacy ring is FULL_TENSOR "
                         "(REFERENCE 7.3)");
  }
  if (p.topology == CclTopology::Line && p.bidirectional == BidirectionalMode::SplitTensor) {
    throw CclParamsError("all_gather: SPLIT_TENSOR needs a ring; a line is inherently FULL_TENSOR (REFERENCE 7.3)");
  }
  Resolved r;
  LegacyOpRequest request{p.input, p.dim, p.topology, p.groups, p.fabric, p.num_links, p.first_worker, p.legacy};
  if (cuts_rows(p.input, p.dim)) {
    const std::uint32_t row_bytes = page_size_bytes(p.input);
    r.row_pieces = pieces_per_row(row_bytes, p);
    request.moved_page_bytes = row_bytes / r.row_pieces;
  }
  static_cast<LegacyOp&>(r) = resolve_legacy_op(request, topology, kOp);
  require_slices_fit(p.topology, r.n, topology);
  r.output = with_dim_scaled(p.input, p.dim, r.n, true);
  require_legacy_buffers(r, topology, p.input_buffer, p.input, p.output_buffer, r.output, kOp);
  r.in_pages = shape_in_pages(p.input);
  r.out_pages = shape_in_pages(r.output);
  if (r.row_pieces != 0) {
    r.in_pages.x = r.row_pieces;
    r.out_pages.x = r.n * r.row_pieces;
  } else if (r.outer_row_pieces > 1) {
    // Rows wider than an EDM buffer along dims 0-2: whole rows sliced as before, each in q pieces
    // of a page each (as the fabric all_gather moves rows wider than a payload), sliced as q
    // "tiles" a row (inferred, as along dim 3: REFERENCE 5 does not say what the legacy op did
    // with a row wider than a buffer).
    r.in_pages.x = r.outer_row_pieces;
    r.out_pages.x = r.outer_row_pieces;
  }
  // Several links: each chip's input is split into num_links contiguous runs of pages (x-fastest,
  // the first pages % num_links runs one page longer) and link l moves run l of every slice, so
  // every link carries 1/num_links of the tensor through its own EDMs and workers. REFERENCE 5 and
  // 7.3 give one EDM and its own workers per link but not how the pages are shared out; an even
  // page split per link is what tt-metal's legacy all_gather structure implies (inferred).
  const api::Shape4D in_pages = r.in_pages;
  const api::TensorSlice whole{in_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}};
  if (api::volume(in_pages) < r.num_links) {
    throw CclParamsError(fmt::format("all_gather: an input of {} page(s) on {} links in legacy mode; each link carries "
                                     "a share of every chip's input, so it needs at least one page per link",
                                     api::volume(in_pages), r.num_links));
  }
  r.link_runs = r.num_links == 1 ? std::vector<api::TensorSlice>{whole}
                                 : cmd::split_tensor_slice_across_workers_wrapped_page_aligned(whole, r.num_links);
  for (const api::TensorSlice& run : r.link_runs) {
    r.messages_per_slice.push_back(kernels::legacy_messages_per_slice(
        static_cast<std::uint32_t>(api::volume(run.worker_slice_shape)), r.pages_per_message));
  }
  return r;
}

class ChipBuilder {
 public:
  ChipBuilder(const Params& p, const topo::Topology& topology, const Resolved& r, const LegacyGroup& group,
              std::uint32_t position)
      : p_(p), topology_(topology), r_(r), chip_(group, position, topology, p.input_buffer, p.output_buffer) {}

  Program build() {
    for (std::uint32_t link = 0; link < r_.num_links; ++link) build_link(link);
    return std::move(program_);
  }

 private:
  // One link's EDMs (one per hop end it uses) and its two workers.
  void build_link(std::uint32_t link) {
    link_ = link;
    const DirectionCounts up = direction_counts(p_.topology, r_.n, chip_.position, true);
    const DirectionCounts down = direction_counts(p_.topology, r_.n, chip_.position, false);
    // The EDM toward the next chip up carries my up sender and my down receiver; the one toward
    // the next chip down, my down sender and my up receiver.
    std::optional<LegacyEdmSite> toward_up;
    std::optional<LegacyEdmSite> toward_down;
    if (up.sent > 0) toward_up = edm_toward(true, up.sent, down.received);
    if (down.sent > 0) toward_down = edm_toward(false, down.sent, up.received);
    const bool up_copies = up.sent > 0;
    for (const bool dir_up : {true, false}) {
      const DirectionCounts c = dir_up ? up : down;
      const CoreCoord core = core_of(dir_up);
      if (c.sent == 0 && c.received == 0) continue;
      for (std::uint32_t id : {kRelaySemaphoreId, kSenderEdmSemaphoreId, kReceiverEdmSemaphoreId}) {
        program_.semaphores.push_back(tensix_semaphore(core, id));
      }
      if (c.sent > 0) {
        add_sender(dir_up, c.sent, dir_up ? *toward_up : *toward_down, dir_up ? up_copies : !up_copies);
      }
      if (c.received > 0) add_receiver(dir_up, c.received, dir_up ? *toward_down : *toward_up);
    }
  }

  CoreCoord core_of(bool up) const { return r_.core(link_, up); }

  LegacyEdmSite edm_toward(bool up, std::uint32_t sent_slices, std::uint32_t received_slices) {
    // Channel 0 feeds the next chip in direction `up` from my `up` sender; channel 1 feeds my
    // receiver of the other direction.
    const std::uint32_t messages = r_.messages_per_slice[link_];
    return add_legacy_edm_toward(program_, topology_, chip_, r_, link_, up, kSenderEdmSemaphoreId,
                                 sent_slices * messages, kReceiverEdmSemaphoreId, received_slices * messages,
                                 p_.legacy, kOp);
  }

  // `s` restricted to this link's run of the slice.
  api::CclCommandTensor on_link(api::TensorSlice s) const {
    s.worker_slice_shape = r_.link_runs[link_].worker_slice_shape;
    s.worker_slice_offset = r_.link_runs[link_].worker_slice_offset;
    return api::to_command_tensor(s);
  }

  // The output slice of the input of the rank at `origin_position`: data goes by rank.
  api::CclCommandTensor output_slice_at(std::uint32_t origin_position) const {
    const std::uint32_t origin_rank = chip_.group.rank_at(origin_position);
    const api::Shape4D in_pages = r_.in_pages;
    api::TensorSlice s{r_.out_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}};
    set_dim(s.tensor_slice_offset, p_.dim, origin_rank * dim_of(in_pages, p_.dim));
    return on_link(s);
  }

  kargs::LegacyAllGatherWorkerSpec worker_spec(bool sender, const LegacyEdmSite& edm, std::uint32_t channel,
                                               std::uint32_t worker_semaphore) const {
    kargs::LegacyAllGatherWorkerSpec w;
    w.is_sender = sender;
    w.scratch_cb_id = sender ? kSenderScratchCbId : kReceiverScratchCbId;
    w.page_size_bytes = r_.page_size;
    w.page_stride_bytes = r_.page_stride;
    w.pages_per_message = r_.pages_per_message;
    w.relay_semaphore_id = kRelaySemaphoreId;
    w.edm_channel = legacy_edm_worker_channel(topology_, edm, channel, worker_semaphore);
    if (p_.legacy.termination == LegacyTermination::WorkerSignal) {
      w.edm_termination_semaphore_id = kLegacyEdmTerminationSemaphoreId;
    }
    w.output = chip_.output.interpreter_args(chip_.map);
    if (r_.row_pieces != 0) w.output = in_row_pieces(w.output, r_.page_size, r_.n * r_.row_pieces);
    if (r_.outer_row_pieces > 1) {
      w.output = in_row_pieces(w.output, r_.page_size, r_.outer_row_pieces, r_.outer_last_piece_bytes);
    }
    return w;
  }

  void add_kernel(bool sender, CoreCoord core, const kargs::KernelArgs& args) {
    program_.kernels.push_back(legacy_worker_kernel(
        sender ? kernels::kLegacyAllGatherSenderKernelName : kernels::kLegacyAllGatherReceiverKernelName, core, args,
        sender));
    program_.circular_buffers.push_back(data_cb_with_id(core, sender ? kSenderScratchCbId : kReceiverScratchCbId));
  }

  CircularBufferSpec data_cb_with_id(CoreCoord core, std::uint32_t id) const {
    CircularBufferSpec cb = data_cb(core, r_.page_stride, kMessageSlots * r_.pages_per_message);
    cb.cb_id = id;
    return cb;
  }

  void add_sender(bool up, std::uint32_t slices, const LegacyEdmSite& edm, bool local_copy) {
    kargs::LegacyAllGatherWorkerSpec w = worker_spec(true, edm, kLegacyHopSenderChannel, kSenderEdmSemaphoreId);
    w.input = chip_.input.interpreter_args(chip_.map);
    if (r_.row_pieces != 0) w.input = in_row_pieces(*w.input, r_.page_size, r_.row_pieces);
    if (r_.outer_row_pieces > 1) {
      w.input = in_row_pieces(*w.input, r_.page_size, r_.outer_row_pieces, r_.outer_last_piece_bytes);
    }
    const api::Shape4D in_pages = r_.in_pages;
    w.slices.push_back(on_link(api::TensorSlice{in_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}}));
    w.slices.push_back(output_slice_at(chip_.position));
    // Relays: the first slices to arrive, from the chips 1, 2, ... behind me in this direction.
    for (std::uint32_t k = 1; k < slices; ++k) {
      w.slices.push_back(output_slice_at(legacy_step(r_.n, chip_.position, !up, k)));
    }
    w.local_copy = local_copy;
    add_kernel(true, core_of(up), kargs::build_legacy_all_gather_worker_args(w));
  }

  void add_receiver(bool up, std::uint32_t slices, const LegacyEdmSite& edm) {
    kargs::LegacyAllGatherWorkerSpec w = worker_spec(false, edm, kLegacyHopReceiverChannel, kReceiverEdmSemaphoreId);
    for (std::uint32_t k = 1; k <= slices; ++k) {
      w.slices.push_back(output_slice_at(legacy_step(r_.n, chip_.position, !up, k)));
    }
    add_kernel(false, core_of(up), kargs::build_legacy_all_gather_worker_args(w));
  }

  const Params& p_;
  const topo::Topology& topology_;
  const Resolved& r_;
  LegacyChip chip_;
  Program program_;
  std::uint32_t link_ = 0;  // the link build_link is building
};

}  // namespace

DirectionCounts direction_counts(CclTopology topology, std::uint32_t n, std::uint32_t rank, bool up) {
  if (topology == CclTopology::Ring) {
    const std::uint32_t reach = up ? n / 2 : (n - 1) / 2;  // REFERENCE 7.3: 4 and 3 at N = 8
    return DirectionCounts{reach, reach};
  }
  const std::uint32_t behind = up ? rank : n - 1 - rank;
  const bool has_next = up ? rank + 1 < n : rank > 0;
  return DirectionCounts{has_next ? behind + 1 : 0, behind};
}

std::vector<CoreCoord> worker_cores(const Params& params, const topo::Topology& topology) {
  return legacy_worker_cores(topology, params.first_worker, params.num_links, kOp);
}

TensorSpec output_spec(const Params& params, const topo::Topology& topology) {
  const auto groups = resolve_legacy_groups(params.groups, topology, params.topology);
  return with_dim_scaled(params.input, params.dim, static_cast<std::uint32_t>(groups.front().size()), true);
}

// A ring opened by a down link runs as a line: each shape its groups run as is resolved and built
// apart (all_gather::parts_by_shape), into one workload.
void validate(const Params& params, const topo::Topology& topology) {
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  MeshWorkload workload = workload_by_shape(
      "all_gather_legacy", parts_by_shape(params, topology), topology, resolve,
      [](const Params& part, const topo::Topology& system, const Resolved& r, const LegacyGroup& g,
         std::uint32_t position) { return ChipBuilder(part, system, r, g, position).build(); });
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  return workload;
}

}  // namespace cclmesh::runtime::ccl::all_gather::legacy
