#include "tools/cclmesh/prepare_op.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <utility>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "sim/engine/check.hpp"
#include "tools/cclmesh/algorithm_by_shape.hpp"
#include "tools/cclmesh/algorithm_option_values.hpp"
#include "tools/cclmesh/buffer_placement.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/run_groups.hpp"
#include "tools/cclmesh/run_tensors.hpp"
#include "tools/cclmesh/sim_device_options.hpp"

namespace cclmesh::cli::detail {

namespace {

using runtime::BufferHandle;

// --json's `algorithm` of an all_gather that falls back to all_broadcast + concat (no option
// chooses it, so no option's name; the other gathers record none).
constexpr const char* kAllGatherBroadcastFallback = "broadcast-concat";

// send_recv and broadcast move one buffer from a source chip: per group (the whole fabric, or
// with --cluster-axis every row or column at once) its rank 0 sends, to rank 1 (send_recv: one
// hop, as nccl-tests' sendrecv) or to every other rank (broadcast). Each source sends its own
// seeded bytes, so a chip that received another group's data does not verify.
PreparedOp prepare_pair_op(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers,
                           WorkloadCache& cache) {
  // The tensor: --shape's, or --size's pages (S = the bytes each receiver gets). Either may be
  // sharded (--shard, --out-shard*) in --memory; the op copies pages, whatever their layout.
  const std::uint64_t page_bytes = options.shape ? ccl::page_size_bytes(tensor_of_shape(options, *options.shape))
                                                 : page_bytes_of(options);
  ccl::TensorSpec tensor;
  if (options.shape) {
    tensor = tensor_of_shape(options, *options.shape);
  } else {
    const std::uint64_t pages = options.size_bytes / page_bytes;
    if (pages == 0) throw UsageError(fmt::format("--size: {} B is less than one {} B page", options.size_bytes, page_bytes));
    tensor = tensor_of_pages(options, pages);
  }
  const BufferPlacement placement(options, options.memory == "l1" ? runtime::BufferType::L1 : runtime::BufferType::Dram);
  PreparedOp op;
  const BufferHandle input = buffers.create(
      placement.of(tensor, "input", options.shard, options.shard ? options.shard->shape : std::nullopt, "--shard", &op.input_shard));
  // The output holds the same tensor: its explicit shard is --out-shard-shape's, else --shard-shape's.
  const BufferHandle output = buffers.create(placement.of(
      tensor, "output", placement.output_request(), output_shard_of(options, 3, 1, OutputAlongDim::Same),
      options.output_memory ? "--out-shard" : "--shard", &op.output_shard));
  const std::uint64_t bytes = input.config.size_bytes;
  const std::uint32_t element = ccl::element_bytes(tensor.dtype);
  op.shape = tensor.shape;
  op.count = options.shape ? std::uint64_t{tensor.shape[0]} * tensor.shape[1] * tensor.shape[2] * tensor.shape[3]
                           : bytes / page_bytes * (tensor.dtype == ccl::DataType::Bfloat8B ? 1024 : page_bytes / element);
  const ccl::GroupSelection selection = group_selection(options);
  const std::vector<std::vector<ChipId>> groups = run_groups(options, device, selection);
  op.size_bytes = bytes;
  const std::vector<ChipId>& first = groups.front();
  if (options.op == CollectiveOp::SendRecv) {
    ccl::send_recv::Params params;
    params.sender = first.at(0);
    params.receiver = first.at(1);
    params.input = input;
    params.output = output;
    params.groups = selection;
    params.fabric = device.fabric();
    params.num_links = options.links;
    op.workloads = cache.get(params, device.topology(), [&] { return ccl::send_recv::build(params, device.topology()); });
    op.group_size = 2;
    for (const std::vector<ChipId>& group : groups) op.groups.push_back({group.at(0), group.at(1)});
  } else {
    ccl::broadcast::Params params;
    params.root = first.at(0);
    params.input = input;
    params.output = output;
    params.groups = selection;
    params.fabric = device.fabric();
    params.num_links = options.links;
    params.ring_algorithm = bcast_ring_algorithm(options.bcast_ring_algorithm);
    if (params.ring_algorithm == ccl::broadcast::RingAlgorithm::Split) {
      // Where the groups are not whole rings (or too long a ring for a multicast), named by the
      // option; what refuses the broadcast whatever its algorithm is reported as it is.
      ccl::broadcast::Params any_algorithm = params;
      any_algorithm.ring_algorithm = ccl::broadcast::RingAlgorithm::Auto;
      ccl::broadcast::resolved_ring_algorithm(any_algorithm, device.topology());
      try {
        ccl::broadcast::resolved_ring_algorithm(params, device.topology());
      } catch (const ccl::CclParamsError& e) {
        throw UsageError(fmt::format("--bcast-ring-algorithm: 'split': {}", e.what()));
      }
    }
    op.workloads = cache.get(params, device.topology(), [&] { return ccl::broadcast::build(params, device.topology()); });
    const ccl::broadcast::RingAlgorithmChoice choice = ccl::broadcast::ring_algorithm_choice(params, device.topology());
    op.algorithm = choice.algorithm == ccl::broadcast::RingAlgorithm::Split ? "split" : "both-ways";
    op.algorithm_reason = choice.reason;
    op.group_size = static_cast<std::uint32_t>(first.size());
    op.groups = groups;
  }
  if (!options.no_data) {
    ExpectedOutputs expected;
    for (const std::vector<ChipId>& group : groups) {
      const ChipId source = group.at(0);
      Bytes data = seeded_bytes(options.seed, source, bytes);
      device.write_buffer(source, input, data);
      const auto shared = std::make_shared<const Bytes>(std::move(data));
      const std::size_t receivers = options.op == CollectiveOp::SendRecv ? 2 : group.size();
      for (std::size_t rank = 1; rank < receivers; ++rank) expected[group.at(rank)] = {shared};
    }
    op.verify = check_outputs(device, single_output(output), std::move(expected), page_bytes, element);
  }
  return op;
}

// A reduce_scatter's or an all_gather's record of what ran (algorithm_by_shape.hpp).
void record_algorithm(PreparedOp& op, const AlgorithmRecord& record) {
  op.algorithm = record.algorithm;
  op.algorithm_reason = record.reason;
  op.algorithm_lines = record.lines_algorithm;
  op.algorithm_lines_reason = record.lines_reason;
}

// What every collective's preparation shares (prepare_collective's prologue): the run, its
// groups' size and shape, and where its tensors live.
struct Collective {
  const RunOptions& options;
  runtime::MeshDevice& device;
  OpBuffers& buffers;
  WorkloadCache& cache;
  ccl::GroupSelection selection;
  std::uint32_t n;  // chips per group
  ccl::CclTopology topology;
  BufferPlacement placement;
  std::uint32_t dim;
  std::uint64_t page_bytes;  // a --shape tensor's: a tile, or one row of its own width (ROW_MAJOR)
  std::uint32_t element;

