#include "runtime/ccl/all_gather/broadcast_fallback.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/concat/concat_args.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::all_gather::broadcast_fallback {
namespace {

constexpr const char* kOp = "all_gather";
constexpr std::uint32_t kConcatInCbId = 0;
constexpr std::uint32_t kConcatOutCbId = 1;
constexpr std::uint32_t kConcatUnpackCbId = 2;  // bfp8_b: the fp32 tile it assembles

kernels::concat::ConcatGeometry geometry(const Params& p, std::uint32_t ranks) {
  kernels::concat::ConcatGeometry g;
  for (std::size_t i = 0; i < 4; ++i) g.shape[i] = p.input.shape[i];
  g.dim = p.dim;
  g.ranks = ranks;
  return g;
}

// One chip's concat: the output tiles split over up to kConcatCores cores, in runs.
Program concat_program(const Params& p, const topo::Topology& topology, ChipId chip, std::uint32_t ranks) {
  const ChipBuffers buffers(topology, chip);
  const kargs::TensorArgs in_args = buffers.interpreter_args(p.broadcast_buffers.front());
  const kargs::TensorArgs out_args = buffers.interpreter_args(p.output_buffer);
  const kernels::concat::ConcatGeometry g = geometry(p, ranks);
  const std::uint32_t tiles = g.out_tiles();
  const std::uint32_t num_cores = std::min(tiles, kConcatCores);
  const std::vector<CoreCoord> cores = worker_cores(topology, p.first_worker, num_cores, kOp);
  const std::uint32_t tile_bytes = page_size_bytes(p.input);

  Program program;
  std::uint32_t first = 0;
  for (std::uint32_t c = 0; c < num_cores; ++c) {
    const std::uint32_t count = tiles / num_cores + (c < tiles % num_cores ? 1 : 0);
    kargs::ConcatSpec spec;
    spec.in_cb_id = kConcatInCbId;
    spec.out_cb_id = kConcatOutCbId;
    spec.unpack_cb_id = kConcatUnpackCbId;
    spec.element_bytes = element_bytes(p.input.dtype);
    spec.dim = p.dim;
    std::copy(p.input.shape.begin(), p.input.shape.end(), spec.shape);
    spec.first_tile = first;
    spec.num_tiles = count;
    spec.tile_bytes = tile_bytes;
    spec.output = out_args;
    spec.input = in_args;
    for (const BufferHandle& b : p.broadcast_buffers) spec.in_addresses.push_back(static_cast<std::uint32_t>(b.address));
    const kargs::KernelArgs args = kargs::build_concat_args(spec);

    const CoreCoord core = cores[c];
    program.circular_buffers.push_back(
        CircularBufferSpec{kConcatInCbId, {CoreRange{core, core}}, kernels::concat::kInputBatchTiles, tile_bytes});
    program.circular_buffers.push_back(CircularBufferSpec{kConcatOutCbId, {CoreRange{core, core}}, 1, tile_bytes});
    if (p.input.dtype == DataType::Bfloat8B) {
      program.circular_buffers.push_back(
          CircularBufferSpec{kConcatUnpackCbId, {CoreRange{core, core}}, 1, kernels::concat::kUnpackedTileBytes});
    }
    KernelSpec k;
    k.kernel = kernels::kConcatKernelName;
    k.core_kind = CoreKind::Tensix;
    k.cores = {CoreRange{core, core}};
    k.processor = DataMovementProcessor::Riscv0;
    k.compile_time_args = args.compile_time;
    k.runtime_args[core] = args.runtime;
    program.kernels.push_back(std::move(k));
    first += count;
  }
  return program;
}

}  // namespace

bool applies(const Params& p) {
  return p.input.layout == Layout::Tile && (p.dim == 2 || p.dim == 3) && p.input.shape[p.dim] % kTileSide != 0;
}

