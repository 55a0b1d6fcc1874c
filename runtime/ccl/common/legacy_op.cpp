#include "runtime/ccl/common/legacy_op.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"

namespace cclmesh::runtime::ccl {

LegacyOp resolve_legacy_op(const LegacyOpRequest& q, const topo::Topology& topology, const std::string& op) {
  LegacyOp r;
  r.page_size = page_size_bytes(q.input);
  require_page_aligned_dim(q.input, q.dim, op, "input");
  if (q.fabric.mode != FabricMode::None) {
    throw CclParamsError(fmt::format("{}: legacy EDM mode needs a device without a persistent fabric "
                                     "(fabric.mode none, not {}): the op's EDMs run on the ethernet cores the "
                                     "routers would hold",
                                     op, to_string(q.fabric.mode)));
  }
  if (q.num_links != 1) {
    throw CclParamsError(fmt::format("{}: num_links {} in legacy mode; one EDM per hop end is built (link 0), "
                                     "use num_links 1",
                                     op, q.num_links));
  }
  r.groups = resolve_legacy_groups(q.groups, topology, q.topology);
  r.n = static_cast<std::uint32_t>(r.groups.front().size());
  for (const auto& g : r.groups) {
    if (g.size() != r.n) {
      throw CclParamsError(fmt::format("{}: groups of {} and {} chips; every group must have the same size", op, r.n,
                                       g.size()));
    }
    require_group_shape(topology, g, q.topology, q.num_links, op);
  }
  r.cores = worker_cores(topology, q.first_worker, 2, op);
  r.page_stride = legacy_page_stride_bytes(r.page_size);
  r.erisc = q.fabric.erisc_l1_map();
  r.pages_per_message = legacy_pages_per_message(q.legacy, r.page_stride, kLegacyHopChannels, op, r.erisc);
  return r;
}

void require_legacy_buffers(const LegacyOp& r, const topo::Topology& topology, const BufferHandle& input,
                            const TensorSpec& input_spec, const BufferHandle& output, const TensorSpec& output_spec,
                            const std::string& op) {
  require_buffer_holds(input, input_spec, op, "input");
  require_buffer_holds(output, output_spec, op, "output");
  if (input.id == output.id) {
    throw CclParamsError(fmt::format("{}: input and output are the same buffer; expected two buffers", op));
  }
  for (const auto& g : r.groups) require_buffer_layouts(topology, g, {&input, &output});
}

std::uint32_t legacy_step(std::uint32_t n, std::uint32_t rank, bool up, std::uint32_t steps) {
  return up ? (rank + steps) % n : (rank + n - steps % n) % n;
}

LegacyChip::LegacyChip(const std::vector<ChipId>& group_, std::uint32_t rank_, const topo::Topology& topology,
                       const BufferHandle& input_buffer, const BufferHandle& output_buffer)
    : group(group_),
      rank(rank_),
      map(chip_core_map(topology, group_[rank_])),
      input(buffer_layout(input_buffer, common_worker_grid(topology), map.dram_bank_count())),
      output(buffer_layout(output_buffer, common_worker_grid(topology), map.dram_bank_count())) {}

LegacyEdmSite add_legacy_edm_toward(Program& program, const topo::Topology& topology, const LegacyChip& chip,
                                    const LegacyOp& r, bool up, std::uint32_t sender_semaphore_id,
                                    std::uint32_t sender_messages, std::uint32_t receiver_semaphore_id,
                                    std::uint32_t receiver_messages, const LegacyEdmOptions& options,
                                    const std::string& op) {
  return add_legacy_hop_edm(program, topology, chip.chip(), chip.neighbour(up),
                            LegacyEdmChannel{r.cores[up ? 0 : 1], sender_semaphore_id, sender_messages},
                            LegacyEdmChannel{r.cores[up ? 1 : 0], receiver_semaphore_id, receiver_messages},
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
