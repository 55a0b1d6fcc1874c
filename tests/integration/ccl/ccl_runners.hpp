#pragma once
// One call per collective for end-to-end tests on the simulated device: creates the op's
// buffers (interleaved or sharded, DRAM or L1) and global semaphores, writes a distinct input
// on every chip of every group, runs the op, and compares every chip's output bit for bit with
// the op's host reference (all_gather: reference::concat, element by element for its broadcast
// fallback; all_broadcast: every rank's input in its buffer; reduce_scatter, all_reduce and
// all_to_all: their reference_outputs; reduce: the root's reference_output; broadcast and
// send_recv: the root's / sender's input). On a timing-only device (DRAM holds no bytes) it writes and compares
// nothing; what the ethernet links carried is reported instead, so callers can check that the
// data crossed the wires.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "sim/model/eth_core.hpp"
#include "sim/model/eth_link.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"

namespace cclmesh::ccltest {

// A sharded layout in elements of the tensor the buffer holds (REFERENCE 7.2: a core grid, a
// shard shape and an orientation).
struct ShardLayout {
  runtime::TensorMemoryLayout layout = runtime::TensorMemoryLayout::WidthSharded;
  std::vector<runtime::CoreRange> grid;
  std::uint32_t shard_height = 32;  // elements (rows)
  std::uint32_t shard_width = 32;   // elements
  runtime::ShardOrientation orientation = runtime::ShardOrientation::RowMajor;
};

// Where a tensor lives: DRAM or L1, interleaved unless a shard layout is given.
struct Memory {
  runtime::BufferType type = runtime::BufferType::Dram;
  std::optional<ShardLayout> shard;
};

inline runtime::BufferConfig buffer_config(const runtime::ccl::TensorSpec& t, const Memory& memory) {
  if (!memory.shard) return runtime::ccl::interleaved_buffer_config(t, memory.type);
  const ShardLayout& s = *memory.shard;
  const api::Shape4D pages = runtime::ccl::shape_in_pages(t);
  // A TILE page is a 32x32 tile; a ROW_MAJOR page is one whole row.
  const bool tile = t.layout == runtime::ccl::Layout::Tile;
  const std::uint32_t height_pages = tile ? s.shard_height / 32 : s.shard_height;
  const std::uint32_t width_pages = tile ? s.shard_width / 32 : 1;
  return runtime::BufferConfig{memory.type,
                               runtime::ccl::size_bytes(t),
                               runtime::ccl::page_size_bytes(t),
                               s.layout,
                               runtime::ShardSpec{s.grid, height_pages, width_pages, pages.x, s.orientation}};
}

// What one run did.
struct RunOutcome {
  std::uint32_t group_size = 0;
  std::size_t groups = 0;
  std::uint64_t kernel_ns = 0;     // first Tensix kernel start to last end (simulated)
  std::uint64_t input_bytes = 0;   // per chip
  std::uint64_t output_bytes = 0;  // per chip
  bool verified = false;           // outputs compared with the host reference
  // Ethernet payload bytes sent from one chip to another, summed over the links between them.
  std::map<std::pair<ChipId, ChipId>, std::int64_t> link_payload_bytes;
  // The ethernet sends (EthCore::send_packet) behind them: a router sends a fabric packet as
  // header and payload, then, unless it fills the slot, its 16 B sync word apart; and its 16 B ack
  // words for the other direction's packets, whose batching follows the timing.
  std::map<std::pair<ChipId, ChipId>, std::int64_t> link_sends;

