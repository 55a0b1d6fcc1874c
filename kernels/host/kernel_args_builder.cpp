#include "kernels/host/kernel_args_builder.hpp"

#include <fmt/format.h>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/concat/concat_args.hpp"
#include "kernels/host/disassembler.hpp"
#include "kernels/interpreter/command_plan.hpp"
#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"

namespace cclmesh::kargs {
namespace {

namespace ia = kernels::interpreter;

uint32_t checked_u32(std::size_t value, const char* what) {
  if (value > 0xFFFFFFFFu) {
    throw KernelArgsError(fmt::format("{} = {} does not fit a 32-bit runtime arg", what, value));
  }
  return static_cast<uint32_t>(value);
}

std::vector<uint32_t> addrgen_block(const TensorArgs& tensor) {
  if (const auto* t = std::get_if<InterleavedTensorArgs>(&tensor)) {
    std::vector<uint32_t> b(ia::kAddrGenInterleavedWords);
    b[ia::kAddrGenLayout] = static_cast<uint32_t>(api::TensorMemoryLayout::INTERLEAVED);
    b[ia::kAddrGenBufferType] = static_cast<uint32_t>(t->buffer_type);
    b[ia::kAddrGenInterleavedNumBanks] = t->num_banks;
    b[ia::kAddrGenInterleavedAlignedPageSize] = t->aligned_page_size_bytes;
    b[ia::kAddrGenInterleavedPiecesPerPage] = t->pieces_per_page;
    b[ia::kAddrGenInterleavedLastPieceBytes] = t->last_piece_bytes;
    return b;
  }
  const auto& t = std::get<ShardedTensorArgs>(tensor);
  std::vector<uint32_t> b(ia::sharded_addrgen_words(checked_u32(t.cores.size(), "number of shard cores")));
  b[ia::kAddrGenLayout] = static_cast<uint32_t>(t.layout);
  b[ia::kAddrGenBufferType] = static_cast<uint32_t>(t.buffer_type);
  b[ia::kAddrGenShardedNumCores] = static_cast<uint32_t>(t.cores.size());
  b[ia::kAddrGenShardedPageStride] = t.page_stride_bytes;
  b[ia::kAddrGenShardedPagesPerTensorRow] = t.pages_per_tensor_row;
  b[ia::kAddrGenShardedContiguity] = static_cast<uint32_t>(t.contiguity);
  b[ia::kAddrGenShardedPagesPerShardWidth] = t.pages_per_shard_width;
  b[ia::kAddrGenShardedRowsPerShardHeight] = t.rows_per_shard_height;
  b[ia::kAddrGenShardedPiecesPerPage] = t.pieces_per_page;
  b[ia::kAddrGenShardedLastPieceBytes] = t.last_piece_bytes;
  for (std::size_t i = 0; i < t.cores.size(); ++i) {
    b[ia::kAddrGenShardedCoreTable + i] = ia::pack_core_xy(t.cores[i].x, t.cores[i].y);
  }
  return b;
}

std::pair<uint32_t, uint32_t> tensor_address_and_page(const TensorArgs& tensor) {
  return std::visit([](const auto& t) { return std::pair{t.address, t.page_size_bytes}; }, tensor);
}

uint32_t append(std::vector<uint32_t>& rt, const std::vector<uint32_t>& block) {
  const uint32_t offset = checked_u32(rt.size(), "runtime arg offset");
  rt.insert(rt.end(), block.begin(), block.end());
  return offset;
}

std::vector<uint32_t> connection_block(const api::FabricConnectionConfig& c) {
  std::vector<uint32_t> b(api::kFabricConnectionArgWords);
  api::write_fabric_connection_config(c, b.data());
  return b;
}

// The pages of its buffer `tensor` may address, in the generator's pages (pieces of a buffer
// page when pieces_per_page > 1); 0 when the buffer's pages are not known.
uint64_t addressable_pages(const TensorArgs& tensor) {
  return std::visit([](const auto& t) { return uint64_t{t.buffer_pages} * t.pieces_per_page; }, tensor);
}

// The last tensor page a streaming command's worker run reaches (its slice must have passed
// api::check_command_tensor). Tensor page ids grow along the run, so the last page is the most.
uint64_t last_page_of_run(const api::CclCommandTensor& t) {
  const uint64_t slice_pages = api::volume(t.tensor_slice_shape);
  const uint64_t start = api::flat_index(t.tensor_slice_shape, t.worker_start_offset_in_slice);
  const uint64_t run = t.worker_pages_per_slice == 0 ? slice_pages - start : t.worker_pages_per_slice;
  const api::Shape4D last = api::unflatten(t.tensor_slice_shape, static_cast<uint32_t>(start + run - 1));
  return api::flat_index(t.tensor_shape, t.tensor_slice_offset + last);
}

// A streaming command whose run reaches past the buffer its stream's address generator
// addresses would read or write outside that buffer on the device, silently (the generator
// carries no page count, as tt-metal's; bug bash, session 44: a 64 KiB slice written to a 32 KiB
// buffer overwrote the next buffer on every chip). Refused here, where the buffer's pages are
// known. Decode faults are left to the kernel's own reporting.
void require_runs_inside_buffer(const InterpreterStreamSpec& stream, uint32_t stream_index) {
  if (!stream.tensor) return;
  const uint64_t pages = addressable_pages(*stream.tensor);
  if (pages == 0) return;
  api::CommandStreamReader reader(stream.commands.data(), checked_u32(stream.commands.size(), "command stream words"));
  kernels::CommandContext context{};
  kernels::CommandPlan plan{};
  for (uint32_t i = 0; i < stream.num_commands && !reader.at_end(); ++i) {
    if (kernels::read_command(reader, context, plan) != kernels::kNoFault) return;
    const api::CommandCode code = plan.header.code;
    if (code != api::CommandCode::STREAM_TENSOR_TO_CB && code != api::CommandCode::STREAM_CB_TO_TENSOR) continue;
    if (api::check_command_tensor(context.tensor) != api::SliceCheck::OK) continue;  // the kernel faults on it
    const uint64_t last = last_page_of_run(context.tensor);
    if (last >= pages) {
      throw KernelArgsError(fmt::format(
          "interpreter stream {} command {} ({}): its run reaches tensor page {} of a tensor of {} pages, past the "
          "{} page(s) of the buffer its address generator addresses (at {:#x}); the device would {} outside the "
          "buffer. Expected a slice whose tensor fits the stream's buffer",
          stream_index, plan.index, api::command_code_name(code), last, api::volume(context.tensor.tensor_shape),
          pages, std::visit([](const auto& t) { return t.address; }, *stream.tensor),
          code == api::CommandCode::STREAM_CB_TO_TENSOR ? "write" : "read"));
    }
  }
}

}  // namespace

KernelArgs build_interpreter_args(const InterpreterSpec& spec) {
  const std::size_t num_streams = spec.streams.size();
  if (num_streams == 0 || num_streams > ia::kMaxStreams) {
    throw KernelArgsError(fmt::format("interpreter: {} command streams, expected 1 or 2", num_streams));
  }
  KernelArgs args;
  args.compile_time.resize(ia::kNumCompileTimeArgs);
  args.compile_time[ia::kCtNumStreams] = static_cast<uint32_t>(num_streams);
  args.compile_time[ia::kCtPacketHeaderCbId] = spec.packet_header_cb_id;

  std::vector<uint32_t>& rt = args.runtime;
  rt.assign(ia::header_words(static_cast<uint32_t>(num_streams)), 0);
  rt[ia::kRtPacketSizeInPages] = spec.packet_size_in_pages;
  uint32_t mask = 0;
  for (uint32_t id : spec.semaphore_ids) {
    if (id >= ia::kMaxSemaphoreIds) {
      throw KernelArgsError(fmt::format("interpreter: semaphore id {} >= {}", id, ia::kMaxSemaphoreIds));
    }
    mask |= uint32_t{1} << id;
  }
  rt[ia::kRtSemaphoreIdMask] = mask;
  if (spec.forward_connection) {
    rt[ia::kRtForwardConnectionOffset] = append(rt, connection_block(*spec.forward_connection));
  }
  if (spec.backward_connection) {
    rt[ia::kRtBackwardConnectionOffset] = append(rt, connection_block(*spec.backward_connection));
  }
  for (uint32_t s = 0; s < num_streams; ++s) {
    const InterpreterStreamSpec& st = spec.streams[s];
    const uint32_t b = ia::stream_block(s);
    if (st.tensor) {
      const auto [address, page_size] = tensor_address_and_page(*st.tensor);
      rt[b + ia::kStreamTensorAddress] = address;
      rt[b + ia::kStreamTensorPageSize] = page_size;
      rt[b + ia::kStreamAddrGenOffset] = append(rt, addrgen_block(*st.tensor));
    }
    rt[b + ia::kStreamNumCommands] = st.num_commands;
    rt[b + ia::kStreamCommandsWords] = checked_u32(st.commands.size(), "command stream words");
    rt[b + ia::kStreamCommandsOffset] = append(rt, st.commands);
  }
  for (uint32_t s = 0; s < num_streams; ++s) require_runs_inside_buffer(spec.streams[s], s);
  kernels::InterpreterArgs parsed{};
  const kernels::ArgsFault f = kernels::parse_interpreter_args(static_cast<uint32_t>(num_streams), rt.data(),
                                                               checked_u32(rt.size(), "runtime args"), parsed);
  if (!f.ok()) {
    throw KernelArgsError(fmt::format("interpreter args rejected at runtime arg {}: {} ({})", f.word,
                                      api::kernel_fault_name(f.code), api::kernel_fault_description(f.code)));
  }
  return args;
}

FabricRouterSlots choose_fabric_router_slots(uint32_t l1_base, uint32_t l1_bytes, uint32_t max_payload_bytes,
                                             bool ring) {
  static constexpr FabricRouterSlots kLineOptions[] = {{8, 16}, {8, 8}, {4, 8}};
  static constexpr FabricRouterSlots kRingOptions[] = {{8, 8}, {4, 8}};
  const std::span<const FabricRouterSlots> options = ring ? std::span<const FabricRouterSlots>(kRingOptions)
                                                          : std::span<const FabricRouterSlots>(kLineOptions);
  for (const FabricRouterSlots& o : options) {
    const auto l = kernels::make_fabric_router_layout(l1_base, max_payload_bytes, o.sender_slots, o.sender_slots,
                                                      o.receiver_slots);
    if (uint64_t{l.end} - l1_base <= l1_bytes) {
      return o;
    }
  }
  throw KernelArgsError(fmt::format("fabric router: {} B of ERISC L1 do not hold the smallest {} option for a {} B "
                                    "payload",
                                    l1_bytes, ring ? "ring" : "line", max_payload_bytes));
}

const char* to_string(DatelineRouterKind kind) {
  switch (kind) {
    case DatelineRouterKind::Ordinary:
      return "ring";
    case DatelineRouterKind::Dateline:
      return "dateline";
    case DatelineRouterKind::DatelineUpstream:
      return "dateline-upstream";
  }
  return "?";
}

kernels::FabricRouterSlotCounts choose_dateline_router_slots(uint32_t l1_base, uint32_t l1_bytes,
                                                             uint32_t max_payload_bytes, DatelineRouterKind kind) {
  static constexpr FabricRouterSlots kOrdinaryOptions[] = {{8, 8}, {4, 8}};
  static constexpr FabricRouterSlots kDatelineOptions[] = {{8, 16}, {8, 8}};
  const std::span<const FabricRouterSlots> options = kind == DatelineRouterKind::Ordinary
                                                         ? std::span<const FabricRouterSlots>(kOrdinaryOptions)
                                                         : std::span<const FabricRouterSlots>(kDatelineOptions);
  const auto counts = [kind](const FabricRouterSlots& o) {
    const uint32_t s = o.sender_slots;
    const uint32_t r = o.receiver_slots;
    switch (kind) {
      case DatelineRouterKind::Dateline:
        return kernels::FabricRouterSlotCounts{{s, s, 0}, {0, r}};
      case DatelineRouterKind::DatelineUpstream:
        return kernels::FabricRouterSlotCounts{{s, 0, s}, {r, 0}};
      case DatelineRouterKind::Ordinary:
        break;
    }
    return kernels::FabricRouterSlotCounts{{s, s, s}, {r, r}};
  };
  for (const FabricRouterSlots& o : options) {
    const auto l = kernels::make_fabric_router_layout(l1_base, max_payload_bytes, counts(o), true);
    if (uint64_t{l.end} - l1_base <= l1_bytes) {
      return counts(o);
    }
  }
  const FabricRouterSlots& smallest = options.back();
  const auto l = kernels::make_fabric_router_layout(l1_base, max_payload_bytes, counts(smallest), true);
  throw KernelArgsError(fmt::format("fabric router: {} B of ERISC L1 do not hold the smallest dateline-VC {} router "
                                    "option {{{}, {}}} for a {} B payload (it needs {} B)",
                                    l1_bytes, to_string(kind), smallest.sender_slots, smallest.receiver_slots,
                                    max_payload_bytes, l.end - l1_base));
}

KernelArgs build_fabric_router_args(const kernels::FabricRouterConfig& config) {
  namespace r = kernels::fabric_router;
  const bool dateline = config.dateline_vcs;
  if (config.max_payload_bytes > 0xFFFF || config.sender_slots[0] == 0 ||
      (config.sender_slots[1] == 0 && !dateline) ||
      (config.receiver_slots < (config.bubble_flow_control ? 2u : 1u) && !dateline) ||
      (dateline && (config.bubble_flow_control || config.receiver_slots + config.vc1_receiver_slots == 0))) {
    throw KernelArgsError(fmt::format("fabric router: payload {} B, slots {}/{}/{}: need payload <= 65535 and "
                                      "non-empty channels (>= 2 receiver slots with bubble flow control)",
                                      config.max_payload_bytes, config.sender_slots[0], config.sender_slots[1],
                                      config.receiver_slots));
  }
  if (config.topology == r::kTopologyRing && !config.has_downstream) {
    throw KernelArgsError("fabric router: a ring router needs the opposite-direction router on its chip");
  }
  const bool vc0_receiver = config.receiver_slots != 0 || !dateline;
  if (vc0_receiver && (config.receiver_packets_in_flight == 0 ||
                       config.receiver_packets_in_flight > config.receiver_slots ||
                       config.receiver_packets_in_flight > r::kMaxReceiverPacketsInFlight)) {
    throw KernelArgsError(fmt::format("fabric router: {} receiver packets in flight (expected 1..{}: at most the {} "
                                      "receiver slots and the NoC's {} transaction ids)",
                                      config.receiver_packets_in_flight,
                                      std::min(config.receiver_slots, r::kMaxReceiverPacketsInFlight),
                                      config.receiver_slots, r::kMaxReceiverPacketsInFlight));
  }
  const uint32_t vc0_in_flight = config.receiver_slots != 0 ? config.receiver_packets_in_flight : 0;
  if (dateline && config.vc1_receiver_slots != 0 &&
      (config.vc1_receiver_packets_in_flight == 0 ||
       config.vc1_receiver_packets_in_flight > config.vc1_receiver_slots ||
       vc0_in_flight + config.vc1_receiver_packets_in_flight > r::kMaxReceiverPacketsInFlight)) {
    throw KernelArgsError(fmt::format("fabric router: {} VC1 receiver packets in flight (expected 1..{}, and with "
                                      "VC0's {} at most the NoC's {} transaction ids)",
                                      config.vc1_receiver_packets_in_flight, config.vc1_receiver_slots,
                                      vc0_in_flight, r::kMaxReceiverPacketsInFlight));
  }
  KernelArgs args;
  args.compile_time.resize(r::kNumCompileTimeArgs);
  kernels::write_fabric_router_config(config, args.compile_time.data());
  return args;
}

api::FabricConnectionConfig worker_fabric_connection(const kernels::FabricRouterConfig& router, uint32_t edm_noc_x,
                                                     uint32_t edm_noc_y, uint32_t flow_control_semaphore_id,
                                                     uint32_t teardown_semaphore_id,
                                                     uint32_t buffer_index_semaphore_id) {
  return kernels::fabric_connection_for_channel(kernels::make_fabric_router_layout(router),
                                                kernels::fabric_router::kWorkerChannel, edm_noc_x, edm_noc_y,
                                                flow_control_semaphore_id, teardown_semaphore_id,
                                                buffer_index_semaphore_id);
}

KernelArgs build_legacy_edm_args(const kernels::LegacyEdmConfig& config, uint32_t termination_semaphore_id,
                                 const std::vector<LegacyEdmChannelSpec>& channels) {
  namespace e = kernels::legacy_edm;
  const std::size_t expected = std::size_t{config.num_sender_channels} + config.num_receiver_channels;
  if (channels.size() != expected || expected == 0 || expected > e::kMaxChannels) {
    throw KernelArgsError(fmt::format("legacy EDM: {} channel specs for {} senders + {} receivers (1..{} in all)",
                                      channels.size(), config.num_sender_channels, config.num_receiver_channels,
                                      e::kMaxChannels));
  }
  if (config.num_buffers_per_channel == 0 || config.num_buffers_per_channel > e::kMaxBuffersPerChannel ||
      config.buffer_size_bytes == 0 || config.buffer_size_bytes % api::kEthWordBytes != 0) {
    throw KernelArgsError(fmt::format("legacy EDM: {} buffers of {} B: need 1..{} buffers of a non-zero multiple "
                                      "of 16 B",
                                      config.num_buffers_per_channel, config.buffer_size_bytes,
                                      e::kMaxBuffersPerChannel));
  }
  KernelArgs args;
  args.compile_time.resize(e::kNumCompileTimeArgs);
  kernels::write_legacy_edm_config(config, args.compile_time.data());
  args.runtime.assign(e::channel_block(static_cast<uint32_t>(channels.size())), 0);
  args.runtime[e::kRtTerminationSemaphoreId] = termination_semaphore_id;
  for (uint32_t c = 0; c < channels.size(); ++c) {
    const uint32_t b = e::channel_block(c);
    args.runtime[b + e::kChannelWorkerNocX] = channels[c].worker.x;
    args.runtime[b + e::kChannelWorkerNocY] = channels[c].worker.y;
    args.runtime[b + e::kChannelWorkerSemaphoreId] = channels[c].worker_semaphore_id;
    args.runtime[b + e::kChannelEdmSemaphoreId] = channels[c].edm_semaphore_id;
    args.runtime[b + e::kChannelNumMessages] = channels[c].num_messages;
  }
  return args;
}

api::LegacyEdmChannelConfig legacy_edm_worker_channel(const kernels::LegacyEdmConfig& config, uint32_t channel,
                                                      uint32_t edm_noc_x, uint32_t edm_noc_y,
                                                      uint32_t edm_semaphore_id, uint32_t worker_semaphore_id) {
  const auto layout = kernels::make_legacy_edm_layout(config);
  if (channel >= layout.num_channels) {
    throw KernelArgsError(fmt::format("legacy EDM: channel {} of {}", channel, layout.num_channels));
  }
  return api::LegacyEdmChannelConfig{edm_noc_x,
                                     edm_noc_y,
                                     layout.buffer(channel, 0),
                                     config.num_buffers_per_channel,
                                     layout.buffer_stride_bytes,
                                     edm_semaphore_id,
                                     worker_semaphore_id};
}

KernelArgs build_legacy_all_gather_worker_args(const LegacyAllGatherWorkerSpec& spec) {
  namespace la = kernels::legacy_all_gather;
  KernelArgs args;
  args.compile_time.resize(la::kNumCompileTimeArgs);
  args.compile_time[la::kCtScratchCbId] = spec.scratch_cb_id;
  std::vector<uint32_t>& rt = args.runtime;
  rt.assign(la::kHeaderWords, 0);
  rt[la::kRtPageSizeBytes] = spec.page_size_bytes;
  rt[la::kRtPageStrideBytes] = spec.page_stride_bytes;
  rt[la::kRtPagesPerMessage] = spec.pages_per_message;
  rt[la::kRtRelaySemaphoreId] = spec.relay_semaphore_id;
  std::vector<uint32_t> edm(api::kLegacyEdmChannelArgWords);
  api::write_legacy_edm_channel_config(spec.edm_channel, edm.data());
  rt[la::kRtEdmChannelOffset] = append(rt, edm);
  rt[la::kRtEdmTerminationSemaphoreId] = spec.edm_termination_semaphore_id.value_or(la::kNoTermination);
  rt[la::kRtOutputAddress] = tensor_address_and_page(spec.output).first;
  rt[la::kRtOutputAddrGenOffset] = append(rt, addrgen_block(spec.output));
  if (spec.input) {
    rt[la::kRtInputAddress] = tensor_address_and_page(*spec.input).first;
    rt[la::kRtInputAddrGenOffset] = append(rt, addrgen_block(*spec.input));
  }
  rt[la::kRtNumSlices] = checked_u32(spec.slices.size(), "legacy all-gather slices");
  std::vector<uint32_t> records(spec.slices.size() * la::kSliceRecordWords);
  for (std::size_t i = 0; i < spec.slices.size(); ++i) {
    kernels::write_slice_record(spec.slices[i], records.data() + i * la::kSliceRecordWords);
  }
  rt[la::kRtSlicesOffset] = append(rt, records);
  rt[la::kRtLocalCopy] = spec.local_copy ? 1 : 0;
  kernels::LegacyAllGatherArgs parsed{};
  const kernels::ArgsFault f = kernels::parse_legacy_all_gather_args(
      spec.is_sender, rt.data(), checked_u32(rt.size(), "runtime args"), parsed);
  if (!f.ok()) {
    throw KernelArgsError(fmt::format("legacy all-gather {} args rejected at runtime arg {}: {} ({})",
                                      spec.is_sender ? "sender" : "receiver", f.word, api::kernel_fault_name(f.code),
                                      api::kernel_fault_description(f.code)));
  }
  return args;
}

KernelArgs build_legacy_reduce_scatter_worker_args(const LegacyReduceScatterWorkerSpec& spec) {
  namespace rs = kernels::legacy_reduce_scatter;
  KernelArgs args;
  args.compile_time = {spec.partial_cb_id, spec.local_cb_id, spec.reduced_cb_id, spec.scratch_cb_id};
  std::vector<uint32_t>& rt = args.runtime;
  rt.assign(rs::kHeaderWords, 0);
  rt[rs::kRtPageSizeBytes] = spec.page_size_bytes;
  rt[rs::kRtPageStrideBytes] = spec.page_stride_bytes;
  rt[rs::kRtPagesPerMessage] = spec.pages_per_message;
  if (spec.edm_channel) {
    std::vector<uint32_t> edm(api::kLegacyEdmChannelArgWords);
    api::write_legacy_edm_channel_config(*spec.edm_channel, edm.data());
    rt[rs::kRtEdmChannelOffset] = append(rt, edm);
  }
  rt[rs::kRtEdmTerminationSemaphoreId] = spec.edm_termination_semaphore_id.value_or(rs::kNoTermination);
  rt[rs::kRtOutputAddress] = tensor_address_and_page(spec.output).first;
  rt[rs::kRtOutputAddrGenOffset] = append(rt, addrgen_block(spec.output));
  rt[rs::kRtInputAddress] = tensor_address_and_page(spec.input).first;
  rt[rs::kRtInputAddrGenOffset] = append(rt, addrgen_block(spec.input));
  rt[rs::kRtNumSteps] = checked_u32(spec.steps.size(), "legacy reduce-scatter steps");
  std::vector<uint32_t> records(spec.steps.size() * rs::kStepRecordWords);
  for (std::size_t i = 0; i < spec.steps.size(); ++i) {
    records[i * rs::kStepRecordWords] = spec.steps[i].kind;
    kernels::write_slice_record(spec.steps[i].run, records.data() + i * rs::kStepRecordWords + 1);
  }
  rt[rs::kRtStepsOffset] = append(rt, records);
  rt[rs::kRtReadySemaphoreId] = spec.ready_semaphore_id.value_or(rs::kNoReadySemaphore);
  rt[rs::kRtReadyNocX] = spec.ready_core.x;
  rt[rs::kRtReadyNocY] = spec.ready_core.y;
  kernels::LegacyReduceScatterArgs parsed{};
  const kernels::ArgsFault f = kernels::parse_legacy_reduce_scatter_args(
      spec.is_sender, rt.data(), checked_u32(rt.size(), "runtime args"), parsed);
  if (!f.ok()) {
    throw KernelArgsError(fmt::format("legacy reduce-scatter {} args rejected at runtime arg {}: {} ({})",
                                      spec.is_sender ? "sender" : "receiver", f.word, api::kernel_fault_name(f.code),
                                      api::kernel_fault_description(f.code)));
  }
  return args;
}

KernelArgs build_reduce_args(const ReduceSpec& spec) {
  namespace r = kernels::reduce;
  if (spec.data_format != r::kDataFormatFloat32 && spec.data_format != r::kDataFormatFloat16B &&
      spec.data_format != r::kDataFormatBfp8B) {
    throw KernelArgsError(fmt::format("reduce: data format {}, expected Float32 ({}), Float16_b ({}) or Bfp8_b ({})",
                                      spec.data_format, r::kDataFormatFloat32, r::kDataFormatFloat16B,
                                      r::kDataFormatBfp8B));
  }
  if (spec.pages_per_block == 0) {
    throw KernelArgsError("reduce: pages per block must be at least 1");
  }
  KernelArgs args;
  args.compile_time.resize(r::kNumCompileTimeArgs);
  args.compile_time[r::kCtIn0CbId] = spec.in0_cb_id;
  args.compile_time[r::kCtIn1CbId] = spec.in1_cb_id;
  args.compile_time[r::kCtOutCbId] = spec.out_cb_id;
  args.compile_time[r::kCtDataFormat] = spec.data_format;
  if (spec.in2_blocks > spec.num_blocks) {
    throw KernelArgsError(fmt::format("reduce: {} blocks with a third input of {} blocks; expected at most {}",
                                      spec.in2_blocks, spec.num_blocks, spec.num_blocks));
  }
  if (spec.passes == 0 || (spec.passes > 1 && spec.in2_blocks != 0)) {
    throw KernelArgsError(fmt::format("reduce: {} passes with a third input of {} blocks; expected at least 1 pass, "
                                      "and 1 with a third input",
                                      spec.passes, spec.in2_blocks));
  }
  args.runtime.resize(spec.passes > 1       ? r::kNumRuntimeArgsWithPasses
                      : spec.in2_blocks == 0 ? r::kNumRuntimeArgs
                                             : r::kNumRuntimeArgsWithIn2);
  args.runtime[r::kRtNumBlocks] = spec.num_blocks;
  args.runtime[r::kRtPagesPerBlock] = spec.pages_per_block;
  if (spec.in2_blocks != 0) {
    args.runtime[r::kRtIn2CbId] = spec.in2_cb_id;
    args.runtime[r::kRtIn2Blocks] = spec.in2_blocks;
  }
  if (spec.passes > 1) args.runtime[r::kRtPasses] = spec.passes;
  return args;
}

KernelArgs build_concat_args(const ConcatSpec& spec) {
  namespace c = kernels::concat;
  KernelArgs args;
  args.compile_time.resize(c::kNumCompileTimeArgs);
  args.compile_time[c::kCtInCbId] = spec.in_cb_id;
  args.compile_time[c::kCtOutCbId] = spec.out_cb_id;
  args.compile_time[c::kCtElementBytes] = spec.element_bytes;
  args.compile_time[c::kCtUnpackCbId] = spec.unpack_cb_id;
  const auto ranks = static_cast<uint32_t>(spec.in_addresses.size());
  std::vector<uint32_t>& rt = args.runtime;
  rt.resize(c::header_words(ranks));
  rt[c::kRtDim] = spec.dim;
  for (uint32_t i = 0; i < 4; ++i) rt[c::kRtShape + i] = spec.shape[i];
  rt[c::kRtRanks] = ranks;
  rt[c::kRtFirstTile] = spec.first_tile;
  rt[c::kRtNumTiles] = spec.num_tiles;
  rt[c::kRtTileBytes] = spec.tile_bytes;
  rt[c::kRtOutAddress] = tensor_address_and_page(spec.output).first;
  for (uint32_t r = 0; r < ranks; ++r) rt[c::kRtFirstInAddress + r] = spec.in_addresses[r];
  rt[c::kRtOutAddrGenOffset] = append(rt, addrgen_block(spec.output));
  rt[c::kRtInAddrGenOffset] = append(rt, addrgen_block(spec.input));
  c::ConcatArgs parsed;
  const uint32_t bad = c::parse_concat_args(args.runtime.data(), static_cast<uint32_t>(args.runtime.size()),
                                            spec.element_bytes, parsed);
  if (bad != c::kArgsOk) {
    throw KernelArgsError(fmt::format("concat: runtime arg {} does not describe a valid concat (dim {}, {} ranks, "
                                      "tiles {}+{}, tile {} B, element {} B)",
                                      bad, spec.dim, ranks, spec.first_tile, spec.num_tiles, spec.tile_bytes,
                                      spec.element_bytes));
  }
  return args;
}

namespace {

// The stream (of the runtime args' stream table) whose words contain `arg_index`.
std::optional<uint32_t> stream_containing(std::span<const uint32_t> rt, uint32_t arg_index) {
  for (uint32_t s = 0; s < ia::kMaxStreams; ++s) {
    const uint32_t b = ia::stream_block(s);
    if (rt.size() < b + ia::kStreamBlockWords) {
      break;
    }
    const uint64_t begin = rt[b + ia::kStreamCommandsOffset];
    const uint64_t end = begin + rt[b + ia::kStreamCommandsWords];
    if (arg_index >= begin && arg_index < end && end <= rt.size()) {
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string describe_interpreter_command(std::span<const uint32_t> rt, uint32_t stream, uint32_t command_index) {
  const uint32_t b = ia::stream_block(stream);
  if (stream >= ia::kMaxStreams || rt.size() < b + ia::kStreamBlockWords) {
    return fmt::format("stream {} #{} <no such stream in the runtime args>", stream, command_index);
  }
  const uint64_t begin = rt[b + ia::kStreamCommandsOffset];
  const uint64_t words = rt[b + ia::kStreamCommandsWords];
  if (begin + words > rt.size()) {
    return fmt::format("stream {} #{} <stream words outside the runtime args>", stream, command_index);
  }
  return fmt::format("stream {} {}", stream, cmd::disassemble_one(rt.subspan(begin, words), command_index));
}

namespace {

// The detail of a WORKER_PROTOCOL_VIOLATION (api::protocol_violation_*_detail).
std::string describe_protocol_violation(uint32_t detail) {
  const uint32_t channel = api::protocol_violation_channel(detail);
  const uint32_t live = api::protocol_violation_live_value(detail);
  if (live == 0) {
    return fmt::format(", detail {}: channel {}'s worker overran its credits (more packets or buffers than the channel "
                       "gave it)",
                       detail, channel);
  }
  const std::string value = live == api::kProtocolViolationValueMax ? fmt::format("{} or more", live)
                                                                    : std::to_string(live);
  return fmt::format(", detail {}: channel {}'s connection_live word reads {}, none of 0 (unused), 1 (open), 2 (close "
                     "request)",
                     detail, channel, value);
}

}  // namespace

std::string describe_kernel_fault(std::string_view kernel, std::span<const uint32_t> rt, uint32_t code,
                                  uint32_t command_index, uint32_t word_offset) {
  std::string text = fmt::format("{} fault {} ({})", kernel, api::kernel_fault_name(code),
                                 api::kernel_fault_description(code));
  if (command_index == api::kFaultNoCommand) {
    if (code == api::fault_code(api::KernelFaultCode::WORKER_PROTOCOL_VIOLATION)) {
      return text + describe_protocol_violation(word_offset);
    }
    return text + fmt::format(", detail {}", word_offset);
  }
  if (kernel == kernels::kCclInterpreterKernelName) {
    if (const auto s = stream_containing(rt, word_offset)) {
      return text + fmt::format(" at runtime arg {}: {}", word_offset, describe_interpreter_command(rt, *s, command_index));
    }
  }
  return text + fmt::format(" in command #{} at runtime arg {}", command_index, word_offset);
}

}  // namespace cclmesh::kargs