  // --size in pages, refused below one page (per chip where S is split over the N chips).
  std::uint64_t checked_pages(std::uint64_t pages, bool per_chip) const {
    if (pages == 0 && per_chip) {
      throw_size_below_a_page_per_chip(options.size_bytes, page_bytes, n);
    }
    if (pages == 0) throw UsageError(fmt::format("--size: {} B is less than one {} B page", options.size_bytes, page_bytes));
    return pages;
  }
  // --size as each chip's tensor that reduce_scatter and all_to_all cut into N parts along dim:
  // whole multiples of N pages, or whole rows when the op cuts ROW_MAJOR rows themselves (dim 3,
  // each row splitting N ways, require_split_along_dim): one row is then enough.
  std::uint64_t split_pages() const {
    if (options.layout == "row_major" && dim == 3) return checked_pages(options.size_bytes / page_bytes, false);
    return checked_pages(options.size_bytes / (page_bytes * n) * n, true);
  }
  // What every collective's params take from the run: the shape, links, groups and the device's fabric.
  template <class Params>
  void set_placement(Params& p) const {
    p.topology = topology;
    p.num_links = options.links;
    p.groups = selection;
    p.fabric = device.fabric();
  }
  // Intermediates and all_gather's broadcast buffers stay interleaved in --memory.
  runtime::BufferConfig config(const ccl::TensorSpec& t) const { return placement.interleaved(t); }
  // The op's input and output: sharded when --shard asks, recording each one's shard in `op`.
  runtime::BufferConfig input_config(const ccl::TensorSpec& t, PreparedOp& op) const {
    const std::optional<std::array<std::uint32_t, 2>> input_shard = options.shard ? options.shard->shape : std::nullopt;
    return placement.of(t, "input", options.shard, input_shard, "--shard", &op.input_shard);
  }
  runtime::BufferConfig output_config(const ccl::TensorSpec& t, OutputAlongDim along_dim, PreparedOp& op) const {
    return placement.of(t, "output", placement.output_request(), output_shard_of(options, dim, n, along_dim),
                        options.output_memory ? "--out-shard" : "--shard", &op.output_shard);
  }
};

// One function per collective: its params from the run, its buffers and workloads, what it
// chose, and the check of its outputs, into `op`.
void prepare_all_gather(const Collective& c, PreparedOp& op) {
  // S = the gathered output; each chip holds S / N.
  ccl::all_gather::Params p;
  p.input = c.options.shape ? gathered_input(c.options, c.dim, c.n)
                            : tensor_of_pages(c.options, c.checked_pages(c.options.size_bytes / (c.page_bytes * c.n), true));
  p.dim = c.dim;
  c.set_placement(p);
  p.mode = legacy_mode(c.options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
  p.ring_algorithm = ag_ring_algorithm(c.options.ag_ring_algorithm);
  p.bidirectional = ag_bidirectional_mode(c.options.ag_bidirectional_mode);
  if (c.options.chunks_per_sync) p.chunks_per_sync = *c.options.chunks_per_sync;
  if (c.options.workers_per_link) p.workers_per_link = *c.options.workers_per_link;
  p.input_buffer = c.buffers.create(c.input_config(p.input, op));
  const ccl::TensorSpec output = ccl::all_gather::output_spec(p, c.device.topology());
  op.shape = output.shape;
  p.output_buffer = c.buffers.create(c.output_config(output, OutputAlongDim::Gathered, op));
  for (std::uint32_t i = 0; i < ccl::all_gather::broadcast_buffer_count(p, c.device.topology()); ++i) {
    p.broadcast_buffers.push_back(c.buffers.create(ccl::all_gather::broadcast_buffer_config(p)));
  }
  if (p.mode == ccl::CclMode::Fabric) {
    p.done_semaphore = c.buffers.create_semaphore(ccl::all_gather::semaphore_cores(p, c.device.topology()),
                                                  runtime::CoreKind::Tensix, 0);
  }
  op.size_bytes = p.output_buffer.config.size_bytes;
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::all_gather::build_workloads(p, c.device.topology()); });
  if (ccl::all_gather::needs_broadcast_fallback(p)) {
    op.algorithm = kAllGatherBroadcastFallback;
    op.algorithm_reason = ccl::all_gather::broadcast_fallback_reason(p);
    op.algorithm_fallback = true;
  } else if (p.mode == ccl::CclMode::Fabric) {
    // Legacy mode runs its EDM all_gather, neither relay nor multicast: no choice to record.
    record_algorithm(op, algorithm_record(all_gather_op_algorithms(ccl::all_gather::part_choices(p, c.device.topology())),
                                          p.topology));
  }
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, false);
  op.verify = verifier(c.device, single_output(p.output_buffer), in, c.page_bytes, c.element,
                       [&](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
                         return RankOutputs(by_rank.size(), {share(ccl::reference::concat(by_rank, p.input, c.dim))});
                       });
}