  std::int64_t total_link_payload_bytes() const {
    std::int64_t total = 0;
    for (const auto& [hop, bytes] : link_payload_bytes) total += bytes;
    return total;
  }
};

// How a runner runs its op.
struct RunOptions {
  std::uint32_t repeats = 1;   // enqueued back to back (finish() at the end, or after each: OpRun)
  bool entry_barrier = false;  // all_gather: add its optional entry barrier (the others always have theirs)
};

// A per-hop sum of one EthCoreStats field over the links between two chips, each way.
inline std::map<std::pair<ChipId, ChipId>, std::int64_t> link_stat(sim::device::SimMeshDevice& device,
                                                                   std::int64_t sim::EthCoreStats::*field) {
  std::map<std::pair<ChipId, ChipId>, std::int64_t> sums;
  for (const auto& link : device.system().links()) {
    for (const sim::EthCore* from : {&link->a(), &link->b()}) {
      const auto hop = std::make_pair(static_cast<ChipId>(from->chip().id()),
                                      static_cast<ChipId>(from->peer()->chip().id()));
      sums[hop] += from->stats().*field;
    }
  }
  return sums;
}

inline std::map<std::pair<ChipId, ChipId>, std::int64_t> link_payload_bytes(sim::device::SimMeshDevice& device) {
  return link_stat(device, &sim::EthCoreStats::payload_bytes_sent);
}

namespace detail {

inline bool functional(const sim::device::SimMeshDevice& device) {
  return device.options().data_mode == sim::DataMode::Functional;
}

// Writes pattern(seed_base + chip) into `buffer` on every chip of every group; returns the inputs
// (empty on a timing-only device). bfp8_b tiles get shared exponents in a range whose sums
// stay finite (reference::bound_bfp8_exponents), so the sums compare real values, not NaNs.
inline std::map<ChipId, Bytes> write_inputs(sim::device::SimMeshDevice& device,
                                            const std::vector<std::vector<ChipId>>& groups,
                                            const runtime::BufferHandle& buffer, runtime::ccl::DataType dtype,
                                            std::uint32_t seed_base) {
  std::map<ChipId, Bytes> inputs;
  if (!functional(device)) return inputs;
  for (const auto& g : groups) {
    for (ChipId chip : g) {
      inputs[chip] = pattern(buffer.config.size_bytes, seed_base + chip);
      if (dtype == runtime::ccl::DataType::Bfloat8B) runtime::ccl::reference::bound_bfp8_exponents(inputs[chip]);
      device.write_buffer(chip, buffer, inputs[chip]);
    }
  }
  return inputs;
}

inline std::vector<Bytes> by_rank(const std::map<ChipId, Bytes>& inputs, const std::vector<ChipId>& group) {
  std::vector<Bytes> out;
  for (ChipId chip : group) out.push_back(inputs.at(chip));
  return out;
}

inline std::string group_name(const std::vector<ChipId>& g) {
  return topo::chip_list_to_string(std::vector<topo::ChipId>(g.begin(), g.end()));
}

// The op's groups on the device's fabric, after the fabric is taken from the device; on a device
// without one (legacy EDM mode), as the legacy builders resolve them for a group of `shape`.
inline std::vector<std::vector<ChipId>> fabric_groups(const sim::device::SimMeshDevice& device,
                                                      const runtime::ccl::GroupSelection& selection,
                                                      runtime::ccl::CclTopology shape = runtime::ccl::CclTopology::Line) {
  if (device.options().fabric.mode == runtime::FabricMode::None) {
    return runtime::ccl::resolve_legacy_groups(selection, device.topology(), shape);
  }
  return runtime::ccl::resolve_groups(selection, device.topology(),
                                      runtime::FabricPlan(device.topology(), device.options().fabric));
}

// One op whose buffers and semaphores exist, ready to run.
struct OpRun {
  std::vector<std::vector<ChipId>> input_groups;  // the chips that get an input, one list per group, rank order
  runtime::BufferHandle input;
  runtime::BufferHandle output;
  runtime::ccl::DataType dtype = runtime::ccl::DataType::Bfloat16;
  std::uint32_t seed_base = 0;  // chip c's input is pattern(size, seed_base + c)
  std::vector<runtime::MeshWorkload> workloads;
  // An op without an entry barrier finishes before the next repeat starts: it may not overwrite
  // outputs its peers are still reading.
  bool finish_each_repeat = false;
};

// What every runner does once its op is built: writes the inputs, enqueues the op run.repeats
// times, fills the outcome and, on a device that holds bytes, calls
// verify_group(group, inputs of the group in rank order) for each input group.
template <class VerifyGroup>
RunOutcome run_op(sim::device::SimMeshDevice& device, const OpRun& op, const RunOptions& run,
                  VerifyGroup verify_group) {
  const std::map<ChipId, Bytes> inputs = write_inputs(device, op.input_groups, op.input, op.dtype, op.seed_base);
  RunOutcome outcome;
  const std::size_t profile_begin = device.profile().size();
  for (std::uint32_t i = 0; i < run.repeats; ++i) {
    for (const auto& w : op.workloads) device.enqueue_workload(w);
    if (op.finish_each_repeat) device.finish();
  }
  device.finish();
  outcome.kernel_ns = last_kernel_span_ns(device, profile_begin);
  outcome.link_payload_bytes = link_payload_bytes(device);
  outcome.link_sends = link_stat(device, &sim::EthCoreStats::packets_sent);
  outcome.group_size = static_cast<std::uint32_t>(op.input_groups.front().size());
  outcome.groups = op.input_groups.size();
  outcome.input_bytes = op.input.config.size_bytes;
  outcome.output_bytes = op.output.config.size_bytes;
  if (!functional(device)) return outcome;
  for (const auto& g : op.input_groups) verify_group(g, by_rank(inputs, g));
  outcome.verified = true;
  return outcome;
}

// Compares every rank's output with expected[rank].
inline void expect_rank_outputs(sim::device::SimMeshDevice& device, const char* op, const std::vector<ChipId>& g,
                                const runtime::BufferHandle& output, const std::vector<Bytes>& expected) {
  for (std::size_t rank = 0; rank < g.size(); ++rank) {
    EXPECT_TRUE(read_back(device, g[rank], output) == expected[rank])
        << op << " output of rank " << rank << " (chip " << g[rank] << ") of group " << group_name(g);
  }
}

}  // namespace detail

// `p` carries the op's choices (input, dim, topology, links, groups, mode); the fabric,
// buffers and semaphores are filled in here. run.entry_barrier adds the optional barrier
// semaphore that lets back-to-back all_gathers share one finish(). broadcast_memory: where the
// broadcast fallback's buffers live (default: each all_gather::broadcast_buffer_config(),
// interleaved in the output's memory).
inline RunOutcome run_all_gather(sim::device::SimMeshDevice& device, runtime::ccl::all_gather::Params p,
                                 const Memory& input_memory, const Memory& output_memory,
                                 const RunOptions& run = {},
                                 const std::optional<Memory>& broadcast_memory = std::nullopt) {
  namespace ag = runtime::ccl::all_gather;
  p.fabric = device.options().fabric;
  const runtime::ccl::TensorSpec out = ag::output_spec(p, device.topology());
  p.input_buffer = device.create_buffer(buffer_config(p.input, input_memory));
  p.output_buffer = device.create_buffer(buffer_config(out, output_memory));
  // A gather dim that is not whole tiles runs as all_broadcast + concat, through N more buffers.
  for (std::uint32_t i = 0; i < ag::broadcast_buffer_count(p, device.topology()); ++i) {
    p.broadcast_buffers.push_back(device.create_buffer(
        broadcast_memory ? buffer_config(p.input, *broadcast_memory) : ag::broadcast_buffer_config(p)));
  }
  const std::vector<runtime::CoreRange> cores = ag::semaphore_cores(p, device.topology());
  p.done_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  if (run.entry_barrier) p.barrier_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups, p.topology), p.input_buffer, p.output_buffer, p.input.dtype,
                         1000, ag::build_workloads(p, device.topology())};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    const Bytes expected = runtime::ccl::reference::concat(inputs, p.input, p.dim);
    for (ChipId chip : g) {
      EXPECT_TRUE(read_back(device, chip, p.output_buffer) == expected)
          << "all_gather output of chip " << chip << " of group " << detail::group_name(g);
    }
  });
}

