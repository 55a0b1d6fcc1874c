#include "runtime/ccl/reduce_scatter/reduce_scatter_legacy.hpp"
#include "runtime/ccl/reduce_scatter/scattered_rows.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/host/slicing.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/dim_split.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/common/workload_by_shape.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::legacy {
namespace {

namespace rs = kernels::legacy_reduce_scatter;

constexpr const char* kOp = "reduce_scatter";

// Per worker core: the line's ready semaphore, and the worker semaphores the two EDM channels
// signal.
constexpr std::uint32_t kReadySemaphoreId = 0;
constexpr std::uint32_t kSenderEdmSemaphoreId = 1;
constexpr std::uint32_t kReceiverEdmSemaphoreId = 2;
constexpr std::uint32_t kPartialCbId = 0;
constexpr std::uint32_t kLocalCbId = 1;
constexpr std::uint32_t kReducedCbId = 2;
constexpr std::uint32_t kScratchCbId = 3;
constexpr std::uint32_t kMessagesPerCb = 2;  // one filling, one draining

struct Resolved : LegacyOp {
  bool ring = false;
  TensorSpec output;
  // ROW_MAJOR along dim 3 (scattered_rows.hpp): the pieces each output row moves in (q), each
  // input row N x q, of page_size bytes. 0: whole pages, or rows wider than an EDM buffer along
  // dims 0-2 in LegacyOp::outer_row_pieces.
  std::uint32_t row_pieces = 0;
  // The tensors in the pages the workers move: shape_in_pages, x in row pieces when row_pieces.
  api::Shape4D in_pages;
  api::Shape4D out_pages;
  // What a slice's output is chained as, before the links share it out: a ring's two halves
  // [up, down], a line's whole slice (both directions). Which of them an element is in decides
  // its reduction order, whatever the links.
  std::vector<api::TensorSlice> halves;
  // The runs of a slice's output the workers chain, as worker slices of the output's shape, in
  // page order: every part of `halves` split over the links (a ring: [up: link 0, 1, ...; down:
  // link 0, 1, ...]; a line: one per link, both directions).
  std::vector<api::TensorSlice> out_runs;