void prepare_all_broadcast(const Collective& c, PreparedOp& op) {
  // S = the N output buffers of one chip, as all_gather's output (each chip's input is S / N).
  ccl::all_broadcast::Params p;
  p.input = c.options.shape ? tensor_of_shape(c.options, *c.options.shape)
                            : tensor_of_pages(c.options, c.checked_pages(c.options.size_bytes / (c.page_bytes * c.n), true));
  op.shape = p.input.shape;
  c.set_placement(p);
  p.input_buffer = c.buffers.create(c.input_config(p.input, op));
  std::vector<OutputBuffer> outputs;
  for (std::uint32_t i = 0; i < ccl::all_broadcast::output_buffer_count(p, c.device.topology()); ++i) {
    p.output_buffers.push_back(c.buffers.create(c.output_config(p.input, OutputAlongDim::Same, op)));
    outputs.push_back(OutputBuffer{fmt::format("output {}", i), p.output_buffers.back()});
  }
  p.done_semaphore = c.buffers.create_semaphore(ccl::all_broadcast::semaphore_cores(p, c.device.topology()),
                                                runtime::CoreKind::Tensix, 0);
  op.size_bytes = p.input_buffer.config.size_bytes * p.output_buffers.size();
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::all_broadcast::build(p, c.device.topology()); });
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, false);
  // Every chip holds every rank's input, rank i's in output i.
  op.verify = verifier(c.device, std::move(outputs), in, c.page_bytes, c.element, [](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
    std::vector<SharedBytes> per_output;
    for (Bytes& b : ccl::all_broadcast::reference_outputs(by_rank)) per_output.push_back(share(std::move(b)));
    return RankOutputs(by_rank.size(), per_output);
  });
}