// all_broadcast: every rank's input lands in its own output buffer on every chip of its group.
// run.entry_barrier adds the optional barrier semaphore (back-to-back runs share one finish()).
inline RunOutcome run_all_broadcast(sim::device::SimMeshDevice& device, runtime::ccl::all_broadcast::Params p,
                                    const Memory& memory, const RunOptions& run = {}) {
  namespace ab = runtime::ccl::all_broadcast;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(buffer_config(p.input, memory));
  p.output_buffers.clear();
  for (std::uint32_t i = 0; i < ab::output_buffer_count(p, device.topology()); ++i) {
    p.output_buffers.push_back(device.create_buffer(buffer_config(p.input, memory)));
  }
  const std::vector<runtime::CoreRange> cores = ab::semaphore_cores(p, device.topology());
  p.done_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  if (run.entry_barrier) p.barrier_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups), p.input_buffer, p.output_buffers.front(),
                         p.input.dtype, 1500, {ab::build(p, device.topology())}, !run.entry_barrier};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    const std::vector<Bytes> expected = ab::reference_outputs(inputs);
    for (ChipId chip : g) {
      for (std::size_t i = 0; i < g.size(); ++i) {
        EXPECT_TRUE(read_back(device, chip, p.output_buffers[i]) == expected[i])
            << "all_broadcast output " << i << " of chip " << chip << " of group " << detail::group_name(g);
      }
    }
  });
}