all_broadcast::Params broadcast_params(const Params& p) {
  all_broadcast::Params b;
  b.input = p.input;
  b.input_buffer = p.input_buffer;
  b.output_buffers = p.broadcast_buffers;
  b.topology = p.topology;
  b.num_links = p.num_links;
  b.groups = p.groups;
  b.fabric = p.fabric;
  b.done_semaphore = p.done_semaphore;
  b.barrier_semaphore = p.barrier_semaphore;
  b.first_worker = p.first_worker;
  b.packet_size_in_pages = p.packet_size_in_pages;
  b.cb_packets = p.cb_packets;
  b.split_reader_writer = p.split_reader_writer;
  return b;
}

void validate(const Params& p, const topo::Topology& topology) {
  if (p.mode != CclMode::Fabric) {
    throw CclParamsError(
        fmt::format("all_gather: input dim {} is {} elements, not whole 32-element tiles; tt-metal falls back to "
                    "all_broadcast + concat (REFERENCE 7.6), a fabric-era composite the legacy EDM mode does not "
                    "have; use fabric mode",
                    p.dim, p.input.shape[p.dim]));
  }
  const all_broadcast::Params b = broadcast_params(p);
  const std::uint32_t ranks = all_broadcast::output_buffer_count(b, topology);
  if (p.broadcast_buffers.size() != ranks) {
    throw CclParamsError(fmt::format(
        "all_gather: input dim {} is {} elements, not whole 32-element tiles, so it runs as all_broadcast + concat "
        "(REFERENCE 7.6), which needs broadcast_buffers: {} given, expected {} (one per rank, each "
        "broadcast_buffer_config())",
        p.dim, p.input.shape[p.dim], p.broadcast_buffers.size(), ranks));
  }
  if (ranks > kernels::concat::kMaxRanks) {
    throw CclParamsError(fmt::format("all_gather: the concat joins at most {} ranks; the groups have {}",
                                     kernels::concat::kMaxRanks, ranks));
  }
  all_broadcast::validate(b, topology);
  require_buffer_holds(p.output_buffer, with_dim_scaled(p.input, p.dim, ranks, true), kOp, "output");
  for (const auto& group : resolve_groups(p.groups, topology, FabricPlan(topology, p.fabric))) {
    for (ChipId chip : group) ChipBuffers(topology, chip).layout(p.output_buffer);
  }
  for (const BufferHandle& buffer : p.broadcast_buffers) {
    // The concat addresses all N through one address generator, at each buffer's address.
    if (buffer.config != p.broadcast_buffers.front().config) {
      throw CclParamsError(
          "all_gather: the broadcast buffers must all have the same config (memory, layout and shards); "
          "expected each broadcast_buffer_config() or one sharded config for all");
    }
    if (buffer.id == p.output_buffer.id) throw CclParamsError("all_gather: a broadcast buffer is the output buffer");
  }
  if (p.input_buffer.id == p.output_buffer.id) {
    throw CclParamsError("all_gather: input and output are the same buffer; expected two buffers");
  }
  const std::uint32_t tiles = geometry(p, ranks).out_tiles();
  worker_cores(topology, p.first_worker, std::min(tiles, kConcatCores), kOp);
}

std::vector<MeshWorkload> build(const Params& p, const topo::Topology& topology) {
  broadcast_fallback::validate(p, topology);
  const all_broadcast::Params b = broadcast_params(p);
  std::vector<MeshWorkload> workloads{all_broadcast::build(b, topology)};
  MeshWorkload concat;
  concat.name = "all_gather_concat";
  const std::uint32_t ranks = static_cast<std::uint32_t>(p.broadcast_buffers.size());
  for (const auto& [chip, program] : workloads.front().programs) {
    concat.programs[chip] = concat_program(p, topology, chip, ranks);
  }
  concat.buffers = p.broadcast_buffers;
  concat.buffers.push_back(p.output_buffer);
  // It uses none, but an empty list would hold every semaphore: it holds the gather's.
  concat.global_semaphores = workload_semaphores({&p.done_semaphore, &p.barrier_semaphore});
  workloads.push_back(std::move(concat));
  return workloads;
}

}  // namespace cclmesh::runtime::ccl::all_gather::broadcast_fallback