  std::uint32_t run_index(std::uint32_t link, bool up) const { return ring && !up ? num_links + link : link; }
};

// `run` (a wrapped run of its slice, or the whole slice) split into `parts` contiguous runs of
// its pages, the first pages % parts one page longer.
std::vector<api::TensorSlice> split_run(const api::TensorSlice& run, std::uint32_t parts) {
  const api::Shape4D& shape = run.tensor_slice_shape;
  const api::Shape4D& at = run.worker_slice_offset;
  const auto start = static_cast<std::uint32_t>(at.x + shape.x * (at.y + shape.y * (at.z + shape.z * at.w)));
  const auto pages = static_cast<std::uint32_t>(api::volume(run.worker_slice_shape));
  std::vector<api::TensorSlice> runs;
  for (std::uint32_t i = 0, first = start; i < parts; ++i) {
    const std::uint32_t n = pages / parts + (i < pages % parts ? 1 : 0);
    api::TensorSlice part = run;
    part.worker_slice_shape = api::Shape4D{1, 1, 1, n};
    part.worker_slice_offset = api::Shape4D{0, 0, 0, first};
    runs.push_back(part);
    first += n;
  }
  return runs;
}

// Link l's up worker at (first.x, first.y + l), as legacy_worker_cores places it, and its down
// worker one column right and num_links rows further, (first.x + 1, first.y + num_links + l), so
// no two workers share a row. Why: a receiver reads its partial out of its EDM on NoC1, which
// runs north along the EDM's column, then west along the worker's row; with both directions'
// workers on one row, both EDMs' read responses crossed that row's links, and the up and down
// chains, which run in phase, shared them on every message (docs/performance.md "Legacy
// reduce_scatter on the T3K ring"; there also the swept figures: T3K ring 16 MiB 2174.65 ->
// 1801.02 us). Throws CclParamsError when the rows do not fit the worker grid.
std::vector<CoreCoord> row_per_worker_cores(const topo::Topology& topology, CoreCoord first, std::uint32_t num_links) {
  const CoreCoord grid = common_worker_grid(topology);
  if (first.x + 1 >= grid.x || std::uint64_t{first.y} + 2ULL * num_links > grid.y) {
    throw CclParamsError(fmt::format("{}: legacy workers for {} link(s) take 2 columns and {} rows from ({},{}) (a row "
                                     "per link and direction); they do not fit the {}x{} worker grid{}",
                                     kOp, num_links, 2 * num_links, first.x, first.y, grid.x, grid.y,
                                     worker_grid_harvest_note(topology)));
  }
  std::vector<CoreCoord> cores;
  for (std::uint32_t link = 0; link < num_links; ++link) {
    cores.push_back(CoreCoord{first.x, first.y + link});
    cores.push_back(CoreCoord{first.x + 1, first.y + num_links + link});
  }
  return cores;
}

// The legacy reduce-scatter kernels take at most kMaxSteps steps per worker, and the busiest
// worker of plan_of() has N (a ring's sender: one raw send, N - 2 reduced sends, its own write) or
// N - 1 (a line's first sender). Past that the kernel's own argument check refused the group as
// "sender args rejected at runtime arg 9: BAD_ARGS" (ring:65, a 66-chip line), naming neither.
void require_steps_fit(CclTopology topology, std::uint32_t n, const topo::Topology& system) {
  const bool ring = topology == CclTopology::Ring;
  const std::uint32_t most = ring ? n : n - 1;
  if (most <= rs::kMaxSteps) return;
  throw CclParamsError(fmt::format(
      "reduce_scatter: legacy mode on a {} of {} chips: a worker would take {} steps and the legacy reduce-scatter "
      "kernel takes at most {} ({} per worker on a {}), so a legacy {} reduces over at most {} chips; run it in "
      "fabric mode (--mode fabric) or on fewer chips ({})",
      ring ? "ring" : "line", n, most, rs::kMaxSteps, ring ? "N" : "N - 1", ring ? "ring" : "line",
      ring ? "ring" : "line", ring ? rs::kMaxSteps : rs::kMaxSteps + 1, fewer_chips_options(system)));
}

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  LegacyOpRequest request{p.input, p.dim, p.topology, p.groups, p.fabric, p.num_links, p.first_worker, p.legacy};
  if (cuts_rows(p.input, p.dim)) {
    // The pieces are an output row's, so the group size comes first (as output_spec finds it).
    const auto n = static_cast<std::uint32_t>(resolve_legacy_groups(p.groups, topology, p.topology).front().size());
    const std::uint32_t out_row_bytes = scattered_row_bytes(p.input, n);
    r.row_pieces = legacy_row_pieces(out_row_bytes, p.legacy, p.fabric);
    request.moved_page_bytes = out_row_bytes / r.row_pieces;
  }
  static_cast<LegacyOp&>(r) = resolve_legacy_op(request, topology, kOp);
  require_steps_fit(p.topology, r.n, topology);
  r.cores = row_per_worker_cores(topology, p.first_worker, r.num_links);
  if (r.row_pieces == 0) require_dim_splits_evenly(p.input, p.dim, r.n, kOp, "input dim", "slices");
  r.output = with_dim_scaled(p.input, p.dim, r.n, false);
  require_legacy_buffers(r, topology, p.input_buffer, p.input, p.output_buffer, r.output, kOp);
  r.in_pages = shape_in_pages(p.input);
  r.out_pages = shape_in_pages(r.output);
  if (r.row_pieces != 0) {
    r.in_pages.x = r.n * r.row_pieces;
    r.out_pages.x = r.row_pieces;
  } else if (r.outer_row_pieces > 1) {
    // Rows wider than an EDM buffer along dims 0-2: whole rows sliced as before, each in q pieces
    // of a page each, sliced as q "tiles" a row. The sum is element-wise and a piece whole
    // elements (32 B-aligned), so every element is summed in the order whole rows would be.
    r.in_pages.x = r.outer_row_pieces;
    r.out_pages.x = r.outer_row_pieces;
  }
  // A ring's two directions chain the two halves of every slice; a line's both chain all of it.
  // Several links: each half (a ring) or the whole slice (a line) is then shared out over the
  // links, each link's workers chaining their own contiguous run of it through their own EDMs
  // (REFERENCE 7.5: "several workers take alternating slices strided by the worker count";
  // which pages a link takes is not given, and contiguous runs, as the fabric reduce_scatter
  // splits its runs, are our choice, inferred). Halves first, so an element's direction, and so
  // its reduction order, is the same on any number of links.
  r.ring = p.topology == CclTopology::Ring;
  const api::Shape4D& out_pages = r.out_pages;
  const api::TensorSlice whole{out_pages, out_pages, {0, 0, 0, 0}, out_pages, {0, 0, 0, 0}};
  r.halves = r.ring ? cmd::split_tensor_slice_across_workers_wrapped_page_aligned(whole, 2)
                    : std::vector<api::TensorSlice>{whole};
  for (const api::TensorSlice& half : r.halves) {
    for (const api::TensorSlice& run : r.num_links == 1 ? std::vector<api::TensorSlice>{half}
                                                        : split_run(half, r.num_links)) {
      r.out_runs.push_back(run);
    }
  }
  const auto empty = [](const api::TensorSlice& run) { return api::volume(run.worker_slice_shape) == 0; };
  if (std::any_of(r.out_runs.begin(), r.out_runs.end(), empty)) {
    throw CclParamsError(fmt::format("reduce_scatter: a slice of {} page(s) on {} link(s) in legacy mode; {} it needs "
                                     "at least {} pages",
                                     api::volume(out_pages), r.num_links,
                                     r.ring ? "every link's two directions each chain a share of a slice, so"
                                            : "every link chains a share of a slice, so",
                                     r.out_runs.size()));
  }
  return r;
}