inline RunOutcome run_reduce_scatter(sim::device::SimMeshDevice& device, runtime::ccl::reduce_scatter::Params p,
                                     const Memory& input_memory, const Memory& output_memory,
                                     const RunOptions& run = {}) {
  namespace rs = runtime::ccl::reduce_scatter;
  p.fabric = device.options().fabric;
  const runtime::ccl::TensorSpec out = rs::output_spec(p, device.topology());
  p.input_buffer = device.create_buffer(buffer_config(p.input, input_memory));
  p.output_buffer = device.create_buffer(buffer_config(out, output_memory));
  // A two-sided line's partials: interleaved, in the output's memory type.
  if (rs::needs_intermediate(p, device.topology())) {
    p.intermediate_buffer = device.create_buffer(
        runtime::ccl::interleaved_buffer_config(rs::intermediate_spec(p, device.topology()), output_memory.type));
  }
  p.barrier_semaphore =
      device.create_global_semaphore(rs::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups, p.topology), p.input_buffer, p.output_buffer, p.input.dtype,
                         2000, {rs::build(p, device.topology())}};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    detail::expect_rank_outputs(device, "reduce_scatter", g, p.output_buffer,
                                rs::reference_outputs(p, device.topology(), inputs));
  });
}

// Input, output and intermediate all live in `memory` (interleaved).
inline RunOutcome run_all_reduce(sim::device::SimMeshDevice& device, runtime::ccl::all_reduce::Params p,
                                 const Memory& memory, const RunOptions& run = {}) {
  namespace ar = runtime::ccl::all_reduce;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.output_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.intermediate_buffer = device.create_buffer(buffer_config(ar::intermediate_spec(p, device.topology()), memory));
  if (ar::needs_rs_intermediate(p, device.topology())) {
    p.rs_intermediate_buffer = device.create_buffer(
        runtime::ccl::interleaved_buffer_config(ar::rs_intermediate_spec(p, device.topology()), memory.type));
  }
  const std::vector<runtime::CoreRange> cores = ar::semaphore_cores(p, device.topology());
  p.barrier_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  p.done_semaphore = device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups, p.topology), p.input_buffer, p.output_buffer, p.tensor.dtype,
                         3000, ar::build(p, device.topology())};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    detail::expect_rank_outputs(device, "all_reduce", g, p.output_buffer,
                                ar::reference_outputs(p, device.topology(), inputs));
  });
}

// Input and output live in `memory` (interleaved). Only the root's output is defined (nccl's
// reduce), so only the root of each group is compared.
inline RunOutcome run_reduce(sim::device::SimMeshDevice& device, runtime::ccl::reduce::Params p, const Memory& memory,
                             const RunOptions& run = {}) {
  namespace rd = runtime::ccl::reduce;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.output_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.barrier_semaphore =
      device.create_global_semaphore(rd::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups, p.topology), p.input_buffer, p.output_buffer, p.tensor.dtype,
                         4000, {rd::build(p, device.topology())}};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    EXPECT_TRUE(read_back(device, g.at(p.root), p.output_buffer) == rd::reference_output(p, device.topology(), inputs))
        << "reduce output of root rank " << p.root << " (chip " << g.at(p.root) << ") of group "
        << detail::group_name(g);
  });
}

// all_to_all has no entry barrier, so back-to-back runs finish one at a time.
inline RunOutcome run_all_to_all(sim::device::SimMeshDevice& device, runtime::ccl::all_to_all::Params p,
                                 const Memory& memory, const RunOptions& run = {}) {
  namespace a2a = runtime::ccl::all_to_all;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.output_buffer = device.create_buffer(buffer_config(p.tensor, memory));
  p.done_semaphore =
      device.create_global_semaphore(a2a::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
  const detail::OpRun op{detail::fabric_groups(device, p.groups, p.topology), p.input_buffer, p.output_buffer, p.tensor.dtype,
                         6000, {a2a::build(p, device.topology())}, true};
  return detail::run_op(device, op, run, [&](const std::vector<ChipId>& g, const std::vector<Bytes>& inputs) {
    detail::expect_rank_outputs(device, "all_to_all", g, p.output_buffer,
                                a2a::reference_outputs(p, device.topology(), inputs));
  });
}

// A DRAM buffer of `pages` bf16 tiles, as broadcast and send_recv copy (whole buffers).
inline runtime::BufferConfig tile_pages_config(std::uint32_t pages) {
  return runtime::ccl::interleaved_buffer_config(
      runtime::ccl::TensorSpec{{1, 1, 32, 32 * pages}, runtime::ccl::DataType::Bfloat16, runtime::ccl::Layout::Tile},
      runtime::BufferType::Dram);
}

namespace detail {

// The group holding `chip` and its rank there (the rank every group of a point-to-point op uses).
inline std::pair<std::size_t, std::size_t> group_and_rank(const std::vector<std::vector<ChipId>>& groups, ChipId chip) {
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto it = std::find(groups[gi].begin(), groups[gi].end(), chip);
    if (it != groups[gi].end()) return {gi, static_cast<std::size_t>(it - groups[gi].begin())};
  }
  ADD_FAILURE() << "chip " << chip << " is in no group";
  return {0, 0};
}

}  // namespace detail

