#include "runtime/ccl/all_gather/all_gather_legacy.hpp"

#include <fmt/format.h>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
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

struct Resolved {
  std::vector<std::vector<ChipId>> groups;
  TensorSpec output;
  std::uint32_t page_size = 0;
  std::uint32_t page_stride = 0;
  std::uint32_t pages_per_message = 0;
  std::uint32_t messages_per_slice = 0;
  std::vector<CoreCoord> cores;  // [up, down]
};

Resolved resolve(const Params& p, const topo::Topology& topology) {
  Resolved r;
  r.page_size = page_size_bytes(p.input);
  require_page_aligned_dim(p.input, p.dim, kOp, "input");
  if (p.fabric.mode != FabricMode::None) {
    throw CclParamsError(fmt::format("all_gather: legacy EDM mode needs a device without a persistent fabric "
                                     "(fabric.mode none, not {}): the op's EDMs run on the ethernet cores the "
                                     "routers would hold",
                                     to_string(p.fabric.mode)));
  }
  if (p.num_links != 1) {
    throw CclParamsError(fmt::format("all_gather: num_links {} in legacy mode; one EDM per hop end is built (link 0), "
                                     "use num_links 1",
                                     p.num_links));
  }
  if (p.topology == CclTopology::Ring && p.bidirectional == BidirectionalMode::SplitTensor) {
    throw CclParamsError("all_gather: SPLIT_TENSOR is not built in legacy mode; the legacy ring is FULL_TENSOR "
                         "(REFERENCE 7.3)");
  }
  if (p.topology == CclTopology::Line && p.bidirectional == BidirectionalMode::SplitTensor) {
    throw CclParamsError("all_gather: SPLIT_TENSOR needs a ring; a line is inherently FULL_TENSOR (REFERENCE 7.3)");
  }
  r.groups = resolve_legacy_groups(p.groups, topology, p.topology);
  const auto n = static_cast<std::uint32_t>(r.groups.front().size());
  for (const auto& g : r.groups) {
    if (g.size() != n) {
      throw CclParamsError(fmt::format("all_gather: groups of {} and {} chips; every group must have the same size "
                                       "(the output shape depends on it)",
                                       n, g.size()));
    }
    require_group_shape(topology, g, p.topology, p.num_links, kOp);
  }
  r.output = with_dim_scaled(p.input, p.dim, n, true);
  require_buffer_holds(p.input_buffer, p.input, kOp, "input");
  require_buffer_holds(p.output_buffer, r.output, kOp, "output");
  if (p.input_buffer.id == p.output_buffer.id) {
    throw CclParamsError("all_gather: input and output are the same buffer; expected two buffers");
  }
  const CoreCoord grid = common_worker_grid(topology);
  for (const auto& g : r.groups) {
    for (ChipId chip : g) {
      const std::uint32_t banks = chip_core_map(topology, chip).dram_bank_count();
      buffer_layout(p.input_buffer, grid, banks);
      buffer_layout(p.output_buffer, grid, banks);
    }
  }
  r.cores = ccl::worker_cores(topology, p.first_worker, 2, kOp);
  r.page_stride = legacy_page_stride_bytes(r.page_size);
  r.pages_per_message = legacy_pages_per_message(p.legacy, r.page_stride, kLegacyHopChannels, kOp);
  r.messages_per_slice =
      kernels::legacy_messages_per_slice(static_cast<std::uint32_t>(num_pages(p.input)), r.pages_per_message);
  return r;
}

// Rank `rank` moved `steps` ranks in direction up / down.
std::uint32_t step(std::uint32_t n, std::uint32_t rank, bool up, std::uint32_t steps) {
  return up ? (rank + steps) % n : (rank + n - steps % n) % n;
}

class ChipBuilder {
 public:
  ChipBuilder(const Params& p, const topo::Topology& topology, const Resolved& r, const std::vector<ChipId>& group,
              std::uint32_t rank)
      : p_(p),
        topology_(topology),
        r_(r),
        group_(group),
        rank_(rank),
        n_(static_cast<std::uint32_t>(group.size())),
        map_(chip_core_map(topology, group[rank])),
        in_layout_(buffer_layout(p.input_buffer, common_worker_grid(topology), map_.dram_bank_count())),
        out_layout_(buffer_layout(p.output_buffer, common_worker_grid(topology), map_.dram_bank_count())) {}

  Program build() {
    const DirectionCounts up = direction_counts(p_.topology, n_, rank_, true);
    const DirectionCounts down = direction_counts(p_.topology, n_, rank_, false);
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
    return std::move(program_);
  }

 private:
  CoreCoord core_of(bool up) const { return r_.cores[up ? 0 : 1]; }