void prepare_reduce_scatter(const Collective& c, PreparedOp& op) {
  // S = each chip's input; it splits into N slices along dim.
  ccl::reduce_scatter::Params p;
  p.input = c.options.shape ? tensor_of_shape(c.options, *c.options.shape) : tensor_of_pages(c.options, c.split_pages());
  op.shape = p.input.shape;
  require_split_along_dim(c.options, p.input, c.dim, c.n, "slices");
  p.dim = c.dim;
  c.set_placement(p);
  p.line_algorithm = rs_line_algorithm(c.options.rs_line_algorithm);
  p.ring_algorithm = rs_ring_algorithm(c.options.rs_ring_algorithm);
  if (c.options.workers_per_link) p.workers_per_link = *c.options.workers_per_link;
  p.mode = legacy_mode(c.options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
  p.input_buffer = c.buffers.create(c.input_config(p.input, op));
  p.output_buffer = c.buffers.create(
      c.output_config(ccl::reduce_scatter::output_spec(p, c.device.topology()), OutputAlongDim::Scattered, op));
  if (ccl::reduce_scatter::needs_intermediate(p, c.device.topology())) {
    p.intermediate_buffer = c.buffers.create(c.config(ccl::reduce_scatter::intermediate_spec(p, c.device.topology())));
  }
  if (p.mode == ccl::CclMode::Fabric) {
    p.barrier_semaphore = c.buffers.create_semaphore(
        ccl::reduce_scatter::semaphore_cores(p, c.device.topology()), runtime::CoreKind::Tensix, 0);
  }
  op.size_bytes = p.input_buffer.config.size_bytes;
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::reduce_scatter::build(p, c.device.topology()); });
  // A fabric ring chooses (one-shot, chain or half-way); a line, a ring run as one included, runs the
  // line algorithm asked; legacy mode runs its EDM chain: no choice to record.
  if (p.mode == ccl::CclMode::Fabric) {
    record_algorithm(
        op, algorithm_record(reduce_scatter_algorithms(ccl::reduce_scatter::part_choices(p, c.device.topology())),
                             p.topology));
  }
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, true);
  op.verify = verifier(c.device, single_output(p.output_buffer), in, c.page_bytes, c.element,
                       [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                         return one_output_each(
                             ccl::reduce_scatter::reference_outputs(p, c.device.topology(), group, by_rank));
                       });
}