// What one direction's worker of one rank does, as slice indices.
struct Plan {
  struct Step {
    std::uint32_t kind = 0;
    std::uint32_t slice = 0;
  };
  std::vector<Step> sender;
  std::vector<Step> receiver;
  bool signals_ready = false;  // line: the sender's output write feeds the other direction
  std::uint32_t sent() const {
    std::uint32_t k = 0;
    for (const Step& s : sender) k += s.kind != rs::kWriteReduced ? 1 : 0;
    return k;
  }
};

// Slices are named by position along the group (the chip whose rank's slice it is): the builder
// and the reference map them to ranks.
Plan plan_of(const Resolved& r, std::uint32_t rank, bool up) {
  const std::uint32_t n = r.n;
  Plan plan;
  if (r.ring) {
    plan.sender.push_back({rs::kSendRaw, legacy_step(n, rank, !up, 1)});
    for (std::uint32_t m = 0; m + 1 < n; ++m) {
      const std::uint32_t slice = legacy_step(n, rank, !up, 2 + m);
      plan.receiver.push_back({rs::kReduceWithInput, slice});
      plan.sender.push_back({m + 2 == n ? rs::kWriteReduced : rs::kSendReduced, slice});
    }
    return plan;
  }
  // Line, in positions along the direction: position 0 is where the chains start.
  const std::uint32_t pos = up ? rank : n - 1 - rank;
  const auto slice_at = [&](std::uint32_t q) { return up ? q : n - 1 - q; };
  if (pos == 0) {
    for (std::uint32_t q = 1; q < n; ++q) plan.sender.push_back({rs::kSendRaw, slice_at(q)});
    return plan;
  }
  for (std::uint32_t q = pos; q < n; ++q) {
    // The down chain ends on what the up chain left in the output (on rank 0 there is none).
    const bool onto_output = !up && q == pos && rank > 0;
    plan.receiver.push_back({onto_output ? rs::kReduceWithOutput : rs::kReduceWithInput, slice_at(q)});
    plan.sender.push_back({q == pos ? rs::kWriteReduced : rs::kSendReduced, slice_at(q)});
  }
  plan.signals_ready = up && rank + 1 < n;
  return plan;
}

class ChipBuilder {
 public:
  ChipBuilder(const Params& p, const topo::Topology& topology, const Resolved& r, const LegacyGroup& group,
              std::uint32_t position)
      : p_(p),
        topology_(topology),
        r_(r),
        chip_(group, position, topology, p.input_buffer, p.output_buffer),
        in_slices_(cmd::compute_page_aligned_slices(r.n, r.in_pages, p.dim)) {}

  Program build() {
    for (std::uint32_t link = 0; link < r_.num_links; ++link) build_link(link);
    return std::move(program_);
  }

