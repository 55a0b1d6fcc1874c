#include "runtime/ccl/all_reduce/one_shot.hpp"

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_reduce::one_shot {
namespace {

constexpr const char* kOp = "all_reduce";

// Reduce core CBs (the gather core uses kDataCbId of its own L1).
constexpr std::uint32_t kAccCbId = 0;      // the running sum (reduce in0)
constexpr std::uint32_t kNextCbId = 1;     // the next chip's copy (reduce in1)
constexpr std::uint32_t kReducedCbId = 2;  // reduce out
constexpr std::uint32_t kGatherCbPackets = 3;
// The local chain's CB packets hold this many fabric payloads: its one interpreter reads and
// writes with a barrier per packet, so bigger packets mean fewer DRAM round trips (as the
// reduce_scatter's, reduce_scatter.cpp). No fabric packet is cut from them.
constexpr std::uint32_t kLocalPayloadsPerPacket = 4;

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

api::TensorSlice flat_run(std::uint32_t tensor_pages, std::uint32_t first, std::uint32_t pages) {
  return api::TensorSlice{api::Shape4D{1, 1, 1, tensor_pages}, api::Shape4D{1, 1, 1, tensor_pages},
                          api::Shape4D{0, 0, 0, 0}, api::Shape4D{1, 1, 1, pages}, api::Shape4D{0, 0, 0, first}};
}

// The multicast reach of `rank`: the whole group once (ring: N/2 up, (N-1)/2 down).
cmd::ChipMulticast reach(const FabricGroup& g, std::uint32_t rank) {
  const std::uint32_t n = g.size();
  if (g.topology == CclTopology::Ring) return g.multicast(rank, n / 2, (n - 1) / 2);
  return g.multicast(rank, g.reach_up(rank), g.reach_down(rank));
}

void add_gather(Program& program, const Params& p, const topo::Topology& topology, const FabricPlan& plan,
                const FabricGroup& g, std::uint32_t rank, const ChipCoreMap& map, CoreCoord core, Noc0Coord reduce_core,
                std::uint32_t packet) {
  const ChipId chip = g.chips[rank];
  const CoreCoord grid = common_worker_grid(topology);
  const std::uint32_t page = page_size_bytes(p.tensor);
  const auto pages = static_cast<std::uint32_t>(num_pages(p.tensor));
  const std::uint32_t n = g.size();
  const cmd::ChipMulticast mcast = reach(g, rank);
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kPacketHeaderCbId;
  spec.packet_size_in_pages = packet;
  program.circular_buffers.push_back(packet_header_cb(core));
  program.circular_buffers.push_back(data_cb(core, page, packet * kGatherCbPackets));
  if (mcast.num_targets_forward > 0) {
    const std::uint32_t* s = kForwardConnectionSemaphoreIds;
    spec.forward_connection = plan.worker_connection(g.port(0), chip, true, s[0], s[1], s[2]);
    for (int i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(core, s[i]));
  }
  if (mcast.num_targets_backward > 0) {
    const std::uint32_t* s = kBackwardConnectionSemaphoreIds;
    spec.backward_connection = plan.worker_connection(g.port(0), chip, false, s[0], s[1], s[2]);
    for (int i = 0; i < 3; ++i) program.semaphores.push_back(tensix_semaphore(core, s[i]));
  }
  const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
  const std::vector<cmd::Command> writer{
      cmd::fabric_write_cb_to_tensor_slice(flat_run(n * pages, rank * pages, pages), kDataCbId, mcast),
      cmd::fabric_multicast_semaphore_inc(done, 1, reduce_core.x, reduce_core.y, mcast)};
  const kargs::InterpreterStreamSpec reader_stream{
      buffer_layout(p.input_buffer, grid, map.dram_bank_count()).interpreter_args(map),
      cmd::encode_command(cmd::read_tensor_slice_to_cb(flat_run(pages, 0, pages), kDataCbId)), 1};
  const kargs::InterpreterStreamSpec writer_stream{
      buffer_layout(p.intermediate_buffer, grid, map.dram_bank_count()).interpreter_args(map),
      cmd::encode_stream(writer), static_cast<std::uint32_t>(writer.size())};
  add_copy_kernels(program, core, spec, reader_stream, writer_stream, true);
}

void add_local_reduce(Program& program, const Params& p, const topo::Topology& topology, const ChipCoreMap& map,
                      CoreCoord core, std::uint32_t n, std::uint32_t packet) {
  const CoreCoord grid = common_worker_grid(topology);
  const std::uint32_t page = page_size_bytes(p.tensor);
  const auto pages = static_cast<std::uint32_t>(num_pages(p.tensor));
  const std::uint32_t chunk = p.chunk_packets * packet;
  const std::uint32_t chunks = ceil_div(pages, chunk);
  const cmd::GlobalSemaphoreAddress done{p.done_semaphore->address};
  // Every chip's copy, its own included, has landed once done counts N multicast increments.
  std::vector<cmd::Command> s0{cmd::local_semaphore_wait(done, n), cmd::local_core_semaphore_set(done, 0)};
  std::vector<cmd::Command> s1;
  for (std::uint32_t k = 1; k < n; ++k) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const std::uint32_t first = c * chunk;
      const std::uint32_t count = std::min(chunk, pages - first);
      const auto copy = [&](std::uint32_t part) { return flat_run(n * pages, part * pages + first, count); };
      if (k == 1) s0.push_back(cmd::read_tensor_slice_to_cb(copy(0), kAccCbId));
      s0.push_back(cmd::read_tensor_slice_to_cb(copy(k), kNextCbId));
      if (k > 1) s1.push_back(cmd::read_tensor_slice_to_cb(flat_run(pages, first, count), kAccCbId));
      s1.push_back(cmd::local_write_cb_to_tensor_slice(flat_run(pages, first, count), kReducedCbId));
    }
  }
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kPacketHeaderCbId;
  spec.packet_size_in_pages = packet;
  const BufferLayout copies = buffer_layout(p.intermediate_buffer, grid, map.dram_bank_count());
  const BufferLayout out = buffer_layout(p.output_buffer, grid, map.dram_bank_count());
  spec.streams = {kargs::InterpreterStreamSpec{copies.interpreter_args(map), cmd::encode_stream(s0),
                                               static_cast<std::uint32_t>(s0.size())},
                  kargs::InterpreterStreamSpec{out.interpreter_args(map), cmd::encode_stream(s1),
                                               static_cast<std::uint32_t>(s1.size())}};
  program.kernels.push_back(interpreter_kernel(core, spec));
  kargs::ReduceSpec reduce;
  reduce.in0_cb_id = kAccCbId;
  reduce.in1_cb_id = kNextCbId;
  reduce.out_cb_id = kReducedCbId;
  reduce.data_format =
      p.tensor.dtype == DataType::Float32 ? kernels::reduce::kDataFormatFloat32 : kernels::reduce::kDataFormatFloat16B;
  reduce.num_blocks = (n - 1) * ceil_div(pages, packet);
  reduce.pages_per_block = packet;
  const kargs::KernelArgs args = kargs::build_reduce_args(reduce);
  KernelSpec reducer;
  reducer.kernel = kernels::kReduceKernelName;
  reducer.core_kind = CoreKind::Tensix;
  reducer.cores = {CoreRange{core, core}};
  reducer.processor = DataMovementProcessor::Riscv1;
  reducer.noc = NocIndex::Noc1;
  reducer.compile_time_args = args.compile_time;
  reducer.runtime_args[core] = args.runtime;
  program.kernels.push_back(std::move(reducer));
  program.circular_buffers.push_back(packet_header_cb(core));
  program.circular_buffers.push_back(CircularBufferSpec{kAccCbId, {CoreRange{core, core}}, chunk, page});
  program.circular_buffers.push_back(CircularBufferSpec{kNextCbId, {CoreRange{core, core}}, 3 * packet, page});
  program.circular_buffers.push_back(CircularBufferSpec{kReducedCbId, {CoreRange{core, core}}, chunk, page});
}

}  // namespace

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  const FabricPlan plan(topology, p.fabric);
  const std::vector<CoreCoord> cores = worker_cores(topology, p.first_worker, 2, kOp);
  require_semaphore_on(p.done_semaphore, cores, kOp, "done_semaphore");
  if (p.chunk_packets == 0) throw CclParamsError("all_reduce: chunk_packets must be at least 1");
  const std::uint32_t packet =
      packet_size_in_pages(p.packet_size_in_pages, page_size_bytes(p.tensor), p.fabric.max_payload_bytes);
  MeshWorkload workload;
  workload.name = "one_shot";
  for (const auto& chips : resolve_groups(p.groups, topology, plan)) {
    const FabricGroup g = map_group_onto_fabric(plan, chips, p.topology, kOp);
    for (std::uint32_t rank = 0; rank < g.size(); ++rank) {
      const ChipCoreMap map = chip_core_map(topology, g.chips[rank]);
      Program program;
      add_gather(program, p, topology, plan, g, rank, map, cores[0], map.tensix_noc0(cores[1]), packet);
      add_local_reduce(program, p, topology, map, cores[1], g.size(), packet * kLocalPayloadsPerPacket);
      workload.programs[g.chips[rank]] = std::move(program);
    }
  }
  return workload;
}

}  // namespace cclmesh::runtime::ccl::all_reduce::one_shot
