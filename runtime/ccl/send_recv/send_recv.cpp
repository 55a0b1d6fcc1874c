#include "runtime/ccl/send_recv/send_recv.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/host/slicing.hpp"
#include "runtime/ccl/common/link_senders.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"

namespace cclmesh::runtime::ccl::send_recv {
namespace {

constexpr const char* kOp = "send_recv";

using Pair = std::pair<ChipId, ChipId>;  // sender, receiver

kargs::TensorArgs tensor_args(const BufferHandle& buffer, const topo::Topology& topology, ChipId chip) {
  return ChipBuffers(topology, chip).interpreter_args(buffer);
}

bool has_groups(const GroupSelection& groups) { return groups.cluster_axis || !groups.chips.empty(); }

// The (sender, receiver) pairs: the params' own, or per group the chips at their ranks.
std::vector<Pair> pairs(const Params& p, const topo::Topology& topology) {
  if (!has_groups(p.groups)) return {Pair{p.sender, p.receiver}};
  const std::vector<std::vector<ChipId>> groups = resolve_groups(p.groups, topology, FabricPlan(topology, p.fabric));
  const auto rank_in = [](const std::vector<ChipId>& g, ChipId chip) {
    return static_cast<std::size_t>(std::find(g.begin(), g.end(), chip) - g.begin());
  };
  const auto home = std::find_if(groups.begin(), groups.end(),
                                 [&](const std::vector<ChipId>& g) { return rank_in(g, p.sender) < g.size(); });
  if (home == groups.end() || rank_in(*home, p.receiver) == home->size()) {
    throw CclParamsError(fmt::format("send_recv: sender {} and receiver {} are not in one group; with groups every "
                                     "group sends between the same two ranks, so both must be chips of one group",
                                     p.sender, p.receiver));
  }
  const std::size_t from = rank_in(*home, p.sender);
  const std::size_t to = rank_in(*home, p.receiver);
  std::vector<Pair> result;
  for (const std::vector<ChipId>& g : groups) {
    if (g.size() != home->size()) {
      throw CclParamsError(fmt::format("send_recv: groups of {} and {} chips; every group must have the same size",
                                       home->size(), g.size()));
    }
    result.emplace_back(g[from], g[to]);
  }
  return result;
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_fields(0, p.sender, p.receiver, p.input, p.output, p.groups, p.fabric, p.worker, p.num_links,
                     p.packet_size_in_pages, p.cb_packets, p.split_reader_writer);
}

void validate(const Params& p, const topo::Topology& topology) {
  topology.chip(p.sender);
  topology.chip(p.receiver);
  require_same_shape(p.input, p.output, kOp);
  require_worker_core(topology, p.worker, kOp);
  if (p.cb_packets == 0) throw CclParamsError("send_recv: cb_packets is 0; expected at least 1");
  if (p.num_links == 0) throw CclParamsError("send_recv: num_links is 0; expected at least 1");
  if (p.sender != p.receiver) {
    worker_cores(topology, p.worker, p.num_links, kOp);  // throws when the senders do not fit
    if (p.fabric.mode == FabricMode::None) {
      throw CclParamsError(fmt::format("send_recv: chip {} -> chip {} needs a fabric; fabric mode is none", p.sender,
                                       p.receiver));
    }
  }
  for (const auto& [sender, receiver] : pairs(p, topology)) {
    require_buffer_layouts(topology, {sender}, {&p.input});
    require_buffer_layouts(topology, {receiver}, {&p.output});
    if (sender == receiver) continue;
    const FabricPlan plan(topology, p.fabric);
    plan.route(sender, receiver);  // throws when off the fabric or too far
    require_fabric_links(plan, p.num_links, kOp);
    const FabricPages pages = fabric_pages(p.input.config, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
    packet_size_in_pages(p.packet_size_in_pages, pages.page_bytes, p.fabric.max_payload_bytes);
  }
}

MeshWorkload build(const Params& p, const topo::Topology& topology) {
  validate(p, topology);
  const api::TensorSlice slice = whole_buffer_slice(p.input);
  const std::uint32_t page_size = p.input.config.page_size_bytes;
  MeshWorkload workload;
  workload.name = kOp;
  const FabricPlan plan = p.sender == p.receiver ? FabricPlan() : FabricPlan(topology, p.fabric);
  for (const auto& [sender, receiver] : pairs(p, topology)) {
    if (sender == receiver) {
      kargs::InterpreterSpec copier;
      copier.packet_header_cb_id = kPacketHeaderCbId;
      copier.packet_size_in_pages = packet_size_in_pages(p.packet_size_in_pages, page_size, page_size * 4u);
      const kargs::InterpreterStreamSpec reader{tensor_args(p.input, topology, sender),
                                                cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, kDataCbId)), 1};
      const kargs::InterpreterStreamSpec writer{
          tensor_args(p.output, topology, receiver),
          cmd::encode_command(cmd::local_write_cb_to_tensor_slice(slice, kDataCbId)), 1};
      Program program;
      program.circular_buffers.push_back(packet_header_cb(p.worker));
      program.circular_buffers.push_back(data_cb(p.worker, page_size, copier.packet_size_in_pages * p.cb_packets));
      add_copy_kernels(program, p.worker, copier, reader, writer, p.split_reader_writer);
      workload.programs[sender] = std::move(program);
      continue;
    }
    const FabricRoute route = plan.route(sender, receiver);
    // A page wider than a fabric payload (a ROW_MAJOR row) moves in pieces, each a page to the workers.
    const FabricPages pages = fabric_pages(p.input.config, p.fabric.max_payload_bytes, RowPieceChoice::FillPayload, kOp);
    // One sender per link, each with its own run of the pages on its own routing plane.
    Program sender_program;
    add_link_senders(sender_program, plan,
                     LinkSenders{sender, route.line,
                                 one_sender_per_link(worker_cores(topology, p.worker, p.num_links, kOp),
                                                     cmd::split_tensor_slice_across_workers_wrapped_page_aligned(
                                                         all_fabric_pages(pages), p.num_links),
                                                     cmd::ChipUnicast{route.hops, route.forward}),
                                 in_fabric_pages(tensor_args(p.input, topology, sender), pages),
                                 in_fabric_pages(tensor_args(p.output, topology, receiver), pages),
                                 chip_core_map(topology, receiver).tensix_noc0(p.worker), pages.page_bytes,
                                 packet_size_in_pages(p.packet_size_in_pages, pages.page_bytes,
                                                      p.fabric.max_payload_bytes),
                                 p.cb_packets, p.split_reader_writer});
    workload.programs[sender] = std::move(sender_program);
    workload.programs[receiver] = done_waiter_program(p.worker, p.num_links);
  }
  workload.buffers = workload_buffers({&p.input, &p.output});
  return workload;
}

void run(MeshDevice& device, const Params& params) { run_workload(device, build(params, device.topology())); }

}  // namespace cclmesh::runtime::ccl::send_recv