 private:
  // One link's EDMs and its two worker cores, chaining the link's runs.
  void build_link(std::uint32_t link) {
    link_ = link;
    const Plan up = plan_of(r_, chip_.position, true);
    const Plan down = plan_of(r_, chip_.position, false);
    // The EDM toward the next chip up carries my up sender and my down receiver; the one
    // toward the next chip down, my down sender and my up receiver.
    std::optional<LegacyEdmSite> toward_up;
    std::optional<LegacyEdmSite> toward_down;
    if (up.sent() > 0 || !down.receiver.empty()) toward_up = edm_toward(true, up, down);
    if (down.sent() > 0 || !up.receiver.empty()) toward_down = edm_toward(false, down, up);
    for (const bool dir_up : {true, false}) {
      const Plan& plan = dir_up ? up : down;
      if (plan.sender.empty() && plan.receiver.empty()) continue;
      const CoreCoord core = core_of(dir_up);
      for (std::uint32_t id : {kReadySemaphoreId, kSenderEdmSemaphoreId, kReceiverEdmSemaphoreId}) {
        program_.semaphores.push_back(tensix_semaphore(core, id));
      }
      for (std::uint32_t id : {kPartialCbId, kLocalCbId, kReducedCbId, kScratchCbId}) {
        program_.circular_buffers.push_back(
            CircularBufferSpec{id, {CoreRange{core, core}}, kMessagesPerCb, r_.pages_per_message * r_.page_stride});
      }
      const std::optional<LegacyEdmSite>& onward = dir_up ? toward_up : toward_down;
      const std::optional<LegacyEdmSite>& from_behind = dir_up ? toward_down : toward_up;
      add_worker(true, dir_up, plan, onward);
      if (!plan.receiver.empty()) {
        add_worker(false, dir_up, plan, from_behind);
        add_reduce(core, static_cast<std::uint32_t>(plan.receiver.size()) * messages(dir_up));
      }
    }
  }

  CoreCoord core_of(bool up) const { return r_.core(link_, up); }
  const api::TensorSlice& out_run(bool up) const { return r_.out_runs[r_.run_index(link_, up)]; }
  std::uint32_t run_pages(bool up) const {
    return static_cast<std::uint32_t>(api::volume(out_run(up).worker_slice_shape));
  }
  // Messages per step of one direction (a ring's two runs may differ by a page).
  std::uint32_t messages(bool up) const {
    return kernels::legacy_messages_per_slice(run_pages(up), r_.pages_per_message);
  }

  LegacyEdmSite edm_toward(bool up, const Plan& onward, const Plan& back) {
    return add_legacy_edm_toward(program_, topology_, chip_, r_, link_, up, kSenderEdmSemaphoreId,
                                 onward.sent() * messages(up), kReceiverEdmSemaphoreId,
                                 static_cast<std::uint32_t>(back.receiver.size()) * messages(!up), p_.legacy, kOp);
  }

  // `slice` is the position whose rank's slice it is (plan_of).
  api::CclCommandTensor run_of(bool up, std::uint32_t kind, std::uint32_t slice) const {
    const api::TensorSlice& out_run = this->out_run(up);
    const bool on_input = kind == rs::kSendRaw || kind == rs::kReduceWithInput;
    if (!on_input) return api::to_command_tensor(out_run);
    api::TensorSlice in = in_slices_[chip_.group.rank_at(slice)];
    in.worker_slice_shape = out_run.worker_slice_shape;
    in.worker_slice_offset = out_run.worker_slice_offset;
    return api::to_command_tensor(in);
  }