// Broadcast `pages` tiles from p.root over its group (by default the whole-system fabric; with
// p.groups every group at once from the chip at the root's rank); every chip of every group must
// end with its own group's root input. Only the roots get inputs (distinct per root).
// The same with buffers of `config` holding a `dtype` tensor (ROW_MAJOR rows: buffer_config).
inline RunOutcome run_broadcast(sim::device::SimMeshDevice& device, runtime::ccl::broadcast::Params p,
                                const runtime::BufferConfig& config, runtime::ccl::DataType dtype) {
  namespace bc = runtime::ccl::broadcast;
  p.fabric = device.options().fabric;
  p.input = device.create_buffer(config);
  p.output = device.create_buffer(config);
  const std::vector<std::vector<ChipId>> groups = detail::fabric_groups(device, p.groups);
  const std::size_t root_rank = detail::group_and_rank(groups, p.root).second;
  std::vector<std::vector<ChipId>> roots;
  std::map<ChipId, std::vector<ChipId>> group_of_root;
  for (const auto& g : groups) {
    roots.push_back({g.at(root_rank)});
    group_of_root[g.at(root_rank)] = g;
  }
  const detail::OpRun op{roots, p.input, p.output, dtype, 8000, {bc::build(p, device.topology())}};
  RunOutcome outcome = detail::run_op(device, op, {}, [&](const std::vector<ChipId>& root, const std::vector<Bytes>& input) {
    for (ChipId chip : group_of_root.at(root.front())) {
      EXPECT_TRUE(read_back(device, chip, p.output) == input.front())
          << "broadcast output of chip " << chip << " (root " << root.front() << ")";
    }
  });
  outcome.group_size = static_cast<std::uint32_t>(groups.front().size());
  outcome.groups = groups.size();
  return outcome;
}

inline RunOutcome run_broadcast(sim::device::SimMeshDevice& device, runtime::ccl::broadcast::Params p,
                                std::uint32_t pages) {
  return run_broadcast(device, std::move(p), tile_pages_config(pages), runtime::ccl::DataType::Bfloat16);
}

// Send `pages` tiles from p.sender to p.receiver (with p.groups: in every group, from the chip at
// the sender's rank to the chip at the receiver's); each receiver's output must be its own
// sender's input. Only the senders get inputs (distinct per sender); a group is one pair.
// The same with buffers of `config` holding a `dtype` tensor (ROW_MAJOR rows: buffer_config).
inline RunOutcome run_send_recv(sim::device::SimMeshDevice& device, runtime::ccl::send_recv::Params p,
                                const runtime::BufferConfig& config, runtime::ccl::DataType dtype) {
  namespace sr = runtime::ccl::send_recv;
  p.fabric = device.options().fabric;
  p.input = device.create_buffer(config);
  p.output = device.create_buffer(config);
  std::vector<std::vector<ChipId>> senders{{p.sender}};
  std::map<ChipId, ChipId> receiver_of{{p.sender, p.receiver}};
  if (p.groups.cluster_axis || !p.groups.chips.empty()) {
    const std::vector<std::vector<ChipId>> groups = detail::fabric_groups(device, p.groups);
    const std::size_t from = detail::group_and_rank(groups, p.sender).second;
    const std::size_t to = detail::group_and_rank(groups, p.receiver).second;
    senders.clear();
    receiver_of.clear();
    for (const auto& g : groups) {
      senders.push_back({g.at(from)});
      receiver_of[g.at(from)] = g.at(to);
    }
  }
  const detail::OpRun op{senders, p.input, p.output, dtype, 9000, {sr::build(p, device.topology())}};
  RunOutcome outcome = detail::run_op(device, op, {}, [&](const std::vector<ChipId>& sender, const std::vector<Bytes>& input) {
    const ChipId receiver = receiver_of.at(sender.front());
    EXPECT_TRUE(read_back(device, receiver, p.output) == input.front())
        << "send_recv output of chip " << receiver << " (sender " << sender.front() << ")";
  });
  outcome.group_size = 2;
  return outcome;
}

inline RunOutcome run_send_recv(sim::device::SimMeshDevice& device, runtime::ccl::send_recv::Params p,
                                std::uint32_t pages) {
  return run_send_recv(device, std::move(p), tile_pages_config(pages), runtime::ccl::DataType::Bfloat16);
}

}  // namespace cclmesh::ccltest