void prepare_reduce(const Collective& c, PreparedOp& op) {
  // S = the tensor on every chip and on the root after (nccl-tests reduce).
  const std::uint32_t root = c.options.root.value_or(0);
  if (root >= c.n) {
    throw UsageError(fmt::format("--root: {} is not a rank of a group of {} chips; expected 0..{}", root, c.n, c.n - 1));
  }
  ccl::reduce::Params p;
  p.tensor = c.options.shape ? tensor_of_shape(c.options, *c.options.shape)
                             : tensor_of_pages(c.options, c.checked_pages(c.options.size_bytes / c.page_bytes, false));
  op.shape = p.tensor.shape;
  p.root = root;
  c.set_placement(p);
  p.input_buffer = c.buffers.create(c.input_config(p.tensor, op));
  p.output_buffer = c.buffers.create(c.output_config(p.tensor, OutputAlongDim::Same, op));
  p.barrier_semaphore = c.buffers.create_semaphore(ccl::reduce::semaphore_cores(p, c.device.topology()),
                                                   runtime::CoreKind::Tensix, 0);
  op.size_bytes = p.input_buffer.config.size_bytes;
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::reduce::build(p, c.device.topology()); });
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, true);
  // Only the root's output is defined (nccl's reduce): the other ranks are not read.
  op.verify = verifier(c.device, single_output(p.output_buffer), in, c.page_bytes, c.element,
                       [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                         RankOutputs per_rank(by_rank.size());
                         per_rank.at(p.root) = {
                             share(ccl::reduce::reference_output(p, c.device.topology(), group, by_rank))};
                         return per_rank;
                       });
}

void prepare_all_to_all(const Collective& c, PreparedOp& op) {
  // S = B, each chip's tensor (nccl-tests alltoall, REFERENCE 14): N chunks along dim.
  ccl::all_to_all::Params p;
  p.tensor = c.options.shape ? tensor_of_shape(c.options, *c.options.shape) : tensor_of_pages(c.options, c.split_pages());
  op.shape = p.tensor.shape;
  require_split_along_dim(c.options, p.tensor, c.dim, c.n, "chunks");
  p.dim = c.dim;
  c.set_placement(p);
  if (c.options.rounds) p.rounds = *c.options.rounds;
  p.senders = a2a_senders(c.options.a2a_senders);
  p.input_buffer = c.buffers.create(c.input_config(p.tensor, op));
  p.output_buffer = c.buffers.create(c.output_config(p.tensor, OutputAlongDim::Same, op));
  p.done_semaphore = c.buffers.create_semaphore(ccl::all_to_all::semaphore_cores(p, c.device.topology()),
                                                runtime::CoreKind::Tensix, 0);
  op.size_bytes = p.input_buffer.config.size_bytes;
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::all_to_all::build(p, c.device.topology()); });
  record_algorithm(op, algorithm_record(all_to_all_algorithms(ccl::all_to_all::part_choices(p, c.device.topology(), c.n)),
                                        p.topology));
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, false);
  op.verify = verifier(c.device, single_output(p.output_buffer), in, c.page_bytes, c.element,
                       [&](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
                         return one_output_each(ccl::all_to_all::reference_outputs(p, c.device.topology(), by_rank));
                       });
}