  LegacyEdmSite edm_toward(bool up, std::uint32_t sent_slices, std::uint32_t received_slices) {
    // Channel 0 feeds the next chip in direction `up` from my `up` sender; channel 1 feeds my
    // receiver of the other direction.
    return add_legacy_hop_edm(
        program_, topology_, group_[rank_], group_[step(n_, rank_, up, 1)],
        LegacyEdmChannel{core_of(up), kSenderEdmSemaphoreId, sent_slices * r_.messages_per_slice},
        LegacyEdmChannel{core_of(!up), kReceiverEdmSemaphoreId, received_slices * r_.messages_per_slice},
        r_.pages_per_message, r_.page_stride, p_.legacy, kOp);
  }

  api::CclCommandTensor output_slice_of(std::uint32_t origin_rank) const {
    const api::Shape4D in_pages = shape_in_pages(p_.input);
    api::TensorSlice s{shape_in_pages(r_.output), in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}};
    set_dim(s.tensor_slice_offset, p_.dim, origin_rank * dim_of(in_pages, p_.dim));
    return api::to_command_tensor(s);
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
    w.output = out_layout_.interpreter_args(map_);
    return w;
  }

  void add_kernel(bool sender, CoreCoord core, const kargs::KernelArgs& args) {
    KernelSpec k;
    k.kernel = sender ? kernels::kLegacyAllGatherSenderKernelName : kernels::kLegacyAllGatherReceiverKernelName;
    k.cores = {CoreRange{core, core}};
    k.processor = sender ? DataMovementProcessor::Riscv0 : DataMovementProcessor::Riscv1;
    k.noc = sender ? NocIndex::Noc0 : NocIndex::Noc1;
    k.compile_time_args = args.compile_time;
    k.runtime_args[core] = args.runtime;
    program_.kernels.push_back(std::move(k));
    program_.circular_buffers.push_back(data_cb_with_id(core, sender ? kSenderScratchCbId : kReceiverScratchCbId));
  }

  CircularBufferSpec data_cb_with_id(CoreCoord core, std::uint32_t id) const {
    CircularBufferSpec cb = data_cb(core, r_.page_stride, kMessageSlots * r_.pages_per_message);
    cb.cb_id = id;
    return cb;
  }

  void add_sender(bool up, std::uint32_t slices, const LegacyEdmSite& edm, bool local_copy) {
    kargs::LegacyAllGatherWorkerSpec w = worker_spec(true, edm, kLegacyHopSenderChannel, kSenderEdmSemaphoreId);
    w.input = in_layout_.interpreter_args(map_);
    const api::Shape4D in_pages = shape_in_pages(p_.input);
    w.slices.push_back(api::to_command_tensor(api::TensorSlice{in_pages, in_pages, {0, 0, 0, 0}, in_pages, {0, 0, 0, 0}}));
    w.slices.push_back(output_slice_of(rank_));
    // Relays: the first slices to arrive, from the chips 1, 2, ... behind me in this direction.
    for (std::uint32_t k = 1; k < slices; ++k) w.slices.push_back(output_slice_of(step(n_, rank_, !up, k)));
    w.local_copy = local_copy;
    add_kernel(true, core_of(up), kargs::build_legacy_all_gather_worker_args(w));
  }

  void add_receiver(bool up, std::uint32_t slices, const LegacyEdmSite& edm) {
    kargs::LegacyAllGatherWorkerSpec w = worker_spec(false, edm, kLegacyHopReceiverChannel, kReceiverEdmSemaphoreId);
    for (std::uint32_t k = 1; k <= slices; ++k) w.slices.push_back(output_slice_of(step(n_, rank_, !up, k)));
    add_kernel(false, core_of(up), kargs::build_legacy_all_gather_worker_args(w));
  }

  const Params& p_;
  const topo::Topology& topology_;
  const Resolved& r_;
  const std::vector<ChipId>& group_;
  std::uint32_t rank_;
  std::uint32_t n_;
  ChipCoreMap map_;
  BufferLayout in_layout_;
  BufferLayout out_layout_;
  Program program_;
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
  return ccl::worker_cores(topology, params.first_worker, 2, kOp);
}

TensorSpec output_spec(const Params& params, const topo::Topology& topology) {
  const auto groups = resolve_legacy_groups(params.groups, topology, params.topology);
  return with_dim_scaled(params.input, params.dim, static_cast<std::uint32_t>(groups.front().size()), true);
}

void validate(const Params& params, const topo::Topology& topology) { resolve(params, topology); }

MeshWorkload build(const Params& params, const topo::Topology& topology) {
  const Resolved r = resolve(params, topology);
  MeshWorkload workload;
  workload.name = "all_gather_legacy";
  for (const auto& g : r.groups) {
    for (std::uint32_t rank = 0; rank < g.size(); ++rank) {
      workload.programs[g[rank]] = ChipBuilder(params, topology, r, g, rank).build();
    }
  }
  return workload;
}

}  // namespace cclmesh::runtime::ccl::all_gather::legacy