  void add_worker(bool sender, bool up, const Plan& plan, const std::optional<LegacyEdmSite>& edm) {
    kargs::LegacyReduceScatterWorkerSpec w;
    w.is_sender = sender;
    w.partial_cb_id = kPartialCbId;
    w.local_cb_id = kLocalCbId;
    w.reduced_cb_id = kReducedCbId;
    w.scratch_cb_id = kScratchCbId;
    w.page_size_bytes = r_.page_size;
    w.page_stride_bytes = r_.page_stride;
    w.pages_per_message = r_.pages_per_message;
    const bool uses_edm = sender ? plan.sent() > 0 : true;
    if (uses_edm) {
      // build() adds an EDM wherever a worker sends or receives (value() throws otherwise;
      // runtime/ does not link the simulator's CCLMESH_CHECK).
      w.edm_channel = sender ? legacy_edm_worker_channel(topology_, edm.value(), kLegacyHopSenderChannel,
                                                         kSenderEdmSemaphoreId)
                             : legacy_edm_worker_channel(topology_, edm.value(), kLegacyHopReceiverChannel,
                                                         kReceiverEdmSemaphoreId);
      if (p_.legacy.termination == LegacyTermination::WorkerSignal) {
        w.edm_termination_semaphore_id = kLegacyEdmTerminationSemaphoreId;
      }
    }
    w.output = chip_.output.interpreter_args(chip_.map);
    w.input = chip_.input.interpreter_args(chip_.map);
    if (r_.row_pieces != 0) {
      w.output = in_row_pieces(w.output, r_.page_size, r_.row_pieces);
      w.input = in_row_pieces(w.input, r_.page_size, r_.n * r_.row_pieces);
    } else if (r_.outer_row_pieces > 1) {
      w.output = in_row_pieces(w.output, r_.page_size, r_.outer_row_pieces, r_.outer_last_piece_bytes);
      w.input = in_row_pieces(w.input, r_.page_size, r_.outer_row_pieces, r_.outer_last_piece_bytes);
    }
    for (const Plan::Step& s : sender ? plan.sender : plan.receiver) {
      w.steps.push_back({s.kind, run_of(up, s.kind, s.slice)});
    }
    if (sender && plan.signals_ready) {
      w.ready_semaphore_id = kReadySemaphoreId;
      const Noc0Coord c = chip_.map.tensix_noc0(core_of(!up));
      w.ready_core = {c.x, c.y};
    }
    if (!sender) w.ready_semaphore_id = kReadySemaphoreId;
    const kargs::KernelArgs args = kargs::build_legacy_reduce_scatter_worker_args(w);
    program_.kernels.push_back(legacy_worker_kernel(
        sender ? kernels::kLegacyReduceScatterSenderKernelName : kernels::kLegacyReduceScatterReceiverKernelName,
        core_of(up), args, sender));
  }

  void add_reduce(CoreCoord core, std::uint32_t blocks) {
    kargs::ReduceSpec reduce;
    reduce.in0_cb_id = kPartialCbId;
    reduce.in1_cb_id = kLocalCbId;
    reduce.out_cb_id = kReducedCbId;
    reduce.data_format = reduce_data_format(p_.input.dtype);
    reduce.num_blocks = blocks;
    reduce.pages_per_block = 1;  // one CB page is one EDM message
    program_.kernels.push_back(reduce_kernel(core, reduce));
  }

  const Params& p_;
  const topo::Topology& topology_;
  const Resolved& r_;
  LegacyChip chip_;
  std::vector<api::TensorSlice> in_slices_;
  Program program_;
  std::uint32_t link_ = 0;  // the link build_link is building
};

}  // namespace

std::vector<CoreCoord> worker_cores(const Params& params, const topo::Topology& topology) {
  return row_per_worker_cores(topology, params.first_worker, params.num_links);
}

TensorSpec output_spec(const Params& params, const topo::Topology& topology) {
  const auto groups = resolve_legacy_groups(params.groups, topology, params.topology);
  return with_dim_scaled(params.input, params.dim, static_cast<std::uint32_t>(groups.front().size()), false);
}

// A ring opened by a down link runs as a line: each shape its groups run as is resolved and built
// apart (reduce_scatter::parts_by_shape), into one workload.
void validate(const Params& params, const topo::Topology& topology) {
  for (const Params& part : parts_by_shape(params, topology)) resolve(part, topology);
}

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  MeshWorkload workload = workload_by_shape(
      "reduce_scatter_legacy", parts_by_shape(params, topology), topology, resolve,
      [](const Params& part, const topo::Topology& system, const Resolved& r, const LegacyGroup& g,
         std::uint32_t position) { return ChipBuilder(part, system, r, g, position).build(); });
  workload.buffers = workload_buffers({&params.input_buffer, &params.output_buffer});
  return workload;
}