void prepare_all_reduce(const Collective& c, PreparedOp& op) {
  // all_reduce: S = the tensor on every chip, before and after.
  ccl::all_reduce::Params p;
  p.tensor = c.options.shape ? tensor_of_shape(c.options, *c.options.shape)
                             : tensor_of_pages(c.options, c.checked_pages(c.options.size_bytes / c.page_bytes, false));
  op.shape = p.tensor.shape;
  c.set_placement(p);
  if (c.options.workers_per_link) p.workers_per_link = *c.options.workers_per_link;
  p.mode = legacy_mode(c.options) ? ccl::CclMode::Legacy : ccl::CclMode::Fabric;
  p.algorithm = all_reduce_algorithm(c.options.all_reduce_algo);
  p.ag_ring_algorithm = ag_ring_algorithm(c.options.ag_ring_algorithm);
  p.rs_line_algorithm = rs_line_algorithm(c.options.rs_line_algorithm);
  // "auto" keeps all_reduce's default for its reduce_scatter half: the reduce_scatter's own Auto.
  if (c.options.rs_ring_algorithm != "auto") p.rs_ring_algorithm = rs_ring_algorithm(c.options.rs_ring_algorithm);
  p.input_buffer = c.buffers.create(c.input_config(p.tensor, op));
  p.output_buffer = c.buffers.create(c.output_config(p.tensor, OutputAlongDim::Same, op));
  p.intermediate_buffer = c.buffers.create(c.config(ccl::all_reduce::intermediate_spec(p, c.device.topology())));
  if (ccl::all_reduce::needs_rs_intermediate(p, c.device.topology())) {
    p.rs_intermediate_buffer =
        c.buffers.create(c.config(ccl::all_reduce::rs_intermediate_spec(p, c.device.topology())));
  }
  const std::vector<runtime::CoreRange> cores = ccl::all_reduce::semaphore_cores(p, c.device.topology());
  p.barrier_semaphore = c.buffers.create_semaphore(cores, runtime::CoreKind::Tensix, 0);
  p.done_semaphore = c.buffers.create_semaphore(cores, runtime::CoreKind::Tensix, 0);
  op.size_bytes = p.input_buffer.config.size_bytes;
  op.workloads = c.cache.get(p, c.device.topology(), [&] { return ccl::all_reduce::build(p, c.device.topology()); });
  // Legacy mode chooses per shape: a torus row opened into a line runs the line's choice.
  const std::vector<ccl::all_reduce::PartChoice> parts = ccl::all_reduce::part_choices(p, c.device.topology());
  record_algorithm(op, algorithm_record(all_reduce_algorithms(parts), p.topology));
  // Each part's fallback gets its own note: the rings' (op.algorithm) and the opened lines'
  // (op.algorithm_lines), which fall back for reasons of their own (a line's slice runs whole).
  op.algorithm_fallback = parts.front().choice.fallback;
  op.algorithm_lines_fallback = parts.size() == 2 && parts.back().choice.fallback;
  op.algorithm_halves = all_reduce_halves(p, c.device.topology());
  const GroupInputs in = write_group_inputs(c.options, c.device, c.selection, p.input_buffer, true);
  op.verify = verifier(c.device, single_output(p.output_buffer), in, c.page_bytes, c.element,
                       [&](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
                         return one_output_each(ccl::all_reduce::reference_outputs(p, c.device.topology(), group, by_rank));
                       });
}

PreparedOp prepare_collective(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers, bool ring,
                              WorkloadCache& cache) {
  // A --shape tensor's page: a tile, or one row of its own width (ROW_MAJOR).
  const std::uint64_t page_bytes =
      options.shape ? ccl::page_size_bytes(tensor_of_shape(options, *options.shape)) : page_bytes_of(options);
  const ccl::GroupSelection selection = group_selection(options);
  const std::vector<std::vector<ChipId>> groups = run_groups(options, device, selection);
  const auto n = static_cast<std::uint32_t>(groups.front().size());
  if (ring && n == 2) {  // the whole-system case is refused before the device is built
    throw UsageError(fmt::format("--topology: ring asked with --cluster-axis {}, whose groups have 2 chips; a 2-chip "
                                 "ring must run as a line (tt-metal issue #12770); use --topology line",
                                 options.cluster_axis.value_or(0)));
  }
  if (ring && options.cluster_axis) {
    // The whole-system ring is refused earlier, by the fabric plan; an axis group is only a row
    // or column, which has no closing link unless the mesh wraps (a torus) along that axis.
    for (const auto& group : groups) {
      const ChipId last = group.back();
      const ChipId first = group.front();
      if (device.topology().links_between(static_cast<topo::ChipId>(last), static_cast<topo::ChipId>(first)) == 0) {
        throw UsageError(fmt::format("--topology: ring asked with --cluster-axis {}, but group {} has no link closing "
                                     "it (chips {} and {} are not neighbours); use --topology line",
                                     *options.cluster_axis, fmt::join(group, ","), last, first));
      }
    }
  }
  const ccl::CclTopology topology = ring ? ccl::CclTopology::Ring : ccl::CclTopology::Line;
  if (legacy_mode(options)) require_legacy_links(options, device.topology(), groups, topology, device.fabric().down_edges);
  const runtime::BufferType memory = options.memory == "l1" ? runtime::BufferType::L1 : runtime::BufferType::Dram;
  // Members initialise in order: the placement checks --shard before the dim and dtype are read.
  const Collective c{options,
                     device,
                     buffers,
                     cache,
                     selection,
                     n,
                     topology,
                     BufferPlacement(options, memory),
                     options.dim ? *options.dim : options.shape ? 3 : gather_dim(options),
                     page_bytes,
                     ccl::element_bytes(parse_dtype(options.dtype))};
  PreparedOp op;
  op.group_size = n;
  op.groups = groups;
  switch (options.op) {
    case CollectiveOp::AllGather: prepare_all_gather(c, op); break;
    case CollectiveOp::AllBroadcast: prepare_all_broadcast(c, op); break;
    case CollectiveOp::ReduceScatter: prepare_reduce_scatter(c, op); break;
    case CollectiveOp::Reduce: prepare_reduce(c, op); break;
    case CollectiveOp::AllToAll: prepare_all_to_all(c, op); break;
    case CollectiveOp::AllReduce: prepare_all_reduce(c, op); break;
    default: CCLMESH_CHECK(false, "prepare_collective: send_recv and broadcast are prepare_pair_op's");
  }
  // Elements: a bfp8_b tile page holds 1024 values plus shared exponents. A --shape's are its
  // logical elements, tile padding not counted.
  const std::uint64_t per_page = parse_dtype(options.dtype) == ccl::DataType::Bfloat8B ? 1024 : page_bytes / c.element;
  op.count = op.size_bytes / page_bytes * per_page;
  if (options.shape) op.count = std::uint64_t{op.shape[0]} * op.shape[1] * op.shape[2] * op.shape[3];
  // nccl-tests' count is per rank wherever S spans the ranks (its paramcount; REFERENCE 9:
  // all_gather's S = count x type x n, alltoall's S = count x n x type): all_gather's per-chip
  // input, reduce_scatter's per-chip output, what all_to_all sends each peer, and all_broadcast's
  // per-chip input (its S is a chip's N output buffers; with --shape that input is the shape).
  // all_reduce, reduce, broadcast and send_recv count their whole tensor.
  const bool per_rank = options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
                        options.op == CollectiveOp::AllToAll ||
                        (options.op == CollectiveOp::AllBroadcast && !options.shape);
  if (per_rank) op.count /= n;
  if (options.op == CollectiveOp::AllGather || options.op == CollectiveOp::ReduceScatter ||
      options.op == CollectiveOp::AllToAll) {
    op.dim = c.dim;
  }
  return op;
}

}  // namespace

PreparedOp prepare_op(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers, bool ring,
                      WorkloadCache& cache) {
  return (options.op == CollectiveOp::SendRecv || options.op == CollectiveOp::Broadcast)
             ? prepare_pair_op(options, device, buffers, cache)
             : prepare_collective(options, device, buffers, ring, cache);
}

}  // namespace cclmesh::cli::detail