namespace {

// The sums of `group` (one of r's), taken by position as the chips chain them: slices[p][s] is
// the input of the rank at position p, its slice for the rank at position s; handed back by rank.
std::vector<reference::Bytes> reference_in_group_order(const Params& params, const Resolved& r,
                                                       const LegacyGroup& group,
                                                       const std::vector<reference::Bytes>& inputs_by_rank) {
  const std::uint32_t n = r.n;
  if (inputs_by_rank.size() != n) {
    throw CclParamsError(
        fmt::format("reduce_scatter reference: {} inputs for a group of {}", inputs_by_rank.size(), n));
  }
  std::vector<std::vector<reference::Bytes>> slices(n);  // slices[position][s], in output page order
  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t s = 0; s < n; ++s) {
      slices[p].push_back(
          reference::slice(inputs_by_rank[group.rank_at(p)], params.input, params.dim, n, group.rank_at(s)));
    }
  }
  const auto chain = [&](std::uint32_t s, const std::vector<std::uint32_t>& positions, std::uint64_t offset,
                         std::uint64_t bytes) {
    std::vector<std::span<const std::byte>> parts;
    for (std::uint32_t p : positions) parts.push_back(std::span<const std::byte>(slices[p][s]).subspan(offset, bytes));
    return reference::sum_in_order(parts, params.input.dtype);
  };
  // A slice's pages as the workers move them, for their bytes (FabricPages::image_offset).
  const FabricPages moved_pages{r.page_size, r.outer_row_pieces, 0, r.outer_last_piece_bytes};
  std::vector<reference::Bytes> out(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    out[s].resize(slices[0][s].size());
    if (r.ring) {
      // The halves in page order: up, then down (however the links share them out).
      std::uint64_t offset = 0;
      std::uint64_t pages_before = 0;
      for (std::uint32_t half = 0; half < r.halves.size(); ++half) {
        const bool up = half == 0;
        // Where the half ends in the slice's bytes: rows cut with a shorter last piece
        // (outer_last_piece_bytes) are that much shorter than their pages.
        pages_before += api::volume(r.halves[half].worker_slice_shape);
        const std::uint64_t bytes = moved_pages.image_offset(pages_before) - offset;
        std::vector<std::uint32_t> positions;
        for (std::uint32_t k = 1; k <= n; ++k) positions.push_back(legacy_step(n, s, up, k));
        if (bytes > 0) std::memcpy(out[s].data() + offset, chain(s, positions, offset, bytes).data(), bytes);
        offset += bytes;
      }
      continue;
    }
    std::vector<std::uint32_t> up_positions;
    std::vector<std::uint32_t> down_positions;
    for (std::uint32_t k = 0; k <= s; ++k) up_positions.push_back(k);
    for (std::uint32_t k = n - 1; k > s; --k) down_positions.push_back(k);
    const std::uint64_t bytes = out[s].size();
    reference::Bytes result = chain(s, up_positions, 0, bytes);
    if (!down_positions.empty()) {
      const reference::Bytes d = chain(s, down_positions, 0, bytes);
      // The reduce kernel adds in0 (the arriving partial D) + in1 (U): that operand order
      // decides which NaN payload survives.
      result = reference::sum_in_order({std::span<const std::byte>(d), std::span<const std::byte>(result)},
                                       params.input.dtype);
    }
    out[s] = std::move(result);
  }
  std::vector<reference::Bytes> by_rank(n);
  for (std::uint32_t p = 0; p < n; ++p) by_rank[group.rank_at(p)] = std::move(out[p]);
  return by_rank;
}

}  // namespace

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  for (const Params& part : parts_by_shape(params, topology)) {
    const Resolved r = resolve(part, topology);
    for (const LegacyGroup& g : r.groups) {
      if (g.chips_by_rank() == group) return reference_in_group_order(part, r, g, inputs_by_rank);
    }
  }
  throw CclParamsError(
      fmt::format("reduce_scatter reference: group {} is none of the op's groups", fmt::join(group, ",")));
}

std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank) {
  const std::vector<Params> parts = parts_by_shape(params, topology);
  for (const Params& part : parts) {
    for (const LegacyGroup& g : resolve(part, topology).groups) {
      if (g.chips != g.chips_by_rank()) {
        throw CclParamsError(fmt::format("reduce_scatter reference: group {} runs from mid-line (a ring run as a line "
                                         "around a down link), so its sums depend on the group; give the group",
                                         fmt::join(g.chips_by_rank(), ",")));
      }
    }
  }
  const Resolved r = resolve(parts.front(), topology);
  return reference_in_group_order(parts.front(), r, r.groups.front(), inputs_by_rank);
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::legacy
